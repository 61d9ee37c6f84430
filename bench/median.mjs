// The benches' median, for Node scripts and the pages they serve alike (no imports; the Chromium benches
// serve this file at /bench/median.mjs).
/** The median of a list of numbers (the mean of the middle two for an even count); the list is not changed. */
export const median = (v) => { const s = [...v].sort((a, b) => a - b); const h = s.length >> 1; return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2; };
