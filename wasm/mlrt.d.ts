// Type declarations for mlrt.mjs.

/** Stable error codes. Loader codes come from the C core (mlrt_status_name). */
export type MlrtErrorCode =
  | 'INVALID_ARGUMENT' | 'UNKNOWN_FORMAT' | 'TRUNCATED' | 'SIZE_MISMATCH' | 'BAD_DIMENSIONS'
  | 'SHAPE_OVERFLOW' | 'BAD_OFFSETS' | 'UNKNOWN_DTYPE' | 'INVALID_UTF8' | 'INVALID_JSON'
  | 'DUPLICATE_KEY' | 'HEADER_TOO_LARGE' | 'BAD_HEADER' | 'NOT_A_MODEL' | 'UNSUPPORTED'
  | 'OUT_OF_MEMORY' | 'NON_FINITE' | 'DISPOSED' | 'WASM_LOAD_FAILED' | 'INTERNAL';

export class MlrtError extends Error {
  readonly name: 'MlrtError';
  readonly code: MlrtErrorCode;
  constructor(code: MlrtErrorCode, message: string);
}

export type Format = 'bin' | 'safetensors' | 'bintensors';
export type ModelKind = 'mlp' | 'linear_regression' | 'logistic_regression';
export type DType =
  | 'BOOL' | 'U8' | 'I8' | 'F8_E5M2' | 'F8_E4M3' | 'I16' | 'U16' | 'F16' | 'BF16'
  | 'I32' | 'U32' | 'F32' | 'F64' | 'I64' | 'U64';
export type Activation = 'identity' | 'relu' | 'sigmoid' | 'tanh' | 'softmax' | 'gelu' | 'leaky_relu' | 'silu';

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
  readonly metadata: Readonly<Record<string, string>>;
  readonly tensors: readonly TensorInfo[];
}

export interface LayerInfo {
  readonly inputs: number;
  readonly outputs: number;
  readonly activation: Activation;
}

export interface ModelInfo {
  readonly format: Format;
  readonly kind: ModelKind;
  readonly inputSize: number;
  readonly outputSize: number;
  /** Element type of the weights in the file (they run as f32). */
  readonly dtype: DType;
  readonly params: number;
  readonly layers: readonly LayerInfo[];
  readonly metadata: Readonly<Record<string, string>>;
}

export interface Model {
  readonly info: ModelInfo;
  readonly disposed: boolean;
  /** One input of info.inputSize finite numbers. */
  predict(input: Float32Array | Float64Array | readonly number[]): Float32Array;
  /** n inputs, row after row: n * info.inputSize numbers. Returns n * info.outputSize. */
  predictBatch(inputs: Float32Array | Float64Array | readonly number[], n: number): Float32Array;
  /** Returns the model's memory to the wasm heap. Safe to call twice. */
  dispose(): void;
}

export interface Runtime {
  readonly build: { readonly simd: boolean };
  /** Bytes of wasm memory (grows, never shrinks). */
  readonly memoryBytes: number;
  inspect(bytes: Uint8Array | ArrayBuffer): Inspection;
  loadFromBytes(bytes: Uint8Array | ArrayBuffer): Model;
}

export interface RuntimeOptions {
  /** The .wasm to use; default: mlrt.wasm or mlrt-scalar.wasm next to this module. */
  wasm?: BufferSource | URL | string | Response | Promise<Response> | WebAssembly.Module;
  /** 'auto' (default) picks SIMD128 when the engine has it. */
  simd?: 'auto' | boolean;
}

export function createRuntime(options?: RuntimeOptions): Promise<Runtime>;
/** True when this engine runs WebAssembly SIMD128. */
export function simdSupported(): boolean;
