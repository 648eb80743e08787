"""Every simulation_interfaces service through the bridge, with its failure codes.

Run by ros2_peer.py against the room world (one robot), playing. Each service is called once as it should work and once with the
bad input the standard gives a code for; the world is left stopped with the
room's annex (which names places) loaded.
"""

import si_types as si
from ros2_types import Header, Point, Pose, PoseStamped


def run(node, client, check, deadline, model):
    """`client(name, request_type, reply_type)` makes a service client; `check(label, ok, detail)`."""

    def call(service_name, request_type, reply_type, /, **fields):
        service = clients.get(service_name)
        if service is None:
            service = clients[service_name] = client(service_name, request_type, reply_type)
        return service.call(request_type(**fields), deadline())

    clients = {}
    S = si

    features = call("/get_simulator_features", S.GetSimulatorFeaturesRequest, S.GetSimulatorFeaturesReply).features
    expected = {0, 1, 2, 3, 4, 5, 8, 10, 11, 12, 13, 14, 20, 22, 23, 24, 25, 26, 31, 32, 33, 40, 43, 44, 45, 50}
    check(
        "get_simulator_features lists what works",
        expected <= set(features.features) and features.spawn_formats == ["yaml"],
        f"{sorted(features.features)} {features.spawn_formats}",
    )

    reply = call("/get_simulation_state", S.GetSimulationStateRequest, S.GetSimulationStateReply)
    check("get_simulation_state: playing", reply.result.result == S.OK and reply.state.state == S.PLAYING, str(reply))

    reply = call("/get_entity_state", S.GetEntityStateRequest, S.GetEntityStateReply, entity="robot")
    position = reply.state.pose.position
    check(
        "get_entity_state",
        reply.result.result == S.OK and 0.0 < position.x < 10.0 and reply.state.header.frame_id == "map",
        str(reply),
    )
    reply = call("/get_entity_state", S.GetEntityStateRequest, S.GetEntityStateReply, entity="ghost")
    check("get_entity_state: NOT_FOUND", reply.result.result == S.NOT_FOUND, str(reply.result))

    reply = call("/get_entities_states", S.GetEntitiesStatesRequest, S.GetEntitiesStatesReply)
    check(
        "get_entities_states",
        reply.result.result == S.OK and "robot" in reply.entities and len(reply.states) == len(reply.entities),
        str(reply.entities),
    )
    bad_filter = S.EntityFilters(filter="(")
    reply = call("/get_entities_states", S.GetEntitiesStatesRequest, S.GetEntitiesStatesReply, filters=bad_filter)
    check("get_entities_states: a bad filter fails", reply.result.result == S.OPERATION_FAILED, str(reply.result))
    reply = call("/get_entities", S.GetEntitiesRequest, S.GetEntitiesReply, filters=bad_filter)
    check("get_entities: a bad filter fails", reply.result.result == S.OPERATION_FAILED, str(reply.result))

    reply = call("/get_entity_info", S.GetEntityInfoRequest, S.GetEntityInfoReply, entity="robot")
    check("get_entity_info: a robot", reply.result.result == S.OK and reply.info.category.category == 1, str(reply))
    reply = call("/get_entity_info", S.GetEntityInfoRequest, S.GetEntityInfoReply, entity="ghost")
    check("get_entity_info: NOT_FOUND", reply.result.result == S.NOT_FOUND, str(reply.result))

    reply = call("/get_entity_bounds", S.GetEntityBoundsRequest, S.GetEntityBoundsReply, entity="robot")
    corners = [(round(p.x, 6), round(p.y, 6)) for p in reply.bounds.points]
    check(
        "get_entity_bounds: the robot's 0.2 m circle",
        reply.result.result == S.OK and reply.bounds.type == S.TYPE_BOX and corners == [(0.2, 0.2), (-0.2, -0.2)],
        str(reply),
    )
    reply = call("/get_entity_bounds", S.GetEntityBoundsRequest, S.GetEntityBoundsReply, entity="ghost")
    check("get_entity_bounds: NOT_FOUND", reply.result.result == S.NOT_FOUND, str(reply.result))

    reply = call("/get_spawnables", S.GetSpawnablesRequest, S.GetSpawnablesReply)
    uris = [s.entity_resource.uri for s in reply.spawnables]
    check("get_spawnables", reply.result.result == S.OK and any(u.endswith(model) for u in uris), str(uris))

    def spawn_msg(name, x):
        pose = PoseStamped(header=Header(frame_id="world"), pose=Pose(position=Point(x=x, y=7.0)))
        return S.SpawnEntityMsg(name=name, entity_resource=S.Resource(uri=model), initial_pose=pose)

    reply = call(
        "/spawn_entities",
        S.SpawnEntitiesRequest,
        S.SpawnEntitiesReply,
        spawn_requests=[spawn_msg("crate_a", 2.0), spawn_msg("crate_b", 4.0)],
    )
    check(
        "spawn_entities",
        reply.result.result == S.OK and [r.entity_name for r in reply.results] == ["crate_a", "crate_b"],
        str(reply),
    )
    reply = call(
        "/spawn_entities",
        S.SpawnEntitiesRequest,
        S.SpawnEntitiesReply,
        spawn_requests=[spawn_msg("crate_c", 6.0), spawn_msg("crate_a", 8.0)],
    )
    codes = [r.result.result for r in reply.results]
    check(
        "spawn_entities: all or none, ENTITIES_SPAWN_FAILED",
        reply.result.result == S.ENTITIES_SPAWN_FAILED and codes[1] == S.NAME_NOT_UNIQUE,
        str(reply),
    )
    reply = call("/get_entities", S.GetEntitiesRequest, S.GetEntitiesReply)
    check(
        "get_entities: none of the failed batch",
        "crate_c" not in reply.entities and "crate_b" in reply.entities,
        str(reply.entities),
    )
    reply = call(
        "/spawn_entity",
        S.SpawnEntityRequest,
        S.SpawnEntityReply,
        name="crate_d",
        entity_resource=S.Resource(),
    )
    check("spawn_entity: NO_RESOURCE", reply.result.result == S.NO_RESOURCE, str(reply.result))

    info = S.EntityInfo(category=S.EntityCategory(category=5), description="a pallet", tags=["pallet"])
    reply = call("/set_entity_info", S.SetEntityInfoRequest, S.SetEntityInfoReply, entity="crate_a", info=info)
    check("set_entity_info", reply.result.result == S.OK, str(reply.result))
    reply = call("/set_entity_info", S.SetEntityInfoRequest, S.SetEntityInfoReply, entity="ghost", info=info)
    check("set_entity_info: NOT_FOUND", reply.result.result == S.NOT_FOUND, str(reply.result))
    tagged = S.EntityFilters(tags=S.TagsFilter(tags=["pallet"]))
    reply = call("/get_entities", S.GetEntitiesRequest, S.GetEntitiesReply, filters=tagged)
    check("get_entities by tag", reply.entities == ["crate_a"], str(reply.entities))

    target = S.EntityState(header=Header(frame_id="world"), pose=Pose(position=Point(x=3.0, y=3.0)))
    reply = call(
        "/set_entity_state",
        S.SetEntityStateRequest,
        S.SetEntityStateReply,
        entity="crate_a",
        state=target,
        set_pose=True,
    )
    check("set_entity_state", reply.result.result == S.OK, str(reply.result))
    reply = call("/get_entity_state", S.GetEntityStateRequest, S.GetEntityStateReply, entity="crate_a")
    position = reply.state.pose.position
    check("set_entity_state moved it", abs(position.x - 3.0) < 1e-6 and abs(position.y - 3.0) < 1e-6, str(position))
    nowhere = S.EntityState(header=Header(frame_id="odom"), pose=Pose(position=Point(x=1.0)))
    reply = call(
        "/set_entity_state",
        S.SetEntityStateRequest,
        S.SetEntityStateReply,
        entity="crate_a",
        state=nowhere,
        set_pose=True,
    )
    check(
        "set_entity_state: an unknown frame is INVALID_POSE",
        reply.result.result == S.SET_STATE_INVALID_POSE,
        str(reply.result),
    )

    for name in ["crate_a", "crate_b"]:
        reply = call("/delete_entity", S.DeleteEntityRequest, S.DeleteEntityReply, entity=name)
        check(f"delete_entity {name}", reply.result.result == S.OK, str(reply.result))
    reply = call("/delete_entity", S.DeleteEntityRequest, S.DeleteEntityReply, entity="ghost")
    check("delete_entity: NOT_FOUND", reply.result.result == S.NOT_FOUND, str(reply.result))

    reply = call("/get_named_poses", S.GetNamedPosesRequest, S.GetNamedPosesReply)
    check("get_named_poses: the room names none", reply.result.result == S.OK and reply.poses == [], str(reply))
    reply = call("/get_named_pose_bounds", S.GetNamedPoseBoundsRequest, S.GetNamedPoseBoundsReply, name="dock")
    check("get_named_pose_bounds: NOT_FOUND", reply.result.result == S.NOT_FOUND, str(reply.result))

    reply = call("/step_simulation", S.StepSimulationRequest, S.StepSimulationReply, steps=5)
    check("step_simulation while playing fails", reply.result.result == S.OPERATION_FAILED, str(reply.result))
    paused = S.SimulationState(state=S.PAUSED)
    reply = call("/set_simulation_state", S.SetSimulationStateRequest, S.SetSimulationStateReply, state=paused)
    check("set_simulation_state: paused", reply.result.result == S.OK, str(reply.result))
    reply = call("/set_simulation_state", S.SetSimulationStateRequest, S.SetSimulationStateReply, state=paused)
    check(
        "set_simulation_state: ALREADY_IN_TARGET_STATE",
        reply.result.result == S.ALREADY_IN_TARGET_STATE,
        str(reply.result),
    )
    reply = call("/step_simulation", S.StepSimulationRequest, S.StepSimulationReply, steps=5)
    check("step_simulation while paused", reply.result.result == S.OK, str(reply.result))
    playing = S.SimulationState(state=S.PLAYING)
    reply = call("/set_simulation_state", S.SetSimulationStateRequest, S.SetSimulationStateReply, state=playing)
    check("set_simulation_state: playing", reply.result.result == S.OK, str(reply.result))

    reply = call("/reset_simulation", S.ResetSimulationRequest, S.ResetSimulationReply, scope=1)
    check(
        "reset_simulation: time alone is FEATURE_UNSUPPORTED",
        reply.result.result == S.FEATURE_UNSUPPORTED,
        str(reply.result),
    )
    reply = call("/reset_simulation", S.ResetSimulationRequest, S.ResetSimulationReply, scope=0)
    check("reset_simulation", reply.result.result == S.OK, str(reply.result))

    reply = call("/get_current_world", S.GetCurrentWorldRequest, S.GetCurrentWorldReply)
    uri = reply.world.world_resource.uri
    check("get_current_world", reply.result.result == S.OK and uri.endswith("world.yaml"), str(reply.world))
    reply = call("/get_available_worlds", S.GetAvailableWorldsRequest, S.GetAvailableWorldsReply)
    found = [w.world_resource.uri for w in reply.worlds]
    check("get_available_worlds", reply.result.result == S.OK and uri in found, str(found))

    reply = call("/load_world", S.LoadWorldRequest, S.LoadWorldReply)
    check("load_world: NO_RESOURCE", reply.result.result == S.WORLD_NO_RESOURCE, str(reply.result))
    reply = call("/load_world", S.LoadWorldRequest, S.LoadWorldReply, world_resource=S.Resource(uri="robot.urdf"))
    check("load_world: UNSUPPORTED_FORMAT", reply.result.result == S.WORLD_UNSUPPORTED_FORMAT, str(reply.result))
    reply = call("/unload_world", S.UnloadWorldRequest, S.UnloadWorldReply)
    check("unload_world", reply.result.result == S.OK, str(reply.result))
    reply = call("/get_current_world", S.GetCurrentWorldRequest, S.GetCurrentWorldReply)
    check("get_current_world: NO_WORLD_LOADED", reply.result.result == S.NO_WORLD_LOADED, str(reply.result))
    reply = call("/unload_world", S.UnloadWorldRequest, S.UnloadWorldReply)
    check("unload_world: NO_WORLD_LOADED", reply.result.result == S.NO_WORLD_LOADED, str(reply.result))
    reply = call("/load_world", S.LoadWorldRequest, S.LoadWorldReply, world_resource=S.Resource(uri=uri))
    check("load_world", reply.result.result == S.OK and reply.world.world_resource.uri == uri, str(reply))
    reply = call("/get_entities", S.GetEntitiesRequest, S.GetEntitiesReply)
    check("the loaded world has its robot", reply.entities == ["robot"], str(reply.entities))

    # Another world of the same directory, which names places.
    annex = uri.rsplit("/", 1)[0] + "/annex.world.yaml"
    reply = call("/load_world", S.LoadWorldRequest, S.LoadWorldReply, world_resource=S.Resource(uri=annex))
    check("load_world: another world", reply.result.result == S.OK, str(reply.result))
    reply = call("/get_named_poses", S.GetNamedPosesRequest, S.GetNamedPosesReply)
    names = [p.name for p in reply.poses]
    check("get_named_poses", reply.result.result == S.OK and names == ["dock", "middle", "goal"], str(reply))
    reply = call("/get_named_pose_bounds", S.GetNamedPoseBoundsRequest, S.GetNamedPoseBoundsReply, name="dock")
    check("get_named_pose_bounds", reply.result.result == S.OK and reply.bounds.type != 0, str(reply))
