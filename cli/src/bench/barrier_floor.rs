//! `flotilla bench SCENARIO --barrier-floor`: the least a lockstep barrier
//! over the scenario's participants can cost on this machine, the floor to
//! hold lockstep's coordination against.
//!
//! This process stands in for the world: it publishes a step number, at
//! once (Zenoh's express), and as many answering processes as the scenario
//! has lockstep participants (`flotilla bench-answer`, each with its own
//! Zenoh session, peers on loopback as the nodes are) answer each step
//! with its number, at once; the next step goes when every answer is in.
//! Nothing else: no state, no work, 8 bytes each way, the leader sleeping
//! on its answers rather than spinning. What a step costs here (wall time,
//! every process's CPU) any barrier over these processes on Zenoh pays at
//! the least: a message out to each, one back from each, a thread wake-up
//! at both ends of each.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use flotilla_node_kit::args::{loopback_peer_args, NodeArgs, Role, ZenohArgs};
use serde::Serialize;
use zenoh::qos::CongestionControl;
use zenoh::Wait;

use super::processes::{self, Children};
use super::procstat;

/// Steps taken before measuring: sessions settle, routes are in place.
const WARMUP_STEPS: u64 = 500;

/// How long the leader waits for the answering processes to come up.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a step may wait for its answers once all are up.
const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// What `--barrier-floor` reports.
#[derive(Debug, Clone, Serialize)]
pub struct BarrierFloor {
    /// Answering processes (the scenario's lockstep participants).
    pub participants: usize,
    /// Steps measured.
    pub steps: u64,
    /// Wall µs per step.
    pub wall_us_per_step: f64,
    /// The leader's CPU µs per step (the world's part).
    pub leader_cpu_us_per_step: f64,
    /// Each answering process's CPU µs per step.
    pub answer_cpu_us_per_step: Vec<f64>,
    /// All processes' CPU µs per step together.
    pub all_cpu_us_per_step: f64,
}

/// The keys of one measurement.
struct Keys {
    step: String,
    answers: String,
}

impl Keys {
    fn new(sim: &str) -> Keys {
        Keys { step: format!("flotilla/{sim}/bench/floor/step"), answers: format!("flotilla/{sim}/bench/floor/answer") }
    }
}

/// Measures `steps` steps of a barrier over `participants` processes,
/// logging theirs into `dir`.
pub fn measure(participants: usize, steps: u64, dir: &std::path::Path) -> anyhow::Result<BarrierFloor> {
    if participants == 0 {
        bail!("--barrier-floor: the scenario has no lockstep participant");
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let sim = format!("floor{}", std::process::id());
    let keys = Keys::new(&sim);
    let zenoh = ZenohArgs { listen: vec![endpoint.clone()], mode: Some("peer".into()), ..Default::default() };
    let session = zenoh::open(zenoh.zenoh_config(Role::World)?).wait().map_err(|e| anyhow::anyhow!("{e}"))?;
    let (answered, answers) = mpsc::channel::<u64>();
    let _subscriber = session
        .declare_subscriber(format!("{}/*", keys.answers))
        .callback(move |sample| {
            if let Ok(step) = <[u8; 8]>::try_from(sample.payload().to_bytes().as_ref()) {
                let _ = answered.send(u64::from_le_bytes(step));
            }
        })
        .wait()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let publisher = session
        .declare_publisher(keys.step.clone())
        .congestion_control(CongestionControl::Block)
        .express(true)
        .wait()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut children = Children(Vec::new());
    for i in 0..participants {
        let mut args = vec!["bench-answer".to_string(), "--index".into(), i.to_string(), "--sim".into(), sim.clone()];
        args.extend(loopback_peer_args(&endpoint));
        children.0.push(processes::spawn(dir, &format!("answer.{i}"), "flotilla", &args)?);
    }
    let step = |k: u64, timeout: Duration| -> anyhow::Result<bool> {
        publisher.put(k.to_le_bytes().to_vec()).wait().map_err(|e| anyhow::anyhow!("{e}"))?;
        let deadline = Instant::now() + timeout;
        let mut missing = participants;
        while missing > 0 {
            match answers.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(answer) if answer == k => missing -= 1,
                Ok(_) => {} // an earlier step's, from before every answer was up
                Err(_) => return Ok(false),
            }
        }
        Ok(true)
    };
    // Up when a step gets every answer.
    let start = Instant::now();
    let mut k = 0;
    while !step(k, Duration::from_millis(200))? {
        if let Some((name, status)) = children.exited()? {
            bail!("{name} exited ({status}); see {}", dir.join(format!("{name}.log")).display());
        }
        if start.elapsed() > START_TIMEOUT {
            bail!("the answering processes did not all answer in {START_TIMEOUT:?}; logs in {}", dir.display());
        }
        k += 1;
    }
    for _ in 0..WARMUP_STEPS {
        k += 1;
        step(k, STEP_TIMEOUT)?.then_some(()).context("a warm-up step was not answered")?;
    }
    let pids: Vec<u32> = std::iter::once(std::process::id()).chain(children.0.iter().map(|(_, c, _)| c.id())).collect();
    let cpu = || -> anyhow::Result<Vec<f64>> { pids.iter().map(|&pid| Ok(procstat::sample(pid)?.cpu_s)).collect() };
    let (wall_0, cpu_0) = (Instant::now(), cpu()?);
    for _ in 0..steps {
        k += 1;
        step(k, STEP_TIMEOUT)?.then_some(()).with_context(|| format!("step {k} was not answered"))?;
    }
    let (wall, cpu_1) = (wall_0.elapsed().as_secs_f64(), cpu()?);
    let per_step: Vec<f64> = cpu_0.iter().zip(&cpu_1).map(|(a, b)| (b - a) * 1e6 / steps as f64).collect();
    Ok(BarrierFloor {
        participants,
        steps,
        wall_us_per_step: wall * 1e6 / steps as f64,
        leader_cpu_us_per_step: per_step[0],
        answer_cpu_us_per_step: per_step[1..].to_vec(),
        all_cpu_us_per_step: per_step.iter().sum(),
    })
}

/// Prints the measurement.
pub fn print(floor: &BarrierFloor) {
    println!(
        "a barrier over {} processes and a leader, {} steps: {:.1} µs wall per step ({:.0} steps/s)",
        floor.participants,
        floor.steps,
        floor.wall_us_per_step,
        1e6 / floor.wall_us_per_step
    );
    println!("CPU µs per step: leader {:.1}", floor.leader_cpu_us_per_step);
    for (i, cpu) in floor.answer_cpu_us_per_step.iter().enumerate() {
        println!("                 answer.{i} {cpu:.1}");
    }
    println!("                 all {:.1}", floor.all_cpu_us_per_step);
}

/// Arguments of `flotilla bench-answer`, one answering process of
/// `--barrier-floor`.
#[derive(clap::Args)]
pub struct AnswerArgs {
    /// Which answering process this is (its answers' key).
    #[arg(long)]
    index: usize,
    #[command(flatten)]
    node: NodeArgs,
}

/// Answers every step with its number until killed.
pub fn answer(args: AnswerArgs) -> anyhow::Result<()> {
    let keys = Keys::new(&args.node.sim);
    let session = zenoh::open(args.node.zenoh.zenoh_config(Role::Node)?).wait().map_err(|e| anyhow::anyhow!("{e}"))?;
    let publisher = session
        .declare_publisher(format!("{}/{}", keys.answers, args.index))
        .congestion_control(CongestionControl::Block)
        .express(true)
        .wait()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    // Answered in Zenoh's receiving thread, as a drive answers a state.
    let _subscriber = session
        .declare_subscriber(keys.step)
        .callback(move |sample| {
            let _ = publisher.put(sample.payload().to_bytes().into_owned()).wait();
        })
        .wait()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    loop {
        std::thread::park();
    }
}
