//! A node's batches that never reached the recorder, told by their
//! numbers ([`BatchGaps`]).

use std::collections::{BTreeMap, HashMap};

/// Batches that never arrived, told by the numbers of those that did.
#[derive(Debug, Default)]
pub(super) struct BatchGaps {
    /// Per batch key (one per node), the number of the last batch.
    last: HashMap<String, u64>,
    /// Per batch key, the batches that never arrived.
    pub(super) lost: BTreeMap<String, u64>,
}

impl BatchGaps {
    /// Whether a batch came on `key` before.
    pub(super) fn knows(&self, key: &str) -> bool {
        self.last.contains_key(key)
    }

    /// Batch `number` came on `key`: those numbered between the last one
    /// and it are lost. The first batch seen from a node may have any
    /// number (it numbers them from its own start, not the recorder's).
    pub(super) fn saw(&mut self, key: &str, number: u64) {
        // A key's string is made once, at its node's first batch.
        let last = match self.last.get_mut(key) {
            Some(last) => Some(std::mem::replace(last, number)),
            None => self.last.insert(key.to_string(), number),
        };
        let missing = last.map_or(0, |last| number.saturating_sub(last).saturating_sub(1));
        if missing > 0 {
            tracing::warn!("{missing} batches on {key} never arrived: the recording misses their messages");
            *self.lost.entry(key.to_string()).or_default() += missing;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_missing_from_a_node_s_numbering_are_counted_as_lost() {
        let mut gaps = BatchGaps::default();
        gaps.saw("flotilla/s/recording/odom-1", 40);
        gaps.saw("flotilla/s/recording/laser-1", 0);
        gaps.saw("flotilla/s/recording/odom-1", 41);
        assert!(gaps.lost.is_empty(), "a node's first batch may have any number; then one after the other");
        gaps.saw("flotilla/s/recording/odom-1", 45);
        gaps.saw("flotilla/s/recording/laser-1", 2);
        gaps.saw("flotilla/s/recording/odom-1", 47);
        let lost: Vec<(&str, u64)> = gaps.lost.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        assert_eq!(lost, [("flotilla/s/recording/laser-1", 1), ("flotilla/s/recording/odom-1", 4)]);
    }
}
