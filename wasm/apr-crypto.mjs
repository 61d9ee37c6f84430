// apr-crypto.mjs — signatures and encryption of aprender's .apr v1 ("APRN") files, on WebCrypto.
//
//   import { verifyAprV1, decryptAprV1 } from './apr-crypto.mjs';
//   const { valid, signer } = await verifyAprV1(bytes, { publicKey });   // Ed25519
//   const plain = await decryptAprV1(bytes, { password });               // AES-256-GCM
//
// The C core reads containers but does no cryptography: it refuses an encrypted payload
// (ENCRYPTED) and never checks a signature. This module does both with globalThis.crypto.subtle
// (Ed25519, X25519, HKDF-SHA256, AES-256-GCM: Node >= 20, current Chromium, Cloudflare workerd),
// and nothing hand-written. Argon2id (password mode) is not in WebCrypto: it comes from
// @noble/hashes, imported only when a password is used, or from options.argon2id.
//
// Layout (aprender's format::signing / format::encryption):
//   signed      header ‖ metadata ‖ payload ‖ signature(64) ‖ public key(32) ‖ crc32
//               signature over header ‖ metadata ‖ payload, the header with flag 0x02 set
//   password    payload = salt(16) ‖ nonce(12) ‖ ciphertext ‖ tag(16); key = Argon2id(password, salt)
//   recipient   payload = ephemeral X25519 public(32) ‖ recipient id(8) ‖ nonce(12) ‖ ciphertext ‖ tag(16);
//               key = HKDF-SHA256(no salt, X25519(ephemeral, recipient), "apr-v1-encrypt")
// The encrypted plaintext is the payload as stored (compressed when byte 20 says so). Header and
// metadata are not encrypted and, unless the file is signed, not authenticated.
// No Node-only API on the import path.

import { MlrtError } from './mlrt.mjs';
import { crc32 } from './crc32.mjs';

export { crc32 };

const HEADER = 32;
const CRC = 4;
const SIGNATURE = 64;
const PUBLIC_KEY = 32;
const FLAG_ENCRYPTED = 0x01;
const FLAG_SIGNED = 0x02;
const SALT = 16;
const NONCE = 12;
const TAG = 16;
const RECIPIENT_ID = 8;
const PASSWORD_PREFIX = SALT;                       // then the nonce
const RECIPIENT_PREFIX = PUBLIC_KEY + RECIPIENT_ID; // then the nonce
const MAX_U32 = 0xffffffff;

/** aprender's Argon2::default() (argon2 0.5): Argon2id v0x13, 19456 KiB, 2 passes, 1 lane, 32 bytes. */
export const ARGON2ID_PARAMS = Object.freeze({ m: 19456, t: 2, p: 1, dkLen: 32, version: 0x13 });

const enc = new TextEncoder();
const HKDF_INFO = enc.encode('apr-v1-encrypt');

const ALGORITHMS = {
  ed25519: { name: 'Ed25519', privateUsages: ['sign'] },
  x25519: { name: 'X25519', privateUsages: ['deriveBits'] },
};

// PKCS#8 (RFC 8410) of a raw 32-byte private key is this fixed DER prefix then the key. WebCrypto
// imports raw private keys only as PKCS#8 or JWK, and JWK would need the public key first.
const PKCS8_PREFIX = {
  Ed25519: fromHex('302e020100300506032b657004220420'),
  X25519: fromHex('302e020100300506032b656e04220420'),
};

// ------------------------------------------------------------------ small helpers

function fail(code, message) {
  return new MlrtError(code, message);
}

function fromHex(s) {
  return Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));
}

const toHex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

function fromBase64url(s) {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/');
  return Uint8Array.from(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4)), (c) => c.charCodeAt(0));
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

function equalBytes(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** A Uint8Array view of bytes (Uint8Array, another typed array or DataView, or an ArrayBuffer). */
function bytesOf(value, what) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw fail('INVALID_ARGUMENT', `${what}: expected a Uint8Array or ArrayBuffer, got ${describe(value)}`);
}

function key32(value, what) {
  const b = bytesOf(value, what);
  if (b.length !== 32) throw fail('INVALID_ARGUMENT', `${what}: expected a raw 32-byte key, got ${b.length} bytes`);
  return b;
}

function describe(v) {
  return v === null ? 'null' : typeof v === 'object' ? v.constructor?.name ?? 'object' : typeof v;
}

function subtle() {
  const s = globalThis.crypto?.subtle;
  if (!s) throw fail('UNSUPPORTED', 'apr: this engine has no WebCrypto (globalThis.crypto.subtle); a browser needs a secure context');
  return s;
}

const defaultRandom = (n) => globalThis.crypto.getRandomValues(new Uint8Array(n));

function randomBytes(random, n) {
  const b = random(n);
  if (!(b instanceof Uint8Array) || b.length !== n) {
    throw fail('INVALID_ARGUMENT', `encryptAprV1: options.random(${n}) must return a Uint8Array of ${n} bytes, got ${describe(b)}${b?.length !== undefined ? ` of ${b.length}` : ''}`);
  }
  return b;
}

// ------------------------------------------------------------------ the container

/**
 * The APRN layout, checked in the C core's order as far as needed to find the sections (size,
 * CRC, magic, major version, section bounds, the signature block). The C core checks the rest
 * (model type, compression, metadata, payload) when the file is loaded.
 */
function parseContainer(file) {
  const n = file.length;
  if (n < HEADER + CRC) throw fail('TRUNCATED', `apr: file is ${n} bytes, shorter than the 32-byte header and 4-byte checksum`);
  const dv = new DataView(file.buffer, file.byteOffset, n);
  const stored = dv.getUint32(n - CRC, true), computed = crc32(file.subarray(0, n - CRC));
  if (stored !== computed) {
    throw fail('CHECKSUM_MISMATCH', `apr: checksum mismatch: the file stores 0x${hex32(stored)} but its bytes [0, ${n - CRC}) give 0x${hex32(computed)}`);
  }
  if (file[0] !== 0x41 || file[1] !== 0x50 || file[2] !== 0x52 || file[3] !== 0x4e) {
    throw fail('UNKNOWN_FORMAT', `apr: magic ${toHex(file.subarray(0, 4)).replace(/(..)(?!$)/g, '$1 ')} is not 'APRN'`);
  }
  if (file[4] > 1) throw fail('UNSUPPORTED_VERSION', `apr: format version ${file[4]}.${file[5]} is newer than 1.x, which mlrt reads`);
  const metaSize = dv.getUint32(8, true), payloadSize = dv.getUint32(12, true), flags = file[21] & 0x7f;
  const payloadAt = HEADER + metaSize, end = payloadAt + payloadSize, crcAt = n - CRC;
  if (end > crcAt) {
    throw fail('TRUNCATED', `apr: metadata (${metaSize} bytes) and payload (${payloadSize} bytes) end at byte ${end}, past the checksum at byte ${crcAt}`);
  }
  const signed = (flags & FLAG_SIGNED) !== 0, extra = crcAt - end;
  if (signed && extra !== SIGNATURE + PUBLIC_KEY) {
    throw fail('SIZE_MISMATCH', `apr: a signed file has a 96-byte signature block after the payload; found ${extra} bytes from byte ${end} to the checksum`);
  }
  if (!signed && extra) {
    throw fail('SIZE_MISMATCH', `apr: ${extra} bytes between the payload end (byte ${end}) and the checksum, but the SIGNED flag is not set`);
  }
  return { signed, encrypted: (flags & FLAG_ENCRYPTED) !== 0, payloadAt, end };
}

const hex32 = (v) => v.toString(16).padStart(8, '0');

/**
 * A new file from `file`'s header (flags byte and payload size replaced) and metadata, then
 * `payload`, then `trailer` zero bytes for a signature block; the CRC is left to seal().
 */
function assemble(file, c, { flags, payload, trailer = 0 }) {
  if (payload.length > MAX_U32) throw fail('INVALID_ARGUMENT', `apr: a payload of ${payload.length} bytes does not fit the header's u32 size`);
  const out = new Uint8Array(c.payloadAt + payload.length + trailer + CRC);
  out.set(file.subarray(0, c.payloadAt));
  out[21] = flags;
  new DataView(out.buffer).setUint32(12, payload.length, true);
  out.set(payload, c.payloadAt);
  return out;
}

/** Writes the trailing CRC32 of everything before it; returns the file. */
function seal(out) {
  new DataView(out.buffer, out.byteOffset).setUint32(out.length - CRC, crc32(out.subarray(0, out.length - CRC)), true);
  return out;
}

// ------------------------------------------------------------------ keys

function algorithmFor(kind, what) {
  const alg = ALGORITHMS[kind];
  if (!alg) throw fail('INVALID_ARGUMENT', `${what}: key kind must be 'ed25519' or 'x25519', got ${JSON.stringify(kind)}`);
  return alg;
}

async function importSecret(kind, secretKey, what, extractable = false) {
  const alg = algorithmFor(kind, what);
  const der = concat(PKCS8_PREFIX[alg.name], key32(secretKey, what));
  try {
    return await subtle().importKey('pkcs8', der, { name: alg.name }, extractable, alg.privateUsages);
  } catch (e) {
    throw fail('INVALID_ARGUMENT', `${what}: WebCrypto refused the ${alg.name} secret key: ${e.message}`);
  }
}

/** A pair of raw 32-byte keys: an Ed25519 seed or an X25519 scalar, and its public key. */
export async function generateKeyPair(kind) {
  const alg = algorithmFor(kind, 'generateKeyPair');
  const pair = await subtle().generateKey({ name: alg.name }, true, alg.privateUsages);
  const jwk = await subtle().exportKey('jwk', pair.privateKey);
  return { secretKey: fromBase64url(jwk.d), publicKey: fromBase64url(jwk.x) };
}

/** The raw 32-byte public key of a raw 32-byte Ed25519 seed or X25519 secret. */
export async function publicKeyFromSecret(kind, secretKey) {
  const key = await importSecret(kind, secretKey, 'publicKeyFromSecret', true);
  return fromBase64url((await subtle().exportKey('jwk', key)).x);
}

/** The key of a key file: 32 raw bytes, or 64 hex characters (surrounding whitespace ignored). */
export function parseKeyFile(bytes) {
  const text = typeof bytes === 'string';
  const b = text ? enc.encode(bytes) : bytesOf(bytes, 'parseKeyFile');
  if (b.length === 32 && !text) return b.slice();
  const hex = String.fromCharCode(...b.subarray(0, 200)).trim();
  if (b.length < 200 && /^[0-9a-fA-F]{64}$/.test(hex)) return fromHex(hex);
  throw fail('INVALID_ARGUMENT', `parseKeyFile: expected 32 raw bytes or 64 hex characters, got ${b.length} bytes that are neither`);
}

// ------------------------------------------------------------------ signatures

async function verifyingKey(publicKey) {
  if (typeof publicKey === 'object' && publicKey?.type === 'public' && publicKey.algorithm?.name === 'Ed25519') {
    return publicKey; // a CryptoKey already
  }
  const raw = key32(publicKey, 'verifyAprV1: options.publicKey (32 raw bytes or an Ed25519 public CryptoKey)');
  try {
    return await subtle().importKey('raw', raw, { name: 'Ed25519' }, true, ['verify']);
  } catch (e) {
    throw fail('INVALID_ARGUMENT', `verifyAprV1: options.publicKey is not a valid Ed25519 public key: ${e.message}`);
  }
}

/** The raw bytes of a public CryptoKey, or null when the engine will not export it. */
async function rawPublicKey(key) {
  try {
    return new Uint8Array(await subtle().exportKey('raw', key));
  } catch {
    return null;
  }
}

/**
 * Checks a file's Ed25519 signature against options.publicKey (the trusted key) or, without one,
 * against the key the file embeds, which proves only that the file is intact, not who made it.
 * With a trusted key the embedded key must equal it too (when the CryptoKey can be exported).
 * Never throws for a bad or missing signature: `valid` says, `reason` says why not. `signer` names
 * the key that verified it and is null unless valid. Throws MlrtError for a malformed container.
 */
export async function verifyAprV1(file, options = {}) {
  file = bytesOf(file, 'verifyAprV1');
  const c = parseContainer(file);
  if (!c.signed) return { signed: false, valid: false, signer: null, embeddedKey: null, reason: 'the file is not signed (flag 0x02 is clear)' };
  const signature = file.slice(c.end, c.end + SIGNATURE);
  const embeddedKey = file.slice(c.end + SIGNATURE, c.end + SIGNATURE + PUBLIC_KEY);
  const publicKey = options?.publicKey;
  const trusted = publicKey !== undefined && publicKey !== null;
  const result = (valid, reason) => ({
    signed: true, valid, signer: valid ? (trusted ? 'trusted' : 'embedded') : null, embeddedKey, ...(valid ? {} : { reason }),
  });
  let key;
  if (trusted) key = await verifyingKey(publicKey);
  else {
    try {
      key = await subtle().importKey('raw', embeddedKey, { name: 'Ed25519' }, false, ['verify']);
    } catch {
      return result(false, 'the public key embedded in the file is not a valid Ed25519 key');
    }
  }
  let ok = false;
  try {
    ok = await subtle().verify({ name: 'Ed25519' }, key, signature, file.subarray(0, c.end));
  } catch (e) {
    return result(false, `Ed25519 verification failed: ${e.message}`);
  }
  if (ok && trusted) {
    // The trusted key verified the signed bytes; the key block after the signature is covered only
    // by the CRC, so an embedded key other than the trusted one means the file was altered.
    const trustedRaw = await rawPublicKey(key);
    if (trustedRaw && !equalBytes(trustedRaw, embeddedKey)) {
      return result(false, `the signature verifies with the trusted public key but the file embeds another key, ${toHex(embeddedKey).slice(0, 16)}…: the key block was altered`);
    }
  }
  if (ok) return result(true);
  if (trusted && publicKey instanceof Uint8Array && !equalBytes(publicKey, embeddedKey)) {
    return result(false, `the signature does not verify with the trusted public key ${toHex(publicKey).slice(0, 16)}…; the file embeds another key, ${toHex(embeddedKey).slice(0, 16)}…`);
  }
  return result(false, `the signature does not match the signed bytes [0, ${c.end}) (header, metadata and payload): the file was altered or signed by another key`);
}

/**
 * Signs an unsigned APRN file (plain, or encrypted: the signature then covers the ciphertext and is
 * checked before decrypting). Sets flag 0x02, appends signature ‖ public key, recomputes the CRC.
 * Deterministic: Ed25519 signatures are.
 */
export async function signAprV1(plainFile, secretKey) {
  const file = bytesOf(plainFile, 'signAprV1');
  const c = parseContainer(file);
  if (c.signed) throw fail('INVALID_ARGUMENT', 'signAprV1: the file is already signed (flag 0x02)');
  const key = await importSecret('ed25519', secretKey, 'signAprV1: secretKey (a 32-byte Ed25519 seed)', true);
  const publicKey = fromBase64url((await subtle().exportKey('jwk', key)).x);
  const out = assemble(file, c, { flags: file[21] | FLAG_SIGNED, payload: file.subarray(c.payloadAt, c.end), trailer: SIGNATURE + PUBLIC_KEY });
  const signature = new Uint8Array(await subtle().sign({ name: 'Ed25519' }, key, out.subarray(0, c.end)));
  out.set(signature, c.end);
  out.set(publicKey, c.end + SIGNATURE);
  return seal(out);
}

// ------------------------------------------------------------------ encryption

let noble; // the lazily imported @noble/hashes Argon2id

async function defaultArgon2id() {
  if (!noble) {
    try {
      noble = (await import('@noble/hashes/argon2.js')).argon2idAsync;
    } catch (e) {
      throw fail('UNSUPPORTED', `apr: password mode needs Argon2id: install @noble/hashes, or pass options.argon2id (${e.message})`);
    }
  }
  return (password, salt) => noble(password, salt, ARGON2ID_PARAMS);
}

function passwordBytes(password, what) {
  if (typeof password === 'string') return enc.encode(password);
  if (password instanceof Uint8Array) return password;
  throw fail('INVALID_ARGUMENT', `${what}: options.password must be a string (UTF-8 is used) or a Uint8Array, got ${describe(password)}`);
}

async function aesKey(raw) {
  return subtle().importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
}

/** Password mode's AES key: Argon2id(password, salt) with aprender's parameters. */
async function passwordKey(password, salt, argon2id, what) {
  const pw = passwordBytes(password, what);
  if (argon2id !== undefined && typeof argon2id !== 'function') {
    throw fail('INVALID_ARGUMENT', `${what}: options.argon2id must be a function (password, salt) => 32 bytes`);
  }
  const derive = argon2id ?? await defaultArgon2id();
  const raw = await derive(pw, salt.slice());
  if (!(raw instanceof Uint8Array) || raw.length !== 32) {
    throw fail('INVALID_ARGUMENT', `${what}: Argon2id must give 32 bytes, got ${describe(raw)}${raw?.length !== undefined ? ` of ${raw.length}` : ''}`);
  }
  return aesKey(raw);
}

/** Recipient mode's AES key: HKDF-SHA256(salt none, X25519(secret, peer), "apr-v1-encrypt", 32). */
async function recipientKey(secret, peerPublic, what, code) {
  const s = subtle();
  const priv = await importSecret('x25519', secret, what);
  let shared;
  try {
    const peer = await s.importKey('raw', peerPublic, { name: 'X25519' }, false, []);
    shared = await s.deriveBits({ name: 'X25519', public: peer }, priv, 256);
  } catch (e) {
    // A low-order point gives an all-zero secret, which WebCrypto refuses.
    throw fail(code, `${what}: X25519 with the public key ${toHex(peerPublic).slice(0, 16)}… failed: ${e.message}`);
  }
  const ikm = await s.importKey('raw', shared, 'HKDF', false, ['deriveBits']);
  // RFC 5869: no salt means HashLen zero bytes, which HMAC treats like the empty key.
  const raw = await s.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: HKDF_INFO }, ikm, 256);
  return aesKey(raw);
}

/**
 * Encrypts an unsigned, unencrypted APRN file's payload (as stored, compressed or not) with
 * AES-256-GCM; exactly one of options.password and options.recipientPublicKey (X25519, 32 bytes).
 * Sets flag 0x01 and payload_size; keeps uncompressed_size and compression; recomputes the CRC.
 * options.random(n) supplies salt, nonce and ephemeral key (default crypto.getRandomValues).
 */
export async function encryptAprV1(plainFile, options = {}) {
  const file = bytesOf(plainFile, 'encryptAprV1');
  const { password, recipientPublicKey, random = defaultRandom, argon2id } = options ?? {};
  const c = parseContainer(file);
  if (c.encrypted) throw fail('INVALID_ARGUMENT', 'encryptAprV1: the file is already encrypted (flag 0x01)');
  if (c.signed) {
    throw fail('INVALID_ARGUMENT', 'encryptAprV1: the file is signed and encrypting changes the signed payload: encrypt the unsigned file, then sign the result');
  }
  if ((password == null) === (recipientPublicKey == null)) {
    throw fail('INVALID_ARGUMENT', 'encryptAprV1: pass exactly one of options.password and options.recipientPublicKey');
  }
  if (typeof random !== 'function') throw fail('INVALID_ARGUMENT', 'encryptAprV1: options.random must be a function (n) => Uint8Array(n)');
  let prefix, key;
  if (password != null) {
    prefix = randomBytes(random, SALT);
    key = await passwordKey(password, prefix, argon2id, 'encryptAprV1');
  } else {
    const recipient = key32(recipientPublicKey, 'encryptAprV1: options.recipientPublicKey (X25519)');
    const ephemeral = randomBytes(random, 32);
    key = await recipientKey(ephemeral, recipient, 'encryptAprV1: options.recipientPublicKey', 'INVALID_ARGUMENT');
    prefix = concat(await publicKeyFromSecret('x25519', ephemeral), recipient.subarray(0, RECIPIENT_ID));
  }
  const nonce = randomBytes(random, NONCE);
  const sealed = new Uint8Array(await subtle().encrypt({ name: 'AES-GCM', iv: nonce }, key, file.subarray(c.payloadAt, c.end)));
  return seal(assemble(file, c, { flags: file[21] | FLAG_ENCRYPTED, payload: concat(prefix, nonce, sealed) }));
}

/**
 * decryptAprV1, also saying which mode opened the file: { file, mode: 'password' | 'recipient' }.
 * The mode is not in the header: with a recipientSecretKey whose id matches the file's it is
 * recipient mode, else password mode when a password is given, else WRONG_RECIPIENT.
 */
export async function decryptAprV1Detailed(file, options = {}) {
  file = bytesOf(file, 'decryptAprV1');
  const { password, recipientSecretKey, argon2id } = options ?? {};
  const c = parseContainer(file);
  if (!c.encrypted) throw fail('NOT_ENCRYPTED', 'decryptAprV1: the file is not encrypted (flag 0x01 is clear)');
  if (password == null && recipientSecretKey == null) {
    throw fail('INVALID_ARGUMENT', 'decryptAprV1: the payload is encrypted: pass options.password (password mode) or options.recipientSecretKey (X25519 recipient mode)');
  }
  const payload = file.subarray(c.payloadAt, c.end);
  let mode = 'password', ourId = null, idMatches = false;
  if (recipientSecretKey != null) {
    ourId = (await publicKeyFromSecret('x25519', recipientSecretKey)).subarray(0, RECIPIENT_ID);
    idMatches = payload.length >= RECIPIENT_PREFIX && equalBytes(payload.subarray(PUBLIC_KEY, RECIPIENT_PREFIX), ourId);
    if (idMatches || password == null) mode = 'recipient';
  }
  const prefix = mode === 'password' ? PASSWORD_PREFIX : RECIPIENT_PREFIX;
  if (payload.length < prefix + NONCE + TAG) {
    throw fail('TRUNCATED', `apr: the encrypted payload at byte ${c.payloadAt} is ${payload.length} bytes, shorter than the ${prefix + NONCE + TAG} bytes of ${mode === 'password' ? 'salt, nonce and tag' : 'ephemeral key, recipient id, nonce and tag'} (${mode} mode)`);
  }
  if (mode === 'recipient' && !idMatches) {
    throw fail('WRONG_RECIPIENT', `apr: the file is encrypted for recipient id ${toHex(payload.subarray(PUBLIC_KEY, RECIPIENT_PREFIX))}, not for this key (id ${toHex(ourId)}, the first 8 bytes of its X25519 public key), or it is password-encrypted`);
  }
  const key = mode === 'password'
    ? await passwordKey(password, payload.subarray(0, SALT), argon2id, 'decryptAprV1')
    : await recipientKey(recipientSecretKey, payload.subarray(0, PUBLIC_KEY), 'apr: the ephemeral key in the payload', 'DECRYPTION_FAILED');
  let plaintext;
  try {
    plaintext = new Uint8Array(await subtle().decrypt({ name: 'AES-GCM', iv: payload.subarray(prefix, prefix + NONCE) }, key, payload.subarray(prefix + NONCE)));
  } catch {
    throw fail('DECRYPTION_FAILED', `apr: AES-GCM authentication failed for the ${payload.length}-byte encrypted payload at byte ${c.payloadAt}: ${mode === 'password' ? 'wrong password, or ' : ''}the payload was altered`);
  }
  // The result is a plain file; a signature (over the ciphertext) cannot hold for it, so it goes too.
  const flags = file[21] & ~(FLAG_ENCRYPTED | FLAG_SIGNED);
  return { file: seal(assemble(file, c, { flags, payload: plaintext })), mode };
}

/**
 * An equivalent plain APRN file the C core loads: flag 0x01 (and 0x02, a signature over the
 * ciphertext: verify first) cleared, the payload decrypted, payload_size and CRC rewritten.
 * Codes: NOT_ENCRYPTED, INVALID_ARGUMENT (no password or key), TRUNCATED, WRONG_RECIPIENT,
 * DECRYPTION_FAILED; container errors as the C core names them.
 */
export async function decryptAprV1(file, options = {}) {
  return (await decryptAprV1Detailed(file, options)).file;
}
