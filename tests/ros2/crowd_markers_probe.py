#!/usr/bin/env python3
"""An rclpy node (the ROS 2 Jazzy wheels from PyPI, over Fast DDS) that reads
the crowd's `visualization_msgs/MarkerArray` through the bridge, as rviz2
would, for `tests/tests/ros2_bridge.rs`.

Checks, against `configs/tests/crowd/room.world.yaml` run with `--ros`:
  1. markers arrive on /crowd/markers with the rviz2 types: a CYLINDER per
     person (`people`), a CUBE the trolley's size (`scripted`), and an ARROW
     (`velocities`) and a TEXT_VIEW_FACING (`names`) per agent, all in frame
     `map`, with the same ids across namespaces;
  2. every agent of the world is named: alice, bob, couple_1, couple_2, trolley;
  3. alice walks: her cylinder moves between the first and the last array,
     and her arrow's length is her speed, within the model's bounds (m/s).
Prints one `ok: <check>` line per check; exits non-zero on the first failure.

Usage: crowd_markers_probe.py [--timeout 40]
(ROS_DOMAIN_ID, RMW_IMPLEMENTATION and ROS_AUTOMATIC_DISCOVERY_RANGE come
from the environment the test sets.)
"""

import argparse
import math
import sys
import time

import rclpy
from rclpy.node import Node
from visualization_msgs.msg import Marker, MarkerArray

PEOPLE = {"alice", "bob", "couple_1", "couple_2"}
AGENTS = PEOPLE | {"trolley"}
# Namespace: (marker type, how many).
KINDS = {
    "people": (Marker.CYLINDER, len(PEOPLE)),
    "scripted": (Marker.CUBE, 1),
    "velocities": (Marker.ARROW, len(AGENTS)),
    "names": (Marker.TEXT_VIEW_FACING, len(AGENTS)),
}
TROLLEY_SIZE_M = (0.8, 0.5)  # configs/tests/crowd/room.world.yaml
MAX_SPEED_MPS = 1.3 * 1.34  # Helbing–Molnár's cap: 1.3 × the desired speed


def fail(what: str) -> None:
    print(f"FAILED: {what}", flush=True)
    sys.exit(1)


def by_namespace(array: MarkerArray) -> dict[str, dict[int, Marker]]:
    """The array's markers by namespace, then by id."""
    out: dict[str, dict[int, Marker]] = {}
    for marker in array.markers:
        out.setdefault(marker.ns, {})[marker.id] = marker
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=40.0, help="s to wait for the arrays")
    args = parser.parse_args()

    rclpy.init()
    node = Node("crowd_markers_probe")
    arrays: list[MarkerArray] = []
    node.create_subscription(MarkerArray, "/crowd/markers", arrays.append, 10)

    # Ten arrays: at 10 Hz, one simulated second of walking.
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline and len(arrays) < 10:
        rclpy.spin_once(node, timeout_sec=0.2)
    if len(arrays) < 10:
        fail(f"{len(arrays)} MarkerArray messages on /crowd/markers in {args.timeout} s, wanted 10")

    first, last = by_namespace(arrays[0]), by_namespace(arrays[-1])
    for ns, (kind, count) in KINDS.items():
        markers = last.get(ns, {})
        if len(markers) != count:
            fail(f"namespace {ns!r} has {len(markers)} markers, wanted {count}")
        for marker in markers.values():
            if marker.type != kind or marker.action != Marker.ADD or marker.header.frame_id != "map":
                fail(f"{ns}/{marker.id}: type {marker.type}, action {marker.action}, frame {marker.header.frame_id!r}")
    bodies = set(last["people"]) | set(last["scripted"])
    if bodies != set(last["velocities"]) or bodies != set(last["names"]):
        fail("the namespaces do not share their ids")
    (trolley,) = last["scripted"].values()
    size = (trolley.scale.x, trolley.scale.y)
    if any(abs(got - want) > 1e-9 for got, want in zip(size, TROLLEY_SIZE_M)):
        fail(f"the trolley's cube is {size} m, wanted {TROLLEY_SIZE_M}")
    print("ok: a shape, an arrow and a name per agent, in map", flush=True)

    names = {marker.text: marker.id for marker in last["names"].values()}
    if set(names) != AGENTS:
        fail(f"named agents {sorted(names)}, wanted {sorted(AGENTS)}")
    print("ok: every agent is named", flush=True)

    alice = names["alice"]
    start, end = first["people"][alice].pose.position, last["people"][alice].pose.position
    walked_m = math.hypot(end.x - start.x, end.y - start.y)
    speed_mps = last["velocities"][alice].scale.x
    if walked_m < 0.3:
        fail(f"alice moved {walked_m:.3f} m over {len(arrays)} arrays")
    if not 0.1 < speed_mps <= MAX_SPEED_MPS:
        fail(f"alice's arrow is {speed_mps:.3f} m/s long")
    print(f"ok: alice walks ({walked_m:.2f} m, {speed_mps:.2f} m/s)", flush=True)

    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
