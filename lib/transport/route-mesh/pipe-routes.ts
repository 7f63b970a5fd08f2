import type { PeerRoute } from './peer-host.js';

/** A pipe's bytes as a map key. */
export const pipeKey = (pipe: Buffer): string => pipe.toString('latin1');

/**
 * Every pipe a peer may speak on (current routes and retiring ones), by the pipe's bytes. Every record
 * of a frame asks for the frame's own pipe, the same Buffer: the last pipe asked for and its answer are
 * kept until the next change, so a Node direct burst of 512 records makes one key, not 512 (13 % of a
 * one-way server's CPU when each made its own). The next frame from the same peer brings a new Buffer
 * with the same bytes: compared, not made a key again (a request at a time made one key per frame — a
 * latin1 string, its hash and a map lookup, about 1.5k instructions of a request's round trip).
 */
export class PipeRoutes {
  private readonly byKey = new Map<string, PeerRoute>();
  /** The pipe last asked for and what it was answered; reset on every change. */
  private lastPipe: Buffer | undefined;
  private lastRoute: PeerRoute | undefined;

  of(pipe: Buffer): PeerRoute | undefined {
    const last = this.lastPipe;
    if (pipe !== last) {
      if (last === undefined || !pipe.equals(last)) this.lastRoute = this.byKey.get(pipeKey(pipe));
      this.lastPipe = pipe;
    }
    return this.lastRoute;
  }

  get(key: string): PeerRoute | undefined {
    return this.byKey.get(key);
  }

  set(key: string, route: PeerRoute): void {
    this.byKey.set(key, route);
    this.lastPipe = undefined;
  }

  delete(key: string): void {
    this.byKey.delete(key);
    this.lastPipe = undefined;
  }
}
