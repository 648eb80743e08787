"""Taking part in lockstep: the world waits for this program at every step.

The handshake (docs/time-and-determinism.md, "Lockstep participants"): a
liveliness token on ``flotilla/<sim>/lockstep/<id>``; for every world state
k, publish the commands for step k, then report "done with k" on the same
key. The world publishes state k+1 only when every participant has reported
k, and every node publishes its outputs of step k before it reports k, so
when state k+1 arrives the outputs of step k have arrived before it. The
participant reads the world state and the topics it watches from one queue
filled on Zenoh's receive thread, which keeps that order.
"""

from __future__ import annotations

import contextlib
import queue
import time
from typing import Any, Self

import zenoh

from flotilla import _native
from flotilla.sim import Sim

#: How long ``Participant.close`` waits for the state after its last report,
#: s (a paused or stopping world publishes none).
LEAVE_WAIT_S = 5.0


class Participant:
    """A lockstep participant named ``name`` in ``sim``.

    >>> with Participant(sim, "my-controller") as me:
    ...     me.watch("robot/odometry/ground_truth")
    ...     state = me.next_state()
    ...     sim.cmd_vel("robot", 0.5)
    ...     me.done(state)
    """

    def __init__(self, sim: Sim, name: str) -> None:
        self.sim = sim
        self.key = sim.keys.lockstep(name)
        self._inbox: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self._types: dict[str, str] = {}
        self.latest: dict[str, dict[str, Any]] = {}
        self._subscribers = [
            sim.session.declare_subscriber(sim.keys.world_state(), self._into_inbox("\0state")),
        ]
        self._token = sim.session.liveliness().declare_token(self.key)
        self._last_step: int | None = None
        self._reported: int | None = None
        self._min_revision = 0
        # Between a reset and its first state, what arrives is from before it.
        self._restarting = False

    def _into_inbox(self, topic: str) -> zenoh.handlers.Callback:
        # `indirect=False`: called on Zenoh's receive thread, in arrival order
        # across keys (an indirect callback would get a thread of its own).
        return zenoh.handlers.Callback(lambda s: self._inbox.put((topic, s.payload.to_bytes())), indirect=False)

    def watch(self, topic: str, ros_type: str | None = None) -> None:
        """Keeps the newest message of ``topic`` in ``latest[topic]``, as of
        the step the last state returned by ``next_state`` follows."""
        self._types[topic] = ros_type or self.sim.type_of(topic)
        self._subscribers.append(self.sim.session.declare_subscriber(self.sim.keys.ros(topic), self._into_inbox(topic)))

    def next_state(self, timeout: float = 60.0) -> dict[str, Any]:
        """The next world state (see ``flotilla._native.decode_world_state``),
        with every watched topic's messages published before it applied to
        ``latest``. A state the world publishes again is skipped, and
        reported again if it was reported: a standby world that took over
        from a crashed one may not have had the report."""
        while True:
            try:
                topic, payload = self._inbox.get(timeout=timeout)
            except queue.Empty:
                raise TimeoutError(f"{self.key}: no world state within {timeout} s") from None
            if topic != "\0state":
                if not self._restarting:
                    self.latest[topic] = _native.decode(self._types[topic], payload)
                continue
            state = _native.decode_world_state(payload)
            if state["revision"] < self._min_revision:
                continue  # from before a reset the caller has waited for
            self._restarting = False
            if self._last_step is not None and state["step"] <= self._last_step:
                if state["step"] == self._reported:
                    # Published again: the world waits on someone, and it
                    # may be this program, if the world took over from one
                    # that crashed before it had the report.
                    with contextlib.suppress(zenoh.ZError):
                        self.done(self._reported)
                continue
            self._last_step = state["step"]
            return state

    def restart_at(self, revision: int) -> None:
        """After a world reset that brought the description to ``revision``:
        states from before it are dropped, steps count from the reset's
        again, and ``latest`` is forgotten along with every message that
        arrives before the first state after the reset."""
        self._min_revision = revision
        self._last_step = None
        self._reported = None
        self._restarting = True
        self.latest.clear()

    def done(self, state: dict[str, Any] | int) -> None:
        """Reports the step of ``state`` done: everything published for it
        has been published."""
        step = state if isinstance(state, int) else state["step"]
        self.sim.put(self.key, _native.encode_step_done(step))
        self._reported = step

    def close(self) -> None:
        """Leaves the barrier (the world stops waiting for this program),
        reporting first the last state ``next_state`` returned if it was not
        reported: what was published for it then takes effect at the next
        step, as it would have with the report. It then waits (at most
        ``LEAVE_WAIT_S``) for the state after its last report before its
        token goes: Zenoh sends the token's going as a declaration, ahead of
        the messages sent before it, so gone before its report arrived it
        would let the world step on before its last commands reached their
        nodes."""
        if self._last_step is not None and (self._reported is None or self._reported < self._last_step):
            # A session closed already has nothing left to order.
            with contextlib.suppress(zenoh.ZError):
                self.done(self._last_step)
        if self._reported is not None:
            self._await_state_after(self._reported)
        self._token.undeclare()
        for subscriber in self._subscribers:
            subscriber.undeclare()

    def _await_state_after(self, answered: int) -> None:
        """Waits (at most ``LEAVE_WAIT_S``) for a state other than the one
        at step ``answered``: the world has the report of it then."""
        deadline = time.monotonic() + LEAVE_WAIT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                topic, payload = self._inbox.get(timeout=left)
            except queue.Empty:
                return
            if topic == "\0state" and _native.decode_world_state(payload)["step"] != answered:
                return

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
