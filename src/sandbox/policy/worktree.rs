//! The `[worktree]` section: what a job's worktree ignores beyond the project's own rules (the
//! files an agent keeps in the directory it works in, aider's `.aider*`). Reads no file; the rules
//! are written into the job's `.git/info/exclude` when its worktree is made (worktree/create/).

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Worktree {
    /// gitignore patterns the job's git and the end-of-job cleanup take as the project's own:
    /// files they match are ignored, and go with the worktree when it is removed.
    #[serde(default)]
    pub ignore: Vec<IgnoreRule>,
}

/// One gitignore pattern, one line of `info/exclude`: not empty, not a comment, without control
/// characters (a newline would write a second rule the policy does not show).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct IgnoreRule(String);

impl IgnoreRule {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for IgnoreRule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = IgnoreRule;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a gitignore pattern on one line (\".aider*\"), neither empty nor a comment",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<IgnoreRule, E> {
                let fits =
                    !s.trim().is_empty() && !s.starts_with('#') && !s.chars().any(char::is_control);
                match fits {
                    true => Ok(IgnoreRule(s.to_string())),
                    false => Err(E::invalid_value(de::Unexpected::Str(s), &self)),
                }
            }
        }
        d.deserialize_str(V)
    }
}
