//! What `fetch_scalar` returns: the first value of a result, read by the
//! typed-row rules.

use chnative_proto::view::ColumnView;
use chnative_proto::ProtoError;

use crate::error::{Error, Result};
use crate::row;
use crate::stream::QueryStream;

/// A value [`Client::fetch_scalar`](crate::Client::fetch_scalar) can return: any type a typed-row field can
/// have ([`row::FromColumn`]), read by the same rules (`u64` reads UInt8 … UInt64,
/// `f64` reads Float32, `Option<T>` reads Nullable(T), `String` must be UTF-8, …).
pub trait Scalar: Sized {
    /// Checks that `Self` can read a column of `col`'s type (the typed-row check,
    /// with the same error).
    fn check(col: &ColumnView<'_>) -> Result<()>;
    /// Reads row 0 of `col` (`ctx`: the server's time zone, for DateTime columns
    /// that name none).
    fn from_column(col: &ColumnView<'_>, ctx: &row::ReadContext) -> Result<Self>;
}

impl<T: for<'r> row::FromColumn<'r>> Scalar for T {
    fn check(col: &ColumnView<'_>) -> Result<()> {
        Ok(row::positional_check::<T>(col)?)
    }
    fn from_column(col: &ColumnView<'_>, ctx: &row::ReadContext) -> Result<Self> {
        Self::check(col)?;
        if col.is_empty() {
            return Err(Error::internal("fetch_scalar read a column without rows"));
        }
        Ok(row::Reader::<T>::new(col, ctx)?.get(0)?)
    }
}

/// The first value of the first row of a result, read by `T`'s typed-row rules
/// with the zone the server used for DateTime columns that name none (see
/// [`QueryStream::timezone`]; `server_tz` is the server's own).
pub(crate) async fn scalar_of<T: Scalar>(mut s: QueryStream<'_>, server_tz: &str) -> Result<T> {
    // A session zone is copied (the stream is borrowed by its blocks below).
    let session_tz = s.session_zone().map(str::to_string);
    let server_tz = session_tz.as_deref().unwrap_or(server_tz);
    let mut out: Option<T> = None;
    while let Some(block) = s.next().await? {
        if out.is_none() && block.rows() > 0 {
            let col = block
                .columns()
                .first()
                .ok_or_else(|| Error::from(ProtoError::violation("a block with rows has no columns")))?;
            // The zone only where a value may need it: no allocation for the rest.
            let name = col.type_name();
            let zoned = ["DateTime", "Dynamic", "JSON", "Object"].iter().any(|k| name.contains(k));
            let zone = if zoned { server_tz.to_string() } else { String::new() };
            let ctx = row::ReadContext { server_timezone: zone };
            out = Some(T::from_column(&col.view(), &ctx)?);
        }
    }
    if out.is_none() {
        // No rows: still check the type, so that a mismatch is reported as one.
        if let Some(col) = s.header().and_then(|h| h.columns().first()) {
            T::check(&col.view())?;
        }
    }
    out.ok_or_else(|| Error::no_rows("the query returned no rows"))
}
