//! `std_srvs`.

use serde::{Deserialize, Serialize};

use super::{RosMessage, RosService};

/// An empty message. ROS 2's IDL gives every empty structure one `uint8`
/// member (`structure_needs_at_least_one_member`), so it is one byte on the
/// wire; its value means nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EmptyMessage {
    /// The placeholder byte ROS 2 puts in every empty structure.
    pub structure_needs_at_least_one_member: u8,
}

impl RosMessage for EmptyMessage {
    const TYPE_NAME: &'static str = "std_srvs/srv/Empty_Request";
}

/// `std_srvs/srv/Empty`: Flatland's `pause`, `resume` and `toggle_pause`.
pub struct Empty;

impl RosService for Empty {
    const TYPE_NAME: &'static str = "std_srvs/srv/Empty";
    type Request = EmptyMessage;
    type Response = EmptyMessage;
}
