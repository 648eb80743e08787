"""Starting and stopping a simulation from Python (``flotilla run``)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Self

from flotilla.errors import FlotillaError
from flotilla.sim import Sim


def flotilla_binary() -> str:
    """The ``flotilla`` command: ``$FLOTILLA_BIN`` if set, else the one on
    PATH (``cargo install --path cli``, or a checkout's ``target/*/``)."""
    given = os.environ.get("FLOTILLA_BIN")
    if given:
        if not Path(given).is_file():
            raise FlotillaError(f"FLOTILLA_BIN={given} is not a file")
        return given
    found = shutil.which("flotilla")
    if found is None:
        raise FlotillaError(
            "no `flotilla` command on PATH: build it (cargo build --bins) and set FLOTILLA_BIN "
            "to target/debug/flotilla, or put target/release on PATH"
        )
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Simulation:
    """A world run by ``flotilla run`` in a child process, listening on its
    own loopback port under its own simulation id, and joined to the Zenoh
    networks of the endpoints in ``connect`` (other simulations' worlds: one
    network, told apart by simulation id, and by ``ros_prefix`` in front of
    their ROS-facing keys, which are the ROS names); ``stop()`` (or leaving a ``with``
    block) ends it and every node it started.

    >>> with Simulation("configs/tests/room/world.yaml", clock="lockstep") as run:
    ...     sim = run.connect()
    """

    def __init__(
        self,
        world: str | os.PathLike[str],
        sim: str | None = None,
        clock: str = "lockstep",
        seed: int | None = None,
        port: int | None = None,
        connect: tuple[str, ...] = (),
        ros_prefix: str = "",
        extra_args: tuple[str, ...] = (),
    ) -> None:
        world = Path(world)
        if not world.is_file():
            raise FlotillaError(f"{world}: no such world file")
        self.port = port or free_port()
        self.sim = sim or f"py-{os.getpid()}-{self.port}"
        self.endpoint = f"tcp/127.0.0.1:{self.port}"
        args = [flotilla_binary(), "run", str(world), "--sim", self.sim, "--listen", self.endpoint, "--clock", clock]
        if seed is not None:
            args += ["--seed", str(seed)]
        for endpoint in connect:
            args += ["--connect", endpoint]
        self.ros_prefix = ros_prefix
        if ros_prefix:
            args += ["--ros-prefix", ros_prefix]
        args += list(extra_args)
        self.log = Path(tempfile.gettempdir()) / f"flotilla-{self.sim}.log"
        with open(self.log, "wb") as log:
            self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def connect(self, timeout: float = 60.0) -> Sim:
        """A connection to this simulation, once its world answers."""
        if self._process is not None and self._process.poll() is not None:
            raise FlotillaError(f"flotilla run exited with {self._process.returncode}; see {self.log}")
        return Sim(self.endpoint, sim=self.sim, ros_prefix=self.ros_prefix, timeout=timeout)

    def stop(self, timeout: float = 20.0) -> None:
        """Stops the world and its nodes (SIGTERM, then SIGKILL)."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def __del__(self) -> None:
        self.stop()
