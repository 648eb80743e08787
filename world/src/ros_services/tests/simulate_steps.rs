//! The `simulate_steps` action's goal book: accept, step with feedback,
//! succeed; abort when playing or stopped short; reject a second goal;
//! cancel by id, by time, or all.

use flotilla_messages::action_msgs::*;
use flotilla_messages::builtin_interfaces::Time;
use flotilla_wire::control::ControlRequest;

use super::*;
use crate::ros_services::simulate_steps::{ResultReply, SimulateSteps};

fn id(n: u8) -> Uuid {
    [n; 16]
}

fn send(book: &mut SimulateSteps, sim: &mut Sim, goal: u8, steps: u64) -> SendGoalResponse {
    let request = encode(&SimulateStepsGoalRequest { goal_id: id(goal), steps });
    book.send_goal(&request, World { physics: &mut sim.physics, run: &mut sim.run }).unwrap()
}

/// Steps the world as the stepping loop does while steps are pending,
/// advancing the book after each; returns the feedback given.
fn run_steps(book: &mut SimulateSteps, sim: &mut Sim, at_most: u64) -> Vec<(u64, u64)> {
    let mut feedback = Vec::new();
    for _ in 0..at_most {
        if sim.run.steps_pending == 0 {
            break;
        }
        sim.physics.step();
        sim.run.steps_pending -= 1;
        let progress = book.advance(sim.physics.step_count(), &sim.run);
        feedback.extend(progress.feedback.iter().map(|f| (f.completed_steps, f.remaining_steps)));
    }
    feedback
}

fn result(book: &SimulateSteps, goal: u8) -> SimulateStepsResultResponse {
    match book.result_of(&id(goal)) {
        ResultReply::Now(bytes) => decode(&bytes).unwrap(),
        ResultReply::WhenEnded(_) => panic!("goal {goal} has not ended"),
    }
}

fn status(book: &SimulateSteps, goal: u8) -> i8 {
    book.statuses().status_list.iter().find(|s| s.goal_info.goal_id == id(goal)).unwrap().status
}

fn paused_sim() -> Sim {
    let mut sim = Sim::new();
    sim.run.paused = true;
    sim
}

#[test]
fn a_goal_steps_the_paused_world_with_feedback_and_succeeds() {
    let (mut book, mut sim) = (SimulateSteps::default(), paused_sim());
    let accepted = send(&mut book, &mut sim, 1, 3);
    assert!(accepted.accepted);
    assert_eq!(book.result_of(&id(1)), ResultReply::WhenEnded(id(1)), "the result waits for the end");
    assert_eq!(status(&book, 1), goal_status::EXECUTING);
    assert_eq!(run_steps(&mut book, &mut sim, 10), vec![(1, 2), (2, 1), (3, 0)]);
    assert_eq!(sim.physics.step_count(), 3);
    assert!(sim.run.paused, "left paused");
    assert_eq!(status(&book, 1), goal_status::SUCCEEDED);
    assert_eq!(
        result(&book, 1),
        SimulateStepsResultResponse { status: goal_status::SUCCEEDED, result: SimResult::ok() }
    );
    // The id is taken; an unknown one has no result.
    assert!(!send(&mut book, &mut sim, 1, 1).accepted);
    assert_eq!(result(&book, 9).status, goal_status::UNKNOWN);
}

#[test]
fn a_goal_sent_while_playing_ends_at_once_with_operation_failed() {
    let (mut book, mut sim) = (SimulateSteps::default(), Sim::new());
    assert!(send(&mut book, &mut sim, 1, 5).accepted);
    let ended = result(&book, 1);
    assert_eq!(ended.status, goal_status::ABORTED);
    assert_eq!(ended.result.result, result_code::OPERATION_FAILED);
    assert!(ended.result.error_message.contains("pause"), "{ended:?}");
}

#[test]
fn one_goal_steps_at_a_time_and_a_pause_stops_it_short() {
    let (mut book, mut sim) = (SimulateSteps::default(), paused_sim());
    assert!(send(&mut book, &mut sim, 1, 10).accepted);
    assert!(!send(&mut book, &mut sim, 2, 1).accepted, "rejected while the first steps");
    run_steps(&mut book, &mut sim, 4);
    // `flotilla pause` drops the steps pending.
    let _ = crate::control::handle(&mut sim.physics, &mut sim.run, ControlRequest::Pause);
    let progress = book.advance(sim.physics.step_count(), &sim.run);
    assert!(progress.status_changed);
    let ended = result(&book, 1);
    assert_eq!(ended.status, goal_status::ABORTED);
    assert!(ended.result.error_message.contains("after 4 of 10 steps"), "{ended:?}");
    assert!(send(&mut book, &mut sim, 2, 1).accepted, "free again");
}

#[test]
fn cancel_drops_the_steps_not_taken() {
    let (mut book, mut sim) = (SimulateSteps::default(), paused_sim());
    assert!(send(&mut book, &mut sim, 1, 10).accepted);
    run_steps(&mut book, &mut sim, 2);
    let cancel = |book: &mut SimulateSteps, sim: &mut Sim, goal_id: Uuid, stamp: Time| {
        let request = encode(&CancelGoalRequest { goal_info: GoalInfo { goal_id, stamp } });
        book.cancel(&request, World { physics: &mut sim.physics, run: &mut sim.run }).unwrap()
    };
    assert_eq!(cancel(&mut book, &mut sim, id(7), Time::default()).return_code, cancel_code::UNKNOWN_GOAL_ID);
    let canceled = cancel(&mut book, &mut sim, id(1), Time::default());
    assert_eq!(canceled.return_code, cancel_code::NONE);
    assert_eq!(canceled.goals_canceling.len(), 1);
    assert_eq!(sim.run.steps_pending, 0, "its 8 steps left are dropped");
    let ended = result(&book, 1);
    assert_eq!(ended.status, goal_status::CANCELED);
    assert_eq!(ended.result.error_message, "canceled after 2 of 10 steps");
    assert_eq!(cancel(&mut book, &mut sim, id(1), Time::default()).return_code, cancel_code::GOAL_TERMINATED);

    // Everything (zero id, zero stamp), and by time.
    assert!(send(&mut book, &mut sim, 2, 5).accepted);
    assert_eq!(cancel(&mut book, &mut sim, Uuid::default(), Time::default()).goals_canceling.len(), 1);
    assert!(send(&mut book, &mut sim, 3, 5).accepted);
    let before = Time { sec: -1, nanosec: 0 };
    assert_eq!(cancel(&mut book, &mut sim, Uuid::default(), before).return_code, cancel_code::REJECTED);
    let now = sim.physics.time().to_ros();
    assert_eq!(cancel(&mut book, &mut sim, Uuid::default(), now).goals_canceling[0].goal_id, id(3));
}

#[test]
fn undecodable_requests_are_errors() {
    let (mut book, mut sim) = (SimulateSteps::default(), paused_sim());
    assert!(book.send_goal(&[1, 2], World { physics: &mut sim.physics, run: &mut sim.run }).is_err());
    assert!(book.result(&[]).is_err());
}
