//! The contacts of watched bodies after a step, read from rapier's narrow
//! phase: what Flatland's contact callbacks (`BeginContact`, `PostSolve`)
//! give its Bumper and BoolSensor, as one list per step.
//!
//! Each rapier body carries in its `user_data` what it is to Flotilla — a
//! model body's id, or a layer's index with [`LAYER_TAG`] — so that the
//! other side of a contact is named without a lookup table.

use flotilla_wire::world_to_nodes::{BodyId, Contact, ContactPeer, ContactPoint};
use rapier2d::parry::utils::PoseOpt;
use rapier2d::prelude::*;

/// Marks a layer's body in `user_data` (the index in the low bits).
const LAYER_TAG: u128 = 1 << 64;

/// The `user_data` of a model body.
pub fn body_tag(id: BodyId) -> u128 {
    u128::from(id)
}

/// The `user_data` of layer entry `index`'s body.
pub fn layer_tag(index: usize) -> u128 {
    LAYER_TAG | index as u128
}

/// What the body holding `collider` is to Flotilla.
fn peer_of(world: &PhysicsWorld, collider: ColliderHandle) -> Option<ContactPeer> {
    let parent = world.colliders.get(collider)?.parent()?;
    let tag = world.bodies.get(parent)?.user_data;
    // Both fit their types: they were made by `body_tag` and `layer_tag`.
    Some(if tag & LAYER_TAG != 0 {
        ContactPeer::Layer((tag & u128::from(u32::MAX)) as u32)
    } else {
        ContactPeer::Body(tag as BodyId)
    })
}

/// Fills `out` with every touching pair of shapes of the `watched` bodies
/// (id and rapier handle), from the watched body's side, sorted by body
/// then peer; forces are the solver's impulses over the step `dt_s`.
pub fn collect(world: &PhysicsWorld, watched: &[(BodyId, RigidBodyHandle)], dt_s: f64, out: &mut Vec<Contact>) {
    out.clear();
    for &(id, handle) in watched {
        let Some(body) = world.bodies.get(handle) else { continue };
        let first = out.len();
        for &collider in body.colliders() {
            touching(world, id, collider, dt_s, out);
            overlapping(world, id, collider, out);
        }
        // Stable: a pair's manifolds keep rapier's (deterministic) order.
        out[first..].sort_by_key(|c| c.peer);
    }
}

/// Solid shapes pressing on each other: one entry per contact manifold
/// (Box2D's per-edge contacts along a wall), with its points.
fn touching(world: &PhysicsWorld, id: BodyId, collider: ColliderHandle, dt_s: f64, out: &mut Vec<Contact>) {
    for pair in world.narrow_phase.contact_pairs_with(collider) {
        if !pair.has_any_active_contact() {
            continue;
        }
        let (ours_first, other) =
            if pair.collider1 == collider { (true, pair.collider2) } else { (false, pair.collider1) };
        let Some(peer) = peer_of(world, other) else { continue };
        let (Some(c1), Some(c2)) = (world.colliders.get(pair.collider1), world.colliders.get(pair.collider2)) else {
            continue;
        };
        // rapier's normal goes from collider 1 to collider 2.
        let sign = if ours_first { 1.0 } else { -1.0 };
        for manifold in pair.manifolds() {
            if manifold.data.solver_contacts.is_empty() {
                continue;
            }
            let world_pos1 = manifold.subshape_pos1().prepend_to(c1.position());
            let world_pos2 = manifold.subshape_pos2().prepend_to(c2.position());
            let normal = manifold.data.normal * sign;
            let mut contact = Contact {
                body: id,
                peer,
                normal: [normal.x, normal.y],
                point_count: 0,
                points: [ContactPoint::default(); 2],
            };
            for solver_contact in manifold.data.solver_contacts.iter().take(2) {
                let index = (solver_contact.contact_id[0] & !NEW_CONTACT_BIT) as usize;
                let Some(point) = manifold.points.get(index) else { continue };
                let at = (world_pos1 * point.local_p1).midpoint(world_pos2 * point.local_p2);
                let impulse_ns = point.data.impulse.hypot(point.data.tangent_impulse.x);
                contact.points[usize::from(contact.point_count)] =
                    ContactPoint { position_m: [at.x, at.y], force_n: impulse_ns / dt_s };
                contact.point_count += 1;
            }
            out.push(contact);
        }
    }
}

/// A sensor footprint overlapping another shape, or a shape overlapping a
/// sensor: no points, no normal (Box2D runs no solver on sensors). Bodies
/// joined without `collide_connected` do not see each other, as in Box2D
/// (rapier leaves such pairs out of the solver, not out of overlaps).
fn overlapping(world: &PhysicsWorld, id: BodyId, collider: ColliderHandle, out: &mut Vec<Contact>) {
    for (h1, c1, h2, c2, intersecting) in world.intersection_pairs_with(collider) {
        if !intersecting || joined_without_contacts(world, c1.parent(), c2.parent()) {
            continue;
        }
        let other = if h1 == collider { h2 } else { h1 };
        let Some(peer) = peer_of(world, other) else { continue };
        out.push(Contact { body: id, peer, normal: [0.0; 2], point_count: 0, points: [ContactPoint::default(); 2] });
    }
}

/// Whether a joint between the two bodies keeps them from touching.
fn joined_without_contacts(world: &PhysicsWorld, a: Option<RigidBodyHandle>, b: Option<RigidBodyHandle>) -> bool {
    let (Some(a), Some(b)) = (a, b) else { return false };
    world.impulse_joints.joints_between(a, b).any(|(_, joint)| !joint.data.contacts_enabled())
}
