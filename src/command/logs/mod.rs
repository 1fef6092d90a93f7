//! `isolate logs JOB [-f] [--tail N] [--raw]`: a background job's output. With `-f` it follows the
//! log across rotation until the job ends. Written to a terminal, the job's control characters are
//! escaped (`cat -v` style) unless `--raw`: what a job prints is not the user's terminal's to obey.
//! A closed reader (`isolate logs JOB | head`) is not an error. `--net` shows the job's network
//! decisions (`net.log`, its proxy's) the same way.

mod follow;

use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::cli::LogsArgs;
use crate::controls::{self, Lines};
use crate::error::Error;
use crate::job::store;
use crate::supervise::log::Following;

use follow::Followed;

pub fn run(args: LogsArgs) -> Result<i32, Error> {
    show(&args)?;
    Ok(0)
}

fn show(args: &LogsArgs) -> Result<(), Error> {
    let state = store::state_dir()?;
    let (dir, record) = store::resolve(&state, &args.job)?;
    if args.net {
        return show_net(args, &dir, &record);
    }
    if !record.background {
        return Err(Error::Job {
            job: record.id.to_string(),
            why: "ran in the foreground: its output went to its terminal, not to a log".into(),
        });
    }
    // The log's place comes from the job directory, never from the record's text.
    let path = dir.join("output.log");
    let rotated = dir.join("output.log.1");
    let mut out = stdout(args);
    // A follower registers before it reads anything: from here no rotation takes bytes from it.
    // (Best effort: where the job directory cannot be written, it follows as before, and a burst
    // of rotations while it reads can take bytes from it.)
    let following = args.follow.then(|| Following::start(&dir).ok());
    // The log first, held open: what is read of it and after it is one stream.
    let mut current = Followed::open(&path);
    // `.1` opened once and told apart by what was opened: named and then read, a rotation between
    // the two read the held file twice.
    let mut text = Vec::new();
    if let Ok(mut older) = crate::textfile::open_untrusted(&rotated) {
        let inode = older.metadata().ok().map(|m| m.ino());
        // Just rotated: `.1` is the file held open, read below.
        if inode.is_none() || inode != current.inode() {
            let _ = older.read_to_end(&mut text);
        }
    }
    current.read_into(&mut text);
    let shown = match args.tail {
        Some(n) => last_lines(&text, n),
        None => &text[..],
    };
    out.write_all(shown).map_err(Error::Output)?;
    out.flush().map_err(Error::Output)?;
    if let Some(_following) = following {
        follow::follow(&dir, &path, current, &mut out)?;
    }
    Ok(())
}

/// `--net`: the job's proxy log (`net.log`, written by one writer a whole line at a time), through
/// the same escaping as the output.
fn show_net(args: &LogsArgs, dir: &Path, record: &crate::job::record::Record) -> Result<(), Error> {
    let path = dir.join(crate::supervise::proxy::LOG);
    if !path.exists() {
        return Err(Error::Job {
            job: record.id.to_string(),
            why: "has no network log: its policy has no domain allowlist (no proxy ran for it)"
                .into(),
        });
    }
    let mut out = stdout(args);
    let text = read_all(&path);
    let shown = match args.tail {
        Some(n) => last_lines(&text, n),
        None => &text[..],
    };
    out.write_all(shown).map_err(Error::Output)?;
    out.flush().map_err(Error::Output)?;
    if args.follow {
        // One writer, a whole line at a time, never rotated: followed from its end.
        let mut net = Followed::open(&path);
        net.read_into(&mut Vec::new());
        follow::follow(dir, &path, net, &mut out)?;
    }
    Ok(())
}

/// Standard output, escaping what a job wrote when it is a terminal (unless `--raw`).
fn stdout(args: &LogsArgs) -> Output<io::StdoutLock<'static>> {
    let out = io::stdout();
    let escape = !args.raw && std::io::IsTerminal::is_terminal(&out);
    Output {
        out: out.lock(),
        escape,
        held: Vec::new(),
    }
}

fn read_all(path: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Ok(mut file) = crate::textfile::open_untrusted(path) {
        let _ = file.read_to_end(&mut bytes);
    }
    bytes
}

/// The last `n` lines of `text` (a final line without a newline counts).
fn last_lines(text: &[u8], n: usize) -> &[u8] {
    if n == 0 {
        return &[];
    }
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let mut seen = 0;
    for (i, &b) in body.iter().enumerate().rev() {
        if b == b'\n' {
            seen += 1;
            if seen == n {
                return &text[i + 1..];
            }
        }
    }
    text
}

/// Standard output, escaping control characters when it is a terminal. A character whose bytes
/// two reads split is held back until it is whole (`logs -f`): escaped piece by piece, a C1
/// control's two bytes passed as they came. What is still held when the output ends (a log cut
/// mid-character) is shown as it is, escaped.
struct Output<W: Write> {
    out: W,
    escape: bool,
    held: Vec<u8>,
}

impl<W: Write> Write for Output<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.escape {
            return self.out.write(buf);
        }
        let mut text = std::mem::take(&mut self.held);
        text.extend_from_slice(buf);
        let whole = text.len() - controls::incomplete_tail(&text);
        self.held = text.split_off(whole);
        self.out
            .write_all(&controls::visible(&text, Lines::Kept))
            .map(|()| buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: Write> Drop for Output<W> {
    fn drop(&mut self) {
        if !self.held.is_empty() {
            let _ = self
                .out
                .write_all(&controls::visible(&self.held, Lines::Kept));
            let _ = self.out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::{last_lines, Output};
    use crate::controls::{visible, Lines};

    #[test]
    fn a_control_split_across_two_reads_is_shown_whole() {
        let mut out = Output {
            out: Vec::new(),
            escape: true,
            held: Vec::new(),
        };
        for piece in [b"a\xc2".as_slice(), b"\x9b[2J \xe6\x97", b"\xa5 \x9b"] {
            out.write_all(piece).unwrap();
        }
        assert_eq!(out.out, "aM-^[[2J \u{65e5} M-^[".as_bytes());
    }

    #[test]
    fn a_character_cut_short_at_the_end_is_shown_escaped() {
        let mut shown = Vec::new();
        {
            let mut out = Output {
                out: &mut shown,
                escape: true,
                held: Vec::new(),
            };
            out.write_all(b"done \xe6\x97").unwrap();
        }
        assert_eq!(shown, visible(b"done \xe6\x97", Lines::Kept));
        assert!(shown.starts_with(b"done ") && shown.len() > 5);
    }

    #[test]
    fn control_characters_are_shown_and_text_is_kept() {
        assert_eq!(
            visible(b"\x1b]52;c;ZXZpbA==\x07ok\n", Lines::Kept),
            b"^[]52;c;ZXZpbA==^Gok\n"
        );
        assert_eq!(
            visible("a\tb\r\nçé 漢\x7f".as_bytes(), Lines::Kept),
            "a\tb\r\nçé 漢^?".as_bytes()
        );
        assert_eq!(visible("\u{9b}2J".as_bytes(), Lines::Kept), b"M-^[2J");
    }

    #[test]
    fn last_lines_counts_from_the_end() {
        assert_eq!(last_lines(b"a\nb\nc\n", 2), b"b\nc\n");
        assert_eq!(last_lines(b"a\nb\nc", 2), b"b\nc");
        assert_eq!(last_lines(b"a\nb\n", 5), b"a\nb\n");
        assert_eq!(last_lines(b"a\n", 0), b"");
    }
}
