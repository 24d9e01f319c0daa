//! Conversions from raw column values to Rust types (decimals, times, 256-bit integers, addresses, enums).
