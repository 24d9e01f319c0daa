//! Chunked framing (protocol revision 54470 and later), in both directions.
//!
//! When a direction is chunked, every packet in it travels as a *message*: one
//! or more chunks `[u32 LE size > 0][size bytes]`, then the end marker
//! `[u32 LE 0]`. Chunk boundaries mean nothing to the packet decoder: a chunk
//! may end anywhere inside a packet, and compressed frames travel inside the
//! chunks (the framing is the outermost layer). Framing starts with the first
//! byte after the client's Addendum, in each direction independently.
//!
//! Which directions are chunked is decided from the strings in the server's
//! Hello and the client's own preference ([`negotiate`]), with the rules the
//! server applies to the strings the client then sends in its Addendum.
//!
//! [`frame`] wraps one outgoing packet; [`Dechunker`] strips the framing from
//! received bytes in place, so the decoders see only packet bytes.

use crate::error::{ProtoError, Result};

/// Bytes in a chunk header (and in the end marker).
pub const HEADER_LEN: usize = 4;

/// The largest chunk the wire format can carry.
pub const MAX_CHUNK: usize = u32::MAX as usize;

/// A chunking preference: the values of ClickHouse's `proto_caps` settings,
/// which the client uses for its own side too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Mode {
    /// Never chunked: a peer that requires chunking is refused.
    NotChunked,
    /// Always chunked: a peer that refuses chunking is refused.
    Chunked,
    /// Not chunked unless the peer requires it (the client's default).
    #[default]
    NotChunkedOptional,
    /// Chunked unless the peer refuses it.
    ChunkedOptional,
}

impl Mode {
    /// Parses `notchunked`, `chunked`, `notchunked_optional` or `chunked_optional`.
    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "notchunked" => Mode::NotChunked,
            "chunked" => Mode::Chunked,
            "notchunked_optional" => Mode::NotChunkedOptional,
            "chunked_optional" => Mode::ChunkedOptional,
            _ => return None,
        })
    }

    /// The setting's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::NotChunked => "notchunked",
            Mode::Chunked => "chunked",
            Mode::NotChunkedOptional => "notchunked_optional",
            Mode::ChunkedOptional => "chunked_optional",
        }
    }

    /// Whether this side would rather chunk.
    pub fn prefers_chunked(self) -> bool {
        matches!(self, Mode::Chunked | Mode::ChunkedOptional)
    }

    /// Whether this side gives way to the other.
    pub fn is_optional(self) -> bool {
        matches!(self, Mode::NotChunkedOptional | Mode::ChunkedOptional)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Decides one direction. `server` is the server's Hello string for it (its
/// receiving side for the client's sending direction and the other way round;
/// empty from a server older than 54470, which means not chunked), `client`
/// the client's preference for the same direction.
///
/// An optional server takes the client's preference, an optional client takes
/// the server's, and two sides that both insist must agree. The server reads
/// its string the way it reads the client's: chunked if it starts with
/// `chunked`, optional if it ends with `_optional`. Returns whether the
/// direction is chunked, or why the two sides cannot talk.
pub fn negotiate(server: &str, client: Mode, direction: &str) -> std::result::Result<bool, String> {
    let server_chunked = server.starts_with("chunked");
    if server.ends_with("_optional") {
        return Ok(client.prefers_chunked());
    }
    if client.is_optional() || client.prefers_chunked() == server_chunked {
        return Ok(server_chunked);
    }
    let word = |c: bool| if c { "chunked" } else { "notchunked" };
    Err(format!(
        "incompatible chunked framing for the client's {direction} direction: the server requires {} \
         (its proto_caps say `{server}`) and the client is set to `{client}`",
        word(server_chunked)
    ))
}

/// The chunking negotiated for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Negotiated {
    /// Whether the client's packets are chunked.
    pub send: bool,
    /// Whether the server's packets are chunked.
    pub recv: bool,
}

/// Starts an outgoing packet at the end of `out`: reserves the first chunk
/// header. Returns where the packet starts, for [`frame`].
pub fn begin(out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER_LEN]);
    start
}

/// Frames the packet written to `out` since [`begin`] returned `start`: fills
/// the chunk header and appends the end marker, splitting the packet into
/// chunks of at most `max_chunk` bytes (clamped to 1..=[`MAX_CHUNK`]).
/// An empty packet is removed: the server refuses a message without chunks.
pub fn frame(out: &mut Vec<u8>, start: usize, max_chunk: usize) {
    let max_chunk = max_chunk.clamp(1, MAX_CHUNK);
    let payload = out.len() - start - HEADER_LEN;
    if payload == 0 {
        out.truncate(start);
        return;
    }
    if payload <= max_chunk {
        out[start..start + HEADER_LEN].copy_from_slice(&(payload as u32).to_le_bytes());
    } else {
        // Only for packets larger than a chunk may be (4 GiB unless a test
        // asks for less): copying the packet once is cheap next to sending it.
        let body = out.split_off(start + HEADER_LEN);
        out.truncate(start);
        out.reserve(body.len() + body.len().div_ceil(max_chunk) * HEADER_LEN + HEADER_LEN);
        for piece in body.chunks(max_chunk) {
            out.extend_from_slice(&(piece.len() as u32).to_le_bytes());
            out.extend_from_slice(piece);
        }
    }
    out.extend_from_slice(&[0; HEADER_LEN]);
}

/// What the next received bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A message's first chunk header (a zero here is an empty message).
    MessageStart,
    /// Another chunk header of the current message, or its end marker.
    ChunkOrEnd,
    /// This many more bytes of the current chunk.
    Body(u32),
}

/// Strips chunk framing from received bytes.
#[derive(Debug, Clone)]
pub struct Dechunker {
    expect: Expect,
    max_chunk: u32,
}

impl Dechunker {
    /// A dechunker at the start of the stream (the first chunk has no end
    /// marker before it), refusing chunks longer than `max_chunk` bytes.
    pub fn new(max_chunk: usize) -> Dechunker {
        Dechunker { expect: Expect::MessageStart, max_chunk: max_chunk.clamp(1, MAX_CHUNK) as u32 }
    }

    /// Whether the stream is between messages (the last message ended and no
    /// byte of the next one has arrived).
    pub fn at_message_boundary(&self) -> bool {
        self.expect == Expect::MessageStart
    }

    /// Removes the framing from `buf[from..]` in place: on return `buf[from..end]`
    /// holds the packet bytes of every complete or partial chunk there, and
    /// `buf[end..]` the start of a header that is not complete yet (at most 3
    /// bytes), which the next call continues from once more bytes are appended.
    /// Returns `end`.
    ///
    /// A zero-length first chunk (an empty message) or a chunk longer than the
    /// limit is an error; the stream cannot be resynchronised after it.
    pub fn strip(&mut self, buf: &mut Vec<u8>, from: usize) -> Result<usize> {
        let mut read = from;
        let mut write = from;
        loop {
            match self.expect {
                Expect::Body(left) => {
                    let n = (left as usize).min(buf.len() - read);
                    if n == 0 {
                        break;
                    }
                    if read != write {
                        buf.copy_within(read..read + n, write);
                    }
                    read += n;
                    write += n;
                    let left = left - n as u32;
                    self.expect = if left == 0 { Expect::ChunkOrEnd } else { Expect::Body(left) };
                }
                expect => {
                    let Some(header) = buf.get(read..read + HEADER_LEN) else { break };
                    let size = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
                    if size > self.max_chunk {
                        return Err(ProtoError::TooLarge {
                            what: "chunk",
                            got: u64::from(size),
                            limit: u64::from(self.max_chunk),
                        });
                    }
                    self.expect = match (expect, size) {
                        (Expect::MessageStart, 0) => {
                            return Err(ProtoError::Violation(
                                "empty chunked message: a zero-length chunk where a packet should start".into(),
                            ))
                        }
                        (_, 0) => Expect::MessageStart,
                        (_, size) => Expect::Body(size),
                    };
                    read += HEADER_LEN;
                }
            }
        }
        buf.drain(write..read);
        Ok(write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames `packets` one message each, with chunks of at most `max_chunk`.
    fn framed(packets: &[&[u8]], max_chunk: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for p in packets {
            let start = begin(&mut out);
            out.extend_from_slice(p);
            frame(&mut out, start, max_chunk);
        }
        out
    }

    /// Feeds `wire` cut at `cuts` and returns the packet bytes, or the first error.
    fn strip_in_pieces(wire: &[u8], cuts: &[usize], max_chunk: usize) -> Result<Vec<u8>> {
        let mut d = Dechunker::new(max_chunk);
        let mut buf = Vec::new();
        let mut end = 0;
        let mut at = 0;
        for &cut in cuts.iter().chain(std::iter::once(&wire.len())) {
            buf.extend_from_slice(&wire[at..cut]);
            at = cut;
            end = d.strip(&mut buf, end)?;
            assert!(buf.len() - end < HEADER_LEN, "only a partial header may stay raw");
        }
        assert_eq!(end, buf.len(), "a header was left incomplete");
        Ok(buf)
    }

    #[test]
    fn frames_a_packet_as_one_chunk_and_an_end_marker() {
        assert_eq!(framed(&[&[4]], MAX_CHUNK), [1, 0, 0, 0, 4, 0, 0, 0, 0]);
        assert_eq!(framed(&[b"abcde"], 2), b"\x02\0\0\0ab\x02\0\0\0cd\x01\0\0\0e\0\0\0\0");
        assert_eq!(framed(&[b"abcd"], 2), b"\x02\0\0\0ab\x02\0\0\0cd\0\0\0\0");
        // An empty packet leaves nothing (the server refuses empty messages).
        assert_eq!(framed(&[b"", b"x"], 8), b"\x01\0\0\0x\0\0\0\0");
        // Bytes before the packet are kept.
        let mut out = b"raw".to_vec();
        let s = begin(&mut out);
        out.push(9);
        frame(&mut out, s, 0);
        assert_eq!(out, b"raw\x01\0\0\0\x09\0\0\0\0");
    }

    #[test]
    fn strips_at_every_cut() {
        let packets: [&[u8]; 3] = [b"\x04", b"hello, world", b"0123456789abcdef"];
        let want: Vec<u8> = packets.concat();
        for max_chunk in [1, 3, 5, 64] {
            let wire = framed(&packets, max_chunk);
            for cut in 0..=wire.len() {
                assert_eq!(strip_in_pieces(&wire, &[cut], 64).unwrap(), want, "max {max_chunk}, cut {cut}");
            }
            for a in 0..=wire.len() {
                for b in a..=wire.len() {
                    assert_eq!(strip_in_pieces(&wire, &[a, b], 64).unwrap(), want);
                }
            }
            let every: Vec<usize> = (1..wire.len()).collect();
            assert_eq!(strip_in_pieces(&wire, &every, 64).unwrap(), want);
        }
    }

    #[test]
    fn several_packets_in_one_message_and_one_packet_across_chunks() {
        // The decoder does not care where packets end: two packets in one
        // chunk, and a packet over three chunks, give the same bytes.
        let wire = b"\x05\0\0\0\x04\x04\x05ab\x01\0\0\0c\0\0\0\0\x01\0\0\0\x05\0\0\0\0";
        assert_eq!(strip_in_pieces(wire, &[], 16).unwrap(), b"\x04\x04\x05abc\x05");
    }

    #[test]
    fn the_end_marker_alone_yields_nothing() {
        let mut d = Dechunker::new(16);
        let mut buf = b"\x01\0\0\0z".to_vec();
        assert_eq!(d.strip(&mut buf, 0).unwrap(), 1);
        assert!(!d.at_message_boundary());
        buf.extend_from_slice(&[0, 0]);
        assert_eq!(d.strip(&mut buf, 1).unwrap(), 1);
        assert_eq!(buf, b"z\0\0");
        buf.extend_from_slice(&[0, 0]);
        assert_eq!(d.strip(&mut buf, 1).unwrap(), 1);
        assert_eq!(buf, b"z");
        assert!(d.at_message_boundary());
    }

    #[test]
    fn empty_messages_are_refused() {
        let e = strip_in_pieces(b"\0\0\0\0", &[], 16).unwrap_err();
        assert!(matches!(e, ProtoError::Violation(ref m) if m.contains("empty chunked message")), "{e}");
        // After a complete message, too.
        let e = strip_in_pieces(b"\x01\0\0\0a\0\0\0\0\0\0\0\0", &[], 16).unwrap_err();
        assert!(matches!(e, ProtoError::Violation(_)), "{e}");
    }

    #[test]
    fn hostile_lengths_are_refused_before_use() {
        for wire in [&b"\xff\xff\xff\xff"[..], b"\x01\0\0\0a\xff\xff\xff\xff", b"\x11\0\0\0"] {
            let e = strip_in_pieces(wire, &[], 16).unwrap_err();
            assert!(matches!(e, ProtoError::TooLarge { what: "chunk", limit: 16, .. }), "{e}");
        }
        // The largest length the format has is fine when the limit allows it:
        // nothing is allocated for it, the bytes just count down.
        let mut d = Dechunker::new(MAX_CHUNK);
        let mut buf = b"\xff\xff\xff\xffabc".to_vec();
        assert_eq!(d.strip(&mut buf, 0).unwrap(), 3);
        assert_eq!(buf, b"abc");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

        /// Any packets, framed with any chunk size and received in any pieces,
        /// come out as the same bytes.
        #[test]
        fn framing_round_trips(
            packets in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 1..200), 0..8),
            max_chunk in 1usize..64,
            cuts in proptest::collection::vec(0usize..2000, 0..8),
        ) {
            let refs: Vec<&[u8]> = packets.iter().map(Vec::as_slice).collect();
            let wire = framed(&refs, max_chunk);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (wire.len() + 1)).collect();
            cuts.sort_unstable();
            proptest::prop_assert_eq!(strip_in_pieces(&wire, &cuts, 64).unwrap(), packets.concat());
        }

        /// Arbitrary bytes give packet bytes or an error, never a panic, and
        /// never more packet bytes than came in.
        #[test]
        fn arbitrary_bytes_are_safe(wire in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300), split in 0usize..300) {
            let mut d = Dechunker::new(100);
            let mut buf = wire[..split.min(wire.len())].to_vec();
            if let Ok(end) = d.strip(&mut buf, 0) {
                buf.extend_from_slice(&wire[split.min(wire.len())..]);
                if let Ok(end) = d.strip(&mut buf, end) {
                    proptest::prop_assert!(end <= wire.len());
                    proptest::prop_assert!(buf.len() - end < HEADER_LEN);
                }
            }
        }
    }

    #[test]
    fn negotiation_follows_the_server_rules() {
        use Mode::*;
        // (server string, client mode) -> chunked?, as ClickHouse's TCPHandler
        // and Connection decide.
        let cases: [(&str, Mode, Option<bool>); 17] = [
            ("notchunked", NotChunkedOptional, Some(false)),
            ("notchunked", ChunkedOptional, Some(false)),
            ("notchunked", NotChunked, Some(false)),
            ("notchunked", Chunked, None),
            ("chunked", NotChunkedOptional, Some(true)),
            ("chunked", ChunkedOptional, Some(true)),
            ("chunked", Chunked, Some(true)),
            ("chunked", NotChunked, None),
            ("chunked_optional", NotChunkedOptional, Some(false)),
            ("chunked_optional", ChunkedOptional, Some(true)),
            ("chunked_optional", NotChunked, Some(false)),
            ("chunked_optional", Chunked, Some(true)),
            ("notchunked_optional", ChunkedOptional, Some(true)),
            ("notchunked_optional", NotChunkedOptional, Some(false)),
            // An old server sends no string: not chunked.
            ("", NotChunkedOptional, Some(false)),
            ("", Chunked, None),
            ("", ChunkedOptional, Some(false)),
        ];
        for (server, client, want) in cases {
            let got = negotiate(server, client, "send");
            assert_eq!(got.as_ref().ok().copied(), want, "{server} / {client}: {got:?}");
        }
        let e = negotiate("chunked", NotChunked, "recv").unwrap_err();
        assert!(e.contains("recv") && e.contains("requires chunked"), "{e}");
        for m in [NotChunked, Chunked, NotChunkedOptional, ChunkedOptional] {
            assert_eq!(Mode::parse(m.as_str()), Some(m));
        }
        assert_eq!(Mode::parse("Chunked"), None);
        assert_eq!(Mode::default(), NotChunkedOptional);
    }
}
