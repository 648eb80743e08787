//! `flotilla record` and `flotilla replay`: keeping a run in MCAP and
//! playing it back (see the `flotilla-record` crate).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use flotilla_node_kit::args::{open_session, shutdown_signal, NodeArgs, Role};
use flotilla_node_kit::claims::live_tokens;
use flotilla_node_kit::client::wait_for_description;
use flotilla_record::bag::ChunkCompression;
use flotilla_record::replay::Pace;
use flotilla_record::rerun::Rerun;
use flotilla_wire::control::ClockMode;
use flotilla_wire::world_to_nodes::WorldStatus;
use flotilla_wire::Keys;

/// `flotilla record OUT`.
#[derive(Args, Debug)]
pub struct RecordArgs {
    /// The MCAP file to write (replaced if it exists).
    pub out: PathBuf,
    /// Record only topics whose ROS name matches this regular expression
    /// (e.g. `scan|odometry`).
    #[arg(long, value_name = "REGEX")]
    pub topics: Option<String>,
    /// Stop after this many wall seconds (default: until Ctrl-C / SIGTERM).
    #[arg(long = "for", value_name = "SECONDS")]
    pub for_s: Option<f64>,
    /// How the file's chunks are compressed: `none` (the least CPU: a
    /// node's batch goes to the disk without being read), `lz4` (files
    /// about 2.5 times smaller, the recorder's CPU about half again) or
    /// `zstd` (the smallest files, the most CPU).
    #[arg(long, value_name = "NAME", default_value = "none")]
    pub compression: ChunkCompression,
    /// Prefix of the world's ROS-facing keys, if it has one.
    #[arg(long, default_value = "")]
    pub ros_prefix: String,
    #[command(flatten)]
    pub node: NodeArgs,
}

/// `flotilla replay IN`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The MCAP file to play.
    pub input: PathBuf,
    /// Play at this many times the recorded speed (default 1).
    #[arg(long, conflicts_with = "clock")]
    pub rate: Option<f64>,
    /// `fast`: play as fast as the network takes the messages.
    #[arg(long, value_name = "fast")]
    pub clock: Option<String>,
    /// Play only topics whose ROS name matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub topics: Option<String>,
    /// Prefix to put in front of every key played.
    #[arg(long, default_value = "")]
    pub ros_prefix: String,
    #[command(flatten)]
    pub node: NodeArgs,
}

/// The `--topics` regular expression, if given.
pub(crate) fn regex_of(topics: &Option<String>) -> anyhow::Result<Option<regex::Regex>> {
    topics
        .as_deref()
        .map(|text| regex::Regex::new(text).map_err(|e| anyhow::anyhow!("--topics {text:?}: {e}")))
        .transpose()
}

/// Records until Ctrl-C, SIGTERM or `--for`.
pub fn record(args: RecordArgs) -> anyhow::Result<()> {
    // One Zenoh thread waits on the sockets, reads them and runs the
    // callbacks, which write into the file and send nothing: no hop from
    // thread to thread per message received, and no two callbacks
    // waiting on each other for the file.
    flotilla_node_kit::zenoh_threads::configure();
    let keep = regex_of(&args.topics)?;
    let keys = Keys::new(&args.node.sim).with_ros_prefix(&args.ros_prefix);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(async {
        let session = open_session(&args.node.zenoh, Role::Node).await?;
        let stop = async {
            match args.for_s {
                Some(s) => tokio::select! {
                    _ = shutdown_signal() => {}
                    _ = tokio::time::sleep(Duration::from_secs_f64(s.max(0.0))) => {}
                },
                None => shutdown_signal().await,
            }
        };
        eprintln!("flotilla record: recording to {} (Ctrl-C to stop)", args.out.display());
        let rerun = rerun_of(&session, &keys).await;
        let summary =
            flotilla_record::record::record(&session, &keys, &args.out, keep, args.compression, rerun, stop).await;
        let _ = session.close().await;
        let summary = summary?;
        let total: u64 = summary.counts.values().sum();
        println!(
            "flotilla record: {total} messages on {} topics ({} of them sent by the nodes in batches), \
             {:.3} s of sim time, in {}",
            summary.counts.values().filter(|&&n| n > 0).count(),
            summary.batched.len(),
            summary.end_ns as f64 * 1e-9,
            args.out.display()
        );
        if !summary.lost_batches.is_empty() {
            let lost: Vec<String> = summary.lost_batches.iter().map(|(key, n)| format!("{n} on {key}")).collect();
            anyhow::bail!(
                "the recording is incomplete: batches of the nodes' messages never arrived ({}); \
                 the file holds everything else",
                lost.join(", ")
            );
        }
        Ok(())
    })
}

/// What running the recording again needs (`flotilla resim`), when the
/// world runs in lockstep; otherwise `None`, saying why on stderr. Only a
/// lockstep run gives the same outputs from the same inputs.
async fn rerun_of(session: &zenoh::Session, keys: &Keys) -> Option<Rerun> {
    let not = |why: String| {
        eprintln!("flotilla record: the recording will not be re-runnable with `flotilla resim`: {why}");
        None
    };
    let description = match wait_for_description(session, keys, Duration::from_secs(30)).await {
        Ok(description) => description,
        Err(e) => return not(format!("{e}")),
    };
    let status = match first_status(session, keys, Duration::from_secs(5)).await {
        Ok(status) => status,
        Err(e) => return not(e),
    };
    if status.clock != ClockMode::Lockstep {
        return not(format!(
            "the world runs in {} mode, and only a lockstep run (--clock lockstep) gives the same outputs from the \
             same inputs",
            status.clock
        ));
    }
    if status.step > 0 {
        eprintln!(
            "flotilla record: the world is at step {} already; a re-run starts from step 0, so `flotilla resim` \
             will refuse a recording that does not start there",
            status.step
        );
    }
    let participants = match live_tokens(session, keys.lockstep_all(), Duration::from_secs(2)).await {
        Ok(tokens) => tokens.iter().filter_map(|t| keys.parse_lockstep(t)).map(String::from).collect(),
        Err(_) => Vec::new(),
    };
    Rerun::of_world(&description, participants).map_or_else(not, Some)
}

/// The world's next status message, within `timeout`.
async fn first_status(session: &zenoh::Session, keys: &Keys, timeout: Duration) -> Result<WorldStatus, String> {
    let subscriber = session.declare_subscriber(keys.status()).await.map_err(|e| format!("{e}"))?;
    let sample = tokio::time::timeout(timeout, subscriber.recv_async())
        .await
        .map_err(|_| format!("the world sent no status within {} s", timeout.as_secs()))?
        .map_err(|e| format!("{e}"))?;
    flotilla_wire::codec::decode::<WorldStatus>(&sample.payload().to_bytes()).map_err(|e| format!("a bad status: {e}"))
}

/// Replays a recording once.
pub fn replay(args: ReplayArgs) -> anyhow::Result<()> {
    let pace = match (args.clock.as_deref(), args.rate) {
        (Some("fast"), _) => Pace::Fast,
        (Some(other), _) => anyhow::bail!("--clock {other:?}: a replay's clock is the recording's; only fast is known"),
        (None, Some(rate)) if !(rate.is_finite() && rate > 0.0) => {
            anyhow::bail!("--rate must be a positive number, got {rate}")
        }
        (None, rate) => Pace::Rate(rate.unwrap_or(1.0)),
    };
    let keep = regex_of(&args.topics)?;
    let keys = Keys::new(&args.node.sim).with_ros_prefix(&args.ros_prefix);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(async {
        // Played where a world would be: other programs connect to it.
        let session = open_session(&args.node.zenoh, Role::World).await?;
        eprintln!("flotilla replay: playing {} ({pace:?})", args.input.display());
        let played = flotilla_record::replay::replay(&session, &keys, &args.input, pace, keep, shutdown_signal()).await;
        let _ = session.close().await;
        let played = played?;
        println!(
            "flotilla replay: {} messages over {:.3} s of recorded time",
            played.messages,
            played.span_ns as f64 * 1e-9
        );
        Ok(())
    })
}
