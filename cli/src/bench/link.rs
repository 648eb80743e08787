//! A link with latency for `flotilla bench --link-latency`: a TCP relay
//! between the nodes and the world that holds every chunk of bytes it
//! forwards, in each direction, for the added latency before passing it on,
//! as a link between two machines would. The nodes connect to the relay,
//! the world listens behind it; node-to-node traffic (the wander node's
//! commands to the drive) stays on loopback, as on one machine of nodes.
//!
//! Why a relay rather than `tc netem` on a veth pair between network
//! namespaces: a kernel without the netem scheduler (this project's CI
//! machines) cannot add latency to a link, and a relay adds it the same
//! way on any kernel. It forwards bytes in order and without a bandwidth
//! limit; each chunk waits for the latency on its own clock, so a burst is
//! not serialised behind its first chunk.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// How often the accepting thread looks whether the relay was dropped.
const ACCEPT_POLL: Duration = Duration::from_millis(20);

/// The largest chunk read at once, bytes.
const CHUNK_BYTES: usize = 64 * 1024;

/// A running relay to one upstream address; it stops accepting when
/// dropped (open connections end when either side closes them).
pub(super) struct Link {
    /// Where the nodes connect, a Zenoh endpoint.
    pub(super) endpoint: String,
    stop: Arc<AtomicBool>,
}

impl Link {
    /// Relays connections on a free loopback port to `upstream`, adding
    /// `latency_ms` to each direction.
    pub(super) fn start(upstream: SocketAddr, latency_ms: f64) -> anyhow::Result<Link> {
        if !(latency_ms.is_finite() && latency_ms >= 0.0) {
            bail!("--link-latency: {latency_ms} ms is not a latency (a number of ms, 0 or more)");
        }
        let latency = Duration::from_secs_f64(latency_ms * 1e-3);
        let listener = TcpListener::bind("127.0.0.1:0").context("--link-latency: binding the relay")?;
        listener.set_nonblocking(true)?;
        let endpoint = format!("tcp/{}", listener.local_addr()?);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::Builder::new().name("link-accept".into()).spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((near, _)) => match relay(near, upstream, latency) {
                        // The world is not up yet: the node tries again.
                        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
                        Err(e) => eprintln!("--link-latency: a connection to {upstream} failed: {e}"),
                        Ok(()) => {}
                    },
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(ACCEPT_POLL),
                    Err(e) => eprintln!("--link-latency: accepting: {e}"),
                }
            }
        })?;
        Ok(Link { endpoint, stop })
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Connects `near` to `upstream` with `latency` each way.
fn relay(near: TcpStream, upstream: SocketAddr, latency: Duration) -> std::io::Result<()> {
    near.set_nonblocking(false)?;
    let far = TcpStream::connect(upstream)?;
    for stream in [&near, &far] {
        stream.set_nodelay(true)?;
    }
    delay(near.try_clone()?, far.try_clone()?, latency)?;
    delay(far, near, latency)
}

/// Forwards what `from` sends to `to`, each chunk `latency` after it
/// arrived: a reading thread stamps the chunks, a writing thread waits for
/// each stamp. At the end of `from` the write half of `to` is shut, so the
/// end passes on too.
fn delay(mut from: TcpStream, mut to: TcpStream, latency: Duration) -> std::io::Result<()> {
    let (chunks, delayed) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::Builder::new().name("link-read".into()).spawn(move || {
        let mut buffer = vec![0u8; CHUNK_BYTES];
        while let Ok(n @ 1..) = from.read(&mut buffer) {
            if chunks.send((Instant::now() + latency, buffer[..n].to_vec())).is_err() {
                break;
            }
        }
    })?;
    std::thread::Builder::new().name("link-write".into()).spawn(move || {
        for (due, chunk) in delayed {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            if to.write_all(&chunk).is_err() {
                return;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server behind the relay: a message's round trip takes the
    /// latency twice (there and back), and the bytes come back as sent.
    #[test]
    fn a_round_trip_takes_the_latency_each_way_and_keeps_the_bytes() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let upstream = server.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut stream, _) = server.accept().unwrap();
            let mut buffer = [0u8; 1024];
            while let Ok(n @ 1..) = stream.read(&mut buffer) {
                stream.write_all(&buffer[..n]).unwrap();
            }
        });
        let link = Link::start(upstream, 30.0).unwrap();
        let mut client = TcpStream::connect(link.endpoint.trim_start_matches("tcp/")).unwrap();
        let sent = Instant::now();
        client.write_all(b"state 42").unwrap();
        let mut echoed = [0u8; 8];
        client.read_exact(&mut echoed).unwrap();
        let round_trip = sent.elapsed();
        assert_eq!(&echoed, b"state 42");
        assert!(round_trip >= Duration::from_millis(60), "round trip {round_trip:?}, at least 2 × 30 ms");
    }

    #[test]
    fn a_latency_that_is_not_one_is_refused() {
        let upstream: SocketAddr = "127.0.0.1:9".parse().unwrap();
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let e = Link::start(upstream, bad).err().expect("refused");
            assert!(e.to_string().contains("--link-latency"), "{e}");
        }
    }
}
