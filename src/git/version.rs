//! git's version, and the check that it is recent enough for what needs it. Never runs git in a
//! repository: `git --version` only.

use std::process::{Command, Stdio};

use crate::error::{Error, GitProblem, Result};

/// git's version, as `(major, minor, patch)`.
pub fn version() -> Result<(u32, u32, u32)> {
    let out = Command::new("git")
        .arg("--version")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::from(GitProblem::GitMissing(e)))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_version(&text).ok_or_else(|| {
        Error::from(GitProblem::GitUnreadable {
            args: "--version",
            printed: text.trim().to_string(),
        })
    })
}

/// "git version 2.47.3" (and vendor suffixes such as ".windows.1" or " (Apple Git-146)").
fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let number = text.trim().strip_prefix("git version ")?;
    let mut parts = number
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next()??;
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

/// Fails clearly unless git is at least `major.minor`, which `what` needs.
pub fn require(major: u32, minor: u32, what: &'static str) -> Result<()> {
    let found = version()?;
    if (found.0, found.1) >= (major, minor) {
        return Ok(());
    }
    Err(Error::from(GitProblem::GitTooOld {
        what,
        needs: (major, minor),
        found,
    }))
}

#[cfg(test)]
mod tests {
    use super::parse_version;

    #[test]
    fn versions_are_read_with_vendor_suffixes() {
        assert_eq!(parse_version("git version 2.47.3\n"), Some((2, 47, 3)));
        assert_eq!(
            parse_version("git version 2.38.0.windows.1"),
            Some((2, 38, 0))
        );
        assert_eq!(
            parse_version("git version 2.39.5 (Apple Git-154)"),
            Some((2, 39, 5))
        );
        assert_eq!(parse_version("git version 3.0"), Some((3, 0, 0)));
        assert_eq!(parse_version("hub version 2.14"), None);
    }
}
