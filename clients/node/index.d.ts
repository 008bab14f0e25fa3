// Types for @scriptorium/client: the client's API. The message and enum types are generated
// from proto/scriptorium/v1/retrieval.proto into messages.d.ts (scripts/gen_node_types.py,
// `make gen`) and re-exported from here.

import type { ChannelCredentials, Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import type {
  ExpandRelatedRequest,
  ExpandRelatedResponse,
  GetContentRequest,
  GetContentResponse,
  GuideImplementationRequest,
  GuideImplementationResponse,
  ListSourcesResponse,
  Resolution,
  SearchRequest,
  SearchResponse,
  SummarizeFlowRequest,
  SummarizeFlowResponse,
  Timestamp,
} from './messages';

export * from './messages';

/** grpc.health.v1 serving status (the health protocol is not part of the contract). */
export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

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
  /** GetContent in OUTLINE mode: `outline` lists the headings or definitions. */
  outline(
    request: Omit<GetContentRequest, 'mode'>,
    options?: CallOptions,
  ): Promise<GetContentResponse>;
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
