//! `IPv4` and `IPv6` values ↔ `std::net` addresses.
//!
//! An `IPv4` is a `u32` holding the address as a number (`1.2.3.4` is
//! `0x01020304`), an `IPv6` is 16 bytes in network order.
//!
//! ```
//! use chnative_proto::convert::net;
//! use std::net::{Ipv4Addr, Ipv6Addr};
//! assert_eq!(net::ipv4(0x0102_0304), Ipv4Addr::new(1, 2, 3, 4));
//! assert_eq!(net::from_ipv4(Ipv4Addr::LOCALHOST), 0x7f00_0001);
//! assert_eq!(net::ipv6(net::from_ipv6(Ipv6Addr::LOCALHOST)), Ipv6Addr::LOCALHOST);
//! ```
//!
//! Text differs from the server's `toString` in one case: an IPv4-compatible
//! address (`::a.b.c.d`, first 96 bits zero) is `::1.2.3.4` there and
//! `::102:304` in Rust; both parse to the same address.

use std::net::{Ipv4Addr, Ipv6Addr};

/// `IPv4` wire value → address.
///
/// ```
/// assert_eq!(chnative_proto::convert::net::ipv4(u32::MAX).to_string(), "255.255.255.255");
/// ```
pub fn ipv4(v: u32) -> Ipv4Addr {
    Ipv4Addr::from(v)
}

/// Address → `IPv4` wire value.
///
/// ```
/// use std::net::Ipv4Addr;
/// assert_eq!(chnative_proto::convert::net::from_ipv4(Ipv4Addr::new(10, 0, 0, 1)), 0x0a00_0001);
/// ```
pub fn from_ipv4(a: Ipv4Addr) -> u32 {
    u32::from(a)
}

/// `IPv6` wire value → address.
///
/// ```
/// let mut b = [0u8; 16];
/// b[15] = 1;
/// assert_eq!(chnative_proto::convert::net::ipv6(b).to_string(), "::1");
/// ```
pub fn ipv6(bytes: [u8; 16]) -> Ipv6Addr {
    Ipv6Addr::from(bytes)
}

/// Address → `IPv6` wire value.
///
/// ```
/// use std::net::Ipv6Addr;
/// assert_eq!(chnative_proto::convert::net::from_ipv6(Ipv6Addr::UNSPECIFIED), [0; 16]);
/// ```
pub fn from_ipv6(a: Ipv6Addr) -> [u8; 16] {
    a.octets()
}
