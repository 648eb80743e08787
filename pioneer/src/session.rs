//! A connection's handshake, as AMRISim's emulator runs it: the client
//! sends SYNC0, SYNC1 and SYNC2 (packets 0, 1, 2), each answered in kind,
//! SYNC2 with the robot's name, class and subclass. A client out of
//! sequence is followed (AMRISim warns and answers the number it got); a
//! bad checksum never reaches here (the reader drops it). After ten
//! packets without completing, or [`SYNC_TIMEOUT`], the connection is
//! closed. After the handshake, packets are commands.

use std::time::Duration;

use crate::packet::PacketWriter;

/// How long a client may take to complete the handshake (AMRISim's).
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(10);
/// How many packets a client may send without completing it.
pub const SYNC_ATTEMPTS: u32 = 10;

/// What to do with a packet received during the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncStep {
    /// Send this and wait for the next SYNC.
    Reply(Vec<u8>),
    /// Send this (SYNC2's identification): the handshake is complete.
    Done(Vec<u8>),
    /// Close the connection, for this reason.
    Refuse(String),
}

/// The handshake's progress.
#[derive(Debug, Clone, Default)]
pub struct Handshake {
    expected: u8,
    packets: u32,
}

impl Handshake {
    /// Handles packet `id`; `identification` is the SYNC2 reply.
    pub fn on_packet(&mut self, id: u8, identification: impl FnOnce() -> Vec<u8>) -> SyncStep {
        self.packets += 1;
        if self.packets > SYNC_ATTEMPTS {
            return SyncStep::Refuse(format!("no handshake after {SYNC_ATTEMPTS} packets"));
        }
        if id > 2 {
            return SyncStep::Refuse(format!("packet {id} during the handshake (expected SYNC{})", self.expected));
        }
        if id != self.expected {
            tracing::warn!("out-of-sequence SYNC{id} (expected SYNC{}); following the client", self.expected);
        }
        if id == 2 {
            return SyncStep::Done(identification());
        }
        self.expected = id + 1;
        SyncStep::Reply(PacketWriter::new(id).finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync0_sync1_then_sync2_with_the_identification() {
        let mut h = Handshake::default();
        assert_eq!(h.on_packet(0, Vec::new), SyncStep::Reply(vec![0xFA, 0xFB, 3, 0, 0, 0]));
        assert_eq!(h.on_packet(1, Vec::new), SyncStep::Reply(vec![0xFA, 0xFB, 3, 1, 0, 1]));
        assert_eq!(h.on_packet(2, || vec![42]), SyncStep::Done(vec![42]));
    }

    #[test]
    fn a_client_that_never_completes_is_refused() {
        let mut h = Handshake::default();
        for _ in 0..SYNC_ATTEMPTS {
            assert!(matches!(h.on_packet(0, Vec::new), SyncStep::Reply(_)));
        }
        assert!(matches!(h.on_packet(0, Vec::new), SyncStep::Refuse(_)));
        assert!(matches!(Handshake::default().on_packet(11, Vec::new), SyncStep::Refuse(_)));
    }
}
