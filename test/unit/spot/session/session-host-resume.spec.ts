import { describe, expect, it } from '@jest/globals';
import {
  JobQueue,
  type NormalizedSessionListener,
  type SessionCloseReason,
  type SessionLink,
  type SessionResumeTerms,
  SessionHandlerRegistry,
  SessionHooks,
  ZLinkEvents,
  encodePayload,
} from '../../../../lib/core/index.js';
import { SessionHost } from '../../../../lib/spot/session/index.js';

/**
 * The Session owner's side of resume after a drop (docs/sessions.md#resume-after-a-drop), on links
 * without sockets: a dropped resumable session stays (its hook told), a Hello with its token moves it
 * to a new link of the same listener name with what it had not received, in order; every other Hello
 * is refused `resumeRefused`, counted, and the session is untouched; a drain ends the away ones.
 */

class FakeLink implements SessionLink {
  readonly sent: string[] = [];
  sessionId: string | undefined;
  open = true;
  awaiting = 0;
  terms: SessionResumeTerms | undefined;
  ended: { reason: SessionCloseReason; dropped: boolean } | undefined;
  readonly remoteAddress = { address: '127.0.0.1', port: 40000, family: 'IPv4' as const };

  constructor(readonly listener = 'game') {}

  welcome(sessionId: string, resume?: SessionResumeTerms): void {
    this.sessionId = sessionId;
    this.terms = resume;
    this.sent.push(`welcome ${sessionId}`);
  }
  reply(correlation: number): boolean {
    this.sent.push(`reply ${correlation}`);
    return true;
  }
  error(correlation: number, code: string): boolean {
    this.sent.push(`error ${correlation} ${code}`);
    return true;
  }
  push(packet: string): boolean {
    this.sent.push(`push ${packet}`);
    return true;
  }
  close(reason: SessionCloseReason): void {
    this.sent.push(`close ${reason}`);
    this.end(reason, false);
  }
  drop(reason: SessionCloseReason): void {
    this.end(reason, true);
  }
  /** Set by the test: the host, told of the end as a listener would. */
  onEnd: ((reason: SessionCloseReason, dropped: boolean) => void) | undefined;
  private end(reason: SessionCloseReason, dropped: boolean): void {
    if (!this.open) return;
    this.open = false;
    this.ended = { reason, dropped };
    this.onEnd?.(reason, dropped);
  }
}

function setup(listener: Partial<NormalizedSessionListener> = {}) {
  const options = {
    listener: 'game',
    mesh: 'objects',
    maxInFlight: 8,
    maxSessions: 10,
    maxPendingBytes: 65536,
    resumeGraceMs: 60000,
    sealTimeoutMs: 1000,
    ...listener,
  } as NormalizedSessionListener;
  const hooks = new SessionHooks();
  const heard: string[] = [];
  hooks.register({
    listener: 'game',
    hook: 'dropped',
    fn: (s, reason) => heard.push(`dropped ${s.id} ${reason}`),
    source: 't',
  });
  hooks.register({
    listener: 'game',
    hook: 'resumed',
    fn: (s) => heard.push(`resumed ${s.id}`),
    source: 't',
  });
  hooks.register({
    listener: 'game',
    hook: 'close',
    fn: (s, reason) => heard.push(`close ${s.id} ${reason}`),
    source: 't',
  });
  const host = new SessionHost({
    listeners: new Map([['game', options]]),
    handlers: new SessionHandlerRegistry(),
    hooks,
    jobs: new JobQueue(8),
    events: new ZLinkEvents(),
    timeoutMs: 1000,
  });
  const link = (name = 'game'): FakeLink => {
    const l = new FakeLink(name);
    l.onEnd = (reason, dropped) => host.closed(l, reason, '', dropped);
    return l;
  };
  /** A welcomed resumable session on a new link. */
  const open = (): { l: FakeLink; id: string; token: string } => {
    const l = link();
    host.opened(l, 't', { kind: 'new' });
    return { l, id: l.sessionId as string, token: l.terms?.token as string };
  };
  const resume = (id: string, token: string, received: number, on = link()): FakeLink => {
    host.opened(on, null, { kind: 'resume', sessionId: id, token, received });
    return on;
  };
  return { host, heard, link, open, resume };
}

describe('SessionHost: resume after a drop', () => {
  it('welcomes a client that asks with a token, and one that does not without', () => {
    const { host, open, link } = setup();
    const { l, token } = open();
    expect(l.terms).toMatchObject({ graceMs: 60000, received: 0, resumed: false });
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const plain = link();
    host.opened(plain, 't');
    expect(plain.terms).toBeUndefined();
    const off = setup({ resumeGraceMs: 0 });
    expect(off.open().l.terms).toBeUndefined();
  });

  it('keeps a dropped session: its pushes and answers are held, then sent after the resume Welcome, in order', () => {
    const { host, heard, open, resume } = setup();
    const { l, id, token } = open();
    host.request(l, 1, 'nothing-handles-this', encodePayload(null));
    l.drop('normal');
    const session = host.session(id);
    expect(session).toMatchObject({ open: true, connected: false });
    expect(heard).toEqual([`dropped ${id} lost`]);
    session?.push('news', { n: 1 });
    return new Promise<void>((done) => setImmediate(done)).then(() => {
      const b = resume(id, token, 0);
      expect(b.terms).toMatchObject({ resumed: true, received: 1 });
      expect(b.terms?.token).not.toBe(token);
      expect([...(b.terms?.awaiting ?? [])]).toEqual([1]);
      expect(b.sent).toEqual([`welcome ${id}`, 'error 1 NoHandler', 'push news']);
      expect(heard).toEqual([`dropped ${id} lost`, `resumed ${id}`]);
      expect(host.resumeSnapshot('game')).toEqual({ detached: 0, resumes: 1, resumesRefused: 0 });
    });
  });

  it('sends again only what the client says it did not receive', () => {
    const { host, open, resume } = setup();
    const { l, id, token } = open();
    for (const n of [1, 2, 3]) host.session(id)?.push(`p${n}`, n);
    host.acked(l, 1);
    l.drop('normal');
    const b = resume(id, token, 2);
    expect(b.sent).toEqual([`welcome ${id}`, 'push p3']);
  });

  it('refuses a wrong token, a used one, a count it cannot have, another listener name and an unknown id; the session is untouched', () => {
    const { host, open, resume, link } = setup();
    const { l, id, token } = open();
    host.session(id)?.push('p', 1);
    host.acked(l, 1);
    l.drop('normal');
    const refused = (b: FakeLink) => expect(b.sent).toEqual(['close resumeRefused']);
    refused(resume(id, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, 1));
    refused(resume(id, token, 0)); // behind its own Ack
    refused(resume(id, token, 2)); // more than was sent
    refused(resume(id, token, 1, link('lobby')));
    refused(resume('nobody', token, 1));
    expect(host.session(id)).toMatchObject({ open: true, connected: false });
    const b = resume(id, token, 1);
    expect(b.sent).toEqual([`welcome ${id}`]);
    b.drop('normal');
    refused(resume(id, token, 1)); // used
    // Counted on the listener each Hello came to.
    expect(host.resumeSnapshot('game')).toMatchObject({ resumesRefused: 5, resumes: 1, detached: 1 });
    expect(host.resumeSnapshot('lobby')).toMatchObject({ resumesRefused: 1 });
  });

  it('takes the session over from a connection not yet seen to die: that one is dropped, no Close', () => {
    const { heard, open, resume } = setup();
    const { l, id, token } = open();
    const b = resume(id, token, 0);
    expect(l.ended).toEqual({ reason: 'normal', dropped: true });
    expect(l.sent).toEqual([`welcome ${id}`]);
    expect(b.sent).toEqual([`welcome ${id}`]);
    expect(heard).toEqual([`dropped ${id} replaced`, `resumed ${id}`]);
  });

  it('a Close, a drain or an Ack of frames never sent ends the session for good', () => {
    const { host, heard, open, resume } = setup();
    const first = open();
    first.l.close('normal');
    expect(host.session(first.id)).toBeUndefined();
    expect(resume(first.id, first.token, 0).sent).toEqual(['close resumeRefused']);
    const second = open();
    host.acked(second.l, 5);
    expect(second.l.sent).toContain('close protocolError');
    const third = open();
    third.l.drop('normal');
    host.drain();
    expect(host.session(third.id)).toBeUndefined();
    expect(heard).toContain(`close ${third.id} goingAway`);
    const fourth = open();
    fourth.l.drop('normal');
    expect(heard).toContain(`close ${fourth.id} normal`); // a drop in a drain is an end
  });

  it('an away session counts toward maxSessions', () => {
    const { open, link, host } = setup({ maxSessions: 1 });
    open().l.drop('normal');
    const l = link();
    host.opened(l, 't', { kind: 'new' });
    expect(l.sent).toEqual(['close full']);
  });
});
