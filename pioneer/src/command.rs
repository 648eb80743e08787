//! Client commands: a packet's id is the command number, and its data an
//! argument as ARIA writes it (an argument-type byte, then a 16-bit
//! magnitude, or a length-prefixed string). The numbers and arguments are
//! those of AMRISim's "Pioneer Protocol Support" tables.

use crate::packet::{DataReader, Packet};

/// Argument type byte of a positive (or zero) integer.
pub const POSINT: u8 = 0x3B;
/// Argument type byte of a negative integer (its magnitude follows).
pub const NEGINT: u8 = 0x1B;
/// Argument type byte of a string.
pub const STRING: u8 = 0x2B;

/// Command numbers.
#[allow(missing_docs)]
pub mod number {
    pub const PULSE: u8 = 0;
    pub const OPEN: u8 = 1;
    pub const CLOSE: u8 = 2;
    pub const ENABLE: u8 = 4;
    pub const SETA: u8 = 5;
    pub const SETV: u8 = 6;
    pub const SETO: u8 = 7;
    pub const MOVE: u8 = 8;
    pub const ROTATE: u8 = 9;
    pub const SETRV: u8 = 10;
    pub const VEL: u8 = 11;
    pub const HEAD: u8 = 12;
    pub const DHEAD: u8 = 13;
    pub const CONFIG: u8 = 18;
    pub const RVEL: u8 = 21;
    pub const SETRA: u8 = 23;
    pub const SONAR: u8 = 28;
    pub const STOP: u8 = 29;
    pub const VEL2: u8 = 32;
    pub const TTY2: u8 = 42;
    pub const BUMPSTALL: u8 = 44;
    pub const ESTOP: u8 = 55;
    /// QSTOP, which AMRISim treats as ESTOP.
    pub const QSTOP: u8 = 57;
    pub const TTY4: u8 = 60;
    pub const LATVEL: u8 = 110;
    pub const LATACCEL: u8 = 113;
    pub const SIM_SET_POSE: u8 = 224;
    pub const SIM_RESET: u8 = 225;
    pub const SIM_LRF_ENABLE: u8 = 230;
    pub const SIM_LRF_SET_FOV_START: u8 = 231;
    pub const SIM_LRF_SET_FOV_END: u8 = 232;
    pub const SIM_LRF_SET_RES: u8 = 233;
    pub const SIM_CTRL: u8 = 236;
    pub const SIM_STAT: u8 = 237;
    pub const SIM_MESSAGE: u8 = 238;
    pub const SIM_EXIT: u8 = 239;
    pub const BATTEST: u8 = 250;
}

/// A decoded client command. Units are the protocol's: mm, mm/s, degrees.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// No-op; resets the watchdog.
    Pulse,
    /// Start sending SIPs.
    Open,
    /// Stop and close the connection.
    Close,
    /// Enable (true) or disable the motors.
    Enable(bool),
    /// Translational acceleration (> 0) or deceleration (< 0), mm/s².
    SetAccel(i32),
    /// Maximum translational velocity (and MOVE's), mm/s.
    SetVelMax(i32),
    /// Reset odometry to (0, 0, 0), or to the pose given (mm, mm, angle units).
    SetOdometry(Option<(i16, i16, i16)>),
    /// Translate this far, mm.
    Move(i32),
    /// Maximum rotational velocity (and HEAD's), deg/s.
    SetRotVelMax(i32),
    /// Translational velocity, mm/s.
    Vel(i32),
    /// Turn to this absolute (odometric) heading, degrees.
    Head(i32),
    /// Turn by this much from the current heading, degrees.
    DeltaHead(i32),
    /// Send the configuration packet.
    Config,
    /// Rotational velocity, deg/s (RVEL and ROTATE).
    RotVel(i32),
    /// Rotational acceleration (> 0) or deceleration (< 0), deg/s².
    SetRotAccel(i32),
    /// Sonar on (true) or off.
    Sonar(bool),
    /// Stop moving.
    Stop,
    /// Wheel velocities in VEL2 units (× `vel2_div` mm/s): left, right.
    Vel2 {
        /// Left wheel.
        left: i8,
        /// Right wheel.
        right: i8,
    },
    /// A string for the log (TTY2, TTY4).
    Log(String),
    /// Stop and register a stall on front (1), rear (2) or both (3) bumps.
    BumpStall(i32),
    /// Stop with the largest deceleration.
    EmergencyStop,
    /// Lateral velocity, mm/s.
    LatVel(i32),
    /// Lateral acceleration (> 0) or deceleration (< 0), mm/s².
    LatAccel(i32),
    /// Artificial battery voltage, decivolts (0: back to the default).
    BatteryTest(i32),
    /// Move to this true pose (mm, mm, degrees), odometry unchanged.
    SimSetPose {
        /// mm.
        x: i32,
        /// mm.
        y: i32,
        /// Degrees.
        th: i32,
    },
    /// Back to the starting pose, odometry reset.
    SimReset,
    /// Simulator laser packets: 0 off, 1 plain (0x60), 2 extended (0x61).
    SimLaserEnable(i32),
    /// First laser reading's angle, degrees from the front.
    SimLaserFovStart(i32),
    /// Last laser reading's angle, degrees from the front.
    SimLaserFovEnd(i32),
    /// Degrees between laser readings.
    SimLaserResolution(i32),
    /// A simulator meta-operation and its remaining bytes.
    SimCtrl {
        /// The operation number.
        op: u16,
        /// What follows it.
        rest: Vec<u8>,
    },
    /// SIMSTAT packets: `None` or 1 once, 2 before every SIP, 0 stop.
    SimStat(Option<i32>),
    /// A message for the simulator's log.
    SimMessage(String),
    /// Exit the simulator with this code.
    SimExit(i32),
    /// Recognised by number but not simulated, or unknown: ignored.
    Unsupported(u8),
}

/// A signed integer argument as AMRISim reads it: the magnitude, negated
/// when the type byte says NEGINT.
fn int_arg(r: &mut DataReader) -> i32 {
    let kind = r.u8();
    let magnitude = i32::from(r.u16());
    if kind == NEGINT {
        -magnitude
    } else {
        magnitude
    }
}

/// A string argument: type byte, then a length byte and that many bytes.
fn string_arg(r: &mut DataReader) -> String {
    let _kind = r.u8();
    let len = usize::from(r.u8());
    r.bytes_str(len)
}

impl Command {
    /// Decodes a command packet (after the handshake).
    pub fn decode(packet: &Packet) -> Command {
        use number::*;
        let mut r = DataReader::new(&packet.data);
        match packet.id {
            PULSE => Command::Pulse,
            OPEN => Command::Open,
            CLOSE => Command::Close,
            ENABLE => Command::Enable(int_arg(&mut r) != 0),
            SETA => Command::SetAccel(int_arg(&mut r)),
            SETV => Command::SetVelMax(int_arg(&mut r)),
            SETO => {
                if packet.data.len() >= 7 {
                    let _kind = r.u8();
                    Command::SetOdometry(Some((r.i16(), r.i16(), r.i16())))
                } else {
                    Command::SetOdometry(None)
                }
            }
            MOVE => Command::Move(int_arg(&mut r)),
            SETRV => Command::SetRotVelMax(int_arg(&mut r)),
            VEL => Command::Vel(int_arg(&mut r)),
            HEAD => Command::Head(int_arg(&mut r)),
            DHEAD => Command::DeltaHead(int_arg(&mut r)),
            CONFIG => Command::Config,
            RVEL | ROTATE => Command::RotVel(int_arg(&mut r)),
            SETRA => Command::SetRotAccel(int_arg(&mut r)),
            SONAR => Command::Sonar(int_arg(&mut r) != 0),
            STOP => Command::Stop,
            VEL2 => {
                // AMRISim reads the argument as one integer: the high byte
                // is the left wheel, the low byte the right.
                let value = int_arg(&mut r);
                Command::Vel2 { left: (value >> 8) as i8, right: value as i8 }
            }
            TTY2 | TTY4 => Command::Log(string_arg(&mut r)),
            BUMPSTALL => Command::BumpStall(int_arg(&mut r)),
            ESTOP | QSTOP => Command::EmergencyStop,
            LATVEL => Command::LatVel(int_arg(&mut r)),
            LATACCEL => Command::LatAccel(int_arg(&mut r)),
            BATTEST => Command::BatteryTest(int_arg(&mut r)),
            SIM_SET_POSE => {
                let _kind = r.u8();
                Command::SimSetPose { x: r.i32(), y: r.i32(), th: r.i32() }
            }
            SIM_RESET => Command::SimReset,
            SIM_LRF_ENABLE => Command::SimLaserEnable(int_arg(&mut r)),
            SIM_LRF_SET_FOV_START => Command::SimLaserFovStart(int_arg(&mut r)),
            SIM_LRF_SET_FOV_END => Command::SimLaserFovEnd(int_arg(&mut r)),
            SIM_LRF_SET_RES => Command::SimLaserResolution(int_arg(&mut r)),
            SIM_CTRL => {
                let _kind = r.u8();
                let op = r.u16();
                let rest = packet.data.get(3..).unwrap_or_default().to_vec();
                Command::SimCtrl { op, rest }
            }
            SIM_STAT => Command::SimStat((!packet.data.is_empty()).then(|| int_arg(&mut r))),
            SIM_MESSAGE => Command::SimMessage(string_arg(&mut r)),
            SIM_EXIT => Command::SimExit(int_arg(&mut r)),
            other => Command::Unsupported(other),
        }
    }
}

/// Builds command packets as ARIA's `ArRobot::com*` calls do (for clients,
/// and this crate's tests).
pub mod encode {
    use super::{NEGINT, POSINT, STRING};
    use crate::packet::PacketWriter;

    /// A command without argument.
    pub fn com(number: u8) -> Vec<u8> {
        PacketWriter::new(number).finish()
    }

    /// A command with an integer argument (`comInt`).
    pub fn com_int(number: u8, value: i32) -> Vec<u8> {
        let kind = if value < 0 { NEGINT } else { POSINT };
        let magnitude = value.unsigned_abs().min(u32::from(u16::MAX)) as u16;
        PacketWriter::new(number).u8(kind).u16(magnitude).finish()
    }

    /// A command with two signed bytes (`com2Bytes`): high, then low.
    pub fn com_2bytes(number: u8, high: i8, low: i8) -> Vec<u8> {
        com_int(number, i32::from(high as u8) << 8 | i32::from(low as u8))
    }

    /// A command with a length-prefixed string (`comStrN`).
    pub fn com_str(number: u8, text: &str) -> Vec<u8> {
        let bytes = &text.as_bytes()[..text.len().min(200)];
        let mut w = PacketWriter::new(number);
        w.u8(STRING).u8(bytes.len() as u8);
        for &b in bytes {
            w.u8(b);
        }
        w.finish()
    }

    /// SIM_SET_POSE: x, y in mm, th in degrees, each four bytes.
    pub fn sim_set_pose(x: i32, y: i32, th: i32) -> Vec<u8> {
        PacketWriter::new(super::number::SIM_SET_POSE).u8(0).i32(x).i32(y).i32(th).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::encode::*;
    use super::number::*;
    use super::*;
    use crate::packet::PacketReader;

    fn decode(bytes: Vec<u8>) -> Command {
        let mut reader = PacketReader::default();
        reader.push(&bytes);
        Command::decode(&reader.next_packet().unwrap().unwrap())
    }

    #[test]
    fn integer_arguments_carry_their_sign_in_the_type_byte() {
        assert_eq!(decode(com_int(VEL, 300)), Command::Vel(300));
        assert_eq!(decode(com_int(VEL, -250)), Command::Vel(-250));
        assert_eq!(decode(com_int(ROTATE, -15)), Command::RotVel(-15));
        assert_eq!(decode(com_int(SETA, -400)), Command::SetAccel(-400));
        assert_eq!(decode(com_int(ENABLE, 1)), Command::Enable(true));
        assert_eq!(decode(com_int(SONAR, 0)), Command::Sonar(false));
    }

    #[test]
    fn vel2_puts_the_left_wheel_in_the_high_byte() {
        assert_eq!(decode(com_2bytes(VEL2, 10, -5)), Command::Vel2 { left: 10, right: -5 });
        assert_eq!(decode(com_2bytes(VEL2, -3, 7)), Command::Vel2 { left: -3, right: 7 });
    }

    #[test]
    fn simulator_commands() {
        assert_eq!(decode(sim_set_pose(-1500, 2000, 90)), Command::SimSetPose { x: -1500, y: 2000, th: 90 });
        assert_eq!(decode(com(SIM_STAT)), Command::SimStat(None));
        assert_eq!(decode(com_int(SIM_STAT, 2)), Command::SimStat(Some(2)));
        assert_eq!(decode(com_str(SIM_MESSAGE, "hello")), Command::SimMessage("hello".into()));
        assert_eq!(decode(com_int(SIM_CTRL, 6)), Command::SimCtrl { op: 6, rest: vec![] });
        assert_eq!(decode(com_int(SIM_LRF_ENABLE, 2)), Command::SimLaserEnable(2));
        assert_eq!(decode(com(ESTOP)), Command::EmergencyStop);
        assert_eq!(decode(com_int(19, 1)), Command::Unsupported(19), "ENCODER is not simulated");
    }
}
