//! Flatland's naming rules for topics and TF frames.
//!
//! A model's namespace is prepended to the topics of its plugins, unless the
//! topic starts with `/`. TF frames get `<namespace>_` prepended, unless they
//! start with `/`, in which case the slash is stripped (Flatland's
//! `Model::NameSpaceTF`).

/// The fully resolved ROS name (with a leading `/`) of a plugin topic.
pub fn resolve_topic(namespace: &str, topic: &str) -> String {
    if let Some(global) = topic.strip_prefix('/') {
        return format!("/{global}");
    }
    let ns = namespace.trim_matches('/');
    if ns.is_empty() {
        format!("/{topic}")
    } else {
        format!("/{ns}/{topic}")
    }
}

/// The TF frame id of a model-local frame.
pub fn resolve_frame(namespace: &str, frame: &str) -> String {
    if let Some(global) = frame.strip_prefix('/') {
        return global.to_string();
    }
    let ns = namespace.trim_matches('/');
    if ns.is_empty() {
        frame.to_string()
    } else {
        format!("{ns}_{frame}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatland_laser_test_names() {
        // From Flatland's laser test: namespace "r".
        assert_eq!(resolve_topic("r", "scan"), "/r/scan");
        assert_eq!(resolve_topic("r", "/scan_center"), "/scan_center");
        assert_eq!(resolve_frame("r", "laser_front"), "r_laser_front");
        assert_eq!(resolve_frame("", "base"), "base");
        assert_eq!(resolve_frame("r", "/map"), "map");
        assert_eq!(resolve_topic("", "cmd_vel"), "/cmd_vel");
    }
}
