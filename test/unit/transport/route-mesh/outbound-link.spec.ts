/**
 * The outbound link's status as a table: every (status, event) pair, with the status it leads to
 * or `_` (ignored: the link stays as it is and `move` reports no change).
 */
import { describe, expect, it, jest } from '@jest/globals';
import {
  type LinkEvent,
  type LinkStatus,
  OutboundLink,
  nextLinkStatus,
} from '../../../../lib/transport/route-mesh/outbound-link.js';

const _ = 'ignored' as const;
type Cell = LinkStatus | typeof _;

const EVENTS = [
  'connected',
  'dropped',
  'admitted',
  'unlisted',
  'reconfirm',
  'retire',
  'restart',
  'refuse',
] as const satisfies readonly LinkEvent[];

// prettier-ignore
const table: Record<LinkStatus, readonly Cell[]> = {
  //              connected      dropped       admitted  unlisted       reconfirm      retire     restart       refuse
  connecting:   ['handshaking', _,            'ready',  'unconfirmed', _,             'retired', _,            'refused'],
  handshaking:  [_,             'connecting', 'ready',  'unconfirmed', _,             'retired', 'connecting', 'refused'],
  // A ready link that carries its peer loses the peer instead of dropping (see `PeerTable.linkDown`).
  ready:        [_,             _,            _,        _,             _,             'retired', 'connecting', 'refused'],
  // Its peer was lost: a retired link comes back, the peer may not connect again.
  retired:      [_,             _,            _,        _,             _,             _,         'connecting', 'refused'],
  refused:      [_,             _,            _,        _,             _,             'retired', 'connecting', _],
  unconfirmed:  [_,             'connecting', _,        _,             'handshaking', 'retired', 'connecting', 'refused'],
};

const pairs = Object.entries(table).flatMap(([status, row]) =>
  EVENTS.map((event, i) => ({ status: status as LinkStatus, event, expected: row[i] as Cell })),
);

/** A link walked to `status` through its own transitions. */
function linkIn(status: LinkStatus): OutboundLink {
  const link = new OutboundLink('tcp://peer:1', undefined, false, 0);
  const path: Record<LinkStatus, LinkEvent[]> = {
    connecting: [],
    handshaking: ['connected'],
    ready: ['connected', 'admitted'],
    retired: ['connected', 'admitted', 'retire'],
    refused: ['refuse'],
    unconfirmed: ['connected', 'unlisted'],
  };
  for (const event of path[status]) link.move(event);
  expect(link.status).toBe(status);
  return link;
}

describe('OutboundLink status', () => {
  it('the table names every status and every event', () => {
    for (const row of Object.values(table)) expect(row).toHaveLength(EVENTS.length);
    expect(pairs).toHaveLength(6 * EVENTS.length);
  });

  it.each(pairs)('$status + $event', ({ status, event, expected }) => {
    expect(nextLinkStatus(status, event)).toBe(expected === _ ? status : expected);
    const link = linkIn(status);
    expect(link.move(event)).toBe(expected !== _);
    expect(link.status).toBe(expected === _ ? status : expected);
  });

  it('the hello stops whenever the link leaves handshaking, and only then', () => {
    jest.useFakeTimers();
    try {
      const link = linkIn('handshaking');
      const hello = jest.fn();
      link.helloTimer = setTimeout(hello, 250);
      link.move('connected'); // ignored: still handshaking
      expect(link.helloTimer).toBeDefined();
      link.move('unlisted');
      expect(link.helloTimer).toBeUndefined();
      jest.advanceTimersByTime(1000);
      expect(hello).not.toHaveBeenCalled();
    } finally {
      jest.useRealTimers();
    }
  });

  it('admit names the NodeRid that answered; it stays through a restart', () => {
    const link = linkIn('handshaking');
    expect(link.peerRid).toBeUndefined();
    link.admit('node-b');
    expect([link.status, link.peerRid]).toEqual(['ready', 'node-b']);
    link.move('restart');
    expect([link.status, link.peerRid]).toEqual(['connecting', 'node-b']);
  });
});
