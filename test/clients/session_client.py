#!/usr/bin/env python3
"""A session-wire client written from docs/sessions-wire.md alone (standard library + msgpack).

It exists to prove that page is enough: test/e2e/sessions-python-client.spec.ts starts a gateway and
runs this file against it. Nothing here was taken from the Node client or the server's wire code.

Run as a script it connects, runs a fixed exchange and prints ONE line of JSON with what it saw.
Every wait has a deadline; a failure or a timeout exits non-zero with a message on stderr.
"""

import argparse
import json
import os
import select
import socket
import struct
import sys
import threading
import time

import msgpack

# Frame kinds (the page's "Bodies" table).
HELLO, WELCOME, REQUEST, REPLY, ERROR, SEND, PUSH, PING, PONG, CLOSE = range(1, 11)

WIRE_VERSION = 1
# The server's frames may be longer than the client's limit; the page says to accept up to 16 MiB.
MAX_INCOMING_FRAME = 16 * 1024 * 1024
# Until the Welcome tells us otherwise, the page's default.
DEFAULT_MAX_FRAME = 65536
MAX_CORRELATION = 0xFFFFFFFF
MAX_PACKET_BYTES = 65535
CONTROL_FRAME_LIMIT = 8192  # "Keep Hello, Ping, Pong and Close frames under 8192 bytes."


class SessionError(Exception):
    """An Error frame answering one request: `code` and `message` as the server sent them."""

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


class SessionClosed(Exception):
    """The session ended: `code`/`reason` from the server's Close, or None if the connection dropped."""

    def __init__(self, code=None, reason=None, detail=None):
        if code is not None:
            text = "session closed by the server: %s %s" % (code, reason or "")
        else:
            text = "connection closed" + (": %s" % detail if detail else "")
        super().__init__(text.strip())
        self.code = code
        self.reason = reason


class SessionClient:
    def __init__(self, host, port, token=None):
        self.host = host
        self.port = port
        self.token = token
        self.welcome = None
        self.pushes = []  # (packet, payload) in arrival order
        self.close_frame = None  # (code, reason) if the server sent a Close
        self.closed = False  # no more frames will arrive
        self.close_error = None
        self._sock = None
        self._reader = None
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self._pending = {}  # correlation -> None (waiting) or ("reply", payload) / ("error", code, msg)
        self._next_correlation = 1
        self._pongs = 0
        self._sent_close = False
        self._last_sent = time.monotonic()
        self._last_heard = time.monotonic()

    # ---- connecting -------------------------------------------------------------------------------

    def connect(self, timeout=5.0):
        """Hello, then the Welcome's fields as a dict; raises SessionClosed if the server refuses."""
        deadline = time.monotonic() + timeout
        self._sock = socket.create_connection((self.host, self.port), timeout=timeout)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Writes are bounded by this; reads go through select() in the reader loop.
        self._sock.settimeout(5.0)
        self._reader = threading.Thread(target=self._read_loop, name="session-reader", daemon=True)
        self._reader.start()
        hello = [HELLO, WIRE_VERSION] if self.token is None else [HELLO, WIRE_VERSION, self.token]
        self._write(hello, control=True)
        with self._cond:
            while self.welcome is None and not self.closed:
                self._cond.wait(self._left(deadline, "a Welcome"))
            if self.welcome is None:
                raise self._closed_error()
            return dict(self.welcome)

    # ---- requests, sends, pings -------------------------------------------------------------------

    def request(self, packet, payload=None, timeout=5.0):
        """The Reply's payload; raises SessionError on an Error frame, SessionClosed if the session ends."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._require_open()
            # The page: at most maxInFlight requests without an answer; wait for answers before more.
            while len(self._pending) >= self.welcome["maxInFlight"] and not self.closed:
                self._cond.wait(self._left(deadline, "a free in-flight slot for %r" % packet))
            self._require_open()
            correlation = self._take_correlation()
            self._pending[correlation] = None
        try:
            self._write([REQUEST, correlation, self._check_packet(packet), payload])
            with self._cond:
                while self._pending.get(correlation) is None and not self.closed:
                    self._cond.wait(self._left(deadline, "an answer to %r" % packet))
                answer = self._pending.get(correlation)
                if answer is None:
                    raise self._closed_error()
        finally:
            with self._cond:
                self._pending.pop(correlation, None)
                self._cond.notify_all()
        if answer[0] == "reply":
            return answer[1]
        raise SessionError(answer[1], answer[2])

    def send(self, packet, payload=None):
        """One-way: no answer comes."""
        with self._cond:
            self._require_open()
        self._write([SEND, self._check_packet(packet), payload])

    def ping(self, timeout=5.0):
        """Sends a Ping and waits for a Pong; returns the round trip in seconds."""
        deadline = time.monotonic() + timeout
        started = time.monotonic()
        with self._cond:
            if self.closed or self._sent_close:
                raise self._closed_error()
            seen = self._pongs
        self._write([PING], control=True)
        with self._cond:
            while self._pongs == seen and not self.closed:
                self._cond.wait(self._left(deadline, "a Pong"))
            if self._pongs == seen:
                raise self._closed_error()
        return time.monotonic() - started

    def wait_push(self, packet, timeout=5.0, start=0):
        """The first push named `packet` at index >= start (already received or still to come)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for p in self.pushes[start:]:
                    if p[0] == packet:
                        return p
                if self.closed:
                    raise self._closed_error()
                self._cond.wait(self._left(deadline, "a push %r" % packet))

    def wait_closed(self, timeout=5.0):
        """Waits until no more frames will arrive; returns the server's (code, reason) or None."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.closed:
                self._cond.wait(self._left(deadline, "the connection to close"))
            return self.close_frame

    def close(self, code=1000, reason="", timeout=2.0):
        """Close frame, then the TCP connection. True if the server then closed its side with no error."""
        if self._sock is None:
            return False
        clean = False
        with self._cond:
            may_send = not self.closed and not self._sent_close
        if may_send:
            try:
                self._write([CLOSE, code, reason], control=True)
                with self._cond:
                    self._sent_close = True
                # Our side is done writing; the server closes its side once it has read the Close.
                self._sock.shutdown(socket.SHUT_WR)
                deadline = time.monotonic() + timeout
                with self._cond:
                    while not self.closed and time.monotonic() < deadline:
                        self._cond.wait(max(0.0, deadline - time.monotonic()))
                    clean = self.closed and self.close_error is None
            except OSError as e:
                self.close_error = self.close_error or e
        self._finish("closed by the client")
        try:
            self._sock.close()
        except OSError:
            pass
        if self._reader is not None:
            self._reader.join(timeout)
        return clean

    # ---- internals ---------------------------------------------------------------------------------

    def _left(self, deadline, what):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out waiting for %s" % what)
        return left

    def _require_open(self):
        if self.welcome is None:
            raise RuntimeError("not connected (no Welcome yet)")
        if self.closed or self._sent_close:
            raise self._closed_error()

    def _closed_error(self):
        if self.close_frame is not None:
            return SessionClosed(self.close_frame[0], self.close_frame[1])
        return SessionClosed(detail=self.close_error)

    def _take_correlation(self):
        # Unique among unanswered requests; the counter wraps to 1 (never 0).
        while True:
            c = self._next_correlation
            self._next_correlation = 1 if c >= MAX_CORRELATION else c + 1
            if c not in self._pending:
                return c

    @staticmethod
    def _check_packet(packet):
        if not isinstance(packet, str) or not packet:
            raise ValueError("packet must be a non-empty string")
        if len(packet.encode("utf-8")) > MAX_PACKET_BYTES:
            raise ValueError("packet longer than %d bytes of UTF-8" % MAX_PACKET_BYTES)
        return packet

    def _write(self, items, control=False):
        body = msgpack.packb(items, use_bin_type=True)
        limit = CONTROL_FRAME_LIMIT if control else (self.welcome or {}).get("maxFrameBytes", DEFAULT_MAX_FRAME)
        if len(body) > limit:
            raise ValueError("frame body of %d bytes exceeds the limit of %d" % (len(body), limit))
        frame = struct.pack(">I", len(body)) + body
        with self._write_lock:
            self._sock.sendall(frame)
            self._last_sent = time.monotonic()

    def _finish(self, detail=None, error=None):
        with self._cond:
            if not self.closed:
                self.closed = True
                if error is not None and self.close_error is None:
                    self.close_error = error
            self._cond.notify_all()

    def _read_loop(self):
        buf = bytearray()
        try:
            while True:
                with self._cond:
                    if self.closed:
                        return
                readable, _, _ = select.select([self._sock], [], [], 0.25)
                now = time.monotonic()
                if not readable:
                    self._heartbeat(now)
                    continue
                chunk = self._sock.recv(65536)
                if not chunk:
                    self._finish("end of stream")
                    return
                self._last_heard = now
                buf.extend(chunk)
                # TCP splits and joins at any byte: take whole frames only.
                while len(buf) >= 4:
                    (length,) = struct.unpack_from(">I", buf, 0)
                    if length == 0 or length > MAX_INCOMING_FRAME:
                        raise ValueError("server frame of length %d" % length)
                    if len(buf) < 4 + length:
                        break
                    body = bytes(buf[4 : 4 + length])
                    del buf[: 4 + length]
                    self._dispatch(msgpack.unpackb(body, raw=False, strict_map_key=False))
                self._heartbeat(now)
        except Exception as e:  # noqa: BLE001 - a reset, bad framing, bad msgpack: the connection is over
            self._finish(error=e)

    def _heartbeat(self, now):
        if self.welcome is None:
            return
        beat = self.welcome["heartbeatMs"] / 1000.0
        if now - self._last_heard > 3 * beat:
            raise ValueError("nothing heard for %.1f s" % (now - self._last_heard))
        with self._cond:
            quiet = not self.closed and not self._sent_close
        if quiet and now - self._last_sent >= beat:
            self._write([PING], control=True)

    def _dispatch(self, frame):
        if not isinstance(frame, list) or not frame or not isinstance(frame[0], int):
            raise ValueError("body is not an array starting with a kind: %r" % (frame,))
        kind = frame[0]
        with self._cond:
            if kind == WELCOME:
                _, version, session_id, heartbeat_ms, max_frame, max_in_flight = frame[:6]
                self.welcome = {
                    "version": version,
                    "sessionId": session_id,
                    "heartbeatMs": heartbeat_ms,
                    "maxFrameBytes": max_frame,
                    "maxInFlight": max_in_flight,
                }
            elif kind == REPLY:
                _, correlation, payload = frame[:3]
                if correlation in self._pending:
                    self._pending[correlation] = ("reply", payload)
            elif kind == ERROR:
                _, correlation, code, message = frame[:4]
                if correlation in self._pending:
                    self._pending[correlation] = ("error", code, message)
            elif kind == PUSH:
                _, packet, payload = frame[:3]
                self.pushes.append((packet, payload))
            elif kind == PONG:
                self._pongs += 1
            elif kind == CLOSE:
                code = frame[1] if len(frame) > 1 else None
                reason = frame[2] if len(frame) > 2 else ""
                self.close_frame = (code, reason)
                # "A client that receives a Close must not send anything more."
                self._sent_close = True
            elif kind == PING:
                pass  # answered below, outside the lock
            # Unknown kinds from a later version: ignored, like unknown trailing items.
            self._cond.notify_all()
        if kind == PING and not self._sent_close:
            self._write([PONG], control=True)


# ---- the script the e2e test drives -----------------------------------------------------------------


def run_script(client):
    seen = {"welcome": client.connect()}
    seen["echo"] = client.request("echo", {"hello": "from python", "n": [1, 2, 3]})
    # msgpack-python writes any integer past 32 bits in a 64-bit form (uint 64 / int 64).
    seen["wide"] = client.request("wide", {"ms": 1796256000000, "neg": -(2 ** 40), "huge": 2 ** 60})
    try:
        client.request("nobody", None)
        raise AssertionError("request 'nobody' was answered with a Reply, expected an Error frame")
    except SessionError as e:
        seen["nobodyCode"] = e.code
    start = len(client.pushes)
    client.send("note", 7)
    packet, payload = client.wait_push("noted", timeout=5.0, start=start)
    seen["push"] = [packet, payload]
    client.ping(timeout=5.0)
    seen["pong"] = True
    seen["closedCleanly"] = client.close(1000, "bye")
    if not seen["closedCleanly"]:
        raise AssertionError("the connection did not close cleanly after our Close: %r" % (client.close_error,))
    return seen


def run_connect_only(client):
    """Connect and report how it ended: the Welcome, or the server's Close code and reason."""
    try:
        welcome = client.connect()
    except SessionClosed as e:
        return {"welcome": None, "closeCode": e.code, "closeReason": e.reason}
    clean = client.close(1000, "bye")
    return {"welcome": welcome, "closeCode": None, "closeReason": None, "closedCleanly": clean}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", default="python")
    parser.add_argument("--connect-only", action="store_true", help="only connect, report the Close code")
    parser.add_argument("--deadline", type=float, default=15.0, help="seconds for the whole run")
    args = parser.parse_args(argv)

    # A last bound over the whole run, whatever hangs.
    def overdue():
        sys.stderr.write("session_client: gave up after %.1f s\n" % args.deadline)
        sys.stderr.flush()
        os._exit(3)

    watchdog = threading.Timer(args.deadline, overdue)
    watchdog.daemon = True
    watchdog.start()

    client = SessionClient(args.host, args.port, token=args.token)
    try:
        seen = run_connect_only(client) if args.connect_only else run_script(client)
    except Exception as e:  # noqa: BLE001 - any failure is reported the same way
        sys.stderr.write("session_client: %s: %s\n" % (type(e).__name__, e))
        client.close()
        return 1
    finally:
        watchdog.cancel()
    sys.stdout.write(json.dumps(seen) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
