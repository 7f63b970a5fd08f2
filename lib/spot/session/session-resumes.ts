import type { SessionCloseReason, SessionResumeAsk } from '../../core/wire/index.js';
import type { SessionLink, SessionResumeTerms } from '../../core/ports/index.js';
import type { OwnedSession } from './owned-session.js';
import type { SessionNotices } from './session-notices.js';

/** What the resumes see of the host's sessions. */
export interface ResumeSessions {
  readonly byId: ReadonlyMap<string, OwnedSession>;
  readonly byLink: Map<SessionLink, OwnedSession>;
  /** Ends a session for good (its hooks, its Actors told). */
  end(session: OwnedSession, reason: SessionCloseReason, detail: string): void;
}

/** A listener's resume counts (docs/sessions.md#observability). */
interface ResumeCounts {
  away: number;
  resumes: number;
  refused: number;
}

/**
 * Resume after a drop on the Session owner (docs/sessions.md#resume-after-a-drop): a resumable session whose
 * connection dropped stays, found by its id whichever listener entry of its listener name the client
 * comes back on, its turns going on and its output held, until a Hello with its token moves it to the
 * new connection or its grace ends it (`resumeExpired`). The transport only says a connection dropped.
 */
export class SessionResumes {
  private readonly counts = new Map<string, ResumeCounts>();
  /** A drain or close began: a drop ends its session, and no session is resumed. */
  private draining = false;

  constructor(
    private readonly sessions: ResumeSessions,
    private readonly notices: SessionNotices,
  ) {}

  /** A new resumable session's Welcome terms; `undefined` for a session the client cannot resume. */
  welcomeTerms(session: OwnedSession): SessionResumeTerms | undefined {
    const r = session.resume;
    return r && { token: r.token, graceMs: r.graceMs, received: 0, resumed: false, awaiting: [] };
  }

  /**
   * The connection of `session` dropped (`dropped` from the listener). A resumable session, outside a
   * drain, keeps its seat for its grace (`true`); the caller ends any other.
   */
  detach(session: OwnedSession, reason: SessionCloseReason, detail: string): boolean {
    const r = session.resume;
    if (r === undefined || this.draining) return false;
    session.away = true;
    this.count(session.listener).away++;
    r.grace = setTimeout(
      () => this.sessions.end(session, 'resumeExpired', `not resumed within ${r.graceMs} ms`),
      r.graceMs,
    );
    r.grace.unref();
    this.notices.dropped(session, reason === 'idleTimeout' ? 'idleTimeout' : 'lost', detail);
    return true;
  }

  /** An away session ends (its grace, a drain, the application): it is no longer counted away. */
  left(session: OwnedSession): void {
    if (session.away) this.count(session.listener).away--;
  }

  /**
   * A Hello that asks to resume session `ask.sessionId`. Refused (`resumeRefused`, counted, the same
   * words whatever the cause, the session untouched) unless the session is resumable on this listener
   * name, the token is its current one (compared in constant time) and the client's count is one it
   * can have. Else the session moves to `link` — a connection it is still on is dropped, with no Close
   * frame (the client left it) — with a new token, and the client gets, behind the Welcome, in order,
   * every Reply, Error and Push it had not received.
   */
  resume(link: SessionLink, ask: Extract<SessionResumeAsk, { kind: 'resume' }>): void {
    const session = this.sessions.byId.get(ask.sessionId);
    const r = session?.resume;
    if (
      session === undefined ||
      r === undefined ||
      this.draining ||
      session.listener !== link.listener ||
      !r.matches(ask.token) ||
      !r.canResumeFrom(ask.received)
    ) {
      this.count(link.listener).refused++;
      return link.close('resumeRefused', 'no session to resume with this token');
    }
    const { byLink } = this.sessions;
    const previous = session.link;
    byLink.delete(previous);
    if (session.away) {
      clearTimeout(r.grace);
      r.grace = undefined;
      session.away = false;
      this.count(session.listener).away--;
    } else {
      // The client came back before this side saw its connection die: that one is gone for it.
      const detail = 'the client resumed the session on another connection';
      previous.drop('normal', detail);
      this.notices.dropped(session, 'replaced', detail);
    }
    session.link = link;
    byLink.set(link, session);
    r.renew();
    r.ack(ask.received);
    const again = r.after(ask.received);
    const awaiting = new Set(r.pending);
    for (const f of again) if (f.kind !== 'push') awaiting.add(f.correlation);
    link.welcome(session.id, {
      token: r.token,
      graceMs: r.graceMs,
      received: r.received,
      resumed: true,
      awaiting,
    });
    for (const f of again) {
      if (f.kind === 'reply') link.reply(f.correlation, f.payload);
      else if (f.kind === 'error') link.error(f.correlation, f.code, f.message, f.details);
      else link.push(f.packet, f.payload);
    }
    this.count(session.listener).resumes++;
    this.notices.resumed(session);
  }

  /** A client's Ack; one of frames never sent is a broken client (`protocolError`). */
  acked(link: SessionLink, received: number): void {
    const session = this.sessions.byLink.get(link);
    if (session?.resume?.ack(received) === false)
      link.close('protocolError', `an ack of ${received} frames, more than were sent`);
  }

  /** Ends every session whose client is away (`goingAway`), and resumes none from now on. */
  drain(): void {
    this.draining = true;
    for (const session of [...this.sessions.byId.values()])
      if (session.away) this.sessions.end(session, 'goingAway', 'the server is shutting down');
  }

  /** `listener`'s counts, as its snapshot shows them. */
  snapshot(listener: string): { detached: number; resumes: number; resumesRefused: number } {
    const c = this.count(listener);
    return { detached: c.away, resumes: c.resumes, resumesRefused: c.refused };
  }

  private count(listener: string): ResumeCounts {
    let c = this.counts.get(listener);
    if (c === undefined) this.counts.set(listener, (c = { away: 0, resumes: 0, refused: 0 }));
    return c;
  }
}
