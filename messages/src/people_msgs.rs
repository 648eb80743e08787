//! `people_msgs` (wg-perception/people, released for ROS 2 as
//! `ros-<distro>-people-msgs`): the people around a robot, as people
//! trackers publish them and Nav2's social costmap layers, HuNavSim and
//! people-aware planners read them on `/people`. The crowd publishes its
//! agents with it.

use serde::{Deserialize, Serialize};

use super::geometry_msgs::Point;
use super::std_msgs::Header;

/// `people_msgs/msg/Person`: one person, in the frame of the `People`
/// message that carries it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Person {
    /// Who it is (a tracker's id).
    pub name: String,
    /// Where, m.
    pub position: Point,
    /// How fast, m/s.
    pub velocity: Point,
    /// How sure the source is, 0..1.
    pub reliability: f64,
    /// The names of `tags`, one each: the message's way of carrying more.
    pub tagnames: Vec<String>,
    /// Values, as text.
    pub tags: Vec<String>,
}

impl Person {
    /// The value of tag `name`, if it has one.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tagnames.iter().position(|n| n == name).and_then(|i| self.tags.get(i)).map(String::as_str)
    }
}

impl super::RosMessage for Person {
    const TYPE_NAME: &'static str = "people_msgs/msg/Person";
}

/// `people_msgs/msg/People`: everyone at one time.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct People {
    /// When, and the frame of every position and velocity.
    pub header: Header,
    /// The people.
    pub people: Vec<Person>,
}

impl super::RosMessage for People {
    const TYPE_NAME: &'static str = "people_msgs/msg/People";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin_interfaces::Time;
    use crate::{decode, encode};

    /// Worked by hand from the CDR rules: a string is its length with the
    /// terminator, then its bytes; a double aligns to 8 from the byte after
    /// the 4-byte encapsulation header.
    #[test]
    fn a_person_lays_out_as_rosidl_does() {
        let people = People {
            header: Header { stamp: Time { sec: 2, nanosec: 0 }, frame_id: "map".into() },
            people: vec![Person {
                name: "bob".into(),
                position: Point { x: 1.0, y: 2.0, z: 0.0 },
                velocity: Point { x: 0.5, y: 0.0, z: 0.0 },
                reliability: 1.0,
                tagnames: vec!["id".into()],
                tags: vec!["3".into()],
            }],
        };
        let bytes = encode(&people);
        assert_eq!(decode::<People>(&bytes).unwrap(), people);
        let body = &bytes[4..];
        // stamp (8), "map\0" with its length (8), one person (4), "bob\0" (8)
        assert_eq!(
            &body[..28],
            &[2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, b'm', b'a', b'p', 0, 1, 0, 0, 0, 4, 0, 0, 0, b'b', b'o', b'b', 0]
        );
        // then position and velocity at offset 32 (28 padded to a multiple of 8), 24 bytes each
        assert_eq!(&body[28..32], &[0; 4]);
        assert_eq!(f64::from_le_bytes(body[32..40].try_into().unwrap()), 1.0);
        assert_eq!(f64::from_le_bytes(body[56..64].try_into().unwrap()), 0.5, "velocity.x");
        assert_eq!(f64::from_le_bytes(body[80..88].try_into().unwrap()), 1.0, "reliability");
        // then the two string sequences
        assert_eq!(&body[88..], &[1, 0, 0, 0, 3, 0, 0, 0, b'i', b'd', 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, b'3', 0]);
        assert_eq!(people.people[0].tag("id"), Some("3"));
        assert_eq!(people.people[0].tag("yaw"), None);
    }
}
