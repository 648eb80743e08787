//! The channel ids a node writes into its batches for recorders (the
//! world's numbers for its topics, see [`flotilla_plugins::channels`]),
//! and the node's sequence number on each.

use flotilla_plugins::channels::channel_ids;
use flotilla_wire::Keys;
use rustc_hash::FxHashMap;

/// The channel ids of the keys a node publishes on, from the world's
/// description, and its sequence number on each channel.
#[derive(Debug, Default)]
pub(crate) struct BatchChannels {
    /// The description's `channels` these are made from.
    names: Vec<String>,
    /// Per key, its topic's channel id.
    ids: FxHashMap<String, u16>,
    /// Per channel id, the sequence number of its next message.
    sequences: Vec<u32>,
}

impl BatchChannels {
    /// Follows the world's `channels` (a description's), its topics' keys
    /// made by `keys`. A list that only grew (models spawned) keeps every
    /// id; another (a new world) numbers afresh.
    pub(crate) fn follow(&mut self, channels: &[String], keys: &Keys) {
        if channels.starts_with(&self.names) {
            if channels.len() == self.names.len() {
                return;
            }
        } else {
            self.names.clear();
            self.ids.clear();
            self.sequences.clear();
        }
        for (name, id) in channel_ids(channels).skip(self.names.len()) {
            self.ids.insert(keys.ros(name), id);
        }
        self.names = channels.to_vec();
    }

    /// The channel id of `key`, if its topic has one.
    pub(super) fn id(&self, key: &str) -> Option<u16> {
        self.ids.get(key).copied()
    }

    /// The next sequence number on channel `id`.
    pub(super) fn next_sequence(&mut self, id: u16) -> u32 {
        let at = usize::from(id);
        if self.sequences.len() <= at {
            self.sequences.resize(at + 1, 0);
        }
        let sequence = self.sequences[at];
        self.sequences[at] = sequence.wrapping_add(1);
        sequence
    }
}
