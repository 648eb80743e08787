//! Actuation from drive nodes, waiting for the next step.
//!
//! Commands stay in force until replaced. When a drive node disappears (its
//! liveliness token goes), every body it drove gets a zero command: the world
//! never depends on a node to stay consistent.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_protocol::drive_to_world::{Actuation, BodyCommand};
use flotilla_protocol::world_to_nodes::BodyId;

/// Commands received since the last step, and who drives which body.
#[derive(Default)]
pub struct Inbox {
    pending: Vec<BodyCommand>,
    driven_by: BTreeMap<String, BTreeSet<BodyId>>,
}

impl Inbox {
    /// Takes one actuation message.
    pub fn push(&mut self, actuation: Actuation) {
        let bodies = self.driven_by.entry(actuation.node).or_default();
        for command in actuation.commands {
            bodies.insert(command.body);
            self.pending.push(command);
        }
    }

    /// A node's token disappeared: queue zero commands for its bodies.
    pub fn node_lost(&mut self, node: &str) -> usize {
        let Some(bodies) = self.driven_by.remove(node) else { return 0 };
        let n = bodies.len();
        self.pending.retain(|c| !bodies.contains(&c.body));
        for body in bodies {
            self.pending.push(BodyCommand { body, local_vx_mps: 0.0, local_vy_mps: 0.0, omega_radps: 0.0 });
        }
        n
    }

    /// Hands the pending commands to the step, in arrival order.
    pub fn drain(&mut self) -> std::vec::Drain<'_, BodyCommand> {
        self.pending.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(body: BodyId, v: f64) -> BodyCommand {
        BodyCommand { body, local_vx_mps: v, local_vy_mps: 0.0, omega_radps: 0.0 }
    }

    #[test]
    fn a_lost_drive_leaves_its_bodies_stopped() {
        let mut inbox = Inbox::default();
        inbox.push(Actuation { node: "drive-a".into(), step: 3, commands: vec![cmd(1, 0.5), cmd(2, 0.7)] });
        inbox.push(Actuation { node: "drive-b".into(), step: 3, commands: vec![cmd(3, 0.1)] });
        assert_eq!(inbox.drain().count(), 3);
        assert_eq!(inbox.node_lost("drive-a"), 2);
        let zeros: Vec<BodyCommand> = inbox.drain().collect();
        assert_eq!(zeros, vec![cmd(1, 0.0), cmd(2, 0.0)]);
        assert_eq!(inbox.node_lost("drive-a"), 0);
    }
}
