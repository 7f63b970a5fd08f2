using System;
using System.Collections.Generic;

namespace ZLink.Session
{
    /// <summary>Options of a <see cref="ZLinkSessionClient"/>.</summary>
    public sealed class ZLinkSessionOptions
    {
        /// <summary>Sent in the Hello (any value the codec writes): what the server's application checks. Default none (nil).</summary>
        public object Token;

        /// <summary>How long connecting and the Welcome may take, in ms. Default 10000.</summary>
        public int ConnectTimeoutMs = 10000;

        /// <summary>A request's deadline, in ms, unless the request gives its own. Default 10000.</summary>
        public int RequestTimeoutMs = 10000;

        /// <summary>TLS for a <c>tls://</c> endpoint given to <see cref="ZLinkSessionClient.ForEndpoint"/>. Default: the system's trust store.</summary>
        public SessionTlsOptions Tls;

        /// <summary>
        /// Ask for resume (docs/sessions-wire.md#resume-after-a-drop): when the connection drops, the
        /// client connects again within the server's grace and takes its session back, with nothing
        /// lost and nothing run twice (<see cref="ZLinkSessionClient.Dropped"/>,
        /// <see cref="ZLinkSessionClient.Resumed"/>). Needs a client that can open a new connection:
        /// <see cref="ZLinkSessionClient.ForEndpoint"/>, or a transport factory. Default false.
        /// </summary>
        public bool Resume;

        /// <summary>
        /// With <see cref="Resume"/>: the most bytes of Sends kept until the server is known to have taken
        /// them, to send again after a resume. Past it the oldest are let go; one the server turns out
        /// never to have got is lost (counted in <see cref="ZLinkSessionClient.SendsLost"/>). Requests are
        /// always kept until answered (at most MaxInFlight of them). Default 1048576.
        /// </summary>
        public int ResendBufferBytes = 1024 * 1024;
    }

    /// <summary>What the server's Welcome announced (docs/sessions-wire.md#bodies).</summary>
    public sealed class SessionWelcome
    {
        /// <summary>The wire version, 1.</summary>
        public int Version { get; internal set; }

        /// <summary>The session's id: opaque, for logs; never parse it.</summary>
        public string SessionId { get; internal set; }

        /// <summary>How often the client pings when it has sent nothing else, in ms (this client does it).</summary>
        public int HeartbeatMs { get; internal set; }

        /// <summary>The longest frame body the server takes from this client, in bytes.</summary>
        public int MaxFrameBytes { get; internal set; }

        /// <summary>The most requests without an answer at once (this client holds further requests back).</summary>
        public int MaxInFlight { get; internal set; }

        /// <summary>
        /// Whether a drop can be survived: the client asked for resume and the server offers it (its
        /// Welcome carried a resume token). The token itself stays inside the client: it is worth the session.
        /// </summary>
        public bool Resumable { get; internal set; }

        /// <summary>How long the server keeps the session after a drop, in ms; 0 when it is not <see cref="Resumable"/>.</summary>
        public int ResumeGraceMs { get; internal set; }
    }

    /// <summary>A resumable session lost its connection: the client is resuming it (raised once per drop).</summary>
    public sealed class SessionDropped
    {
        internal SessionDropped(string detail, int resumeGraceMs)
        {
            Detail = detail ?? "";
            ResumeGraceMs = resumeGraceMs;
        }

        /// <summary>What happened to the connection (reset, ended, nothing heard for 3 heartbeats).</summary>
        public string Detail { get; private set; }

        /// <summary>How long the client keeps trying, in ms: past it the session ends <c>resumeExpired</c>.</summary>
        public int ResumeGraceMs { get; private set; }

        public override string ToString()
        {
            return "session dropped (" + Detail + "); resuming within " + ResumeGraceMs + " ms";
        }
    }

    /// <summary>A dropped session is back on a new connection: the same session, nothing lost.</summary>
    public sealed class SessionResumed
    {
        internal SessionResumed(SessionWelcome welcome, int resent, long sendsLost, int attempts)
        {
            Welcome = welcome;
            Resent = resent;
            SendsLost = sendsLost;
            Attempts = attempts;
        }

        /// <summary>The new Welcome: the same SessionId (its other values may differ on another endpoint).</summary>
        public SessionWelcome Welcome { get; private set; }

        /// <summary>Requests and Sends the server never got before the drop, sent again now, in order.</summary>
        public int Resent { get; private set; }

        /// <summary>Sends the server never got that the client no longer held (past ResendBufferBytes): lost.</summary>
        public long SendsLost { get; private set; }

        /// <summary>Connections it took, this one included.</summary>
        public int Attempts { get; private set; }
    }

    /// <summary>Who ended a session.</summary>
    public enum SessionClosedBy
    {
        /// <summary>This client: <see cref="ZLinkSessionClient.CloseAsync"/> or Dispose.</summary>
        Client,

        /// <summary>The server, with a Close frame.</summary>
        Server,

        /// <summary>
        /// No Close: the connection dropped or failed, nothing was heard for 3 heartbeats, the server broke
        /// the wire, or a resumable session was not resumed within its grace.
        /// </summary>
        Connection,
    }

    /// <summary>How a session (or an attempt at one) ended.</summary>
    public sealed class SessionClosed
    {
        internal SessionClosed(SessionClosedBy by, int? code, string reason, string detail)
        {
            By = by;
            Code = code;
            Reason = reason;
            Detail = detail ?? "";
        }

        public SessionClosedBy By { get; private set; }

        /// <summary>The Close frame's code (sent or received); null when there was none.</summary>
        public int? Code { get; private set; }

        /// <summary>
        /// The code's name on the wire (<c>"normal"</c>, <c>"goingAway"</c>, <c>"refused"</c>, ...:
        /// docs/sessions-wire.md#close-codes); <c>"lost"</c> for a dropped connection or a code this
        /// version does not know; <c>"protocolError"</c> when the server broke the wire. With resume:
        /// <c>"resumeRefused"</c> (the server's 1014: it no longer has the session) or
        /// <c>"resumeExpired"</c> (no resume within the grace; the client's own verdict, no Code).
        /// </summary>
        public string Reason { get; private set; }

        /// <summary>The Close frame's text, or what happened to the connection.</summary>
        public string Detail { get; private set; }

        /// <summary>False after a close that would repeat with the same frames or token (1002, 1003, 1005, 1006).</summary>
        public bool MayReconnect
        {
            get { return !(By == SessionClosedBy.Server && Code.HasValue && SessionWire.IsFinal(Code.Value)); }
        }

        public override string ToString()
        {
            return "session closed by " + By + ": " + Reason + (Code.HasValue ? " (" + Code + ")" : "") +
                (Detail.Length > 0 ? ": " + Detail : "");
        }
    }

    /// <summary>How a request (or a connect) failed.</summary>
    public enum SessionErrorKind
    {
        /// <summary>The server answered with an Error frame: <see cref="ZLinkSessionException.Code"/> is its code.</summary>
        Remote,

        /// <summary>No answer within the deadline (the request may still run on the server).</summary>
        Timeout,

        /// <summary>The caller's CancellationToken was cancelled.</summary>
        Cancelled,

        /// <summary>The session ended first: <see cref="ZLinkSessionException.Closed"/> says how.</summary>
        Closed,

        /// <summary>No session is open (not connected yet, or already closed).</summary>
        NotOpen,
    }

    /// <summary>A request's or a connect's failure.</summary>
    public sealed class ZLinkSessionException : Exception
    {
        internal ZLinkSessionException(SessionErrorKind kind, string code, string message, object details, SessionClosed closed)
            : base(message)
        {
            Kind = kind;
            Code = code;
            Details = details;
            Closed = closed;
        }

        public SessionErrorKind Kind { get; private set; }

        /// <summary>
        /// For <see cref="SessionErrorKind.Remote"/>, the Error frame's code (<c>NoHandler</c>,
        /// <c>HandlerError</c>, <c>Unavailable</c>, or the application's own: docs/sessions-wire.md#errors);
        /// otherwise the kind's name.
        /// </summary>
        public string Code { get; private set; }

        /// <summary>The Error frame's details (a validation failure's body, say), or null.</summary>
        public object Details { get; private set; }

        /// <summary>For <see cref="SessionErrorKind.Closed"/>, how the session ended.</summary>
        public SessionClosed Closed { get; private set; }
    }
}
