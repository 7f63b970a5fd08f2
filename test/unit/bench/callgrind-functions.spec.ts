import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { groupOf, selfInstructions } from '../../../bench/callgrind-functions.js';

/**
 * A dump as callgrind writes one with `--dump-instr=yes`: names compressed to `(id)` after their first
 * use, positions absolute, relative or `*`, and a call's inclusive cost on the line after `calls=`.
 */
const DUMP = `version: 1
creator: callgrind-3.19.0
positions: instr line
events: Ir

ob=(1) /usr/bin/node
fl=(1) ???
fn=(1) Builtins_LoadIC
0x1000 0 40
+4 * 2

ob=(2) ???
fl=(1)
fn=(2) 0x0000000000005000
0x5010 0 100
+0x20 * 7
cob=(1)
cfi=(1)
cfn=(1)
calls=3 0x1000 0
* * 999
-0x10 * 5
0x6008 0 11
0x9000 0 13

ob=(1)
fl=(1)
fn=(1)
0x1008 0 1
`;

// 0x6000 held parseSource's code first; V8 freed it and compiled pack there (a later line of the map).
const MAP = `6000 40 JS:*parseSource node:internal/deps/cjs-module-lexer/lexer:85:22
5000 100 JS:*receiveLoop file:///x/lib/transport/route-mesh/mesh-node.js:287:22
6000 80 JS:*pack file:///x/node_modules/msgpackr/pack.js:472:16
`;

describe('bench: instructions by function from a callgrind dump', () => {
  const dir = mkdtempSync(join(tmpdir(), 'zlink-cg-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('charges nameless code to the JavaScript function whose range holds it now, a call to its callee only', () => {
    writeFileSync(join(dir, 'out.1'), DUMP);
    writeFileSync(join(dir, 'perf.map'), MAP);
    const self = selfInstructions(join(dir, 'out.1'), join(dir, 'perf.map'));
    expect(Object.fromEntries(self)).toEqual({
      // 40 + 2 + 1: `(1)` names the function again; the call's 999 is not the caller's own.
      'Builtins_LoadIC [node]': 43,
      // 0x5010, 0x5030 (`+0x20`), 0x5020 (`-0x10` from the call's `*`): 100 + 7 + 5.
      'JS JS:*receiveLoop file:///x/lib/transport/route-mesh/mesh-node.js:287:22': 112,
      'JS JS:*pack file:///x/node_modules/msgpackr/pack.js:472:16': 11,
      // Outside every range of the map.
      '(no name) [???]': 13,
    });
  });

  it('groups functions by where their code comes from', () => {
    expect(groupOf('JS JS:*pack file:///x/node_modules/msgpackr/pack.js:472:16')).toBe(
      'JavaScript: msgpackr',
    );
    expect(groupOf('JS JS:*receiveLoop file:///x/.bench-build/lib/transport/a.js:1:1')).toBe(
      'JavaScript: nestjs-zlink',
    );
    expect(groupOf('zmq::msg_t::close() [addon.node]')).toBe('zeromq addon (libzmq and its binding)');
    expect(groupOf('Builtins_LoadIC [node]')).toBe('V8 builtins');
    expect(groupOf('_int_malloc [libc.so.6]')).toBe('libc (malloc, free, system calls)');
    expect(groupOf('v8::internal::Factory::AllocateRaw(int) [node]')).toBe(
      'V8 runtime (allocation, GC, lookups)',
    );
    expect(groupOf('napi_get_element [node]')).toBe('node (C++, N-API)');
  });
});
