"""Every default and cap a request can meet, in one place.

A caller's input is clamped or refused against these numbers wherever it arrives (gRPC, the
MCP bridge, the CLI), so each lives here once and the modules that enforce it import it.
"""

from __future__ import annotations

# Search
# A query (or a composing call's topic) is searched with its first SEARCHED_QUERY_CHARS
# characters, cut at a whitespace boundary, and the answer says so; past MAX_QUERY_CHARS it is
# refused with INVALID_ARGUMENT. Agents paste whole issue texts with tracebacks: those are
# answered from their start rather than refused.
SEARCHED_QUERY_CHARS = 8192
MAX_QUERY_CHARS = 256 * 1024
TOP_K_DEFAULT, TOP_K_MAX = 10, 25  # results per search; top_k is clamped to 1..TOP_K_MAX
SNIPPET_DEFAULT, SNIPPET_MAX = 8, 40  # snippet lines per search result

# GetContent
MAX_LOCATION_CHARS = 2048
MAX_REF_CHARS = 4096
# A deadline with no more than this left when a call starts has expired: grpc rounds a timeout
# below a millisecond (``Grpc-Timeout: 1n``) up to one, and no call answers within it anyway.
EXPIRED_DEADLINE_SECONDS = 0.001
CONTENT_MAX_LINES_DEFAULT = 2000  # lines of one GetContent answer unless max_lines says otherwise
CONTENT_MAX_LINES_CAP = 50_000
CONTENT_SNIPPET_LINES = 20  # lines of a SNIPPET-mode answer
CONTENT_MIN_MAX_CHARS = 200  # the smallest max_chars (part size) GetContent accepts, 0 aside
CODE_SNIPPET_LINES = 40  # a code SNIPPET: the enclosing definition up to this size, else a window

# Composing calls
MAX_TOPIC_CHARS = 2000  # of GuideImplementation's topic, the characters searched
MAX_SEEDS = 25  # refs one ExpandRelated or SummarizeFlow call takes
RELATED_TOP_K_DEFAULT, RELATED_TOP_K_MAX = 10, 50
FLOW_STEPS_DEFAULT, FLOW_STEPS_MAX = 8, 25
GUIDE_DOCS_DEFAULT, GUIDE_DOCS_MAX = 4, 10  # GuideImplementation's max_docs (0: the default)
GUIDE_SAMPLES_DEFAULT, GUIDE_SAMPLES_MAX = 4, 10  # and its max_samples

# Index generations kept on disk (the serving one and those before it)
KEEP_GENERATIONS = 3
