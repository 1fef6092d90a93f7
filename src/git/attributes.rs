//! Which paths a filter driver writes: `git check-attr` (which runs nothing) asked for the `filter`
//! and `working-tree-encoding` of each, the files a checkout would pass through a driver of the
//! user's (a `filter.<driver>.smudge` or `process` command) or convert. Read before such a
//! checkout, so that the files a driver writes are written apart from the rest.

use std::path::Path;

use crate::error::Result;
use crate::git;

/// Of `paths` (git's names, byte for byte), those whose filter names a driver or whose working
/// tree encoding is not UTF-8, in `dir`, with git's global `options` first (`--attr-source=…`).
pub fn driven(dir: &Path, options: &[String], paths: &[&[u8]]) -> Result<Vec<Vec<u8>>> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut input = Vec::new();
    for path in paths {
        input.extend_from_slice(path);
        input.push(0);
    }
    let args = options.iter().map(String::as_str).chain([
        "check-attr",
        "-z",
        "--stdin",
        "filter",
        "working-tree-encoding",
    ]);
    let attrs = git::run_with_input(dir, args, &input)?;
    Ok(filtered(&attrs.stdout))
}

/// The paths of `check-attr -z` output (`path NUL attribute NUL value NUL`, repeated) whose filter
/// names a driver or whose working tree encoding is not UTF-8 (so that the files that must be
/// written converted all are), each once.
fn filtered(out: &[u8]) -> Vec<Vec<u8>> {
    let fields: Vec<&[u8]> = out.split(|&b| b == 0).collect();
    let mut paths: Vec<Vec<u8>> = fields
        .chunks_exact(3)
        .filter(|f| !matches!(f[2], b"unspecified" | b"unset" | b"set"))
        .map(|f| f[0].to_vec())
        .collect();
    // check-attr answers path by path, every attribute of one path together.
    paths.dedup();
    paths
}

#[cfg(test)]
mod tests {
    use super::filtered;

    #[test]
    fn only_paths_whose_filter_names_a_driver() {
        let out = b"a.bin\0filter\0lfs\0a.bin\0working-tree-encoding\0UTF-16\0\
                    b.txt\0filter\0unspecified\0c\0filter\0unset\0d\0filter\0set\0\
                    e\0working-tree-encoding\0UTF-16\0";
        assert_eq!(filtered(out), vec![b"a.bin".to_vec(), b"e".to_vec()]);
    }
}
