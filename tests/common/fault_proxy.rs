//! A TCP proxy on loopback in front of an API server, to make it slow or hung without touching
//! the server: TLS passes through untouched, so the client still verifies the real server.

use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    Pass,
    /// Every chunk from the server is held this long before it is passed on.
    Slow(Duration),
    /// Connections are accepted, nothing is passed on in either direction.
    Hung,
}

pub struct FaultProxy {
    pub addr: SocketAddr,
    mode: watch::Sender<Mode>,
}

impl FaultProxy {
    pub async fn start(upstream: SocketAddr) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (mode, _) = watch::channel(Mode::Pass);
        let modes = mode.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let modes = modes.subscribe();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let (client_read, client_write) = client.into_split();
                    let (server_read, server_write) = server.into_split();
                    let up = pump(client_read, server_write, modes.clone(), false);
                    let down = pump(server_read, client_write, modes, true);
                    tokio::select! { _ = up => {}, _ = down => {} }
                });
            }
        });
        FaultProxy { addr, mode }
    }

    pub fn set(&self, mode: Mode) {
        self.mode.send_replace(mode);
    }
}

/// Copies one direction, obeying the mode before every chunk; `from_server` chunks are the
/// ones a slow server delays.
async fn pump(
    mut from: impl AsyncReadExt + Unpin,
    mut to: impl AsyncWriteExt + Unpin,
    mut modes: watch::Receiver<Mode>,
    from_server: bool,
) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        loop {
            let mode = *modes.borrow_and_update();
            match mode {
                Mode::Hung => {
                    if modes.changed().await.is_err() {
                        return;
                    }
                }
                Mode::Slow(delay) if from_server => {
                    tokio::time::sleep(delay).await;
                    break;
                }
                _ => break,
            }
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}
