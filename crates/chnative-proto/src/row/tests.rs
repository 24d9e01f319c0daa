//! The type system without a server: which Rust types read and write which
//! column types, and values through a column buffer's bytes and back.

use super::*;

#[test]
fn the_error_is_one_pointer() {
    assert!(std::mem::size_of::<RowError>() <= 16);
    assert_eq!(std::mem::size_of::<RowResult<()>>(), std::mem::size_of::<usize>());
}
