//! Flatland's `ModelTfPublisher`: the transform from a model's reference
//! body to each of its other bodies, and optionally world → reference.
//!
//! Bodies welded (directly or through other welds) to the reference never
//! move relative to it — Flotilla's welds are rigid — so their transforms
//! are static and go latched on `tf_static`, once. The others (on revolute
//! joints, or free) are broadcast on `tf` at `update_rate`, as Flatland does.

pub mod node;

use std::collections::BTreeSet;

use flotilla_messages::geometry_msgs::{Quaternion, Transform, TransformStamped, Vector3};
use flotilla_messages::std_msgs::Header;
use flotilla_plugins::model_tf_publisher::ModelTfPublisherConfig;
use flotilla_wire::description::{BodyKind, JointKind, ModelDescription};
use flotilla_wire::geometry::Pose2;
use flotilla_wire::names::resolve_frame;
use flotilla_wire::time::SimTime;
use flotilla_wire::update_timer::UpdateTimer;
use flotilla_wire::world_to_nodes::{BodyId, BodyState};

/// A body whose transform from the reference changes.
#[derive(Debug, Clone)]
struct MovingBody {
    id: BodyId,
    frame: String,
    /// Pose when it is static (not in world states), world frame.
    fixed_pose: Option<Pose2>,
}

/// One ModelTfPublisher instance.
#[derive(Debug, Clone)]
pub struct ModelTf {
    config: ModelTfPublisherConfig,
    timer: UpdateTimer,
    reference: BodyId,
    reference_frame: String,
    reference_fixed_pose: Option<Pose2>,
    rigid: Vec<TransformStamped>,
    moving: Vec<MovingBody>,
}

impl ModelTf {
    /// The instance of `config` on `model` (as described now).
    pub fn new(config: ModelTfPublisherConfig, model: &ModelDescription) -> Option<ModelTf> {
        let reference = model.body(&config.reference)?;
        let frame = |name: &str| resolve_frame(&model.namespace, name);
        let welded = welded_to(model, &reference.name);
        let fixed = |kind: BodyKind, pose: Pose2| (kind == BodyKind::Static).then_some(pose);
        let mut rigid = Vec::new();
        let mut moving = Vec::new();
        for body in &model.bodies {
            if body.name == reference.name || config.exclude.contains(&body.name) {
                continue;
            }
            if welded.contains(body.name.as_str()) {
                let relative = reference.pose.inverse().compose(&body.pose);
                rigid.push(transform(SimTime::default(), &frame(&reference.name), &frame(&body.name), relative));
            } else {
                moving.push(MovingBody {
                    id: body.id,
                    frame: frame(&body.name),
                    fixed_pose: fixed(body.kind, body.pose),
                });
            }
        }
        Some(ModelTf {
            timer: UpdateTimer::new(config.update_rate_hz),
            reference: reference.id,
            reference_frame: frame(&reference.name),
            reference_fixed_pose: fixed(reference.kind, reference.pose),
            rigid,
            moving,
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ModelTfPublisherConfig {
        &self.config
    }

    /// Reference → each welded body: fixed for good.
    pub fn static_transforms(&self) -> &[TransformStamped] {
        &self.rigid
    }

    /// Whether an update is due at this step (marks it taken).
    pub fn due(&mut self, now_ns: u64, step_ns: u64) -> bool {
        self.timer.check(now_ns, step_ns)
    }

    /// The changing transforms at `stamp`, given the world's body states
    /// (sorted by id): world → reference if asked for, then reference → each
    /// non-welded body. Appended to `out`.
    pub fn update(&self, stamp: SimTime, bodies: &[BodyState], out: &mut Vec<TransformStamped>) {
        let pose_of = |id: BodyId, fixed: Option<Pose2>| {
            bodies.binary_search_by_key(&id, |b| b.id).ok().map(|i| bodies[i].pose).or(fixed)
        };
        let Some(reference) = pose_of(self.reference, self.reference_fixed_pose) else { return };
        if self.config.publish_tf_world {
            out.push(transform(stamp, &self.config.world_frame_id, &self.reference_frame, reference));
        }
        let to_reference = reference.inverse();
        for body in &self.moving {
            if let Some(pose) = pose_of(body.id, body.fixed_pose) {
                out.push(transform(stamp, &self.reference_frame, &body.frame, to_reference.compose(&pose)));
            }
        }
    }
}

/// Every body joined to `root` through weld joints (root excluded).
fn welded_to<'a>(model: &'a ModelDescription, root: &'a str) -> BTreeSet<&'a str> {
    let mut reached: BTreeSet<&str> = BTreeSet::from([root]);
    loop {
        let before = reached.len();
        for joint in &model.joints {
            if !matches!(joint.kind, JointKind::Weld { .. }) {
                continue;
            }
            let [a, b] = [joint.bodies[0].as_str(), joint.bodies[1].as_str()];
            if reached.contains(a) != reached.contains(b) {
                reached.insert(a);
                reached.insert(b);
            }
        }
        if reached.len() == before {
            break;
        }
    }
    reached.remove(root);
    reached
}

fn transform(stamp: SimTime, parent: &str, child: &str, pose: Pose2) -> TransformStamped {
    TransformStamped {
        header: Header { stamp: stamp.to_ros(), frame_id: parent.to_string() },
        child_frame_id: child.to_string(),
        transform: Transform {
            translation: Vector3 { x: pose.x_m, y: pose.y_m, z: 0.0 },
            rotation: Quaternion::from_yaw(pose.theta_rad),
        },
    }
}

#[cfg(test)]
mod tests;
