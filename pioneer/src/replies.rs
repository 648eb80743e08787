//! What the emulated robot sends: the SYNC2 identification, the standard
//! information packet (SIP), the configuration packet (CONFIGpac), the
//! simulator's SIMSTAT, SIMINFO and laser packets, laid out field by field
//! as AMRISim's emulator writes them.

use flotilla_plugins::pioneer::PioneerConfig;

use crate::packet::PacketWriter;

/// SIP packet type (AMRISim always sends 0x32).
pub const SIP: u8 = 0x32;
/// CONFIGpac packet type.
pub const CONFIG: u8 = 0x20;
/// Simulator laser packet: pose, then ranges.
pub const LASER: u8 = 0x60;
/// Extended simulator laser packet: ranges with reflectance.
pub const LASER_EXTENDED: u8 = 0x61;
/// SIMSTAT packet type.
pub const SIMSTAT: u8 = 0x62;
/// SIMINFO packet type.
pub const SIMINFO: u8 = 0x63;
/// Readings per laser packet, as AMRISim packs them.
pub const LASER_READINGS_PER_PACKET: usize = 32;
/// The robot name AMRISim always reports, which clients use to tell a
/// simulator from a robot.
pub const ROBOT_NAME: &str = "AMRISim";

/// The reply to SYNC2: name, class, subclass.
pub fn sync2(config: &PioneerConfig) -> Vec<u8> {
    PacketWriter::new(2).str(ROBOT_NAME).str(&config.robot_class).str(&config.robot_subclass).finish()
}

/// What a SIP reports, in SI units.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SipState {
    /// Odometric pose: x, y (m), heading (rad).
    pub pose: [f64; 3],
    /// Translational velocity, m/s.
    pub v: f64,
    /// Rotational velocity, rad/s.
    pub w: f64,
    /// Lateral velocity, m/s.
    pub lateral: f64,
    /// Battery, V.
    pub battery_volts: f64,
    /// ARIA's charge state (`ArRobot::ChargeState`): 0 not charging, 1 bulk,
    /// 3 float (full, on the charger).
    pub charge_state: u8,
    /// State of charge, % (0: not known).
    pub state_of_charge: u8,
    /// Whether a wheel is stalled (pushing against something).
    pub stalled: bool,
    /// Whether the motors are enabled.
    pub motors_enabled: bool,
    /// Whether sonar is on (flags bits 1-4).
    pub sonar_on: bool,
}

/// The conversion state of a connection's SIPs: ARIA tracks position by
/// differences of 15-bit counters, so they only need to wrap consistently.
#[derive(Debug, Clone)]
pub struct SipWriter {
    dist_conv: f64,
    angle_conv: f64,
    vel_conv: f64,
    range_conv: f64,
    diff_conv: f64,
}

impl SipWriter {
    /// For a robot of `config`.
    pub fn new(config: &PioneerConfig) -> SipWriter {
        SipWriter {
            dist_conv: config.dist_conv,
            angle_conv: config.angle_conv,
            vel_conv: config.vel_conv,
            range_conv: config.range_conv,
            diff_conv: config.diff_conv,
        }
    }

    /// One SIP for `state`, with `sonar` readings as (transducer, range m).
    pub fn sip(&self, state: &SipState, sonar: &[(u8, f64)]) -> Vec<u8> {
        let mut p = PacketWriter::new(SIP);
        // Positions wrap at 16 bits; ARIA keeps the low 15.
        let x = (state.pose[0] * 1000.0 / self.dist_conv).round() as i64 as u16;
        let y = (state.pose[1] * 1000.0 / self.dist_conv).round() as i64 as u16;
        let heading = wrap_angle(state.pose[2]);
        let th = (heading / self.angle_conv) as i16;
        let v_mm = state.v * 1000.0;
        // ARIA: ω = (right − left) / 2 · diff_conv (rad/s per mm/s).
        let half_difference = if self.diff_conv > 0.0 { state.w / self.diff_conv } else { 0.0 };
        let left = ((v_mm - half_difference) / self.vel_conv).round() as i16;
        let right = ((v_mm + half_difference) / self.vel_conv).round() as i16;
        p.u16(x).u16(y).i16(th).i16(left).i16(right);
        p.u8((state.battery_volts * 10.0).round().clamp(0.0, 255.0) as u8);
        // Stall bits 0 (left) and 8 (right); no bumper segments.
        p.u16(if state.stalled { 0x0101 } else { 0 });
        p.i16(0); // control: not used
        let mut flags = 0u16;
        if state.motors_enabled {
            flags |= 1;
        }
        if state.sonar_on {
            flags |= 0b1_1110;
        }
        p.u16(flags);
        p.u8(0); // compass
        let readings: Vec<&(u8, f64)> = if state.sonar_on { sonar.iter().take(32).collect() } else { Vec::new() };
        p.u8(readings.len() as u8);
        for &&(index, range_m) in &readings {
            p.u8(index).u16((range_m * 1000.0 / self.range_conv).round().clamp(0.0, 65535.0) as u16);
        }
        p.u8(0).u8(0).u8(0); // gripper, analog port, analog value
        p.u8(0xFF).u8(0xFF); // digital in (1: not triggered), digital out
        p.i16((state.battery_volts * 10.0).round() as i16);
        p.u8(state.charge_state);
        p.i16((state.w.to_degrees() * 10.0).round() as i16); // deci-deg/s
        p.u16(0); // fault flags
        p.i16((state.lateral * 1000.0).round() as i16);
        p.i8(-127); // no temperature
        p.u8(state.state_of_charge);
        p.finish()
    }
}

/// An angle in (−π, π].
pub fn wrap_angle(a: f64) -> f64 {
    let wrapped = a.rem_euclid(std::f64::consts::TAU);
    if wrapped > std::f64::consts::PI {
        wrapped - std::f64::consts::TAU
    } else {
        wrapped
    }
}

/// The limits a connection has set (SETV, SETRV, SETA, SETRA, LATACCEL),
/// reported in CONFIGpac.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// mm/s.
    pub trans_vel_max: f64,
    /// deg/s.
    pub rot_vel_max: f64,
    /// mm/s².
    pub trans_accel: f64,
    /// mm/s².
    pub trans_decel: f64,
    /// deg/s².
    pub rot_accel: f64,
    /// deg/s².
    pub rot_decel: f64,
    /// mm/s.
    pub lat_vel_max: f64,
    /// mm/s².
    pub lat_accel: f64,
    /// mm/s².
    pub lat_decel: f64,
}

impl Limits {
    /// The robot model's initial limits.
    pub fn of(config: &PioneerConfig) -> Limits {
        Limits {
            trans_vel_max: config.trans_vel_max,
            rot_vel_max: config.rot_vel_max,
            trans_accel: config.trans_accel,
            trans_decel: config.trans_decel,
            rot_accel: config.rot_accel,
            rot_decel: config.rot_decel,
            lat_vel_max: config.lat_vel_max,
            lat_accel: config.lat_accel,
            lat_decel: config.lat_accel,
        }
    }
}

/// CONFIGpac, in AMRISim's field order.
pub fn config_packet(config: &PioneerConfig, limits: &Limits, has_front_sonar: bool, has_rear_sonar: bool) -> Vec<u8> {
    let s = |v: f64| v.round().clamp(-32768.0, 32767.0) as i16;
    let mut p = PacketWriter::new(CONFIG);
    p.str(&config.robot_class).str(&config.robot_subclass).str("SIM");
    p.u8(0); // 4MOTS
    p.i16(s(config.rot_vel_top)).i16(s(config.trans_vel_top));
    p.i16(s(config.rot_acc_top)).i16(s(config.trans_acc_top));
    p.i16(400); // PWM maximum
    p.str(ROBOT_NAME);
    p.u8(config.sip_cycle_ms as u8);
    p.u8(0).u8(0); // host and AUX1 baud: irrelevant over TCP
    p.i16(0); // gripper
    p.i16(i16::from(has_front_sonar));
    p.u8(u8::from(has_rear_sonar));
    p.i16(0).i16(0); // low-battery alarm, revcount
    p.i16(s(config.watchdog_ms as f64));
    p.u8(0); // normal motor packets
    p.i16(0).i16(0).i16(0).i16(0); // stall PWM, stall idle, joystick velocities
    p.i16(s(limits.rot_vel_max)).i16(s(limits.trans_vel_max));
    p.i16(s(limits.rot_accel)).i16(s(limits.rot_decel));
    p.i16(0).i16(0).i16(0); // rotation PID
    p.i16(s(limits.trans_accel)).i16(s(limits.trans_decel));
    p.i16(0).i16(0).i16(0); // translation PID
    p.u8(0).u8(0); // front and rear bumper segments
    p.u8(0).u8(0).u8(2).u8(0); // charger, sonar cycle, autobaud, gyro
    p.i16(0); // drift factor
    p.u8(0).u8(0); // AUX2, AUX3 baud
    p.i16(0).i16(0); // encoder ticks per mm, shutdown voltage
    p.u8(b'S').u8(b'.').u8(b'1').u8(0); // firmware version "S.1": a simulator
    p.i16(0).i16(0); // gyro CW, CCW
    p.u8(0); // kinematics delay
    p.i16(s(config.lat_vel_top)).i16(s(config.lat_acc_top));
    p.i16(s(limits.lat_vel_max)).i16(s(limits.lat_accel)).i16(s(limits.lat_decel));
    p.i16(0); // charge threshold
    p.finish()
}

/// What SIMSTAT reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimStat {
    /// Configured sim time per cycle, ms.
    pub sim_interval_ms: u16,
    /// Configured wall time per cycle, ms.
    pub real_interval_ms: u16,
    /// Wall time the last cycle took, ms.
    pub last_interval_ms: u16,
    /// True pose: x, y (m), heading (rad).
    pub true_pose: [f64; 3],
    /// Latitude, longitude (degrees) and altitude (m) of the true pose, if
    /// the world is georeferenced.
    pub geo: Option<[f64; 3]>,
    /// The odometry's error factors (x, y, heading), if it has any.
    pub odom_error: Option<[f64; 3]>,
    /// Whether the world has a map.
    pub have_map: bool,
}

/// SIMSTAT (0x62), field by field as the seed's table lists them:
/// latitude, longitude and odometry error scaled by 10e6 as AMRISim and
/// ARIA's readers do, the GPS quality one byte.
pub fn simstat(stat: &SimStat) -> Vec<u8> {
    let mut p = PacketWriter::new(SIMSTAT);
    p.u8(0).u8(0);
    let mut flags = 0u32;
    if stat.have_map {
        flags |= 1;
    }
    if stat.geo.is_some() {
        flags |= 2;
    }
    if stat.odom_error.is_some() {
        flags |= 4;
    }
    p.u32(flags);
    p.u16(stat.sim_interval_ms).u16(stat.real_interval_ms).u16(stat.last_interval_ms);
    let [x, y, th] = stat.true_pose;
    p.i32((x * 1000.0).round() as i32).i32((y * 1000.0).round() as i32).i32(0);
    p.i32(wrap_angle(th).to_degrees().round() as i32);
    match stat.geo {
        Some([lat, lon, alt]) => {
            p.i32((lat * 10e6).round() as i32).i32((lon * 10e6).round() as i32).i32((alt * 100.0).round() as i32);
            p.i8(100);
        }
        None => {
            p.i32(0).i32(0).i32(0).i8(-1);
        }
    }
    let [ex, ey, eth] = stat.odom_error.unwrap_or_default();
    p.i32((ex * 10e6).round() as i32).i32((ey * 10e6).round() as i32).i32((eth * 10e6).round() as i32);
    p.finish()
}

/// SIMINFO (0x63): name, version, flags and the robot's devices as
/// (name, type, number).
pub fn siminfo(devices: &[(String, &str, u8)]) -> Vec<u8> {
    let mut p = PacketWriter::new(SIMINFO);
    p.str("Flotilla").str(env!("CARGO_PKG_VERSION"));
    p.u32(0); // not interactive, not restarted after a crash
    p.u32(devices.len() as u32);
    for (name, kind, number) in devices {
        p.str(name).str(kind).u8(*number).u8(0).u8(0).u8(0).u8(0);
    }
    p.finish()
}

/// The laser packets of one sweep: `ranges` in m with reflectance 0-255.
/// Plain packets (0x60) carry the odometric pose (mm, mm, degrees) first;
/// extended ones (0x61) each reading's reflectance and two flag bytes,
/// then the device index and a flags byte (bit 0: the robot was moved).
pub fn laser_packets(extended: bool, pose: [f64; 3], readings: &[(f64, u8)], moved: bool) -> Vec<Vec<u8>> {
    let total = readings.len();
    let mut packets = Vec::new();
    for (chunk_index, chunk) in readings.chunks(LASER_READINGS_PER_PACKET).enumerate() {
        let first = chunk_index * LASER_READINGS_PER_PACKET;
        let mut p = PacketWriter::new(if extended { LASER_EXTENDED } else { LASER });
        if !extended {
            p.i16((pose[0] * 1000.0).round() as i16).i16((pose[1] * 1000.0).round() as i16);
            p.i16(wrap_angle(pose[2]).to_degrees().round() as i16);
        }
        p.u16(total as u16).u16(first as u16).u8(chunk.len() as u8);
        for &(range_m, reflectance) in chunk {
            p.u16((range_m * 1000.0).round().clamp(0.0, 65535.0) as u16);
            if extended {
                p.u8(reflectance).u8(0).u8(0);
            }
        }
        if extended {
            p.u8(0).u8(u8::from(moved && chunk_index == 0));
        }
        packets.push(p.finish());
    }
    packets
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{DataReader, PacketReader};
    use flotilla_plugins::PluginContext;
    use std::path::Path;

    fn config() -> PioneerConfig {
        let ctx = PluginContext::single_body(Path::new("p.model.yaml"), "robot", "base", &[]);
        PioneerConfig::parse(&serde_yaml::from_str("{}").unwrap(), "pioneer", &ctx).unwrap()
    }

    fn read(bytes: &[u8]) -> crate::packet::Packet {
        let mut r = PacketReader::default();
        r.push(bytes);
        r.next_packet().unwrap().unwrap()
    }

    #[test]
    fn a_sip_reads_back_as_aria_reads_it() {
        let writer = SipWriter::new(&config());
        let state = SipState {
            pose: [1.5, -0.25, 0.5],
            v: 0.3,
            w: 0.2,
            lateral: 0.0,
            battery_volts: 12.5,
            charge_state: 1,
            state_of_charge: 64,
            stalled: false,
            motors_enabled: true,
            sonar_on: true,
        };
        let packet = read(&writer.sip(&state, &[(0, 2.5), (7, 0.4)]));
        assert_eq!(packet.id, SIP);
        let mut r = DataReader::new(&packet.data);
        assert_eq!(r.u16() & 0x7fff, 1500);
        // −250 mm in 16 bits, of which ARIA keeps 15: the difference from
        // a previous 0 then wraps back to −250.
        let y = i32::from(r.u16() & 0x7fff);
        assert_eq!(if y > 0x1000 { y - 0x8000 } else { y }, -250);
        assert_eq!(r.i16(), (0.5 / 0.001534) as i16);
        let (left, right) = (f64::from(r.i16()), f64::from(r.i16()));
        assert_eq!((left + right) / 2.0, 300.0);
        assert!(((right - left) / 2.0 * 0.0056 - 0.2).abs() < 0.0056, "ARIA's ω from the wheels");
        assert_eq!(r.u8(), 125, "decivolts");
        assert_eq!((r.u16(), r.i16(), r.u16(), r.u8()), (0, 0, 0b1_1111, 0));
        assert_eq!(r.u8(), 2, "two sonar readings");
        assert_eq!((r.u8(), r.u16(), r.u8(), r.u16()), (0, 2500, 7, 400));
        assert_eq!((r.u16(), r.u8(), r.u8(), r.u8()), (0, 0, 0xFF, 0xFF), "analog port, analog, digin, digout");
        let charging = 1; // ARIA's CHARGING_BULK
        assert_eq!((r.u16(), r.u8(), r.i16()), (125, charging, (0.2f64.to_degrees() * 10.0).round() as i16));
        assert_eq!((r.u16(), r.i16(), r.i8(), r.u8()), (0, 0, -127, 64), "…, state of charge %");
        assert_eq!(r.remaining(), 0);
        assert!(packet.data.len() + 6 <= 200, "a SIP stays within ARCOS's 200 bytes");
    }

    #[test]
    fn simstat_follows_the_seed_s_table() {
        let stat = SimStat {
            sim_interval_ms: 100,
            real_interval_ms: 100,
            last_interval_ms: 98,
            true_pose: [2.0, 3.0, std::f64::consts::FRAC_PI_2],
            geo: Some([45.5, -73.25, 12.0]),
            odom_error: Some([0.0075, 0.0075, 0.0075]),
            have_map: true,
        };
        let packet = read(&simstat(&stat));
        let mut r = DataReader::new(&packet.data);
        assert_eq!((packet.id, r.u8(), r.u8(), r.u32()), (SIMSTAT, 0, 0, 0b111));
        assert_eq!((r.u16(), r.u16(), r.u16()), (100, 100, 98));
        assert_eq!((r.i32(), r.i32(), r.i32(), r.i32()), (2000, 3000, 0, 90));
        assert_eq!((r.i32(), r.i32(), r.i32(), r.i8()), (455_000_000, -732_500_000, 1200, 100));
        assert_eq!((r.i32(), r.i32(), r.i32()), (75_000, 75_000, 75_000));
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn a_sweep_is_split_into_packets_of_32_readings() {
        let readings: Vec<(f64, u8)> = (0..181).map(|i| (f64::from(i) / 100.0, 0)).collect();
        let packets = laser_packets(false, [1.0, 2.0, 0.0], &readings, false);
        assert_eq!(packets.len(), 6);
        let last = read(&packets[5]);
        let mut r = DataReader::new(&last.data);
        assert_eq!((last.id, r.i16(), r.i16(), r.i16()), (LASER, 1000, 2000, 0));
        assert_eq!((r.u16(), r.u16(), r.u8()), (181, 160, 21));
        assert_eq!(r.u16(), 1600);
        let extended = laser_packets(true, [0.0; 3], &[(1.0, 32)], true);
        let p = read(&extended[0]);
        let mut r = DataReader::new(&p.data);
        assert_eq!((r.u16(), r.u16(), r.u8(), r.u16(), r.u8(), r.u16()), (1, 0, 1, 1000, 32, 0));
        assert_eq!((r.u8(), r.u8()), (0, 1), "device 0, moved");
    }

    #[test]
    fn config_names_the_simulator_as_amrisim_does() {
        let c = config();
        let packet = read(&config_packet(&c, &Limits::of(&c), true, true));
        let mut r = DataReader::new(&packet.data);
        assert_eq!((r.str(), r.str(), r.str()), ("Pioneer".to_string(), "p3dx-sh".to_string(), "SIM".to_string()));
        assert_eq!((r.u8(), r.i16(), r.i16()), (0, 360, 1500));
        assert_eq!((r.i16(), r.i16(), r.i16(), r.str()), (720, 2000, 400, "AMRISim".to_string()));
        assert_eq!(r.u8(), 100, "SIP cycle, ms");
    }
}
