// Generated from proto/scriptorium/v1/retrieval.proto by scripts/gen_node_types.py (make gen).
// Do not edit: tests/unit/test_node_types_fresh.py fails when this file is stale.
//
// Messages as @scriptorium/client sends and receives them: snake_case field names, enums as
// their string names, 64-bit integers as numbers. A response carries every field (unset ones
// with their defaults, unset messages as null); a request takes any subset of its fields (the
// required ones aside), with enums as names or numbers.

/** RefKind says what a reference points at. */
export type RefKind =
  | 'REF_KIND_UNSPECIFIED'
  // A heading block of a Markdown document or documentation page.
  | 'REF_KIND_DOC'
  // A line anchor (and its surrounding definition) in a source file.
  | 'REF_KIND_CODE'
  // A whole file without a line anchor.
  | 'REF_KIND_FILE';

/** Corpus selects documentation, code, or both (when none is given). */
export type Corpus = 'CORPUS_UNSPECIFIED' | 'CORPUS_DOCS' | 'CORPUS_CODE';

/** AbstainReason explains why a search declined to answer confidently. */
export type AbstainReason =
  | 'ABSTAIN_REASON_UNSPECIFIED'
  | 'ABSTAIN_REASON_NO_CANDIDATES'
  | 'ABSTAIN_REASON_LOW_CONFIDENCE'
  | 'ABSTAIN_REASON_CONFLICTING_SOURCES';

/**
 * ContentMode chooses how much of a resolved ref GetContent returns.
 *
 * Code locations name a place in a source file: `path#Symbol` or `path#Class.method` (and, for
 * Python, the module path `package.module.Class.method`) names a definition; `path#L10` or
 * `path#L10-L20` names exact lines, which every mode but DEFINITION returns as asked (clamped
 * to the file); a documentation page's `page#L10-L20` names its lines the same way. A code
 * ref_id names its anchor line. GetContentResponse.scope says what came.
 */
export type ContentMode =
  | 'CONTENT_MODE_UNSPECIFIED'
  // A focused range. Docs: the block start. Code: the definition the anchor sits in when it
  // fits the line budget (max_lines, at most 40 lines), else a window of that many lines
  // around the anchor that never starts inside the previous definition. A symbol location
  // returns its definition (up to max_lines).
  | 'CONTENT_MODE_SNIPPET'
  // The whole block (docs) or the whole file (code), subject to max_lines.
  | 'CONTENT_MODE_FULL'
  // The block with highlighted ranges, each with a reason.
  | 'CONTENT_MODE_MULTI_RANGE'
  // Code: the innermost definition the anchor sits in (decorators, signature, docstring and
  // body, up to max_lines), preceded by the signature lines of the definitions that enclose it
  // (the `class X(...):` line above a method), and `context` names those lines. Docs: as FULL.
  | 'CONTENT_MODE_DEFINITION'
  // The outline of the whole document or file: its headings (docs) or definitions (code), each
  // with its location, line range and size, in `outline`, with `content` empty. A cheap first
  // look before fetching: pass an entry's location back to read it.
  | 'CONTENT_MODE_OUTLINE';

/** FlowStyle changes how compact flow steps are rendered. */
export type FlowStyle = 'FLOW_STYLE_UNSPECIFIED' | 'FLOW_STYLE_COMPACT' | 'FLOW_STYLE_DETAILED';

/** Confidence is a qualitative confidence derived from source quality and merge stability. */
export type Confidence =
  | 'CONFIDENCE_UNSPECIFIED'
  | 'CONFIDENCE_LOW'
  | 'CONFIDENCE_MEDIUM'
  | 'CONFIDENCE_HIGH';

/** SourceState is the lifecycle state of a configured source. */
export type SourceState =
  | 'SOURCE_STATE_UNSPECIFIED'
  | 'SOURCE_STATE_LOADING'
  | 'SOURCE_STATE_READY'
  | 'SOURCE_STATE_FAILED'
  | 'SOURCE_STATE_STALE';

// Corpus in a request may also be one of these words (any case, '-' for '_');
// an unknown word rejects with a RangeError naming them, before anything is sent.
export type CorpusWord = 'docs' | 'code';

// ContentMode in a request may also be one of these words (any case, '-' for '_');
// an unknown word rejects with a RangeError naming them, before anything is sent.
export type ContentModeWord = 'snippet' | 'full' | 'multi_range' | 'definition' | 'outline';

// FlowStyle in a request may also be one of these words (any case, '-' for '_');
// an unknown word rejects with a RangeError naming them, before anything is sent.
export type FlowStyleWord = 'compact' | 'detailed';

/** google.protobuf.Timestamp */
export interface Timestamp {
  seconds: number;
  nanos: number;
}

/** Scores carries the per-retriever and fused scores of one result. */
export interface Scores {
  /** BM25 score from the lexical retriever, before fusion. */
  lexical: number;
  /** Dense (embedding) similarity; zero when no dense retriever is configured. */
  dense: number;
  /** Score after fusion across retrievers and sources. */
  fused: number;
  /** Score after mode re-weighing, diversification and priors. */
  rerank: number;
}

/** Reason is one named, weighted contribution to a score. */
export interface Reason {
  name: string;
  weight: number;
  detail: string;
}

export interface SearchRequest {
  query: string;
  /** Number of results; default 10, clamped to 1..25. */
  top_k?: number;
  /** Lines of snippet per result; default 8, clamped to 1..40. */
  snippet_lines?: number;
  /** Corpora to search; empty means both. */
  kinds?: Array<Corpus | CorpusWord | number>;
  /** Ranking mode name; empty means "default". */
  mode?: string;
  /** Restrict to these source names; empty means all. */
  sources?: string[];
  /** A soft topical prior, never a filter. */
  surface?: string;
  /**
   * Effective-dated retrieval; unset means now.
   * Takes a Date or epoch milliseconds too; the client converts them.
   */
  as_of?: Date | number | Timestamp;
  /**
   * Cap on estimated tokens of snippet and preview text; zero means unlimited. The best result
   * is kept (shortened when it alone exceeds the budget); later ones lose their snippet, then
   * get a shortened preview, then are dropped. About four characters of English or code make a
   * token, one CJK character makes one.
   */
  token_budget?: number;
  /** Return named reasons, the understood query and per-stage reports. */
  explain?: boolean;
  /**
   * Restrict to one library of a `dependencies` source (its name, as `httpx` or
   * `github.com/google/uuid`; case and `-_.` runs compared loosely); every version indexed.
   * An unknown library is INVALID_ARGUMENT naming the known ones.
   */
  library?: string;
}

export interface SearchResult {
  ref_id: string;
  kind: RefKind;
  /**
   * Human path to pass back to GetContent (site-qualified for non-default sites). For code,
   * the definition's lines, `path#L{start_line}-L{end_line}`: fetched, exactly the definition.
   */
  location: string;
  url: string;
  title: string;
  /** Heading breadcrumb from the document title down to this block. */
  section_path: string[];
  start_line: number;
  end_line: number;
  snippet: string;
  /** Query-centred, whitespace-collapsed excerpt of about 200 characters. */
  preview: string;
  /**
   * What results are ordered by; compare it only within one response. Each corpus's BM25
   * is scaled by its best match (when docs and code both matched, the weaker corpus keeps a
   * tenth of the gap), then priors and the ranking mode multiply it, so the best result is
   * near 1.0 and a boosted one can pass it. `scores` holds the figure of each stage.
   */
  score: number;
  scores: Scores | null;
  reasons: Reason[];
  source: string;
  /** Content hash of the document this result came from. */
  doc_version: string;
  superseded_by: string;
  effective_from: Timestamp | null;
  effective_to: Timestamp | null;
  /** Source class: product, reference, ledger or archive. */
  source_class: string;
  /** Confidence that the block was parsed correctly from its input (1.0 for clean input). */
  parse_confidence: number;
  /** Revision of the source (for example a git commit) when known. */
  source_revision: string;
  /** Language of a code result (python, go, ...), empty for docs. */
  language: string;
  /** The anchor line a code ref is centred on. */
  anchor_line: number;
  /** The library a result of a `dependencies` source comes from (`httpx`), empty otherwise. */
  library: string;
  /** The version of that library whose installed files were read (`0.28.1`). */
  library_version: string;
  /**
   * For a page of the library's published documentation site (attached by a `dependencies`
   * source with `docs_sites = true`): the version of the docs it is, the pinned version's
   * folder the site serves (`1.2`) or `latest` when the site serves no folder for it.
   */
  docs_version: string;
}

/** Conflict names currently-effective results that disagree. */
export interface Conflict {
  key: string;
  ref_ids: string[];
  locations: string[];
  note: string;
}

/** UnderstoodQuery is what the service made of the request (never the raw text). */
export interface UnderstoodQuery {
  terms: string[];
  kinds: Corpus[];
  sources: string[];
  surface: string;
  as_of: Timestamp | null;
  mode: string;
  query_chars: number;
  term_count: number;
  /**
   * Terms only the documentation's pool searched for besides `terms`: the names a pasted
   * text's words spell as separate words ("one hot" for one_hot), where the index holds them.
   */
  docs_terms: string[];
}

/** StageDrop is one candidate a stage removed, and why. */
export interface StageDrop {
  ref_id: string;
  location: string;
  why: string;
}

/** StageReport says what one ranking stage kept and dropped. */
export interface StageReport {
  stage: string;
  kept: number;
  dropped: number;
  drops: StageDrop[];
}

/** SourceFailure reports a source that could not answer. */
export interface SourceFailure {
  source: string;
  detail: string;
}

export interface SearchResponse {
  results: SearchResult[];
  trace_id: string;
  abstained: boolean;
  abstain_reason: AbstainReason;
  conflicts: Conflict[];
  /** Estimated tokens of the snippets and previews returned (within token_budget when set). */
  tokens_used: number;
  /** The provider (source) that answered the search, or "none". */
  provider: string;
  understood: UnderstoodQuery | null;
  stages: StageReport[];
  failed_sources: SourceFailure[];
  /**
   * True when the query was longer than the daemon searches (8,192 characters): only its
   * first query_chars_used characters, cut at a whitespace boundary, were searched. Queries
   * up to 262,144 characters are accepted; longer ones are INVALID_ARGUMENT.
   */
  query_truncated: boolean;
  /** Characters of the query that were searched (all of them unless query_truncated). */
  query_chars_used: number;
}

export interface GetContentRequest {
  /** Either ref_id or location. */
  ref_id?: string;
  location?: string;
  mode?: ContentMode | ContentModeWord | number;
  /** Cap on returned lines; zero means the server default. */
  max_lines?: number;
  /** The doc_version the caller saw at search time, to detect revision skew. */
  seen_doc_version?: string;
  /**
   * Cap on the characters of `content` in one answer; zero means no cap. A longer answer comes in
   * parts, each ending on a line boundary (a heading, definition or blank line when one is near
   * the cap); `next_cursor` fetches the next part. A single line longer than the cap is the only
   * thing cut mid-line. For tokens, allow about four characters per token for English and code
   * and one per CJK character (the same estimate as Search's token_budget). Values from 1 to 199
   * are refused. With max_lines zero, the whole answer is the whole block or file (up to the
   * server's line cap, not its default), so the parts page through all of it. OUTLINE answers
   * are not cut.
   */
  max_chars?: number;
  /**
   * The `next_cursor` of the previous part; the rest of the request must name the same answer.
   * Opaque; refused with INVALID_ARGUMENT when malformed, FAILED_PRECONDITION when it belongs to
   * another doc_version or another answer.
   */
  cursor?: string;
}

/** Range is a highlighted line range with the reason it matters. */
export interface Range {
  start_line: number;
  end_line: number;
  reason: string;
}

/** Resolution records how a ref or location was resolved. */
export interface Resolution {
  /** resolved, not_found, unknown_site, ambiguous, site_unavailable or fetch_failed. */
  reason: string;
  /** exact, variant, canonical-leaf, moved, ref or none. */
  rule: string;
  /** Candidate locations when ambiguous (site/location for non-default sites). */
  candidates: string[];
  detail: string;
  requested_location: string;
  site: string;
  resolved_location: string;
}

export interface GetContentResponse {
  location: string;
  requested_location: string;
  url: string;
  source: string;
  content: string;
  ranges: Range[];
  truncated: boolean;
  total_lines: number;
  doc_version: string;
  resolution: Resolution | null;
  ref_id: string;
  kind: RefKind;
  title: string;
  start_line: number;
  end_line: number;
  /** The provider (source) that served the fetch. */
  provider: string;
  /** True when seen_doc_version was given and differs from doc_version. */
  revision_skew: boolean;
  source_revision: string;
  section_path: string[];
  trace_id: string;
  /**
   * What the content covers: "section", "page" or "lines" (docs), "definition", "window",
   * "lines" or "file" (code). A FULL answer for code is the "file" (cut around the anchor when longer
   * than max_lines, with truncated set).
   */
  scope: string;
  /**
   * The qualified name (Class.method) of the definition returned, or the one the anchor sits
   * in; empty for docs and for lines outside every definition.
   */
  symbol: string;
  /**
   * DEFINITION mode: the enclosing definitions' signature lines that precede the definition
   * in content, outermost first (reason: the enclosing definition's name). start_line and
   * end_line are the definition's own lines.
   */
  context: Range[];
  /** Characters of the whole answer, all parts together (equal to len(content) when unparted). */
  total_chars: number;
  /** Where this part sits in the whole answer; unset when max_chars is zero. */
  part: ContentPart | null;
  /** The cursor of the next part; empty on the last (or only) part. */
  next_cursor: string;
  /** Estimated tokens of `content` (the estimate of Search's tokens_used). */
  tokens_used: number;
  /** OUTLINE mode: the document's headings or the file's definitions, in line order. */
  outline: OutlineEntry[];
}

/**
 * ContentPart places one part of a long GetContent answer inside the whole answer. Parts are
 * exact slices: concatenating the contents of parts 1..count gives the whole answer.
 */
export interface ContentPart {
  /** This part's number (1-based) and how many parts the whole answer has at this max_chars. */
  number: number;
  count: number;
  /** Character offsets of this part in the whole answer: [start_char, end_char). */
  start_char: number;
  end_char: number;
  /**
   * The whole answer's first and last line in the document, and its line count (in DEFINITION
   * mode the enclosing signature lines count too). A part's own start_line and end_line are the
   * document's lines it holds (a definition's, not its signatures'); only the part that holds
   * the signature lines keeps them in `context`.
   */
  whole_start_line: number;
  whole_end_line: number;
  whole_lines: number;
}

/** OutlineEntry is one heading of a document or one definition of a code file. */
export interface OutlineEntry {
  /** heading for docs; the definition kind for code (function, class, method, ...). */
  kind: string;
  title: string;
  /** Heading level (1..6) for docs; nesting depth for code (1 is top level). */
  level: number;
  /** A location to pass back to GetContent for exactly this entry. */
  location: string;
  ref_id: string;
  /**
   * The entry's extent: a heading runs to the next heading of the same or higher level (so it
   * includes nested headings); a definition covers its decorators and body.
   */
  start_line: number;
  end_line: number;
  lines: number;
  chars: number;
  /** Heading breadcrumb or enclosing definitions, outermost first. */
  section_path: string[];
}

export interface ExpandRelatedRequest {
  ref_ids: string[];
  top_k?: number;
  kinds?: Array<Corpus | CorpusWord | number>;
  mode?: string;
  sources?: string[];
  /**
   * Cap on estimated tokens of the snippets returned; zero means unlimited. Refs are kept in
   * score order; a ref whose snippet does not fit what is left gets a shortened or empty one.
   * Tokens are estimated as for Search's token_budget.
   */
  token_budget?: number;
}

/** RelatedRef is one supporting reference with the reasons it relates. */
export interface RelatedRef {
  ref_id: string;
  kind: RefKind;
  location: string;
  title: string;
  score: number;
  reasons: Reason[];
  source: string;
  start_line: number;
  end_line: number;
  snippet: string;
  url: string;
}

export interface ExpandRelatedResponse {
  related: RelatedRef[];
  unresolved_ref_ids: string[];
  trace_id: string;
  /** Estimated tokens of the text returned (the fields token_budget counts). */
  tokens_used: number;
}

/** FlowStep is one step of a flow, grounded in the refs it came from. */
export interface FlowStep {
  index: number;
  title: string;
  description: string;
  ref_ids: string[];
  locations: string[];
  /** How the step was extracted: numbered, labelled, bullet, heading, paragraph, code or topic. */
  origin: string;
}

export interface SummarizeFlowRequest {
  ref_ids?: string[];
  topic?: string;
  style?: FlowStyle | FlowStyleWord | number;
  max_steps?: number;
  /**
   * Cap on estimated tokens of the step titles and descriptions returned; zero means
   * unlimited. The last steps go first; the first step is shortened rather than dropped.
   * Tokens are estimated as for Search's token_budget.
   */
  token_budget?: number;
}

export interface SummarizeFlowResponse {
  flow: FlowStep[];
  assumptions: string[];
  confidence: Confidence;
  trace_id: string;
  unresolved_ref_ids: string[];
  /** Estimated tokens of the text returned (the fields token_budget counts). */
  tokens_used: number;
}

export interface GuideImplementationRequest {
  topic: string;
  framework?: string;
  language?: string;
  max_docs?: number;
  max_samples?: number;
  style?: FlowStyle | FlowStyleWord | number;
  sources?: string[];
  /**
   * Cap on estimated tokens of the text returned: flow step titles and descriptions, then the
   * titles, snippets and previews of docs and sample code; zero means unlimited. The flow is
   * fitted first (half the budget at most), the refs share what is left.
   * Tokens are estimated as for Search's token_budget.
   */
  token_budget?: number;
}

export interface GuideImplementationResponse {
  query: string;
  flow: FlowStep[];
  docs: SearchResult[];
  sample_code: SearchResult[];
  assumptions: string[];
  confidence: Confidence;
  trace_id: string;
  /** Estimated tokens of the text returned (the fields token_budget counts). */
  tokens_used: number;
  /**
   * True when the topic was longer than the guide searches (2,000 characters): only its
   * first topic_chars_used characters, cut at a whitespace boundary, were used. Topics up
   * to 262,144 characters are accepted; longer ones are INVALID_ARGUMENT.
   */
  topic_truncated: boolean;
  /** Characters of the topic that were used (all of them unless topic_truncated). */
  topic_chars_used: number;
}

export interface ListSourcesRequest {}

/** SourceStatus is one configured source as the daemon sees it now. */
export interface SourceStatus {
  name: string;
  /** The source kind (plugin name), for example markdown or code. */
  kind: string;
  state: SourceState;
  document_count: number;
  block_count: number;
  /** Index generation the source is served from. */
  generation: number;
  indexed_at: Timestamp | null;
  last_error: string;
  source_class: string;
  root: string;
  bytes: number;
  corpus: Corpus;
  /** Seconds since the source was last known to match its root. */
  staleness_seconds: number;
  /**
   * While a build or an update reads this source's new and changed files: how many it has to
   * read, and how many it has read so far. Both are 0 when no build is under way. The first
   * build of a large tree reports its progress here (the source is LOADING meanwhile).
   */
  build_files_total: number;
  build_files_done: number;
  /**
   * The semantic retriever's vectors of this source's blocks, made in the background once a
   * generation serves: "off" (turned off, or no encoder: see vectors_detail), "waiting",
   * "encoding" (vectors_done of vectors_total blocks have one), "ready" or "failed". Search
   * mixes them in as soon as a generation's vectors are complete; until then it is lexical.
   */
  vectors_state: string;
  vectors_done: number;
  vectors_total: number;
  vectors_detail: string;
  /**
   * Files this source would index that its last listing left out, per rule that left some
   * out: "gitignore" (a .gitignore rule), "generated" (a folder a build wrote: Sphinx's
   * .buildinfo, a built MkDocs site's search/search_index.json, sitemap.xml beside
   * index.html, CACHEDIR.TAG), "skip_dirs" (configured) and "built-in" (node_modules,
   * virtualenvs, caches). Empty when nothing was left out.
   */
  skipped: SkipCount[];
  /**
   * What the last crawl of a fetched site did (the site and llms_txt kinds); unset for
   * sources that are not crawled.
   */
  crawl: CrawlStatus | null;
  /**
   * What the source says of itself in one sentence (a `dependencies` source: how many
   * libraries are indexed, which are declared but not installed, and how to turn it off).
   */
  detail: string;
  /** The libraries of a `dependencies` source, installed or not. */
  libraries: LibraryStatus[];
}

/** One crawl of a documentation site: what it fetched, re-used, skipped and could not get. */
export interface CrawlStatus {
  /**
   * "complete" (every page in scope answered), "partial" (some failed, or a bound cut the
   * crawl short: see detail), "failed" (nothing could be fetched; the last copy serves),
   * "crawling" (a refresh under way beside the serving daemon: the counts so far).
   */
  state: string;
  /** One sentence with the counts, for people: "partial: 12 pages fetched, 2 failed (...)". */
  detail: string;
  /** Pages downloaded (200) and pages whose cached copy was re-used (304 Not Modified). */
  pages_fetched: number;
  pages_unchanged: number;
  /**
   * Links not followed, by reason: "robots", "out of scope", "excluded", "not HTML",
   * "over the bound".
   */
  skipped: CrawlSkip[];
  /** Pages that did not answer: every failure is counted, the first ones are listed. */
  pages_failed: number;
  failures: CrawlFailure[];
  finished_at: Timestamp | null;
  /** The URL the crawl started from (the first start URL, or the llms.txt). */
  url: string;
}

export interface CrawlSkip {
  reason: string;
  pages: number;
}

export interface CrawlFailure {
  url: string;
  /** The HTTP status (403, 404, 500, ...), or 0 when there was no response. */
  http_status: number;
  /** "HTTP 403", "timed out", "unreachable: ConnectError", ... */
  error: string;
}

/** One declared dependency of a `dependencies` source. */
export interface LibraryStatus {
  name: string;
  /** The version the lock file pins (else the installed one). */
  version: string;
  /** The version found installed; empty when it is not installed (nothing is downloaded). */
  installed_version: string;
  /** python, node, go or rust. */
  ecosystem: string;
  /** Named by the manifest itself, not only pulled in by another dependency. */
  direct: boolean;
  installed: boolean;
  /** Files of it the source reads. */
  files: number;
  /** Where it is installed (a site-packages, node_modules/<name>, a module cache folder). */
  location: string;
  /** Where its distribution says its documentation is published. */
  documentation_urls: string[];
  /**
   * The documentation site attached to it (`docs_sites = true`): the URL its pages were read
   * from, empty when none was attached.
   */
  docs_url: string;
  /** How that site was read: llms_txt, mkdocs, sphinx or site. */
  docs_kind: string;
  /** The docs' version: the pinned version's folder the site serves (`1.2`), else `latest`. */
  docs_version: string;
  /** Pages of it indexed. */
  docs_pages: number;
  /** One sentence: what the attach did (`attached ...`, `not reached: ...`). */
  docs_detail: string;
}

/** How many files one rule kept out of a source's listing (counting stops at 100000). */
export interface SkipCount {
  rule: string;
  files: number;
}

export interface ListSourcesResponse {
  sources: SourceStatus[];
  server_version: string;
  generation: number;
}
