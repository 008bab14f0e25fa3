// Types for @scriptorium/client. Field names follow proto/scriptorium/v1/retrieval.proto
// (snake_case); enums are their string names; int64 fields are numbers.

import type { ChannelCredentials, Metadata, status as GrpcStatus } from '@grpc/grpc-js';

export type RefKind = 'REF_KIND_UNSPECIFIED' | 'REF_KIND_DOC' | 'REF_KIND_CODE' | 'REF_KIND_FILE';
export type Corpus = 'CORPUS_UNSPECIFIED' | 'CORPUS_DOCS' | 'CORPUS_CODE';
export type AbstainReason =
  | 'ABSTAIN_REASON_UNSPECIFIED'
  | 'ABSTAIN_REASON_NO_CANDIDATES'
  | 'ABSTAIN_REASON_LOW_CONFIDENCE'
  | 'ABSTAIN_REASON_CONFLICTING_SOURCES';
export type ContentMode =
  | 'CONTENT_MODE_UNSPECIFIED'
  | 'CONTENT_MODE_SNIPPET'
  | 'CONTENT_MODE_FULL'
  | 'CONTENT_MODE_MULTI_RANGE';
export type FlowStyle = 'FLOW_STYLE_UNSPECIFIED' | 'FLOW_STYLE_COMPACT' | 'FLOW_STYLE_DETAILED';
// Requests also take the short words (any case, '-' for '_'); an unknown word rejects with a
// RangeError naming the accepted ones, before anything is sent.
export type CorpusWord = 'docs' | 'code';
export type ContentModeWord = 'snippet' | 'full' | 'multi_range';
export type FlowStyleWord = 'compact' | 'detailed';
export type Confidence =
  | 'CONFIDENCE_UNSPECIFIED'
  | 'CONFIDENCE_LOW'
  | 'CONFIDENCE_MEDIUM'
  | 'CONFIDENCE_HIGH';
export type SourceState =
  | 'SOURCE_STATE_UNSPECIFIED'
  | 'SOURCE_STATE_LOADING'
  | 'SOURCE_STATE_READY'
  | 'SOURCE_STATE_FAILED'
  | 'SOURCE_STATE_STALE';
export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

export interface Timestamp {
  seconds: number;
  nanos: number;
}

export interface Scores {
  lexical: number;
  dense: number;
  fused: number;
  rerank: number;
}

export interface Reason {
  name: string;
  weight: number;
  detail: string;
}

export interface SearchRequest {
  query: string;
  top_k?: number;
  snippet_lines?: number;
  kinds?: Array<Corpus | CorpusWord | number>;
  mode?: string;
  sources?: string[];
  surface?: string;
  /** A Date, epoch milliseconds or a Timestamp. */
  as_of?: Date | number | Timestamp;
  token_budget?: number;
  explain?: boolean;
}

export interface SearchResult {
  ref_id: string;
  kind: RefKind;
  location: string;
  url: string;
  title: string;
  section_path: string[];
  start_line: number;
  end_line: number;
  snippet: string;
  preview: string;
  /** What results are ordered by; compare it only within one response (see the proto). */
  score: number;
  scores: Scores | null;
  reasons: Reason[];
  source: string;
  doc_version: string;
  superseded_by: string;
  effective_from: Timestamp | null;
  effective_to: Timestamp | null;
  source_class: string;
  parse_confidence: number;
  source_revision: string;
  language: string;
  anchor_line: number;
}

export interface Conflict {
  key: string;
  ref_ids: string[];
  locations: string[];
  note: string;
}

export interface UnderstoodQuery {
  terms: string[];
  kinds: Corpus[];
  sources: string[];
  surface: string;
  as_of: Timestamp | null;
  mode: string;
  query_chars: number;
  term_count: number;
}

export interface StageDrop {
  ref_id: string;
  location: string;
  why: string;
}

export interface StageReport {
  stage: string;
  kept: number;
  dropped: number;
  drops: StageDrop[];
}

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
  tokens_used: number;
  provider: string;
  understood: UnderstoodQuery | null;
  stages: StageReport[];
  failed_sources: SourceFailure[];
}

export interface GetContentRequest {
  ref_id?: string;
  location?: string;
  mode?: ContentMode | ContentModeWord | number;
  max_lines?: number;
  seen_doc_version?: string;
}

export interface Range {
  start_line: number;
  end_line: number;
  reason: string;
}

export interface Resolution {
  reason: string;
  rule: string;
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
  provider: string;
  revision_skew: boolean;
  source_revision: string;
  section_path: string[];
  trace_id: string;
}

export interface ExpandRelatedRequest {
  ref_ids: string[];
  top_k?: number;
  kinds?: Array<Corpus | CorpusWord | number>;
  mode?: string;
  sources?: string[];
}

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
}

export interface FlowStep {
  index: number;
  title: string;
  description: string;
  ref_ids: string[];
  locations: string[];
  origin: string;
}

export interface SummarizeFlowRequest {
  ref_ids?: string[];
  topic?: string;
  style?: FlowStyle | FlowStyleWord | number;
  max_steps?: number;
}

export interface SummarizeFlowResponse {
  flow: FlowStep[];
  assumptions: string[];
  confidence: Confidence;
  trace_id: string;
  unresolved_ref_ids: string[];
}

export interface GuideImplementationRequest {
  topic: string;
  framework?: string;
  language?: string;
  max_docs?: number;
  max_samples?: number;
  style?: FlowStyle | FlowStyleWord | number;
  sources?: string[];
}

export interface GuideImplementationResponse {
  query: string;
  flow: FlowStep[];
  docs: SearchResult[];
  sample_code: SearchResult[];
  assumptions: string[];
  confidence: Confidence;
  trace_id: string;
}

export interface SourceStatus {
  name: string;
  kind: string;
  state: SourceState;
  document_count: number;
  block_count: number;
  generation: number;
  indexed_at: Timestamp | null;
  last_error: string;
  source_class: string;
  root: string;
  bytes: number;
  corpus: Corpus;
  staleness_seconds: number;
  /** Files the build under way has to read for this source (0: no build under way). */
  build_files_total: number;
  /** Files of this source the build under way has read so far. */
  build_files_done: number;
}

export interface ListSourcesResponse {
  sources: SourceStatus[];
  server_version: string;
  generation: number;
}

export interface ClientOptions {
  /** Sent as `authorization: Bearer <token>` on every call. */
  token?: string;
  /** Per-call deadline in milliseconds (default 30000). */
  deadlineMs?: number;
  /** Channel credentials (default: insecure plaintext). */
  credentials?: ChannelCredentials;
  /** Directory holding scriptorium/v1/retrieval.proto (default: the repository's proto/). */
  protoDir?: string;
  /** grpc-js channel options. */
  channelOptions?: Record<string, unknown>;
}

export interface CallOptions {
  deadlineMs?: number;
  metadata?: Metadata | Record<string, string>;
}

export class ScriptoriumError extends Error {
  readonly method: string;
  /** gRPC status number (5 = NOT_FOUND, 12 = UNIMPLEMENTED, ...). */
  readonly code: number;
  readonly codeName: string;
  readonly details: string;
  readonly metadata: Metadata | null;
  /** The Resolution attached as a rich error detail, when the server sent one. */
  readonly resolution: Resolution | null;
}

export class ScriptoriumClient {
  constructor(target?: string, options?: ClientOptions);
  readonly target: string;
  readonly deadlineMs: number;
  search(request: SearchRequest, options?: CallOptions): Promise<SearchResponse>;
  getContent(request: GetContentRequest, options?: CallOptions): Promise<GetContentResponse>;
  expandRelated(request: ExpandRelatedRequest, options?: CallOptions): Promise<ExpandRelatedResponse>;
  summarizeFlow(request: SummarizeFlowRequest, options?: CallOptions): Promise<SummarizeFlowResponse>;
  guideImplementation(
    request: GuideImplementationRequest,
    options?: CallOptions,
  ): Promise<GuideImplementationResponse>;
  listSources(options?: CallOptions): Promise<ListSourcesResponse>;
  health(service?: string, options?: CallOptions): Promise<ServingStatus>;
  close(): void;
}

export function loadServices(protoDir?: string): {
  RetrievalService: unknown;
  Health: unknown;
  resolutionFields: unknown[];
};
export function toTimestamp(value: Date | number | Timestamp): Timestamp;
export function toDate(timestamp: Timestamp | null | undefined): Date | null;
export const status: typeof GrpcStatus;
export const DEFAULT_TARGET: string;
export const DEFAULT_PROTO_DIR: string;
