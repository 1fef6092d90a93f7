//! A terminal's settings, size and descriptor flags as the tests set and compare them.

use super::*;

pub(super) fn set_winsize(master: &OwnedFd, rows: u16, cols: u16) {
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one winsize.
    retry(|| unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) })
        .expect("TIOCSWINSZ");
}

pub(super) fn fd_path(fd: &OwnedFd) -> String {
    let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
    std::fs::read_link(link)
        .expect("readlink")
        .display()
        .to_string()
}

pub(super) fn status_flags(fd: &OwnedFd) -> libc::c_int {
    // SAFETY: F_GETFL only reads.
    retry(|| unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) }).expect("F_GETFL")
}

/// Every field of a termios, comparable and printable (libc's has neither, and its padding
/// rules out comparing bytes).
#[derive(Debug, PartialEq, Eq, Clone)]
pub(super) struct Settings {
    pub(super) iflag: libc::tcflag_t,
    pub(super) oflag: libc::tcflag_t,
    pub(super) cflag: libc::tcflag_t,
    pub(super) lflag: libc::tcflag_t,
    pub(super) line: libc::cc_t,
    pub(super) cc: Vec<libc::cc_t>,
    pub(super) ispeed: libc::speed_t,
    pub(super) ospeed: libc::speed_t,
}

pub(super) fn settings(fd: &OwnedFd) -> Settings {
    let t = get_termios(fd.as_fd()).expect("tcgetattr");
    Settings {
        iflag: t.c_iflag,
        oflag: t.c_oflag,
        cflag: t.c_cflag,
        lflag: t.c_lflag,
        line: t.c_line,
        cc: t.c_cc.to_vec(),
        // SAFETY: the speed getters only read `t`.
        ispeed: unsafe { libc::cfgetispeed(&t) },
        // SAFETY: as for the input speed: the getter only reads `t`.
        ospeed: unsafe { libc::cfgetospeed(&t) },
    }
}

/// Settings nothing would produce by default, so that "restored" cannot mean "reset".
pub(super) fn unusual_settings(fd: &OwnedFd) {
    let mut t = get_termios(fd.as_fd()).expect("tcgetattr");
    t.c_cc[libc::VERASE] = 0x08;
    t.c_cc[libc::VINTR] = 0x07;
    t.c_lflag &= !libc::ECHOK;
    t.c_iflag |= libc::IXANY;
    // SAFETY: plain setters on a local termios.
    unsafe {
        libc::cfsetispeed(&mut t, libc::B9600);
        libc::cfsetospeed(&mut t, libc::B9600);
    }
    set_termios(fd.as_fd(), libc::TCSANOW, &t).expect("tcsetattr");
}
