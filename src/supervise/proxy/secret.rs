//! The job's proxy secret: 32 hexadecimal digits from the kernel's random source, and the
//! comparison of a client's credentials with it, in a time that says nothing of where they differ.
//! The secret must never be logged.

/// 32 hexadecimal digits from the kernel's random source.
pub(super) fn secret() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    let mut got = 0;
    while got < bytes.len() {
        // SAFETY: getrandom writes at most the remaining length into `bytes`.
        let n = unsafe { libc::getrandom(bytes[got..].as_mut_ptr().cast(), bytes.len() - got, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        got += n as usize;
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The same bytes, compared in a time that does not depend on where they differ.
pub(super) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}
