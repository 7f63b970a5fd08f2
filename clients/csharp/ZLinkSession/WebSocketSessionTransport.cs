using System;
using System.IO;
using System.Net.WebSockets;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Session
{
    /// <summary>
    /// The session wire over a WebSocket (<c>ws://</c> or <c>wss://</c>): one binary message per frame
    /// body, no length prefix. Text messages are not part of the wire: one from the server breaks the
    /// connection. Runs on System.Net.WebSockets.ClientWebSocket (Unity's standalone, mobile and
    /// console players; a WebGL build has no ClientWebSocket and needs a transport of its own).
    /// </summary>
    public sealed class WebSocketSessionTransport : ISessionTransport
    {
        private readonly Uri uri;
        private readonly ClientWebSocket socket = new ClientWebSocket();
        private readonly byte[] chunk = new byte[16 * 1024];

        /// <param name="uri">A <c>ws://</c> or <c>wss://</c> URI with the listener's path.</param>
        public WebSocketSessionTransport(Uri uri)
        {
            if (uri == null || (uri.Scheme != "ws" && uri.Scheme != "wss"))
                throw new ArgumentException("uri must be ws://host:port/path or wss://host:port/path", "uri");
            this.uri = uri;
        }

        /// <summary>The socket, to set options (headers, proxy, sub-protocols) before connecting.</summary>
        public ClientWebSocketOptions Options
        {
            get { return socket.Options; }
        }

        public Task ConnectAsync(CancellationToken cancellation)
        {
            return socket.ConnectAsync(uri, cancellation);
        }

        public Task SendAsync(byte[] body, CancellationToken cancellation)
        {
            return socket.SendAsync(new ArraySegment<byte>(body), WebSocketMessageType.Binary, true, cancellation);
        }

        public async Task<byte[]> ReceiveAsync(CancellationToken cancellation)
        {
            MemoryStream message = null;
            while (true)
            {
                WebSocketReceiveResult result;
                try
                {
                    result = await socket.ReceiveAsync(new ArraySegment<byte>(chunk), cancellation).ConfigureAwait(false);
                }
                catch (WebSocketException) when (socket.State == WebSocketState.CloseReceived || socket.State == WebSocketState.Closed)
                {
                    return null;
                }
                if (result.MessageType == WebSocketMessageType.Close)
                {
                    // The server's close handshake: answer it, then the connection is over (a session
                    // Close frame, when there was one, came before it as a binary message).
                    await Finish(cancellation).ConfigureAwait(false);
                    return null;
                }
                if (result.MessageType == WebSocketMessageType.Text)
                    throw new SessionTransportException("a WebSocket text message; the session wire is binary only");
                if (message == null) message = new MemoryStream();
                if (message.Length + result.Count > SessionWire.MaxServerFrameBytes)
                    throw new SessionTransportException("a WebSocket message past " + SessionWire.MaxServerFrameBytes + " bytes");
                message.Write(chunk, 0, result.Count);
                if (result.EndOfMessage)
                {
                    if (message.Length == 0) throw new SessionTransportException("an empty WebSocket message");
                    return message.ToArray();
                }
            }
        }

        private async Task Finish(CancellationToken cancellation)
        {
            try
            {
                if (socket.State == WebSocketState.CloseReceived)
                    await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "", cancellation).ConfigureAwait(false);
            }
            catch (Exception)
            {
                // Broken already: nothing to answer.
            }
        }

        public async Task CloseAsync(CancellationToken cancellation)
        {
            try
            {
                if (socket.State == WebSocketState.Open)
                    await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "", cancellation).ConfigureAwait(false);
            }
            catch (Exception)
            {
                // Broken already: the client's Dispose ends it all the same.
            }
        }

        public void Dispose()
        {
            socket.Abort();
            socket.Dispose();
        }
    }
}
