//! Where a walker is going: its waypoints, the pauses at them, and whether
//! the walk is over.

use flotilla_plugins::pedestrian::Waypoint;

use crate::vec2::Vec2;

/// Progress along a list of waypoints.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The waypoint walked to (or waited at).
    next: usize,
    /// Standing at `next` until this sim time, ns.
    paused_until_ns: Option<u64>,
    /// A walk that is not cyclic reached its last waypoint.
    finished: bool,
}

impl Plan {
    /// A plan towards the first waypoint.
    pub fn new() -> Plan {
        Plan { next: 0, paused_until_ns: None, finished: false }
    }

    /// The waypoint walked to, or `None` while pausing or once finished,
    /// for a walker (or a group's centre) at `position` at `now_ns`: a
    /// waypoint within `radius_m` is reached, its pause begins, and after
    /// it the walk goes on to the next (the first again when `cyclic`).
    pub fn target(
        &mut self,
        position: Vec2,
        now_ns: u64,
        waypoints: &[Waypoint],
        cyclic: bool,
        radius_m: f64,
    ) -> Option<Vec2> {
        // Each pass either returns or moves one waypoint on: a list whose
        // waypoints all lie within reach with no pause ends after a lap.
        for _ in 0..=waypoints.len() {
            if self.finished || waypoints.is_empty() {
                return None;
            }
            match self.paused_until_ns {
                Some(until) if now_ns < until => return None,
                Some(_) => {
                    self.paused_until_ns = None;
                    self.advance(waypoints.len(), cyclic);
                    continue;
                }
                None => {}
            }
            let w = waypoints[self.next];
            let at = Vec2::new(w.x_m, w.y_m);
            if (at - position).norm() > radius_m {
                return Some(at);
            }
            let pause_ns = (w.pause_s * 1e9).round() as u64;
            if pause_ns > 0 {
                self.paused_until_ns = Some(now_ns.saturating_add(pause_ns));
                return None;
            }
            self.advance(waypoints.len(), cyclic);
        }
        None
    }

    fn advance(&mut self, len: usize, cyclic: bool) {
        if self.next + 1 < len {
            self.next += 1;
        } else if cyclic {
            self.next = 0;
        } else {
            self.finished = true;
        }
    }

    /// Whether a walk that is not cyclic has reached its last waypoint.
    pub fn finished(&self) -> bool {
        self.finished
    }
}

impl Default for Plan {
    fn default() -> Plan {
        Plan::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn way() -> Vec<Waypoint> {
        vec![Waypoint { x_m: 0.0, y_m: 0.0, pause_s: 0.0 }, Waypoint { x_m: 10.0, y_m: 0.0, pause_s: 2.0 }]
    }

    #[test]
    fn a_walk_pauses_at_a_waypoint_then_goes_on() {
        let mut plan = Plan::new();
        // at the first waypoint already: on to the second
        assert_eq!(plan.target(Vec2::ZERO, 0, &way(), true, 0.5), Some(Vec2::new(10.0, 0.0)));
        assert_eq!(plan.target(Vec2::new(5.0, 0.0), 1, &way(), true, 0.5), Some(Vec2::new(10.0, 0.0)));
        // arrives at 5 s: stands for 2 s
        assert_eq!(plan.target(Vec2::new(9.8, 0.0), 5_000_000_000, &way(), true, 0.5), None);
        assert_eq!(plan.target(Vec2::new(9.8, 0.0), 6_999_999_999, &way(), true, 0.5), None);
        // then, cyclic, back to the first
        assert_eq!(plan.target(Vec2::new(9.8, 0.0), 7_000_000_000, &way(), true, 0.5), Some(Vec2::ZERO));
    }

    #[test]
    fn a_walk_that_is_not_cyclic_ends_at_its_last_waypoint() {
        let mut plan = Plan::new();
        plan.target(Vec2::ZERO, 0, &way(), false, 0.5);
        assert_eq!(plan.target(Vec2::new(10.0, 0.0), 1, &way(), false, 0.5), None);
        assert_eq!(plan.target(Vec2::new(10.0, 0.0), 3_000_000_000, &way(), false, 0.5), None);
        assert!(plan.finished);
    }

    #[test]
    fn waypoints_all_within_reach_end_after_a_lap() {
        let here = vec![Waypoint { x_m: 0.0, y_m: 0.0, pause_s: 0.0 }; 3];
        assert_eq!(Plan::new().target(Vec2::ZERO, 0, &here, true, 0.5), None);
    }
}
