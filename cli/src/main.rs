//! `flotilla`: the user's entry point.
//!
//! * `run` — launch and supervise every node a world needs;
//! * `check` — validate a world and every plugin configuration without running;
//! * `snapshot` — draw the running world into a PNG;
//! * `view` — the live view in the browser;
//! * `record`, `replay` — keep a run in MCAP and play it back;
//! * `resim` — run a lockstep recording again and compare every output;
//! * `spawn`, `delete`, `move`, `pause`, `resume`, `step`, `set-map`,
//!   `map-command` — drive the world's control services.
//!
//! Dependencies beyond the workspace's: `nix` (signal feature only) to send
//! SIGTERM to children without `unsafe`.

mod bench;
mod check;
mod checkpoint;
mod control;
mod keep;
mod launch;
mod resim;
mod snapshot;
mod status_line;
mod view;

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use flotilla_node_kit::args::NodeArgs;

/// Flotilla: a distributed 2D multi-robot simulator that loads Flatland worlds.
#[derive(Parser)]
#[command(name = "flotilla", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a world: start the world node and every node its plugins need,
    /// restart any that crashes, show a live status line.
    Run(Box<launch::RunArgs>),
    /// Run a standard benchmark scenario with every node its own process and
    /// measure it: real-time factor, beams/s, CPU and memory per process,
    /// traffic, latency.
    Bench(bench::BenchArgs),
    /// One answering process of `flotilla bench --barrier-floor`.
    #[command(hide = true)]
    BenchAnswer(bench::AnswerArgs),
    /// Draw the running world (walls, bodies, the latest laser hits) into a PNG.
    Snapshot(snapshot::SnapshotArgs),
    /// Serve a live view of a running simulation in the browser
    /// (http://127.0.0.1:8080 by default): watch it, drag, spawn, delete,
    /// pause, step.
    View(view::ViewArgs),
    /// Record every ROS-facing topic of a running simulation to an MCAP
    /// file (ROS 2 schemas, CDR payloads, sim-time log times).
    Record(keep::RecordArgs),
    /// Publish a recording's topics again, on their keys, with its clock.
    Replay(keep::ReplayArgs),
    /// Run a lockstep recording again from its inputs and compare every
    /// output with it, message by message (exit 1 at a difference).
    Resim(resim::ResimArgs),
    /// Save a running world to a file, or show what a checkpoint file
    /// holds.
    #[command(subcommand)]
    Checkpoint(checkpoint::CheckpointCommand),
    /// Validate a world file, its maps, models and plugin configurations.
    Check {
        /// The Flatland world file.
        world: PathBuf,
    },
    /// Spawn a model from a model YAML file.
    Spawn {
        /// Model file (absolute, or relative to the world file).
        model: String,
        /// Name of the new model.
        #[arg(long)]
        name: String,
        /// Namespace of its topics and frames.
        #[arg(long, default_value = "")]
        ns: String,
        /// Pose: x (m), y (m), theta (rad).
        #[arg(long, num_args = 3, value_names = ["X", "Y", "THETA"], allow_negative_numbers = true, default_values_t = [0.0, 0.0, 0.0])]
        pose: Vec<f64>,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Delete a model.
    Delete {
        /// The model.
        name: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Teleport a model.
    Move {
        /// The model.
        name: String,
        /// x in metres.
        #[arg(allow_negative_numbers = true)]
        x: f64,
        /// y in metres.
        #[arg(allow_negative_numbers = true)]
        y: f64,
        /// Heading in radians.
        #[arg(allow_negative_numbers = true)]
        theta: f64,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Pause stepping.
    Pause {
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Resume stepping.
    Resume {
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Switch the clock mode: realtime, fast, lockstep or external.
    Clock {
        /// The new mode: realtime, fast, lockstep or external.
        #[arg(value_name = "MODE")]
        clock_mode: flotilla_wire::control::ClockMode,
        /// New real-time factor (realtime mode).
        #[arg(long)]
        rate: Option<f64>,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Put a model on another map of a world of several maps (see
    /// `properties: maps`), optionally moving it: `--pose X Y THETA` (m, m,
    /// rad).
    SetMap {
        /// The model.
        name: String,
        /// The map it goes to.
        map: String,
        /// Where it lands: x (m), y (m), theta (rad).
        #[arg(long, num_args = 3, allow_negative_numbers = true, value_names = ["X", "Y", "THETA"])]
        pose: Option<Vec<f64>>,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Send a map command (e.g. CLOSE-DOOR, GOTO-2) to a robot, for the
    /// map-transition manager: it fires the robot's command transition if
    /// the robot is inside its circle.
    #[command(name = "map-command")]
    MapCmd {
        /// The robot (model name).
        robot: String,
        /// The command (case-sensitive).
        command: String,
        /// Prefix of the world's ROS-facing keys, if it has one.
        #[arg(long, default_value = "")]
        ros_prefix: String,
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Take N steps, then stay paused.
    Step {
        /// Number of steps.
        steps: u64,
        #[command(flatten)]
        node: NodeArgs,
    },
}

fn main() -> std::process::ExitCode {
    flotilla_node_kit::logging::init("warn");
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => launch::run(*args),
        Command::Bench(args) => bench::run(args),
        Command::BenchAnswer(args) => bench::answer(args),
        Command::Snapshot(args) => snapshot::run(args),
        Command::Check { world } => check::check(&world),
        Command::Checkpoint(command) => checkpoint::run(command),
        Command::View(args) => view::view(args),
        Command::Record(args) => keep::record(args),
        Command::Replay(args) => keep::replay(args),
        // Exit 1 for a difference, 2 for what kept it from comparing.
        Command::Resim(args) => {
            return resim::resim(args).unwrap_or_else(|e| {
                eprintln!("flotilla resim: {e:#}");
                std::process::ExitCode::from(2)
            })
        }
        Command::Spawn { model, name, ns, pose, node } => {
            control::spawn(&node, model, name, ns, flotilla_wire::geometry::Pose2::new(pose[0], pose[1], pose[2]))
        }
        Command::Delete { name, node } => control::delete(&node, name),
        Command::Move { name, x, y, theta, node } => {
            control::move_model(&node, name, flotilla_wire::geometry::Pose2::new(x, y, theta))
        }
        Command::Pause { node } => control::simple(&node, flotilla_wire::control::ControlRequest::Pause),
        Command::Resume { node } => control::simple(&node, flotilla_wire::control::ControlRequest::Resume),
        Command::Clock { clock_mode, rate, node } => control::simple(
            &node,
            flotilla_wire::control::ControlRequest::SetClock { mode: clock_mode, real_time_factor: rate },
        ),
        Command::SetMap { name, map, pose, node } => {
            control::set_map(&node, name, map, pose.map(|p| flotilla_wire::geometry::Pose2::new(p[0], p[1], p[2])))
        }
        Command::MapCmd { robot, command, ros_prefix, node } => {
            control::map_command(&node, &ros_prefix, robot, command)
        }
        Command::Step { steps, node } => control::simple(&node, flotilla_wire::control::ControlRequest::Step { steps }),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flotilla: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
