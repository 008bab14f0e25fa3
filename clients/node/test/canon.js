'use strict';

// node test/canon.js TARGET QUERY MISSING_LOCATION
// One JSON object of a code search (top 5), a full fetch of its first result by ref_id and a
// fetch of a missing location, as this client decodes them: what tests/e2e/test_clients_agree.py
// compares with the other clients.

const { ScriptoriumClient, ScriptoriumError } = require('..');

async function main([target, query, missing]) {
  const client = new ScriptoriumClient(target, { deadlineMs: 30_000 });
  try {
    const search = await client.search({ query, top_k: 5, kinds: ['code'] });
    if (!search.results.length) throw new Error(`no results for ${query}`);
    const content = await client.getContent({ ref_id: search.results[0].ref_id, mode: 'full' });
    let failed = null;
    try {
      await client.getContent({ location: missing, mode: 'full' });
    } catch (error) {
      if (!(error instanceof ScriptoriumError)) throw error;
      failed = error;
    }
    if (!failed) throw new Error(`fetching ${missing} did not fail`);
    const missingOut = { code: failed.code, resolution: failed.resolution };
    process.stdout.write(`${JSON.stringify({ search, content, missing: missingOut })}\n`);
  } finally {
    client.close();
  }
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
