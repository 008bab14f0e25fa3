"""Every span, attribute and metric name the daemon emits: one vocabulary, in one place.

Dashboards and alerts key on these strings, so they change only with a note in
docs/observability.md.
"""

INSTRUMENTATION_NAME = "scriptorium"

# -- span names ---------------------------------------------------------------------------------

SEARCH = "scriptorium.search"
UNDERSTAND = "scriptorium.query.understand"
RETRIEVE = "scriptorium.retrieve"
FUSE = "scriptorium.rank.fuse"
PRIORS = "scriptorium.rank.priors"
RERANK = "scriptorium.rank.rerank"
DIVERSIFY = "scriptorium.rank.diversify"
BUILD_RESULTS = "scriptorium.results.build"
FETCH = "scriptorium.fetch"
RESOLVE = "scriptorium.resolve"
CUT = "scriptorium.content.cut"
INDEX_BUILD = "scriptorium.index.build"
STAGE_SPANS = (UNDERSTAND, RETRIEVE, FUSE, PRIORS, RERANK, DIVERSIFY, BUILD_RESULTS)

# -- attribute names ----------------------------------------------------------------------------

QUERY_CHARS = "scriptorium.query.chars"
TERM_COUNT = "scriptorium.query.term_count"
QUERY_MODE = "scriptorium.query.mode"
QUERY_KINDS = "scriptorium.query.kinds"
QUERY_SOURCES = "scriptorium.query.sources"
QUERY_TOP_K = "scriptorium.query.top_k"
QUERY_TOKEN_BUDGET = "scriptorium.query.token_budget"
QUERY_EXPLAIN = "scriptorium.query.explain"
QUERY_AS_OF = "scriptorium.query.as_of"
QUERY_SURFACE_CHARS = "scriptorium.query.surface_chars"
SEARCH_PROVIDER = "scriptorium.search.provider"
FETCH_PROVIDER = "scriptorium.fetch.provider"
RESULT_COUNT = "scriptorium.result_count"
MIN_PREVIEW_CHARS = "scriptorium.min_preview_chars"
ABSTAINED = "scriptorium.search.abstained"
ABSTAIN_REASON = "scriptorium.search.abstain_reason"
CONFLICTS = "scriptorium.search.conflicts"
TOKENS_USED = "scriptorium.tokens_used"
SOURCE = "scriptorium.source"
CANDIDATE_COUNT = "scriptorium.candidate_count"
CANDIDATE_LIMIT = "scriptorium.candidate_limit"
TOP_SCORE = "scriptorium.top_score"
FUSION_METHOD = "scriptorium.fusion.method"
FUSION_CORPORA = "scriptorium.fusion.corpora"
RANK_MODE = "scriptorium.rank.mode"
KEPT = "scriptorium.kept"
DROPPED = "scriptorium.dropped"
DROPPED_DUPLICATES = "scriptorium.dropped.duplicates"
DROPPED_DIVERSITY = "scriptorium.dropped.diversity"
FETCH_BY = "scriptorium.fetch.by"
FETCH_MODE = "scriptorium.fetch.mode"
FETCH_SOURCE = "scriptorium.fetch.source"
FETCH_LINES = "scriptorium.fetch.lines"
FETCH_TRUNCATED = "scriptorium.fetch.truncated"
REVISION_SKEW = "scriptorium.fetch.revision_skew"
DOC_VERSION = "scriptorium.doc_version"
RESOLUTION_REASON = "scriptorium.resolution.reason"
RESOLUTION_RULE = "scriptorium.resolution.rule"
RESOLUTION_SITE = "scriptorium.resolution.site"
RESOLUTION_CANDIDATES = "scriptorium.resolution.candidates"
CONTENT_KIND = "scriptorium.content.kind"
CONTENT_LINES = "scriptorium.content.lines"
CONTENT_RANGES = "scriptorium.content.ranges"
INDEX_GENERATION = "scriptorium.index.generation"
INDEX_DOCUMENTS = "scriptorium.index.documents"
INDEX_BLOCKS = "scriptorium.index.blocks"
INDEX_CHANGED = "scriptorium.index.changed"
INDEX_REMOVED = "scriptorium.index.removed"
INDEX_RESUMED = "scriptorium.index.resumed"
ERROR_CODE = "scriptorium.error.code"
RETRIEVE_SOURCE_EVENT = "scriptorium.retrieve.source"

# -- metric names -------------------------------------------------------------------------------

SEARCHES = "scriptorium.searches"
FETCHES = "scriptorium.fetches"
RPC_DURATION = "scriptorium.rpc.duration"
GAUGE_DOCUMENTS = "scriptorium.index.documents"
GAUGE_BLOCKS = "scriptorium.index.blocks"
GAUGE_BYTES = "scriptorium.index.bytes"
GAUGE_STALENESS = "scriptorium.index.staleness"
# Seconds; sized for calls between a fraction of a millisecond and a few seconds.
RPC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
