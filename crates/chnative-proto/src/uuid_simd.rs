//! UUID columns to RFC 4122 bytes in bulk.
