//! The `Pioneer` plugin: a robot reachable as an emulated Pioneer
//! (ARCOS/ARIA protocol) on a TCP port, as AMRISim offers every robot,
//! served by `flotilla-pioneer`. Its parameters are AMRISim's `pioneer_*`
//! model settings (conversion factors, limits) plus the sibling plugins it
//! drives and reads: the drive (motion through `cmd_vel`, odometry), the
//! sonar ring (SIP sonar readings) and the laser (simulator laser packets).

use serde_yaml::Value;

use super::{PluginConfig, PluginContext};
use crate::config::LoadError;
use crate::role::Role;
use crate::topic::TopicSpec;

/// The first port AMRISim gives its robots.
pub const DEFAULT_FIRST_PORT: u16 = 8101;

/// A validated `Pioneer` entry. Lengths in mm, angles in degrees and times
/// in ms, as the protocol counts them.
#[derive(Debug, Clone, PartialEq)]
pub struct PioneerConfig {
    /// Plugin name.
    pub name: String,
    /// The robot's body (default: the drive's; the model's first otherwise).
    pub body: String,
    /// TCP port; `None`: the next free one from the node's first port (8101).
    pub port: Option<u16>,
    /// SYNC2 / CONFIGpac robot class (default `Pioneer`).
    pub robot_class: String,
    /// SYNC2 / CONFIGpac robot subclass, which ARIA reads its robot
    /// parameters by (default `p3dx-sh`).
    pub robot_subclass: String,
    /// The drive plugin motion commands go through (default: the model's
    /// only drive).
    pub drive: Option<String>,
    /// The Sonar plugin whose ranges the SIPs carry (default: the model's
    /// first Sonar, if any; `""`: none).
    pub sonar: Option<String>,
    /// The Laser plugin of the simulator laser packets (default: the
    /// model's first Laser, if any; `""`: none).
    pub laser: Option<String>,
    /// mm per SIP position unit (AMRISim `pioneer_distconv`, default 1).
    pub dist_conv: f64,
    /// rad per SIP angle unit (`pioneer_angleconv`, default 0.001534).
    pub angle_conv: f64,
    /// mm/s per SIP wheel-velocity unit (`pioneer_velconv`, default 1).
    pub vel_conv: f64,
    /// mm per SIP sonar-range unit (`pioneer_rangeconv`, default 1).
    pub range_conv: f64,
    /// rad/s per mm/s of wheel-velocity difference over two
    /// (`pioneer_diffconv`, default 0.0056).
    pub diff_conv: f64,
    /// mm/s per VEL2 wheel unit (`pioneer_vel2div`, default 20).
    pub vel2_div: f64,
    /// Sim time between SIPs, ms (ARCOS's client-communication cycle,
    /// default 100).
    pub sip_cycle_ms: u64,
    /// Wall time without any command after which the robot stops, ms
    /// (ARCOS's watchdog, default 2000; 0: never).
    pub watchdog_ms: u64,
    /// Top translational velocity, mm/s (CONFIGpac TRANSVELTOP; SETV cannot
    /// exceed it; default 1500).
    pub trans_vel_top: f64,
    /// Top rotational velocity, deg/s (ROTVELTOP, default 360).
    pub rot_vel_top: f64,
    /// Top translational acceleration, mm/s² (TRANSACCTOP, default 2000).
    pub trans_acc_top: f64,
    /// Top rotational acceleration, deg/s² (ROTACCTOP, default 720).
    pub rot_acc_top: f64,
    /// Top lateral velocity, mm/s (LATVELTOP; 0: the robot cannot move
    /// sideways, default 0).
    pub lat_vel_top: f64,
    /// Top lateral acceleration, mm/s² (LATACCTOP, default 0).
    pub lat_acc_top: f64,
    /// Initial maximum translational velocity, mm/s (SETV, default 750).
    pub trans_vel_max: f64,
    /// Initial maximum rotational velocity, deg/s (SETRV, default 100).
    pub rot_vel_max: f64,
    /// Initial translational acceleration, mm/s² (SETA, default 300).
    pub trans_accel: f64,
    /// Initial translational deceleration, mm/s² (SETA −, default 300).
    pub trans_decel: f64,
    /// Initial rotational acceleration, deg/s² (SETRA, default 100).
    pub rot_accel: f64,
    /// Initial rotational deceleration, deg/s² (SETRA −, default 100).
    pub rot_decel: f64,
    /// Initial maximum lateral velocity, mm/s (default: `lat_vel_top`).
    pub lat_vel_max: f64,
    /// Initial lateral acceleration and deceleration, mm/s² (default:
    /// `lat_acc_top`).
    pub lat_accel: f64,
    /// Battery voltage reported until BATTEST changes it, V (default 13).
    pub battery_volts: f64,
}

impl super::PluginConfig for PioneerConfig {
    const TYPE: &'static str = "Pioneer";
    const ROLES: &'static [Role] = &[PioneerConfig::ROLE];
    const EXAMPLE: &'static str = "{type: Pioneer, name: pioneer, drive: drive}";
    fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<PioneerConfig, LoadError> {
        PioneerConfig::parse(entry, name, ctx)
    }
    fn body(&self) -> &str {
        &self.body
    }
    /// Its `cmd_vel` and inputs are its siblings' topics, listed by them.
    fn topics(&self, _namespace: &str) -> Vec<TopicSpec> {
        Vec::new()
    }
    /// The drive, sonar and laser it names must be the model's plugins of
    /// those types (see [`PioneerConfig::siblings`]).
    fn check_siblings(&self, ctx: &PluginContext, plugins: &[(&str, &str)]) -> Result<(), LoadError> {
        self.siblings(ctx.model_file, ctx.model, plugins).map(|_| ())
    }
}

impl PioneerConfig {
    /// `flotilla-pioneer` emulates the robot on its TCP port.
    pub const ROLE: Role = Role::commander("Pioneer", "flotilla-pioneer", "pioneer");

    /// Parses and validates a `Pioneer` entry.
    pub fn parse(entry: &Value, name: &str, ctx: &PluginContext) -> Result<PioneerConfig, LoadError> {
        let r = ctx.reader(entry, name)?;
        let first_body = ctx.bodies.first().map(|b| b.to_string()).unwrap_or_default();
        let lat_vel_top: f64 = r.opt("lat_vel_top", 0.0)?;
        let lat_acc_top: f64 = r.opt("lat_acc_top", 0.0)?;
        let port = match r.maybe::<u64>("port")? {
            Some(p) if (1..=65535).contains(&p) => Some(p as u16),
            Some(p) => return Err(r.error(format!("\"port\" must be a TCP port (1-65535), got {p}"))),
            None => None,
        };
        let config = PioneerConfig {
            name: name.to_string(),
            body: r.opt("body", first_body)?,
            port,
            robot_class: r.opt("robot_class", "Pioneer".to_string())?,
            robot_subclass: r.opt("robot_subclass", "p3dx-sh".to_string())?,
            drive: r.maybe("drive")?,
            sonar: r.maybe("sonar")?,
            laser: r.maybe("laser")?,
            dist_conv: r.opt("dist_conv", 1.0)?,
            angle_conv: r.opt("angle_conv", 0.001534)?,
            vel_conv: r.opt("vel_conv", 1.0)?,
            range_conv: r.opt("range_conv", 1.0)?,
            diff_conv: r.opt("diff_conv", 0.0056)?,
            vel2_div: r.opt("vel2_div", 20.0)?,
            sip_cycle_ms: r.opt("sip_cycle", 100)?,
            watchdog_ms: r.opt("watchdog", 2000)?,
            trans_vel_top: r.opt("trans_vel_top", 1500.0)?,
            rot_vel_top: r.opt("rot_vel_top", 360.0)?,
            trans_acc_top: r.opt("trans_acc_top", 2000.0)?,
            rot_acc_top: r.opt("rot_acc_top", 720.0)?,
            lat_vel_top,
            lat_acc_top,
            trans_vel_max: r.opt("trans_vel_max", 750.0)?,
            rot_vel_max: r.opt("rot_vel_max", 100.0)?,
            trans_accel: r.opt("trans_accel", 300.0)?,
            trans_decel: r.opt("trans_decel", 300.0)?,
            rot_accel: r.opt("rot_accel", 100.0)?,
            rot_decel: r.opt("rot_decel", 100.0)?,
            lat_vel_max: r.opt("lat_vel_max", lat_vel_top)?,
            lat_accel: r.opt("lat_accel", lat_acc_top)?,
            battery_volts: r.opt("battery_voltage", 13.0)?,
        };
        r.finish()?;
        ctx.check_body(&r, &config.body)?;
        for (key, text) in [("robot_class", &config.robot_class), ("robot_subclass", &config.robot_subclass)] {
            if text.is_empty() || text.len() > 40 || !text.chars().all(|c| c.is_ascii_graphic()) {
                return Err(r.error(format!("\"{key}\" must be 1-40 printable ASCII characters, got {text:?}")));
            }
        }
        let positive = [
            ("dist_conv", config.dist_conv),
            ("angle_conv", config.angle_conv),
            ("vel_conv", config.vel_conv),
            ("range_conv", config.range_conv),
            ("vel2_div", config.vel2_div),
        ];
        for (key, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return Err(r.error(format!("\"{key}\" must be > 0, got {value}")));
            }
        }
        let non_negative = [
            ("diff_conv", config.diff_conv),
            ("trans_vel_top", config.trans_vel_top),
            ("rot_vel_top", config.rot_vel_top),
            ("trans_acc_top", config.trans_acc_top),
            ("rot_acc_top", config.rot_acc_top),
            ("lat_vel_top", config.lat_vel_top),
            ("lat_acc_top", config.lat_acc_top),
            ("trans_vel_max", config.trans_vel_max),
            ("rot_vel_max", config.rot_vel_max),
            ("trans_accel", config.trans_accel),
            ("trans_decel", config.trans_decel),
            ("rot_accel", config.rot_accel),
            ("rot_decel", config.rot_decel),
            ("lat_vel_max", config.lat_vel_max),
            ("lat_accel", config.lat_accel),
            ("battery_voltage", config.battery_volts),
        ];
        for (key, value) in non_negative {
            // The protocol carries them in 16 bits.
            if !(value.is_finite() && (0.0..=32767.0).contains(&value)) {
                return Err(r.error(format!("\"{key}\" must be within 0..32767, got {value}")));
            }
        }
        if config.sip_cycle_ms == 0 || config.sip_cycle_ms > 255 {
            return Err(r.error(format!("\"sip_cycle\" must be 1-255 ms, got {}", config.sip_cycle_ms)));
        }
        if config.watchdog_ms > 65535 {
            return Err(r.error(format!("\"watchdog\" must be 0-65535 ms, got {}", config.watchdog_ms)));
        }
        Ok(config)
    }

    /// Checks the sibling plugins the entry names against the model's
    /// plugins, as (name, type): a missing drive, or a name that is not of
    /// the type it must be, is refused. Returns the drive, sonar and laser
    /// plugin names in use.
    pub fn siblings<'a>(
        &'a self,
        reader_file: &std::path::Path,
        model: &str,
        plugins: &[(&'a str, &'a str)],
    ) -> Result<Siblings<'a>, LoadError> {
        let error = |message: String| {
            LoadError::new(reader_file, format!("model \"{model}\" plugin \"{}\"", self.name), message)
        };
        let of_type = |types: &[&str]| -> Vec<&'a str> {
            plugins.iter().filter(|(_, t)| types.contains(t)).map(|(n, _)| *n).collect()
        };
        let pick = |key: &str, named: &'a Option<String>, types: &[&str], required: bool| -> Result<_, LoadError> {
            let candidates = of_type(types);
            match named.as_deref() {
                Some("") if !required => Ok(None),
                Some(name) => match plugins.iter().find(|(n, _)| *n == name) {
                    Some((n, t)) if types.contains(t) => Ok(Some(*n)),
                    Some((_, t)) => {
                        Err(error(format!("\"{key}\": plugin \"{name}\" is a {t}, not a {}", types.join(" or "))))
                    }
                    None => Err(error(format!("\"{key}\": plugin \"{name}\" does not exist in model \"{model}\""))),
                },
                None if required && candidates.len() != 1 => Err(error(format!(
                    "\"{key}\": the model has {} drive plugins ({}); name the one to drive",
                    candidates.len(),
                    types.join(", ")
                ))),
                None => Ok(candidates.first().copied()),
            }
        };
        Ok(Siblings {
            drive: pick("drive", &self.drive, &super::registry::drive_types(), true)?.unwrap_or_default(),
            sonar: pick("sonar", &self.sonar, &[<super::sonar::SonarConfig as PluginConfig>::TYPE], false)?,
            laser: pick("laser", &self.laser, &[<super::laser::LaserConfig as PluginConfig>::TYPE], false)?,
        })
    }
}

/// The plugins a `Pioneer` entry drives and reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Siblings<'a> {
    /// The drive plugin's name.
    pub drive: &'a str,
    /// The sonar plugin's name, if the robot has one in use.
    pub sonar: Option<&'a str>,
    /// The laser plugin's name, if the robot has one in use.
    pub laser: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn parse(yaml: &str) -> Result<PioneerConfig, LoadError> {
        super::super::parse_in_test_model(yaml, "pioneer", &[])
    }

    #[test]
    fn amrisim_s_defaults() {
        let c = parse("{}").unwrap();
        assert_eq!((c.robot_class.as_str(), c.robot_subclass.as_str()), ("Pioneer", "p3dx-sh"));
        assert_eq!((c.dist_conv, c.angle_conv, c.diff_conv, c.vel2_div), (1.0, 0.001534, 0.0056, 20.0));
        assert_eq!((c.sip_cycle_ms, c.watchdog_ms, c.port), (100, 2000, None));
        assert_eq!(c.body, "base");
    }

    #[test]
    fn bad_entries_are_refused_with_their_name() {
        for (yaml, expected) in [
            ("{port: 70000}", "\"port\" must be a TCP port"),
            ("{dist_conv: 0}", "\"dist_conv\" must be > 0"),
            ("{trans_vel_max: -1}", "\"trans_vel_max\" must be within"),
            ("{sip_cycle: 0}", "\"sip_cycle\" must be 1-255 ms"),
            ("{robot_subclass: 'p3 dx'}", "\"robot_subclass\" must be 1-40 printable"),
            ("{sip_cyle: 50}", "sip_cyle"),
            ("{body: wheel}", "body \"wheel\" does not exist"),
        ] {
            let e = parse(yaml).unwrap_err().to_string();
            assert!(e.contains(expected), "{yaml}: {e}");
            assert!(e.contains("robot.model.yaml") && e.contains("plugin \"pioneer\""), "{e}");
        }
    }

    #[test]
    fn siblings_default_to_the_model_s_own_and_are_checked() {
        let file = Path::new("robot.model.yaml");
        let plugins = [("drive", "DiffDrive"), ("sonar", "Sonar"), ("laser", "Laser")];
        let c = parse("{}").unwrap();
        let s = c.siblings(file, "robot1", &plugins).unwrap();
        assert_eq!(s, Siblings { drive: "drive", sonar: Some("sonar"), laser: Some("laser") });
        let c = parse("{sonar: '', laser: ''}").unwrap();
        let s = c.siblings(file, "robot1", &plugins).unwrap();
        assert_eq!((s.sonar, s.laser), (None, None));
        let c = parse("{drive: sonar}").unwrap();
        let e = c.siblings(file, "robot1", &plugins).unwrap_err().to_string();
        assert!(e.contains("plugin \"sonar\" is a Sonar, not a DiffDrive"), "{e}");
        let c = parse("{laser: lidar}").unwrap();
        let e = c.siblings(file, "robot1", &plugins).unwrap_err().to_string();
        assert!(e.contains("\"laser\": plugin \"lidar\" does not exist in model \"robot1\""), "{e}");
        let e = parse("{}").unwrap().siblings(file, "robot1", &[("sonar", "Sonar")]).unwrap_err().to_string();
        assert!(e.contains("has 0 drive plugins"), "{e}");
    }
}
