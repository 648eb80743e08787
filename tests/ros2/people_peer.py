#!/usr/bin/env python3
"""A people-aware ROS 2 node reading the crowd's `people_msgs/People` on
`/people` through the bridge, as Nav2's social costmap layers and
people-aware planners do, for `tests/tests/ros2_bridge.rs`.

There are no `people_msgs` wheels on PyPI, so this is a DDS participant from
the `cyclonedds` package with the messages' IDL written out (as
`door_peer.py` does for rmf_door_msgs), announced on `ros_discovery_info` as
rmw does.

Checks, against `configs/tests/crowd/room.world.yaml` run with `--ros`:
  1. everyone is listed, in frame `map`: alice, bob, couple_1, couple_2 as
     `person`, the trolley as `scripted`, with ids 0..4;
  2. the trolley runs its line: on y = 5 m between x = 2 and 3.5 m, at its
     0.5 m/s along x or standing as it turns (within 5 cm and 5 cm/s: real
     time);
  3. alice walks: she moves between the first and the last list, no faster
     than the model's cap.
Prints one `ok: <check>` line per check; exits non-zero on the first failure.

Usage: people_peer.py --domain N [--timeout 40]
(CYCLONEDDS_URI pins DDS to 127.0.0.1; the test sets it.)
"""

import argparse
import math
import time
from dataclasses import dataclass, field

from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import float64, sequence

from ros2_peer import Failure, Node, check, peer_parser, run_checks
from ros2_types import Header, Point

PEOPLE = ["alice", "bob", "couple_1", "couple_2"]
MAX_SPEED_MPS = 1.3 * 1.34  # Helbing–Molnár's cap: 1.3 × the desired speed
LISTS_WANTED = 10


@dataclass
class Person(IdlStruct, typename="people_msgs::msg::dds_::Person_"):
    name: str = ""
    position: Point = field(default_factory=Point)
    velocity: Point = field(default_factory=Point)
    reliability: float64 = 0.0
    tagnames: sequence[str] = field(default_factory=list)
    tags: sequence[str] = field(default_factory=list)


@dataclass
class People(IdlStruct, typename="people_msgs::msg::dds_::People_"):
    header: Header = field(default_factory=Header)
    people: sequence[Person] = field(default_factory=list)


def tag(person: Person, name: str) -> str | None:
    """The value of tag `name` (people_msgs pairs `tagnames` with `tags`)."""
    return person.tags[person.tagnames.index(name)] if name in person.tagnames else None


def run(args: argparse.Namespace) -> None:
    node = Node(args.domain, "people_peer")
    reader = node.reader("/people", People)
    deadline = time.monotonic() + args.timeout
    lists: list[People] = []
    while len(lists) < LISTS_WANTED:
        if time.monotonic() >= deadline:
            raise Failure(f"{len(lists)} People messages on /people in {args.timeout} s, wanted {LISTS_WANTED}")
        lists.extend(reader.take(N=100))
        time.sleep(0.05)

    first, last = lists[0], lists[-1]
    names = [p.name for p in first.people]
    kinds = [tag(p, "kind") for p in first.people]
    ids = [tag(p, "id") for p in first.people]
    check(
        "everyone is listed in map",
        names == [*PEOPLE, "trolley"]
        and kinds == ["person"] * 4 + ["scripted"]
        and ids == [str(i) for i in range(5)]
        and first.header.frame_id == "map",
        f"{names} {kinds} {ids} in {first.header.frame_id!r}",
    )

    def on_its_line(people: People) -> bool:
        trolley = people.people[4]
        speed = math.hypot(trolley.velocity.x, trolley.velocity.y)
        # Real time: a command the world applies a step or two late moves
        # the trolley a few mm off its line (a turn held on as it sets off
        # again), which lockstep never does (tests/tests/crowd.rs).
        return (
            abs(trolley.position.y - 5.0) < 0.05
            and 2.0 - 0.05 <= trolley.position.x <= 3.5 + 0.05
            and abs(trolley.velocity.y) < 0.05
            and speed <= 0.5 + 0.05
        )

    check("the trolley runs its line", all(on_its_line(p) for p in lists), str(lists[-1].people[4]))

    def alice(people: People) -> Person:
        return people.people[0]

    moved = math.dist(
        (alice(first).position.x, alice(first).position.y), (alice(last).position.x, alice(last).position.y)
    )
    fastest = max(math.hypot(alice(p).velocity.x, alice(p).velocity.y) for p in lists)
    check(
        "alice walks",
        moved > 0.1 and fastest <= MAX_SPEED_MPS + 1e-9,
        f"moved {moved:.2f} m, at most {fastest:.2f} m/s",
    )


def main() -> None:
    parser = peer_parser(__doc__, timeout_help="seconds to collect the lists")
    run_checks(run, parser.parse_args())


if __name__ == "__main__":
    main()
