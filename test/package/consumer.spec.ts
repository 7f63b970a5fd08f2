/**
 * The package as npm users get it (issue 14): packed, installed from the tarball into a CommonJS Nest app
 * (`module: commonjs`, the shape of `nest new --type cjs`) and an ESM one (`nodenext`), both outside the
 * repo, compiled with tsc and run. Each runs the README's complete example — a `@ChannelHandler` request
 * round trip through `ZLinkRouteClient` — and loads every subpath entry. Types must also resolve under
 * the other module resolutions a user may pick (node16, nodenext from CommonJS, bundler).
 */
import { curvePublicKeyOf } from '../../lib/core/index.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CJS_TSCONFIG,
  ESM_TSCONFIG,
  TSC,
  checkOnly,
  createApp,
  pack,
  run,
  runOk,
  type ModuleSystem,
} from './consumer-apps.js';

const SOURCES = [
  'examples/quickstart/main.ts',
  'examples/objects/rooms.ts',
  'examples/objects/moving-rooms.ts',
  'examples/objects/room-news.ts',
  'examples/security/curve-mesh.ts',
  'test/package/fixtures/subpaths.ts',
];
const ENTRY_POINTS = [
  'nestjs-zlink',
  'nestjs-zlink/microservices',
  'nestjs-zlink/redis-store',
  'nestjs-zlink/postgres-state-store',
  'nestjs-zlink/terminus',
  'nestjs-zlink/session-client',
  'nestjs-zlink/session-client/browser',
];

const root = mkdtempSync(join(tmpdir(), 'zlink-consumer-'));
const apps: Record<ModuleSystem, string> = { commonjs: join(root, 'cjs-app'), module: join(root, 'esm-app') };
let packed: { tarball: string; files: readonly string[] };

beforeAll(async () => {
  packed = await pack(root);
  // Both installs at once: each is mostly waiting on npm's cache and the registry.
  await Promise.all([
    createApp(
      apps.commonjs,
      'commonjs',
      packed.tarball,
      {
        'tsconfig.json': CJS_TSCONFIG,
        'tsconfig.nodenext.json': checkOnly({ module: 'nodenext', moduleResolution: 'nodenext' }),
      },
      SOURCES,
    ),
    createApp(
      apps.module,
      'module',
      packed.tarball,
      {
        'tsconfig.json': ESM_TSCONFIG,
        'tsconfig.node16.json': checkOnly({ module: 'node16', moduleResolution: 'node16' }),
        'tsconfig.bundler.json': checkOnly({ module: 'preserve', moduleResolution: 'bundler' }),
      },
      SOURCES,
    ),
  ]);
}, 600000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the packed package', () => {
  it('holds dist, README, LICENSE and the user docs, and nothing of test/, bench/, sample/ or examples/', () => {
    const { files } = packed;
    expect(files).toEqual(
      expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts']),
    );
    expect(files).toEqual(
      expect.arrayContaining([
        'docs/configuration.md',
        'docs/errors.md',
        'docs/objects.md',
        'docs/operations.md',
      ]),
    );
    expect(files.filter((f) => /^(test|bench|sample|examples|lib|node_modules)\//.test(f))).toEqual([]);
    expect(files.filter((f) => !/^(dist\/|docs\/|package\.json$|README\.md$|LICENSE$)/.test(f))).toEqual([]);
  });

  it('ships source maps that carry the sources they name', () => {
    const dist = join(apps.commonjs, 'node_modules/nestjs-zlink/dist');
    const maps = (readdirSync(dist, { recursive: true }) as string[]).filter((f) => f.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(50);
    const unresolved = maps.filter((file) => {
      const map = JSON.parse(readFileSync(join(dist, file), 'utf8')) as {
        sources: string[];
        sourcesContent?: string[];
      };
      return (
        map.sources.length === 0 ||
        map.sourcesContent?.length !== map.sources.length ||
        map.sourcesContent.some((s) => !s)
      );
    });
    expect(unresolved).toEqual([]);
  });
});

describe.each([
  ['a CommonJS (module: commonjs)', 'commonjs' as const],
  ['an ESM (module: nodenext)', 'module' as const],
])('%s Nest app with the package installed', (_name, type) => {
  it('compiles, and the README example answers a @ChannelHandler request through ZLinkRouteClient', async () => {
    const app = apps[type];
    await runOk(process.execPath, [TSC, '-p', 'tsconfig.json'], app, 120000);
    const { stdout } = await runOk(process.execPath, ['dist/main.js'], app, 60000);
    expect(stdout).toContain('receipt {"orderId":"order-1","amount":42,"tenant":"acme"}');
  }, 180000);

  it('runs the objects example: a room Spot on an object server, called by global id from a gateway', async () => {
    const { stdout } = await runOk(process.execPath, ['dist/rooms.js'], apps[type], 60000);
    // The generation is 1 in a fresh store (a REDIS_URL from the environment may hold older ones).
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => l.replace(/\(generation \d+\)/, '(generation n)'));
    expect(lines).toEqual([
      "room 'room-1' activated",
      'opened room-1 (generation n) on rooms-1',
      'ensure gives the same ref: true',
      'joined {"room":"room-1","topic":"ranked","members":["ann","bob"]}',
      "room 'room-2' activated",
      'joined {"room":"room-2","topic":"quick match","members":["cid"]}',
      'room-9: "no such room"',
      'leave: RemoteError HandlerError: eve is not in the room',
      'room-1 resolves ReadyRoute',
      "room 'room-1' deactivated destroyed",
      'room-1 resolves Missing after destroy',
      'gateway → room: 4 requests, 1 sends, failures {"RemoteError":1}',
      'rooms-1 room: 5 handled, 2 activations',
      'live on rooms-1: room room-2 (ready)',
      "room 'room-2' deactivated shutdown",
      'room-1 <ann> hi all (en)',
      'room-1: closed (destroyed)',
      'room-2: closed (shutdown)',
    ]);
  }, 60000);

  it('runs the moving example: a room moves with its player between two object servers while chat arrives, losing none', async () => {
    const { stdout } = await runOk(process.execPath, ['dist/moving-rooms.js'], apps[type], 60000);
    expect(stdout.trim().split('\n')).toEqual([
      'ann joined room-1',
      'moved to rooms-2',
      'ann is on rooms-2',
      '{"node":"rooms-2","lines":["before the move","during the move 1","during the move 2","after the move"],"ticking":true}',
      '{"room":"room-1","node":"rooms-2"}',
      'ann left room-1 (left)',
    ]);
  }, 60000);

  it('loads every entry point, by import in compiled TypeScript and by require or import in plain JavaScript', async () => {
    const app = apps[type];
    const { stdout } = await runOk(process.execPath, ['dist/subpaths.js'], app, 60000);
    expect(stdout).toContain(
      'loaded {"ZLinkModule":"function","ZLinkError":"function","ZLINK_TRANSPORT":"symbol","ZLinkClientProxy":"function","ZLinkServer":"function","RedisLocationStore":"function","PostgresStateStore":"function","ZLinkHealthIndicator":"function","checkZLinkHealth":"function","ZLinkSessionClient":"function","BrowserSessionClient":"function"}',
    );
    expect(stdout).toContain(
      "start without pg: Configuration: State Store 'players' (PostgreSQL game/zlink_state) needs the 'pg' package, which could not be loaded: install it (npm install pg)",
    );
    const load = type === 'commonjs' ? 'require' : 'await import';
    const script = ENTRY_POINTS.map(
      (entry) => `console.log(Object.keys(${load}('${entry}')).length > 0);`,
    ).join('');
    const plain = await run(
      process.execPath,
      type === 'commonjs' ? ['-e', script] : ['--input-type=module', '-e', script],
      app,
      60000,
    );
    expect({ code: plain.code, stderr: plain.stderr, stdout: plain.stdout.trim().split('\n') }).toEqual({
      code: 0,
      stderr: '',
      stdout: ENTRY_POINTS.map(() => 'true'),
    });
  }, 120000);

  it('runs the CURVE example: two MeshNodes find each other and their keys through the store, and talk encrypted', async () => {
    const { stdout } = await runOk(process.execPath, ['dist/curve-mesh.js'], apps[type], 60000);
    expect(stdout.trim().split('\n')).toEqual(['{"players":12}', 'refused: 0']);
  }, 60000);

  it('npx nestjs-zlink keygen prints a CURVE key pair that the runtime accepts', async () => {
    const app = apps[type];
    const { stdout } = await runOk('npx', ['--no-install', 'nestjs-zlink', 'keygen'], app, 60000);
    const lines = stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^ZLINK_CURVE_PUBLIC_KEY=.{40}$/),
      expect.stringMatching(/^ZLINK_CURVE_SECRET_KEY=.{40}$/),
    ]);
    const [publicKey, secretKey] = lines.map((l) => l.slice(l.indexOf('=') + 1));
    expect(curvePublicKeyOf(secretKey as string)).toBe(publicKey);
  }, 60000);
});

describe('types resolve under every module resolution', () => {
  it.each([
    ['node10 (module: commonjs)', 'commonjs' as const, 'tsconfig.json'],
    ['nodenext, from a CommonJS package', 'commonjs' as const, 'tsconfig.nodenext.json'],
    ['nodenext, from an ESM package', 'module' as const, 'tsconfig.json'],
    ['node16, from an ESM package', 'module' as const, 'tsconfig.node16.json'],
    ['bundler', 'module' as const, 'tsconfig.bundler.json'],
  ])(
    '%s',
    async (_name, type, config) => {
      const result = await run(process.execPath, [TSC, '-p', config, '--noEmit'], apps[type], 120000);
      expect(`${result.stdout}${result.stderr}`).toBe('');
      expect(result.code).toBe(0);
    },
    180000,
  );
});
