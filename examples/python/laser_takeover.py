#!/usr/bin/env python3
"""A laser written in Python that takes over a robot's built-in one.

It claims the robot's Laser instance (flotilla.Claim: the built-in laser node
stands by while this program lives and takes the instance back when it
goes), joins lockstep, and at each step its laser is due computes a scan
from the world's state with its own model and publishes it on the laser's
topic before reporting the step done, so a lockstep run with it is as
deterministic as one without:

* geometry: rays against the walls of the laser's layers and the solid
  footprints (circles, polygons) of every other model's bodies where the
  world state puts them;
* noise: range-proportional, sigma = --sigma-base + --sigma-per-m x range
  (Flotilla's own laser adds a constant sigma), drawn from a generator seeded
  with (world seed, step), so a run repeats exactly.

    flotilla run configs/tests/room/world.yaml --clock lockstep &
    python3 examples/python/laser_takeover.py --model robot
"""

from __future__ import annotations

import argparse
import math
import os
from typing import Any

import flotilla
import numpy as np


class Scene:
    """What the laser can hit: fixed walls, and the bodies of other models
    (their footprints in body frames, placed by each world state)."""

    def __init__(self, description: dict[str, Any], layers: int, own_model: str) -> None:
        walls = [
            (s["a"], s["b"])
            for layer in description["layers"]
            if layer["bits"] & layers
            for s in layer["segments"]
        ]
        self.walls = np.array(walls, dtype=np.float64).reshape(-1, 2, 2)
        self.circles: list[tuple[int, np.ndarray, float]] = []  # body id, centre in body frame, radius
        self.edges: list[tuple[int, np.ndarray]] = []  # body id, (k, 2, 2) edges in body frame
        for model in description["models"]:
            if model["name"] == own_model:
                continue
            for body in model["bodies"]:
                for footprint in body["footprints"]:
                    if footprint["sensor"] or not footprint["layers"] & layers:
                        continue
                    shape = footprint["shape"]
                    if "Circle" in shape:
                        circle = shape["Circle"]
                        self.circles.append((body["id"], np.array(circle["center"]), circle["radius"]))
                    else:
                        points = np.array(shape["Polygon"]["points"], dtype=np.float64)
                        self.edges.append((body["id"], np.stack([points, np.roll(points, -1, axis=0)], axis=1)))

    def placed(self, state: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every segment (walls and polygon edges) and circle (centres,
        radii) in the world frame at ``state``."""

        def pose_of(body: int) -> np.ndarray:
            return state["poses"][int(np.searchsorted(state["ids"], body))]

        def to_world(points: np.ndarray, pose: np.ndarray) -> np.ndarray:
            c, s = math.cos(pose[2]), math.sin(pose[2])
            return points @ np.array([[c, s], [-s, c]]) + pose[:2]

        segments = [self.walls] + [to_world(edges, pose_of(body)) for body, edges in self.edges]
        centres = [to_world(centre[None, :], pose_of(body))[0] for body, centre, _ in self.circles]
        radii = [radius for _, _, radius in self.circles]
        return (
            np.concatenate(segments) if segments else np.zeros((0, 2, 2)),
            np.array(centres).reshape(-1, 2),
            np.array(radii, dtype=np.float64),
        )


def cast(origin: np.ndarray, angles: np.ndarray, segments: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """The distance along each ray from ``origin`` to the first thing it
    meets (inf for nothing)."""
    d = np.stack([np.cos(angles), np.sin(angles)], axis=1)  # (beams, 2)
    best = np.full(len(angles), np.inf)
    if len(segments):
        a, e = segments[:, 0], segments[:, 1] - segments[:, 0]  # (n, 2)
        w = a - origin
        denom = d[:, None, 0] * e[None, :, 1] - d[:, None, 1] * e[None, :, 0]  # (beams, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (w[None, :, 0] * e[None, :, 1] - w[None, :, 1] * e[None, :, 0]) / denom
            u = (w[None, :, 0] * d[:, None, 1] - w[None, :, 1] * d[:, None, 0]) / denom
        hit = (denom != 0) & (t >= 0) & (u >= 0) & (u <= 1)
        best = np.minimum(best, np.where(hit, t, np.inf).min(axis=1))
    if len(radii):
        f = origin - centres  # (m, 2)
        b = d @ f.T  # (beams, m)
        c = (f * f).sum(axis=1) - radii**2
        disc = b * b - c[None, :]
        root = np.sqrt(np.maximum(disc, 0.0))
        near, far = -b - root, -b + root
        t = np.where(near >= 0, near, far)
        best = np.minimum(best, np.where((disc >= 0) & (t >= 0), t, np.inf).min(axis=1))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # `flotilla run --replace` and `--exec` give the endpoint and sim.
    parser.add_argument("--connect", default=os.environ.get("FLOTILLA_ENDPOINT", "tcp/127.0.0.1:7450"))
    parser.add_argument("--sim", default=os.environ.get("FLOTILLA_SIM", "default"))
    parser.add_argument("--model", required=True, help="the robot whose laser this replaces")
    parser.add_argument("--plugin", default="laser", help="its Laser plugin's name")
    parser.add_argument("--sigma-base", type=float, default=0.005, help="noise sigma at 0 m, m")
    parser.add_argument("--sigma-per-m", type=float, default=0.002, help="noise sigma per metre of range")
    args = parser.parse_args()

    sim = flotilla.Sim(connect=args.connect, sim=args.sim)
    laser = sim.laser(args.model, args.plugin)
    description = sim.description
    scene = Scene(description, laser["layers"], args.model)
    angles = laser["angle_min_rad"] + laser["angle_increment_rad"] * np.arange(laser["beams"])
    if laser["upside_down"]:
        angles = -angles
    period_ns = round(1e9 / laser["update_rate_hz"]) if math.isfinite(laser["update_rate_hz"]) else None
    name = f"py-laser-{args.model}-{args.plugin}"
    with flotilla.Claim(sim, laser["instance"], name), flotilla.Participant(sim, name) as me:
        print(f"serving {laser['instance']} on {laser['topic']}", flush=True)
        while True:
            state = me.next_state(timeout=3600)
            if period_ns is None or state["time_ns"] % period_ns == 0:
                body = state["poses"][int(np.searchsorted(state["ids"], laser["body_id"]))]
                ox, oy, oth = laser["origin"]
                c, s = math.cos(body[2]), math.sin(body[2])
                origin = np.array([body[0] + c * ox - s * oy, body[1] + s * ox + c * oy])
                segments, centres, radii = scene.placed(state)
                exact = cast(origin, angles + body[2] + oth, segments, centres, radii)
                rng = np.random.default_rng([description["seed"], state["step"]])
                sigma = args.sigma_base + args.sigma_per_m * np.where(np.isfinite(exact), exact, 0.0)
                ranges = exact + rng.normal(0.0, 1.0, len(exact)) * sigma
                ranges = np.where(exact > laser["range_m"], np.inf, ranges).astype(np.float32)
                scan = {
                    "header": {
                        "stamp": {"sec": state["time_ns"] // 1_000_000_000, "nanosec": state["time_ns"] % 1_000_000_000},
                        "frame_id": laser["frame"],
                    },
                    "angle_min": laser["angle_min_rad"],
                    "angle_max": laser["angle_max_rad"],
                    "angle_increment": laser["angle_increment_rad"],
                    "scan_time": 0.0 if period_ns is None else period_ns * 1e-9,
                    "range_min": 0.0,
                    "range_max": laser["range_m"],
                    "ranges": ranges,
                }
                sim.put(laser["topic"], flotilla.encode("sensor_msgs/msg/LaserScan", scan))
            me.done(state)


if __name__ == "__main__":
    main()
