//! The single-socket client: one `Slot` and the server's facts, with the
//! query surface of `executor.rs`.

use crate::config::Config;
use crate::driver::ServerInfo;
use crate::error::Result;
use crate::hosts::Connector;
use crate::slot::Slot;

/// One connection to a ClickHouse server: a single socket, one call at a time
/// (`&mut self`). Most programs want the pooled [`Client`](crate::Client); this is
/// the layer below it, for programs that want exactly one socket.
///
/// It drives one [`chnative_proto::connection::Connection`], the sans-IO protocol
/// machine, over its socket: the I/O half of the same connection, as
/// `quinn::Connection` is to `quinn_proto::Connection`.
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
        let conn = Connector::new(config)?.connect().await?;
        let info = ServerInfo::of(&conn);
        Ok(Connection { slot: Slot::new(conn), info })
    }

    crate::executor::single_socket_api!(slot);
}

impl crate::executor::sealed::Sealed for Connection {
    fn via(&mut self) -> crate::via::Via<'_> {
        Connection::via(self)
    }
}
impl crate::executor::Executor for Connection {}
