'use strict';

// Two tiers: the client against an in-process grpc-js server (for client-side behaviour a real
// daemon need not exercise on demand: bearer tokens, rich error details, deadlines), and the
// client against a real Scriptorium daemon started from this repository's virtualenv.

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');

const {
  ScriptoriumClient,
  ScriptoriumError,
  loadServices,
  toDate,
  toTimestamp,
} = require('..');

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const PYTHON = process.env.SCRIPTORIUM_PYTHON || path.join(REPO_ROOT, '.venv', 'bin', 'python');
const HEALTH_WAIT_MS = 60_000;
const INDEX_WAIT_MS = 30_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected the call to be rejected');
}

// Protobuf wire encoding for the rich-status fixture (google.rpc.Status with one Any).
function varint(value) {
  const out = [];
  let n = value;
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}
const bytesField = (number, bytes) =>
  Buffer.concat([varint((number << 3) | 2), varint(bytes.length), bytes]);
const stringField = (number, text) => bytesField(number, Buffer.from(text, 'utf8'));

describe('timestamps', () => {
  it('round-trips a Date through a Timestamp', () => {
    const when = new Date('2024-05-06T07:08:09.123Z');
    const ts = toTimestamp(when);
    assert.equal(ts.seconds, Math.floor(when.getTime() / 1000));
    assert.equal(ts.nanos, 123_000_000);
    assert.equal(toDate(ts).toISOString(), when.toISOString());
    assert.equal(toDate(null), null);
  });
});

describe('client behaviour against an in-process server', () => {
  let server;
  let client;
  const seen = {};

  before(async () => {
    const { RetrievalService, Health } = loadServices();
    server = new grpc.Server();
    server.addService(RetrievalService.service, {
      Search(call, callback) {
        seen.authorization = call.metadata.get('authorization');
        seen.asOf = call.request.as_of;
        seen.kinds = call.request.kinds;
        callback(null, { trace_id: 'fake', results: [{ location: 'a.md', kind: 'REF_KIND_DOC' }] });
      },
      GetContent(call, callback) {
        seen.contentCalls = (seen.contentCalls || 0) + 1;
        seen.mode = call.request.mode;
        const resolution = Buffer.concat([
          stringField(1, 'ambiguous'),
          stringField(2, 'none'),
          stringField(3, 'docs/a.md'),
          stringField(3, 'docs/b.md'),
          stringField(5, call.request.location),
        ]);
        const any = Buffer.concat([
          stringField(1, 'type.googleapis.com/scriptorium.v1.Resolution'),
          bytesField(2, resolution),
        ]);
        const details = Buffer.concat([
          varint((1 << 3) | 0),
          varint(grpc.status.FAILED_PRECONDITION),
          stringField(2, 'ambiguous location'),
          bytesField(3, any),
        ]);
        const metadata = new grpc.Metadata();
        metadata.set('grpc-status-details-bin', details);
        callback({ code: grpc.status.FAILED_PRECONDITION, details: 'ambiguous location', metadata });
      },
      ExpandRelated(call, callback) {
        callback({ code: grpc.status.UNIMPLEMENTED, details: 'not yet' });
      },
      SummarizeFlow(call, callback) {
        seen.style = call.request.style;
        callback(null, {});
      },
      GuideImplementation(call, callback) {
        callback(null, {});
      },
      ListSources(call, callback) {
        setTimeout(() => callback(null, {}), 2_000);
      },
    });
    server.addService(Health.service, {
      Check(call, callback) {
        if (call.request.service === '') callback(null, { status: 'SERVING' });
        else callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
      },
      List(call, callback) {
        callback(null, { statuses: {} });
      },
      Watch(call) {
        call.end();
      },
    });
    const port = await new Promise((resolve, reject) => {
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      );
    });
    client = new ScriptoriumClient(`127.0.0.1:${port}`, { token: 's3cret', deadlineMs: 5_000 });
  });

  after(() => {
    client?.close();
    server?.forceShutdown();
  });

  it('sends the bearer token and converts as_of dates', async () => {
    const response = await client.search({ query: 'x', as_of: new Date(86_400_000) });
    assert.equal(response.trace_id, 'fake');
    assert.equal(response.results[0].kind, 'REF_KIND_DOC');
    assert.deepEqual(seen.authorization, ['Bearer s3cret']);
    assert.equal(Number(seen.asOf.seconds), 86_400);
  });

  it('rejects with code, details and the decoded Resolution', async () => {
    const error = await rejection(client.getContent({ location: 'docs/x.md' }));
    assert.ok(error instanceof ScriptoriumError);
    assert.ok(error instanceof Error);
    assert.equal(error.code, grpc.status.FAILED_PRECONDITION);
    assert.equal(error.codeName, 'FAILED_PRECONDITION');
    assert.equal(error.details, 'ambiguous location');
    assert.deepEqual(error.resolution, {
      reason: 'ambiguous',
      rule: 'none',
      candidates: ['docs/a.md', 'docs/b.md'],
      detail: '',
      requested_location: 'docs/x.md',
      site: '',
      resolved_location: '',
    });
  });

  it('leaves resolution null when no rich details are sent', async () => {
    const error = await rejection(client.expandRelated({ ref_ids: ['r'] }));
    assert.equal(error.code, grpc.status.UNIMPLEMENTED);
    assert.equal(error.resolution, null);
  });

  it('fills defaults for empty responses', async () => {
    const flow = await client.summarizeFlow({ topic: 't' });
    assert.deepEqual(flow.flow, []);
    assert.equal(flow.confidence, 'CONFIDENCE_UNSPECIFIED');
  });

  it('applies per-call deadlines', async () => {
    const error = await rejection(client.listSources({ deadlineMs: 200 }));
    assert.equal(error.code, grpc.status.DEADLINE_EXCEEDED);
  });

  it('refuses an enum word it does not know, naming the accepted ones, and sends nothing', async () => {
    const before = seen.contentCalls || 0;
    const mode = await rejection(client.getContent({ location: 'docs/x.md', mode: 'fulll' }));
    assert.ok(mode instanceof RangeError, `${mode.name}: ${mode.message}`);
    assert.equal(mode.message, 'unknown content mode "fulll" in mode; use snippet, full, multi_range, definition or outline');
    assert.equal(seen.contentCalls || 0, before, 'the request reached the server');

    const kinds = await rejection(client.search({ query: 'x', kinds: ['CORPUS_DOCS', 'prose'] }));
    assert.ok(kinds instanceof RangeError);
    assert.match(kinds.message, /unknown corpus "prose" in kinds; use docs or code/);

    const style = await rejection(client.summarizeFlow({ topic: 't', style: 'verbose' }));
    assert.ok(style instanceof RangeError);
    assert.match(style.message, /use compact or detailed/);

    const wrongType = await rejection(client.getContent({ location: 'docs/x.md', mode: { full: 1 } }));
    assert.ok(wrongType instanceof TypeError);
  });

  it('sends known enum words, value names and numbers as the value they name', async () => {
    await client.search({ query: 'x', kinds: ['docs', 'CORPUS_CODE', 1] });
    assert.deepEqual(seen.kinds, ['CORPUS_DOCS', 'CORPUS_CODE', 'CORPUS_DOCS']);
    for (const [given, sent] of [
      ['multi-range', 'CONTENT_MODE_MULTI_RANGE'],
      ['Full', 'CONTENT_MODE_FULL'],
      ['CONTENT_MODE_SNIPPET', 'CONTENT_MODE_SNIPPET'],
      [2, 'CONTENT_MODE_FULL'],
      [undefined, 'CONTENT_MODE_UNSPECIFIED'],
    ]) {
      const error = await rejection(client.getContent({ location: 'docs/x.md', mode: given }));
      assert.ok(error instanceof ScriptoriumError, error.message);
      assert.equal(seen.mode, sent, String(given));
    }
    await client.summarizeFlow({ topic: 't', style: 'detailed' });
    assert.equal(seen.style, 'FLOW_STYLE_DETAILED');
  });

  it('reports health and rejects unknown services with NOT_FOUND', async () => {
    assert.equal(await client.health(), 'SERVING');
    const error = await rejection(client.health('no.such.Service'));
    assert.equal(error.code, grpc.status.NOT_FOUND);
  });
});

describe('client against a real daemon', { timeout: 180_000 }, () => {
  let workDir;
  let daemon;
  let exited = null;
  let output = '';
  let client;
  let hit;

  const daemonLog = () => output.split('\n').slice(-40).join('\n');

  before(async () => {
    assert.ok(fs.existsSync(PYTHON), `no Python at ${PYTHON}: run \`make venv\` first`);
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'scriptorium-node-'));
    const corpus = path.join(workDir, 'corpus');
    const stateDir = path.join(workDir, 'state');
    fs.mkdirSync(path.join(corpus, 'guide'), { recursive: true });
    fs.mkdirSync(stateDir);
    fs.writeFileSync(
      path.join(corpus, 'guide', 'lantern-setup.md'),
      [
        '# Lantern setup',
        '',
        'Lanterns light the reading room after dusk.',
        '',
        '## Trimming the wick',
        '',
        'Trim the quillowick to a quarter inch before lighting, then replace the glass chimney.',
        'A trimmed quillowick burns evenly and does not smoke.',
        '',
        '## Refilling oil',
        '',
        'Refill the reservoir with clean lamp oil once a week.',
        '',
      ].join('\n'),
    );
    fs.writeFileSync(
      path.join(corpus, 'shelving.md'),
      [
        '# Shelving',
        '',
        'Manuscripts are shelved by accession number, oldest first.',
        '',
        '## Oversized volumes',
        '',
        'Folios taller than the shelf lie flat on the bottom row.',
        '',
      ].join('\n'),
    );

    fs.mkdirSync(path.join(corpus, 'src'));
    fs.writeFileSync(
      path.join(corpus, 'src', 'lantern.ts'),
      [
        'export class Lantern {',
        '  private lit = false;',
        '',
        '  light(): void {',
        '    this.lit = true;',
        '  }',
        '',
        '  douse(): void {',
        '    this.lit = false;',
        '  }',
        '}',
        '',
      ].join('\n'),
    );

    const port = await freePort();
    daemon = spawn(
      PYTHON,
      ['-m', 'scriptorium', 'serve', corpus, '--listen', `127.0.0.1:${port}`, '--state-dir', stateDir],
      { cwd: workDir, env: { ...process.env, PYTHONUNBUFFERED: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    daemon.stdout.on('data', (chunk) => (output += chunk));
    daemon.stderr.on('data', (chunk) => (output += chunk));
    daemon.on('exit', (code, signal) => (exited = { code, signal }));

    client = new ScriptoriumClient(`127.0.0.1:${port}`, { deadlineMs: 10_000 });
    const deadline = Date.now() + HEALTH_WAIT_MS;
    let last = 'no answer';
    for (;;) {
      if (exited) {
        assert.fail(`daemon exited early (${JSON.stringify(exited)}):\n${daemonLog()}`);
      }
      try {
        last = await client.health('', { deadlineMs: 1_000 });
        if (last === 'SERVING') break;
      } catch (error) {
        last = error.message;
      }
      if (Date.now() > deadline) {
        assert.fail(`daemon not SERVING after ${HEALTH_WAIT_MS} ms (last: ${last}):\n${daemonLog()}`);
      }
      await sleep(250);
    }
  });

  after(async () => {
    client?.close();
    if (daemon && !exited) {
      daemon.kill('SIGTERM');
      const deadline = Date.now() + 10_000;
      while (!exited && Date.now() < deadline) await sleep(100);
      if (!exited) daemon.kill('SIGKILL');
    }
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  it('reports SERVING health', async () => {
    assert.equal(await client.health(), 'SERVING');
  });

  it('finds the Markdown file by a word only it contains', async () => {
    // Indexing may finish after health turns SERVING: retry until the file shows up.
    const deadline = Date.now() + INDEX_WAIT_MS;
    let response;
    for (;;) {
      response = await client.search({ query: 'quillowick', top_k: 5 });
      hit = response.results.find((result) => result.location.includes('lantern-setup'));
      if (hit || Date.now() > deadline) break;
      await sleep(500);
    }
    assert.ok(hit, `no result names lantern-setup: ${JSON.stringify(response.results)}`);
    assert.ok(hit.ref_id.length > 0);
    assert.equal(typeof response.trace_id, 'string');
  });

  it('answers a 20 kB query from its start and says so', async () => {
    const long = `quillowick ${'traceback frame line '.repeat(1_000)}`;
    const response = await client.search({ query: long, top_k: 5 });
    assert.equal(response.query_truncated, true);
    assert.ok(response.query_chars_used > 0 && response.query_chars_used <= 8192);
    const short = await client.search({ query: 'quillowick', top_k: 5 });
    assert.equal(short.query_truncated, false);
    assert.equal(short.query_chars_used, 'quillowick'.length);
  });

  it('fetches the content behind the returned location', async () => {
    assert.ok(hit, 'search found nothing to fetch');
    const content = await client.getContent({ location: hit.location });
    assert.ok(content.content.length > 0);
    assert.match(content.content, /quillowick/);
  });

  it('reads a page in parts that reassemble to the whole page', async () => {
    assert.ok(hit, 'search found nothing to fetch');
    const location = hit.location.split('#')[0];
    const whole = await client.getContent({ location, mode: 'CONTENT_MODE_FULL' });
    const parts = [await client.getContent({ location, mode: 'full', max_chars: 200 })];
    while (parts.at(-1).next_cursor) {
      const cursor = parts.at(-1).next_cursor;
      parts.push(await client.getContent({ location, mode: 'full', max_chars: 200, cursor }));
    }
    assert.ok(parts.length > 1, 'the page came in one part');
    assert.equal(parts.map((part) => part.content).join(''), whole.content);
    for (const part of parts) {
      assert.ok(part.content.length <= 200);
      assert.equal(part.total_chars, whole.content.length);
      assert.equal(part.part.count, parts.length);
    }
  });

  it('lists the headings of a page with their locations', async () => {
    assert.ok(hit, 'search found nothing to outline');
    const response = await client.outline({ location: hit.location });
    assert.equal(response.content, '');
    assert.deepEqual(
      response.outline.map((entry) => [entry.title, entry.level, entry.start_line]),
      [
        ['Lantern setup', 1, 1],
        ['Trimming the wick', 2, 5],
        ['Refilling oil', 2, 10],
      ],
    );
    assert.ok(response.outline.every((entry) => entry.location.startsWith('guide/lantern-setup#')));
  });

  it('fetches a code definition by name, with its class line in definition mode', async () => {
    // The code source may finish its first build after the docs: retry until the file is in.
    const deadline = Date.now() + INDEX_WAIT_MS;
    let method;
    for (;;) {
      try {
        method = await client.getContent({ location: 'src/lantern.ts#Lantern.light' });
        break;
      } catch (error) {
        if (error.code !== grpc.status.NOT_FOUND || Date.now() > deadline) throw error;
      }
      await sleep(500);
    }
    assert.equal(method.scope, 'definition');
    assert.equal(method.content, '  light(): void {\n    this.lit = true;\n  }');
    assert.deepEqual([method.start_line, method.end_line], [4, 6]);
    const withClass = await client.getContent({ location: 'src/lantern.ts#L5', mode: 'definition' });
    assert.equal(withClass.symbol, 'Lantern.light');
    assert.equal(withClass.content, `export class Lantern {\n${method.content}`);
    assert.deepEqual(
      withClass.context.map((r) => [r.start_line, r.end_line, r.reason]),
      [[1, 1, 'Lantern']],
    );
    const lines = await client.getContent({ location: 'src/lantern.ts#L8-L9' });
    assert.equal(lines.scope, 'lines');
    assert.equal(lines.content, '  douse(): void {\n    this.lit = false;');
  });

  it('rejects a reversed line range with INVALID_ARGUMENT', async () => {
    const error = await rejection(client.getContent({ location: 'src/lantern.ts#L9-L8' }));
    assert.equal(error.code, grpc.status.INVALID_ARGUMENT, `${error.codeName}: ${error.details}`);
    assert.match(error.details, /reversed/);
  });

  it('rejects a missing location with NOT_FOUND', async () => {
    const error = await rejection(client.getContent({ location: 'guide/no-such-page.md' }));
    assert.ok(error instanceof Error);
    assert.equal(error.code, grpc.status.NOT_FOUND, `${error.codeName}: ${error.details}`);
    assert.equal(typeof error.details, 'string');
    assert.equal(error.resolution?.reason, 'not_found', 'the Resolution rich detail is missing');
    assert.equal(error.resolution.requested_location, 'guide/no-such-page.md');
  });

  it('lists the configured sources', async () => {
    const response = await client.listSources();
    assert.ok(response.sources.length >= 1, JSON.stringify(response));
    for (const source of response.sources) assert.ok(source.name.length > 0);
  });

  // The composing RPCs may not be implemented yet: OK or UNIMPLEMENTED, nothing else.
  const okOrUnimplemented = async (promise, check) => {
    try {
      check(await promise);
    } catch (error) {
      if (!(error instanceof ScriptoriumError)) throw error;
      assert.equal(error.code, grpc.status.UNIMPLEMENTED, `${error.codeName}: ${error.details}`);
    }
  };

  it('expands related material', async () => {
    assert.ok(hit, 'search found no seed ref');
    await okOrUnimplemented(client.expandRelated({ ref_ids: [hit.ref_id] }), (response) => {
      assert.ok(Array.isArray(response.related));
    });
  });

  it('summarizes a flow', async () => {
    assert.ok(hit, 'search found no seed ref');
    await okOrUnimplemented(
      client.summarizeFlow({ ref_ids: [hit.ref_id], topic: 'lantern care' }),
      (response) => assert.ok(Array.isArray(response.flow)),
    );
  });

  it('guides an implementation', async () => {
    await okOrUnimplemented(client.guideImplementation({ topic: 'trim a lantern wick' }), (response) => {
      assert.ok(Array.isArray(response.docs));
      assert.ok(Array.isArray(response.assumptions));
    });
  });
});
