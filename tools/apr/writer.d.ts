// Type declarations for mlrt/apr-writer.mjs: writers of aprender's .apr containers and payloads.
import type { Model } from '../../wasm/mlrt.js';

/** A bad option, or a model the requested layout cannot hold. */
export class AprWriteError extends Error {
  readonly name: 'AprWriteError';
}

export type AprModelTypeName =
  | 'LinearRegression' | 'LogisticRegression' | 'DecisionTree' | 'RandomForest' | 'GradientBoosting' | 'KMeans'
  | 'Pca' | 'NaiveBayes' | 'Knn' | 'Svm' | 'NgramLm' | 'Tfidf' | 'CountVectorizer' | 'NeuralSequential'
  | 'NeuralCustom' | 'ContentRecommender' | 'MixtureOfExperts' | 'Custom';
export const MODEL_TYPES: Readonly<Record<AprModelTypeName, number>>;
export const WRITER_VERSION: string;
export type Compression = 'none' | 'lz4' | 'zstd' | 'zstd-max';
/** aprender's v1 Metadata (MessagePack), and any other keys. */
export type V1Metadata = Record<string, unknown>;

/** An APRN (.apr v1) file around a bincode payload. */
export function writeAprV1(options: {
  modelType: AprModelTypeName | number;
  payload: Uint8Array;
  metadata?: V1Metadata;
  compression?: Compression;
  qualityScore?: number;
}): Uint8Array;

export function linearRegressionPayload(o: { coefficients?: ArrayLike<number> | null; intercept?: number; fitIntercept?: boolean }): Uint8Array;
export function logisticRegressionPayload(o: {
  coefficients?: ArrayLike<number> | null; intercept?: number; learningRate?: number; maxIter?: number; tol?: number;
  classWeight?: 'Uniform' | 'Balanced' | { Manual: number[] }; l2Penalty?: number;
  fitMode?: 'Batch' | 'Stochastic' | { MiniBatch: number };
}): Uint8Array;
/** NeuralSequential as aprender's MNIST example: w1 [in][hidden], b1, w2 [hidden][out], b2. */
export function mnistMlpPayload(o: { w1: ArrayLike<number>; b1: ArrayLike<number>; w2: ArrayLike<number>; b2: ArrayLike<number> }): Uint8Array;

/** A tree node: a split, or a leaf of a classifier (label) or a regressor (value). */
export type TreeNode =
  | { feature: number; threshold: number; left: TreeNode; right: TreeNode; impurity?: number; nNodeSamples?: number }
  | { label: number; nSamples?: number; impurity?: number }
  | { value: number; nSamples?: number; impurity?: number };
/** 'E1': aprender's node layout before impurity / n_node_samples; 'E2': with them (default). */
export type TreeLayout = 'E1' | 'E2';
export interface MatrixF32 { data: ArrayLike<number>; rows: number; cols: number }

export function decisionTreePayload(o: {
  tree: TreeNode | null; maxDepth?: number | null; nFeatures?: number | null;
  minSamplesSplit?: number; minSamplesLeaf?: number; regressor?: boolean; layout?: TreeLayout;
}): Uint8Array;
export function randomForestPayload(o: {
  trees: TreeNode[]; nEstimators?: number; maxDepth?: number | null; randomState?: number | null;
  oobIndices?: number[][]; xTrain?: MatrixF32 | null; yTrain?: ArrayLike<number> | null; nFeatures?: number;
  regressor?: boolean; layout?: TreeLayout;
}): Uint8Array;
export function kmeansPayload(o: {
  centroids: MatrixF32 | number[][] | null; nClusters?: number; maxIter?: number; tol?: number;
  randomState?: number | null; labels?: ArrayLike<number> | null; inertia?: number; nIter?: number; nInit?: number;
  layout?: 'legacy' | 'current';
}): Uint8Array;
export function ngramLmPayload(o: {
  n?: number; ngrams?: Record<string, Record<string, number>>; commandFreq?: Record<string, number>;
  totalCommands?: number; lastTrainedPos?: number;
}): Uint8Array;

export const DTYPES: Readonly<Record<'F32' | 'F16' | 'F64' | 'I32' | 'I64' | 'I8' | 'U8' | 'BF16' | 'APR_Q4' | 'APR_Q8' | 'Q4_K' | 'Q6_K', number>>;
export interface V2Tensor { name: string; dtype: number | keyof typeof DTYPES; shape: number[]; data: Uint8Array }
/** An APR\0 (.apr v2) file of tensors. */
export function writeAprV2(options: { metadata?: Record<string, unknown>; tensors: V2Tensor[] }): Uint8Array;
/** One tensor of f32 values, stored as F32, APR_Q8 or APR_Q4. */
export function tensorOf(name: string, shape: number[], values: ArrayLike<number>, quantize?: 'f32' | 'q8' | 'q4'): V2Tensor;

/** A loaded dense model (mlp, linear or logistic regression) as .apr v1 or v2. */
export function modelToApr(model: Model, options?: {
  version?: 1 | 2; quantize?: 'f32' | 'q8' | 'q4'; compression?: Compression; qualityScore?: number;
  name?: string; description?: string; createdAt?: string;
}): Uint8Array;

export function crc32(...parts: Uint8Array[]): number;
export function f32ToF16(x: number): number;
export function f16ToF32(h: number): number;
export function quantizeQ8(values: ArrayLike<number>): Uint8Array;
export function quantizeQ4(values: ArrayLike<number>): Uint8Array;
export function dequantizeQ8(bytes: Uint8Array, n: number): Float32Array;
export function dequantizeQ4(bytes: Uint8Array, n: number): Float32Array;
