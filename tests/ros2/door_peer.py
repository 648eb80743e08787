#!/usr/bin/env python3
"""An Open-RMF client of Flotilla's doors over DDS, for the bridge's test.

There are no `rmf_door_msgs` wheels on PyPI, so this is a DDS participant
from the `cyclonedds` package with the messages' IDL written out (as
`ros2_peer.py` does for simulation_interfaces), announced on
`ros_discovery_info` as rmw does. It behaves as Open-RMF's fleet adapter
and door supervisor do: reads `/door_states`, and writes `/door_requests`.

Checks, against `configs/tests/doors/world.yaml` run with `--ros`:
  1. both doors report MODE_CLOSED on /door_states;
  2. a request to open `front` makes it report MODE_MOVING, then MODE_OPEN;
  3. a request to close it brings it back to MODE_CLOSED.
Prints one `ok: <check>` line per check; exits non-zero on the first failure.

Usage: door_peer.py --domain N [--timeout 30]
(CYCLONEDDS_URI pins DDS to 127.0.0.1; the test sets it.)
"""

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import uint32

from ros2_peer import Failure, Node, check, peer_parser, run_checks
from ros2_types import Time

MODE_CLOSED, MODE_MOVING, MODE_OPEN = 0, 1, 2


@dataclass
class DoorMode(IdlStruct, typename="rmf_door_msgs::msg::dds_::DoorMode_"):
    value: uint32 = 0


@dataclass
class DoorRequest(IdlStruct, typename="rmf_door_msgs::msg::dds_::DoorRequest_"):
    request_time: Time = field(default_factory=Time)
    requester_id: str = ""
    door_name: str = ""
    requested_mode: DoorMode = field(default_factory=DoorMode)


@dataclass
class DoorState(IdlStruct, typename="rmf_door_msgs::msg::dds_::DoorState_"):
    door_time: Time = field(default_factory=Time)
    door_name: str = ""
    current_mode: DoorMode = field(default_factory=DoorMode)


def wait_for_mode(
    states: object, deadline: float, door: str, mode: int, on_wait: Callable[[], None] = lambda: None
) -> DoorState:
    """The first state of `door` in `mode`; `on_wait` runs between reads
    (to send a request again until the door answers)."""
    while time.monotonic() < deadline:
        for state in states.take(N=100):
            if state.door_name == door and state.current_mode.value == mode:
                return state
        on_wait()
        time.sleep(0.05)
    raise Failure(f"door {door!r} never reported mode {mode}")


def run(args: argparse.Namespace) -> None:
    node = Node(args.domain, "door_peer")
    states = node.reader("/door_states", DoorState)
    requests = node.writer("/door_requests", DoorRequest)

    def deadline() -> float:
        return time.monotonic() + args.timeout

    for door in ("front", "side"):
        wait_for_mode(states, deadline(), door, MODE_CLOSED)
    check("both doors report closed", True)

    def ask(mode: int) -> Callable[[], None]:
        request = DoorRequest(
            requester_id="door_peer", door_name="front", requested_mode=DoorMode(mode), request_time=Time(0, 0)
        )
        # As the door supervisor does, the request is sent again until the
        # door answers (the bridge's route may match after the first).
        return lambda: requests.write(request)

    opening = ask(MODE_OPEN)
    moving = wait_for_mode(states, deadline(), "front", MODE_MOVING, opening)
    opened = wait_for_mode(states, deadline(), "front", MODE_OPEN, opening)
    opened_s = opened.door_time.sec + opened.door_time.nanosec * 1e-9
    moving_s = moving.door_time.sec + moving.door_time.nanosec * 1e-9
    check("front opens when asked", opened_s > moving_s, f"moving at {moving_s:.2f} s, open at {opened_s:.2f} s")

    wait_for_mode(states, deadline(), "front", MODE_CLOSED, ask(MODE_CLOSED))
    check("front closes when asked", True)


def main() -> None:
    parser = peer_parser(__doc__)
    run_checks(run, parser.parse_args())


if __name__ == "__main__":
    main()
