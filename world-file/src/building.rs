//! What `Door` and `Lift` entries cannot check alone: in a world of
//! several maps every door is on one of them, each lift floor's map is one
//! of the world's, and each floor's door a `Door` on that map.

use std::path::Path;

use flotilla_plugins::config::LoadError;
use flotilla_plugins::door::DoorConfig;
use flotilla_plugins::lift::LiftConfig;
use flotilla_plugins::{entry_of, PluginConfig, PluginContext};
use flotilla_wire::description::{MapDescription, ModelDescription};

/// Checks every door and lift of `models` against the world's `maps`.
pub(crate) fn check_building(
    models: &[ModelDescription],
    maps: &[MapDescription],
    layer_names: &[String],
) -> Result<(), LoadError> {
    // (door name, the map of its model)
    let mut doors: Vec<(String, &str)> = Vec::new();
    for model in models {
        let ctx = PluginContext::of(model, layer_names);
        for plugin in model.plugins.iter().filter(|p| p.plugin_type == DoorConfig::TYPE) {
            if !maps.is_empty() && model.map.is_empty() {
                let known: Vec<&str> = maps.iter().map(|m| m.name.as_str()).collect();
                return Err(LoadError::new(
                    Path::new(&model.model_path),
                    format!("model \"{}\" plugin \"{}\"", model.name, plugin.name),
                    format!(
                        "a door in a world of several maps must be on one: give the model a \"map\" ({})",
                        known.join(", ")
                    ),
                ));
            }
            if let Ok(config) = entry_of(plugin, ctx.model_file).and_then(|e| DoorConfig::parse(&e, &plugin.name, &ctx))
            {
                doors.push((config.door_name, model.map.as_str()));
            }
        }
    }
    for model in models {
        let ctx = PluginContext::of(model, layer_names);
        for plugin in model.plugins.iter().filter(|p| p.plugin_type == LiftConfig::TYPE) {
            let lift = entry_of(plugin, ctx.model_file).and_then(|e| LiftConfig::parse(&e, &plugin.name, &ctx))?;
            let error = |i: usize, why: String| {
                LoadError::new(
                    Path::new(&model.model_path),
                    format!("model \"{}\" plugin \"{}\"", model.name, plugin.name),
                    format!("\"floors\" index {i}: {why}"),
                )
            };
            for (i, floor) in lift.floors.iter().enumerate() {
                if !maps.iter().any(|m| m.name == floor.map) {
                    let known: Vec<&str> = maps.iter().map(|m| m.name.as_str()).collect();
                    let known =
                        if known.is_empty() { "none: add properties: maps".to_string() } else { known.join(", ") };
                    return Err(error(i, format!("map {:?} is not one of the world's maps ({known})", floor.map)));
                }
                if floor.door.is_empty() {
                    continue;
                }
                match doors.iter().find(|(name, _)| *name == floor.door) {
                    None => return Err(error(i, format!("no Door is named {:?}", floor.door))),
                    Some((_, map)) if *map != floor.map => {
                        return Err(error(
                            i,
                            format!("door {:?} is on map {map:?}, not on the floor's {:?}", floor.door, floor.map),
                        ))
                    }
                    Some(_) => {}
                }
            }
        }
    }
    Ok(())
}
