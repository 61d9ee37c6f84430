#!/usr/bin/env node
// server.mjs — the demo's static file server (node:http, no dependencies).
//
//   node web/server.mjs [--port 8080] [--host 127.0.0.1] [--models DIR] [--test-hooks]
//
// Routes:   /            -> web/index.html
//           /wasm/<f>    -> the repository's wasm/ directory (mlrt.mjs, *.wasm)
//           /models/<f>  -> web/models/ (or --models DIR)
//           /<f>         -> web/
//           /__stats     -> per-path request counters as JSON (only with --test-hooks)
// Every file gets a MIME type, Content-Length, ETag ("size-mtime"), Last-Modified and
// Cache-Control: no-cache; If-None-Match / If-Modified-Since are answered with 304.
// Only GET and HEAD; no directory listings, no dotfiles, nothing outside the three roots.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB_DIR = dirname(fileURLToPath(import.meta.url));

const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

export const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.bin': 'application/octet-stream',
  '.safetensors': 'application/octet-stream',
  '.bintensors': 'application/octet-stream',
  '.apr': 'application/octet-stream',
  '.onnx': 'application/octet-stream',
  '.index': 'application/octet-stream',
};

/** Maps a URL path to { root, rel } or null. rel is still percent-encoded. */
function route(pathname, roots) {
  if (pathname === '/') return { root: roots.web, rel: 'index.html' };
  for (const prefix of ['wasm', 'models']) {
    if (pathname.startsWith(`/${prefix}/`)) return { root: roots[prefix], rel: pathname.slice(prefix.length + 2) };
  }
  return { root: roots.web, rel: pathname.slice(1) };
}

/** The file a request may read, or null: decoded, no dot segments or dotfiles, inside root. */
export function safePath(root, rel) {
  let decoded;
  try {
    decoded = decodeURIComponent(rel);
  } catch {
    return null;
  }
  if (decoded === '' || decoded.includes('\0') || decoded.includes('\\')) return null;
  const segments = decoded.split('/');
  if (segments.some((s) => s === '' || s.startsWith('.'))) return null;
  const file = resolve(root, ...segments);
  return file.startsWith(resolve(root) + sep) ? file : null;
}

const etagOf = (st) => `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;

// RFC 9110 13.1.2: weak comparison for If-None-Match.
function etagMatches(header, etag) {
  if (header.trim() === '*') return true;
  const bare = (t) => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => bare(t) === bare(etag));
}

function notModified(req, st, etag) {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) return etagMatches(inm, etag);
  const ims = Date.parse(req.headers['if-modified-since'] ?? '');
  return Number.isFinite(ims) && Math.floor(st.mtimeMs / 1000) * 1000 <= ims;
}

/**
 * Creates the server (not listening yet).
 * @param {{ webDir?: string, wasmDir?: string, modelsDir?: string, testHooks?: boolean,
 *           log?: (line: string) => void }} [options]
 */
export function createDemoServer(options = {}) {
  const roots = {
    web: resolve(options.webDir ?? WEB_DIR),
    wasm: resolve(options.wasmDir ?? join(WEB_DIR, '..', 'wasm')),
    models: resolve(options.modelsDir ?? join(WEB_DIR, 'models')),
  };
  const stats = new Map(); // path -> { requests, [status]: count }
  const count = (path, status) => {
    const s = stats.get(path) ?? { requests: 0 };
    s.requests++;
    s[status] = (s[status] ?? 0) + 1;
    stats.set(path, s);
  };

  const server = createServer(async (req, res) => {
    // Cross-origin isolation (COOP + COEP) on every answer: the page may then share wasm memory
    // with workers (SharedArrayBuffer), which createRuntime({ threads }) needs.
    for (const [k, v] of Object.entries(ISOLATION)) res.setHeader(k, v);
    const send = (status, body, headers = {}) => {
      res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    let pathname;
    try {
      pathname = new URL(req.url, 'http://localhost').pathname;
    } catch {
      return send(400, 'bad request\n');
    }
    res.on('finish', () => count(pathname, res.statusCode));
    options.log?.(`${req.method} ${pathname}`);

    if (options.testHooks && pathname === '/__stats') {
      return send(200, JSON.stringify(Object.fromEntries(stats)), { 'Content-Type': 'application/json' });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed\n', { Allow: 'GET, HEAD' });

    const { root, rel } = route(pathname, roots);
    const file = safePath(root, rel);
    if (!file) return send(404, 'not found\n');
    let st;
    try {
      st = await stat(file);
    } catch {
      return send(404, 'not found\n');
    }
    if (!st.isFile()) return send(404, 'not found\n');

    const etag = etagOf(st);
    const headers = {
      'Content-Type': MIME_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
      'Cache-Control': 'no-cache',
      ETag: etag,
      'Last-Modified': st.mtime.toUTCString(),
      'X-Content-Type-Options': 'nosniff',
    };
    if (notModified(req, st, etag)) {
      res.writeHead(304, headers);
      return res.end();
    }
    res.writeHead(200, { ...headers, 'Content-Length': st.size });
    if (req.method === 'HEAD') return res.end();
    const stream = createReadStream(file);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  });

  return { server, stats, roots };
}

/** Starts listening; resolves to { url, port, close() }. port 0 picks a free port. */
export async function startDemoServer({ port = 8080, host = '127.0.0.1', ...options } = {}) {
  const { server, stats } = createDemoServer(options);
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, ok);
  });
  const actual = server.address().port;
  return {
    server,
    stats,
    port: actual,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}/`,
    /** Stops accepting and drops open (keep-alive) connections, so clients see it gone. */
    close: () => new Promise((ok) => {
      server.close(() => ok());
      server.closeAllConnections();
    }),
  };
}

function parseArgs(argv) {
  const args = { port: Number(process.env.PORT ?? 8080), host: '127.0.0.1', testHooks: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--port') args.port = Number(value());
    else if (a === '--host') args.host = value();
    else if (a === '--models') args.modelsDir = value();
    else if (a === '--test-hooks') args.testHooks = true;
    else if (a === '--help' || a === '-h') args.help = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) throw new Error('--port must be 0..65535');
  return args;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`server.mjs: ${e.message}`);
    process.exit(2);
  }
  if (args.help) {
    console.log('usage: node web/server.mjs [--port N] [--host ADDR] [--models DIR] [--test-hooks]   (env PORT also sets the port)');
    process.exit(0);
  }
  try {
    const { url } = await startDemoServer(args);
    console.log(`mlrt demo: ${url}`);
  } catch (e) {
    console.error(`server.mjs: cannot listen on ${args.host}:${args.port}: ${e.message}`);
    process.exit(1);
  }
}
