// The session wire's vocabulary: frame kinds and close codes (docs/sessions-wire.md#bodies and
// docs/sessions-wire.md#close-codes), and the bodies this client writes.
using System;
using System.Collections.Generic;

namespace ZLink.Session
{
    /// <summary>A frame body's first item (docs/sessions-wire.md#bodies).</summary>
    public enum FrameKind
    {
        Hello = 1,
        Welcome = 2,
        Request = 3,
        Reply = 4,
        Error = 5,
        Send = 6,
        Push = 7,
        Ping = 8,
        Pong = 9,
        Close = 10,
        Ack = 11,
    }

    /// <summary>A Close frame's code (docs/sessions-wire.md#close-codes).</summary>
    public enum SessionCloseCode
    {
        Normal = 1000,
        GoingAway = 1001,
        ProtocolError = 1002,
        FrameTooLarge = 1003,
        HelloTimeout = 1004,
        UnsupportedVersion = 1005,
        Refused = 1006,
        TooManyInFlight = 1007,
        IdleTimeout = 1008,
        SlowConsumer = 1009,
        RelocationTimeout = 1010,
        ServerError = 1011,
        Full = 1012,
        ResumeExpired = 1013,
        ResumeRefused = 1014,
    }

    /// <summary>The wire's names for close codes, and the frames this client writes.</summary>
    public static class SessionWire
    {
        /// <summary>The wire version this client speaks (the Hello's and the Welcome's second item).</summary>
        public const int Version = 1;

        /// <summary>
        /// The most a server frame body may hold that this client reads: servers may send frames longer
        /// than their own maxFrameBytes, up to 16 MiB (docs/sessions-wire.md#framing).
        /// </summary>
        public const int MaxServerFrameBytes = 16 * 1024 * 1024;

        /// <summary>The most a Hello, Ping, Pong or Close body may hold (docs/sessions-wire.md#limits).</summary>
        public const int MaxControlFrameBytes = 8192;

        /// <summary>The name given to a session that ended without a Close frame, or with a code this version does not know.</summary>
        public const string Lost = "lost";

        private static readonly Dictionary<int, string> Names = new Dictionary<int, string>
        {
            { 1000, "normal" },
            { 1001, "goingAway" },
            { 1002, "protocolError" },
            { 1003, "frameTooLarge" },
            { 1004, "helloTimeout" },
            { 1005, "unsupportedVersion" },
            { 1006, "refused" },
            { 1007, "tooManyInFlight" },
            { 1008, "idleTimeout" },
            { 1009, "slowConsumer" },
            { 1010, "relocationTimeout" },
            { 1011, "serverError" },
            { 1012, "full" },
            { 1013, "resumeExpired" },
            { 1014, "resumeRefused" },
        };

        /// <summary>The wire's name of a close code (<c>"goingAway"</c> for 1001), or <see cref="Lost"/> for one it does not know.</summary>
        public static string ReasonOf(int code)
        {
            string name;
            return Names.TryGetValue(code, out name) ? name : Lost;
        }

        /// <summary>
        /// Whether reconnecting with the same frames or token is pointless: after 1002, 1003, 1005 and
        /// 1006 the server would close the same way (docs/sessions-wire.md#close-codes).
        /// </summary>
        public static bool IsFinal(int code)
        {
            return code == 1002 || code == 1003 || code == 1005 || code == 1006;
        }

        // Every body is a fixarray of at most 15 items (docs/sessions-wire.md#bodies); MsgPack writes
        // arrays that short in that form.
        internal static byte[] Hello(object token, object[] resume)
        {
            // No fourth item for a client that does not resume: the Hello of a client written before
            // resume existed (docs/sessions-wire.md#resume-after-a-drop).
            return MsgPack.Encode(resume == null
                ? new object[] { (int)FrameKind.Hello, Version, token }
                : new object[] { (int)FrameKind.Hello, Version, token, resume });
        }

        /// <summary>The Hello's fourth item that asks for a session the client may resume: <c>[]</c>.</summary>
        internal static readonly object[] AskResume = new object[0];

        /// <summary>
        /// The Hello's fourth item that resumes a session: <c>[sessionId, resumeToken, received]</c>. The
        /// login token is not checked again, so the Hello carries none (docs/sessions-wire.md#resuming).
        /// </summary>
        internal static byte[] ResumeHello(string sessionId, string resumeToken, long received)
        {
            return Hello(null, new object[] { sessionId, resumeToken, received });
        }

        internal static byte[] Ack(long received)
        {
            return MsgPack.Encode(new object[] { (int)FrameKind.Ack, received });
        }

        internal static byte[] Request(uint correlation, string packet, object payload)
        {
            return MsgPack.Encode(new object[] { (int)FrameKind.Request, correlation, packet, payload });
        }

        internal static byte[] Send(string packet, object payload)
        {
            return MsgPack.Encode(new object[] { (int)FrameKind.Send, packet, payload });
        }

        internal static readonly byte[] Ping = MsgPack.Encode(new object[] { (int)FrameKind.Ping });
        internal static readonly byte[] Pong = MsgPack.Encode(new object[] { (int)FrameKind.Pong });

        internal static byte[] Close(int code, string reason)
        {
            var body = MsgPack.Encode(new object[] { (int)FrameKind.Close, code, reason ?? "" });
            if (body.Length > MaxControlFrameBytes)
                throw new ArgumentException("a Close reason of more than about 8 KB; the server would refuse the frame");
            return body;
        }

        /// <summary>
        /// Checks a packet name before it is sent: non-empty, at most 65535 bytes of UTF-8
        /// (docs/sessions-wire.md#bodies). Throws ArgumentException naming the fault.
        /// </summary>
        internal static void CheckPacket(string packet)
        {
            if (string.IsNullOrEmpty(packet)) throw new ArgumentException("packet must be a non-empty string", "packet");
            if (System.Text.Encoding.UTF8.GetByteCount(packet) > 65535)
                throw new ArgumentException("packet must be at most 65535 bytes of UTF-8", "packet");
        }
    }
}
