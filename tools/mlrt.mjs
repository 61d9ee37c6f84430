#!/usr/bin/env node
// mlrt: inspect, convert, sign/encrypt and run model files from the command line.
//   mlrt inspect FILE [--json] [--public-key PUBFILE]
//   mlrt convert IN OUT [--apr-version 1|2] [--quantize q8|q4] [--compress lz4|zstd|zstd-max]
//                [--embeddings f32|q8] (IN a BERT, MPNet or DistilBERT encoder's folder: an .apr v2 as `apr import --arch bert` writes it)
//                [--sign KEYFILE] [--encrypt-password PW | --password-file F] [--recipient PUBFILE]
//                [--name NAME] [--description TEXT] [--password PW] [--key KEYFILE] [--public-key PUBFILE]
//   mlrt keygen [--type ed25519|x25519] --out NAME
//   mlrt predict FILE INPUT|- [--password PW] [--key KEYFILE] [--public-key PUBFILE]
//   mlrt tokenize TOKENIZER TEXT | --input FILE [--pair TEXT] [--max-length N]
//   mlrt embed MODEL --text TEXT | --input FILE|- [--output json|f32|npy] [--out OUTFILE]
//   mlrt search INDEX QUERY | --input FILE [--model DIR] [--k N] [--json]
// Exit codes: 0 success, 1 error (bad file, failed check), 2 usage error.
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { open, readFile, writeFile, chmod } from 'node:fs/promises';
import process from 'node:process';
import { createRuntime, MlrtError } from '../wasm/mlrt.mjs';
import { crc32 } from '../wasm/crc32.mjs';
import * as aprCrypto from '../wasm/apr-crypto.mjs';
import { modelToApr, AprWriteError } from './apr/writer.mjs';
import { encoderToApr } from './apr/encoder.mjs';

const USAGE = `usage:
  mlrt inspect FILE | DIR [--json] [--public-key PUBFILE]   (DIR: a sentence encoder's folder)
  mlrt convert IN OUT [--apr-version 1|2] [--quantize q8|q4] [--compress lz4|zstd|zstd-max]
               [--sign KEYFILE] [--encrypt-password PW | --password-file F] [--recipient PUBFILE]
               [--name NAME] [--description TEXT]
               [--password PW] [--key KEYFILE] [--public-key PUBFILE]   (to read IN)
  mlrt convert FOLDER OUT.apr [--quantize q8] [--embeddings f32|q8] [--name NAME]
               (FOLDER: a BERT, MPNet or DistilBERT encoder's config.json and model.safetensors; its tokenizer and
                sentence-transformers files stay beside the .apr)
  mlrt keygen [--type ed25519|x25519] --out NAME      (writes NAME.key, mode 0600, and NAME.pub)
  mlrt predict FILE INPUT|- [--output json|f32|npy] [--out OUTFILE] [--password PW] [--key KEYFILE] [--public-key PUBFILE]
  mlrt tokenize TOKENIZER TEXT | --input FILE [--pair TEXT] [--max-length N]
               (TOKENIZER: a tokenizer.json, a vocab.txt or a model folder; prints {"ids":[...],"tokens":[...]}
                per text, one line each; --input FILE: one text per line)
  mlrt embed MODEL --text TEXT | --input FILE|- [--output json|f32|npy] [--out OUTFILE]
               [--prompt TEXT | --prompt-name NAME]
               (MODEL: a sentence encoder's folder (model.safetensors or model.apr, config.json,
                tokenizer.json, sentence-transformers' modules.json, 1_Pooling/, ...), or its .apr or
                .safetensors file with those files beside it; one embedding per text, --input: one per
                line. json: an array of n arrays of dim numbers; f32: raw little-endian n x dim; npy: (n, dim).
                --prompt / --prompt-name: a text, or one of the model's prompts, before every text; by default
                the model's default prompt (config_sentence_transformers.json); --prompt '' for none)
  mlrt search INDEX QUERY | --input FILE [--model DIR] [--k N] [--json]
               (INDEX: a lemma index, e.g. build/wordnet/lemmas.q8.index; the encoder's folder is
                --model DIR, by default INDEX's folder; the top k words (10) with their cosine)
  mlrt --version
INPUT: a JSON array (one input) or array of arrays (a batch), or raw little-endian float32 values.
--output json (default): each row's outputs and label; f32: the outputs as raw little-endian float32,
n x outputs; npy: the same as a NumPy .npy file of shape (n, outputs). --out writes to OUTFILE.`;

class UsageError extends Error {}
class CliError extends Error {}

// ------------------------------------------------------------------ arguments

// Options each command takes: name -> true when it takes a value.
const COMMANDS = {
  inspect: { args: ['FILE'], options: { json: false, 'public-key': true } },
  convert: {
    args: ['IN', 'OUT'],
    options: { 'apr-version': true, quantize: true, embeddings: true, compress: true, sign: true, 'encrypt-password': true, 'password-file': true,
      recipient: true, name: true, description: true, password: true, key: true, 'public-key': true },
  },
  keygen: { args: [], options: { type: true, out: true } },
  predict: { args: ['FILE', 'INPUT'], options: { password: true, key: true, 'public-key': true, output: true, out: true } },
  tokenize: { args: ['TOKENIZER', 'TEXT'], minArgs: 1, options: { input: true, pair: true, 'max-length': true } },
  embed: { args: ['MODEL'], options: { text: true, input: true, output: true, out: true, prompt: true, 'prompt-name': true } },
  search: { args: ['INDEX', 'QUERY'], minArgs: 1, options: { input: true, model: true, k: true, json: false } },
};

function parseArgs(argv) {
  const [command, ...rest] = argv;
  const spec = COMMANDS[command];
  if (!spec) throw new UsageError(command ? `unknown command '${command}'` : 'no command given');
  const positional = [], options = {};
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '-' || !a.startsWith('-')) { positional.push(a); continue; }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    if (!a.startsWith('--') || !(name in spec.options)) throw new UsageError(`${command}: unknown option '${a}'`);
    if (name in options) throw new UsageError(`${command}: --${name} given twice`);
    if (!spec.options[name]) {
      if (eq >= 0) throw new UsageError(`${command}: --${name} takes no value`);
      options[name] = true;
    } else if (eq >= 0) options[name] = a.slice(eq + 1);
    else if (i + 1 < rest.length) options[name] = rest[++i];
    else throw new UsageError(`${command}: --${name} needs a value`);
  }
  if (positional.length > spec.args.length || positional.length < (spec.minArgs ?? spec.args.length)) {
    throw new UsageError(`${command}: expected ${spec.args.join(' ') || 'no arguments'}, got ${positional.length} argument(s)`);
  }
  return { command, positional, options };
}

function choice(options, name, allowed) {
  const v = options[name];
  if (v !== undefined && !allowed.includes(v)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, got '${v}'`);
  return v;
}

// ------------------------------------------------------------------ files and keys

async function readBytes(path, what) {
  try {
    return new Uint8Array(path === '-' ? readFileSync(0) : await readFile(path)); // '-': stdin
  } catch (e) {
    throw new CliError(`cannot read ${what} '${path}': ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
  }
}

async function readKey(path, what) {
  return aprCrypto.parseKeyFile(await readBytes(path, what));
}

/** What rt.load needs to open IN: trusted public key, password, recipient secret key. */
async function loadOptions(options) {
  const o = {};
  if (options['public-key'] !== undefined) o.publicKey = await readKey(options['public-key'], 'public key');
  if (options.password !== undefined) o.password = options.password;
  if (options.key !== undefined) o.recipientSecretKey = await readKey(options.key, 'secret key');
  return o;
}

async function loadModel(rt, path, options) {
  return rt.load(await readBytes(path, 'model file'), await loadOptions(options));
}

// ------------------------------------------------------------------ inspect

const hex32 = (v) => `0x${(v >>> 0).toString(16).padStart(8, '0')}`;
const ascii = (b) => String.fromCharCode(...b);

/** The stored and recomputed CRCs of an .apr file (null for other formats). */
function checksums(bytes) {
  const magic = bytes.length >= 4 ? ascii(bytes.subarray(0, 4)) : '';
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const check = (name, stored, computed) => ({ name, stored: hex32(stored), computed: hex32(computed), ok: stored === computed });
  if (magic === 'APRN' && bytes.length >= 36) {
    return [check('file', dv.getUint32(bytes.length - 4, true), crc32(bytes.subarray(0, bytes.length - 4)))];
  }
  if ((magic === 'APR\0' || magic === 'APR2') && bytes.length >= 68) {
    return [check('header', dv.getUint32(40, true), crc32(bytes.subarray(0, 40), bytes.subarray(44, 64))),
      check('file', dv.getUint32(bytes.length - 4, true), crc32(bytes.subarray(0, bytes.length - 4)))];
  }
  return null;
}

/** A copy with every CRC recomputed, so the rest of a file with a bad checksum can still be shown. */
function withFreshChecksums(bytes) {
  const f = bytes.slice(), dv = new DataView(f.buffer);
  if (ascii(f.subarray(0, 4)) !== 'APRN') dv.setUint32(40, crc32(f.subarray(0, 40), f.subarray(44, 64)), true);
  dv.setUint32(f.length - 4, crc32(f.subarray(0, f.length - 4)), true);
  return f;
}

async function inspectReport(rt, path, options) {
  const bytes = await readBytes(path, 'model file');
  const report = { file: path, size: bytes.length };
  const sums = checksums(bytes);
  let readable = bytes;
  if (sums) {
    report.checksums = sums;
    if (sums.some((s) => !s.ok)) readable = withFreshChecksums(bytes);
  }
  let info;
  try {
    info = rt.inspect(readable);
  } catch (e) {
    // a file that is invalid apart from its checksums: still show the checksums, then the error
    if (!sums || e?.name !== 'MlrtError') throw e;
    return { ...report, error: { code: e.code, message: e.message } };
  }
  report.format = info.format;
  if (sums?.some((s) => !s.ok)) report.note = 'checksum mismatch: the contents below were read with the stored checksums ignored';
  if (info.apr) report.apr = info.apr;
  if (info.modelKind) report.modelKind = info.modelKind;
  if (info.notAModel) report.notAModel = info.notAModel;
  for (const k of ['task', 'classCount', 'classes', 'trees', 'clusters', 'nFeatures', 'payload', 'ngram', 'onnx']) if (info[k] !== undefined) report[k] = info[k];
  if (info.apr?.magic === 'APRN') {
    report.encrypted = Boolean(info.apr.encrypted);
    const publicKey = options['public-key'] !== undefined ? await readKey(options['public-key'], 'public key') : undefined;
    const v = await aprCrypto.verifyAprV1(readable, { publicKey });
    report.signature = !v.signed ? { status: 'not signed' }
      : v.valid ? { status: publicKey ? 'valid (trusted key)' : 'valid (embedded key: proves the file intact, not who signed it)', key: toHex(v.embeddedKey) }
        : { status: 'invalid', reason: v.reason, embeddedKey: toHex(v.embeddedKey) };
  }
  report.metadata = info.metadata;
  report.tensors = info.tensors;
  return report;
}

const toHex = (b) => (b instanceof Uint8Array ? Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('') : b ?? null);

function inspectText(r) {
  const lines = [];
  const row = (k, v) => lines.push(`${k.padEnd(12)} ${v}`);
  row('file', `${r.file} (${r.size} bytes)`);
  if (r.error) {
    for (const s of r.checksums) row(`crc ${s.name}`, s.ok ? `ok (${s.stored})` : `MISMATCH: stored ${s.stored}, computed ${s.computed}`);
    row('error', `${r.error.code}: ${r.error.message}`);
    return lines.join('\n');
  }
  const a = r.apr;
  row('format', a ? `apr ${a.magic === 'APRN' ? 'v1' : 'v2'} (${a.magic.replace('\0', '\\0')} ${a.version})` : r.format);
  if (a?.modelType) row('model type', `${a.modelType} (0x${a.modelTypeCode.toString(16).padStart(4, '0')})`);
  row('model', r.modelKind ? `${r.modelKind}${r.task ? ` (${r.task})` : ''}` : `none: ${r.notAModel.code} ${r.notAModel.message}`);
  if (r.payload) row('payload', `${r.payload.estimator}, ${r.payload.layout} layout`);
  if (r.trees) {
    row('trees', `${r.trees.count} tree${r.trees.count === 1 ? '' : 's'}, depth ${r.trees.depth}, ${r.trees.nodes} nodes (${r.trees.leaves} leaves), ${r.trees.nFeatures} features`);
  }
  if (r.clusters !== undefined) row('clusters', `${r.clusters} centroids of ${r.nFeatures} features`);
  if (r.classes) row('classes', r.classes.length > 20 ? `${r.classes.length}: ${r.classes.slice(0, 20).join(', ')}, ...` : r.classes.join(', '));
  else if (r.classCount) row('classes', `${r.classCount} (a label is its output's index)`);
  if (r.ngram) {
    row('ngram', `${r.ngram.estimator}, n ${r.ngram.n}: ${r.ngram.contexts} contexts, ${r.ngram.transitions} transitions, ${r.ngram.commands} commands (${r.ngram.totalCommands} seen)`);
  }
  if (r.onnx) {
    const o = r.onnx;
    const io = (v) => `${v.name} [${v.shape ? v.shape.map((d) => d ?? '?').join(', ') : 'no shape'}]`;
    row('onnx', `IR ${o.irVersion}, opset ${o.opset}, from ${o.producer || 'an unnamed producer'}, graph '${o.graph}'`);
    row('inputs', o.inputs.map(io).join('; '));
    row('outputs', o.outputs.map(io).join('; '));
    row('ops', `${o.nodes} nodes: ${Object.entries(o.ops).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  if (a) row('flags', a.flags.length ? a.flags.join(', ') : 'none');
  if (a?.compression) row('compression', `${a.compression} (payload ${a.payloadBytes.byteLength} bytes, ${a.uncompressedSize} uncompressed)`);
  if (a?.qualityScore !== undefined) row('quality', String(a.qualityScore));
  for (const s of r.checksums ?? []) row(`crc ${s.name}`, s.ok ? `ok (${s.stored})` : `MISMATCH: stored ${s.stored}, computed ${s.computed}`);
  if (r.note) row('note', r.note);
  if (r.signature) row('signature', r.signature.status + (r.signature.reason ? `: ${r.signature.reason}` : '') + (r.signature.key ? `, key ${r.signature.key}` : ''));
  if (r.encrypted !== undefined) row('encrypted', r.encrypted ? 'yes (payload not decrypted)' : 'no');
  const meta = JSON.stringify(r.metadata, null, 2).split('\n');
  row('metadata', meta[0]);
  for (const l of meta.slice(1)) lines.push(`${''.padEnd(12)} ${l}`);
  row('tensors', r.tensors.length ? String(r.tensors.length) : 'none listed');
  for (const t of r.tensors) lines.push(`  ${t.name}  ${t.dtype} [${t.shape.join(', ')}]  ${t.byteLength} bytes at ${t.byteOffset}`);
  return lines.join('\n');
}

// ------------------------------------------------------------------ convert

const V1_ONLY = ['compress', 'sign', 'encrypt-password', 'password-file', 'recipient'];

/** An encoder's folder -> .apr v2 (tools/apr/encoder.mjs). */
async function convertEncoder(rt, input, output, options) {
  const quantize = choice(options, 'quantize', ['q8']), embeddings = choice(options, 'embeddings', ['f32', 'q8']);
  // the folder as mlrt reads it (checked whole): its pooling, Normalize, maximum length and lowercasing go
  // into the .apr, which then embeds as the folder does without the sentence-transformers files beside it
  const all = await encoderFiles(input, { bytes: true });
  const enc = rt.loadEncoder(all);
  if (enc.info.dense.length) {
    enc.free();
    throw new CliError(`convert: ${input} has Dense modules after its pooling, which an .apr does not hold: use the folder itself`);
  }
  let sub = ''; // the Transformer module's folder (loadEncoder has checked modules.json)
  try { sub = JSON.parse(new TextDecoder().decode(all['modules.json'])).find((m) => m.type.endsWith('.Transformer')).path; } catch { /* none */ }
  const files = {};
  for (const f of ['config.json', 'model.safetensors']) {
    files[f] = all[sub ? `${sub}/${f}` : f];
    if (!files[f]) throw new CliError(`convert: ${input}: no ${sub ? `${sub}/` : ''}${f}`);
  }
  const { pooling, normalize, maxLength, lowerCase, includePrompt, prompts, defaultPromptName } = enc.info;
  enc.free();
  let r;
  try {
    r = encoderToApr(files, { quantize, embeddings, name: options.name ?? input.replace(/\/+$/, '').split('/').pop(),
      embedding: { pooling, normalize, max_seq_length: maxLength, do_lower_case: lowerCase, include_prompt: includePrompt, prompts,
        default_prompt_name: defaultPromptName } });
  } catch (e) {
    throw new CliError(`convert: ${e.message}`);
  }
  await writeOut(output, r.bytes);
  process.stdout.write(`wrote ${output} (${r.bytes.length} bytes, apr v2, ${r.architecture} encoder, ${r.tensors} tensors, ${r.quantized} as q8)\n`);
}

async function convert(rt, [input, output], options) {
  const { statSync } = await import('node:fs');
  if (statSync(input, { throwIfNoEntry: false })?.isDirectory()) return convertEncoder(rt, input, output, options);
  if (options.embeddings !== undefined) throw new UsageError('--embeddings is for an encoder folder');
  const quantize = choice(options, 'quantize', ['q8', 'q4']);
  const compression = choice(options, 'compress', ['lz4', 'zstd', 'zstd-max']);
  const explicit = choice(options, 'apr-version', ['1', '2']);
  const v1Options = V1_ONLY.filter((k) => options[k] !== undefined);
  // Without --apr-version, v1-only options ask for v1; everything else defaults to v2.
  const version = Number(explicit ?? (v1Options.length ? 1 : 2));
  if (version === 2 && v1Options.length) {
    throw new UsageError(`--${v1Options[0]} is an .apr v1 option (aprender has no v2 compression, signing or encryption): use --apr-version 1`);
  }
  if (version === 1 && quantize) throw new UsageError('--quantize needs --apr-version 2: aprender v1 payloads are float32');
  if (options['encrypt-password'] !== undefined && options['password-file'] !== undefined) {
    throw new UsageError('give the output password once: --encrypt-password or --password-file');
  }
  let password = options['encrypt-password'];
  if (options['password-file'] !== undefined) {
    password = new TextDecoder().decode(await readBytes(options['password-file'], 'password file')).replace(/\r?\n$/, '');
    if (!password) throw new CliError(`password file '${options['password-file']}' is empty`);
  }
  if (password !== undefined && options.recipient !== undefined) {
    throw new UsageError('encrypt with a password or for a recipient, not both');
  }
  const secretKey = options.sign !== undefined ? await readKey(options.sign, 'signing key') : undefined;
  const recipientPublicKey = options.recipient !== undefined ? await readKey(options.recipient, 'recipient public key') : undefined;

  const model = await loadModel(rt, input, options);
  if (!model.info.layers.length) {
    throw new CliError(`convert: '${input}' holds a ${model.info.kind}; convert writes dense models (mlp, linear and logistic regression) only`);
  }
  let file = modelToApr(model, { version, quantize, compression: compression ?? 'none', name: options.name, description: options.description });
  // encrypt first, then sign: the signature covers the ciphertext and is checked before decrypting
  if (password !== undefined) file = await aprCrypto.encryptAprV1(file, { password });
  if (recipientPublicKey) file = await aprCrypto.encryptAprV1(file, { recipientPublicKey });
  if (secretKey) file = await aprCrypto.signAprV1(file, secretKey);
  await writeOut(output, file);
  const what = [`apr v${version}`, model.info.kind, quantize, compression, password !== undefined && 'password-encrypted',
    recipientPublicKey && 'encrypted for a recipient', secretKey && 'signed'].filter(Boolean);
  process.stdout.write(`wrote ${output} (${file.length} bytes, ${what.join(', ')})\n`);
}

async function writeOut(path, bytes, mode) {
  try {
    await writeFile(path, bytes, mode ? { mode, flag: 'wx' } : undefined);
    if (mode) await chmod(path, mode); // whatever the umask
  } catch (e) {
    throw new CliError(`cannot write '${path}': ${e.code === 'EEXIST' ? 'the file exists (keys are never overwritten)' : e.message}`);
  }
}

// ------------------------------------------------------------------ keygen

async function keygen(options) {
  const type = choice(options, 'type', ['ed25519', 'x25519']) ?? 'ed25519';
  if (!options.out) throw new UsageError('keygen: --out NAME is required');
  const { secretKey, publicKey } = await aprCrypto.generateKeyPair(type);
  await writeOut(`${options.out}.key`, secretKey, 0o600);
  await writeOut(`${options.out}.pub`, publicKey, 0o644);
  process.stdout.write(`wrote ${options.out}.key (${type} secret key, mode 0600) and ${options.out}.pub (public key ${toHex(publicKey)})\n`);
}

// ------------------------------------------------------------------ predict

/** Input rows from a JSON array (or array of arrays) or raw little-endian float32 bytes. */
function parseInputs(bytes, inputSize, path) {
  const text = new TextDecoder().decode(bytes.subarray(0, 64)).trimStart();
  let rows;
  if (text.startsWith('[')) {
    let v;
    try { v = JSON.parse(new TextDecoder().decode(bytes)); } catch (e) { throw new CliError(`input '${path}' is not valid JSON: ${e.message}`); }
    rows = Array.isArray(v[0]) ? v : [v];
    for (const [i, r] of rows.entries()) {
      if (!Array.isArray(r) || !r.every((x) => typeof x === 'number')) throw new CliError(`input '${path}': row ${i} is not an array of numbers`);
      if (r.length !== inputSize) throw new CliError(`input '${path}': row ${i} has ${r.length} values, the model takes ${inputSize}`);
    }
    return { batch: Array.isArray(v[0]), n: rows.length, values: Float32Array.from(rows.flat()) };
  }
  if (bytes.length === 0 || bytes.length % (4 * inputSize)) {
    throw new CliError(`input '${path}' is neither a JSON array nor raw float32 rows: ${bytes.length} bytes is not a multiple of ${4 * inputSize} (${inputSize} inputs x 4 bytes)`);
  }
  const values = new Float32Array(bytes.length / 4);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < values.length; i++) values[i] = dv.getFloat32(4 * i, true);
  const n = values.length / inputSize;
  return { batch: n > 1, n, values };
}

/** The outputs as a NumPy .npy (format 1.0): little-endian f32, C order, shape (n, outputs). */
function npyBytes(values, n, outputs) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${n}, ${outputs}), }`;
  const unpadded = 10 + header.length + 1; // magic 6 + version 2 + length 2, then the dict and '\n'
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n'; // the data starts 64-aligned
  const head = new Uint8Array(10 + header.length);
  head.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  for (let i = 0; i < header.length; i++) head[10 + i] = header.charCodeAt(i);
  const out = new Uint8Array(head.length + values.length * 4);
  out.set(head);
  const dv = new DataView(out.buffer, head.length);
  for (let i = 0; i < values.length; i++) dv.setFloat32(4 * i, values[i], true);
  return out;
}

/**
 * The shortest decimal that reads back as float32 x, as numpy prints a float32, given as the number
 * nearest it: JSON.stringify then prints those digits — 0.87, not float32(0.87)'s float64 value
 * 0.8700000047683716. For each precision p from 1 digit up, the p-digit decimals nearest x are
 * tried: x.toExponential(p - 1) and its neighbours, since next to a power of two the decimals that
 * read back as x are not centred on it. Of two, the nearer to x wins (compared exactly), then the
 * even last digit, as numpy's Dragon4 chooses. Nine digits always read back.
 */
function shortestF32(x) {
  if (!Number.isFinite(x) || x === 0) return x;
  for (let p = 1; p <= 9; p++) {
    const [mantissa, exponent] = x.toExponential(p - 1).split('e');
    const digits = Number(mantissa.replace('.', '')), scale = Number(exponent) - (p - 1);
    const fits = [digits - 1, digits, digits + 1].filter((d) => Math.fround(Number(`${d}e${scale}`)) === x);
    if (!fits.length) continue;
    const off = (d) => distance(d, scale, x);
    const best = fits.reduce((a, d) => (off(d) < off(a) || (off(d) === off(a) && d % 2 === 0) ? d : a));
    return Number(`${best}e${scale}`);
  }
  return x;
}

// |d × 10^scale − x| for float32 x, exactly, in units of 2^-A × 10^-B (the same for one scale and x).
function distance(d, scale, x) {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, x);
  const bits = view.getUint32(0), field = (bits >>> 23) & 0xff, fraction = bits & 0x7fffff;
  const m = BigInt((field ? fraction | 0x800000 : fraction) * (bits >>> 31 ? -1 : 1)), e = (field || 1) - 150; // x = m × 2^e
  const A = Math.max(0, -e), B = Math.max(0, -scale);
  const diff = BigInt(d) * 10n ** BigInt(scale + B) * 2n ** BigInt(A) - m * 2n ** BigInt(e + A) * 10n ** BigInt(B);
  return diff < 0n ? -diff : diff;
}

// Every row's output, and its label unless the model is a regressor: a classifier's class label as
// stored (info.classes), or KMeans' nearest centroid. Or the outputs alone as f32 / .npy bytes.
async function predict(rt, [file, input], options) {
  const format = choice(options, 'output', ['json', 'f32', 'npy']) ?? 'json';
  if (options.out === '') throw new UsageError('--out needs a file name');
  const model = await loadModel(rt, file, options);
  const { inputSize, outputSize, task } = model.info;
  const { batch, n, values } = parseInputs(await readBytes(input, 'input'), inputSize, input);
  const out = model.predictBatch(values, n);
  let bytes;
  if (format === 'json') {
    const labels = task === 'regression' ? null : model.predictLabels(values, n);
    const rows = Array.from({ length: n }, (_, i) => {
      const o = Array.from(out.subarray(i * outputSize, (i + 1) * outputSize), shortestF32);
      return labels ? { output: o, label: labels[i] } : { output: o };
    });
    bytes = new TextEncoder().encode(`${JSON.stringify(batch ? rows : rows[0])}\n`);
  } else if (format === 'f32') {
    bytes = new Uint8Array(out.length * 4);
    const dv = new DataView(bytes.buffer);
    for (let i = 0; i < out.length; i++) dv.setFloat32(4 * i, out[i], true);
  } else {
    bytes = npyBytes(out, n, outputSize);
  }
  if (options.out !== undefined) await writeOut(options.out, bytes);
  else await new Promise((resolve, reject) => process.stdout.write(bytes, (e) => (e ? reject(e) : resolve())));
}

// ------------------------------------------------------------------ main

async function main(argv) {
  if (argv.length === 1 && ['-v', '--version', 'version'].includes(argv[0])) {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
    process.stdout.write(`mlrt ${pkg.version}\n`);
    return 0;
  }
  if (argv.length === 1 && ['-h', '--help', 'help'].includes(argv[0])) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const { command, positional, options } = parseArgs(argv);
  if (command === 'keygen') { await keygen(options); return 0; }
  const rt = await createRuntime();
  if (command === 'inspect' && statSync(positional[0], { throwIfNoEntry: false })?.isDirectory()) {
    const report = await encoderReport(rt, positional[0]);
    process.stdout.write(`${options.json ? JSON.stringify(report, null, 2) : encoderText(report)}\n`);
    return 0;
  }
  if (command === 'inspect') {
    const report = await inspectReport(rt, positional[0], options);
    process.stdout.write(`${options.json ? JSON.stringify(report, null, 2) : inspectText(report)}\n`);
    const failed = report.error || report.checksums?.some((s) => !s.ok) || report.signature?.status === 'invalid';
    return failed ? 1 : 0;
  }
  if (command === 'convert') await convert(rt, positional, options);
  else if (command === 'tokenize') await tokenize(rt, positional, options);
  else if (command === 'embed') await embed(rt, positional, options);
  else if (command === 'search') await search(rt, positional, options);
  else await predict(rt, positional, options);
  return 0;
}

// ---- text: tokenize (issue 20) ----
async function tokenize(rt, [path, text], options) {
  if ((text === undefined) === (options.input === undefined)) throw new UsageError('tokenize: give TEXT or --input FILE (not both)');
  const maxLength = options['max-length'] === undefined ? undefined : Number(options['max-length']);
  if (maxLength !== undefined && !(Number.isSafeInteger(maxLength) && maxLength > 0)) throw new UsageError(`--max-length must be a positive integer, got '${options['max-length']}'`);
  const { statSync, existsSync } = await import('node:fs');
  let files;
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    const at = (name) => `${path}/${name}`;
    if (existsSync(at('tokenizer.json'))) files = { 'tokenizer.json': readFileSync(at('tokenizer.json')) };
    else if (existsSync(at('vocab.txt'))) {
      files = { 'vocab.txt': readFileSync(at('vocab.txt')) };
      if (existsSync(at('tokenizer_config.json'))) files['tokenizer_config.json'] = readFileSync(at('tokenizer_config.json'));
    } else throw new CliError(`${path}: no tokenizer.json or vocab.txt in this folder`);
  } else {
    files = await readFile(path).catch((e) => { throw new CliError(`${path}: ${e.message}`); });
  }
  const tok = rt.loadTokenizer(files);
  const texts = text !== undefined ? [text] : (await readFile(options.input, 'utf8')).split('\n');
  if (text === undefined && texts[texts.length - 1] === '') texts.pop();
  const out = [];
  for (const t of texts) {
    const e = tok.encode(t.endsWith('\r') ? t.slice(0, -1) : t, { pair: options.pair, maxLength });
    out.push(JSON.stringify({ ids: [...e.ids], tokens: [...e.ids].map((id) => tok.idToToken(id)) }));
  }
  process.stdout.write(`${out.join('\n')}\n`);
  tok.dispose();
}
// ---- end of text ----

// ---- sentence encoders: embed, inspect of a folder (issue 21) ----

// The names rt.loadEncoder reads in a folder and in each module folder its modules.json names.
const ENCODER_NAMES = ['model.safetensors', 'model.apr', 'config.json', 'tokenizer.json', 'vocab.txt', 'tokenizer_config.json',
  'modules.json', 'sentence_bert_config.json', 'config_sentence_transformers.json'];

/** A file that rt.loadEncoder (readInto) and rt.loadEncoderAsync (read: a part at a time, several at once)
 * read straight into wasm memory: a weights file is then never held twice. */
function fileSource(path) {
  return { // (both loop: a read may give less than asked)
    byteLength: statSync(path).size,
    readInto(dest) {
      const fd = openSync(path, 'r');
      try {
        let n = 0;
        for (let k; n < dest.length && (k = readSync(fd, dest, n, dest.length - n, n)) > 0;) n += k;
        return n;
      } finally {
        closeSync(fd);
      }
    },
    async read(dest, at) {
      const fh = await open(path, 'r');
      try {
        let n = 0;
        for (let k; n < dest.length && (k = (await fh.read(dest, n, dest.length - n, at + n)).bytesRead) > 0;) n += k;
        return n;
      } finally {
        await fh.close();
      }
    },
  };
}

/** A sentence encoder's files by name: a folder's, or a weights file (.apr / .safetensors) and the files beside it.
 * The weights file as a source (read into wasm memory by loadEncoder), or its bytes with { bytes: true }. */
async function encoderFiles(path, { bytes = false } = {}) {
  const weightsFile = (at) => (bytes ? new Uint8Array(readFileSync(at)) : fileSource(at));
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) throw new CliError(`cannot read model '${path}': no such file or folder`);
  const files = {};
  let dir = path, names = ENCODER_NAMES;
  if (!st.isDirectory()) {
    const magic = new Uint8Array(3), fd = openSync(path, 'r');
    try { readSync(fd, magic, 0, 3, 0); } finally { closeSync(fd); }
    files[ascii(magic) === 'APR' ? 'model.apr' : 'model.safetensors'] = weightsFile(path);
    dir = dirname(path);
    names = ENCODER_NAMES.slice(2);
  }
  const add = (sub, name) => {
    const rel = sub ? `${sub}/${name}` : name, at = join(dir, rel);
    if (rel in files || !statSync(at, { throwIfNoEntry: false })?.isFile()) return;
    files[rel] = name.startsWith('model.') ? weightsFile(at) : new Uint8Array(readFileSync(at));
  };
  for (const n of names) add('', n);
  add('1_Pooling', 'config.json');
  let modules = null;
  try { modules = files['modules.json'] ? JSON.parse(new TextDecoder().decode(files['modules.json'])) : null; } catch { /* loadEncoder says what is wrong */ }
  for (const m of Array.isArray(modules) ? modules : []) {
    const sub = m?.path;
    if (typeof sub === 'string' && sub && !sub.includes('..') && !sub.startsWith('/')) for (const n of names) add(sub, n);
  }
  if (!Object.keys(files).length) throw new CliError(`${path}: no model files in this folder (model.safetensors or model.apr, config.json, tokenizer.json, ...)`);
  return files;
}

/** Lines of UTF-8 bytes (a final \r dropped; no text after a final newline), checked by the tokenizer. */
function byteLines(bytes) {
  const out = [];
  for (let at = 0; at < bytes.length;) {
    let end = bytes.indexOf(0x0a, at);
    if (end < 0) end = bytes.length;
    out.push(bytes.subarray(at, end > at && bytes[end - 1] === 0x0d ? end - 1 : end));
    at = end + 1;
  }
  return out;
}

async function embed(rt, [model], options) {
  const format = choice(options, 'output', ['json', 'f32', 'npy']) ?? 'json';
  if ((options.text === undefined) === (options.input === undefined)) throw new UsageError('embed: give --text TEXT or --input FILE (one text per line), not both');
  if (options.out === '') throw new UsageError('--out needs a file name');
  const enc = await rt.loadEncoderAsync(await encoderFiles(model));
  const texts = options.text !== undefined ? [options.text] : byteLines(await readBytes(options.input, 'input'));
  if (options.prompt !== undefined && options['prompt-name'] !== undefined) throw new UsageError('embed: give --prompt or --prompt-name, not both');
  const name = options['prompt-name'], known = Object.keys(enc.info.prompts);
  if (name !== undefined && !known.includes(name)) {
    enc.free();
    throw new CliError(`embed: --prompt-name ${JSON.stringify(name)} is not one of the model's prompts${known.length ? ` (${known.join(', ')})` : ' (it has none)'}`);
  }
  let v;
  try {
    v = enc.embed(texts, { prompt: options.prompt, promptName: name });
  } catch (e) {
    enc.free();
    throw e;
  }
  const dim = enc.info.dim, n = texts.length;
  let bytes;
  if (format === 'json') {
    const rows = Array.from({ length: n }, (_, i) => Array.from(v.subarray(i * dim, (i + 1) * dim), shortestF32));
    bytes = new TextEncoder().encode(`${JSON.stringify(rows)}\n`);
  } else if (format === 'f32') {
    bytes = new Uint8Array(v.length * 4);
    const dv = new DataView(bytes.buffer);
    for (let i = 0; i < v.length; i++) dv.setFloat32(4 * i, v[i], true);
  } else {
    bytes = npyBytes(v, n, dim);
  }
  enc.free();
  if (options.out !== undefined) await writeOut(options.out, bytes);
  else await new Promise((resolve, reject) => process.stdout.write(bytes, (e) => (e ? reject(e) : resolve())));
}

async function encoderReport(rt, dir) {
  const files = await encoderFiles(dir);
  const enc = await rt.loadEncoderAsync(files);
  const report = {
    folder: dir,
    files: Object.fromEntries(Object.entries(files).map(([k, b]) => [k, b.byteLength])),
    info: enc.info,
    tokenizer: enc.tokenizer?.info ?? null,
  };
  enc.free();
  return report;
}

function encoderText(r) {
  const i = r.info, t = r.tokenizer, lines = [];
  const row = (k, v) => lines.push(`${k.padEnd(12)} ${v}`);
  const n = (x) => x.toLocaleString('en-US');
  row('folder', `${r.folder} (${Object.entries(r.files).map(([k, b]) => `${k} ${n(b)} B`).join(', ')})`);
  row('format', `${i.format}${i.tensorPrefix ? ` (tensors named ${i.tensorPrefix}...)` : ''}`);
  row('model', `sentence encoder: ${i.architecture}, ${i.layers} layers, hidden ${i.hiddenSize}, ${i.heads} heads, FFN ${i.ffn}, ${i.hiddenAct}`);
  const dense = i.dense.map((d) => `, Dense ${d.in} -> ${d.out} ${d.activation}${d.bias ? '' : ' (no bias)'}`).join('');
  row('embedding', `${i.dim} floats: ${i.pooling} pooling${dense}${i.normalize ? ', L2-normalized' : ''}`);
  row('length', `${i.maxLength} tokens per text (${i.maxPositions} positions)${i.lowerCase ? ', texts lowercased first' : ''}`);
  const prompts = Object.entries(i.prompts ?? {});
  row('prompts', prompts.length ? prompts.map(([k, v]) => `${k}${k === i.defaultPromptName ? ' (default)' : ''} ${JSON.stringify(v)}`).join(', ') +
    (i.includePrompt ? '' : '; left out of the pooling') : 'none');
  row('vocabulary', `${n(i.vocabSize)} ids, ${i.typeVocabSize} token types`);
  row('tokenizer', t ? `${t.source}: WordPiece, ${n(t.vocabSize)} pieces${t.normalizer?.lowercase ? ', lowercase' : ''}` : 'none (embed needs tokenizer.json or vocab.txt)');
  row('weights', `${i.dtype}, ${n(i.params)} parameters, ${n(i.weightBytes)} bytes in memory`);
  row('unused', i.unusedTensors.length ? i.unusedTensors.join(', ') : 'none');
  const io = (v) => `${v.name} [${v.shape.join(', ')}] ${v.dtype}`;
  row('inputs', i.inputs.map(io).join('; '));
  row('outputs', i.outputs.map(io).join('; '));
  return lines.join('\n');
}
// ---- end of sentence encoders ----

// ---- the reverse dictionary: search a lemma index (issue 22) ----
async function search(rt, [indexPath, query], options) {
  if ((query === undefined) === (options.input === undefined)) throw new UsageError('search: give QUERY or --input FILE (not both)');
  const k = options.k === undefined ? 10 : Number(options.k);
  if (!(Number.isSafeInteger(k) && k > 0)) throw new UsageError(`--k must be a positive integer, got '${options.k}'`);
  const { readIndex } = await import('../web/lemma-index.mjs');
  const { createHash } = await import('node:crypto');
  let index;
  try {
    index = readIndex(await readBytes(indexPath, 'lemma index'));
  } catch (e) {
    if (e.name !== 'IndexError') throw e;
    throw new CliError(`${indexPath}: ${e.message}`);
  }
  if (typeof rt.loadEncoder !== 'function') throw new CliError('search: this mlrt has no loadEncoder (the sentence encoder)');
  const dir = options.model ?? dirname(indexPath);
  const files = await encoderFiles(dir, { bytes: true }); // (the weights' SHA-256 is checked first)
  const weights = files['model.safetensors'] ?? files['model.apr'];
  const sha = createHash('sha256').update(weights ?? new Uint8Array(0)).digest('hex');
  if (sha !== index.modelSha256) throw new CliError(`search: ${indexPath} was made with another model (SHA-256 ${index.modelSha256.slice(0, 16)}…; the weights in ${dir} are ${sha.slice(0, 16)}…; give the encoder's folder with --model DIR)`);
  const enc = await rt.loadEncoder(files);
  if (index.dtype === 'q8') index.useRuntime(rt); // the scan on mlrt's Q8 kernels
  const queries = query !== undefined ? [query] : (await readFile(options.input, 'utf8')).split('\n').map((t) => t.replace(/\r$/, '')).filter((t) => t.trim());
  const out = [];
  for (const q of queries) {
    const results = index.search(enc.embed(q), k).map(({ word, score }) => ({ word, score }));
    out.push(options.json ? JSON.stringify({ query: q, results })
      : `${queries.length > 1 ? `${q}\n` : ''}${results.map((r, i) => `${String(i + 1).padStart(3)}. ${r.score.toFixed(4)}  ${r.word}`).join('\n')}`);
  }
  process.stdout.write(`${out.join(options.json ? '\n' : '\n\n')}\n`);
  enc.free?.();
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  if (e instanceof UsageError) {
    process.stderr.write(`mlrt: ${e.message}\n${USAGE}\n`);
    process.exitCode = 2;
  } else if (e instanceof CliError || e instanceof AprWriteError) {
    process.stderr.write(`mlrt: ${e.message}\n`);
    process.exitCode = 1;
  } else if (e instanceof MlrtError || e?.name === 'MlrtError') {
    const hint = { ENCRYPTED: ' (give --password PW, or --key KEYFILE with the recipient\'s X25519 secret key)' }[e.code] ?? '';
    process.stderr.write(`mlrt: ${e.code}: ${e.message}${hint}\n`);
    process.exitCode = 1;
  } else {
    process.stderr.write(`mlrt: internal error: ${e?.stack ?? e}\n`);
    process.exitCode = 1;
  }
}
