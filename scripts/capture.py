#!/usr/bin/env python3
"""Capture golden fixtures from a live ClickHouse server's native TCP port.

Standalone, Python 3 standard library only.

    python3 scripts/capture.py --sql 'SELECT 1' --out select1.bin [--hello-out hello.bin]
        [--revision 54492] [--host 127.0.0.1] [--port 19000]
        [--user default] [--password ''] [--database default]
        [--compress 0|1] [--method LZ4|ZSTD|NONE]
        [--setting name=value ...] [--client-info-tail HEX] [--quiet]
        [--chunked]   (ask for chunked framing both ways, revision >= 54470)
        [--tls-ca CERT.pem --port 9440]    (a TLS port, trusting CERT.pem)

What it does:
  1. ClientHello (client_name "chnative-capture", version 1.0, --revision, database,
     user, password); reads and parses the whole ServerHello (or an Exception).
  2. Addendum (rev >= 54458): quota_key "", [>=54470] "notchunked" x2 ("chunked" x2
     with --chunked), [>=54471] VarUInt 8.
  3. Query packet (query_id "", INITIAL ClientInfo for a TCP client, settings from
     --setting, stage Complete, compression flag, the SQL, empty parameter list),
     then the empty client Data block (compressed with the NONE codec when --compress 1).
  4. Reads and parses server packets until EndOfStream or Exception.
     If it meets something it cannot parse (an unsupported column type, a
     custom serialization kind, a ZSTD frame, ...) it stops parsing and just
     keeps reading until the server has been silent for --idle seconds.

Output:
  --out FILE        every byte the server sent after the ServerHello (raw, as on the wire;
                    with --chunked that includes the chunk headers and end markers)
  --hello-out FILE  the raw ServerHello packet bytes (including its code byte)
  stderr            one line per parsed packet (unless --quiet)

Exit status: 0 = EndOfStream seen, 3 = Exception packet seen (files still written),
4 = stream not fully parsed (idle-timeout fallback), 1 = connection/handshake error.

Notes:
  * `network_compression_method` is only sent when --compress 1 (value from --method,
    default LZ4). Compressed frames are parsed when the codec is NONE or LZ4 (decoded
    here in pure Python); with ZSTD the tool falls back to the idle timeout.
  * Frame checksums are CityHash128 v1.0.2 and are verified; a mismatch is reported.
  * --client-info-tail HEX overrides the bytes written after client_agent at the end
    of ClientInfo (for protocol experiments). Default, verified against 26.9.2:
      rev >= 54486: 00  is_internal (UInt8 bool)
      rev >= 54488: 00  has_current_roles (UInt8); if 01 it is followed by
                        VarUInt n + n x String (e.g. 01 02 01 61 01 62 = roles a, b)
      rev >= 54490: nothing (the HTTP-handler field is not written for interface TCP)
    So at 54488..54492 ClientInfo ends with  ... client_agent "" | 00 | 00.
"""

import argparse
import os
import socket
import struct
import sys
import time

CLIENT_NAME = "chnative-capture"
CLIENT_MAJOR, CLIENT_MINOR = 1, 0
M64 = (1 << 64) - 1


# ----------------------------------------------------------------------------
# Encoding helpers


def varuint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def string(s):
    if isinstance(s, str):
        s = s.encode()
    return varuint(len(s)) + s


# ----------------------------------------------------------------------------
# CityHash128 v1.0.2 (the variant ClickHouse uses for compressed-frame checksums)

K0 = 0xC3A5C85C97CB3127
K1 = 0xB492B66FBE98F273
K2 = 0x9AE16A3B2F90404F
K3 = 0xC949D7C7509E6557


def _f64(s, i):
    return struct.unpack_from("<Q", s, i)[0]


def _f32(s, i):
    return struct.unpack_from("<I", s, i)[0]


def _rot(v, sh):
    return v if sh == 0 else ((v >> sh) | (v << (64 - sh))) & M64


def _rot1(v, sh):
    return ((v >> sh) | (v << (64 - sh))) & M64


def _smix(v):
    return v ^ (v >> 47)


def _h128to64(lo, hi):
    kmul = 0x9DDFEA08EB382D69
    a = ((lo ^ hi) * kmul) & M64
    a ^= a >> 47
    b = ((hi ^ a) * kmul) & M64
    b ^= b >> 47
    return (b * kmul) & M64


def _hash_len0to16(s, off, ln):
    if ln > 8:
        a = _f64(s, off)
        b = _f64(s, off + ln - 8)
        return _h128to64(a, _rot1((b + ln) & M64, ln)) ^ b
    if ln >= 4:
        a = _f32(s, off)
        return _h128to64((ln + (a << 3)) & M64, _f32(s, off + ln - 4))
    if ln > 0:
        a, b, c = s[off], s[off + (ln >> 1)], s[off + ln - 1]
        y = (a + (b << 8)) & 0xFFFFFFFF
        z = (ln + (c << 2)) & 0xFFFFFFFF
        return (_smix(((y * K2) ^ (z * K3)) & M64) * K2) & M64
    return K2


def _weak32(s, off, a, b):
    w, x, y, z = _f64(s, off), _f64(s, off + 8), _f64(s, off + 16), _f64(s, off + 24)
    a = (a + w) & M64
    b = _rot((b + a + z) & M64, 21)
    c = a
    a = (a + x + y) & M64
    b = (b + _rot(a, 44)) & M64
    return (a + z) & M64, (b + c) & M64


def _city_murmur(s, off, ln, lo, hi):
    a, b, c, d = lo, hi, 0, 0
    l = ln - 16
    if l <= 0:
        a = (_smix((a * K1) & M64) * K1) & M64
        c = (b * K1 + _hash_len0to16(s, off, ln)) & M64
        d = _smix((a + (_f64(s, off) if ln >= 8 else c)) & M64)
    else:
        c = _h128to64((_f64(s, off + ln - 8) + K1) & M64, a)
        d = _h128to64((b + ln) & M64, (c + _f64(s, off + ln - 16)) & M64)
        a = (a + d) & M64
        while True:
            a ^= (_smix((_f64(s, off) * K1) & M64) * K1) & M64
            a = (a * K1) & M64
            b ^= a
            c ^= (_smix((_f64(s, off + 8) * K1) & M64) * K1) & M64
            c = (c * K1) & M64
            d ^= c
            off += 16
            l -= 16
            if l <= 0:
                break
    a = _h128to64(a, c)
    b = _h128to64(d, b)
    return a ^ b, _h128to64(b, a)


def _city128_seed(s, off, ln, lo, hi):
    if ln < 128:
        return _city_murmur(s, off, ln, lo, hi)
    x, y, z = lo, hi, (ln * K1) & M64
    v0 = (_rot(y ^ K1, 49) * K1 + _f64(s, off)) & M64
    v1 = (_rot(v0, 42) * K1 + _f64(s, off + 8)) & M64
    w0 = (_rot((y + z) & M64, 35) * K1 + x) & M64
    w1 = (_rot((x + _f64(s, off + 88)) & M64, 53) * K1) & M64
    while True:
        for _ in range(2):
            x = (_rot((x + y + v0 + _f64(s, off + 16)) & M64, 37) * K1) & M64
            y = (_rot((y + v1 + _f64(s, off + 48)) & M64, 42) * K1) & M64
            x ^= w1
            y ^= v0
            z = _rot(z ^ w0, 33)
            v0, v1 = _weak32(s, off, (v1 * K1) & M64, (x + w0) & M64)
            w0, w1 = _weak32(s, off + 32, (z + w1) & M64, y)
            z, x = x, z
            off += 64
        ln -= 128
        if ln < 128:
            break
    y = (y + _rot(w0, 37) * K0 + z) & M64
    x = (x + _rot((v0 + z) & M64, 49) * K0) & M64
    done = 0
    while done < ln:
        done += 32
        y = (_rot((y - x) & M64, 42) * K0 + v1) & M64
        w0 = (w0 + _f64(s, off + ln - done + 16)) & M64
        x = (_rot(x, 49) * K0 + w0) & M64
        w0 = (w0 + v0) & M64
        v0, v1 = _weak32(s, off + ln - done, v0, v1)
    x = _h128to64(x, v0)
    y = _h128to64(y, w0)
    return ((_h128to64((x + v1) & M64, w1) + y) & M64,
            _h128to64((x + w1) & M64, (y + v1) & M64))


def cityhash128(s):
    """CityHash128 v1.0.2 -> (low64, high64)."""
    s = bytes(s)
    ln = len(s)
    if ln >= 16:
        return _city128_seed(s, 16, ln - 16, _f64(s, 0) ^ K3, _f64(s, 8))
    if ln >= 8:
        return _city128_seed(b"", 0, 0, _f64(s, 0) ^ ((ln * K0) & M64), _f64(s, ln - 8) ^ K1)
    return _city128_seed(s, 0, ln, K0, K1)


def frame_checksum(data):
    lo, hi = cityhash128(data)
    return struct.pack("<QQ", lo, hi)


def compress_none(payload):
    """One compressed frame with the NONE codec (0x02)."""
    hdr = struct.pack("<BII", 0x02, 9 + len(payload), len(payload))
    return frame_checksum(hdr + payload) + hdr + payload


def lz4_block_decompress(src, usize):
    dst = bytearray()
    i, n = 0, len(src)
    while i < n:
        tok = src[i]
        i += 1
        lit = tok >> 4
        if lit == 15:
            while True:
                b = src[i]
                i += 1
                lit += b
                if b != 255:
                    break
        dst += src[i:i + lit]
        i += lit
        if i >= n:
            break
        off = src[i] | (src[i + 1] << 8)
        i += 2
        ml = tok & 15
        if ml == 15:
            while True:
                b = src[i]
                i += 1
                ml += b
                if b != 255:
                    break
        ml += 4
        start = len(dst) - off
        if off <= 0 or start < 0:
            raise ValueError("bad LZ4 offset")
        if off >= ml:
            dst += dst[start:start + ml]
        else:
            for k in range(ml):
                dst.append(dst[start + k])
    if len(dst) != usize:
        raise ValueError("LZ4: got %d bytes, expected %d" % (len(dst), usize))
    return bytes(dst)


# ----------------------------------------------------------------------------
# Readers


class Idle(Exception):
    """The server stopped sending while we expected more bytes."""


class Closed(Exception):
    """The server closed the connection."""


class Unsupported(Exception):
    """Something this tool does not parse; fall back to the idle timeout."""


class ReaderMixin:
    def u8(self):
        return self.read(1)[0]

    def i32(self):
        return struct.unpack("<i", self.read(4))[0]

    def u32(self):
        return struct.unpack("<I", self.read(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.read(8))[0]

    def varuint(self):
        shift = result = 0
        for _ in range(10):
            b = self.u8()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
        raise ValueError("VarUInt too long")

    def string(self, cap=1 << 30):
        n = self.varuint()
        if n > cap:
            raise ValueError("string length %d over cap" % n)
        return self.read(n)

    def text(self):
        return self.string().decode("utf-8", "replace")


class SockReader(ReaderMixin):
    """Reads from the socket, keeps every received byte in self.raw."""

    def __init__(self, sock, idle):
        self.sock = sock
        self.idle = idle
        self.raw = bytearray()
        self.pos = 0

    def _fill(self, need):
        while len(self.raw) - self.pos < need:
            self.sock.settimeout(self.idle)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise Idle() from None
            if not chunk:
                raise Closed()
            self.raw += chunk

    def read(self, n):
        self._fill(n)
        b = bytes(self.raw[self.pos:self.pos + n])
        self.pos += n
        return b

    def peek(self, n):
        self._fill(n)
        return bytes(self.raw[self.pos:self.pos + n])

    def drain(self):
        """Read until the server is silent for `idle` seconds or closes."""
        try:
            while True:
                self._fill(len(self.raw) - self.pos + 1)
        except (Idle, Closed):
            pass


class DechunkedReader(ReaderMixin):
    """Strips chunked framing ([u32 LE size > 0][bytes]... [u32 LE 0] per
    message) from `src`; `pos` counts packet bytes, src.raw keeps the wire bytes."""

    def __init__(self, src):
        self.src = src
        self.buf = bytearray()
        self.pos = 0
        self.left = 0  # bytes left in the current chunk
        self.in_message = False
        self.chunks = 0

    def _more(self):
        if self.left == 0:
            while True:
                size = self.src.u32()
                if size:
                    break
                if not self.in_message:
                    raise ValueError("empty chunked message")
                self.in_message = False  # end marker: the next header starts a message
            self.in_message = True
            self.left = size
            self.chunks += 1
        take = min(self.left, 65536)
        self.buf += self.src.read(take)
        self.left -= take

    def read(self, n):
        while len(self.buf) - self.pos < n:
            self._more()
        b = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return b

    def peek(self, n):
        while len(self.buf) - self.pos < n:
            self._more()
        return bytes(self.buf[self.pos:self.pos + n])

    def finish(self):
        """Reads the end marker of the last message."""
        if self.left == 0 and self.in_message and self.src.u32() != 0:
            raise ValueError("a packet ended but its message goes on")


def chunk(packet):
    """One packet as one chunked message."""
    return struct.pack("<I", len(packet)) + packet + struct.pack("<I", 0)


CODECS = {0x02: "NONE", 0x82: "LZ4", 0x90: "ZSTD"}


class FrameReader(ReaderMixin):
    """Reads a compressed stream: pulls frames from `src` on demand."""

    def __init__(self, src, notes):
        self.src = src
        self.buf = b""
        self.pos = 0
        self.notes = notes
        self.frames = 0

    def _next_frame(self):
        checksum = self.src.read(16)
        hdr = self.src.read(9)
        method, csize, usize = struct.unpack("<BII", hdr)
        if csize < 9 or csize > (1 << 30):
            raise ValueError("bad compressed_size %d" % csize)
        body = self.src.read(csize - 9)
        if frame_checksum(hdr + body) != checksum:
            self.notes.append("frame checksum MISMATCH (method 0x%02x)" % method)
        self.frames += 1
        if method == 0x02:
            data = body
        elif method == 0x82:
            data = lz4_block_decompress(body, usize)
        else:
            raise Unsupported("compressed frame with codec 0x%02x (%s)"
                              % (method, CODECS.get(method, "?")))
        self.notes.append("frame %s %d->%d" % (CODECS.get(method, hex(method)), csize, usize))
        self.buf, self.pos = data, 0

    def read(self, n):
        out = bytearray()
        while n:
            if self.pos >= len(self.buf):
                self._next_frame()
            take = min(n, len(self.buf) - self.pos)
            out += self.buf[self.pos:self.pos + take]
            self.pos += take
            n -= take
        return bytes(out)

    def at_frame_end(self):
        return self.pos >= len(self.buf)


def looks_compressed(src):
    """True if the bytes at the reader position form a valid compressed frame."""
    head = src.peek(25)
    method, csize = head[16], struct.unpack_from("<I", head, 17)[0]
    if method not in CODECS or csize < 9 or csize > (1 << 30):
        return False
    frame = src.peek(16 + csize)
    return frame_checksum(frame[16:]) == frame[:16]


# ----------------------------------------------------------------------------
# Column types (enough for typical fixtures; anything else -> Unsupported)

FIXED = {
    "UInt8": 1, "Int8": 1, "Bool": 1, "Enum8": 1,
    "UInt16": 2, "Int16": 2, "Date": 2, "Enum16": 2, "BFloat16": 2,
    "UInt32": 4, "Int32": 4, "Float32": 4, "DateTime": 4, "Date32": 4, "IPv4": 4,
    "Decimal32": 4, "Time": 4,
    "UInt64": 8, "Int64": 8, "Float64": 8, "DateTime64": 8, "Decimal64": 8, "Time64": 8,
    "UInt128": 16, "Int128": 16, "UUID": 16, "IPv6": 16, "Decimal128": 16,
    "UInt256": 32, "Int256": 32, "Decimal256": 32,
}


def split_args(s):
    parts, depth, cur, q = [], 0, [], None
    for ch in s:
        if q:
            cur.append(ch)
            if ch == q:
                q = None
            continue
        if ch in "'`\"":
            q = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if cur:
        parts.append("".join(cur).strip())
    return parts


def parse_type(t):
    t = t.strip()
    if "(" in t and t.endswith(")"):
        i = t.index("(")
        return t[:i], t[i + 1:-1]
    return t, ""


def strip_element_name(e):
    """Tuple(a UInt8, `b c` String) elements -> the type part."""
    e = e.strip()
    if e.startswith("`"):
        return e[e.index("`", 1) + 1:].strip()
    head = e.split("(", 1)[0]
    if " " in head:
        return e.split(" ", 1)[1].strip()
    return e


class Columns:
    def __init__(self, rev):
        self.rev = rev

    def prefix(self, r, t):
        name, args = parse_type(t)
        if name == "LowCardinality":
            ver = r.u64()
            if ver != 1:
                raise ValueError("LowCardinality key version %d" % ver)
        elif name in ("Nullable", "Array"):
            self.prefix(r, args)
        elif name == "Tuple":
            for e in split_args(args):
                self.prefix(r, strip_element_name(e))
        elif name == "Map":
            for e in split_args(args):
                self.prefix(r, e)
        elif name in ("Variant", "Dynamic", "JSON", "Object"):
            raise Unsupported("type %s" % name)

    def data(self, r, t, n, bulk_string_single_stream=False):
        name, args = parse_type(t)
        if name in FIXED:
            r.read(FIXED[name] * n)
        elif name == "Decimal":
            p = int(split_args(args)[0])
            r.read((4 if p <= 9 else 8 if p <= 18 else 16 if p <= 38 else 32) * n)
        elif name == "FixedString":
            r.read(int(args) * n)
        elif name == "String":
            if self.rev >= 54492 and not bulk_string_single_stream:
                offs = struct.unpack("<%dQ" % n, r.read(8 * n)) if n else ()
                r.read(offs[-1] if n else 0)
            else:
                for _ in range(n):
                    r.string()
        elif name == "Nothing":
            r.read(n)
        elif name == "Nullable":
            r.read(n)
            self.data(r, args, n)
        elif name == "Array":
            offs = struct.unpack("<%dQ" % n, r.read(8 * n)) if n else ()
            self.data(r, args, offs[-1] if n else 0)
        elif name == "Map":
            k, v = split_args(args)
            offs = struct.unpack("<%dQ" % n, r.read(8 * n)) if n else ()
            m = offs[-1] if n else 0
            self.data(r, k, m)
            self.data(r, v, m)
        elif name == "Tuple":
            elems = [strip_element_name(e) for e in split_args(args)]
            if not elems:
                r.read(n)
            for e in elems:
                self.data(r, e, n)
        elif name == "LowCardinality":
            if n == 0:
                return
            index_type = r.u64()
            width = 1 << (index_type & 0xFF)
            if index_type & 0x100:
                raise ValueError("LowCardinality with global dictionary")
            if index_type & 0x200:
                nkeys = r.u64()
                inner_name, inner_args = parse_type(args)
                inner = inner_args if inner_name == "Nullable" else args
                # Dictionary keys go through the single-stream bulk writer.
                self.data(r, inner, nkeys, bulk_string_single_stream=True)
            rows = r.u64()
            r.read(width * rows)
        else:
            raise Unsupported("type %s" % t)


def read_block(r, cols, rev, note):
    """Parse a Block; returns (ncols, nrows, [(name, type)])."""
    while True:
        field = r.varuint()
        if field == 0:
            break
        if field == 1:
            r.u8()
        elif field == 2:
            r.i32()
        elif field == 3:
            k = r.varuint()
            r.read(4 * k)
        else:
            raise ValueError("unknown BlockInfo field %d" % field)
    ncols, nrows = r.varuint(), r.varuint()
    names = []
    for _ in range(ncols):
        cname = r.text()
        ctype = r.text()
        names.append((cname, ctype))
        if rev >= 54454 and r.u8():
            raise Unsupported("column %s has a custom serialization kind stack" % cname)
        if nrows:
            cols.prefix(r, ctype)
            cols.data(r, ctype, nrows)
    return ncols, nrows, names


# ----------------------------------------------------------------------------
# Protocol


def client_hello(a):
    return (varuint(0) + string(CLIENT_NAME) + varuint(CLIENT_MAJOR) + varuint(CLIENT_MINOR)
            + varuint(a.revision) + string(a.database) + string(a.user) + string(a.password))


def read_exception(r):
    parts = []
    while True:
        code = r.i32()
        name = r.text()
        msg = r.text()
        r.string()  # stack trace
        parts.append("Code %d %s: %s" % (code, name, msg))
        if not r.u8():
            return "; nested: ".join(parts)


def read_server_hello(r, rev):
    code = r.varuint()
    if code == 2:
        return None, read_exception(r)
    if code != 0:
        raise ValueError("unexpected packet %d instead of ServerHello" % code)
    h = {"name": r.text(), "major": r.varuint(), "minor": r.varuint(), "revision": r.varuint()}
    if rev >= 54471:
        h["parallel_replicas_version"] = r.varuint()
    if rev >= 54058:
        h["timezone"] = r.text()
    if rev >= 54372:
        h["display_name"] = r.text()
    if rev >= 54401:
        h["patch"] = r.varuint()
    if rev >= 54470:
        h["chunked_send"], h["chunked_recv"] = r.text(), r.text()
    if rev >= 54461:
        h["password_rules"] = [(r.text(), r.text()) for _ in range(r.varuint())]
    if rev >= 54462:
        h["nonce"] = r.u64()
    if rev >= 54474:
        settings = []
        while True:
            name = r.text()
            if not name:
                break
            flags = r.varuint()
            settings.append((name, flags, r.text()))
        h["settings"] = settings
    if rev >= 54477:
        h["query_plan_serialization_version"] = r.varuint()
    if rev >= 54479:
        h["cluster_function_protocol_version"] = r.varuint()
    return h, None


def addendum(rev, chunked=False):
    b = b""
    if rev >= 54458:
        b += string("")  # quota_key
        if rev >= 54470:
            mode = "chunked" if chunked else "notchunked"
            b += string(mode) + string(mode)  # client send, client recv
        if rev >= 54471:
            b += varuint(8)
    return b


def default_client_info_tail(rev):
    tail = b""
    if rev >= 54486:
        tail += b"\x00"  # is_internal: UInt8 bool, false
    if rev >= 54488:
        # current roles: UInt8 has_roles; if 1, VarUInt n + n x String role name.
        tail += b"\x00"
    # 54490 (HTTP_HANDLER_IN_CLIENT_INFO) adds nothing for interface TCP.
    # All three verified by experiment against ClickHouse 26.9.2 (chdb-core 26.9.0).
    return tail


def client_info(a, rev):
    ci = b"\x01"  # query_kind INITIAL_QUERY
    ci += string("") + string("") + string("0.0.0.0:0")  # initial user / query_id / address
    if rev >= 54449:
        ci += struct.pack("<Q", 0)  # initial_query_start_time_microseconds
    ci += b"\x01"  # interface TCP
    ci += string(a.os_user) + string(a.client_hostname) + string(CLIENT_NAME)
    ci += varuint(CLIENT_MAJOR) + varuint(CLIENT_MINOR) + varuint(a.revision)
    if rev >= 54060:
        ci += string("")  # quota_key
    if rev >= 54448:
        ci += varuint(0)  # distributed_depth
    if rev >= 54401:
        ci += varuint(0)  # version_patch
    if rev >= 54442:
        ci += b"\x00"  # no OpenTelemetry trace context
    if rev >= 54453:
        ci += varuint(0) + varuint(0) + varuint(0)  # parallel replicas
    if rev >= 54475:
        ci += varuint(0) + varuint(0)  # script query / line number
    if rev >= 54476:
        ci += b"\x00"  # no JWT
    if rev >= 54485:
        ci += string("")  # client_agent
    if a.client_info_tail is not None:
        ci += bytes.fromhex(a.client_info_tail)
    else:
        ci += default_client_info_tail(rev)
    return ci


def query_packet(a, rev, settings):
    p = varuint(1) + string("")  # code, query_id
    if rev >= 54032:
        p += client_info(a, rev)
    for name, value in settings:
        p += string(name) + varuint(0) + string(value)
    p += string("")  # end of settings
    if rev >= 54472:
        p += string("")  # external_roles
    if rev >= 54441:
        p += string("")  # interserver hash
    p += varuint(2)  # stage Complete
    p += varuint(1 if a.compress else 0)
    p += string(a.sql)
    if rev >= 54459:
        p += string("")  # end of parameters
    return p


EMPTY_BLOCK = b"\x01\x00\x02\xff\xff\xff\xff\x00" + b"\x00\x00"


def empty_data(compress):
    body = compress_none(EMPTY_BLOCK) if compress else EMPTY_BLOCK
    return b"\x02" + string("") + body


PACKET_NAMES = {0: "Hello", 1: "Data", 2: "Exception", 3: "Progress", 4: "Pong", 5: "EndOfStream",
                6: "ProfileInfo", 7: "Totals", 8: "Extremes", 9: "TablesStatusResponse", 10: "Log",
                11: "TableColumns", 12: "PartUUIDs", 13: "ReadTaskRequest", 14: "ProfileEvents",
                17: "TimezoneUpdate"}


def read_packets(r, a, rev, say):
    """Returns 'eos' or 'exception'; raises Unsupported/Idle/Closed/ValueError otherwise."""
    cols = Columns(rev)
    while True:
        start = r.pos
        code = r.varuint()
        pname = PACKET_NAMES.get(code, "packet%d" % code)
        if code in (1, 7, 8, 10, 14):
            table = r.text()
            notes = []
            comp = False
            if a.compress and code in (1, 7, 8):
                comp = True
            elif a.compress and code in (10, 14):
                comp = looks_compressed(r)
            if comp:
                fr = FrameReader(r, notes)
                ncols, nrows, names = read_block(fr, cols, rev, notes)
                if not fr.at_frame_end():
                    raise ValueError("block did not end on a frame boundary")
            else:
                ncols, nrows, names = read_block(r, cols, rev, notes)
            desc = ", ".join("%s %s" % nt for nt in names[:6]) + (" ..." if len(names) > 6 else "")
            say("@%d %s table=%r cols=%d rows=%d%s [%s]%s" % (
                start, pname, table, ncols, nrows, " compressed" if comp else "", desc,
                (" (" + "; ".join(notes) + ")") if notes else ""))
        elif code == 2:
            msg = read_exception(r)
            say("@%d Exception: %s" % (start, msg))
            return "exception", msg
        elif code == 3:
            vals = [r.varuint() for _ in range(3)]
            if rev >= 54463:
                vals.append(r.varuint())
            if rev >= 54420:
                vals += [r.varuint(), r.varuint()]
            if rev >= 54460:
                vals.append(r.varuint())
            say("@%d Progress %s" % (start, vals))
        elif code == 4:
            say("@%d Pong" % start)
        elif code == 5:
            say("@%d EndOfStream" % start)
            return "eos", None
        elif code == 6:
            vals = [r.varuint(), r.varuint(), r.varuint(), r.u8(), r.varuint(), r.u8()]
            if rev >= 54469:
                vals += [r.u8(), r.varuint()]
            say("@%d ProfileInfo %s" % (start, vals))
        elif code == 11:
            r.text()
            desc = r.text()
            say("@%d TableColumns %r" % (start, desc))
        elif code == 17:
            say("@%d TimezoneUpdate %r" % (start, r.text()))
        else:
            raise Unsupported("server packet code %d" % code)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default=os.environ.get("CHNATIVE_HOST", "127.0.0.1"))
    ap.add_argument("--port", type=int, default=int(os.environ.get("CHNATIVE_TCP_PORT", "19000")))
    ap.add_argument("--revision", type=int, default=54492)
    ap.add_argument("--database", default="default")
    ap.add_argument("--user", default="default")
    ap.add_argument("--password", default="")
    ap.add_argument("--sql", required=True)
    ap.add_argument("--compress", type=int, choices=(0, 1), default=0)
    ap.add_argument("--method", default="LZ4",
                    help="network_compression_method sent when --compress 1 (LZ4, ZSTD, NONE)")
    ap.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE",
                    help="query setting (repeatable), sent with flags 0")
    ap.add_argument("--client-info-tail", default=None, metavar="HEX",
                    help="bytes written after client_agent in ClientInfo (experiments)")
    ap.add_argument("--os-user", default="")
    ap.add_argument("--client-hostname", default="")
    ap.add_argument("--out", help="file for the raw server bytes after the ServerHello")
    ap.add_argument("--hello-out", help="file for the raw ServerHello bytes")
    ap.add_argument("--idle", type=float, default=1.0,
                    help="seconds of server silence that end a capture (default 1)")
    ap.add_argument("--connect-timeout", type=float, default=10.0)
    ap.add_argument("--tls-ca", metavar="PEM",
                    help="connect with TLS, trusting this CA/cert")
    ap.add_argument("--chunked", action="store_true",
                    help="ask for chunked framing in both directions (the server must allow it)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()

    def say(msg):
        if not a.quiet:
            sys.stderr.write(msg + "\n")

    settings = []
    for kv in a.setting:
        if "=" not in kv:
            ap.error("--setting needs NAME=VALUE, got %r" % kv)
        settings.append(tuple(kv.split("=", 1)))
    if a.compress:
        settings.append(("network_compression_method", a.method))

    try:
        sock = socket.create_connection((a.host, a.port), timeout=a.connect_timeout)
    except OSError as e:
        sys.stderr.write("capture: cannot connect to %s:%d: %s\n" % (a.host, a.port, e))
        return 1
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if a.tls_ca:
        import ssl  # noqa: PLC0415

        ctx = ssl.create_default_context(cafile=a.tls_ca)
        try:
            sock = ctx.wrap_socket(sock, server_hostname="localhost" if a.host in (
                "127.0.0.1", "localhost") else a.host)
        except (ssl.SSLError, OSError) as e:
            sys.stderr.write("capture: TLS handshake failed: %s\n" % e)
            return 1
        say("TLS %s %s" % (sock.version(), sock.cipher()[0]))
    r = SockReader(sock, idle=max(a.idle, 10.0))  # the handshake may take a while
    sock.sendall(client_hello(a))
    try:
        hello, err = read_server_hello(r, a.revision)
    except (Idle, Closed, ValueError) as e:
        sys.stderr.write("capture: handshake failed: %r; got %r\n" % (e, bytes(r.raw)))
        return 1
    hello_raw = bytes(r.raw[:r.pos])
    if a.hello_out:
        with open(a.hello_out, "wb") as f:
            f.write(hello_raw)
    if err:
        sys.stderr.write("capture: server refused the handshake: %s\n" % err)
        return 1
    rev = min(a.revision, hello["revision"])
    say("ServerHello (%d bytes): %s" % (
        len(hello_raw), {k: v for k, v in hello.items() if k != "settings"}))
    if hello.get("settings"):
        say("  server settings: %s" % hello["settings"])
    say("negotiated revision %d" % rev)

    packets = query_packet(a, rev, settings), empty_data(a.compress)
    if a.chunked:
        if rev < 54470:
            sys.stderr.write("capture: --chunked needs revision 54470 or later\n")
            return 1
        packets = tuple(chunk(p) for p in packets)
    sock.sendall(addendum(rev, a.chunked) + b"".join(packets))
    r.idle = a.idle
    status, msg, why = None, None, None
    packet_reader = DechunkedReader(r) if a.chunked else r
    try:
        status, msg = read_packets(packet_reader, a, rev, say)
        if a.chunked:
            packet_reader.finish()
            say("%d chunks" % packet_reader.chunks)
    except Unsupported as e:
        why = "unsupported: %s" % e
    except Idle:
        why = "server silent for %.1fs in the middle of a packet" % a.idle
    except Closed:
        why = "server closed the connection"
    except (ValueError, struct.error, IndexError) as e:
        why = "parse error: %s" % e
    if why:
        say("stopped parsing at byte %d (%s); reading until the server is idle for %.1fs"
            % (r.pos - len(hello_raw), why, a.idle))
        r.drain()
    sock.close()

    body = bytes(r.raw[len(hello_raw):])
    if a.out:
        with open(a.out, "wb") as f:
            f.write(body)
    say("captured %d bytes after the ServerHello%s" % (len(body), (" -> " + a.out) if a.out else ""))
    if status == "eos":
        if r.pos != len(r.raw):
            say("warning: %d extra bytes after EndOfStream" % (len(r.raw) - r.pos))
        return 0
    if status == "exception":
        return 3
    return 4


if __name__ == "__main__":
    sys.exit(main())
