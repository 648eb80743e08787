//! A lift as a model: the floor it is at, where it is asked to go, and the
//! steps of a ride (close the door here, travel, move the riders, open the
//! door there). Free of Zenoh; [`crate::server`] feeds it requests, the
//! doors' modes and the time, and carries out what it asks.

use flotilla_messages::builtin_interfaces::Time;
use flotilla_messages::rmf_door_msgs::DoorMode;
use flotilla_messages::rmf_lift_msgs::{LiftRequest, LiftState};
use flotilla_plugins::lift::LiftConfig;

/// What a lift asks of the building.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiftAction {
    /// Open (true) or close a door, by its `door_name`.
    Door {
        /// The door.
        door: String,
        /// Open or close.
        open: bool,
    },
    /// Put the robots in the cabin on map `from` onto map `to`.
    Ride {
        /// The map they leave.
        from: String,
        /// The map they arrive on.
        to: String,
    },
}

/// Where a lift is in a ride.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// At `floor`, its door as last asked.
    Standing,
    /// Closing the door at `floor` before leaving for `to`.
    Closing { to: usize },
    /// On the way to `to`, arriving at sim time `arrive_ns`.
    Travelling { to: usize, arrive_ns: u64 },
}

/// One lift.
#[derive(Debug, Clone)]
pub struct Lift {
    config: LiftConfig,
    floor: usize,
    destination: usize,
    /// Whether the door is to be open at the destination.
    open_there: bool,
    phase: Phase,
    session_id: String,
    mode: u8,
}

impl Lift {
    /// A lift standing at its initial floor, door as its door is.
    pub fn new(config: LiftConfig) -> Lift {
        let floor = config.initial_floor;
        Lift {
            config,
            floor,
            destination: floor,
            open_there: false,
            phase: Phase::Standing,
            session_id: String::new(),
            mode: LiftState::MODE_HUMAN,
        }
    }

    /// The same lift standing at floor `floor` instead (where a restarted
    /// node finds it: see `Rebuild::recall`), its door as its door is.
    pub fn standing_at(mut self, floor: usize) -> Lift {
        if floor < self.config.floors.len() {
            self.floor = floor;
            self.destination = floor;
        }
        self
    }

    /// Its configuration.
    pub fn config(&self) -> &LiftConfig {
        &self.config
    }

    /// The floor it is at (or left last).
    pub fn floor(&self) -> usize {
        self.floor
    }

    /// Whether it stands at its destination with nothing to do: its
    /// answers do not change until a request.
    pub fn at_rest(&self) -> bool {
        self.phase == Phase::Standing && self.destination == self.floor
    }

    /// Whether `request` can be taken: one to a floor this lift does not
    /// have is refused, naming its floors.
    pub fn check(&self, request: &LiftRequest) -> Result<(), String> {
        self.destination_of(request).map(drop)
    }

    /// The floor `request` asks for (`None` to end a session).
    fn destination_of(&self, request: &LiftRequest) -> Result<Option<usize>, String> {
        if request.request_type == LiftRequest::REQUEST_END_SESSION {
            return Ok(None);
        }
        let to = self.config.floor(&request.destination_floor).ok_or_else(|| {
            let floors: Vec<&str> = self.config.floors.iter().map(|f| f.name.as_str()).collect();
            format!(
                "lift \"{}\": no floor {:?} (floors: {})",
                self.config.lift_name,
                request.destination_floor,
                floors.join(", ")
            )
        })?;
        Ok(Some(to))
    }

    /// A request. Taken at once: to the floor asked, its door there as
    /// asked (a lift on its way finishes that leg first). An unknown floor
    /// is refused ([`Lift::check`]).
    pub fn request(&mut self, request: &LiftRequest) -> Result<Vec<LiftAction>, String> {
        let Some(to) = self.destination_of(request)? else {
            if request.session_id == self.session_id {
                self.session_id.clear();
            }
            return Ok(Vec::new());
        };
        self.session_id = request.session_id.clone();
        self.mode = if request.request_type == LiftRequest::REQUEST_AGV_MODE {
            LiftState::MODE_AGV
        } else {
            LiftState::MODE_HUMAN
        };
        self.destination = to;
        self.open_there = request.door_state == LiftRequest::DOOR_OPEN;
        if self.phase == Phase::Standing && to == self.floor {
            return Ok(self.door_here(self.open_there));
        }
        Ok(Vec::new())
    }

    /// Moves the ride on at sim time `now_ns`, given each door's mode
    /// (`door_mode(door_name)`): what the building is to do now.
    pub fn step(&mut self, now_ns: u64, door_mode: impl Fn(&str) -> Option<u32>) -> Vec<LiftAction> {
        let mut actions = Vec::new();
        loop {
            match self.phase {
                Phase::Standing if self.destination != self.floor => {
                    self.phase = Phase::Closing { to: self.destination };
                    actions.extend(self.door_here(false));
                }
                Phase::Closing { to } => {
                    let door = &self.config.floors[self.floor].door;
                    let closed = door.is_empty() || door_mode(door) == Some(DoorMode::MODE_CLOSED);
                    if !closed {
                        return actions;
                    }
                    let floors = to.abs_diff(self.floor) as f64;
                    let arrive_ns = now_ns + (floors * self.config.travel_time_s * 1e9).round() as u64;
                    self.phase = Phase::Travelling { to, arrive_ns };
                }
                Phase::Travelling { to, arrive_ns } if now_ns >= arrive_ns => {
                    let (from, there) = (&self.config.floors[self.floor], &self.config.floors[to]);
                    actions.push(LiftAction::Ride { from: from.map.clone(), to: there.map.clone() });
                    self.floor = to;
                    self.phase = Phase::Standing;
                    if self.destination == to {
                        actions.extend(self.door_here(self.open_there));
                    }
                }
                _ => return actions,
            }
        }
    }

    /// Asks the door at the current floor open or closed (nothing when the
    /// floor has none).
    fn door_here(&self, open: bool) -> Vec<LiftAction> {
        let door = &self.config.floors[self.floor].door;
        if door.is_empty() {
            Vec::new()
        } else {
            vec![LiftAction::Door { door: door.clone(), open }]
        }
    }

    /// Its `LiftState` at `time`, its door at the current floor in
    /// `door_mode` (closed when the floor has no door).
    pub fn state(&self, time: Time, door_mode: Option<u32>) -> LiftState {
        let name = |i: usize| self.config.floors[i].name.clone();
        let motion_state = match self.phase {
            Phase::Travelling { to, .. } if to > self.floor => LiftState::MOTION_UP,
            Phase::Travelling { .. } => LiftState::MOTION_DOWN,
            _ => LiftState::MOTION_STOPPED,
        };
        LiftState {
            lift_time: time,
            lift_name: self.config.lift_name.clone(),
            available_floors: self.config.floors.iter().map(|f| f.name.clone()).collect(),
            current_floor: name(self.floor),
            destination_floor: name(self.destination),
            door_state: match door_mode {
                Some(DoorMode::MODE_OPEN) => LiftState::DOOR_OPEN,
                Some(DoorMode::MODE_MOVING) => LiftState::DOOR_MOVING,
                _ => LiftState::DOOR_CLOSED,
            },
            motion_state,
            available_modes: vec![LiftState::MODE_HUMAN, LiftState::MODE_AGV],
            current_mode: self.mode,
            session_id: self.session_id.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_plugins::lift::Floor;

    fn lift() -> Lift {
        let floor = |n: usize| Floor { name: format!("L{n}"), map: format!("floor-{n}"), door: format!("door-{n}") };
        Lift::new(LiftConfig {
            name: "lift".into(),
            body: "cabin".into(),
            lift_name: "main".into(),
            floors: vec![floor(1), floor(2), floor(3)],
            initial_floor: 0,
            travel_time_s: 4.0,
            requests_topic: "/lift_requests".into(),
            states_topic: "/lift_states".into(),
            state_rate_hz: 1.0,
        })
    }

    fn to(floor: &str) -> LiftRequest {
        LiftRequest {
            lift_name: "main".into(),
            session_id: "fleet".into(),
            request_type: LiftRequest::REQUEST_AGV_MODE,
            destination_floor: floor.into(),
            door_state: LiftRequest::DOOR_OPEN,
            ..LiftRequest::default()
        }
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_ride_closes_the_door_travels_moves_the_riders_and_opens_the_door_there() {
        let mut lift = lift();
        assert_eq!(lift.request(&to("L3")).unwrap(), []);
        let door = |mode: u32| move |_: &str| Some(mode);
        // First the door here closes; the lift waits for it.
        assert_eq!(lift.step(0, door(DoorMode::MODE_OPEN)), [LiftAction::Door { door: "door-1".into(), open: false }]);
        assert_eq!(lift.step(S, door(DoorMode::MODE_MOVING)), []);
        // Closed at 2 s: two floors at 4 s each, arriving at 10 s.
        assert_eq!(lift.step(2 * S, door(DoorMode::MODE_CLOSED)), []);
        let state = lift.state(Time::default(), Some(DoorMode::MODE_CLOSED));
        assert_eq!((state.motion_state, state.current_floor.as_str()), (LiftState::MOTION_UP, "L1"));
        assert_eq!(lift.step(10 * S - 1, door(DoorMode::MODE_CLOSED)), []);
        assert_eq!(
            lift.step(10 * S, door(DoorMode::MODE_CLOSED)),
            [
                LiftAction::Ride { from: "floor-1".into(), to: "floor-3".into() },
                LiftAction::Door { door: "door-3".into(), open: true }
            ]
        );
        assert!(lift.at_rest());
        let state = lift.state(Time::default(), Some(DoorMode::MODE_OPEN));
        assert_eq!((state.current_floor.as_str(), state.motion_state), ("L3", LiftState::MOTION_STOPPED));
        assert_eq!(
            (state.door_state, state.current_mode, state.session_id.as_str()),
            (2, LiftState::MODE_AGV, "fleet")
        );
    }

    #[test]
    fn asked_to_its_own_floor_it_only_opens_the_door() {
        let mut lift = lift();
        assert_eq!(lift.request(&to("L1")).unwrap(), [LiftAction::Door { door: "door-1".into(), open: true }]);
        assert_eq!(lift.step(0, |_| Some(DoorMode::MODE_CLOSED)), []);
    }

    #[test]
    fn an_unknown_floor_is_refused_naming_the_floors() {
        let error = lift().request(&to("L9")).unwrap_err();
        assert!(error.contains("\"L9\"") && error.contains("L1, L2, L3"), "{error}");
    }
}
