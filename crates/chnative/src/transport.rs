//! The bottom layer: byte streams to a server. The [`Transport`] trait, its
//! TCP implementation (TLS's is in `tls.rs`), and the stream a closed
//! connection holds instead (`Shut`). Dialing is in `dial.rs`. Nothing here
//! knows the protocol.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// A byte stream to a server: TCP, or TLS over TCP (see `tls.rs`).
pub(crate) trait Transport: AsyncRead + AsyncWrite + Unpin + Send {
    /// Writes without waiting, if the transport can (used from `Drop`).
    fn try_write_now(&self, _buf: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::WouldBlock.into())
    }

    /// Reads what is already there without waiting, if the transport can.
    fn try_read_now(&mut self, _buf: &mut Vec<u8>) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::WouldBlock.into())
    }

    /// Reads into `first` and then `second`, in one system call where the
    /// transport can (a TLS stream decrypts into `first` only). Returns how
    /// many bytes arrived, 0 at the end of the stream.
    fn poll_read_pair(
        &mut self,
        cx: &mut std::task::Context<'_>,
        first: &mut [u8],
        _second: &mut [u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let mut buf = tokio::io::ReadBuf::new(first);
        std::pin::Pin::new(self).poll_read(cx, &mut buf).map_ok(|()| buf.filled().len())
    }
}

/// What a closed connection holds instead of its socket: every operation fails.
pub(crate) struct Shut;

impl Shut {
    fn err() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::NotConnected, "the connection was closed after an error")
    }
}

impl AsyncRead for Shut {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Err(Shut::err()))
    }
}

impl AsyncWrite for Shut {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Ready(Err(Shut::err()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

impl Transport for Shut {}

impl Transport for TcpStream {
    fn try_write_now(&self, buf: &[u8]) -> std::io::Result<usize> {
        self.try_write(buf)
    }

    fn try_read_now(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        self.try_read_buf(buf)
    }

    fn poll_read_pair(
        &mut self,
        cx: &mut std::task::Context<'_>,
        first: &mut [u8],
        second: &mut [u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        use std::io::IoSliceMut;
        loop {
            std::task::ready!(self.poll_read_ready(cx))?;
            // A WouldBlock clears the readiness, so the next poll waits again.
            match self.try_read_vectored(&mut [IoSliceMut::new(first), IoSliceMut::new(second)]) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                r => return std::task::Poll::Ready(r),
            }
        }
    }
}
