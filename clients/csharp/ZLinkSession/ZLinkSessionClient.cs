// A client of the nestjs-zlink session wire, written from docs/sessions-wire.md alone. One client holds
// one session: after it ends, make a new client to connect again.
//
// Threads: frames are read on a background task, and PushReceived and Closed are raised there, one at
// a time, in the order the server sent them (Closed last, once). A Unity game hands them to its main
// thread itself (see README.md beside this file). The tasks RequestAsync and ConnectAsync return
// continue wherever the caller's await does (Unity's main thread when awaited there).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Session
{
    /// <summary>One session with a nestjs-zlink session listener.</summary>
    public sealed class ZLinkSessionClient : IDisposable
    {
        private enum State { New, Connecting, Open, Closing, Closed }

        private sealed class Pending
        {
            public readonly TaskCompletionSource<object> Result =
                new TaskCompletionSource<object>(TaskCreationOptions.RunContinuationsAsynchronously);
            public readonly string Packet;
            public Pending(string packet) { Packet = packet; }
        }

        private readonly ISessionTransport transport;
        private readonly ZLinkSessionOptions options;
        private readonly object gate = new object();
        private readonly object eventGate = new object();
        private readonly Queue<byte[]> outbox = new Queue<byte[]>();
        private readonly SemaphoreSlim outboxSignal = new SemaphoreSlim(0);
        private readonly Dictionary<uint, Pending> pending = new Dictionary<uint, Pending>();
        private readonly CancellationTokenSource stop = new CancellationTokenSource();
        private readonly TaskCompletionSource<SessionWelcome> welcomed =
            new TaskCompletionSource<SessionWelcome>(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource<bool> ended =
            new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly Stopwatch clock = Stopwatch.StartNew();

        private State state = State.New;
        private bool outboxClosed;
        private byte[] closeFrame;
        private SessionWelcome welcome;
        private SemaphoreSlim inFlight;
        private uint lastCorrelation;
        private SessionClosed closed;
        private bool closedRaised;
        private Task receiving = Task.FromResult(true);
        private Task writing = Task.FromResult(true);
        private long lastSentMs;
        private long lastHeardMs;
        private long pingsSent;
        private long pongsReceived;
        private long framesIgnored;

        /// <summary>
        /// A client on <paramref name="transport"/> (not connected yet). <paramref name="options"/> may
        /// be null for the defaults.
        /// </summary>
        public ZLinkSessionClient(ISessionTransport transport, ZLinkSessionOptions options = null)
        {
            if (transport == null) throw new ArgumentNullException("transport");
            this.transport = transport;
            this.options = options ?? new ZLinkSessionOptions();
            if (this.options.ConnectTimeoutMs <= 0) throw new ArgumentException("ConnectTimeoutMs must be positive", "options");
            if (this.options.RequestTimeoutMs <= 0) throw new ArgumentException("RequestTimeoutMs must be positive", "options");
        }

        /// <summary>
        /// A client for an endpoint as the server gives it (<c>runtime.sessions.endpoint(name)</c>):
        /// <c>tcp://host:port</c>, <c>tls://host:port</c> (with <see cref="ZLinkSessionOptions.Tls"/>),
        /// <c>ws://host:port/path</c> or <c>wss://host:port/path</c>; an IPv6 host in brackets. Throws
        /// ArgumentException for anything else.
        /// </summary>
        public static ZLinkSessionClient ForEndpoint(string endpoint, ZLinkSessionOptions options = null)
        {
            Uri uri;
            if (endpoint == null || !Uri.TryCreate(endpoint, UriKind.Absolute, out uri))
                throw new ArgumentException("endpoint must be tcp://, tls://, ws:// or wss://host:port, got " + endpoint, "endpoint");
            options = options ?? new ZLinkSessionOptions();
            var host = uri.Host.StartsWith("[") ? uri.Host.Substring(1, uri.Host.Length - 2) : uri.Host;
            switch (uri.Scheme)
            {
                case "tcp":
                case "tls":
                    if (uri.Port < 1 || uri.AbsolutePath.Length > 1)
                        throw new ArgumentException("endpoint must be " + uri.Scheme + "://host:port, got " + endpoint, "endpoint");
                    return new ZLinkSessionClient(
                        new TcpSessionTransport(host, uri.Port, uri.Scheme == "tls" ? (options.Tls ?? new SessionTlsOptions()) : null),
                        options);
                case "ws":
                case "wss":
                    return new ZLinkSessionClient(new WebSocketSessionTransport(uri), options);
                default:
                    throw new ArgumentException("endpoint must be tcp://, tls://, ws:// or wss://host:port, got " + endpoint, "endpoint");
            }
        }

        /// <summary>
        /// A Push from the server: its packet and payload (decoded: see MsgPack.cs). Raised on the
        /// client's background task, in the server's order, never after <see cref="Closed"/>.
        /// </summary>
        public event Action<string, object> PushReceived;

        /// <summary>The session (or the attempt at one) ended: raised once, after every push, on a background task.</summary>
        public event Action<SessionClosed> Closed;

        /// <summary>A PushReceived or Closed listener threw: the exception, caught so the session goes on.</summary>
        public event Action<Exception> ListenerFailed;

        /// <summary>The Welcome, once the session is open; null before.</summary>
        public SessionWelcome Welcome
        {
            get { lock (gate) return welcome; }
        }

        /// <summary>The session's id, once open; null before.</summary>
        public string SessionId
        {
            get { var w = Welcome; return w == null ? null : w.SessionId; }
        }

        /// <summary>Whether the session is open (welcomed, not closing or closed).</summary>
        public bool IsOpen
        {
            get { lock (gate) return state == State.Open; }
        }

        /// <summary>How the session ended; null while it has not.</summary>
        public SessionClosed ClosedWith
        {
            get { lock (gate) return closed; }
        }

        /// <summary>Pings this client sent (one per heartbeat it had nothing else to send).</summary>
        public long PingsSent
        {
            get { return Interlocked.Read(ref pingsSent); }
        }

        /// <summary>Pongs the server answered with.</summary>
        public long PongsReceived
        {
            get { return Interlocked.Read(ref pongsReceived); }
        }

        /// <summary>Server frames skipped: a kind this version does not know, or an answer to a request no longer waited for.</summary>
        public long FramesIgnored
        {
            get { return Interlocked.Read(ref framesIgnored); }
        }

        /// <summary>
        /// Connects, says Hello with the options' token and waits for the Welcome (docs/sessions-wire.md#a-sessions-life).
        /// Fails with <see cref="ZLinkSessionException"/>: <c>Closed</c> when the connection fails or the
        /// server closes it first (its reason in <c>Closed.Reason</c>: <c>"refused"</c> for a token the
        /// application refused), <c>Timeout</c> past ConnectTimeoutMs; ArgumentException for a token the
        /// codec has no form for, or one that makes the Hello longer than 8192 bytes. Call it once per client.
        /// </summary>
        public async Task<SessionWelcome> ConnectAsync(CancellationToken cancellation = default(CancellationToken))
        {
            // The token is checked before anything happens: a codec-less value, or a Hello the server
            // would refuse for its size (docs/sessions-wire.md#limits), throws ArgumentException here.
            var hello = SessionWire.Hello(options.Token);
            if (hello.Length > SessionWire.MaxControlFrameBytes)
                throw new ArgumentException("the token makes a Hello of " + hello.Length + " bytes; the server takes at most " +
                    SessionWire.MaxControlFrameBytes);
            lock (gate)
            {
                if (state != State.New)
                    throw new InvalidOperationException("a client holds one session: make a new client to connect again");
                state = State.Connecting;
            }
            using (var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellation, stop.Token))
            {
                deadline.CancelAfter(options.ConnectTimeoutMs);
                try
                {
                    await transport.ConnectAsync(deadline.Token).ConfigureAwait(false);
                }
                catch (Exception e)
                {
                    var why = deadline.IsCancellationRequested && !cancellation.IsCancellationRequested && !stop.IsCancellationRequested
                        ? "no connection within " + options.ConnectTimeoutMs + " ms"
                        : "could not connect: " + e.Message;
                    Finish(new SessionClosed(SessionClosedBy.Connection, null, SessionWire.Lost, why));
                    if (cancellation.IsCancellationRequested) throw Failure(SessionErrorKind.Cancelled, "connect cancelled", null);
                    throw Failure(SessionErrorKind.Closed, why, ClosedWith);
                }
                var now = clock.ElapsedMilliseconds;
                Interlocked.Exchange(ref lastHeardMs, now);
                Interlocked.Exchange(ref lastSentMs, now);
                receiving = Task.Run(() => ReceiveLoop());
                writing = Task.Run(() => WriteLoop());
                Enqueue(hello);
                // Until the Welcome, nothing but Ping or Close may be sent: RequestAsync and Send wait
                // for State.Open (docs/sessions-wire.md#a-sessions-life).
                using (deadline.Token.Register(() => welcomed.TrySetCanceled()))
                {
                    try
                    {
                        return await welcomed.Task.ConfigureAwait(false);
                    }
                    catch (OperationCanceledException)
                    {
                        var timedOut = !cancellation.IsCancellationRequested;
                        var why = timedOut ? "no Welcome within " + options.ConnectTimeoutMs + " ms" : "connect cancelled";
                        Finish(new SessionClosed(SessionClosedBy.Client, null, SessionWire.Lost, why));
                        var after = ClosedWith;
                        if (after != null && after.By != SessionClosedBy.Client) throw Failure(SessionErrorKind.Closed, after.ToString(), after);
                        throw Failure(timedOut ? SessionErrorKind.Timeout : SessionErrorKind.Cancelled, why, null);
                    }
                }
            }
        }

        /// <summary>
        /// Sends a Request and resolves with the Reply's payload. Exactly one result each: the payload, or
        /// <see cref="ZLinkSessionException"/> of kind <c>Remote</c> (the server's Error: <c>Code</c>,
        /// <c>Message</c>, <c>Details</c>), <c>Timeout</c> (after <paramref name="timeoutMs"/>, or the
        /// options' RequestTimeoutMs when 0), <c>Cancelled</c>, <c>Closed</c> (the session ended first: the
        /// request may have run) or <c>NotOpen</c>. ArgumentException for a bad packet, a payload the codec
        /// has no form for, or a frame longer than the Welcome's MaxFrameBytes (nothing is sent then).
        /// More than MaxInFlight requests at once wait for a slot, within their deadline.
        /// </summary>
        public async Task<object> RequestAsync(string packet, object payload = null, int timeoutMs = 0,
            CancellationToken cancellation = default(CancellationToken))
        {
            SessionWire.CheckPacket(packet);
            var timeout = timeoutMs > 0 ? timeoutMs : options.RequestTimeoutMs;
            SemaphoreSlim slots;
            int maxFrameBytes;
            lock (gate)
            {
                if (state != State.Open) throw NotOpen();
                slots = inFlight;
                maxFrameBytes = welcome.MaxFrameBytes;
            }
            using (var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellation, stop.Token))
            {
                deadline.CancelAfter(timeout);
                try
                {
                    await slots.WaitAsync(deadline.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    throw Ended(packet, timeout, cancellation);
                }
                var request = new Pending(packet);
                uint correlation;
                lock (gate)
                {
                    if (state != State.Open)
                    {
                        slots.Release();
                        throw Ended(packet, timeout, cancellation);
                    }
                    correlation = NextCorrelation();
                    pending[correlation] = request;
                }
                byte[] body = null;
                try
                {
                    body = SessionWire.Request(correlation, packet, payload);
                    if (body.Length > maxFrameBytes)
                        throw new ArgumentException("request '" + packet + "' is " + body.Length +
                            " bytes, past the server's maxFrameBytes " + maxFrameBytes + "; nothing was sent");
                }
                catch (Exception)
                {
                    Forget(correlation);
                    throw;
                }
                if (!Enqueue(body))
                {
                    Forget(correlation);
                    throw Ended(packet, timeout, cancellation);
                }
                // On the deadline the request gives up, but keeps its correlation and its slot until the
                // server's late answer comes: the server still counts it in flight
                // (docs/sessions-wire.md#limits), and a correlation is unique among unanswered requests.
                using (deadline.Token.Register(() => request.Result.TrySetException(Ended(packet, timeout, cancellation))))
                    return await request.Result.Task.ConfigureAwait(false);
            }
        }

        /// <summary>
        /// Sends a one-way Send (no answer, ever). False when no session is open (nothing sent).
        /// ArgumentException for a bad packet, a payload the codec has no form for, or a frame longer
        /// than MaxFrameBytes. Sends are taken in order with requests; pace a long burst with a request
        /// now and then (docs/sessions-wire.md#limits).
        /// </summary>
        public bool Send(string packet, object payload = null)
        {
            SessionWire.CheckPacket(packet);
            int maxFrameBytes;
            lock (gate)
            {
                if (state != State.Open) return false;
                maxFrameBytes = welcome.MaxFrameBytes;
            }
            var body = SessionWire.Send(packet, payload);
            if (body.Length > maxFrameBytes)
                throw new ArgumentException("send '" + packet + "' is " + body.Length +
                    " bytes, past the server's maxFrameBytes " + maxFrameBytes + "; nothing was sent");
            return Enqueue(body);
        }

        /// <summary>
        /// Ends the session: sends a Close with <paramref name="code"/> and <paramref name="reason"/> (text
        /// for people), then closes the connection. Completes once it is closed (within about 2 s
        /// whatever the server does); Closed is raised with By = Client. Requests still waiting fail
        /// (<c>Closed</c>). Safe to call at any time, more than once.
        /// </summary>
        public Task CloseAsync(SessionCloseCode code = SessionCloseCode.Normal, string reason = "")
        {
            var body = SessionWire.Close((int)code, reason);
            return CloseWith(body, new SessionClosed(SessionClosedBy.Client, (int)code, SessionWire.ReasonOf((int)code), reason));
        }

        /// <summary>Drops the connection at once, with no Close frame (the server sees the client leave). Prefer CloseAsync.</summary>
        public void Dispose()
        {
            Finish(new SessionClosed(SessionClosedBy.Client, null, "normal", "disposed"));
        }

        private async Task CloseWith(byte[] body, SessionClosed info)
        {
            State was;
            lock (gate)
            {
                was = state;
                if (state == State.Connecting || state == State.Open)
                {
                    state = State.Closing;
                    closeFrame = body;
                    outbox.Enqueue(body);
                    outboxClosed = true;
                }
            }
            if (was == State.New) Finish(info);
            if (was != State.Connecting && was != State.Open)
            {
                // Never connected, or another close is under way: this one ends with it.
                await ended.Task.ConfigureAwait(false);
                return;
            }
            outboxSignal.Release();
            // The Close goes out behind what was queued; then the connection ends, politely: a FIN (or a
            // WebSocket close), and the server closes its side (docs/sessions-wire.md#a-sessions-life).
            await Task.WhenAny(writing, Task.Delay(1000)).ConfigureAwait(false);
            using (var bound = new CancellationTokenSource(500))
                await transport.CloseAsync(bound.Token).ConfigureAwait(false);
            await Task.WhenAny(receiving, Task.Delay(500)).ConfigureAwait(false);
            Finish(info);
        }

        private async Task ReceiveLoop()
        {
            try
            {
                while (true)
                {
                    var body = await transport.ReceiveAsync(CancellationToken.None).ConfigureAwait(false);
                    if (body == null)
                    {
                        if (!Closing()) Finish(new SessionClosed(SessionClosedBy.Connection, null, SessionWire.Lost, "the server ended the connection"));
                        return;
                    }
                    Interlocked.Exchange(ref lastHeardMs, clock.ElapsedMilliseconds);
                    if (Closing()) continue;
                    if (!Handle(body)) return;
                }
            }
            catch (SessionTransportException e)
            {
                ProtocolFault(e.Message);
            }
            catch (Exception e)
            {
                if (!Closing()) Finish(new SessionClosed(SessionClosedBy.Connection, null, SessionWire.Lost, e.Message));
            }
        }

        // One server frame: false when the session is over.
        private bool Handle(byte[] body)
        {
            List<object> items;
            try
            {
                items = MsgPack.Decode(body) as List<object>;
            }
            catch (MsgPackException e)
            {
                return ProtocolFault("a frame that is not msgpack: " + e.Message);
            }
            if (items == null || items.Count == 0 || !(items[0] is long))
                return ProtocolFault("a frame that is not an array starting with its kind");
            var kind = (long)items[0];
            bool open;
            lock (gate) open = state == State.Open;
            switch (kind)
            {
                case (long)FrameKind.Welcome:
                    return Welcomed(items);
                case (long)FrameKind.Reply:
                    if (!open || items.Count < 3 || !IsCorrelation(items[1])) return ProtocolFault("a malformed or early Reply");
                    Answer((uint)(long)items[1], items[2], null);
                    return true;
                case (long)FrameKind.Error:
                    if (!open || items.Count < 4 || !IsCorrelation(items[1]) || !(items[2] is string))
                        return ProtocolFault("a malformed or early Error");
                    var code = (string)items[2];
                    var message = items[3] as string ?? "";
                    var details = items.Count > 4 ? items[4] : null;
                    Answer((uint)(long)items[1], null, Failure(SessionErrorKind.Remote, code, message, details, null));
                    return true;
                case (long)FrameKind.Push:
                    if (!open || items.Count < 3 || !(items[1] is string)) return ProtocolFault("a malformed or early Push");
                    RaisePush((string)items[1], items[2]);
                    return true;
                case (long)FrameKind.Ping:
                    Enqueue(SessionWire.Pong);
                    return true;
                case (long)FrameKind.Pong:
                    Interlocked.Increment(ref pongsReceived);
                    return true;
                case (long)FrameKind.Close:
                    {
                        var closeCode = items.Count > 1 && items[1] is long ? (int)(long)items[1] : 0;
                        var reason = items.Count > 2 ? items[2] as string : null;
                        Finish(new SessionClosed(SessionClosedBy.Server, closeCode, SessionWire.ReasonOf(closeCode), reason));
                        return false;
                    }
                default:
                    // A kind of a later version: nothing this client can act on.
                    Interlocked.Increment(ref framesIgnored);
                    return true;
            }
        }

        private bool Welcomed(List<object> items)
        {
            bool connecting;
            lock (gate) connecting = state == State.Connecting;
            if (!connecting) return ProtocolFault("a Welcome out of place");
            if (items.Count < 6 || !(items[1] is long) || !(items[2] is string) ||
                !IsPositiveInt(items[3]) || !IsPositiveInt(items[4]) || !IsPositiveInt(items[5]))
                return ProtocolFault("a malformed Welcome");
            var w = new SessionWelcome
            {
                Version = (int)(long)items[1],
                SessionId = (string)items[2],
                HeartbeatMs = (int)(long)items[3],
                MaxFrameBytes = (int)(long)items[4],
                MaxInFlight = (int)(long)items[5],
            };
            lock (gate)
            {
                if (state != State.Connecting) return false;
                welcome = w;
                inFlight = new SemaphoreSlim(w.MaxInFlight, w.MaxInFlight);
                state = State.Open;
            }
            Task.Run(() => Heartbeat(w.HeartbeatMs));
            welcomed.TrySetResult(w);
            return true;
        }

        // Heartbeats (docs/sessions-wire.md#heartbeats): a Ping after heartbeatMs with nothing sent; the
        // connection counts as dead after 3 × heartbeatMs with nothing heard.
        private async Task Heartbeat(int heartbeatMs)
        {
            var deadAfter = 3L * heartbeatMs;
            try
            {
                while (!stop.IsCancellationRequested)
                {
                    var now = clock.ElapsedMilliseconds;
                    var silent = now - Interlocked.Read(ref lastHeardMs);
                    if (silent >= deadAfter)
                    {
                        Finish(new SessionClosed(SessionClosedBy.Connection, null, SessionWire.Lost,
                            "nothing heard for " + silent + " ms (3 heartbeats)"));
                        return;
                    }
                    var idle = now - Interlocked.Read(ref lastSentMs);
                    if (idle >= heartbeatMs && Enqueue(SessionWire.Ping))
                    {
                        Interlocked.Increment(ref pingsSent);
                        Interlocked.Exchange(ref lastSentMs, now);
                        idle = 0;
                    }
                    var wait = Math.Max(1, Math.Min(heartbeatMs - idle, deadAfter - silent));
                    await Task.Delay((int)wait, stop.Token).ConfigureAwait(false);
                }
            }
            catch (OperationCanceledException)
            {
                // The session ended.
            }
        }

        // The one writer: frames leave in the order they were queued (requests and sends in call order).
        private async Task WriteLoop()
        {
            try
            {
                while (true)
                {
                    await outboxSignal.WaitAsync(stop.Token).ConfigureAwait(false);
                    byte[] body;
                    lock (gate)
                    {
                        if (outbox.Count == 0) continue;
                        body = outbox.Dequeue();
                    }
                    await transport.SendAsync(body, stop.Token).ConfigureAwait(false);
                    Interlocked.Exchange(ref lastSentMs, clock.ElapsedMilliseconds);
                    if (ReferenceEquals(body, closeFrame)) return;
                }
            }
            catch (OperationCanceledException)
            {
                // The session ended.
            }
            catch (Exception e)
            {
                if (!Closing()) Finish(new SessionClosed(SessionClosedBy.Connection, null, SessionWire.Lost, "send failed: " + e.Message));
            }
        }

        private bool Enqueue(byte[] body)
        {
            lock (gate)
            {
                if (outboxClosed) return false;
                outbox.Enqueue(body);
            }
            outboxSignal.Release();
            return true;
        }

        // The server broke the wire: tell it (Close 1002, best effort) and end the session.
        private bool ProtocolFault(string why)
        {
            var info = new SessionClosed(SessionClosedBy.Connection, (int)SessionCloseCode.ProtocolError, "protocolError", why);
            _ = CloseWith(SessionWire.Close((int)SessionCloseCode.ProtocolError, Truncate(why)), info);
            return false;
        }

        private static string Truncate(string s)
        {
            return s.Length > 1000 ? s.Substring(0, 1000) : s;
        }

        private void Answer(uint correlation, object payload, Exception error)
        {
            Pending request;
            lock (gate)
            {
                if (!pending.TryGetValue(correlation, out request))
                {
                    Interlocked.Increment(ref framesIgnored);
                    return;
                }
                pending.Remove(correlation);
            }
            inFlight.Release();
            // A request that gave up already (timeout, cancel) keeps its first result.
            if (error != null) request.Result.TrySetException(error);
            else request.Result.TrySetResult(payload);
        }

        private void Forget(uint correlation)
        {
            SemaphoreSlim slots;
            lock (gate)
            {
                if (!pending.Remove(correlation)) return;
                slots = inFlight;
            }
            slots.Release();
        }

        // Correlations 1..4294967295, wrapping to 1, skipping any still waiting for its answer.
        private uint NextCorrelation()
        {
            do
            {
                lastCorrelation = lastCorrelation == uint.MaxValue ? 1 : lastCorrelation + 1;
            } while (pending.ContainsKey(lastCorrelation));
            return lastCorrelation;
        }

        private bool Closing()
        {
            lock (gate) return state == State.Closing || state == State.Closed;
        }

        // Ends the session once: no frame goes out after it, waiting requests fail, Closed is raised last.
        private void Finish(SessionClosed info)
        {
            List<Pending> waiting;
            lock (gate)
            {
                if (state == State.Closed) return;
                state = State.Closed;
                closed = info;
                outboxClosed = true;
                outbox.Clear();
                waiting = new List<Pending>(pending.Values);
                pending.Clear();
            }
            var error = Failure(SessionErrorKind.Closed, info.ToString(), info);
            foreach (var request in waiting) request.Result.TrySetException(error);
            welcomed.TrySetException(error);
            stop.Cancel();
            transport.Dispose();
            RaiseClosed(info);
            ended.TrySetResult(true);
        }

        private void RaisePush(string packet, object payload)
        {
            lock (eventGate)
            {
                if (closedRaised) return;
                var listener = PushReceived;
                if (listener == null) return;
                try { listener(packet, payload); }
                catch (Exception e) { ListenerThrew(e); }
            }
        }

        private void RaiseClosed(SessionClosed info)
        {
            lock (eventGate)
            {
                if (closedRaised) return;
                closedRaised = true;
                var listener = Closed;
                if (listener == null) return;
                try { listener(info); }
                catch (Exception e) { ListenerThrew(e); }
            }
        }

        private void ListenerThrew(Exception e)
        {
            var failed = ListenerFailed;
            if (failed == null) return;
            try { failed(e); }
            catch (Exception)
            {
                // Nowhere left to report it.
            }
        }

        private static bool IsCorrelation(object value)
        {
            return value is long && (long)value >= 1 && (long)value <= uint.MaxValue;
        }

        private static bool IsPositiveInt(object value)
        {
            return value is long && (long)value >= 1 && (long)value <= int.MaxValue;
        }

        private ZLinkSessionException NotOpen()
        {
            var info = ClosedWith;
            return info != null
                ? Failure(SessionErrorKind.Closed, info.ToString(), info)
                : Failure(SessionErrorKind.NotOpen, "no session is open: ConnectAsync first", null);
        }

        // What a request that did not get its answer ends with: the session's end, the caller's cancel,
        // or its deadline, in that order.
        private ZLinkSessionException Ended(string packet, int timeoutMs, CancellationToken cancellation)
        {
            var info = ClosedWith;
            if (info != null || Closing()) return NotOpenOrClosed(info);
            if (cancellation.IsCancellationRequested)
                return Failure(SessionErrorKind.Cancelled, "request '" + packet + "' cancelled", null);
            return Failure(SessionErrorKind.Timeout, "request '" + packet + "' got no answer within " + timeoutMs + " ms", null);
        }

        private static ZLinkSessionException NotOpenOrClosed(SessionClosed info)
        {
            return info != null
                ? Failure(SessionErrorKind.Closed, info.ToString(), info)
                : Failure(SessionErrorKind.Closed, "the session is closing", null);
        }

        private static ZLinkSessionException Failure(SessionErrorKind kind, string message, SessionClosed closed)
        {
            return new ZLinkSessionException(kind, kind.ToString(), message, null, closed);
        }

        private static ZLinkSessionException Failure(SessionErrorKind kind, string code, string message, object details, SessionClosed closed)
        {
            return new ZLinkSessionException(kind, code, message, details, closed);
        }
    }
}
