//! Job ids: `<slug>-<4 hex>`. The slug is the only part derived from user input, and it is made of
//! lowercase ASCII letters, digits and single dashes, so an id can never name a path outside the
//! directory it is joined to (`../../etc/x y` becomes `etc-x-y`).

use std::fmt;

pub use crate::words::slug;

/// A validated job id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JobId(String);

impl JobId {
    /// A new id for a job named `name`, with fresh random hex.
    pub fn generate(name: &[u8]) -> JobId {
        JobId(format!("{}-{:04x}", slug(name), random_u16()))
    }

    /// Accepts exactly the ids `generate` makes; anything else (from a tampered record, a path) is refused.
    pub fn parse(s: &str) -> Option<JobId> {
        let (slug_part, hex) = s.rsplit_once('-')?;
        let hex_ok = hex.len() == 4 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        (hex_ok && slug(slug_part.as_bytes()) == slug_part).then(|| JobId(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The branch isolate creates for this job, in the job's repository and in the project.
    pub fn branch(&self) -> String {
        format!("isolate/{}", self.0)
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn random_u16() -> u16 {
    let mut buf = [0u8; 2];
    // SAFETY: getrandom writes at most buf.len() bytes into buf.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        // getrandom(2) with a 2-byte buffer does not fail short on Linux; fall back to time and pid.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        return (t ^ std::process::id()) as u16;
    }
    u16::from_ne_bytes(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_keeps_words_and_drops_everything_else() {
        assert_eq!(slug(b"Fix login"), "fix-login");
        assert_eq!(slug(b"../../etc/x y"), "etc-x-y");
        assert_eq!(slug(b""), "task");
        assert_eq!(slug(b"\xff\xfe/..\n"), "task");
        assert_eq!(slug("caf\u{e9} cr\u{e8}me".as_bytes()), "caf-cr-me");
    }

    #[test]
    fn slug_is_at_most_32_characters() {
        let s = slug(b"a very long name that keeps going and going and going");
        assert!(s.len() <= 32, "{s}");
        assert_eq!(s, "a-very-long-name-that-keeps");
        assert_eq!(slug(&[b'x'; 100]).len(), 32);
    }

    #[test]
    fn parse_accepts_generated_ids_only() {
        let id = JobId::generate(b"../../etc/x y");
        assert!(id.as_str().starts_with("etc-x-y-"));
        assert_eq!(JobId::parse(id.as_str()), Some(id.clone()));
        for bad in [
            "../x-1234",
            "x-12345",
            "x-12g4",
            "X-1234",
            "a--b-1234",
            "-1234",
            "x/y-1234",
        ] {
            assert_eq!(JobId::parse(bad), None, "{bad}");
        }
        assert_eq!(id.branch(), format!("isolate/{id}"));
    }
}
