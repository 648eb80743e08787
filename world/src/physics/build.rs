//! Turning description entries into rapier bodies, colliders and joints.

use flotilla_wire::description::{
    BodyDescription, BodyKind, Footprint, FootprintShape, JointDescription, JointKind, LayerBits, LayerDescription,
};
use rapier2d::prelude::*;

/// Flatland's layers as rapier collision groups: member of its layers,
/// colliding with anything sharing one (nothing at all when collision is off).
fn groups(layers: LayerBits, collision: bool) -> InteractionGroups {
    let member = Group::from_bits_truncate(u32::from(layers));
    let filter = if collision { member } else { Group::NONE };
    InteractionGroups::new(member, filter, InteractionTestMode::And)
}

/// A layer's static geometry: one fixed body with one polyline of the
/// segments bodies collide with, carrying `tag` as its user data.
pub fn insert_layer(world: &mut PhysicsWorld, layer: &LayerDescription, tag: u128) {
    let obstacles: Vec<_> = layer.obstacles().collect();
    if obstacles.is_empty() {
        return;
    }
    let mut vertices = Vec::with_capacity(obstacles.len() * 2);
    let mut indices = Vec::with_capacity(obstacles.len());
    for s in obstacles {
        let i = vertices.len() as u32;
        vertices.push(Vector::new(s.a[0], s.a[1]));
        vertices.push(Vector::new(s.b[0], s.b[1]));
        indices.push([i, i + 1]);
    }
    let collider = ColliderBuilder::polyline(vertices, Some(indices)).collision_groups(groups(layer.bits, true));
    world.insert(RigidBodyBuilder::fixed().user_data(tag), collider);
}

fn collider(footprint: &Footprint, mask: LayerBits) -> ColliderBuilder {
    let builder = match &footprint.shape {
        FootprintShape::Circle { center, radius } => {
            ColliderBuilder::ball(*radius).translation(Vector::new(center[0], center[1]))
        }
        FootprintShape::Polygon { points } => {
            let points: Vec<Vector> = points.iter().map(|p| Vector::new(p[0], p[1])).collect();
            // The loader rejected zero-area polygons, so a hull exists; Box2D
            // also builds the convex hull of the given points.
            ColliderBuilder::convex_hull(&points).unwrap_or_else(|| ColliderBuilder::ball(1e-3))
        }
    };
    builder
        .density(footprint.density)
        .friction(footprint.friction)
        .restitution(footprint.restitution)
        .sensor(footprint.sensor)
        .collision_groups(groups(footprint.layers & mask, footprint.collision))
}

/// Inserts a body with its footprints at its description pose, in the
/// layers of `mask` only (its model's map), carrying `tag` as its user data.
/// A body a plugin places (`placed`, see
/// `flotilla_plugins::robots::placed_bodies`) is kinematic and
/// position-based whatever its type: it goes exactly where it is put,
/// pushing dynamic bodies and pushed by nothing.
pub fn insert_body(
    world: &mut PhysicsWorld,
    body: &BodyDescription,
    mask: LayerBits,
    tag: u128,
    placed: bool,
) -> RigidBodyHandle {
    let builder = match body.kind {
        _ if placed => RigidBodyBuilder::kinematic_position_based(),
        BodyKind::Dynamic => RigidBodyBuilder::dynamic(),
        BodyKind::Static => RigidBodyBuilder::fixed(),
        BodyKind::Kinematic => RigidBodyBuilder::kinematic_velocity_based(),
    };
    let rb = builder
        .pose(Pose::new(Vector::new(body.pose.x_m, body.pose.y_m), body.pose.theta_rad))
        .linear_damping(body.linear_damping)
        .angular_damping(body.angular_damping)
        .user_data(tag);
    let handle = world.insert_body(rb);
    for footprint in &body.footprints {
        world.insert_collider(collider(footprint, mask), Some(handle));
    }
    if let Some(rb) = world.bodies.get_mut(handle) {
        rb.recompute_mass_properties_from_colliders(&world.colliders);
        if body.kind == BodyKind::Dynamic && rb.mass() <= 0.0 {
            // Box2D gives a massless dynamic body 1 kg.
            rb.set_additional_mass(1.0, true);
            rb.recompute_mass_properties_from_colliders(&world.colliders);
        }
    }
    handle
}

/// Moves a body's footprints into the layers of `mask` (its model's new
/// map). The body's colliders are its footprints, in order.
pub fn set_layers(world: &mut PhysicsWorld, handle: RigidBodyHandle, body: &BodyDescription, mask: LayerBits) {
    let Some(rb) = world.bodies.get(handle) else { return };
    let colliders: Vec<ColliderHandle> = rb.colliders().to_vec();
    for (collider, footprint) in colliders.into_iter().zip(&body.footprints) {
        if let Some(c) = world.colliders.get_mut(collider) {
            c.set_collision_groups(groups(footprint.layers & mask, footprint.collision));
        }
    }
    if let Some(rb) = world.bodies.get_mut(handle) {
        rb.wake_up(true);
    }
}

/// Inserts a revolute or weld joint between two bodies.
pub fn insert_joint(
    world: &mut PhysicsWorld,
    joint: &JointDescription,
    a: RigidBodyHandle,
    b: RigidBodyHandle,
) -> ImpulseJointHandle {
    let [a1, a2] = joint.anchors;
    let data: GenericJoint = match joint.kind {
        JointKind::Revolute { limits } => {
            let mut builder = RevoluteJointBuilder::new()
                .local_anchor1(Vector::new(a1[0], a1[1]))
                .local_anchor2(Vector::new(a2[0], a2[1]))
                .contacts_enabled(joint.collide_connected);
            if let Some(limits) = limits {
                builder = builder.limits(limits);
            }
            builder.build().into()
        }
        // Box2D's reference angle is θ_b − θ_a; the soft weld (frequency,
        // damping) is approximated by a rigid one.
        JointKind::Weld { angle, .. } => FixedJointBuilder::new()
            .local_frame1(Pose::new(Vector::new(a1[0], a1[1]), angle))
            .local_frame2(Pose::new(Vector::new(a2[0], a2[1]), 0.0))
            .contacts_enabled(joint.collide_connected)
            .build()
            .into(),
    };
    world.insert_impulse_joint(a, b, data)
}
