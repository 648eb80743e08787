//! Announces the simulation's topics and services to zenoh-plugin-ros2dds
//! the way another bridge would: one liveliness token per publisher
//! (`@/<zid>/@ros2_lv/MP/<key>/<type>/<qos>`), per service server
//! (`.../SS/<key>/<type>`) and per action server (`.../AS/<key>/<type>`).
//! The plugin then creates the DDS writers, service servers and action
//! servers at once, so `ros2 topic list`, `ros2 topic echo`, `ros2 service
//! call` and `ros2 action send_goal` work before any ROS node asked for them.
//!
//! Subscriptions (`cmd_vel`) are not announced: the plugin routes a ROS
//! publisher as soon as it sees one, with the type that publisher uses,
//! which is how one `cmd_vel` accepts both Twist and TwistStamped.

use std::collections::BTreeMap;

use zenoh::liveliness::LivelinessToken;

use flotilla_plugins::surface::{Durability, Surface};

/// How the plugin escapes `/` inside one key chunk.
const SLASH: &str = "§";

// DDS QoS kinds as the plugin writes them (CycloneDDS enum values).
const RELIABLE: u8 = 1;
const VOLATILE: u8 = 0;
const TRANSIENT_LOCAL: u8 = 1;
const KEEP_LAST: u8 = 0;

fn escape(s: &str) -> String {
    s.replace('/', SLASH)
}

/// The liveliness key of every announcement of `surface`, made by the
/// session with id `zid`.
pub fn announcement_keys(zid: &str, surface: &Surface) -> Vec<String> {
    let mut keys = Vec::with_capacity(surface.topics.len() + surface.services.len());
    for t in &surface.topics {
        let durability = match t.durability {
            Durability::Volatile => VOLATILE,
            Durability::TransientLocal => TRANSIENT_LOCAL,
        };
        // keyless (ROS topics have no key) : reliability : durability : history,depth
        let qos = format!(":{RELIABLE}:{durability}:{KEEP_LAST},{}", t.depth);
        keys.push(format!("@/{zid}/@ros2_lv/MP/{}/{}/{qos}", escape(&t.key), escape(t.ros_type)));
    }
    for s in &surface.services {
        keys.push(format!("@/{zid}/@ros2_lv/SS/{}/{}", escape(&s.key), escape(s.ros_type)));
    }
    for a in &surface.actions {
        keys.push(format!("@/{zid}/@ros2_lv/AS/{}/{}", escape(&a.key), escape(a.ros_type)));
    }
    keys
}

/// The live announcements, kept in step with the surface.
#[derive(Default)]
pub struct Announcer {
    tokens: BTreeMap<String, LivelinessToken>,
}

impl Announcer {
    /// Declares the tokens of `surface` that are new and undeclares those
    /// that are gone (a deleted robot's topics disappear from ROS).
    pub async fn update(&mut self, session: &zenoh::Session, surface: &Surface) {
        let wanted = announcement_keys(&session.zid().to_string(), surface);
        self.tokens.retain(|key, _| wanted.contains(key));
        for key in wanted {
            if self.tokens.contains_key(&key) {
                continue;
            }
            match session.liveliness().declare_token(key.clone()).await {
                Ok(token) => {
                    self.tokens.insert(key, token);
                }
                Err(e) => tracing::warn!("cannot announce {key}: {e}"),
            }
        }
    }

    /// Number of live announcements.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether nothing is announced.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_plugins::surface::{ServiceEndpoint, Topic};

    #[test]
    fn keys_follow_the_plugin_format() {
        let surface = Surface {
            topics: vec![Topic {
                key: "robot1/scan".into(),
                ros_type: "sensor_msgs/msg/LaserScan",
                durability: Durability::Volatile,
                depth: 10,
            }],
            services: vec![ServiceEndpoint { key: "spawn_model".into(), ros_type: "flatland_msgs/srv/SpawnModel" }],
            actions: vec![ServiceEndpoint {
                key: "simulate_steps".into(),
                ros_type: "simulation_interfaces/action/SimulateSteps",
            }],
        };
        assert_eq!(
            announcement_keys("abc", &surface),
            vec![
                "@/abc/@ros2_lv/MP/robot1§scan/sensor_msgs§msg§LaserScan/:1:0:0,10",
                "@/abc/@ros2_lv/SS/spawn_model/flatland_msgs§srv§SpawnModel",
                "@/abc/@ros2_lv/AS/simulate_steps/simulation_interfaces§action§SimulateSteps",
            ]
        );
    }
}
