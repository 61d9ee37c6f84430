// bench/static.mjs — the static server of the Chromium benches (bench/browser.mjs, bench/search.mjs,
// bench/encoder-browser.mjs): the repository's files under a few allowed prefixes, on 127.0.0.1 at a free
// port, cross-origin isolated (SharedArrayBuffer: threads), and a page at / that loads `script` (if any).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { REPO } from './limits.mjs';

const TYPES = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

/** -> Promise<http.Server> serving REPO's files whose path starts with one of `allowed`. */
export function serveRepo({ allowed, title, script = null }) {
  const page = `<!doctype html><meta charset="utf-8"><title>${title}</title>${script ? `<script type="module" src="${script}"></script>` : ''}`;
  const server = createServer(async (req, res) => {
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
    const p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (p === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      return res.end(page);
    }
    const file = path.join(REPO, p);
    if (!allowed.some((a) => p.startsWith(a)) || p.includes('..') || !(await stat(file).catch(() => null))?.isFile()) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    res.end(await readFile(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
