//! A plane vector, metres or metres per second as its use says.

use std::ops::{Add, AddAssign, Mul, Neg, Sub};

/// A vector in the world's plane.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Vec2 {
    /// x component.
    pub x: f64,
    /// y component.
    pub y: f64,
}

impl Vec2 {
    /// The zero vector.
    pub const ZERO: Vec2 = Vec2 { x: 0.0, y: 0.0 };

    /// (x, y).
    pub const fn new(x: f64, y: f64) -> Vec2 {
        Vec2 { x, y }
    }

    /// Dot product.
    pub fn dot(self, other: Vec2) -> f64 {
        self.x * other.x + self.y * other.y
    }

    /// Length. (`f64::hypot` guards against overflow at 1e154 m, which no
    /// world reaches, at several times the cost.)
    pub fn norm(self) -> f64 {
        self.norm_squared().sqrt()
    }

    /// Squared length.
    pub fn norm_squared(self) -> f64 {
        self.dot(self)
    }

    /// The unit vector along this one (zero for zero).
    pub fn unit(self) -> Vec2 {
        let n = self.norm();
        if n > 0.0 {
            self * (1.0 / n)
        } else {
            Vec2::ZERO
        }
    }

    /// This vector shortened to at most `max` long.
    pub fn clamped(self, max: f64) -> Vec2 {
        let n = self.norm();
        if n > max {
            self * (max / n)
        } else {
            self
        }
    }
}

impl Add for Vec2 {
    type Output = Vec2;
    fn add(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x + o.x, self.y + o.y)
    }
}

impl AddAssign for Vec2 {
    fn add_assign(&mut self, o: Vec2) {
        self.x += o.x;
        self.y += o.y;
    }
}

impl Sub for Vec2 {
    type Output = Vec2;
    fn sub(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x - o.x, self.y - o.y)
    }
}

impl Mul<f64> for Vec2 {
    type Output = Vec2;
    fn mul(self, k: f64) -> Vec2 {
        Vec2::new(self.x * k, self.y * k)
    }
}

impl Neg for Vec2 {
    type Output = Vec2;
    fn neg(self) -> Vec2 {
        Vec2::new(-self.x, -self.y)
    }
}
