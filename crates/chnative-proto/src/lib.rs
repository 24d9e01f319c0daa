//! Sans-IO ClickHouse native protocol.
//!
//! Wire primitives, packets, compression framing, the type-name parser, the
//! Native column codecs, and the client connection as a state machine
//! ([`connection`]). Nothing here touches a socket: decoders take the bytes
//! they are given and report [`ProtoError::Incomplete`] with a lower bound on
//! how many bytes they need, so the I/O layer can read more and try again.
//!
//! This is the low level under the `chnative` client (which re-exports it as
//! `chnative::proto`): its items are for drivers of the protocol, not for
//! applications, which find what they need at `chnative`'s root.
#![warn(missing_docs)]

pub mod block;
pub mod buffer;
pub mod chunked;
pub mod cityhash;
pub mod column;
pub mod compression;
pub mod connection;
pub mod convert;
pub mod error;
pub mod error_codes;
pub mod insert;
pub mod packet;
pub mod qbit;
pub mod revision;
pub mod row;
pub mod splice;
pub mod types;
pub mod uuid_simd;
pub mod value;
pub mod view;
pub mod wire;

#[cfg(test)]
mod test_rng;

pub use block::{Block, BlockInfo, BlockLimits, Column};
pub use buffer::{AlignedBuf, BufferPool};
pub use column::ColumnData;
pub use error::{ProtoError, Result};
pub use types::DataType;
pub use view::{ColumnView, FixedValue, StrView, WireUuid};
