/**
 * The dashboard's files, served from memory: its own (public/) and the three ES modules it imports
 * from node_modules (Preact, its hooks, htm). The set is fixed and small, so it is read once,
 * gzipped once and answered with an ETag — no filesystem lookup per request, and no request path
 * ever reaches the filesystem.
 */
import { createHash } from "node:crypto";
import { readFile, readdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

export interface Asset {
  contentType: string;
  body: Buffer;
  /** Absent when gzip would not make it smaller. */
  gzip?: Buffer;
  etag: string;
}

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** Served under /ui/vendor/: each module as the import map in index.html names it. */
const vendorModules: Array<{ url: string; from: string; file?: string }> = [
  { url: "preact.mjs", from: "preact" },
  { url: "hooks.mjs", from: "preact/hooks" },
  // htm's package maps these names to CommonJS for require(); the ES module sits beside it.
  { url: "htm.mjs", from: "htm", file: "htm.mjs" },
  { url: "htm-preact.mjs", from: "htm/preact", file: "index.mjs" },
];

/** The dashboard's own files: beside this module (src/ in development, dist/ once built). */
const publicDir = join(dirname(fileURLToPath(import.meta.url)), "public");

function assetOf(path: string, body: Buffer): Asset {
  const gzip = gzipSync(body, { level: 9 });
  return {
    contentType: contentTypes[extname(path)] ?? "application/octet-stream",
    body,
    gzip: gzip.length < body.length ? gzip : undefined,
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
  };
}

async function filesUnder(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const rel = prefix + entry.name;
    if (entry.isDirectory()) out.push(...(await filesUnder(join(dir, entry.name), `${rel}/`)));
    else out.push(rel);
  }
  return out;
}

/** Every asset by its path under /ui/: "index.html", "assets/app.js", "vendor/preact.mjs", … */
async function loadAssets(): Promise<Map<string, Asset>> {
  const assets = new Map<string, Asset>();
  for (const rel of await filesUnder(publicDir)) {
    const body = await readFile(join(publicDir, rel));
    assets.set(rel === "index.html" ? rel : `assets/${rel}`, assetOf(rel, body));
  }
  const require = createRequire(import.meta.url);
  for (const m of vendorModules) {
    const entry = require.resolve(m.from);
    const path = m.file ? join(dirname(entry), m.file) : entry;
    // The source map comment would send devtools after a file this server doesn't serve.
    const text = (await readFile(path, "utf8")).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n");
    assets.set(`vendor/${m.url}`, assetOf(m.url, Buffer.from(text)));
  }
  return assets;
}

let loaded: Promise<Map<string, Asset>> | undefined;

/** Loaded on the first dashboard request (servers that nobody browses never pay for it), then kept. */
export function dashboardAssets(): Promise<Map<string, Asset>> {
  loaded ??= loadAssets().catch((err: unknown) => {
    loaded = undefined;
    throw err;
  });
  return loaded;
}

/** The SHA-256 CSP source of each inline <script> of the page (its import map), so CSP can allow exactly those. */
export function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)]
    .filter((m) => m[1]!.trim() !== "")
    .map((m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`);
}
