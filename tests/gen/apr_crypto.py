#!/usr/bin/python3
"""An independent .apr v1 signer/encrypter for the tests of wasm/apr-crypto.mjs.

Written from the format description (aprender's format::signing and format::encryption), not
from the JavaScript, on Debian's python3-cryptography (Ed25519, X25519, HKDF, AES-GCM) and
python3-argon2 (argon2-cffi, the reference C Argon2). The file goes in on stdin and out on stdout;
keys, salts and nonces are hex arguments so that the results are reproducible.

  sign SEED                          plain -> signed (flag 0x02, signature ‖ public key)
  verify [PUBLIC]                    signed -> prints 'valid' or 'invalid' (embedded key without PUBLIC)
  encrypt-password PASSWORD SALT NONCE
  encrypt-recipient RECIPIENT_PUBLIC EPHEMERAL_SECRET NONCE
  decrypt-password PASSWORD          encrypted -> plain (flag 0x01 cleared)
  decrypt-recipient SECRET
  public ed25519|x25519 SECRET       prints the public key (hex)
  argon2id PASSWORD SALT             prints aprender's Argon2id key (hex)
  compress lz4|zstd                  raw bytes -> an .apr payload (u32 size + LZ4 block, or a zstd frame)
"""
import struct
import sys
import zlib

from argon2.low_level import Type, hash_secret_raw
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

HEADER, SIG, PUB = 32, 64, 32
ENCRYPTED, SIGNED = 0x01, 0x02
RAW = serialization.Encoding.Raw, serialization.PublicFormat.Raw


def split(f):
    """(header, metadata, payload, trailer) of an APRN file whose CRC is right."""
    assert f[:4] == b"APRN", "not an APRN file"
    assert struct.unpack_from("<I", f, len(f) - 4)[0] == zlib.crc32(f[:-4]), "bad CRC"
    meta, payload = struct.unpack_from("<II", f, 8)
    end = HEADER + meta + payload
    return f[:HEADER], f[HEADER:HEADER + meta], f[HEADER + meta:end], f[end:-4]


def build(header, meta, payload, trailer=b"", set_flags=0, clear_flags=0):
    h = bytearray(header)
    h[21] = (h[21] | set_flags) & ~clear_flags & 0xFF
    struct.pack_into("<I", h, 12, len(payload))
    body = bytes(h) + meta + payload + trailer
    return body + struct.pack("<I", zlib.crc32(body))


def argon2id(password, salt):
    return hash_secret_raw(password.encode(), salt, time_cost=2, memory_cost=19456, parallelism=1,
                           hash_len=32, type=Type.ID, version=19)


def recipient_key(secret, public):
    shared = X25519PrivateKey.from_private_bytes(secret).exchange(X25519PublicKey.from_public_bytes(public))
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"apr-v1-encrypt").derive(shared)


def main(cmd, *args):
    data = sys.stdin.buffer.read()
    out = sys.stdout.buffer
    x = bytes.fromhex
    if cmd == "public":
        cls = Ed25519PrivateKey if args[0] == "ed25519" else X25519PrivateKey
        print(cls.from_private_bytes(x(args[1])).public_key().public_bytes(*RAW).hex())
    elif cmd == "argon2id":
        print(argon2id(args[0], x(args[1])).hex())
    elif cmd == "compress":
        if args[0] == "lz4":
            import lz4.block
            out.write(lz4.block.compress(data, store_size=True))
        else:
            import zstandard
            out.write(zstandard.ZstdCompressor(level=3).compress(data))
    elif cmd == "sign":
        header, meta, payload, trailer = split(data)
        assert not trailer and not header[21] & SIGNED, "already signed"
        key = Ed25519PrivateKey.from_private_bytes(x(args[0]))
        h = bytearray(header)
        h[21] |= SIGNED
        sig = key.sign(bytes(h) + meta + payload)
        out.write(build(header, meta, payload, sig + key.public_key().public_bytes(*RAW), set_flags=SIGNED))
    elif cmd == "verify":
        header, meta, payload, trailer = split(data)
        assert header[21] & SIGNED and len(trailer) == SIG + PUB, "not signed"
        public = x(args[0]) if args else trailer[SIG:]
        try:
            Ed25519PublicKey.from_public_bytes(public).verify(trailer[:SIG], header + meta + payload)
            print("valid")
        except InvalidSignature:
            print("invalid")
    elif cmd == "encrypt-password":
        header, meta, payload, _ = split(data)
        password, salt, nonce = args[0], x(args[1]), x(args[2])
        sealed = AESGCM(argon2id(password, salt)).encrypt(nonce, payload, None)
        out.write(build(header, meta, salt + nonce + sealed, set_flags=ENCRYPTED))
    elif cmd == "encrypt-recipient":
        header, meta, payload, _ = split(data)
        recipient, ephemeral, nonce = x(args[0]), x(args[1]), x(args[2])
        eph_public = X25519PrivateKey.from_private_bytes(ephemeral).public_key().public_bytes(*RAW)
        sealed = AESGCM(recipient_key(ephemeral, recipient)).encrypt(nonce, payload, None)
        out.write(build(header, meta, eph_public + recipient[:8] + nonce + sealed, set_flags=ENCRYPTED))
    elif cmd == "decrypt-password":
        header, meta, payload, _ = split(data)
        salt, nonce, sealed = payload[:16], payload[16:28], payload[28:]
        plain = AESGCM(argon2id(args[0], salt)).decrypt(nonce, sealed, None)
        out.write(build(header, meta, plain, clear_flags=ENCRYPTED))
    elif cmd == "decrypt-recipient":
        header, meta, payload, _ = split(data)
        secret = x(args[0])
        eph_public, rid, nonce, sealed = payload[:32], payload[32:40], payload[40:52], payload[52:]
        mine = X25519PrivateKey.from_private_bytes(secret).public_key().public_bytes(*RAW)
        assert rid == mine[:8], "wrong recipient"
        plain = AESGCM(recipient_key(secret, eph_public)).decrypt(nonce, sealed, None)
        out.write(build(header, meta, plain, clear_flags=ENCRYPTED))
    else:
        sys.exit(f"apr_crypto.py: unknown command {cmd!r}")


if __name__ == "__main__":
    main(*sys.argv[1:])
