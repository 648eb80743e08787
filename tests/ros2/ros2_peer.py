#!/usr/bin/env python3
"""A ROS 2 node that no Flotilla code implements, for the bridge's end-to-end test.

It speaks DDS through the PyPI `cyclonedds` package and behaves as rmw does:
ROS topic names get the `rt/` prefix, services are `rq/<name>Request` and
`rr/<name>Reply` with rmw_cyclonedds's 16-byte request header, and the node
announces its readers and writers on `ros_discovery_info` (zenoh-plugin-ros2dds
only routes entities of announced nodes).

Checks, against a room world with one robot in namespace `robot` and a bridge
on the same DDS domain:
  1. clock arrives and advances;
  2. tf_static, subscribed late, still delivers the laser mount and
     map -> odom, published by two different nodes (latched);
  3. tf and scan arrive;
  4. cmd_vel (Twist) makes the robot's odometry move forward;
  5. spawn_entity, then get_entities lists the new entity, then delete_entity
     removes it, and a spawn with a taken name gets NAME_NOT_UNIQUE;
  6. the simulate_steps action takes a goal and gives its result (while
     playing: aborted with OPERATION_FAILED);
  7. every other simulation_interfaces service answers, as it should work and
     with the failure code the standard gives for bad input (si_checks.py).
Prints one line per check and exits non-zero on the first failure.

Usage: ros2_peer.py --domain N [--namespace robot] [--timeout 30]
(CYCLONEDDS_URI pins DDS to 127.0.0.1; the test sets it.)
"""

import argparse
import sys
import time
from dataclasses import dataclass, field

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import array, int8, int64, sequence, uint8, uint64
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

import si_checks
from ros2_types import (
    Clock,
    Header,
    LaserScan,
    Odometry,
    Point,
    Pose,
    PoseStamped,
    TFMessage,
    Time,
    Twist,
    Vector3,
)
from si_types import (
    DeleteEntityReply,
    DeleteEntityRequest,
    GetEntitiesReply,
    GetEntitiesRequest,
    Resource,
    SimResult,
    SpawnEntityReply,
    SpawnEntityRequest,
)

# --- the simulate_steps action's services -------------------------------


@dataclass
class Uuid(IdlStruct, typename="unique_identifier_msgs::msg::dds_::UUID_"):
    uuid: array[uint8, 16] = field(default_factory=lambda: [0] * 16)


@dataclass
class SimulateStepsGoal(IdlStruct, typename="simulation_interfaces::action::dds_::SimulateSteps_Goal_"):
    steps: uint64 = 0


@dataclass
class SimulateStepsSendGoalRequest(
    IdlStruct, typename="simulation_interfaces::action::dds_::SimulateSteps_SendGoal_Request_"
):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    goal_id: Uuid = field(default_factory=Uuid)
    goal: SimulateStepsGoal = field(default_factory=SimulateStepsGoal)


@dataclass
class SimulateStepsSendGoalReply(
    IdlStruct, typename="simulation_interfaces::action::dds_::SimulateSteps_SendGoal_Response_"
):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    accepted: bool = False
    stamp: Time = field(default_factory=Time)


@dataclass
class SimulateStepsGetResultRequest(
    IdlStruct, typename="simulation_interfaces::action::dds_::SimulateSteps_GetResult_Request_"
):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    goal_id: Uuid = field(default_factory=Uuid)


@dataclass
class SimulateStepsResult(IdlStruct, typename="simulation_interfaces::action::dds_::SimulateSteps_Result_"):
    result: SimResult = field(default_factory=SimResult)


@dataclass
class SimulateStepsGetResultReply(
    IdlStruct, typename="simulation_interfaces::action::dds_::SimulateSteps_GetResult_Response_"
):
    client_guid: uint64 = 0
    sequence_number: int64 = 0
    status: int8 = 0
    result: SimulateStepsResult = field(default_factory=SimulateStepsResult)


# --- rmw's node announcement ----------------------------------------------


@dataclass
class Gid(IdlStruct, typename="rmw_dds_common::msg::dds_::Gid_"):
    data: array[uint8, 16] = field(default_factory=lambda: [0] * 16)


@dataclass
class NodeEntitiesInfo(IdlStruct, typename="rmw_dds_common::msg::dds_::NodeEntitiesInfo_"):
    node_namespace: str = "/"
    node_name: str = ""
    reader_gid_seq: sequence[Gid] = field(default_factory=list)
    writer_gid_seq: sequence[Gid] = field(default_factory=list)


@dataclass
class ParticipantEntitiesInfo(IdlStruct, typename="rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"):
    gid: Gid = field(default_factory=Gid)
    node_entities_info_seq: sequence[NodeEntitiesInfo] = field(default_factory=list)


RESULT_OK = 1
OPERATION_FAILED = 4
NAME_NOT_UNIQUE = 101
GOAL_ABORTED = 6

XCDR1 = Policy.DataRepresentation(use_cdrv0_representation=True)
RELIABLE = Policy.Reliability.Reliable(max_blocking_time=duration(milliseconds=100))
TOPIC_QOS = Qos(RELIABLE, Policy.Durability.Volatile, Policy.History.KeepLast(10), XCDR1)
LATCHED_QOS = Qos(RELIABLE, Policy.Durability.TransientLocal, Policy.History.KeepLast(100), XCDR1)
DISCOVERY_QOS = Qos(RELIABLE, Policy.Durability.TransientLocal, Policy.History.KeepLast(1), XCDR1)
# A reply later than this sends the request again (the bridge's route may
# have been matched on DDS before it was ready on Zenoh).
RESEND_AFTER_S = 5.0
SERVICE_QOS = Qos(RELIABLE, Policy.Durability.Volatile, Policy.History.KeepLast(10), XCDR1)


def gid(entity):
    return Gid(list(entity.guid.bytes))


class Node:
    """One ROS node on one participant, announced as rmw announces it."""

    def __init__(self, domain, name):
        self.participant = DomainParticipant(domain)
        self.name = name
        self.readers, self.writers = [], []
        info_topic = Topic(self.participant, "ros_discovery_info", ParticipantEntitiesInfo)
        self.info_writer = DataWriter(self.participant, info_topic, qos=DISCOVERY_QOS)
        self.info_reader_gid = None

    def reader(self, ros_name, msg_type, qos=TOPIC_QOS, prefix="rt"):
        topic = Topic(self.participant, f"{prefix}{ros_name}", msg_type)
        reader = DataReader(self.participant, topic, qos=qos)
        self.readers.append(reader)
        self.announce()
        return reader

    def writer(self, ros_name, msg_type, qos=TOPIC_QOS, prefix="rt"):
        topic = Topic(self.participant, f"{prefix}{ros_name}", msg_type)
        writer = DataWriter(self.participant, topic, qos=qos)
        self.writers.append(writer)
        self.announce()
        return writer

    def announce(self):
        node = NodeEntitiesInfo(
            node_namespace="/",
            node_name=self.name,
            reader_gid_seq=[gid(r) for r in self.readers],
            writer_gid_seq=[gid(w) for w in self.writers],
        )
        self.info_writer.write(ParticipantEntitiesInfo(gid=gid(self.participant), node_entities_info_seq=[node]))


class ServiceClient:
    """A ROS 2 service client with rmw_cyclonedds's request header."""

    def __init__(self, node, ros_name, request_type, reply_type):
        self.writer = node.writer(ros_name + "Request", request_type, SERVICE_QOS, prefix="rq")
        self.reader = node.reader(ros_name + "Reply", reply_type, SERVICE_QOS, prefix="rr")
        self.guid = int.from_bytes(self.writer.guid.bytes[8:16], "little")
        self.sequence = 0
        self.ros_name = ros_name

    def is_ready(self):
        """True once the bridge reads our requests and writes our replies,
        as rclpy's `service_is_ready` asks."""
        writer_matched = self.writer.get_publication_matched_status().current_count > 0
        reader_matched = self.reader.get_subscription_matched_status().current_count > 0
        return writer_matched and reader_matched

    def call(self, request, deadline):
        """Waits for the service as `wait_for_service` does, then sends once;
        sends again only after `RESEND_AFTER_S` without a reply. A request
        sent before the reply path is matched can be carried out with its
        reply lost, and sending it again would then be refused (a second
        pause is "already in that state"), so the first send waits."""
        self.sequence += 1
        request.client_guid, request.sequence_number = self.guid, self.sequence
        while not self.is_ready():
            if time.monotonic() >= deadline:
                raise Failure(f"{self.ros_name}: the service never matched")
            time.sleep(0.02)
        next_send = 0.0
        while time.monotonic() < deadline:
            if time.monotonic() >= next_send:
                self.writer.write(request)
                next_send = time.monotonic() + RESEND_AFTER_S
            for reply in self.reader.take(N=10):
                if reply.sequence_number == self.sequence and reply.client_guid == self.guid:
                    return reply
            time.sleep(0.02)
        raise Failure(f"{self.ros_name}: no reply")


class Failure(Exception):
    pass


def wait_for(reader, deadline, what, accept=lambda m: True):
    while time.monotonic() < deadline:
        for message in reader.take(N=100):
            if accept(message):
                return message
        time.sleep(0.01)
    raise Failure(f"no {what} within the timeout")


def check(label, condition, detail=""):
    if not condition:
        raise Failure(f"{label}: {detail}")
    print(f"ok: {label}", flush=True)


def run(args):
    deadline = lambda: time.monotonic() + args.timeout
    ns = "/" + args.namespace
    node = Node(args.domain, "ros2_peer")

    clock = node.reader("/clock", Clock)
    first = wait_for(clock, deadline(), "clock")
    t0 = first.clock.sec + first.clock.nanosec * 1e-9
    later = wait_for(clock, deadline(), "a later clock", lambda m: m.clock.sec + m.clock.nanosec * 1e-9 > t0 + 0.5)
    check("clock advances", True, f"{t0:.3f} s then {later.clock.sec} s")

    # Subscribed long after the laser published its mount: only a latched
    # (transient-local) tf_static delivers it.
    # Two nodes publish static transforms (the laser node its mount, the
    # odometry node map -> odom); a late reader must get both.
    tf_static = node.reader("/tf_static", TFMessage, LATCHED_QOS)
    frames = set()
    end = deadline()
    while time.monotonic() < end and not (any("laser" in child for _, child in frames) and ("map", "odom") in frames):
        for message in tf_static.take(N=100):
            frames.update((t.header.frame_id, t.child_frame_id) for t in message.transforms)
        time.sleep(0.01)
    check("tf_static is latched", any("laser" in child for _, child in frames), str(sorted(frames)))
    check("map -> odom on tf_static (REP-105)", ("map", "odom") in frames, str(sorted(frames)))

    tf = node.reader("/tf", TFMessage)
    moving = wait_for(tf, deadline(), "tf", lambda m: len(m.transforms) > 0)
    check("tf arrives", True, str([(t.header.frame_id, t.child_frame_id) for t in moving.transforms]))

    scan_reader = node.reader(ns + "/scan", LaserScan)
    scan = wait_for(scan_reader, deadline(), "scan", lambda m: len(m.ranges) > 0)
    check("scan arrives", "laser" in scan.header.frame_id, f"{len(scan.ranges)} ranges in {scan.header.frame_id}")

    odom_reader = node.reader(ns + "/odometry/filtered", Odometry)
    start = wait_for(odom_reader, deadline(), "odometry")
    x0 = start.pose.pose.position.x
    cmd_vel = node.writer(ns + "/cmd_vel", Twist)
    end = deadline()
    moved = None
    while time.monotonic() < end and moved is None:
        cmd_vel.write(Twist(linear=Vector3(x=0.5)))
        for m in odom_reader.take(N=100):
            if m.pose.pose.position.x > x0 + 0.3 and m.twist.twist.linear.x > 0.3:
                moved = m
        time.sleep(0.05)
    cmd_vel.write(Twist())
    check("cmd_vel drives the robot", moved is not None, f"odometry stayed near x = {x0:.3f} m")

    spawn = ServiceClient(node, "/spawn_entity", SpawnEntityRequest, SpawnEntityReply)
    get_entities = ServiceClient(node, "/get_entities", GetEntitiesRequest, GetEntitiesReply)
    delete = ServiceClient(node, "/delete_entity", DeleteEntityRequest, DeleteEntityReply)
    request = SpawnEntityRequest(
        name="crate1",
        entity_resource=Resource(uri=args.model),
        initial_pose=PoseStamped(header=Header(frame_id="map"), pose=Pose(position=Point(x=2.0, y=2.0))),
    )
    reply = spawn.call(request, deadline())
    check("spawn_entity", reply.result.result == RESULT_OK and reply.entity_name == "crate1", str(reply.result))
    reply = get_entities.call(GetEntitiesRequest(), deadline())
    check("get_entities lists it", "crate1" in reply.entities, str(reply.entities))
    reply = spawn.call(request, deadline())
    check("a taken name is refused", reply.result.result == NAME_NOT_UNIQUE, str(reply.result))
    reply = delete.call(DeleteEntityRequest(entity="crate1"), deadline())
    check("delete_entity", reply.result.result == RESULT_OK, str(reply.result))
    reply = get_entities.call(GetEntitiesRequest(), deadline())
    check("get_entities no longer lists it", "crate1" not in reply.entities, str(reply.entities))

    # The simulate_steps action's goal and result services, as an rclpy
    # action client calls them. The world is playing, so the goal is
    # accepted and ends at once with OPERATION_FAILED (the action's rule).
    send_goal = ServiceClient(
        node, "/simulate_steps/_action/send_goal", SimulateStepsSendGoalRequest, SimulateStepsSendGoalReply
    )
    get_result = ServiceClient(
        node, "/simulate_steps/_action/get_result", SimulateStepsGetResultRequest, SimulateStepsGetResultReply
    )
    goal_id = Uuid(list(range(1, 17)))
    reply = send_goal.call(SimulateStepsSendGoalRequest(goal_id=goal_id, goal=SimulateStepsGoal(steps=10)), deadline())
    check("simulate_steps accepts a goal", reply.accepted, str(reply))
    reply = get_result.call(SimulateStepsGetResultRequest(goal_id=goal_id), deadline())
    check(
        "simulate_steps ends it while playing",
        reply.status == GOAL_ABORTED and reply.result.result.result == OPERATION_FAILED,
        str(reply),
    )

    # Every other simulation_interfaces service, each with its failure codes.
    si_checks.run(
        node,
        lambda name, request_type, reply_type: ServiceClient(node, name, request_type, reply_type),
        check,
        deadline,
        args.model,
    )


def peer_parser(doc, timeout_help="seconds per check"):
    """The options every DDS peer takes: its domain and its timeout."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domain", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=30.0, help=timeout_help)
    return parser


def run_checks(run, args):
    """Runs a peer's checks: `FAILED: …` and exit status 1 at the first
    failure, else `all checks passed`."""
    try:
        run(args)
    except Failure as failure:
        print(f"FAILED: {failure}", flush=True)
        sys.exit(1)
    print("all checks passed", flush=True)


def main():
    parser = peer_parser(__doc__)
    parser.add_argument("--namespace", default="robot")
    parser.add_argument("--model", default="box.model.yaml", help="model file for spawn_entity")
    run_checks(run, parser.parse_args())


if __name__ == "__main__":
    main()
