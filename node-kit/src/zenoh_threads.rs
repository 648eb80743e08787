//! Zenoh's thread pools, arranged for nodes whose every step waits on a
//! message.
//!
//! By default Zenoh reads its links in tasks of its `rx` pool (two
//! threads), while the sockets belong to the I/O driver of its `net` pool
//! (links it opened) or its `acc` pool (links it accepted). So every message
//! received costs a wake-up from the thread that learns the socket is
//! readable to the one that reads it, before any callback runs — on every
//! step, in every process. Handing `rx` and `acc` over to `net`, whose one
//! thread then both waits on the sockets and reads them, saves that hop and
//! two threads per process. On the 2-core host, office-50 (fast and
//! lockstep) and warehouse-200 ran faster with less CPU in every
//! alternating pair.
//!
//! The price: the one thread must never wait. A send that waits for room
//! on a link (congestion control `Block`, a slow reader) waits for that
//! very thread to see the socket writable again, so Zenoh gives up after
//! 5 s and closes the link ("Unable to push non droppable network
//! message … Closing transport!"). Hence only the plugin nodes, the
//! wander controller and `flotilla record` use this layout, and their
//! callbacks send nothing large and wait for nothing that needs the links
//! (the recorder's wait at most for its file's writing thread, which only
//! slows the senders, whose batches are lossless): a node's receiving thread hands an arrival
//! to its main loop rather than wait for the node's lock, and leaves the
//! lossless messages an answer made to the main loop to send
//! (`crate::runtime::handover`). The world keeps Zenoh's own pools,
//! because it routes messages for its clients, and such a push runs on
//! the reading thread (9 of 40
//! warehouse-200 bench runs lost a link that way when the bench began
//! counting every scan through the world; `tests/tests/zenoh_threads.rs`
//! reproduces it). Its description and service replies go out from
//! Tokio's blocking pool for the same reason.
//!
//! Zenoh reads the pools' layout from `ZENOH_RUNTIME` once, when it first
//! uses them; a layout the user sets there is kept.

/// The environment variable Zenoh reads its pools' layout from.
pub const ENV: &str = "ZENOH_RUNTIME";

/// The layout Flotilla's nodes use unless the user sets one.
pub const NODE_LAYOUT: &str = "(acc: (handover: net), rx: (handover: net))";

/// The layout to set, given what the environment holds: none when the user
/// chose one.
pub fn layout_to_set(current: Option<&std::ffi::OsStr>) -> Option<&'static str> {
    match current {
        Some(_) => None,
        None => Some(NODE_LAYOUT),
    }
}

/// Arranges Zenoh's pools as [`NODE_LAYOUT`] unless the user set
/// `ZENOH_RUNTIME`. Call it first thing in `main`, while the process has a
/// single thread: the environment must not change while another thread may
/// read it. Programs that the process starts inherit the setting.
pub fn configure() {
    if let Some(layout) = layout_to_set(std::env::var_os(ENV).as_deref()) {
        std::env::set_var(ENV, layout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_the_user_chose_is_kept() {
        assert_eq!(layout_to_set(None), Some(NODE_LAYOUT));
        assert_eq!(layout_to_set(Some(std::ffi::OsStr::new("(rx: (worker_threads: 4))"))), None);
    }
}
