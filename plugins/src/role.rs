//! Who serves a plugin type: a [`Role`] names the binary, the claim aspect
//! and what serving it does to the simulation. Each type's config module
//! declares its roles; the [`registry`](crate::registry) lists them.

/// A process that serves one side of a plugin type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Role {
    /// The plugin type served, e.g. `DiffDrive`.
    pub plugin_type: &'static str,
    /// The binary that serves it, e.g. `flotilla-odom`.
    pub binary: &'static str,
    /// The claim aspect, the last chunk of an instance id
    /// (`<model>/<plugin>/<aspect>`), e.g. `odom`.
    pub aspect: &'static str,
    /// What serving it does to the simulation.
    pub kind: RoleKind,
}

/// What a role does to the simulation, which decides what lockstep must
/// wait for after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RoleKind {
    /// Publishes the topics its instances declare and nothing else, and
    /// sends the world nothing but its lockstep reports (laser, odometry,
    /// bumper, …).
    Sensor,
    /// Moves bodies: sends the world actuation (drives, Tween).
    Actuator,
    /// Commands the simulation for someone else: the Pioneer interface
    /// publishes its robots' `cmd_vel`, the map-transition manager asks the
    /// world for map changes.
    Commander,
}

impl Role {
    /// A [`RoleKind::Sensor`] role.
    pub const fn sensor(plugin_type: &'static str, binary: &'static str, aspect: &'static str) -> Role {
        Role { plugin_type, binary, aspect, kind: RoleKind::Sensor }
    }

    /// A [`RoleKind::Actuator`] role.
    pub const fn actuator(plugin_type: &'static str, binary: &'static str, aspect: &'static str) -> Role {
        Role { plugin_type, binary, aspect, kind: RoleKind::Actuator }
    }

    /// A [`RoleKind::Commander`] role.
    pub const fn commander(plugin_type: &'static str, binary: &'static str, aspect: &'static str) -> Role {
        Role { plugin_type, binary, aspect, kind: RoleKind::Commander }
    }
}
