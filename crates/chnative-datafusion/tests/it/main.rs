//! The one integration-test binary of chnative-datafusion.

mod cluster;
#[cfg(feature = "ballista")]
mod on_ballista;
mod provider;
mod pushdown;
