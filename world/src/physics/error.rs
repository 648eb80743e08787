//! What the physics world refuses, as data: the control services and ROS
//! services turn these into their replies' messages.

use flotilla_wire::geometry::{Pose2, Twist2};

/// A request the physics world refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PhysicsError {
    /// The world's step size cannot be represented.
    #[error("step size: {0}")]
    StepSize(String),
    /// Model names are unique.
    #[error("a model named \"{0}\" already exists")]
    ModelExists(String),
    /// No model of that name.
    #[error("no model named \"{0}\"")]
    NoModel(String),
    /// No map of that name.
    #[error("no map named \"{0}\"")]
    NoMap(String),
    /// A model with no body has no pose or twist.
    #[error("model \"{0}\" has no body")]
    NoBody(String),
    /// The world is full.
    #[error("the world already holds {held} bodies; the maximum is {max}")]
    TooManyBodies {
        /// Bodies held now.
        held: usize,
        /// The most it may hold.
        max: usize,
    },
    /// A pose with NaN or infinity in it.
    #[error("pose must be finite, got {0:?}")]
    NonFinitePose(Pose2),
    /// A twist with NaN or infinity in it.
    #[error("twist must be finite, got {0:?}")]
    NonFiniteTwist(Twist2),
    /// A plugin entry that does not parse (the loader checks them all,
    /// so only a description from elsewhere has one).
    #[error("{0}")]
    BadPlugin(String),
}
