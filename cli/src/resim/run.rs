//! Running a recording again: `flotilla run` of its world in lockstep,
//! this process a participant that feeds the inputs at their states and
//! listens to every output compared.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context};
use flotilla_node_kit::args::{open_session, Role, ZenohArgs};
use flotilla_node_kit::lockstep::LockstepReporter;
use flotilla_record::rerun::Rerun;
use flotilla_wire::codec::decode;
use flotilla_wire::world_to_nodes::WorldState;
use flotilla_wire::Keys;
use zenoh_ext::{AdvancedSubscriberBuilderExt, HistoryConfig};

use super::inputs::{ask_again, Fed, Input};
use super::OutputTopics;

/// The re-run to launch.
pub(super) struct Run<'a> {
    pub(super) world_file: &'a Path,
    pub(super) rerun: &'a Rerun,
    /// More arguments for `flotilla run`.
    pub(super) extra: &'a [String],
    /// Where its log goes.
    pub(super) scratch: &'a Path,
    /// Whether `extra` has it record (`--keep`).
    pub(super) keep: bool,
}

/// Launches the world and its nodes, feeds `inputs` at their states up to
/// `end_step`, and gives back what came on each of `outputs`.
pub(super) async fn run_again(
    run_of: &Run<'_>,
    inputs: &[Input],
    outputs: &OutputTopics,
    end_step: u64,
) -> anyhow::Result<BTreeMap<String, Vec<Vec<u8>>>> {
    let Run { world_file, rerun, extra, scratch, keep } = *run_of;
    let sim = format!("resim-{}", std::process::id());
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    std::fs::create_dir_all(scratch)?;
    let log_path = scratch.join("run.log");
    let log = std::fs::File::create(&log_path)?;
    let mut line = crate::launch::RunArgs::lockstep_command_line(world_file, rerun.seed, &sim, &endpoint, 1);
    line.extend(extra.iter().cloned());
    let mut run = None;
    let start = || -> anyhow::Result<()> {
        let child = tokio::process::Command::new(std::env::current_exe()?)
            .args(&line)
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .context("cannot start flotilla run")?;
        run = Some(child);
        Ok(())
    };
    let feed = Feed { sim: &sim, endpoint: &endpoint, step_ns: rerun.step_ns, inputs, end_step, keep };
    let result = feed_and_listen(&feed, outputs, start).await;
    if let Some(run) = &mut run {
        stop(run).await;
    }
    result.map_err(|e| {
        let tail = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = tail.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect();
        anyhow::anyhow!("{e}\nthe run's last lines:\n{}", tail.join("\n"))
    })
}

/// SIGTERM to `flotilla run`, which stops its children in order.
async fn stop(run: &mut tokio::process::Child) {
    if let Some(pid) = run.id() {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGTERM);
    }
    if tokio::time::timeout(Duration::from_secs(30), run.wait()).await.is_err() {
        let _ = run.kill().await;
    }
}

/// How long the re-run may go without a new state before it is given up.
pub(super) const STATE_TIMEOUT: Duration = Duration::from_secs(60);

/// What [`feed_and_listen`] feeds, where.
struct Feed<'a> {
    sim: &'a str,
    endpoint: &'a str,
    step_ns: u64,
    inputs: &'a [Input],
    end_step: u64,
    /// Whether the run records (`--keep`): the inputs then wait for its
    /// recorder to take them from the nodes.
    keep: bool,
}

/// Has `start` start the run of `sim` at `endpoint`, joins its barrier
/// and subscribes to each of `outputs` before its nodes start (`flotilla
/// run --participants-first`), feeds `inputs` (steps of `step_ns`) at
/// their states up to `end_step` once the nodes that take them listen, and
/// gives back what came on each of `outputs`. A client of the world, as a
/// controller of `flotilla run --exec` is: what it sends goes through the
/// world, so its inputs for a state reach their node before the next state
/// does.
async fn feed_and_listen(
    feed: &Feed<'_>,
    outputs: &OutputTopics,
    start: impl FnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<BTreeMap<String, Vec<Vec<u8>>>> {
    let keys = Keys::new(feed.sim);
    start()?;
    let session = connect_when_listening(feed.endpoint).await?;
    let (tx, mut arrivals) = tokio::sync::mpsc::unbounded_channel();
    let listening = Listening::start(&session, &keys, outputs, tx).await?;
    let publishers = declare_inputs(&session, &keys, feed.inputs).await?;
    let reporter = LockstepReporter::join(&session, &keys, &format!("resim-{}", std::process::id())).await?;
    // The nodes start now; the first inputs go out only once the nodes
    // that take them listen, which they do before they join the barrier.
    await_takers(&session, &keys, &publishers, feed.keep).await?;

    let mut received: Vec<Vec<Vec<u8>>> = vec![Vec::new(); outputs.len()];
    let mut next_input = 0;
    let mut last_step: Option<u64> = None;
    loop {
        let arrival = tokio::time::timeout(STATE_TIMEOUT, arrivals.recv())
            .await
            .map_err(|_| anyhow::anyhow!("no world state within {} s", STATE_TIMEOUT.as_secs()))?
            .ok_or_else(|| anyhow::anyhow!("the subscriptions closed"))?;
        let step = match arrival {
            Arrival::Output(index, payload) => {
                received[index].push(payload);
                continue;
            }
            Arrival::State(step) if last_step.is_some_and(|last| step <= last) => continue,
            Arrival::State(step) => step,
        };
        last_step = Some(step);
        // Every output of the steps before has arrived (it was published
        // before its node reported); past the end, that is all.
        if step > feed.end_step {
            break;
        }
        let state_ns = step * feed.step_ns;
        while let Some(input) = feed.inputs.get(next_input).filter(|m| m.due_ns <= state_ns) {
            match &input.fed {
                Fed::Message { topic, payload } => {
                    publishers[topic].put(payload.clone()).await.map_err(|e| anyhow::anyhow!("{e}"))?
                }
                Fed::Asked(request) => ask_again(&session, &keys, request, step).await?,
            }
            next_input += 1;
        }
        reporter.done(step, true).await;
    }
    drop(reporter);
    drop(listening);
    // What came in the meantime.
    while let Ok(arrival) = arrivals.try_recv() {
        if let Arrival::Output(index, payload) = arrival {
            received[index].push(payload);
        }
    }
    tokio::time::sleep(flotilla_node_kit::args::DRAIN).await;
    let _ = session.close().await;
    Ok(outputs.keys().cloned().zip(received).collect())
}

/// A client session to the world at `endpoint`, once it listens.
async fn connect_when_listening(endpoint: &str) -> anyhow::Result<zenoh::Session> {
    let address = endpoint.trim_start_matches("tcp/");
    let give_up = tokio::time::Instant::now() + STATE_TIMEOUT;
    while tokio::net::TcpStream::connect(address).await.is_err() {
        if tokio::time::Instant::now() >= give_up {
            bail!("the world did not listen on {endpoint} within {} s", STATE_TIMEOUT.as_secs());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let zenoh = ZenohArgs { connect: vec![endpoint.to_string()], ..Default::default() };
    Ok(open_session(&zenoh, Role::Node).await?)
}

/// The subscriptions that bring the world's states and each output
/// topic's messages (by its place among the outputs) as [`Arrival`]s.
struct Listening {
    _subscribers: Vec<zenoh::pubsub::Subscriber<()>>,
    _latched: Vec<zenoh_ext::AdvancedSubscriber<()>>,
}

impl Listening {
    async fn start(
        session: &zenoh::Session,
        keys: &Keys,
        outputs: &OutputTopics,
        tx: tokio::sync::mpsc::UnboundedSender<Arrival>,
    ) -> anyhow::Result<Listening> {
        let zenoh_error = |e: zenoh::Error| anyhow::anyhow!("{e}");
        let (mut subscribers, mut latched) = (Vec::new(), Vec::new());
        for (index, (topic, (_, is_latched))) in outputs.iter().enumerate() {
            let to = tx.clone();
            let deliver = move |sample: zenoh::sample::Sample| {
                let _ = to.send(Arrival::Output(index, sample.payload().to_bytes().into_owned()));
            };
            let subscriber = session.declare_subscriber(keys.ros(topic));
            if *is_latched {
                let history = HistoryConfig::default().detect_late_publishers();
                latched.push(subscriber.history(history).callback(deliver).await.map_err(zenoh_error)?);
            } else {
                subscribers.push(subscriber.callback(deliver).await.map_err(zenoh_error)?);
            }
        }
        let states = move |sample: zenoh::sample::Sample| {
            if let Ok(state) = decode::<WorldState>(&sample.payload().to_bytes()) {
                let _ = tx.send(Arrival::State(state.step));
            }
        };
        subscribers.push(session.declare_subscriber(keys.world_state()).callback(states).await.map_err(zenoh_error)?);
        Ok(Listening { _subscribers: subscribers, _latched: latched })
    }
}

/// A lossless publisher for each topic `inputs` are published on.
async fn declare_inputs(
    session: &zenoh::Session,
    keys: &Keys,
    inputs: &[Input],
) -> anyhow::Result<BTreeMap<String, zenoh::pubsub::Publisher<'static>>> {
    let mut publishers = BTreeMap::new();
    for topic in inputs.iter().filter_map(Input::topic).collect::<BTreeSet<_>>() {
        let publisher = session
            .declare_publisher(keys.ros(topic))
            .congestion_control(zenoh::qos::CongestionControl::Block)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        publishers.insert(topic.clone(), publisher);
    }
    Ok(publishers)
}

/// Waits until a node takes each input topic of `publishers`, and, when
/// the run records (`keep`), until its recorder takes them from their
/// nodes: only then does the kept recording log each input at the state
/// its node had answered when it came.
async fn await_takers(
    session: &zenoh::Session,
    keys: &Keys,
    publishers: &BTreeMap<String, zenoh::pubsub::Publisher<'static>>,
    keep: bool,
) -> anyhow::Result<()> {
    let give_up = tokio::time::Instant::now() + STATE_TIMEOUT;
    for (topic, publisher) in publishers {
        while !publisher.matching_status().await.is_ok_and(|status| status.matching()) {
            if tokio::time::Instant::now() >= give_up {
                bail!("no node took the recorded input {topic} within {} s", STATE_TIMEOUT.as_secs());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let within = std::time::Instant::now() + crate::launch::start_gate::RECORDER_LISTENS_WITHIN;
    if keep && !crate::launch::start_gate::recorder_listens(session, keys, 0, within).await {
        eprintln!(
            "flotilla resim: the recorder of --keep does not take the inputs from their nodes yet; feeding them \
             anyway (the kept recording may not run again identically)"
        );
    }
    Ok(())
}

/// What reaches the resim from the simulation.
enum Arrival {
    State(u64),
    Output(usize, Vec<u8>),
}
