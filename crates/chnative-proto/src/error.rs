//! The one error type of the protocol crate.

use std::fmt;

/// Everything that can go wrong while decoding or encoding protocol bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtoError {
    /// The input ended before the value did. `needed` is a lower bound on the
    /// number of bytes the whole value needs, counted from the start of the input
    /// the decoder was given; callers read at least that many before retrying.
    #[error("input incomplete: need at least {needed} bytes")]
    Incomplete {
        /// Lower bound on the total input length needed.
        needed: usize,
    },
    /// The peer sent bytes that break the protocol.
    #[error("protocol violation: {0}")]
    Violation(String),
    /// A length read from the wire exceeds the configured bound.
    #[error("{what} of {got} exceeds the limit of {limit}")]
    TooLarge {
        /// What was being sized.
        what: &'static str,
        /// The length the peer announced.
        got: u64,
        /// The limit in force.
        limit: u64,
    },
    /// A compressed frame failed its CityHash128 checksum.
    #[error("compressed frame checksum mismatch: expected {expected:032x}, computed {computed:032x}")]
    Checksum {
        /// The checksum carried by the frame.
        expected: u128,
        /// The checksum of the bytes received.
        computed: u128,
    },
    /// A type name we could not parse, or a type we do not implement.
    #[error("unsupported or malformed type `{ty}`: {reason}")]
    Type {
        /// The type name as the server spelled it.
        ty: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A column was read or written as a type it does not have.
    #[error("column `{column}` is {actual}, not {requested}")]
    TypeMismatch {
        /// The column's name.
        column: String,
        /// What the caller asked for.
        requested: String,
        /// The column's ClickHouse type.
        actual: String,
    },
    /// Column data built by the caller does not fit its type (a user error,
    /// caught before anything is sent).
    #[error("column `{column}` ({ty}): {reason}")]
    InvalidColumn {
        /// The column's name.
        column: String,
        /// The ClickHouse type (or, before the type is known, the data's shape).
        ty: String,
        /// What does not fit.
        reason: String,
    },
    /// A block has no column of the name asked for.
    #[error("no column `{column}` in the block (it has {})", present_list(.present))]
    NoSuchColumn {
        /// The name asked for.
        column: String,
        /// The block's column names, in order.
        present: Vec<String>,
    },
    /// Compression or decompression failed.
    #[error("compression: {0}")]
    Compression(String),
}

impl ProtoError {
    /// Shorthand for a protocol violation.
    pub fn violation(msg: impl fmt::Display) -> Self {
        ProtoError::Violation(msg.to_string())
    }

    /// Shorthand for an invalid column.
    pub fn invalid_column(column: impl Into<String>, ty: impl Into<String>, reason: impl fmt::Display) -> Self {
        ProtoError::InvalidColumn { column: column.into(), ty: ty.into(), reason: reason.to_string() }
    }

    /// Shorthand for a type error.
    pub fn ty(ty: impl Into<String>, reason: impl fmt::Display) -> Self {
        ProtoError::Type { ty: ty.into(), reason: reason.to_string() }
    }
}

fn present_list(names: &[String]) -> String {
    if names.is_empty() {
        return "no columns".into();
    }
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// Result alias for the protocol crate.
pub type Result<T, E = ProtoError> = std::result::Result<T, E>;
