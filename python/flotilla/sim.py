"""A connection to one running simulation."""

from __future__ import annotations

import math
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Self

import zenoh

from flotilla import _native
from flotilla.errors import FlotillaError, NoWorld, ServiceFailed, UnknownModel, UnknownTopic

DEFAULT_ENDPOINT = "tcp/127.0.0.1:7450"


def client_config(connect: str) -> zenoh.Config:
    """A Zenoh client configuration for ``connect`` with multicast scouting
    off, as every Flotilla process uses on loopback."""
    config = zenoh.Config()
    config.insert_json5("mode", '"client"')
    config.insert_json5("connect/endpoints", f'["{connect}"]')
    config.insert_json5("scouting/multicast/enabled", "false")
    return config


class Subscription:
    """Decoded messages of one topic, oldest first, in a bounded queue
    (the oldest is dropped when ``depth`` are waiting)."""

    def __init__(self, session: zenoh.Session, key: str, ros_type: str, depth: int) -> None:
        self.key = key
        self.ros_type = ros_type
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=depth)
        self._latest: dict[str, Any] | None = None
        #: Messages that did not decode as ``ros_type``, and the last reason.
        self.dropped = 0
        self.last_error: str | None = None
        self._lock = threading.Lock()
        self._subscriber = session.declare_subscriber(key, zenoh.handlers.Callback(self._on_sample, indirect=False))

    def _on_sample(self, sample: zenoh.Sample) -> None:
        try:
            message = _native.decode(self.ros_type, sample.payload.to_bytes())
        except ValueError as e:
            # Garbage on a key is dropped and counted, as Flotilla's nodes do.
            self.dropped += 1
            self.last_error = str(e)
            return
        with self._lock:
            self._latest = message
            if self._queue.full():
                self._queue.get_nowait()
            self._queue.put_nowait(message)

    def get(self, timeout: float | None = None) -> dict[str, Any]:
        """The next message; ``TimeoutError`` after ``timeout`` s (wall)."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no message on {self.key} ({self.ros_type}) within {timeout} s") from None

    @property
    def latest(self) -> dict[str, Any] | None:
        """The newest message received, or ``None`` before the first."""
        with self._lock:
            return self._latest

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while True:
            yield self.get()

    def close(self) -> None:
        """Stops receiving."""
        self._subscriber.undeclare()


class Sim:
    """One simulation: ``Sim(connect="tcp/127.0.0.1:7450", sim="default")``.

    Raises ``NoWorld`` when no world answers within ``timeout`` s.
    """

    def __init__(
        self,
        connect: str = DEFAULT_ENDPOINT,
        sim: str = "default",
        ros_prefix: str = "",
        timeout: float = 10.0,
    ) -> None:
        self.sim = sim
        self.ros_prefix = ros_prefix
        self.keys = _native.Keys(sim, ros_prefix)
        self.endpoint = connect
        self.session = _open(connect, timeout)
        # Closed before the interpreter goes, even if the caller does not.
        self._finalizer = weakref.finalize(self, _close_quietly, self.session)
        self._set_description(self._fetch_description(timeout))
        # Followed from the start: the clock is not latched, and a paused
        # world publishes none.
        self._clock = self.subscribe("/clock", "rosgraph_msgs/msg/Clock", depth=1)

    # --- the world's description -------------------------------------------------

    def _fetch_description(self, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        key = self.keys.world_description()
        while True:
            left = deadline - time.monotonic()
            for reply in self.session.get(key, timeout=max(0.2, min(left, 2.0))):
                if reply.ok is not None:
                    return reply.ok.payload.to_bytes()
                raise FlotillaError(f"{key}: the world refused: {reply.err.payload.to_string()}")
            if time.monotonic() >= deadline:
                raise NoWorld(f"no world answered on {key} at {self.endpoint} within {timeout} s")
            time.sleep(0.2)

    def _set_description(self, payload: bytes) -> None:
        # Decoded once per description: a controller commanding 50 robots
        # at every step would otherwise decode it hundreds of times a step.
        self._description_bytes = payload
        self._description = _native.decode_description(payload)
        self._model_topics = _native.model_topics(payload, self.sim, self.ros_prefix)
        self._inputs_of: dict[str | None, dict[str, str]] = {}

    def refresh(self) -> None:
        """Reads the description again (after spawns, deletes, map changes)."""
        self._set_description(self._fetch_description(5.0))

    @property
    def description(self) -> dict[str, Any]:
        """The world's description: models with their bodies and plugins,
        layers, maps, places, step size and seed (read at connecting and at
        ``refresh``; shared, not to be changed)."""
        return self._description

    def models(self) -> list[str]:
        """The names of the world's models."""
        return [m["name"] for m in self.description["models"]]

    def model(self, name: str) -> dict[str, Any]:
        """One model's description; ``UnknownModel`` names the ones there are."""
        for m in self.description["models"]:
            if m["name"] == name:
                return m
        raise UnknownModel(f"no model {name!r} in sim {self.sim!r}; it has: {', '.join(self.models()) or 'none'}")

    def plugins(self, model: str) -> list[dict[str, Any]]:
        """A model's plugins: ``name``, ``plugin_type`` and their parameters."""
        return self.model(model)["plugins"]

    def topics(self) -> dict[str, str]:
        """Every topic the simulation publishes: key → ROS type."""
        world = _native.topics(self._description_bytes, self.sim, self.ros_prefix)
        return dict(world)

    def inputs(self, model: str | None = None) -> dict[str, str]:
        """The topics the simulation takes in (``cmd_vel``, door requests,
        ...): key → ROS type, of one model or all."""
        if model is not None:
            self.model(model)
        if model not in self._inputs_of:
            self._inputs_of[model] = {
                key: ros_type
                for owner, key, ros_type, direction in self._model_topics
                if direction == "subscribe" and (model is None or owner == model)
            }
        return dict(self._inputs_of[model])

    def laser(self, model: str, plugin: str = "laser") -> dict[str, Any]:
        """A ``Laser`` plugin's parameters as Flotilla's laser reads them
        (``flotilla._native.laser_config``): topic key, frame, body and its
        id, rate, origin, range, noise, layers, angles, beam count, and the
        instance id to claim it by."""
        self.model(model)
        return _native.laser_config(self._description_bytes, self.sim, self.ros_prefix, model, plugin)

    def type_of(self, topic: str) -> str:
        """The ROS type of a topic (published or taken in)."""
        key = self.keys.ros(topic)
        found = {**self.topics(), **self.inputs()}.get(key)
        if found is None:
            raise UnknownTopic(f"{topic!r} is not a topic of sim {self.sim!r} (key {key!r}); see Sim.topics()")
        return found

    # --- topics ------------------------------------------------------------------

    def subscribe(self, topic: str, ros_type: str | None = None, depth: int = 100) -> Subscription:
        """Decoded messages of ``topic`` (its type from the description unless
        given)."""
        return Subscription(self.session, self.keys.ros(topic), ros_type or self.type_of(topic), depth)

    def publish(self, topic: str, message: dict[str, Any], ros_type: str | None = None) -> None:
        """Publishes ``message`` (fields left out keep their defaults)."""
        payload = _native.encode(ros_type or self.type_of(topic), message)
        self.put(self.keys.ros(topic), payload)

    def cmd_vel(
        self, model: str, linear: float = 0.0, angular: float = 0.0, lateral: float = 0.0, stamp_ns: int | None = None
    ) -> None:
        """Commands a robot's drive: m/s forward and sideways, rad/s. With
        ``stamp_ns`` the command goes as a ``TwistStamped`` (every Flotilla
        drive takes either on ``cmd_vel``) and takes effect at the first step
        after that sim time; in lockstep, pass the state's ``time_ns``: a
        plain ``Twist`` takes effect at the step after it arrives, which
        depends on message timing."""
        drives = {
            k: t
            for k, t in self.inputs(model).items()
            if t in ("geometry_msgs/msg/Twist", "geometry_msgs/msg/TwistStamped")
        }
        if not drives:
            raise UnknownTopic(f"model {model!r} has no drive taking a Twist")
        twist = {"linear": {"x": linear, "y": lateral}, "angular": {"z": angular}}
        for key, ros_type in sorted(drives.items()):
            if ros_type.endswith("/Twist") and stamp_ns is None:
                self.put(key, _native.encode(ros_type, twist))
                continue
            stamped = {"header": {"stamp": self._stamp(stamp_ns)}, "twist": twist}
            self.put(key, _native.encode("geometry_msgs/msg/TwistStamped", stamped))

    def put(self, key: str, payload: bytes) -> None:
        """Publishes ``payload`` on the Zenoh key ``key``, waiting for room
        rather than dropping it (Zenoh's default for a put drops a message
        when its link is congested): a command or a lockstep report lost
        under load would change the run or stall the barrier."""
        self.session.put(key, payload, congestion_control=zenoh.CongestionControl.BLOCK)

    def _stamp(self, stamp_ns: int | None) -> dict[str, int]:
        ns = stamp_ns if stamp_ns is not None else (self.time_ns() or 0)
        return {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}

    # --- control operations and services -------------------------------------------

    def control(self, request: Any, timeout: float = 10.0) -> dict[str, Any]:
        """Sends a control request (``{"Move": {...}}``, ``"Pause"``, ...);
        ``ServiceFailed`` with the world's reason when it is refused."""
        verb, payload = _native.encode_control(request)
        key = self.keys.control(verb)
        for reply in self.session.get(key, payload=payload, timeout=timeout):
            if reply.ok is None:
                raise ServiceFailed(f"{verb}: {reply.err.payload.to_string()}")
            answer = _native.decode_control_reply(reply.ok.payload.to_bytes())
            if not answer["success"]:
                raise ServiceFailed(f"{verb}: {answer['message']}")
            return answer
        raise NoWorld(f"{verb}: no world answered on {key} within {timeout} s")

    def spawn(self, model_file: str, name: str, x: float, y: float, theta: float = 0.0, namespace: str = "") -> None:
        """Spawns a model from its YAML file at (x m, y m, θ rad)."""
        self.control(
            {"Spawn": {"yaml_path": model_file, "name": name, "namespace": namespace, "pose": _pose(x, y, theta)}}
        )
        self.refresh()

    def delete(self, name: str) -> None:
        """Deletes a model."""
        self.model(name)
        self.control({"Delete": {"name": name}})
        self.refresh()

    def move(self, name: str, x: float, y: float, theta: float = 0.0) -> None:
        """Teleports a model's first body to (x m, y m, θ rad)."""
        self.model(name)
        self.control({"Move": {"name": name, "pose": _pose(x, y, theta)}})

    def pause(self) -> None:
        """Stops stepping."""
        self.control("Pause")

    def resume(self) -> None:
        """Resumes stepping."""
        self.control("Resume")

    def step(self, steps: int = 1) -> None:
        """While paused: steps ``steps`` times, then stays paused."""
        self.control({"Step": {"steps": steps}})

    def set_map(
        self, name: str, map_name: str, x: float | None = None, y: float | None = None, theta: float = 0.0
    ) -> None:
        """Puts a model on another map, moving it there if a pose is given."""
        self.model(name)
        pose = None if x is None or y is None else _pose(x, y, theta)
        self.control({"SetMap": {"name": name, "map": map_name, "pose": pose, "only_from": None}})
        self.refresh()

    def reset(self) -> None:
        """simulation_interfaces' ResetSimulation (scope ALL): the world as
        its file has it; sim time goes on (it never goes back)."""
        self.call("reset_simulation", {"scope": 255})
        self.refresh()

    def call(self, service: str, request: dict[str, Any] | None = None, timeout: float = 10.0) -> dict[str, Any]:
        """Calls one of the world's ROS services (``Sim.services()``) and
        returns its response; ``ServiceFailed`` when its result says so."""
        payload = _native.encode_request(service, request or {})
        key = self.keys.ros(service)
        for reply in self.session.get(key, payload=payload, timeout=timeout):
            if reply.ok is None:
                raise ServiceFailed(f"{service}: {reply.err.payload.to_string()}")
            response = _native.decode_response(service, reply.ok.payload.to_bytes())
            result = response.get("result")
            if isinstance(result, dict) and result.get("result") not in (None, 1):
                raise ServiceFailed(f"{service}: {result.get('error_message') or result}")
            if response.get("success") is False:
                raise ServiceFailed(f"{service}: {response.get('message', '')}")
            return response
        raise NoWorld(f"{service}: no world answered on {key} within {timeout} s")

    @staticmethod
    def services() -> list[tuple[str, str]]:
        """Every service the world serves: (ROS name, type)."""
        return _native.services()

    # --- the sim clock -------------------------------------------------------------

    def time_ns(self) -> int | None:
        """Sim time, ns, from the last ``/clock`` received since connecting
        (``None`` before the first)."""
        latest = self._clock.latest
        if latest is None:
            return None
        return latest["clock"]["sec"] * 1_000_000_000 + latest["clock"]["nanosec"]

    def time(self) -> float | None:
        """Sim time, s."""
        ns = self.time_ns()
        return None if ns is None else ns * 1e-9

    def wait_until(
        self, condition: Callable[[], bool], sim_timeout: float, wall_timeout: float = 120.0, poll: float = 0.01
    ) -> float:
        """Waits until ``condition()`` holds and returns the sim time then;
        ``TimeoutError`` once ``sim_timeout`` s of sim time (or
        ``wall_timeout`` s of wall time) have passed without it."""
        start_wall = time.monotonic()
        start = None
        while True:
            now = self.time()
            if start is None and now is not None:
                start = now
            if condition():
                return now if now is not None else math.nan
            if start is not None and now is not None and now - start > sim_timeout:
                raise TimeoutError(f"condition not met within {sim_timeout} s of sim time")
            if time.monotonic() - start_wall > wall_timeout:
                raise TimeoutError(f"condition not met within {wall_timeout} s of wall time (sim at {now})")
            time.sleep(poll)

    def wait_for_time(self, t: float, wall_timeout: float = 120.0) -> float:
        """Waits until sim time reaches ``t`` s."""
        return self.wait_until(lambda: (self.time() or 0.0) >= t, sim_timeout=math.inf, wall_timeout=wall_timeout)

    def close(self) -> None:
        """Closes the connection."""
        self._finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _close_quietly(session: zenoh.Session) -> None:
    # With the world gone, Zenoh's close times out: nothing is left to tell.
    try:
        session.close()
    except zenoh.ZError:
        pass


def _open(connect: str, timeout: float) -> zenoh.Session:
    """A client session to ``connect``, retried until ``timeout`` s (a world
    just started may not listen yet); ``NoWorld`` if it never answers."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return zenoh.open(client_config(connect))
        except zenoh.ZError as e:
            if time.monotonic() >= deadline:
                raise NoWorld(f"nothing listens on {connect} (waited {timeout} s): {e}") from None
            time.sleep(0.2)


def _pose(x: float, y: float, theta: float) -> dict[str, float]:
    return {"x_m": float(x), "y_m": float(y), "theta_rad": float(theta)}
