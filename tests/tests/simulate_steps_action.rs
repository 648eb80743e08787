//! The `simulate_steps` action end to end, on the keys zenoh-plugin-ros2dds
//! routes an action on: a goal steps the paused world with feedback, the
//! result asked for before the end comes at the end, and the world stays
//! paused.

mod common;

use std::time::Duration;

use common::Sim;
use flotilla_messages::action_msgs::*;
use flotilla_messages::simulation_interfaces::SimResult;

const T: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_steps_the_paused_world_and_its_result_comes_at_the_end() {
    let world = common::config("tests/room/world.yaml");
    let sim = Sim::start("simulate_steps", &world, &[], &["--start-paused"]).await;
    let mut feedback = sim.subscribe::<SimulateStepsFeedback>("/simulate_steps/_action/feedback").await;
    let mut statuses = sim.subscribe::<GoalStatusArray>("/simulate_steps/_action/status").await;
    // Started paused: at step 0.
    let mut states = sim.subscribe_states().await;

    let goal_id: Uuid = *b"flotilla-goal-01";
    let goal = SimulateStepsGoalRequest { goal_id, steps: 200 };
    let accepted: SendGoalResponse = sim.query("/simulate_steps/_action/send_goal", &goal, T).await;
    assert!(accepted.accepted);

    // Asked at once, as ROS 2 clients do; answered when the goal ends.
    let result: SimulateStepsResultResponse =
        sim.query("/simulate_steps/_action/get_result", &GetResultRequest { goal_id }, T).await;
    assert_eq!(result, SimulateStepsResultResponse { status: goal_status::SUCCEEDED, result: SimResult::ok() });

    let last = feedback.until(T, |f| f.remaining_steps == 0).await;
    assert_eq!((last.goal_id, last.completed_steps), (goal_id, 200));
    let ended = statuses.until(T, |s| s.status_list.iter().any(|g| g.status == goal_status::SUCCEEDED)).await;
    assert_eq!(ended.status_list[0].goal_info.goal_id, goal_id);
    let state = states.until(T, |s| s.step == 200).await;
    // Paused again: no step after the 200th.
    tokio::time::sleep(Duration::from_millis(300)).await;
    while let Some(later) = states.try_next() {
        assert_eq!(later.step, state.step, "the world stepped past the goal");
    }

    // A second goal while playing ends at once with OPERATION_FAILED.
    let (ok, out) = sim.cli(&["resume"]);
    assert!(ok, "{out}");
    let goal_id: Uuid = *b"flotilla-goal-02";
    let goal = SimulateStepsGoalRequest { goal_id, steps: 5 };
    let accepted: SendGoalResponse = sim.query("/simulate_steps/_action/send_goal", &goal, T).await;
    assert!(accepted.accepted);
    let result: SimulateStepsResultResponse =
        sim.query("/simulate_steps/_action/get_result", &GetResultRequest { goal_id }, T).await;
    assert_eq!(result.status, goal_status::ABORTED);
    assert!(result.result.error_message.contains("pause"), "{result:?}");
}
