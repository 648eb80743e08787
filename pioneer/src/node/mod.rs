//! The Pioneer node: serves every selected `Pioneer` instance on its TCP
//! port. Commands from a client are applied at the next world state (in
//! sim time), become the robot's `cmd_vel` (so its drive's limits,
//! actuator dynamics and lockstep apply) and SIPs go out every
//! `sip_cycle` of sim time, built from the drive's odometry (with its
//! odometry error), the sonar's ranges and the laser's scans, which the
//! node subscribes to like any other program.

pub mod factory;
pub mod link;
mod robot;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use flotilla_node_kit::runtime::{BadInput, NodePlugin, Outbox, Rebuild};
use flotilla_plugins::battery::BatteryConfig;
use flotilla_plugins::pioneer::{PioneerConfig, DEFAULT_FIRST_PORT};
use flotilla_plugins::registry::Role;
use flotilla_plugins::robots::RobotModel;
use flotilla_plugins::{entry_of, PluginConfig, PluginContext};
use flotilla_wire::description::ModelDescription;
use flotilla_wire::geometry::Pose2;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};
use flotilla_wire::Keys;

use self::factory::{FactorySpec, Waiting};
use self::robot::{Connection, Inputs, Robot};

/// Options of `flotilla-pioneer` beside every node's.
#[derive(Debug, Clone, clap::Args)]
pub struct PioneerArgs {
    /// The port of the first robot without a `port` entry; the next ones
    /// take the following free ports (AMRISim's `-p`).
    #[arg(long, default_value_t = DEFAULT_FIRST_PORT)]
    pub first_port: u16,
    /// The address the ports listen on (AMRISim's `--bind-to-address`).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Let a client's SIM_EXIT stop the simulation (refused otherwise).
    #[arg(long)]
    pub allow_exit: bool,
    /// Also serve every robot (a model with a drive) that has no `Pioneer`
    /// entry, with AMRISim's defaults (`flotilla run --pioneer`).
    #[arg(long)]
    pub every_robot: bool,
    /// AMRISim's robot factory: each client on `--factory-port` gets a new
    /// robot spawned from this model file (which must have a `Pioneer`
    /// entry, as `configs/pioneer/*.model.yaml` do), deleted when it leaves.
    #[arg(long, value_name = "MODEL_FILE")]
    pub robot_factory: Option<PathBuf>,
    /// The robot factory's port.
    #[arg(long, default_value_t = 8100)]
    pub factory_port: u16,
    /// Where factory robots appear: x (m), y (m), heading (rad).
    #[arg(long, num_args = 3, value_names = ["X", "Y", "THETA"], allow_negative_numbers = true, default_values_t = [0.0, 0.0, 0.0])]
    pub factory_pose: Vec<f64>,
}

/// Ports tried after a robot's first choice is taken by another program.
const PORT_TRIES: u16 = 100;

/// What the robots need of the world beyond states: control calls.
#[derive(Clone)]
pub struct World {
    /// The node's session.
    pub session: zenoh::Session,
    /// The simulation's keys.
    pub keys: Keys,
}

/// Serves `Pioneer` instances.
pub struct PioneerServer {
    args: PioneerArgs,
    world: Option<World>,
    robots: Vec<Robot>,
    /// Ports given so far, by instance key: a robot keeps its port while
    /// the node runs.
    ports: HashMap<String, u16>,
    /// Factory connections waiting for their robots.
    waiting: Arc<Waiting>,
    factory_started: bool,
}

/// One robot to serve, from a `Pioneer` entry or (with `--every-robot`)
/// AMRISim's defaults.
struct Wanted<'a> {
    model: &'a ModelDescription,
    key: String,
    body: BodyId,
    config: PioneerConfig,
}

impl PioneerServer {
    /// A server with `args`, calling the world's control services through
    /// `world` (tests may leave it out).
    pub fn new(args: PioneerArgs, world: Option<World>) -> PioneerServer {
        PioneerServer {
            args,
            world,
            robots: Vec::new(),
            ports: HashMap::new(),
            waiting: Arc::default(),
            factory_started: false,
        }
    }

    /// Binds the robot's port: its `port` entry, the one it had, or the
    /// first free one from `--first-port` that no robot has had.
    fn listen(&mut self, key: &str, config: &PioneerConfig) -> std::io::Result<std::net::TcpListener> {
        let (first, tries) = match (config.port, self.ports.get(key)) {
            (Some(port), _) => (port, 1),
            (None, Some(&port)) => (port, 1),
            (None, None) => (self.args.first_port, PORT_TRIES),
        };
        let mut last_error = None;
        let mut port = first;
        for _ in 0..tries {
            let given = self.ports.values().any(|&p| p == port);
            if tries == 1 || !given {
                match std::net::TcpListener::bind(SocketAddr::new(self.args.bind, port)) {
                    Ok(listener) => {
                        self.ports.insert(key.to_string(), port);
                        return Ok(listener);
                    }
                    Err(e) => last_error = Some(e),
                }
            }
            port = port.checked_add(1).ok_or_else(|| std::io::Error::other("no port left"))?;
        }
        Err(last_error.unwrap_or_else(|| std::io::Error::other(format!("no free port from {first}"))))
    }

    /// The robots to serve: every `Pioneer` entry held, and with
    /// `--every-robot` every other model with a drive.
    fn wanted<'a>(&self, rebuild: &Rebuild<'a>) -> Vec<Wanted<'a>> {
        let description = rebuild.description;
        let mut wanted: Vec<Wanted<'a>> = rebuild
            .configured::<PioneerConfig>()
            .into_iter()
            .map(|c| Wanted { model: c.model, key: c.key, body: c.body, config: c.config })
            .collect();
        if self.args.every_robot {
            for model in &description.models {
                let has_entry = model.plugins.iter().any(|p| p.plugin_type == <PioneerConfig as PluginConfig>::TYPE);
                let drive = model.drive_plugin();
                let Some(drive) = drive.filter(|_| !has_entry) else { continue };
                let ctx = PluginContext::of(model, &description.layer_names);
                let entry = format!("{{type: Pioneer, name: pioneer, drive: {}}}", drive.name);
                let parsed = serde_yaml::from_str(&entry)
                    .map_err(|e| e.to_string())
                    .and_then(|v| PioneerConfig::parse(&v, "pioneer", &ctx).map_err(|e| e.to_string()));
                match parsed {
                    Ok(config) => {
                        if let Some(body) = model.body(&config.body) {
                            let key = format!("{}/pioneer", model.name);
                            wanted.push(Wanted { model, key, body: body.id, config });
                        }
                    }
                    Err(e) => tracing::error!("not serving {}: {e}", model.name),
                }
            }
        }
        wanted
    }

    /// Starts the robot factory once, if asked for.
    fn start_factory(&mut self) {
        let (Some(model), Some(world)) = (self.args.robot_factory.clone(), self.world.clone()) else { return };
        if self.factory_started {
            return;
        }
        self.factory_started = true;
        let address = SocketAddr::new(self.args.bind, self.args.factory_port);
        let listener = match std::net::TcpListener::bind(address)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .and_then(tokio::net::TcpListener::from_std)
        {
            Ok(listener) => listener,
            Err(e) => {
                tracing::error!("robot factory: cannot listen on {address}: {e}");
                return;
            }
        };
        let model = std::path::absolute(&model).unwrap_or(model);
        let [x, y, theta] = [0, 1, 2].map(|i| self.args.factory_pose.get(i).copied().unwrap_or(0.0));
        tracing::info!("robot factory: a {} for each client on {address}", model.display());
        let spec = FactorySpec { model, pose: Pose2::new(x, y, theta), prefix: "pioneer_".to_string() };
        tokio::spawn(factory::run(listener, spec, world, self.waiting.clone()));
    }
}

impl NodePlugin for PioneerServer {
    fn role(&self) -> &'static Role {
        &PioneerConfig::ROLE
    }

    fn rebuild(&mut self, rebuild: &mut Rebuild<'_>) {
        self.start_factory();
        let (description, keys) = (rebuild.description, rebuild.keys);
        let mut old = std::mem::take(&mut self.robots);
        for Wanted { model, key, body, config } in self.wanted(rebuild) {
            let ctx = PluginContext::of(model, &description.layer_names);
            let plugins: Vec<(&str, &str)> =
                model.plugins.iter().map(|p| (p.name.as_str(), p.plugin_type.as_str())).collect();
            let siblings = match config.siblings(ctx.model_file, &model.name, &plugins) {
                Ok(s) => s,
                Err(e) => {
                    tracing::error!("not serving {key}: {e}");
                    continue;
                }
            };
            let entry = |name: &str| {
                model.plugins.iter().find(|p| p.name == name).and_then(|p| entry_of(p, ctx.model_file).ok())
            };
            let battery = model
                .plugins
                .iter()
                .find(|p| p.plugin_type == <BatteryConfig as PluginConfig>::TYPE)
                .and_then(|p| entry_of(p, ctx.model_file).ok().map(|e| (p.name.as_str(), e)));
            let inputs = match Inputs::of(&ctx, &model.namespace, &siblings, entry, battery) {
                Ok(inputs) => inputs,
                Err(e) => {
                    tracing::error!("not serving {key}: {e}");
                    continue;
                }
            };
            let keep = old.iter().position(|r| r.key == key && r.config == config && r.inputs == inputs);
            let created = keep.is_none();
            let mut robot = match keep {
                Some(pos) => old.swap_remove(pos),
                None => {
                    let connection = match self.waiting.take(&model.name) {
                        Some(stream) => Connection::Factory(stream),
                        None => match self.listen(&key, &config) {
                            Ok(listener) => Connection::Listen(listener),
                            Err(e) => {
                                tracing::error!("not serving {key}: no port to listen on: {e}");
                                continue;
                            }
                        },
                    };
                    match Robot::start(
                        key.clone(),
                        model.name.clone(),
                        config,
                        inputs,
                        connection,
                        self.args.allow_exit,
                        self.world.clone(),
                    ) {
                        Ok(robot) => robot,
                        Err(e) => {
                            tracing::error!("not serving {key}: {e}");
                            continue;
                        }
                    }
                }
            };
            robot.body = body;
            robot.first_body = model.bodies.first().map_or(body, |b| b.id);
            if created {
                // Where SIM_RESET takes it back to: the body's pose as the
                // node first finds it.
                robot.start_pose = model.bodies.iter().find(|b| b.id == body).map_or(model.pose, |b| b.pose);
            }
            robot.georeference = description.georeference;
            robot.subscribe(rebuild, keys, self.robots.len());
            self.robots.push(robot);
        }
        // Robots left in `old` are gone: dropping them closes their ports.
    }

    fn reset(&mut self) {
        self.robots.clear();
    }

    fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        for robot in &mut self.robots {
            robot.on_state(state, out);
        }
    }

    fn on_input(&mut self, tag: &str, payload: &[u8], _out: &mut Outbox) -> Result<(), BadInput> {
        let (index, what) = tag.split_once(':').ok_or_else(|| BadInput(format!("unknown input {tag}")))?;
        let robot = index.parse::<usize>().ok().and_then(|i| self.robots.get_mut(i));
        match robot {
            Some(robot) => robot.on_input(what, payload),
            None => Ok(()),
        }
    }

    /// A SIP cycle is due in at most `sip_cycle` steps, but commands may
    /// arrive at any moment from a client: answer every state.
    fn steps_without_output(&self, _state: &WorldState) -> u64 {
        0
    }
}

/// How long a control call (move, spawn, delete, pause) may take.
pub(crate) const CONTROL_TIMEOUT: Duration = Duration::from_secs(5);
