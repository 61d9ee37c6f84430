// sw.js — keeps the demo's app shell (HTML, CSS, JS modules, the model list) available
// offline. Network first: online, every load gets the server's current files (and
// refreshes the copy kept here); offline, the kept copy answers (also to the words tab's
// worker, which this worker controls as part of the page). The .wasm and the model
// files (the encoder's and the lemma index too) are not handled here: the page keeps them in IndexedDB (cache.mjs), checked
// by SHA-256. Add new modules of the page to SHELL.

const CACHE = 'mlrt-demo-shell-v2';
const SHELL = [
  './', './index.html', './style.css', './app.mjs', './view.mjs', './pad.mjs', './preprocess.mjs',
  './loader.mjs', './cache.mjs', './format.mjs', './models/manifest.json', '../wasm/mlrt.mjs',
  './words.mjs', './words-worker.mjs', './lemma-index.mjs', '../wasm/crc32.mjs',
].map((path) => new URL(path, self.location).href);
const INDEX = SHELL[0];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name);
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  url.search = url.hash = '';
  const navigation = request.mode === 'navigate' && url.origin === self.location.origin;
  if (!navigation && !SHELL.includes(url.href)) return; // the browser handles it as usual
  event.respondWith(networkFirst(request, navigation ? INDEX : url.href));
});

async function networkFirst(request, key) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok && SHELL.includes(new URL(request.url).href.split(/[?#]/)[0])) {
      await cache.put(key, response.clone());
    }
    return response;
  } catch (err) {
    const kept = await cache.match(key);
    if (kept) return kept;
    throw err;
  }
}
