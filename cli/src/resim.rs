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

use anyhow::{bail, Context};
use clap::Args;
use flotilla_plugins::channels::CONTROL_LOG_TOPIC;
use flotilla_record::compare::{compare_topic, TopicOutcome};
use flotilla_record::record::CLOCK_TOPIC;
use flotilla_record::rerun::Rerun;

mod inputs;
mod run;
use inputs::Input;
use run::{run_again, Run};

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

/// An output topic compared: its type and whether it is latched.
type OutputTopics = BTreeMap<String, (String, bool)>;

/// Runs the recording again; exits 1 when an output differs.
pub fn resim(args: ResimArgs) -> anyhow::Result<std::process::ExitCode> {
    let bytes = std::fs::read(&args.recording).with_context(|| format!("cannot read {}", args.recording.display()))?;
    let rerun = Rerun::read(&bytes, &args.recording).map_err(anyhow::Error::msg)?;
    let messages = read_messages(&bytes, &args.recording)?;
    let end_ns = end_of(&args, &rerun, &messages)?;
    let end_step = end_ns / rerun.step_ns.max(1);
    let scratch = std::env::temp_dir().join(format!("flotilla-resim-{}", std::process::id()));
    let world_file = world_to_run(&args, &rerun, &scratch)?;
    let (inputs, outputs) = inputs_and_outputs(&args, &bytes, &world_file, &rerun, messages, end_ns)?;
    let keep = crate::keep::regex_of(&args.topics)?;
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
    let extra = run_options(&args)?;
    let run =
        Run { world_file: &world_file, rerun: &rerun, extra: &extra, scratch: &scratch, keep: args.keep.is_some() };
    let rerun_messages = runtime.block_on(run_again(&run, &inputs, &output_topics, end_step))?;
    let _ = std::fs::remove_dir_all(&scratch);

    let report = Report {
        recording: args.recording.display().to_string(),
        world: world_file.display().to_string(),
        steps: end_step,
        inputs: inputs.len(),
        topics: compare_outputs(&outputs, &output_topics, &rerun_messages, rerun.step_ns),
    };
    print_summary(&report);
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(if report.identical() { std::process::ExitCode::SUCCESS } else { std::process::ExitCode::from(1) })
}

/// The sim time the re-run stops at, ns (`--until`, or the recording's
/// end); refused for a recording that does not start at t = 0.
fn end_of(args: &ResimArgs, rerun: &Rerun, messages: &[Message]) -> anyhow::Result<u64> {
    let recorded_end_ns = messages.iter().map(|m| m.time_ns).max().unwrap_or(0);
    let end_ns = match args.until {
        Some(s) if !(s.is_finite() && s >= 0.0) => bail!("--until must be a time in seconds, got {s}"),
        Some(s) => ((s * 1e9) as u64).min(recorded_end_ns),
        None => recorded_end_ns,
    };
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
    Ok(end_ns)
}

/// The world file the re-run loads: the recording's own, extracted into
/// `scratch`, or the one of the same name in `--world DIR`.
fn world_to_run(args: &ResimArgs, rerun: &Rerun, scratch: &Path) -> anyhow::Result<PathBuf> {
    match &args.world {
        Some(dir) => {
            let file = dir.join(&rerun.world_file);
            if !file.is_file() {
                bail!("--world {}: no {} in it (the recording's world file)", dir.display(), rerun.world_file);
            }
            Ok(file)
        }
        None => rerun.extract(&scratch.join("world")).map_err(anyhow::Error::msg),
    }
}

/// The recorded inputs of `world_file`'s world up to `end_ns`, in the
/// order they go out, and the other messages (the outputs); refused when
/// the world steps otherwise than the recording or an input's channel is
/// missing.
fn inputs_and_outputs(
    args: &ResimArgs,
    bytes: &[u8],
    world_file: &Path,
    rerun: &Rerun,
    messages: Vec<Message>,
    end_ns: u64,
) -> anyhow::Result<(Vec<Input>, Vec<Message>)> {
    let spec = flotilla_world_file::load_world(world_file).map_err(|e| anyhow::anyhow!("{e}"))?;
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
    let missing = missing_inputs(&recorded_channels(bytes, &args.recording)?, &inputs_by_topic);
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
    Ok((inputs, outputs))
}

/// The re-run's options for `flotilla run`: the nodes replaced, the
/// world's options, the recording kept.
fn run_options(args: &ResimArgs) -> anyhow::Result<Vec<String>> {
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
    Ok(extra)
}

/// Each output topic's recorded messages against the re-run's.
fn compare_outputs(
    outputs: &[Message],
    output_topics: &OutputTopics,
    rerun_messages: &BTreeMap<String, Vec<Vec<u8>>>,
    step_ns: u64,
) -> Vec<TopicOutcome> {
    let mut recorded: BTreeMap<&str, Vec<(u64, Vec<u8>)>> = BTreeMap::new();
    for message in outputs.iter().filter(|m| output_topics.contains_key(&m.topic)) {
        recorded.entry(&message.topic).or_default().push((message.time_ns, message.payload.clone()));
    }
    (output_topics.iter())
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
            compare_topic(topic, type_name, step_ns, &before, &again)
        })
        .collect()
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

/// Whether `a` and `b` name the same file (`b` exists; `a` may not).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
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
    fn an_input_without_a_channel_is_named() {
        let channels: BTreeSet<String> = ["/a/scan", "/a/cmd_vel"].map(String::from).into();
        let inputs: BTreeSet<String> = ["/a/cmd_vel", "/b/cmd_vel"].map(String::from).into();
        assert_eq!(missing_inputs(&channels, &inputs), ["/b/cmd_vel"]);
    }
}
