// A client of the nestjs-zlink session wire, written from docs/sessions-wire.md alone. One client holds
// one session: after it ends, make a new client to connect again. With ZLinkSessionOptions.Resume the
// session outlives its connection: after a drop the client connects again and takes the session back
// (docs/sessions-wire.md#resume-after-a-drop).
//
// Threads: frames are read on a background task, and PushReceived, Dropped, Resumed and Closed are raised
// there, one at a time, in the order things happened (Closed last, once). A Unity game hands them to its
// main thread itself (see README.md beside this file). The tasks RequestAsync and ConnectAsync return
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
        // Away: a resumable session whose connection dropped, while the client connects again.
        private enum State { New, Connecting, Open, Away, Closing, Closed }

        private sealed class Pending
        {
            public readonly TaskCompletionSource<object> Result =
                new TaskCompletionSource<object>(TaskCreationOptions.RunContinuationsAsynchronously);
            public readonly string Packet;
            public readonly uint Correlation;

            // Its number among the session's Requests and Sends, on a session that may be resumed; 0 otherwise.
            public long Number;

            public Pending(string packet, uint correlation)
            {
                Packet = packet;
                Correlation = correlation;
            }
        }

        // A Request or Send of a resumable session, kept until the server is known to have taken it
        // (docs/sessions-wire.md#counting-and-acks).
        private sealed class Kept
        {
            public long Number;
            public readonly byte[] Body;
            public readonly Pending Request; // null for a Send

            public Kept(long number, byte[] body, Pending request)
            {
                Number = number;
                Body = body;
                Request = request;
            }
        }

        // One connection: its transport, the frames waiting for it, its own writer and heartbeat. A
        // resumed session runs on a new one; the session's state lives in the client.
        private sealed class Link
        {
            public readonly ISessionTransport Transport;
            public readonly CancellationTokenSource Stop = new CancellationTokenSource();
            public readonly Queue<byte[]> Outbox = new Queue<byte[]>();
            public readonly SemaphoreSlim Signal = new SemaphoreSlim(0);

            // True once it has its Welcome; false when it is lost (or given up) before.
            public readonly TaskCompletionSource<bool> Settled =
                new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);

            // Under the client's gate.
            public bool Started;
            public bool Welcomed;
            public bool Lost;
            public bool Sealed;
            public string LostWhy;
            public byte[] CloseFrame;

            // 1 while Replies, Errors or Pushes have arrived that no Ack has counted yet.
            public int AckDue;
            public long LastSentMs;
            public long LastHeardMs;
            public Task Receiving = Task.FromResult(true);
            public Task Writing = Task.FromResult(true);

            public Link(ISessionTransport transport)
            {
                Transport = transport;
            }
        }

        // After a drop: the first try at once, then after 100 ms doubling up to 2 s, each with up to half
        // as much again at random, so the clients of a restarted server do not all come back at once.
        private const int FirstRetryMs = 100;
        private const int LastRetryMs = 2000;

        private readonly Func<ISessionTransport> transports;
        private readonly ZLinkSessionOptions options;
        private readonly object gate = new object();
        // One server frame at a time, whichever connection brought it: a resume counts from where the
        // last frame before the drop left the count.
        private readonly object receiveGate = new object();
        private readonly object eventGate = new object();
        private readonly Dictionary<uint, Pending> pending = new Dictionary<uint, Pending>();
        private readonly LinkedList<Kept> kept = new LinkedList<Kept>();
        private readonly CancellationTokenSource stop = new CancellationTokenSource();
        private readonly TaskCompletionSource<SessionWelcome> welcomed =
            new TaskCompletionSource<SessionWelcome>(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource<bool> ended =
            new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly Stopwatch clock = Stopwatch.StartNew();
        private readonly Random jitter = new Random();

        private State state = State.New;
        private Link link;
        private SessionWelcome welcome;
        private bool resumable;
        // The Welcome's resume token: worth the session, so never logged nor shown.
        private string resumeToken;
        private long numbered;
        private long keptSendBytes;
        private long forgottenUpTo;
        private long awayUntilMs;
        private int attempts;
        private SemaphoreSlim inFlight;
        private uint lastCorrelation;
        private SessionClosed closed;
        private bool closedRaised;
        private long received;
        private long pingsSent;
        private long pongsReceived;
        private long framesIgnored;
        private long sendsLost;

        /// <summary>
        /// A client on <paramref name="transport"/> (not connected yet). <paramref name="options"/> may
        /// be null for the defaults. One transport is one connection: with
        /// <see cref="ZLinkSessionOptions.Resume"/> give a factory instead (ArgumentException here).
        /// </summary>
        public ZLinkSessionClient(ISessionTransport transport, ZLinkSessionOptions options = null)
            : this(Once(transport), options, false)
        {
        }

        /// <summary>
        /// A client that takes a new, unconnected transport from <paramref name="transports"/> for each
        /// connection: the first, and each one a resume opens (any endpoint of the same listener; a
        /// Unity WebGL build's own transport, say). <paramref name="options"/> may be null for the defaults.
        /// </summary>
        public ZLinkSessionClient(Func<ISessionTransport> transports, ZLinkSessionOptions options = null)
            : this(transports, options, true)
        {
        }

        private ZLinkSessionClient(Func<ISessionTransport> transports, ZLinkSessionOptions options, bool reconnects)
        {
            if (transports == null) throw new ArgumentNullException("transports");
            this.transports = transports;
            this.options = options ?? new ZLinkSessionOptions();
            if (this.options.ConnectTimeoutMs <= 0) throw new ArgumentException("ConnectTimeoutMs must be positive", "options");
            if (this.options.RequestTimeoutMs <= 0) throw new ArgumentException("RequestTimeoutMs must be positive", "options");
            if (this.options.Resume && !reconnects)
                throw new ArgumentException("Resume needs a new connection after a drop: give a transport factory " +
                    "(Func<ISessionTransport>) or use ForEndpoint", "options");
            if (this.options.Resume && this.options.ResendBufferBytes <= 0)
                throw new ArgumentException("ResendBufferBytes must be positive", "options");
        }

        private static Func<ISessionTransport> Once(ISessionTransport transport)
        {
            if (transport == null) throw new ArgumentNullException("transport");
            var taken = 0;
            return () =>
            {
                if (Interlocked.Exchange(ref taken, 1) == 1) throw new InvalidOperationException("the transport connected once already");
                return transport;
            };
        }

        /// <summary>
        /// A client for an endpoint as the server gives it (<c>runtime.sessions.endpoint(name)</c>):
        /// <c>tcp://host:port</c>, <c>tls://host:port</c> (with <see cref="ZLinkSessionOptions.Tls"/>),
        /// <c>ws://host:port/path</c> or <c>wss://host:port/path</c>; an IPv6 host in brackets. Throws
        /// ArgumentException for anything else. Each connection (a resume opens one) is a new transport
        /// to that endpoint.
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
                    var tls = uri.Scheme == "tls" ? (options.Tls ?? new SessionTlsOptions()) : null;
                    var port = uri.Port;
                    // Checked now, not at the first connection.
                    new TcpSessionTransport(host, port, tls).Dispose();
                    return new ZLinkSessionClient(() => new TcpSessionTransport(host, port, tls), options);
                case "ws":
                case "wss":
                    return new ZLinkSessionClient(() => new WebSocketSessionTransport(uri), options);
                default:
                    throw new ArgumentException("endpoint must be tcp://, tls://, ws:// or wss://host:port, got " + endpoint, "endpoint");
            }
        }

        /// <summary>
        /// A Push from the server: its packet and payload (decoded: see MsgPack.cs). Raised on the
        /// client's background task, in the server's order, never after <see cref="Closed"/>.
        /// </summary>
        public event Action<string, object> PushReceived;

        /// <summary>
        /// A resumable session lost its connection (docs/sessions-wire.md#what-counts-as-a-drop): the
        /// client is connecting again, requests keep waiting and Send and RequestAsync still take new
        /// ones. Followed by <see cref="Resumed"/> or, when the session cannot be taken back,
        /// <see cref="Closed"/> (<c>resumeRefused</c>, <c>resumeExpired</c>). On the background task.
        /// </summary>
        public event Action<SessionDropped> Dropped;

        /// <summary>
        /// The session is back on a new connection, the same one: raised before the Replies, Errors and
        /// Pushes the server kept for it, which follow in order. On the background task.
        /// </summary>
        public event Action<SessionResumed> Resumed;

        /// <summary>The session (or the attempt at one) ended: raised once, after every push, on a background task.</summary>
        public event Action<SessionClosed> Closed;

        /// <summary>A PushReceived, Dropped, Resumed or Closed listener threw: the exception, caught so the session goes on.</summary>
        public event Action<Exception> ListenerFailed;

        /// <summary>The Welcome, once the session is open (the latest, after a resume); null before.</summary>
        public SessionWelcome Welcome
        {
            get { lock (gate) return welcome; }
        }

        /// <summary>The session's id, once open; null before. A resume keeps it.</summary>
        public string SessionId
        {
            get { var w = Welcome; return w == null ? null : w.SessionId; }
        }

        /// <summary>Whether the session is open (welcomed, not closing or closed): also while it is away after a drop.</summary>
        public bool IsOpen
        {
            get { lock (gate) return state == State.Open || state == State.Away; }
        }

        /// <summary>Whether the session is open and on a connection: false while it is away after a drop.</summary>
        public bool IsConnected
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
        /// Sends lost to drops: ones the server never got that the client no longer held to send again
        /// (past <see cref="ZLinkSessionOptions.ResendBufferBytes"/>). 0 unless resumes found such.
        /// </summary>
        public long SendsLost
        {
            get { return Interlocked.Read(ref sendsLost); }
        }

        /// <summary>
        /// Connects, says Hello with the options' token and waits for the Welcome (docs/sessions-wire.md#a-sessions-life).
        /// Fails with <see cref="ZLinkSessionException"/>: <c>Closed</c> when the connection fails or the
        /// server closes it first (its reason in <c>Closed.Reason</c>: <c>"refused"</c> for a token the
        /// application refused), <c>Timeout</c> past ConnectTimeoutMs; ArgumentException for a token the
        /// codec has no form for, or one that makes the Hello longer than 8192 bytes. Call it once per client.
        /// With <see cref="ZLinkSessionOptions.Resume"/> the Hello asks for resume, and the Welcome says
        /// whether the server offers it (<see cref="SessionWelcome.Resumable"/>).
        /// </summary>
        public async Task<SessionWelcome> ConnectAsync(CancellationToken cancellation = default(CancellationToken))
        {
            // The token is checked before anything happens: a codec-less value, or a Hello the server
            // would refuse for its size (docs/sessions-wire.md#limits), throws ArgumentException here.
            var hello = SessionWire.Hello(options.Token, options.Resume ? SessionWire.AskResume : null);
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
                Link first;
                try
                {
                    first = new Link(transports());
                    lock (gate)
                    {
                        if (state != State.Connecting) throw new OperationCanceledException("the client was closed");
                        link = first;
                    }
                    await first.Transport.ConnectAsync(deadline.Token).ConfigureAwait(false);
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
                Start(first);
                EnqueueOn(first, hello);
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
        /// More than MaxInFlight requests at once wait for a slot, within their deadline. On a resumable
        /// session a drop changes none of this: the request waits through the resume (its deadline still
        /// runs), is sent again if the server never got it, and runs once.
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
                if (!Welcomed()) throw NotOpen();
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
                Pending request;
                lock (gate)
                {
                    if (!Welcomed())
                    {
                        slots.Release();
                        throw Ended(packet, timeout, cancellation);
                    }
                    request = new Pending(packet, NextCorrelation());
                    pending[request.Correlation] = request;
                }
                byte[] body = null;
                try
                {
                    body = SessionWire.Request(request.Correlation, packet, payload);
                    if (body.Length > maxFrameBytes)
                        throw new ArgumentException("request '" + packet + "' is " + body.Length +
                            " bytes, past the server's maxFrameBytes " + maxFrameBytes + "; nothing was sent");
                }
                catch (Exception)
                {
                    Forget(request.Correlation);
                    throw;
                }
                if (!Submit(body, request))
                {
                    Forget(request.Correlation);
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
        /// now and then (docs/sessions-wire.md#limits). On a resumable session a Send made while it is
        /// away is sent once it is back (true); one lost with the connection is sent again, within
        /// <see cref="ZLinkSessionOptions.ResendBufferBytes"/>.
        /// </summary>
        public bool Send(string packet, object payload = null)
        {
            SessionWire.CheckPacket(packet);
            int maxFrameBytes;
            lock (gate)
            {
                if (!Welcomed()) return false;
                maxFrameBytes = welcome.MaxFrameBytes;
            }
            var body = SessionWire.Send(packet, payload);
            if (body.Length > maxFrameBytes)
                throw new ArgumentException("send '" + packet + "' is " + body.Length +
                    " bytes, past the server's maxFrameBytes " + maxFrameBytes + "; nothing was sent");
            return Submit(body, null);
        }

        /// <summary>
        /// Ends the session: sends a Close with <paramref name="code"/> and <paramref name="reason"/> (text
        /// for people), then closes the connection. Completes once it is closed (within about 2 s
        /// whatever the server does); Closed is raised with By = Client. Requests still waiting fail
        /// (<c>Closed</c>). Safe to call at any time, more than once. While the session is away after a
        /// drop there is no connection to say it on: the session ends here at once (Code null), and on the
        /// server when its grace runs out.
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
            Link current;
            State was;
            lock (gate)
            {
                was = state;
                current = link;
                var live = current != null && current.Started && !current.Sealed;
                if ((state == State.Connecting || state == State.Open || state == State.Away) && live)
                {
                    state = State.Closing;
                    current.CloseFrame = body;
                    current.Outbox.Enqueue(body);
                    current.Sealed = true;
                }
                else
                {
                    current = null;
                }
            }
            if (current == null)
            {
                // Not connected (yet, or while away), or another close is under way: this one ends with it.
                if (was != State.Closing) Finish(new SessionClosed(info.By, was == State.Away ? (int?)null : info.Code, info.Reason, info.Detail));
                await ended.Task.ConfigureAwait(false);
                return;
            }
            current.Signal.Release();
            // The Close goes out behind what was queued; then the connection ends, politely: a FIN (or a
            // WebSocket close), and the server closes its side (docs/sessions-wire.md#a-sessions-life).
            await Task.WhenAny(current.Writing, Task.Delay(1000)).ConfigureAwait(false);
            using (var bound = new CancellationTokenSource(500))
                await current.Transport.CloseAsync(bound.Token).ConfigureAwait(false);
            await Task.WhenAny(current.Receiving, Task.Delay(500)).ConfigureAwait(false);
            Finish(info);
        }

        // Under gate: whether requests and sends are taken (sent now, or kept for the resume when away).
        private bool Welcomed()
        {
            return state == State.Open || state == State.Away;
        }

        // A Request or Send, in call order: on the connection when there is one and, on a session that may
        // be resumed, numbered and kept until the server is known to have taken it
        // (docs/sessions-wire.md#counting-and-acks). False when the session is over.
        private bool Submit(byte[] body, Pending request)
        {
            Link current = null;
            lock (gate)
            {
                if (!Welcomed() || (state == State.Open && link.Sealed)) return false;
                if (resumable)
                {
                    var entry = new Kept(++numbered, body, request);
                    kept.AddLast(entry);
                    if (request != null)
                    {
                        request.Number = entry.Number;
                    }
                    else
                    {
                        keptSendBytes += body.Length;
                        LetGoOfOldSends();
                    }
                }
                if (state == State.Open)
                {
                    current = link;
                    current.Outbox.Enqueue(body);
                }
            }
            if (current != null) current.Signal.Release();
            return true;
        }

        // Under gate. Past ResendBufferBytes the oldest Sends are let go: the server has most likely taken
        // them long since, and a resume that shows it did not counts them lost. Requests stay (at most
        // MaxInFlight wait for answers).
        private void LetGoOfOldSends()
        {
            while (keptSendBytes > options.ResendBufferBytes)
            {
                var node = kept.First;
                while (node != null && node.Value.Request != null) node = node.Next;
                if (node == null) return;
                keptSendBytes -= node.Value.Body.Length;
                forgottenUpTo = node.Value.Number;
                kept.Remove(node);
            }
        }

        // Under gate: the server took every Request and Send numbered up to `upTo` (an answer says so for
        // its request and all before it; a resumed Welcome gives the count).
        private void Confirm(long upTo)
        {
            while (kept.First != null && kept.First.Value.Number <= upTo)
            {
                if (kept.First.Value.Request == null) keptSendBytes -= kept.First.Value.Body.Length;
                kept.RemoveFirst();
            }
        }

        private void Start(Link started)
        {
            var now = clock.ElapsedMilliseconds;
            Interlocked.Exchange(ref started.LastHeardMs, now);
            Interlocked.Exchange(ref started.LastSentMs, now);
            lock (gate) started.Started = true;
            started.Receiving = Task.Run(() => ReceiveLoop(started));
            started.Writing = Task.Run(() => WriteLoop(started));
        }

        private async Task ReceiveLoop(Link from)
        {
            try
            {
                while (true)
                {
                    var body = await from.Transport.ReceiveAsync(CancellationToken.None).ConfigureAwait(false);
                    if (body == null)
                    {
                        LinkLost(from, "the server ended the connection");
                        return;
                    }
                    Interlocked.Exchange(ref from.LastHeardMs, clock.ElapsedMilliseconds);
                    lock (receiveGate)
                    {
                        bool gone;
                        bool closing;
                        lock (gate)
                        {
                            gone = from.Lost;
                            closing = state == State.Closing || state == State.Closed;
                        }
                        if (gone) return;
                        if (closing) continue;
                        if (!Handle(from, body)) return;
                    }
                }
            }
            catch (SessionTransportException e)
            {
                ProtocolFault(from, e.Message);
            }
            catch (Exception e)
            {
                LinkLost(from, e.Message);
            }
        }

        // One server frame, under receiveGate: false when the session (or this connection) is over.
        private bool Handle(Link from, byte[] body)
        {
            List<object> items;
            try
            {
                items = MsgPack.Decode(body) as List<object>;
            }
            catch (MsgPackException e)
            {
                return ProtocolFault(from, "a frame that is not msgpack: " + e.Message);
            }
            if (items == null || items.Count == 0 || !(items[0] is long))
                return ProtocolFault(from, "a frame that is not an array starting with its kind");
            var kind = (long)items[0];
            bool open;
            lock (gate) open = state == State.Open && from.Welcomed;
            switch (kind)
            {
                case (long)FrameKind.Welcome:
                    return WelcomeOn(from, items);
                case (long)FrameKind.Reply:
                    if (!open || items.Count < 3 || !IsCorrelation(items[1])) return ProtocolFault(from, "a malformed or early Reply");
                    Count(from);
                    Answer((uint)(long)items[1], items[2], null);
                    return true;
                case (long)FrameKind.Error:
                    if (!open || items.Count < 4 || !IsCorrelation(items[1]) || !(items[2] is string))
                        return ProtocolFault(from, "a malformed or early Error");
                    Count(from);
                    var code = (string)items[2];
                    var message = items[3] as string ?? "";
                    var details = items.Count > 4 ? items[4] : null;
                    Answer((uint)(long)items[1], null, Failure(SessionErrorKind.Remote, code, message, details, null));
                    return true;
                case (long)FrameKind.Push:
                    if (!open || items.Count < 3 || !(items[1] is string)) return ProtocolFault(from, "a malformed or early Push");
                    Count(from);
                    RaisePush((string)items[1], items[2]);
                    return true;
                case (long)FrameKind.Ping:
                    EnqueueOn(from, SessionWire.Pong);
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

        // A Reply, Error or Push arrived: counted over the session's life, and on a resumable session
        // acknowledged by the writer, which sends one Ack for all that arrived since its last
        // (docs/sessions-wire.md#counting-and-acks).
        private void Count(Link from)
        {
            Interlocked.Increment(ref received);
            if (resumable && Interlocked.Exchange(ref from.AckDue, 1) == 0) from.Signal.Release();
        }

        private bool WelcomeOn(Link from, List<object> items)
        {
            State now;
            lock (gate) now = state;
            if (from.Welcomed || (now != State.Connecting && now != State.Away)) return ProtocolFault(from, "a Welcome out of place");
            if (items.Count < 6 || !(items[1] is long) || !(items[2] is string) ||
                !IsPositiveInt(items[3]) || !IsPositiveInt(items[4]) || !IsPositiveInt(items[5]))
                return ProtocolFault(from, "a malformed Welcome");
            var w = new SessionWelcome
            {
                Version = (int)(long)items[1],
                SessionId = (string)items[2],
                HeartbeatMs = (int)(long)items[3],
                MaxFrameBytes = (int)(long)items[4],
                MaxInFlight = (int)(long)items[5],
            };
            // Resume's items (docs/sessions-wire.md#asking): only when this client asked; a Welcome
            // without a token means a drop ends the session.
            var token = items.Count > 6 ? items[6] as string : null;
            if (options.Resume && !string.IsNullOrEmpty(token) && items.Count > 7 && IsPositiveInt(items[7]))
            {
                w.Resumable = true;
                w.ResumeGraceMs = (int)(long)items[7];
            }
            return now == State.Connecting ? Opened(from, w, token) : TakenBack(from, w, token, items);
        }

        private bool Opened(Link from, SessionWelcome w, string token)
        {
            lock (gate)
            {
                if (state != State.Connecting) return false;
                welcome = w;
                resumable = w.Resumable;
                resumeToken = w.Resumable ? token : null;
                inFlight = new SemaphoreSlim(w.MaxInFlight, w.MaxInFlight);
                state = State.Open;
                from.Welcomed = true;
            }
            Task.Run(() => Heartbeat(from, w.HeartbeatMs));
            from.Settled.TrySetResult(true);
            welcomed.TrySetResult(w);
            return true;
        }

        // The resumed Welcome (docs/sessions-wire.md#resuming): what the server says it took of this
        // client's Requests and Sends is never sent again; the rest is, in order, before anything new
        // (docs/sessions-wire.md#requests-and-sends-the-server-never-got).
        private bool TakenBack(Link from, SessionWelcome w, string token, List<object> items)
        {
            var taken = items.Count > 8 && items[8] is long ? (long)items[8] : -1;
            int resent = 0;
            int gaveUp = 0;
            long lost = 0;
            int tries;
            SemaphoreSlim slots;
            string fault = null;
            lock (gate)
            {
                if (state != State.Away || from != link) return false;
                if (!w.Resumable || w.SessionId != welcome.SessionId)
                    fault = "a resumed Welcome for another session, or without a resume token";
                else if (taken < 0 || taken > numbered)
                    fault = "a resumed Welcome that counts " + taken + " frames taken of " + numbered + " sent";
                if (fault == null)
                {
                    // Taken: their answers come, or came, on this session.
                    Confirm(taken);
                    // Sends let go past ResendBufferBytes that the server never got are lost; every frame
                    // still kept at or below the last one let go is a Request.
                    if (forgottenUpTo > taken)
                    {
                        lost = forgottenUpTo - taken;
                        foreach (var k in kept)
                            if (k.Number <= forgottenUpTo) lost--;
                    }
                    forgottenUpTo = 0;
                    numbered = taken;
                    var node = kept.First;
                    while (node != null)
                    {
                        var next = node.Next;
                        var request = node.Value.Request;
                        if (request != null && request.Result.Task.IsCompleted)
                        {
                            // It gave up (deadline, cancel) before the server ever got it: not run late.
                            kept.Remove(node);
                            pending.Remove(request.Correlation);
                            gaveUp++;
                        }
                        else
                        {
                            node.Value.Number = ++numbered;
                            if (request != null) request.Number = numbered;
                            from.Outbox.Enqueue(node.Value.Body);
                            resent++;
                        }
                        node = next;
                    }
                    welcome = w;
                    resumeToken = token;
                    state = State.Open;
                    from.Welcomed = true;
                }
                slots = inFlight;
                tries = attempts;
                attempts = 0;
            }
            if (fault != null) return ProtocolFault(from, fault);
            if (lost > 0) Interlocked.Add(ref sendsLost, lost);
            if (gaveUp > 0) slots.Release(gaveUp);
            if (resent > 0) from.Signal.Release(resent);
            Task.Run(() => Heartbeat(from, w.HeartbeatMs));
            RaiseResumed(new SessionResumed(w, resent, lost, tries));
            from.Settled.TrySetResult(true);
            return true;
        }

        // A connection ended without a Close frame (reset, closed under the client, failed to send, or
        // silent for 3 heartbeats). A resumable open session goes away and the client resumes it
        // (docs/sessions-wire.md#what-counts-as-a-drop); a resume's own connection lost before its
        // Welcome is tried again; any other session ends. `unlessWelcomed`: only if it never got a Welcome.
        private void LinkLost(Link lostLink, string why, bool unlessWelcomed = false)
        {
            lock (receiveGate)
            {
                var away = false;
                var end = false;
                var graceMs = 0;
                lock (gate)
                {
                    if (lostLink.Lost || (unlessWelcomed && lostLink.Welcomed)) return;
                    // A close under way ends it with its own reason.
                    if (state == State.Closing || state == State.Closed) return;
                    lostLink.Lost = true;
                    lostLink.Sealed = true;
                    lostLink.LostWhy = why;
                    lostLink.Outbox.Clear();
                    if (lostLink == link && state == State.Open && resumable)
                    {
                        state = State.Away;
                        graceMs = welcome.ResumeGraceMs;
                        awayUntilMs = clock.ElapsedMilliseconds + graceMs;
                        away = true;
                    }
                    else if (lostLink == link && state != State.Away)
                    {
                        end = true;
                    }
                }
                lostLink.Stop.Cancel();
                lostLink.Transport.Dispose();
                lostLink.Settled.TrySetResult(false);
                if (away)
                {
                    RaiseDropped(new SessionDropped(why, graceMs));
                    Task.Run(() => ResumeLoop());
                }
                else if (end)
                {
                    Finish(new SessionClosed(SessionClosedBy.Connection, null, SessionWire.Lost, why));
                }
            }
        }

        // Connects again until the session is back, the server says no (a Close: resumeRefused), or the
        // Welcome's grace has passed since the drop (resumeExpired): the server keeps the session no
        // longer (docs/sessions-wire.md#what-counts-as-a-drop).
        private async Task ResumeLoop()
        {
            var delayMs = FirstRetryMs;
            var lastWhy = "no try yet";
            while (true)
            {
                long untilMs;
                int graceMs;
                lock (gate)
                {
                    if (state != State.Away) return;
                    untilMs = awayUntilMs;
                    graceMs = welcome.ResumeGraceMs;
                }
                var left = untilMs - clock.ElapsedMilliseconds;
                if (left <= 0)
                {
                    Finish(new SessionClosed(SessionClosedBy.Connection, null, "resumeExpired",
                        "not resumed within the server's grace of " + graceMs + " ms; the last try: " + lastWhy));
                    return;
                }
                var why = await TryResume((int)Math.Min(left, options.ConnectTimeoutMs)).ConfigureAwait(false);
                if (why == null) return;
                lastWhy = why;
                left = untilMs - clock.ElapsedMilliseconds;
                if (left <= 0) continue;
                int wait;
                lock (jitter) wait = delayMs + jitter.Next(delayMs / 2 + 1);
                try
                {
                    await Task.Delay((int)Math.Min(wait, left), stop.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
                delayMs = Math.Min(delayMs * 2, LastRetryMs);
            }
        }

        // One resume on a new connection (docs/sessions-wire.md#resuming): null once it is welcomed (or
        // the session ended meanwhile), else why it failed. A connection lost before its Welcome is tried
        // again with the same token: if the server never read that Hello the token is still good, and if
        // it did, the answer is a Close 1014, never a second session.
        private async Task<string> TryResume(int timeoutMs)
        {
            Link next;
            try
            {
                next = new Link(transports());
            }
            catch (Exception e)
            {
                return "no transport: " + e.Message;
            }
            lock (gate)
            {
                if (state != State.Away)
                {
                    next.Transport.Dispose();
                    return null;
                }
                link = next;
                attempts++;
            }
            using (var deadline = CancellationTokenSource.CreateLinkedTokenSource(stop.Token))
            {
                deadline.CancelAfter(timeoutMs);
                try
                {
                    await next.Transport.ConnectAsync(deadline.Token).ConfigureAwait(false);
                }
                catch (Exception e)
                {
                    var failed = deadline.IsCancellationRequested ? "no connection within " + timeoutMs + " ms" : "could not connect: " + e.Message;
                    LinkLost(next, failed);
                    return failed;
                }
                byte[] hello;
                lock (receiveGate)
                {
                    lock (gate)
                    {
                        if (state != State.Away || next != link) return null;
                        hello = SessionWire.ResumeHello(welcome.SessionId, resumeToken, Interlocked.Read(ref received));
                    }
                }
                Start(next);
                EnqueueOn(next, hello);
                bool welcomedHere;
                using (deadline.Token.Register(() => next.Settled.TrySetResult(false)))
                    welcomedHere = await next.Settled.Task.ConfigureAwait(false);
                if (welcomedHere) return null;
                LinkLost(next, "no Welcome within " + timeoutMs + " ms", true);
                lock (gate) return next.Welcomed ? null : next.LostWhy;
            }
        }

        // Heartbeats (docs/sessions-wire.md#heartbeats), per connection: a Ping after heartbeatMs with
        // nothing sent; the connection counts as dead after 3 × heartbeatMs with nothing heard.
        private async Task Heartbeat(Link beat, int heartbeatMs)
        {
            var deadAfter = 3L * heartbeatMs;
            try
            {
                while (!beat.Stop.IsCancellationRequested)
                {
                    var now = clock.ElapsedMilliseconds;
                    var silent = now - Interlocked.Read(ref beat.LastHeardMs);
                    if (silent >= deadAfter)
                    {
                        LinkLost(beat, "nothing heard for " + silent + " ms (3 heartbeats)");
                        return;
                    }
                    var idle = now - Interlocked.Read(ref beat.LastSentMs);
                    if (idle >= heartbeatMs && EnqueueOn(beat, SessionWire.Ping))
                    {
                        Interlocked.Increment(ref pingsSent);
                        Interlocked.Exchange(ref beat.LastSentMs, now);
                        idle = 0;
                    }
                    var wait = Math.Max(1, Math.Min(heartbeatMs - idle, deadAfter - silent));
                    await Task.Delay((int)wait, beat.Stop.Token).ConfigureAwait(false);
                }
            }
            catch (OperationCanceledException)
            {
                // The connection or the session ended.
            }
        }

        // A connection's one writer: frames leave in the order they were queued (requests and sends in
        // call order), an Ack first when frames arrived since the last one (and so before each Ping).
        private async Task WriteLoop(Link to)
        {
            try
            {
                while (true)
                {
                    await to.Signal.WaitAsync(to.Stop.Token).ConfigureAwait(false);
                    if (Interlocked.Exchange(ref to.AckDue, 0) == 1)
                    {
                        await to.Transport.SendAsync(SessionWire.Ack(Interlocked.Read(ref received)), to.Stop.Token).ConfigureAwait(false);
                        Interlocked.Exchange(ref to.LastSentMs, clock.ElapsedMilliseconds);
                    }
                    byte[] body;
                    lock (gate)
                    {
                        if (to.Outbox.Count == 0) continue;
                        body = to.Outbox.Dequeue();
                    }
                    await to.Transport.SendAsync(body, to.Stop.Token).ConfigureAwait(false);
                    Interlocked.Exchange(ref to.LastSentMs, clock.ElapsedMilliseconds);
                    if (ReferenceEquals(body, to.CloseFrame)) return;
                }
            }
            catch (OperationCanceledException)
            {
                // The connection or the session ended.
            }
            catch (Exception e)
            {
                LinkLost(to, "send failed: " + e.Message);
            }
        }

        private bool EnqueueOn(Link to, byte[] body)
        {
            lock (gate)
            {
                if (to.Sealed) return false;
                to.Outbox.Enqueue(body);
            }
            to.Signal.Release();
            return true;
        }

        // The server broke the wire: tell it (Close 1002, best effort) and end the session.
        private bool ProtocolFault(Link from, string why)
        {
            lock (gate)
            {
                if (from.Lost || from != link) return false;
            }
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
            SemaphoreSlim slots;
            lock (gate)
            {
                if (!pending.TryGetValue(correlation, out request))
                {
                    Interlocked.Increment(ref framesIgnored);
                    return;
                }
                pending.Remove(correlation);
                if (request.Number > 0) Confirm(request.Number);
                slots = inFlight;
            }
            slots.Release();
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

        // Under gate. Correlations 1..4294967295, wrapping to 1, skipping any still waiting for its answer.
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
            Link current;
            lock (gate)
            {
                if (state == State.Closed) return;
                state = State.Closed;
                closed = info;
                current = link;
                if (current != null)
                {
                    current.Lost = true;
                    current.Sealed = true;
                    current.Outbox.Clear();
                }
                waiting = new List<Pending>(pending.Values);
                pending.Clear();
                kept.Clear();
                keptSendBytes = 0;
            }
            var error = Failure(SessionErrorKind.Closed, info.ToString(), info);
            foreach (var request in waiting) request.Result.TrySetException(error);
            welcomed.TrySetException(error);
            stop.Cancel();
            if (current != null)
            {
                current.Stop.Cancel();
                current.Transport.Dispose();
                current.Settled.TrySetResult(false);
            }
            RaiseClosed(info);
            ended.TrySetResult(true);
        }

        private void RaisePush(string packet, object payload)
        {
            Raise(PushReceived, listener => listener(packet, payload));
        }

        private void RaiseDropped(SessionDropped info)
        {
            Raise(Dropped, listener => listener(info));
        }

        private void RaiseResumed(SessionResumed info)
        {
            Raise(Resumed, listener => listener(info));
        }

        // One event at a time, none after Closed; a listener that throws is reported, and the session goes on.
        private void Raise<T>(T listener, Action<T> call) where T : class
        {
            lock (eventGate)
            {
                if (closedRaised || listener == null) return;
                try { call(listener); }
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
