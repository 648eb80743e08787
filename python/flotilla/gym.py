"""Gymnasium and PettingZoo environments over lockstep.

Each environment starts its own simulation (``flotilla run WORLD --clock
lockstep`` on a free loopback port and a simulation id of its own, so that
several run side by side on one machine) and takes part in its lockstep
barrier, so the world moves only when the environment steps it:

* ``FlotillaEnv``: one robot, a Gymnasium ``Env``;
* ``FlotillaParallelEnv``: several robots, a PettingZoo ``ParallelEnv``;
* ``make_vector_env``: several ``FlotillaEnv`` as one Gymnasium vector env.

Observation: ``{"scan": ranges (float32, clipped to the laser's range),
"odom": [x m, y m, θ rad, vx m/s, vy m/s, ω rad/s] from the robot's
odometry}``. Action: ``[linear, angular]`` in -1..1, the fractions of
``max_linear`` m/s and ``max_angular`` rad/s the robot is commanded. Reward and termination come from a ``Task`` the user writes;
``GoToGoal`` is the worked example.

``reset(seed=...)`` resets the world (simulation_interfaces'
ResetSimulation: every model back where its world file puts it, sim time at
zero, every node's random generators re-seeded from the world's seed) and
seeds the task's generator, which the task may use to place the robot and
its goal. The sensor noise follows the world's seed (``world_seed=``, the
``--seed`` of ``flotilla run``), so one seed gives one trajectory.
"""

from __future__ import annotations

import math
import os
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from flotilla.errors import FlotillaError
from flotilla.launch import Simulation, free_port
from flotilla.lockstep import Participant
from flotilla.sim import Sim


class Task:
    """What the robot is asked to do: override ``reward`` and
    ``terminated`` (and ``reset`` to place things with the seeded
    generator). ``info`` carries ``pose`` (the robot's true x, y, θ from the
    world state) and ``elapsed`` (sim time since the reset, s)."""

    def reset(self, sim: Sim, robot: str, rng: np.random.Generator) -> None:
        """Called at every ``reset``, after the world's, before the first
        observation; may move the robot (``sim.move``)."""

    def reward(self, observation: dict[str, np.ndarray], info: dict[str, Any]) -> float:
        """The reward of the step that led to ``observation``."""
        return 0.0

    def terminated(self, observation: dict[str, np.ndarray], info: dict[str, Any]) -> bool:
        """Whether the episode is over (goal reached, robot crashed)."""
        return False


class GoToGoal(Task):
    """Drive to a goal: a reward of the distance gained each step, a bonus
    of 10 on arrival (within ``tolerance`` m), -10 and the end for a scan
    closer than ``crash_distance`` m. With ``random_goal``, the goal is
    drawn in the box ``bounds`` (x_min, y_min, x_max, y_max) at each
    reset."""

    def __init__(
        self,
        goal: tuple[float, float],
        tolerance: float = 0.3,
        crash_distance: float = 0.25,
        random_goal: bool = False,
        bounds: tuple[float, float, float, float] = (1.0, 1.0, 9.0, 9.0),
    ) -> None:
        self.goal = np.array(goal, dtype=np.float64)
        self.tolerance = tolerance
        self.crash_distance = crash_distance
        self.random_goal = random_goal
        self.bounds = bounds
        self._distance: float | None = None

    def reset(self, sim: Sim, robot: str, rng: np.random.Generator) -> None:
        if self.random_goal:
            x0, y0, x1, y1 = self.bounds
            self.goal = np.array([rng.uniform(x0, x1), rng.uniform(y0, y1)])
        self._distance = None

    def _distance_to_goal(self, info: dict[str, Any]) -> float:
        return float(np.hypot(*(np.asarray(info["pose"][:2]) - self.goal)))

    def reward(self, observation: dict[str, np.ndarray], info: dict[str, Any]) -> float:
        distance = self._distance_to_goal(info)
        gained = 0.0 if self._distance is None else self._distance - distance
        self._distance = distance
        if distance < self.tolerance:
            return gained + 10.0
        if self._crashed(observation):
            return gained - 10.0
        return gained

    def terminated(self, observation: dict[str, np.ndarray], info: dict[str, Any]) -> bool:
        return self._distance_to_goal(info) < self.tolerance or self._crashed(observation)

    def _crashed(self, observation: dict[str, np.ndarray]) -> bool:
        return bool(np.min(observation["scan"]) < self.crash_distance)


class _Robot:
    """One robot's topics and the spaces of its observations and actions."""

    def __init__(self, sim: Sim, name: str, max_linear: float, max_angular: float) -> None:
        model = sim.model(name)
        outputs = _outputs_of(sim, model["namespace"])
        scans = sorted(k for k, t in outputs.items() if t == "sensor_msgs/msg/LaserScan")
        odometry = sorted(k for k, t in outputs.items() if t == "nav_msgs/msg/Odometry")
        if not scans or not odometry:
            raise FlotillaError(f"model {name!r} needs a Laser and an odometry output (it publishes {outputs})")
        self.name = name
        self.scan_topic = scans[0]
        # The robot's own estimate (noisy, `odometry/filtered`) if it has one.
        self.odom_topic = next((k for k in odometry if k.endswith("filtered")), odometry[0])
        self.body = model["bodies"][0]["id"]
        # Normalised, as learners expect: -1..1 of the limits.
        self.action_space = spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
        self.limits = np.array([max_linear, max_angular], dtype=np.float64)
        self.observation_space: spaces.Dict | None = None

    def shape_from(self, scan: dict[str, Any]) -> None:
        self.range_max = float(scan["range_max"])
        beams = len(scan["ranges"])
        self.observation_space = spaces.Dict(
            {
                "scan": spaces.Box(0.0, self.range_max, (beams,), dtype=np.float32),
                "odom": spaces.Box(-np.inf, np.inf, (6,), dtype=np.float64),
            }
        )

    def observation(self, latest: dict[str, dict[str, Any]]) -> dict[str, np.ndarray]:
        ranges = np.asarray(latest[self.scan_topic]["ranges"], dtype=np.float32)
        scan = np.nan_to_num(ranges, nan=self.range_max, posinf=self.range_max, neginf=0.0)
        odom = latest[self.odom_topic]
        p, t = odom["pose"]["pose"], odom["twist"]["twist"]
        q = p["orientation"]
        yaw = math.atan2(2.0 * (q["w"] * q["z"] + q["x"] * q["y"]), 1.0 - 2.0 * (q["y"] ** 2 + q["z"] ** 2))
        return {
            "scan": np.clip(scan, 0.0, self.range_max).astype(np.float32),
            "odom": np.array(
                [p["position"]["x"], p["position"]["y"], yaw, t["linear"]["x"], t["linear"]["y"], t["angular"]["z"]],
                dtype=np.float64,
            ),
        }

    def info(self, state: dict[str, Any], start: dict[str, Any]) -> dict[str, Any]:
        """``pose``: the robot's true (x m, y m, θ rad); ``elapsed``: sim
        time since the episode's start, s (sim time itself never goes back,
        so an episode counts from its reset)."""
        row = int(np.searchsorted(state["ids"], self.body))
        return {"pose": state["poses"][row].copy(), "elapsed": (state["time_ns"] - start["time_ns"]) * 1e-9}


def _outputs_of(sim: Sim, namespace: str) -> dict[str, str]:
    """A namespace's published topics: ROS name (without the simulation's
    ROS prefix) → type."""
    root = sim.keys.ros("/x")[:-1]  # the ROS prefix and its slash, if any
    under = f"{root}{namespace}/" if namespace else root
    return {key[len(root) :]: t for key, t in sim.topics().items() if key.startswith(under)}


class _Lockstepped:
    """A simulation started for an environment, a lockstep participant in
    it, and the robots it drives; steps the world and reads observations."""

    def __init__(
        self,
        world: str | os.PathLike[str],
        robots: list[str] | None,
        max_linear: float,
        max_angular: float,
        world_seed: int | None,
        sim: str | None,
        align_s: float,
        port: int | None = None,
        connect: tuple[str, ...] = (),
        ros_prefix: str = "",
    ) -> None:
        self.align_s = align_s
        self.pending: dict[str, Any] | None = None
        self.run = Simulation(
            world, sim=sim, clock="lockstep", seed=world_seed, port=port, connect=connect, ros_prefix=ros_prefix
        )
        try:
            self.sim = self.run.connect()
            names = robots if robots is not None else self._drivable()
            self.robots = {name: _Robot(self.sim, name, max_linear, max_angular) for name in names}
            self.me = Participant(self.sim, "gym")
            for robot in self.robots.values():
                self.me.watch(robot.scan_topic)
                self.me.watch(robot.odom_topic)
            self.state = self.reset_world()
            for robot in self.robots.values():
                robot.shape_from(self.me.latest[robot.scan_topic])
        except BaseException:
            self.run.stop()
            raise

    def _drivable(self) -> list[str]:
        """Models with a drive taking a Twist and a laser."""
        found = []
        for name in self.sim.models():
            drives = [t for t in self.sim.inputs(name).values() if t.startswith("geometry_msgs/msg/Twist")]
            outputs = _outputs_of(self.sim, self.sim.model(name)["namespace"])
            lasers = [k for k, t in outputs.items() if t.endswith("/LaserScan")]
            if drives and lasers:
                found.append(name)
        if not found:
            raise FlotillaError("no model in the world has both a drive and a laser")
        return found

    def reset_world(self) -> dict[str, Any]:
        """Stops the robots, resets the world on a multiple of ``align_s`` of
        sim time, and steps (commanding nothing) to the next multiple, by
        which every robot has a scan and odometry; that state, not yet
        reported done (``pending``). Sim time never goes back in Flotilla:
        resetting on the same phase of every period (a 10 Hz laser, 50 Hz
        odometry, the crowd's 50 Hz) and leaving the people and doors the
        same time to move makes one episode's start like the next."""
        align_ns = round(self.align_s * 1e9)
        state = self.pending if self.pending is not None else self.me.next_state()
        self.pending = None
        state = self._idle(state, lambda s: s["time_ns"] % align_ns == 0)
        self.sim.reset()
        self.me.restart_at(self.sim.description["revision"])
        wanted = [t for r in self.robots.values() for t in (r.scan_topic, r.odom_topic)]
        state = self._idle(
            self.me.next_state(),
            lambda s: s["time_ns"] % align_ns == 0 and all(t in self.me.latest for t in wanted),
        )
        self.pending = state
        self.start = state
        return state

    def _idle(self, state: dict[str, Any], until: Any) -> dict[str, Any]:
        """Commands every robot to stand still at ``state`` and each state
        after, reporting each done, up to the first for which ``until``
        holds (commanded, not reported)."""
        while True:
            for name in self.robots:
                self.sim.cmd_vel(name, stamp_ns=state["time_ns"])
            if until(state):
                return state
            self.me.done(state)
            state = self.me.next_state()

    def advance(self, commands: dict[str, np.ndarray], steps: int) -> dict[str, Any]:
        """Holds ``commands`` for ``steps`` physics steps from the pending
        state; the state after them, now pending. Each command is stamped
        with its state's time, so it takes effect at the step after it
        whatever the messages' timing."""
        state = self.pending
        for _ in range(steps):
            for name, action in commands.items():
                linear, angular = np.clip(action, -1.0, 1.0) * self.robots[name].limits
                self.sim.cmd_vel(name, linear=float(linear), angular=float(angular), stamp_ns=state["time_ns"])
            self.me.done(state)
            state = self.me.next_state()
        self.pending = state
        return state

    def close(self) -> None:
        try:
            self.me.close()
            self.sim.close()
        finally:
            self.run.stop()


class FlotillaEnv(gymnasium.Env):
    """One robot of a Flotilla world as a Gymnasium environment.

    ``FlotillaEnv("configs/tests/room/world.yaml", robot="robot",
    task=GoToGoal((8, 5)))``; each ``step`` holds the action for
    ``steps_per_action`` physics steps (at the world's step size, e.g. 5 ms).
    Episodes are truncated after ``max_episode_steps`` actions, and start on
    a multiple of ``align_s`` s of sim time (see ``reset``). ``port``,
    ``connect`` and ``ros_prefix`` go to the simulation it starts
    (``flotilla.launch.Simulation``).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(
        self,
        world: str | os.PathLike[str],
        robot: str,
        task: Task | None = None,
        steps_per_action: int = 20,
        max_episode_steps: int = 500,
        max_linear: float = 1.0,
        max_angular: float = 2.0,
        world_seed: int | None = None,
        sim: str | None = None,
        align_s: float = 1.0,
        port: int | None = None,
        connect: tuple[str, ...] = (),
        ros_prefix: str = "",
    ) -> None:
        self.task = task or Task()
        self.steps_per_action = steps_per_action
        self.max_episode_steps = max_episode_steps
        self._run = _Lockstepped(world, [robot], max_linear, max_angular, world_seed, sim, align_s, port, connect, ros_prefix)
        self._robot = self._run.robots[robot]
        self.action_space = self._robot.action_space
        self.observation_space = self._robot.observation_space
        self._taken = 0

    @property
    def sim(self) -> Sim:
        """The connection to this environment's simulation."""
        return self._run.sim

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self._run.reset_world()
        self.task.reset(self.sim, self._robot.name, self.np_random)
        self._taken = 0
        state = self._run.pending
        observation = self._robot.observation(self._run.me.latest)
        info = self._robot.info(state, self._run.start)
        self.task.reward(observation, info)  # the task's distance baseline
        return observation, info

    def step(self, action: np.ndarray) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        action = np.clip(np.asarray(action, dtype=np.float32), self.action_space.low, self.action_space.high)
        state = self._run.advance({self._robot.name: action}, self.steps_per_action)
        self._taken += 1
        observation = self._robot.observation(self._run.me.latest)
        info = self._robot.info(state, self._run.start)
        reward = float(self.task.reward(observation, info))
        terminated = bool(self.task.terminated(observation, info))
        truncated = self._taken >= self.max_episode_steps and not terminated
        return observation, reward, terminated, truncated, info

    def close(self) -> None:
        self._run.close()


class FlotillaParallelEnv(ParallelEnv):
    """Several robots of a Flotilla world as a PettingZoo ``ParallelEnv``:
    every robot with a drive and a laser is an agent (or those named in
    ``robots``); ``tasks`` maps each to its task (default: none, reward 0).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": [], "name": "flotilla_parallel_v0"}

    def __init__(
        self,
        world: str | os.PathLike[str],
        robots: list[str] | None = None,
        tasks: dict[str, Task] | None = None,
        steps_per_action: int = 20,
        max_episode_steps: int = 500,
        max_linear: float = 1.0,
        max_angular: float = 2.0,
        world_seed: int | None = None,
        sim: str | None = None,
        align_s: float = 1.0,
    ) -> None:
        self._run = _Lockstepped(world, robots, max_linear, max_angular, world_seed, sim, align_s)
        self.possible_agents = list(self._run.robots)
        self.agents: list[str] = []
        self.tasks = {name: (tasks or {}).get(name) or Task() for name in self.possible_agents}
        self.steps_per_action = steps_per_action
        self.max_episode_steps = max_episode_steps
        self._taken = 0
        self._rng = np.random.default_rng()

    def observation_space(self, agent: str) -> spaces.Space:
        return self._run.robots[agent].observation_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._run.robots[agent].action_space

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, Any]]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._run.reset_world()
        self.agents = list(self.possible_agents)
        self._taken = 0
        observations, infos = {}, {}
        for name in self.agents:
            self.tasks[name].reset(self._run.sim, name, self._rng)
            robot = self._run.robots[name]
            observations[name] = robot.observation(self._run.me.latest)
            infos[name] = robot.info(self._run.pending, self._run.start)
            self.tasks[name].reward(observations[name], infos[name])
        return observations, infos

    def step(self, actions: dict[str, np.ndarray]) -> tuple[dict, dict, dict, dict, dict]:
        commands = {
            name: np.clip(np.asarray(a, dtype=np.float32), self.action_space(name).low, self.action_space(name).high)
            for name, a in actions.items()
            if name in self.agents
        }
        # Robots whose episode ended stand still.
        for name in self.possible_agents:
            commands.setdefault(name, np.zeros(2, dtype=np.float32))
        state = self._run.advance(commands, self.steps_per_action)
        self._taken += 1
        observations, rewards, terminations, truncations, infos = {}, {}, {}, {}, {}
        for name in self.agents:
            robot = self._run.robots[name]
            observations[name] = robot.observation(self._run.me.latest)
            infos[name] = robot.info(state, self._run.start)
            rewards[name] = float(self.tasks[name].reward(observations[name], infos[name]))
            terminations[name] = bool(self.tasks[name].terminated(observations[name], infos[name]))
            truncations[name] = self._taken >= self.max_episode_steps and not terminations[name]
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        return observations, rewards, terminations, truncations, infos

    def close(self) -> None:
        self._run.close()


def make_vector_env(
    num_envs: int,
    world: str | os.PathLike[str],
    robot: str,
    task_factory: Any = None,
    asynchronous: bool = True,
    **kwargs: Any,
) -> gymnasium.vector.VectorEnv:
    """``num_envs`` copies of ``FlotillaEnv``, each in a simulation of its
    own (one ``flotilla run`` per copy, simulation ids ``vec-<pid>-<i>``),
    all on one Zenoh network (every copy's world joins the first's, so one
    connection to the first's endpoint sees them all; each copy's ROS names
    under its simulation id, ``vec-<pid>-<i>/robot/scan``), as one Gymnasium
    vector environment; in subprocesses when ``asynchronous``.
    ``task_factory()`` makes each copy's task."""
    base = f"vec-{os.getpid()}"
    ports = [free_port() for _ in range(num_envs)]
    hub = f"tcp/127.0.0.1:{ports[0]}"

    def make(i: int) -> Any:
        def thunk() -> FlotillaEnv:
            task = task_factory() if task_factory is not None else None
            joins = () if i == 0 else (hub,)
            sim = f"{base}-{i}"
            return FlotillaEnv(
                world, robot, task=task, sim=sim, port=ports[i], connect=joins, ros_prefix=sim, **kwargs
            )

        return thunk

    fns = [make(i) for i in range(num_envs)]
    if asynchronous:
        return gymnasium.vector.AsyncVectorEnv(fns, context="spawn")
    return gymnasium.vector.SyncVectorEnv(fns)
