// The mlrt CLI (tools/mlrt.mjs) run as a child process: keygen, convert from every input format and
// with every v1/v2 option, predict (JSON, raw float32, stdin), inspect (CRCs, signatures,
// encryption, --json), determinism, and exit codes 1/2 without stack traces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, statSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRuntime } from '../wasm/mlrt.mjs';
import { loadSplit } from '../tools/mnist-split.mjs';
import { modelPath, safetensorsF32, withV1Crc, rng, writeFolder } from './helpers.mjs';

const CLI = fileURLToPath(new URL('../tools/mlrt.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mlrt-cli-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const at = (name) => join(dir, name);
const model = (name) => fileURLToPath(modelPath(name));

function mlrt(args, input) {
  const r = spawnSync(process.execPath, [CLI, ...args], { input, cwd: dir, encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, SOURCE_DATE_EPOCH: '' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
function ok(args, input) {
  const r = mlrt(args, input);
  assert.equal(r.code, 0, `mlrt ${args.join(' ')} exited ${r.code}: ${r.err}`);
  return r;
}
function fails(args, code, pattern) {
  const r = mlrt(args);
  assert.equal(r.code, code, `mlrt ${args.join(' ')}: expected exit ${code}, got ${r.code}: ${r.err}`);
  assert.match(r.err, pattern);
  assert.doesNotMatch(r.err, /\n\s+at /, 'no stack trace');
  return r;
}

const rt = await createRuntime();
const digits = loadSplit('test');
const N = 20;
const rows = Array.from({ length: N }, (_, i) => Array.from(digits.images.subarray(i * 784, (i + 1) * 784)));
writeFileSync(at('digits.json'), JSON.stringify(rows));
const want = rt.loadFromBytes(readFileSync(model('mnist-mlp.safetensors'))).predictBatch(digits.images.subarray(0, N * 784), N);

/** Predictions printed by `mlrt predict` (a batch) must equal the source model's bit for bit. */
function checkPredict(file, extra = [], label = file) {
  const out = JSON.parse(ok(['predict', file, 'digits.json', ...extra]).out);
  assert.equal(out.length, N);
  const got = Float32Array.from(out.flatMap((r) => r.output));
  assert.deepEqual(new Uint8Array(got.buffer), new Uint8Array(want.buffer), `${label}: predictions not bit-identical`);
  out.forEach((r, i) => assert.equal(r.label, r.output.indexOf(Math.max(...r.output)), `${label}: label ${i}`));
}

test('keygen: 32-byte secret (mode 0600) and public keys, both types; never overwrites', () => {
  ok(['keygen', '--out', 'signer']);
  ok(['keygen', '--type', 'x25519', '--out', 'reader']);
  ok(['keygen', '--type', 'ed25519', '--out', 'other']);
  for (const name of ['signer', 'reader', 'other']) {
    assert.equal(readFileSync(at(`${name}.key`)).length, 32);
    assert.equal(readFileSync(at(`${name}.pub`)).length, 32);
    assert.equal(statSync(at(`${name}.key`)).mode & 0o777, 0o600);
  }
  fails(['keygen', '--out', 'signer'], 1, /the file exists/);
  fails(['keygen', '--type', 'rsa', '--out', 'x'], 2, /--type must be one of ed25519, x25519/);
  fails(['keygen'], 2, /--out NAME is required/);
});

const INPUTS = ['mnist-mlp.f32.bin', 'mnist-mlp.f64.bin', 'mnist-mlp.safetensors', 'mnist-mlp.aprender.safetensors', 'mnist-mlp.bintensors'];

test('convert from every input format (.bin f32/f64, SafeTensors, BinTensors, .apr v1, .apr v2) to v1 and v2: bit-identical predictions', () => {
  ok(['convert', model('mnist-mlp.safetensors'), 'from-st.v1.apr', '--apr-version', '1']);
  ok(['convert', model('mnist-mlp.safetensors'), 'from-st.v2.apr']);
  for (const input of [...INPUTS.map(model), 'from-st.v1.apr', 'from-st.v2.apr']) {
    for (const version of ['1', '2']) {
      const out = `conv-${version}.apr`;
      ok(['convert', input, out, '--apr-version', version, '--name', 'mnist']);
      checkPredict(out, [], `${input} -> v${version}`);
    }
  }
});

const COMPRESS = ['none', 'lz4', 'zstd', 'zstd-max'];

test(`v1 MNIST x {${COMPRESS.join(', ')}} x {plain, signed, recipient}: predict with the keys; inspect says so`, () => {
  for (const c of COMPRESS) {
    const comp = c === 'none' ? [] : ['--compress', c];
    ok(['convert', model('mnist-mlp.f32.bin'), 'p.apr', '--apr-version', '1', ...comp]);
    checkPredict('p.apr', [], `${c} plain`);
    ok(['convert', model('mnist-mlp.f32.bin'), 's.apr', ...comp, '--sign', 'signer.key']);
    checkPredict('s.apr', ['--public-key', 'signer.pub'], `${c} signed`);
    ok(['convert', model('mnist-mlp.f32.bin'), 'r.apr', ...comp, '--recipient', 'reader.pub']);
    checkPredict('r.apr', ['--key', 'reader.key'], `${c} recipient`);
    fails(['predict', 'r.apr', 'digits.json'], 1, /ENCRYPTED: .*--password PW, or --key KEYFILE/);
    const info = JSON.parse(ok(['inspect', 'r.apr', '--json']).out);
    assert.deepEqual([info.encrypted, info.apr.compression, info.signature.status], [true, { none: 'None', lz4: 'Lz4', zstd: 'ZstdDefault', 'zstd-max': 'ZstdMax' }[c], 'not signed']);
  }
  // signed + encrypted: encrypted first, then the signature covers the ciphertext
  ok(['convert', model('mnist-mlp.f32.bin'), 'sr.apr', '--sign', 'signer.key', '--recipient', 'reader.pub']);
  checkPredict('sr.apr', ['--key', 'reader.key', '--public-key', 'signer.pub'], 'signed and encrypted');
  assert.match(ok(['inspect', 'sr.apr']).out, /flags +ENCRYPTED, SIGNED[\s\S]*signature +valid/);
});

test('v1 password encryption (Argon2id: one file): --password-file to write, --password to read', () => {
  writeFileSync(at('pw.txt'), 'correct horse\n');
  ok(['convert', model('mnist-mlp.f32.bin'), 'pw.apr', '--password-file', 'pw.txt', '--compress', COMPRESS.at(-1)]);
  checkPredict('pw.apr', ['--password', 'correct horse'], 'password');
  fails(['convert', model('mnist-mlp.f32.bin'), 'x.apr', '--password-file', 'pw.txt', '--encrypt-password', 'x'], 2, /give the output password once/);
  fails(['convert', model('mnist-mlp.f32.bin'), 'x.apr', '--encrypt-password', 'x', '--recipient', 'reader.pub'], 2, /not both/);
});

test('linear and logistic regression through the CLI: v1 signed, v2 f32; logistic predictions carry labels', () => {
  const r = rng(5);
  const coef = Array.from({ length: 4 }, () => r() - 0.5);
  writeFileSync(at('lin.safetensors'), safetensorsF32({ coefficients: [[4], coef], intercept: [[1], [0.5]] }));
  writeFileSync(at('log.safetensors'), safetensorsF32({ coefficients: [[4], coef], intercept: [[1], [0.5]] }, { model_type: 'logistic_regression' }));
  const xs = [[1, 2, 3, 4], [-1, 0, 0.5, 2]];
  writeFileSync(at('xs.json'), JSON.stringify(xs));
  for (const src of ['lin', 'log']) {
    const base = JSON.parse(ok(['predict', `${src}.safetensors`, 'xs.json']).out);
    ok(['convert', `${src}.safetensors`, `${src}.v1.apr`, '--sign', 'signer.key', '--compress', COMPRESS.at(-1)]);
    ok(['convert', `${src}.safetensors`, `${src}.v2.apr`]);
    for (const f of [`${src}.v1.apr`, `${src}.v2.apr`]) assert.deepEqual(JSON.parse(ok(['predict', f, 'xs.json']).out), base, f);
    const info = JSON.parse(ok(['inspect', `${src}.v1.apr`, '--json', '--public-key', 'signer.pub']).out);
    assert.equal(info.apr.modelType, src === 'lin' ? 'LinearRegression' : 'LogisticRegression');
    assert.equal(info.signature.status, 'valid (trusted key)');
    if (src === 'log') assert.deepEqual(base.map((b) => b.label), base.map((b) => (b.output[0] >= 0.5 ? 1 : 0)));
    else assert.ok(base.every((b) => !('label' in b)));
  }
});

test('v2 x {f32, q8, q4}: tensors, flags and quantization metadata in inspect; deterministic bytes', () => {
  for (const q of ['f32', 'q8', 'q4']) {
    const opt = q === 'f32' ? [] : ['--quantize', q];
    ok(['convert', model('mnist-mlp.bintensors'), `v2-${q}.apr`, '--apr-version', '2', ...opt]);
    ok(['convert', model('mnist-mlp.bintensors'), `v2-${q}-again.apr`, ...opt]);
    assert.deepEqual(readFileSync(at(`v2-${q}.apr`)), readFileSync(at(`v2-${q}-again.apr`)), `${q}: same bytes twice`);
    const info = JSON.parse(ok(['inspect', `v2-${q}.apr`, '--json']).out);
    const dtype = { f32: 'F32', q8: 'APR_Q8', q4: 'APR_Q4' }[q];
    assert.deepEqual(info.tensors.map((t) => [t.name, t.dtype]), [['0', dtype], ['1', 'F32'], ['2', dtype], ['3', 'F32']]);
    assert.deepEqual(info.checksums.map((c) => [c.name, c.ok]), [['header', true], ['file', true]]);
    assert.equal(info.metadata.activations, 'relu,softmax');
    if (q !== 'f32') assert.deepEqual(info.apr.flags, ['QUANTIZED', 'LAYOUT_ROW_MAJOR']);
  }
  checkPredict('v2-f32.apr');
  // v1 without encryption is deterministic too
  ok(['convert', model('mnist-mlp.f32.bin'), 'd1.apr', '--apr-version', '1', '--compress', COMPRESS.at(-1), '--sign', 'signer.key']);
  ok(['convert', model('mnist-mlp.f32.bin'), 'd2.apr', '--apr-version', '1', '--compress', COMPRESS.at(-1), '--sign', 'signer.key']);
  assert.deepEqual(readFileSync(at('d1.apr')), readFileSync(at('d2.apr')), 'signed v1: same bytes twice (Ed25519 is deterministic)');
});

test('inspect: CRC mismatch after a byte flip (v1 and both v2 checksums), wrong trusted key, text and JSON', () => {
  ok(['convert', model('mnist-mlp.f32.bin'), 'i1.apr', '--apr-version', '1', '--sign', 'signer.key']);
  const text = ok(['inspect', 'i1.apr']).out;
  assert.match(text, /format +apr v1 \(APRN 1\.0\)/);
  assert.match(text, /model type +NeuralSequential \(0x0020\)/);
  assert.match(text, /model +mlp \(classification\)\nclasses +10 \(a label is its output's index\)/); // implicit labels: counted
  assert.match(text, /crc file +ok \(0x[0-9a-f]{8}\)/);
  assert.match(text, /signature +valid \(embedded key/);
  assert.match(text, /encrypted +no/);
  const flipped = readFileSync(at('i1.apr'));
  flipped[5000] ^= 1;
  writeFileSync(at('i1-bad.apr'), flipped);
  const bad = mlrt(['inspect', 'i1-bad.apr']);
  assert.equal(bad.code, 1);
  assert.match(bad.out, /crc file +MISMATCH: stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}/);
  assert.match(bad.out, /signature +invalid/);
  writeFileSync(at('i1-resealed.apr'), withV1Crc(flipped));
  const resealed = JSON.parse(mlrt(['inspect', 'i1-resealed.apr', '--json']).out);
  assert.deepEqual([resealed.checksums[0].ok, resealed.signature.status], [true, 'invalid'], 'a fresh CRC does not fool the signature');
  const wrongKey = mlrt(['inspect', 'i1.apr', '--public-key', 'other.pub']);
  assert.equal(wrongKey.code, 1);
  assert.match(wrongKey.out, /signature +invalid: the signature does not verify with the trusted public key/);
  fails(['predict', 'i1-bad.apr', 'digits.json'], 1, /CHECKSUM_MISMATCH/);

  ok(['convert', model('mnist-mlp.f32.bin'), 'i2.apr']);
  for (const [offset, name] of [[8, 'header'], [1000, 'file']]) {
    const f = readFileSync(at('i2.apr'));
    f[offset] ^= 1;
    writeFileSync(at('i2-bad.apr'), f);
    const r = mlrt(['inspect', 'i2-bad.apr', '--json']);
    assert.equal(r.code, 1, name);
    const j = JSON.parse(r.out);
    assert.equal(j.checksums.find((c) => c.name === name).ok, false, name);
    assert.ok(j.note?.includes('checksum mismatch') || j.error, 'contents read with the checksums ignored, or why they cannot be');
  }
  assert.match(ok(['inspect', model('mnist-mlp.f64.bin')]).out, /format +bin[\s\S]*model +mlp/);
});

test('predict: raw float32 input, stdin, one JSON input; input errors', () => {
  const raw = Buffer.from(digits.images.buffer, digits.images.byteOffset, N * 784 * 4);
  writeFileSync(at('digits.f32'), raw);
  const viaRaw = JSON.parse(ok(['predict', model('mnist-mlp.safetensors'), 'digits.f32']).out);
  const viaStdin = JSON.parse(ok(['predict', model('mnist-mlp.safetensors'), '-'], JSON.stringify(rows)).out);
  const viaJson = JSON.parse(ok(['predict', model('mnist-mlp.safetensors'), 'digits.json']).out);
  assert.deepEqual(viaRaw, viaJson);
  assert.deepEqual(viaStdin, viaJson);
  writeFileSync(at('one.json'), JSON.stringify(rows[3]));
  assert.deepEqual(JSON.parse(ok(['predict', model('mnist-mlp.safetensors'), 'one.json']).out), viaJson[3]);
  writeFileSync(at('short.json'), '[1, 2, 3]');
  fails(['predict', model('mnist-mlp.safetensors'), 'short.json'], 1, /row 0 has 3 values, the model takes 784/);
  writeFileSync(at('odd.f32'), new Uint8Array(10));
  fails(['predict', model('mnist-mlp.safetensors'), 'odd.f32'], 1, /10 bytes is not a multiple of 3136/);
  writeFileSync(at('broken.json'), '[1, 2');
  fails(['predict', model('mnist-mlp.safetensors'), 'broken.json'], 1, /not valid JSON/);
});

test('errors: usage mistakes exit 2, bad files exit 1, messages without stack traces', () => {
  fails([], 2, /no command given/);
  fails(['frobnicate'], 2, /unknown command 'frobnicate'/);
  fails(['inspect'], 2, /inspect: expected FILE/);
  fails(['inspect', 'a', '--verbose'], 2, /unknown option '--verbose'/);
  fails(['convert', 'in', 'out', '--apr-version', '3'], 2, /--apr-version must be one of 1, 2/);
  fails(['convert', 'in', 'out', '--apr-version', '2', '--sign', 'signer.key'], 2, /--sign is an \.apr v1 option/);
  fails(['convert', 'in', 'out', '--apr-version', '2', '--compress', 'lz4'], 2, /--compress is an \.apr v1 option/);
  fails(['convert', 'in', 'out', '--apr-version', '1', '--quantize', 'q8'], 2, /--quantize needs --apr-version 2/);
  fails(['convert', 'in', 'out', '--compress', 'gzip'], 2, /--compress must be one of lz4, zstd, zstd-max/);
  fails(['convert', 'in', 'out', '--name'], 2, /--name needs a value/);
  fails(['inspect', 'missing.apr'], 1, /cannot read model file 'missing.apr': no such file/);
  writeFileSync(at('junk.bin'), new Uint8Array(100));
  fails(['inspect', 'junk.bin'], 1, /^mlrt: [A-Z_]+: /);
  // a 3-layer MLP does not fit the v1 NeuralSequential payload
  writeFileSync(at('deep.safetensors'), safetensorsF32({ 'a.weight': [[2, 3], [1, 2, 3, 4, 5, 6]], 'b.weight': [[2, 2], [1, 0, 0, 1]], 'c.weight': [[2, 2], [1, 0, 0, 1]] }));
  fails(['convert', 'deep.safetensors', 'deep.apr', '--apr-version', '1'], 1, /write \.apr v2 instead/);
  assert.ok(!existsSync(at('deep.apr')));
  ok(['convert', 'deep.safetensors', 'deep.apr']);
  fails(['predict', 'r.apr', 'digits.json', '--key', 'other.key'], 1, /WRONG_RECIPIENT|INVALID_ARGUMENT|DECRYPTION_FAILED/);
  assert.match(ok(['--help']).out, /^usage:/);
});

test('predict prints each float32 output as the shortest decimal that reads back as it, as numpy does', () => {
  // a regressor whose output is float32(0.87): printed 0.87, not its float64 value 0.8700000047683716
  writeFileSync(at('const.safetensors'), safetensorsF32({ coefficients: [[2], [0, 0]], intercept: [[1], [0.87]] }));
  writeFileSync(at('zeros.json'), '[0, 0]');
  assert.equal(ok(['predict', 'const.safetensors', 'zeros.json']).out, '{"output":[0.87]}\n');
  // an identity layer prints its inputs: every power of two (where the decimals around a float32
  // are spaced unevenly), the extremes, and random bit patterns, checked against numpy's repr
  const r = rng(19), values = [0.87, 0.1, 1 / 3, 16777216, 16777218, 1e-45, 1.1754942e-38, 1.1754944e-38, 3.4028235e38, -2.5e-8, 123456.789];
  for (let e = -149; e <= 127; e++) values.push(2 ** e);
  const bits = new Uint32Array(1), f = new Float32Array(bits.buffer);
  while (values.length < 8 * 80) {
    bits[0] = Math.floor(r() * 2 ** 32);
    if (Number.isFinite(f[0])) values.push(f[0]);
  }
  const x = Float32Array.from(values), width = 8, n = x.length / width;
  const identity = Array.from({ length: width * width }, (_, k) => (k % (width + 1) === 0 ? 1 : 0));
  writeFileSync(at('identity.safetensors'), safetensorsF32({ 'fc.weight': [[width, width], identity] }, { activations: 'identity' }));
  writeFileSync(at('values.json'), JSON.stringify(Array.from({ length: n }, (_, i) => Array.from(x.subarray(i * width, (i + 1) * width)))));
  writeFileSync(at('values.f32'), x);
  const text = ok(['predict', 'identity.safetensors', 'values.json']).out;
  const printed = [...text.matchAll(/"output":\[([^\]]*)\]/g)].flatMap((m) => m[1].split(','));
  assert.equal(printed.length, x.length);
  const py = spawnSync('/usr/bin/python3', ['-c', `import numpy as np, sys
print('\\n'.join(repr(float(str(v))) for v in np.fromfile(sys.argv[1], dtype='<f4')))`, at('values.f32')], { encoding: 'utf8' });
  assert.equal(py.status, 0, py.stderr);
  const numpy = py.stdout.trim().split('\n');
  printed.forEach((p, i) => {
    assert.equal(Math.fround(Number(p)), x[i], `${p} does not read back as ${x[i]}`);
    assert.equal(Number(p), Number(numpy[i]), `${x[i]}: printed ${p}, numpy ${numpy[i]}`);
  });
});

test('predict --output f32 | npy, --out FILE: the same outputs as bytes; numpy reads the .npy; --version', () => {
  const rows = Array.from({ length: 7 }, (_, r) => Array.from(digits.images.subarray(r * 784, (r + 1) * 784)));
  writeFileSync(at('seven.json'), JSON.stringify(rows));
  const want = rt.loadFromBytes(readFileSync(model('mnist-mlp.safetensors'))).predictBatch(Float32Array.from(rows.flat()), 7);
  ok(['predict', model('mnist-mlp.safetensors'), 'seven.json', '--output', 'f32', '--out', 'seven.f32']);
  const raw = readFileSync(at('seven.f32'));
  assert.equal(raw.length, 7 * 10 * 4);
  assert.deepEqual(new Float32Array(raw.buffer, raw.byteOffset, 70), want);
  const stdout = spawnSync(process.execPath, [CLI, 'predict', model('mnist-mlp.safetensors'), 'seven.json', '--output', 'f32'], { cwd: dir });
  assert.deepEqual(Buffer.from(stdout.stdout), raw);
  ok(['predict', model('mnist-mlp.safetensors'), 'seven.json', '--output', 'npy', '--out', 'seven.npy']);
  const npy = readFileSync(at('seven.npy'));
  assert.equal((npy.length - 70 * 4) % 64, 0, 'data 64-aligned');
  const py = spawnSync('/usr/bin/python3', ['-c', `import numpy as np, sys
a = np.load(sys.argv[1])
b = np.fromfile(sys.argv[2], dtype='<f4').reshape(7, 10)
assert a.dtype == np.dtype('<f4') and a.shape == (7, 10), (a.dtype, a.shape)
assert (a.view(np.uint32) == b.view(np.uint32)).all()
print('ok', a.shape)`, at('seven.npy'), at('seven.f32')], { encoding: 'utf8' });
  assert.equal(py.status, 0, py.stderr);
  assert.match(py.stdout, /ok \(7, 10\)/);
  fails(['predict', model('mnist-mlp.safetensors'), 'seven.json', '--output', 'xml'], 2, /--output must be one of json, f32, npy/);
  const v = ok(['--version']).out;
  assert.equal(v.trim(), `mlrt ${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}`);
});

// ---- sentence encoders: mlrt embed, mlrt inspect DIR (issue 21), in the Node, WASI and native CLIs ----

const WASI_CLI = fileURLToPath(new URL('../tools/mlrt-wasi.mjs', import.meta.url));
const NATIVE_CLI = fileURLToPath(new URL('../build/mlrt', import.meta.url));
/** The three CLIs: [name, run(args) -> { code, out (Buffer), err }]. */
const EMBED_CLIS = [
  ['node', (args) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, maxBuffer: 1 << 26 })],
  ['wasi', (args) => spawnSync(process.execPath, ['--no-warnings', WASI_CLI, ...args], { cwd: dir, maxBuffer: 1 << 26 })],
  ...(existsSync(NATIVE_CLI) ? [['native', (args) => spawnSync(NATIVE_CLI, args, { cwd: dir, maxBuffer: 1 << 26 })]] : []),
].map(([name, run]) => [name, (args) => { const r = run(args); return { code: r.status, out: r.stdout, err: r.stderr.toString() }; }]);

const { makeFolder } = await import('../tools/encoder/folder.mjs');
const encFiles = await makeFolder('tiny');
const encDir = at('tiny-encoder');
writeFolder(encDir, encFiles);
const encTexts = ['A man is eating food.', '', 'Héllo wörld — 日本語', 'the quick brown fox jumps over the lazy dog'];
writeFileSync(at('texts.txt'), encTexts.join('\r\n') + '\n');
const encWant = rt.loadEncoder(encFiles).embed(encTexts);
const f32Of = (buf) => new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));

test('embed: json (an array of n arrays of dim numbers), f32 and npy, --text and --input, in the Node, WASI and native CLIs', () => {
  for (const [cli, run] of EMBED_CLIS) {
    const json = run(['embed', encDir, '--input', 'texts.txt']);
    assert.equal(json.code, 0, `${cli}: ${json.err}`);
    const rows = JSON.parse(json.out.toString());
    assert.equal(rows.length, 4, cli);
    assert.ok(rows.every((r) => Array.isArray(r) && r.length === 32 && r.every((x) => typeof x === 'number')), `${cli}: rows of 32 numbers`);
    assert.deepEqual(Float32Array.from(rows.flat()), encWant, `${cli}: json values read back as the f32 embeddings`);
    const raw = run(['embed', encDir, '--input', 'texts.txt', '--output', 'f32']);
    assert.equal(raw.code, 0, `${cli}: ${raw.err}`);
    assert.equal(raw.out.length, 4 * 32 * 4);
    assert.deepEqual(new Uint8Array(f32Of(raw.out).buffer), new Uint8Array(encWant.buffer), `${cli}: f32 bits`);
    const one = run(['embed', encDir, '--text', encTexts[2], '--output', 'f32']);
    assert.deepEqual(new Uint8Array(f32Of(one.out).buffer), new Uint8Array(encWant.slice(64, 96).buffer), `${cli}: --text`);
    const out = `embed-${cli}.npy`;
    const npy = run(['embed', encDir, '--input', 'texts.txt', '--output', 'npy', '--out', out]);
    assert.equal(npy.code, 0, `${cli}: ${npy.err}`);
    assert.equal(npy.out.length, 0, `${cli}: --out writes nothing to stdout`);
    const b = readFileSync(at(out));
    assert.deepEqual([...b.subarray(0, 8)], [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0], `${cli}: npy magic, version 1.0`);
    const hlen = b[8] | (b[9] << 8);
    assert.equal((10 + hlen) % 64, 0, `${cli}: data 64-aligned`);
    const header = b.subarray(10, 10 + hlen).toString('latin1');
    assert.equal(header.trimEnd(), "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 32), }", cli);
    assert.ok(header.endsWith('\n'));
    assert.deepEqual(new Uint8Array(b.subarray(10 + hlen)), new Uint8Array(encWant.buffer), `${cli}: npy data`);
  }
  const py = spawnSync('/usr/bin/python3', ['-c', `import numpy as np, sys
a = np.load(sys.argv[1])
assert a.dtype == np.dtype('<f4') and a.shape == (4, 32), (a.dtype, a.shape)
print('ok', a.shape)`, at('embed-node.npy')], { encoding: 'utf8' });
  assert.equal(py.status, 0, py.stderr);
});

test('embed: a weights file with its tokenizer and module files beside it; inspect DIR describes the encoder', () => {
  for (const [cli, run] of EMBED_CLIS) {
    const r = run(['embed', join(encDir, 'model.safetensors'), '--input', 'texts.txt', '--output', 'f32']);
    assert.equal(r.code, 0, `${cli}: ${r.err}`);
    assert.deepEqual(new Uint8Array(f32Of(r.out).buffer), new Uint8Array(encWant.buffer), `${cli}: a weights file`);
  }
  const text = ok(['inspect', encDir]).out;
  for (const want of [/sentence encoder: BertModel, 2 layers, hidden 32, 4 heads, FFN 64/, /32 floats: mean pooling, L2-normalized/,
    /64 tokens per text/, /tokenizer\s+tokenizer\.json: WordPiece, 30,522 pieces/, /unused\s+embeddings\.position_ids, pooler\.dense\.bias, pooler\.dense\.weight/,
    /1_Pooling\/config\.json/]) assert.match(text, want);
  const json = JSON.parse(ok(['inspect', encDir, '--json']).out);
  assert.equal(json.info.kind, 'encoder');
  assert.equal(json.info.dim, 32);
  assert.equal(json.tokenizer.vocabSize, 30522);
  assert.ok(json.files['model.safetensors'] > 0 && json.files['modules.json'] > 0);
  for (const [cli, run] of EMBED_CLIS.slice(1)) { // the C CLIs print the info JSON
    const r = run(['inspect', encDir]);
    assert.equal(r.code, 0, `${cli}: ${r.err}`);
    const info = JSON.parse(r.out.toString());
    assert.deepEqual([info.kind, info.dim, info.layers, info.pooling, info.normalize], ['encoder', 32, 2, 'mean', true], cli);
  }
});

test('convert FOLDER: the .apr records the folder\'s pooling, Normalize, maximum length and lowercasing, and embeds alone as the folder does', async () => {
  // a bge-like folder: CLS pooling, no Normalize, 16 tokens, do_lower_case
  const files = await makeFolder('tiny', { pooling: 'cls', normalize: false, maxSeqLength: 16, doLowerCase: true });
  const src = at('cls-encoder');
  writeFolder(src, files);
  const texts = ['A man is eating food.', 'ΣΟΦΙΑ and a text long enough to be cut at sixteen tokens by the maximum length'];
  const want = rt.loadEncoder(files);
  for (const extra of [[], ['--quantize', 'q8']]) {
    const out = `cls${extra.length ? '-q8' : ''}.apr`;
    ok(['convert', src, out, ...extra]);
    const apr = readFileSync(at(out));
    const alone = rt.loadEncoder({ 'model.apr': apr, 'tokenizer.json': files['tokenizer.json'] });
    assert.deepEqual([alone.info.pooling, alone.info.normalize, alone.info.maxLength, alone.info.lowerCase], ['cls', false, 16, true], out);
    if (!extra.length) assert.deepEqual(new Uint8Array(alone.embed(texts).buffer), new Uint8Array(want.embed(texts).buffer), `${out} alone: the folder's bits`);
    // files beside it still decide
    const beside = rt.loadEncoder({ 'model.apr': apr, 'tokenizer.json': files['tokenizer.json'],
      'modules.json': new TextEncoder().encode('[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}]'),
      '1_Pooling/config.json': new TextEncoder().encode('{"word_embedding_dimension": 32, "pooling_mode_mean_tokens": true}'),
      'sentence_bert_config.json': new TextEncoder().encode('{"max_seq_length": 32, "do_lower_case": false}') });
    assert.deepEqual([beside.info.pooling, beside.info.normalize, beside.info.maxLength, beside.info.lowerCase], ['mean', false, 32, false], `${out} with files`);
    alone.free(), beside.free();
  }
  want.free();
});

test('embed --prompt / --prompt-name and the folder\'s default prompt (config_sentence_transformers.json), in the three CLIs; convert keeps them', () => {
  const st = { prompts: { query: 'query: ', passage: 'passage: ' }, default_prompt_name: 'query' };
  const src = at('prompt-encoder');
  const files = { ...encFiles, 'config_sentence_transformers.json': new TextEncoder().encode(JSON.stringify(st)) };
  writeFolder(src, files);
  const plain = rt.loadEncoder(encFiles), t = encTexts[0];
  const want = (prefix) => plain.embed(prefix + t);
  for (const [cli, run] of EMBED_CLIS) {
    const f32 = (args) => {
      const r = run(['embed', src, '--text', t, '--output', 'f32', ...args]);
      assert.equal(r.code, 0, `${cli} ${args.join(' ')}: ${r.err}`);
      return f32Of(r.out);
    };
    assert.deepEqual(f32([]), want('query: '), `${cli}: the default prompt`);
    assert.deepEqual(f32(['--prompt', '']), want(''), `${cli}: --prompt ''`);
    assert.deepEqual(f32(['--prompt', 'passage: ']), want('passage: '), `${cli}: --prompt`);
    if (cli === 'node') assert.deepEqual(f32(['--prompt-name', 'passage']), want('passage: '), `${cli}: --prompt-name`);
  }
  const node = EMBED_CLIS[0][1];
  const r = node(['embed', src, '--text', t, '--prompt-name', 'nope']);
  assert.equal(r.code, 1);
  assert.match(r.err, /--prompt-name "nope" is not one of the model's prompts \(query, passage\)/);
  assert.match(node(['inspect', src]).out.toString(), /prompts\s+query \(default\) "query: ", passage "passage: "/);
  ok(['convert', src, 'prompt.apr']);
  const alone = rt.loadEncoder({ 'model.apr': readFileSync(at('prompt.apr')), 'tokenizer.json': files['tokenizer.json'] });
  assert.deepEqual([alone.info.prompts, alone.info.defaultPromptName], [st.prompts, 'query']);
  assert.deepEqual(alone.embed(t), want('query: '), 'the .apr alone: the default prompt');
  alone.free(), plain.free();
});

test('embed and inspect a folder whose Transformer module is in a folder of its own (0_Transformer/), in the three CLIs', () => {
  const src = at('sub-encoder');
  const top = ['modules.json', '1_Pooling/config.json'];
  writeFolder(src, Object.fromEntries(Object.entries(encFiles).map(([name, bytes]) => [top.includes(name) ? name : `0_Transformer/${name}`,
    name === 'modules.json' ? new TextDecoder().decode(bytes).replace('"path": ""', '"path": "0_Transformer"') : bytes])));
  assert.match(readFileSync(join(src, 'modules.json'), 'utf8'), /"path": "0_Transformer"/);
  for (const [cli, run] of EMBED_CLIS) {
    const r = run(['embed', src, '--input', 'texts.txt', '--output', 'f32']);
    assert.equal(r.code, 0, `${cli}: ${r.err}`);
    assert.deepEqual(f32Of(r.out), encWant, `${cli}: the bits of the same files at the top`);
  }
  assert.match(EMBED_CLIS[0][1](['inspect', src]).out.toString(), /0_Transformer\/config\.json/);
  ok(['convert', src, 'sub.apr']);
  const alone = rt.loadEncoder({ 'model.apr': readFileSync(at('sub.apr')), 'tokenizer.json': encFiles['tokenizer.json'] });
  assert.deepEqual(alone.embed(encTexts), encWant, 'convert: the .apr alone embeds as the folder');
  alone.free();
});

test('embed errors: usage exits 2, a bad folder or input exits 1, with the reason and no stack trace', () => {
  writeFileSync(at('bad-utf8.txt'), Buffer.from([0x61, 0x0a, 0x62, 0xff, 0x0a]));
  const broken = at('broken-encoder');
  mkdirSync(broken, { recursive: true });
  for (const [name, bytes] of Object.entries(encFiles)) if (name !== 'config.json' && !name.includes('/')) writeFileSync(join(broken, name), bytes);
  for (const [cli, run] of EMBED_CLIS) {
    const check = (args, code, re) => {
      const r = run(args);
      assert.equal(r.code, code, `${cli} ${args.join(' ')}: exit ${r.code}: ${r.err}`);
      assert.match(r.err, re, `${cli} ${args.join(' ')}`);
      assert.doesNotMatch(r.err, /\n\s+at /, 'no stack trace');
    };
    check(['embed', encDir], 2, /--text TEXT or --input FILE/);
    check(['embed', encDir, '--text', 'a', '--input', 'texts.txt'], 2, /--text|--input/);
    check(['embed', encDir, '--text', 'a', '--output', 'xml'], 2, /--output must be/);
    check(['embed', broken, '--text', 'a'], 1, /INVALID_ARGUMENT: .*config\.json is missing/);
    check(['embed', at('nowhere'), '--text', 'a'], 1, /nowhere/);
    check(['embed', encDir, '--input', 'bad-utf8.txt'], 1, /INVALID_UTF8/);
    check(['embed', model('mnist-mlp.safetensors'), '--text', 'a'], 1, /not a sentence encoder|NOT_A_MODEL/);
  }
});
