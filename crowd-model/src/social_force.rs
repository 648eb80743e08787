//! The terms of Helbing and Molnár's social force ("Social force model for
//! pedestrian dynamics", Phys. Rev. E 51, 4282, 1995), per unit mass
//! (m/s²), as pure functions of where everyone is.
//!
//! Two departures from the paper, both so that people of a size keep apart:
//! the repulsive potentials are measured between body edges (the ellipse's
//! semi-minor axis `b` less both radii, the wall distance less the
//! walker's radius), and a walker feels the nearest wall only (as PedSim's
//! obstacle force does): a map image's outline is made of many short
//! segments, and summing over all of them would multiply a wall's push by
//! the number of pixels it is drawn with.

use crate::vec2::Vec2;

/// The time a walker looks ahead along another's walk, s (the paper's Δt).
pub const LOOK_AHEAD_S: f64 = 2.0;

/// Beyond this many ranges a repulsion is below e⁻⁶ of its strength and
/// is left out (the neighbour search's reach): 0.017 m/s² for Helbing and
/// Molnár's pedestrians, against a pull to the desired velocity of up to
/// 2.7 m/s².
pub const CUTOFF_RANGES: f64 = 6.0;

/// The pull towards the desired velocity: (v⁰ e − v) / τ.
pub fn driving(desired_velocity: Vec2, velocity: Vec2, relaxation_time_s: f64) -> Vec2 {
    (desired_velocity - velocity) * (1.0 / relaxation_time_s)
}

/// The push away from another walker (or a robot) at `other` moving at
/// `other_velocity`, of the elliptical potential V(b) = V⁰ e^−(b − r)/σ,
/// `b` being the semi-minor axis of the ellipse through `me` with foci at
/// `other` and where `other` will be in [`LOOK_AHEAD_S`], `r` both radii.
/// Zero when the two stand on one point (no direction to push in).
pub fn repulsion(me: Vec2, other: Vec2, other_velocity: Vec2, radii_m: f64, strength: f64, range_m: f64) -> Vec2 {
    let r = me - other;
    let step = other_velocity * LOOK_AHEAD_S;
    let (d1, d2) = (r.norm(), (r - step).norm());
    if d1 <= f64::EPSILON {
        return Vec2::ZERO;
    }
    let b = 0.5 * ((d1 + d2).powi(2) - step.norm_squared()).max(0.0).sqrt();
    if b <= f64::EPSILON {
        // `me` is on the segment the other sweeps: straight away from it.
        return r.unit() * (strength / range_m * (radii_m / range_m).exp());
    }
    // ∇b = (|r| + |r − y|) (r̂ + (r − y)^) / 4b
    let towards = r.unit() + (r - step).unit();
    let gradient = towards * ((d1 + d2) / (4.0 * b));
    gradient * (strength / range_m * (-(b - radii_m) / range_m).exp())
}

/// The push of a wall whose nearest point to `me` is `nearest`, of the
/// potential U(d) = U⁰ e^−d/R, `d` being the gap between the walker's edge
/// and the wall.
pub fn wall(me: Vec2, nearest: Vec2, radius_m: f64, strength: f64, range_m: f64) -> Vec2 {
    let away = me - nearest;
    let distance = away.norm();
    if distance <= f64::EPSILON {
        return Vec2::ZERO;
    }
    away.unit() * (strength / range_m * (-(distance - radius_m) / range_m).exp())
}

/// The weight of a push from something in direction `towards` (from the
/// walker to it), for a walker heading along the unit `heading`: 1 within
/// the field of view (half-angle with cosine `cos_half_view`), else `c`.
/// A walker with no heading sees all around.
pub fn view_weight(heading: Vec2, towards: Vec2, cos_half_view: f64, c: f64) -> f64 {
    if heading == Vec2::ZERO || heading.dot(towards) >= towards.norm() * cos_half_view {
        1.0
    } else {
        c
    }
}

/// The pull back to a group of `members` whose centre is `centre`
/// (Moussaïd et al., 2010): `strength` towards it once the walker is
/// farther than (members − 1) / 2 m from it, else nothing.
pub fn cohesion(me: Vec2, centre: Vec2, members: usize, strength: f64) -> Vec2 {
    let to_centre = centre - me;
    let threshold_m = members.saturating_sub(1) as f64 / 2.0;
    if to_centre.norm() > threshold_m {
        to_centre.unit() * strength
    } else {
        Vec2::ZERO
    }
}

/// The nearest point to `p` of the segment from `a` to `b`.
pub fn nearest_on_segment(p: Vec2, a: Vec2, b: Vec2) -> Vec2 {
    let ab = b - a;
    let length_squared = ab.norm_squared();
    if length_squared <= 0.0 {
        return a;
    }
    let t = ((p - a).dot(ab) / length_squared).clamp(0.0, 1.0);
    a + ab * t
}

#[cfg(test)]
mod tests {
    use super::*;

    const V0: f64 = 2.1;
    const SIGMA: f64 = 0.3;

    #[test]
    fn driving_reaches_the_desired_velocity_at_the_relaxation_rate() {
        let f = driving(Vec2::new(1.34, 0.0), Vec2::ZERO, 0.5);
        assert_eq!(f, Vec2::new(2.68, 0.0));
    }

    #[test]
    fn a_standing_neighbour_pushes_straight_away_and_fades_with_distance() {
        let near = repulsion(Vec2::new(1.0, 0.0), Vec2::ZERO, Vec2::ZERO, 0.0, V0, SIGMA);
        let far = repulsion(Vec2::new(2.0, 0.0), Vec2::ZERO, Vec2::ZERO, 0.0, V0, SIGMA);
        // A standing neighbour's ellipse is a circle: b = |r|, ∇b = r̂.
        assert!((near.x - V0 / SIGMA * (-1.0 / SIGMA).exp()).abs() < 1e-12 && near.y.abs() < 1e-12);
        assert!((far.x / near.x - (-1.0 / SIGMA).exp()).abs() < 1e-12);
    }

    #[test]
    fn someone_walking_at_me_pushes_harder_than_someone_walking_away() {
        let me = Vec2::new(1.0, 0.0);
        let at_me = repulsion(me, Vec2::ZERO, Vec2::new(0.2, 0.0), 0.0, V0, SIGMA);
        let away = repulsion(me, Vec2::ZERO, Vec2::new(-0.2, 0.0), 0.0, V0, SIGMA);
        assert!(at_me.x > away.x && away.x > 0.0, "{at_me:?} {away:?}");
    }

    #[test]
    fn radii_make_the_push_that_of_the_gap() {
        let bodies = repulsion(Vec2::new(1.5, 0.0), Vec2::ZERO, Vec2::ZERO, 0.5, V0, SIGMA);
        let points = repulsion(Vec2::new(1.0, 0.0), Vec2::ZERO, Vec2::ZERO, 0.0, V0, SIGMA);
        assert!((bodies.x - points.x).abs() < 1e-12);
    }

    #[test]
    fn a_wall_pushes_along_its_normal() {
        let f = wall(Vec2::new(0.0, 0.5), Vec2::ZERO, 0.25, 10.0, 0.2);
        assert!(f.x.abs() < 1e-12 && (f.y - 50.0 * (-1.25f64).exp()).abs() < 1e-12);
    }

    #[test]
    fn what_is_behind_weighs_less() {
        let cos = 100f64.to_radians().cos();
        assert_eq!(view_weight(Vec2::new(1.0, 0.0), Vec2::new(1.0, 0.5), cos, 0.5), 1.0);
        assert_eq!(view_weight(Vec2::new(1.0, 0.0), Vec2::new(-1.0, 0.0), cos, 0.5), 0.5);
        assert_eq!(view_weight(Vec2::ZERO, Vec2::new(-1.0, 0.0), cos, 0.5), 1.0);
    }

    #[test]
    fn a_group_pulls_only_the_stragglers() {
        assert_eq!(cohesion(Vec2::new(0.5, 0.0), Vec2::ZERO, 3, 1.0), Vec2::ZERO);
        assert_eq!(cohesion(Vec2::new(2.0, 0.0), Vec2::ZERO, 3, 1.0), Vec2::new(-1.0, 0.0));
    }

    #[test]
    fn nearest_points_of_segments() {
        let (a, b) = (Vec2::new(0.0, 0.0), Vec2::new(2.0, 0.0));
        assert_eq!(nearest_on_segment(Vec2::new(1.0, 3.0), a, b), Vec2::new(1.0, 0.0));
        assert_eq!(nearest_on_segment(Vec2::new(-1.0, 1.0), a, b), a);
        assert_eq!(nearest_on_segment(Vec2::new(5.0, 1.0), a, b), b);
    }
}
