//! The zenoh-plugin-ros2dds configuration the bridge runs with.

use serde_json::{json, Value};

/// The plugin's options that Flotilla exposes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ros2ddsOptions {
    /// DDS domain id.
    pub domain: u32,
    /// Name of the bridge's ROS node.
    pub node_name: String,
    /// Only talk DDS with this host (ROS_LOCALHOST_ONLY).
    pub localhost_only: bool,
    /// Regular expression of ROS names to route (all when `None`).
    pub allow: Option<String>,
    /// Regular expression of ROS names never to route.
    pub deny: Option<String>,
}

/// The JSON the plugin reads under `plugins/ros2dds`. The namespace stays
/// `/`: Zenoh keys and ROS names are the same (ARCHITECTURE.md, "Rules every process follows").
pub fn plugin_json(options: &Ros2ddsOptions) -> Value {
    let mut config = json!({
        "namespace": "/",
        "nodename": options.node_name,
        "domain": options.domain,
        "ros_localhost_only": options.localhost_only,
    });
    // The plugin takes one allow or one deny list per entity kind.
    let kinds = ["publishers", "subscribers", "service_servers", "service_clients", "action_servers", "action_clients"];
    let list = |re: &str| {
        let mut m = serde_json::Map::new();
        for kind in kinds {
            m.insert(kind.into(), json!([re]));
        }
        Value::Object(m)
    };
    if let Some(re) = &options.allow {
        config["allow"] = list(re);
    }
    if let Some(re) = &options.deny {
        config["deny"] = list(re);
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_is_root_and_lists_cover_every_entity_kind() {
        let options = Ros2ddsOptions {
            domain: 7,
            node_name: "flotilla_bridge".into(),
            allow: Some("^/robot.*".into()),
            ..Default::default()
        };
        let config = plugin_json(&options);
        assert_eq!(config["namespace"], "/");
        assert_eq!(config["domain"], 7);
        assert_eq!(config["allow"]["service_servers"][0], "^/robot.*");
        assert!(config.get("deny").is_none());
    }
}
