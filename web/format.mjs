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
