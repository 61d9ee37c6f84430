// server.test.mjs — web/server.mjs: routes, MIME types, validators, traversal, hooks, CLI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDemoServer } from '../../web/server.mjs';

const SERVER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web', 'server.mjs');

let srv, hooked, modelsDir;

before(async () => {
  modelsDir = mkdtempSync(join(tmpdir(), 'mlrt-server-'));
  writeFileSync(join(modelsDir, 'manifest.json'), '{"models":[]}');
  writeFileSync(join(modelsDir, 'm.safetensors'), new Uint8Array(1000));
  writeFileSync(join(modelsDir, '.secret'), 'x');
  srv = await startDemoServer({ port: 0, modelsDir });
  hooked = await startDemoServer({ port: 0, modelsDir, testHooks: true });
});

after(async () => {
  await srv.close();
  await hooked.close();
  rmSync(modelsDir, { recursive: true, force: true });
});

// A raw request: the path goes out exactly as written (fetch would normalise '..').
function raw(server, path, { method = 'GET', headers = {} } = {}) {
  return new Promise((ok, fail) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', fail);
    req.end();
  });
}

test('binds 127.0.0.1 and maps /, /wasm/, /models/ with their MIME types', async () => {
  assert.equal(srv.server.address().address, '127.0.0.1');
  const cases = [
    ['/', 'text/html; charset=utf-8'],
    ['/index.html', 'text/html; charset=utf-8'],
    ['/app.mjs', 'text/javascript; charset=utf-8'],
    ['/sw.js', 'text/javascript; charset=utf-8'],
    ['/style.css', 'text/css; charset=utf-8'],
    ['/wasm/mlrt.mjs', 'text/javascript; charset=utf-8'],
    ['/wasm/mlrt.wasm', 'application/wasm'],
    ['/models/manifest.json', 'application/json; charset=utf-8'],
    ['/models/m.safetensors', 'application/octet-stream'],
  ];
  for (const [path, type] of cases) {
    const res = await raw(srv, path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers['content-type'], type, path);
    assert.equal(res.headers['cache-control'], 'no-cache', path);
    assert.equal(Number(res.headers['content-length']), res.body.length, path);
  }
  assert.match((await raw(srv, '/')).body.toString(), /<canvas id="pad"/);
});

test('ETag and Last-Modified, answered with 304', async () => {
  const first = await raw(srv, '/models/m.safetensors');
  const { etag, 'last-modified': lastModified } = first.headers;
  assert.match(etag, /^"[0-9a-f]+-[0-9a-f]+"$/);
  assert.ok(Date.parse(lastModified));
  const hit = await raw(srv, '/models/m.safetensors', { headers: { 'If-None-Match': etag } });
  assert.equal(hit.status, 304);
  assert.equal(hit.body.length, 0);
  assert.equal(hit.headers.etag, etag);
  assert.equal((await raw(srv, '/models/m.safetensors', { headers: { 'If-None-Match': `"x", W/${etag}` } })).status, 304);
  assert.equal((await raw(srv, '/models/m.safetensors', { headers: { 'If-None-Match': '"other"' } })).status, 200);
  assert.equal((await raw(srv, '/models/m.safetensors', { headers: { 'If-Modified-Since': lastModified } })).status, 304);
  assert.equal((await raw(srv, '/models/m.safetensors', { headers: { 'If-Modified-Since': 'Thu, 01 Jan 1970 00:00:00 GMT' } })).status, 200);
  // If-None-Match wins over If-Modified-Since.
  assert.equal((await raw(srv, '/models/m.safetensors', { headers: { 'If-None-Match': '"other"', 'If-Modified-Since': lastModified } })).status, 200);
  const head = await raw(srv, '/models/m.safetensors', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.headers['content-length'], '1000');
  assert.equal(head.body.length, 0);
});

test('no directory traversal, no dotfiles, no listings', async () => {
  for (const path of [
    '/../package.json', '/wasm/../package.json', '/models/../../package.json',
    '/%2e%2e/package.json', '/wasm/%2e%2e/package.json', '/models/..%2f..%2fpackage.json',
    '/models/%2e%2e%5c..%5cpackage.json', '/..%2f..%2f..%2fetc%2fpasswd', '/models/.secret',
    '/models/', '/wasm/', '/models', '/models//m.safetensors', '/%00', '/bad%zzescape', '/no-such-file.js',
  ]) {
    const res = await raw(srv, path);
    assert.ok(res.status === 404 || res.status === 400, `${path}: HTTP ${res.status}`);
    assert.doesNotMatch(res.body.toString(), /"name": "mlrt"|root:/, path);
  }
});

test('only GET and HEAD', async () => {
  const res = await raw(srv, '/', { method: 'POST' });
  assert.equal(res.status, 405);
  assert.equal(res.headers.allow, 'GET, HEAD');
});

test('/__stats counts requests per path, only with --test-hooks', async () => {
  assert.equal((await raw(srv, '/__stats')).status, 404);
  await raw(hooked, '/models/m.safetensors');
  await raw(hooked, '/models/m.safetensors', { headers: { 'If-None-Match': (await raw(hooked, '/')).headers.etag } });
  const etag = (await raw(hooked, '/models/m.safetensors')).headers.etag;
  await raw(hooked, '/models/m.safetensors', { headers: { 'If-None-Match': etag } });
  await raw(hooked, '/nope');
  const stats = JSON.parse((await raw(hooked, '/__stats')).body);
  assert.deepEqual(stats['/models/m.safetensors'], { requests: 4, 200: 3, 304: 1 });
  assert.deepEqual(stats['/nope'], { requests: 1, 404: 1 });
});

// Starts the CLI and resolves to its first line of output.
function cli(args, env = {}) {
  const child = spawn(process.execPath, [SERVER, ...args], { env: { ...process.env, ...env } });
  const exited = new Promise((ok) => child.on('exit', (code) => ok(code)));
  const line = new Promise((ok) => {
    let out = '';
    const take = (d) => {
      out += d;
      if (out.includes('\n')) ok(out.split('\n')[0]);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
  });
  return { child, line, exited };
}

test('CLI: --port, PORT, bad options', async () => {
  for (const [args, env] of [[['--port', '0'], {}], [[], { PORT: '0' }]]) {
    const { child, line, exited } = cli(args, env);
    const url = (await line).match(/http:\/\/127\.0\.0\.1:(\d+)\//);
    assert.ok(url, 'prints its URL');
    const res = await fetch(new URL('/app.mjs', url[0]));
    assert.equal(res.status, 200);
    child.kill();
    await exited;
  }
  const bad = cli(['--bogus']);
  assert.match(await bad.line, /unknown option --bogus/);
  assert.equal(await bad.exited, 2);
});
