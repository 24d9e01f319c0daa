//! Derive macros for chnative. Typed rows arrive in a later issue; this crate reserves the name.
