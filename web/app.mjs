// app.mjs — the demo: wires the drawing pad, the runtime, the models and the cache; the
// "Words" tab (words.mjs) shares the runtime's .wasm, the manifest and the cache.
//
// Start-up: open the IndexedDB cache -> read models/manifest.json -> load the runtime
// (.wasm) and the default model, each from the cache when it holds a verified copy,
// else from the network -> ready. Then, in the background, files whose cache entry was
// last checked more than REVALIDATE_AFTER_MS ago are revalidated with a conditional
// GET; "Check for updates" does the same at once for every file in use.

import { createRuntime, relaxedSimdSupported, simdSupported } from '../wasm/mlrt.mjs';
import { openCache } from './cache.mjs';
import { loadCached, LoadError, revalidate } from './loader.mjs';
import { preprocess, SIDE } from './preprocess.mjs';
import { DrawingPad } from './pad.mjs';
import { describeModel, formatBytes, formatCount, formatMs } from './format.mjs';
import { $, ResultView, ProgressView, MessageView, drawPreview, setText } from './view.mjs';
import { initWords } from './words.mjs';

const MANIFEST_URL = new URL('models/manifest.json', import.meta.url).href;
const DEFAULT_CLASSES = [...'0123456789'];
const REVALIDATE_AFTER_MS = 10 * 60 * 1000;
const TIMING_WINDOW = 50; // predictions averaged in the facts panel

/** A refusal by the page itself (the runtime's own are MlrtError). */
class DemoError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'DemoError';
    this.code = code;
  }
}

const state = {
  cache: null,
  cacheProblem: '',
  rt: null,
  wasm: null, // { url, file, source, size, bytes, options }
  manifest: null, // models/manifest.json
  classes: DEFAULT_CLASSES,
  models: [], // from the manifest: { url, label, file }
  model: null, // the mlrt Model in use
  current: null, // { name, url, source, size, loadMs, totalMs }
  loadSeq: 0,
  timings: [],
};

const messages = new MessageView();
const progress = new ProgressView();
const result = new ResultView(state.classes);
const preview = $('preview');
const select = $('model-select');
const pad = new DrawingPad($('pad'), { onChange: schedulePrediction });

// ---- prediction, at most once per animation frame ----

let frame = 0;

function schedulePrediction() {
  if (!frame) frame = requestAnimationFrame(predictNow);
}

function predictNow() {
  frame = 0;
  const t0 = performance.now();
  const input = pad.isEmpty ? null : preprocess(pad.ink(), pad.width, pad.height);
  const t1 = performance.now();
  drawPreview(preview, input);
  if (!input) return result.clear('Draw a digit to start');
  if (!state.model) return result.clear('No model loaded');
  let out;
  try {
    out = state.model.predict(input);
  } catch (e) {
    messages.fail(e, 'predict: ');
    return result.clear('Prediction failed');
  }
  const t2 = performance.now();
  result.show(toProbabilities(out));
  state.timings.push(t2 - t1);
  if (state.timings.length > TIMING_WINDOW) state.timings.shift();
  const mean = state.timings.reduce((a, b) => a + b, 0) / state.timings.length;
  setText('fact-predict', `${formatMs(mean)} per digit (mean of ${state.timings.length}); preprocessing ${formatMs(t1 - t0)}`);
}

/** The model's outputs as probabilities: kept when they already are, else softmax. */
function toProbabilities(out) {
  let sum = 0;
  let ok = true;
  for (const v of out) {
    sum += v;
    if (!(v >= 0 && v <= 1)) ok = false;
  }
  if (ok && Math.abs(sum - 1) < 1e-3) return out;
  const max = Math.max(...out);
  const exp = Array.from(out, (v) => Math.exp(v - max));
  const total = exp.reduce((a, b) => a + b, 0);
  return exp.map((v) => v / total);
}

// ---- runtime and models ----

// The builds, best first: each needs what the one after it needs, and more.
const BUILDS = {
  relaxed: { file: 'mlrt-relaxed.wasm', label: 'relaxed SIMD', options: { simd: true, relaxed: true }, ok: relaxedSimdSupported },
  simd: { file: 'mlrt.wasm', label: 'SIMD128', options: { simd: true, relaxed: false }, ok: simdSupported },
  scalar: { file: 'mlrt-scalar.wasm', label: 'scalar', options: { simd: false }, ok: () => true },
};
const ORDER = Object.keys(BUILDS);

async function loadRuntime() {
  // ?build=simd or ?build=scalar steps down from the best build this browser runs, to compare them.
  const asked = new URLSearchParams(location.search).get('build');
  const best = ORDER.find((k) => BUILDS[k].ok());
  const id = asked in BUILDS && ORDER.indexOf(asked) > ORDER.indexOf(best) ? asked : best;
  const { file, options } = BUILDS[id];
  const url = new URL(`../wasm/${file}`, import.meta.url).href;
  const got = await loadCached(url, {
    cache: state.cache,
    onProgress: progress.start(`Downloading ${file}`),
    use: (bytes) => createRuntime({ wasm: bytes, ...options }),
  });
  progress.done();
  state.rt = got.value;
  state.wasm = { url, file, source: got.source, size: got.bytes.length, bytes: got.bytes, options };
  showBuild(id, best);
  // One drawing is one row: it runs on this thread. Batches could take every core, which needs the
  // page cross-origin isolated (web/server.mjs sends COOP and COEP).
  setText('fact-threads', globalThis.crossOriginIsolated
    ? `1 per drawing; up to ${navigator.hardwareConcurrency ?? 1} for batches (cross-origin isolated)`
    : '1 (this page is not cross-origin isolated: no shared memory for workers)');
  const notes = got.notes.length ? ` (${got.notes.join('; ')})` : '';
  setText('fact-wasm', `${file}, ${formatBytes(got.bytes.length)}, from ${got.source}${notes}`);
}

// "relaxed SIMD · try SIMD128 · try scalar": the build running, then links to the others this browser runs.
function showBuild(id, best) {
  const dd = $('fact-build');
  const link = (href, label) => Object.assign(document.createElement('a'), { href, textContent: label });
  const parts = [BUILDS[id].label];
  if (id === 'scalar' && best === 'scalar') parts[0] += ' (this browser has no WebAssembly SIMD128)';
  for (const other of ORDER.slice(ORDER.indexOf(best))) {
    if (other === id) continue;
    parts.push(' · ', link(other === best ? './' : `?build=${other}`, `try ${BUILDS[other].label}`));
  }
  dd.replaceChildren(...parts);
}

// Builds a model from bytes; refuses models that cannot read a 28 x 28 drawing.
function modelFromBytes(bytes) {
  const t0 = performance.now();
  const model = state.rt.loadFromBytes(bytes);
  const loadMs = performance.now() - t0;
  const { inputSize, outputSize } = model.info;
  if (inputSize !== SIDE * SIDE || outputSize !== state.classes.length) {
    model.dispose();
    throw new DemoError('INCOMPATIBLE_MODEL', `this page feeds ${SIDE * SIDE} inputs (28 × 28) and shows ${state.classes.length} classes; the model has ${inputSize} inputs and ${outputSize} outputs`);
  }
  return { model, loadMs };
}

const fileName = (url) => decodeURIComponent(new URL(url).pathname.split('/').pop() || url);

async function loadModelFromUrl(url, name = fileName(url)) {
  const seq = ++state.loadSeq;
  const t0 = performance.now();
  messages.clearError();
  messages.info(`Loading ${name}…`);
  try {
    const got = await loadCached(url, {
      cache: state.cache,
      onProgress: progress.start(`Downloading ${name}`),
      use: modelFromBytes,
    });
    if (seq !== state.loadSeq) return got.value.model.dispose(); // a newer load won
    activate({ ...got.value, name, url, source: got.source, size: got.bytes.length, totalMs: performance.now() - t0 }, got.notes);
  } catch (e) {
    if (seq === state.loadSeq) refuse(e, name);
  } finally {
    if (seq === state.loadSeq) progress.done();
  }
}

async function loadModelFromFile(file) {
  const seq = ++state.loadSeq;
  const t0 = performance.now();
  messages.clearError();
  messages.info(`Reading ${file.name}…`);
  progress.done();
  try {
    const bytes = new Uint8Array(await file.arrayBuffer());
    const built = modelFromBytes(bytes);
    if (seq !== state.loadSeq) return built.model.dispose();
    activate({ ...built, name: file.name, url: null, source: 'your file', size: bytes.length, totalMs: performance.now() - t0 }, []);
  } catch (e) {
    if (seq === state.loadSeq) refuse(e, file.name);
  }
}

// A model failed to load: say why, keep the previous model running.
function refuse(err, name) {
  messages.fail(err, err instanceof LoadError ? '' : `${name}: `); // a LoadError names its URL
  messages.info(state.model ? `Still using ${state.current.name}.` : 'No model loaded.');
  syncSelect();
}

function activate(entry, notes) {
  state.model?.dispose();
  state.model = entry.model;
  state.current = entry;
  state.timings = [];
  const info = entry.model.info;
  const source = $('model-source');
  source.textContent = entry.source;
  source.dataset.source = entry.source;
  setText('model-size', formatBytes(entry.size));
  setText('fact-file', entry.name);
  setText('fact-format', `${info.format}, ${info.dtype} weights`);
  setText('fact-kind', info.kind);
  setText('model-summary', describeModel(info));
  setText('fact-layers', info.layers?.map((l) => `${l.inputs}→${l.outputs} ${l.activation}`).join(', ') || '–');
  setText('fact-params', formatCount(info.params));
  setText('fact-load', `${formatMs(entry.loadMs)} to parse and validate; ${formatMs(entry.totalMs)} in all, from ${entry.source}`);
  setText('fact-predict', '–');
  messages.info([`Loaded ${entry.name} from ${entry.source}.`, ...notes.map((n) => `Note: ${n}.`)].join(' '));
  document.body.dataset.model = entry.name;
  syncSelect();
  showCacheUsage();
  schedulePrediction();
}

// The picker shows the model in use; a model from a file or a URL gets its own entry.
function syncSelect() {
  const url = state.current?.url;
  let custom = select.querySelector('option[value="custom"]');
  if (state.current && !state.models.some((m) => m.url === url)) {
    custom ??= select.appendChild(new Option('', 'custom'));
    custom.textContent = `Yours: ${state.current.name}`;
    select.value = 'custom';
  } else {
    custom?.remove();
    if (url) select.value = url;
  }
}

async function loadManifest() {
  const response = await fetch(MANIFEST_URL).catch(() => null);
  if (!response?.ok) {
    throw new DemoError('NO_MANIFEST', `cannot read ${MANIFEST_URL} (${response ? `HTTP ${response.status}` : 'network error'}); open a model file instead`);
  }
  const manifest = await response.json();
  state.manifest = manifest;
  if (Array.isArray(manifest.classes) && manifest.classes.length) state.classes = manifest.classes.map(String);
  result.setClasses(state.classes);
  state.models = (manifest.models ?? []).map((m) => ({ url: new URL(m.file, MANIFEST_URL).href, label: m.label ?? m.file, file: m.file }));
  select.replaceChildren(...state.models.map((m) => new Option(m.label, m.url)));
  const chosen = state.models.find((m) => m.file === manifest.default) ?? state.models[0];
  if (chosen) select.value = chosen.url;
  return chosen;
}

// ---- the cache ----

async function showCacheUsage() {
  const show = (text) => ['cache-size', 'w-cache-size'].forEach((id) => setText(id, text));
  if (!state.cache) return show(`off (${state.cacheProblem})`);
  try {
    const { count, bytes } = await state.cache.usage();
    show(count ? `${formatBytes(bytes)} in ${count} file${count === 1 ? '' : 's'}` : 'empty');
  } catch (e) {
    show(`unreadable (${e.message})`);
  }
}

async function clearCache() {
  if (!state.cache) return messages.info(`The cache is off: ${state.cacheProblem}.`);
  await state.cache.clear();
  await showCacheUsage();
  messages.info('Cache cleared: the next visit downloads the runtime and the model again.');
}

/** Revalidates the files in use; with onlyStale, only those not checked recently. */
async function checkForUpdates({ onlyStale = false } = {}) {
  if (!state.cache) return messages.info('No cache in use: every visit loads from the network.');
  const targets = [{
    url: state.wasm.url,
    name: state.wasm.file,
    use: (bytes) => {
      if (!WebAssembly.validate(bytes)) throw new DemoError('WASM_INVALID', 'the server sent an invalid .wasm');
    },
  }];
  if (state.current?.url) {
    targets.push({ url: state.current.url, name: state.current.name, use: (bytes) => modelFromBytes(bytes).model.dispose() });
  }
  const lines = [];
  let checked = 0;
  for (const t of targets) {
    const meta = await state.cache.meta(t.url);
    if (!meta || (onlyStale && Date.now() - meta.checkedAt < REVALIDATE_AFTER_MS)) continue;
    checked++;
    try {
      const r = await revalidate(t.url, { cache: state.cache, use: t.use });
      if (r.status !== 'updated') continue;
      if (t.url === state.wasm.url) {
        lines.push(`${t.name} changed on the server and is cached; reload to use it.`);
      } else if (t.url === state.current?.url) {
        activate({ ...modelFromBytes(r.bytes), name: t.name, url: t.url, source: 'network (updated)', size: r.bytes.length, totalMs: 0 }, []);
        lines.push(`${t.name} changed on the server: updated and reloaded.`);
      }
    } catch (e) {
      lines.push(e.code === 'NETWORK_ERROR' ? `Offline: keeping the cached ${t.name}.` : `${t.name}: ${e.code ?? 'ERROR'} ${e.message}; keeping the cached copy.`);
    }
  }
  if (!checked && onlyStale) return;
  messages.info(lines.length ? lines.join(' ') : `Up to date: checked ${checked} file${checked === 1 ? '' : 's'} with the server.`);
  await showCacheUsage();
}

// ---- offline shell ----

function registerServiceWorker() {
  if (!('serviceWorker' in navigator)) return setText('fact-offline', 'unavailable (no service workers here)');
  navigator.serviceWorker.register(new URL('sw.js', import.meta.url)).then(
    () => navigator.serviceWorker.ready.then(() => setText('fact-offline', 'ready: reloads work without a network')),
    (e) => setText('fact-offline', `unavailable (${e.message})`),
  );
}

// ---- controls ----

function wireControls() {
  $('clear').addEventListener('click', () => pad.clear());
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !e.target.closest?.('input, select, textarea')) pad.clear();
  });

  select.addEventListener('change', () => {
    const m = state.models.find((x) => x.url === select.value);
    if (m) loadModelFromUrl(m.url, m.file);
  });

  const fileInput = $('file-input');
  $('open-file').addEventListener('click', () => fileInput.click());
  fileInput.addEventListener('change', () => {
    if (fileInput.files[0]) loadModelFromFile(fileInput.files[0]);
    fileInput.value = '';
  });

  $('url-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $('model-url').value.trim();
    let url;
    try {
      url = new URL(text, location.href);
      if (!/^https?:$/.test(url.protocol)) throw new TypeError('only http: and https: URLs');
    } catch (err) {
      return messages.fail(new DemoError('BAD_URL', `"${text}" is not a model URL (${err.message})`));
    }
    loadModelFromUrl(url.href);
  });

  const busy = (button, fn) => async () => {
    button.disabled = true;
    try {
      await fn();
    } catch (e) {
      messages.fail(e);
    } finally {
      button.disabled = false;
    }
  };
  const check = $('check-updates');
  check.addEventListener('click', busy(check, () => checkForUpdates()));
  const clearButton = $('clear-cache');
  clearButton.addEventListener('click', busy(clearButton, clearCache));

  // Drag and drop a model file anywhere on the page.
  const overlay = $('drop-overlay');
  const hasFiles = (e) => e.dataTransfer?.types?.includes('Files');
  document.addEventListener('dragenter', (e) => {
    if (hasFiles(e)) overlay.hidden = false;
  });
  document.addEventListener('dragover', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
  });
  document.addEventListener('dragleave', (e) => {
    if (!e.relatedTarget) overlay.hidden = true;
  });
  document.addEventListener('drop', (e) => {
    overlay.hidden = true;
    if (!hasFiles(e)) return;
    e.preventDefault();
    const file = e.dataTransfer.files[0];
    if (file) loadModelFromFile(file);
  });
}

// ---- start ----

// What the words tab waits for: settled by main() below.
const deferred = () => {
  let resolve, reject;
  const promise = new Promise((ok, fail) => { resolve = ok; reject = fail; });
  promise.catch(() => {}); // the words tab reports it when it asks
  return { promise, resolve, reject };
};
const cacheOpened = deferred(), manifestRead = deferred(), runtimeLoaded = deferred();

async function main() {
  wireControls();
  registerServiceWorker();
  initWords({
    cache: () => state.cache,
    manifestUrl: MANIFEST_URL,
    manifest: async () => {
      await cacheOpened.promise;
      return manifestRead.promise;
    },
    runtime: async () => {
      await runtimeLoaded.promise;
      return { bytes: state.wasm.bytes, build: state.wasm.options };
    },
    showCacheUsage,
  });
  try {
    state.cache = await openCache();
  } catch (e) {
    state.cacheProblem = e.message;
  }
  cacheOpened.resolve();
  showCacheUsage();

  let chosen = null;
  try {
    chosen = await loadManifest();
    manifestRead.resolve(state.manifest);
  } catch (e) {
    manifestRead.reject(e);
    messages.fail(e);
  }
  try {
    await loadRuntime();
    runtimeLoaded.resolve();
  } catch (e) {
    runtimeLoaded.reject(e);
    progress.done();
    document.body.dataset.state = 'error';
    return messages.fail(e, 'The runtime did not load: ');
  }
  if (chosen) await loadModelFromUrl(chosen.url, chosen.file);
  document.body.dataset.state = 'ready';
  // Revalidate in the background, once the page is usable.
  setTimeout(() => checkForUpdates({ onlyStale: true }).catch(() => {}), 500);
}

main();
