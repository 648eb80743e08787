//! Which beams of a fan a direction, or an arc between two directions,
//! falls on: the mapping the wall sweep uses to test each wall only against
//! the beams it subtends.

use std::f64::consts::{PI, TAU};

use super::scan::fast_atan2;
use super::{Fan, Vec2};

/// Angular slack added on each side of an arc before it is mapped to beams,
/// rad: covers [`fast_atan2`]'s error (2e-5 rad) with room to spare.
const ARC_MARGIN_RAD: f64 = 1e-4;

/// Maps directions to the beams of a fan: a direction's beam coordinate is
/// how many beam steps it lies past beam 0 in the direction the beams
/// advance, in [0, one turn).
pub(super) struct BeamArcs {
    /// Beam 0's angle in [−π, π), rad.
    start_rad: f64,
    /// +1 when the beams advance counter-clockwise, −1 when clockwise.
    sense: f64,
    beams_per_rad: f64,
    /// A turn, in beam steps.
    turn: f64,
    /// [`ARC_MARGIN_RAD`] in beam steps.
    margin: f64,
    last: i64,
}

impl BeamArcs {
    pub(super) fn new(fan: &Fan) -> BeamArcs {
        let beams_per_rad = 1.0 / fan.increment_rad.abs();
        BeamArcs {
            start_rad: (fan.start_rad + PI).rem_euclid(TAU) - PI,
            sense: if fan.increment_rad > 0.0 { 1.0 } else { -1.0 },
            beams_per_rad,
            turn: TAU * beams_per_rad,
            margin: ARC_MARGIN_RAD * beams_per_rad,
            last: fan.dirs.len() as i64 - 1,
        }
    }

    /// The beam coordinate of the direction of `v` (not zero).
    #[inline(always)]
    pub(super) fn beam_of(&self, v: Vec2) -> f64 {
        // Both angles lie in [−π, π], so their difference is within a turn.
        let u = (fast_atan2(v[1], v[0]) - self.start_rad) * self.sense * self.beams_per_rad;
        let u = if u < 0.0 { u + self.turn } else { u };
        if u >= self.turn {
            u - self.turn
        } else {
            u
        }
    }

    /// Calls `visit(first, last)` for each run of beams whose directions may
    /// lie on the shorter arc between beam coordinates `a` and `b`, widened by
    /// [`ARC_MARGIN_RAD`] on each side. In a fan of a whole turn or more a
    /// beam may be visited twice.
    #[inline(always)]
    pub(super) fn for_each_run(&self, a: f64, b: f64, mut visit: impl FnMut(usize, usize)) {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        // The shorter way round may cross beam coordinate 0.
        let (lo, hi) = if hi - lo > 0.5 * self.turn { (hi, lo + self.turn) } else { (lo, hi) };
        let (lo, hi) = (lo - self.margin, hi + self.margin);
        // The arc recurs every turn; each turn that meets the fan is a run of
        // beams. `as` truncates towards zero, which can only add a beam.
        let mut shift = if hi >= self.turn { -self.turn } else { 0.0 };
        let last = self.last as f64;
        while lo + shift <= last {
            let first = ((lo + shift) as i64).max(0);
            let end = ((hi + shift) as i64).min(self.last);
            if first <= end {
                visit(first as usize, end as usize);
            }
            shift += self.turn;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arcs(start_rad: f64, increment_rad: f64, beams: usize) -> (BeamArcs, Vec<Vec2>) {
        let dirs = vec![[1.0, 0.0]; beams]; // unused by the mapping
        let fan = Fan { origin: [0.0; 2], start_rad, increment_rad, dirs: &dirs, range_m: 1.0, layers: 1 };
        (BeamArcs::new(&fan), dirs)
    }

    fn runs(arcs: &BeamArcs, from_rad: f64, to_rad: f64) -> Vec<(usize, usize)> {
        let mut seen = vec![];
        let beam = |a: f64| arcs.beam_of([a.cos(), a.sin()]);
        arcs.for_each_run(beam(from_rad), beam(to_rad), |a, b| seen.push((a, b)));
        seen
    }

    #[test]
    fn arcs_map_to_the_beams_they_hold_both_ways_round() {
        // beams at 0, 0.25, …, 2.0 rad
        let (ccw, _) = arcs(0.0, 0.25, 9);
        assert_eq!(runs(&ccw, 0.6, 0.9), [(2, 3)], "0.75 is in, with 0.5 let in by truncation");
        assert_eq!(runs(&ccw, 0.9, 0.6), [(2, 3)], "the ends in either order");
        assert_eq!(runs(&ccw, 2.6, 2.9), [], "past the last beam");
        // beams at 2.0, 1.75, …, 0 rad (clockwise)
        let (cw, _) = arcs(2.0, -0.25, 9);
        assert_eq!(runs(&cw, 1.45, 1.55), [(1, 2)], "1.5 is beam 2");
    }

    #[test]
    fn arcs_across_the_back_of_a_full_turn_wrap_round() {
        // 16 beams round a whole turn from −π: the arc across ±π holds the
        let (full, _) = arcs(-PI, TAU / 16.0, 16);
        // first and the last beams (at −π and 7π/8; 14 is let in by
        // truncation).
        assert_eq!(runs(&full, 2.7, -PI + 0.1), [(0, 0), (14, 15)]);
    }
}
