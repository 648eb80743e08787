//! Which models a node serves: `--models GLOB` and `--shard i/n`, decided
//! the same way by every node without talking.

use crate::role::Role;
use flotilla_wire::claim_book::instance_id;
use flotilla_wire::description::WorldDescription;

/// Which models a node serves: `--models GLOB` and `--shard i/n`.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    models: Option<globset::GlobMatcher>,
    shard: Option<(u64, u64)>,
}

/// A `--models` or `--shard` value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    /// The glob does not parse.
    #[error("--models {glob:?}: {reason}")]
    Glob {
        /// The glob as given.
        glob: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The shard is not `i/n` with `0 ≤ i < n`.
    #[error("--shard {given:?}: {reason}")]
    Shard {
        /// The value as given.
        given: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl Selection {
    /// From the command-line values (`--models`, `--shard i/n`).
    pub fn new(models: Option<&str>, shard: Option<&str>) -> Result<Selection, SelectionError> {
        let models = models
            .map(|glob| {
                globset::Glob::new(glob)
                    .map(|g| g.compile_matcher())
                    .map_err(|e| SelectionError::Glob { glob: glob.to_string(), reason: e.to_string() })
            })
            .transpose()?;
        let shard = shard.map(parse_shard).transpose()?;
        Ok(Selection { models, shard })
    }

    /// The ids of the instances of `role` in `description` this node would
    /// serve, claims aside.
    pub fn instances(&self, description: &WorldDescription, role: &Role) -> Vec<String> {
        description
            .models
            .iter()
            .filter(|m| self.serves(&m.name))
            .flat_map(|m| {
                m.plugins
                    .iter()
                    .filter(|p| p.plugin_type == role.plugin_type)
                    .map(|p| instance_id(&m.name, &p.name, role.aspect))
            })
            .collect()
    }

    /// Whether this node serves the model. Shards split models by a stable
    /// hash of their name, so every node agrees without talking.
    pub fn serves(&self, model: &str) -> bool {
        let by_name = self.models.as_ref().is_none_or(|glob| glob.is_match(model));
        let by_shard = self.shard.is_none_or(|(i, n)| flotilla_wire::seed::plugin_seed(0, model, "") % n == i);
        by_name && by_shard
    }
}

/// Reads `i/n` with `0 ≤ i < n`.
fn parse_shard(given: &str) -> Result<(u64, u64), SelectionError> {
    let bad = |reason: String| SelectionError::Shard { given: given.to_string(), reason };
    let (i, n) = given.split_once('/').ok_or_else(|| bad("must be i/n, e.g. 0/2".into()))?;
    let number = |text: &str| text.trim().parse::<u64>().map_err(|_| bad(format!("{text:?} is not a number")));
    let (i, n) = (number(i)?, number(n)?);
    if n == 0 || i >= n {
        return Err(bad("need 0 ≤ i < n".into()));
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::Selection;
    use crate::diff_drive::DiffDriveConfig;
    use flotilla_wire::description::{ModelDescription, PluginDescription, WorldDescription};

    fn robot(name: &str, plugins: &[(&str, &str)]) -> ModelDescription {
        ModelDescription {
            name: name.into(),
            namespace: name.into(),
            pose: Default::default(),
            model_path: "robot.model.yaml".into(),
            bodies: vec![],
            joints: vec![],
            plugins: plugins
                .iter()
                .map(|(t, n)| PluginDescription {
                    plugin_type: t.to_string(),
                    name: n.to_string(),
                    params_yaml: "{}".into(),
                })
                .collect(),
            map: String::new(),
            layer_mask: flotilla_wire::description::LayerBits::MAX,
        }
    }

    #[test]
    fn instances_are_those_of_the_role_on_the_selected_models() {
        let description = WorldDescription::of_models(vec![
            robot("robot1", &[("DiffDrive", "drive"), ("Laser", "laser")]),
            robot("robot2", &[("DiffDrive", "drive")]),
            robot("box", &[]),
        ]);
        let odom = &DiffDriveConfig::ODOM_ROLE;
        assert_eq!(Selection::default().instances(&description, odom), ["robot1/drive/odom", "robot2/drive/odom"]);
        let only_robot2 = Selection::new(Some("robot2"), None).unwrap();
        assert_eq!(only_robot2.instances(&description, odom), ["robot2/drive/odom"]);
    }

    #[test]
    fn shards_partition_the_models() {
        let names: Vec<String> = (0..50).map(|i| format!("robot{i}")).collect();
        let shards: Vec<Selection> = (0..3).map(|i| Selection::new(None, Some(&format!("{i}/3"))).unwrap()).collect();
        for name in &names {
            assert_eq!(shards.iter().filter(|s| s.serves(name)).count(), 1, "{name} is served exactly once");
        }
        assert!(shards.iter().all(|s| names.iter().any(|n| s.serves(n))), "no shard is empty");
    }

    #[test]
    fn globs_and_bad_shards() {
        let s = Selection::new(Some("robot[12]"), None).unwrap();
        assert!(s.serves("robot1") && !s.serves("robot3"));
        for bad in ["2/2", "1", "a/b", "0/0"] {
            assert!(Selection::new(None, Some(bad)).is_err(), "{bad}");
        }
    }
}
