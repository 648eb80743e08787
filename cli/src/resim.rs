//! `flotilla resim RUN.mcap`: runs a lockstep recording again from its
//! inputs and compares every output, message by message.
//!
//! The world comes from the recording's files (or `--world DIR`), with its
//! seed, in lockstep, its nodes launched by `flotilla run` as for any run.
//! This command takes the recorded controllers' place: it joins the
//! barrier, and at each state publishes the inputs recorded at that
//! state's time (each `cmd_vel` as the drive had taken it: a plain `Twist`
//! stamped with the state it came after, so that it takes effect at the
//! same step whatever the timing) before it reports the step. Meanwhile it
//! subscribes to every recorded output topic; at the end it compares them
//! with the recording (see [`flotilla_record::compare`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use flotilla_messages::geometry_msgs::{decode_cmd_vel, TwistStamped};
use flotilla_messages::std_msgs::{Header, StdString};
use flotilla_node_kit::args::{open_session, Role, ZenohArgs};
use flotilla_node_kit::lockstep::LockstepReporter;
use flotilla_plugins::channels::{ControlLogEntry, LoggedRequest, CONTROL_LOG_TOPIC};
use flotilla_record::compare::{compare_topic, TopicOutcome};
use flotilla_record::record::CLOCK_TOPIC;
use flotilla_record::rerun::Rerun;
use flotilla_wire::codec::decode;
use flotilla_wire::time::SimTime;
use flotilla_wire::world_to_nodes::WorldState;
use flotilla_wire::Keys;
use zenoh_ext::{AdvancedSubscriberBuilderExt, HistoryConfig};

/// `flotilla resim RUN.mcap`.
#[derive(Args, Debug)]
pub struct ResimArgs {
    /// The recording: a lockstep run recorded by this Flotilla
    /// (`flotilla record`, `flotilla run --record`).
    pub recording: PathBuf,
    /// Run the world file of the same name in this directory instead of
    /// the recording's files: to see what a changed world changes.
    #[arg(long, value_name = "DIR")]
    pub world: Option<PathBuf>,
    /// Compare only the output topics whose ROS name matches this regular
    /// expression (all of them are still run).
    #[arg(long, value_name = "REGEX")]
    pub topics: Option<String>,
    /// Stop at this sim time, seconds (default: the recording's end).
    #[arg(long, value_name = "SECONDS")]
    pub until: Option<f64>,
    /// Also write the summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Run another program in one node's place, keeping everything else
    /// (repeatable; `flotilla run --replace`): `laser=python3 my_laser.py`
    /// shows exactly which outputs that one change moves.
    #[arg(long = "replace", value_name = "ROLE=COMMAND")]
    pub replace: Vec<String>,
    /// An option for the re-run's `flotilla-world` (repeatable; `flotilla
    /// run --world-arg`), e.g. `--world-arg=--wait-on-drives`.
    #[arg(long = "world-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub world_args: Vec<String>,
    /// Keep the re-run as a recording in this MCAP file (`flotilla run
    /// --record`): a re-runnable recording itself, with the inputs fed.
    #[arg(long, value_name = "OUT.mcap")]
    pub keep: Option<PathBuf>,
}

/// What a resim found.
#[derive(Debug, serde::Serialize)]
pub struct Report {
    /// The recording.
    pub recording: String,
    /// The world file run.
    pub world: String,
    /// Steps run.
    pub steps: u64,
    /// Inputs fed.
    pub inputs: usize,
    /// Per output topic compared.
    pub topics: Vec<TopicOutcome>,
}

impl Report {
    /// Whether every compared message was identical.
    pub fn identical(&self) -> bool {
        self.topics.iter().all(|t| t.divergence.is_none())
    }
}

/// A recorded message: its channel's topic, type and durability, log
/// time, payload.
struct Message {
    topic: String,
    type_name: String,
    /// Whether its topic is latched (transient local): its last message
    /// is asked for, and the order across publishers is not defined.
    latched: bool,
    time_ns: u64,
    payload: Vec<u8>,
}

/// An input to feed: when, and what.
struct Input {
    /// The state at whose time it goes out, ns.
    due_ns: u64,
    fed: Fed,
}

/// How an input is fed.
enum Fed {
    /// A message published on its topic (a `cmd_vel`).
    Message { topic: String, payload: Vec<u8> },
    /// A request the world's control log holds, asked again.
    Asked(LoggedRequest),
}

impl Input {
    /// The recorded inputs in the order they go out: each message at the
    /// state its node had answered last when it came (which is when the
    /// controller's command reached it, whatever its stamp says), an
    /// unstamped command stamped with that state (see [`as_taken`]); each
    /// entry of the world's control log at the state it was applied at.
    fn in_order(recorded: Vec<Message>, step_ns: u64) -> Result<Vec<Input>, String> {
        let mut inputs = Vec::with_capacity(recorded.len());
        for m in recorded {
            if m.topic == CONTROL_LOG_TOPIC {
                let text = flotilla_messages::decode::<StdString>(&m.payload).map_err(|e| e.to_string())?.data;
                let entry = ControlLogEntry::from_json(&text)?;
                inputs.push(Input { due_ns: entry.step * step_ns, fed: Fed::Asked(entry.request) });
            } else {
                let payload = as_taken(&m.payload, m.time_ns, step_ns);
                inputs.push(Input { due_ns: m.time_ns, fed: Fed::Message { topic: m.topic, payload } });
            }
        }
        inputs.sort_by_key(|input| input.due_ns);
        Ok(inputs)
    }

    /// The topic it is published on, if it is a message.
    fn topic(&self) -> Option<&String> {
        match &self.fed {
            Fed::Message { topic, .. } => Some(topic),
            Fed::Asked(_) => None,
        }
    }
}

/// Asks the world again what its control log says was asked: a control
/// request or a ROS service call, answered before the state is reported,
/// so that the world applies it where it did. A refusal is told (the
/// recorded request succeeded); the outputs then show what it changed.
async fn ask_again(session: &zenoh::Session, keys: &Keys, request: &LoggedRequest, step: u64) -> anyhow::Result<()> {
    match request {
        LoggedRequest::Control(request) => {
            let verb = request.verb();
            let reply = flotilla_node_kit::client::call_control(session, keys, verb, request, STATE_TIMEOUT)
                .await
                .with_context(|| format!("control/{verb} at step {step}"))?;
            if !reply.success {
                eprintln!("flotilla resim: at step {step}, the world refused {request:?} again: {}", reply.message);
            }
        }
        LoggedRequest::Service { name, request_cdr } => {
            let replies = session
                .get(keys.ros(name))
                .payload(request_cdr.clone())
                .timeout(STATE_TIMEOUT)
                .await
                .map_err(|e| anyhow::anyhow!("{name} at step {step}: {e}"))?;
            match replies.recv_async().await {
                Ok(reply) if reply.result().is_ok() => {}
                Ok(reply) => {
                    let why =
                        reply.result().err().map(|e| e.payload().try_to_string().unwrap_or_default().into_owned());
                    eprintln!("flotilla resim: at step {step}, {name} failed again: {}", why.unwrap_or_default());
                }
                Err(_) => bail!("{name} at step {step}: no answer within {} s", STATE_TIMEOUT.as_secs()),
            }
        }
    }
    Ok(())
}

/// An output topic compared: its type and whether it is latched.
type OutputTopics = BTreeMap<String, (String, bool)>;

/// Runs the recording again; exits 1 when an output differs.
pub fn resim(args: ResimArgs) -> anyhow::Result<std::process::ExitCode> {
    let bytes = std::fs::read(&args.recording).with_context(|| format!("cannot read {}", args.recording.display()))?;
    let rerun = Rerun::read(&bytes, &args.recording).map_err(anyhow::Error::msg)?;
    let messages = read_messages(&bytes, &args.recording)?;
    let keep = crate::keep::regex_of(&args.topics)?;
    let recorded_end_ns = messages.iter().map(|m| m.time_ns).max().unwrap_or(0);
    let end_ns = match args.until {
        Some(s) if !(s.is_finite() && s >= 0.0) => bail!("--until must be a time in seconds, got {s}"),
        Some(s) => ((s * 1e9) as u64).min(recorded_end_ns),
        None => recorded_end_ns,
    };
    let end_step = end_ns / rerun.step_ns.max(1);
    // The world's first clock is that of its first step.
    if let Some(first) = messages.iter().find(|m| m.topic == CLOCK_TOPIC) {
        if first.time_ns > rerun.step_ns {
            bail!(
                "{}: the recording starts at t = {:.3} s; a re-run starts the world from t = 0, so the recording \
                 must too (start the recorder before the clock: `flotilla run --record`)",
                args.recording.display(),
                first.time_ns as f64 * 1e-9
            );
        }
    }

    let scratch = std::env::temp_dir().join(format!("flotilla-resim-{}", std::process::id()));
    let world_file = match &args.world {
        Some(dir) => {
            let file = dir.join(&rerun.world_file);
            if !file.is_file() {
                bail!("--world {}: no {} in it (the recording's world file)", dir.display(), rerun.world_file);
            }
            file
        }
        None => rerun.extract(&scratch.join("world")).map_err(anyhow::Error::msg)?,
    };
    let spec = flotilla_world_file::load_world(&world_file).map_err(|e| anyhow::anyhow!("{e}"))?;
    let description = spec.initial_description().map_err(|e| anyhow::anyhow!("{e}"))?;
    if description.step_ns != rerun.step_ns {
        bail!(
            "{}: step of {} ns, the recording's {} ns: a re-run must step as the recording did",
            world_file.display(),
            description.step_ns,
            rerun.step_ns
        );
    }
    let mut inputs_by_topic = flotilla_plugins::channels::forwarded_topics(&description);
    inputs_by_topic.insert(CONTROL_LOG_TOPIC.to_string());
    let missing = missing_inputs(&recorded_channels(&bytes, &args.recording)?, &inputs_by_topic);
    if !missing.is_empty() {
        bail!(
            "{}: no channel for the input(s) {}: a recording that left out what the world takes in (--topics) \
             cannot be re-run",
            args.recording.display(),
            missing.join(", ")
        );
    }
    let (inputs, outputs): (Vec<Message>, Vec<Message>) =
        messages.into_iter().filter(|m| m.time_ns <= end_ns).partition(|m| inputs_by_topic.contains(&m.topic));
    let inputs = Input::in_order(inputs, rerun.step_ns)
        .map_err(|e| anyhow::anyhow!("{}: {CONTROL_LOG_TOPIC}: {e}", args.recording.display()))?;
    let output_topics: OutputTopics = (outputs.iter())
        .filter(|m| m.topic != CLOCK_TOPIC && keep.as_ref().is_none_or(|re| re.is_match(&m.topic)))
        .map(|m| (m.topic.clone(), (m.type_name.clone(), m.latched)))
        .collect();
    eprintln!(
        "flotilla resim: {} steps of {} ({} inputs, {} output topics to compare)",
        end_step,
        world_file.display(),
        inputs.len(),
        output_topics.len()
    );

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    // More for `flotilla run`: the nodes replaced.
    let mut extra = Vec::new();
    for replace in &args.replace {
        extra.extend(["--replace".to_string(), replace.clone()]);
    }
    for arg in &args.world_args {
        extra.push(format!("--world-arg={arg}"));
    }
    if let Some(keep) = &args.keep {
        if same_file(keep, &args.recording) {
            bail!("--keep {}: that is the recording being run again", keep.display());
        }
        extra.extend(["--record".to_string(), keep.display().to_string()]);
    }
    let run =
        Run { world_file: &world_file, rerun: &rerun, extra: &extra, scratch: &scratch, keep: args.keep.is_some() };
    let rerun_messages = runtime.block_on(run_again(&run, &inputs, &output_topics, end_step))?;
    let _ = std::fs::remove_dir_all(&scratch);

    let mut recorded: BTreeMap<&str, Vec<(u64, Vec<u8>)>> = BTreeMap::new();
    for message in outputs.iter().filter(|m| output_topics.contains_key(&m.topic)) {
        recorded.entry(&message.topic).or_default().push((message.time_ns, message.payload.clone()));
    }
    let topics = (output_topics.iter())
        .map(|(topic, (type_name, latched))| {
            let mut again = rerun_messages.get(topic).cloned().unwrap_or_default();
            let mut before = recorded.remove(topic.as_str()).unwrap_or_default();
            if *latched {
                // What each publisher latched, in no defined order; a
                // late subscriber may be given the last one twice.
                again.sort();
                again.dedup();
                before.sort_by(|a, b| a.1.cmp(&b.1));
                before.dedup_by(|a, b| a.1 == b.1);
            }
            compare_topic(topic, type_name, rerun.step_ns, &before, &again)
        })
        .collect();
    let report = Report {
        recording: args.recording.display().to_string(),
        world: world_file.display().to_string(),
        steps: end_step,
        inputs: inputs.len(),
        topics,
    };
    print_summary(&report);
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(if report.identical() { std::process::ExitCode::SUCCESS } else { std::process::ExitCode::from(1) })
}

/// Every message of the MCAP file, in log-time order (a topic's messages
/// of one time keep their order).
fn read_messages(bytes: &[u8], path: &Path) -> anyhow::Result<Vec<Message>> {
    let stream = mcap::MessageStream::new(bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let mut messages = Vec::new();
    for message in stream {
        let message = message.map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let type_name = message.channel.schema.as_ref().map(|s| s.name.clone()).unwrap_or_default();
        messages.push(Message {
            topic: message.channel.topic.clone(),
            type_name,
            latched: flotilla_record::replay::latched(&message.channel),
            time_ns: message.log_time,
            payload: message.data.into_owned(),
        });
    }
    messages.sort_by_key(|m| m.time_ns);
    Ok(messages)
}

/// The topics of the MCAP file's channels, whether or not they have
/// messages.
fn recorded_channels(bytes: &[u8], path: &Path) -> anyhow::Result<BTreeSet<String>> {
    let summary = mcap::read::Summary::read(bytes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        .ok_or_else(|| anyhow::anyhow!("{}: no summary", path.display()))?;
    Ok(summary.channels.values().map(|channel| channel.topic.clone()).collect())
}

/// The world's inputs from outside that the recording has no channel for.
fn missing_inputs(channels: &BTreeSet<String>, inputs: &BTreeSet<String>) -> Vec<String> {
    inputs.difference(channels).cloned().collect()
}

/// What reaches the resim from the simulation.
enum Arrival {
    State(u64),
    Output(usize, Vec<u8>),
}

/// Whether `a` and `b` name the same file (`b` exists; `a` may not).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The re-run to launch.
struct Run<'a> {
    world_file: &'a Path,
    rerun: &'a Rerun,
    /// More arguments for `flotilla run`.
    extra: &'a [String],
    /// Where its log goes.
    scratch: &'a Path,
    /// Whether `extra` has it record (`--keep`).
    keep: bool,
}

/// Launches the world and its nodes, feeds `inputs` at their states up to
/// `end_step`, and gives back what came on each of `outputs`.
async fn run_again(
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
const STATE_TIMEOUT: Duration = Duration::from_secs(60);

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
    let Feed { sim, endpoint, step_ns, inputs, end_step, keep } = *feed;
    let zenoh_error = |e: zenoh::Error| anyhow::anyhow!("{e}");
    let keys = Keys::new(sim);
    start()?;
    // A client connects once the world listens.
    let address = endpoint.trim_start_matches("tcp/");
    let give_up = tokio::time::Instant::now() + STATE_TIMEOUT;
    while tokio::net::TcpStream::connect(address).await.is_err() {
        if tokio::time::Instant::now() >= give_up {
            bail!("the world did not listen on {endpoint} within {} s", STATE_TIMEOUT.as_secs());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let zenoh = ZenohArgs { connect: vec![endpoint.to_string()], ..Default::default() };
    let session = open_session(&zenoh, Role::Node).await?;
    let (tx, mut arrivals) = tokio::sync::mpsc::unbounded_channel();
    let mut subscribers = Vec::new();
    let mut latched_subscribers = Vec::new();
    let names: Vec<&String> = outputs.keys().collect();
    for (index, (topic, (_, latched))) in outputs.iter().enumerate() {
        let to = tx.clone();
        let deliver = move |sample: zenoh::sample::Sample| {
            let _ = to.send(Arrival::Output(index, sample.payload().to_bytes().into_owned()));
        };
        if *latched {
            let subscriber = session
                .declare_subscriber(keys.ros(topic))
                .history(HistoryConfig::default().detect_late_publishers())
                .callback(deliver)
                .await
                .map_err(zenoh_error)?;
            latched_subscribers.push(subscriber);
        } else {
            subscribers.push(session.declare_subscriber(keys.ros(topic)).callback(deliver).await.map_err(zenoh_error)?);
        }
    }
    let to = tx.clone();
    subscribers.push(
        session
            .declare_subscriber(keys.world_state())
            .callback(move |sample| {
                if let Ok(state) = decode::<WorldState>(&sample.payload().to_bytes()) {
                    let _ = to.send(Arrival::State(state.step));
                }
            })
            .await
            .map_err(zenoh_error)?,
    );
    let mut publishers = BTreeMap::new();
    for topic in inputs.iter().filter_map(Input::topic).collect::<BTreeSet<_>>() {
        let publisher = session
            .declare_publisher(keys.ros(topic))
            .congestion_control(zenoh::qos::CongestionControl::Block)
            .await
            .map_err(zenoh_error)?;
        publishers.insert(topic.clone(), publisher);
    }
    let reporter = LockstepReporter::join(&session, &keys, &format!("resim-{}", std::process::id())).await?;
    // The nodes start now; the first inputs go out only once the nodes
    // that take them listen, which they do before they join the barrier.
    let give_up = tokio::time::Instant::now() + STATE_TIMEOUT;
    for (topic, publisher) in &publishers {
        while !publisher.matching_status().await.is_ok_and(|status| status.matching()) {
            if tokio::time::Instant::now() >= give_up {
                bail!("no node took the recorded input {topic} within {} s", STATE_TIMEOUT.as_secs());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // The kept recording logs each input at the state its node had
    // answered when it came only if its recorder takes it from the node.
    let within = std::time::Instant::now() + crate::launch::start_gate::RECORDER_LISTENS_WITHIN;
    if keep && !crate::launch::start_gate::recorder_listens(&session, &keys, 0, within).await {
        eprintln!(
            "flotilla resim: the recorder of --keep does not take the inputs from their nodes yet; feeding them \
             anyway (the kept recording may not run again identically)"
        );
    }

    let mut received: Vec<Vec<Vec<u8>>> = vec![Vec::new(); names.len()];
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
        if step > end_step {
            break;
        }
        let state_ns = step * step_ns;
        while let Some(input) = inputs.get(next_input).filter(|m| m.due_ns <= state_ns) {
            match &input.fed {
                Fed::Message { topic, payload } => publishers[topic].put(payload.clone()).await.map_err(zenoh_error)?,
                Fed::Asked(request) => ask_again(&session, &keys, request, step).await?,
            }
            next_input += 1;
        }
        reporter.done(step, true).await;
    }
    drop(reporter);
    drop(subscribers);
    drop(latched_subscribers);
    // What came in the meantime.
    while let Ok(arrival) = arrivals.try_recv() {
        if let Arrival::Output(index, payload) = arrival {
            received[index].push(payload);
        }
    }
    tokio::time::sleep(flotilla_node_kit::args::DRAIN).await;
    let _ = session.close().await;
    Ok(names.into_iter().cloned().zip(received).collect())
}

/// An input as its node took it: an unstamped command (a plain `Twist`,
/// or a `TwistStamped` stamped zero, which a drive takes the same way),
/// received by the drive after answering the state at `time_ns`, goes out
/// stamped with that time, so that it takes effect at the next step
/// however it travels; anything else as it was.
fn as_taken(payload: &[u8], time_ns: u64, step_ns: u64) -> Vec<u8> {
    match decode_cmd_vel(payload) {
        Ok((twist, None)) => {
            let stamp = SimTime::at_step(time_ns / step_ns.max(1), step_ns).to_ros();
            flotilla_messages::encode(&TwistStamped { header: Header { stamp, frame_id: String::new() }, twist })
        }
        _ => payload.to_vec(),
    }
}

/// Prints what was compared and the first divergence of each topic.
fn print_summary(report: &Report) {
    let compared: usize = report.topics.iter().map(|t| t.compared).sum();
    let identical: usize = report.topics.iter().map(|t| t.identical).sum();
    println!(
        "flotilla resim: {} topics, {compared} messages compared, {identical} identical, over {} steps",
        report.topics.len(),
        report.steps
    );
    for topic in &report.topics {
        if let Some(d) = &topic.divergence {
            println!(
                "  {}: first difference at message {} (t = {:.3} s, step {}): {}: recorded {}, re-run {}",
                topic.topic,
                d.index,
                d.time_ns as f64 * 1e-9,
                d.step,
                d.field,
                d.recorded,
                d.rerun
            );
        }
    }
    if report.identical() {
        println!("flotilla resim: identical");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_twist_goes_out_stamped_with_the_state_it_came_after_and_anything_else_as_it_was() {
        let mut twist = flotilla_messages::geometry_msgs::Twist::default();
        twist.linear.x = 0.4;
        let stamped = as_taken(&flotilla_messages::encode(&twist), 35_000_000, 5_000_000);
        let (again, stamp_ns) = decode_cmd_vel(&stamped).unwrap();
        assert_eq!((again.linear.x, stamp_ns), (0.4, Some(35_000_000)));
        // Stamped: it says itself when it takes effect.
        let mut stamped = TwistStamped::default();
        stamped.header.stamp = SimTime::at_step(9, 5_000_000).to_ros();
        let already = flotilla_messages::encode(&stamped);
        assert_eq!(as_taken(&already, 35_000_000, 5_000_000), already);
        // Stamped zero means unstamped to a drive: stamped as a Twist is.
        let zero = as_taken(&flotilla_messages::encode(&TwistStamped::default()), 35_000_000, 5_000_000);
        assert_eq!(decode_cmd_vel(&zero).unwrap().1, Some(35_000_000));
        let other = flotilla_messages::encode(&flotilla_messages::std_msgs::Bool { data: true });
        assert_eq!(as_taken(&other, 0, 5_000_000), other);
    }

    #[test]
    fn an_input_without_a_channel_is_named() {
        let channels: BTreeSet<String> = ["/a/scan", "/a/cmd_vel"].map(String::from).into();
        let inputs: BTreeSet<String> = ["/a/cmd_vel", "/b/cmd_vel"].map(String::from).into();
        assert_eq!(missing_inputs(&channels, &inputs), ["/b/cmd_vel"]);
    }
}
