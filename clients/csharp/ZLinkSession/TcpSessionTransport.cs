using System;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Session
{
    /// <summary>TLS for <see cref="TcpSessionTransport"/> (a <c>tls://</c> endpoint).</summary>
    public sealed class SessionTlsOptions
    {
        /// <summary>The name the server's certificate must carry. Default: the host connected to.</summary>
        public string TargetHost;

        /// <summary>
        /// A CA to trust besides (not instead of) nothing: when set, the server's certificate must chain to
        /// exactly this CA and carry <see cref="TargetHost"/> (a private or test CA). When null, the
        /// system's trust store decides.
        /// </summary>
        public X509Certificate2 TrustedCa;

        /// <summary>Your own check instead of both of the above, when set.</summary>
        public RemoteCertificateValidationCallback Validate;

        /// <summary>The TLS versions allowed. Default TLS 1.2 (what Unity's Mono and .NET Framework 4.x have).</summary>
        public SslProtocols Protocols = SslProtocols.Tls12;
    }

    /// <summary>
    /// The session wire over TCP, or TLS over TCP: each frame body behind a 4-byte big-endian length
    /// (docs/sessions-wire.md#framing).
    /// </summary>
    public sealed class TcpSessionTransport : ISessionTransport
    {
        private readonly string host;
        private readonly int port;
        private readonly SessionTlsOptions tls;
        private Socket socket;
        private Stream stream;
        private readonly byte[] prefix = new byte[4];

        /// <param name="host">A name or an address (IPv4 or IPv6; every address of a name is tried in turn).</param>
        /// <param name="port">1..65535.</param>
        /// <param name="tls">TLS options, or null for plain TCP.</param>
        public TcpSessionTransport(string host, int port, SessionTlsOptions tls = null)
        {
            if (string.IsNullOrEmpty(host)) throw new ArgumentException("host must be a name or an address", "host");
            if (port < 1 || port > 65535) throw new ArgumentException("port must be 1..65535, got " + port, "port");
            this.host = host;
            this.port = port;
            this.tls = tls;
        }

        public async Task ConnectAsync(CancellationToken cancellation)
        {
            IPAddress literal;
            var addresses = IPAddress.TryParse(host, out literal)
                ? new[] { literal }
                : await Dns.GetHostAddressesAsync(host).ConfigureAwait(false);
            Exception last = new SocketException((int)SocketError.HostNotFound);
            foreach (var address in addresses)
            {
                cancellation.ThrowIfCancellationRequested();
                var s = new Socket(address.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
                try
                {
                    using (cancellation.Register(() => s.Dispose()))
                        await Task.Factory.FromAsync(s.BeginConnect, s.EndConnect, new IPEndPoint(address, port), null)
                            .ConfigureAwait(false);
                    socket = s;
                    break;
                }
                catch (Exception e)
                {
                    s.Dispose();
                    last = e;
                }
            }
            cancellation.ThrowIfCancellationRequested();
            if (socket == null) throw last;
            Stream network = new NetworkStream(socket, true);
            if (tls != null)
            {
                var ssl = new SslStream(network, false, tls.Validate ?? CheckCertificate);
                using (cancellation.Register(() => ssl.Dispose()))
                    await ssl.AuthenticateAsClientAsync(tls.TargetHost ?? host, null, tls.Protocols, false)
                        .ConfigureAwait(false);
                network = ssl;
            }
            stream = network;
        }

        private bool CheckCertificate(object sender, X509Certificate certificate, X509Chain chain, SslPolicyErrors errors)
        {
            if (tls.TrustedCa == null) return errors == SslPolicyErrors.None;
            if (certificate == null) return false;
            if ((errors & (SslPolicyErrors.RemoteCertificateNameMismatch | SslPolicyErrors.RemoteCertificateNotAvailable)) != 0)
                return false;
            var leaf = new X509Certificate2(certificate);
            // Mono reports only the chain's fault when the chain fails, not the name's: check the name here.
            if (!NameMatches(leaf, tls.TargetHost ?? host)) return false;
            using (var own = new X509Chain())
            {
                own.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
                own.ChainPolicy.VerificationFlags = X509VerificationFlags.AllowUnknownCertificateAuthority;
                own.ChainPolicy.ExtraStore.Add(tls.TrustedCa);
                if (!own.Build(leaf)) return false;
                // An unknown root is allowed (it is the CA given), nothing else: a partial chain, a bad
                // signature or an expired certificate is refused.
                foreach (var status in own.ChainStatus)
                    if (status.Status != X509ChainStatusFlags.NoError && status.Status != X509ChainStatusFlags.UntrustedRoot)
                        return false;
                var n = own.ChainElements.Count;
                return n >= 2 && own.ChainElements[n - 1].Certificate.Thumbprint == tls.TrustedCa.Thumbprint;
            }
        }

        // Whether the certificate names `host`: a DNS name (a "*." wildcard covers one label) or an IP
        // address of its subjectAltName, or its subject's common name when it has none.
        private static bool NameMatches(X509Certificate2 leaf, string host)
        {
            IPAddress ip;
            var isIp = IPAddress.TryParse(host, out ip);
            foreach (var extension in leaf.Extensions)
            {
                if (extension.Oid.Value != "2.5.29.17") continue;
                var der = extension.RawData;
                var p = 1;
                if (der.Length < 2 || der[0] != 0x30) return false;
                var end = DerLength(der, ref p);
                if (end < 0 || (end += p) > der.Length) return false;
                while (p < end)
                {
                    var tag = der[p++];
                    var n = DerLength(der, ref p);
                    if (n < 0 || p + n > end) return false;
                    if (tag == 0x82 && !isIp && DnsMatches(Encoding.ASCII.GetString(der, p, n), host)) return true;
                    if (tag == 0x87 && isIp && (n == 4 || n == 16))
                    {
                        var bytes = new byte[n];
                        Buffer.BlockCopy(der, p, bytes, 0, n);
                        if (new IPAddress(bytes).Equals(ip)) return true;
                    }
                    p += n;
                }
                return false;
            }
            return !isIp && DnsMatches(leaf.GetNameInfo(X509NameType.SimpleName, false) ?? "", host);
        }

        // A DER length at `p` (moved past it), or -1 when it does not fit.
        private static int DerLength(byte[] der, ref int p)
        {
            if (p >= der.Length) return -1;
            int b = der[p++];
            if (b < 0x80) return b;
            var count = b & 0x7f;
            if (count > 3 || p + count > der.Length) return -1;
            var n = 0;
            for (var i = 0; i < count; i++) n = (n << 8) | der[p++];
            return n;
        }

        private static bool DnsMatches(string pattern, string host)
        {
            pattern = pattern.TrimEnd('.');
            host = host.TrimEnd('.');
            if (pattern.StartsWith("*."))
            {
                var dot = host.IndexOf('.');
                return dot > 0 && string.Equals(host.Substring(dot + 1), pattern.Substring(2), StringComparison.OrdinalIgnoreCase);
            }
            return string.Equals(pattern, host, StringComparison.OrdinalIgnoreCase);
        }

        public async Task SendAsync(byte[] body, CancellationToken cancellation)
        {
            var frame = new byte[4 + body.Length];
            frame[0] = (byte)(body.Length >> 24);
            frame[1] = (byte)(body.Length >> 16);
            frame[2] = (byte)(body.Length >> 8);
            frame[3] = (byte)body.Length;
            Buffer.BlockCopy(body, 0, frame, 4, body.Length);
            // One write per frame: the prefix and the body leave in the same segment when they fit.
            await stream.WriteAsync(frame, 0, frame.Length, cancellation).ConfigureAwait(false);
            await stream.FlushAsync(cancellation).ConfigureAwait(false);
        }

        public async Task<byte[]> ReceiveAsync(CancellationToken cancellation)
        {
            if (!await ReadExactly(prefix, 4, true, cancellation).ConfigureAwait(false)) return null;
            var length = ((uint)prefix[0] << 24) | ((uint)prefix[1] << 16) | ((uint)prefix[2] << 8) | prefix[3];
            if (length == 0) throw new SessionTransportException("a frame of length 0");
            if (length > SessionWire.MaxServerFrameBytes)
                throw new SessionTransportException("a frame of " + length + " bytes, past " + SessionWire.MaxServerFrameBytes);
            var body = new byte[length];
            await ReadExactly(body, body.Length, false, cancellation).ConfigureAwait(false);
            return body;
        }

        // TCP may split a frame anywhere: read until `count` bytes are in. The end of the stream before
        // the first byte is a clean end (when `atBoundary`); anywhere else it cut a frame short.
        private async Task<bool> ReadExactly(byte[] buffer, int count, bool atBoundary, CancellationToken cancellation)
        {
            var done = 0;
            while (done < count)
            {
                var n = await stream.ReadAsync(buffer, done, count - done, cancellation).ConfigureAwait(false);
                if (n == 0)
                {
                    if (done == 0 && atBoundary) return false;
                    throw new EndOfStreamException("the connection ended inside a frame");
                }
                done += n;
            }
            return true;
        }

        public async Task CloseAsync(CancellationToken cancellation)
        {
            try
            {
                var ssl = stream as SslStream;
                if (ssl != null)
                {
                    using (cancellation.Register(() => Dispose()))
                        await ssl.ShutdownAsync().ConfigureAwait(false);
                }
                if (socket != null) socket.Shutdown(SocketShutdown.Send);
            }
            catch (Exception)
            {
                // Already broken: the client's Dispose ends it all the same.
            }
        }

        public void Dispose()
        {
            var s = stream;
            if (s != null) s.Dispose();
            var k = socket;
            if (k != null) k.Dispose();
        }
    }
}
