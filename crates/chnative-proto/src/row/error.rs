//! The error of the type system: why a value could not be read from or written to
//! a column. One pointer wide (the details are boxed), like the client's error,
//! because every typed row is read as a `Result<T, RowError>`.

use crate::convert::ConvertError;
use crate::ProtoError;

/// Why a value could not be read from a column or written to one; see
/// [`RowError::kind`]. The client (`chnative`) converts it into its own error
/// with the same kind and text.
pub struct RowError(Box<RowErrorKind>);

const _: () = assert!(std::mem::size_of::<RowError>() <= 16);

/// What a [`RowError`] is. Exhaustive, so that the client maps every kind to its
/// own (a new kind is a breaking change of this crate, made with the client's).
#[derive(Debug, thiserror::Error)]
pub enum RowErrorKind {
    /// A column error: its bytes break the protocol (a violation), a type
    /// mismatch ([`ProtoError::TypeMismatch`]), or column data that does not fit
    /// its type.
    #[error("{}", proto_text(.0))]
    Column(ProtoError),
    /// A column value could not be converted to the Rust type asked for.
    #[error("conversion: {0}")]
    Convert(ConvertError),
    /// A value or type the caller gave that cannot be read or written as asked.
    #[error("{0}")]
    InvalidInput(String),
    /// An invariant of the type system itself did not hold: a bug.
    #[error("internal error (a bug in chnative; please report it): {0}")]
    Internal(String),
}

/// The client's text for a column error: a type mismatch or data that does not
/// fit is the caller's, anything else the server's bytes breaking the protocol.
fn proto_text(e: &ProtoError) -> String {
    match e {
        ProtoError::TypeMismatch { .. } | ProtoError::InvalidColumn { .. } | ProtoError::NoSuchColumn { .. } => {
            e.to_string()
        }
        e => format!("protocol: {e}"),
    }
}

/// A `Result` of the type system.
pub type RowResult<T, E = RowError> = std::result::Result<T, E>;

impl RowError {
    /// What the error is.
    pub fn kind(&self) -> &RowErrorKind {
        &self.0
    }
    /// What the error is, by value.
    pub fn into_kind(self) -> RowErrorKind {
        *self.0
    }
    /// A value or type that cannot be read or written as asked.
    #[cold]
    pub fn invalid_input(why: impl Into<String>) -> RowError {
        RowErrorKind::InvalidInput(why.into()).into()
    }
    /// A broken invariant: a bug.
    #[cold]
    pub fn internal(what: impl Into<String>) -> RowError {
        RowErrorKind::Internal(what.into()).into()
    }
    /// Column `column` is of type `actual`, not what was `requested`.
    #[cold]
    pub fn type_mismatch(
        column: impl Into<String>,
        requested: impl Into<String>,
        actual: impl Into<String>,
    ) -> RowError {
        ProtoError::TypeMismatch { column: column.into(), requested: requested.into(), actual: actual.into() }.into()
    }
    /// The column, the type asked for and the column's type, if this is a type mismatch.
    pub fn as_type_mismatch(&self) -> Option<(&str, &str, &str)> {
        match &*self.0 {
            RowErrorKind::Column(ProtoError::TypeMismatch { column, requested, actual }) => {
                Some((column, requested, actual))
            }
            _ => None,
        }
    }
}

impl From<RowErrorKind> for RowError {
    #[cold]
    fn from(k: RowErrorKind) -> Self {
        RowError(Box::new(k))
    }
}

impl From<ProtoError> for RowError {
    #[cold]
    fn from(e: ProtoError) -> Self {
        RowErrorKind::Column(e).into()
    }
}

impl From<ConvertError> for RowError {
    #[cold]
    fn from(e: ConvertError) -> Self {
        RowErrorKind::Convert(e).into()
    }
}

impl std::fmt::Display for RowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::fmt::Debug for RowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl std::error::Error for RowError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&*self.0)
    }
}
