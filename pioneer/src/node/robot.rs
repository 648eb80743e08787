//! One emulated robot: its port, what it subscribes to, and what each
//! command does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use flotilla_messages::geometry_msgs::{Twist, Vector3};
use flotilla_messages::nav_msgs::Odometry;
use flotilla_messages::sensor_msgs::{BatteryState, LaserScan, Range};
use flotilla_node_kit::client::call_control;
use flotilla_node_kit::runtime::{BadInput, Outbox, Rebuild};
use flotilla_plugins::battery::BatteryConfig;
use flotilla_plugins::laser::LaserConfig;
use flotilla_plugins::odometry::OdomErrorMode;
use flotilla_plugins::pioneer::{PioneerConfig, Siblings};
use flotilla_plugins::registry;
use flotilla_plugins::sonar::SonarConfig;
use flotilla_plugins::{DriveInterface, PluginContext};
use flotilla_wire::control::{verbs, ControlRequest};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::resolve_topic;
use flotilla_wire::update_timer::UpdateTimer;
use flotilla_wire::world_to_nodes::{BodyId, WorldState};
use flotilla_wire::Keys;
use serde_yaml::Value;

use super::link::{listen, serve_client, Link, LinkEvent};
use super::{World, CONTROL_TIMEOUT};
use crate::command::Command;
use crate::motion::{Motion, OdometricPose};
use crate::replies::{self, Limits, SimStat, SipState, SipWriter};

/// What a robot reads and commands, from its sibling plugins.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    /// The drive's `cmd_vel`, resolved.
    cmd_vel: String,
    /// The drive's odometry topic, resolved; `None` when it publishes none
    /// (the SIP then reports the true pose).
    odometry: Option<String>,
    /// The odometry error factors SIMSTAT states (x, y per m; heading per
    /// rad): the constant ones, or the bounds of the random ones.
    odom_error: Option<[f64; 3]>,
    /// Each transducer's range topic, resolved.
    sonar: Vec<String>,
    /// Whether transducers face forward / backward (CONFIGpac).
    sonar_front_rear: (bool, bool),
    /// The laser's scan topic, resolved.
    laser: Option<String>,
    /// The model's battery's state topic, resolved (the SIP reports its
    /// voltage, charge state and state of charge).
    battery: Option<String>,
}

impl Inputs {
    /// Reads the sibling plugins' entries (`entry(name)`).
    pub fn of(
        ctx: &PluginContext,
        namespace: &str,
        siblings: &Siblings,
        entry: impl Fn(&str) -> Option<Value>,
        battery: Option<(&str, Value)>,
    ) -> Result<Inputs, String> {
        let drive_entry = entry(siblings.drive).ok_or_else(|| format!("no drive plugin {}", siblings.drive))?;
        let kind = drive_entry.get("type").and_then(Value::as_str).unwrap_or_default();
        let unserved = || format!("drive {} is a {kind}, which no Flotilla node serves", siblings.drive);
        let registered = registry::plugin_type(kind).ok_or_else(unserved)?;
        let DriveInterface { twist_sub, odometry } = registered
            .drive_interface(&drive_entry, siblings.drive, ctx)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("plugin {} is a {kind}, which drives no robot", siblings.drive))?;
        let error = odometry.odom_error;
        let odom_error = match error.mode {
            OdomErrorMode::None => None,
            OdomErrorMode::Constant => Some(error.constant),
            OdomErrorMode::RandomInit | OdomErrorMode::RandomEachUpdate => {
                Some(error.ranges.map(|[low, high]| low.abs().max(high.abs())))
            }
        };
        let (sonar, sonar_front_rear) = match siblings.sonar {
            Some(name) => {
                let e = entry(name).ok_or_else(|| format!("no sonar plugin {name}"))?;
                let c = SonarConfig::parse(&e, name, ctx).map_err(|e| e.to_string())?;
                let topics = (0..c.transducers.len()).map(|i| resolve_topic(namespace, &c.range_topic(i))).collect();
                let facing = |front: bool| c.transducers.iter().any(|t| (t.pose.theta_rad.cos() > 0.0) == front);
                (topics, (facing(true), facing(false)))
            }
            None => (Vec::new(), (false, false)),
        };
        let laser = match siblings.laser {
            Some(name) => {
                let e = entry(name).ok_or_else(|| format!("no laser plugin {name}"))?;
                let c = LaserConfig::parse(&e, name, ctx).map_err(|e| e.to_string())?;
                Some(resolve_topic(namespace, &c.topic))
            }
            None => None,
        };
        let battery = match battery {
            Some((name, e)) => {
                let c = BatteryConfig::parse(&e, name, ctx).map_err(|e| e.to_string())?;
                Some(resolve_topic(namespace, &c.topic))
            }
            None => None,
        };
        Ok(Inputs {
            cmd_vel: resolve_topic(namespace, &twist_sub),
            odometry: odometry.enable_odom_pub.then(|| resolve_topic(namespace, &odometry.odom_pub)),
            odom_error,
            sonar,
            sonar_front_rear,
            laser,
            battery,
        })
    }
}

/// The simulated laser's selection (SIM_LRF_*); by default off, the
/// scan's whole field at its own resolution.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct LaserView {
    /// 0 off, 1 plain packets, 2 extended.
    mode: i32,
    /// Degrees from the front, first and last reading; `None`: the scan's.
    start_deg: Option<f64>,
    end_deg: Option<f64>,
    /// Degrees between readings; `None`: the scan's.
    resolution_deg: Option<f64>,
}

/// The latest odometry: pose (m, m, rad), body-frame twist (m/s, m/s,
/// rad/s) and stamp (sim ns).
#[derive(Debug, Clone, Copy, Default)]
struct OdometryReading {
    pose: [f64; 3],
    twist: [f64; 3],
    stamp_ns: u64,
}

impl OdometryReading {
    /// The pose carried forward to `now_ns` with the reading's own twist:
    /// a drive's odometry comes at its `pub_rate` (10 Hz for AMRISim's
    /// models), and a MOVE or HEAD servo on a pose 0.1 s old overshoots by
    /// a tenth of its speed.
    fn pose_at(&self, now_ns: u64) -> [f64; 3] {
        let dt = now_ns.saturating_sub(self.stamp_ns).min(1_000_000_000) as f64 * 1e-9;
        let [x, y, th] = self.pose;
        let [vx, vy, w] = self.twist;
        let heading = th + w * dt / 2.0;
        let (s, c) = heading.sin_cos();
        [x + (c * vx - s * vy) * dt, y + (s * vx + c * vy) * dt, th + w * dt]
    }
}

/// A teleport whose effect on the client's odometry is still to be set:
/// once the body is at `target` (sim time known) and an odometry message
/// from then on has arrived, the SETO origin is moved so that the client
/// reads `hold` (AMRISim: SIM_SET_POSE leaves odometry as it was,
/// SIM_RESET zeroes it).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Rezero {
    AwaitMove { target: Pose2, hold: Pose2 },
    AwaitOdometry { since_ns: u64, hold: Pose2 },
}

/// How a robot's client reaches it.
pub enum Connection {
    /// Clients connect to this listener, one after another.
    Listen(std::net::TcpListener),
    /// A robot factory's client, already connected: the robot is deleted
    /// when it leaves.
    Factory(tokio::net::TcpStream),
}

/// One robot.
pub struct Robot {
    /// `<model>/<plugin>`.
    pub key: String,
    model: String,
    /// Its parameters.
    pub config: PioneerConfig,
    /// What it reads and commands.
    pub inputs: Inputs,
    /// Its body.
    pub body: BodyId,
    /// Where SIM_RESET puts its body.
    pub start_pose: Pose2,
    /// The model's first body, which the world's `move` places.
    pub first_body: BodyId,
    /// The world's georeference, for SIMSTAT.
    pub georeference: Option<[f64; 3]>,
    link: Arc<Link>,
    listener: tokio::task::JoinHandle<()>,
    allow_exit: bool,
    world: Option<World>,
    cmd_vel_key: String,
    // Connection state.
    connected: bool,
    open: bool,
    sonar_on: bool,
    motion: Motion,
    sip: SipWriter,
    sip_timer: UpdateTimer,
    last_sip: Option<Instant>,
    simstat: SimStatMode,
    laser_view: LaserView,
    /// The voltage BATTEST set, V (none: the battery's, else the config's).
    battery_test_volts: Option<f64>,
    /// The model's battery's last state.
    battery: Option<BatteryState>,
    /// Pose the client's odometry counts from (SETO), in odometry's frame.
    origin: Pose2,
    // Inputs.
    odometry: Option<OdometryReading>,
    true_pose: Option<Pose2>,
    /// The first body's true pose, when it is not `body`.
    first_true_pose: Option<Pose2>,
    sonar_ranges: Vec<Option<f64>>,
    scan: Option<LaserScan>,
    scan_sent: bool,
    moved: bool,
    commanded: [f64; 3],
    /// Sim time the robot has been stalled for, s.
    stalled_s: f64,
    now_ns: u64,
    rezero: Option<Rezero>,
    events: Vec<LinkEvent>,
    unsupported: std::collections::HashMap<u8, u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SimStatMode {
    Off,
    Once,
    EverySip,
}

/// Sim time commanded translation must meet no motion to count as a stall.
const STALL_AFTER_S: f64 = 0.5;

impl Robot {
    /// Serves `connection` and starts at rest.
    pub fn start(
        key: String,
        model: String,
        config: PioneerConfig,
        inputs: Inputs,
        connection: Connection,
        allow_exit: bool,
        world: Option<World>,
    ) -> std::io::Result<Robot> {
        let link = Arc::new(Link::default());
        let watchdog = (config.watchdog_ms > 0).then(|| Duration::from_millis(config.watchdog_ms));
        let identification = replies::sync2(&config);
        let task = match connection {
            Connection::Listen(std_listener) => {
                std_listener.set_nonblocking(true)?;
                let address = std_listener.local_addr()?;
                let listener = tokio::net::TcpListener::from_std(std_listener)?;
                tracing::info!("serving Pioneer {key} on {address}");
                tokio::spawn(listen(listener, link.clone(), model.clone(), identification, watchdog))
            }
            Connection::Factory(stream) => {
                tracing::info!("serving Pioneer {key} for its factory client");
                let (link, model, world) = (link.clone(), model.clone(), world.clone());
                tokio::spawn(async move {
                    serve_client(stream, &link, &model, &identification, watchdog).await;
                    if let Some(world) = world {
                        super::factory::delete(world, model).await;
                    }
                })
            }
        };
        Ok(Robot {
            key,
            model,
            motion: motion_of(&config),
            sip: SipWriter::new(&config),
            sip_timer: UpdateTimer::new(1000.0 / config.sip_cycle_ms as f64),
            battery_test_volts: None,
            battery: None,
            config,
            inputs,
            body: BodyId::default(),
            start_pose: Pose2::default(),
            first_body: BodyId::default(),
            georeference: None,
            link,
            listener: task,
            allow_exit,
            world,
            cmd_vel_key: String::new(),
            connected: false,
            open: false,
            sonar_on: true,
            last_sip: None,
            simstat: SimStatMode::Off,
            laser_view: LaserView::default(),
            origin: Pose2::default(),
            odometry: None,
            true_pose: None,
            first_true_pose: None,
            sonar_ranges: Vec::new(),
            scan: None,
            scan_sent: true,
            moved: false,
            commanded: [0.0; 3],
            stalled_s: 0.0,
            now_ns: 0,
            rezero: None,
            events: Vec::new(),
            unsupported: Default::default(),
        })
    }

    /// Subscribes its inputs, tagged with its index among the node's robots.
    pub fn subscribe(&mut self, rebuild: &mut Rebuild<'_>, keys: &Keys, index: usize) {
        self.cmd_vel_key = keys.ros(&self.inputs.cmd_vel);
        if let Some(odometry) = &self.inputs.odometry {
            rebuild.subscribe(keys.ros(odometry), format!("{index}:odom"));
        }
        for (i, topic) in self.inputs.sonar.iter().enumerate() {
            rebuild.subscribe(keys.ros(topic), format!("{index}:sonar:{i}"));
        }
        self.sonar_ranges.resize(self.inputs.sonar.len(), None);
        if let Some(laser) = &self.inputs.laser {
            rebuild.subscribe(keys.ros(laser), format!("{index}:laser"));
        }
        if let Some(battery) = &self.inputs.battery {
            rebuild.subscribe(keys.ros(battery), format!("{index}:battery"));
        }
        rebuild.output(self.cmd_vel_key.clone());
    }

    /// An input message.
    pub fn on_input(&mut self, what: &str, payload: &[u8]) -> Result<(), BadInput> {
        if what == "odom" {
            let o: Odometry = flotilla_messages::decode(payload)?;
            let p = &o.pose.pose;
            let t = &o.twist.twist;
            let stamp_ns = o.header.stamp.nanos();
            self.odometry = Some(OdometryReading {
                pose: [p.position.x, p.position.y, p.orientation.yaw()],
                twist: [t.linear.x, t.linear.y, t.angular.z],
                stamp_ns,
            });
            if let Some(Rezero::AwaitOdometry { since_ns, hold }) = self.rezero {
                if stamp_ns >= since_ns {
                    self.hold_client_pose(hold);
                    self.rezero = None;
                }
            }
        } else if let Some(i) = what.strip_prefix("sonar:") {
            let r: Range = flotilla_messages::decode(payload)?;
            let range = if r.range.is_finite() { f64::from(r.range) } else { f64::from(r.max_range) };
            if let Some(slot) = i.parse::<usize>().ok().and_then(|i| self.sonar_ranges.get_mut(i)) {
                *slot = Some(range.clamp(0.0, f64::from(r.max_range.max(0.0))));
            }
        } else if what == "laser" {
            self.scan = Some(flotilla_messages::decode(payload)?);
            self.scan_sent = false;
        } else if what == "battery" {
            self.battery = Some(flotilla_messages::decode(payload)?);
        }
        Ok(())
    }

    /// The odometric pose as the client counts it: odometry (or the true
    /// pose) relative to the SETO origin.
    fn client_pose(&self) -> Pose2 {
        self.origin.inverse().compose(&self.client_pose_raw())
    }

    fn odometric(&self) -> OdometricPose {
        let p = self.client_pose();
        OdometricPose { x: p.x_m * 1000.0, y: p.y_m * 1000.0, th: p.theta_rad.to_degrees() }
    }

    /// A world state: apply what the client sent, command the drive, and
    /// send the SIP (and what goes with it) when one is due.
    pub fn on_state(&mut self, state: &WorldState, out: &mut Outbox) {
        if let Ok(i) = state.bodies.binary_search_by_key(&self.body, |b| b.id) {
            let truth = state.bodies[i].pose;
            self.true_pose = Some(truth);
            if self.first_body != self.body {
                let first = state.bodies.binary_search_by_key(&self.first_body, |b| b.id);
                self.first_true_pose = first.ok().map(|j| state.bodies[j].pose);
            }
            if let Some(Rezero::AwaitMove { target, hold }) = self.rezero {
                let off = (truth.x_m - target.x_m).hypot(truth.y_m - target.y_m);
                let turned = replies::wrap_angle(truth.theta_rad - target.theta_rad).abs();
                if off < 0.01 && turned < 0.01 {
                    self.rezero = Some(Rezero::AwaitOdometry { since_ns: state.time.nanos, hold });
                    if self.odometry.is_none() {
                        // Without odometry the client reads the true pose.
                        self.hold_client_pose(hold);
                        self.rezero = None;
                    }
                }
            }
        }
        let mut events = std::mem::take(&mut self.events);
        self.link.take_events(&mut events);
        for event in events.drain(..) {
            self.on_event(event);
        }
        self.events = events;
        let dt = state.step_ns as f64 * 1e-9;
        self.now_ns = state.time.nanos;
        let [v, w, lateral] = self.motion.step(dt, self.odometric());
        let twist = [v / 1000.0, lateral / 1000.0, w.to_radians()];
        let sip_due = self.sip_timer.check(state.time.nanos, state.step_ns);
        // Each change at once (a client gone leaves a last zero), and again
        // every SIP cycle while the robot moves, so that a drive's cmd_vel
        // timeout never stops it mid-command.
        if twist != self.commanded || (self.connected && sip_due && twist != [0.0; 3]) {
            self.commanded = twist;
            let message = Twist {
                linear: Vector3 { x: twist[0], y: twist[1], z: 0.0 },
                angular: Vector3 { x: 0.0, y: 0.0, z: twist[2] },
            };
            out.put(self.cmd_vel_key.clone(), flotilla_messages::encode(&message));
        }
        self.track_stall(dt);
        if sip_due && self.connected && self.open {
            self.send_cycle();
        }
    }

    /// A stall: translation commanded and the odometry showing under a
    /// tenth of it for [`STALL_AFTER_S`] (AMRISim stalls a robot pushing
    /// against an obstacle).
    fn track_stall(&mut self, dt: f64) {
        let commanded = self.commanded[0].abs();
        let moving = self.odometry.map_or(0.0, |o| o.twist[0].abs());
        self.stalled_s = if commanded > 0.05 && moving < 0.1 * commanded { self.stalled_s + dt } else { 0.0 };
    }

    fn stalled(&self) -> bool {
        self.stalled_s >= STALL_AFTER_S
    }

    /// One client-communication cycle: SIMSTAT if asked, the SIP, and the
    /// laser packets of a new scan.
    fn send_cycle(&mut self) {
        let now = Instant::now();
        if self.simstat != SimStatMode::Off {
            let last = self.last_sip.map_or(0, |t| now.duration_since(t).as_millis().min(65535) as u16);
            self.link.send(replies::simstat(&self.simstat_values(last)));
            if self.simstat == SimStatMode::Once {
                self.simstat = SimStatMode::Off;
            }
        }
        self.last_sip = Some(now);
        let pose = self.client_pose();
        let twist = self.odometry.map_or([0.0; 3], |o| o.twist);
        let state = SipState {
            pose: [pose.x_m, pose.y_m, pose.theta_rad],
            v: twist[0],
            w: twist[2],
            lateral: twist[1],
            battery_volts: self.battery_volts(),
            charge_state: self.charge_state(),
            state_of_charge: self
                .battery
                .as_ref()
                .map_or(0, |b| (b.percentage * 100.0).round().clamp(0.0, 100.0) as u8),
            stalled: self.stalled(),
            motors_enabled: self.motion.enabled(),
            sonar_on: self.sonar_on,
        };
        let sonar: Vec<(u8, f64)> =
            self.sonar_ranges.iter().enumerate().filter_map(|(i, r)| r.map(|r| (i as u8, r))).collect();
        self.link.send(self.sip.sip(&state, &sonar));
        if self.laser_view.mode != 0 && !self.scan_sent {
            if let Some(scan) = &self.scan {
                let readings = select_readings(scan, &self.laser_view);
                let pose = [pose.x_m, pose.y_m, pose.theta_rad];
                for packet in replies::laser_packets(self.laser_view.mode == 2, pose, &readings, self.moved) {
                    self.link.send(packet);
                }
                self.moved = false;
            }
            self.scan_sent = true;
        }
    }

    /// The voltage the SIP reports: BATTEST's while it holds, else the
    /// model's battery's, else the configured one, V.
    fn battery_volts(&self) -> f64 {
        self.battery_test_volts
            .or_else(|| self.battery.as_ref().map(|b| f64::from(b.voltage)))
            .unwrap_or(self.config.battery_volts)
    }

    /// ARIA's charge state from the battery's status: bulk while charging,
    /// float when full on the charger, else not charging.
    fn charge_state(&self) -> u8 {
        match self.battery.as_ref().map(|b| b.power_supply_status) {
            Some(BatteryState::POWER_SUPPLY_STATUS_CHARGING) => 1,
            Some(BatteryState::POWER_SUPPLY_STATUS_FULL) => 3,
            _ => 0,
        }
    }

    fn simstat_values(&self, last_interval_ms: u16) -> SimStat {
        let truth = self.true_pose.unwrap_or_default();
        let geo = self.georeference.map(|[lat, lon, alt]| {
            let reference = flotilla_wire::geodesy::Reference::new(lat, lon);
            let (lat, lon) = reference.geodetic(truth.x_m, truth.y_m);
            [lat, lon, alt]
        });
        let cycle = self.config.sip_cycle_ms.min(65535) as u16;
        SimStat {
            sim_interval_ms: cycle,
            real_interval_ms: cycle,
            last_interval_ms,
            true_pose: [truth.x_m, truth.y_m, truth.theta_rad],
            geo,
            odom_error: self.inputs.odom_error,
            have_map: true,
        }
    }

    fn on_event(&mut self, event: LinkEvent) {
        match event {
            LinkEvent::Connected => {
                // A new session: at rest, motors off, sonar on (ARIA
                // assumes it), nothing extra requested.
                self.connected = true;
                self.open = false;
                self.sonar_on = true;
                self.motion = motion_of(&self.config);
                self.simstat = SimStatMode::Off;
                self.laser_view = LaserView::default();
                self.battery_test_volts = None;
            }
            LinkEvent::Disconnected => {
                // A robot without a client stands (its motors off).
                self.open = false;
                self.connected = false;
                self.motion.enable(false);
            }
            LinkEvent::Watchdog => self.motion.stop(),
            LinkEvent::Command(command) => self.on_command(command),
        }
    }

    fn on_command(&mut self, command: Command) {
        let pose = self.odometric();
        match command {
            Command::Pulse => {}
            Command::Open => self.open = true,
            Command::Close => {
                self.open = false;
                self.motion.enable(false);
            }
            Command::Enable(on) => self.motion.enable(on),
            Command::SetAccel(a) if a < 0 => self.motion.limits.trans_decel = f64::from(-a),
            Command::SetAccel(a) => self.motion.limits.trans_accel = f64::from(a),
            Command::SetVelMax(v) => {
                self.motion.limits.trans_vel_max = f64::from(v.abs()).min(self.config.trans_vel_top)
            }
            Command::SetRotVelMax(v) => {
                self.motion.limits.rot_vel_max = f64::from(v.abs()).min(self.config.rot_vel_top)
            }
            Command::SetRotAccel(a) if a < 0 => self.motion.limits.rot_decel = f64::from(-a),
            Command::SetRotAccel(a) => self.motion.limits.rot_accel = f64::from(a),
            Command::LatAccel(a) if a < 0 => self.motion.limits.lat_decel = f64::from(-a),
            Command::LatAccel(a) => self.motion.limits.lat_accel = f64::from(a),
            Command::SetOdometry(at) => {
                // The client's pose becomes `at` (0, 0, 0 by default) here.
                let hold = at.map_or(Pose2::default(), |(x, y, th)| {
                    Pose2::new(
                        f64::from(x) * self.config.dist_conv / 1000.0,
                        f64::from(y) * self.config.dist_conv / 1000.0,
                        f64::from(th) * self.config.angle_conv,
                    )
                });
                self.hold_client_pose(hold);
            }
            Command::Move(mm) => self.motion.move_by(f64::from(mm), pose),
            Command::Vel(v) => self.motion.velocity(f64::from(v)),
            Command::RotVel(w) => self.motion.rotational_velocity(f64::from(w)),
            Command::LatVel(v) => self.motion.lateral_velocity(f64::from(v)),
            Command::Vel2 { left, right } => {
                let (l, r) = (f64::from(left) * self.config.vel2_div, f64::from(right) * self.config.vel2_div);
                self.motion.velocity((l + r) / 2.0);
                self.motion.rotational_velocity(((r - l) / 2.0 * self.config.diff_conv).to_degrees());
            }
            Command::Head(deg) => self.motion.head(f64::from(deg)),
            Command::DeltaHead(deg) => self.motion.delta_head(f64::from(deg), pose),
            Command::Stop => self.motion.stop(),
            Command::EmergencyStop => self.motion.emergency_stop(),
            Command::Config => {
                let (front, rear) = self.inputs.sonar_front_rear;
                self.link.send(replies::config_packet(&self.config, &self.motion.limits, front, rear));
            }
            Command::Sonar(on) => self.sonar_on = on,
            Command::BatteryTest(decivolts) => {
                self.battery_test_volts = (decivolts != 0).then(|| f64::from(decivolts) / 10.0);
            }
            Command::BumpStall(_) => {}
            Command::Log(text) => tracing::info!("{}: {text}", self.model),
            Command::SimMessage(text) => tracing::info!("{}: message from the client: {text}", self.model),
            Command::SimSetPose { x, y, th } => {
                let pose = Pose2::new(f64::from(x) / 1000.0, f64::from(y) / 1000.0, f64::from(th).to_radians());
                let hold = self.client_pose();
                self.teleport(pose, hold);
            }
            Command::SimReset => {
                let start = self.start_pose;
                self.teleport(start, Pose2::default());
            }
            Command::SimLaserEnable(mode) => {
                self.laser_view.mode = mode.clamp(0, 2);
                if self.inputs.laser.is_none() && mode != 0 {
                    tracing::warn!("{}: SIM_LRF_ENABLE, but the robot has no laser", self.model);
                }
            }
            Command::SimLaserFovStart(deg) => self.laser_view.start_deg = Some(f64::from(deg)),
            Command::SimLaserFovEnd(deg) => self.laser_view.end_deg = Some(f64::from(deg)),
            Command::SimLaserResolution(deg) => self.laser_view.resolution_deg = (deg > 0).then_some(f64::from(deg)),
            Command::SimStat(mode) => {
                self.simstat = match mode {
                    Some(0) => SimStatMode::Off,
                    Some(2) => SimStatMode::EverySip,
                    _ => SimStatMode::Once,
                }
            }
            Command::SimCtrl { op: 6, .. } => {
                let mut devices = Vec::new();
                if !self.inputs.sonar.is_empty() {
                    devices.push(("sonar".to_string(), "sonar", 0));
                }
                if self.inputs.laser.is_some() {
                    devices.push(("laser_1".to_string(), "laser", 1));
                }
                self.link.send(replies::siminfo(&devices));
            }
            Command::SimCtrl { op, .. } => self.unsupported_command(crate::command::number::SIM_CTRL, Some(op)),
            Command::SimExit(code) => self.sim_exit(code),
            Command::Unsupported(number) => self.unsupported_command(number, None),
        }
    }

    /// The odometry (or true) pose before the SETO origin.
    fn client_pose_raw(&self) -> Pose2 {
        match (self.odometry, self.true_pose) {
            (Some(o), _) => {
                let [x, y, th] = o.pose_at(self.now_ns);
                Pose2::new(x, y, th)
            }
            (None, Some(t)) => t,
            (None, None) => Pose2::default(),
        }
    }

    /// Moves the SETO origin so that the client reads `hold` now.
    fn hold_client_pose(&mut self, hold: Pose2) {
        self.origin = self.client_pose_raw().compose(&hold.inverse());
    }

    /// Moves the robot's body to `pose` in the world (SIM_SET_POSE,
    /// SIM_RESET); once the odometry has followed, the client reads `hold`.
    fn teleport(&mut self, pose: Pose2, hold: Pose2) {
        self.moved = true;
        self.motion.stop();
        self.rezero = Some(Rezero::AwaitMove { target: pose, hold });
        let Some(world) = self.world.clone() else { return };
        // The world's `move` puts the model's first body at the pose and the
        // others rigidly with it (Flatland's MoveModel): ask for the first
        // body's pose that puts this robot's body at `pose`.
        let first = match (self.true_pose, self.first_true_pose) {
            (Some(body), Some(first)) if self.first_body != self.body => pose.compose(&body.inverse().compose(&first)),
            _ => pose,
        };
        let request = ControlRequest::Move { name: self.model.clone(), pose: first };
        let model = self.model.clone();
        tokio::spawn(async move {
            if let Err(e) = call_control(&world.session, &world.keys, verbs::MOVE, &request, CONTROL_TIMEOUT).await {
                tracing::warn!("{model}: moving the robot failed: {e}");
            }
        });
    }

    fn sim_exit(&mut self, code: i32) {
        if !self.allow_exit {
            tracing::warn!("{}: SIM_EXIT {code} refused (start flotilla-pioneer with --allow-exit)", self.model);
            return;
        }
        tracing::warn!("{}: SIM_EXIT {code}: pausing the simulation and exiting", self.model);
        let Some(world) = self.world.clone() else { std::process::exit(code) };
        tokio::spawn(async move {
            let _ =
                call_control(&world.session, &world.keys, verbs::PAUSE, &ControlRequest::Pause, CONTROL_TIMEOUT).await;
            std::process::exit(code);
        });
    }

    /// Ignored, with a log line at the first time and at powers of two.
    fn unsupported_command(&mut self, number: u8, op: Option<u16>) {
        let count = self.unsupported.entry(number).or_default();
        *count += 1;
        if count.is_power_of_two() {
            let what = op.map_or(String::new(), |op| format!(" operation {op}"));
            tracing::warn!("{}: ignoring unsupported command {number}{what} ({count} so far)", self.model);
        }
    }
}

impl Drop for Robot {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

/// A robot's motion at rest, with its model's limits: ESTOP decelerates at
/// the tops.
fn motion_of(config: &PioneerConfig) -> Motion {
    Motion::new(Limits::of(config), [config.trans_acc_top, config.rot_acc_top, config.lat_acc_top])
}

/// The readings of `scan` that the client's view selects, as (range m,
/// reflectance), from the start angle to the end angle (degrees from the
/// front) at the resolution asked; beyond range reads as the maximum.
fn select_readings(scan: &LaserScan, view: &LaserView) -> Vec<(f64, u8)> {
    let n = scan.ranges.len();
    if n == 0 || scan.angle_increment == 0.0 {
        return Vec::new();
    }
    let (min, inc) = (f64::from(scan.angle_min), f64::from(scan.angle_increment));
    let max = min + inc * (n - 1) as f64;
    let start = view.start_deg.map_or(min, f64::to_radians).clamp(min.min(max), min.max(max));
    let end = view.end_deg.map_or(max, f64::to_radians).clamp(min.min(max), min.max(max));
    let step = view.resolution_deg.map_or(inc.abs(), f64::to_radians).max(inc.abs());
    let count = (((end - start).abs() / step).floor() as usize + 1).min(n);
    let direction = if end >= start { 1.0 } else { -1.0 };
    (0..count)
        .map(|k| {
            let angle = start + direction * step * k as f64;
            let i = (((angle - min) / inc).round().max(0.0) as usize).min(n - 1);
            let range = scan.ranges[i];
            let range = if range.is_finite() { f64::from(range) } else { f64::from(scan.range_max) };
            let reflectance = scan.intensities.get(i).map_or(0, |v| v.round().clamp(0.0, 255.0) as u8);
            (range, reflectance)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 181-beam scan from −90° to 90°, beam i reading i cm (beam 10: no hit).
    fn scan() -> LaserScan {
        let mut ranges: Vec<f32> = (0..181).map(|i| i as f32 / 100.0).collect();
        ranges[10] = f32::NAN;
        LaserScan {
            angle_min: -std::f32::consts::FRAC_PI_2,
            angle_max: std::f32::consts::FRAC_PI_2,
            angle_increment: 1f32.to_radians(),
            range_max: 32.0,
            ranges,
            intensities: vec![40.0; 181],
            ..LaserScan::default()
        }
    }

    #[test]
    fn the_whole_scan_unless_the_client_narrows_it() {
        let all = LaserView { mode: 1, start_deg: None, end_deg: None, resolution_deg: None };
        let readings = select_readings(&scan(), &all);
        assert_eq!(readings.len(), 181);
        assert!((readings[90].0 - 0.9).abs() < 1e-6);
        assert_eq!(readings[10], (32.0, 40), "no hit reads the maximum range");
        let narrow = LaserView { mode: 1, start_deg: Some(-45.0), end_deg: Some(45.0), resolution_deg: Some(5.0) };
        let readings = select_readings(&scan(), &narrow);
        assert_eq!(readings.len(), 19, "−45° to 45° every 5°");
        assert!((readings[0].0 - 0.45).abs() < 1e-6 && (readings[18].0 - 1.35).abs() < 1e-6);
    }
}
