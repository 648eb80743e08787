#!/usr/bin/env python3
"""The Python package's speed: env steps per second of flotilla.gym's
single-robot Gymnasium env (the room world) and of its PettingZoo env over
50 robots (`flotilla bench office-50`'s world), at 10 physics steps per env
step in lockstep, and of the Rust lockstep participant doing the same work
(`flotilla-lockstep-controller`: a stamped command per robot per state, every
scan and odometry message decoded, observations read every 10 states), run
one after the other in one sitting. Prints a table and the Python/Rust
ratios; BENCHMARKS.md has the figures.

Release builds (`cargo build --release`, and `./scripts/install-python-package.sh`):

    ./scripts/bench-python.py --bin target/release
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
STEPS_PER_ACTION = 10


def gym_single(world: Path, actions: int) -> tuple[float, float]:
    """Env steps per second and Python CPU per env step (ms) of FlotillaEnv."""
    from flotilla.gym import FlotillaEnv

    env = FlotillaEnv(world, robot="robot", steps_per_action=STEPS_PER_ACTION, max_episode_steps=actions + 1)
    try:
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(actions):
            env.step(rng.uniform(-1.0, 1.0, 2).astype(np.float32))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        env.close()
    return actions / wall, 1e3 * cpu / actions


def gym_parallel(world: Path, actions: int) -> tuple[float, float, int]:
    """Env steps per second, Python CPU per env step (ms) and agents of
    FlotillaParallelEnv over every robot of `world`."""
    from flotilla.gym import FlotillaParallelEnv

    env = FlotillaParallelEnv(world, steps_per_action=STEPS_PER_ACTION, max_episode_steps=actions + 1)
    try:
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        agents = len(env.agents)
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(actions):
            env.step({a: rng.uniform(-1.0, 1.0, 2).astype(np.float32) for a in env.agents})
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        env.close()
    return actions / wall, 1e3 * cpu / actions, agents


def rust_participant(world: Path, controller: Path, actions: int) -> tuple[float, int]:
    """Env steps per second (states / 10) of the Rust participant in a
    lockstep run of `world`, and the robots it drove."""
    from flotilla.launch import Simulation

    with Simulation(world, clock="lockstep") as run:
        run.connect().close()  # the world is up
        result = subprocess.run(
            [str(controller), "--connect", run.endpoint, "--sim", run.sim]
            + ["--steps", str(actions * STEPS_PER_ACTION), "--steps-per-action", str(STEPS_PER_ACTION)],
            capture_output=True,
            text=True,
            timeout=900,
            check=True,
        )
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    return figures["states"] / STEPS_PER_ACTION / figures["wall_s"], figures["robots"]


def office_50(flotilla: Path, directory: Path) -> Path:
    """Writes `flotilla bench office-50`'s world into `directory`."""
    subprocess.run(
        [str(flotilla), "bench", "office-50", "--dir", str(directory), "--duration", "0.1", "--warmup", "0"],
        capture_output=True,
        timeout=600,
        check=True,
    )
    return directory / "world.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="target/release", help="the directory of the flotilla binaries")
    parser.add_argument("--actions", type=int, default=300, help="env steps timed, one robot")
    parser.add_argument("--fleet-actions", type=int, default=60, help="env steps timed, 50 robots")
    args = parser.parse_args()
    bin_dir = (ROOT / args.bin).resolve()
    os.environ["FLOTILLA_BIN"] = str(bin_dir / "flotilla")
    controller = bin_dir / "flotilla-lockstep-controller"
    for needed in (bin_dir / "flotilla", controller):
        if not needed.exists():
            sys.exit(f"{needed} is missing: build with cargo build --release (or give --bin)")
    room = ROOT / "configs" / "tests" / "room" / "world.yaml"

    rows = []
    py_rate, py_cpu_ms = gym_single(room, args.actions)
    rust_rate, _ = rust_participant(room, controller, args.actions)
    rows.append(("1 robot (room, Gymnasium)", py_rate, py_cpu_ms, rust_rate))
    with tempfile.TemporaryDirectory(prefix="flotilla-bench-python-") as directory:
        fleet = office_50(bin_dir / "flotilla", Path(directory))
        py_rate, py_cpu_ms, agents = gym_parallel(fleet, args.fleet_actions)
        rust_rate, robots = rust_participant(fleet, controller, args.fleet_actions)
        if robots != agents:
            sys.exit(f"the Rust participant drove {robots} robots, the PettingZoo env {agents}")
        rows.append((f"{agents} robots (office-50, PettingZoo)", py_rate, py_cpu_ms, rust_rate))

    print(f"{STEPS_PER_ACTION} physics steps (5 ms each) per env step, lockstep, one after the other in one sitting")
    print(f"{'':38} {'Python env steps/s':>18} {'Python CPU/step':>16} {'Rust env steps/s':>17} {'Rust/Python':>12}")
    for label, py_rate, py_cpu_ms, rust_rate in rows:
        print(f"{label:38} {py_rate:18.1f} {py_cpu_ms:13.2f} ms {rust_rate:17.1f} {rust_rate / py_rate:11.2f}×")


if __name__ == "__main__":
    main()
