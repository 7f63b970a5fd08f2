// A small msgpack codec, enough for the session wire and for game payloads built of dictionaries,
// lists and primitives (docs/sessions-wire.md#bodies). No NuGet package: a Unity project drops this
// folder in as it is.
//
// Encoding, by the value's .NET type (each in the shortest form msgpack has for it):
//   null -> nil; bool -> true/false; sbyte, byte, short, ushort, int, uint, long, ulong and enums ->
//   the smallest int/uint form up to 32 bits; past 32 bits, float 64 while exact (up to 2^53, as the
//   server and the Node client write such a number), int 64/uint 64 beyond (the server reads those as
//   a JavaScript BigInt: docs/sessions-wire.md#bodies); float -> float 32; double -> float 64;
//   string -> str (UTF-8);
//   byte[] and ArraySegment<byte> -> bin; IDictionary (Dictionary<K, V> of any K, V) -> map;
//   any other IEnumerable (List<T>, arrays) -> array. Anything else throws ArgumentException.
// Decoding, to:
//   nil -> null; bool; every integer form -> long (a uint 64 past long.MaxValue -> ulong);
//   float 32 and float 64 -> double; str -> string; bin -> byte[]; array -> List<object>;
//   map -> Dictionary<string, object> when every key is a string (what the server always sends),
//   otherwise Dictionary<object, object>. Ext types are not used by the wire: they throw.
using System;
using System.Collections;
using System.Collections.Generic;
using System.IO;
using System.Text;

namespace ZLink.Session
{
    /// <summary>Raised when bytes are not one well-formed msgpack value this codec reads.</summary>
    public sealed class MsgPackException : Exception
    {
        public MsgPackException(string message) : base(message) { }
    }

    /// <summary>Encodes and decodes msgpack values (see the mapping at the top of this file).</summary>
    public static class MsgPack
    {
        /// <summary>How deep arrays and maps may nest, both ways: a cycle or a hostile input stops here.</summary>
        public const int MaxDepth = 512;

        private static readonly UTF8Encoding StrictUtf8 = new UTF8Encoding(false, true);

        /// <summary>
        /// The msgpack bytes of <paramref name="value"/>. Throws ArgumentException for a type it has no
        /// form for (the message names the type), or for nesting deeper than <see cref="MaxDepth"/>.
        /// </summary>
        public static byte[] Encode(object value)
        {
            var output = new MemoryStream();
            Write(output, value, 0);
            return output.ToArray();
        }

        /// <summary>
        /// The one value <paramref name="bytes"/> holds, in full. Throws MsgPackException when they are
        /// not exactly one well-formed value (truncated, trailing bytes, an ext type, bad UTF-8, too deep).
        /// </summary>
        public static object Decode(byte[] bytes)
        {
            if (bytes == null) throw new ArgumentNullException("bytes");
            var reader = new Reader(bytes);
            var value = reader.ReadValue(0);
            if (reader.Position != bytes.Length)
                throw new MsgPackException((bytes.Length - reader.Position) + " bytes after the value");
            return value;
        }

        private static void Write(Stream o, object value, int depth)
        {
            if (depth > MaxDepth) throw new ArgumentException("msgpack: nested deeper than " + MaxDepth + " (a cycle?)");
            if (value == null) { o.WriteByte(0xc0); return; }
            if (value is bool) { o.WriteByte((bool)value ? (byte)0xc3 : (byte)0xc2); return; }
            if (value is string) { WriteString(o, (string)value); return; }
            if (value is byte[]) { var b = (byte[])value; WriteBin(o, b, 0, b.Length); return; }
            if (value is ArraySegment<byte>)
            {
                var s = (ArraySegment<byte>)value;
                WriteBin(o, s.Array, s.Offset, s.Count);
                return;
            }
            if (value is float) { o.WriteByte(0xca); WriteBigEndian(o, (ulong)(uint)SingleBits((float)value), 4); return; }
            if (value is double) { o.WriteByte(0xcb); WriteBigEndian(o, (ulong)BitConverter.DoubleToInt64Bits((double)value), 8); return; }
            if (value is ulong) { WriteInteger(o, (ulong)value, false); return; }
            if (value is Enum) value = Convert.ToInt64(value);
            if (value is sbyte || value is byte || value is short || value is ushort || value is int || value is uint || value is long)
            {
                var n = Convert.ToInt64(value);
                if (n >= 0) WriteInteger(o, (ulong)n, false); else WriteInteger(o, (ulong)-(n + 1) + 1, true);
                return;
            }
            var map = value as IDictionary;
            if (map != null)
            {
                WriteHeader(o, map.Count, 0x80, 0xde, 0xdf);
                foreach (DictionaryEntry entry in map)
                {
                    Write(o, entry.Key, depth + 1);
                    Write(o, entry.Value, depth + 1);
                }
                return;
            }
            var items = value as IEnumerable;
            if (items != null)
            {
                var list = items as ICollection;
                if (list == null)
                {
                    var copy = new List<object>();
                    foreach (var item in items) copy.Add(item);
                    list = copy;
                }
                WriteHeader(o, list.Count, 0x90, 0xdc, 0xdd);
                foreach (var item in list) Write(o, item, depth + 1);
                return;
            }
            throw new ArgumentException("msgpack: no form for a value of type " + value.GetType().FullName);
        }

        private static int SingleBits(float f)
        {
            var bytes = BitConverter.GetBytes(f);
            return BitConverter.ToInt32(bytes, 0);
        }

        private const ulong MaxExactDouble = 1UL << 53;

        // An integer given as its magnitude and sign. JavaScript has one number type: the server reads a
        // 64-bit form past 2^53 as BigInt, which a handler cannot add to a number, and writes a number
        // past 32 bits as float 64. So the same here: float 64 while it is exact, as the Node client.
        private static void WriteInteger(Stream o, ulong magnitude, bool negative)
        {
            if (!negative && magnitude <= uint.MaxValue) { WriteUnsigned(o, magnitude); return; }
            if (negative && magnitude <= 1UL + int.MaxValue) { WriteNegative(o, -(long)(magnitude - 1) - 1); return; }
            if (magnitude <= MaxExactDouble)
            {
                var d = negative ? -(double)magnitude : (double)magnitude;
                o.WriteByte(0xcb);
                WriteBigEndian(o, (ulong)BitConverter.DoubleToInt64Bits(d), 8);
                return;
            }
            if (negative) { o.WriteByte(0xd3); WriteBigEndian(o, (ulong)(-(long)(magnitude - 1) - 1), 8); }
            else WriteUnsigned(o, magnitude);
        }

        private static void WriteUnsigned(Stream o, ulong n)
        {
            if (n <= 0x7f) o.WriteByte((byte)n);
            else if (n <= 0xff) { o.WriteByte(0xcc); o.WriteByte((byte)n); }
            else if (n <= 0xffff) { o.WriteByte(0xcd); WriteBigEndian(o, n, 2); }
            else if (n <= 0xffffffff) { o.WriteByte(0xce); WriteBigEndian(o, n, 4); }
            else { o.WriteByte(0xcf); WriteBigEndian(o, n, 8); }
        }

        private static void WriteNegative(Stream o, long n)
        {
            if (n >= -32) o.WriteByte((byte)(sbyte)n);
            else if (n >= sbyte.MinValue) { o.WriteByte(0xd0); o.WriteByte((byte)(sbyte)n); }
            else if (n >= short.MinValue) { o.WriteByte(0xd1); WriteBigEndian(o, (ulong)n, 2); }
            else { o.WriteByte(0xd2); WriteBigEndian(o, (ulong)n, 4); }
        }

        private static void WriteString(Stream o, string s)
        {
            var bytes = StrictUtf8.GetBytes(s);
            var n = bytes.Length;
            if (n <= 31) o.WriteByte((byte)(0xa0 | n));
            else if (n <= 0xff) { o.WriteByte(0xd9); o.WriteByte((byte)n); }
            else if (n <= 0xffff) { o.WriteByte(0xda); WriteBigEndian(o, (ulong)n, 2); }
            else { o.WriteByte(0xdb); WriteBigEndian(o, (ulong)n, 4); }
            o.Write(bytes, 0, n);
        }

        private static void WriteBin(Stream o, byte[] bytes, int offset, int n)
        {
            if (n <= 0xff) { o.WriteByte(0xc4); o.WriteByte((byte)n); }
            else if (n <= 0xffff) { o.WriteByte(0xc5); WriteBigEndian(o, (ulong)n, 2); }
            else { o.WriteByte(0xc6); WriteBigEndian(o, (ulong)n, 4); }
            o.Write(bytes, offset, n);
        }

        // An array or map header: the fix form up to 15 items (a frame body must be a fixarray:
        // docs/sessions-wire.md#bodies), then the 16- and 32-bit forms.
        private static void WriteHeader(Stream o, int count, byte fix, byte sixteen, byte thirtyTwo)
        {
            if (count <= 15) o.WriteByte((byte)(fix | count));
            else if (count <= 0xffff) { o.WriteByte(sixteen); WriteBigEndian(o, (ulong)count, 2); }
            else { o.WriteByte(thirtyTwo); WriteBigEndian(o, (ulong)count, 4); }
        }

        private static void WriteBigEndian(Stream o, ulong n, int size)
        {
            for (var shift = (size - 1) * 8; shift >= 0; shift -= 8) o.WriteByte((byte)(n >> shift));
        }

        private sealed class Reader
        {
            private readonly byte[] bytes;
            public int Position;

            public Reader(byte[] bytes) { this.bytes = bytes; }

            public object ReadValue(int depth)
            {
                if (depth > MaxDepth) throw new MsgPackException("nested deeper than " + MaxDepth);
                var b = Byte();
                if (b <= 0x7f) return (long)b;
                if (b >= 0xe0) return (long)(sbyte)b;
                if (b >= 0xa0 && b <= 0xbf) return Str(b & 0x1f);
                if (b >= 0x90 && b <= 0x9f) return Array(b & 0x0f, depth);
                if (b >= 0x80 && b <= 0x8f) return Map(b & 0x0f, depth);
                switch (b)
                {
                    case 0xc0: return null;
                    case 0xc2: return false;
                    case 0xc3: return true;
                    case 0xc4: return Bin((int)Unsigned(1));
                    case 0xc5: return Bin((int)Unsigned(2));
                    case 0xc6: return Bin(Length(Unsigned(4)));
                    case 0xca: return (double)BitConverter.ToSingle(BitConverter.GetBytes((uint)Unsigned(4)), 0);
                    case 0xcb: return BitConverter.Int64BitsToDouble((long)Unsigned(8));
                    case 0xcc: return (long)Unsigned(1);
                    case 0xcd: return (long)Unsigned(2);
                    case 0xce: return (long)Unsigned(4);
                    case 0xcf:
                        {
                            var n = Unsigned(8);
                            if (n <= long.MaxValue) return (long)n;
                            return n;
                        }
                    case 0xd0: return (long)(sbyte)Unsigned(1);
                    case 0xd1: return (long)(short)Unsigned(2);
                    case 0xd2: return (long)(int)Unsigned(4);
                    case 0xd3: return (long)Unsigned(8);
                    case 0xd9: return Str((int)Unsigned(1));
                    case 0xda: return Str((int)Unsigned(2));
                    case 0xdb: return Str(Length(Unsigned(4)));
                    case 0xdc: return Array((int)Unsigned(2), depth);
                    case 0xdd: return Array(Length(Unsigned(4)), depth);
                    case 0xde: return Map((int)Unsigned(2), depth);
                    case 0xdf: return Map(Length(Unsigned(4)), depth);
                    case 0xc1: throw new MsgPackException("byte 0xc1 is never used by msgpack");
                    default: throw new MsgPackException("ext type 0x" + b.ToString("x2") + " is not used by the session wire");
                }
            }

            private byte Byte()
            {
                if (Position >= bytes.Length) throw new MsgPackException("truncated value");
                return bytes[Position++];
            }

            private ulong Unsigned(int size)
            {
                if (bytes.Length - Position < size) throw new MsgPackException("truncated value");
                ulong n = 0;
                for (var i = 0; i < size; i++) n = (n << 8) | bytes[Position++];
                return n;
            }

            // A 32-bit length, refused when more than what is left could hold (never a huge allocation
            // because a length said so).
            private int Length(ulong n)
            {
                if (n > (ulong)(bytes.Length - Position)) throw new MsgPackException("length " + n + " past the end");
                return (int)n;
            }

            private byte[] Take(int n)
            {
                if (n > bytes.Length - Position) throw new MsgPackException("length " + n + " past the end");
                var copy = new byte[n];
                Buffer.BlockCopy(bytes, Position, copy, 0, n);
                Position += n;
                return copy;
            }

            private string Str(int n)
            {
                if (n > bytes.Length - Position) throw new MsgPackException("length " + n + " past the end");
                string s;
                try { s = StrictUtf8.GetString(bytes, Position, n); }
                catch (ArgumentException) { throw new MsgPackException("a str that is not UTF-8"); }
                Position += n;
                return s;
            }

            private byte[] Bin(int n) { return Take(n); }

            // Each item takes at least one byte: a count past what is left is refused before allocating.
            private List<object> Array(int n, int depth)
            {
                if (n > bytes.Length - Position) throw new MsgPackException("array of " + n + " past the end");
                var list = new List<object>(n);
                for (var i = 0; i < n; i++) list.Add(ReadValue(depth + 1));
                return list;
            }

            private object Map(int n, int depth)
            {
                if (n > (bytes.Length - Position) / 2) throw new MsgPackException("map of " + n + " past the end");
                var keys = new object[n];
                var values = new object[n];
                var allStrings = true;
                for (var i = 0; i < n; i++)
                {
                    keys[i] = ReadValue(depth + 1);
                    values[i] = ReadValue(depth + 1);
                    if (!(keys[i] is string)) allStrings = false;
                }
                // The last value for a key wins, as in JavaScript's objects.
                if (allStrings)
                {
                    var map = new Dictionary<string, object>(n);
                    for (var i = 0; i < n; i++) map[(string)keys[i]] = values[i];
                    return map;
                }
                var mixed = new Dictionary<object, object>(n, new KeyComparer());
                for (var i = 0; i < n; i++)
                {
                    if (keys[i] == null) throw new MsgPackException("a map key that is nil");
                    mixed[keys[i]] = values[i];
                }
                return mixed;
            }
        }

        // Keys of a mixed map: bin keys compare by content, the rest as .NET compares them.
        private sealed class KeyComparer : IEqualityComparer<object>
        {
            public new bool Equals(object a, object b)
            {
                var x = a as byte[];
                var y = b as byte[];
                if (x != null && y != null)
                {
                    if (x.Length != y.Length) return false;
                    for (var i = 0; i < x.Length; i++) if (x[i] != y[i]) return false;
                    return true;
                }
                return object.Equals(a, b);
            }

            public int GetHashCode(object o)
            {
                var x = o as byte[];
                if (x == null) return o.GetHashCode();
                var h = x.Length;
                foreach (var b in x) h = h * 31 + b;
                return h;
            }
        }
    }
}
