#!/usr/bin/env python3
"""A controller that joins Flotilla's lockstep barrier and closes the loop
deterministically, through the flotilla Python package (pip install ./python).

It drives a robot forward until its ground-truth x passes a goal, then stops.
Every state k+1 arrives after all of step k's odometry (see
flotilla.lockstep), so deciding on it gives the same run every time.
"""

import argparse

import flotilla


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connect", default="tcp/127.0.0.1:7450")
    parser.add_argument("--sim", default="default")
    parser.add_argument("--robot", default="robot", help="the robot model")
    parser.add_argument("--goal-x", type=float, default=6.0, help="stop once x passes this, m")
    parser.add_argument("--steps", type=int, default=600, help="leave the barrier after this step")
    args = parser.parse_args()

    sim = flotilla.Sim(connect=args.connect, sim=args.sim)
    namespace = sim.model(args.robot)["namespace"]
    odometry = f"{namespace}/odometry/ground_truth" if namespace else "odometry/ground_truth"
    x, stopped_at, step = None, None, None
    with flotilla.Participant(sim, "py-controller") as me:
        me.watch(odometry)
        while True:
            state = me.next_state()
            step = state["step"]
            if odometry in me.latest:
                x = me.latest[odometry]["pose"]["pose"]["position"]["x"]
            if stopped_at is None and x is not None and x >= args.goal_x:
                stopped_at = step
            sim.cmd_vel(args.robot, linear=0.0 if stopped_at is not None else 0.5, stamp_ns=state["time_ns"])
            if step >= args.steps:
                break
            me.done(state)
    print(f"stopped at step {stopped_at}, x = {x:.6f} m at step {step}", flush=True)
    sim.close()


if __name__ == "__main__":
    main()
