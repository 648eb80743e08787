//! The Zenoh key space (ARCHITECTURE.md, "Rules every process follows"), built in one place.
//!
//! Internal keys start with `flotilla/<sim>/`. ROS-facing keys are the ROS 2
//! names without their leading slash, optionally behind a prefix, so that the
//! bridge maps `/robot1/scan` ↔ `robot1/scan` ↔ DDS `rt/robot1/scan`.

/// The default simulation id.
pub const DEFAULT_SIM: &str = "default";

/// Checks that a simulation id, node id or prefix is usable inside a key
/// expression: non-empty ASCII letters, digits, `_`, `-` and `.`.
pub fn check_key_chunk(what: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err(format!("{what} must not be empty"));
    }
    if let Some(c) = value.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        return Err(format!("{what} {value:?} contains {c:?}; use letters, digits, '_', '-' or '.'"));
    }
    Ok(())
}

/// Key builder for one simulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    root: String,
    ros_prefix: String,
}

impl Keys {
    /// Keys of simulation `sim`, with no ROS prefix.
    pub fn new(sim: &str) -> Keys {
        Keys { root: format!("flotilla/{sim}"), ros_prefix: String::new() }
    }

    /// The same keys with every ROS-facing key behind `prefix` (no slashes
    /// needed; `""` means none).
    pub fn with_ros_prefix(mut self, prefix: &str) -> Keys {
        self.ros_prefix = prefix.trim_matches('/').to_string();
        self
    }

    /// `flotilla/<sim>/world/description` — queryable, the world description.
    pub fn world_description(&self) -> String {
        format!("{}/world/description", self.root)
    }
    /// `flotilla/<sim>/world/checkpoint` — queryable, a checkpoint of the
    /// running world (`flotilla checkpoint save`).
    pub fn world_checkpoint(&self) -> String {
        format!("{}/world/checkpoint", self.root)
    }
    /// `flotilla/<sim>/world/memory/<key>` — what a node asks the world
    /// to keep for it (a lift's floor, a battery's charge), to take up
    /// again when it restarts; queryable on `…/memory/**`.
    pub fn world_memory(&self, key: &str) -> String {
        format!("{}/world/memory/{key}", self.root)
    }
    /// `flotilla/<sim>/world/memory/**` — every kept value.
    pub fn world_memory_all(&self) -> String {
        format!("{}/world/memory/**", self.root)
    }
    /// `flotilla/<sim>/world/events` — spawned, deleted, moved, reset.
    pub fn world_events(&self) -> String {
        format!("{}/world/events", self.root)
    }
    /// `flotilla/<sim>/world/map_requests` — `ControlRequest::SetMap`s
    /// sent as messages (the map-transition manager's), applied before the
    /// next step: sent before a lockstep report, one is applied at the same
    /// step in every run.
    pub fn world_map_requests(&self) -> String {
        format!("{}/world/map_requests", self.root)
    }
    /// `flotilla/<sim>/world/state` — one batched state per step.
    pub fn world_state(&self) -> String {
        format!("{}/world/state", self.root)
    }
    /// `flotilla/<sim>/world/standby_state` — every state again (the same
    /// bytes as on `world/state`, sent just before them) for standby
    /// worlds, droppable: a standby that falls behind loses states here
    /// instead of holding up the world (it needs only the last one; see
    /// `flotilla_world::standby`).
    pub fn world_standby_state(&self) -> String {
        format!("{}/world/standby_state", self.root)
    }
    /// `flotilla/<sim>/world/state_every/<n>` — the state of every step
    /// that is a multiple of `n` (the same bytes as on `world/state`),
    /// published while some node wants it (see [`Keys::state_interest`]):
    /// a node whose outputs are all due every `n` steps subscribes here
    /// instead of receiving every state.
    pub fn world_state_every(&self, n: u64) -> String {
        format!("{}/world/state_every/{n}", self.root)
    }
    /// `flotilla/<sim>/state_interest/<n>/<node>` — liveliness token of a
    /// node that wants `world/state_every/<n>`.
    pub fn state_interest(&self, n: u64, node: &str) -> String {
        format!("{}/state_interest/{n}/{node}", self.root)
    }
    /// `flotilla/<sim>/state_interest/*/*` — every such token.
    pub fn state_interests(&self) -> String {
        format!("{}/state_interest/*/*", self.root)
    }
    /// The stride of a [`Keys::state_interest`] token's key.
    pub fn stride_of_interest(&self, key: &str) -> Option<u64> {
        let rest = key.strip_prefix(&self.root)?.strip_prefix("/state_interest/")?;
        rest.split('/').next()?.parse().ok().filter(|&n| n > 0)
    }
    /// `flotilla/<sim>/world/contacts` — the contacts of the bodies that
    /// contact plugins watch, one message per step just before the state;
    /// published only while the world has such bodies.
    pub fn world_contacts(&self) -> String {
        format!("{}/world/contacts", self.root)
    }
    /// `flotilla/<sim>/actuation/<node>` — one drive node's commands.
    pub fn actuation(&self, node: &str) -> String {
        format!("{}/actuation/{node}", self.root)
    }
    /// `flotilla/<sim>/actuation/*` — every drive node's commands.
    pub fn actuation_all(&self) -> String {
        format!("{}/actuation/*", self.root)
    }
    /// `flotilla/<sim>/control/<verb>` — a control service.
    pub fn control(&self, verb: &str) -> String {
        format!("{}/control/{verb}", self.root)
    }
    /// `flotilla/<sim>/nodes/<node>` — a node's liveliness token.
    pub fn node_token(&self, node: &str) -> String {
        format!("{}/nodes/{node}", self.root)
    }
    /// `flotilla/<sim>/nodes/*` — every node's liveliness token.
    pub fn node_tokens(&self) -> String {
        format!("{}/nodes/*", self.root)
    }
    /// `flotilla/<sim>/nodes/world-$*` — the world's liveliness token.
    pub fn world_tokens(&self) -> String {
        format!("{}/nodes/world-$*", self.root)
    }
    /// `flotilla/<sim>/witnesses/<node>` — node `node` tells there, every
    /// so often, which worlds it sees (see `flotilla_node_kit::witness`).
    pub fn witness(&self, node: &str) -> String {
        format!("{}/witnesses/{node}", self.root)
    }
    /// `flotilla/<sim>/witnesses/*` — every node's witness.
    pub fn witnesses(&self) -> String {
        format!("{}/witnesses/*", self.root)
    }
    /// The node id of a witness's word of this simulation.
    pub fn parse_witness<'k>(&self, key: &'k str) -> Option<&'k str> {
        self.chunk_under(key, "witnesses")
    }
    /// `flotilla/<sim>/beacons/<world>` — a running world says there, every
    /// so often, which Zenoh session it is (see
    /// `flotilla_node_kit::witness`).
    pub fn world_beacon(&self, world: &str) -> String {
        format!("{}/beacons/{world}", self.root)
    }
    /// `flotilla/<sim>/beacons/*` — every running world's beacon.
    pub fn world_beacons(&self) -> String {
        format!("{}/beacons/*", self.root)
    }
    /// The world id of a beacon of this simulation.
    pub fn parse_world_beacon<'k>(&self, key: &'k str) -> Option<&'k str> {
        self.chunk_under(key, "beacons")
    }
    /// `flotilla/<sim>/standby/<world>` — the liveliness token of a
    /// standby world, `world` its own id (not the one it stands by for).
    pub fn standby_token(&self, world: &str) -> String {
        format!("{}/standby/{world}", self.root)
    }
    /// `flotilla/<sim>/standby/*` — every standby world's token.
    pub fn standby_tokens(&self) -> String {
        format!("{}/standby/*", self.root)
    }
    /// `flotilla/<sim>/following/<world>` — the liveliness token of a
    /// standby world while it follows a running world (`world` its own
    /// id): a world that starts and finds one, but no running world, was
    /// restarted while that standby takes over, and stands by too.
    pub fn following_token(&self, world: &str) -> String {
        format!("{}/following/{world}", self.root)
    }
    /// `flotilla/<sim>/following/*` — every following standby's token.
    pub fn following_tokens(&self) -> String {
        format!("{}/following/*", self.root)
    }
    /// The standby's id of a following token of this simulation.
    pub fn parse_following_token<'k>(&self, key: &'k str) -> Option<&'k str> {
        self.chunk_under(key, "following")
    }
    /// `flotilla/<sim>/terms/<n>` — the liveliness token of the running
    /// world's term: 0 for a world started afresh, one more at each
    /// take-over by a standby.
    pub fn term_token(&self, term: u64) -> String {
        format!("{}/terms/{term}", self.root)
    }
    /// `flotilla/<sim>/terms/*` — every running world's term token.
    pub fn term_tokens(&self) -> String {
        format!("{}/terms/*", self.root)
    }
    /// The term of a term token of this simulation.
    pub fn parse_term(&self, key: &str) -> Option<u64> {
        self.chunk_under(key, "terms")?.parse().ok()
    }
    /// `flotilla/<sim>/claims/<model>/<plugin>/<aspect>/<node>` — node
    /// `node` serves an instance (see [`crate::claim_book::instance_id`]).
    pub fn claim_token(&self, instance: &str, node: &str) -> String {
        format!("{}/claims/{instance}/{node}", self.root)
    }
    /// `flotilla/<sim>/claims/**` — every claim token.
    pub fn claim_tokens(&self) -> String {
        format!("{}/claims/**", self.root)
    }
    /// `flotilla/<sim>/claims/*/*/<aspect>/*` — the claim tokens of the
    /// instances of one aspect (`drive`, `odom`, `laser`), all a node of
    /// that aspect needs to hear of.
    pub fn claim_tokens_of(&self, aspect: &str) -> String {
        format!("{}/claims/*/*/{aspect}/*", self.root)
    }
    /// The (instance id, node) of a claim token of this simulation.
    pub fn parse_claim_token(&self, key: &str) -> Option<(String, String)> {
        let tail = key.strip_prefix(&self.root)?.strip_prefix("/claims/")?;
        let (instance, node) = tail.rsplit_once('/')?;
        let chunks: Vec<&str> = instance.split('/').collect();
        (chunks.len() == 3 && chunks.iter().all(|c| !c.is_empty()) && !node.is_empty())
            .then(|| (instance.to_string(), node.to_string()))
    }
    /// The node id of a node token of this simulation.
    pub fn parse_node_token<'k>(&self, key: &'k str) -> Option<&'k str> {
        self.chunk_under(key, "nodes")
    }
    /// The node id of a lockstep token or report of this simulation.
    pub fn parse_lockstep<'k>(&self, key: &'k str) -> Option<&'k str> {
        self.chunk_under(key, "lockstep")
    }
    /// The verb of a control key of this simulation.
    pub fn parse_control<'k>(&self, key: &'k str) -> Option<&'k str> {
        self.chunk_under(key, "control")
    }
    /// The one chunk after `flotilla/<sim>/<family>/` in `key`.
    fn chunk_under<'k>(&self, key: &'k str, family: &str) -> Option<&'k str> {
        let chunk = key.strip_prefix(&self.root)?.strip_prefix('/')?.strip_prefix(family)?.strip_prefix('/')?;
        (!chunk.is_empty() && !chunk.contains('/')).then_some(chunk)
    }
    /// `flotilla/<sim>/lockstep/<node>` — "done with step k".
    pub fn lockstep(&self, node: &str) -> String {
        format!("{}/lockstep/{node}", self.root)
    }
    /// `flotilla/<sim>/lockstep/*` — every participant's reports and tokens.
    pub fn lockstep_all(&self) -> String {
        format!("{}/lockstep/*", self.root)
    }
    /// `flotilla/<sim>/recording/<node>` — a node's published messages,
    /// batched for recorders (see [`crate::recording`]); sent while a
    /// subscriber matches.
    pub fn recording(&self, node: &str) -> String {
        format!("{}/recording/{node}", self.root)
    }
    /// `flotilla/<sim>/world/clock_flush` — queryable: the world sends the
    /// clocks it has batched for recorders so far, then answers (asked by
    /// a recorder about to stop).
    pub fn clock_flush(&self) -> String {
        format!("{}/world/clock_flush", self.root)
    }
    /// `flotilla/<sim>/recording/*` — every node's batches.
    pub fn recording_all(&self) -> String {
        format!("{}/recording/*", self.root)
    }
    /// `flotilla/<sim>/recorders_on_keys/<recorder>/<key>` — a recorder's
    /// liveliness token, alive while it takes the messages of ROS-facing
    /// `key` on that key (not yet from the nodes' batches): until it goes,
    /// a node sends its batch before any message on `key` (see
    /// [`crate::recording`]).
    pub fn recorder_on_key(&self, recorder: &str, key: &str) -> String {
        format!("{}/recorders_on_keys/{recorder}/{key}", self.root)
    }
    /// `flotilla/<sim>/recorders_on_keys/**` — every recorder's
    /// [`Keys::recorder_on_key`] token.
    pub fn recorders_on_keys(&self) -> String {
        format!("{}/recorders_on_keys/**", self.root)
    }
    /// The ROS-facing key a [`Keys::recorder_on_key`] token of this
    /// simulation names.
    pub fn parse_recorder_on_key<'k>(&self, token: &'k str) -> Option<&'k str> {
        let tail = token.strip_prefix(&self.root)?.strip_prefix("/recorders_on_keys/")?;
        let (recorder, key) = tail.split_once('/')?;
        (!recorder.is_empty() && !key.is_empty()).then_some(key)
    }
    /// `flotilla/<sim>/forwarders/<node>/<key>` — a node's liveliness
    /// token, alive while it subscribes to ROS-facing `key`, which no
    /// instance publishes: while a recorder listens, the node puts each
    /// message it receives there into its batches, and a recorder that
    /// finds the token when it starts recording `key` takes the key from
    /// that node's batches only (see [`crate::recording`]).
    pub fn forwarder(&self, node: &str, key: &str) -> String {
        format!("{}/forwarders/{node}/{key}", self.root)
    }
    /// `flotilla/<sim>/forwarders/**` — every node's [`Keys::forwarder`]
    /// token.
    pub fn forwarders(&self) -> String {
        format!("{}/forwarders/**", self.root)
    }
    /// The node and ROS-facing key a [`Keys::forwarder`] token of this
    /// simulation names.
    pub fn parse_forwarder<'k>(&self, token: &'k str) -> Option<(&'k str, &'k str)> {
        let tail = token.strip_prefix(&self.root)?.strip_prefix("/forwarders/")?;
        let (node, key) = tail.split_once('/')?;
        (!node.is_empty() && !key.is_empty()).then_some((node, key))
    }
    /// `flotilla/<sim>/forwarding/<node>` — a node's liveliness token,
    /// alive while a recorder listens to its batches: from then on it
    /// forwards what it receives on its [`Keys::forwarder`] keys.
    pub fn forwarding(&self, node: &str) -> String {
        format!("{}/forwarding/{node}", self.root)
    }
    /// The node a [`Keys::forwarding`] token of this simulation names.
    pub fn parse_forwarding<'k>(&self, token: &'k str) -> Option<&'k str> {
        let node = token.strip_prefix(&self.root)?.strip_prefix("/forwarding/")?;
        (!node.is_empty() && !node.contains('/')).then_some(node)
    }
    /// `flotilla/<sim>/status` — ~2 Hz summary for launchers and dashboards.
    pub fn status(&self) -> String {
        format!("{}/status", self.root)
    }

    /// The ROS-facing key of a fully resolved ROS name (`/robot1/scan` →
    /// `robot1/scan`, or `<prefix>/robot1/scan`).
    pub fn ros(&self, ros_name: &str) -> String {
        let name = ros_name.trim_start_matches('/');
        if self.ros_prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.ros_prefix)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_keys_follow_the_design() {
        let k = Keys::new("sim7");
        assert_eq!(k.world_state(), "flotilla/sim7/world/state");
        assert_eq!(k.world_state_every(20), "flotilla/sim7/world/state_every/20");
        assert_eq!(k.stride_of_interest(&k.state_interest(20, "sonar-1a2b")), Some(20));
        assert_eq!(k.stride_of_interest("flotilla/sim7/state_interest/0/x"), None);
        assert_eq!(k.world_contacts(), "flotilla/sim7/world/contacts");
        assert_eq!(k.actuation("drive-1"), "flotilla/sim7/actuation/drive-1");
        assert_eq!(k.claim_token("robot1/laser/laser", "laser-1"), "flotilla/sim7/claims/robot1/laser/laser/laser-1");
        assert_eq!(k.control("spawn"), "flotilla/sim7/control/spawn");
        assert_eq!(k.recording("laser-1"), "flotilla/sim7/recording/laser-1");
    }

    #[test]
    fn claim_and_node_tokens_parse_back() {
        let keys = Keys::new("s");
        let token = keys.claim_token("robot1/drive/odom", "odom-1a2b");
        assert_eq!(keys.parse_claim_token(&token), Some(("robot1/drive/odom".into(), "odom-1a2b".into())));
        assert_eq!(keys.parse_claim_token("flotilla/s/claims/robot1/drive"), None, "no aspect or node");
        assert_eq!(keys.claim_tokens_of("odom"), "flotilla/s/claims/*/*/odom/*");
        assert_eq!(keys.parse_claim_token("flotilla/other/claims/r/laser/laser/laser-1"), None, "another sim");
        assert_eq!(keys.parse_node_token(&keys.node_token("world-3")), Some("world-3"));
        assert_eq!(keys.parse_node_token("flotilla/s/status"), None);
        assert_eq!(keys.parse_following_token(&keys.following_token("world-4")), Some("world-4"));
        assert_eq!(keys.parse_following_token(&keys.standby_token("world-4")), None);
        assert_eq!(keys.parse_lockstep(&keys.lockstep("drive-1")), Some("drive-1"));
        assert_eq!(keys.parse_control(&keys.control("spawn")), Some("spawn"));
        assert_eq!(keys.parse_control("flotilla/s/controlx/spawn"), None);
        let on_key = keys.recorder_on_key("1f2e", "robot1/scan");
        assert_eq!(on_key, "flotilla/s/recorders_on_keys/1f2e/robot1/scan");
        assert_eq!(keys.parse_recorder_on_key(&on_key), Some("robot1/scan"));
        assert_eq!(keys.parse_recorder_on_key("flotilla/s/recorders_on_keys/1f2e"), None, "no key");
        assert_eq!(keys.parse_recorder_on_key("flotilla/t/recorders_on_keys/1f2e/robot1/scan"), None, "another sim");
        let forwarder = keys.forwarder("drive-1", "robot1/cmd_vel");
        assert_eq!(forwarder, "flotilla/s/forwarders/drive-1/robot1/cmd_vel");
        assert_eq!(keys.parse_forwarder(&forwarder), Some(("drive-1", "robot1/cmd_vel")));
        assert_eq!(keys.parse_forwarder("flotilla/s/forwarders/drive-1"), None, "no key");
        assert_eq!(keys.forwarding("drive-1"), "flotilla/s/forwarding/drive-1");
        assert_eq!(keys.parse_world_beacon(&keys.world_beacon("world-1")), Some("world-1"));
        assert_eq!(keys.parse_world_beacon("flotilla/t/beacons/world-1"), None, "another sim");
        assert_eq!(keys.parse_forwarding(&keys.forwarding("drive-1")), Some("drive-1"));
        assert_eq!(keys.parse_forwarding("flotilla/t/forwarding/drive-1"), None, "another sim");
        assert_eq!(keys.parse_forwarding("flotilla/s/forwarding/"), None, "no node");
    }

    #[test]
    fn ros_keys_drop_the_leading_slash_and_take_the_prefix() {
        assert_eq!(Keys::new("s").ros("/robot1/scan"), "robot1/scan");
        assert_eq!(Keys::new("s").with_ros_prefix("/env3/").ros("/clock"), "env3/clock");
    }

    #[test]
    fn key_chunks_are_checked() {
        assert!(check_key_chunk("sim id", "test_1.a-b").is_ok());
        for bad in ["", "a/b", "a*", "a b", "$x"] {
            assert!(check_key_chunk("sim id", bad).is_err(), "{bad:?}");
        }
    }
}
