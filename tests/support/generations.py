"""Writing a first generation of a ``docs`` source straight from documents, for the tests of
the generation store that need no source tree."""

from __future__ import annotations

from scriptorium.domain.model import SourceDocument
from scriptorium.index.generation import Change, FileEntry, GenerationStore, SourceEntry
from scriptorium.index.store import blob_name

FINGERPRINT = "test=1"


def tokens_for(doc: SourceDocument, block) -> tuple[str, str, str]:
    return block.body.lower(), "", doc.path


def write_first(store: GenerationStore, docs: list[SourceDocument], stop=None):
    """Generation 1 of source ``docs`` holding ``docs``."""
    files = {
        d.path: FileEntry(d.content_hash, len(d.text), 0, blob_name(d, FINGERPRINT), 1)
        for d in docs
    }
    return store.write(
        parent=None,
        change=Change(added=docs),
        sources={"docs": SourceEntry("markdown", "/x", "fp", files)},
        extractors=FINGERPRINT,
        tokens_for=tokens_for,
        stop=stop,
    )
