//! One binary frame for the page: every moving body's pose and the latest
//! readings of the lasers, sonar and batteries, batched, little-endian (read with a
//! `DataView` in `web/view.js`):
//!
//! ```text
//! u32 kind = 1 | u32 revision | f64 sim time (s)
//! u32 n | n × (u32 body id, f32 x, f32 y, f32 θ)            16 bytes a body
//! u32 m | m × (u32 laser index, u32 k, k × f32 range)       NaN: no return
//! u32 s | s × (u32 sonar index, u32 transducer, f32 range)
//! u32 b | b × (u32 battery index, f32 charge fraction)
//! ```

use flotilla_wire::world_to_nodes::WorldState;

/// The frame kind written first.
pub const FRAME_KIND: u32 = 1;

/// The readings a frame carries beside the poses.
#[derive(Debug, Default, Clone)]
pub struct Readings {
    /// Per laser (scene index), its latest ranges.
    pub scans: Vec<(u32, Vec<f32>)>,
    /// Per sonar transducer (scene index of the ring, transducer), its latest range.
    pub sonar: Vec<(u32, u32, f32)>,
    /// Per battery (scene index), its latest charge, a fraction of its capacity.
    pub batteries: Vec<(u32, f32)>,
}

/// Encodes a frame of `state` and `readings` into `out` (cleared first).
pub fn encode(state: &WorldState, readings: &Readings, out: &mut Vec<u8>) {
    out.clear();
    let n = state.bodies.len();
    out.reserve(24 + 16 * n + readings.scans.iter().map(|(_, r)| 8 + 4 * r.len()).sum::<usize>());
    let u32le = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    let f32le = |out: &mut Vec<u8>, v: f32| out.extend_from_slice(&v.to_le_bytes());
    u32le(out, FRAME_KIND);
    u32le(out, state.revision as u32);
    out.extend_from_slice(&state.time.as_secs_f64().to_le_bytes());
    u32le(out, n as u32);
    for body in &state.bodies {
        u32le(out, body.id);
        f32le(out, body.pose.x_m as f32);
        f32le(out, body.pose.y_m as f32);
        f32le(out, body.pose.theta_rad as f32);
    }
    u32le(out, readings.scans.len() as u32);
    for (laser, ranges) in &readings.scans {
        u32le(out, *laser);
        u32le(out, ranges.len() as u32);
        for &r in ranges {
            f32le(out, r);
        }
    }
    u32le(out, readings.sonar.len() as u32);
    for &(ring, transducer, range) in &readings.sonar {
        u32le(out, ring);
        u32le(out, transducer);
        f32le(out, range);
    }
    u32le(out, readings.batteries.len() as u32);
    for &(battery, charge) in &readings.batteries {
        u32le(out, battery);
        f32le(out, charge);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_wire::geometry::{Pose2, Twist2};
    use flotilla_wire::time::SimTime;
    use flotilla_wire::world_to_nodes::BodyState;

    #[test]
    fn a_frame_is_laid_out_as_the_page_reads_it() {
        let state = WorldState {
            revision: 7,
            step: 200,
            time: SimTime::at_step(200, 5_000_000),
            step_ns: 5_000_000,
            bodies: vec![BodyState { id: 3, pose: Pose2::new(1.5, -2.0, 0.25), twist: Twist2::default() }],
        };
        let readings =
            Readings { scans: vec![(0, vec![1.0, f32::NAN])], sonar: vec![(1, 4, 2.5)], batteries: vec![(2, 0.75)] };
        let mut out = Vec::new();
        encode(&state, &readings, &mut out);
        let u32_at = |i: usize| u32::from_le_bytes(out[i..i + 4].try_into().unwrap());
        let f32_at = |i: usize| f32::from_le_bytes(out[i..i + 4].try_into().unwrap());
        assert_eq!((u32_at(0), u32_at(4)), (FRAME_KIND, 7));
        assert_eq!(f64::from_le_bytes(out[8..16].try_into().unwrap()), 1.0);
        assert_eq!((u32_at(16), u32_at(20)), (1, 3));
        assert_eq!((f32_at(24), f32_at(28), f32_at(32)), (1.5, -2.0, 0.25));
        assert_eq!((u32_at(36), u32_at(40), u32_at(44)), (1, 0, 2));
        assert_eq!(f32_at(48), 1.0);
        assert!(f32_at(52).is_nan());
        assert_eq!((u32_at(56), u32_at(60), u32_at(64), f32_at(68)), (1, 1, 4, 2.5));
        assert_eq!((u32_at(72), u32_at(76), f32_at(80)), (1, 2, 0.75));
        assert_eq!(out.len(), 84);
    }
}
