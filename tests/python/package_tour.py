#!/usr/bin/env python3
"""The flotilla Python package against a running room world (lockstep,
paused, with its drive, odometry and laser nodes): every part of the API a
user meets first, and the errors they get when they get something wrong.
Run by tests/tests/python_package.rs; exits non-zero on the first failure."""

import argparse
import math
import sys

import flotilla
import numpy as np


def check(condition: bool, what: str) -> None:
    if not condition:
        sys.exit(f"FAILED: {what}")


def expect_error(kind: type[BaseException], words: list[str], action) -> None:
    try:
        action()
    except kind as e:
        text = str(e)
        check(all(w in text for w in words), f"{kind.__name__} should name {words}: {text!r}")
        return
    sys.exit(f"FAILED: expected {kind.__name__} naming {words}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connect", required=True)
    parser.add_argument("--sim", required=True)
    parser.add_argument("--box", required=True, help="a model file to spawn")
    args = parser.parse_args()

    expect_error(flotilla.NoWorld, ["nosuch"], lambda: flotilla.Sim(args.connect, sim="nosuch", timeout=1.0))

    # Codecs: every type Flotilla speaks, through its bytes and back.
    for ros_type in flotilla.message_types():
        message = flotilla.decode(ros_type, flotilla.encode(ros_type, {}))
        check(isinstance(message, dict), ros_type)
    expect_error(KeyError, ["sensor_msgs/msg/Nope", "LaserScan"], lambda: flotilla.encode("sensor_msgs/msg/Nope", {}))
    expect_error(ValueError, ["LaserScan", "malformed"], lambda: flotilla.decode("sensor_msgs/msg/LaserScan", b"\0"))

    sim = flotilla.Sim(args.connect, sim=args.sim)
    check(sim.models() == ["robot"], f"models {sim.models()}")
    types = sorted(p["plugin_type"] for p in sim.plugins("robot"))
    check(types == ["DiffDrive", "Laser"], f"plugins {types}")
    expect_error(flotilla.UnknownModel, ["nobody", "robot"], lambda: sim.model("nobody"))
    topics = sim.topics()
    check(topics.get("robot/scan") == "sensor_msgs/msg/LaserScan", f"topics {topics}")
    check(topics.get("clock") == "rosgraph_msgs/msg/Clock", "clock")
    check(sim.inputs("robot").get("robot/cmd_vel", "").startswith("geometry_msgs/msg/Twist"), str(sim.inputs()))
    expect_error(flotilla.UnknownTopic, ["robot/nope"], lambda: sim.subscribe("robot/nope"))
    expect_error(ValueError, ["Twist", "linera"], lambda: sim.publish("robot/cmd_vel", {"linera": {"x": 1.0}}))

    # Lockstep: drive 1 s at 0.5 m/s, the world waiting for this program.
    scans = sim.subscribe("robot/scan")
    with flotilla.Participant(sim, "tour") as me:
        me.watch("robot/odometry/ground_truth")
        sim.resume()
        state = me.next_state()
        first = state["step"]
        while state["step"] < first + 200:
            sim.cmd_vel("robot", linear=0.5, stamp_ns=state["time_ns"])
            me.done(state)
            state = me.next_state()
        check(list(state["ids"]) == sorted(state["ids"]), "bodies in id order")
        check(state["poses"].shape == (len(state["ids"]), 3), f"poses {state['poses'].shape}")
        x = me.latest["robot/odometry/ground_truth"]["pose"]["pose"]["position"]["x"]
        check(5.35 < x < 5.55, f"0.5 m/s for 1 s from x = 5 m: {x}")
        me.done(state)
    scan = scans.get(timeout=10)
    check(isinstance(scan["ranges"], np.ndarray) and scan["ranges"].dtype == np.float32, "ranges as float32")
    check(len(scan["ranges"]) == 16, f"16 beams: {len(scan['ranges'])}")
    check(scan["header"]["frame_id"] != "", "scan frame")
    sim.session.put("robot/scan", b"not a scan")
    sim.wait_until(lambda: scans.dropped == 1, sim_timeout=math.inf, wall_timeout=10)
    check("LaserScan" in (scans.last_error or ""), f"garbage dropped and named: {scans.last_error}")

    # Control: pause, step, move, spawn, delete, services, reset.
    sim.pause()
    sim.wait_until(lambda: sim.time() is not None, sim_timeout=math.inf, wall_timeout=10)
    t0 = sim.time()
    sim.step(20)
    sim.wait_until(lambda: sim.time() >= t0 + 20 * 0.005 - 1e-9, sim_timeout=math.inf, wall_timeout=20)
    sim.move("robot", 2.0, 3.0, 0.5)
    entity = sim.call("get_entity_state", {"entity": "robot"})
    position = entity["state"]["pose"]["position"]
    check(abs(position["x"] - 2.0) < 1e-6 and abs(position["y"] - 3.0) < 1e-6, f"moved to {position}")
    sim.spawn(args.box, "box1", 3.0, 3.0)
    check("box1" in sim.models(), "spawned")
    entities = sim.call("get_entities", {})
    check("box1" in str(entities), f"get_entities lists box1: {entities}")
    sim.delete("box1")
    check("box1" not in sim.models(), "deleted")
    expect_error(flotilla.UnknownModel, ["ghost"], lambda: sim.delete("ghost"))
    expect_error(flotilla.ServiceFailed, ["set_map"], lambda: sim.set_map("robot", "floor-9"))
    expect_error(KeyError, ["no_such_service"], lambda: sim.call("no_such_service"))
    sim.reset()
    entity = sim.call("get_entity_state", {"entity": "robot"})
    position = entity["state"]["pose"]["position"]
    check(abs(position["x"] - 5.0) < 1e-6 and abs(position["y"] - 5.0) < 1e-6, f"reset to (5, 5): {position}")
    sim.close()
    print("tour passed", flush=True)


if __name__ == "__main__":
    main()
