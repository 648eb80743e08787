//! Contact sensors: Flatland's [`Bumper`](bumper::Bumper) and
//! [`BoolSensor`](bool_sensor::BoolSensor), as models fed the world's
//! per-step contact list (`world/contacts`) instead of Box2D's callbacks.

pub mod bool_sensor;
pub mod bumper;
pub mod node;

use flotilla_wire::description::WorldDescription;
use flotilla_wire::world_to_nodes::{BodyId, ContactPeer};

/// The names Flatland gives the two sides of a contact: for a body, its
/// model's name and its own; for a layer, the layer's (first) name twice.
#[derive(Debug, Clone, Default)]
pub struct ContactNames {
    /// (body, model name, body name), sorted by body.
    bodies: Vec<(BodyId, String, String)>,
    /// Per layer entry, its first name.
    layers: Vec<String>,
}

impl ContactNames {
    /// The names of every body and layer of `description`.
    pub fn of(description: &WorldDescription) -> ContactNames {
        let mut bodies: Vec<(BodyId, String, String)> = description
            .models
            .iter()
            .flat_map(|m| m.bodies.iter().map(|b| (b.id, m.name.clone(), b.name.clone())))
            .collect();
        bodies.sort_by_key(|(id, _, _)| *id);
        let layers = description.layers.iter().map(|l| l.names.first().cloned().unwrap_or_default()).collect();
        ContactNames { bodies, layers }
    }

    /// (entity, body) of one side of a contact; `None` for one that the
    /// description does not know (it is newer than the names).
    pub fn of_peer(&self, peer: ContactPeer) -> Option<(&str, &str)> {
        match peer {
            ContactPeer::Body(id) => self.body(id),
            ContactPeer::Layer(index) => {
                let name = self.layers.get(index as usize)?;
                Some((name, name))
            }
        }
    }

    /// (model name, body name) of a body.
    pub fn body(&self, id: BodyId) -> Option<(&str, &str)> {
        let i = self.bodies.binary_search_by_key(&id, |(b, _, _)| *b).ok()?;
        let (_, model, body) = &self.bodies[i];
        Some((model, body))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;

    use flotilla_wire::description::WorldDescription;
    use flotilla_wire::world_to_nodes::{BodyId, Contact, ContactPeer, ContactPoint};

    use super::ContactNames;

    /// The bumper test world: robot (base = body 1, halo = 2), crate (box =
    /// 3), layer 0 `walls`.
    pub fn contact_world() -> WorldDescription {
        let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tests/bumper/world.yaml");
        let description = flotilla_world_file::load_world(&world).unwrap().initial_description().unwrap();
        let ids: Vec<(&str, &str, BodyId)> = description
            .models
            .iter()
            .flat_map(|m| m.bodies.iter().map(move |b| (m.name.as_str(), b.name.as_str(), b.id)))
            .collect();
        assert_eq!(ids, vec![("robot", "base", 1), ("robot", "halo", 2), ("crate", "box", 3)]);
        description
    }

    /// `body` pressing on `peer` at (6.75, 5) m along +x with 12.5 N.
    pub fn pressing(body: BodyId, peer: ContactPeer) -> Contact {
        let mut points = [ContactPoint::default(); 2];
        points[0] = ContactPoint { position_m: [6.75, 5.0], force_n: 12.5 };
        Contact { body, peer, normal: [1.0, 0.0], point_count: 1, points }
    }

    /// `body` overlapping `peer`, a sensor footprint being involved.
    pub fn touching_sensor(body: BodyId, peer: ContactPeer) -> Contact {
        Contact { body, peer, normal: [0.0; 2], point_count: 0, points: [ContactPoint::default(); 2] }
    }

    #[test]
    fn bodies_are_named_by_model_and_body_and_layers_by_their_name() {
        let names = ContactNames::of(&contact_world());
        assert_eq!(names.of_peer(ContactPeer::Body(3)), Some(("crate", "box")));
        assert_eq!(names.of_peer(ContactPeer::Layer(0)), Some(("walls", "walls")));
        assert_eq!(names.of_peer(ContactPeer::Body(99)), None);
        assert_eq!(names.of_peer(ContactPeer::Layer(1)), None);
    }
}
