"""Cuts reStructuredText documents into heading blocks, by docutils' own reading of them.

Sections, their levels and their ids are docutils': whatever adornment characters a file uses,
the first style met is level 1, the next new one level 2, and so on, and a section's anchor is
the id docutils gives it (the one the rendered page carries). A ``.. _label:`` target right
before a section adds its label to the section's ids; it becomes an alias of the block.

As for Markdown, a block's extent runs to the next section of the same or higher level, and its
indexed ``body`` stops at the next section of any level. The body is the text a reader sees,
not the markup: a role shows its text, a directive its arguments and content, a literal block
its code. Sphinx's autodoc directives are written ``::: name`` in the body, the spelling of
mkdocstrings, so ranking treats reference rendered from code the same way in both formats.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from scriptorium.plugin import Block, Corpus, DocMeta, Extraction, RefKind, split_lines

RST_SUFFIXES = (".rst", ".rest")
# A document docutils could not read is indexed as one block of its text, at this confidence.
UNPARSED_CONFIDENCE = 0.5


def _unparsed(path: str, text: str, lines: list[str]) -> Extraction:
    """One block of the plain text, for a document docutils gave up on."""
    title = PurePosixPath(path).stem
    meta = DocMeta(title=title, parse_confidence=UNPARSED_CONFIDENCE)
    if not text.strip():
        return Extraction(blocks=(), meta=meta)
    block = Block(RefKind.DOC, 1, max(len(lines), 1), title, (), "", text, 0)
    return Extraction(blocks=(block,), meta=meta)


class RstExtractor:
    """The built-in extractor for reStructuredText files in documentation sources."""

    name = "rst"
    version = "1"
    priority = 100

    def accepts(self, path: str, corpus: Corpus) -> bool:
        return corpus is Corpus.DOCS and path.lower().endswith(RST_SUFFIXES)

    def extract(self, path: str, text: str) -> Extraction:
        lines = split_lines(text)
        try:
            from scriptorium_plugins.rst.sections import extract_sections

            return extract_sections(path, text, lines)
        except Exception:  # docutils fails in many ways on broken input; all mean "unparsed"
            return _unparsed(path, text, lines)
