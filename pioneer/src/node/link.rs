//! One robot's TCP side: a listener on its port that serves one client at
//! a time (as AMRISim does), the handshake, and the stream of commands
//! handed to the plugin through a [`Link`]. Outgoing packets go back
//! through the link's writer. What comes off the wire is checked here:
//! malformed packets are dropped and counted, a client that never
//! completes the handshake is closed after [`SYNC_TIMEOUT`], and one that
//! sends nothing for the watchdog time has its robot stopped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use crate::command::Command;
use crate::packet::PacketReader;
use crate::session::{Handshake, SyncStep, SYNC_TIMEOUT};

/// What the TCP side tells the plugin.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkEvent {
    /// A client completed the handshake.
    Connected,
    /// A command from the client.
    Command(Command),
    /// The client sent nothing for the watchdog time.
    Watchdog,
    /// The client is gone (closed, CLOSE, or an error).
    Disconnected,
}

/// Shared between a robot's TCP tasks and the plugin.
#[derive(Debug, Default)]
pub struct Link {
    events: Mutex<Vec<LinkEvent>>,
    writer: Mutex<Option<UnboundedSender<Vec<u8>>>>,
    /// Packets dropped: bad checksum, bad length, bytes outside packets.
    pub malformed: AtomicU64,
}

impl Link {
    fn push(&self, event: LinkEvent) {
        self.events.lock().unwrap_or_else(|e| e.into_inner()).push(event);
    }

    /// The events since the last call, in order.
    pub fn take_events(&self, into: &mut Vec<LinkEvent>) {
        into.append(&mut self.events.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Sends `bytes` to the connected client, if any.
    pub fn send(&self, bytes: Vec<u8>) {
        if let Some(writer) = self.writer.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            let _ = writer.send(bytes);
        }
    }

    fn set_writer(&self, writer: Option<UnboundedSender<Vec<u8>>>) {
        *self.writer.lock().unwrap_or_else(|e| e.into_inner()) = writer;
    }
}

/// Serves clients on `listener` one after another for the robot `name`.
pub async fn listen(
    listener: TcpListener,
    link: Arc<Link>,
    name: String,
    identification: Vec<u8>,
    watchdog: Option<Duration>,
) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                tracing::info!("{name}: client {peer} connected");
                serve_client(stream, &link, &name, &identification, watchdog).await;
                tracing::info!("{name}: client {peer} gone");
            }
            Err(e) => {
                tracing::warn!("{name}: accepting a client failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// ARCOS's handshake (SYNC0, SYNC1, SYNC2) on a new connection, answering
/// with `identification`; malformed packets are counted and dropped.
async fn handshake(
    read: &mut OwnedReadHalf,
    write: &mut OwnedWriteHalf,
    reader: &mut PacketReader,
    buffer: &mut [u8],
    link: &Link,
    name: &str,
    identification: &[u8],
) -> Result<(), String> {
    let mut handshake = Handshake::default();
    loop {
        while let Some(item) = reader.next_packet() {
            match item {
                Ok(packet) => match handshake.on_packet(packet.id, || identification.to_vec()) {
                    SyncStep::Reply(bytes) => write.write_all(&bytes).await.map_err(|e| e.to_string())?,
                    SyncStep::Done(bytes) => {
                        write.write_all(&bytes).await.map_err(|e| e.to_string())?;
                        return Ok(());
                    }
                    SyncStep::Refuse(reason) => return Err(reason),
                },
                Err(malformed) => {
                    link.malformed.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!("{name}: dropped during the handshake: {malformed}");
                }
            }
        }
        match read.read(buffer).await {
            Ok(0) => return Err("the client closed the connection".to_string()),
            Ok(n) => reader.push(&buffer[..n]),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Runs one client's connection to its end.
pub async fn serve_client(
    stream: TcpStream,
    link: &Link,
    name: &str,
    identification: &[u8],
    watchdog: Option<Duration>,
) {
    let _ = stream.set_nodelay(true);
    let (mut read, mut write) = stream.into_split();
    let mut reader = PacketReader::default();
    let mut buffer = vec![0u8; 4096];
    // The handshake, under its own deadline.
    let handshake = handshake(&mut read, &mut write, &mut reader, &mut buffer, link, name, identification);
    match tokio::time::timeout(SYNC_TIMEOUT, handshake).await {
        Ok(Ok(())) => {}
        Ok(Err(reason)) => {
            tracing::warn!("{name}: handshake failed: {reason}");
            return;
        }
        Err(_) => {
            tracing::warn!("{name}: no handshake within {} s; closing", SYNC_TIMEOUT.as_secs());
            return;
        }
    }
    let (to_client, mut outgoing) = unbounded_channel::<Vec<u8>>();
    link.set_writer(Some(to_client));
    link.push(LinkEvent::Connected);
    let writer = tokio::spawn(async move {
        while let Some(bytes) = outgoing.recv().await {
            if write.write_all(&bytes).await.is_err() {
                break;
            }
        }
    });
    let mut warned = 0u64;
    let mut in_watchdog = false;
    'connection: loop {
        while let Some(item) = reader.next_packet() {
            match item {
                Ok(packet) => {
                    in_watchdog = false;
                    let command = Command::decode(&packet);
                    let close = command == Command::Close;
                    link.push(LinkEvent::Command(command));
                    if close {
                        break 'connection;
                    }
                }
                Err(malformed) => {
                    let count = link.malformed.fetch_add(1, Ordering::Relaxed) + 1;
                    // Rate-limited: the first, then at powers of two.
                    if count.is_power_of_two() && count > warned {
                        warned = count;
                        tracing::warn!("{name}: dropped a malformed packet ({malformed}); {count} so far");
                    }
                }
            }
        }
        let read_once = read.read(&mut buffer);
        let result = match watchdog.filter(|_| !in_watchdog) {
            Some(limit) => match tokio::time::timeout(limit, read_once).await {
                Ok(result) => result,
                Err(_) => {
                    tracing::warn!("{name}: nothing from the client for {} ms: stopping the robot", limit.as_millis());
                    in_watchdog = true;
                    link.push(LinkEvent::Watchdog);
                    continue;
                }
            },
            None => read_once.await,
        };
        match result {
            Ok(0) | Err(_) => break,
            Ok(n) => reader.push(&buffer[..n]),
        }
    }
    link.set_writer(None);
    link.push(LinkEvent::Disconnected);
    writer.abort();
}
