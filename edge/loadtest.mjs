#!/usr/bin/env node
// loadtest.mjs — the edge worker under load (autocannon) and from cold, printing Markdown tables.
//
//   node edge/loadtest.mjs [--requests 20000] [--connections 64] [--backend workerd|miniflare|both]
//                          [--body raw,json,batch] [--batch-size 32] [--batch-requests 1000]
//                          [--cold-runs 5] [--json]        (--requests 0: cold start only; --cold-runs 0: load only)
//
// For each backend and request kind (POST /predict with a raw f32 or a JSON body; POST
// /predict/batch with batch-size raw inputs) it runs the model with mlrt (wasm, SIMD if
// available) and with plain JavaScript loops (MODEL_ENGINE=plain-js), on 127.0.0.1, and fails
// (exit 1) on any error or non-2xx answer. Cold start: time from spawning workerd to
// the first successful /predict answer, and that first request's own latency (model load included).
// Also a library for tests/edge: runLoad(), measureColdStart(), sampleInput(), percentile().

import autocannon from 'autocannon';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startEdge } from './serve.mjs';

export const TEST_IMAGES = fileURLToPath(new URL('../build/mnist/test-images.f32', import.meta.url));

/** k inputs of 784 f32: MNIST test digits if built, else deterministic pseudo-random pixels. */
export function sampleInputs(k, inputSize = 784) {
  if (inputSize === 784 && existsSync(TEST_IMAGES)) {
    const b = readFileSync(TEST_IMAGES);
    if (b.byteLength >= k * inputSize * 4) return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + k * inputSize * 4));
  }
  const x = new Float32Array(k * inputSize);
  let s = 0x2545f491;
  for (let i = 0; i < x.length; i++) {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    x[i] = ((s >>> 0) % 256) / 255;
  }
  return x;
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function bodyFor(kind, x) {
  return kind === 'json'
    ? { contentType: 'application/json', body: JSON.stringify(Array.from(x)) }
    : { contentType: 'application/octet-stream', body: Buffer.from(x.buffer, x.byteOffset, x.byteLength) };
}

/**
 * autocannon against POST {url}predict with a fixed body. Latency percentiles come from every
 * response's own time (float ms), not from autocannon's 1 ms histogram.
 */
export async function runLoad({ url, requests, connections, body, contentType, path = 'predict' }) {
  const latencies = [];
  let last = 0;
  const t0 = performance.now();
  const instance = autocannon({
    url: new URL(path, url).href,
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
    connections,
    amount: requests,
    timeout: 30,
  });
  const errorKinds = {};
  instance.on('reqError', (e) => {
    const k = e?.code ?? e?.message ?? String(e);
    errorKinds[k] = (errorKinds[k] ?? 0) + 1;
  });
  instance.on('response', (_client, _status, _bytes, ms) => {
    latencies.push(ms);
    last = performance.now();
  });
  const r = await instance;
  latencies.sort((a, b) => a - b);
  // autocannon's own duration ends on its 1 s ticker; time to the last response instead.
  const seconds = ((last || performance.now()) - t0) / 1000;
  return {
    requests: r.requests.sent,
    completed: latencies.length,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors, // autocannon counts timeouts among the errors
    timeouts: r.timeouts,
    errorKinds,
    seconds,
    rps: r['2xx'] / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1],
  };
}

/**
 * A mixed load: every connection cycles through `mix` (request objects: { path, contentType, body,
 * status }), e.g. nine good requests and one bad; resolves to the counts per status, connection
 * errors and timeouts, and whether every answer had the status its request expects.
 */
export async function runMixedLoad({ url, requests, connections, mix }) {
  const byStatus = {}, errorKinds = {};
  const latencies = [];
  let wrong = 0, last = 0;
  const t0 = performance.now();
  const instance = autocannon({
    url: new URL(url).href,
    connections,
    amount: requests,
    timeout: 30,
    requests: mix.map((m) => ({ method: 'POST', path: `/${m.path}`, headers: { 'content-type': m.contentType }, body: m.body })),
  });
  // autocannon cycles each connection through the list: the expected status of its next answer
  const next = new Map();
  instance.on('response', (client, status, _bytes, ms) => {
    const i = next.get(client) ?? 0;
    next.set(client, (i + 1) % mix.length);
    if (status !== mix[i].status) wrong++;
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    latencies.push(ms);
    last = performance.now();
  });
  instance.on('reqError', (e) => {
    const k = e?.code ?? e?.message ?? String(e);
    errorKinds[k] = (errorKinds[k] ?? 0) + 1;
  });
  const r = await instance;
  latencies.sort((a, b) => a - b);
  return {
    completed: latencies.length, byStatus, wrong, errors: r.errors, timeouts: r.timeouts, errorKinds,
    seconds: ((last || performance.now()) - t0) / 1000, p50: percentile(latencies, 50), p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1],
  };
}

async function post(url, kind, x) {
  const { contentType, body } = bodyFor(kind, x);
  const res = await fetch(new URL('predict', url), { method: 'POST', headers: { 'content-type': contentType }, body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST /predict: HTTP ${res.status} ${text}`);
  return JSON.parse(text);
}

/**
 * Cold start: spawn workerd (or miniflare), then the first POST /predict as soon as it listens.
 * @returns {{ listenMs, firstRequestMs, totalMs, secondRequestMs }}
 */
export async function measureColdStart({ backend, engine = 'mlrt', x }) {
  const edge = await startEdge({ backend, engine });
  try {
    const t1 = performance.now();
    await post(edge.url, 'raw', x);
    const t2 = performance.now();
    await post(edge.url, 'raw', x);
    const t3 = performance.now();
    return { listenMs: edge.startedMs, firstRequestMs: t2 - t1, totalMs: t2 - edge.t0, secondRequestMs: t3 - t2 };
  } finally {
    await edge.stop();
  }
}

const median = (a) => percentile([...a].sort((p, q) => p - q), 50);
const f = (v, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '—');

function parseArgs(argv) {
  const o = { requests: 20000, batchRequests: 1000, batchSize: 32, connections: 64, backend: 'workerd', coldRuns: 5, body: 'raw,json,batch', json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i], v = () => argv[++i];
    if (a === '--requests') o.requests = Number(v());
    else if (a === '--batch-requests') o.batchRequests = Number(v());
    else if (a === '--batch-size') o.batchSize = Number(v());
    else if (a === '--connections') o.connections = Number(v());
    else if (a === '--backend') o.backend = v();
    else if (a === '--cold-runs') o.coldRuns = Number(v());
    else if (a === '--body') o.body = v();
    else if (a === '--json') o.json = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const backends = o.backend === 'both' ? ['workerd', 'miniflare'] : o.backend.split(',');
  const kinds = o.body === 'all' ? ['raw', 'json', 'batch'] : o.body.split(',');
  const x = sampleInputs(Math.max(1, o.batchSize));
  const one = x.subarray(0, 784);
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const out = { machine: `${availableParallelism()} cores, ${cpu}, Node ${process.version}`, load: [], cold: [] };
  const rows = {
    raw: { path: 'predict', what: 'POST /predict, raw f32', requests: o.requests, per: 1, ...bodyFor('raw', one) },
    json: { path: 'predict', what: 'POST /predict, JSON', requests: o.requests, per: 1, ...bodyFor('json', one) },
    batch: { path: 'predict/batch', what: `POST /predict/batch, ${o.batchSize} x raw f32`, requests: o.batchRequests, per: o.batchSize, ...bodyFor('raw', x) },
  };
  for (const k of kinds) if (!rows[k]) throw new Error(`--body: unknown kind ${k} (raw, json, batch)`);

  console.log(`# mlrt edge worker — load test\n`);
  console.log(`${out.machine}; workerd on 127.0.0.1, autocannon on the same machine, ${o.connections} connections; one MNIST digit (784 floats) per input; 784-512-10 MLP.\n`);
  let failed = false;
  if (o.requests > 0) {
    console.log('| backend | model engine | request | requests | req/s | inferences/s | p50 ms | p99 ms | max ms | errors | non-2xx |');
    console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  }
  for (const backend of o.requests > 0 ? backends : []) {
    for (const engine of ['mlrt', 'plain-js']) {
      const edge = await startEdge({ backend, engine });
      try {
        const info = await (await fetch(new URL('info', edge.url))).json();
        for (const k of kinds) {
          const row = rows[k];
          // Warm up (model load, JIT tiers) outside the measurement.
          await runLoad({ url: edge.url, path: row.path, requests: Math.min(500, row.requests), connections: Math.min(8, o.connections), body: row.body, contentType: row.contentType });
          const r = await runLoad({ url: edge.url, path: row.path, requests: row.requests, connections: o.connections, body: row.body, contentType: row.contentType });
          out.load.push({ backend, engine: info.model.engine, request: row.what, ...r, inferencesPerSecond: r.rps * row.per });
          if (r.errors || r.non2xx || r.timeouts || r.ok !== row.requests) failed = true;
          console.log(`| ${backend} | ${info.model.engine} | ${row.what} | ${r.requests} | ${f(r.rps, 0)} | ${f(r.rps * row.per, 0)} | ${f(r.p50, 2)} | ${f(r.p99, 2)} | ${f(r.max, 1)} | ${r.errors}${r.errors ? ` (${Object.entries(r.errorKinds).map(([k, n]) => `${n} ${k}`).join(', ')})` : ''} | ${r.non2xx} |`);
        }
      } finally {
        await edge.stop();
      }
    }
  }

  if (o.coldRuns > 0) {
    console.log(`\n## Cold start (median of ${o.coldRuns} runs)\n`);
    console.log('From spawning workerd to its listening socket (workerd compiles the modules before it listens), then the first POST /predict (the isolate loads the embedded model and instantiates mlrt.wasm on first use), and a second one for comparison.\n');
    console.log('| backend | model engine | spawn → listening ms | first request ms | spawn → first answer ms | second request ms |');
    console.log('|---|---|---:|---:|---:|---:|');
    for (const backend of backends) {
      for (const engine of ['mlrt', 'plain-js']) {
        const runs = [];
        for (let i = 0; i < o.coldRuns; i++) runs.push(await measureColdStart({ backend, engine, x: one }));
        const m = Object.fromEntries(['listenMs', 'firstRequestMs', 'totalMs', 'secondRequestMs'].map((k) => [k, median(runs.map((r) => r[k]))]));
        out.cold.push({ backend, engine, runs: runs.length, ...m });
        console.log(`| ${backend} | ${engine} | ${f(m.listenMs)} | ${f(m.firstRequestMs)} | ${f(m.totalMs)} | ${f(m.secondRequestMs, 2)} |`);
      }
    }
  }
  if (o.json) console.log(`\n\`\`\`json\n${JSON.stringify(out, null, 1)}\n\`\`\``);
  if (failed) {
    console.error('\nFAILED: errors, timeouts or non-2xx answers under load');
    process.exitCode = 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
