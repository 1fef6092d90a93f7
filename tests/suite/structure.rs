//! The architecture of README.md ("Architecture"), held: each folder of `src/` is a layer, and a
//! file uses only the layers below its own (an import that points up, or a cycle between layers,
//! fails here). Read from the sources, as text. (No limit on a file's length: one concept per
//! file, however long it grows.)

use std::fs;
use std::path::{Path, PathBuf};

/// The layers, top first: a file of a layer may use the layers after it, never one before.
const LAYERS: &[&[&str]] = &[
    &["command"],
    &["cli"],
    &["worktree"],
    &["supervise"],
    &["sandbox"],
    &["job"],
    &["config"],
    &["git"],
    &["controls", "words", "textfile"],
    &["sys"],
    &["error"],
];

fn rank(top: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&top))
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_import_points_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let top = top.trim_end_matches(".rs");
        let text = fs::read_to_string(file).unwrap();
        let Some(own) = rank(top) else {
            assert!(
                ["lib", "main", "bin"].contains(&top),
                "{} is in no layer: add it to LAYERS and README.md",
                rel.display()
            );
            continue;
        };
        for (at, _) in text.match_indices("crate::") {
            let name: String = text[at + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if let Some(used) = rank(&name) {
                if used < own {
                    wrong.push(format!("{} uses {name}, a layer above it", rel.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
