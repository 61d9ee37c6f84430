// words.mjs — the "Words" tab: a reverse dictionary. Type a description, see the WordNet words
// that mean it, ranked by the cosine between the description's embedding and each word's.
//
// Loaded the first time the tab opens: the encoder's files and the lemma index (listed under
// "words" in models/manifest.json) come from the IndexedDB cache or the network, with the same
// rules as the digit models (loader.mjs / cache.mjs: SHA-256 checked on every read, a corrupt
// entry evicted and fetched again, bytes that do not check out never stored). They then go to a
// Web Worker (words-worker.mjs) that runs mlrt, so typing never waits for a query: the page
// sends the latest text, 60 ms after the last keystroke, and only when no query is in flight.

import { loadCached } from './loader.mjs';
import { readIndex } from './lemma-index.mjs';
import { formatBytes, formatCount, formatMs } from './format.mjs';
import { $, MessageView, ProgressView, WordsView, setText } from './view.mjs';

const DEBOUNCE_MS = 60;
const TOP_K = 10;
const TIMING_WINDOW = 50;

/** A refusal by the words tab itself. */
class WordsError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'WordsError';
    this.code = code;
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : NaN;
};

/**
 * Sets up the tab. host: { cache(): FileCache | null, runtime(): Promise<{ bytes, build }> (the
 * .wasm the page runs and createRuntime's options for it), manifest(): Promise<manifest>,
 * manifestUrl, showCacheUsage() }.
 */
export function initWords(host) {
  const messages = new MessageView('w-');
  const progress = new ProgressView('w-');
  const view = new WordsView();
  const input = $('w-query');
  const state = {
    started: null, // the load's promise
    worker: null,
    ready: false,
    seq: 0, // last query id sent
    inFlight: false,
    pending: null, // text waiting for the worker
    shown: null, // text whose results are on the page
    timer: 0,
    timings: [],
  };
  document.body.dataset.wordsState = 'idle';

  async function fetchFile(url, name, use, n, total) {
    return loadCached(url, {
      cache: host.cache(),
      onProgress: progress.start(`Downloading ${name} (${n} of ${total})`),
      use,
    });
  }

  async function load() {
    document.body.dataset.wordsState = 'loading';
    messages.clearError();
    messages.info('Loading the encoder and the word index…');
    const t0 = performance.now();
    const manifest = await host.manifest();
    const spec = manifest?.words;
    if (!spec) throw new WordsError('NO_MANIFEST', 'models/manifest.json lists no "words" model');
    const base = new URL(spec.dir, host.manifestUrl);
    const names = [...spec.files, spec.index, spec.metrics];
    const runtime = await host.runtime();
    const files = {};
    const notes = [];
    const sources = new Set();
    let index = null, metrics = null, total = 0;
    for (const [i, name] of names.entries()) {
      // Each file is checked before it is stored: JSON parses, the index reads (its CRC-32,
      // sizes and words); the encoder as a whole is checked by the worker.
      const use = name === spec.index ? (b) => (index = readIndex(b))
        : name.endsWith('.json') ? (b) => JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(b))
          : (b) => b;
      const got = await fetchFile(new URL(name, base).href, name, use, i + 1, names.length);
      progress.done();
      sources.add(got.source);
      notes.push(...got.notes.map((note) => `${name}: ${note}`));
      total += got.bytes.length;
      if (name === spec.metrics) metrics = got.value;
      else files[name] = got.bytes;
    }
    const indexBytes = files[spec.index];
    delete files[spec.index];
    // The index is scored by mlrt's Q8 kernels. The relaxed-SIMD build quantizes their input to
    // 7 bits, which moves near-ties (held-out recall@10 -0.3 points); the SIMD128 build (int16)
    // ranks as exactly as the JavaScript loop, so the scan runs on that build.
    let scoreWasm = null;
    if (runtime.build.relaxed) {
      const got = await fetchFile(new URL('../wasm/mlrt.wasm', import.meta.url).href, 'mlrt.wasm', (b) => {
        if (!WebAssembly.validate(b)) throw new WordsError('WASM_INVALID', 'the server sent an invalid mlrt.wasm');
        return b;
      }, names.length + 1, names.length + 1);
      progress.done();
      sources.add(got.source);
      scoreWasm = got.bytes;
    }
    const downloadMs = performance.now() - t0;

    messages.info('Starting the encoder…');
    const worker = new Worker(new URL('words-worker.mjs', import.meta.url), { type: 'module' });
    const loaded = await new Promise((resolve, reject) => {
      worker.onmessage = ({ data }) => (data.type === 'loaded' ? resolve(data) : reject(new WordsError(data.code, data.message)));
      worker.onerror = (e) => reject(new WordsError('WORKER_FAILED', `the search worker did not start: ${e.message ?? 'error'}`));
      // Copies go to the worker; the cache keeps its own.
      const copy = (b) => b.slice().buffer;
      const transfer = {
        wasm: copy(runtime.bytes), scoreWasm: scoreWasm && copy(scoreWasm),
        files: Object.fromEntries(Object.entries(files).map(([k, v]) => [k, copy(v)])), index: copy(indexBytes),
      };
      worker.postMessage({ type: 'load', build: runtime.build, ...transfer },
        [transfer.wasm, transfer.index, ...Object.values(transfer.files), ...(scoreWasm ? [transfer.scoreWasm] : [])]);
    }).catch(async (e) => {
      worker.terminate();
      // Files that passed their own checks but do not make a working encoder together (an index
      // made with another model, weights the encoder refuses) leave the cache: the next visit
      // fetches them again. (NO_ENCODER is the runtime's lack, not the files'.)
      if (e.code !== 'NO_ENCODER' && host.cache()) {
        await Promise.all(names.map((name) => host.cache().delete(new URL(name, base).href).catch(() => {})));
      }
      throw e;
    });
    worker.onmessage = ({ data }) => onResult(data);
    worker.onerror = (e) => messages.fail(new WordsError('WORKER_FAILED', e.message ?? 'the search worker failed'));
    state.worker = worker;
    state.ready = true;

    const source = sources.size === 1 ? [...sources][0] : 'cache and network';
    const sourceEl = $('w-source');
    sourceEl.textContent = source;
    sourceEl.dataset.source = source;
    setText('w-size', `${formatBytes(total)} in ${names.length} files (index ${formatBytes(index.bytes)})`);
    showFacts(loaded, metrics, { downloadMs, source });
    host.showCacheUsage();
    messages.info([`Ready: ${formatCount(index.count)} words from ${source}.`, ...notes.map((n) => `Note: ${n}.`)].join(' '));
    input.disabled = false;
    document.body.dataset.wordsState = 'ready';
    if (input.value.trim()) schedule();
  }

  function showFacts({ info, tokenizer, build, index, ms }, metrics, { downloadMs, source }) {
    setText('w-model-summary', `a ${info.layers}-layer ${info.architecture ?? 'BERT'} sentence encoder trained on WordNet`);
    setText('w-fact-arch', `${info.architecture ?? 'BERT'} sentence encoder, trained in this repository on WordNet 3.0 glosses`);
    setText('w-fact-shape', `${info.layers} layers × ${info.dim} hidden, ${info.heads} heads${info.ffn ? `, FFN ${info.ffn}` : ''}; up to ${info.maxLength} tokens`);
    setText('w-fact-tokenizer', `WordPiece, ${formatCount(info.vocabSize ?? tokenizer.vocabSize)} tokens (bert-base-uncased)`);
    setText('w-fact-pooling', `${info.pooling} over the tokens${info.normalize ? ', L2-normalized: scores are cosines' : ''}`);
    setText('w-fact-weights', `${info.dtype}${info.weightBytes ? `, ${formatBytes(info.weightBytes)}` : ''}${info.unusedTensors?.length ? `; ${info.unusedTensors.length} unused tensors` : ''}`);
    setText('w-fact-index', `${formatCount(index.count)} words × ${index.dim} ${index.dtype}, ${formatBytes(index.bytes)}, embedded by ${index.generator}; scored by ${index.engine === 'mlrt' ? 'mlrt\'s Q8 kernels' : 'JavaScript'}`);
    const ev = metrics?.eval?.f32, bm = metrics?.bm25?.wordpiece;
    setText('w-fact-quality', ev ? `held-out definitions: the right word in the top 10 for ${(ev['recall@10'] * 100).toFixed(1)}%, first for ${(ev['recall@1'] * 100).toFixed(1)}%${bm ? ` (BM25: ${(bm['recall@10'] * 100).toFixed(1)}%)` : ''}` : '–');
    const name = (b) => (b.relaxed ? 'relaxed SIMD' : b.simd ? 'SIMD128' : 'scalar');
    setText('w-fact-build', `${name(build)}${index.build && name(index.build) !== name(build) ? ` (the index scan: ${name(index.build)})` : ''}, in a Web Worker`);
    setText('w-fact-load', `runtime ${formatMs(ms.runtime)}, encoder ${formatMs(ms.encoder)}, index ${formatMs(ms.index)}; files ${formatMs(downloadMs)} from ${source}`);
  }

  // ---- queries ----

  function schedule() {
    clearTimeout(state.timer);
    state.timer = setTimeout(send, DEBOUNCE_MS);
  }

  function send() {
    if (!state.ready) return;
    const text = input.value.trim();
    if (!text) {
      state.pending = null;
      state.shown = null;
      view.clear('Type a description to start.');
      view.latency.textContent = '–';
      delete view.results.dataset.query;
      return;
    }
    if (state.inFlight) {
      state.pending = text;
      return;
    }
    if (text === state.shown) return;
    state.inFlight = true;
    state.pending = null;
    state.sentAt = performance.now();
    state.worker.postMessage({ type: 'query', id: ++state.seq, text, k: TOP_K });
    state.sentText = text;
  }

  function onResult(data) {
    if (data.type !== 'result') return;
    state.inFlight = false;
    const roundTrip = performance.now() - state.sentAt;
    const text = state.sentText;
    if (data.error) {
      messages.fail(new WordsError(data.error.code, data.error.message), 'query: ');
    } else if (input.value.trim() === text || state.pending === null) {
      messages.clearError();
      view.showTokens(data.tokens);
      view.showResults(data.results);
      view.results.dataset.query = text;
      state.shown = text;
      const { tokenize, embed, search } = data.ms;
      const total = tokenize + embed + search;
      view.latency.textContent = `${formatMs(total)} for this query: tokens ${formatMs(tokenize)}, embedding ${formatMs(embed)}, `
        + `search of every word ${formatMs(search)} (${formatMs(roundTrip)} with the trip to the worker)`;
      view.latency.dataset.ms = String(total);
      state.timings.push({ embed: tokenize + embed, search, total });
      if (state.timings.length > TIMING_WINDOW) state.timings.shift();
      const m = (f) => formatMs(median(state.timings.map(f)));
      setText('w-fact-query', `${m((t) => t.total)} per query (median of ${state.timings.length}): tokens and embedding ${m((t) => t.embed)}, search ${m((t) => t.search)}`);
    }
    if (state.pending !== null) send();
  }

  // ---- tabs ----

  const tabs = { digits: $('tab-digits'), words: $('tab-words') };
  const panels = { digits: $('panel-digits'), words: $('panel-words') };

  function select(name, { focus = false } = {}) {
    for (const [key, tab] of Object.entries(tabs)) {
      const on = key === name;
      tab.setAttribute('aria-selected', String(on));
      tab.tabIndex = on ? 0 : -1;
      panels[key].hidden = !on;
      for (const p of document.querySelectorAll(`.masthead p[data-for="${key}"]`)) p.hidden = !on;
    }
    setText('demo-name', name === 'words' ? 'reverse dictionary' : 'digit demo');
    document.title = name === 'words' ? 'mlrt · a reverse dictionary in WebAssembly' : 'mlrt · digits and words in WebAssembly';
    document.body.dataset.tab = name;
    if (focus) tabs[name].focus();
    if (name === 'words') {
      state.started ??= load().catch((e) => {
        progress.done();
        host.showCacheUsage();
        document.body.dataset.wordsState = 'error';
        messages.fail(e);
        messages.info('The word search could not start. Reload to try again.');
        state.started = null;
      });
      if (!input.disabled) input.focus();
    }
  }

  const fromHash = () => (location.hash === '#words' ? 'words' : 'digits');
  addEventListener('hashchange', () => select(fromHash()));
  for (const [name, tab] of Object.entries(tabs)) {
    tab.addEventListener('click', (e) => {
      e.preventDefault();
      history.replaceState(null, '', `#${name}`);
      select(name);
    });
    tab.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
      e.preventDefault();
      const next = name === 'digits' ? 'words' : 'digits';
      history.replaceState(null, '', `#${next}`);
      select(next, { focus: true });
    });
  }

  input.addEventListener('input', schedule);
  for (const chip of document.querySelectorAll('[data-example]')) {
    chip.addEventListener('click', () => {
      input.value = chip.textContent.trim();
      schedule();
    });
  }
  select(fromHash());
}
