//! An ordinary user for the tests that must not run as root (root passes every permission check:
//! a directory the job made `chmod 000` stops only a user). Run as root, as CI does, the tests
//! make a system user `isolate-test` once (`useradd`) and run as it with `setpriv`; run as an
//! ordinary user, they run as that user.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use super::{finish, TestEnv, BIN, LIMIT};

const USER: &str = "isolate-test";

/// The ordinary user's uid and gid, made when the tests run as root.
fn ordinary() -> Option<(u32, u32)> {
    static MADE: OnceLock<Option<(u32, u32)>> = OnceLock::new();
    *MADE.get_or_init(|| {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        let id = |flag: &str| -> Option<u32> {
            let out = Command::new("id").args([flag, USER]).output().ok()?;
            String::from_utf8_lossy(&out.stdout).trim().parse().ok()
        };
        if id("-u").is_none() {
            let made = Command::new("useradd")
                .args(["--system", "--no-create-home", "--shell", "/bin/sh", USER])
                .status()
                .expect("useradd runs (the passwd package)");
            // Another test binary may have made it meanwhile.
            assert!(
                made.success() || id("-u").is_some(),
                "useradd {USER} failed"
            );
        }
        Some((id("-u").unwrap(), id("-g").unwrap()))
    })
}

impl TestEnv {
    /// `sh -c SCRIPT` in the test's directory as an ordinary user, with the test's environment and
    /// `$ISOLATE` naming an isolate binary that user may run. As root, the test's directory is
    /// handed to that user first (it owns everything in it from then on).
    pub fn as_ordinary_user(&self, script: &str) -> Output {
        let mut cmd = match ordinary() {
            None => {
                let mut cmd = Command::new("sh");
                self.apply(&mut cmd);
                cmd.env("ISOLATE", BIN);
                cmd
            }
            Some((uid, gid)) => {
                // The cargo target directory may be out of the user's reach (under /root).
                let bin: PathBuf = self.path().join("isolate-bin");
                if !bin.exists() {
                    fs::copy(BIN, &bin).unwrap();
                    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
                }
                let chown = Command::new("chown")
                    .arg("-R")
                    .arg(format!("{uid}:{gid}"))
                    .arg(self.path())
                    .status()
                    .unwrap();
                assert!(chown.success());
                let mut cmd = Command::new("setpriv");
                cmd.arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={gid}"))
                    .args(["--clear-groups", "--inh-caps=-all", "sh"]);
                self.apply(&mut cmd);
                cmd.env("ISOLATE", &bin);
                cmd
            }
        };
        cmd.arg("-c")
            .arg(script)
            .current_dir(self.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        finish(cmd.spawn().unwrap(), LIMIT)
    }
}
