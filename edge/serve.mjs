#!/usr/bin/env node
// serve.mjs — runs the edge worker locally under workerd, on 127.0.0.1 only.
//
//   node edge/serve.mjs [--port 8787] [--backend miniflare|workerd] [--model FILE | --model wordnet | --no-embed]
//                       [--model-url URL] [--engine mlrt|plain-js] [--build auto|simd|scalar]
//                       [--max-body-bytes N] [--scoring mlrt|js] [--verbose] [--print-config]
//
// Two backends, same worker and same modules (edge/bundle.mjs):
//   miniflare  (default) miniflare's API drives workerd; cf: false, so nothing leaves loopback.
//   workerd    bare workerd with a generated capnp config; no Node in the serving path.
// --print-config prints the bare-workerd capnp config (modules named as in edge/dist/).
// Also a library: startEdge(options) -> { url, backend, startedMs, stop() } for tests and the load test.

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleModules, COMPATIBILITY_DATE, DEFAULT_MODEL, REPO_DIR } from './bundle.mjs';

const HOST = '127.0.0.1';

function bindingsFor({ modelUrl, engine, build, maxBodyBytes, scoring }) {
  const b = {};
  if (scoring) b.SEARCH_SCORING = String(scoring);
  if (modelUrl) b.MODEL_URL = String(modelUrl);
  if (engine) b.MODEL_ENGINE = String(engine);
  if (build) b.MLRT_BUILD = String(build);
  if (maxBodyBytes !== undefined) b.MAX_BODY_BYTES = String(maxBodyBytes);
  return b;
}

async function startMiniflare(opts, modules, bindings) {
  const { Miniflare } = await import('miniflare');
  // Explicit modules (no scanning: the scanner would trip on mlrt.mjs's lazy node:fs import).
  const root = join(REPO_DIR, 'edge', '.bundle');
  const mf = new Miniflare({
    host: HOST,
    port: opts.port ?? 0,
    cf: false,
    modulesRoot: root,
    modules: modules.map((m) => ({
      type: m.type,
      path: join(root, m.name),
      contents: m.path === null ? new Uint8Array(0) : readFileSync(m.path),
    })),
    compatibilityDate: COMPATIBILITY_DATE,
    bindings,
    verbose: Boolean(opts.verbose),
  });
  const url = await mf.ready;
  return { url: new URL(url.href), stop: () => mf.dispose() };
}

const capnpString = (s) => `"${String(s).replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"`;

const CAPNP_KIND = { ESModule: 'esModule', CompiledWasm: 'wasm', Data: 'data' };

/** The workerd config for the bundle (module names are files next to the config). */
export function workerdConfig(modules, bindings, { port = 0, v8Flags = [] } = {}) {
  const mods = modules.map((m) => `    (name = ${capnpString(m.name)}, ${CAPNP_KIND[m.type]} = embed ${capnpString(m.name)})`).join(',\n');
  const binds = Object.entries(bindings).map(([k, v]) => `    (name = ${capnpString(k)}, text = ${capnpString(v)})`).join(',\n');
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .mlrtWorker),
    # Outbound fetch (MODEL_URL): loopback and private addresses allowed as well as public ones.
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = ${capnpString(`${HOST}:${port}`)}, http = (), service = "main") ],${v8Flags.length ? `\n  v8Flags = [ ${v8Flags.map(capnpString).join(', ')} ],` : ''}
);

const mlrtWorker :Workerd.Worker = (
  modules = [
${mods}
  ],
  bindings = [
${binds}
  ],
  compatibilityDate = ${capnpString(COMPATIBILITY_DATE)},
  globalOutbound = "internet",
);
`;
}

export async function startWorkerd(opts, modules, bindings) {
  const dir = await mkdtemp(join(tmpdir(), 'mlrt-edge-'));
  for (const m of modules) {
    await mkdir(dirname(join(dir, m.name)), { recursive: true });
    if (m.path === null) await writeFile(join(dir, m.name), new Uint8Array(0));
    else await symlink(m.path, join(dir, m.name));
  }
  await writeFile(join(dir, 'config.capnp'), workerdConfig(modules, bindings, { port: opts.port ?? 0, v8Flags: opts.v8Flags }));
  const bin = fileURLToPath(new URL('../node_modules/.bin/workerd', import.meta.url));
  const child = spawn(bin, ['serve', join(dir, 'config.capnp'), '--control-fd=3'], {
    stdio: ['ignore', opts.verbose ? 'inherit' : 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
    if (opts.verbose) process.stderr.write(d);
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const port = await new Promise((resolve, reject) => {
      let buf = '';
      child.stdio[3].on('data', (d) => {
        buf += d;
        for (let nl; (nl = buf.indexOf('\n')) >= 0; buf = buf.slice(nl + 1)) {
          const msg = JSON.parse(buf.slice(0, nl));
          if (msg.event === 'listen' && msg.socket === 'http') resolve(msg.port);
        }
      });
      child.once('error', reject);
      exited.then(({ code, signal }) => reject(new Error(`workerd exited (${code ?? signal}) before listening:\n${stderr}`)));
    });
    return {
      url: new URL(`http://${HOST}:${port}/`),
      pid: child.pid,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
        await cleanup();
      },
    };
  } catch (e) {
    child.kill('SIGKILL');
    await cleanup();
    throw e;
  }
}

/**
 * Starts the worker under workerd on 127.0.0.1.
 * @param {{ backend?: 'miniflare' | 'workerd', port?: number, model?: string | null, modelUrl?: string,
 *           engine?: 'mlrt' | 'plain-js', build?: 'auto' | 'relaxed' | 'simd' | 'scalar', maxBodyBytes?: number, verbose?: boolean }} [opts]
 * @returns {Promise<{ url: URL, backend: string, startedMs: number, stop(): Promise<void> }>}
 */
export async function startEdge(opts = {}) {
  const backend = opts.backend ?? 'miniflare';
  const t0 = performance.now();
  const modules = bundleModules({ model: opts.model === undefined ? DEFAULT_MODEL : opts.model });
  const bindings = bindingsFor(opts);
  let server;
  if (backend === 'miniflare') server = await startMiniflare(opts, modules, bindings);
  else if (backend === 'workerd') server = await startWorkerd(opts, modules, bindings);
  else throw new Error(`unknown backend ${backend}`);
  return { ...server, backend, t0, startedMs: performance.now() - t0 };
}

function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--port') o.port = Number(val());
    else if (a === '--backend') o.backend = val();
    else if (a === '--model') o.model = val();
    else if (a === '--no-embed') o.model = null;
    else if (a === '--model-url') o.modelUrl = val();
    else if (a === '--engine') o.engine = val();
    else if (a === '--build') o.build = val();
    else if (a === '--max-body-bytes') o.maxBodyBytes = Number(val());
    else if (a === '--scoring') o.scoring = val();
    else if (a === '--verbose') o.verbose = true;
    else if (a === '--print-config') o.printConfig = true;
    else if (a === '-h' || a === '--help') o.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
    if (opts.model === undefined && process.env.MODEL === 'wordnet') opts.model = 'wordnet';
  } catch (e) {
    console.error(`serve.mjs: ${e.message}`);
    process.exit(2);
  }
  if (opts.help) {
    console.log(readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1).filter((l, i, a) => a.slice(0, i + 1).every((m) => m.startsWith('//'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
    process.exit(0);
  }
  if (opts.printConfig) {
    process.stdout.write(workerdConfig(bundleModules({ model: opts.model === undefined ? DEFAULT_MODEL : opts.model }), bindingsFor(opts), { port: opts.port ?? 8787 }));
    process.exit(0);
  }
  opts.port ??= 8787;
  const edge = await startEdge(opts);
  console.log(`mlrt edge worker (${edge.backend}) listening on ${edge.url.href} — started in ${edge.startedMs.toFixed(0)} ms`);
  console.log(`  curl ${edge.url.href}info`);
  console.log(`  curl -H 'content-type: application/octet-stream' --data-binary @input.f32 ${edge.url.href}predict`);
  const shutdown = async () => {
    await edge.stop();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}
