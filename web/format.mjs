// format.mjs — numbers for people.

/** 1628568 -> "1.63 MB", 49476 -> "49.5 kB", 512 -> "512 B" (decimal units). */
export function formatBytes(n) {
  if (!Number.isFinite(n) || n < 0) return '–';
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n, u = -1;
  do {
    v /= 1000;
    u++;
  } while (v >= 999.5 && u < units.length - 1);
  const digits = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${v.toFixed(digits).replace(/\.0+$|(\.\d*[1-9])0+$/, '$1')} ${units[u]}`;
}

/** Milliseconds with a precision that suits their size: "0.12 ms", "4.3 ms", "120 ms". */
export function formatMs(ms) {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 10) return `${ms.toFixed(1)} ms`;
  if (ms < 10000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/** 407050 -> "407,050". */
export const formatCount = (n) => Math.round(n).toLocaleString('en-US');

/** "1.2 MB of 1.63 MB (74%)" or, without a total, "1.2 MB". */
export function formatProgress({ loaded, total }) {
  if (total === null || total === undefined || total <= 0) return formatBytes(loaded);
  const pct = Math.min(100, Math.floor((loaded / total) * 100));
  return `${formatBytes(loaded)} of ${formatBytes(total)} (${pct}%)`;
}

/**
 * What a model is, in a few words for the page's header, from its info:
 * an MLP "a trained 784 → 512 → 10 network", a graph "a trained convolutional network of 3 layers",
 * the classical models by their kind.
 */
export function describeModel(info) {
  const arrow = '\u00a0→\u00a0';
  if (info.layers?.length) {
    const widths = [info.layers[0].inputs, ...info.layers.map((l) => l.outputs)];
    return info.kind === 'mlp' ? `a trained ${widths.join(arrow)} network`
      : `a trained ${info.kind.replace(/_/g, ' ')} (${widths.join(arrow)})`;
  }
  if (info.kind === 'graph') {
    const ops = info.onnx?.ops ?? {};
    const conv = ops.Conv ?? 0, dense = (ops.Gemm ?? 0) + (ops.MatMul ?? 0);
    const parts = [conv && `${conv} convolution${conv > 1 ? 's' : ''}`, dense && `${dense} dense layer${dense > 1 ? 's' : ''}`].filter(Boolean);
    return `a trained ${conv ? 'convolutional' : ''} network${parts.length ? ` of ${parts.join(' and ')}` : ''}`.replace('  ', ' ');
  }
  return `a trained ${info.kind.replace(/_/g, ' ')}`;
}
