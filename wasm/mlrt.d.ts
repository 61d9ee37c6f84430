// Type declarations for mlrt.mjs.

/** Stable error codes. Loader codes come from the C core (mlrt_status_name). */
export type MlrtErrorCode =
  | 'INVALID_ARGUMENT' | 'UNKNOWN_FORMAT' | 'TRUNCATED' | 'SIZE_MISMATCH' | 'BAD_DIMENSIONS'
  | 'SHAPE_OVERFLOW' | 'BAD_OFFSETS' | 'UNKNOWN_DTYPE' | 'INVALID_UTF8' | 'INVALID_JSON'
  | 'DUPLICATE_KEY' | 'HEADER_TOO_LARGE' | 'BAD_HEADER' | 'NOT_A_MODEL' | 'UNSUPPORTED'
  | 'OUT_OF_MEMORY' | 'NON_FINITE' | 'CHECKSUM_MISMATCH' | 'UNSUPPORTED_VERSION' | 'UNSUPPORTED_MODEL_TYPE'
  | 'MODEL_TYPE_MISMATCH' | 'ENCRYPTED' | 'INVALID_MSGPACK' | 'BAD_PAYLOAD'
  | 'DISPOSED' | 'WASM_LOAD_FAILED' | 'INTERNAL'
  /** From load() and apr-crypto.mjs (JavaScript, WebCrypto): */
  | 'NOT_SIGNED' | 'SIGNATURE_INVALID' | 'DECRYPTION_FAILED' | 'WRONG_RECIPIENT' | 'NOT_ENCRYPTED';

export class MlrtError extends Error {
  readonly name: 'MlrtError';
  readonly code: MlrtErrorCode;
  constructor(code: MlrtErrorCode, message: string);
}

export type Format = 'bin' | 'safetensors' | 'bintensors' | 'apr' | 'onnx';
export type ModelKind =
  | 'mlp' | 'linear_regression' | 'logistic_regression' | 'decision_tree' | 'random_forest' | 'kmeans'
  /** An ONNX graph: named inputs and outputs (info.inputs, info.outputs; info.onnx lists the file's). */
  | 'graph'
  /** A BERT-family sentence encoder (rt.loadEncoder: an Encoder, not a Model). */
  | 'encoder';
/** What predict's outputs mean: per-class scores, predicted values, or distances to centroids. */
export type Task = 'classification' | 'regression' | 'clustering' | 'embedding';

/** Trees and forests: `info.trees`. */
export interface TreeFacts {
  /** 1 for a decision tree. */
  readonly count: number;
  /** The deepest tree's levels below its root (0: a lone leaf). */
  readonly depth: number;
  readonly nodes: number;
  readonly leaves: number;
  /** The input width: n_features (classifier), x_train's columns (forest), else the widest feature used + 1. */
  readonly nFeatures: number;
}

/** What an .apr v1 classical payload decoded as. */
export interface PayloadInfo {
  /** aprender's Rust type, e.g. 'RandomForestClassifier', 'DecisionTreeRegressor', 'KMeans'. */
  readonly estimator: string;
  /** Trees: 'E1' (before impurity / n_node_samples) or 'E2'; KMeans: 'legacy' or 'current' (with n_init). */
  readonly layout: 'E1' | 'E2' | 'legacy' | 'current';
}

/** An ONNX graph input or output as the file declares it. */
export interface OnnxValueInfo {
  readonly name: string;
  /** TensorProto.DataType (1: float). */
  readonly elemType: number;
  /** null where a dimension is symbolic (the batch); null for the whole shape when the file gives none. */
  readonly shape: readonly (number | null)[] | null;
}

/** `info.onnx` and `inspect().onnx`: the graph as listed in the file. */
export interface OnnxGraphInfo {
  readonly irVersion: number;
  /** The ai.onnx opset imported (mlrt runs 7 to 21). */
  readonly opset: number;
  readonly producer: string;
  readonly graph: string;
  readonly inputs: readonly OnnxValueInfo[];
  readonly outputs: readonly OnnxValueInfo[];
  readonly nodes: number;
  /** Each op type and how many nodes use it, in order of first use. */
  readonly ops: Readonly<Record<string, number>>;
  readonly initializers: readonly { readonly name: string; readonly dtype: 'F32' | 'I64'; readonly shape: readonly number[] }[];
  /** info only: how mlrt runs it. batched: the input's first dimension is the batch (predictBatch runs
   * tileRows samples per pass); else one sample is the whole input tensor. */
  readonly plan?: { readonly batched: boolean; readonly tileRows: number; readonly ops: number;
                    /** Multiply-adds (and pooling window reads) per sample. */
                    readonly macs: number;
                    readonly arenaBytes: number; readonly scratchBytes: number };
}

/** An aprender-shell NgramLm (MarkovModel): described by inspect, not run. */
export interface NgramInfo {
  readonly estimator: 'MarkovModel';
  readonly n: number;
  readonly contexts: number;
  readonly transitions: number;
  readonly commands: number;
  readonly totalCommands: number;
  readonly lastTrainedPos: number;
}
export type DType =
  | 'BOOL' | 'U8' | 'I8' | 'F8_E5M2' | 'F8_E4M3' | 'I16' | 'U16' | 'F16' | 'BF16'
  | 'I32' | 'U32' | 'F32' | 'F64' | 'I64' | 'U64'
  /** block-quantized (.apr v2): inspected, not yet run */
  | 'APR_Q4' | 'APR_Q8' | 'Q4_K' | 'Q6_K';
export type Activation = 'identity' | 'relu' | 'sigmoid' | 'tanh' | 'softmax' | 'gelu' | 'leaky_relu' | 'silu';

/** aprender's model types (.apr v1 headers), as `expect` takes them. */
export type AprModelType =
  | 'LinearRegression' | 'LogisticRegression' | 'DecisionTree' | 'RandomForest' | 'GradientBoosting'
  | 'KMeans' | 'Pca' | 'NaiveBayes' | 'Knn' | 'Svm' | 'NgramLm' | 'Tfidf' | 'CountVectorizer'
  | 'NeuralSequential' | 'NeuralCustom' | 'ContentRecommender' | 'MixtureOfExperts' | 'Custom';

export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** String -> string for SafeTensors/BinTensors; any JSON for .apr (v1: its MessagePack metadata). */
export type Metadata = Readonly<Record<string, JsonValue>>;

export interface ByteRange {
  readonly byteOffset: number;
  readonly byteLength: number;
}

/** The .apr container: `info.apr` and `inspect().apr` for .apr files. */
export interface AprContainer {
  /** 'APRN' (v1: one model) or 'APR\0' / 'APR2' (v2: tensors). */
  readonly magic: 'APRN' | 'APR\0' | 'APR2';
  readonly version: string;
  /** Names of the header's flag bits, e.g. ['SIGNED'], ['LAYOUT_ROW_MAJOR']. */
  readonly flags: readonly string[];
  readonly metadataBytes: ByteRange;
  // v1 only
  readonly modelType?: AprModelType;
  readonly modelTypeCode?: number;
  readonly compression?: 'None' | 'ZstdDefault' | 'ZstdMax' | 'Lz4';
  readonly qualityScore?: number;
  readonly encrypted?: boolean;
  readonly signed?: boolean;
  readonly uncompressedSize?: number;
  readonly payloadBytes?: ByteRange;
  /** Signed files: the Ed25519 signature, the signer's public key, and the signed message
   * (header ‖ metadata ‖ payload). mlrt does not verify the signature. */
  readonly signatureBytes?: ByteRange;
  readonly publicKeyBytes?: ByteRange;
  readonly signedBytes?: ByteRange;
  // v2 only
  readonly indexBytes?: ByteRange;
  readonly dataOffset?: number;
}

export interface TensorInfo {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** Where the tensor's bytes start in the file. */
  readonly byteOffset: number;
  readonly byteLength: number;
}

export interface Inspection {
  readonly format: Format;
  /** Present when the tensors form a model mlrt can run. */
  readonly modelKind?: ModelKind;
  /** Present when they do not: why loadFromBytes would refuse them. */
  readonly notAModel?: { readonly code: MlrtErrorCode; readonly message: string };
  /** With modelKind: as in ModelInfo. */
  readonly task?: Task;
  readonly classCount?: number;
  readonly classes?: readonly number[];
  readonly trees?: TreeFacts;
  readonly clusters?: number;
  readonly nFeatures?: number;
  readonly payload?: PayloadInfo;
  /** NgramLm files. */
  readonly ngram?: NgramInfo;
  /** ONNX files: the graph (listed even when mlrt does not run it: then notAModel says why). */
  readonly onnx?: OnnxGraphInfo;
  readonly metadata: Metadata;
  readonly apr?: AprContainer;
  /** Empty for .apr v1 (one bincode payload, no tensor list). */
  readonly tensors: readonly TensorInfo[];
}

export interface LayerInfo {
  readonly inputs: number;
  readonly outputs: number;
  readonly activation: Activation;
}

/** The element types of a model's inputs and outputs (info.inputs, info.outputs), by mlrt's names. */
export type TensorDType = 'F32' | 'I32' | 'I64' | 'U8' | 'BOOL';

/** One input or output of a model, as info lists it. */
export interface TensorSpec {
  readonly name: string;
  readonly dtype: TensorDType;
  /** Each dimension: a number, or the name of a dimension that varies per call ('batch', a
   * sequence length), which run() takes at any size from 1 (up to maxDims' limit when it has one). */
  readonly shape: readonly (number | string)[];
  /** The largest value of the named dimensions that have a limit, e.g. { sequence: 512 }. */
  readonly maxDims?: Readonly<Record<string, number>>;
}

export interface ModelInfo {
  readonly format: Format;
  readonly kind: ModelKind;
  readonly task: Task;
  /** Classification: the number of classes (predict's scores, one per class). */
  readonly classCount?: number;
  /** Classification, when the file stores its labels (trees, forests): the class labels (3, 7, 12),
   * ascending; predict's scores are in this order. Absent where the labels are implicit (MLPs,
   * logistic regression, graphs): the label is the output's index, 0..classCount-1 (a one-output
   * sigmoid: 0 or 1), and is never listed. */
  readonly classes?: readonly number[];
  /** Decision trees and random forests. */
  readonly trees?: TreeFacts;
  /** KMeans: the number of centroids (= outputSize) and their width (= inputSize). */
  readonly clusters?: number;
  readonly nFeatures?: number;
  /** .apr v1 trees, forests and KMeans. */
  readonly payload?: PayloadInfo;
  /** MLPs from tensor files: how their 2-D weights were read ('mixed': layer by layer). */
  readonly weightLayout?: 'out_in' | 'in_out' | 'mixed';
  /** True when some layer's orientation was not decided by the file (square, no bias or name hint):
   * PyTorch's [out][in] was taken; pass weightLayout to load to say otherwise. */
  readonly weightLayoutGuessed?: boolean;
  readonly inputSize: number;
  readonly outputSize: number;
  /** Element type of the weights in the file: float types run as f32; APR_Q8 / APR_Q4 stay quantized. */
  readonly dtype: DType;
  /** Dense: weights and biases; trees: nodes; KMeans: centroid coordinates. */
  readonly params: number;
  /** Bytes of weights held in memory (packed weights and their quantization scales; biases not counted;
   * trees: their 16-byte nodes, roots and classes; KMeans: the centroids). A forest's training set
   * is checked at load and not kept. */
  readonly weightBytes: number;
  readonly layers: readonly LayerInfo[];
  /** What run() takes: dense models, trees, forests and k-means one 'input' ['batch', inputSize]
   * F32; graphs their own. */
  readonly inputs: readonly TensorSpec[];
  /** What run() gives: dense models, trees, forests and k-means one 'output' ['batch', outputSize] F32. */
  readonly outputs: readonly TensorSpec[];
  readonly metadata: Metadata;
  /** ONNX graphs: the graph and its plan. */
  readonly onnx?: OnnxGraphInfo;
  /** The container of the bytes the C core loaded: after load() decrypted a file, the plain one. */
  readonly apr?: AprContainer;
  /** Set by load() (not loadFromBytes): what was checked before loading. */
  readonly signature?: SignatureInfo;
  /** Set by load(): how the payload was decrypted, or false when it was not encrypted. */
  readonly encrypted?: 'password' | 'recipient' | false;
}

export interface SignatureInfo {
  /** The file carries an Ed25519 signature (.apr v1 flag 0x02). */
  readonly signed: boolean;
  /** 'trusted': verified with the caller's publicKey. 'embedded': verified only with the key in
   * the file, which proves the file intact, not who signed it. null when not signed. */
  readonly signer: 'trusted' | 'embedded' | null;
  /** The signature was verified (load() refuses a signed file whose signature fails). */
  readonly verified: boolean;
}

export interface LoadOptions {
  /** How a SafeTensors / BinTensors / .apr v2 file's dense weights are stored: 'out_in' (PyTorch),
   * 'in_out' (Keras, JAX/Flax, aprender), or 'auto' (default): decided per layer from the bias
   * shapes, the chain of widths and the names ('kernel' vs 'weight'); where nothing decides
   * (square layers, no hint) PyTorch's order, and info.weightLayoutGuessed is true. A layout that
   * the biases or widths contradict is BAD_DIMENSIONS. */
  weightLayout?: 'auto' | 'out_in' | 'in_out';
  /** The aprender model type the file must hold, else MODEL_TYPE_MISMATCH. .apr v1 files are checked
   * by their header's type ('DecisionTree', 'RandomForest', 'KMeans', ...); others by the model they make: mlp = 'NeuralSequential',
   * linear_regression = 'LinearRegression', logistic_regression = 'LogisticRegression'. */
  expect?: AprModelType;
}

/** load(): loadFromBytes' options, and the keys for signed / encrypted .apr v1 files. */
export interface SecureLoadOptions extends LoadOptions {
  /** The signer's Ed25519 public key (32 raw bytes or a CryptoKey): the file must be signed by
   * it, else NOT_SIGNED / SIGNATURE_INVALID. */
  publicKey?: Uint8Array | CryptoKey;
  /** Refuse unsigned files (NOT_SIGNED); without publicKey the signature is checked against the
   * key embedded in the file (signer 'embedded'). */
  requireSignature?: boolean;
  /** Password-mode encryption (Argon2id of its UTF-8 bytes). */
  password?: string | Uint8Array;
  /** Recipient-mode encryption: the recipient's raw 32-byte X25519 secret key. */
  recipientSecretKey?: Uint8Array;
  /** Argon2id (m=19456 KiB, t=2, p=1, v0x13, 32 bytes) to use instead of importing @noble/hashes. */
  argon2id?: Argon2idFunction;
}

/** Argon2id with aprender's parameters (m=19456 KiB, t=2, p=1, version 0x13), 32 bytes out. */
export type Argon2idFunction = (password: Uint8Array, salt: Uint8Array) => Promise<Uint8Array> | Uint8Array;

/** An element type of run()'s tensors, by onnxruntime-web's names. */
export type TensorType = 'float32' | 'int32' | 'int64' | 'uint8' | 'bool';

/** The typed array that holds each TensorType. */
export interface TensorData {
  float32: Float32Array;
  int32: Int32Array;
  int64: BigInt64Array;
  uint8: Uint8Array;
  /** 0 or 1 per element. */
  bool: Uint8Array;
}

/** One input of run(): its data, row-major, and its dims. Without `type`, the typed array says it
 * (a Uint8Array is uint8: give type 'bool' for a boolean mask). onnxruntime-web's Tensor is one
 * (at run time; TypeScript may need a cast, as its types cover more element types). */
export type TensorFeed =
  | { readonly type?: undefined; readonly data: Float32Array | Int32Array | BigInt64Array | Uint8Array; readonly dims: readonly number[] }
  | { readonly type: 'float32'; readonly data: Float32Array; readonly dims: readonly number[] }
  | { readonly type: 'int32'; readonly data: Int32Array; readonly dims: readonly number[] }
  /** int64 also takes an Int32Array, for convenience (widened by the C core). */
  | { readonly type: 'int64'; readonly data: BigInt64Array | Int32Array; readonly dims: readonly number[] }
  | { readonly type: 'uint8' | 'bool'; readonly data: Uint8Array; readonly dims: readonly number[] };

/** One output of run(): a copy, owned by the caller. */
export type TensorResult = { [T in TensorType]: { type: T; data: TensorData[T]; dims: number[] } }[TensorType];

export interface Model {
  readonly info: ModelInfo;
  readonly disposed: boolean;
  /**
   * Runs the model on named, typed inputs, in onnxruntime-web's convention: every input of
   * info.inputs by name, each { data, dims } (a dimension named in info.inputs' shape may take any
   * size from 1, the same in every input that names it). Returns every output of info.outputs by
   * name, as { type, data, dims }. Element types: an input takes its own type; an int64 input also
   * int32; a uint8 mask also bool, int32 or int64 (of 0 and 1). Wrong names, types or dims are
   * INVALID_ARGUMENT, naming the input. Runs on the calling thread.
   */
  run(feeds: Readonly<Record<string, TensorFeed>>): Record<string, TensorResult>;
  /** One input of info.inputSize finite numbers (trees and forests also take NaN: it goes right at
   * every split), for models whose one input is rows of floats (info.inputSize > 0; others take
   * run()). Returns info.outputSize values: per-class scores in label order (a tree: one-hot; a
   * forest: vote shares), the regressed value, or KMeans' squared distance to each centroid. */
  predict(input: Float32Array | Float64Array | readonly number[]): Float32Array;
  /** n inputs, row after row: n * info.inputSize numbers. Returns n * info.outputSize. */
  predictBatch(inputs: Float32Array | Float64Array | readonly number[], n: number): Float32Array;
  /** A classifier's class label: as stored (info.classes), else the best output's index (ties: the
   * smallest label); or KMeans' nearest centroid (ties: the lowest index). Regressors throw
   * INVALID_ARGUMENT. */
  predictLabel(input: Float32Array | Float64Array | readonly number[]): number;
  /** n inputs, row after row: one label each. */
  predictLabels(inputs: Float32Array | Float64Array | readonly number[], n: number): Uint32Array;
  /** Layer i's weights as f32 (quantized weights dequantized), for converters and writers. */
  layerWeights(i: number): LayerWeights;
  /** Returns the model's memory to the wasm heap. Safe to call twice. */
  dispose(): void;
}

export interface LayerWeights extends LayerInfo {
  /** outputs × inputs values, row-major [out][in] (PyTorch nn.Linear order). */
  readonly weight: Float32Array;
  /** outputs values, or null when the file has no bias for this layer. */
  readonly bias: Float32Array | null;
}

export interface Runtime {
  /** The instruction sets the wasm module was compiled for. relaxed: f32 multiply-adds are fused
   * (f32x4.relaxed_madd), so results may differ from the SIMD128 and scalar builds in the last bits. */
  readonly build: {
    readonly simd: boolean;
    readonly relaxed: boolean;
    /** Threads predict and predictBatch run dense models on, and encoders' embed and embedTokens their
     * batches' texts (this one and the workers); 1 without workers. */
    readonly threads: number;
    /** Why `threads` > 1 was asked for but the runtime runs on one thread (e.g. 'no SharedArrayBuffer'). */
    readonly threadsUnavailable?: string;
  };
  /** Ends the worker threads (threads > 1); the runtime and its models go on, on this thread. */
  dispose(): void;
  /** The worker pool, for diagnostics and tests; null with one thread (and after dispose()). */
  readonly threadPool: ThreadPoolDiagnostics | null;
  /** Bytes of wasm memory (grows, never shrinks). */
  readonly memoryBytes: number;
  inspect(bytes: Uint8Array | ArrayBuffer): Inspection;
  loadFromBytes(bytes: Uint8Array | ArrayBuffer, options?: LoadOptions): Model;
  /** loadFromBytes after checking a .apr v1 file's signature and decrypting its payload
   * (WebCrypto; apr-crypto.mjs is imported on first use). Other formats load as with
   * loadFromBytes (NOT_SIGNED when publicKey or requireSignature is given). info gets
   * `signature` and `encrypted`. */
  load(bytes: Uint8Array | ArrayBuffer, options?: SecureLoadOptions): Promise<Model>;
  /** A WordPiece tokenizer (see Tokenizer): the bytes of a tokenizer.json (or of a vocab.txt), or
   * a model folder's files by name. Throws MlrtError (UNSUPPORTED naming BPE, Unigram, ByteLevel,
   * Metaspace, ...; BAD_HEADER naming the field; INVALID_UTF8 with the byte offset; ...). */
  loadTokenizer(files: Uint8Array | ArrayBuffer | TokenizerFiles): Tokenizer;
  /** A BERT-family sentence encoder (see Encoder) from its folder's files by their names in the
   * model's repository. Throws MlrtError: INVALID_ARGUMENT (a file missing, named twice), BAD_DIMENSIONS
   * (a shape that disagrees with config.json, a tokenizer larger than vocab_size), UNSUPPORTED (naming the
   * config field: hidden_act, position_embedding_type, a decoder), NON_FINITE, TRUNCATED, the
   * tokenizer's codes, NOT_A_MODEL (files that hold no encoder: loadFromBytes loads other models).
   * loadFromBytes and load refuse an encoder with a message that names loadEncoder. */
  loadEncoder(files: EncoderFiles): Encoder;
  /** loadEncoder for files that are read asynchronously: a Blob (a File from an <input> or a dropped
   * folder, fs.openAsBlob in Node) or an EncoderAsyncFileSource, read a part (4 MiB) at a time, four
   * parts of a file at once, straight into the runtime's memory (never held twice), while the engine
   * compiles the kernels; a Response (fetch(url)), its body copied into the runtime's memory as it
   * arrives when its Content-Length gives its size (a compressed body, or one without a length, is
   * read whole first). HTTP outside 200-299, a body already read, a body longer or shorter than its
   * Content-Length: INVALID_ARGUMENT. Bytes and EncoderFileSource are taken too. Rejects with the
   * MlrtError loadEncoder throws, or with what a source's read rejects with, once every read of the
   * call has ended. */
  loadEncoderAsync(files: EncoderFilesAsync): Promise<Encoder>;
}

/** What rt.threadPool shows of the workers (threads > 1). */
export interface ThreadPoolDiagnostics {
  /** Workers: the runtime's threads besides the calling one. */
  readonly size: number;
  /** How many workers sleep in Atomics.wait. Workers spin a little (about 0.1-0.3 ms) after each
   * job, then sleep; a small batch's layer slices go to workers only while none sleeps. */
  readonly sleeping: number;
  /** Wakes the sleeping workers (they spin for the next job); returns how many slept. */
  wake(): number;
  /** Jobs the workers finished without error since the pool started: blocks of a batch's rows
   * (dense models' batches of 16 rows or more; encoders' batches of 2 texts or more) and slices of a
   * layer's outputs (dense models' smaller batches). */
  readonly completed: { readonly rows: number; readonly slices: number };
}

// ---- text: the WordPiece tokenizer (issue 20) ----

/** A model folder's tokenizer files, by their names in the repository. */
export type TokenizerFiles =
  | { readonly 'tokenizer.json': Uint8Array | ArrayBuffer; readonly [name: string]: Uint8Array | ArrayBuffer }
  | { readonly 'vocab.txt': Uint8Array | ArrayBuffer; readonly 'tokenizer_config.json'?: Uint8Array | ArrayBuffer;
      readonly [name: string]: Uint8Array | ArrayBuffer | undefined };

/** Text: a string (a lone surrogate is INVALID_UTF8) or UTF-8 bytes (invalid UTF-8: INVALID_UTF8 with the byte offset). */
export type TokenizerText = string | Uint8Array | ArrayBuffer;

export interface EncodeOptions {
  /** Length that truncation keeps and padding 'max_length' fills, special tokens included
   * (default: the file's truncation max_length). Alone it turns on longest_first truncation. */
  maxLength?: number;
  /** true ('longest_first'), 'only_first', 'only_second', or false (none); default: the file's. */
  truncation?: boolean | 'longest_first' | 'only_first' | 'only_second';
  /** 'longest' (a batch's longest), 'max_length', or false; default: the file's padding. */
  padding?: 'longest' | 'max_length' | false;
}

export interface Encoding {
  readonly ids: Int32Array;
  /** 0 for the first sequence and its specials, 1 for the second's (as the template says); padding: pad_type_id. */
  readonly typeIds: Int32Array;
  /** 1 for tokens, 0 for padding. */
  readonly attentionMask: Uint8Array;
}

export interface TokenizerInfo {
  readonly source: 'tokenizer.json' | 'vocab.txt';
  readonly model: 'WordPiece';
  readonly vocabSize: number;
  /** vocabSize + added tokens outside the vocabulary. */
  readonly idCount: number;
  readonly unkToken: string;
  readonly continuingSubwordPrefix: string;
  readonly maxInputCharsPerWord: number;
  /** null: no normalizer. stripAccents is resolved (null in the file follows lowercase). */
  readonly normalizer: { readonly type: 'BertNormalizer'; readonly cleanText: boolean; readonly handleChineseChars: boolean;
    readonly stripAccents: boolean; readonly lowercase: boolean } | null;
  readonly preTokenizer: 'BertPreTokenizer' | null;
  /** The special added tokens: content -> id. */
  readonly specialTokens: Readonly<Record<string, number>>;
  /** The post-processor's special tokens around one sequence and around a pair; null: none. */
  readonly postProcessor: { readonly addedSingle: number; readonly addedPair: number } | null;
  readonly truncation: { readonly maxLength: number; readonly strategy: 'longest_first' | 'only_first' | 'only_second';
    readonly direction: 'left' | 'right' } | null;
  readonly padding: { readonly strategy: 'longest' | 'max_length'; readonly length?: number; readonly direction: 'left' | 'right';
    readonly padId: number; readonly padTypeId: number; readonly padToMultipleOf: number | null } | null;
  /** truncation.maxLength, else tokenizer_config.json's model_max_length, else null. */
  readonly maxLength: number | null;
  readonly decoder: { readonly type: 'WordPiece'; readonly prefix: string; readonly cleanup: boolean } | null;
}

/** A WordPiece tokenizer, token for token Hugging Face's Rust `tokenizers` (BertNormalizer,
 * BertPreTokenizer, WordPiece, TemplateProcessing / BertProcessing). Defaults follow the file's
 * truncation and padding, as Hugging Face applies them; options override. */
export interface Tokenizer {
  readonly info: TokenizerInfo;
  readonly disposed: boolean;
  encode(text: TokenizerText, options?: EncodeOptions & { pair?: TokenizerText | null }): Encoding;
  /** One call for all texts ([text, pair] arrays: all of them). Rows are views into shared arrays. */
  encodeBatch(texts: readonly TokenizerText[] | readonly (readonly [TokenizerText, TokenizerText])[], options?: EncodeOptions): Encoding[];
  /** The WordPiece decoder's text (continuations joined, spaces before punctuation cleaned up). An id
   * that is no token: INVALID_ARGUMENT. */
  decode(ids: Int32Array | Uint32Array | readonly number[], options?: { skipSpecialTokens?: boolean }): string;
  /** The text after the normalizer alone. */
  normalize(text: TokenizerText): string;
  /** The token of an id (vocabulary or added token), or null. */
  idToToken(id: number): string | null;
  /** Returns the tokenizer's memory to the wasm heap. Safe to call twice. */
  dispose(): void;
}
// ---- end of text ----

// ---- sentence encoders (issue 21) ----

/** A model folder's files by their names in the repository (Hugging Face / sentence-transformers):
 * 'model.safetensors' (F32, F16, BF16) or 'model.apr' (aprender .apr v2), 'config.json',
 * 'tokenizer.json' or 'vocab.txt' (+ 'tokenizer_config.json'), and when present 'modules.json',
 * '1_Pooling/config.json', 'sentence_bert_config.json' (pooling, Normalize, maximum length), each Dense
 * module's 'config.json' and 'model.safetensors' ('2_Dense/...'),
 * 'config_sentence_transformers.json' (prompts). When modules.json puts the Transformer in a folder of
 * its own (older folders: '0_Transformer'), its files are named so ('0_Transformer/config.json', ...).
 * Other names are ignored. Names are paths inside the model's folder ('./config.json' is 'config.json'). */
export type EncoderFiles =
  | { readonly [name: string]: Uint8Array | ArrayBuffer | EncoderFileSource }
  | ReadonlyMap<string, Uint8Array | ArrayBuffer | EncoderFileSource>;

/** A file that loadEncoder reads straight into the runtime's memory, so that a large weights file is
 * never held twice (the model packs its weights where the file's bytes lie). readInto(dest) must fill
 * dest (byteLength bytes: a view of wasm memory, valid only during the call) and may return the count
 * it wrote (another count is INVALID_ARGUMENT); what it throws is thrown. In Node:
 * `{ byteLength: statSync(p).size, readInto: (d) => readSync(fd, d, 0, d.length, 0) }` (loop for files
 * over 2 GB). byteLength: an integer from 0 to 4294901760, else INVALID_ARGUMENT. */
export interface EncoderFileSource {
  readonly byteLength: number;
  readInto(dest: Uint8Array): number | void;
}

/** A file that loadEncoderAsync reads in parts, several at once: read(dest, position) fills dest (a view
 * of wasm memory, valid until its promise settles; another call on the runtime that grows the memory
 * meanwhile, another load say, detaches it, and that part is then read again into a new view) with the
 * file's bytes from position, and may resolve
 * to the count it wrote (another count is INVALID_ARGUMENT). In Node (the reads run on the thread pool,
 * where the page faults of fresh memory then fall on every core):
 * `{ byteLength: (await fh.stat()).size, read: async (d, p) => (await fh.read(d, 0, d.length, p)).bytesRead }`
 * for `const fh = await fs.promises.open(path)`. A source with readInto too is read by readInto in loadEncoder. */
export interface EncoderAsyncFileSource {
  readonly byteLength: number;
  read(dest: Uint8Array, position: number): Promise<number | void>;
}

/** EncoderFiles, and Blobs, Responses and EncoderAsyncFileSources (loadEncoderAsync). */
export type EncoderFilesAsync =
  | { readonly [name: string]: Uint8Array | ArrayBuffer | Blob | Response | EncoderFileSource | EncoderAsyncFileSource }
  | ReadonlyMap<string, Uint8Array | ArrayBuffer | Blob | Response | EncoderFileSource | EncoderAsyncFileSource>;

export interface EncoderInfo {
  readonly format: 'safetensors' | 'apr';
  readonly kind: 'encoder';
  readonly task: 'embedding';
  /** config.json's architectures[0] (e.g. 'BertModel', 'MPNetModel', 'DistilBertModel'). */
  readonly architecture: string;
  /** Floats per embedding: hiddenSize times the pooling modes (one for 'mean' or 'cls'), or the last Dense module's out. */
  readonly dim: number;
  readonly hiddenSize: number;
  readonly layers: number;
  readonly heads: number;
  readonly ffn: number;
  readonly vocabSize: number;
  /** max_position_embeddings. */
  readonly maxPositions: number;
  /** Token types (type_vocab_size); 0 for MPNet and DistilBERT, which have none. */
  readonly typeVocabSize: number;
  /** Tokens per text that embed keeps: sentence_bert_config.json's max_seq_length, else (as sentence-transformers)
   * min(max_position_embeddings, tokenizer_config.json's model_max_length); MPNet: at most max_position_embeddings - 2. */
  readonly maxLength: number;
  readonly layerNormEps: number;
  readonly hiddenAct: 'gelu';
  /** The 1_Pooling modes, joined by '+' when several: 'mean', 'cls', 'max', ... */
  readonly pooling: string;
  /** sentence-transformers' Dense modules after the pooling, in order (LaBSE: 768 -> 768 tanh); [] without.
   * dim is the last one's out. */
  readonly dense: readonly { readonly in: number; readonly out: number; readonly bias: boolean;
    readonly activation: 'identity' | 'tanh' | 'relu' | 'sigmoid' }[];
  /** A Normalize module: embeddings are L2-normalized. */
  readonly normalize: boolean;
  /** sentence_bert_config.json's do_lower_case: embed lowercases texts first. */
  readonly lowerCase: boolean;
  /** The side embed cuts a long text on: tokenizer_config.json's truncation_side ('right' unless it
   * says 'left'; as in transformers, tokenizer.json's truncation direction does not decide). */
  readonly truncationSide: 'right' | 'left';
  /** config_sentence_transformers.json's named prompts (texts embed can put before every text); {} without. */
  readonly prompts: Readonly<Record<string, string>>;
  /** The prompt embed uses when given none (config_sentence_transformers.json's default_prompt_name), or null. */
  readonly defaultPromptName: string | null;
  /** 1_Pooling/config.json's include_prompt (default true). false: a prompt's tokens ([CLS] and the
   * prompt's, counted by tokenizing it alone) are left out of the pooling (CLS pooling excepted). */
  readonly includePrompt: boolean;
  /** 'bert.' when the tensors are named so, else ''. */
  readonly tensorPrefix: string;
  /** Tensors of the file the forward pass does not use (pooler.*, embeddings.position_ids, cls.*). */
  readonly unusedTensors: readonly string[];
  /** Whether a tokenizer was loaded (embed needs one; embedTokens does not). */
  readonly tokenizer: boolean;
  readonly dtype: 'f32' | 'f16' | 'bf16' | 'q8' | 'q4';
  readonly params: number;
  /** Bytes of weights held in memory. */
  readonly weightBytes: number;
  readonly inputSize: number;
  readonly outputSize: number;
  /** input_ids, attention_mask, token_type_ids ['batch', 'sequence']. */
  readonly inputs: readonly TensorSpec[];
  /** sentence_embedding ['batch', dim] F32. */
  readonly outputs: readonly TensorSpec[];
  readonly metadata: Metadata;
}

/** Token ids already made: a flat Int32Array / BigInt64Array with dims [rows, width] (without dims: one
 * row), or arrays of integers per row (rows may differ in length: the short ones are padded and
 * masked). attentionMask (default all ones) and typeIds (default zeros) have the shape of ids. */
export interface TokenInput {
  readonly ids: Int32Array | BigInt64Array | readonly (readonly (number | bigint)[])[] | readonly (number | bigint)[];
  readonly attentionMask?: Uint8Array | Int32Array | BigInt64Array | readonly (readonly number[])[] | readonly number[];
  readonly typeIds?: Int32Array | BigInt64Array | readonly (readonly number[])[] | readonly number[];
  readonly dims?: readonly [number, number];
}

/** Options of Encoder#embed. */
export interface EmbedOptions {
  /** Texts per call into the module (default 32); results do not depend on it. */
  readonly batchSize?: number;
  /** A text put before every text ('' for none). */
  readonly prompt?: string;
  /** One of info.prompts, put before every text. */
  readonly promptName?: string;
}

/** A BERT-family sentence encoder: one embedding per text, each text giving the same bits alone as in
 * any batch. */
export interface Encoder {
  readonly info: EncoderInfo;
  /** The model's tokenizer (owned by the encoder: free() disposes it), or null without tokenizer files.
   * It is the file's tokenizer, as npm `tokenizers` loads it: the file's own padding and truncation
   * apply (all-MiniLM-L6-v2's pads to 128 and cuts at 128). embed does not use those: it cuts each text
   * at info.maxLength (on tokenizer_config.json's truncation_side), pads nothing, and lowercases first
   * when info.lowerCase. The ids embed uses for a text (right side):
   * tokenizer.encode(text, { maxLength: info.maxLength, truncation: true, padding: false }).ids. */
  readonly tokenizer: Tokenizer | null;
  readonly disposed: boolean;
  /** n texts -> Float32Array(n * info.dim), row after row (one text: n = 1): tokenized by the model's
   * tokenizer (lowercased first when info.lowerCase, truncated to info.maxLength), pooled, normalized
   * when info.normalize. batchSize (default 32): texts per call into the module; results do not depend on it.
   * On a runtime with threads (createRuntime({ threads })), each call's texts are tokenized on the calling
   * thread and split in blocks of whole texts between it and the workers (balanced by tokens), with the
   * bits and refusals of one thread; a single text runs on the calling thread, as do a lowercasing
   * model's (info.lowerCase) non-ASCII texts, and texts whose prompt the pooling leaves out.
   * A prompt is put before every text, as sentence-transformers' encode(prompt=, prompt_name=) does:
   * options.prompt (a text) or options.promptName (a key of info.prompts; not both: INVALID_ARGUMENT),
   * else the model's default prompt (info.defaultPromptName); prompt: '' for none. */
  embed(texts: TokenizerText | readonly TokenizerText[], options?: EmbedOptions): Float32Array;
  /** Token ids -> Float32Array(rows * info.dim). INVALID_ARGUMENT for an id outside the vocabulary, a
   * row wider than info.maxPositions, a row without tokens, left padding with CLS pooling. With threads,
   * rows are split between the threads as in embed. */
  embedTokens(input: TokenInput): Float32Array;
  /** Returns the encoder's memory (and its tokenizer's) to the wasm heap. Safe to call twice. */
  free(): void;
  /** The same as free(). */
  dispose(): void;
}
// ---- end of sentence encoders ----

export interface RuntimeOptions {
  /** The .wasm to use; default: mlrt-relaxed.wasm, mlrt.wasm or mlrt-scalar.wasm next to this
   * module, by what the engine supports. */
  wasm?: BufferSource | URL | string | Response | Promise<Response> | WebAssembly.Module;
  /** 'auto' (default) picks SIMD128 when the engine has it; false: the scalar build. */
  simd?: 'auto' | boolean;
  /** 'auto' (default) picks the relaxed-SIMD build when the engine has relaxed SIMD (Chromium,
   * workerd; Node 20 with --experimental-wasm-relaxed-simd); false: the SIMD128 build. */
  relaxed?: 'auto' | boolean;
  /** Threads for predict and predictBatch on dense models, and for encoders' embed and embedTokens
   * batches: 1 (default), n, or 'auto' (one per core). Needs SharedArrayBuffer (browsers: a
   * cross-origin-isolated page); otherwise one thread, with build.threadsUnavailable saying why. Rows
   * and texts give the same bits for any thread count. */
  threads?: number | 'auto';
  /** The threaded build (default: mlrt-threads.wasm next to this module). */
  threadsWasm?: BufferSource | URL | string | Response | Promise<Response> | WebAssembly.Module;
}

export function createRuntime(options?: RuntimeOptions): Promise<Runtime>;
/** True when this engine runs WebAssembly SIMD128. */
export function simdSupported(): boolean;
/** True when this engine runs WebAssembly relaxed SIMD. */
export function relaxedSimdSupported(): boolean;
