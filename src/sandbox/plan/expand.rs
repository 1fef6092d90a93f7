//! Expansion of a path as a policy writes it: `~` and `$VAR`/`${VAR}`, `$$` for a `$` of the
//! path's own. Never expands a value again, and never takes an empty variable for a path.

use crate::error::{Error, Result};

/// Expands `~` and `$VAR`/`${VAR}`, and `$$` to `$`.
pub fn expand(raw: &str) -> Result<String> {
    let bad = |why: String| Error::PathExpansion {
        written: raw.to_string(),
        why,
    };
    let var = |name: &str| match std::env::var(name) {
        // An empty value names nothing: as if unset.
        Ok(value) if value.is_empty() => Err(bad(format!("${name} is empty"))),
        Ok(value) => Ok(value),
        // A shell variable, never exported: the user's id.
        Err(_) if name == "UID" => Ok(nix::unistd::getuid().to_string()),
        Err(_) => Err(bad(format!("${name} is not set"))),
    };
    let mut out = match raw.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => var("HOME")? + rest,
        _ => raw.to_string(),
    };
    // Expanded values are not expanded again: `from` moves past each substitution.
    let mut from = 0;
    while let Some(start) = out[from..].find('$').map(|i| i + from) {
        let rest = &out[start + 1..];
        if rest.starts_with('$') {
            out.replace_range(start..start + 2, "$");
            from = start + 1;
            continue;
        }
        let (name, len) = match rest.strip_prefix('{') {
            Some(inner) => {
                let end = inner
                    .find('}')
                    .ok_or_else(|| bad(format!("unclosed ${{ in {raw}")))?;
                (&inner[..end], end + 2)
            }
            None => {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                (&rest[..end], end)
            }
        };
        if name.is_empty() {
            return Err(bad(format!("a lone $ in {raw}")));
        }
        let value = var(name)?;
        out.replace_range(start..start + 1 + len, &value);
        from = start + value.len();
    }
    Ok(out)
}
