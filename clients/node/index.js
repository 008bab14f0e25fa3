'use strict';

/**
 * Promise-based Node.js client for the Scriptorium retrieval daemon.
 *
 * The contract is read at run time from the repository's proto/ tree (no generated code to go
 * stale); the standard gRPC health protocol comes from this package's own proto/ copy, because
 * grpc-js does not ship it. Messages keep the proto's snake_case field names, enums are their
 * string names (`REF_KIND_DOC`), and 64-bit integers are plain numbers.
 */

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const DEFAULT_TARGET = '127.0.0.1:50051';
const DEFAULT_DEADLINE_MS = 30_000;
const DEFAULT_PROTO_DIR = path.resolve(__dirname, '..', '..', 'proto');
const HEALTH_PROTO_DIR = path.join(__dirname, 'proto');
const RETRIEVAL_PROTO = 'scriptorium/v1/retrieval.proto';
const HEALTH_PROTO = 'grpc/health/v1/health.proto';
const PACKAGE = 'scriptorium.v1';
const RETRIEVAL_SERVICE = 'scriptorium.v1.RetrievalService';
const RESOLUTION_TYPE = 'scriptorium.v1.Resolution';
const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

const LOADER_OPTIONS = Object.freeze({
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  arrays: true,
  oneofs: true,
});

const STATUS_NAMES = Object.freeze(
  Object.fromEntries(
    Object.entries(grpc.status)
      .filter(([, value]) => typeof value === 'number')
      .map(([name, value]) => [value, name]),
  ),
);

const loadedByDir = new Map();

/**
 * Load the retrieval and health service definitions, once per proto directory.
 * @param {string} [protoDir] directory holding scriptorium/v1/retrieval.proto
 */
function loadServices(protoDir = process.env.SCRIPTORIUM_PROTO_DIR || DEFAULT_PROTO_DIR) {
  const root = path.resolve(protoDir);
  let loaded = loadedByDir.get(root);
  if (!loaded) {
    const definition = protoLoader.loadSync([RETRIEVAL_PROTO, HEALTH_PROTO], {
      ...LOADER_OPTIONS,
      includeDirs: [root, HEALTH_PROTO_DIR],
    });
    const pkg = grpc.loadPackageDefinition(definition);
    loaded = {
      RetrievalService: pkg.scriptorium.v1.RetrievalService,
      Health: pkg.grpc.health.v1.Health,
      resolutionFields: definition[RESOLUTION_TYPE].type.field,
      requestEnums: requestEnums(definition),
    };
    loadedByDir.set(root, loaded);
  }
  return loaded;
}

/**
 * Per RetrievalService method, the enum fields of its request and the words each accepts.
 * protobufjs turns a word it does not know into the zero value (`*_UNSPECIFIED`), so a typo
 * would silently become the default; the client refuses it instead, as the Python client does.
 */
function requestEnums(definition) {
  const byMethod = new Map();
  for (const [method, spec] of Object.entries(definition[RETRIEVAL_SERVICE])) {
    const fields = [];
    for (const field of spec.requestType.type.field) {
      if (field.type !== 'TYPE_ENUM') continue;
      const typeName = field.typeName.replace(/^\./, '');
      const qualified = typeName.includes('.') ? typeName : `${PACKAGE}.${typeName}`;
      fields.push(enumField(field, definition[qualified].type));
    }
    if (fields.length) byMethod.set(method, fields);
  }
  return byMethod;
}

/** One enum field: its value names by accepted word (`full`, `content_mode_full`, ...). */
function enumField(field, enumType) {
  const names = enumType.value.map((value) => value.name);
  const zero = enumType.value.find((value) => value.number === 0)?.name || '';
  const prefix = zero.endsWith('UNSPECIFIED') ? zero.slice(0, -'UNSPECIFIED'.length) : '';
  const words = new Map();
  const shown = [];
  for (const name of names) {
    const short = name.startsWith(prefix) ? name.slice(prefix.length).toLowerCase() : name;
    words.set(name.toLowerCase(), name);
    words.set(short.toLowerCase(), name);
    if (name !== zero) shown.push(short);
  }
  const label = enumType.name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  const accepted = shown.length > 1 ? `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}` : shown[0];
  return {
    name: field.name,
    repeated: field.label === 'LABEL_REPEATED',
    words,
    describe: (value) => `unknown ${label} ${JSON.stringify(value)} in ${field.name}; use ${accepted}`,
  };
}

/** The enum value name a request gives (a word or a name in any case, or a number). */
function enumValue(field, value) {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value !== 'string') throw new TypeError(field.describe(value));
  const name = field.words.get(value.trim().toLowerCase().replace(/-/g, '_'));
  if (name === undefined) throw new RangeError(field.describe(value));
  return name;
}

/** `request` with its enum words checked and spelled as value names; throws on unknown ones. */
function checkEnums(fields, request) {
  if (!fields || !request || typeof request !== 'object') return request;
  const message = { ...request };
  for (const field of fields) {
    const value = message[field.name];
    if (value === undefined || value === null || value === '') continue;
    if (field.repeated) {
      message[field.name] = (Array.isArray(value) ? value : [value]).map((v) => enumValue(field, v));
    } else {
      message[field.name] = enumValue(field, value);
    }
  }
  return message;
}

/** Convert a Date (or epoch milliseconds) to a google.protobuf.Timestamp object. */
function toTimestamp(value) {
  if (value === undefined || value === null) return value;
  if (!(value instanceof Date) && typeof value !== 'number') return value;
  const ms = value instanceof Date ? value.getTime() : value;
  if (!Number.isFinite(ms)) throw new TypeError('invalid date for a Timestamp field');
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

/** Convert a google.protobuf.Timestamp object to a Date; null when unset. */
function toDate(timestamp) {
  if (!timestamp) return null;
  return new Date(Number(timestamp.seconds) * 1000 + Math.floor((timestamp.nanos || 0) / 1e6));
}

/** Minimal protobuf wire reader, enough to unpack google.rpc.Status details. */
function* wireFields(buffer) {
  let pos = 0;
  const varint = () => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buffer.length) throw new RangeError('truncated varint');
      const byte = buffer[pos++];
      result |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return result;
      shift += 7n;
    }
  };
  while (pos < buffer.length) {
    const key = Number(varint());
    const number = key >>> 3;
    const wireType = key & 7;
    if (wireType === 0) {
      yield { number, wireType, value: varint() };
    } else if (wireType === 2) {
      const length = Number(varint());
      if (pos + length > buffer.length) throw new RangeError('truncated field');
      yield { number, wireType, value: buffer.subarray(pos, pos + length) };
      pos += length;
    } else if (wireType === 1 || wireType === 5) {
      pos += wireType === 1 ? 8 : 4;
    } else {
      throw new RangeError(`unsupported wire type ${wireType}`);
    }
  }
}

/** Decode a message whose fields are scalars, using the field list from the loaded proto. */
function decodeScalars(buffer, fields) {
  const byNumber = new Map(fields.map((field) => [field.number, field]));
  const message = {};
  for (const field of fields) {
    message[field.name] = field.label === 'LABEL_REPEATED' ? [] : defaultFor(field);
  }
  for (const { number, wireType, value } of wireFields(buffer)) {
    const field = byNumber.get(number);
    if (!field) continue;
    let decoded;
    if (wireType === 2 && field.type === 'TYPE_STRING') decoded = value.toString('utf8');
    else if (wireType === 2 && field.type === 'TYPE_BYTES') decoded = Buffer.from(value);
    else if (wireType === 0 && field.type === 'TYPE_BOOL') decoded = value !== 0n;
    else if (wireType === 0) decoded = Number(BigInt.asIntN(64, value));
    else continue;
    if (field.label === 'LABEL_REPEATED') message[field.name].push(decoded);
    else message[field.name] = decoded;
  }
  return message;
}

function defaultFor(field) {
  if (field.type === 'TYPE_STRING') return '';
  if (field.type === 'TYPE_BOOL') return false;
  if (field.type === 'TYPE_BYTES') return Buffer.alloc(0);
  return 0;
}

/**
 * The scriptorium.v1.Resolution packed into a failed call's rich status details, or null.
 * GetContent failures carry one (not_found, unknown_site, ambiguous with candidates, ...).
 */
function decodeResolution(metadata, resolutionFields) {
  const values = metadata && typeof metadata.get === 'function' ? metadata.get(STATUS_DETAILS_KEY) : [];
  for (const raw of values) {
    try {
      const buffer = Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw), 'base64');
      for (const detail of wireFields(buffer)) {
        if (detail.number !== 3 || detail.wireType !== 2) continue; // Status.details (Any)
        let typeUrl = '';
        let payload = null;
        for (const part of wireFields(detail.value)) {
          if (part.number === 1 && part.wireType === 2) typeUrl = part.value.toString('utf8');
          if (part.number === 2 && part.wireType === 2) payload = part.value;
        }
        if (payload && typeUrl.endsWith(`/${RESOLUTION_TYPE}`)) {
          return decodeScalars(payload, resolutionFields);
        }
      }
    } catch {
      // Malformed details never hide the status itself.
    }
  }
  return null;
}

/** A failed call: `code` is the gRPC status number, `details` the server's message. */
class ScriptoriumError extends Error {
  constructor(method, cause, resolutionFields) {
    const code = typeof cause.code === 'number' ? cause.code : grpc.status.UNKNOWN;
    const codeName = STATUS_NAMES[code] || 'UNKNOWN';
    const details = cause.details || cause.message || '';
    super(`${method} failed: ${codeName}: ${details}`, { cause });
    this.name = 'ScriptoriumError';
    this.method = method;
    this.code = code;
    this.codeName = codeName;
    this.details = details;
    this.metadata = cause.metadata || null;
    this.resolution = decodeResolution(this.metadata, resolutionFields);
  }
}

/** Promise-based client for `scriptorium.v1.RetrievalService` and the gRPC health service. */
class ScriptoriumClient {
  /**
   * @param {string} [target] host:port; defaults to $SCRIPTORIUM_TARGET or 127.0.0.1:50051
   * @param {object} [options]
   * @param {string} [options.token] sent as `authorization: Bearer <token>` on every call
   * @param {number} [options.deadlineMs] per-call deadline (default 30 s)
   * @param {grpc.ChannelCredentials} [options.credentials] default: insecure (plaintext)
   * @param {string} [options.protoDir] directory holding scriptorium/v1/retrieval.proto
   * @param {object} [options.channelOptions] grpc-js channel options
   */
  constructor(target = process.env.SCRIPTORIUM_TARGET || DEFAULT_TARGET, options = {}) {
    const {
      token,
      deadlineMs = DEFAULT_DEADLINE_MS,
      credentials = grpc.credentials.createInsecure(),
      protoDir,
      channelOptions = {},
    } = options;
    if (!(Number.isFinite(deadlineMs) && deadlineMs > 0)) {
      throw new TypeError('deadlineMs must be a positive number');
    }
    const services = loadServices(protoDir);
    this.target = target;
    this.deadlineMs = deadlineMs;
    this._token = token;
    this._resolutionFields = services.resolutionFields;
    this._requestEnums = services.requestEnums;
    this._retrieval = new services.RetrievalService(target, credentials, channelOptions);
    this._health = new services.Health(target, credentials, {
      ...channelOptions,
      channelOverride: this._retrieval.getChannel(),
    });
  }

  /** Ranked references with snippets, previews, scores and lineage. */
  search(request = {}, callOptions = {}) {
    const message = { ...request };
    if (message.as_of !== undefined) message.as_of = toTimestamp(message.as_of);
    return this._call(this._retrieval, 'Search', message, callOptions);
  }

  /**
   * The block, file or page behind a `ref_id` or a `location`. With `max_chars`, a long answer
   * comes in parts: pass each part's `next_cursor` back as `cursor` (empty on the last part).
   */
  getContent(request = {}, callOptions = {}) {
    return this._call(this._retrieval, 'GetContent', request, callOptions);
  }

  /** The headings (docs) or definitions (code) of a document or file: GetContent's OUTLINE mode. */
  outline(request = {}, callOptions = {}) {
    const message = { ...request, mode: 'CONTENT_MODE_OUTLINE' };
    return this._call(this._retrieval, 'GetContent', message, callOptions);
  }

  /** Supporting docs and code for seed refs, each with scored reasons. */
  expandRelated(request = {}, callOptions = {}) {
    return this._call(this._retrieval, 'ExpandRelated', request, callOptions);
  }

  /** A deterministic list of steps from refs (or a topic). */
  summarizeFlow(request = {}, callOptions = {}) {
    return this._call(this._retrieval, 'SummarizeFlow', request, callOptions);
  }

  /** Search, expansion and flow composed into one grounded guide. */
  guideImplementation(request = {}, callOptions = {}) {
    return this._call(this._retrieval, 'GuideImplementation', request, callOptions);
  }

  /** Every configured source with its state, counts and freshness. */
  listSources(callOptions = {}) {
    return this._call(this._retrieval, 'ListSources', {}, callOptions);
  }

  /**
   * The serving status of `service` ('' = the whole server): 'SERVING', 'NOT_SERVING', ...
   * An unknown service rejects with code 5 (NOT_FOUND).
   */
  async health(service = '', callOptions = {}) {
    const response = await this._call(this._health, 'Check', { service }, callOptions);
    return response.status;
  }

  /** Close the channel; pending calls fail with CANCELLED. */
  close() {
    this._retrieval.close();
  }

  _metadata(extra) {
    const metadata = extra instanceof grpc.Metadata ? extra.clone() : new grpc.Metadata();
    if (extra && !(extra instanceof grpc.Metadata)) {
      for (const [key, value] of Object.entries(extra)) metadata.set(key, value);
    }
    if (this._token && !metadata.get('authorization').length) {
      metadata.set('authorization', `Bearer ${this._token}`);
    }
    return metadata;
  }

  _call(client, method, request, callOptions = {}) {
    const { deadlineMs = this.deadlineMs, metadata } = callOptions;
    const options = { deadline: new Date(Date.now() + deadlineMs) };
    return new Promise((resolve, reject) => {
      // An unknown enum word rejects here, before anything is sent.
      const message = checkEnums(this._requestEnums.get(method), request);
      client[method](message, this._metadata(metadata), options, (error, response) => {
        if (error) reject(new ScriptoriumError(method, error, this._resolutionFields));
        else resolve(response);
      });
    });
  }
}

module.exports = {
  ScriptoriumClient,
  ScriptoriumError,
  loadServices,
  toTimestamp,
  toDate,
  status: grpc.status,
  DEFAULT_TARGET,
  DEFAULT_PROTO_DIR,
};
