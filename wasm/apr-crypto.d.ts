// Type declarations for apr-crypto.mjs: signatures and encryption of .apr v1 ("APRN") files.
// Keys are raw 32-byte Uint8Arrays everywhere (Ed25519 seeds / public keys, X25519 secrets /
// public keys). Errors are MlrtError (from mlrt.mjs) with a stable code.

import type { Argon2idFunction } from './mlrt.js';

export type { Argon2idFunction };

/** .apr file bytes; any typed array or DataView is read as its bytes. */
export type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView;

export type KeyKind = 'ed25519' | 'x25519';

export interface KeyPair {
  /** Ed25519: the 32-byte seed. X25519: the 32-byte scalar. */
  readonly secretKey: Uint8Array;
  readonly publicKey: Uint8Array;
}

/** aprender's Argon2id parameters, as @noble/hashes takes them. */
export declare const ARGON2ID_PARAMS: Readonly<{ m: 19456; t: 2; p: 1; dkLen: 32; version: 0x13 }>;

/** CRC-32/ISO-HDLC (zlib's crc32) of the byte arrays, as if concatenated: an unsigned 32-bit number. */
export function crc32(...parts: Uint8Array[]): number;

export interface VerifyResult {
  /** The file has the SIGNED flag (0x02) and its 96-byte signature block. */
  readonly signed: boolean;
  /** The signature verified (and, with a trusted key, the embedded key equals it). */
  readonly valid: boolean;
  /** The key that verified it: the caller's ('trusted') or the file's own ('embedded'); null unless valid. */
  readonly signer: 'trusted' | 'embedded' | null;
  /** The public key stored in the file (signed files), whether or not it verified. */
  readonly embeddedKey: Uint8Array | null;
  /** Why not valid (absent when valid). */
  readonly reason?: string;
}

/** Never throws for a bad or missing signature; throws MlrtError (CHECKSUM_MISMATCH, TRUNCATED,
 * UNKNOWN_FORMAT, UNSUPPORTED_VERSION, SIZE_MISMATCH, INVALID_ARGUMENT) for a malformed container or argument. */
export function verifyAprV1(file: Bytes, options?: { publicKey?: Uint8Array | CryptoKey | null }): Promise<VerifyResult>;

/** Sets flag 0x02 and appends signature(64) ‖ public key(32) over header ‖ metadata ‖ payload;
 * recomputes the CRC. Deterministic. The input must not be signed already (INVALID_ARGUMENT); it
 * may be encrypted (the signature then covers the ciphertext). */
export function signAprV1(plainFile: Bytes, secretKey: Uint8Array): Promise<Uint8Array>;

export interface EncryptOptions {
  /** Password mode: payload = salt16 ‖ nonce12 ‖ ciphertext ‖ tag16, key = Argon2id(UTF-8 password, salt). */
  password?: string | Uint8Array;
  /** Recipient mode (X25519): payload = ephemeral public32 ‖ recipient id8 ‖ nonce12 ‖ ciphertext ‖ tag16. */
  recipientPublicKey?: Uint8Array;
  /** Random bytes for salt, ephemeral secret and nonce (default crypto.getRandomValues). For tests. */
  random?: (n: number) => Uint8Array;
  /** Argon2id to use instead of importing @noble/hashes. */
  argon2id?: Argon2idFunction;
}

/** Encrypts the stored (possibly compressed) payload with AES-256-GCM; exactly one of password
 * and recipientPublicKey. The input must be neither encrypted nor signed (INVALID_ARGUMENT). */
export function encryptAprV1(plainFile: Bytes, options: EncryptOptions): Promise<Uint8Array>;

export interface DecryptOptions {
  password?: string | Uint8Array;
  /** The recipient's raw 32-byte X25519 secret key. */
  recipientSecretKey?: Uint8Array;
  argon2id?: Argon2idFunction;
}

/** The equivalent plain file (flags 0x01 and 0x02 cleared, payload decrypted, payload_size and CRC
 * rewritten). Codes: NOT_ENCRYPTED, INVALID_ARGUMENT (no password or key), TRUNCATED (payload
 * shorter than its prefix and tag), WRONG_RECIPIENT, DECRYPTION_FAILED, UNSUPPORTED (no Argon2id
 * available), and the container codes of verifyAprV1. */
export function decryptAprV1(file: Bytes, options: DecryptOptions): Promise<Uint8Array>;

/** decryptAprV1, also naming the mode that opened it: recipient mode when recipientSecretKey's id
 * matches the file's, else password mode when a password is given. */
export function decryptAprV1Detailed(file: Bytes, options: DecryptOptions): Promise<{ file: Uint8Array; mode: 'password' | 'recipient' }>;

export function generateKeyPair(kind: KeyKind): Promise<KeyPair>;

export function publicKeyFromSecret(kind: KeyKind, secretKey: Uint8Array): Promise<Uint8Array>;

/** A key file's key: 32 raw bytes, or 64 hex characters with surrounding whitespace (a string: hex only). */
export function parseKeyFile(bytes: Bytes | string): Uint8Array;
