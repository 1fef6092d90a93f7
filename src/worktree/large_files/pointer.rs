//! The Git LFS pointers a job's commits carry: the small blobs (under 1024 bytes, git-lfs's own
//! cutoff) of `base..tip` that read as pointer files (the LFS specification, v1), each naming an
//! object by its SHA-256 and size. Read from the project, after the import put the commits there and
//! index-pack checked every object; git runs there with the hygiene of every project-side git.
//! Never reads the job's repository.

use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;

/// The largest blob read as a pointer: git-lfs reads none larger.
const MAX_POINTER: usize = 1024;

/// An LFS object a pointer names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Pointer {
    /// Its SHA-256, 64 lowercase hexadecimal digits.
    pub(super) oid: String,
    pub(super) size: u64,
}

/// What `text` names, when it is a pointer file: the version line first, then an `oid sha256:`
/// line and a `size` line among its keys (extensions' lines are allowed).
pub(super) fn parse(text: &[u8]) -> Option<Pointer> {
    let text = std::str::from_utf8(text).ok()?;
    let mut lines = text.strip_suffix('\n')?.split('\n');
    let version = lines.next()?;
    let known = [
        "version https://git-lfs.github.com/spec/v1",
        "version https://hawser.github.com/spec/v1",
    ];
    if !known.contains(&version) {
        return None;
    }
    let (mut oid, mut size) = (None, None);
    for line in lines {
        let (key, value) = line.split_once(' ')?;
        match key {
            "oid" => {
                let hex = value.strip_prefix("sha256:")?;
                let ok =
                    hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
                oid = ok.then(|| hex.to_string());
            }
            "size" => size = value.parse::<u64>().ok(),
            _ => {}
        }
    }
    Some(Pointer {
        oid: oid?,
        size: size?,
    })
}

/// The LFS objects the pointers of `base..tip` name (commits the project has), once each, empty
/// ones left out (git-lfs stores nothing for them).
pub(super) fn referenced(project: &Project, base: &str, tip: &str) -> Result<Vec<Pointer>> {
    let limit = format!("--filter=blob:limit={MAX_POINTER}");
    // Only the small blobs: the commits given too are filtered (`--filter-provided-objects`).
    let blobs = git::run(
        &project.top,
        [
            "rev-list",
            "--objects",
            "--no-object-names",
            "--filter=object:type=blob",
            &limit,
            "--filter-provided-objects",
            "--end-of-options",
            tip,
            &format!("^{base}"),
        ],
    )?;
    if blobs.stdout.is_empty() {
        return Ok(Vec::new());
    }
    let contents = git::run_with_input(&project.top, ["cat-file", "--batch"], &blobs.stdout)?;
    let mut out = read_batch(&contents.stdout)?;
    out.sort();
    out.dedup();
    Ok(out)
}

/// The pointers among `cat-file --batch`'s answers (`<id> <type> <size>\n<content>\n`, each).
fn read_batch(mut rest: &[u8]) -> Result<Vec<Pointer>> {
    let bad = || Error::Usage("git cat-file --batch answered in a form isolate cannot read".into());
    let mut out = Vec::new();
    while !rest.is_empty() {
        let end = rest.iter().position(|&b| b == b'\n').ok_or_else(bad)?;
        let header = std::str::from_utf8(&rest[..end]).map_err(|_| bad())?;
        let size: usize = header
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)?;
        let body = rest.get(end + 1..end + 1 + size).ok_or_else(bad)?;
        out.extend(parse(body));
        rest = rest.get(end + 2 + size..).ok_or_else(bad)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OID: &str = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";

    #[test]
    fn a_pointer_file_names_its_object_and_nothing_else_does() {
        let pointer =
            format!("version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize 12345\n");
        assert_eq!(
            parse(pointer.as_bytes()),
            Some(Pointer {
                oid: OID.into(),
                size: 12345
            })
        );
        let extended = format!(
            "version https://git-lfs.github.com/spec/v1\next-0-foo sha256:{OID}\noid sha256:{OID}\nsize 3\n"
        );
        assert_eq!(parse(extended.as_bytes()).map(|p| p.size), Some(3));
        for text in [
            format!("version https://example.com/v1\noid sha256:{OID}\nsize 1\n"),
            format!("version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize 1"),
            format!("version https://git-lfs.github.com/spec/v1\noid sha1:{OID}\nsize 1\n"),
            format!(
                "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 1\n",
                &OID[1..]
            ),
            format!(
                "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 1\n",
                OID.to_uppercase()
            ),
            format!("version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize -1\n"),
            "hello\n".to_string(),
        ] {
            assert_eq!(parse(text.as_bytes()), None, "{text:?}");
        }
    }

    #[test]
    fn a_batch_answer_is_read_object_by_object() {
        let pointer =
            format!("version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize 7\n");
        let batch = format!(
            "aaaa blob 6\nhello\n\nbbbb blob {}\n{pointer}\n",
            pointer.len()
        );
        let got = read_batch(batch.as_bytes()).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].size, 7);
        assert!(read_batch(b"aaaa blob 60\nshort\n").is_err());
    }
}
