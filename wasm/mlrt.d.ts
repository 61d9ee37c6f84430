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
  | 'graph';
/** What predict's outputs mean: per-class scores, predicted values, or distances to centroids. */
export type Task = 'classification' | 'regression' | 'clustering';

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
    /** Threads predict and predictBatch run dense models on (this one and the workers); 1 without workers. */
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
   * (batches of 16 rows or more) and slices of a layer's outputs (smaller batches). */
  readonly completed: { readonly rows: number; readonly slices: number };
}

export interface RuntimeOptions {
  /** The .wasm to use; default: mlrt-relaxed.wasm, mlrt.wasm or mlrt-scalar.wasm next to this
   * module, by what the engine supports. */
  wasm?: BufferSource | URL | string | Response | Promise<Response> | WebAssembly.Module;
  /** 'auto' (default) picks SIMD128 when the engine has it; false: the scalar build. */
  simd?: 'auto' | boolean;
  /** 'auto' (default) picks the relaxed-SIMD build when the engine has relaxed SIMD (Chromium,
   * workerd; Node 20 with --experimental-wasm-relaxed-simd); false: the SIMD128 build. */
  relaxed?: 'auto' | boolean;
  /** Threads for predict and predictBatch on dense models: 1 (default), n, or 'auto' (one per core). Needs
   * SharedArrayBuffer (browsers: a cross-origin-isolated page); otherwise one thread, with
   * build.threadsUnavailable saying why. Rows give the same bits for any thread count. */
  threads?: number | 'auto';
  /** The threaded build (default: mlrt-threads.wasm next to this module). */
  threadsWasm?: BufferSource | URL | string | Response | Promise<Response> | WebAssembly.Module;
}

export function createRuntime(options?: RuntimeOptions): Promise<Runtime>;
/** True when this engine runs WebAssembly SIMD128. */
export function simdSupported(): boolean;
/** True when this engine runs WebAssembly relaxed SIMD. */
export function relaxedSimdSupported(): boolean;
