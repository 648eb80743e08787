//! Planar poses and velocities.

use serde::{Deserialize, Serialize};

/// A pose in the plane: position in metres, heading in radians.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Pose2 {
    /// x in metres.
    pub x_m: f64,
    /// y in metres.
    pub y_m: f64,
    /// Heading in radians, counter-clockwise from +x.
    pub theta_rad: f64,
}

impl Pose2 {
    /// A pose from its parts.
    pub const fn new(x_m: f64, y_m: f64, theta_rad: f64) -> Pose2 {
        Pose2 { x_m, y_m, theta_rad }
    }

    /// `self ∘ other`: `other` expressed in `self`'s frame, returned in the
    /// parent frame.
    pub fn compose(&self, other: &Pose2) -> Pose2 {
        let (s, c) = self.theta_rad.sin_cos();
        Pose2 {
            x_m: self.x_m + c * other.x_m - s * other.y_m,
            y_m: self.y_m + s * other.x_m + c * other.y_m,
            theta_rad: self.theta_rad + other.theta_rad,
        }
    }

    /// The inverse transform: `p.inverse().compose(&p)` is the identity.
    pub fn inverse(&self) -> Pose2 {
        let (s, c) = self.theta_rad.sin_cos();
        Pose2 { x_m: -(c * self.x_m + s * self.y_m), y_m: s * self.x_m - c * self.y_m, theta_rad: -self.theta_rad }
    }

    /// Maps a point from this frame to the parent frame.
    pub fn transform_point(&self, p: [f64; 2]) -> [f64; 2] {
        let (s, c) = self.theta_rad.sin_cos();
        [self.x_m + c * p[0] - s * p[1], self.y_m + s * p[0] + c * p[1]]
    }

    /// Whether every component is finite.
    pub fn is_finite(&self) -> bool {
        self.x_m.is_finite() && self.y_m.is_finite() && self.theta_rad.is_finite()
    }
}

/// A planar velocity: linear in m/s, angular in rad/s.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Twist2 {
    /// Linear velocity along x, m/s.
    pub vx_mps: f64,
    /// Linear velocity along y, m/s.
    pub vy_mps: f64,
    /// Angular velocity, rad/s, counter-clockwise.
    pub omega_radps: f64,
}

/// Normalises an angle to (-π, π].
pub fn wrap_angle(a: f64) -> f64 {
    let two_pi = std::f64::consts::TAU;
    let mut r = a.rem_euclid(two_pi);
    if r > std::f64::consts::PI {
        r -= two_pi;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_places_a_mount_on_a_moved_body() {
        let body = Pose2::new(1.0, 2.0, std::f64::consts::FRAC_PI_2);
        let mount = Pose2::new(0.5, 0.0, 0.0);
        let world = body.compose(&mount);
        assert!((world.x_m - 1.0).abs() < 1e-12 && (world.y_m - 2.5).abs() < 1e-12);
        assert!((wrap_angle(3.0 * std::f64::consts::PI) - std::f64::consts::PI).abs() < 1e-12);
    }
}
