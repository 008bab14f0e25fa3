"""Building the semantic retriever from the configuration (the engine's one call)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scriptorium.settings.ranking import RankingSettings

if TYPE_CHECKING:
    from scriptorium.semantic.encoder import Encoder
    from scriptorium.semantic.retriever import SemanticCandidates

# Set to 0, off or false, turns the semantic retriever off whatever the configuration says
# (a CI job that wants lexical ranking alone, a test suite that starts many daemons).
ENV = "SCRIPTORIUM_SEMANTIC"
OFF = frozenset({"0", "off", "false", "no"})


def semantic_off() -> bool:
    return os.environ.get(ENV, "").strip().lower() in OFF


def semantic_for(
    ranking: RankingSettings,
    state_dir: Path,
    generations: Callable[[], list[int]],
    embedder: Callable[..., Any] | None = None,
    unread_sources: frozenset[str] = frozenset(),
) -> SemanticCandidates | None:
    """The semantic retriever, or None when it is turned off. The encoder is made in the
    vector thread: a missing model is said there (and in ListSources), never at start-up.
    ``unread_sources`` get no vectors (a translation's source: the model reads English)."""
    if not ranking.semantic or semantic_off():
        return None
    # Imported only when it is on: the retriever costs a lexical start nothing.
    from scriptorium.semantic.builder import VectorBuilder
    from scriptorium.semantic.retriever import SemanticCandidates

    def make_encoder() -> Encoder:
        # Called in the vector thread, after SERVING: the encoder's imports (numpy,
        # onnxruntime, tokenizers) never delay a start.
        from scriptorium.semantic.encoder import OnnxEncoder
        from scriptorium.semantic.model import find_model

        if embedder is not None:
            supplied = embedder(model=ranking.semantic_model, tokens=ranking.semantic_tokens)
            if supplied is not None:
                return supplied
        return OnnxEncoder(
            find_model(ranking.semantic_model),
            passage_tokens=ranking.semantic_tokens,
            query_tokens=ranking.semantic_query_tokens,
            long_tokens=ranking.semantic_long_tokens,
        )

    builder = VectorBuilder(
        make_encoder,
        state_dir / "vectors",
        generations=generations,
        unread_sources=unread_sources,
    )
    return SemanticCandidates(builder, ranking)
