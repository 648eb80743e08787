#!/usr/bin/env python3
"""flotilla.gym end to end: the single-robot Gymnasium env and the
multi-robot PettingZoo env pass their libraries' own API checks, the worked
GoToGoal task reaches its goal, and a vector env runs two simulations side
by side; with --resets-only, one seed gives one trajectory across resets. Each env starts
its own `flotilla run` ($FLOTILLA_BIN). Run by tests/tests/python_gym.rs."""

import argparse
import sys
import warnings

import flotilla
import numpy as np
from flotilla.gym import FlotillaEnv, FlotillaParallelEnv, GoToGoal, make_vector_env
from flotilla.launch import Simulation
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test


def check(condition: bool, what: str) -> None:
    if not condition:
        sys.exit(f"FAILED: {what}")


def trajectory(env: FlotillaEnv, seed: int, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """True poses and observed odometry of one episode under `actions`."""
    env.reset(seed=seed)
    poses, odometry = [], []
    for action in actions:
        observation, _, terminated, truncated, info = env.step(action)
        poses.append(info["pose"])
        odometry.append(observation["odom"])
        if terminated or truncated:
            break
    return np.array(poses), np.array(odometry)


def resets(args: argparse.Namespace) -> None:
    """One seed, one trajectory: the same actions after two resets with one
    seed give the same true poses and odometry (the room), and the same
    scans and odometry of four noisy robots among people and a door."""
    env = FlotillaEnv(args.room, robot="robot", task=GoToGoal((8.0, 5.0)), steps_per_action=10)
    actions = np.random.default_rng(7).uniform(env.action_space.low, env.action_space.high, (40, 2))
    first, first_odom = trajectory(env, 3, actions)
    second, second_odom = trajectory(env, 3, actions)
    check(len(first) == 40 and np.array_equal(first, second), "one seed, one trajectory (true poses)")
    check(np.array_equal(first_odom, second_odom), "one seed, one trajectory (odometry)")
    check(np.ptp(first[:, 0]) > 0.1, f"the robot moved: x {first[:, 0].min()}..{first[:, 0].max()}")
    env.close()

    fleet = FlotillaParallelEnv(args.fleet, steps_per_action=10, max_episode_steps=30)
    runs = []
    for _ in range(2):
        observations, _ = fleet.reset(seed=5)
        seen = []
        for k in range(20):
            actions = {a: np.array([0.6, 0.3 * np.sin(k / 3)], np.float32) for a in fleet.agents}
            observations, *_ = fleet.step(actions)
            seen.append(np.concatenate([np.concatenate([o["scan"], o["odom"]]) for o in observations.values()]))
        runs.append(np.array(seen))
    check(np.array_equal(runs[0], runs[1]), "one seed, one run of the fleet's scans and odometry")
    fleet.close()
    print("resets passed", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--room", required=True, help="configs/tests/room/world.yaml")
    parser.add_argument("--fleet", required=True, help="configs/tests/determinism/world.yaml")
    parser.add_argument("--resets-only", action="store_true", help="only: one seed gives one trajectory")
    args = parser.parse_args()
    if args.resets_only:
        resets(args)
        return
    env = FlotillaEnv(args.room, robot="robot", task=GoToGoal((8.0, 5.0)), steps_per_action=10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=True)
    # A checker's warning is a failure here, but for the advice that the
    # odometry's bounds are infinite: a pose in a world is unbounded.
    unbounded = ("minimum value is -infinity", "maximum value is infinity")
    complaints = [str(w.message) for w in caught if not any(u in str(w.message) for u in unbounded)]
    check(not complaints, f"check_env warned: {complaints}")
    print("check_env passed", flush=True)

    # The worked task: steer at the goal until it says the episode is over.
    _, info = env.reset(seed=0)
    total, terminated = 0.0, False
    for _ in range(200):
        x, y, theta = info["pose"]
        bearing = np.arctan2(5.0 - y, 8.0 - x) - theta
        bearing = (bearing + np.pi) % (2 * np.pi) - np.pi
        _observation, reward, terminated, truncated, info = env.step(np.array([0.8, np.clip(bearing, -1, 1)], np.float32))
        total += reward
        if terminated or truncated:
            break
    check(terminated and np.hypot(info["pose"][0] - 8.0, info["pose"][1] - 5.0) < 0.3, f"reached the goal: {info}")
    check(12.5 < total < 13.5, f"3 m gained plus the 10 bonus: {total}")
    env.close()
    print("gymnasium env passed", flush=True)

    fleet = FlotillaParallelEnv(args.fleet, steps_per_action=10, max_episode_steps=30)
    check(fleet.possible_agents == ["robot1", "robot2", "robot3", "robot4"], f"agents {fleet.possible_agents}")
    parallel_api_test(fleet, num_cycles=15)
    fleet.close()
    print("pettingzoo env passed", flush=True)

    vector = make_vector_env(2, args.room, "robot", task_factory=lambda: GoToGoal((8.0, 5.0)), asynchronous=True)
    observations, _ = vector.reset(seed=11)
    check(observations["scan"].shape == (2, 16), f"two scans: {observations['scan'].shape}")
    for _ in range(5):
        observations, _rewards, *_ = vector.step(np.tile([0.5, 0.0], (2, 1)).astype(np.float32))
    check(np.allclose(observations["odom"][0], observations["odom"][1]), "two copies of one world agree")
    vector.close()
    # Simulations on one network: the second world joins the first's.
    with Simulation(args.room, sim="net-a", clock="fast", ros_prefix="a") as a, Simulation(
        args.room, sim="net-b", clock="fast", connect=(a.endpoint,), ros_prefix="b"
    ):
        through_a = flotilla.Sim(a.endpoint, sim="net-b", ros_prefix="b", timeout=30)
        check(through_a.models() == ["robot"], "the second simulation seen through the first's endpoint")
        scan = through_a.subscribe("robot/scan").get(timeout=30)
        check(len(scan["ranges"]) == 16, "its scans too, under its ROS prefix (b/robot/scan)")
        through_a.close()
    print("vector env passed", flush=True)


if __name__ == "__main__":
    main()
