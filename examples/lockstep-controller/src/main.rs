//! `flotilla-lockstep-controller`: a lockstep participant written like any
//! user program would be. It joins the world's barrier, and at every state
//! commands every robot (a `TwistStamped` stamped with the state's time, so
//! that it takes effect at the next step whatever the messages' timing),
//! keeps each robot's latest scan and odometry, reads them every
//! `--steps-per-action` states as a learner's environment would, and
//! reports the state done.
//!
//! It is the Rust twin of `flotilla.gym`'s loop (python/flotilla/gym.py),
//! and the baseline its benchmark compares the Python side with
//! (`scripts/bench-python.py`, BENCHMARKS.md). Every state k+1 arrives after
//! all of step k's outputs (docs/time-and-determinism.md), because one
//! queue, filled in arrival order, carries states and sensor messages alike.

use std::time::{Duration, Instant};

use clap::Parser;
use flotilla_messages::geometry_msgs::TwistStamped;
use flotilla_messages::nav_msgs::Odometry;
use flotilla_messages::sensor_msgs::LaserScan;
use flotilla_messages::std_msgs::Header;
use flotilla_node_kit::args::{open_session, NodeArgs, Role};
use flotilla_node_kit::client::wait_for_description;
use flotilla_node_kit::lockstep::LockstepReporter;
use flotilla_plugins::registry::{topics_of_model, Direction};
use flotilla_wire::codec::decode;
use flotilla_wire::description::{ModelDescription, WorldDescription};
use flotilla_wire::world_to_nodes::WorldState;
use flotilla_wire::Keys;
use tokio::sync::mpsc;

/// Drives every robot of a lockstep world, taking part in its barrier.
#[derive(Parser)]
#[command(name = "flotilla-lockstep-controller", version)]
struct Args {
    /// States to answer before leaving the barrier.
    #[arg(long, default_value_t = 2000)]
    steps: u64,
    /// Reads the observations every this many states (a learner's
    /// `steps_per_action`).
    #[arg(long, default_value_t = 10)]
    steps_per_action: u64,
    /// Forward speed commanded, m/s.
    #[arg(long, default_value_t = 0.3)]
    speed: f64,
    /// Prefix of every ROS-facing key (must match the world's).
    #[arg(long, default_value = "")]
    ros_prefix: String,
    #[command(flatten)]
    node: NodeArgs,
}

/// How long the world may stay silent, wall time.
const STATE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a leaving controller waits for the state after its last report
/// (a paused or stopping world publishes none).
const LEAVE_WAIT: Duration = Duration::from_secs(5);

/// A robot: where its commands go, and its latest observations.
struct Robot {
    commands: zenoh::pubsub::Publisher<'static>,
    scan: Option<LaserScan>,
    odometry: Option<Box<Odometry>>,
}

/// What arrives, in arrival order.
enum Arrival {
    State(WorldState),
    Scan(usize, LaserScan),
    /// Boxed: an odometry message is ten times a state's fixed part.
    Odometry(usize, Box<Odometry>),
}

/// The keys of a model's scan, odometry (its own estimate, `…/filtered`,
/// if it has one) and `cmd_vel`, if it has all three.
fn robot_keys(model: &ModelDescription, description: &WorldDescription, keys: &Keys) -> Option<[String; 3]> {
    let specs = topics_of_model(model, &description.layer_names);
    let published = |ros_type: &str| -> Vec<&String> {
        specs.iter().filter(|s| s.direction == Direction::Publish && s.ros_type == ros_type).map(|s| &s.name).collect()
    };
    let scan = *published("sensor_msgs/msg/LaserScan").first()?;
    let odometry = published("nav_msgs/msg/Odometry");
    let odometry = odometry.iter().find(|name| name.ends_with("filtered")).or(odometry.first())?;
    let command = specs
        .iter()
        .find(|s| s.direction == Direction::Subscribe && s.ros_type.starts_with("geometry_msgs/msg/Twist"))?;
    Some([keys.ros(scan), keys.ros(odometry), keys.ros(&command.name)])
}

fn main() -> anyhow::Result<()> {
    flotilla_node_kit::zenoh_threads::configure();
    flotilla_node_kit::logging::init("warn");
    let args = Args::parse();
    let keys = Keys::new(&args.node.sim).with_ros_prefix(&args.ros_prefix);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    runtime.block_on(run(args, keys))
}

async fn run(args: Args, keys: Keys) -> anyhow::Result<()> {
    let zenoh_error = |e: zenoh::Error| anyhow::anyhow!("{e}");
    let session = open_session(&args.node.zenoh, Role::Node).await?;
    let description = wait_for_description(&session, &keys, STATE_TIMEOUT).await?;
    let (tx, mut arrivals) = mpsc::unbounded_channel();
    let mut robots = Vec::new();
    let mut subscribers = Vec::new();
    for model in &description.models {
        let Some([scan_key, odometry_key, command_key]) = robot_keys(model, &description, &keys) else { continue };
        let index = robots.len();
        let to = tx.clone();
        let scans = move |s: zenoh::sample::Sample| {
            if let Ok(scan) = flotilla_messages::decode::<LaserScan>(&s.payload().to_bytes()) {
                let _ = to.send(Arrival::Scan(index, scan));
            }
        };
        subscribers.push(session.declare_subscriber(scan_key).callback(scans).await.map_err(zenoh_error)?);
        let to = tx.clone();
        let odometry = move |s: zenoh::sample::Sample| {
            if let Ok(odometry) = flotilla_messages::decode::<Odometry>(&s.payload().to_bytes()) {
                let _ = to.send(Arrival::Odometry(index, Box::new(odometry)));
            }
        };
        subscribers.push(session.declare_subscriber(odometry_key).callback(odometry).await.map_err(zenoh_error)?);
        // Lossless: a command dropped on a congested link would change the run.
        let commands = session
            .declare_publisher(command_key)
            .congestion_control(zenoh::qos::CongestionControl::Block)
            .await
            .map_err(zenoh_error)?;
        robots.push(Robot { commands, scan: None, odometry: None });
    }
    if robots.is_empty() {
        anyhow::bail!("no model has a scan, odometry and a cmd_vel");
    }
    let to = tx.clone();
    let states = move |s: zenoh::sample::Sample| {
        if let Ok(state) = decode::<WorldState>(&s.payload().to_bytes()) {
            let _ = to.send(Arrival::State(state));
        }
    };
    subscribers.push(session.declare_subscriber(keys.world_state()).callback(states).await.map_err(zenoh_error)?);
    let reporter = LockstepReporter::join(&session, &keys, "rust-controller").await?;

    let (mut answered, mut last_step, mut started) = (0_u64, None, None);
    let (mut observations, mut range_sum_m) = (0_u64, 0.0_f64);
    loop {
        let arrival = tokio::time::timeout(STATE_TIMEOUT, arrivals.recv())
            .await
            .map_err(|_| anyhow::anyhow!("no world state within {STATE_TIMEOUT:?}"))?
            .ok_or_else(|| anyhow::anyhow!("the subscriptions closed"))?;
        let state = match arrival {
            Arrival::Scan(i, scan) => {
                robots[i].scan = Some(scan);
                continue;
            }
            Arrival::Odometry(i, odometry) => {
                robots[i].odometry = Some(odometry);
                continue;
            }
            Arrival::State(state) => state,
        };
        if last_step.is_some_and(|last| state.step <= last) {
            // Published again: the world waits on someone, and it may be
            // this program, if the world took over from one that crashed
            // before it had the report.
            if last_step == Some(state.step) {
                reporter.done(state.step, true).await;
            }
            continue;
        }
        last_step = Some(state.step);
        let since = *started.get_or_insert_with(Instant::now);
        if state.step.is_multiple_of(args.steps_per_action.max(1)) {
            // What a learner's observation reads: every beam, and the pose.
            for robot in &robots {
                if let (Some(scan), Some(odometry)) = (&robot.scan, &robot.odometry) {
                    let finite = scan.ranges.iter().filter(|r| r.is_finite());
                    range_sum_m += finite.map(|&r| f64::from(r)).sum::<f64>() + odometry.pose.pose.position.x;
                    observations += 1;
                }
            }
        }
        let mut command = TwistStamped {
            header: Header { stamp: state.time.to_ros(), frame_id: String::new() },
            ..Default::default()
        };
        command.twist.linear.x = args.speed;
        command.twist.angular.z = 0.5 * (state.step as f64 / 400.0).sin();
        let payload = flotilla_messages::encode(&command);
        for robot in &robots {
            robot.commands.put(payload.clone()).await.map_err(zenoh_error)?;
        }
        // Reported even at the last state, before leaving: Zenoh sends a
        // token's going ahead of the messages sent before it, so without
        // the report the world could step on before the last commands
        // reached their drives.
        reporter.done(state.step, true).await;
        answered += 1;
        if answered >= args.steps {
            let wall_s = since.elapsed().as_secs_f64();
            // One JSON line, for scripts/bench-python.py.
            println!(
                "{{\"robots\": {}, \"states\": {answered}, \"wall_s\": {wall_s:.4}, \"observations\": {observations}, \
                 \"range_sum_m\": {range_sum_m:.1}}}",
                robots.len()
            );
            break;
        }
    }
    // Leaving: the world stops waiting for this program once its token
    // goes, which Zenoh sends as a declaration, at a higher priority than
    // the commands and the report sent before it. Gone before its report
    // arrived, it would let the world step on before its last commands
    // reached their drives (they would take effect a step late, and a
    // recording of the run would not run again identically). The next
    // state says the report, and so the commands, arrived.
    await_state_after(&mut arrivals, last_step).await;
    drop(reporter);
    drop(subscribers);
    tokio::time::sleep(flotilla_node_kit::args::DRAIN).await;
    let _ = session.close().await;
    Ok(())
}

/// Waits (at most [`LEAVE_WAIT`]) for a state other than `answered`.
async fn await_state_after(arrivals: &mut mpsc::UnboundedReceiver<Arrival>, answered: Option<u64>) {
    let Some(answered) = answered else { return };
    let _ = tokio::time::timeout(LEAVE_WAIT, async {
        while let Some(arrival) = arrivals.recv().await {
            if matches!(arrival, Arrival::State(state) if state.step != answered) {
                return;
            }
        }
    })
    .await;
}
