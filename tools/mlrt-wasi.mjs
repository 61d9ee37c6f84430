#!/usr/bin/env node
// Runs the WASI build of the mlrt CLI (wasm/mlrt-wasi.wasm) under Node's node:wasi.
//   npx mlrt-wasi inspect model.safetensors
//   npx mlrt-wasi predict model.bin input.json
//   npx mlrt-wasi tokenize tokenizer.json "some text"
//   npx mlrt-wasi embed model-folder --text "some text" --output npy --out v.npy
// Files are reachable through a preopen of the current directory (and of each file's
// directory when given by absolute path), so the sandbox sees only what it is handed.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import process from 'node:process';
import { WASI } from 'node:wasi';

const args = process.argv.slice(2);
const preopens = { '/cwd': process.cwd() };
const isText = (i) => args[0] === 'tokenize' && i === 2 && args[2] !== '--input'; // mlrt tokenize TOK TEXT
const VALUES = new Set(['--text', '--output', '--prompt']); // options whose value is not a path
const mapped = args.map((a, i) => {
  if (i === 0 || a.startsWith('-') || isText(i) || VALUES.has(args[i - 1])) return a;
  const abs = path.resolve(a);
  const dir = path.dirname(abs);
  const key = `/d${Object.keys(preopens).length}`;
  preopens[key] = dir;
  return `${key}/${path.basename(abs)}`;
});

const wasi = new WASI({ version: 'preview1', args: ['mlrt', ...mapped], env: {}, preopens, returnOnExit: true });
const wasm = await WebAssembly.compile(await readFile(new URL('../wasm/mlrt-wasi.wasm', import.meta.url)));
const instance = await WebAssembly.instantiate(wasm, wasi.getImportObject());
process.exitCode = wasi.start(instance);
