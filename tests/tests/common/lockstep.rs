//! A scripted lockstep run, for the determinism tests: a world started
//! paused, the nodes of a process layout, a recorder of chosen topics and a
//! controller that takes part in the barrier; every state's bodies and
//! every recorded message are kept, to be compared with another run's.
//! Optionally a standby world follows the world, which is killed at a
//! chosen step.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_node_kit::lockstep::LockstepReporter;
use flotilla_wire::codec::decode;
use flotilla_wire::control::ControlRequest;
use flotilla_wire::description::WorldDescription;
use flotilla_wire::world_to_nodes::WorldState;
use flotilla_wire::Keys;

/// Every message received, per key, in arrival order (one publisher per
/// key), and `world/bodies`: every state's bodies, as text.
pub type Streams = BTreeMap<String, Vec<Vec<u8>>>;

/// What the controller does at each world state.
pub trait Script {
    /// The messages to publish (ROS key, payload) at `state`, before the
    /// report: a node takes them at the state after.
    fn at(&mut self, state: &WorldState) -> Vec<(String, Vec<u8>)>;

    /// The step to report done after `state`; `None` when an earlier report
    /// covered it.
    fn report(&self, state: &WorldState) -> Option<u64> {
        Some(state.step)
    }
}

/// One run: a world file, its process layout (each a binary and its
/// arguments), the topics recorded (key expressions) and the world's extra
/// arguments, for `steps` steps.
pub struct Run<'a> {
    pub label: &'a str,
    pub world: &'a str,
    pub layout: &'a [&'a [&'a str]],
    pub record: &'a [&'a str],
    pub world_args: &'a [&'a str],
    pub steps: u64,
    /// A standby world beside the world (`flotilla-world --standby`), as
    /// `flotilla run --standby-world` starts one.
    pub standby: Option<StandbyWorld>,
}

/// A standby world, and when the world it follows is killed.
#[derive(Debug, Clone, Copy)]
pub struct StandbyWorld {
    /// Kill the world (SIGKILL) when the controller receives this state,
    /// before it answers it, once the run has gone for
    /// [`FOLLOWED_FOR`] (so that the standby has a checkpoint of it).
    pub kill_world_at: Option<u64>,
}

/// How long a run goes before its world may be killed: the standby
/// fetches a checkpoint every second.
pub const FOLLOWED_FOR: Duration = Duration::from_secs(3);

/// What a run leaves: the streams, the world's log and its description at
/// the end (the maps models are on).
pub struct Outcome {
    pub streams: Streams,
    pub world_log: String,
    pub description: WorldDescription,
    /// The standby world's log, and the step at which the world was
    /// killed.
    pub standby_log: String,
    pub killed_at: Option<u64>,
}

impl Run<'_> {
    /// Runs `script` from step 0 to `steps`.
    pub async fn go(&self, script: &mut dyn Script) -> Outcome {
        let sim = super::unique_sim(self.label);
        let endpoint = format!("tcp/127.0.0.1:{}", super::free_port());
        let logs = super::log_dir(&sim);
        let standby_endpoint = format!("tcp/127.0.0.1:{}", super::free_port());
        let mut args = vec![self.world, "--sim", &sim, "--listen", &endpoint, "--start-paused"];
        args.extend_from_slice(self.world_args);
        if self.standby.is_some() {
            args.extend(["--connect", &standby_endpoint]);
        }
        let mut children =
            super::Processes(vec![super::spawn(&super::bin("flotilla-world"), &args, &logs.join("world.log"))]);
        // Every program connects to both worlds, as a peer, as `flotilla
        // run` has it.
        let (session, connect) = match self.standby {
            Some(_) => (
                super::connect_all(&[&endpoint, &standby_endpoint]).await,
                [endpoint.as_str(), &standby_endpoint].join(","),
            ),
            None => (super::connect(&endpoint).await, endpoint.clone()),
        };
        let keys = Keys::new(&sim);
        let wait = Duration::from_secs(30);
        flotilla_node_kit::client::wait_for_description(&session, &keys, wait).await.unwrap();
        if self.standby.is_some() {
            let mut args = vec![self.world, "--sim", &sim, "--listen", &standby_endpoint, "--standby"];
            args.extend(["--connect", &endpoint]);
            args.extend_from_slice(self.world_args);
            children.0.push(super::spawn(&super::bin("flotilla-world"), &args, &logs.join("standby.log")));
            let deadline = Instant::now() + wait;
            while !read(&logs.join("standby.log")).contains("standing by for the running world") {
                assert!(Instant::now() < deadline, "no standby world; logs in {}", logs.display());
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }

        let streams = Arc::new(Mutex::new(Streams::new()));
        let mut recorders = Vec::new();
        for key in self.record {
            let streams = streams.clone();
            let record = move |s: zenoh::sample::Sample| {
                let mut m = streams.lock().unwrap();
                m.entry(s.key_expr().to_string()).or_default().push(s.payload().to_bytes().into_owned());
            };
            recorders.push(session.declare_subscriber(*key).callback(record).await.unwrap());
        }

        // Nodes start only now, so the recorder cannot miss their first outputs.
        for (i, node) in self.layout.iter().enumerate() {
            let mut args = vec!["--sim", sim.as_str(), "--connect", connect.as_str()];
            if self.standby.is_some() {
                args.extend(["--mode", "peer", "--listen", "tcp/127.0.0.1:0"]);
            }
            args.extend_from_slice(&node[1..]);
            let log = logs.join(format!("{i}-{}.log", node[0]));
            children.0.push(super::spawn(&super::bin(node[0]), &args, &log));
        }

        // The controller takes part in the barrier like any external
        // program: a client of the world, as `flotilla run --exec` starts
        // one, so that its commands go the way its report goes.
        let controller = match self.standby {
            Some(_) => super::connect_client(&[&endpoint, &standby_endpoint]).await,
            None => session.clone(),
        };
        let reporter = LockstepReporter::join(&controller, &keys, "controller").await.unwrap();
        let (tx, mut states) = tokio::sync::mpsc::unbounded_channel();
        let _state_sub = controller
            .declare_subscriber(keys.world_state())
            .callback(move |s| {
                let _ = tx.send(decode::<WorldState>(&s.payload().to_bytes()).unwrap());
            })
            .await
            .unwrap();

        // Step once every participant is in.
        super::wait_for_participants(&session, &keys, self.layout.len() + 1, &logs).await;
        let resume = flotilla_node_kit::client::call_control(&session, &keys, "resume", &ControlRequest::Resume, wait);
        resume.await.unwrap();
        let resumed = Instant::now();
        let mut killed_at = None;

        let mut last = None;
        loop {
            let state = tokio::time::timeout(wait, states.recv())
                .await
                .unwrap_or_else(|_| panic!("the world stalled after step {last:?}; logs in {}", logs.display()))
                .unwrap();
            if last == Some(state.step) {
                continue;
            }
            last = Some(state.step);
            let bodies = format!("{:?}", state.bodies).into_bytes();
            streams.lock().unwrap().entry("world/bodies".into()).or_default().push(bodies);
            if state.step >= self.steps {
                break; // no report: the world waits here
            }
            let kill_at = self.standby.and_then(|s| s.kill_world_at);
            if kill_at.is_some_and(|k| state.step >= k) && killed_at.is_none() && resumed.elapsed() >= FOLLOWED_FOR {
                children.0[0].kill().unwrap();
                children.0[0].wait().unwrap();
                killed_at = Some(state.step);
                eprintln!("{}: world killed at step {}", self.label, state.step);
                // An answer now would go nowhere: the controller's session
                // has lost its router. It answers the state when the
                // standby, which it connects to next, publishes it again.
                last = None;
                continue;
            }
            // Express, as the report after them (and as a node's outputs
            // that someone waits on): sent at once rather than when the
            // batch fills. (Order does not depend on it: on one link, Zenoh
            // puts an express message into the current batch and sends
            // that batch, so the messages before it still go first.)
            for (key, payload) in script.at(&state) {
                controller.put(key, payload).congestion_control(super::LOSSLESS).express(true).await.unwrap();
            }
            if let Some(step) = script.report(&state) {
                reporter.done(step, true).await;
            }
        }
        // Outputs for every step up to `steps` are published before their
        // nodes report; give the last ones time to arrive.
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let description = flotilla_node_kit::client::wait_for_description(&session, &keys, wait).await.unwrap();
        drop(children);
        let streams = streams.lock().unwrap().clone();
        Outcome {
            streams,
            world_log: read(&logs.join("world.log")),
            description,
            standby_log: read(&logs.join("standby.log")),
            killed_at,
        }
    }
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Panics at the first message that differs between two runs.
pub fn assert_same(a: &Streams, b: &Streams, what: &str) {
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (key, stream) in a {
        let other = &b[key];
        assert_eq!(stream.len(), other.len(), "{key}: message count");
        if let Some(i) = stream.iter().zip(other).position(|(x, y)| x != y) {
            panic!("{key}: message {i} differs between {what}");
        }
    }
}
