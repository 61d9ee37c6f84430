// make test-package: the npm tarball, as a user gets it. Packs the repository (prepack builds the
// wasm), prints the tarball's size and files, and installs it into fresh projects under
// build/package/ — from the tarball, with the npm cache for its one dependency (no registry for
// mlrt itself) — then proves each consumer works:
//   node      import { createRuntime } from 'mlrt' loads models and predicts; npx mlrt inspect |
//             predict run from the installed bin
//   types     a file using the public API type-checks with tsc --strict under moduleResolution
//             bundler and node16; a deliberate misuse fails the check
// Run: node --test tests/package/package.check.mjs (tsc, esbuild, vite and wrangler are the
// repository's pinned devDependencies).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORK = path.join(ROOT, 'build/package');
const BIN = (t) => path.join(ROOT, 'node_modules/.bin', t);
const MODEL = path.join(ROOT, 'build/models/mnist-mlp.safetensors');
rmSync(WORK, { recursive: true, force: true });
mkdirSync(WORK, { recursive: true });

const run = (cmd, args, cwd, opts = {}) => {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 26, ...opts });
  return { code: r.status, out: r.stdout ?? '', err: (r.stderr ?? '').split('\n').filter((l) => !/Unknown user config/.test(l)).join('\n') };
};
const ok = (cmd, args, cwd, opts) => {
  const r = run(cmd, args, cwd, opts);
  assert.equal(r.code, 0, `${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.code}:\n${r.err}\n${r.out}`);
  return r;
};

// ------------------------------------------------------------------ the tarball

const packOut = ok('npm', ['pack', '--json', '--pack-destination', WORK], ROOT).out; // prepack's make output, then the JSON
const packed = JSON.parse(packOut.slice(packOut.search(/^\[/m)))[0];
const TARBALL = path.join(WORK, packed.filename);
const files = packed.files.map((f) => f.path).sort();

/** A fresh project with the tarball installed. */
function project(name, pkg = {}) {
  const dir = path.join(WORK, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `consumer-${name}`, private: true, type: 'module', ...pkg }, null, 2));
  ok('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', TARBALL], dir);
  return dir;
}

test('npm pack ships the wasm builds, the module, its types, both CLIs, README, LICENSE and CHANGELOG, and nothing else', () => {
  console.log(`tarball ${packed.filename}: ${packed.size.toLocaleString('en-US')} bytes packed, ${packed.unpackedSize.toLocaleString('en-US')} unpacked, ${files.length} files:`);
  for (const f of packed.files) console.log(`  ${String(f.size).padStart(8)}  ${f.path}`);
  for (const want of ['wasm/mlrt.wasm', 'wasm/mlrt-scalar.wasm', 'wasm/mlrt-relaxed.wasm', 'wasm/mlrt-threads.wasm', 'wasm/threads.mjs', 'wasm/threads-worker.mjs', 'wasm/mlrt-wasi.wasm', 'wasm/mlrt.mjs', 'wasm/mlrt.d.ts',
    'wasm/apr-crypto.mjs', 'wasm/apr-crypto.d.ts', 'tools/mlrt.mjs', 'tools/mlrt-wasi.mjs', 'tools/apr/writer.mjs',
    'README.md', 'LICENSE', 'CHANGELOG.md', 'package.json']) {
    assert.ok(files.includes(want), `the tarball lacks ${want}`);
  }
  for (const f of files) assert.doesNotMatch(f, /^(tests|bench|web|edge|build|src|docs|\.ci)\//, `${f} should not ship`);
  // five wasm builds with the encoder: 801,599 B packed on 2026-11-28 (each build ~1.5 KB larger than when the cap was
  // 800 KB); 828,855 B after the encoder's prompts, Dense modules and 0_Transformer folders (each build ~6 KB larger);
  // 838,7xx B after MPNet, DistilBERT and RobertaProcessing (each build ~3 KB larger, the README ~4 KB)
  assert.ok(packed.size < 850_000, `tarball ${packed.size} bytes`);
});

test('Node ESM: import { createRuntime } from "mlrt" loads and predicts; npx mlrt inspect / predict run from the installed bin', () => {
  const dir = project('node');
  copyFileSync(MODEL, path.join(dir, 'model.safetensors'));
  writeFileSync(path.join(dir, 'main.mjs'), `
import { readFileSync } from 'node:fs';
import { createRuntime, MlrtError } from 'mlrt';
import { writeAprV1, decisionTreePayload } from 'mlrt/apr-writer.mjs';
const rt = await createRuntime();
const m = rt.loadFromBytes(readFileSync('model.safetensors'));
const p = m.predict(new Float32Array(m.info.inputSize));
const tree = rt.loadFromBytes(writeAprV1({ modelType: 'DecisionTree', payload: decisionTreePayload({
  tree: { feature: 0, threshold: 0.5, left: { label: 3, nSamples: 1 }, right: { label: 7, nSamples: 1 } }, nFeatures: 1 }) }));
let code;
try { rt.loadFromBytes(new TextEncoder().encode('GIF89a, definitely not a model file')); } catch (e) { code = e instanceof MlrtError && e.code; }
console.log(JSON.stringify({ simd: rt.build.simd, outputs: p.length, label: m.predictLabel(new Float32Array(784)), tree: [tree.predictLabel([0]), tree.predictLabel([1])], code }));
`);
  const r = JSON.parse(ok(process.execPath, ['main.mjs'], dir).out);
  assert.deepEqual(r, { simd: true, outputs: 10, label: r.label, tree: [3, 7], code: 'UNKNOWN_FORMAT' });
  writeFileSync(path.join(dir, 'one.json'), JSON.stringify(Array(784).fill(0)));
  const ins = ok('npx', ['--no-install', 'mlrt', 'inspect', 'model.safetensors'], dir).out;
  assert.match(ins, /format +safetensors/);
  const pred = JSON.parse(ok('npx', ['--no-install', 'mlrt', 'predict', 'model.safetensors', 'one.json'], dir).out);
  assert.equal(pred.output.length, 10);
  assert.match(ok('npx', ['--no-install', 'mlrt', '--version'], dir).out, /^mlrt \d+\.\d+\.\d+/);
  const wasi = JSON.parse(ok('npx', ['--no-install', 'mlrt-wasi', 'predict', 'model.safetensors', 'one.json'], dir).out);
  assert.deepEqual(wasi.map(Math.fround), pred.output.map(Math.fround));
});

const CONSUMER_TS = `
import { createRuntime, simdSupported, MlrtError } from 'mlrt';
import type { Model, ModelInfo, Runtime, Inspection, MlrtErrorCode, Task, LayerWeights, TensorSpec, TensorResult, ThreadPoolDiagnostics, Encoder, EncoderAsyncFileSource } from 'mlrt';
import { verifyAprV1 } from 'mlrt/apr-crypto.mjs';
import { writeAprV1, randomForestPayload, kmeansPayload } from 'mlrt/apr-writer.mjs';
import type { TreeNode } from 'mlrt/apr-writer.mjs';

export async function main(bytes: Uint8Array): Promise<number> {
  const rt: Runtime = await createRuntime({ simd: simdSupported() ? 'auto' : false });
  const ins: Inspection = rt.inspect(bytes);
  const model: Model = rt.loadFromBytes(bytes, { expect: 'NeuralSequential', weightLayout: 'auto' });
  const info: ModelInfo = model.info;
  const task: Task = info.task;
  const out: Float32Array = model.predict(new Float32Array(info.inputSize));
  const batch: Float32Array = model.predictBatch([0, 1, 2], 1);
  const label: number = model.predictLabel(new Float32Array(info.inputSize));
  const labels: Uint32Array = model.predictLabels(new Float64Array(info.inputSize * 2), 2);
  const w: LayerWeights = model.layerWeights(0);
  const [input]: readonly TensorSpec[] = info.inputs;
  const dims = input.shape.map((d) => (typeof d === 'string' ? 2 : d));
  const results = model.run({ [input.name]: { data: new Float32Array(info.inputSize * 2), dims } });
  const y: TensorResult = results[info.outputs[0].name];
  const scores: Float32Array | undefined = y.type === 'float32' ? y.data : undefined;
  const ids = { type: 'int64', data: new BigInt64Array([101n, 2023n]), dims: [1, 2] } as const;
  const mask = { type: 'bool', data: Uint8Array.of(1, 1), dims: [1, 2] } as const;
  const feeds = { input_ids: ids, attention_mask: mask, token_type_ids: { type: 'int64', data: new Int32Array(2), dims: [1, 2] } } as const;
  const pool: ThreadPoolDiagnostics | null = rt.threadPool;
  const jobs = pool ? pool.completed.rows + pool.completed.slices + pool.wake() + pool.sleeping + pool.size : 0;
  const classCount: number = info.classCount ?? 0;
  const secure = await rt.load(bytes, { requireSignature: false });
  const part: EncoderAsyncFileSource = { byteLength: bytes.length, read: async (d, at) => { d.set(bytes.subarray(at, at + d.length)); return d.length; } };
  const pending: Promise<Encoder> = rt.loadEncoderAsync({ 'model.safetensors': part, 'config.json': new Blob(['{}']), 'tokenizer.json': new Response('{}'), 'vocab.txt': bytes });
  pending.catch(() => undefined); // (type-checked: these bytes are no encoder)
  const check = await verifyAprV1(bytes);
  try {
    rt.loadFromBytes(new Uint8Array(4));
  } catch (e) {
    if (e instanceof MlrtError) {
      const code: MlrtErrorCode = e.code;
      console.log(code, e.message);
    }
  }
  const leaf: TreeNode = { label: 3, nSamples: 1 };
  const forest = rt.loadFromBytes(writeAprV1({ modelType: 'RandomForest', payload: randomForestPayload({ trees: [leaf], nFeatures: 1 }) }));
  const km = writeAprV1({ modelType: 'KMeans', payload: kmeansPayload({ centroids: [[0, 1]], layout: 'legacy' }) });
  const classes: readonly number[] | undefined = forest.info.classes;
  model.dispose();
  secure.dispose();
  const none = model.run(feeds); // type-checked only (the MLP has none of these inputs)
  return Object.keys(none).length + (scores?.length ?? 0) + y.dims.length + jobs + classCount + (classes?.length ?? 0) + km.length + out.length + batch.length + label + labels.length + w.weight.length + ins.tensors.length + (check.signed ? 1 : 0) + task.length + rt.memoryBytes;
}
`;

test('TypeScript: the public API type-checks with --strict under moduleResolution bundler and node16; a misuse fails', () => {
  const dir = project('types');
  writeFileSync(path.join(dir, 'consumer.ts'), CONSUMER_TS);
  writeFileSync(path.join(dir, 'misuse.ts'), `import { createRuntime } from 'mlrt';\nconst rt = await createRuntime();\nrt.loadFromBytes(new Uint8Array(0)).predict('not numbers');\n`
    + `rt.loadFromBytes(new Uint8Array(0)).run({ input: { data: new Float64Array(1), dims: [1] } });\n`);
  const tsconfig = (resolution, files) => ({
    compilerOptions: { strict: true, noEmit: true, target: 'es2022', lib: ['es2022', 'dom'], skipLibCheck: false,
      module: resolution === 'bundler' ? 'esnext' : 'node16', moduleResolution: resolution, types: [] },
    files,
  });
  for (const resolution of ['bundler', 'node16']) {
    writeFileSync(path.join(dir, `tsconfig.${resolution}.json`), JSON.stringify(tsconfig(resolution, ['consumer.ts'])));
    ok(BIN('tsc'), ['-p', `tsconfig.${resolution}.json`], dir);
    writeFileSync(path.join(dir, `tsconfig.misuse-${resolution}.json`), JSON.stringify(tsconfig(resolution, ['misuse.ts'])));
    const bad = run(BIN('tsc'), ['-p', `tsconfig.misuse-${resolution}.json`], dir);
    assert.notEqual(bad.code, 0, `${resolution}: passing a string to predict type-checked`);
    assert.match(bad.out, /misuse\.ts\(3,\d+\): error TS2345: Argument of type 'string' is not assignable/);
    assert.match(bad.out, /misuse\.ts\(4,\d+\): error TS2322: Type 'Float64Array/, `${resolution}: run() took Float64Array data`);
  }
});

// ------------------------------------------------------------------ bundlers, in Chromium

// The app predicts on one thread, then on two (the page is cross-origin isolated: the worker
// program, wasm/threads-worker.mjs, must be where the bundle looks for it) and compares the bits.
const APP_JS = (wasmOption) => `
import { createRuntime, simdSupported } from 'mlrt';
${wasmOption.imports}
const out = document.getElementById('out');
try {
  const rt = await createRuntime(${wasmOption.arg});
  const bytes = new Uint8Array(await (await fetch('./model.safetensors')).arrayBuffer());
  const model = rt.loadFromBytes(bytes);
  const p = model.predict(new Float32Array(model.info.inputSize));
  const rows = Float32Array.from({ length: 64 * 784 }, (_, k) => (k % 97) / 97);
  const one = rt.build.relaxed ? await createRuntime({ relaxed: false }) : rt; // the threaded build is SIMD128
  const rt2 = await createRuntime({ threads: 2${wasmOption.threadsArg ?? ''} });
  const want = one.loadFromBytes(bytes).predictBatch(rows, 64);
  const same = rt2.loadFromBytes(bytes).predictBatch(rows, 64).every((v, k) => Object.is(v, want[k]));
  out.textContent = JSON.stringify({ ok: true, simd: rt.build.simd, outputs: p.length, sum: p.reduce((a, b) => a + b, 0),
    threads: rt2.build.threads, workerRows: rt2.threadPool?.completed.rows, same });
} catch (e) {
  out.textContent = JSON.stringify({ ok: false, error: String(e && e.stack || e) });
}
`;
const INDEX_HTML = (src) => `<!doctype html><meta charset="utf-8"><title>mlrt consumer</title><pre id="out">loading</pre><script type="module" src="${src}"></script>`;

/** Serves dir on 127.0.0.1, opens it in Chromium, returns what the page wrote into #out. */
async function runInChromium(dir) {
  const { existsSync } = await import('node:fs');
  const { CHROMIUM, CHROMIUM_ARGS } = await import('../web/page.mjs');
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);
  const http = await import('node:http');
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
  const requested = [];
  const server = http.createServer((req, res) => {
    const file = path.join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/\/$/, '/index.html'));
    requested.push(req.url);
    if (!file.startsWith(dir) || !existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream',
      'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' }); // SharedArrayBuffer: threads
    res.end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${server.address().port}/`);
    await page.waitForFunction(() => document.getElementById('out').textContent !== 'loading', null, { timeout: 30_000 });
    return { result: JSON.parse(await page.textContent('#out')), requested };
  } finally {
    await browser.close();
    server.close();
  }
}

test('Vite builds a browser app that imports mlrt; the .wasm is emitted as an asset from new URL(…, import.meta.url), the worker bundled; it predicts in Chromium, also on two threads', async () => {
  const dir = project('vite');
  mkdirSync(path.join(dir, 'public'), { recursive: true });
  copyFileSync(MODEL, path.join(dir, 'public/model.safetensors'));
  writeFileSync(path.join(dir, 'index.html'), INDEX_HTML('/main.js'));
  writeFileSync(path.join(dir, 'main.js'), APP_JS({ imports: '', arg: '' }));
  writeFileSync(path.join(dir, 'vite.config.mjs'), `export default { build: { target: 'es2022', outDir: 'dist' }, logLevel: 'warn' };\n`);
  ok(BIN('vite'), ['build'], dir);
  const dist = path.join(dir, 'dist');
  const assets = readdirSync(path.join(dist, 'assets'));
  assert.ok(assets.some((f) => /^mlrt-.*\.wasm$/.test(f)), `no mlrt.wasm asset in ${assets}`);
  assert.ok(assets.some((f) => /^threads-worker-.*\.js$/.test(f)), `no bundled worker in ${assets}`);
  const { result, requested } = await runInChromium(dist);
  assert.equal(result.ok, true, result.error);
  assert.deepEqual([result.simd, result.outputs, result.threads, result.workerRows, result.same], [true, 10, 2, 1, true]);
  assert.ok(Math.abs(result.sum - 1) < 1e-5);
  assert.ok(requested.some((u) => /\/assets\/mlrt-.*\.wasm$/.test(u)), 'the page fetched the emitted wasm');
});

test('esbuild builds the same app; the .wasm files are imported with its file loader and resolved with new URL(…, import.meta.url); it predicts in Chromium, also on two threads', async () => {
  // esbuild leaves new URL('./x.wasm', import.meta.url) inside a dependency untouched (it copies no
  // asset for it), so an esbuild app imports the wasm files: the file loader emits them. The worker
  // program is copied next to the bundle, with the module it imports.
  const dir = project('esbuild');
  const dist = path.join(dir, 'dist');
  mkdirSync(dist, { recursive: true });
  copyFileSync(MODEL, path.join(dist, 'model.safetensors'));
  writeFileSync(path.join(dist, 'index.html'), INDEX_HTML('./main.js'));
  writeFileSync(path.join(dir, 'main.js'), APP_JS({
    imports: `import simdWasm from 'mlrt/mlrt.wasm';\nimport scalarWasm from 'mlrt/mlrt-scalar.wasm';\nimport threadsWasm from 'mlrt/mlrt-threads.wasm';`,
    arg: `{ wasm: new URL(simdSupported() ? simdWasm : scalarWasm, import.meta.url) }`,
    threadsArg: ', threadsWasm: new URL(threadsWasm, import.meta.url)',
  }));
  for (const f of ['threads-worker.mjs', 'threads.mjs']) copyFileSync(path.join(dir, 'node_modules/mlrt/wasm', f), path.join(dist, f));
  ok(BIN('esbuild'), ['main.js', '--bundle', '--format=esm', '--target=es2022', '--outdir=dist', '--loader:.wasm=file',
    '--asset-names=[name]-[hash]', '--log-level=warning'], dir);
  assert.ok(readdirSync(dist).some((f) => /^mlrt-.*\.wasm$/.test(f)), 'esbuild emitted the wasm');
  const { result } = await runInChromium(dist);
  assert.equal(result.ok, true, result.error);
  assert.deepEqual([result.simd, result.outputs, result.threads, result.workerRows, result.same], [true, 10, 2, 1, true]);
});

// ------------------------------------------------------------------ workers

test('a worker importing mlrt builds with wrangler deploy --dry-run --outdir and answers under workerd', async () => {
  const dir = project('worker');
  writeFileSync(path.join(dir, 'worker.js'), `
import { createRuntime } from 'mlrt';
import wasm from 'mlrt/mlrt.wasm';
import model from './model.safetensors';
let m;
export default {
  async fetch(request) {
    m ??= (await createRuntime({ wasm })).loadFromBytes(new Uint8Array(model));
    const x = new Float32Array(await request.arrayBuffer());
    return Response.json({ outputs: Array.from(m.predict(x)), label: m.predictLabel(x) });
  },
};
`);
  copyFileSync(MODEL, path.join(dir, 'model.safetensors'));
  writeFileSync(path.join(dir, 'wrangler.toml'), `name = "mlrt-consumer"\nmain = "worker.js"\ncompatibility_date = "2026-04-26"\n\n[[rules]]\ntype = "Data"\nglobs = ["**/*.safetensors"]\nfallthrough = true\n`);
  const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', HOME: dir, XDG_CONFIG_HOME: path.join(dir, '.config') };
  ok(BIN('wrangler'), ['deploy', '--dry-run', '--outdir', 'out'], dir, { env });
  const out = path.join(dir, 'out');
  const built = readdirSync(out);
  assert.ok(built.includes('worker.js'), `wrangler wrote ${built}`);
  const { Miniflare } = await import('miniflare');
  const entryFirst = (a, b) => (b === 'worker.js') - (a === 'worker.js'); // the first module is the main one
  const modules = built.filter((f) => /\.(js|mjs|wasm|safetensors)$/.test(f)).sort(entryFirst).map((f) => ({
    type: f === 'worker.js' ? 'ESModule' : f.endsWith('.wasm') ? 'CompiledWasm' : f.endsWith('.safetensors') ? 'Data' : 'ESModule',
    path: path.join(out, f), contents: readFileSync(path.join(out, f)),
  }));
  const mf = new Miniflare({ modules, modulesRoot: out, compatibilityDate: '2026-04-26' });
  try {
    const res = await mf.dispatchFetch('http://127.0.0.1/predict', { method: 'POST', body: new Uint8Array(784 * 4) });
    const body = await res.json();
    assert.equal(body.outputs.length, 10);
    assert.ok(Number.isInteger(body.label));
  } finally {
    await mf.dispose();
  }
});
