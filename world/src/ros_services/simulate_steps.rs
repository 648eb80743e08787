//! The `simulate_steps` action (simulation_interfaces/action/SimulateSteps)
//! as a pure book of goals: bytes in, replies, feedback and statuses out.
//! `node::action` serves it on Zenoh the way zenoh-plugin-ros2dds routes an
//! action (`<name>/_action/send_goal`, `cancel_goal`, `get_result`
//! queryables, `feedback` and `status` publications).
//!
//! The action's rules: the simulation must be paused; a goal steps it that
//! many times, with feedback after steps, and leaves it paused. Calling
//! while playing ends the goal at once, ABORTED, with OPERATION_FAILED and a
//! message. One goal steps at a time: another sent meanwhile is rejected.
//! Canceling a goal drops the steps it has not taken (the goal ends
//! CANCELED, its result OK and saying how far it got).

use flotilla_messages::action_msgs::{
    cancel_code, goal_status, CancelGoalRequest, CancelGoalResponse, GetResultRequest, GoalInfo, GoalStatus,
    GoalStatusArray, SendGoalResponse, SimulateStepsFeedback, SimulateStepsGoalRequest, SimulateStepsResultResponse,
    Uuid,
};
use flotilla_messages::simulation_interfaces::{result_code, SimResult};
use flotilla_messages::RosMessage;
use flotilla_wire::control::ControlRequest;

use super::World;
use crate::control::{self, RunState};

/// Ended goals kept for `get_result`, oldest dropped first.
const MAX_ENDED_GOALS: usize = 100;

/// Every goal the action server knows.
#[derive(Debug, Default)]
pub struct SimulateSteps {
    goals: Vec<Goal>,
}

#[derive(Debug, Clone)]
struct Goal {
    info: GoalInfo,
    steps: u64,
    /// The step count at which its last step is done.
    target_step: u64,
    completed: u64,
    status: i8,
    result: SimResult,
}

impl Goal {
    fn ended(&self) -> bool {
        matches!(self.status, goal_status::SUCCEEDED | goal_status::CANCELED | goal_status::ABORTED)
    }

    fn result_reply(&self) -> Vec<u8> {
        flotilla_messages::encode(&SimulateStepsResultResponse { status: self.status, result: self.result.clone() })
    }
}

/// What a `get_result` request gets.
#[derive(Debug, Clone, PartialEq)]
pub enum ResultReply {
    /// The goal has ended: its status and result (or UNKNOWN for a goal
    /// never accepted or long forgotten).
    Now(Vec<u8>),
    /// The goal is still stepping: ask again once it has ended.
    WhenEnded(Uuid),
}

/// What stepping changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// Feedback to publish, one per goal that moved on.
    pub feedback: Vec<SimulateStepsFeedback>,
    /// A goal's status changed: publish the status array.
    pub status_changed: bool,
}

fn decode<T: RosMessage>(bytes: &[u8]) -> Result<T, String> {
    flotilla_messages::decode::<T>(bytes).map_err(|e| format!("{}: bad request: {e}", T::TYPE_NAME))
}

impl SimulateSteps {
    /// A goal request: rejected while another goal steps; otherwise
    /// accepted, and stepping (or ended at once when the simulation is
    /// playing or the steps are too many). `Err` for bytes that are no
    /// request.
    pub fn send_goal(&mut self, bytes: &[u8], world: World<'_>) -> Result<SendGoalResponse, String> {
        let request: SimulateStepsGoalRequest = decode(bytes)?;
        let stamp = world.physics.time().to_ros();
        let busy = self.goals.iter().any(|g| !g.ended());
        let duplicate = self.goals.iter().any(|g| g.info.goal_id == request.goal_id);
        if busy || duplicate {
            return Ok(SendGoalResponse { accepted: false, stamp });
        }
        let now = world.physics.step_count();
        let mut goal = Goal {
            info: GoalInfo { goal_id: request.goal_id, stamp },
            steps: request.steps,
            target_step: now,
            completed: 0,
            status: goal_status::EXECUTING,
            result: SimResult::ok(),
        };
        if !world.run.paused {
            goal.status = goal_status::ABORTED;
            goal.result =
                SimResult::fail(result_code::OPERATION_FAILED, "the simulation is playing; pause it before stepping");
        } else if request.steps == 0 {
            goal.status = goal_status::SUCCEEDED;
        } else {
            let (reply, _) = control::handle(world.physics, world.run, ControlRequest::Step { steps: request.steps });
            if reply.success {
                // Steps asked for earlier (StepSimulation, `flotilla step`) come first.
                goal.target_step = now + world.run.steps_pending;
            } else {
                goal.status = goal_status::ABORTED;
                goal.result = SimResult::fail(result_code::OPERATION_FAILED, reply.message);
            }
        }
        self.goals.push(goal);
        self.forget_old();
        Ok(SendGoalResponse { accepted: true, stamp })
    }

    /// The world has taken `step_count` steps in all and is run as `run`
    /// says: feedback for the stepping goal, and its end once it is done —
    /// or once stepping was stopped short (a pause or a reset drops the
    /// steps pending).
    pub fn advance(&mut self, step_count: u64, run: &RunState) -> Progress {
        let mut progress = Progress::default();
        for goal in self.goals.iter_mut().filter(|g| g.status == goal_status::EXECUTING) {
            let first = goal.target_step - goal.steps;
            let completed = step_count.saturating_sub(first).min(goal.steps);
            if completed != goal.completed {
                goal.completed = completed;
                progress.feedback.push(SimulateStepsFeedback {
                    goal_id: goal.info.goal_id,
                    completed_steps: completed,
                    remaining_steps: goal.steps - completed,
                });
            }
            if completed == goal.steps {
                goal.status = goal_status::SUCCEEDED;
                progress.status_changed = true;
            } else if run.paused && run.steps_pending == 0 {
                goal.status = goal_status::ABORTED;
                goal.result = SimResult::fail(
                    result_code::OPERATION_FAILED,
                    format!("stepping was stopped after {completed} of {} steps", goal.steps),
                );
                progress.status_changed = true;
            }
        }
        progress
    }

    /// A cancel request (action_msgs/srv/CancelGoal's rules: a zero id
    /// means every goal, a non-zero stamp every goal accepted at or before
    /// it). A canceled goal's steps not yet taken are dropped.
    pub fn cancel(&mut self, bytes: &[u8], world: World<'_>) -> Result<CancelGoalResponse, String> {
        let request: CancelGoalRequest = decode(bytes)?;
        let GoalInfo { goal_id, stamp } = request.goal_info;
        let (any_id, any_time) = (goal_id == Uuid::default(), stamp == Default::default());
        let selected = |g: &Goal| {
            (!any_id && g.info.goal_id == goal_id)
                || (any_id && any_time)
                || (!any_time && (g.info.stamp.sec, g.info.stamp.nanosec) <= (stamp.sec, stamp.nanosec))
        };
        if !any_id && !self.goals.iter().any(|g| g.info.goal_id == goal_id) {
            return Ok(CancelGoalResponse { return_code: cancel_code::UNKNOWN_GOAL_ID, goals_canceling: vec![] });
        }
        let mut canceling = Vec::new();
        let mut terminated = false;
        for goal in self.goals.iter_mut().filter(|g| selected(g)) {
            if goal.ended() {
                terminated |= !any_id && goal.info.goal_id == goal_id;
                continue;
            }
            let remaining = goal.steps - goal.completed;
            world.run.steps_pending = world.run.steps_pending.saturating_sub(remaining);
            goal.status = goal_status::CANCELED;
            goal.result.error_message = format!("canceled after {} of {} steps", goal.completed, goal.steps);
            canceling.push(goal.info);
        }
        let return_code = match (canceling.is_empty(), terminated) {
            (false, _) => cancel_code::NONE,
            (true, true) => cancel_code::GOAL_TERMINATED,
            (true, false) => cancel_code::REJECTED,
        };
        Ok(CancelGoalResponse { return_code, goals_canceling: canceling })
    }

    /// A result request: the result now for an ended goal, later for one
    /// still stepping.
    pub fn result(&self, bytes: &[u8]) -> Result<ResultReply, String> {
        let request: GetResultRequest = decode(bytes)?;
        Ok(self.result_of(&request.goal_id))
    }

    /// The result of goal `id` now, or when it has ended.
    pub fn result_of(&self, id: &Uuid) -> ResultReply {
        match self.goals.iter().find(|g| g.info.goal_id == *id) {
            Some(goal) if goal.ended() => ResultReply::Now(goal.result_reply()),
            Some(_) => ResultReply::WhenEnded(*id),
            None => ResultReply::Now(flotilla_messages::encode(&SimulateStepsResultResponse {
                status: goal_status::UNKNOWN,
                result: SimResult::fail(result_code::NOT_FOUND, "no such goal"),
            })),
        }
    }

    /// Whether a goal is stepping (the world's steps matter to it).
    pub fn is_stepping(&self) -> bool {
        self.goals.iter().any(|g| g.status == goal_status::EXECUTING)
    }

    /// Every goal known and its status, for the `status` topic.
    pub fn statuses(&self) -> GoalStatusArray {
        GoalStatusArray {
            status_list: self.goals.iter().map(|g| GoalStatus { goal_info: g.info, status: g.status }).collect(),
        }
    }

    fn forget_old(&mut self) {
        while self.goals.iter().filter(|g| g.ended()).count() > MAX_ENDED_GOALS {
            let oldest = self.goals.iter().position(Goal::ended).unwrap_or(0);
            self.goals.remove(oldest);
        }
    }
}
