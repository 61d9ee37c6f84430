// cache.mjs — an IndexedDB cache of downloaded files (the model and the .wasm).
//
// Database 'mlrt-demo', two object stores written together in one transaction:
//   entries: { url, size, sha256, etag, lastModified, contentType, storedAt, checkedAt }
//   bodies:  { url, bytes: ArrayBuffer }
// Keeping the bytes apart lets the page list entries and total their size without
// reading megabytes. Every read recomputes the SHA-256 of the bytes (crypto.subtle) and
// compares it with the stored one: a corrupted or unreadable entry is deleted and
// reported as evicted, so the caller fetches it again.

export const DB_NAME = 'mlrt-demo';
const DB_VERSION = 1;

const request = (req) => new Promise((ok, fail) => {
  req.onsuccess = () => ok(req.result);
  req.onerror = () => fail(req.error);
});

const done = (tx) => new Promise((ok, fail) => {
  tx.oncomplete = () => ok();
  tx.onerror = () => fail(tx.error);
  tx.onabort = () => fail(tx.error ?? new DOMException('transaction aborted', 'AbortError'));
});

/** Lower-case hex SHA-256 of bytes. */
export async function sha256Hex(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Why the cache cannot work here, or '' when it can. */
export function cacheUnavailableReason() {
  if (typeof indexedDB === 'undefined') return 'IndexedDB is not available';
  if (!globalThis.crypto?.subtle) return 'crypto.subtle needs a secure context (https or localhost)';
  return '';
}

/** Opens the cache; rejects when IndexedDB is unavailable (private modes, blocked storage). */
export async function openCache(name = DB_NAME) {
  const reason = cacheUnavailableReason();
  if (reason) throw new Error(reason);
  const open = indexedDB.open(name, DB_VERSION);
  open.onupgradeneeded = () => {
    const db = open.result;
    if (!db.objectStoreNames.contains('entries')) db.createObjectStore('entries', { keyPath: 'url' });
    if (!db.objectStoreNames.contains('bodies')) db.createObjectStore('bodies', { keyPath: 'url' });
  };
  return new FileCache(await request(open));
}

export class FileCache {
  #db;

  constructor(db) {
    this.#db = db;
    // Another tab upgrading the schema: let it, this page keeps working without cache writes.
    db.onversionchange = () => db.close();
  }

  /**
   * Reads and verifies url's entry:
   *   { status: 'hit', bytes: Uint8Array, meta } |
   *   { status: 'miss' } |
   *   { status: 'evicted', reason }   (the entry was corrupt or unreadable and is gone)
   */
  async get(url) {
    let meta, body;
    try {
      const tx = this.#db.transaction(['entries', 'bodies'], 'readonly');
      [meta, body] = await Promise.all([
        request(tx.objectStore('entries').get(url)),
        request(tx.objectStore('bodies').get(url)),
      ]);
    } catch (e) {
      return this.#evict(url, `unreadable (${e?.message ?? e})`);
    }
    if (!meta && !body) return { status: 'miss' };
    const problem = await verify(meta, body);
    if (problem) return this.#evict(url, problem);
    return { status: 'hit', bytes: new Uint8Array(body.bytes), meta };
  }

  async #evict(url, reason) {
    try {
      await this.delete(url);
    } catch {
      // Nothing more to do: the next put() overwrites the entry anyway.
    }
    return { status: 'evicted', reason };
  }

  /** Stores bytes under url with the response's validators; returns the entry's meta. */
  async put(url, bytes, { etag = null, lastModified = null, contentType = null } = {}) {
    const copy = bytes.slice().buffer; // an ArrayBuffer holding exactly these bytes
    const now = Date.now();
    const meta = {
      url, size: copy.byteLength, sha256: await sha256Hex(copy),
      etag, lastModified, contentType, storedAt: now, checkedAt: now,
    };
    const tx = this.#db.transaction(['entries', 'bodies'], 'readwrite');
    tx.objectStore('entries').put(meta);
    tx.objectStore('bodies').put({ url, bytes: copy });
    await done(tx);
    return meta;
  }

  /** url's meta, or undefined. */
  async meta(url) {
    return request(this.#db.transaction('entries', 'readonly').objectStore('entries').get(url));
  }

  /** Records that url was found unchanged on the server just now. */
  async markChecked(url) {
    const tx = this.#db.transaction('entries', 'readwrite');
    const store = tx.objectStore('entries');
    const meta = await request(store.get(url));
    if (meta) store.put({ ...meta, checkedAt: Date.now() });
    await done(tx);
  }

  async delete(url) {
    const tx = this.#db.transaction(['entries', 'bodies'], 'readwrite');
    tx.objectStore('entries').delete(url);
    tx.objectStore('bodies').delete(url);
    await done(tx);
  }

  async clear() {
    const tx = this.#db.transaction(['entries', 'bodies'], 'readwrite');
    tx.objectStore('entries').clear();
    tx.objectStore('bodies').clear();
    await done(tx);
  }

  /** Every entry's meta (no bytes). */
  async list() {
    return request(this.#db.transaction('entries', 'readonly').objectStore('entries').getAll());
  }

  /** { count, bytes } over all entries. */
  async usage() {
    const metas = await this.list();
    return { count: metas.length, bytes: metas.reduce((sum, m) => sum + (m.size ?? 0), 0) };
  }
}

// '' when the stored entry is intact, else what is wrong with it.
async function verify(meta, body) {
  if (!meta) return 'its metadata is missing';
  if (!body || !(body.bytes instanceof ArrayBuffer)) return 'its bytes are missing';
  if (body.bytes.byteLength !== meta.size) return `size ${body.bytes.byteLength} B, expected ${meta.size} B`;
  let digest;
  try {
    digest = await sha256Hex(body.bytes);
  } catch (e) {
    return `cannot hash it (${e?.message ?? e})`;
  }
  return digest === meta.sha256 ? '' : 'its SHA-256 does not match: the bytes are corrupt';
}
