//! The `simulation_interfaces` services about whole worlds and the places
//! they name: GetCurrentWorld, GetAvailableWorlds, LoadWorld, UnloadWorld,
//! GetNamedPoses and GetNamedPoseBounds.
//!
//! Worlds are Flatland world files. LoadWorld and GetAvailableWorlds read
//! only inside the directories spawn requests may read (the first world
//! file's directory and any `--model-dir`), for the same reason: a service
//! that opens any path a caller names would read any file the world process
//! can.

use std::path::{Path, PathBuf};

use flotilla_messages::geometry_msgs::{Point, Pose, Quaternion, Vector3};
use flotilla_messages::simulation_interfaces::{self as si, result_code, world_result_code};
use flotilla_messages::std_srvs::EmptyMessage;
use flotilla_wire::control::ControlRequest;
use flotilla_wire::world_to_nodes::WorldChange;
use flotilla_world_file::PoseBounds;

use super::{tags_filter_check, tags_pass, World};
use crate::control::{self, RunState};
use crate::physics::Physics;

/// How deep GetAvailableWorlds looks below a source directory.
const MAX_SEARCH_DEPTH: usize = 4;

/// Larger YAML files are not looked into for being a world (maps of line
/// segments can be large; a world file is a few kilobytes).
const MAX_WORLD_FILE_BYTES: u64 = 1 << 20;

/// The world loaded: its name is the file's stem, its resource the path.
pub(super) fn get_current_world(
    _: EmptyMessage,
    world: World<'_>,
) -> (si::GetCurrentWorldResponse, Option<WorldChange>) {
    if !world.physics.has_world() {
        let result =
            si::SimResult::fail(world_result_code::NO_WORLD_LOADED, "no world is loaded (UnloadWorld emptied it)");
        return (si::GetCurrentWorldResponse { result, world: Default::default() }, None);
    }
    (si::GetCurrentWorldResponse { result: si::SimResult::ok(), world: current_world(world.physics) }, None)
}

fn current_world(physics: &Physics) -> si::WorldResource {
    let path = physics.world_path();
    let models = physics.model_count();
    let description = format!(
        "Flatland world: layers {}; {models} model{}",
        physics.layer_names().join(", "),
        if models == 1 { "" } else { "s" }
    );
    world_resource(path, description)
}

fn world_resource(path: &Path, description: String) -> si::WorldResource {
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    let resource = si::Resource { uri: path.to_string_lossy().into_owned(), resource_string: String::new() };
    si::WorldResource { name, world_resource: resource, description, tags: vec![] }
}

/// Replaces the whole world by a world file, leaving the simulation
/// stopped (the standard's rule); nodes follow the new description.
pub(super) fn load_world(req: si::LoadWorldRequest, world: World<'_>) -> (si::LoadWorldResponse, Option<WorldChange>) {
    let fail = |code: u8, message: String| {
        (si::LoadWorldResponse { result: si::SimResult::fail(code, message), world: Default::default() }, None)
    };
    let resource = &req.world_resource;
    if resource.uri.is_empty() {
        return match resource.resource_string.is_empty() {
            true => fail(world_result_code::NO_RESOURCE, "neither uri nor resource_string was given".into()),
            false => fail(
                world_result_code::UNSUPPORTED_FORMAT,
                "a world passed as a string is not supported; give its world file's path in uri".into(),
            ),
        };
    }
    let path = match local_path(world.physics, &resource.uri) {
        Ok(path) => path,
        Err(message) => return fail(world_result_code::UNSUPPORTED_FORMAT, message),
    };
    if !path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
        return fail(
            world_result_code::UNSUPPORTED_FORMAT,
            format!("{}: only Flatland world files (.yaml) are supported", path.display()),
        );
    }
    let path = match allowed(world.run, &path) {
        Ok(path) => path,
        Err((code, message)) => return fail(code, message),
    };
    let spec = match flotilla_world_file::load_world(&path) {
        Ok(spec) => spec,
        // A file the world names (a map, a model) that is missing is a
        // missing asset; anything else is the world failing to parse.
        Err(e) if e.file != path && !e.file.exists() => return fail(world_result_code::MISSING_ASSETS, e.to_string()),
        Err(e) => return fail(world_result_code::RESOURCE_PARSE_ERROR, e.to_string()),
    };
    if req.fail_on_unsupported_element && !spec.world_plugin_types.is_empty() {
        return fail(
            world_result_code::UNSUPPORTED_ELEMENTS,
            format!("world plugins are not supported: {}", spec.world_plugin_types.join(", ")),
        );
    }
    if let Err(e) = world.physics.replace_world(&spec) {
        return fail(result_code::OPERATION_FAILED, e.to_string());
    }
    stop(world.physics, world.run);
    let loaded = si::LoadWorldResponse { result: si::SimResult::ok(), world: current_world(world.physics) };
    (loaded, Some(WorldChange::WorldLoaded { path: path.to_string_lossy().into_owned() }))
}

/// Empties the world, leaving the simulation stopped.
pub(super) fn unload_world(_: EmptyMessage, world: World<'_>) -> (si::ResultResponse, Option<WorldChange>) {
    let result = |result| si::ResultResponse { result };
    if !world.physics.has_world() {
        return (result(si::SimResult::fail(world_result_code::NO_WORLD_LOADED, "no world is loaded")), None);
    }
    if let Err(e) = world.physics.unload() {
        return (result(si::SimResult::fail(result_code::OPERATION_FAILED, e.to_string())), None);
    }
    stop(world.physics, world.run);
    (result(si::SimResult::ok()), Some(WorldChange::WorldUnloaded))
}

/// Paused, in the standard's STOPPED state (until played again).
fn stop(physics: &mut Physics, run: &mut RunState) {
    // Pausing cannot fail.
    let _ = control::handle(physics, run, ControlRequest::Pause);
    run.stopped = true;
}

/// The file a world `uri` names: a path (relative ones from the current
/// world file's directory) or a `file://` URI.
fn local_path(physics: &Physics, uri: &str) -> Result<PathBuf, String> {
    let written = uri.strip_prefix("file://").unwrap_or(uri);
    if written.contains("://") {
        return Err(format!("{uri:?}: only local files (a path or file:// URI) are supported"));
    }
    Ok(flotilla_world_file::resolve_path(physics.world_path(), written))
}

/// `path`, canonical, if it is inside the allowed directories.
fn allowed(run: &RunState, path: &Path) -> Result<PathBuf, (u8, String)> {
    let canonical = path
        .canonicalize()
        .map_err(|e| (world_result_code::RESOURCE_PARSE_ERROR, format!("world file {}: {e}", path.display())))?;
    let dirs = run.model_dirs.dirs();
    if dirs.iter().any(|dir| canonical.starts_with(dir)) {
        return Ok(canonical);
    }
    let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    Err((
        result_code::OPERATION_FAILED,
        format!(
            "{} is outside the allowed directories ({}); start the world with --model-dir to allow more",
            path.display(),
            dirs.join(", ")
        ),
    ))
}

/// Every Flatland world file in the allowed directories (and the
/// additional sources inside them), searched a few levels deep.
pub(super) fn get_available_worlds(
    req: si::GetAvailableWorldsRequest,
    world: World<'_>,
) -> (si::GetAvailableWorldsResponse, Option<WorldChange>) {
    let fail = |code: u8, message: String| {
        (si::GetAvailableWorldsResponse { result: si::SimResult::fail(code, message), worlds: vec![] }, None)
    };
    if let Err(result) = tags_filter_check(&req.filter) {
        return (si::GetAvailableWorldsResponse { result, worlds: vec![] }, None);
    }
    let mut files = Vec::new();
    let mut default_failures = Vec::new();
    for dir in world.run.model_dirs.dirs() {
        if let Err(e) = find_world_files(dir, 0, &mut files) {
            default_failures.push(format!("{}: {e}", dir.display()));
        }
    }
    let mut failures = Vec::new();
    for source in &req.additional_sources {
        let searched = local_path(world.physics, source)
            .and_then(|path| allowed(world.run, &path).map_err(|(_, message)| message))
            .and_then(|path| match path.is_dir() {
                true => find_world_files(&path, 0, &mut files).map_err(|e| format!("{}: {e}", path.display())),
                false => {
                    files.push(path);
                    Ok(())
                }
            });
        match searched {
            Ok(()) => {}
            // A remote source is not an offline one: nothing to search.
            Err(_) if req.offline_only && source.contains("://") && !source.starts_with("file://") => {}
            Err(message) => failures.push(message),
        }
    }
    files.sort();
    files.dedup();
    let worlds: Vec<si::WorldResource> = files
        .iter()
        .filter_map(|path| describe_world_file(path).map(|description| world_resource(path, description)))
        .filter(|w| tags_pass(&req.filter, &w.tags))
        .collect();
    // With continue_on_error, a failing default source only matters when
    // no source yielded a world (the standard's rule).
    let tolerated = req.continue_on_error && !worlds.is_empty();
    if !default_failures.is_empty() && !tolerated {
        return fail(world_result_code::DEFAULT_SOURCES_FAILED, default_failures.join("; "));
    }
    if !failures.is_empty() && !req.continue_on_error {
        return fail(result_code::OPERATION_FAILED, format!("sources not searched: {}", failures.join("; ")));
    }
    let mut result = si::SimResult::ok();
    let skipped: Vec<String> = default_failures.into_iter().chain(failures).collect();
    if !skipped.is_empty() {
        result.error_message = format!("sources not searched: {}", skipped.join("; "));
    }
    (si::GetAvailableWorldsResponse { result, worlds }, None)
}

/// Collects the YAML files under `dir` (hidden directories skipped).
fn find_world_files(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let hidden = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'));
        if path.is_dir() && !hidden && depth < MAX_SEARCH_DEPTH {
            // An unreadable subdirectory is not worth failing a search for.
            let _ = find_world_files(&path, depth + 1, files);
        } else if path.is_file() && path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            files.push(path);
        }
    }
    Ok(())
}

/// A description of the world file at `path` (its layers and how many
/// models), or `None` when it is not a world file.
fn describe_world_file(path: &Path) -> Option<String> {
    if std::fs::metadata(path).ok()?.len() > MAX_WORLD_FILE_BYTES {
        return None;
    }
    let glance = flotilla_world_file::glance_at_world(path)?;
    let models = glance.models;
    Some(format!(
        "Flatland world file: layers {}; {models} model{}",
        glance.layer_names.join(", "),
        if models == 1 { "" } else { "s" }
    ))
}

/// The places the world file names, those whose tags pass the filter.
pub(super) fn get_named_poses(
    req: si::GetNamedPosesRequest,
    world: World<'_>,
) -> (si::GetNamedPosesResponse, Option<WorldChange>) {
    if let Err(result) = tags_filter_check(&req.tags) {
        return (si::GetNamedPosesResponse { result, poses: vec![] }, None);
    }
    let poses = world
        .physics
        .named_poses()
        .iter()
        .filter(|p| tags_pass(&req.tags, &p.tags))
        .map(|p| si::NamedPose {
            name: p.name.clone(),
            description: p.description.clone(),
            tags: p.tags.clone(),
            pose: Pose {
                position: Point { x: p.pose.x_m, y: p.pose.y_m, z: 0.0 },
                orientation: Quaternion::from_yaw(p.pose.theta_rad),
            },
        })
        .collect();
    (si::GetNamedPosesResponse { result: si::SimResult::ok(), poses }, None)
}

/// The room at a named pose, in the pose's frame: a box (upper right,
/// then lower left corner), a sphere (centre, then the radius in x) or a
/// convex hull, as the world file gives it; empty bounds for none.
pub(super) fn get_named_pose_bounds(
    req: si::GetNamedPoseBoundsRequest,
    world: World<'_>,
) -> (si::GetNamedPoseBoundsResponse, Option<WorldChange>) {
    let Some(pose) = world.physics.named_poses().iter().find(|p| p.name == req.name) else {
        let result = si::SimResult::fail(result_code::NOT_FOUND, format!("no named pose \"{}\"", req.name));
        return (si::GetNamedPoseBoundsResponse { result, bounds: Default::default() }, None);
    };
    let point = |[x, y]: [f64; 2]| Vector3 { x, y, z: 0.0 };
    let bounds = match &pose.bounds {
        None => si::Bounds { kind: si::bounds_type::EMPTY, points: vec![] },
        Some(PoseBounds::Box { min, max }) => {
            si::Bounds { kind: si::bounds_type::BOX, points: vec![point(*max), point(*min)] }
        }
        Some(PoseBounds::Circle { center, radius }) => {
            si::Bounds { kind: si::bounds_type::SPHERE, points: vec![point(*center), point([*radius, 0.0])] }
        }
        Some(PoseBounds::Polygon(points)) => {
            si::Bounds { kind: si::bounds_type::CONVEX_HULL, points: points.iter().copied().map(point).collect() }
        }
    };
    (si::GetNamedPoseBoundsResponse { result: si::SimResult::ok(), bounds }, None)
}
