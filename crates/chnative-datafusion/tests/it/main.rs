//! The one integration-test binary of chnative-datafusion.

mod cluster;
mod provider;
mod pushdown;
