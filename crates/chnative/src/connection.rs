//! The single-socket client: one [`Slot`] and the server's facts, with the
//! query surface of `executor.rs`.

use crate::config::Config;
use crate::driver::{ServerInfo, Slot};
use crate::error::Result;
use crate::{executor, hosts};

/// One connection to a ClickHouse server: a single socket, one call at a time
/// (`&mut self`). Most programs want the pooled [`Client`]; this is the layer
/// below it, for programs that want exactly one socket.
pub struct Connection {
    slot: Slot,
    info: ServerInfo,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.info.display_name)
            .field("usable", &self.is_usable())
            .finish()
    }
}

impl Connection {
    /// Connects with a connection string (see [`Config::from_url`]).
    pub async fn connect(url: &str) -> Result<Connection> {
        Self::connect_with(Config::from_url(url)?).await
    }

    /// Connects with a [`Config`] (to the first of its hosts that answers).
    pub async fn connect_with(config: Config) -> Result<Connection> {
        let conn = hosts::Connector::new(config)?.connect().await?;
        let info = ServerInfo::of(&conn);
        Ok(Connection { slot: Slot::new(conn), info })
    }

    executor::single_socket_api!(slot);
}
