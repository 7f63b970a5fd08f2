// Drives clients/csharp/ZLinkSession against a live gateway for test/e2e/sessions-csharp-client.spec.ts.
// It prints one line per outcome, "<name> <json>", and "done {}" last; the spec reads them.
//
//   mono run.exe <scenario> [--endpoint URL] [--control URL] [--fresh URL] [--token T] [--ca FILE [--tlsName NAME]]
//                [--doc FILE] [--idle MS] [--resendBuffer BYTES] [--chunks N]
//
// Scenarios: main (request/reply with every msgpack type, errors, send, pushes, pacing, timeout,
// close), refused, heartbeat, serverClose, codec (the codec on its own, and docs/sessions-wire.md's
// example bytes); with resume: resume (a drop the test makes when the control session asks, and what
// comes after the resume), lostForGood (a drop the session does not survive: the test refuses or
// lets it expire, or the server offers no resume), acks (a stream of pushes, paced by requests, that
// only the client's Acks let the server forget).
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using ZLink.Session;

public static class SessionClientRun
{
    private static readonly Dictionary<string, string> Args = new Dictionary<string, string>();

    // Exits with Environment.Exit rather than by returning: after a run that dropped WebSocket
    // connections, Mono's exit (a return from Main) sometimes waits forever with no thread of the run
    // left (seen on Debian's mono 6.8; Unity never exits that way).
    public static void Main(string[] argv)
    {
        var code = Run(argv);
        Console.Out.Flush();
        Environment.Exit(code);
    }

    private static int Run(string[] argv)
    {
        for (var i = 1; i + 1 < argv.Length; i += 2) Args[argv[i].TrimStart('-')] = argv[i + 1];
        try
        {
            switch (argv[0])
            {
                case "main": MainScenario().Wait(); break;
                case "refused": Refused().Wait(); break;
                case "heartbeat": Heartbeat().Wait(); break;
                case "serverClose": ServerClose().Wait(); break;
                case "resume": Resume().Wait(); break;
                case "lostForGood": LostForGood().Wait(); break;
                case "acks": Acks().Wait(); break;
                case "codec": Codec(); break;
                default: throw new ArgumentException("unknown scenario " + argv[0]);
            }
            Print("done", new Dictionary<string, object>());
            return 0;
        }
        catch (Exception e)
        {
            Console.Error.WriteLine(e.ToString());
            return 1;
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Scenarios against a gateway

    private static ZLinkSessionClient Client(object token, bool resume = false)
    {
        var options = new ZLinkSessionOptions { Token = token, RequestTimeoutMs = 5000, Resume = resume };
        string resendBuffer;
        if (Args.TryGetValue("resendBuffer", out resendBuffer)) options.ResendBufferBytes = int.Parse(resendBuffer);
        string ca;
        if (Args.TryGetValue("ca", out ca))
            options.Tls = new SessionTlsOptions { TrustedCa = new X509Certificate2(ca) };
        string name;
        if (Args.TryGetValue("tlsName", out name)) options.Tls.TargetHost = name;
        return ZLinkSessionClient.ForEndpoint(Args["endpoint"], options);
    }

    private sealed class Pushes
    {
        private readonly List<object> seen = new List<object>();
        public Pushes(ZLinkSessionClient client)
        {
            client.PushReceived += (packet, payload) =>
            {
                lock (seen)
                {
                    seen.Add(new List<object> { packet, payload });
                    Monitor.PulseAll(seen);
                }
            };
        }

        // The first `count` pushes, waiting at most 5 s for them.
        public List<object> Take(int count)
        {
            var deadline = DateTime.UtcNow.AddSeconds(5);
            lock (seen)
            {
                while (seen.Count < count)
                {
                    var left = deadline - DateTime.UtcNow;
                    if (left <= TimeSpan.Zero) throw new TimeoutException("only " + seen.Count + " of " + count + " pushes");
                    Monitor.Wait(seen, left);
                }
                var taken = seen.GetRange(0, count);
                seen.RemoveRange(0, count);
                return taken;
            }
        }
    }

    private static Task<SessionClosed> ClosedOf(ZLinkSessionClient client)
    {
        var closed = new TaskCompletionSource<SessionClosed>();
        client.Closed += info => closed.TrySetResult(info);
        return closed.Task;
    }

    private static async Task MainScenario()
    {
        var client = Client(Args["token"]);
        var pushes = new Pushes(client);
        var closed = ClosedOf(client);
        var welcome = await client.ConnectAsync();
        Print("welcome", WelcomeOf(welcome));

        // Every msgpack type, both ways: what the handler received is the spec's to check; what came
        // back is checked here against what JavaScript makes of it (docs/sessions-wire.md#bodies).
        var reply = (Dictionary<string, object>)await client.RequestAsync("echo", AllTypes());
        Print("echoSessionId", reply["sessionId"]);
        var diff = Diff(ExpectedBack(), reply["echo"], "echo");
        Print("roundTrip", new Dictionary<string, object> { { "ok", diff == null }, { "diff", diff } });

        Print("noHandler", await Failure(client.RequestAsync("nobody", 1)));
        Print("handlerError", await Failure(client.RequestAsync("fail", "boom")));
        Print("invalid", await Failure(client.RequestAsync("invalid", null)));

        Print("sent", client.Send("note", 7));
        Print("push", pushes.Take(1)[0]);

        var burst = await client.RequestAsync("burst", 3);
        Print("burst", new Dictionary<string, object> { { "pushes", pushes.Take(3) }, { "reply", burst } });

        // More requests at once than maxInFlight: the client holds the rest back, each gets its own answer.
        var many = new List<Task<object>>();
        for (var i = 0; i < welcome.MaxInFlight * 2 + 5; i++) many.Add(client.RequestAsync("echo", i));
        var allOwn = true;
        for (var i = 0; i < many.Count; i++)
        {
            var own = (Dictionary<string, object>)await many[i];
            if (!(own["echo"] is long) || (long)own["echo"] != i) allOwn = false;
        }
        Print("many", new Dictionary<string, object> { { "count", many.Count }, { "allOwn", allOwn } });

        Print("timeout", await Failure(client.RequestAsync("slow", 600, 100)));
        var after = (Dictionary<string, object>)await client.RequestAsync("echo", "after");
        Print("afterTimeout", after["echo"]);
        Print("tooLarge", await Failure(client.RequestAsync("echo", new byte[welcome.MaxFrameBytes])));

        await client.CloseAsync(SessionCloseCode.Normal, "bye");
        Print("closed", ClosedJson(await closed));
        Print("afterClose", new Dictionary<string, object>
        {
            { "request", await Failure(client.RequestAsync("echo", 1)) },
            { "send", client.Send("note", 1) },
            { "isOpen", client.IsOpen },
        });
    }

    private static async Task Refused()
    {
        var client = Client(Args["token"]);
        var closed = ClosedOf(client);
        Print("connect", await Failure(client.ConnectAsync()));
        Print("closed", ClosedJson(await closed));
    }

    // Idle for longer than the server's idle timeout, then a request: the heartbeats kept it open.
    private static async Task Heartbeat()
    {
        var client = Client(Args["token"]);
        var closed = ClosedOf(client);
        var welcome = await client.ConnectAsync();
        var idleMs = int.Parse(Args["idle"]);
        var ended = await Task.WhenAny(closed, Task.Delay(idleMs));
        Print("idle", new Dictionary<string, object>
        {
            { "heartbeatMs", welcome.HeartbeatMs },
            { "idleMs", idleMs },
            { "closedMeanwhile", ended == closed ? ClosedJson(closed.Result) : null },
            { "pingsSent", client.PingsSent },
            { "pongsReceived", client.PongsReceived },
        });
        var reply = (Dictionary<string, object>)await client.RequestAsync("echo", "still here");
        Print("afterIdle", new Dictionary<string, object>
        {
            { "echo", reply["echo"] },
            { "sameSession", (string)reply["sessionId"] == welcome.SessionId },
        });
        await client.CloseAsync();
    }

    // The server ends the session while a request waits: the request fails, Closed names the reason.
    private static async Task ServerClose()
    {
        var client = Client(Args["token"]);
        var closed = ClosedOf(client);
        await client.ConnectAsync();
        Print("pending", await Failure(client.RequestAsync("closeMe", null)));
        Print("closed", ClosedJson(await closed));
        Print("afterClose", new Dictionary<string, object> { { "send", client.Send("note", 1) }, { "isOpen", client.IsOpen } });
    }

    // What a resumable client saw, in the order it saw it: pushes ("push <packet> <payload>"), "dropped"
    // and "resumed".
    private sealed class Seen
    {
        public readonly List<object> Events = new List<object>();
        public SessionResumed Resumed;

        public Seen(ZLinkSessionClient client)
        {
            client.PushReceived += (packet, payload) => Add("push " + packet + " " + Json(payload));
            client.Dropped += dropped => Add("dropped");
            client.Resumed += resumed =>
            {
                Resumed = resumed;
                Add("resumed");
            };
        }

        private void Add(string what)
        {
            lock (Events)
            {
                Events.Add(what);
                Monitor.PulseAll(Events);
            }
        }

        // Waits at most 10 s for `what` to have been seen.
        public void WaitFor(string what)
        {
            var deadline = DateTime.UtcNow.AddSeconds(10);
            lock (Events)
            {
                while (!Events.Contains(what))
                {
                    var left = deadline - DateTime.UtcNow;
                    if (left <= TimeSpan.Zero) throw new TimeoutException("never saw " + what + ": " + Json(Events));
                    Monitor.Wait(Events, left);
                }
            }
        }

        public List<object> Snapshot()
        {
            lock (Events) return new List<object>(Events);
        }
    }

    // A drop with a request in flight and a Request and a Send the server never gets: after the resume
    // the first is answered once, the other two are sent again and run once, and the pushes made while
    // away arrive in order. The test drops the connection when the control session (straight to the
    // gateway) asks it to "cut": after the client got "holding", and after it wrote the two frames.
    private static async Task Resume()
    {
        var client = Client(Args["token"], true);
        var seen = new Seen(client);
        var closed = ClosedOf(client);
        var welcome = await client.ConnectAsync();
        var before = (Dictionary<string, object>)await client.RequestAsync("echo", "before");
        var hold = client.RequestAsync("hold", null, 20000);
        seen.WaitFor("push holding 1");
        var lost = client.RequestAsync("echo", "lost", 20000);
        var sent = client.Send("note", 9);

        var control = ZLinkSessionClient.ForEndpoint(Args["control"], new ZLinkSessionOptions { Token = Args["token"] });
        await control.ConnectAsync();
        await control.RequestAsync("cut", null, 20000);
        await control.CloseAsync();

        var held = await hold;
        var lostReply = (Dictionary<string, object>)await lost;
        // Answered behind the resent frames: every push they made has been raised by then.
        var after = (Dictionary<string, object>)await client.RequestAsync("echo", "after");
        var resumed = seen.Resumed;
        Print("resume", new Dictionary<string, object>
        {
            { "welcome", new Dictionary<string, object> { { "resumable", welcome.Resumable }, { "resumeGraceMs", welcome.ResumeGraceMs } } },
            { "events", seen.Snapshot() },
            { "held", held },
            { "lostEcho", lostReply["echo"] },
            { "sent", sent },
            { "sessionIds", new List<object> { welcome.SessionId, before["sessionId"], lostReply["sessionId"], after["sessionId"], client.SessionId, resumed.Welcome.SessionId } },
            { "resent", resumed.Resent },
            { "sendsLost", resumed.SendsLost },
            { "attempts", resumed.Attempts },
            { "connected", client.IsConnected },
        });
        await client.CloseAsync(SessionCloseCode.Normal, "bye");
        Print("closed", ClosedJson(await closed));
    }

    // A drop the session does not survive: the request in flight ("away", whose handler drops the
    // connection) fails with the session's end, which Closed reports once, after "dropped" when the
    // session was resumable. Then a new client opens a new session, at --fresh if given, else at the
    // same endpoint.
    private static async Task LostForGood()
    {
        var client = Client(Args["token"], true);
        var seen = new Seen(client);
        var closed = ClosedOf(client);
        var welcome = await client.ConnectAsync();
        var away = await Failure(client.RequestAsync("away", null, 20000));
        var end = await closed;
        var events = seen.Snapshot();
        var sent = client.Send("note", 1);

        string freshEndpoint;
        var fresh = Args.TryGetValue("fresh", out freshEndpoint)
            ? ZLinkSessionClient.ForEndpoint(freshEndpoint, new ZLinkSessionOptions { Token = Args["token"], Resume = true })
            : Client(Args["token"], true);
        var again = await fresh.ConnectAsync();
        var echo = (Dictionary<string, object>)await fresh.RequestAsync("echo", "new session");
        await fresh.CloseAsync();
        Print("lostForGood", new Dictionary<string, object>
        {
            { "resumable", welcome.Resumable },
            { "request", away },
            { "closed", ClosedJson(end) },
            { "events", events },
            { "afterClose", new Dictionary<string, object> { { "send", sent }, { "isOpen", client.IsOpen } } },
            { "newSession", new Dictionary<string, object> { { "other", again.SessionId != welcome.SessionId }, { "echo", echo["echo"] } } },
        });
    }

    // Requests whose answers bring pushes, one after the other: the server keeps each push until the
    // client's Ack counts it (docs/sessions-wire.md#counting-and-acks).
    private static async Task Acks()
    {
        var client = Client(Args["token"], true);
        var seen = new Seen(client);
        var closed = ClosedOf(client);
        await client.ConnectAsync();
        var chunks = int.Parse(Args["chunks"]);
        var answers = 0;
        for (var i = 0; i < chunks; i++)
            if ((long)await client.RequestAsync("chunk", i) == i) answers++;
        var pushes = seen.Snapshot().Count;
        var connected = client.IsConnected;
        await client.CloseAsync();
        Print("acks", new Dictionary<string, object>
        {
            { "answers", answers },
            { "pushes", pushes },
            { "connected", connected },
            { "closed", ClosedJson(await closed) },
        });
    }

    private static async Task<Dictionary<string, object>> Failure<T>(Task<T> task)
    {
        try
        {
            var value = await task;
            return new Dictionary<string, object> { { "unexpected", value } };
        }
        catch (ZLinkSessionException e)
        {
            return new Dictionary<string, object>
            {
                { "kind", e.Kind.ToString() },
                { "code", e.Code },
                { "message", e.Message },
                { "details", e.Details },
                { "closed", e.Closed == null ? null : ClosedJson(e.Closed) },
            };
        }
        catch (ArgumentException e)
        {
            return new Dictionary<string, object> { { "kind", "ArgumentException" }, { "message", e.Message } };
        }
    }

    private static Dictionary<string, object> WelcomeOf(SessionWelcome w)
    {
        return new Dictionary<string, object>
        {
            { "version", w.Version },
            { "sessionId", w.SessionId },
            { "heartbeatMs", w.HeartbeatMs },
            { "maxFrameBytes", w.MaxFrameBytes },
            { "maxInFlight", w.MaxInFlight },
        };
    }

    private static Dictionary<string, object> ClosedJson(SessionClosed c)
    {
        return new Dictionary<string, object>
        {
            { "by", c.By.ToString() },
            { "code", c.Code.HasValue ? (object)c.Code.Value : null },
            { "reason", c.Reason },
            { "detail", c.Detail },
            { "mayReconnect", c.MayReconnect },
        };
    }

    // ---------------------------------------------------------------------------------------------
    // The payload with every msgpack type, and what comes back after JavaScript

    private static string Repeat(char c, int n) { return new string(c, n); }

    private static byte[] Bytes(int n)
    {
        var b = new byte[n];
        for (var i = 0; i < n; i++) b[i] = (byte)(i * 7);
        return b;
    }

    private static Dictionary<string, object> Numbered(int n)
    {
        var map = new Dictionary<string, object>();
        for (var i = 0; i < n; i++) map["k" + i] = i;
        return map;
    }

    private static List<object> Counted(int n)
    {
        var list = new List<object>();
        for (var i = 0; i < n; i++) list.Add(i);
        return list;
    }

    // One of each: nil, bool, every int form, float 32 and 64, str and bin of each length form, array
    // and map of fix and 16 form, nested.
    private static Dictionary<string, object> AllTypes()
    {
        return new Dictionary<string, object>
        {
            { "nil", null },
            { "true", true },
            { "false", false },
            { "fixint", 7 },
            { "uint8", (byte)200 },
            { "uint16", (ushort)60000 },
            { "uint32", 4000000000u },
            { "past32", 1UL << 40 },
            { "uint64", (1UL << 53) + 1 },
            { "negFixint", -5 },
            { "int8", (sbyte)-100 },
            { "int16", (short)-30000 },
            { "int32", -2000000000 },
            { "negPast32", -(1L << 40) },
            { "int64", -(1L << 53) - 1 },
            { "float32", 1.5f },
            { "float64", 3.25 },
            { "wholeDouble", 2.0 },
            { "fixstr", "héllo" },
            { "str8", Repeat('a', 40) },
            { "str16", Repeat('b', 300) },
            { "str32", Repeat('c', 70000) },
            { "bin8", Bytes(5) },
            { "bin16", Bytes(300) },
            { "bin32", Bytes(70000) },
            { "fixarray", new List<object> { 1, "two", null } },
            { "array16", Counted(20) },
            { "fixmap", new Dictionary<string, object> { { "a", 1 } } },
            { "map16", Numbered(20) },
            { "intKeys", new Dictionary<int, string> { { 1, "one" } } },
            { "nested", new Dictionary<string, object> { { "list", new object[] { new Dictionary<string, object> { { "deep", new List<object> { true } } } } } } },
        };
    }

    // What the echo handler sends back: the payload with integers as long (past 32 bits as float 64:
    // double; a BigInt, from a 64-bit form, in that form), floats as double, a whole double as an
    // integer, map keys as strings (docs/sessions-wire.md#bodies). Strings and bins as sent.
    private static Dictionary<string, object> ExpectedBack()
    {
        var back = AllTypes();
        back["fixint"] = 7L;
        back["uint8"] = 200L;
        back["uint16"] = 60000L;
        back["uint32"] = 4000000000L;
        back["past32"] = (double)(1L << 40);
        back["uint64"] = (1L << 53) + 1;
        back["negFixint"] = -5L;
        back["int8"] = -100L;
        back["int16"] = -30000L;
        back["int32"] = -2000000000L;
        back["negPast32"] = (double)-(1L << 40);
        back["float32"] = 1.5;
        back["wholeDouble"] = 2L;
        back["fixarray"] = new List<object> { 1L, "two", null };
        back["array16"] = Longs(Counted(20));
        back["fixmap"] = new Dictionary<string, object> { { "a", 1L } };
        back["map16"] = LongValues(Numbered(20));
        back["intKeys"] = new Dictionary<string, object> { { "1", "one" } };
        back["nested"] = new Dictionary<string, object>
        {
            { "list", new List<object> { new Dictionary<string, object> { { "deep", new List<object> { true } } } } },
        };
        return back;
    }

    private static List<object> Longs(List<object> ints)
    {
        return ints.ConvertAll(i => (object)Convert.ToInt64(i));
    }

    private static Dictionary<string, object> LongValues(Dictionary<string, object> map)
    {
        var copy = new Dictionary<string, object>();
        foreach (var entry in map) copy[entry.Key] = Convert.ToInt64(entry.Value);
        return copy;
    }

    // Null when `actual` is `expected` in value and .NET type; otherwise where and how they differ.
    private static string Diff(object expected, object actual, string path)
    {
        if (expected == null || actual == null)
            return expected == actual ? null : path + ": expected " + Json(expected) + ", got " + Json(actual);
        if (expected.GetType() != actual.GetType())
            return path + ": expected a " + expected.GetType().Name + " " + Json(expected) + ", got a " + actual.GetType().Name + " " + Json(actual);
        var eb = expected as byte[];
        if (eb != null)
        {
            var ab = (byte[])actual;
            if (eb.Length != ab.Length) return path + ": " + ab.Length + " bytes, expected " + eb.Length;
            for (var i = 0; i < eb.Length; i++) if (eb[i] != ab[i]) return path + "[" + i + "] differs";
            return null;
        }
        var em = expected as IDictionary;
        if (em != null)
        {
            var am = (IDictionary)actual;
            if (em.Count != am.Count) return path + ": " + am.Count + " entries, expected " + em.Count;
            foreach (DictionaryEntry e in em)
            {
                if (!am.Contains(e.Key)) return path + ": no key " + e.Key;
                var d = Diff(e.Value, am[e.Key], path + "." + e.Key);
                if (d != null) return d;
            }
            return null;
        }
        var el = expected as IList;
        if (el != null)
        {
            var al = (IList)actual;
            if (el.Count != al.Count) return path + ": " + al.Count + " items, expected " + el.Count;
            for (var i = 0; i < el.Count; i++)
            {
                var d = Diff(el[i], al[i], path + "[" + i + "]");
                if (d != null) return d;
            }
            return null;
        }
        return expected.Equals(actual) ? null : path + ": expected " + Json(expected) + ", got " + Json(actual);
    }

    // ---------------------------------------------------------------------------------------------
    // The codec on its own

    private static byte[] Hex(string hex)
    {
        hex = hex.Replace(" ", "");
        var bytes = new byte[hex.Length / 2];
        for (var i = 0; i < bytes.Length; i++) bytes[i] = Convert.ToByte(hex.Substring(2 * i, 2), 16);
        return bytes;
    }

    private static string HexOf(byte[] bytes)
    {
        return BitConverter.ToString(bytes).Replace("-", " ").ToLowerInvariant();
    }

    private static void Codec()
    {
        var failures = new List<object>();
        Action<string, bool> check = (what, ok) => { if (!ok) failures.Add(what); };

        // Encodings the server never sends, each value with its exact bytes, decoded back to itself.
        var vectors = new List<object[]>
        {
            new object[] { null, "c0", null },
            new object[] { true, "c3", true },
            new object[] { 127, "7f", 127L },
            new object[] { 128, "cc 80", 128L },
            new object[] { 65535, "cd ff ff", 65535L },
            new object[] { 65536, "ce 00 01 00 00", 65536L },
            new object[] { 4294967295u, "ce ff ff ff ff", 4294967295L },
            // Past 32 bits, float 64 while exact, as JavaScript writes such a number; 64-bit forms beyond.
            new object[] { 1L << 32, "cb 41 f0 00 00 00 00 00 00", (double)(1L << 32) },
            new object[] { 1L << 53, "cb 43 40 00 00 00 00 00 00", (double)(1L << 53) },
            new object[] { (1L << 53) + 1, "cf 00 20 00 00 00 00 00 01", (1L << 53) + 1 },
            new object[] { ulong.MaxValue, "cf ff ff ff ff ff ff ff ff", ulong.MaxValue },
            new object[] { int.MinValue, "d2 80 00 00 00", (long)int.MinValue },
            new object[] { -(1L << 32), "cb c1 f0 00 00 00 00 00 00", -(double)(1L << 32) },
            new object[] { -(1L << 53) - 1, "d3 ff df ff ff ff ff ff ff", -(1L << 53) - 1 },
            new object[] { -32, "e0", -32L },
            new object[] { -33, "d0 df", -33L },
            new object[] { -129, "d1 ff 7f", -129L },
            new object[] { -32769, "d2 ff ff 7f ff", -32769L },
            new object[] { long.MinValue, "d3 80 00 00 00 00 00 00 00", long.MinValue },
            new object[] { 1.5f, "ca 3f c0 00 00", 1.5 },
            new object[] { -0.1, "cb bf b9 99 99 99 99 99 9a", -0.1 },
            new object[] { "", "a0", "" },
            new object[] { new byte[] { 1, 2 }, "c4 02 01 02", new byte[] { 1, 2 } },
            new object[] { new List<object>(), "90", new List<object>() },
            new object[] { new Dictionary<string, object>(), "80", new Dictionary<string, object>() },
            new object[] { new Dictionary<string, object> { { "a", new List<object> { 1, -1 } } }, "81 a1 61 92 01 ff",
                new Dictionary<string, object> { { "a", new List<object> { 1L, -1L } } } },
        };
        foreach (var v in vectors)
        {
            var bytes = MsgPack.Encode(v[0]);
            check("encode " + Json(v[0]) + " as " + v[1] + ", got " + HexOf(bytes), HexOf(bytes) == (string)v[1]);
            var d = Diff(v[2], MsgPack.Decode(Hex((string)v[1])), "decode " + v[1]);
            check(d ?? "", d == null);
        }

        // Longer forms a reader must still take (docs/sessions-wire.md#an-example): the same map as map 16.
        var map16 = MsgPack.Decode(Hex("de 00 01 a1 61 01"));
        check("map 16 of one entry", Diff(new Dictionary<string, object> { { "a", 1L } }, map16, "map16") == null);
        check("array 32", Diff(new List<object> { 1L }, MsgPack.Decode(Hex("dd 00 00 00 01 01")), "array32") == null);
        check("str 8 of one char", "x".Equals(MsgPack.Decode(Hex("d9 01 78"))));
        check("uint 64 small", 1L.Equals(MsgPack.Decode(Hex("cf 00 00 00 00 00 00 00 01"))));
        check("mixed keys", MsgPack.Decode(Hex("82 01 a1 61 a1 62 02")) is Dictionary<object, object>);

        // Hostile input: a clear MsgPackException, never a crash or a huge allocation.
        var hostile = new[] { "", "92 01", "dd ff ff ff ff", "c6 ff ff ff ff", "db 7f ff ff ff 00", "c7 01 00 00", "c1", "a2 c3 28", "01 02", "df 7f ff ff ff" };
        foreach (var h in hostile)
        {
            try
            {
                MsgPack.Decode(Hex(h));
                failures.Add("decoded hostile " + h);
            }
            catch (MsgPackException)
            {
            }
        }
        var deep = new StringBuilder();
        for (var i = 0; i < 10000; i++) deep.Append("91 ");
        deep.Append("01");
        try
        {
            MsgPack.Decode(Hex(deep.ToString()));
            failures.Add("decoded 10000 nested arrays");
        }
        catch (MsgPackException)
        {
        }
        try
        {
            MsgPack.Encode(new object());
            failures.Add("encoded an object");
        }
        catch (ArgumentException)
        {
        }

        // docs/sessions-wire.md's example, row by row: each frame's prefix is its body's length, the
        // body decodes to the row's value, and this encoder writes exactly the row's bytes for it.
        var rows = 0;
        var row = new Regex(@"^\| (c → s|s → c) ([^|]*?) *\| `([0-9a-f ]+)` *\| `([^`]*)` *\|$");
        foreach (var line in File.ReadAllLines(Args["doc"]))
        {
            var m = row.Match(line);
            if (!m.Success) continue;
            rows++;
            var frame = Hex(m.Groups[3].Value);
            var body = new byte[frame.Length - 4];
            Buffer.BlockCopy(frame, 4, body, 0, body.Length);
            var length = (frame[0] << 24) | (frame[1] << 16) | (frame[2] << 8) | frame[3];
            check(m.Groups[2].Value + ": prefix " + length + " for " + body.Length + " bytes", length == body.Length);
            var value = MsgPack.Decode(body);
            check(m.Groups[2].Value + ": " + Json(value) + " is not " + m.Groups[4].Value,
                Json(value).Replace(" ", "") == m.Groups[4].Value.Replace(" ", ""));
            check(m.Groups[2].Value + ": re-encoded as " + HexOf(MsgPack.Encode(value)), HexOf(MsgPack.Encode(value)) == HexOf(body));
        }
        Print("codec", new Dictionary<string, object> { { "docRows", rows }, { "failures", failures } });
    }

    // ---------------------------------------------------------------------------------------------
    // Output

    private static void Print(string name, object value)
    {
        Console.Out.WriteLine(name + " " + Json(value));
        Console.Out.Flush();
    }

    // JSON of decoded values: bin as {"bin": "<hex>"} so the spec can tell it from a string.
    private static string Json(object value)
    {
        var sb = new StringBuilder();
        WriteJson(sb, value);
        return sb.ToString();
    }

    private static void WriteJson(StringBuilder sb, object value)
    {
        if (value == null) { sb.Append("null"); return; }
        if (value is bool) { sb.Append((bool)value ? "true" : "false"); return; }
        if (value is string) { WriteString(sb, (string)value); return; }
        if (value is byte[]) { sb.Append("{\"bin\":"); WriteString(sb, HexOf((byte[])value).Replace(" ", "")); sb.Append("}"); return; }
        if (value is double || value is float)
        {
            sb.Append(Convert.ToDouble(value).ToString("R", CultureInfo.InvariantCulture));
            return;
        }
        if (value is Enum) { WriteString(sb, value.ToString()); return; }
        if (value is IConvertible) { sb.Append(Convert.ToString(value, CultureInfo.InvariantCulture)); return; }
        var map = value as IDictionary;
        if (map != null)
        {
            var entries = new List<DictionaryEntry>();
            foreach (DictionaryEntry e in map) entries.Add(e);
            WriteAll(sb, "{", "}", entries, e =>
            {
                WriteString(sb, Convert.ToString(e.Key, CultureInfo.InvariantCulture));
                sb.Append(":");
                WriteJson(sb, e.Value);
            });
            return;
        }
        var list = value as IEnumerable;
        if (list != null)
        {
            var items = new List<object>();
            foreach (var item in list) items.Add(item);
            WriteAll(sb, "[", "]", items, item => WriteJson(sb, item));
            return;
        }
        WriteString(sb, value.ToString());
    }

    private static void WriteAll<T>(StringBuilder sb, string open, string close, List<T> items, Action<T> write)
    {
        sb.Append(open);
        for (var i = 0; i < items.Count; i++)
        {
            if (i > 0) sb.Append(",");
            write(items[i]);
        }
        sb.Append(close);
    }

    private static void WriteString(StringBuilder sb, string s)
    {
        sb.Append('"');
        foreach (var c in s)
        {
            if (c == '"' || c == '\\') sb.Append('\\').Append(c);
            else if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4"));
            else sb.Append(c);
        }
        sb.Append('"');
    }
}
