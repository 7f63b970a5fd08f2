import { describe, expect, it } from '@jest/globals';
import { SessionCloseCode, type SessionCloseReason } from '../../../../lib/core/index.js';
import {
  clientErrorAnswer,
  refusalResponse,
  upgradeRefusal,
  upgradeRule,
  webSocketCloseOf,
} from '../../../../lib/transport/websocket/upgrade-rules.js';

/**
 * The WebSocket listener's rules with no socket: which upgrade requests it refuses and with what
 * status, what an HTTP parser fault is answered with, and the WebSocket close code of each session
 * close reason (docs/sessions-wire.md#websocket).
 */

describe('upgradeRefusal', () => {
  const rule = upgradeRule('/game', ['https://Play.Example.com']);
  const open = upgradeRule('/', undefined);

  it('takes a GET on the path, its query string aside, from a listed Origin or none', () => {
    expect(upgradeRefusal('GET', '/game', 'https://play.example.com', rule)).toBeUndefined();
    expect(upgradeRefusal('GET', '/game?room=7&t=x', 'HTTPS://PLAY.EXAMPLE.COM', rule)).toBeUndefined();
    expect(upgradeRefusal('GET', '/game', undefined, rule)).toBeUndefined();
    expect(upgradeRefusal('GET', '/', 'https://anyone.example', open)).toBeUndefined();
  });

  it('refuses another method 405, another path 404, an Origin not listed 403', () => {
    expect(upgradeRefusal('POST', '/game', undefined, rule)).toEqual({ status: 405, reason: 'method' });
    for (const url of ['/', '/game/', '/GAME', '/gamex', 'game', undefined])
      expect(upgradeRefusal('GET', url, undefined, rule)).toEqual({ status: 404, reason: 'path' });
    for (const origin of ['https://evil.example', 'https://play.example.com.evil.example', 'null', ''])
      expect(upgradeRefusal('GET', '/game', origin, rule)).toEqual({ status: 403, reason: 'origin' });
    // Two Origin headers reach the listener joined: neither is believed.
    expect(upgradeRefusal('GET', '/game', 'https://play.example.com, https://evil.example', rule)).toEqual({
      status: 403,
      reason: 'origin',
    });
  });

  it('checks the method before the path, and the path before the Origin', () => {
    expect(upgradeRefusal('PUT', '/x', 'https://evil.example', rule)?.reason).toBe('method');
    expect(upgradeRefusal('GET', '/x', 'https://evil.example', rule)?.reason).toBe('path');
  });
});

describe('clientErrorAnswer', () => {
  it('answers headers too large 431, a request too slow 408, anything else 400; a reset nothing', () => {
    expect(clientErrorAnswer('HPE_HEADER_OVERFLOW')).toEqual({ status: 431, reason: 'headersTooLarge' });
    expect(clientErrorAnswer('ERR_HTTP_REQUEST_TIMEOUT')).toEqual({ status: 408, reason: 'timeout' });
    expect(clientErrorAnswer('HPE_INVALID_METHOD')).toEqual({ status: 400, reason: 'malformed' });
    expect(clientErrorAnswer(undefined)).toEqual({ status: 400, reason: 'malformed' });
    expect(clientErrorAnswer('ECONNRESET')).toBeUndefined();
  });
});

describe('refusalResponse', () => {
  it('is a whole HTTP/1.1 response that closes the connection, its length counted in bytes', () => {
    const text = refusalResponse(426, 'connect a WebSocket to /jeu·x', ['Upgrade: websocket']);
    const [head, body] = text.split('\r\n\r\n') as [string, string];
    expect(head.split('\r\n')).toEqual([
      'HTTP/1.1 426 Upgrade Required',
      'Connection: close',
      'Content-Type: text/plain; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Upgrade: websocket',
    ]);
    expect(body).toBe('connect a WebSocket to /jeu·x\n');
  });
});

describe('webSocketCloseOf', () => {
  it('gives each session close reason a WebSocket code in the range a server may send', () => {
    const codes = Object.fromEntries(
      (Object.keys(SessionCloseCode) as SessionCloseReason[]).map((r) => [r, webSocketCloseOf(r)]),
    );
    expect(codes).toMatchObject({
      normal: 1000,
      goingAway: 1001,
      protocolError: 1002,
      frameTooLarge: 1009,
      serverError: 1011,
      full: 1013,
      helloTimeout: 1008,
      refused: 1008,
      idleTimeout: 1008,
    });
    // Never 1005, 1006 or 1015: reserved for a close that carries no code, or none at all.
    for (const code of Object.values(codes)) expect([1005, 1006, 1015]).not.toContain(code);
  });
});
