// The edge worker's POST /embed (a MODEL=wordnet bundle: the sentence encoder of models/wordnet/) under
// workerd on 127.0.0.1: the same embedding bits as mlrt in Node (JSON and raw f32), every documented 4xx
// (caps on the body, texts per request, characters and tokens per text), a chunked upload past the cap,
// and 503 NO_ENCODER from a bundle without an encoder.
// Run: node --test tests/edge/embed.test.mjs   (needs wasm/, build/models/ and build/wordnet/lemmas.q8.index)

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRuntime } from '../../wasm/mlrt.mjs';
import { startEdge } from '../../edge/serve.mjs';
import { readEncoderFiles } from '../../tools/wordnet/common.mjs';

// The wordnet bundle runs the SIMD128 build under MLRT_BUILD=auto (one runtime for the encoder and the
// Q8 scan: edge/worker.mjs), so Node compares with that build, bit for bit.
const repo = (p) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const INDEX = repo('build/wordnet/lemmas.q8.index');
const rt = await createRuntime({ relaxed: false });
const skip = !existsSync(INDEX) ? `${INDEX} is missing: run \`make wordnet-index\`` : false;

function request(base, path, { method = 'POST', headers = {}, body, chunks } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, base), { method, headers, agent: false });
    req.on('response', (res) => {
      const parts = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => {
        const raw = Buffer.concat(parts), text = raw.toString('utf8');
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode, headers: res.headers, raw, text, json });
      });
    });
    req.on('error', reject);
    if (chunks) { for (const c of chunks) req.write(c); req.end(); } else req.end(body);
  });
}
const JSON_CT = { 'content-type': 'application/json' };
const embedOf = (base, texts, headers = {}) => request(base, 'embed', { headers: { ...JSON_CT, ...headers }, body: JSON.stringify({ texts }) });

describe('POST /embed (MODEL=wordnet)', { skip }, () => {
  let words, digits, encoder;
  const texts = ['a small boat pulled by a larger one', 'feeling or showing great happiness', 'Café au lait, naïve résumé!', '', '日本語', 'x'];

  before(async () => {
    encoder = rt.loadEncoder(readEncoderFiles());
    [words, digits] = await Promise.all([startEdge({ backend: 'workerd', model: 'wordnet' }), startEdge({ backend: 'workerd' })]);
  });
  after(async () => Promise.all([words?.stop(), digits?.stop()]));

  test('JSON: the embeddings of mlrt in Node, bit for bit (each number is the f32 value, exactly)', async () => {
    const want = encoder.embed(texts);
    const r = await embedOf(words.url, texts);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.dim, 128);
    assert.equal(r.json.embeddings.length, texts.length);
    assert.ok(r.json.embeddings.every((row) => row.length === 128));
    assert.deepEqual(new Uint8Array(Float32Array.from(r.json.embeddings.flat()).buffer), new Uint8Array(want.buffer));
    assert.equal(r.json.model.source, 'embedded');
    const one = await embedOf(words.url, [texts[0]]);
    assert.deepEqual(Float32Array.from(one.json.embeddings[0]), want.subarray(0, 128), 'a text alone: the bits it has in a batch');
  });

  test('raw f32 with Accept: application/octet-stream: n x dim little-endian, the shape in X-Mlrt-Shape', async () => {
    const want = encoder.embed(texts);
    const r = await embedOf(words.url, texts, { accept: 'application/octet-stream' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers['content-type'], 'application/octet-stream');
    assert.equal(r.headers['x-mlrt-shape'], `${texts.length},128`);
    assert.equal(r.headers['x-mlrt-dtype'], 'float32-le');
    assert.deepEqual(new Uint8Array(r.raw), new Uint8Array(want.buffer));
    const j = await embedOf(words.url, ['x'], { accept: 'application/json, application/octet-stream' });
    assert.match(j.headers['content-type'], /^application\/json/, 'JSON first in Accept: JSON');
    // q-values decide before the order; q=0 is "not acceptable"
    for (const [accept, type] of [['application/octet-stream;q=0, application/json', 'json'], ['application/json;q=0.5, application/octet-stream', 'raw'],
      ['application/octet-stream;q=0.4, application/json;q=0.9', 'json'], ['application/json; q=0.2, application/octet-stream; q=0.8', 'raw'],
      ['application/octet-stream;q=1.5', 'json'], ['Application/Octet-Stream', 'raw'], ['*/*', 'json']]) {
      const r2 = await embedOf(words.url, ['x'], { accept });
      assert.equal(r2.status, 200, accept);
      assert.match(r2.headers['content-type'], type === 'raw' ? /^application\/octet-stream/ : /^application\/json/, accept);
    }
  });

  const q = (v) => ({ headers: JSON_CT, body: typeof v === 'string' ? v : JSON.stringify(v) });
  const MATRIX = [
    ['GET /embed', { method: 'GET' }, 405, 'METHOD_NOT_ALLOWED', /GET is not allowed on \/embed; use POST/],
    ['no content type', { body: '{"texts":["x"]}' }, 415, 'UNSUPPORTED_MEDIA_TYPE', /Content-Type is missing; send application\/json/],
    ['raw f32 body', { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(16) }, 415, 'UNSUPPORTED_MEDIA_TYPE', /application\/octet-stream/],
    ['body over 64 KiB', q({ texts: Array(40).fill('x'.repeat(1800)) }), 413, 'BODY_TOO_LARGE', /exceeds the limit of 65536 bytes/],
    ['not JSON', q('{"texts": '), 400, 'BAD_JSON', /not valid JSON/],
    ['invalid UTF-8', { headers: JSON_CT, body: Buffer.from([0x7b, 0xff, 0x7d]) }, 400, 'BAD_JSON', /UTF-8/],
    ['an array', q(['a boat']), 422, 'NOT_AN_OBJECT', /body is an array, expected a JSON object \{"texts"/],
    ['null', q('null'), 422, 'NOT_AN_OBJECT', /body is null/],
    ['unknown field', q({ texts: ['a'], k: 3 }), 422, 'UNKNOWN_FIELD', /unknown field "k"; the one field is "texts"/],
    ['no texts', q({}), 422, 'BAD_TEXTS', /"texts" is missing, expected an array of strings/],
    ['texts a string', q({ texts: 'a boat' }), 422, 'BAD_TEXTS', /"texts" is a string/],
    ['no text', q({ texts: [] }), 422, 'EMPTY_TEXTS', /"texts" is empty/],
    ['65 texts', q({ texts: Array(65).fill('a') }), 413, 'TOO_MANY_TEXTS', /"texts" has 65 texts, over the limit of 64/],
    ['a number', q({ texts: ['a', 5] }), 422, 'BAD_TEXT', /texts\[1\] is a number, expected a string/],
    ['null text', q({ texts: [null] }), 422, 'BAD_TEXT', /texts\[0\] is null/],
    ['a nested array', q(`{"texts":[${'['.repeat(5000)}${']'.repeat(5000)}]}`), 422, 'BAD_TEXT', /texts\[0\] is an array/],
    ['2,001 characters', q({ texts: ['a'.repeat(2001)] }), 422, 'TEXT_TOO_LONG', /texts\[0\] has 2001 characters, over the limit of 2000/],
    ['2,001 emoji (4,002 UTF-16 units)', q({ texts: ['\u{1f600}'.repeat(2001)] }), 422, 'TEXT_TOO_LONG', /texts\[0\] has 2001 characters, over the limit of 2000/],
    ['70 tokens', q({ texts: ['ok', 'word '.repeat(70)] }), 422, 'TOO_MANY_TOKENS', /texts\[1\] has 72 tokens, over the model's limit of 64/],
    ['a lone surrogate', q('{"texts":["a \\ud800 b"]}'), 422, 'BAD_TEXT', /texts\[0\] has a lone surrogate/],
  ];

  test('malformed requests: documented 4xx, JSON { error: { code, message } }; the worker survives', async () => {
    for (const [name, options, status, code, message] of MATRIX) {
      const r = await request(words.url, 'embed', options);
      assert.equal(r.status, status, `${name}: ${r.text}`);
      assert.match(r.headers['content-type'], /^application\/json/);
      assert.equal(r.json?.error?.code, code, `${name}: ${r.text}`);
      assert.match(r.json.error.message, message, name);
      if (status === 405) assert.equal(r.headers.allow, 'POST');
    }
    // at the caps: 64 texts, 2,000 characters, 64 tokens
    const edge = ['a'.repeat(2000), 'word '.repeat(62).trim(), ...Array(62).fill('b')];
    const r = await embedOf(words.url, edge);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.embeddings.length, 64);
    assert.equal((await embedOf(words.url, ['a boat'])).status, 200);
    // characters are code points: 2,000 emoji (4,000 UTF-16 units) are within the cap (one word, one [UNK])
    const emoji = await embedOf(words.url, ['\u{1f600}'.repeat(2000)]);
    assert.equal(emoji.status, 200, emoji.text);
  });

  test('a chunked upload past 64 KiB: 413 while streaming, then the connection is usable', async () => {
    const chunk = Buffer.from(`"${'y'.repeat(1000)}",`);
    const chunks = [Buffer.from('{"texts":['), ...Array(80).fill(chunk), Buffer.from('"z"]}')];
    const r = await request(words.url, 'embed', { headers: JSON_CT, chunks });
    assert.equal(r.status, 413, r.text);
    assert.equal(r.json.error.code, 'BODY_TOO_LARGE');
    assert.match(r.json.error.message, /stopped reading at/);
    assert.equal((await embedOf(words.url, ['after'])).status, 200);
  });

  test('/info lists the embed limits and counts the texts; a bundle without an encoder answers 503 NO_ENCODER', async () => {
    const fresh = await startEdge({ backend: 'workerd', model: 'wordnet' });
    try {
      await embedOf(fresh.url, ['one', 'two', 'three']);
      const info = await request(fresh.url, 'info', { method: 'GET' });
      assert.equal(info.status, 200, info.text);
      assert.deepEqual(info.json.embed.limits, { maxBodyBytes: 65536, maxTexts: 64, maxTextChars: 2000, maxTokens: 64 });
      assert.equal(info.json.embed.dim, 128);
      assert.equal(info.json.isolate.embedded, 3);
    } finally {
      await fresh.stop();
    }
    const r = await embedOf(digits.url, ['a boat']);
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.error.code, 'NO_ENCODER');
    assert.match(r.json.error.message, /MODEL=wordnet/);
    const bad = await request(digits.url, 'embed', q({ texts: 5 }));
    assert.equal(bad.status, 422, 'the body is checked before the encoder');
  });
});
