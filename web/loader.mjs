// loader.mjs — downloads with progress, through the IndexedDB cache, and revalidation.
//
// Works with any FileCache-like object (cache.mjs) or none: without a cache every load
// goes to the network. Downloads use `cache: 'no-store'` so the browser's HTTP cache
// does not keep a second copy and conditional headers reach the server as written.

/** A download problem; code is 'HTTP_<status>', 'NETWORK_ERROR' or 'DOWNLOAD_INCOMPLETE'. */
export class LoadError extends Error {
  constructor(code, message, status = 0) {
    super(message);
    this.name = 'LoadError';
    this.code = code;
    this.status = status;
  }
}

/** The body's length in bytes when the headers state it exactly, else null. */
export function bodyLength(headers) {
  const encoding = headers.get('content-encoding');
  if (encoding && encoding !== 'identity') return null; // the length counts compressed bytes
  const value = headers.get('content-length');
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : null;
}

/**
 * Reads a Response's body, calling onProgress({ loaded, total }) as chunks arrive;
 * total is null when the length is unknown. Resolves to a Uint8Array.
 */
export async function readBody(response, onProgress = () => {}, url = response.url) {
  const total = bodyLength(response.headers);
  onProgress({ loaded: 0, total });
  if (!response.body) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    onProgress({ loaded: bytes.length, total });
    return bytes;
  }
  const reader = response.body.getReader();
  const chunks = [];
  let loaded = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      loaded += value.length;
      onProgress({ loaded, total });
    }
  } catch (e) {
    throw new LoadError('NETWORK_ERROR', `the download of ${url} broke off after ${loaded} bytes: ${e.message}`);
  }
  if (total !== null && loaded !== total) {
    throw new LoadError('DOWNLOAD_INCOMPLETE', `${url}: received ${loaded} bytes, the server announced ${total}`);
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return bytes;
}

/**
 * GETs url. Resolves to { status: 200, bytes, etag, lastModified, contentType } or, for a
 * conditional request the server answers with 304, { status: 304 }. Rejects with LoadError.
 */
export async function download(url, { onProgress, headers = {}, fetchImpl = fetch } = {}) {
  let response;
  try {
    response = await fetchImpl(url, { cache: 'no-store', headers });
  } catch (e) {
    throw new LoadError('NETWORK_ERROR', `cannot reach ${url} (offline, server down, or blocked by CORS): ${e.message}`);
  }
  if (response.status === 304) return { status: 304 };
  if (!response.ok) {
    throw new LoadError(`HTTP_${response.status}`, `${url}: the server answered HTTP ${response.status} ${response.statusText}`.trim(), response.status);
  }
  const bytes = await readBody(response, onProgress, url);
  const h = response.headers;
  return { status: 200, bytes, etag: h.get('etag'), lastModified: h.get('last-modified'), contentType: h.get('content-type') };
}

/**
 * Loads url from the cache or the network and hands the bytes to `use` (sync or async);
 * bytes that `use` rejects are never cached. Resolves to
 *   { value, bytes, source: 'cache' | 'network', meta, notes: string[] }
 * where meta is the cache entry (null when not cached) and notes say what went wrong
 * with the cache on the way (a corrupt entry, a failed write), if anything.
 */
export async function loadCached(url, { cache = null, use = (b) => b, onProgress, fetchImpl } = {}) {
  const notes = [];
  if (cache) {
    const hit = await cache.get(url);
    if (hit.status === 'hit') {
      try {
        return { value: await use(hit.bytes), bytes: hit.bytes, source: 'cache', meta: hit.meta, notes };
      } catch (e) {
        await cache.delete(url).catch(() => {});
        notes.push(`the cached copy no longer loads (${e.message}); evicted it and fetched again`);
      }
    } else if (hit.status === 'evicted') {
      notes.push(`the cache entry was corrupt or unreadable (${hit.reason}); evicted it and fetched again`);
    }
  }
  const got = await download(url, { onProgress, fetchImpl });
  const value = await use(got.bytes);
  let meta = null;
  if (cache) {
    try {
      meta = await cache.put(url, got.bytes, got);
    } catch (e) {
      notes.push(`could not store it in the cache: ${e.message}`);
    }
  }
  return { value, bytes: got.bytes, source: 'network', meta, notes };
}

/**
 * Asks the server whether url's cached copy is still current, with If-None-Match /
 * If-Modified-Since. Resolves to
 *   { status: 'unchanged' }                       (304, or 200 with the same SHA-256)
 *   { status: 'updated', value, bytes, meta }     (new bytes, accepted by `use`, stored)
 *   { status: 'not-cached' }
 * Rejects with LoadError when offline or on an HTTP error, or with what `use` throws.
 */
export async function revalidate(url, { cache, use = (b) => b, fetchImpl } = {}) {
  const old = await cache.meta(url);
  if (!old) return { status: 'not-cached' };
  const headers = {};
  if (old.etag) headers['If-None-Match'] = old.etag;
  if (old.lastModified) headers['If-Modified-Since'] = old.lastModified;
  const got = await download(url, { headers, fetchImpl });
  if (got.status === 304) {
    await cache.markChecked(url);
    return { status: 'unchanged' };
  }
  const value = await use(got.bytes);
  const meta = await cache.put(url, got.bytes, got);
  if (meta.sha256 === old.sha256) return { status: 'unchanged' };
  return { status: 'updated', value, bytes: got.bytes, meta };
}
