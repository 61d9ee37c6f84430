#!/bin/sh
# Installs what the build and the tests need, only what is missing:
# Debian packages (with sudo when not root) and the pinned npm packages (npm ci).
set -eu
cd "$(dirname "$0")/.."

missing=""
need() { # need PACKAGE TEST...  (adds PACKAGE when the test fails)
  pkg=$1; shift
  if ! "$@" >/dev/null 2>&1; then missing="$missing $pkg"; fi
}
need make        command -v make
need gcc         command -v gcc
need clang       command -v clang
need lld         command -v wasm-ld
need emscripten  command -v emcc
need wasi-libc   test -f /usr/lib/wasm32-wasi/libc.a
need libclang-rt-14-dev-wasm32 sh -c 'ls /usr/lib/llvm-14/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a'
need libclang-rt-14-dev sh -c 'ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a'
need clang-19    command -v clang-19
need lld-19      command -v wasm-ld-19
need libclang-rt-19-dev-wasm32 sh -c 'ls /usr/lib/llvm-19/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a'
need binaryen    command -v wasm-opt
need wabt        command -v wasm-objdump
need chromium    command -v chromium
need zstd        command -v zstd
need python3-lz4 /usr/bin/python3 -c 'import lz4.block'
need python3-zstandard /usr/bin/python3 -c 'import zstandard'
need python3-cryptography /usr/bin/python3 -c 'import cryptography'
need python3-argon2 /usr/bin/python3 -c 'import argon2'
need python3-sklearn /usr/bin/python3 -c 'import sklearn'
need python3-msgpack /usr/bin/python3 -c 'import msgpack'
need python3-numpy /usr/bin/python3 -c 'import numpy'
need libonnx-testdata test -d /usr/share/libonnx-testdata/data/node
need nodejs      command -v node
need npm         command -v npm

if [ -n "$missing" ]; then
  echo "setup: installing Debian packages:$missing"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi

# npm ci when node_modules is missing or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
