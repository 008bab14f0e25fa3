"""Everything a plugin may import from Scriptorium, and nothing else.

A plugin adds a source kind, a block extractor, a ranking mode or a reranker through the hooks
in ``scriptorium.hookspecs``, implemented with ``@hookimpl``. The names below are the API those
plugins program against: the domain model they produce (documents, blocks, candidates), the
helpers every source needs (tokenizing, splitting lines, cutting a Markdown block, resolving a
location), and the remote-source protocol. Internals may move; these names stay. The
first-party plugins under ``scriptorium_plugins`` import only from here (and the generated
stubs in ``scriptorium.v1``), and ``make lint`` checks that with an import contract.

What every plugin module needs to load (the domain model, sources, the text helpers) is
imported here; the rest (content cutting, the wire conversion and gRPC, the index, remote
sources, ranking modes) is imported on first use of one of its names. A build's helper
processes load every plugin to cut files, and paid for gRPC, tantivy and the index writer
at every start when all of it was imported here.
"""

from __future__ import annotations

import importlib
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
from scriptorium.faults import pause as fault_pause
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
    from scriptorium.content.code import cut_code, cut_lines, cut_symbol
    from scriptorium.content.cut import DEFAULT_MAX_LINES, cut_doc, cut_file, find_doc_block
    from scriptorium.content.fetch import code_location
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
    from scriptorium.grpc import convert as wire
    from scriptorium.grpc.status import resolution_from_error
    from scriptorium.index import schema as index_schema
    from scriptorium.index.fields import block_tokens
    from scriptorium.index.parallel import helper_count, load_streaming
    from scriptorium.index.searcher import FieldWeights, build_query
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

# Name -> (module, attribute; None for the module itself), imported on first use.
_LAZY: dict[str, tuple[str, str | None]] = {
    **{n: ("scriptorium.content.code", n) for n in ("cut_code", "cut_lines", "cut_symbol")},
    **{
        n: ("scriptorium.content.cut", n)
        for n in ("DEFAULT_MAX_LINES", "cut_doc", "cut_file", "find_doc_block")
    },
    "code_location": ("scriptorium.content.fetch", "code_location"),
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
    "wire": ("scriptorium.grpc.convert", None),
    "resolution_from_error": ("scriptorium.grpc.status", "resolution_from_error"),
    "index_schema": ("scriptorium.index.schema", None),
    "doc_version": ("scriptorium.domain.model", "doc_version"),
    "block_tokens": ("scriptorium.index.fields", "block_tokens"),
    **{n: ("scriptorium.index.parallel", n) for n in ("helper_count", "load_streaming")},
    **{n: ("scriptorium.index.searcher", n) for n in ("FieldWeights", "build_query")},
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


def __getattr__(name: str) -> Any:
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module 'scriptorium.plugin' has no attribute {name!r}")
    module = importlib.import_module(found[0])
    value = module if found[1] is None else getattr(module, found[1])
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
    "block_tokens",
    "helper_count",
    "load_streaming",
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
    "resolution_from_error",
    "round_robin",
    "skew",
    "wire",
    # ranking modes
    "RankingMode",
    "Encoder",
    # tests hold a stage with SCRIPTORIUM_FAULT_PAUSE (see scriptorium.faults)
    "fault_pause",
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
    # a lexical index of a plugin's own (a remote site's search index, for instance)
    "FieldWeights",
    "build_query",
    "index_schema",
]
