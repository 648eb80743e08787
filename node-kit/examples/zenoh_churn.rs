//! Does a Zenoh peer give back what it kept for a router that died?
//!
//! Flotilla's standby world (docs/checkpoints.md) replaces a killed world
//! with a new Zenoh process, and every node's memory grew at each
//! take-over. This program asks the same of Zenoh alone: two routers stand
//! in for the world and its standby, each subscribing to every robot's
//! command and publishing every robot's state; a peer connected to both
//! stands in for a node, subscribing to the states and sending the
//! commands. The routers are killed (SIGKILL) and started again in turn,
//! as `flotilla bench --soak --kill-world-every` does, and the peer
//! reports the bytes it has allocated and not freed, counted by its own
//! allocator (so the C allocator keeping freed pages does not count).
//!
//! ```text
//! cargo run -p flotilla-node-kit --example zenoh_churn -- --case publishers
//! ```
//!
//! `--case`:
//! - `publishers`: the peer sends through declared publishers and both
//!   routers also subscribe to `churn/*/cmd`. The peer grows at every
//!   kill (Zenoh 1.10.2: 50–70 kB a kill with 200 robots, 120 kB with
//!   400), and as much when the wildcard matches one robot's key only: it
//!   keeps the dead router's face, and everything built for it, when
//!   another router holds the same wildcard subscription.
//! - `one-wildcard`: the same, but only the first router holds the
//!   wildcard subscription: flat.
//! - `distinct-wildcards`: the same, but the second router writes its
//!   wildcard `churn/**/cmd`, which matches the same keys: flat.
//! - `roles`: as Flotilla's worlds could: the router that is the world
//!   writes `churn/*/cmd`, the standby `churn/**/cmd`; the standby takes
//!   over when the world's liveliness token goes (and writes the world's
//!   form then), the killed router comes back as the standby. The world
//!   is killed every time.
//! - `relayed`: no router holds a wildcard, but a third peer, connected
//!   to both, subscribes to `churn/*/cmd`, as a client watching every
//!   robot does: the peer grows as in `publishers` (about 40 kB a kill
//!   with 200 robots).
//! - `puts`: both routers hold it, but the peer sends with the session's
//!   `put`, no publisher: flat. Flotilla's nodes keep their publishers:
//!   sent by `put`, their messages to the worlds fared worse beside a
//!   restarted world (docs/checkpoints.md).

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Duration;

use anyhow::{anyhow, bail, Result};

/// Counts the bytes allocated and not yet freed, process-wide.
struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

// A global allocator is unsafe by definition. SAFETY: every call goes to
// the system allocator unchanged; the counter is all that is added.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Every robot's command, as the world subscribes to them.
const WORLD_WILDCARD: &str = "churn/*/cmd";

/// The same keys, written as a standby could.
const STANDBY_WILDCARD: &str = "churn/**/cmd";

/// The liveliness token of the router that is the world (`roles`).
const WORLD_TOKEN: &str = "churn/world";

/// The two routers' loopback ports.
const PORTS: [u16; 2] = [17_611, 17_612];

/// What the peer and the routers do; see the module's comment.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Case {
    Publishers,
    OneWildcard,
    DistinctWildcards,
    Roles,
    Relayed,
    Puts,
}

/// Each case with its name on the command line.
const CASES: [(&str, Case); 6] = [
    ("publishers", Case::Publishers),
    ("one-wildcard", Case::OneWildcard),
    ("distinct-wildcards", Case::DistinctWildcards),
    ("roles", Case::Roles),
    ("relayed", Case::Relayed),
    ("puts", Case::Puts),
];

impl Case {
    fn parse(name: &str) -> Result<Case> {
        match CASES.iter().find(|(n, _)| *n == name) {
            Some((_, case)) => Ok(*case),
            None => {
                let names: Vec<&str> = CASES.iter().map(|(n, _)| *n).collect();
                bail!("--case must be one of {} (got {name:?})", names.join(", "))
            }
        }
    }

    fn name(self) -> &'static str {
        CASES.iter().find(|(_, case)| *case == self).map_or("?", |(n, _)| n)
    }

    /// The wildcard subscription router `index` holds beside its
    /// per-robot ones, if any, when it is the world (`standby` false) or
    /// the standby.
    fn router_wildcard(self, index: usize, standby: bool) -> Option<&'static str> {
        match (self, index) {
            (Case::OneWildcard, 1) | (Case::Relayed, _) => None,
            (Case::DistinctWildcards, 1) => Some(STANDBY_WILDCARD),
            (Case::Roles, _) if standby => Some(STANDBY_WILDCARD),
            _ => Some(WORLD_WILDCARD),
        }
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let robots: usize = flag(&args, "--robots")?.unwrap_or(200);
    let case = Case::parse(&flag::<String>(&args, "--case")?.unwrap_or_else(|| "publishers".into()))?;
    match args.first().map(String::as_str) {
        Some("router") => router(flag(&args, "--index")?.unwrap_or(0), robots, case),
        Some("peer") => peer(robots, case),
        Some("listener") => listener(),
        _ => run(robots, case, flag(&args, "--kills")?.unwrap_or(12), flag(&args, "--every-s")?.unwrap_or(4)),
    }
}

/// The value after `name`, if given.
fn flag<T: std::str::FromStr>(args: &[String], name: &str) -> Result<Option<T>> {
    let Some(at) = args.iter().position(|a| a == name) else { return Ok(None) };
    let value = args.get(at + 1).ok_or_else(|| anyhow!("{name} needs a value"))?;
    value.parse().map(Some).map_err(|_| anyhow!("{name}: cannot read {value:?}"))
}

fn endpoint(index: usize) -> String {
    format!("tcp/127.0.0.1:{}", PORTS[index])
}

/// Zenoh's configuration as Flotilla's worlds and nodes use it on one
/// machine: no multicast, no shared memory.
fn config(mode: &str, listen: &[String], connect: &[String]) -> Result<zenoh::Config> {
    let list = |items: &[String]| format!("[{}]", items.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(","));
    let mut config = zenoh::Config::default();
    for (key, value) in [
        ("mode", format!("{mode:?}")),
        ("scouting/multicast/enabled", "false".into()),
        ("transport/shared_memory/enabled", "false".into()),
        ("listen/endpoints", list(listen)),
        ("connect/endpoints", list(connect)),
        ("connect/timeout_ms", "-1".into()),
        ("connect/exit_on_failure", "false".into()),
    ] {
        config.insert_json5(key, &value).map_err(|e| anyhow!("{key}: {e}"))?;
    }
    Ok(config)
}

/// A stand-in for a world, connected to the other: subscribes to every
/// robot's command (and, as the case says, to all of them at once),
/// publishes every robot's state at 20 Hz. In the `roles` case it is the
/// standby while another router holds the world's token, and takes over
/// when that goes.
#[tokio::main]
async fn router(index: usize, robots: usize, case: Case) -> Result<()> {
    let session = zenoh::open(config("router", &[endpoint(index)], &[endpoint(1 - index)])?).await.map_err(zerr)?;
    // Long enough for the routers to connect and exchange their tokens.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let world_there =
        case == Case::Roles && session.liveliness().get(WORLD_TOKEN).await.map_err(zerr)?.recv_async().await.is_ok();
    if case == Case::Roles {
        eprintln!("router {index} starts as the {}", if world_there { "standby" } else { "world" });
    }
    let mut wildcard = None;
    if let Some(key) = case.router_wildcard(index, world_there) {
        wildcard = Some(session.declare_subscriber(key).callback(|_| {}).await.map_err(zerr)?);
    }
    let mut subscribers = Vec::new();
    let mut publishers = Vec::new();
    for robot in 0..robots {
        let commands = session.declare_subscriber(format!("churn/{robot}/cmd")).callback(|_| {});
        subscribers.push(commands.await.map_err(zerr)?);
        publishers.push(session.declare_publisher(format!("churn/{robot}/state")).await.map_err(zerr)?);
    }
    let (gone_tx, mut gone) = tokio::sync::mpsc::unbounded_channel();
    let mut token = None;
    let _watch = if world_there {
        let watch = session.liveliness().declare_subscriber(WORLD_TOKEN).callback(move |sample| {
            if sample.kind() == zenoh::sample::SampleKind::Delete {
                let _ = gone_tx.send(());
            }
        });
        Some(watch.await.map_err(zerr)?)
    } else {
        token = Some(session.liveliness().declare_token(WORLD_TOKEN).await.map_err(zerr)?);
        None
    };
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    loop {
        tokio::select! {
            _ = tick.tick() => {
                for publisher in &publishers {
                    publisher.put(vec![0u8; 64]).await.map_err(zerr)?;
                }
            }
            Some(()) = gone.recv(), if token.is_none() => {
                // The world's form first, then the standby's dropped: a
                // command is never left without a router taking it.
                let key = case.router_wildcard(index, false).ok_or_else(|| anyhow!("a world holds a wildcard"))?;
                let world_form = session.declare_subscriber(key).callback(|_| {}).await.map_err(zerr)?;
                drop(wildcard.replace(world_form));
                token = Some(session.liveliness().declare_token(WORLD_TOKEN).await.map_err(zerr)?);
                eprintln!("router {index} took over");
            }
        }
    }
}

/// A stand-in for a client watching every robot (`relayed`): a peer of
/// both routers, as `flotilla bench --soak` is, subscribing to
/// [`WORLD_WILDCARD`].
#[tokio::main]
async fn listener() -> Result<()> {
    let listen = ["tcp/127.0.0.1:0".to_string()];
    let session = zenoh::open(config("peer", &listen, &[endpoint(0), endpoint(1)])?).await.map_err(zerr)?;
    let _commands = session.declare_subscriber(WORLD_WILDCARD).callback(|_| {}).await.map_err(zerr)?;
    loop {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
}

/// How the peer sends a robot's commands.
enum Sender {
    Publisher(zenoh::pubsub::Publisher<'static>),
    Put(zenoh::key_expr::KeyExpr<'static>),
}

/// A stand-in for a node: a peer connected to both routers, as `flotilla
/// run` starts its nodes, listening on a port of its own; sends every
/// robot's command at 10 Hz and prints its live bytes every second.
#[tokio::main]
async fn peer(robots: usize, case: Case) -> Result<()> {
    let listen = ["tcp/127.0.0.1:0".to_string()];
    let session = zenoh::open(config("peer", &listen, &[endpoint(0), endpoint(1)])?).await.map_err(zerr)?;
    let mut subscribers = Vec::new();
    let mut senders = Vec::new();
    for robot in 0..robots {
        let states = session.declare_subscriber(format!("churn/{robot}/state")).callback(|_| {});
        subscribers.push(states.await.map_err(zerr)?);
        let key = format!("churn/{robot}/cmd");
        senders.push(match case {
            Case::Puts => Sender::Put(zenoh::key_expr::KeyExpr::try_from(key).map_err(zerr)?),
            _ => Sender::Publisher(session.declare_publisher(key).await.map_err(zerr)?),
        });
    }
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    for round in 1u64.. {
        tick.tick().await;
        for sender in &senders {
            match sender {
                Sender::Publisher(publisher) => publisher.put(vec![0u8; 16]).await,
                Sender::Put(key) => session.put(key, vec![0u8; 16]).await,
            }
            .map_err(zerr)?;
        }
        if round % 10 == 0 {
            println!("live {}", LIVE_BYTES.load(Ordering::Relaxed));
        }
    }
    Ok(())
}

/// Starts the two routers and the peer, kills a router every `every_s`
/// seconds and starts it again, and prints the peer's live bytes after
/// each kill.
fn run(robots: usize, case: Case, kills: usize, every_s: u64) -> Result<()> {
    let me = std::env::current_exe()?;
    let common = ["--robots".to_string(), robots.to_string(), "--case".into(), case.name().into()];
    let start_router = |index: usize| -> Result<Child> {
        let mut command = Command::new(&me);
        command.args(["router", "--index", &index.to_string()]).args(&common);
        Ok(command.stdout(Stdio::null()).spawn()?)
    };
    // In the `roles` case the world is the router started first, and the
    // one killed each time: router 1, then 0, and so on.
    let mut routers = match case {
        Case::Roles => {
            let world = start_router(1)?;
            std::thread::sleep(Duration::from_secs(1));
            [start_router(0)?, world]
        }
        _ => [start_router(0)?, start_router(1)?],
    };
    let mut peer = Command::new(&me).arg("peer").args(&common).stdout(Stdio::piped()).spawn()?;
    // Only `relayed` has a client: in the other cases it would hold the
    // wildcard the case is about.
    let mut listener = match case {
        Case::Relayed => Some(Command::new(&me).arg("listener").spawn()?),
        _ => None,
    };
    let (live_tx, live_rx) = std::sync::mpsc::channel::<i64>();
    let stdout = peer.stdout.take().ok_or_else(|| anyhow!("the peer's output is not piped"))?;
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(bytes) = line.strip_prefix("live ").and_then(|b| b.parse().ok()) {
                let _ = live_tx.send(bytes);
            }
        }
    });
    // The peer prints once a second; waiting a second longer than asked
    // makes sure of a new reading.
    let latest_after = |wait_s: u64| -> Option<i64> {
        std::thread::sleep(Duration::from_secs(wait_s.max(1) + 1));
        live_rx.try_iter().last()
    };
    let first = latest_after(every_s).ok_or_else(|| anyhow!("the peer printed nothing"))?;
    println!("case {}, {robots} robots; the peer's live bytes before any kill: {first}", case.name());
    println!("kill  live bytes  change, bytes");
    for kill in 1..=kills {
        let index = kill % 2;
        routers[index].kill()?;
        routers[index].wait()?;
        routers[index] = start_router(index)?;
        if let Some(bytes) = latest_after(every_s) {
            println!("{kill:>4}  {bytes:>10}  {:>+10}", bytes - first);
        }
    }
    for child in routers.iter_mut().chain([&mut peer]).chain(listener.as_mut()) {
        let _ = child.kill();
        let _ = child.wait();
    }
    Ok(())
}

fn zerr(e: zenoh::Error) -> anyhow::Error {
    anyhow!("{e}")
}
