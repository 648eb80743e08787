//! `flotilla check WORLD`: validate without running anything.

use std::collections::BTreeMap;
use std::path::Path;

use flotilla_plugins::registry::binaries_for;
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
    for map in &spec.maps {
        let on: Vec<&str> = spec.models.iter().filter(|m| m.map == map.name).map(|m| m.name.as_str()).collect();
        let layers: Vec<&str> = spec
            .layer_names
            .iter()
            .enumerate()
            .filter(|(i, _)| map.layers & (1 << i) != 0)
            .map(|(_, n)| n.as_str())
            .collect();
        println!(
            "  map {}: layers {}; on it: {}",
            map.name,
            layers.join(", "),
            if on.is_empty() { "-".to_string() } else { on.join(", ") }
        );
    }
    if let Some((file, transitions)) = &spec.transitions {
        let commands = transitions.iter().filter(|t| t.command.is_some()).count();
        println!(
            "  transitions: {} from {} ({} on a command, {} automatic), served by {}",
            transitions.len(),
            file.display(),
            commands,
            transitions.len() - commands,
            flotilla_plugins::maps::BINARY
        );
    } else if !spec.maps.is_empty() {
        println!("  maps served by {} (map names and grids; no transitions file)", flotilla_plugins::maps::BINARY);
    }
    for world_plugin in &spec.world_plugin_types {
        println!("  warning: no node implements world plugin type {world_plugin} yet");
    }
    Ok(())
}
