"""Every plugin hook Scriptorium calls, in one place.

Plugins implement these with ``@scriptorium.hookimpl``. Built-in behaviour (the Markdown and code
sources, the implementation ranking mode) is registered through exactly the same hooks and the
same ``scriptorium`` entry-point group as third-party plugins.

Registration hooks receive a ``register`` callback rather than returning values, so one plugin
can contribute several things and the manager can reject duplicates with a clear message.

The hooks carry a version, :data:`HOOKS_VERSION` (``scriptorium.plugin.HOOKS_VERSION``): the
minor number grows when a hook or a hook argument is added, the major one when a hook changes in
a way an existing plugin would notice. Each hook says in which version it appeared
(``versionadded``) and what changed since (``versionchanged``), so a plugin can require the
version it was written for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from scriptorium.blocks.extractors import BlockExtractor
    from scriptorium.domain.model import Candidate, Query
    from scriptorium.ranking.modes import RankingMode
    from scriptorium.semantic.encoder import Encoder

hookspec = pluggy.HookspecMarker("scriptorium")

# 1.0 (2026-11-29): source kinds, ranking modes, block extractors. 1.1 (2026-12-01): a source
# kind's declared settings, scriptorium_rerank. 1.2 (2026-12-04): scriptorium_embedder.
HOOKS_VERSION = "1.2"

# ---------------------------------------------------------------------------------------------
# Registration: called once when the plugin manager is built.
# ---------------------------------------------------------------------------------------------


@hookspec
def scriptorium_register_source_kinds(register: Callable[..., None]) -> None:
    """Register source kinds: ``register(kind_name, factory, settings=None)``.

    ``factory(config: SourceConfig, context: SourceContext) -> Source`` builds one configured
    source. The kind name is what ``kind = "..."`` selects in the configuration file.
    ``settings`` declares the kind's own ``[[sources]]`` keys (a sequence of
    ``scriptorium.plugin.Key``; default: the factory's ``settings`` attribute): any other key in
    a source of this kind is refused at start-up, naming the closest declared one, and values of
    the wrong type are refused with one sentence. A kind that declares nothing (``None``) gets
    its keys unchecked in ``config.options``.

    .. versionadded:: 1.0
    .. versionchanged:: 1.1
       The ``settings`` argument of ``register``.
    """


@hookspec
def scriptorium_register_ranking_modes(register: Callable[[RankingMode], None]) -> None:
    """Register ranking modes: ``register(mode)``; ``mode.name`` is what ``Search.mode`` selects.

    .. versionadded:: 1.0
    """


@hookspec
def scriptorium_register_block_extractors(register: Callable[[BlockExtractor], None]) -> None:
    """Register block extractors that cut documents into blocks: ``register(extractor)``.

    Extractors are consulted in ascending ``priority``; the first whose ``accepts(path,
    corpus)`` is true cuts the document. ``extractor.version`` is stored in the index so a
    changed extractor forces re-extraction.

    .. versionadded:: 1.0
    """


# ---------------------------------------------------------------------------------------------
# Ranking: called on every search, by the plugin the configuration selects.
# ---------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def scriptorium_rerank(
    query: Query, candidates: Sequence[Candidate], text_of: Callable[[Candidate], str]
) -> Sequence[float] | None:
    """Re-score the best candidates of one search, after the pipeline's scoring stages.

    Only the plugin named by ``[ranking] reranker`` (its entry-point name) is called, with the
    ``rerank_depth`` best candidates in score order; nothing is called when it is unset.
    ``text_of(candidate)`` reads a candidate's text (a heading block, a code definition) on
    demand, for a model that reads the passages (a cross-encoder).

    Return one score per candidate, in the order given (higher is better), or ``None`` to
    leave the order as it is. The scores only order those candidates: each takes the pipeline
    score of the rank it lands on, so the rest of the pipeline (candidates past the depth,
    diversification, abstention) sees the scale it expects. Raising, or returning something
    else, keeps the pipeline's order and logs a warning; the search still answers.

    .. versionadded:: 1.1
    """


# ---------------------------------------------------------------------------------------------
# The semantic retriever: called once, when the daemon starts its vector thread.
# ---------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def scriptorium_embedder(model: str, tokens: int) -> Encoder | None:
    """Supply the encoder of the semantic retriever instead of the built-in ONNX one.

    ``model`` and ``tokens`` are ``[ranking] semantic_model`` and ``semantic_tokens``. Return an
    object with ``name``, ``dimensions``, ``passages(texts) -> float32 array`` and
    ``query(text) -> float32 vector`` (``scriptorium.plugin.Encoder``; unit-length vectors), or
    ``None`` to leave it to the next plugin and finally the built-in model. ``name`` keys the
    vectors kept on disk: a new name encodes every block again. Passages are encoded in a
    background thread, queries in request threads.

    .. versionadded:: 1.2
    """
