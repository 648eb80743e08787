//! From a move in the world frame to the body command the world holds.

use flotilla_wire::drive_to_world::BodyCommand;
use flotilla_wire::geometry::wrap_angle;
use flotilla_wire::world_to_nodes::BodyId;

use crate::vec2::Vec2;

/// The command, held for `steps` steps of `dt_s`, that takes a body at
/// heading `theta_rad` by exactly `velocity` × the time of those steps
/// while it turns to `heading_rad` (or keeps its heading), as the world
/// moves a placed body at each step: its origin by R(θ)·u·dt in the world
/// frame, then its heading by ω·dt.
///
/// The k-th step turns the body by k·α first, so the displacement is
/// R(θ)·S·u·dt with S = Σₖ R(kα), a rotation times a scale; u is found by
/// undoing both.
pub fn held_command(
    body: BodyId,
    theta_rad: f64,
    velocity: Vec2,
    heading_rad: Option<f64>,
    steps: u64,
    dt_s: f64,
) -> BodyCommand {
    let steps = steps.max(1);
    let turn = heading_rad.map_or(0.0, |h| wrap_angle(h - theta_rad));
    let alpha = turn / steps as f64;
    let (mut a, mut b) = (0.0, 0.0);
    for k in 0..steps {
        let (s, c) = (k as f64 * alpha).sin_cos();
        a += c;
        b += s;
    }
    // the displacement per step, in the body's frame at the start
    let (s0, c0) = theta_rad.sin_cos();
    let local = Vec2::new(c0 * velocity.x + s0 * velocity.y, -s0 * velocity.x + c0 * velocity.y) * steps as f64;
    // S⁻¹ = [[a, b], [−b, a]] / (a² + b²)
    let scale = 1.0 / (a * a + b * b);
    BodyCommand {
        body,
        local_vx_mps: (a * local.x + b * local.y) * scale,
        local_vy_mps: (-b * local.x + a * local.y) * scale,
        omega_radps: alpha / dt_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the world puts a placed body after `steps` steps at `command`.
    fn world_moves(mut x: f64, mut y: f64, mut theta: f64, command: &BodyCommand, steps: u64, dt: f64) -> [f64; 3] {
        for _ in 0..steps {
            let (s, c) = theta.sin_cos();
            x += (c * command.local_vx_mps - s * command.local_vy_mps) * dt;
            y += (s * command.local_vx_mps + c * command.local_vy_mps) * dt;
            theta += command.omega_radps * dt;
        }
        [x, y, theta]
    }

    #[test]
    fn the_body_lands_where_the_move_takes_it_turned_to_its_heading() {
        for (theta, heading, steps) in [(0.3, Some(2.0), 4), (-3.0, Some(3.0), 10), (1.0, None, 4), (0.0, Some(0.5), 1)]
        {
            let velocity = Vec2::new(1.2, -0.4);
            let command = held_command(7, theta, velocity, heading, steps, 0.005);
            let [x, y, end] = world_moves(1.0, 2.0, theta, &command, steps, 0.005);
            let time = steps as f64 * 0.005;
            assert!((x - (1.0 + 1.2 * time)).abs() < 1e-12 && (y - (2.0 - 0.4 * time)).abs() < 1e-12, "{x} {y}");
            let expected = heading.unwrap_or(theta);
            assert!(wrap_angle(end - expected).abs() < 1e-12, "{end} vs {expected}");
        }
    }
}
