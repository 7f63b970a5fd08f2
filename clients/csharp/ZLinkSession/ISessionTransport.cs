using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Session
{
    /// <summary>
    /// What carries a session's frame bodies: a TCP (or TLS) stream with the wire's 4-byte length prefix,
    /// a WebSocket with one binary message per body, or anything else that keeps bodies whole and in
    /// order (a Unity WebGL build plugs in the browser's WebSocket through a .jslib here).
    /// The client calls <see cref="SendAsync"/> from one task at a time and <see cref="ReceiveAsync"/>
    /// from another; the two may run at once.
    /// </summary>
    public interface ISessionTransport : IDisposable
    {
        /// <summary>Opens the connection. Throws (any exception) when it cannot.</summary>
        Task ConnectAsync(CancellationToken cancellation);

        /// <summary>Sends one frame body, whole. Throws when the connection is broken.</summary>
        Task SendAsync(byte[] body, CancellationToken cancellation);

        /// <summary>
        /// The next frame body the server sent, whole; <c>null</c> when the server ended the connection
        /// cleanly. Throws <see cref="SessionTransportException"/> for broken framing (a length of 0, one
        /// past <see cref="SessionWire.MaxServerFrameBytes"/>, a WebSocket text message) and any
        /// exception when the connection breaks.
        /// </summary>
        Task<byte[]> ReceiveAsync(CancellationToken cancellation);

        /// <summary>
        /// Says politely that the client sends nothing more (a TCP FIN, a WebSocket close message), within
        /// the cancellation's time; never throws. The server then ends the connection, which
        /// <see cref="ReceiveAsync"/> returns as <c>null</c>. <see cref="IDisposable.Dispose"/> ends it at once.
        /// </summary>
        Task CloseAsync(CancellationToken cancellation);
    }

    /// <summary>The server broke the transport's framing: the connection cannot go on.</summary>
    public sealed class SessionTransportException : Exception
    {
        public SessionTransportException(string message) : base(message) { }
    }
}
