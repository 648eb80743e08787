//! Flotilla's Pioneer interface: each robot with a `Pioneer` plugin is an
//! emulated Pioneer on a TCP port, speaking ARCOS's protocol as AMRISim
//! does, so that unmodified ARIA / AriaCoda programs drive it.
//!
//! The protocol parts are pure: [`packet`] (framing and checksums),
//! [`command`] (client commands), [`replies`] (SIP, CONFIGpac, SIMSTAT,
//! laser packets), [`motion`] (what motion commands do over time) and
//! [`session`] (one connection's handshake and commands). [`node`] is the
//! adapter: the node runtime's plugin, the TCP listeners and Zenoh.

pub mod command;
pub mod motion;
pub mod node;
pub mod packet;
pub mod replies;
pub mod session;
