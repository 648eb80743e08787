//! The barrier's rules, each as a short scenario of reports and steps.

use super::*;

#[test]
fn a_step_completes_when_every_member_reported_it() {
    let mut b = Barrier::default();
    b.join("drive", 0);
    b.join("laser", 0);
    assert_eq!(b.pending(0), ["drive", "laser"]);
    b.done("drive", 0);
    assert_eq!(b.pending(0), ["laser"]);
    b.done("laser", 0);
    assert!(b.pending(0).is_empty());
    assert_eq!(b.pending(1), ["drive", "laser"]);
}

#[test]
fn owes_agrees_with_pending() {
    let mut b = Barrier::default();
    b.join("laser", 5);
    assert!(!b.owes("laser", 4) && b.owes("laser", 5) && !b.owes("drive", 5));
    assert!(!b.awaits_anyone(4) && b.awaits_anyone(5));
    b.done("laser", 19);
    assert!(!b.owes("laser", 19) && b.owes("laser", 20));
    assert!(!b.awaits_anyone(19) && b.awaits_anyone(20));
    assert_eq!(b.pending(20), ["laser"]);
}

#[test]
fn late_joiners_start_at_the_next_step_and_leavers_are_not_awaited() {
    let mut b = Barrier::default();
    b.join("drive", 0);
    b.join("late", 6);
    assert_eq!(b.pending(5), ["drive"]);
    assert_eq!(b.pending(6), ["drive", "late"]);
    b.leave("drive");
    assert_eq!(b.pending(6), ["late"]);
    b.done("stranger", 6); // reports without a token are not awaited
    assert_eq!(b.size(), 1);
}

#[test]
fn a_participant_whose_link_was_cut_keeps_what_it_reported() {
    let mut b = Barrier::default();
    b.join("laser", 0);
    b.done("laser", 19); // nothing due until step 19
    b.leave("laser"); // the link is cut at step 4 ...
    b.join("laser", 5); // ... and restored
    assert!(b.pending(19).is_empty(), "step 19 was reported before the cut, and is not repeated");
    assert_eq!(b.pending(20), ["laser"]);
    // A report that crossed while the token was gone counts too.
    b.leave("laser");
    b.done("laser", 39);
    b.join("laser", 21);
    assert!(b.pending(39).is_empty());
    assert_eq!(b.pending(40), ["laser"]);
}

#[test]
fn reports_under_ever_new_names_are_not_kept_without_bound() {
    let mut b = Barrier::default();
    b.join("laser", 0);
    b.done("laser", 19);
    for k in 0..2 * MAX_REMEMBERED_REPORTERS {
        b.done(&format!("stranger-{k}"), 5);
    }
    assert!(b.reported.len() <= MAX_REMEMBERED_REPORTERS + 1);
    assert!(b.pending(19).is_empty(), "a member's report is kept");
}

#[test]
fn dropped_members_rejoin_when_they_report_again() {
    let mut b = Barrier::default();
    b.join("slow", 0);
    b.drop_members(&["slow".to_string()]);
    assert!(b.pending(3).is_empty());
    assert_eq!(b.size(), 0);
    b.done("slow", 3);
    assert!(b.pending(3).is_empty());
    assert_eq!(b.pending(4), ["slow"]);
}

/// A drive, odometry that works every 4th step (reporting 3 ahead) and
/// a controller that works every 10th, all joined at step 0.
fn fleet() -> Barrier {
    let mut b = Barrier::default();
    for node in ["drive", "odom", "controller"] {
        b.join(node, 0);
    }
    b
}

/// Publishes `step` and has the sensors and the controller answer it
/// as they would; returns who the world waits on.
fn publish(b: &mut Barrier, step: u64) -> Vec<String> {
    b.published(step, 0);
    let waits = b.pending(step);
    assert_eq!(b.awaits_anyone(step), !waits.is_empty(), "at state {step}");
    if step.is_multiple_of(4) {
        b.done("odom", step + 3);
    }
    if step.is_multiple_of(10) {
        b.done("controller", step + 9);
    }
    waits
}

/// Publishes each of `steps`, and `drive` answers each promising its
/// answers steady for 100 steps.
fn answered_steadily(b: &mut Barrier, drive: &str, steps: std::ops::Range<u64>) {
    for step in steps {
        b.published(step, 0);
        b.actuated(drive, step, Some(step + 100));
    }
}

#[test]
fn a_steady_drive_is_not_waited_on_while_nobody_else_works() {
    let mut b = fleet();
    b.done("odom", 3);
    b.done("controller", 9);
    b.published(0, 0);
    b.actuated("drive", 0, Some(100));
    // Steps 1-3: nothing due anywhere.
    assert_eq!(publish(&mut b, 1), ["drive"], "the answer to the first state was waited on, not its promise");
    b.actuated("drive", 1, Some(101));
    assert!(publish(&mut b, 2).is_empty(), "promised, and nobody worked at 1");
    assert!(publish(&mut b, 3).is_empty());
    assert!(!b.owes("drive", 3));
    // Odometry works at 4: the drive answers 5 (a command stamped at 4
    // would take effect there).
    assert_eq!(publish(&mut b, 4), ["odom"]);
    assert_eq!(publish(&mut b, 5), ["drive"]);
    b.actuated("drive", 5, Some(105));
    assert!(publish(&mut b, 6).is_empty());
}

#[test]
fn a_controller_that_leaves_after_its_last_command_makes_the_drive_answer_the_next_state() {
    let mut b = fleet();
    b.done("odom", 3);
    b.published(0, 0);
    b.actuated("drive", 0, Some(100));
    b.done("controller", 0);
    assert_eq!(publish(&mut b, 1), ["controller", "drive"]);
    b.actuated("drive", 1, Some(101));
    // Its last command goes out with state 1, and it leaves without
    // reporting 1: the command takes effect at 2, so the drive's answer
    // to 2 is waited for, not its promise.
    b.leave("controller");
    assert_eq!(publish(&mut b, 2), ["drive"]);
    b.actuated("drive", 2, Some(102));
    assert!(publish(&mut b, 3).is_empty(), "nobody worked at 2");
}

#[test]
fn a_sensor_whose_work_commands_nothing_does_not_make_the_drive_answer() {
    let mut b = fleet();
    b.reported("odom", 3, true); // and its later reports keep saying so
    b.done("controller", 9);
    b.published(0, 0);
    b.actuated("drive", 0, Some(100));
    assert_eq!(publish(&mut b, 1), ["drive"]);
    b.actuated("drive", 1, Some(101));
    for step in 2..10 {
        let waits = publish(&mut b, step);
        if step.is_multiple_of(4) {
            assert_eq!(waits, ["odom"], "odometry works at {step}");
        } else {
            assert!(waits.is_empty(), "the drive is not waited for at {step}: only a sensor worked before");
        }
    }
    // The controller works at 10: the drive answers 11.
    assert_eq!(publish(&mut b, 10), ["controller"]);
    assert_eq!(publish(&mut b, 11), ["drive"]);
    b.actuated("drive", 11, Some(111));
    // A report without the flag counts as one whose work may command.
    b.published(12, 0);
    assert_eq!(b.pending(12), ["odom"]);
    b.reported("odom", 15, false);
    assert_eq!(publish(&mut b, 13), ["drive"], "odometry did not say so at 12");
}

#[test]
fn a_promise_made_before_the_last_answer_waited_on_counts_for_nothing() {
    let mut b = fleet();
    b.done("odom", 3);
    b.done("controller", 3);
    b.published(0, 0);
    b.actuated("drive", 0, Some(100));
    b.published(1, 0);
    b.actuated("drive", 1, Some(50));
    b.published(2, 0); // excused, and it answers 2 anyway
    b.actuated("drive", 2, Some(50));
    b.published(3, 0);
    // The controller works at 4: say it sends a command stamped for
    // step 6, which takes effect at state 7.
    b.published(4, 0);
    assert_eq!(b.pending(4), ["controller", "odom"], "nobody worked at 3");
    b.actuated("drive", 4, Some(50));
    b.done("odom", 7);
    b.done("controller", 9);
    assert!(b.pending(4).is_empty());
    b.published(5, 0);
    assert_eq!(b.pending(5), ["drive"], "someone worked at 4");
    // Its answer to 5 has not come yet: the promise of its answer to 4,
    // made before the world waited on it at 5, does not excuse 6.
    b.published(6, 0);
    assert_eq!(b.pending(6), ["drive"]);
    // The answer to 5 knows of the command due at 7: steady only to 6.
    b.actuated("drive", 5, Some(6));
    b.actuated("drive", 6, Some(6));
    b.published(7, 0);
    assert_eq!(b.pending(7), ["drive"], "the promise ended at 6");
    b.actuated("drive", 7, Some(60));
    b.published(8, 0);
    assert!(b.pending(8).contains(&"odom".to_string()));
    assert!(!b.owes("drive", 8), "promised, nobody worked at 7");
}

#[test]
fn an_answer_without_a_promise_withdraws_the_one_before() {
    let mut b = fleet();
    b.done("odom", 99);
    b.done("controller", 99);
    answered_steadily(&mut b, "drive", 0..2);
    b.published(2, 0);
    assert!(!b.owes("drive", 2));
    b.actuated("drive", 2, None); // a command came: ramping up
    b.published(3, 0);
    assert!(b.owes("drive", 3));
}

#[test]
fn one_that_joins_owing_the_published_state_makes_the_drive_answer_the_next() {
    let mut b = Barrier::default();
    b.join("drive", 0);
    answered_steadily(&mut b, "drive", 0..2);
    b.published(2, 0);
    assert!(!b.owes("drive", 2));
    // Paused at 2, a controller joins: it answers 2, and may command.
    b.join("controller", 2);
    b.done("controller", 2);
    b.published(3, 0);
    assert_eq!(b.pending(3), ["controller", "drive"]);
}

#[test]
fn a_drive_that_never_promises_counts_like_any_participant() {
    // A vehicle's drive publishes its velocity reached at every state:
    // a controller could command another robot from it.
    let mut b = Barrier::default();
    b.join("vehicles", 0);
    b.join("diff", 0);
    b.published(0, 0);
    b.actuated("diff", 0, Some(100));
    b.actuated("vehicles", 0, None);
    b.published(1, 0);
    b.actuated("diff", 1, Some(100));
    b.actuated("vehicles", 1, None);
    b.published(2, 0);
    assert_eq!(b.pending(2), ["diff", "vehicles"], "the vehicles' drive worked at 1");
    // The two change roles.
    b.actuated("diff", 2, Some(100));
    b.actuated("vehicles", 2, Some(2)); // its vehicle deleted: quiet from now on
    b.published(3, 0);
    assert_eq!(b.pending(3), ["diff", "vehicles"], "the vehicles' drive still worked at 2");
    b.actuated("vehicles", 3, Some(3));
    b.actuated("diff", 3, None); // a vehicle spawned on this one
    b.published(4, 0);
    assert_eq!(b.pending(4), ["diff", "vehicles"], "its promise is gone");
    b.actuated("diff", 4, None);
    b.actuated("vehicles", 4, Some(4));
    b.published(5, 0);
    assert_eq!(b.pending(5), ["diff", "vehicles"], "and its work counts as anyone's");
}

#[test]
fn drives_do_not_make_each_other_answer() {
    let mut b = Barrier::default();
    b.join("drive-a", 0);
    b.join("drive-b", 0);
    b.published(0, 0);
    b.actuated("drive-a", 0, Some(100));
    b.actuated("drive-b", 0, Some(0)); // publishes nothing else, never steady (a tween)
    for step in 1..10 {
        b.published(step, 0);
        let waits = b.pending(step);
        if step >= 2 {
            assert_eq!(waits, ["drive-b"], "step {step}");
        }
        b.actuated("drive-a", step, Some(step + 100));
        b.actuated("drive-b", step, Some(step));
    }
}

#[test]
fn a_new_description_or_the_switch_makes_every_drive_answer() {
    let steady_at_3 = |honour: bool| {
        let mut b = Barrier::default();
        b.honour_promises(honour);
        b.join("drive", 0);
        answered_steadily(&mut b, "drive", 0..3);
        b
    };
    let mut b = steady_at_3(true);
    b.published(3, 0);
    assert!(!b.owes("drive", 3));
    b.published(3, 0);
    assert!(!b.owes("drive", 3), "the same state again");
    b.published(3, 1);
    assert!(b.owes("drive", 3), "a model spawned or a reset: the drive answers with it");
    b.actuated("drive", 2, Some(200)); // late, from before the change
    b.published(4, 1);
    assert!(b.owes("drive", 4), "only a promise made with the answer waited on (3) or later counts");
    b.actuated("drive", 3, Some(200));
    b.actuated("drive", 4, Some(200));
    b.published(5, 1);
    assert!(!b.owes("drive", 5), "promised with the answer to 4, which was waited on");
    let mut b = steady_at_3(false);
    b.published(3, 0);
    assert!(b.owes("drive", 3), "--wait-on-drives");
}

/// A promising drive and a laser whose scans no plugin reads, the
/// laser due every 20th state, with a lag of 10 states.
fn lagging_laser() -> Barrier {
    let mut b = Barrier::default();
    b.lag_sensors(10);
    b.join("drive", 0);
    b.join("laser", 0);
    b.reported("laser", 19, true); // done with 0, nothing due before 20
    answered_steadily(&mut b, "drive", 0..20);
    b
}

#[test]
fn a_sensor_that_commands_nothing_may_run_behind_while_nobody_may_command() {
    let mut b = lagging_laser();
    b.published(20, 0);
    assert!(b.owes("laser", 20), "it works on the state");
    assert!(b.pending(20).is_empty(), "the world steps on while it scans: {:?}", b.pending(20));
    assert!(!b.awaits_anyone(20), "so the state joins Zenoh's batch");
    for step in 21..30 {
        b.published(step, 0);
        assert!(b.pending(step).is_empty(), "{step} is within the lag of 20");
    }
    b.published(30, 0);
    assert_eq!(b.pending(30), ["laser"], "ten states on, the world waits for the scan of 20");
    assert!(b.awaits_anyone(30));
    b.reported("laser", 39, true);
    assert!(b.pending(30).is_empty());
}

#[test]
fn a_participant_that_may_command_makes_every_sensor_report_each_state() {
    let mut b = lagging_laser();
    b.published(20, 0);
    assert!(b.pending(20).is_empty());
    // A controller joins: from the next state on it decides from the
    // scans, so the world waits for the scan of 20 before it sends 21.
    b.join("controller", 21);
    assert_eq!(b.pending(20), ["laser"]);
    b.reported("laser", 39, true);
    assert!(b.pending(20).is_empty());
    // It leaves: the laser may lag again.
    b.leave("controller");
    answered_steadily(&mut b, "drive", 20..40);
    b.published(40, 0);
    assert!(b.owes("laser", 40) && b.pending(40).is_empty());
    // A laser whose scans a plugin reads says so, and is waited for.
    b.reported("laser", 39, false);
    assert_eq!(b.pending(40), ["laser"]);
}

#[test]
fn between_the_states_a_controller_works_on_sensors_may_run_behind() {
    let mut b = lagging_laser();
    b.lag_sensors(100);
    let laser_waited_for = |b: &Barrier, step| b.pending(step).contains(&"laser".to_string());
    b.join("controller", 0);
    b.reported("controller", 19, false); // works on 0, then next on 20
    b.published(20, 0);
    assert!(laser_waited_for(&b, 20), "the controller works on 21: the scan of 20 first");
    b.reported("controller", 39, false); // done with 20, next on 40
    assert!(!laser_waited_for(&b, 20), "nobody decides on 21 to 39: the laser scans meanwhile");
    b.published(38, 0);
    assert!(!laser_waited_for(&b, 38));
    b.published(39, 0);
    assert!(laser_waited_for(&b, 39), "before 40, every scan up to 39 is out");
}

#[test]
fn while_a_standby_world_follows_no_sensor_runs_behind() {
    let mut b = lagging_laser();
    b.standby_follows("flotilla/sim/standby/world-b", true);
    b.published(20, 0);
    assert_eq!(b.pending(20), ["laser"]);
    b.standby_follows("flotilla/sim/standby/world-b", false);
    assert!(b.pending(20).is_empty());
}

#[test]
fn without_a_lag_every_report_holds_the_world_up() {
    let mut b = lagging_laser();
    b.lag_sensors(0);
    b.published(20, 0);
    assert_eq!(b.pending(20), ["laser"]);
}
