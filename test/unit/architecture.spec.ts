import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import {
  MAX_LINES,
  type SourceFile,
  CORE_ROOMS,
  FLOOR_PLANS,
  checkArchitecture,
  checkRooms,
  folderCycles,
  formatViolations,
  importCycles,
  importsOf,
  readLibFiles,
} from './architecture-rules.js';

/** docs/architecture.md#layer-rules: dependencies point downward only, and cross-layer imports go through a layer's index. */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

describe('architecture of lib/', () => {
  const files = readLibFiles(repoRoot);

  it('the scan sees the real tree', () => {
    const paths = files.map((f) => f.path);
    expect(paths).toContain('lib/index.ts');
    expect(paths).toContain('lib/core/index.ts');
    expect(paths).toContain('lib/core/wire/wire.ts');
    expect(paths.length).toBeGreaterThan(10);
    // The scan reads imports: core's barrel re-exports its modules.
    expect(importsOf(files.find((f) => f.path === 'lib/core/index.ts')?.text ?? '')).toContain(
      './wire/index.js',
    );
  });

  it('lib/** obeys the layering rules (forbidden packages, upward or sideways imports, deep imports, file length)', () => {
    // An empty string when clean; otherwise one "file: import 'x': rule" line per offence.
    expect(formatViolations(checkArchitecture(files))).toBe('');
  });

  it('lib/** has no import cycles', () => {
    expect(importCycles(files)).toEqual([]);
  });

  it('lib/** has no folder cycles (a barrel re-exporting its own subfolders aside)', () => {
    expect(folderCycles(files)).toEqual([]);
  });

  it('each planned layer keeps its floor plan (room order, doors), and every room has its own index', () => {
    expect(formatViolations(checkRooms(files))).toBe('');
    for (const plan of FLOOR_PLANS)
      for (const rank of plan.ranks)
        for (const room of typeof rank === 'string' ? [rank] : rank)
          if (!room.includes('.') && room !== '(root)')
            expect(files.map((f) => f.path)).toContain(`lib/${plan.layer}/${room}/index.ts`);
    const paths = files.map((f) => f.path);
    for (const room of CORE_ROOMS) expect(paths).toContain(`lib/core/${room}/index.ts`);
    // The core barrel re-exports rooms and root files, not the rooms' files one by one.
    const barrel = importsOf(files.find((f) => f.path === 'lib/core/index.ts')?.text ?? '');
    expect(barrel.filter((s) => s.split('/').length > 2 && !s.endsWith('/index.js'))).toEqual([]);
  });

  it('lib/runtime reaches lib/spot only through its index', () => {
    const deep = files
      .filter((f) => f.path.startsWith('lib/runtime/'))
      .flatMap((f) => importsOf(f.text).map((s) => ({ file: f.path, s })))
      .filter(({ s }) => s.includes('/spot/') && !s.endsWith('/spot/index.js'));
    expect(deep).toEqual([]);
  });
});

describe('folder cycles and core rooms (on synthetic input)', () => {
  const file = (path: string, ...imports: string[]): SourceFile => ({
    path,
    text: imports.map((i) => `import '${i}';`).join('\n'),
  });

  it('two folders importing each other are one cycle; a barrel over its own subfolder is not', () => {
    expect(
      folderCycles([file('lib/spot/a/x.ts', '../b/y.js'), file('lib/spot/b/y.ts', '../a/x.js')]),
    ).toEqual(['lib/spot/a <-> lib/spot/b']);
    expect(
      folderCycles([
        file('lib/spot/index.ts', './a/x.js'),
        file('lib/spot/a/x.ts', '../kinds.js'),
        file('lib/spot/kinds.ts'),
      ]),
    ).toEqual([]);
    // Any other root file importing the subfolder closes the loop.
    expect(
      folderCycles([
        file('lib/spot/index.ts', './a/x.js'),
        file('lib/spot/root.ts', './a/x.js'),
        file('lib/spot/a/x.ts', '../root.js'),
      ]),
    ).toEqual(['lib/spot <-> lib/spot/a']);
  });

  it('a core room importing a later room, or a root file importing a room, is a violation', () => {
    const rules = (f: SourceFile) => checkRooms([f]).map((v) => v.rule);
    expect(
      rules(file('lib/core/ports/lease.ts', '../observe/events.js', '../errors.js', './ports.js')),
    ).toEqual([]);
    expect(rules(file('lib/core/wire/codec.ts', '../options/options.js'))).toEqual([
      'core/wire imports core/options, a room after it (order: (root) < session-wire < wire < observe < calls < ports < options < objects)',
    ]);
    expect(rules(file('lib/core/errors.ts', './wire/codec.js'))).toEqual([
      'errors.ts imports core/wire, a room after it (order: (root) < session-wire < wire < observe < calls < ports < options < objects)',
    ]);
    expect(rules(file('lib/core/index.ts', './wire/index.js', './objects/index.js'))).toEqual([]);
  });

  it('a plan with doors: rooms meet through their index, side-by-side rooms not at all, an unplanned room is named', () => {
    const plan = { layer: 'toy', ranks: ['low.ts', 'a', ['b', 'c'], '(root)'], doors: true };
    const rules = (...fs: SourceFile[]) => checkRooms(fs, [plan]).map((v) => `${v.file}: ${v.rule}`);
    const order = 'low.ts < a < {b, c} < (root)';
    expect(
      rules(
        file('lib/toy/a/x.ts', '../low.js', './y.js'),
        file('lib/toy/b/x.ts', '../a/index.js'),
        file('lib/toy/top.ts', './b/index.js', './low.js'),
        file('lib/toy/index.ts', './top.js', './a/x.js'),
      ),
    ).toEqual([]);
    expect(
      rules(
        file('lib/toy/b/x.ts', '../a/x.js', '../c/index.js'),
        file('lib/toy/a/x.ts', '../top.js'),
        file('lib/toy/d/x.ts'),
      ),
    ).toEqual([
      'lib/toy/b/x.ts: rooms of lib/toy meet through their index: import ../a/index.js, not ../a/x.js',
      `lib/toy/b/x.ts: toy/b imports toy/c, a room beside it (order: ${order})`,
      `lib/toy/a/x.ts: toy/a imports top.ts, a room after it (order: ${order})`,
      `lib/toy/d/x.ts: toy/d has no place in lib/toy's floor plan (${order})`,
    ]);
  });
});

/** One synthetic file; the checker is run on it alone. */
function violations(path: string, text: string): string[] {
  return checkArchitecture([{ path, text }]).map((v) => `${v.specifier ?? '-'} | ${v.rule}`);
}

describe('architecture checker (on synthetic input)', () => {
  describe('(a) lib/core imports none of zeromq, ioredis, rxjs, @nestjs/*', () => {
    it.each([
      [`import { Router } from 'zeromq';`, 'zeromq'],
      [`import Redis from 'ioredis';`, 'ioredis'],
      [`import { Observable } from 'rxjs';`, 'rxjs'],
      [`import { map } from 'rxjs/operators';`, 'rxjs/operators'],
      [`import { Injectable } from '@nestjs/common';`, '@nestjs/common'],
      [`import type { ModuleRef } from '@nestjs/core';`, '@nestjs/core'],
    ])('%s is a violation', (text, specifier) => {
      const v = violations('lib/core/bad.ts', text);
      expect(v).toHaveLength(1);
      expect(v[0]).toMatch(new RegExp(`^${specifier.replace('/', '\\/')} \\| lib/core must not import`));
    });

    it('msgpackr and node: builtins are fine in core', () => {
      expect(
        violations(
          'lib/core/ok.ts',
          `import { Packr } from 'msgpackr';\nimport { randomBytes } from 'node:crypto';`,
        ),
      ).toEqual([]);
    });
  });

  describe('(b) no layer imports a layer above it; transport, store and spot do not import each other', () => {
    it.each([
      [
        'lib/core/x.ts',
        `import { ZLinkRuntime } from '../runtime/index.js';`,
        'lib/core imports lib/runtime, a layer above it',
      ],
      [
        'lib/core/x.ts',
        `import { SocketPump } from '../transport/index.js';`,
        'lib/core imports lib/transport, a layer above it',
      ],
      ['lib/transport/x.ts', `import { RedisStore } from '../store/index.js';`, 'peers'],
      ['lib/store/redis/x.ts', `import { SocketPump } from '../../transport/index.js';`, 'peers'],
      ['lib/spot/x.ts', `import { ClientChannel } from '../transport/index.js';`, 'peers'],
      ['lib/transport/x.ts', `import { ZLinkRuntime } from '../runtime/index.js';`, 'a layer above it'],
      [
        'lib/runtime/x.ts',
        `import { ZLinkModule } from '../nest/index.js';`,
        'lib/runtime imports lib/nest, a layer above it',
      ],
      [
        'lib/nest/x.ts',
        `import { x } from '../index.js';`,
        'lib/nest imports lib/(barrel), a layer above it',
      ],
    ])('%s: %s is a violation', (path, text, rule) => {
      const v = violations(path, text);
      expect(v.length).toBeGreaterThanOrEqual(1);
      expect(v.join('\n')).toContain(rule);
    });

    it.each([
      [
        'lib/transport/client-server/x.ts',
        `import { ZLinkError } from '../../core/errors.js';\nimport { packr } from '../../core/wire/index.js';`,
      ],
      ['lib/store/x.ts', `import { ZLinkError } from '../core/errors.js';`],
      ['lib/spot/x.ts', `import type { ObjectKind } from '../core/kinds.js';`],
      [
        'lib/runtime/x.ts',
        `import { ClientChannel } from '../transport/index.js';\nimport { a } from '../store/index.js';`,
      ],
      [
        'lib/nest/x.ts',
        `import { ZLinkRuntime } from '../runtime/index.js';\nimport { of } from 'rxjs';\nimport { Module } from '@nestjs/common';`,
      ],
      ['lib/index.ts', `export * from './core/index.js';\nexport * from './nest/index.js';`],
      [
        'lib/transport/client-server/x.ts',
        `import { SocketPump } from '../socket-pump.js';\nimport { Dealer } from 'zeromq';`,
      ],
      ['lib/store/redis/x.ts', `import Redis from 'ioredis';`],
    ])('%s: allowed imports pass', (path, text) => {
      expect(violations(path, text)).toEqual([]);
    });
  });

  describe('(c) an import into another layer goes through that layer’s index.js', () => {
    it.each([
      [
        'lib/transport/x.ts',
        `import { packr } from '../core/wire/codec.js';`,
        "a room's index (lib/core/<room>/index.js) or a root file, not lib/core/wire/codec.js",
      ],
      [
        'lib/runtime/x.ts',
        `import { ServerListener } from '../transport/client-server/index.js';`,
        'not lib/transport/client-server/index.js',
      ],
      ['lib/index.ts', `export { ZLinkError } from './core/errors.js';`, 'not lib/core/errors.js'],
      [
        'lib/nest/x.ts',
        `import { ZLinkRuntime } from '../runtime/zlink-runtime.js';`,
        'not lib/runtime/zlink-runtime.js',
      ],
    ])('%s: %s is a violation', (path, text, rule) => {
      expect(violations(path, text).join('\n')).toContain(rule);
    });

    it('deep imports inside one layer are fine', () => {
      expect(violations('lib/core/x.ts', `import { ZLinkError } from './errors.js';`)).toEqual([]);
      expect(
        violations('lib/transport/client-server/x.ts', `import { hostname } from '../endpoints.js';`),
      ).toEqual([]);
    });

    it('an import that escapes lib/ is a violation', () => {
      expect(
        violations('lib/core/x.ts', `import { h } from '../../test/helpers/index.js';`).join('\n'),
      ).toContain('outside the lib layers');
    });
  });

  describe('(d) zeromq only in lib/transport, ioredis only in lib/store, @nestjs/* and rxjs only in lib/nest', () => {
    it.each([
      [
        'lib/runtime/x.ts',
        `import { Router } from 'zeromq';`,
        'zeromq may only be imported in lib/transport',
      ],
      ['lib/nest/x.ts', `import { Dealer } from 'zeromq';`, 'zeromq may only be imported in lib/transport'],
      ['lib/transport/x.ts', `import Redis from 'ioredis';`, 'ioredis may only be imported in lib/store'],
      [
        'lib/runtime/x.ts',
        `import { Injectable } from '@nestjs/common';`,
        '@nestjs/* may only be imported in lib/nest',
      ],
      ['lib/transport/x.ts', `import { Subject } from 'rxjs';`, 'rxjs may only be imported in lib/nest'],
      ['lib/index.ts', `export { Observable } from 'rxjs';`, 'rxjs may only be imported in lib/nest'],
      [
        'lib/transport/x.ts',
        `const api = await import('@opentelemetry/api');`,
        '@opentelemetry/* may only be imported in lib/runtime',
      ],
      ['lib/core/x.ts', `import type { Context } from '@opentelemetry/api';`, 'lib/core must not import'],
    ])('%s: %s is a violation', (path, text, rule) => {
      expect(violations(path, text).join('\n')).toContain(rule);
    });
  });

  describe('(f) lib/spot imports lib/core only (through its doors), like transport and store', () => {
    it.each([
      [`import { ClientChannel } from '../transport/index.js';`, 'lib/spot and lib/transport are peers'],
      [`import { createLocationStore } from '../store/index.js';`, 'lib/spot and lib/store are peers'],
      [
        `import { ZLinkRuntime } from '../runtime/index.js';`,
        'lib/spot imports lib/runtime, a layer above it',
      ],
      [`import { ZLinkModule } from '../nest/index.js';`, 'lib/spot imports lib/nest, a layer above it'],
      [`import { Router } from 'zeromq';`, 'zeromq may only be imported in lib/transport'],
      [`import Redis from 'ioredis';`, 'ioredis may only be imported in lib/store'],
      [`import { packr } from '../core/wire/codec.js';`, "go through a room's index"],
    ])('lib/spot/resolver.ts: %s is a violation', (text, rule) => {
      expect(violations('lib/spot/resolver.ts', text).join('\n')).toContain(rule);
    });

    it('a spot file importing only core (and its own folder) passes', () => {
      const text = `import type { MeshLink } from '../core/ports/index.js';\nimport { ZLinkError } from '../core/errors.js';\nimport { RouteCache } from './route-cache.js';`;
      expect(violations('lib/spot/resolver.ts', text)).toEqual([]);
    });

    it('the runtime may import spot; transport and store may not', () => {
      expect(violations('lib/runtime/x.ts', `import { Spots } from '../spot/index.js';`)).toEqual([]);
      expect(
        violations('lib/transport/x.ts', `import { Spots } from '../spot/index.js';`).join('\n'),
      ).toContain('peers');
      expect(violations('lib/store/x.ts', `import { Spots } from '../spot/index.js';`).join('\n')).toContain(
        'peers',
      );
    });
  });

  describe('(h) outside lib/core, files import the core door that holds a name, not the core barrel', () => {
    it.each([
      ['lib/runtime/x.ts', `import { ZLinkError } from '../core/index.js';`],
      ['lib/nest/decorators/x.ts', `import type { MessageKind } from '../../core/index.js';`],
      ['lib/store/redis/x.ts', `export { ZLinkError } from '../../core/index.js';`],
      ['lib/session-client/x.ts', `import { frame } from '../core/index.js';`],
      ['lib/spot/owner/x.ts', `import { ZLinkError } from '../../core/index.js';`],
      ['lib/transport/x.ts', `import { ZLinkError } from '../core/index.js';`],
    ])('%s: %s is a violation', (path, text) => {
      expect(violations(path, text).join('\n')).toContain(
        "lib/core/index.js is the package's re-export point",
      );
    });

    it.each([
      [
        'lib/runtime/x.ts',
        `import { PendingTable } from '../core/calls/pending.js';`,
        'lib/core/calls/pending.js',
      ],
      ['lib/store/x.ts', `import type { Lease } from '../core/ports/lease.js';`, 'lib/core/ports/lease.js'],
    ])('%s: %s (a file inside a room) is a violation', (path, text, shown) => {
      expect(violations(path, text).join('\n')).toContain(
        `a room's index (lib/core/<room>/index.js) or a root file, not ${shown}`,
      );
    });

    it.each([
      [
        'lib/runtime/x.ts',
        `import { PendingTable } from '../core/calls/index.js';\nimport { ZLinkError } from '../core/errors.js';`,
      ],
      ['lib/nest/decorators/x.ts', `import type { ObjectKind } from '../../core/kinds.js';`],
      ['lib/session-client/x.ts', `export type { SessionCloseReason } from '../core/wire/index.js';`],
      ['lib/index.ts', `export { ZLinkError } from './core/index.js';\nexport * from './core/index.js';`],
    ])('%s: a room index, a root file, or (for lib/index.ts) the core barrel passes', (path, text) => {
      expect(violations(path, text)).toEqual([]);
    });

    it('every layer but the package barrel is refused the core barrel', () => {
      const files: SourceFile[] = [
        { path: 'lib/spot/x.ts', text: `import { ZLinkError } from '../core/index.js';` },
        { path: 'lib/runtime/x.ts', text: `import { ZLinkError } from '../core/index.js';` },
      ];
      expect(checkArchitecture(files).map((v) => v.file)).toEqual(['lib/spot/x.ts', 'lib/runtime/x.ts']);
    });
  });

  describe('(g) import cycles', () => {
    const file = (path: string, ...imports: string[]): SourceFile => ({
      path,
      text: imports.map((i) => `import { x } from '${i}';`).join('\n'),
    });

    it('two files importing each other are one cycle', () => {
      expect(
        importCycles([
          file('lib/core/a.ts', './b.js'),
          file('lib/core/b.ts', './a.js'),
          file('lib/core/c.ts', './a.js'),
        ]),
      ).toEqual(['lib/core/a.ts <-> lib/core/b.ts']);
    });

    it('a longer loop, across folders, is one cycle; type-only imports count', () => {
      const files = [
        file('lib/transport/route-mesh/mesh-node.ts', './mesh-calls.js'),
        file('lib/transport/route-mesh/mesh-calls.ts', '../wake-list.js'),
        {
          path: 'lib/transport/wake-list.ts',
          text: `import type { MeshNode } from './route-mesh/mesh-node.js';`,
        },
      ];
      expect(importCycles(files)).toEqual([
        'lib/transport/route-mesh/mesh-calls.ts <-> lib/transport/route-mesh/mesh-node.ts <-> lib/transport/wake-list.ts',
      ]);
    });

    it('a chain, a diamond and imports of files outside the set are no cycle', () => {
      expect(
        importCycles([
          file('lib/core/a.ts', './b.js', './c.js'),
          file('lib/core/b.ts', './d.js'),
          file('lib/core/c.ts', './d.js', './missing.js'),
          file('lib/core/d.ts', 'msgpackr'),
        ]),
      ).toEqual([]);
    });
  });

  describe('(e) no lib file is longer than 400 lines', () => {
    it(`${MAX_LINES} lines pass, ${MAX_LINES + 1} fail`, () => {
      const body = (n: number): string => 'export const x = 1;\n'.repeat(n);
      expect(violations('lib/core/long.ts', body(MAX_LINES))).toEqual([]);
      expect(violations('lib/core/long.ts', body(MAX_LINES + 1))).toEqual([
        `- | ${MAX_LINES + 1} lines; a lib file may have at most ${MAX_LINES}`,
      ]);
      // Without a trailing newline the last line still counts.
      expect(violations('lib/core/long.ts', body(MAX_LINES + 1).trimEnd())).toHaveLength(1);
    });
  });

  describe('import forms the scanner must see', () => {
    it.each([
      ['a multi-line import', `import {\n  a,\n  b,\n} from 'zeromq';`],
      ['export * from', `export * from 'zeromq';`],
      ['export { x } from', `export { Router } from 'zeromq';`],
      ['a side-effect import', `import 'zeromq';`],
      ['a dynamic import', `const z = await import('zeromq');`],
      ['require()', `const z = require('zeromq');`],
      ['import type', `import type { Router } from 'zeromq';`],
    ])('%s', (_name, text) => {
      expect(violations('lib/core/x.ts', text)).toHaveLength(1);
    });

    it('strings and comments that mention a package are not imports', () => {
      expect(
        violations('lib/core/x.ts', `// import { Router } from 'zeromq';\nconst s = "from 'zeromq'";`),
      ).toEqual([]);
    });
  });

  it('a file outside the known layer folders is reported', () => {
    expect(violations('lib/utils/x.ts', 'export const x = 1;').join('\n')).toContain(
      'not inside a known layer folder',
    );
  });

  it('the report names the file and the import', () => {
    const files: SourceFile[] = [
      { path: 'lib/core/a.ts', text: `import { Router } from 'zeromq';` },
      { path: 'lib/transport/b.ts', text: `import { packr } from '../core/wire/codec.js';` },
    ];
    const report = formatViolations(checkArchitecture(files));
    expect(report).toContain(`lib/core/a.ts: import 'zeromq': lib/core must not import zeromq`);
    expect(report).toContain(
      `lib/transport/b.ts: import '../core/wire/codec.js': imports of lib/core go through a room's index`,
    );
  });
});

describe('import cycle finder (on synthetic input)', () => {
  const file = (path: string, ...imports: string[]): SourceFile => ({
    path,
    text: imports.map((i) => `import type { X } from '${i}';`).join('\n'),
  });

  it('finds a two-file cycle, type-only imports included, and a longer one, each once', () => {
    const files = [
      file('lib/core/a.ts', './b.js'),
      file('lib/core/b.ts', './a.js'),
      file('lib/core/c.ts', './d.js', './a.js'),
      file('lib/core/d.ts', './e.js'),
      file('lib/core/e.ts', './c.js'),
      file('lib/core/f.ts', './a.js', '../core/self.js'),
    ];
    expect(importCycles(files)).toEqual([
      'lib/core/a.ts <-> lib/core/b.ts',
      'lib/core/c.ts <-> lib/core/d.ts <-> lib/core/e.ts',
    ]);
  });

  it('a file importing itself is a cycle; a chain or a diamond is not', () => {
    expect(importCycles([file('lib/core/s.ts', './s.js')])).toEqual(['lib/core/s.ts']);
    const diamond = [
      file('lib/core/top.ts', './l.js', './r.js'),
      file('lib/core/l.ts', './bottom.js'),
      file('lib/core/r.ts', './bottom.js'),
      file('lib/core/bottom.ts'),
    ];
    expect(importCycles(diamond)).toEqual([]);
  });
});
