# mlrt — build everything with `make`, test with `make test` (or `npm test`).
# Compilers can be overridden: make EMCC=/path/to/emsdk/emcc CLANG=/opt/wasi-sdk/bin/clang
EMCC  ?= emcc
CLANG ?= clang
CLANG19 ?= clang-19
CC    ?= cc
NODE  ?= node
FUZZ_SECONDS ?= 60

# src/ by layer: codecs (bytes -> values), formats (files -> tensors or models), kernels (the hot
# loops), model (what runs), api (load, wasm exports, CLI).
BASE    = src/base/error.c src/base/buf.c src/base/utf8.c src/base/dtype.c src/base/sort.c src/base/unicode.c src/base/unicode_tables.c
CODECS  = src/codecs/json.c src/codecs/msgpack.c src/codecs/bincode.c src/codecs/crc32.c src/codecs/lz4.c src/codecs/zstd.c \
          src/codecs/protobuf.c
FORMATS = src/formats/tensorset.c src/formats/safetensors.c src/formats/bintensors.c src/formats/bin.c src/formats/recognize.c \
          src/formats/apr_v1.c src/formats/apr_v2.c src/formats/apr_trees.c src/formats/apr_kmeans.c \
          src/formats/onnx.c src/formats/onnx_import.c src/formats/tokenizer_json.c src/formats/vocab_txt.c \
          src/formats/bert.c src/formats/config_json.c
KERNELS = src/kernels/dense.c src/kernels/quant.c src/kernels/quant_pack.c src/kernels/tree.c src/kernels/conv.c \
          src/kernels/tensor_ops.c src/kernels/act.c src/kernels/norm.c src/kernels/attention.c
MODEL   = src/model/model.c src/model/dense.c src/model/classic.c src/model/graph.c src/model/graph_plan.c \
          src/model/graph_run.c src/model/graph_values.c src/model/graph_linear.c src/model/graph_ops.c \
          src/model/graph_op_dense.c src/model/graph_op_conv.c src/model/graph_op_elem.c src/model/graph_op_layernorm.c \
          src/model/graph_op_shape.c src/model/tokenizer.c src/model/tokenizer_text.c src/model/tokenizer_info.c \
          src/model/encoder.c
IR      = src/ir/desc.c src/ir/tokenizer_desc.c
API     = src/api/load.c src/api/host.c src/api/tokenizer_load.c src/api/encoder_load.c
CORE = $(BASE) $(CODECS) $(IR) $(FORMATS) $(KERNELS) $(MODEL) $(API)
HDRS = src/mlrt.h src/api/api.h src/base/base.h src/codecs/codecs.h src/ir/ir.h src/formats/formats.h src/kernels/kernels.h src/model/model.h \
       src/model/graph.h src/kernels/simd.h

# The wasm exports: exactly mlrt.h's functions that the JavaScript module calls.
WASM_API = mlrt_alloc mlrt_dealloc mlrt_build_flags mlrt_status_name mlrt_load_from_bytes_ex mlrt_free mlrt_model_info_json \
           mlrt_predict_batch mlrt_predict_labels mlrt_model_fork mlrt_layer_slice mlrt_layer mlrt_layer_weights \
           mlrt_inspect mlrt_string_free mlrt_run mlrt_output \
           mlrt_tokenizer_load mlrt_tokenizer_free mlrt_tokenizer_encode mlrt_tokenizer_encode_batch \
           mlrt_tokenizer_decode mlrt_tokenizer_normalize mlrt_tokenizer_token mlrt_tokenizer_info_json \
           mlrt_load_files mlrt_embed mlrt_embed_prompt mlrt_model_tokenizer mlrt_warm_up
comma := ,
empty :=
space := $(empty) $(empty)
WASM_EXPORTS = $(subst $(space),$(comma),$(WASM_API:%=_%))
# Standalone wasm: no Emscripten JS glue, no filesystem, memory grows on demand.
# Objects are compiled at -O3 and linked at -O1: at -O2 and above, Binaryen inlines every
# single-caller function into one huge export, which V8 then optimises slowly and with
# several MB of memory, and whose register pressure spills the kernels' accumulators.
EMCFLAGS = -O3 -std=c11 -ffp-contract=off
EMLINK = -O1 -sSTANDALONE_WASM --no-entry -sEXPORTED_FUNCTIONS=$(WASM_EXPORTS) \
         -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=1MB -sTOTAL_STACK=64KB -sMALLOC=emmalloc \
         -sFILESYSTEM=0 -sERROR_ON_UNDEFINED_SYMBOLS=1
# Then size passes over the linked module with inlining off (so the kernels stay small functions):
# -4 KB, no measurable change in speed. --low-memory-unused (the data starts at 1024 in every build,
# so addresses below it are never used) lets an address's constant part become the load's offset,
# and --converge repeats -Oz while it still shrinks: together -2.4 KB (-0.7 KB gzipped).
WASM_OPT ?= wasm-opt
# (Features: only SIMD is enabled, for the SIMD build, so the pass cannot introduce new ones.)
WASM_OPT_FLAGS = -Oz -ocimfs=0 -fimfs=0 -aimfs=0 --low-memory-unused --converge
WASM_SRC = $(CORE)
WARN = -std=c11 -ffp-contract=off -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
NATIVE_CFLAGS = $(WARN) -O2 -g
SAN_CFLAGS = $(WARN) -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

WASM = wasm/mlrt.wasm wasm/mlrt-scalar.wasm wasm/mlrt-relaxed.wasm wasm/mlrt-threads.wasm wasm/mlrt-wasi.wasm
MODELS = build/models/mnist-mlp.f32.bin build/models/mnist-mlp.f64.bin build/models/mnist-mlp.safetensors \
         build/models/mnist-mlp.aprender.safetensors build/models/mnist-mlp.bintensors
APR_MODELS = build/models/mnist-mlp.apr build/models/mnist-mlp.q8.apr build/models/digit-cnn.onnx
WEB_MODELS = web/models/mnist-mlp.safetensors web/models/mnist-mlp.bintensors web/models/mnist-mlp.f32.bin \
             web/models/mnist-mlp.apr web/models/mnist-mlp.q8.apr web/models/digit-cnn.onnx
FUZZERS = build/fuzz/fuzz_bin build/fuzz/fuzz_safetensors build/fuzz/fuzz_bintensors build/fuzz/fuzz_json \
          build/fuzz/fuzz_apr_v1 build/fuzz/fuzz_apr_v2 build/fuzz/fuzz_msgpack build/fuzz/fuzz_onnx build/fuzz/fuzz_tokenizer \
          build/fuzz/fuzz_encoder

.PHONY: all build deps test test-package test-c test-decompress bench-decompress fuzz-decompress test-js test-web fuzz fuzz-run bench edge-load demo serve-demo clean wordnet-index
.DELETE_ON_ERROR:

all build: $(WASM) build/mlrt build/libmlrt.a build/test_c build/bench/limits.wasm build/bench/limits-relaxed.wasm $(MODELS) $(APR_MODELS) $(WEB_MODELS)

deps:
	@sh tools/setup.sh

# ---- wasm ----
# The SIMD128 build also takes bulk memory (memory.copy, memory.fill for memcpy and memset: native speed,
# -0.4 KB): every engine with SIMD128 has it (Chrome 75, Firefox 79, Safari 15), and mlrt.mjs's probe
# checks both before it picks this build or the relaxed one (which takes it too: -1.9 KB). The scalar
# build is for older engines: it takes neither.
SIMD = -msimd128 -mbulk-memory
build/wasm-simd/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(EMCC) $(EMCFLAGS) $(SIMD) -c $< -o $@

build/wasm-scalar/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(EMCC) $(EMCFLAGS) -c $< -o $@

# The threaded build: SIMD128 + atomics and bulk memory over a shared, imported memory, which the
# JS module's workers instantiate the same module with (wasm/mlrt-threads.mjs). emcc refuses
# STANDALONE_WASM with pthreads, so the objects are compiled by emcc -pthread and linked by
# wasm-ld against Emscripten's thread-safe libc and allocator; its one import besides the memory
# is emscripten_resize_heap (growth), which the JS side supplies.
EM_LIBDIR ?= $(shell em-config CACHE 2>/dev/null)/sysroot/lib/wasm32-emscripten
WASM_LD14 ?= wasm-ld-14
build/wasm-threads/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(EMCC) $(EMCFLAGS) -msimd128 -pthread -c $< -o $@

# The relaxed-SIMD build: clang 19 (emcc 3.1.6's clang has no relaxed intrinsics), wasi-libc as a
# reactor. Compiled and linked in two steps, the link without -O: clang would otherwise run
# Debian's binaryen, which cannot parse the relaxed opcodes (../shared/specs/toolchain.md).
# -pre-RA-sched=source keeps the kernels' instructions in source order: clang 19 otherwise
# hoists the five broadcasts of panel_rows ahead of their multiply-adds, V8 then spills two
# accumulators to the stack in the hot loop, and batches run 1.8x slower.
RELAXED_OPT = -O3
RELAXED_CFLAGS = --target=wasm32-wasi -std=c11 -ffp-contract=off -msimd128 -mrelaxed-simd -mbulk-memory -mllvm -pre-RA-sched=source
RELAXED_LINK = --target=wasm32-wasi -mexec-model=reactor -Wl,--strip-all -Wl,-z,stack-size=65536 \
               -Wl,--initial-memory=1048576 $(WASM_API:%=-Wl,--export=%)
build/wasm-relaxed/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CLANG19) $(RELAXED_OPT) $(RELAXED_CFLAGS) -c $< -o $@

# Parsing and validation run once per file: built for size, toward mlrt.wasm's budget of 256 KB and 100 KB
# gzipped (issue 19; bench/size.mjs accounts for it per layer and file)
# (the kernels stay at -O3, all but kernels/quant_pack.c and tensor_ops.c; so do CRC-32 and the f16/bf16
# conversion, which run over whole
# weight files. The Zstandard decoder is built for size with its bit reader and match copy forced inline
# (always_inline): a 1.5 MB zstd .apr then loads in about 10 ms instead of 7 at -O3 (15 without them), 5 KB smaller).
WASM_SMALL = base/error base/buf base/utf8 base/sort codecs/zstd model/model model/dense ir/desc formats/tensorset codecs/json formats/safetensors formats/bintensors formats/bin formats/recognize \
             api/load codecs/msgpack formats/apr_v1 formats/apr_v2 api/host kernels/quant_pack \
             formats/apr_trees formats/apr_kmeans model/classic codecs/bincode codecs/protobuf formats/onnx \
             formats/onnx_import model/graph model/graph_plan model/graph_run model/graph_values model/graph_linear \
             model/graph_ops model/graph_op_dense \
             model/graph_op_conv model/graph_op_elem model/graph_op_layernorm model/graph_op_shape kernels/tensor_ops \
             codecs/lz4 base/unicode base/unicode_tables ir/tokenizer_desc formats/tokenizer_json formats/vocab_txt \
             model/tokenizer_info model/tokenizer model/tokenizer_text api/tokenizer_load \
             formats/bert formats/config_json model/encoder api/encoder_load
$(WASM_SMALL:%=build/wasm-simd/%.o) $(WASM_SMALL:%=build/wasm-scalar/%.o): EMCFLAGS = -Oz -std=c11 -ffp-contract=off
$(WASM_SMALL:%=build/wasm-threads/%.o): EMCFLAGS = -Oz -std=c11 -ffp-contract=off
$(WASM_SMALL:%=build/wasm-relaxed/%.o): RELAXED_OPT = -Oz

# The kernels are written with SIMD by hand: their inner loops are unrolled in the source as far as pays,
# and LLVM's unroller mostly copies the loops around them (bias and tail stores, packing, activations,
# tree walks) again: -fno-unroll-loops on these files is 6.1 KB smaller (1.5 KB gzipped) and measured as
# fast (issue 19); so are CRC-32 (eight bytes a step by hand) and the f16/bf16 conversions (-1.1 KB together;
# an .apr's and an F16 folder's load A/B 0.99x). Not kernels/quant.c: without the unroller a Q8 MLP's single
# row runs 1.4x slower (-0.8 KB).
WASM_NOUNROLL = kernels/dense kernels/tree kernels/conv kernels/act kernels/norm kernels/attention codecs/crc32 base/dtype
$(WASM_NOUNROLL:%=build/wasm-simd/%.o) $(WASM_NOUNROLL:%=build/wasm-scalar/%.o) $(WASM_NOUNROLL:%=build/wasm-threads/%.o): EMCFLAGS += -fno-unroll-loops

wasm/mlrt.wasm: $(WASM_SRC:src/%.c=build/wasm-simd/%.o)
	@mkdir -p wasm
	$(EMCC) $(EMLINK) $(SIMD) $^ -o $@
	$(WASM_OPT) $(WASM_OPT_FLAGS) --enable-simd --enable-bulk-memory $@ -o $@

# mlrt.wasm again, keeping its function names: what bench/size.mjs attributes to files and layers.
build/size/mlrt.wasm: $(WASM_SRC:src/%.c=build/wasm-simd/%.o)
	@mkdir -p $(dir $@)
	$(EMCC) $(EMLINK) --profiling-funcs $(SIMD) $^ -o $@
	$(WASM_OPT) $(WASM_OPT_FLAGS) --debuginfo --enable-simd --enable-bulk-memory $@ -o $@

wasm/mlrt-scalar.wasm: $(WASM_SRC:src/%.c=build/wasm-scalar/%.o)
	@mkdir -p wasm
	$(EMCC) $(EMLINK) $^ -o $@
	$(WASM_OPT) $(WASM_OPT_FLAGS) $@ -o $@

wasm/mlrt-relaxed.wasm: $(WASM_SRC:src/%.c=build/wasm-relaxed/%.o)
	@mkdir -p wasm
	$(CLANG19) $(RELAXED_LINK) $^ -o $@

wasm/mlrt-threads.wasm: $(WASM_SRC:src/%.c=build/wasm-threads/%.o)
	@mkdir -p wasm
	$(WASM_LD14) -o $@ $^ -L$(EM_LIBDIR) -lc-mt -lemmalloc-mt -lcompiler_rt-mt --shared-memory --import-memory \
	  --initial-memory=1048576 --max-memory=2147483648 --no-entry -z stack-size=65536 --global-base=1024 \
	  --strip-debug -mllvm -disable-lsr $(WASM_API:%=--export=%) --export=stackSave --export=stackRestore \
	  --export=__wasm_init_tls --export=__tls_size --export=__tls_align --export=__wasm_call_ctors
	$(WASM_OPT) $(WASM_OPT_FLAGS) --enable-simd --enable-threads --enable-bulk-memory $@ -o $@

wasm/mlrt-wasi.wasm: $(CORE) src/api/cli.c $(HDRS)
	$(CLANG) --target=wasm32-wasi -O3 -ffp-contract=off -msimd128 -Wl,--strip-debug $(CORE) src/api/cli.c -o $@

build/bench/limits.wasm: bench/limits.c
	@mkdir -p $(dir $@)
	$(CLANG) --target=wasm32 -nostdlib -O3 -msimd128 -Wl,--no-entry -Wl,--export-dynamic -o $@ $<

build/bench/limits-relaxed.wasm: bench/limits.c
	@mkdir -p $(dir $@)
	$(CLANG19) --target=wasm32 -O3 -msimd128 -mrelaxed-simd -c -o $@.o $<
	$(CLANG19) --target=wasm32 -nostdlib -Wl,--no-entry -Wl,--export-dynamic -o $@ $@.o && rm -f $@.o

# ---- native ----
build/obj/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -c $< -o $@

build/libmlrt.a: $(CORE:src/%.c=build/obj/%.o)
	rm -f $@ && ar rcs $@ $^

build/mlrt: src/api/cli.c build/libmlrt.a
	$(CC) $(NATIVE_CFLAGS) $^ -lm -o $@

# The C tests, a file per layer or format, on one small harness (tests/c/harness.h) and the builders of
# their inputs (tests/c/builders.h).
TEST_C = tests/c/main.c tests/c/harness.c tests/c/builders.c tests/c/test_base.c tests/c/test_codecs.c \
         tests/c/test_formats.c tests/c/test_safetensors.c tests/c/test_bintensors.c tests/c/test_apr.c tests/c/test_trees.c tests/c/test_layout.c tests/c/test_quant.c \
         tests/c/test_model.c tests/c/test_onnx.c tests/c/test_graph.c tests/c/test_text.c tests/c/test_encoder.c \
         tests/c/test_encoder_kernels.c
build/test_c: $(TEST_C) tests/c/harness.h tests/c/builders.h $(CORE) $(HDRS)
	@mkdir -p build
	$(CC) $(SAN_CFLAGS) -Isrc -Itests/c $(TEST_C) $(CORE) -lm -o $@

build/train: tools/train.c
	@mkdir -p build
	$(CC) -O2 -ffp-contract=off -std=c11 -o $@ $< -lm

build/mnist/test-labels.u8: tools/mnist-export.mjs tools/mnist-split.mjs
	$(NODE) tools/mnist-export.mjs build/mnist

$(MODELS) &: build/train build/mnist/test-labels.u8
	build/train --data build/mnist --out build/models --quiet

# The trained weights as aprender's .apr, written by our own CLI (deterministic: same bytes each time):
# v1 in aprender's MNIST-example layout (f32), and v2 with APR Q8 weights.
APR_WRITER = tools/mlrt.mjs tools/apr/writer.mjs tools/apr/msgpack.mjs wasm/mlrt.mjs wasm/mlrt.wasm
build/models/mnist-mlp.apr: build/models/mnist-mlp.safetensors $(APR_WRITER)
	$(NODE) tools/mlrt.mjs convert $< $@ --apr-version 1 --name mnist-mlp
build/models/mnist-mlp.q8.apr: build/models/mnist-mlp.safetensors $(APR_WRITER)
	$(NODE) tools/mlrt.mjs convert $< $@ --apr-version 2 --quantize q8 --name mnist-mlp-q8

# ---- fuzzing (clang + libFuzzer) ----
build/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_common.h $(CORE) $(HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) -g -O1 -ffp-contract=off -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Isrc $< $(CORE) -lm -o $@

fuzz: $(FUZZERS)

fuzz-run: $(FUZZERS) $(MODELS)
	sh tests/fuzz/run.sh $(FUZZ_SECONDS)

# ---- decompression (src/codecs/decompress.h): CRC-32, LZ4 block, Zstandard frame ----
PYTHON3 ?= /usr/bin/python3

# test vectors: made at test time by python3-lz4 / python3-zstandard / the zstd CLI, never committed
build/decompress/manifest.txt: tests/gen/decompress.py
	$(PYTHON3) tests/gen/decompress.py build/decompress

build/test_decompress: tests/c/test_decompress.c tests/c/harness.c tests/c/harness.h $(CORE) $(HDRS)
	@mkdir -p build
	$(CC) $(SAN_CFLAGS) -Isrc -Itests/c tests/c/test_decompress.c tests/c/harness.c $(CORE) -lm -o $@

test-decompress: build/test_decompress build/decompress/manifest.txt
	build/test_decompress build/decompress

build/bench_decompress: tests/c/test_decompress.c tests/c/harness.c tests/c/harness.h $(CORE) $(HDRS)
	@mkdir -p build
	$(CC) $(NATIVE_CFLAGS) -Isrc -Itests/c tests/c/test_decompress.c tests/c/harness.c $(CORE) -lm -o $@

bench-decompress: build/bench_decompress build/decompress/manifest.txt
	build/bench_decompress --bench build/decompress

fuzz-decompress: build/fuzz/fuzz_lz4 build/fuzz/fuzz_zstd build/decompress/manifest.txt
	@mkdir -p build/fuzz/corpus/fuzz_lz4 build/fuzz/corpus/fuzz_zstd build/fuzz/artifacts/fuzz_lz4 build/fuzz/artifacts/fuzz_zstd
	build/fuzz/fuzz_lz4 build/fuzz/corpus/fuzz_lz4 build/decompress/seeds-lz4 -max_total_time=$(FUZZ_SECONDS) \
	    -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 -artifact_prefix=build/fuzz/artifacts/fuzz_lz4/
	build/fuzz/fuzz_zstd build/fuzz/corpus/fuzz_zstd build/decompress/seeds-zstd -max_total_time=$(FUZZ_SECONDS) \
	    -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 -artifact_prefix=build/fuzz/artifacts/fuzz_zstd/

# ---- the web demo: models the trainer made, served by web/server.mjs ----
# the demo's digit CNN: trained and exported by tests/gen/onnx_zoo.py, committed with the zoo
build/models/digit-cnn.onnx: tests/onnx/zoo/digit-cnn.onnx
	@mkdir -p build/models
	cp $< $@

web/models/%: build/models/%
	cp $< $@

# the Words tab: the WordNet encoder (committed in models/wordnet/) and its lemma index, which mlrt's
# own encoder computes here (tools/wordnet/index.mjs: every lemma of lemmas.txt, Q8 rows)
WORDNET_FILES = model.safetensors config.json tokenizer.json tokenizer_config.json modules.json \
                1_Pooling/config.json sentence_bert_config.json metrics.json
WEB_WORDS = $(WORDNET_FILES:%=web/models/wordnet/%) web/models/wordnet/lemmas.q8.index

build/wordnet/lemmas.q8.index: $(WORDNET_FILES:%=models/wordnet/%) models/wordnet/lemmas.txt wasm/mlrt.wasm wasm/mlrt.mjs \
                               tools/wordnet/index.mjs tools/wordnet/common.mjs web/lemma-index.mjs
	$(NODE) tools/wordnet/index.mjs --dtype q8 --out $@ --save-embeddings build/wordnet/mlrt-lemmas.f32

wordnet-index: build/wordnet/lemmas.q8.index

web/models/wordnet/lemmas.q8.index: build/wordnet/lemmas.q8.index
	@mkdir -p $(dir $@)
	cp $< $@

web/models/wordnet/%: models/wordnet/%
	@mkdir -p $(dir $@)
	cp $< $@

# `make test` and `make demo` build on every core (JOBS=1 for one at a time): the build is about half of
# make test's time on a 2-core machine.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

demo: deps
	$(MAKE) -j$(JOBS) wasm/mlrt.wasm wasm/mlrt-scalar.wasm wasm/mlrt-relaxed.wasm $(WEB_MODELS) $(WEB_WORDS)
	$(MAKE) serve-demo

serve-demo:
	$(NODE) web/server.mjs

# ---- tests, bench ----
test: deps
	$(MAKE) -j$(JOBS) all build/apr-models/manifest.json build/wordnet/lemmas.q8.index build/test_decompress \
	        build/decompress/manifest.txt
	$(MAKE) test-c test-decompress test-js test-package

test-c: build/test_c
	build/test_c

# aprender trees, forests and KMeans from an independent encoder (scikit-learn fits, numpy f32 reference)
build/apr-models/manifest.json: tests/gen/apr_models.py
	$(PYTHON3) tests/gen/apr_models.py build/apr-models

test-js: $(WASM) $(MODELS) $(APR_MODELS) build/mlrt build/apr-models/manifest.json build/wordnet/lemmas.q8.index
	$(NODE) --test tests/

# the npm tarball, installed into fresh projects: Node ESM, npx, TypeScript, Vite, esbuild, wrangler
test-package: $(WASM) $(MODELS)
	$(NODE) --test tests/package/package.check.mjs

test-web: wasm/mlrt.wasm wasm/mlrt-scalar.wasm wasm/mlrt-relaxed.wasm $(MODELS) $(APR_MODELS) build/wordnet/lemmas.q8.index
	$(NODE) --test tests/web/

bench: $(WASM) build/bench/limits.wasm build/size/mlrt.wasm
	$(NODE) bench/run.mjs

edge-load: $(WASM) $(MODELS)
	$(NODE) edge/loadtest.mjs

clean:
	rm -rf build $(WASM)
