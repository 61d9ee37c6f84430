// onnxruntime-web's feeds for an encoder exported by tools/encoder/onnx.mjs: the int64 input_ids,
// attention_mask and token_type_ids of a batch, padded on the right to its longest row. No Node
// imports: bench/browser/encoder-page.mjs loads it in Chromium too.

/** ids: rows of token ids (lengths may differ); typeIds: rows like them, or null (all 0); Tensor: the
 * ort module's Tensor class. Padding positions get id 0, mask 0. */
export function encoderFeeds(Tensor, ids, typeIds = null) {
  const n = ids.length, T = Math.max(...ids.map((x) => x.length));
  const I = new BigInt64Array(n * T), M = new BigInt64Array(n * T), Y = new BigInt64Array(n * T);
  ids.forEach((x, i) => x.forEach((v, j) => {
    I[i * T + j] = BigInt(v); M[i * T + j] = 1n; Y[i * T + j] = BigInt(typeIds ? typeIds[i][j] : 0);
  }));
  const t = (a) => new Tensor('int64', a, [n, T]);
  return { input_ids: t(I), attention_mask: t(M), token_type_ids: t(Y) };
}
