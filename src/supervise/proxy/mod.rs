//! The job's network proxy, for a policy with a domain allowlist (`[network] allow`): an HTTP proxy
//! on 127.0.0.1, run as threads of the job's supervisor from before the job is spawned until it
//! has ended. CONNECT opens a tunnel (TLS), an absolute-form request is forwarded (plain HTTP);
//! either only to a name the allowlist names, resolved here, to addresses `allow/` accepts.
//! The seccomp layer's broker lets the job's TCP reach this proxy's exact address and the job's
//! own ports, nothing else, and UDP is refused: names are resolved here, never by the job.
//!
//! Only the job can use it: its URL carries a secret made for the job
//! (`http://isolate:<secret>@127.0.0.1:<port>`), checked in every request's
//! `Proxy-Authorization` (407 without it). A refusal is a 403 whose body is one line the agent
//! can read; every decision is a line of `net.log` (log.rs) and counted for the job's record.
//!
//! It must never reach a destination it did not check, nor let a request through without the
//! secret, nor print what the job sent. A client that speaks garbage gets its connection closed;
//! the job goes on.

mod accept;
mod allow;
mod hello;
mod lines;
mod log;
mod open;
mod request;
mod response;
mod secret;
mod serve;
mod server;
mod tunnel;

pub use allow::{names_local, AllowList};
pub use log::NetLog;
pub use server::{Listen, Proxy};
pub(crate) use tunnel::relay;

use crate::error::{Error, Result};

/// The log's name in the job's directory.
pub const LOG: &str = "net.log";
/// A fixed port for the proxy (`ISOLATE_PROXY_PORT`), instead of one the kernel picks.
pub const PORT_VAR: &str = "ISOLATE_PROXY_PORT";

/// The port `ISOLATE_PROXY_PORT` asks for (0: the kernel's choice).
pub fn port_from_env() -> Result<u16> {
    match std::env::var(PORT_VAR) {
        Err(_) => Ok(0),
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|_| Error::Usage(format!("{PORT_VAR}={text:?}: expected a TCP port"))),
    }
}
