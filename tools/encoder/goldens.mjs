// goldens.mjs — the committed encoder goldens (tests/encoder/, written by tests/gen/encoder.py), read
// for the tests, with the comparisons they state their tolerances in. See tests/encoder/README.md.
//
//   for (const c of goldens().cases) {
//     const files = await c.files();                  // the model folder, regenerated from the seed
//     for (const b of c.batches) ...                  // { ids, typeIds?, texts?, rows: [first, end) }
//     compare(got, c.f64, c.dim)                      // { maxAbs, maxRel, minCos }
//   }
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { makeFolder } from './folder.mjs';

export const GOLDEN_DIR = fileURLToPath(new URL('../../tests/encoder/', import.meta.url));

function readBin(file, Type) {
  const b = readFileSync(file);
  return new Type(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/**
 * The manifest with each case's embeddings loaded: case.f64 (Float64Array, the float64 reference),
 * case.f32 (Float32Array, torch's float32 forward), case.batches (the inputs in row order:
 * { ids: number[][], typeIds: number[][] | null, texts: string[] | null, first, end }), and
 * case.files() (a Promise of the model folder's files: makeFolder(case.folder.profile, case.folder)).
 */
export function goldens(dir = GOLDEN_DIR) {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const cases = manifest.cases.map((c) => {
    const batches = [];
    let row = 0;
    for (const key of c.inputs) {
      const inp = manifest.inputs[key];
      if (inp.batches) {
        for (const b of inp.batches) {
          batches.push({ name: `${key}/${b.name}`, ids: b.ids, typeIds: b.typeIds ?? null, texts: null, first: row, end: row + b.ids.length });
          row += b.ids.length;
        }
      } else {
        for (let i = 0; i < inp.ids.length; i += 8) {
          const ids = inp.ids.slice(i, i + 8);
          batches.push({ name: `${key}/${i}`, ids, typeIds: null, texts: inp.texts.slice(i, i + 8), first: row, end: row + ids.length });
          row += ids.length;
        }
      }
    }
    if (row !== c.rows) throw new Error(`encoder goldens: case ${c.name} has ${c.rows} rows, its inputs ${row}`);
    const { profile, ...opts } = c.folder;
    return {
      ...c,
      batches,
      f64: readBin(path.join(dir, c.f64), Float64Array),
      f32: readBin(path.join(dir, c.f32), Float32Array),
      files: () => makeFolder(profile, opts),
    };
  });
  return { manifest, cases };
}

/** models/wordnet/ goldens: { dim, queries: [{ text, ids, embedding: Float32Array, reference: Float64Array }] }. */
export function wordnetGoldens(dir = GOLDEN_DIR) {
  const j = JSON.parse(readFileSync(path.join(dir, 'wordnet.json'), 'utf8'));
  for (const q of j.queries) { q.embedding = Float32Array.from(q.embedding); q.reference = Float64Array.from(q.reference); }
  return j;
}

/** models/wordnet/'s files as loadEncoder takes them (file name -> Uint8Array). */
export function wordnetFolder() {
  const dir = fileURLToPath(new URL('../../models/wordnet/', import.meta.url));
  const names = ['model.safetensors', 'config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json',
    'vocab.txt', 'modules.json', '1_Pooling/config.json', 'sentence_bert_config.json'];
  return Object.fromEntries(names.map((n) => [n, new Uint8Array(readFileSync(path.join(dir, n)))]));
}

/**
 * got vs ref (flat [rows][dim]): maxAbs = max |got − ref|, maxRel = max |got − ref| / max(|ref|, 1e-3),
 * minCos = the smallest cosine between a row of got and the same row of ref (1 for two zero rows).
 * rows: [first, end) of ref to compare got with (got holds end − first rows).
 */
export function compare(got, ref, dim, first = 0, end = ref.length / dim) {
  let maxAbs = 0, maxRel = 0, minCos = 1, nan = false;
  for (let r = first; r < end; r++) {
    let dot = 0, ng = 0, nr = 0;
    for (let k = 0; k < dim; k++) {
      const a = got[(r - first) * dim + k], b = ref[r * dim + k], d = Math.abs(a - b);
      if (Number.isNaN(d)) nan = true;
      else if (d > maxAbs) maxAbs = d;
      maxRel = Math.max(maxRel, d / Math.max(Math.abs(b), 1e-3));
      dot += a * b; ng += a * a; nr += b * b;
    }
    const cos = ng === 0 && nr === 0 ? 1 : dot / Math.sqrt(ng * nr);
    if (Number.isNaN(cos)) nan = true;
    else if (cos < minCos) minCos = cos;
  }
  return nan ? { maxAbs: NaN, maxRel: NaN, minCos: NaN } : { maxAbs, maxRel, minCos };
}
