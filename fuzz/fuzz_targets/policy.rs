//! Policy files: `policy::load` on any text (written to a file, as `--policy FILE` reads it), then
//! `plan::preview`, which resolves it on this machine as `policy show` does (creating nothing).
//! Neither may panic; every path a preview resolves is absolute.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use isolate::sandbox::{plan, policy};
use libfuzzer_sys::fuzz_target;

/// One private directory per fuzzing process; the policy file is rewritten at each input.
fn file() -> &'static PathBuf {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("isolate-fuzz-policy-")
            .tempdir()
            .expect("a temporary directory");
        let file = dir.path().join("policy.toml");
        (dir, file)
    })
    .1
}

fuzz_target!(|data: &[u8]| {
    let path = file();
    if std::fs::write(path, data).is_err() {
        return;
    }
    let Some(name) = path.to_str() else { return };
    match policy::load(name) {
        Ok(loaded) => {
            let preview = plan::preview(&loaded);
            for resolved in &preview.paths {
                if let Some(p) = &resolved.path {
                    assert!(p.is_absolute(), "{resolved:?}");
                }
            }
        }
        Err(e) => {
            // The message names the file; building it must not panic either.
            let _ = e.to_string();
        }
    }
});
