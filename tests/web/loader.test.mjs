// loader.test.mjs — download progress, cached loading and revalidation, in Node
// (fetch, Response and streams are Node's; the IndexedDB cache is a Map stand-in).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { bodyLength, download, loadCached, LoadError, readBody, revalidate } from '../../web/loader.mjs';
import { formatProgress } from '../../web/format.mjs';

const streamOf = (...chunks) => new ReadableStream({
  start(c) {
    for (const chunk of chunks) c.enqueue(new Uint8Array(chunk));
    c.close();
  },
});

const bytes = (n, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);

// Same interface as cache.mjs's FileCache, in memory.
class MemoryCache {
  entries = new Map();
  sha = (b) => createHash('sha256').update(b).digest('hex');
  async get(url) {
    const e = this.entries.get(url);
    if (!e) return { status: 'miss' };
    if (e.corrupt) {
      this.entries.delete(url);
      return { status: 'evicted', reason: 'its SHA-256 does not match' };
    }
    return { status: 'hit', bytes: e.bytes, meta: e.meta };
  }
  async put(url, b, { etag = null, lastModified = null } = {}) {
    const meta = { url, size: b.length, sha256: this.sha(b), etag, lastModified, checkedAt: 1 };
    this.entries.set(url, { bytes: b.slice(), meta });
    return meta;
  }
  async meta(url) { return this.entries.get(url)?.meta; }
  async markChecked(url) { this.entries.get(url).meta.checkedAt = 2; }
  async delete(url) { this.entries.delete(url); }
}

// A fetch stand-in: answers from a table, records requests.
function fakeFetch(routes) {
  const calls = [];
  const impl = async (url, init = {}) => {
    calls.push({ url, headers: { ...init.headers }, cache: init.cache });
    const route = routes[url];
    if (!route) throw new TypeError('fetch failed');
    return route(init);
  };
  return { impl, calls };
}

test('bodyLength: exact lengths only', () => {
  assert.equal(bodyLength(new Headers({ 'content-length': '1234' })), 1234);
  assert.equal(bodyLength(new Headers()), null);
  assert.equal(bodyLength(new Headers({ 'content-length': '1234', 'content-encoding': 'gzip' })), null);
  assert.equal(bodyLength(new Headers({ 'content-length': 'twelve' })), null);
});

test('readBody reports bytes and the total as chunks arrive', async () => {
  const seen = [];
  const response = new Response(streamOf(bytes(10), bytes(20), bytes(5)), { headers: { 'content-length': '35' } });
  const body = await readBody(response, (p) => seen.push({ ...p }));
  assert.equal(body.length, 35);
  assert.deepEqual(seen.map((p) => p.loaded), [0, 10, 30, 35]);
  assert.ok(seen.every((p) => p.total === 35));
  assert.equal(formatProgress(seen[2]), '30 B of 35 B (85%)');
});

test('readBody without a Content-Length: total is null (indeterminate bar)', async () => {
  const seen = [];
  const body = await readBody(new Response(streamOf(bytes(7), bytes(9))), (p) => seen.push({ ...p }));
  assert.deepEqual(Array.from(body), [...bytes(7), ...bytes(9)]);
  assert.ok(seen.every((p) => p.total === null));
  assert.equal(seen.at(-1).loaded, 16);
});

test('readBody refuses a body shorter than announced', async () => {
  const response = new Response(streamOf(bytes(10)), { headers: { 'content-length': '20' } });
  await assert.rejects(readBody(response, () => {}, 'x.bin'), { code: 'DOWNLOAD_INCOMPLETE' });
});

test('download: HTTP errors, network failures and 304s', async () => {
  const { impl, calls } = fakeFetch({
    '/missing': () => new Response('nope', { status: 404, statusText: 'Not Found' }),
    '/same': () => new Response(null, { status: 304 }),
    '/ok': () => new Response(bytes(3), { headers: { etag: '"a"', 'last-modified': 'Mon, 01 Jan 2024 00:00:00 GMT' } }),
  });
  await assert.rejects(download('/missing', { fetchImpl: impl }), (e) => e instanceof LoadError && e.code === 'HTTP_404' && e.status === 404 && /HTTP 404 Not Found/.test(e.message));
  await assert.rejects(download('/down', { fetchImpl: impl }), { code: 'NETWORK_ERROR' });
  assert.deepEqual(await download('/same', { fetchImpl: impl }), { status: 304 });
  const ok = await download('/ok', { fetchImpl: impl });
  assert.equal(ok.etag, '"a"');
  assert.equal(ok.lastModified, 'Mon, 01 Jan 2024 00:00:00 GMT');
  assert.ok(calls.every((c) => c.cache === 'no-store'), 'the HTTP cache is bypassed');
});

test('loadCached: network, then cache; rejected bytes are not cached', async () => {
  const cache = new MemoryCache();
  const { impl, calls } = fakeFetch({
    '/m': () => new Response(bytes(8), { headers: { etag: '"v1"' } }),
    '/bad': () => new Response(bytes(4)),
  });
  const first = await loadCached('/m', { cache, fetchImpl: impl, use: (b) => b.length });
  assert.equal(first.source, 'network');
  assert.equal(first.value, 8);
  assert.equal(first.meta.etag, '"v1"');
  const second = await loadCached('/m', { cache, fetchImpl: impl, use: (b) => b.length });
  assert.equal(second.source, 'cache');
  assert.equal(calls.length, 1, 'the second load made no request');

  const refuse = () => { throw Object.assign(new Error('not a model'), { code: 'UNKNOWN_FORMAT' }); };
  await assert.rejects(loadCached('/bad', { cache, fetchImpl: impl, use: refuse }), { code: 'UNKNOWN_FORMAT' });
  assert.equal(cache.entries.has('/bad'), false);
});

test('loadCached: a corrupt entry is evicted and fetched again, with a note', async () => {
  const cache = new MemoryCache();
  const { impl, calls } = fakeFetch({ '/m': () => new Response(bytes(8)) });
  await loadCached('/m', { cache, fetchImpl: impl });
  cache.entries.get('/m').corrupt = true;
  const again = await loadCached('/m', { cache, fetchImpl: impl });
  assert.equal(again.source, 'network');
  assert.match(again.notes[0], /corrupt/);
  assert.equal(calls.length, 2);
  assert.equal((await cache.get('/m')).status, 'hit');
});

test('loadCached: a cached copy that no longer loads is replaced', async () => {
  const cache = new MemoryCache();
  const { impl } = fakeFetch({ '/m': () => new Response(bytes(8)) });
  await cache.put('/m', bytes(2));
  const got = await loadCached('/m', { cache, fetchImpl: impl, use: (b) => { if (b.length < 8) throw new Error('short'); return b.length; } });
  assert.equal(got.source, 'network');
  assert.equal(got.value, 8);
  assert.match(got.notes[0], /no longer loads/);
});

test('revalidate: conditional headers; 304 keeps, new bytes replace, same bytes count as unchanged', async () => {
  const cache = new MemoryCache();
  let version = 1;
  const { impl, calls } = fakeFetch({
    '/m': (init) => (init.headers?.['If-None-Match'] === `"v${version}"`
      ? new Response(null, { status: 304 })
      : new Response(bytes(8, version), { headers: { etag: `"v${version}"`, 'last-modified': 'Tue, 02 Jan 2024 00:00:00 GMT' } })),
  });
  assert.deepEqual(await revalidate('/m', { cache, fetchImpl: impl }), { status: 'not-cached' });
  await loadCached('/m', { cache, fetchImpl: impl });

  assert.deepEqual(await revalidate('/m', { cache, fetchImpl: impl }), { status: 'unchanged' });
  assert.deepEqual(calls.at(-1).headers, { 'If-None-Match': '"v1"', 'If-Modified-Since': 'Tue, 02 Jan 2024 00:00:00 GMT' });
  assert.equal(cache.entries.get('/m').meta.checkedAt, 2);

  version = 2;
  const updated = await revalidate('/m', { cache, fetchImpl: impl, use: (b) => b[0] });
  assert.equal(updated.status, 'updated');
  assert.equal(updated.value, bytes(8, 2)[0]);
  assert.equal(cache.entries.get('/m').meta.etag, '"v2"');
  assert.deepEqual(cache.entries.get('/m').bytes, bytes(8, 2));

  // A server that ignores validators and sends the same bytes: unchanged.
  const { impl: stubborn } = fakeFetch({ '/m': () => new Response(bytes(8, 2)) });
  assert.equal((await revalidate('/m', { cache, fetchImpl: stubborn })).status, 'unchanged');

  // Offline: the caller hears about it; the entry stays.
  await assert.rejects(revalidate('/m', { cache, fetchImpl: fakeFetch({}).impl }), { code: 'NETWORK_ERROR' });
  assert.equal((await cache.get('/m')).status, 'hit');
});
