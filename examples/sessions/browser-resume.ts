// A browser game that keeps its player's seat through a network blink (`resume: true`: the client
// gets its session back on its own) and through a reload of the page (the page keeps
// `client.resumeState` in `sessionStorage` when it hides, and the next page resumes from it).
// test/e2e/browser-client.spec.ts runs this file in Chromium.
import { type SessionResumeState, ZLinkSessionClient } from 'nestjs-zlink/session-client/browser';

// What this uses of the page: `window` has it.
export interface GamePage {
  readonly sessionStorage: {
    getItem(key: string): string | null;
    setItem(key: string, value: string): void;
    removeItem(key: string): void;
  };
  addEventListener(type: 'pagehide', listener: () => void): void;
}

const SAVED = 'zlink.session';

// `page` is `window`; `show` puts a line on the screen.
export async function playResumable(
  endpoint: string,
  ticket: string,
  page: GamePage,
  show: (line: string) => void,
): Promise<ZLinkSessionClient> {
  const saved = page.sessionStorage.getItem(SAVED);
  page.sessionStorage.removeItem(SAVED); // a resume token is good for one resume
  const client = new ZLinkSessionClient({
    endpoint,
    token: ticket,
    resume: true,
    ...(saved !== null && { resumeFrom: JSON.parse(saved) as SessionResumeState }),
  });
  client.on('push', (packet, msg) => show(`${packet}: ${JSON.stringify(msg)}`));
  client.on('dropped', () => show('connection lost: getting the seat back'));
  client.on('resumed', ({ sessionId }) => show(`back in session ${sessionId}`));
  client.on('close', ({ reason }) => show(`session ended: ${reason}`));
  // Leaving or reloading: keep what resumes the session, for this tab only (the token is a secret).
  page.addEventListener('pagehide', () => {
    const state = client.resumeState;
    if (state) page.sessionStorage.setItem(SAVED, JSON.stringify(state));
  });
  try {
    const { sessionId } = await client.connect();
    if (saved === null) show(`joined as session ${sessionId}`);
  } catch (error) {
    if (saved === null) throw error;
    // The saved session is gone (its grace passed, or the server ended it): log in anew.
    const { sessionId } = await client.connect();
    show(`joined as session ${sessionId}: the saved one had ended`);
  }
  return client;
}
