//! The [`Outbox`] a plugin answers into: the messages it puts, which of
//! its outputs anyone wants (by the clock mode's rule, [`Following`]), and
//! a drive's actuation with what it promises.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use flotilla_messages::RosMessage;
use flotilla_wire::drive_to_world::{BodyCommand, Promise};
use rustc_hash::FxHashMap;

use super::flags::{Flag, Flags};
#[cfg(doc)]
use super::rebuild::Rebuild;

/// What a plugin makes of one arrival: messages to publish and, for a
/// drive, the actuation of a step.
#[derive(Default)]
pub struct Outbox {
    items: Vec<(String, Vec<u8>)>,
    /// The sim time of the state answered last, ns: the time of what the
    /// plugin puts here.
    moment_ns: u64,
    /// Per key published on so far, whether any subscriber matches it: as
    /// its own publisher last learned, or for a key whose first message
    /// went out while its folder showed no subscriber, the folder's flag.
    /// Looked up for every message, so hashed with the Fx hash: SipHash,
    /// the standard one, guards against keys chosen by an attacker, and
    /// these are the node's own.
    subscribed: FxHashMap<String, Flag>,
    /// Per folder of announced outputs (`robot1/sonar`), whether any
    /// subscriber matches a key in it (`robot1/sonar/*`).
    folders: FxHashMap<String, Flag>,
    /// Where the flags of `subscribed` and `folders` are made.
    flags: Flags,
    /// Whether a recorder listens to this node (see [`crate::recording`]):
    /// every output is then wanted.
    recorder_listens: Arc<AtomicBool>,
    /// Which outputs go out, by the clock mode (see [`Following`]).
    following: Following,
    /// Whether a key's subscribed flag, once Zenoh has said a subscriber
    /// matches it, stays up (lockstep): shared with the matching
    /// listeners that set the flags (see `publishers`).
    flags_only_rise: Arc<AtomicBool>,
    /// Bumped whenever a flag of `subscribed` or `folders` is added,
    /// replaced or dropped: an [`Interest`] taken earlier is then looked
    /// up again.
    generation: u64,

    /// The step actuated, if any.
    actuated: Option<u64>,
    /// The actuation's body commands; the buffer is kept between steps.
    commands: Vec<BodyCommand>,
    /// What the plugin promises of its next answers (see
    /// [`NodePlugin::promise`](super::plugin::NodePlugin::promise)), if
    /// anything; the buffer is kept between steps.
    promise: Promise,
    /// Whether `promise` goes with the actuation.
    promised: bool,
}

/// Which outputs a node sends, by the world's clock mode.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Following {
    /// The clock mode is not known yet: every output goes out.
    #[default]
    Everything,
    /// Fast, realtime and external mode: a key goes out while a subscriber
    /// matches it, as its own publisher or the watch on its folder says.
    Subscribers,
    /// Lockstep: a key goes out unless its own publisher has looked for
    /// subscribers for [`MATCHING_SETTLES_IN`](super::publishers::MATCHING_SETTLES_IN)
    /// and Zenoh has never said one matches. Once one has, the key goes
    /// out for good: Zenoh's matching can say "no subscriber" for a moment
    /// while one has been there all along, and what a subscriber there
    /// from the start receives must not depend on that. Folders are not
    /// watched: each key gets its publisher, and so the same rule.
    SubscribersEverSeen,
}

/// Where [`Outbox::wants_cached`] and [`Outbox::nobody_under_cached`]
/// keep the flag of one key or folder between calls: each `Interest` is
/// for one key, always the same (a new key, after a rebuild, gets a new
/// `Interest`).
#[derive(Debug, Default, Clone)]
pub struct Interest {
    generation: Option<u64>,
    flag: Option<Flag>,
}

impl Outbox {
    /// Queues a payload for a key.
    pub fn put(&mut self, key: String, payload: Vec<u8>) {
        self.items.push((key, payload));
    }

    /// Queues `message` for `key`, encoded as CDR.
    pub fn put_encoded<T: RosMessage>(&mut self, key: &str, message: &T) {
        self.items.push((key.to_string(), flotilla_messages::encode(message)));
    }

    /// Whether a message on `key` would reach anyone: true for the key's
    /// first message (a subscriber there from the start must get it, and
    /// Zenoh learns of subscribers a moment after anything is declared);
    /// after it, whether a subscriber matches the key, as the key's own
    /// publisher learns, or — for a key the plugin announced
    /// ([`Rebuild::output`]) whose folder showed no subscriber at its first
    /// message, which then went out without a publisher — as the watch on
    /// its folder says; in lockstep, a key once seen subscribed stays
    /// wanted for the rest of the run (Zenoh's "no subscriber" can be a
    /// moment's mistake). While a recorder listens, or before the clock
    /// mode is known, every key is wanted.
    /// A plugin skips encoding and queuing what
    /// nobody listens to, as Gazebo's sensors do; it still updates its
    /// model (state, noise), so that a subscriber that comes later sees
    /// what it would have seen from the start.
    pub fn wants(&self, key: &str) -> bool {
        self.recorder_listens() || self.subscribed(key)
    }

    /// The sim time of the state being answered (or answered last, while
    /// an input is), ns.
    pub(crate) fn moment_ns(&self) -> u64 {
        self.moment_ns
    }

    /// A state of sim time `time_ns` is being answered.
    pub(crate) fn set_moment(&mut self, time_ns: u64) {
        self.moment_ns = time_ns;
    }

    /// Whether a recorder listens to this node.
    fn recorder_listens(&self) -> bool {
        self.recorder_listens.load(Ordering::Relaxed)
    }

    /// Reads whether a recorder listens from `flag` (the node's
    /// [`crate::recording`] tap keeps it).
    pub(crate) fn follow_recorders(&mut self, flag: Arc<AtomicBool>) {
        self.recorder_listens = flag;
    }

    /// Which outputs go out from now on (the clock mode changed).
    pub(crate) fn follow(&mut self, following: Following) {
        self.following = following;
        self.flags_only_rise.store(following == Following::SubscribersEverSeen, Ordering::Relaxed);
    }

    /// Whether subscribed flags only rise (see
    /// [`Following::SubscribersEverSeen`]), as the matching listeners read it.
    pub(crate) fn flags_only_rise(&self) -> Arc<AtomicBool> {
        self.flags_only_rise.clone()
    }

    /// Whether subscribed flags only rise now (lockstep), read where each
    /// moment is published.
    pub(crate) fn flags_rise_only_now(&self) -> bool {
        self.following == Following::SubscribersEverSeen
    }

    /// [`Outbox::wants`] without the recorder: whether a message on `key`
    /// goes out on the key itself.
    pub(crate) fn subscribed(&self, key: &str) -> bool {
        if self.following == Following::Everything {
            return true;
        }
        if let Some(matching) = self.subscribed.get(key) {
            return matching.get();
        }
        // Not published on yet: the first message goes out.
        true
    }

    /// [`Outbox::wants`] for a key the caller asks about again and again
    /// (every reading of a 1000-robot fleet's sonar): `interest` keeps
    /// the flag the answer is read from, looked up again only when the
    /// outbox's flags changed, so that a warm call hashes nothing.
    pub fn wants_cached(&self, key: &str, interest: &mut Interest) -> bool {
        let subscribed = self.subscribed_cached(key, interest);
        self.recorder_listens() || subscribed
    }

    /// [`Outbox::subscribed`] with the flag kept in `interest` (see
    /// [`Outbox::wants_cached`]).
    fn subscribed_cached(&self, key: &str, interest: &mut Interest) -> bool {
        if self.following == Following::Everything {
            return true;
        }
        if interest.generation != Some(self.generation) {
            interest.flag = self.subscribed.get(key).cloned();
            interest.generation = Some(self.generation);
        }
        interest.flag.as_ref().is_none_or(Flag::get)
    }

    /// Whether nobody listens to any key in `folder`: true only for the
    /// folder of an announced output ([`Rebuild::output`]) whose watch
    /// shows no subscriber under it, while no recorder listens. One check for a plugin with many
    /// keys in one folder (a sonar's one per transducer) instead of a
    /// [`Outbox::wants`] per key — once each key's first message, which
    /// goes out regardless, has gone.
    /// The folder's flag is kept in `interest` (see [`Outbox::wants_cached`]).
    pub fn nobody_under_cached(&self, folder: &str, interest: &mut Interest) -> bool {
        if interest.generation != Some(self.generation) {
            interest.flag = self.folders.get(folder).cloned();
            interest.generation = Some(self.generation);
        }
        self.following == Following::Subscribers
            && !self.recorder_listens()
            && interest.flag.as_ref().is_some_and(|flag| !flag.get())
    }

    /// Whether a key's folder is watched and shows no subscriber: its
    /// message goes out without a publisher of its own (a plain put), once.
    /// From then on the key follows its folder's flag (one lookup per
    /// [`Outbox::wants`]), until the folder shows a subscriber and the key
    /// gets a publisher of its own.
    pub(crate) fn unwatched(&mut self, key: &str) -> bool {
        if self.following != Following::Subscribers {
            return false;
        }
        let Some(folder) = folder_of(key).and_then(|f| self.folders.get(f)) else { return false };
        if folder.get() {
            return false;
        }
        let folder = folder.clone();
        self.subscribed.insert(key.to_string(), folder);
        self.generation += 1;
        true
    }

    /// The body commands to send the world for step `step` (a drive's
    /// actuation, applied at the step after), empty to be filled. The
    /// world counts an actuation as the node's lockstep report of `step`.
    pub fn actuate(&mut self, step: u64) -> &mut Vec<BodyCommand> {
        self.actuated = Some(step);
        self.promised = false;
        self.commands.clear();
        &mut self.commands
    }

    /// The buffer a plugin's promised changes go into, emptied.
    pub(crate) fn promised_changes(&mut self) -> &mut Vec<(u64, BodyCommand)> {
        self.promise.changes.clear();
        &mut self.promise.changes
    }

    /// Promises the answers up to state `through`, with the changes put
    /// in [`Outbox::promised_changes`] (those after `through` dropped).
    pub(crate) fn promise_through(&mut self, through: u64) {
        self.promise.through = through;
        self.promise.changes.retain(|(step, _)| *step <= through);
        self.promised = true;
    }

    /// The promise that goes with the actuation taken, if any; once.
    pub fn take_promise(&mut self) -> Option<&Promise> {
        std::mem::take(&mut self.promised).then_some(&self.promise)
    }

    /// The step actuated since the last [`Outbox::take_actuation`], if any.
    pub fn actuated(&self) -> Option<u64> {
        self.actuated
    }

    /// Takes the actuation: its step and commands. Give the commands back
    /// with [`Outbox::recycle`] once sent, so that the next step allocates
    /// nothing.
    pub fn take_actuation(&mut self) -> Option<(u64, Vec<BodyCommand>)> {
        self.actuated.take().map(|step| (step, std::mem::take(&mut self.commands)))
    }

    /// Gives back an actuation's command buffer.
    pub fn recycle(&mut self, commands: Vec<BodyCommand>) {
        self.commands = commands;
    }

    /// Takes every queued message.
    pub fn drain(&mut self) -> std::vec::Drain<'_, (String, Vec<u8>)> {
        self.items.drain(..)
    }

    /// The messages queued to go out.
    pub(crate) fn items(&self) -> &[(String, Vec<u8>)] {
        &self.items
    }

    /// The queued messages, taken out (give the vector back with
    /// [`Outbox::restore`], keeping its capacity) so that the publisher
    /// can register new keys' flags meanwhile.
    pub(crate) fn take_items(&mut self) -> Vec<(String, Vec<u8>)> {
        std::mem::take(&mut self.items)
    }

    pub(crate) fn restore(&mut self, mut items: Vec<(String, Vec<u8>)>) {
        items.clear();
        self.items = items;
    }

    /// A new flag, false, for [`Outbox::wants`] to read for `key` (its
    /// own publisher's, replacing a folder's it may have followed).
    pub(crate) fn subscribed_flag(&mut self, key: &str) -> Flag {
        let flag = self.flags.make(false);
        self.subscribed.insert(key.to_string(), flag.clone());
        self.generation += 1;
        flag
    }

    /// The flag [`Outbox::wants`] reads for keys in `folder`, created false.
    pub(crate) fn folder_flag(&mut self, folder: &str) -> Flag {
        self.generation += 1;
        let Outbox { folders, flags, .. } = self;
        folders.entry(folder.to_string()).or_insert_with(|| flags.make(false)).clone()
    }

    /// Forgets the folders not in `keep`.
    pub(crate) fn retain_folders(&mut self, keep: &dyn Fn(&str) -> bool) {
        self.folders.retain(|folder, _| keep(folder));
        self.generation += 1;
    }
}

/// The folder of a key: everything before its last `/` (`robot1/sonar` of
/// `robot1/sonar/3`); `None` for a key of one chunk.
pub(crate) fn folder_of(key: &str) -> Option<&str> {
    key.rsplit_once('/').map(|(folder, _)| folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_the_clock_mode_is_known_every_output_goes_out() {
        let mut out = Outbox::default();
        let (nobody, folder) = (out.subscribed_flag("robot1/odom"), out.folder_flag("robot1/sonar"));
        let (mut odom, mut sonar) = (Interest::default(), Interest::default());
        assert!(!nobody.get() && !folder.get());
        assert!(out.wants("robot1/odom") && out.subscribed("robot1/odom"), "the clock mode unknown yet");
        assert!(out.wants_cached("robot1/odom", &mut odom));
        assert!(!out.nobody_under_cached("robot1/sonar", &mut sonar));
        out.follow(Following::Subscribers);
        assert!(!out.wants("robot1/odom"), "only where someone subscribes");
    }

    #[test]
    fn in_lockstep_keys_follow_their_own_publishers_whose_flags_only_rise() {
        let mut out = Outbox::default();
        out.follow(Following::SubscribersEverSeen);
        assert!(out.flags_only_rise().load(Ordering::Relaxed), "the matching listeners are told");
        let nobody = out.subscribed_flag("robot1/odom");
        assert!(!out.wants("robot1/odom"), "nobody was ever seen");
        let folder = out.folder_flag("robot1/sonar");
        let mut sonar = Interest::default();
        assert!(!out.nobody_under_cached("robot1/sonar", &mut sonar), "folders are not followed");
        assert!(!out.unwatched("robot1/sonar/3"), "each key gets a publisher of its own");
        assert!(!folder.get() && !nobody.get());
        out.follow(Following::Subscribers);
        assert!(!out.flags_only_rise().load(Ordering::Relaxed), "flags fall again outside lockstep");
        assert!(out.nobody_under_cached("robot1/sonar", &mut sonar));
    }

    #[test]
    fn outputs_are_wanted_until_their_publisher_knows_of_no_subscriber() {
        let mut out = Outbox::default();
        out.follow(Following::Subscribers);
        assert!(out.wants("robot1/odom"), "no publisher yet: the first message goes out");
        let matching = out.subscribed_flag("robot1/odom");
        assert!(!out.wants("robot1/odom"), "a publisher that no subscriber matches");
        matching.set(true);
        assert!(out.wants("robot1/odom"), "a subscriber came");
        assert!(out.wants("robot2/odom"), "other keys are their own");
    }

    #[test]
    fn announced_outputs_are_wanted_when_a_key_of_their_folder_has_a_subscriber() {
        let mut out = Outbox::default();
        out.follow(Following::Subscribers);
        let folder = out.folder_flag("robot1/sonar");
        assert!(out.wants("robot1/sonar/3"), "nobody known yet: the first message goes out");
        assert!(out.unwatched("robot1/sonar/3"), "without a publisher of its own");
        assert!(!out.wants("robot1/sonar/3"), "nobody listens under robot1/sonar");
        assert!(out.wants("robot2/sonar/3"), "not announced: the first message goes out");
        let (mut sonar1, mut sonar2) = (Interest::default(), Interest::default());
        assert!(out.nobody_under_cached("robot1/sonar", &mut sonar1));
        assert!(!out.nobody_under_cached("robot2/sonar", &mut sonar2), "not watched: unknown");
        folder.set(true);
        assert!(!out.nobody_under_cached("robot1/sonar", &mut sonar1));
        assert!(out.wants("robot1/sonar/3"), "someone listens to a key of the folder");
        out.subscribed_flag("robot1/sonar/3");
        assert!(!out.wants("robot1/sonar/3"), "its own publisher knows better: not this key");
        out.retain_folders(&|_| false);
        assert!(out.wants("robot1/sonar/4"), "forgotten");
        assert!(!out.unwatched("robot1/sonar/4"), "not watched");
    }

    #[test]
    fn while_a_recorder_listens_every_output_is_wanted_but_only_subscribed_keys_go_out_on_their_own() {
        let mut out = Outbox::default();
        out.follow(Following::Subscribers);
        let (nobody, folder) = (out.subscribed_flag("robot1/odom"), out.folder_flag("robot1/sonar"));
        let (mut odom, mut sonar) = (Interest::default(), Interest::default());
        assert!(!out.wants("robot1/odom") && out.nobody_under_cached("robot1/sonar", &mut sonar));
        let recorder = Arc::new(AtomicBool::new(true));
        out.follow_recorders(recorder.clone());
        assert!(out.wants("robot1/odom"), "the recorder wants it");
        assert!(out.wants_cached("robot1/odom", &mut odom));
        assert!(!out.nobody_under_cached("robot1/sonar", &mut sonar), "the recorder listens under every folder");
        assert!(!out.subscribed("robot1/odom"), "but nobody subscribes to the key itself");
        nobody.set(true);
        assert!(out.subscribed("robot1/odom"));
        recorder.store(false, Ordering::Relaxed);
        folder.set(false);
        assert!(out.nobody_under_cached("robot1/sonar", &mut sonar), "the recorder left");
    }

    #[test]
    fn cached_interests_follow_every_change_of_the_flags() {
        let mut out = Outbox::default();
        out.follow(Following::Subscribers);
        let (mut key, mut folder) = (Interest::default(), Interest::default());
        assert!(out.wants_cached("robot1/sonar_pointcloud2", &mut key), "no publisher yet");
        assert!(!out.nobody_under_cached("robot1/sonar", &mut folder), "not watched");
        let watch = out.folder_flag("robot1/sonar");
        assert!(out.nobody_under_cached("robot1/sonar", &mut folder), "watched, nobody there");
        let own = out.subscribed_flag("robot1/sonar_pointcloud2");
        assert!(!out.wants_cached("robot1/sonar_pointcloud2", &mut key), "its publisher sees nobody");
        own.set(true);
        watch.set(true);
        assert!(out.wants_cached("robot1/sonar_pointcloud2", &mut key), "read through the kept flag");
        assert!(!out.nobody_under_cached("robot1/sonar", &mut folder));
        out.subscribed_flag("robot1/sonar_pointcloud2"); // a new publisher, a new flag (false)
        assert!(!out.wants_cached("robot1/sonar_pointcloud2", &mut key), "the new flag, not the kept one");
        out.retain_folders(&|_| false);
        assert!(!out.nobody_under_cached("robot1/sonar", &mut folder), "no longer watched");
    }

    #[test]
    fn an_actuation_is_taken_once_and_its_buffer_reused() {
        let mut out = Outbox::default();
        assert_eq!(out.take_actuation(), None);
        out.actuate(7).push(BodyCommand { body: 3, local_vx_mps: 0.5, local_vy_mps: 0.0, omega_radps: 0.1 });
        assert_eq!(out.actuated(), Some(7));
        let (step, commands) = out.take_actuation().unwrap();
        assert_eq!((step, commands.len()), (7, 1));
        let capacity = commands.capacity();
        out.recycle(commands);
        assert_eq!(out.take_actuation(), None, "taken once");
        assert!(out.actuate(8).is_empty(), "a fresh step starts empty");
        assert!(out.commands.capacity() >= capacity, "in the same buffer");
    }
}
