//! The build's identity, `ISOLATE_BUILD`: a hash of the sources. The job's plan carries it, and
//! the pre-exec helper refuses a plan of another build, so that an `isolate-sandbox-exec` left
//! beside a newer isolate can never apply a plan it reads differently.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.lock");
    let mut files = vec![PathBuf::from("Cargo.lock")];
    sources(Path::new("src"), &mut files);
    files.sort();
    // SipHash with fixed keys: the same sources give the same identity on every machine.
    let mut hash = DefaultHasher::new();
    // Each path and each content with its length first: no two trees give the same stream.
    for file in &files {
        let name = file.as_os_str().as_encoded_bytes();
        let content = fs::read(file).unwrap_or_default();
        hash.write_usize(name.len());
        hash.write(name);
        hash.write_usize(content.len());
        hash.write(&content);
    }
    println!("cargo:rustc-env=ISOLATE_BUILD={:016x}", hash.finish());
}
