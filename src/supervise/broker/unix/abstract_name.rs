//! A connect to an abstract unix socket, where the policy scopes them: allowed only when every
//! listener of the name is the job's, looked up on each connect (a name is free again once its
//! listener closes).

use super::{serving, Unix, CACHE};
use crate::supervise::broker::listeners;
use crate::supervise::broker::Verdict;

impl Unix {
    /// The verdict on connecting to the abstract name `name`.
    pub(super) fn connect_abstract(&mut self, name: &[u8]) -> Verdict {
        if !self.abstract_scoped {
            return Verdict::Connect;
        }
        // Only a listener (or a bound datagram socket) holds a name: an accepted socket keeps its
        // listener's name after the listener is gone, and must not vouch for whoever binds the
        // name next.
        let serving = match serving(|b| b.abstract_name.as_deref() == Some(name)) {
            Ok(serving) => serving,
            Err(verdict) => return verdict,
        };
        if self.sockets.len() >= CACHE {
            self.sockets.clear();
        }
        let members = &self.members;
        let own = serving.iter().all(|b| {
            *self
                .sockets
                .entry(b.socket)
                .or_insert_with(|| listeners::held_by_job(b.socket, members))
        });
        match own {
            true => Verdict::Connect,
            false => Verdict::Refused,
        }
    }
}
