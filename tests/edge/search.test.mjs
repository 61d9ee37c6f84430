// The edge worker's reverse dictionary (POST /search, a MODEL=wordnet bundle) under workerd on
// 127.0.0.1: the same words and the same score bits as mlrt in Node, every documented 4xx, and the
// endpoints that a bundle without the dictionary (or without a digit model) answers with 503.
// Run: node --test tests/edge/search.test.mjs   (needs wasm/, build/models/ and build/wordnet/lemmas.q8.index)

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { createRuntime } from '../../wasm/mlrt.mjs';
import { readIndex } from '../../web/lemma-index.mjs';
import { startEdge } from '../../edge/serve.mjs';
import { readEncoderFiles, readHeldout, readLemmas } from '../../tools/wordnet/common.mjs';

// workerd runs relaxed SIMD: Node runs that build too, to compare bits.
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
const repo = (p) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const INDEX = repo('build/wordnet/lemmas.q8.index');

const rt = await createRuntime();
const skip = typeof rt.loadEncoder !== 'function' ? 'this mlrt has no loadEncoder yet (issue 21): no reverse dictionary to serve'
  : !existsSync(INDEX) ? `${INDEX} is missing: run \`make wordnet-index\`` : false;

function request(base, path, { method = 'POST', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, base), { method, headers, agent: false });
    req.on('response', (res) => {
      const parts = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
const JSON_CT = { 'content-type': 'application/json' };
const searchFor = (base, query, k) => request(base, 'search', { headers: JSON_CT, body: JSON.stringify(k === undefined ? { query } : { query, k }) });

describe('POST /search (MODEL=wordnet)', { skip }, () => {
  let words, digits, encoder, index, queries;

  before(async () => {
    // the worker runs the encoder and the scan on the SIMD128 build (MLRT_BUILD=auto)
    const simd = await createRuntime({ relaxed: false });
    encoder = simd.loadEncoder(readEncoderFiles());
    index = readIndex(new Uint8Array(readFileSync(INDEX))).useRuntime(simd);
    const held = readHeldout(readLemmas());
    queries = ['a small boat pulled by a larger one', 'feeling or showing great happiness', 'Café au lait, naïve résumé!',
      ...held.filter((_, i) => i % 300 === 0).map((h) => h.definition)];
    [words, digits] = await Promise.all([startEdge({ backend: 'workerd', model: 'wordnet' }), startEdge({ backend: 'workerd' })]);
  });
  after(async () => Promise.all([words?.stop(), digits?.stop()]));

  test('the same words and score bits as mlrt in Node, for k 1, 10 and 100', async () => {
    for (const [i, q] of queries.entries()) {
      const k = [10, 1, 100][i % 3];
      const want = index.search(encoder.embed(q), k);
      const r = await searchFor(words.url, q, i % 3 === 0 && i ? undefined : k);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.results.length, k);
      r.json.results.forEach((g, j) => {
        assert.equal(g.word, want[j].word, `"${q}" rank ${j}`);
        assert.equal(g.score, want[j].score, `"${q}" rank ${j}: the score is the f32 value, exactly`);
      });
      assert.equal(r.json.model.source, 'embedded');
    }
  });

  test('16 concurrent first searches on a fresh isolate: one load, the same answers', async () => {
    const fresh = await startEdge({ backend: 'workerd', model: 'wordnet' });
    try {
      const rs = await Promise.all(Array.from({ length: 16 }, (_, i) => searchFor(fresh.url, queries[i % 4])));
      rs.forEach((r, i) => {
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.json.results.map((x) => x.word), index.search(encoder.embed(queries[i % 4]), 10).map((x) => x.word));
      });
      const info = await request(fresh.url, 'info', { method: 'GET' });
      assert.equal(info.status, 200, info.text);
      assert.equal(info.json.model, null);
      assert.equal(info.json.isolate.searches, 16);
      assert.equal(info.json.search.index.count, index.count);
      assert.equal(info.json.search.index.dtype, 'q8');
      assert.equal(info.json.search.index.scoring, 'mlrt');
      assert.equal(info.json.search.runtime.build, 'simd');
      assert.equal(info.json.search.encoder.dim, 128);
      assert.deepEqual(info.json.search.limits, { maxBodyBytes: 16384, maxQueryChars: 1000, maxK: 100 });
    } finally {
      await fresh.stop();
    }
  });

  const q = (v) => ({ headers: JSON_CT, body: typeof v === 'string' ? v : JSON.stringify(v) });
  // [name, options, status, code, message pattern]
  const MATRIX = [
    ['GET /search', { method: 'GET' }, 405, 'METHOD_NOT_ALLOWED', /GET is not allowed on \/search; use POST/],
    ['no content type', { body: '{"query":"x"}' }, 415, 'UNSUPPORTED_MEDIA_TYPE', /Content-Type is missing; send application\/json/],
    ['raw f32', { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(16) }, 415, 'UNSUPPORTED_MEDIA_TYPE', /application\/octet-stream/],
    ['body over 16 KiB', q({ query: 'x'.repeat(20000) }), 413, 'BODY_TOO_LARGE', /exceeds the limit of 16384 bytes/],
    ['not JSON', q('{"query": '), 400, 'BAD_JSON', /not valid JSON/],
    ['invalid UTF-8', { headers: JSON_CT, body: Buffer.from([0x7b, 0xff, 0x7d]) }, 400, 'BAD_JSON', /UTF-8/],
    ['an array', q(['a boat']), 422, 'NOT_AN_OBJECT', /body is an array, expected a JSON object/],
    ['a string', q('"a boat"'), 422, 'NOT_AN_OBJECT', /body is a string/],
    ['null', q('null'), 422, 'NOT_AN_OBJECT', /body is null/],
    ['no query', q({ k: 3 }), 422, 'BAD_QUERY', /"query" is missing, expected a string/],
    ['query a number', q({ query: 5 }), 422, 'BAD_QUERY', /"query" is a number/],
    ['query an array', q({ query: ['a'] }), 422, 'BAD_QUERY', /"query" is an array/],
    ['blank query', q({ query: ' \n\t ' }), 422, 'EMPTY_QUERY', /"query" is empty/],
    ['long query', q({ query: 'boat '.repeat(201) }), 422, 'QUERY_TOO_LONG', /"query" has 1004 characters, over the limit of 1000/],
    ['k 0', q({ query: 'boat', k: 0 }), 422, 'BAD_K', /"k" is 0, expected an integer from 1 to 100/],
    ['k 101', q({ query: 'boat', k: 101 }), 422, 'BAD_K', /"k" is 101/],
    ['k 2.5', q({ query: 'boat', k: 2.5 }), 422, 'BAD_K', /"k" is 2\.5/],
    ['k a string', q({ query: 'boat', k: '10' }), 422, 'BAD_K', /"k" is "10"/],
    ['k null', q({ query: 'boat', k: null }), 422, 'BAD_K', /"k" is null/],
    ['unknown field', q({ query: 'boat', top: 3 }), 422, 'UNKNOWN_FIELD', /unknown field "top"/],
    ['a lone surrogate', q('{"query": "a \\ud800 boat"}'), 422, 'BAD_QUERY', /"query" has a lone surrogate at character 2/],
    ['deep nesting', q(`{"query":${'['.repeat(8000)}${']'.repeat(8000)}}`), 422, 'BAD_QUERY', /"query" is an array/],
  ];

  test('malformed requests: documented 4xx, JSON { error: { code, message } }; the worker survives', async () => {
    for (const [name, options, status, code, message] of MATRIX) {
      const r = await request(words.url, 'search', options);
      assert.equal(r.status, status, `${name}: ${r.text}`);
      assert.match(r.headers['content-type'], /^application\/json/);
      assert.equal(r.json?.error?.code, code, `${name}: ${r.text}`);
      assert.match(r.json.error.message, message, name);
      if (status === 405) assert.equal(r.headers.allow, 'POST');
    }
    // odd but valid queries are answered: one character, only punctuation, unknown characters, a surrogate pair, the longest
    for (const query of ['x', '?!', '☃☃☃', '😀 boat', 'ß'.repeat(1000)]) {
      const r = await searchFor(words.url, query);
      assert.equal(r.status, 200, `${JSON.stringify(query)}: ${r.text}`);
      assert.equal(r.json.results.length, 10);
    }
    assert.equal((await searchFor(words.url, 'a boat')).status, 200);
  });

  test('each bundle says what it lacks: 503 with a reason', async () => {
    const p = await request(words.url, 'predict', { headers: JSON_CT, body: '[1]' });
    assert.equal(p.status, 503, p.text);
    assert.equal(p.json.error.code, 'MODEL_UNAVAILABLE');
    const s = await searchFor(digits.url, 'a boat');
    assert.equal(s.status, 503, s.text);
    assert.equal(s.json.error.code, 'NO_SEARCH_INDEX');
    assert.match(s.json.error.message, /MODEL=wordnet/);
    assert.equal((await request(digits.url, 'info', { method: 'GET' })).json.search, undefined);
  });
});
