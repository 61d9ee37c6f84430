#!/usr/bin/python3
"""Writes the LZ4 / Zstandard test vectors for tests/c/test_decompress.c (and fuzz seeds).

    /usr/bin/python3 tests/gen/decompress.py [OUT_DIR]      (default build/decompress)

Needs Debian's python3-lz4 and python3-zstandard, and the zstd CLI:
    apt-get install -y python3-lz4 python3-zstandard zstd
They only *produce* vectors; mlrt's decoders never link them. Output (deterministic data,
so re-running gives the same originals):

    OUT_DIR/<data>.bin                 original bytes
    OUT_DIR/<data>.<variant>.lz4       u32 LE length + one raw LZ4 block (lz4_flex's compress_prepend_size)
    OUT_DIR/<data>.<variant>.zst       one zstd frame
    OUT_DIR/manifest.txt               "lz4|zstd <compressed file> <original file>" per line (names in OUT_DIR)
    OUT_DIR/seeds-lz4/, seeds-zstd/    fuzz seeds: 3-byte LE output length + block/frame (small ones only)
"""
import os
import random
import struct
import subprocess
import sys

try:
    import lz4.block
    import zstandard
except ImportError as e:  # pragma: no cover
    sys.exit(f"gen.py: {e}; install with: apt-get install -y python3-lz4 python3-zstandard zstd "
             f"(and run with /usr/bin/python3)")

WORDS = ("the of and to in is was for on that with as by at from it an be this are or which weights "
         "layer model tensor matrix float bias input output hidden network train loss gradient value "
         "zstandard literal sequence offset match huffman table state stream block frame").split()


def text(rng, n):
    out, size = [], 0
    while size < n:
        w = rng.choice(WORDS) + (". " if rng.random() < 0.08 else " ")
        out.append(w)
        size += len(w)
    return "".join(out).encode()[:n]


def runs(rng, n):
    out = bytearray()
    while len(out) < n:
        out += bytes([rng.randrange(256)]) * rng.choice((1, 2, 3, 7, 40, 300, 2000, 70000))
    return bytes(out[:n])


def floats(rng, n):
    return struct.pack(f"<{n}f", *(rng.gauss(0.0, 0.05) for _ in range(n)))


def repeated(rng, chunk, times):
    base = bytearray(rng.randbytes(chunk))
    out = bytearray()
    for _ in range(times):
        for _ in range(20):  # a few mutations so matches break and resume (repeat offsets)
            base[rng.randrange(chunk)] = rng.randrange(256)
        out += base
    return bytes(out)


def datasets():
    rng = random.Random(8878)
    d = {
        "empty": b"",
        "one": b"A",
        "tiny": b"hello, world\n",
        "abc19": b"abcabcabcabcabcabca",
        "text": text(rng, 200_000),
        "random4k": rng.randbytes(4096),
        "random300k": rng.randbytes(300_000),
        "runs": runs(rng, 500_000),
        "zeros1m": bytes(1 << 20),
        "floats": floats(rng, 400_000),          # 1.6 MB of float32 weights: the .apr payload shape
        "repeat": repeated(rng, 70_000, 4),      # offsets beyond 64 KiB and across blocks
        "ints": struct.pack("<65536I", *range(0, 65536 * 7, 7)),
        "smalltext": text(rng, 3000),
        "smallruns": runs(rng, 5000)[:5000],
    }
    d["mixed1m"] = b"".join(
        (text(rng, 50_000), rng.randbytes(30_000), runs(rng, 60_000), d["floats"][:100_000],
         bytes(20_000))) * 4
    d["mixed1m"] = d["mixed1m"][: 1 << 20]
    return d


def zstd_cli(data, *args):
    return subprocess.run(["zstd", "-q", "-c", *args], input=data, stdout=subprocess.PIPE, check=True).stdout


def zstd_cli_file(path, *args):  # from a file, so the CLI knows and writes the content size
    return subprocess.run(["zstd", "-q", "-c", *args, path], stdout=subprocess.PIPE, check=True).stdout


def zstd_py(data, level, content_size=True, checksum=False, **params):
    if params:
        cp = zstandard.ZstdCompressionParameters.from_level(level, write_content_size=content_size,
                                                            write_checksum=checksum, **params)
        return zstandard.ZstdCompressor(compression_params=cp).compress(data)
    return zstandard.ZstdCompressor(level=level, write_content_size=content_size,
                                    write_checksum=checksum).compress(data)


def zstd_stream(data, level):
    """What Rust's zstd::encode_all writes: a streaming frame, no content size, window descriptor."""
    c = zstandard.ZstdCompressor(level=level).compressobj()
    return c.compress(data) + c.flush()


def variants(name, data, path):
    """(variant, codec, compressed) for one data set; big inputs get fewer slow levels."""
    big = len(data) > 400_000
    v = [("lz4", "lz4", lz4.block.compress(data, store_size=True)),
         ("lz4hc", "lz4", lz4.block.compress(data, store_size=True, mode="high_compression"))]
    for level in (1, 3, 9) + (() if big else (19,)):
        v.append((f"z{level}", "zstd", zstd_py(data, level)))
    v += [("z3-nosize-check", "zstd", zstd_py(data, 3, content_size=False, checksum=True)),
          ("z3-stream", "zstd", zstd_stream(data, 3)),
          ("z19-stream" if not big else "z9-stream", "zstd", zstd_stream(data, 19 if not big else 9)),
          ("z1-check", "zstd", zstd_py(data, 1, checksum=True)),
          ("zw10", "zstd", zstd_py(data, 5, checksum=True, window_log=10)),   # 1 KiB window: 1 KiB blocks
          ("cli-fast", "zstd", zstd_cli(data, "--fast=5")),
          ("cli3", "zstd", zstd_cli_file(path, "-3")),
          ("cli3-nocheck", "zstd", zstd_cli_file(path, "-3", "--no-check")),
          ("cli-long", "zstd", zstd_cli(data, "-6", "--long=24"))]
    if not big or name == "floats":
        v.append(("cli19", "zstd", zstd_cli_file(path, "-19")))
    if len(data) <= 300_000:
        v.append(("cli22", "zstd", zstd_cli(data, "--ultra", "-22")))
    if name == "floats":
        v.append(("z19-stream", "zstd", zstd_stream(data, 19)))
    return v


def seed(path, out_len, payload):
    with open(path, "wb") as f:
        f.write(struct.pack("<I", out_len)[:3] + payload)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/decompress"
    for sub in ("", "seeds-lz4", "seeds-zstd"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    manifest = []
    for name, data in datasets().items():
        path = os.path.join(out, f"{name}.bin")
        with open(path, "wb") as f:
            f.write(data)
        for variant, codec, comp in variants(name, data, path):
            # every vector must round-trip through the reference implementation first
            if codec == "lz4":
                assert lz4.block.decompress(comp) == data, (name, variant)
            else:
                assert zstandard.ZstdDecompressor().decompressobj().decompress(comp) == data, (name, variant)
            ext = "lz4" if codec == "lz4" else "zst"
            cpath = os.path.join(out, f"{name}.{variant}.{ext}")
            with open(cpath, "wb") as f:
                f.write(comp)
            manifest.append(f"{codec} {os.path.basename(cpath)} {os.path.basename(path)}")
            if len(data) < 1 << 20 and len(comp) <= 20_000:
                body = comp[4:] if codec == "lz4" else comp
                seed(os.path.join(out, f"seeds-{codec}", f"{name}.{variant}"), len(data), body)
    with open(os.path.join(out, "manifest.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    print(f"gen.py: {len(manifest)} vectors in {out}")


if __name__ == "__main__":
    main()
