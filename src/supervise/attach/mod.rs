//! Background jobs with a terminal, and attaching to them (docs/supervise.md, "attach"): the
//! supervisor's side (hub.rs: the job's pty, its screen, the attach socket), the client's
//! (client.rs: `isolate attach`) and the frames between them (wire.rs).

mod client;
mod hub;
mod wire;

pub use client::{attach, Left};
pub use hub::{Hub, SOCKET};
