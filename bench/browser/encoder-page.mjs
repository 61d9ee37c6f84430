// The browser half of bench/encoder-browser.mjs: one runtime per fresh page, measured as bench/encoder.mjs
// measures in Node: the model's bytes fetched before the clock starts, cold start from the runtime's
// import to the first embedding (T = 16), then the median latency of single texts at T = 16 and T = 128,
// each after a warm-up of calls for a while (Chromium tiers onnxruntime-web's 14 MB module up over
// seconds: its T = 16 call took 38-43 ms after 0.5 s of calls and 14 ms after 6 s).
import { encoderFeeds } from '/tools/encoder/feeds.mjs';
import { median } from '../median.mjs';

const now = () => performance.now();
const DIR = '/build/bench-encoder/minilm/';
const SMALL = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt', 'modules.json',
  '1_Pooling/config.json', 'sentence_bert_config.json'];

const fetchBytes = async (name) => {
  const r = await fetch(DIR + name);
  if (!r.ok) throw new Error(`${DIR + name}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
};

// id -> { files (fetched before the clock), start(files) -> { embed(ids) -> Promise<Float32Array>, build } }
const RUNTIMES = {
  'mlrt-simd': mlrt({ relaxed: false }, 'model.safetensors'),
  'mlrt-relaxed': mlrt({ relaxed: true }, 'model.safetensors'),
  'mlrt-q8-simd': mlrt({ relaxed: false }, 'model.q8.apr'),
  'mlrt-q8-relaxed': mlrt({ relaxed: true }, 'model.q8.apr'),
  'ort-1t': ort('model.onnx'),
  'ort-q8-1t': ort('model-q8.onnx'),
};

function mlrt(options, weights) {
  return {
    async files() {
      const files = Object.fromEntries(await Promise.all(SMALL.map(async (n) => [n, await fetchBytes(n)])));
      files[weights === 'model.q8.apr' ? 'model.apr' : weights] = await fetchBytes(weights);
      if (weights === 'model.q8.apr') delete files['model.safetensors'];
      return files;
    },
    async start(files) {
      const { createRuntime } = await import('/wasm/mlrt.mjs');
      const rt = await createRuntime({ threads: 1, ...options });
      if (options.relaxed && !rt.build.relaxed) throw new Error('this browser runs no relaxed SIMD');
      const enc = rt.loadEncoder(files);
      return { embed: async (ids) => enc.embedTokens({ ids }), build: `${rt.build.relaxed ? 'relaxed SIMD' : rt.build.simd ? 'SIMD128' : 'scalar'}, ${enc.info.dtype}` };
    },
  };
}

function ort(file) {
  return {
    files: async () => ({ onnx: await fetchBytes(file) }),
    async start(files) {
      const o = await import('/node_modules/onnxruntime-web/dist/ort.min.mjs');
      o.env.wasm.numThreads = 1;
      o.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
      o.env.logLevel = 'error';
      const s = await o.InferenceSession.create(files.onnx, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
      const embed = async (ids) => (await s.run(encoderFeeds(o.Tensor, ids))).sentence_embedding.data;
      return { embed, build: `onnxruntime-web ${o.env.versions?.web ?? ''}, 1 thread` };
    },
  };
}

globalThis.benchEncoder = async (id, { ids16, ids128, iters16, iters128, warm16, warm128 }) => {
  const r = RUNTIMES[id];
  const files = await r.files(); // the model's bytes are in memory before the clock starts
  const t0 = now();
  const h = await r.start(files);
  const first = await h.embed([ids16[0]]);
  const coldMs = now() - t0;
  const latency = async (ids, iters, warmMs) => {
    const tw = now();
    for (let k = 0; now() - tw < warmMs || k < 5; k++) await h.embed([ids[k % ids.length]]);
    const t = [];
    for (let k = 0; k < iters; k++) {
      const a = now();
      await h.embed([ids[k % ids.length]]);
      t.push(now() - a);
    }
    return median(t);
  };
  const t16 = await latency(ids16, iters16, warm16), t128 = await latency(ids128, iters128, warm128);
  return { coldMs, t16, t128, build: h.build, first: Array.from(first.slice(0, 4)) };
};
