#!/bin/sh
# tests/fuzz/run.sh SECONDS — runs each libFuzzer target for SECONDS (default 60), one after
# the other, each from a fresh corpus in build/fuzz/corpus/NAME seeded with:
#   - small whole files of every kind written by tests/fuzz/make_seeds.c (models in every
#     format, dtype and naming, regressions, non-model tensor files, JSON documents; .apr v1
#     files of each model type, compression and flag, .apr v2 files, MessagePack values),
#   - the trained models in build/models/ (libFuzzer reads only their first -max_len bytes:
#     the headers), and for fuzz_json the JSON headers of the trained SafeTensors files,
#   - any files committed under tests/fuzz/seeds/NAME/ (fuzz_tokenizer: its first byte says text
#     (even) or tokenizer.json (odd); fuzz_encoder: which folder files the rest holds).
# Exits non-zero if any fuzzer crashed, tripped a sanitizer or an oracle, timed out, ran out of
# memory or leaked, printing the fuzzer and the reproducer (rerun: build/fuzz/NAME FILE).
#
# Limits: -max_len=65536 (a loader's memory and time grow with the file; 64 KiB already reaches
# every code path), -timeout=10 s per input, -rss_limit_mb=2048 (libFuzzer's default) and
# -malloc_limit_mb=256: no legitimate allocation for a 64 KiB input comes near that (the largest
# is a model's scratch, 512 bytes per unit of its widest layer: 16 MiB at most), so a bigger one
# is an amplification bug worth a report. The loaders' own 2^28-parameter cap (1 GiB of floats)
# needs a file of at least 512 MiB, far beyond -max_len.
set -u
SECS=${1:-60}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
# FUZZERS="..." in the environment runs another list (other targets get their committed seeds only)
FUZZERS=${FUZZERS:-fuzz_bin fuzz_safetensors fuzz_bintensors fuzz_json fuzz_apr_v1 fuzz_apr_v2 fuzz_msgpack fuzz_onnx fuzz_tokenizer fuzz_encoder}
MODELS=build/models
CC=${CC:-cc}

mkdir -p build/fuzz
$CC -std=c11 -O1 -o build/fuzz/make_seeds tests/fuzz/make_seeds.c || { echo "run.sh: cannot build make_seeds"; exit 2; }

failed=""
for name in $FUZZERS; do
    bin=build/fuzz/$name
    if [ ! -x "$bin" ]; then echo "run.sh: $bin is missing (make fuzz)"; exit 2; fi
    # the Makefile's build/fuzz/% rule does not list the shared header: rebuild when it changed
    if [ tests/fuzz/fuzz_common.h -nt "$bin" ]; then make -B "$bin" >/dev/null || exit 2; fi
    corpus=build/fuzz/corpus/$name
    artifacts=build/fuzz/artifacts/$name
    log=build/fuzz/$name.log
    rm -rf "$corpus" "$artifacts"
    mkdir -p "$corpus" "$artifacts"

    case $name in
        fuzz_bin) models="mnist-mlp.f32.bin mnist-mlp.f64.bin"; dict="" ;;
        fuzz_safetensors) models="mnist-mlp.safetensors mnist-mlp.aprender.safetensors"; dict=tests/fuzz/json.dict ;;
        fuzz_bintensors) models="mnist-mlp.bintensors"; dict=tests/fuzz/bintensors.dict ;;
        fuzz_json) models=""; dict=tests/fuzz/json.dict ;;
        fuzz_onnx) models=""; dict=tests/fuzz/onnx.dict; cp tests/onnx/zoo/*.onnx "$corpus"/ ;;
        # text against bert-base-uncased's vocabulary (the fuzzer reads it; written here from the npm
        # package tools/text/bert-vocab.mjs reads), and mutated tokenizer.json (seeds committed)
        fuzz_encoder) models=""; dict=tests/fuzz/json.dict ;; # folders: seeds committed (tests/fuzz/seeds/fuzz_encoder)
        fuzz_tokenizer) models=""; dict=tests/fuzz/json.dict
            ${NODE:-node} -e "import('./tools/text/bert-vocab.mjs').then((m) => require('fs').writeFileSync('build/fuzz/bert-uncased.tokenizer.json', JSON.stringify(m.bertTokenizerJson(m.bertUncasedVocab()))))" \
                || echo "run.sh: note: no bert-uncased.tokenizer.json (node failed): fuzz_tokenizer uses its small vocabulary" ;;
        *) models=""; dict="" ;;
    esac
    build/fuzz/make_seeds "$name" "$corpus" "$MODELS/mnist-mlp.safetensors" "$MODELS/mnist-mlp.aprender.safetensors" || exit 2
    for m in $models; do
        if [ -f "$MODELS/$m" ]; then cp "$MODELS/$m" "$corpus/model-$m"; else echo "run.sh: note: $MODELS/$m not built, not seeded"; fi
    done
    if [ -d "tests/fuzz/seeds/$name" ]; then cp tests/fuzz/seeds/"$name"/* "$corpus"/ 2>/dev/null; fi
    nseeds=$(ls "$corpus" | wc -l)

    echo "== $name: ${SECS}s from $nseeds seeds (log: $log)"
    "$bin" "$corpus" -max_total_time="$SECS" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" ${dict:+-dict=$dict} >"$log" 2>&1
    rc=$?

    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1 | sed -n 's/.*\(cov: [0-9]* ft: [0-9]* corp: [0-9]*\/[^ ]*\).*/\1/p')
    repro=$(ls "$artifacts" 2>/dev/null | grep -E '^(crash|timeout|oom|leak)-' | head -n 1)
    if [ "$rc" -ne 0 ] || [ -n "$repro" ]; then
        failed="$failed $name"
        echo "FAIL $name (exit $rc): ${repro:+reproducer $artifacts/$repro}"
        grep -E 'ERROR:|fuzz oracle failed|SUMMARY|runtime error' "$log" | head -n 5 | sed 's/^/    /'
        [ -n "$repro" ] && echo "    rerun: $bin $artifacts/$repro"
    else
        echo "ok   $name: ${execs:-?} execs, ${rate:-?}/s, $cov"
    fi
done

if [ -n "$failed" ]; then
    echo "fuzzing FAILED:$failed"
    exit 1
fi
echo "fuzzing ok: $FUZZERS (${SECS}s each)"
