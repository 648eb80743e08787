//! Every message type and service by its ROS name, for programs that learn
//! a topic's type at run time (the Python package, tools that read a
//! recording): [`visit_message`] calls a [`MessageVisitor`] with the Rust
//! type a name stands for, [`visit_service`] a [`ServiceVisitor`] with a
//! service's request and response types. One list, so a type added to the
//! crate and left out here is caught by the tests below.

use crate::services::Service;
use crate::{
    action_msgs, builtin_interfaces, flatland_msgs, geometry_msgs, nav_msgs, people_msgs, rmf_door_msgs, rmf_lift_msgs,
    rosgraph_msgs, sensor_msgs, simulation_interfaces as si, std_msgs, std_srvs, tf2_msgs, visualization_msgs,
    RosMessage, RosService,
};

/// Something done with a message type known only by name.
pub trait MessageVisitor {
    /// What it gives back.
    type Output;
    /// Called with the type the name stands for.
    fn visit<T: RosMessage + Default>(self) -> Self::Output;
}

/// Something done with a service's request and response types.
pub trait ServiceVisitor {
    /// What it gives back.
    type Output;
    /// Called with the service's types.
    fn visit<S: RosService>(self) -> Self::Output
    where
        S::Request: Default,
        S::Response: Default;
}

macro_rules! message_types {
    ($($type:ty),* $(,)?) => {
        /// Every message type by name, `package/msg/Type`.
        pub fn message_types() -> Vec<&'static str> {
            vec![$(<$type as RosMessage>::TYPE_NAME),*]
        }

        /// Calls `visitor` with the message type named `type_name`
        /// (`package/msg/Type`); `None` for a name no type here has.
        pub fn visit_message<V: MessageVisitor>(type_name: &str, visitor: V) -> Option<V::Output> {
            $(if type_name == <$type as RosMessage>::TYPE_NAME {
                return Some(visitor.visit::<$type>());
            })*
            None
        }
    };
}

message_types!(
    action_msgs::GoalStatusArray,
    builtin_interfaces::Time,
    builtin_interfaces::Duration,
    flatland_msgs::Vector2,
    flatland_msgs::Collision,
    flatland_msgs::Collisions,
    geometry_msgs::Vector3,
    geometry_msgs::Point,
    geometry_msgs::Quaternion,
    geometry_msgs::Pose,
    geometry_msgs::Pose2D,
    geometry_msgs::Twist,
    geometry_msgs::TwistStamped,
    geometry_msgs::Transform,
    geometry_msgs::TransformStamped,
    geometry_msgs::PoseWithCovariance,
    geometry_msgs::TwistWithCovariance,
    geometry_msgs::TwistWithCovarianceStamped,
    geometry_msgs::PoseStamped,
    geometry_msgs::Accel,
    nav_msgs::Odometry,
    nav_msgs::OccupancyGrid,
    people_msgs::Person,
    people_msgs::People,
    rmf_door_msgs::DoorMode,
    rmf_door_msgs::DoorRequest,
    rmf_door_msgs::DoorState,
    rmf_lift_msgs::LiftRequest,
    rmf_lift_msgs::LiftState,
    rosgraph_msgs::Clock,
    sensor_msgs::LaserScan,
    sensor_msgs::NavSatFix,
    sensor_msgs::Imu,
    sensor_msgs::BatteryState,
    sensor_msgs::Range,
    sensor_msgs::PointCloud2,
    sensor_msgs::CompressedImage,
    sensor_msgs::JointState,
    std_msgs::Header,
    std_msgs::ColorRGBA,
    std_msgs::Bool,
    std_msgs::StdString,
    tf2_msgs::TFMessage,
    visualization_msgs::Marker,
    visualization_msgs::MarkerArray,
);

/// Calls `visitor` with the request and response types of `service`.
pub fn visit_service<V: ServiceVisitor>(service: Service, visitor: V) -> V::Output {
    match service {
        Service::SpawnModel => visitor.visit::<flatland_msgs::SpawnModel>(),
        Service::DeleteModel => visitor.visit::<flatland_msgs::DeleteModel>(),
        Service::MoveModel => visitor.visit::<flatland_msgs::MoveModel>(),
        Service::Pause | Service::Resume | Service::TogglePause => visitor.visit::<std_srvs::Empty>(),
        Service::GetSimulatorFeatures => visitor.visit::<si::GetSimulatorFeatures>(),
        Service::SpawnEntity => visitor.visit::<si::SpawnEntity>(),
        Service::SpawnEntities => visitor.visit::<si::SpawnEntities>(),
        Service::DeleteEntity => visitor.visit::<si::DeleteEntity>(),
        Service::GetEntities => visitor.visit::<si::GetEntities>(),
        Service::GetEntityState => visitor.visit::<si::GetEntityState>(),
        Service::GetEntitiesStates => visitor.visit::<si::GetEntitiesStates>(),
        Service::GetEntityInfo => visitor.visit::<si::GetEntityInfo>(),
        Service::SetEntityInfo => visitor.visit::<si::SetEntityInfo>(),
        Service::GetEntityBounds => visitor.visit::<si::GetEntityBounds>(),
        Service::GetCurrentWorld => visitor.visit::<si::GetCurrentWorld>(),
        Service::GetSpawnables => visitor.visit::<si::GetSpawnables>(),
        Service::SetEntityState => visitor.visit::<si::SetEntityState>(),
        Service::GetSimulationState => visitor.visit::<si::GetSimulationState>(),
        Service::SetSimulationState => visitor.visit::<si::SetSimulationState>(),
        Service::ResetSimulation => visitor.visit::<si::ResetSimulation>(),
        Service::StepSimulation => visitor.visit::<si::StepSimulation>(),
        Service::GetAvailableWorlds => visitor.visit::<si::GetAvailableWorlds>(),
        Service::LoadWorld => visitor.visit::<si::LoadWorld>(),
        Service::UnloadWorld => visitor.visit::<si::UnloadWorld>(),
        Service::GetNamedPoses => visitor.visit::<si::GetNamedPoses>(),
        Service::GetNamedPoseBounds => visitor.visit::<si::GetNamedPoseBounds>(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A default message of the type, through its bytes and back.
    struct RoundTrip;
    impl MessageVisitor for RoundTrip {
        type Output = bool;
        fn visit<T: RosMessage + Default>(self) -> bool {
            let bytes = crate::encode(&T::default());
            crate::decode::<T>(&bytes).map(|back| crate::encode(&back) == bytes).unwrap_or(false)
        }
    }

    #[test]
    fn every_type_with_a_definition_is_listed_and_round_trips() {
        // Types only ever nested in others have no RosMessage of their own,
        // nor have Flatland's debug topic list and Vector3Stamped, defined
        // for readers of recordings but never published by Flotilla.
        const WITHOUT_A_TYPE: [&str; 7] = [
            "flatland_msgs/msg/DebugTopicList",
            "geometry_msgs/msg/Vector3Stamped",
            "nav_msgs/msg/MapMetaData",
            "sensor_msgs/msg/NavSatStatus",
            "sensor_msgs/msg/PointField",
            "visualization_msgs/msg/MeshFile",
            "visualization_msgs/msg/UVCoordinate",
        ];
        let listed = message_types();
        for &(name, _) in crate::definitions::DEFINITIONS {
            let known = visit_message(name, RoundTrip);
            if WITHOUT_A_TYPE.contains(&name) {
                assert_eq!(known, None, "{name} has no type here");
                continue;
            }
            assert_eq!(known, Some(true), "{name}: not listed, or its default does not round-trip");
            assert!(listed.contains(&name));
        }
        assert_eq!(visit_message("sensor_msgs/msg/Nonsense", RoundTrip), None);
    }

    /// The names of a service's halves.
    struct Halves;
    impl ServiceVisitor for Halves {
        type Output = &'static str;
        fn visit<S: RosService>(self) -> &'static str
        where
            S::Request: Default,
            S::Response: Default,
        {
            S::TYPE_NAME
        }
    }

    #[test]
    fn every_service_visits_its_own_type() {
        for service in Service::ALL {
            assert_eq!(visit_service(service, Halves), service.type_name(), "{service:?}");
        }
    }
}
