//! Workspace-level end-to-end tests: they start the real binaries
//! (`cargo build --workspace --bins` first) on loopback, each test with its
//! own port and simulation id, every wait under a timeout. See `tests/`.
