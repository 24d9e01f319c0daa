//! What the code `#[derive(Row)]`, `#[derive(Enum)]` and `#[derive(Variant)]`
//! generate names (`::chnative::__private::…`): public so that it resolves in
//! the user's crate, hidden from the docs and not part of the API (it changes
//! with the derive, in any release). The per-block readers
//! ([`FromColumn::Reader`]) and insert buffers ([`ToColumn::Buffer`]) of the
//! supported field types, the helpers a derived impl calls, and the traits they
//! implement (so that generated code needs this one path).

pub use chnative_proto::row::__private::*;
