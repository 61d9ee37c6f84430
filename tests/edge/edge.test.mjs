// The edge worker (edge/worker.mjs) under workerd on 127.0.0.1: the same answers as Node,
// both model sources, every malformed-request class, and a short load test.
// Run: node --test tests/edge/     (needs wasm/mlrt*.wasm and build/models/, i.e. `make`)

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { createRuntime, simdSupported } from '../../wasm/mlrt.mjs';
import { startEdge } from '../../edge/serve.mjs';
import { runLoad, runMixedLoad, sampleInputs } from '../../edge/loadtest.mjs';

// workerd runs relaxed SIMD and the worker picks mlrt-relaxed.wasm, so Node runs that build too to
// compare bits (Node 20 needs the flag, set before this process compiles any wasm).
v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
const repo = (p) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const BIN = repo('build/models/mnist-mlp.f32.bin');
const SAFETENSORS = repo('build/models/mnist-mlp.safetensors');
const LABELS = repo('build/mnist/test-labels.u8');
const MISSING = [BIN, SAFETENSORS, repo('wasm/mlrt.wasm'), repo('wasm/mlrt-scalar.wasm'), repo('wasm/mlrt-relaxed.wasm')].filter((p) => !existsSync(p));
if (MISSING.length) throw new Error(`edge tests need ${MISSING.join(', ')} — run \`make\` first`);

const LOAD_REQUESTS = Number(process.env.EDGE_LOAD_REQUESTS ?? 2000);
const LOAD_CONNECTIONS = Number(process.env.EDGE_LOAD_CONNECTIONS ?? 64);

const K = 32; // inputs compared with Node
const X = sampleInputs(K);
const row = (k) => X.subarray(k * 784, (k + 1) * 784);
const f32bytes = (x) => Buffer.from(x.buffer, x.byteOffset, x.byteLength);

// ---- HTTP helpers ----

/** One request on its own connection, with full control of headers and body framing. */
// declaredLength: send that Content-Length but only the first KB of the body, and wait for the
// answer (a server that refuses by Content-Length answers without reading the body; sending all
// of it would race the server's close against the reply, which a TCP reset can then destroy).
function request(base, path, { method = 'POST', headers = {}, body, chunks, declaredLength } = {}) {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const req = http.request(url, { method, headers, agent: false });
    let done = false;
    req.on('response', (res) => {
      const parts = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => {
        done = true;
        if (declaredLength) req.destroy();
        const text = Buffer.concat(parts).toString('utf8');
        let json;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    // The server may answer (413) and close before the whole body is sent: wait for that answer
    // (generously: on a loaded CI machine it can come well after the write error).
    req.on('error', (e) => { if (!done) setTimeout(() => (done ? null : reject(e)), 5000); });
    if (declaredLength) {
      req.setHeader('content-length', declaredLength);
      req.write(Buffer.alloc(Math.min(1024, declaredLength)));
    } else if (chunks) {
      (async () => {
        for (const c of chunks) {
          if (req.destroyed) return;
          if (!req.write(c)) {
            await new Promise((r) => {
              const go = () => { req.off('drain', go); req.off('close', go); r(); };
              req.on('drain', go).on('close', go);
            });
          }
        }
        req.end();
      })();
    } else {
      req.end(body);
    }
  });
}

const postJson = (base, path, value) => request(base, path, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
const postRaw = (base, path, x) => request(base, path, { headers: { 'content-type': 'application/octet-stream' }, body: f32bytes(x) });

function assertSameBits(got, want, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  const g = new Uint32Array(Float32Array.from(got).buffer), w = new Uint32Array(Float32Array.from(want).buffer);
  for (let i = 0; i < w.length; i++) {
    // JSON must carry each probability exactly (a double that is an f32 value).
    assert.equal(Math.fround(got[i]), got[i], `${what}[${i}] = ${got[i]} is not an f32 value`);
    assert.equal(g[i], w[i], `${what}[${i}]: edge ${got[i]} != node ${want[i]}`);
  }
}

const argmax = (p) => p.reduce((b, v, i) => (v > p[b] ? i : b), 0);

// ---- fixtures: Node references, a model server, the workers ----

let nodeSimd, nodeScalar, nodeSafetensors;
let modelServer, modelHits = 0, modelUrl, missingUrl;
const edges = {};

before(async () => {
  const bin = readFileSync(BIN), st = readFileSync(SAFETENSORS);
  const rtSimd = await createRuntime(); // the relaxed build, as the worker picks under workerd
  nodeSimd = rtSimd.loadFromBytes(bin);
  nodeSafetensors = rtSimd.loadFromBytes(st);
  nodeScalar = (await createRuntime({ simd: false })).loadFromBytes(bin);

  modelServer = http.createServer((req, res) => {
    if (req.url === '/models/mnist-mlp.safetensors') {
      modelHits++;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': st.length });
      res.end(st);
    } else {
      res.writeHead(404).end('no such model');
    }
  });
  await new Promise((r) => modelServer.listen(0, '127.0.0.1', r));
  const port = modelServer.address().port;
  modelUrl = `http://127.0.0.1:${port}/models/mnist-mlp.safetensors`;
  missingUrl = `http://127.0.0.1:${port}/models/missing.bin`;

  // Start them together: miniflare and bare workerd, each with its own workerd process.
  const starts = {
    embedded: startEdge({ backend: 'workerd' }),                            // embedded model.bin, auto build
    url: startEdge({ backend: 'miniflare', model: null, modelUrl }),        // no embedded model, MODEL_URL
    scalar: startEdge({ backend: 'workerd', build: 'scalar', maxBodyBytes: 4 << 20 }),
    plain: startEdge({ backend: 'workerd', engine: 'plain-js' }),
    broken: startEdge({ backend: 'workerd', model: null, modelUrl: missingUrl }),
  };
  const results = await Promise.allSettled(Object.values(starts));
  Object.keys(starts).forEach((k, i) => { if (results[i].status === 'fulfilled') edges[k] = results[i].value; });
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
});

after(async () => {
  await Promise.all(Object.values(edges).map((e) => e.stop()));
  await new Promise((r) => modelServer?.close(r) ?? r());
});

// ---- predictions: bitwise equal to Node ----

describe('predictions equal Node, bit for bit', () => {
  test('GET /info: SIMD build picked by feature detection, embedded model', async () => {
    const r = await request(edges.embedded.url, 'info', { method: 'GET' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.runtime.build, 'relaxed');
    assert.equal(r.json.runtime.simdSupported, true);
    assert.equal(r.json.source.kind, 'embedded');
    assert.equal(r.json.source.bytes, readFileSync(BIN).length);
    assert.deepEqual(r.json.info, JSON.parse(JSON.stringify(nodeSimd.info)));
    assert.deepEqual(r.json.model, { id: r.json.source.sha256.slice(0, 16), source: 'embedded', engine: `mlrt-${r.json.runtime.build}` });
  });

  test('POST /predict, JSON and raw f32 bodies', async () => {
    for (let k = 0; k < K; k++) {
      const want = nodeSimd.predict(row(k));
      const [j, r] = await Promise.all([postJson(edges.embedded.url, 'predict', Array.from(row(k))), postRaw(edges.embedded.url, 'predict', row(k))]);
      for (const [res, kind] of [[j, 'json'], [r, 'raw']]) {
        assert.equal(res.status, 200, res.text);
        assertSameBits(res.json.probabilities, want, `input ${k} (${kind})`);
        assert.equal(res.json.label, argmax(Array.from(want)));
        assert.equal(res.json.model.source, 'embedded');
      }
    }
  });

  test('POST /predict/batch, raw f32 (n x 784) and JSON arrays', async () => {
    const want = nodeSimd.predictBatch(X, K);
    const r = await postRaw(edges.embedded.url, 'predict/batch', X);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.labels.length, K);
    assertSameBits(r.json.probabilities.flat(), want, 'raw batch');
    const j = await postJson(edges.embedded.url, 'predict/batch', Array.from({ length: 8 }, (_, k) => Array.from(row(k))));
    assert.equal(j.status, 200, j.text);
    assertSameBits(j.json.probabilities.flat(), nodeSimd.predictBatch(X.subarray(0, 8 * 784), 8), 'json batch');
    for (let k = 0; k < K; k++) assert.equal(r.json.labels[k], argmax(Array.from(want.subarray(k * 10, k * 10 + 10))));
  });

  test('classifies the MNIST test digits (accuracy >= 0.95 over 1000)', { skip: !existsSync(LABELS) && 'no build/mnist/test-labels.u8' }, async () => {
    const labels = readFileSync(LABELS), n = Math.min(1000, labels.length), all = sampleInputs(n);
    let correct = 0;
    for (let b = 0; b < n; b += 250) {
      const m = Math.min(250, n - b);
      const r = await postRaw(edges.embedded.url, 'predict/batch', all.subarray(b * 784, (b + m) * 784));
      assert.equal(r.status, 200, r.text);
      r.json.labels.forEach((l, i) => { if (l === labels[b + i]) correct++; });
    }
    assert.ok(correct / n >= 0.95, `accuracy ${correct / n}`);
  });

  test('MLRT_BUILD=scalar runs mlrt-scalar.wasm and equals Node\'s scalar build', async () => {
    const info = await request(edges.scalar.url, 'info', { method: 'GET' });
    assert.equal(info.json.runtime.build, 'scalar');
    const r = await postRaw(edges.scalar.url, 'predict/batch', X);
    assert.equal(r.status, 200, r.text);
    assertSameBits(r.json.probabilities.flat(), nodeScalar.predictBatch(X, K), 'scalar batch');
  });

  test('plain-JS engine agrees (labels equal, probabilities within 1e-5)', async () => {
    const r = await postRaw(edges.plain.url, 'predict/batch', X);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.model.engine, 'plain-js');
    const want = nodeSimd.predictBatch(X, K);
    r.json.probabilities.flat().forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-5, `[${i}] ${v} vs ${want[i]}`));
    for (let k = 0; k < K; k++) assert.equal(r.json.labels[k], argmax(Array.from(want.subarray(k * 10, k * 10 + 10))));
  });
});

// ---- model from MODEL_URL ----

describe('model fetched from MODEL_URL', () => {
  test('fetched once (concurrent first requests share it), kept for later requests, same answers', async () => {
    assert.equal(modelHits, 0, 'the model is fetched lazily, on the first request');
    const first = await Promise.all(Array.from({ length: 16 }, (_, k) => postRaw(edges.url.url, 'predict', row(k))));
    const later = await Promise.all(Array.from({ length: 16 }, (_, k) => postJson(edges.url.url, 'predict', Array.from(row(k + 16)))));
    [...first, ...later].forEach((r, k) => {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.model.source, 'url');
      assertSameBits(r.json.probabilities, nodeSafetensors.predict(row(k)), `url input ${k}`);
    });
    const info = await request(edges.url.url, 'info', { method: 'GET' });
    assert.equal(info.json.source.kind, 'url');
    assert.equal(info.json.source.url, modelUrl);
    assert.equal(info.json.info.format, 'safetensors');
    assert.equal(info.json.isolate.loads, 1);
    assert.equal(modelHits, 1, `the model server saw ${modelHits} requests`);
  });

  test('an unreachable model is a 503 MODEL_UNAVAILABLE naming the URL, retried on later requests', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await postRaw(edges.broken.url, 'predict', row(0));
      assert.equal(r.status, 503, r.text);
      assert.equal(r.json.error.code, 'MODEL_UNAVAILABLE');
      assert.match(r.json.error.message, /missing\.bin.*HTTP 404/);
    }
    const info = await request(edges.broken.url, 'info', { method: 'GET' });
    assert.equal(info.status, 503);
  });
});

// ---- malformed requests ----

const JSON_CT = { 'content-type': 'application/json' };
const RAW_CT = { 'content-type': 'application/octet-stream' };
const zeros = (n) => new Array(n).fill(0);
const withValue = (n, i, v) => { const a = zeros(n); a[i] = v; return a; };
const rawWith = (n, i, v) => { const x = new Float32Array(n); x[i] = v; return f32bytes(x); };
const BIG = 2 * 1024 * 1024;

// [name, path, options, status, code, message pattern]
const MATRIX = [
  ['unknown path', 'nope', { method: 'GET' }, 404, 'NOT_FOUND', /no endpoint \/nope/],
  ['unknown path under /predict', 'predict/x', { headers: JSON_CT, body: '[]' }, 404, 'NOT_FOUND', /\/predict\/x/],
  ['GET /predict', 'predict', { method: 'GET' }, 405, 'METHOD_NOT_ALLOWED', /GET is not allowed on \/predict; use POST/],
  ['PUT /predict/batch', 'predict/batch', { method: 'PUT', headers: JSON_CT, body: '[]' }, 405, 'METHOD_NOT_ALLOWED', /PUT/],
  ['POST /info', 'info', { headers: JSON_CT, body: '[]' }, 405, 'METHOD_NOT_ALLOWED', /use GET or HEAD/],
  ['no content type', 'predict', { body: '[1]' }, 415, 'UNSUPPORTED_MEDIA_TYPE', /Content-Type is missing/],
  ['text/plain', 'predict', { headers: { 'content-type': 'text/plain' }, body: '[1]' }, 415, 'UNSUPPORTED_MEDIA_TYPE', /"text\/plain" is not supported/],
  ['form data on batch', 'predict/batch', { headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x--' }, 415, 'UNSUPPORTED_MEDIA_TYPE', /multipart\/form-data/],
  ['not JSON', 'predict', { headers: JSON_CT, body: '[0, 1,' }, 400, 'BAD_JSON', /not valid JSON/],
  ['empty JSON body', 'predict', { headers: JSON_CT, body: '' }, 400, 'BAD_JSON', /not valid JSON/],
  ['NaN literal', 'predict', { headers: JSON_CT, body: `[${zeros(783).join(',')},NaN]` }, 400, 'BAD_JSON', /not valid JSON/],
  ['invalid UTF-8', 'predict', { headers: JSON_CT, body: Buffer.from([0x5b, 0xff, 0x5d]) }, 400, 'BAD_JSON', /UTF-8/],
  ['JSON object', 'predict', { headers: JSON_CT, body: '{"input":[1,2]}' }, 422, 'NOT_AN_ARRAY', /body is an object, expected a JSON array of 784 numbers/],
  ['too few numbers', 'predict', { headers: JSON_CT, body: JSON.stringify(zeros(783)) }, 422, 'WRONG_LENGTH', /expected 784 numbers, got 783/],
  ['too many numbers', 'predict', { headers: JSON_CT, body: JSON.stringify(zeros(785)) }, 422, 'WRONG_LENGTH', /expected 784 numbers, got 785/],
  ['a string', 'predict', { headers: JSON_CT, body: JSON.stringify(withValue(784, 5, '0.5')) }, 422, 'NOT_A_NUMBER', /input\[5\] is a string, expected a number/],
  ['a null', 'predict', { headers: JSON_CT, body: JSON.stringify(withValue(784, 9, null)) }, 422, 'NOT_A_NUMBER', /input\[9\] is null/],
  ['1e400 (Infinity)', 'predict', { headers: JSON_CT, body: JSON.stringify(zeros(784)).replace(/^\[0/, '[1e400') }, 422, 'NON_FINITE', /input\[0\] is Infinity/],
  ['1e39 (overflows f32)', 'predict', { headers: JSON_CT, body: JSON.stringify(withValue(784, 7, 1e39)) }, 422, 'NON_FINITE', /input\[7\] is 1e\+39, which is not a finite float32/],
  ['raw: wrong length', 'predict', { headers: RAW_CT, body: Buffer.alloc(3135) }, 422, 'WRONG_LENGTH', /expected 3136 bytes \(784 little-endian f32\), got 3135/],
  ['raw: empty', 'predict', { headers: RAW_CT, body: '' }, 422, 'WRONG_LENGTH', /got 0/],
  ['raw: NaN', 'predict', { headers: RAW_CT, body: rawWith(784, 10, NaN) }, 422, 'NON_FINITE', /input\[10\] is NaN/],
  ['raw: -Infinity', 'predict', { headers: RAW_CT, body: rawWith(784, 783, -Infinity) }, 422, 'NON_FINITE', /input\[783\] is -Infinity/],
  ['batch: not an array', 'predict/batch', { headers: JSON_CT, body: '"x"' }, 422, 'NOT_AN_ARRAY', /body is a string/],
  ['batch: empty', 'predict/batch', { headers: JSON_CT, body: '[]' }, 422, 'EMPTY_BATCH', /no inputs/],
  ['batch: flat array', 'predict/batch', { headers: JSON_CT, body: JSON.stringify(zeros(784)) }, 422, 'NOT_AN_ARRAY', /input\[0\] is a number, expected an array of 784 numbers/],
  ['batch: short row', 'predict/batch', { headers: JSON_CT, body: JSON.stringify([zeros(784), zeros(700)]) }, 422, 'WRONG_LENGTH', /input\[1\] has 700 numbers, expected 784/],
  ['batch: bad element', 'predict/batch', { headers: JSON_CT, body: JSON.stringify([zeros(784), withValue(784, 3, true)]) }, 422, 'NOT_A_NUMBER', /input\[1\]\[3\] is a boolean/],
  ['batch: raw empty', 'predict/batch', { headers: RAW_CT, body: '' }, 422, 'EMPTY_BATCH', /empty body/],
  ['batch: raw ragged', 'predict/batch', { headers: RAW_CT, body: Buffer.alloc(3136 * 2 + 4) }, 422, 'WRONG_LENGTH', /6276 bytes, not a multiple of 3136/],
  ['batch: raw NaN in row 1', 'predict/batch', { headers: RAW_CT, body: rawWith(784 * 3, 784 + 3, NaN) }, 422, 'NON_FINITE', /input\[1\]\[3\] is NaN/],
  ['oversized, by Content-Length', 'predict', { headers: RAW_CT, declaredLength: BIG }, 413, 'BODY_TOO_LARGE', /2097152 bytes \(Content-Length\) exceeds the limit of 1048576/],
  ['oversized, chunked (no Content-Length)', 'predict/batch',
    { headers: RAW_CT, chunks: Array.from({ length: 32 }, () => Buffer.alloc(64 * 1024)) }, 413, 'BODY_TOO_LARGE', /exceeds the limit of 1048576 bytes \(stopped reading/],
  ['oversized JSON batch, chunked', 'predict/batch',
    { headers: JSON_CT, chunks: ['[', ...Array.from({ length: 800 }, (_, i) => `${i ? ',' : ''}${JSON.stringify(zeros(784))}`), ']'] }, 413, 'BODY_TOO_LARGE', /stopped reading/],
];

describe('malformed requests: documented 4xx, JSON { error: { code, message } }', () => {
  for (const [name, path, options, status, code, message] of MATRIX) {
    test(`${status} ${code}: ${name}`, async () => {
      const r = await request(edges.embedded.url, path, options);
      assert.equal(r.status, status, `${name}: ${r.text}`);
      assert.match(r.headers['content-type'], /^application\/json/);
      assert.deepEqual(Object.keys(r.json), ['error']);
      assert.deepEqual(Object.keys(r.json.error).sort(), ['code', 'message']);
      assert.equal(r.json.error.code, code, r.text);
      assert.match(r.json.error.message, message);
      if (status === 405) assert.ok(r.headers.allow, 'a 405 carries Allow');
    });
  }

  test('the same classes under miniflare (URL model), plus a few edge cases', async () => {
    for (const [name, path, options, status, code] of MATRIX) {
      const r = await request(edges.url.url, path, options);
      assert.equal(r.status, status, `${name}: ${r.text}`);
      assert.equal(r.json?.error?.code, code, `${name}: ${r.text}`);
    }
    // content-type parameters and case are fine
    const ok = await request(edges.url.url, 'predict', { headers: { 'content-type': 'Application/JSON; charset=utf-8' }, body: JSON.stringify(Array.from(row(0))) });
    assert.equal(ok.status, 200, ok.text);
    // deeply nested JSON: a 4xx, never a crash
    const deep = await request(edges.url.url, 'predict', { headers: JSON_CT, body: '['.repeat(200000) + ']'.repeat(200000) });
    assert.ok(deep.status >= 400 && deep.status < 500, deep.text);
    // a batch over MAX_BATCH rows (reachable with a 4 MiB body limit)
    const big = await request(edges.scalar.url, 'predict/batch', { headers: RAW_CT, body: Buffer.alloc(3136 * 1025) });
    assert.equal(big.status, 413, big.text);
    assert.equal(big.json.error.code, 'BATCH_TOO_LARGE');
    assert.match(big.json.error.message, /1025 inputs, over the limit of 1024/);
  });

  test('a client that goes away mid-upload does not hurt the worker', async () => {
    for (const e of [edges.embedded, edges.url]) {
      await new Promise((resolve) => {
        const req = http.request(new URL('predict', e.url), { method: 'POST', agent: false, headers: { ...RAW_CT, 'content-length': 3136 } });
        req.on('error', () => {});
        req.on('close', resolve);
        req.write(Buffer.alloc(100));
        setTimeout(() => req.destroy(), 50);
      });
    }
  });

  test('after all that, every worker still answers', async () => {
    for (const k of ['embedded', 'url', 'scalar', 'plain']) {
      const r = await postRaw(edges[k].url, 'predict', row(1));
      assert.equal(r.status, 200, `${k}: ${r.text}`);
    }
  });
});

// ---- load ----

describe(`load: ${LOAD_REQUESTS} requests at ${LOAD_CONNECTIONS} connections`, () => {
  for (const [name, key] of [['mlrt', 'embedded'], ['plain-js', 'plain']]) {
    test(`${name}: zero errors, zero non-2xx`, async (t) => {
      const body = f32bytes(row(2));
      const r = await runLoad({ url: edges[key].url, requests: LOAD_REQUESTS, connections: LOAD_CONNECTIONS, body, contentType: 'application/octet-stream' });
      t.diagnostic(`${name} (${edges[key].backend}): ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.ok} 2xx`);
      assert.equal(r.errors, 0);
      assert.equal(r.timeouts, 0);
      assert.equal(r.non2xx, 0);
      assert.equal(r.ok, LOAD_REQUESTS);
    });
  }
});

const MIXED_REQUESTS = Number(process.env.EDGE_MIXED_REQUESTS ?? 20000);

describe(`mixed load: ${MIXED_REQUESTS} requests at ${LOAD_CONNECTIONS} connections, 10% bad bodies`, () => {
  for (const key of ['embedded', 'url']) {
    test(`${key} (${key === 'url' ? 'miniflare' : 'workerd'}): every answer as documented, zero connection errors`, async (t) => {
      const good = { path: 'predict', contentType: 'application/octet-stream', body: f32bytes(row(3)), status: 200 };
      const mix = [good, good, good, good, good, good, good, good, good,
        { path: 'predict', contentType: 'application/octet-stream', body: Buffer.alloc(784 * 4 - 4), status: 422 }];
      const bad = [{ path: 'predict', contentType: 'application/json', body: '[1, 2,', status: 400 },
        { path: 'nope', contentType: 'application/json', body: JSON.stringify(zeros(784)), status: 404 },
        { path: 'predict', contentType: 'text/plain', body: 'x'.repeat(3000), status: 415 }];
      // the one bad request of each ten varies by connection slot: a wrong length, bad JSON, a 404, a 415
      const r = await runMixedLoad({ url: edges[key].url, requests: MIXED_REQUESTS, connections: LOAD_CONNECTIONS, mix: [...mix, ...bad.flatMap((b) => [...mix.slice(0, 9), b])] });
      t.diagnostic(`${key}: ${JSON.stringify(r.byStatus)} in ${r.seconds.toFixed(1)} s, p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms, errors ${r.errors}, timeouts ${r.timeouts} ${JSON.stringify(r.errorKinds)}`);
      assert.equal(r.errors, 0, JSON.stringify(r.errorKinds));
      assert.equal(r.timeouts, 0);
      assert.equal(r.completed, MIXED_REQUESTS);
      assert.equal(r.wrong, 0, `answers with another status than documented: ${JSON.stringify(r.byStatus)}`);
      const share = (MIXED_REQUESTS - r.byStatus[200]) / MIXED_REQUESTS; // each connection cycles the list: about 10%
      assert.ok(share > 0.09 && share < 0.11, `bad share ${share}`);
    });
  }
});

// ---- errors after the body: keep-alive survives, Connection: close when the body was not read ----

/** Writes raw HTTP/1.1 bytes on one socket and reads `count` responses (status, headers, body). */
async function rawExchange(base, writes, count, { timeoutMs = 8000 } = {}) {
  const net = await import('node:net');
  const { hostname, port } = new URL(base);
  const socket = net.connect(Number(port), hostname);
  socket.setNoDelay(true);
  let buf = Buffer.alloc(0), closed = false;
  const responses = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out with ${responses.length} of ${count} responses`)), timeoutMs);
    socket.on('error', (e) => { clearTimeout(timer); reject(e); });
    socket.on('close', () => { closed = true; clearTimeout(timer); resolve(); });
    socket.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      for (;;) { // parse complete responses (Content-Length bodies)
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) break;
        const head = buf.subarray(0, end).toString('latin1').split('\r\n');
        const headers = Object.fromEntries(head.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const len = Number(headers['content-length'] ?? 0);
        if (buf.length < end + 4 + len) break;
        responses.push({ status: Number(head[0].split(' ')[1]), headers, body: buf.subarray(end + 4, end + 4 + len).toString() });
        buf = buf.subarray(end + 4 + len);
      }
      if (responses.length >= count) { clearTimeout(timer); resolve(); }
    });
    (async () => {
      for (const w of writes) {
        if (typeof w === 'number') await new Promise((r) => setTimeout(r, w));
        else socket.write(w);
      }
    })();
  });
  socket.destroy();
  return { responses, closed };
}

describe('error answers read the body first', () => {
  for (const backend of ['embedded', 'url']) {
    test(`${backend}: 404, 405 and 415 with a body, then a good request on the same connection`, async () => {
      const base = edges[backend].url;
      const body = '[' + Array(784).fill(0).join(',') + ']';
      const req = (method, path, type, b) => `${method} ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(b)}\r\n\r\n${b}`;
      const { responses } = await rawExchange(base, [
        req('POST', '/nope', 'application/json', body),
        req('PUT', '/predict', 'application/json', body),
        req('POST', '/predict', 'text/plain', body),
        req('POST', '/predict', 'application/json', body),
      ], 4);
      assert.deepEqual(responses.map((r) => r.status), [404, 405, 415, 200]);
      for (const r of responses) assert.notEqual(r.headers.connection, 'close');
      assert.equal(JSON.parse(responses[3].body).probabilities.length, 10);
    });
  }

  test('a 413 by Content-Length after the whole 2 MB upload is answered, and the connection is reused', async () => {
    const big = Buffer.alloc(2 << 20, 0x20);
    const head = `POST /predict HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\ncontent-length: ${big.length}\r\n\r\n`;
    const good = `GET /info HTTP/1.1\r\nhost: x\r\n\r\n`;
    const { responses } = await rawExchange(edges.embedded.url, [head, big, good], 2);
    assert.deepEqual(responses.map((r) => r.status), [413, 200]);
    assert.equal(JSON.parse(responses[0].body).error.code, 'BODY_TOO_LARGE');
  });

  test('a client that declares more than it sends gets its answer after a pause, and the connection is closed', async () => {
    const head = `POST /nope HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n[1,2`;
    for (const backend of ['embedded', 'url']) {
      const t0 = Date.now();
      // (workerd strips the worker's Connection header, and closes the socket itself)
      const { responses, closed } = await rawExchange(edges[backend].url, [head], 2, { timeoutMs: 6000 });
      assert.equal(responses[0]?.status, 404, backend);
      assert.equal(JSON.parse(responses[0].body).error.code, 'NOT_FOUND');
      assert.ok(closed, `${backend}: the connection stays open after an answer to an unfinished body`);
      assert.ok(Date.now() - t0 < 6000, `${backend}: answered after ${Date.now() - t0} ms`);
    }
  });
});

describe('raw f32 answers (Accept: application/octet-stream)', () => {
  for (const backend of ['embedded', 'url']) {
    test(`${backend}: /predict and /predict/batch answer little-endian f32 with X-Mlrt-Shape; JSON stays the default`, async () => {
      const base = edges[backend].url;
      const post = (path, body, accept) => fetch(new URL(path, base), {
        method: 'POST', body, headers: { 'content-type': 'application/octet-stream', ...(accept ? { accept } : {}) },
      });
      const one = await post('predict', Buffer.from(row(0).buffer.slice(row(0).byteOffset, row(0).byteOffset + 784 * 4)), 'application/octet-stream');
      assert.equal(one.status, 200);
      assert.equal(one.headers.get('content-type'), 'application/octet-stream');
      assert.equal(one.headers.get('x-mlrt-shape'), '10');
      const got1 = new Float32Array(await one.arrayBuffer());
      assertSameBits(Array.from(got1), backend === 'url' ? nodeSafetensors.predict(row(0)) : nodeSimd.predict(row(0)), 'raw /predict');
      const batch = await post('predict/batch', Buffer.from(X.buffer, X.byteOffset, X.byteLength), 'application/octet-stream, application/json;q=0.5');
      assert.equal(batch.headers.get('x-mlrt-shape'), `${K},10`);
      const gotB = new Float32Array(await batch.arrayBuffer());
      assertSameBits(Array.from(gotB), backend === 'url' ? nodeSafetensors.predictBatch(X, K) : nodeSimd.predictBatch(X, K), 'raw batch');
      const js = await post('predict', Buffer.from(X.buffer, X.byteOffset, 784 * 4), 'application/json, application/octet-stream');
      assert.match(js.headers.get('content-type'), /^application\/json/);
      const def = await post('predict', Buffer.from(X.buffer, X.byteOffset, 784 * 4));
      assert.match(def.headers.get('content-type'), /^application\/json/);
      // errors stay JSON whatever Accept says
      const bad = await post('predict', Buffer.alloc(12), 'application/octet-stream');
      assert.equal(bad.status, 422);
      assert.equal((await bad.json()).error.code, 'WRONG_LENGTH');
    });
  }
});

describe('lost 413s: oversized uploads sent in full always get their answer', () => {
  const head = (path, length, extra = '') => `POST /${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\ncontent-length: ${length}\r\n${extra}\r\n`;
  for (const mb of [5, 20]) {
    test(`${mb} MB by Content-Length, 8 times on one connection each, workerd and miniflare`, async () => {
      const body = Buffer.alloc(mb << 20, 1);
      for (const backend of ['embedded', 'url']) {
        const answers = await Promise.all(Array.from({ length: 8 }, () => rawExchange(edges[backend].url, [head('predict', body.length), body], 1, { timeoutMs: 30_000 })));
        for (const { responses } of answers) {
          assert.equal(responses[0]?.status, 413, backend);
          assert.equal(JSON.parse(responses[0].body).error.code, 'BODY_TOO_LARGE');
        }
      }
    });
  }

  test('a 3.2 MB batch of 1,025 rows: BODY_TOO_LARGE at 1 MiB, BATCH_TOO_LARGE where the body limit is 4 MiB', async () => {
    const rows = Buffer.alloc(1025 * 784 * 4);
    for (const [backend, code] of [['embedded', 'BODY_TOO_LARGE'], ['url', 'BODY_TOO_LARGE'], ['scalar', 'BATCH_TOO_LARGE']]) {
      const { responses } = await rawExchange(edges[backend].url, [head('predict/batch', rows.length), rows], 1, { timeoutMs: 30_000 });
      assert.equal(responses[0]?.status, 413, backend);
      assert.equal(JSON.parse(responses[0].body).error.code, code, backend);
    }
  });

  test('a chunked 5 MB upload: 413, then the same connection serves the next request', async () => {
    const chunk = Buffer.alloc(64 << 10, 2);
    const writes = [`POST /predict HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\ntransfer-encoding: chunked\r\n\r\n`];
    for (let i = 0; i < 80; i++) writes.push(`${chunk.length.toString(16)}\r\n`, chunk, '\r\n');
    writes.push('0\r\n\r\n', `GET /info HTTP/1.1\r\nhost: x\r\n\r\n`);
    const { responses } = await rawExchange(edges.embedded.url, writes, 2, { timeoutMs: 30_000 });
    assert.deepEqual(responses.map((r) => r.status), [413, 200]);
  });

  test('Expect: 100-continue: the error is answered without waiting for a body that is not coming', async () => {
    // (workerd does not show the worker the Expect header: the drain's 1 s pause bounds the wait)
    const t0 = Date.now();
    const { responses, closed } = await rawExchange(edges.embedded.url,
      [`POST /predict HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\ncontent-length: 10\r\nexpect: 100-continue\r\n\r\n`], 2, { timeoutMs: 5000 });
    assert.equal(responses[0]?.status, 415);
    assert.ok(Date.now() - t0 < 2500, `answered after ${Date.now() - t0} ms (the drain pause is 1 s)`);
    assert.ok(closed, 'the connection is closed after it');
  });
});
