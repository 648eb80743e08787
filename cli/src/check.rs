//! `flotilla check WORLD`: validate without running anything.

use std::collections::BTreeMap;
use std::path::Path;

use flotilla_protocol::plugins::registry::binaries_for;
use flotilla_world_file::load_world;

/// Loads the world and every map and model, validates every plugin entry of
/// the implemented types, and reports the types no node implements.
pub fn check(world: &Path) -> anyhow::Result<()> {
    let spec = load_world(world)?;
    let segments: usize = spec.layers.iter().map(|l| l.segments.len()).sum();
    println!(
        "{}: ok — {} layers ({}), {} wall segments, {} models",
        world.display(),
        spec.layers.len(),
        spec.layer_names.join(", "),
        segments,
        spec.models.len()
    );
    let mut served: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut unserved: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for model in &spec.models {
        for plugin in &model.plugins {
            let instance = format!("{}/{}", model.name, plugin.name);
            match binaries_for(&plugin.plugin_type) {
                Some(_) => served.entry(&plugin.plugin_type).or_default().push(instance),
                None => unserved.entry(&plugin.plugin_type).or_default().push(instance),
            }
        }
    }
    for (plugin_type, instances) in &served {
        let bins = binaries_for(plugin_type).unwrap_or_default().join(" + ");
        println!("  {plugin_type}: {} instance(s), served by {bins}: {}", instances.len(), instances.join(", "));
    }
    for (plugin_type, instances) in &unserved {
        println!("  warning: no node implements plugin type {plugin_type} yet: {}", instances.join(", "));
    }
    for world_plugin in &spec.world_plugin_types {
        println!("  warning: no node implements world plugin type {world_plugin} yet");
    }
    Ok(())
}
