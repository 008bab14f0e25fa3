"""One site's published search index, normalised into canonical pages and searchable blocks.

MkDocs (and Material) publish ``search/search_index.json`` with one entry per page and one per
section (``page/#anchor``); ``text`` holds HTML. Entries are folded onto canonical pages (the
first entry for a page wins), their HTML is reduced to text, and each page becomes a document
whose blocks are its sections, scored by an in-memory tantivy index with our tokenizer.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import unquote

import tantivy

from scriptorium.plugin import (
    Block,
    Candidate,
    Corpus,
    DocMeta,
    Reason,
    RefKind,
    RemotePage,
    Scores,
    content_hash,
    tokenize,
)
from scriptorium.plugin.unstable import FieldWeights, build_query
from scriptorium.plugin.unstable import index_schema as S

_PAGE_SUFFIXES = (".html", ".htm")
_BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt",
        "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
        "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td",
        "tfoot", "th", "thead", "tr", "ul",
    }
)  # fmt: skip
_SKIPPED_TAGS = frozenset({"script", "style", "template"})


class IndexFormatError(ValueError):
    """The published index is not a usable MkDocs search index."""


class _TextExtractor(HTMLParser):
    """HTML to text: block elements break lines, inline ones do not, ``<pre>`` keeps layout."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._pre = 0
        self._skip = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in _SKIPPED_TAGS:
            self._skip += 1
        elif tag == "pre":
            self._pre += 1
            self.parts.append("\n")
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            self._skip = max(0, self._skip - 1)
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
            self.parts.append("\n")
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._pre:
            self.parts.append(data.replace("\n", "\0"))
        else:
            self.parts.append(" ".join(data.split("\n")))


def strip_html(text: str) -> str:
    """Readable text from an index entry's HTML: one line per block, no blank-line runs."""
    if "<" not in text and "&" not in text:
        raw = text
    else:
        parser = _TextExtractor()
        parser.feed(text)
        parser.close()
        raw = "".join(parser.parts)
    lines: list[str] = []
    for line in raw.split("\n"):
        if "\0" in line:
            lines.extend(part.rstrip() for part in line.split("\0"))
            continue
        clean = " ".join(line.split())
        if clean:
            lines.append(clean)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines).strip("\n")


def clamp_boost(value: object) -> float:
    """A page boost: missing means 1.0; NaN, infinities and negatives become 0.0."""
    if value is None or isinstance(value, bool):
        return 1.0
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1.0
    if not math.isfinite(number) or number < 0:
        return 0.0
    return number


def split_location(location: str) -> tuple[str, str, str]:
    """An index location as (canonical page path, page href, anchor).

    ``guide/install/#setup`` → (``guide/install``, ``guide/install/``, ``setup``); the home
    page is ``""``. ``.html`` locations (``use_directory_urls: false``) and ``index`` pages map
    onto the same canonical paths.
    """
    href, _, anchor = location.partition("#")
    path = unquote(href).strip().strip("/")
    for suffix in _PAGE_SUFFIXES:
        if path.lower().endswith(suffix):
            path = path[: -len(suffix)]
            break
    if path.lower() == "index":
        path = ""
    elif path.lower().endswith("/index"):
        path = path[: -len("/index")]
    return path, href, anchor.strip()


@dataclass(slots=True)
class Section:
    anchor: str
    title: str
    text: str


@dataclass(slots=True)
class Page:
    path: str  # canonical, "" for the site root
    href: str  # as published, relative to the site base
    title: str
    text: str
    boost: float
    sections: list[Section] = field(default_factory=list)
    has_entry: bool = False  # a page entry (not only anchors) was seen


def parse_pages(entries: Iterable[object]) -> dict[str, Page]:
    """Canonical pages in index order; the first entry for a page (or an anchor) wins."""
    pages: dict[str, Page] = {}
    anchors: dict[str, set[str]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        location = entry.get("location")
        if not isinstance(location, str):
            continue
        path, href, anchor = split_location(location)
        title = strip_html(str(entry.get("title") or "")).replace("\n", " ")
        text = strip_html(str(entry.get("text") or ""))
        page = pages.get(path)
        if page is None:
            page = Page(path, href, "", "", clamp_boost(entry.get("boost")))
            pages[path] = page
            anchors[path] = set()
        if not anchor:
            if not page.has_entry:
                page.has_entry, page.title, page.text = True, title, text
            continue
        if anchor.lower() in anchors[path]:
            continue
        anchors[path].add(anchor.lower())
        page.sections.append(Section(anchor, title or anchor, text))
    for page in pages.values():
        page.title = page.title or page.path.rsplit("/", 1)[-1] or "Home"
    return pages


def load_index_json(raw: bytes | str) -> list[object]:
    """The ``docs`` entries of a search index; refuses malformed or empty indexes."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise IndexFormatError(f"malformed index: {type(exc).__name__}") from None
    docs = data.get("docs") if isinstance(data, dict) else None
    if not isinstance(docs, list):
        raise IndexFormatError("malformed index: no docs list")
    if not any(isinstance(d, dict) and isinstance(d.get("location"), str) for d in docs):
        raise IndexFormatError("empty index: no pages")
    return docs


def page_document(source: str, site: str, page: Page, url: str, location: str, revision: str):
    """A page as a document: a heading per section, so sections are blocks of their own."""
    lines = [f"# {page.title}", ""]
    if page.text:
        lines += [*page.text.split("\n"), ""]
    spans: list[tuple[Section, int]] = []
    for section in page.sections:
        spans.append((section, len(lines) + 1))
        lines += [f"## {section.title}", ""]
        if section.text:
            lines += [*section.text.split("\n"), ""]
    while lines and not lines[-1]:
        lines.pop()
    total = len(lines)
    first_section = spans[0][1] if spans else total + 1
    blocks = [
        Block(
            kind=RefKind.DOC,
            start_line=1,
            end_line=total,
            title=page.title,
            section_path=(page.title,),
            anchor="",
            body="\n".join(lines[: first_section - 1]),
            level=1,
        )
    ]
    for position, (section, start) in enumerate(spans):
        end = spans[position + 1][1] - 1 if position + 1 < len(spans) else total
        blocks.append(
            Block(
                kind=RefKind.DOC,
                start_line=start,
                end_line=end,
                title=section.title,
                section_path=(page.title, section.title),
                anchor=section.anchor,
                body="\n".join(lines[start - 1 : end]),
                level=2,
            )
        )
    text = "\n".join(lines)
    return RemotePage(
        source=source,
        path=f"{site}/{page.path}" if page.path else site,
        text=text,
        corpus=Corpus.DOCS,
        content_hash=content_hash(text),
        meta=DocMeta(title=page.title),
        blocks=tuple(blocks),
        url=url,
        location=location,
        revision=revision,
    )


class SiteIndex:
    """One loaded site: canonical pages, their documents and a tantivy index over the blocks."""

    def __init__(
        self,
        *,
        source: str,
        site: str,
        base_url: str,
        pages: dict[str, Page],
        revision: str,
        qualify: Callable[[str, str], str],
        token_options: dict[str, bool] | None = None,
    ) -> None:
        self.site = site
        self.base_url = base_url
        self.pages = pages
        self.revision = revision
        self.token_options = token_options or {}
        self.documents: dict[str, RemotePage] = {}
        self._page_of: dict[str, Page] = {}
        for page in pages.values():
            doc = page_document(
                source, site, page, f"{base_url}/{page.href}", qualify(site, page.path), revision
            )
            self.documents[page.path] = doc
            self._page_of[doc.path] = page
        self._blocks: list[tuple[RemotePage, int]] = []
        self._index = self._build()
        self._searcher = self._index.searcher()

    @property
    def page_count(self) -> int:
        return len(self.pages)

    @property
    def section_count(self) -> int:
        return sum(len(p.sections) for p in self.pages.values())

    def _build(self) -> tantivy.Index:
        index = tantivy.Index(S.build_schema())
        writer = index.writer(heap_size=15_000_000, num_threads=1)
        options = self.token_options
        for doc in self.documents.values():
            page_tokens = " ".join(
                tokenize(f"{doc.path.partition('/')[2]} {doc.meta.title or ''}", **options)
            )
            for position, block in enumerate(doc.blocks):
                record = tantivy.Document(
                    body=" ".join(tokenize(block.body, **options)),
                    heading=" ".join(tokenize(" ".join(block.section_path), **options)),
                    path=page_tokens,
                    source=doc.source,
                    corpus=str(Corpus.DOCS),
                    doc=doc.path,
                )
                record.add_unsigned(S.BID, len(self._blocks))
                self._blocks.append((doc, position))
                writer.add_document(record)
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        return index

    def search(self, terms: Iterable[str], weights: FieldWeights, limit: int) -> list[Candidate]:
        """BM25 candidates, each score multiplied by its page's boost."""
        terms = list(terms)
        if not terms:
            return []
        result = self._searcher.search(build_query(self._index.schema, terms, weights), limit)
        if not result.hits:
            return []
        ids = self._searcher.fast_field_values(S.BID, [address for _, address in result.hits])
        out = []
        for (score, _), bid in zip(result.hits, ids, strict=True):
            if bid is None or bid >= len(self._blocks):
                continue
            doc, position = self._blocks[bid]
            page = self._page_of[doc.path]
            lexical = float(score) * page.boost
            cand = Candidate(
                source=doc.source,
                document=doc,
                block=doc.blocks[position],
                score=lexical,
                scores=Scores(lexical=lexical),
            )
            cand.reasons.append(Reason("bm25", round(float(score), 4), "lexical score"))
            if page.boost != 1.0:
                cand.reasons.append(Reason("page-boost", page.boost, "index boost"))
            out.append(cand)
        return out

    def listing(self) -> list[Candidate]:
        """Every page once (anchors excluded), in index order, all with the same score."""
        out = []
        for doc in self.documents.values():
            cand = Candidate(doc.source, doc, doc.blocks[0], 1.0, Scores(lexical=1.0))
            cand.reasons.append(Reason("listing", 1.0, "wildcard page listing"))
            out.append(cand)
        return out

    def doc_freq(self, term: str) -> int:
        return self._searcher.doc_freq(S.BODY, term) + self._searcher.doc_freq(S.HEADING, term)

    @property
    def num_docs(self) -> int:
        return self._searcher.num_docs


def index_revision(raw: bytes) -> str:
    """A short revision id for a published index (its content hash)."""
    return hashlib.sha256(raw).hexdigest()[:16]
