"""The stable plugin API: everything a plugin may count on, and nothing else.

A plugin adds a source kind, a block extractor, a ranking mode, an encoder or a reranker through
the hooks in ``scriptorium.hookspecs``, implemented with ``@hookimpl``. The names below are what
those plugins program against: the hooks and their version, the domain model a source produces
(documents, blocks, candidates, refs), the source, remote-source and extractor protocols, the text
helpers every source needs (tokenizing, splitting lines, headings and slugs) and the content
assembly a source that serves its own pages uses to answer GetContent exactly as local content
does (cut, locate, ref, outcome). These names keep their meaning across releases; a change is
announced in ``HOOKS_VERSION`` and ``docs/plugins.md``.

What only a plugin bound to the daemon's internals needs (the wire conversion, the index schema
and query builder, the build helpers, the fault pauses) lives in ``scriptorium.plugin.unstable``
and may change in any release. Those names are still found here for one release, with a
``DeprecationWarning``. ``make lint`` checks that first-party plugins import only these two
surfaces (and the generated stubs in ``scriptorium.v1``).

What every plugin module needs to load (the domain model, sources, the text helpers) is imported
here; the rest (content cutting, the remote-source protocol, ranking modes) is imported on first
use of one of its names: a build's helper processes load every plugin to cut files and must not
pay for gRPC, tantivy and the index writer at every start.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from scriptorium.blocks.extractors import BlockExtractor, Extraction
from scriptorium.domain.libraries import split_library_label
from scriptorium.domain.model import (
    Block,
    Candidate,
    Corpus,
    DocMeta,
    FileStat,
    Query,
    Reason,
    RefKind,
    Scores,
    SourceClass,
    SourceDocument,
)
from scriptorium.domain.refs import Ref
from scriptorium.hookspecs import HOOKS_VERSION
from scriptorium.plugins import hookimpl
from scriptorium.settings.schema import Key
from scriptorium.sources.base import (
    ORDER_KEY,
    LocalTreeSource,
    Source,
    SourceConfig,
    SourceContext,
    SourceFactory,
    content_hash,
    deferred_factory,
)
from scriptorium.sources.libraries import LibrarySource
from scriptorium.text import split_lines, tokenize
from scriptorium.text.markdown import Heading, fenced_code_mask, parse_headings
from scriptorium.text.slugs import SlugAllocator, github_slug

if TYPE_CHECKING:
    from scriptorium.content.assemble import (
        Placed,
        StaleRef,
        anchored_url,
        code_location,
        content_outcome,
        cut_for_fragment,
        cut_for_ref,
        placed,
    )
    from scriptorium.content.code import cut_code, cut_lines, cut_symbol
    from scriptorium.content.cut import DEFAULT_MAX_LINES, Cut, cut_doc, cut_file, find_doc_block
    from scriptorium.content.symbols import parse_line_range
    from scriptorium.domain.model import doc_version
    from scriptorium.domain.outcomes import (
        ContentOutcome,
        CrawlReport,
        LibraryReport,
        RangeMark,
        Resolution,
        SourceReport,
    )
    from scriptorium.domain.refs import normalize_location
    from scriptorium.ranking.modes import RankingMode
    from scriptorium.semantic.encoder import Encoder
    from scriptorium.sources.remote import (
        DEFAULT_COOLDOWN_SECONDS,
        Cooldown,
        FetchMiss,
        FetchRequest,
        FetchResult,
        RemoteContext,
        RemotePage,
        RemoteSource,
        SearchBatch,
        is_listing,
        option_number,
        round_robin,
        skew,
    )
    from scriptorium.text.code import (
        is_configuration,
        is_decorator,
        is_dependency_injection,
        routes,
    )

# Name -> (module, attribute), imported on first use.
_LAZY: dict[str, tuple[str, str]] = {
    **{
        n: ("scriptorium.content.assemble", n)
        for n in (
            "Placed",
            "StaleRef",
            "anchored_url",
            "code_location",
            "content_outcome",
            "cut_for_fragment",
            "cut_for_ref",
            "placed",
        )
    },
    **{n: ("scriptorium.content.code", n) for n in ("cut_code", "cut_lines", "cut_symbol")},
    **{
        n: ("scriptorium.content.cut", n)
        for n in ("DEFAULT_MAX_LINES", "Cut", "cut_doc", "cut_file", "find_doc_block")
    },
    "normalize_location": ("scriptorium.domain.refs", "normalize_location"),
    "parse_line_range": ("scriptorium.content.symbols", "parse_line_range"),
    **{
        n: ("scriptorium.domain.outcomes", n)
        for n in (
            "ContentOutcome",
            "CrawlReport",
            "LibraryReport",
            "RangeMark",
            "Resolution",
            "SourceReport",
        )
    },
    "doc_version": ("scriptorium.domain.model", "doc_version"),
    "RankingMode": ("scriptorium.ranking.modes", "RankingMode"),
    "Encoder": ("scriptorium.semantic.encoder", "Encoder"),
    **{
        n: ("scriptorium.sources.remote", n)
        for n in (
            "DEFAULT_COOLDOWN_SECONDS",
            "Cooldown",
            "FetchMiss",
            "FetchRequest",
            "FetchResult",
            "RemoteContext",
            "RemotePage",
            "RemoteSource",
            "SearchBatch",
            "is_listing",
            "option_number",
            "round_robin",
            "skew",
        )
    },
    **{
        n: ("scriptorium.text.code", n)
        for n in ("is_configuration", "is_decorator", "is_dependency_injection", "routes")
    },
}

# Names that moved to ``scriptorium.plugin.unstable``; found here until the next release.
MOVED_TO_UNSTABLE = frozenset(
    {
        "FieldWeights",
        "block_tokens",
        "build_query",
        "fault_pause",
        "helper_count",
        "index_schema",
        "load_streaming",
        "resolution_from_error",
        "wire",
    }
)


def __getattr__(name: str) -> Any:
    if name in MOVED_TO_UNSTABLE:
        warnings.warn(
            f"scriptorium.plugin.{name} moved to scriptorium.plugin.unstable (not part of the "
            "stable plugin API); the old name goes in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module("scriptorium.plugin.unstable"), name)
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module 'scriptorium.plugin' has no attribute {name!r}")
    value = getattr(importlib.import_module(found[0]), found[1])
    globals()[name] = value  # asked once
    return value


__all__ = [  # noqa: RUF022 (grouped by what a plugin builds, not sorted)
    # hooks
    "hookimpl",
    "HOOKS_VERSION",
    # the domain model a source produces
    "Block",
    "Candidate",
    "Corpus",
    "DocMeta",
    "FileStat",
    "Query",
    "Reason",
    "Ref",
    "RefKind",
    "Scores",
    "SourceClass",
    "SourceDocument",
    "doc_version",
    # sources and extractors
    "BlockExtractor",
    "Key",
    "ORDER_KEY",
    "Extraction",
    "LocalTreeSource",
    "Source",
    "SourceConfig",
    "SourceContext",
    "SourceFactory",
    "LibraryReport",
    "LibrarySource",
    "split_library_label",
    "content_hash",
    "deferred_factory",
    # remote sources (searched and fetched over the network)
    "ContentOutcome",
    "Cooldown",
    "CrawlReport",
    "DEFAULT_COOLDOWN_SECONDS",
    "FetchMiss",
    "FetchRequest",
    "FetchResult",
    "RangeMark",
    "RemoteContext",
    "RemotePage",
    "RemoteSource",
    "Resolution",
    "SearchBatch",
    "SourceReport",
    "is_listing",
    "option_number",
    "round_robin",
    "skew",
    # answering GetContent from a page a source holds, as local content does
    "Cut",
    "Placed",
    "StaleRef",
    "anchored_url",
    "content_outcome",
    "cut_for_fragment",
    "cut_for_ref",
    "placed",
    # ranking modes and encoders
    "RankingMode",
    "Encoder",
    # text helpers
    "DEFAULT_MAX_LINES",
    "Heading",
    "SlugAllocator",
    "fenced_code_mask",
    "github_slug",
    "cut_code",
    "cut_doc",
    "cut_file",
    "cut_lines",
    "cut_symbol",
    "code_location",
    "parse_line_range",
    "find_doc_block",
    "is_configuration",
    "is_decorator",
    "is_dependency_injection",
    "normalize_location",
    "parse_headings",
    "routes",
    "split_lines",
    "tokenize",
]
