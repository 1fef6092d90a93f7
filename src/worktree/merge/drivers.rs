//! The files of the work tree the user's filter drivers' commands name: read first in the preview,
//! and never checked out by a fast-forward that a driver writes them in (the driver would run the
//! job's version for the next file).

use crate::git::project::Project;

/// The files of the work tree the user's filter drivers' commands name (`sh bin/smudge.sh`; the
/// module of `python3 -m tool`): git runs them on the user's next checkout or `git add`.
pub fn driver_files(project: &Project) -> Vec<String> {
    let Ok(out) = crate::git::try_run(
        &project.top,
        [
            "config",
            "--get-regexp",
            r"^filter\..*\.(smudge|clean|process)$",
        ],
    ) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for line in out.text().lines() {
        let words: Vec<&str> = line.split_whitespace().skip(1).collect();
        for (n, word) in words.iter().enumerate() {
            let word = word.trim_matches(|c| c == '"' || c == '\'');
            files.push(word.strip_prefix("./").unwrap_or(word).to_string());
            if n > 0 && words[n - 1] == "-m" {
                let module = word.replace('.', "/");
                files.push(format!("{module}.py"));
                files.push(format!("{module}/__init__.py"));
                files.push(format!("{module}/__main__.py"));
            }
        }
    }
    files
}
