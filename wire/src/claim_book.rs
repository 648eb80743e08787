//! Who serves which plugin instance (ARCHITECTURE.md, "Rules every process follows"), as pure bookkeeping: the
//! node kit declares and watches the liveliness tokens, this decides.

use std::collections::{BTreeMap, BTreeSet};

/// The id of a plugin instance as served by one role: `<model>/<plugin>/<aspect>`,
/// the aspect being the kind of node that serves it (`drive`, `odom`, `laser`).
pub fn instance_id(model: &str, plugin: &str, aspect: &str) -> String {
    format!("{model}/{plugin}/{aspect}")
}

/// The aspect of an instance id (its last chunk).
pub fn aspect_of(instance: &str) -> &str {
    instance.rsplit('/').next().unwrap_or(instance)
}

/// Who claims which plugin instances, as one node sees it (ARCHITECTURE.md, "Rules every process follows").
///
/// An instance id is `<model>/<plugin>/<aspect>`, the aspect being the kind of
/// node that serves it (`drive`, `odom`, `laser`): a DiffDrive has a drive and
/// an odometry side. A node claims an instance only when no other node does;
/// two nodes that claimed at the same moment settle it by id (the lower one
/// keeps it). A node that stands by takes over when the claim disappears.
#[derive(Debug, Clone, Default)]
pub struct ClaimBook {
    others: BTreeMap<String, BTreeSet<String>>,
}

impl ClaimBook {
    /// Another node's claim appeared (`alive`) or disappeared.
    pub fn seen(&mut self, instance: &str, node: &str, alive: bool) {
        let nodes = self.others.entry(instance.to_string()).or_default();
        if alive {
            nodes.insert(node.to_string());
        } else {
            nodes.remove(node);
        }
    }

    /// The nodes (other than us) claiming an instance.
    pub fn claimants(&self, instance: &str) -> Vec<String> {
        self.others.get(instance).map(|n| n.iter().cloned().collect()).unwrap_or_default()
    }

    /// Whether `me` may claim an instance nobody else claims.
    pub fn may_claim(&self, instance: &str, me: &str) -> bool {
        self.others.get(instance).is_none_or(|n| n.iter().all(|other| other == me))
    }

    /// Whether `me`, holding an instance, must give it up to a lower id.
    pub fn must_yield(&self, instance: &str, me: &str) -> bool {
        self.others.get(instance).is_some_and(|n| n.iter().any(|other| other.as_str() < me))
    }
}

/// Another node's claim on a plugin instance appearing (`alive`) or going.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimEvent {
    /// The instance id, `<model>/<plugin>/<aspect>`.
    pub instance: String,
    /// The claiming node's id.
    pub node: String,
    /// Whether the claim appeared (or went).
    pub alive: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_claim_wins_and_a_simultaneous_one_goes_to_the_lower_id() {
        let mut book = ClaimBook::default();
        assert!(book.may_claim("r/laser/laser", "laser-b"));
        book.seen("r/laser/laser", "laser-a", true);
        assert!(!book.may_claim("r/laser/laser", "laser-b"), "a holds it: b stands by");
        assert!(book.must_yield("r/laser/laser", "laser-b"), "had b claimed at once, it yields to a");
        assert!(!book.must_yield("r/laser/laser", "laser-0"), "a lower id keeps it");
        book.seen("r/laser/laser", "laser-a", false);
        assert!(book.may_claim("r/laser/laser", "laser-b"), "a is gone: b takes over");
    }

    #[test]
    fn instance_ids_name_model_plugin_and_aspect() {
        assert_eq!(instance_id("robot1", "drive", "odom"), "robot1/drive/odom");
        assert_eq!(aspect_of("robot1/drive/odom"), "odom");
    }
}
