//! Following a running simulation for the page: its description (a new
//! scene at every revision), every n-th world state (about 30 a sim second,
//! through the world's thinned stream, decoded only when a frame is due),
//! its status, and — while a page asks for them — its lasers' scans and
//! sonar ranges. Frames go out at most [`FRAME_PERIOD`] apart, to every
//! page at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use flotilla_messages::sensor_msgs::{BatteryState, LaserScan, Range};
use flotilla_node_kit::follow_world::DescriptionFollower;
use flotilla_wire::codec::decode;
use flotilla_wire::description::WorldDescription;
use flotilla_wire::world_to_nodes::{WorldState, WorldStatus};
use flotilla_wire::Keys;
use serde_json::json;
use tokio::sync::{broadcast, watch, Notify};

use crate::frame::{encode, Readings};
use crate::scene::{scene, spawnable_models, Scene};

/// The shortest wall time between two frames: 30 frames a second at most.
pub const FRAME_PERIOD: Duration = Duration::from_millis(33);

/// Sim time between two world states the view takes, ns: as many as it
/// draws in realtime.
const STATE_PERIOD_NS: u64 = 33_000_000;

/// What the pages share.
pub struct Live {
    /// The latest scene.
    pub scene: watch::Receiver<Arc<Scene>>,
    /// The latest status, as the page's JSON.
    pub status: watch::Receiver<Arc<String>>,
    /// Frames as they are made.
    pub frames: broadcast::Sender<Bytes>,
    /// How many pages want sensor readings.
    pub readings_wanted: Arc<AtomicUsize>,
    /// Told when `readings_wanted` changes.
    pub readings_changed: Arc<Notify>,
}

/// The latest of everything, as the subscribers leave it.
#[derive(Default)]
struct Latest {
    /// The latest world state's bytes, not yet decoded.
    state: Option<Vec<u8>>,
    /// Whether `state` or a reading is newer than the last frame.
    fresh: bool,
    /// Per laser, its latest ranges.
    scans: Vec<Option<Vec<f32>>>,
    /// Per ring, per transducer, its latest range.
    sonar: Vec<Vec<Option<f32>>>,
    /// Per battery, its latest charge (fraction).
    batteries: Vec<Option<f32>>,
}

fn lock(latest: &Mutex<Latest>) -> std::sync::MutexGuard<'_, Latest> {
    latest.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts following the simulation on `session`: returns once the world has
/// answered, the following going on in spawned tasks for as long as the
/// runtime runs.
pub async fn follow(session: zenoh::Session, keys: Keys) -> anyhow::Result<Arc<Live>> {
    let (mut world, description) = DescriptionFollower::start(&session, &keys).await?;
    let mut spawnable = Spawnable::default();
    let (scene_tx, scene_rx) = watch::channel(Arc::new(build_scene(&description, &mut spawnable)));
    let (status_tx, status_rx) = watch::channel(Arc::new(String::from("{\"type\":\"status\"}")));
    let (frames, _) = broadcast::channel(4);
    let live = Arc::new(Live {
        scene: scene_rx,
        status: status_rx,
        frames: frames.clone(),
        readings_wanted: Arc::new(AtomicUsize::new(0)),
        readings_changed: Arc::new(Notify::new()),
    });
    let latest = Arc::new(Mutex::new(Latest::default()));

    let node = flotilla_node_kit::node_id("view");
    let stride = (STATE_PERIOD_NS / description.step_ns.max(1)).max(1);
    let state_key = if stride > 1 { keys.world_state_every(stride) } else { keys.world_state() };
    let token = session
        .liveliness()
        .declare_token(keys.state_interest(stride, &node))
        .await
        .map_err(|e| anyhow::anyhow!("cannot ask for every {stride}th state: {e}"))?;
    let into = latest.clone();
    let states = session
        .declare_subscriber(state_key)
        .callback(move |sample| {
            let mut l = lock(&into);
            l.state = Some(sample.payload().to_bytes().into_owned());
            l.fresh = true;
        })
        .await
        .map_err(|e| anyhow::anyhow!("cannot subscribe to the world's states: {e}"))?;
    let status = session
        .declare_subscriber(keys.status())
        .callback(move |sample| {
            if let Ok(s) = decode::<WorldStatus>(&sample.payload().to_bytes()) {
                let _ = status_tx.send(Arc::new(status_json(&s)));
            }
        })
        .await
        .map_err(|e| anyhow::anyhow!("cannot subscribe to the world's status: {e}"))?;

    // The description and the sensors: rebuilt on every world event and
    // whenever pages start or stop wanting readings.
    let follower = live.clone();
    let latest_for_sensors = latest.clone();
    tokio::spawn(async move {
        let _keep = (token, states, status);
        let mut sensors = Sensors::default();
        let mut scene = scene_tx.borrow().clone();
        loop {
            let wanted = follower.readings_wanted.load(Ordering::Relaxed) > 0;
            sensors.follow(&session, &keys, &scene, wanted, &latest_for_sensors).await;
            tokio::select! {
                description = world.changed() => {
                    scene = Arc::new(build_scene(&description, &mut spawnable));
                    let _ = scene_tx.send(scene.clone());
                }
                _ = follower.readings_changed.notified() => {}
            }
        }
    });

    tokio::spawn(send_frames(latest, frames));
    Ok(live)
}

/// Sends the pages a frame of the latest state and readings, at most every
/// [`FRAME_PERIOD`] and only when something changed, while any page listens.
async fn send_frames(latest: Arc<Mutex<Latest>>, frames: broadcast::Sender<Bytes>) {
    let mut ticker = tokio::time::interval(FRAME_PERIOD);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut buffer = Vec::new();
    loop {
        ticker.tick().await;
        if frames.receiver_count() == 0 {
            continue;
        }
        let (bytes, readings) = {
            let mut l = lock(&latest);
            if !std::mem::take(&mut l.fresh) {
                continue;
            }
            (l.state.clone(), readings_of(&l))
        };
        let Some(state) = bytes.and_then(|b| decode::<WorldState>(&b).ok()) else { continue };
        encode(&state, &readings, &mut buffer);
        let _ = frames.send(Bytes::copy_from_slice(&buffer));
    }
}

fn build_scene(description: &WorldDescription, spawnable: &mut Spawnable) -> Scene {
    scene(description, spawnable.of(&description.world_path))
}

/// The model files offered for spawning, read once per world file (not at
/// every spawn, delete or move).
#[derive(Default)]
struct Spawnable {
    world_path: Option<String>,
    models: Vec<String>,
}

impl Spawnable {
    fn of(&mut self, world_path: &str) -> &[String] {
        if self.world_path.as_deref() != Some(world_path) {
            self.models = spawnable_models(std::path::Path::new(world_path));
            self.world_path = Some(world_path.to_string());
        }
        &self.models
    }
}

fn readings_of(latest: &Latest) -> Readings {
    let scans = latest
        .scans
        .iter()
        .enumerate()
        .filter_map(|(i, ranges)| ranges.as_ref().map(|r| (i as u32, r.clone())))
        .collect();
    let sonar = latest
        .sonar
        .iter()
        .enumerate()
        .flat_map(|(ring, ranges)| {
            ranges.iter().enumerate().filter_map(move |(t, r)| r.map(|r| (ring as u32, t as u32, r)))
        })
        .collect();
    let batteries =
        latest.batteries.iter().enumerate().filter_map(|(i, charge)| charge.map(|c| (i as u32, c))).collect();
    Readings { scans, sonar, batteries }
}

/// The page's status message.
fn status_json(s: &WorldStatus) -> String {
    json!({
        "type": "status",
        "time": s.time.as_secs_f64(),
        "step": s.step,
        "rtf": s.real_time_factor,
        "paused": s.paused,
        "clock": s.clock.name(),
        "models": s.models,
        "robots": s.robots,
        "nodes": s.nodes,
        "participants": s.lockstep_participants,
        "endpoint": s.endpoint,
        "unclaimed": s.unclaimed,
        "unclaimed_count": s.unclaimed_count,
    })
    .to_string()
}

/// The subscriptions to the sensors' topics: lasers and sonar while pages
/// want readings, batteries always (they are drawn with the names).
#[derive(Default)]
struct Sensors {
    /// The scene they were made for (its revision), and whether pages
    /// wanted readings then.
    made_for: Option<(u64, bool)>,
    subscribers: Vec<zenoh::pubsub::Subscriber<()>>,
}

impl Sensors {
    async fn follow(
        &mut self,
        session: &zenoh::Session,
        keys: &Keys,
        scene: &Scene,
        wanted: bool,
        latest: &Arc<Mutex<Latest>>,
    ) {
        let target = Some((scene.revision, wanted));
        if target == self.made_for {
            return;
        }
        self.subscribers.clear();
        {
            let mut l = lock(latest);
            l.scans = vec![None; scene.lasers.len()];
            l.sonar = scene.sonars.iter().map(|s| vec![None; s.transducers]).collect();
            l.batteries = vec![None; scene.batteries.len()];
        }
        self.made_for = target;
        self.follow_batteries(session, keys, scene, latest).await;
        if !wanted {
            return;
        }
        for (i, laser) in scene.lasers.iter().enumerate() {
            let into = latest.clone();
            let subscribed = session
                .declare_subscriber(keys.ros(&laser.topic))
                .callback(move |sample| {
                    if let Ok(scan) = flotilla_messages::decode::<LaserScan>(&sample.payload().to_bytes()) {
                        let mut l = lock(&into);
                        if let Some(slot) = l.scans.get_mut(i) {
                            *slot = Some(scan.ranges);
                            l.fresh = true;
                        }
                    }
                })
                .await;
            match subscribed {
                Ok(s) => self.subscribers.push(s),
                Err(e) => tracing::warn!("cannot subscribe to {}: {e}", laser.topic),
            }
        }
        // One subscriber a ring: its transducers' topics share a folder.
        for (ring, sonar) in scene.sonars.iter().enumerate() {
            let into = latest.clone();
            let folder = format!("{}/*", keys.ros(&sonar.folder));
            let subscribed = session
                .declare_subscriber(folder.clone())
                .callback(move |sample| {
                    let key = sample.key_expr().as_str();
                    let Some(t) = key.rsplit('/').next().and_then(|i| i.parse::<usize>().ok()) else { return };
                    if let Ok(range) = flotilla_messages::decode::<Range>(&sample.payload().to_bytes()) {
                        let mut l = lock(&into);
                        if let Some(slot) = l.sonar.get_mut(ring).and_then(|r| r.get_mut(t)) {
                            *slot = Some(range.range);
                            l.fresh = true;
                        }
                    }
                })
                .await;
            match subscribed {
                Ok(s) => self.subscribers.push(s),
                Err(e) => tracing::warn!("cannot subscribe to {folder}: {e}"),
            }
        }
    }

    /// Subscribes to every battery's state.
    async fn follow_batteries(
        &mut self,
        session: &zenoh::Session,
        keys: &Keys,
        scene: &Scene,
        latest: &Arc<Mutex<Latest>>,
    ) {
        for (i, battery) in scene.batteries.iter().enumerate() {
            let into = latest.clone();
            let subscribed = session
                .declare_subscriber(keys.ros(&battery.topic))
                .callback(move |sample| {
                    if let Ok(state) = flotilla_messages::decode::<BatteryState>(&sample.payload().to_bytes()) {
                        let mut l = lock(&into);
                        if let Some(slot) = l.batteries.get_mut(i) {
                            *slot = Some(state.percentage);
                            l.fresh = true;
                        }
                    }
                })
                .await;
            match subscribed {
                Ok(s) => self.subscribers.push(s),
                Err(e) => tracing::warn!("cannot subscribe to {}: {e}", battery.topic),
            }
        }
    }
}
