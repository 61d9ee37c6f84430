// Signed and encrypted .apr v1 files: wasm/apr-crypto.mjs and Runtime.load() against an
// independent implementation (tests/gen/apr_crypto.py on Debian's python3-cryptography and
// python3-argon2), both ways, with real small models whose predictions are checked after loading.
// Argon2id derivations are few on purpose (each takes a few hundred ms in pure JS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRuntime, MlrtError } from '../wasm/mlrt.mjs';
import {
  crc32, verifyAprV1, signAprV1, encryptAprV1, decryptAprV1, decryptAprV1Detailed, generateKeyPair,
  publicKeyFromSecret, parseKeyFile, ARGON2ID_PARAMS,
} from '../wasm/apr-crypto.mjs';
import { concat, u8, u64le, f32le, fromHex, bincodeF32s, aprV1, withV1Crc, crc32 as helperCrc32, APR_DEFAULT_META } from './helpers.mjs';

const rt = await createRuntime();
const enc = new TextEncoder();
const hex = (b) => Buffer.from(b).toString('hex');

// ------------------------------------------------------------------ the independent side

const SCRIPT = fileURLToPath(new URL('./gen/apr_crypto.py', import.meta.url));
function py(args, input = new Uint8Array(0)) {
  const r = spawnSync('/usr/bin/python3', [SCRIPT, ...args], { input, maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`apr_crypto.py ${args[0]} failed (${r.status}): ${r.stderr}`);
  return new Uint8Array(r.stdout);
}
const pyText = (args, input) => new TextDecoder().decode(py(args, input)).trim();

// ------------------------------------------------------------------ models and keys

// LinearRegression y = 2 x0 - x1 + 0.5 (Option<Vec<f32>> coefficients, intercept, fit_intercept)
const LINEAR = aprV1({ type: 1, payload: fromHex('01 0200000000000000 00000040 000080bf 0000003f 01'),
  metadata: { ...APR_DEFAULT_META, model_name: 'lin' } });
const LINEAR_X = [1, 1, 3, -2, 0, 0, -1.5, 4];
const LINEAR_Y = [1.5, 8.5, 0.5, -6.5];

// LogisticRegression, the 5-field layout: coefficients, intercept, learning rate, max_iter, tol
const LOGISTIC_W = [0.5, -1, 2], LOGISTIC_B = 0.25;
const LOGISTIC = aprV1({ type: 2, payload: concat(u8(1), bincodeF32s(LOGISTIC_W), f32le(LOGISTIC_B), f32le(0.01), u64le(1000), f32le(1e-4)) });
const LOGISTIC_X = [1, 2, 3, -1, 0.5, 0, 0, 0, 0];

function checkLinear(model) {
  assert.equal(model.info.kind, 'linear_regression');
  assert.deepEqual(Array.from(model.predictBatch(LINEAR_X, 4)), LINEAR_Y);
}

function checkLogistic(model) {
  assert.equal(model.info.kind, 'logistic_regression');
  const got = model.predictBatch(LOGISTIC_X, 3);
  for (let r = 0; r < 3; r++) {
    const z = LOGISTIC_W.reduce((s, w, i) => s + w * LOGISTIC_X[r * 3 + i], LOGISTIC_B);
    assert.ok(Math.abs(got[r] - 1 / (1 + Math.exp(-z))) < 1e-6, `row ${r}: ${got[r]}`);
  }
}

const seq = (n, from) => Uint8Array.from({ length: n }, (_, i) => (from + i) & 0xff);
const ED_SEED = seq(32, 1);
const ED_OTHER = seq(32, 101);
const X_SECRET = seq(32, 50);
const X_OTHER = seq(32, 150);
const EPHEMERAL = seq(32, 200);
const SALT = seq(16, 7);
const NONCE = seq(12, 33);
const PASSWORD = 'correct horse battery staple ✓';

const ED_PUBLIC = await publicKeyFromSecret('ed25519', ED_SEED);
const X_PUBLIC = await publicKeyFromSecret('x25519', X_SECRET);

/** options.random for encryptAprV1 that hands out the given byte strings in order. */
function scripted(...chunks) {
  return (n) => {
    const next = chunks.shift();
    assert.equal(next?.length, n, `random(${n}) asked for unexpected bytes`);
    return next;
  };
}

async function rejects(promise, code, messagePart) {
  let err;
  try { await promise; } catch (e) { err = e; }
  assert.ok(err, `expected MlrtError ${code}, nothing was thrown`);
  assert.ok(err instanceof MlrtError, `expected MlrtError ${code}, got ${err}`);
  assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
  if (messagePart) assert.match(err.message, messagePart);
  return err;
}

/** The code load() refuses with, or 'OK' (the model is disposed). */
async function loadCode(file, options) {
  try {
    (await rt.load(file, options)).dispose();
    return 'OK';
  } catch (e) {
    if (!(e instanceof MlrtError)) throw e;
    return e.code;
  }
}

const headerU32 = (file, at) => new DataView(file.buffer, file.byteOffset).getUint32(at, true);
const payloadOf = (file) => file.subarray(32 + headerU32(file, 8), 32 + headerU32(file, 8) + headerU32(file, 12));

// ------------------------------------------------------------------ basics

test('crc32: the CRC-32/ISO-HDLC check values, and what the files store', () => {
  assert.equal(crc32(enc.encode('123456789')), 0xcbf43926);
  assert.equal(crc32(new Uint8Array(0)), 0);
  assert.equal(crc32(Uint8Array.of(0)), 0xd202ef8d);
  assert.equal(crc32(Uint8Array.of(0xff)), 0xff000000);
  assert.equal(crc32(enc.encode('1234'), enc.encode('56789')), 0xcbf43926);
  assert.equal(crc32(LINEAR.subarray(0, -4)), headerU32(LINEAR, LINEAR.length - 4));
  assert.equal(crc32(LOGISTIC), helperCrc32(LOGISTIC));
});

test('keys: public keys match python, generated pairs are consistent, key files parse', async () => {
  assert.equal(hex(ED_PUBLIC), pyText(['public', 'ed25519', hex(ED_SEED)]));
  assert.equal(hex(X_PUBLIC), pyText(['public', 'x25519', hex(X_SECRET)]));
  for (const kind of ['ed25519', 'x25519']) {
    const { secretKey, publicKey } = await generateKeyPair(kind);
    assert.deepEqual([secretKey.length, publicKey.length], [32, 32]);
    assert.deepEqual(await publicKeyFromSecret(kind, secretKey), publicKey);
    assert.equal(hex(publicKey), pyText(['public', kind, hex(secretKey)]));
  }
  assert.deepEqual(parseKeyFile(ED_SEED), ED_SEED);
  assert.deepEqual(parseKeyFile(enc.encode(`  ${hex(ED_SEED).toUpperCase()}\n`)), ED_SEED);
  assert.deepEqual(parseKeyFile(hex(X_SECRET)), X_SECRET);
  assert.throws(() => parseKeyFile(new Uint8Array(33)), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => parseKeyFile(enc.encode('zz'.repeat(32))), { code: 'INVALID_ARGUMENT' });
  await rejects(publicKeyFromSecret('ed25519', new Uint8Array(31)), 'INVALID_ARGUMENT', /32-byte key, got 31/);
  await rejects(generateKeyPair('rsa'), 'INVALID_ARGUMENT', /'ed25519' or 'x25519'/);
});

test('the crypto module stays off the cold-start path, and has no Node-only import', () => {
  const mlrt = readFileSync(new URL('../wasm/mlrt.mjs', import.meta.url), 'utf8');
  const cryptoSrc = readFileSync(new URL('../wasm/apr-crypto.mjs', import.meta.url), 'utf8');
  assert.doesNotMatch(mlrt, /^import .*apr-crypto/m);
  assert.match(mlrt, /await import\('\.\/apr-crypto\.mjs'\)/);
  assert.doesNotMatch(cryptoSrc, /^import .*(node:|@noble)/m);
  assert.doesNotMatch(cryptoSrc, /['"]node:/);
});

// ------------------------------------------------------------------ signatures

test('sign: byte-identical to python, verified by python, deterministic', async () => {
  const signed = await signAprV1(LINEAR, ED_SEED);
  assert.deepEqual(signed, py(['sign', hex(ED_SEED)], LINEAR));
  assert.deepEqual(await signAprV1(LINEAR, ED_SEED), signed);
  assert.equal(pyText(['verify', hex(ED_PUBLIC)], signed), 'valid');
  assert.equal(pyText(['verify'], signed), 'valid');
  assert.equal(signed.length, LINEAR.length + 96);
  assert.equal(signed[21], LINEAR[21] | 0x02);
  const apr = rt.inspect(signed).apr;
  assert.deepEqual(signed.subarray(apr.publicKeyBytes.byteOffset, apr.publicKeyBytes.byteOffset + 32), ED_PUBLIC);
  await rejects(signAprV1(signed, ED_SEED), 'INVALID_ARGUMENT', /already signed/);
  await rejects(signAprV1(LINEAR, new Uint8Array(64)), 'INVALID_ARGUMENT', /32-byte key, got 64/);
});

test('verifyAprV1: trusted, embedded, wrong key, unsigned, malformed', async () => {
  const signed = py(['sign', hex(ED_OTHER)], LOGISTIC); // made by python alone
  const otherPublic = await publicKeyFromSecret('ed25519', ED_OTHER);
  assert.deepEqual(await verifyAprV1(signed, { publicKey: otherPublic }),
    { signed: true, valid: true, signer: 'trusted', embeddedKey: otherPublic });
  assert.deepEqual(await verifyAprV1(signed), { signed: true, valid: true, signer: 'embedded', embeddedKey: otherPublic });
  const key = await crypto.subtle.importKey('raw', otherPublic, { name: 'Ed25519' }, false, ['verify']);
  assert.equal((await verifyAprV1(signed, { publicKey: key })).signer, 'trusted');
  const wrong = await verifyAprV1(signed, { publicKey: ED_PUBLIC });
  assert.deepEqual([wrong.signed, wrong.valid, wrong.signer], [true, false, null]);
  assert.match(wrong.reason, /does not verify with the trusted public key .*the file embeds another key/);
  // The key block swapped for another key (CRC recomputed): the signature still verifies with the
  // trusted key, but the file is not what was signed.
  const swapped = signed.slice();
  swapped.set(ED_PUBLIC, signed.length - 4 - 32);
  const swappedCheck = await verifyAprV1(withV1Crc(swapped), { publicKey: otherPublic });
  assert.deepEqual([swappedCheck.valid, swappedCheck.signer], [false, null]);
  assert.match(swappedCheck.reason, /embeds another key.*key block was altered/);
  assert.equal((await verifyAprV1(withV1Crc(swapped))).valid, false);
  assert.deepEqual(await verifyAprV1(LOGISTIC),
    { signed: false, valid: false, signer: null, embeddedKey: null, reason: 'the file is not signed (flag 0x02 is clear)' });
  await rejects(verifyAprV1(signed.subarray(0, 40)), 'CHECKSUM_MISMATCH');
  await rejects(verifyAprV1(new Uint8Array(10)), 'TRUNCATED');
  await rejects(verifyAprV1(signed, { publicKey: new Uint8Array(31) }), 'INVALID_ARGUMENT');
  await rejects(verifyAprV1('APRN'), 'INVALID_ARGUMENT');
});

test('load: signer trusted / embedded, SIGNATURE_INVALID, NOT_SIGNED', async () => {
  const signed = await signAprV1(LINEAR, ED_SEED);
  const trusted = await rt.load(signed, { publicKey: ED_PUBLIC, expect: 'LinearRegression' });
  assert.deepEqual(trusted.info.signature, { signed: true, signer: 'trusted', verified: true });
  assert.equal(trusted.info.encrypted, false);
  assert.deepEqual(trusted.info.apr.flags, ['SIGNED']);
  checkLinear(trusted);
  const embedded = await rt.load(signed);
  assert.deepEqual(embedded.info.signature, { signed: true, signer: 'embedded', verified: true });
  checkLinear(embedded);
  assert.equal((await rt.load(signed, { requireSignature: true })).info.signature.signer, 'embedded');
  assert.ok(Object.isFrozen(embedded.info.signature));

  await rejects(rt.load(signed, { publicKey: await publicKeyFromSecret('ed25519', ED_OTHER) }), 'SIGNATURE_INVALID', /trusted public key/);
  // A file re-signed by someone else verifies against its own embedded key, never as trusted.
  const resigned = await signAprV1(LINEAR, ED_OTHER);
  assert.deepEqual((await rt.load(resigned)).info.signature, { signed: true, signer: 'embedded', verified: true });
  await rejects(rt.load(resigned, { publicKey: ED_PUBLIC }), 'SIGNATURE_INVALID');

  await rejects(rt.load(LINEAR, { publicKey: ED_PUBLIC }), 'NOT_SIGNED', /flag 0x02 is clear/);
  await rejects(rt.load(LINEAR, { requireSignature: true }), 'NOT_SIGNED', /requireSignature/);
  await rejects(rt.load(LINEAR, { requireSignature: 'yes' }), 'INVALID_ARGUMENT', /requireSignature must be a boolean/);
  await rejects(rt.load('APRN'), 'INVALID_ARGUMENT', /load: expected a Uint8Array/);
  const st = new Uint8Array(readFileSync(new URL('../build/models/mnist-mlp.safetensors', import.meta.url), { flag: 'r' }));
  await rejects(rt.load(st, { publicKey: ED_PUBLIC }), 'NOT_SIGNED', /only \.apr v1 files carry signatures/);
  // A file that is no model at all says so first, with the C core's code for it.
  const garbage = enc.encode('not a model, just text');
  const garbageCode = (() => { try { rt.inspect(garbage); } catch (e) { return e.code; } })();
  assert.ok(garbageCode);
  await rejects(rt.load(garbage, { publicKey: ED_PUBLIC }), garbageCode);
  const plain = await rt.load(LINEAR);
  assert.deepEqual([plain.info.signature, plain.info.encrypted], [{ signed: false, signer: null, verified: false }, false]);
  checkLinear(plain);
  assert.equal((await rt.load(st.buffer.slice(st.byteOffset, st.byteOffset + st.length))).info.kind, 'mlp');
});

// Flipping each byte of a signed file (all 8 bits): the CRC catches every flip; once the CRC is
// recomputed the signature catches every flip, except the bytes that must be read to find the
// signature at all, which give the container's own error codes.
test('tamper: every byte of a signed file flipped, before and after recomputing the CRC', async () => {
  const signed = await signAprV1(LINEAR, ED_SEED);
  const n = signed.length;
  // What the C core makes of the file once its magic is no longer 'APRN' (it is then read as another format).
  const notApr = (i) => {
    const f = signed.slice(); f[i] ^= 0xff;
    try { rt.inspect(f); } catch (e) { return e.code; }
    return 'OK';
  };
  const expected = (i) => {
    if (i < 4) return notApr(i);               // magic: no longer an .apr file
    if (i === 4) return 'UNSUPPORTED_VERSION'; // major version 0xfe
    if (i >= 8 && i < 16) return 'TRUNCATED';  // metadata / payload sizes now run past the file
    if (i === 21) return 'SIZE_MISMATCH';      // SIGNED cleared: 96 unexplained bytes before the CRC
    if (i >= n - 4) return 'OK';               // the CRC itself: recomputing it restores the file
    return 'SIGNATURE_INVALID';                // everything signed, the signature and the key
  };
  for (let i = 0; i < 4; i++) assert.notEqual(notApr(i), 'OK');
  const seen = {};
  for (let i = 0; i < n; i++) {
    const flipped = signed.slice();
    flipped[i] ^= 0xff;
    const raw = i < 4 ? notApr(i) : 'CHECKSUM_MISMATCH';
    assert.equal(await loadCode(flipped, { publicKey: ED_PUBLIC }), raw, `byte ${i} flipped, trusted key`);
    assert.equal(await loadCode(flipped), raw, `byte ${i} flipped, embedded key`);
    const fixed = withV1Crc(flipped);
    const want = expected(i);
    assert.equal(await loadCode(fixed, { publicKey: ED_PUBLIC }), want, `byte ${i} flipped, CRC recomputed, trusted key`);
    assert.equal(await loadCode(fixed), want, `byte ${i} flipped, CRC recomputed, embedded key`);
    seen[want] = (seen[want] ?? 0) + 1;
  }
  assert.ok(seen.SIGNATURE_INVALID > n - 20, JSON.stringify(seen));
  // Single bits of the flags byte: ENCRYPTED and the other flags are signed too.
  for (const bit of [0x01, 0x04, 0x08, 0x40, 0x80]) {
    const f = signed.slice(); f[21] ^= bit;
    assert.equal(await loadCode(withV1Crc(f), { publicKey: ED_PUBLIC }), 'SIGNATURE_INVALID', `flag bit 0x${bit.toString(16)}`);
  }
});

// ------------------------------------------------------------------ encryption: password mode

test('Argon2id: @noble/hashes gives the reference (argon2-cffi) key; one derivation timed', async (t) => {
  const { argon2idAsync } = await import('@noble/hashes/argon2.js');
  const pw = enc.encode(PASSWORD);
  const t0 = performance.now();
  const key = await argon2idAsync(pw, SALT, ARGON2ID_PARAMS);
  const ms = performance.now() - t0;
  assert.equal(hex(key), pyText(['argon2id', PASSWORD, hex(SALT)]));
  t.diagnostic(`one Argon2id derivation (m=19456 KiB, t=2, p=1) with @noble/hashes: ${ms.toFixed(0)} ms`);
});

test('password mode: python-made file loads; JS-made file is byte-identical and python decrypts it', async () => {
  const fromPy = py(['encrypt-password', PASSWORD, hex(SALT), hex(NONCE)], LOGISTIC);
  const model = await rt.load(fromPy, { password: PASSWORD, expect: 'LogisticRegression' });
  assert.equal(model.info.encrypted, 'password');
  assert.deepEqual(model.info.signature, { signed: false, signer: null, verified: false });
  assert.deepEqual(model.info.apr.flags, []);
  checkLogistic(model);

  const fromJs = await encryptAprV1(LOGISTIC, { password: PASSWORD, random: scripted(SALT, NONCE) });
  assert.deepEqual(fromJs, fromPy);
  assert.equal(fromJs[21], 0x01);
  assert.equal(headerU32(fromJs, 12), LOGISTIC.length - 36 - headerU32(LOGISTIC, 8) + 16 + 12 + 16);
  assert.equal(headerU32(fromJs, 16), headerU32(LOGISTIC, 16)); // uncompressed size kept
  assert.deepEqual(py(['decrypt-password', PASSWORD], fromJs), LOGISTIC);
});

test('password mode: wrong password, injected Argon2id, refusals before the KDF', async () => {
  const file = py(['encrypt-password', PASSWORD, hex(SALT), hex(NONCE)], LINEAR);
  await rejects(rt.load(file, { password: 'Correct horse battery staple ✓' }), 'DECRYPTION_FAILED', /wrong password, or the payload was altered/);

  // options.argon2id (a browser without a bundler): here python's Argon2id, called once with the file's salt.
  const calls = [];
  const argon2id = (password, salt) => {
    calls.push([new TextDecoder().decode(password), hex(salt)]);
    return fromHex(pyText(['argon2id', PASSWORD, hex(salt)]));
  };
  const model = await rt.load(file, { password: PASSWORD, argon2id });
  assert.deepEqual(calls, [[PASSWORD, hex(SALT)]]);
  checkLinear(model);
  assert.deepEqual(await decryptAprV1(file, { password: PASSWORD, argon2id }), LINEAR);

  // Container, type and argument problems are reported without running the KDF.
  const never = () => assert.fail('the KDF must not run');
  await rejects(rt.load(file, { password: PASSWORD, argon2id: never, expect: 'LogisticRegression' }), 'MODEL_TYPE_MISMATCH');
  await rejects(rt.load(file.subarray(0, -1), { password: PASSWORD, argon2id: never }), 'CHECKSUM_MISMATCH');
  const short = aprV1({ type: 1, payload: payloadOf(file).subarray(0, 43), rawSize: headerU32(file, 16), flags: 0x01 });
  await rejects(rt.load(short, { password: PASSWORD, argon2id: never }), 'TRUNCATED', /43 bytes, shorter than the 44 bytes of salt, nonce and tag/);
  await rejects(rt.load(file, { password: 42 }), 'INVALID_ARGUMENT', /password must be a string/);
  await rejects(rt.load(file, { password: PASSWORD, argon2id: () => new Uint8Array(16) }), 'INVALID_ARGUMENT', /32 bytes, got Uint8Array of 16/);
});

// ------------------------------------------------------------------ encryption: recipient mode

test('recipient mode: python-made file loads; JS-made file is byte-identical and python decrypts it', async () => {
  const fromPy = py(['encrypt-recipient', hex(X_PUBLIC), hex(EPHEMERAL), hex(NONCE)], LINEAR);
  const model = await rt.load(fromPy, { recipientSecretKey: X_SECRET });
  assert.equal(model.info.encrypted, 'recipient');
  checkLinear(model);
  const fromJs = await encryptAprV1(LINEAR, { recipientPublicKey: X_PUBLIC, random: scripted(EPHEMERAL, NONCE) });
  assert.deepEqual(fromJs, fromPy);
  assert.deepEqual(payloadOf(fromJs).subarray(32, 40), X_PUBLIC.subarray(0, 8)); // recipient id
  assert.deepEqual(py(['decrypt-recipient', hex(X_SECRET)], fromJs), LINEAR);
  // With fresh randomness: a new ephemeral key and nonce each time, still python-readable.
  const fresh = await encryptAprV1(LOGISTIC, { recipientPublicKey: X_PUBLIC });
  assert.notDeepEqual(payloadOf(fresh).subarray(0, 32), payloadOf(fromJs).subarray(0, 32));
  assert.deepEqual(py(['decrypt-recipient', hex(X_SECRET)], fresh), LOGISTIC);
  assert.deepEqual(await decryptAprV1Detailed(fresh, { recipientSecretKey: X_SECRET }), { file: LOGISTIC, mode: 'recipient' });
});

test('recipient mode: wrong recipient, tampering, truncation', async () => {
  const file = py(['encrypt-recipient', hex(X_PUBLIC), hex(EPHEMERAL), hex(NONCE)], LOGISTIC);
  const at = 32 + headerU32(file, 8), size = headerU32(file, 12);
  await rejects(rt.load(file, { recipientSecretKey: X_OTHER }), 'WRONG_RECIPIENT', new RegExp(`recipient id ${hex(X_PUBLIC.subarray(0, 8))}`));
  await rejects(decryptAprV1(file, { recipientSecretKey: X_OTHER }), 'WRONG_RECIPIENT');
  // Each part of the payload altered (CRC recomputed): the ephemeral key, the nonce, the ciphertext
  // and the tag fail authentication; the recipient id no longer names the key.
  const parts = { ephemeral: [0, 31], id: [32, 39], nonce: [40, 51], ciphertext: [52, size - 17], tag: [size - 16, size - 1] };
  for (const [part, offsets] of Object.entries(parts)) {
    for (const off of offsets) {
      const f = file.slice();
      f[at + off] ^= 0x01;
      assert.equal(await loadCode(f, { recipientSecretKey: X_SECRET }), 'CHECKSUM_MISMATCH', `${part} byte ${off}`);
      assert.equal(await loadCode(withV1Crc(f), { recipientSecretKey: X_SECRET }), part === 'id' ? 'WRONG_RECIPIENT' : 'DECRYPTION_FAILED', `${part} byte ${off}`);
    }
  }
  // Payload cut short, header size and CRC made consistent: too short for the prefix and tag, or a cut tag.
  const cut = (k) => aprV1({ type: 2, payload: payloadOf(file).subarray(0, size - k), rawSize: headerU32(file, 16), flags: 0x01 });
  await rejects(rt.load(cut(size - 67), { recipientSecretKey: X_SECRET }), 'TRUNCATED', /67 bytes, shorter than the 68 bytes/);
  await rejects(rt.load(cut(1), { recipientSecretKey: X_SECRET }), 'DECRYPTION_FAILED');
  await rejects(rt.load(cut(size), { recipientSecretKey: X_SECRET }), 'TRUNCATED');
  // The file itself cut: the CRC no longer matches.
  await rejects(rt.load(file.subarray(0, file.length - 10), { recipientSecretKey: X_SECRET }), 'CHECKSUM_MISMATCH');
});

test('encrypted payloads compressed with LZ4 and zstd (python3-lz4, python3-zstandard)', async () => {
  // A LinearRegression with 256 coefficients compresses well; the plaintext is the compressed payload.
  const w = Array.from({ length: 256 }, (_, i) => (i % 8) - 3.5);
  const raw = concat(u8(1), bincodeF32s(w), f32le(1.25), u8(1));
  const x = Array.from({ length: 256 }, (_, i) => (i % 5) * 0.5);
  const want = rt.loadFromBytes(aprV1({ type: 1, payload: raw })).predict(x);
  for (const [codec, compression] of [['lz4', 3], ['zstd', 1]]) {
    const payload = py(['compress', codec], raw);
    assert.ok(payload.length < raw.length / 2, `${codec} compressed ${raw.length} to ${payload.length}`);
    const plain = aprV1({ type: 1, payload, compression, rawSize: raw.length });
    const fromPy = py(['encrypt-recipient', hex(X_PUBLIC), hex(EPHEMERAL), hex(NONCE)], plain);
    assert.deepEqual([fromPy[20], headerU32(fromPy, 16)], [compression, raw.length]);
    const model = await rt.load(fromPy, { recipientSecretKey: X_SECRET });
    assert.equal(model.info.apr.compression, codec === 'lz4' ? 'Lz4' : 'ZstdDefault');
    assert.deepEqual(model.predict(x), want, codec);
    const fromJs = await encryptAprV1(plain, { recipientPublicKey: X_PUBLIC, random: scripted(EPHEMERAL, NONCE) });
    assert.deepEqual(fromJs, fromPy, codec);
    assert.deepEqual(py(['decrypt-recipient', hex(X_SECRET)], fromJs), plain, codec);
    assert.deepEqual(await decryptAprV1(fromJs, { recipientSecretKey: X_SECRET }), plain, codec);
  }
});

// ------------------------------------------------------------------ together, and the refusals

test('encrypted files through loadFromBytes and load without a key: ENCRYPTED', async () => {
  const file = await encryptAprV1(LINEAR, { recipientPublicKey: X_PUBLIC });
  assert.throws(() => rt.loadFromBytes(file), { code: 'ENCRYPTED' });
  await rejects(rt.load(file), 'ENCRYPTED', /pass \{ password \} .* or \{ recipientSecretKey \}/);
  await rejects(rt.load(file, { publicKey: ED_PUBLIC }), 'NOT_SIGNED');
  await rejects(decryptAprV1(file), 'INVALID_ARGUMENT', /pass options.password .* or options.recipientSecretKey/);
  await rejects(decryptAprV1(LINEAR, { password: 'x' }), 'NOT_ENCRYPTED', /not encrypted/);
  await rejects(encryptAprV1(file, { recipientPublicKey: X_PUBLIC }), 'INVALID_ARGUMENT', /already encrypted/);
  await rejects(encryptAprV1(LINEAR, {}), 'INVALID_ARGUMENT', /exactly one of/);
  await rejects(encryptAprV1(LINEAR, { password: 'x', recipientPublicKey: X_PUBLIC }), 'INVALID_ARGUMENT', /exactly one of/);
  await rejects(encryptAprV1(await signAprV1(LINEAR, ED_SEED), { recipientPublicKey: X_PUBLIC }), 'INVALID_ARGUMENT', /encrypt the unsigned file, then sign/);
  await rejects(encryptAprV1(LINEAR, { recipientPublicKey: X_PUBLIC, random: () => new Uint8Array(3) }), 'INVALID_ARGUMENT', /random\(32\)/);
  // A password or key for a file that is not encrypted is not needed, and not an error.
  assert.equal((await rt.load(LINEAR, { password: 'unused' })).info.encrypted, false);
});

test('encrypt, then sign: the signature covers the ciphertext and is checked before decrypting', async () => {
  const encrypted = await encryptAprV1(LOGISTIC, { recipientPublicKey: X_PUBLIC, random: scripted(EPHEMERAL, NONCE) });
  const both = await signAprV1(encrypted, ED_SEED);
  assert.equal(both[21], 0x03);
  assert.equal(pyText(['verify', hex(ED_PUBLIC)], both), 'valid');
  const model = await rt.load(both, { publicKey: ED_PUBLIC, recipientSecretKey: X_SECRET });
  assert.deepEqual([model.info.signature, model.info.encrypted], [{ signed: true, signer: 'trusted', verified: true }, 'recipient']);
  checkLogistic(model);
  // The decrypted file carries no signature: it could not hold for the plaintext.
  assert.deepEqual(await decryptAprV1(both, { recipientSecretKey: X_SECRET }), LOGISTIC);
  const tampered = both.slice();
  tampered[32 + headerU32(both, 8) + 60] ^= 1;
  await rejects(rt.load(withV1Crc(tampered), { publicKey: ED_PUBLIC, recipientSecretKey: X_SECRET }), 'SIGNATURE_INVALID');
  await rejects(rt.load(both, { publicKey: await publicKeyFromSecret('ed25519', ED_OTHER), recipientSecretKey: X_SECRET }), 'SIGNATURE_INVALID');
  await rejects(rt.load(both, { publicKey: ED_PUBLIC }), 'ENCRYPTED');
});
