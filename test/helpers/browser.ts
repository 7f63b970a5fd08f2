import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { type BrowserContext, type Page, chromium as playwright } from 'playwright-core';
import ts from 'typescript';
import { chromium } from '../../scripts/system-deps.mjs';

/**
 * The page the browser tests load: the session client's browser entry as ES modules, no bundler.
 * `msgpackr` resolves through an import map to its browser build, and the package's browser entry by
 * its name (as docs/sessions.md#in-a-browser shows) to lib's; the entry is on `globalThis.zlink`
 * once it evaluated; `#status` says `ready` then, and a test writes its outcome into `#result`.
 */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>nestjs-zlink session client</title>
<script type="importmap">{ "imports": {
  "msgpackr": "/node_modules/msgpackr/index.js",
  "nestjs-zlink/session-client/browser": "/lib/session-client/browser.js"
} }</script>
<script type="module">
  import * as zlink from '/lib/session-client/browser.js';
  globalThis.zlink = zlink;
  document.getElementById('status').textContent = 'ready';
</script></head>
<body><pre id="status">loading</pre><pre id="result"></pre></body></html>`;

/**
 * Serves the page from `node:http`: `/` the page, `/lib/**.js` and `/examples/**.js` the repository's
 * `.ts` files transpiled on the fly (`transpileModule`: types erased, imports kept as they are), and
 * `/node_modules/msgpackr/*.js` msgpackr's browser ESM files. Nothing else.
 */
export async function servePage(): Promise<{ readonly url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname));
    const send = (status: number, type: string, body: string | Buffer) => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      response.end(body);
    };
    try {
      if (path === '/') return send(200, 'text/html; charset=utf-8', PAGE);
      if (path === '/favicon.ico') return send(204, 'image/x-icon', '');
      if (/^\/(lib|examples)\/[\w/.-]+\.js$/.test(path) && !path.includes('..')) {
        const file = `.${path.replace(/\.js$/, '.ts')}`;
        const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
          fileName: file,
        });
        return send(200, 'text/javascript; charset=utf-8', outputText);
      }
      if (/^\/node_modules\/msgpackr\/[\w.-]+\.js$/.test(path))
        return send(200, 'text/javascript; charset=utf-8', readFileSync(`.${path}`));
      send(404, 'text/plain', 'not found');
    } catch (error) {
      send(404, 'text/plain', String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A certificate's key pin, as Chromium's `--ignore-certificate-errors-spki-list` takes it. */
export function spkiHash(certPem: string | Buffer): string {
  const spki = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

/** Headless Chromium with a fresh profile; `trust` pins certificates whose errors it ignores (a test CA's server). */
export async function launchChromium(trust: readonly (string | Buffer)[] = []): Promise<{
  readonly context: BrowserContext;
  readonly page: Page;
  /** What the page threw or logged as an error. */
  readonly errors: string[];
  close(): Promise<void>;
}> {
  const profile = mkdtempSync(join(tmpdir(), 'zlink-chromium-'));
  const context = await playwright.launchPersistentContext(profile, {
    // Debian's Chromium (scripts/setup.sh installs it, scripts/preflight.mjs checks it): no downloaded browser.
    executablePath: chromium(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      ...(trust.length > 0 ? [`--ignore-certificate-errors-spki-list=${trust.map(spkiHash).join(',')}`] : []),
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  return {
    context,
    page,
    errors,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
