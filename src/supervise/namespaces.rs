//! The holder of a job's namespaces (the namespaces tier, sandbox/namespaces.rs): a child of the
//! supervisor that makes a user namespace mapping the user's uid and gid onto themselves and,
//! for a policy that restricts the network, a network namespace with loopback up, then lives as
//! long as the job to make sockets in that namespace for the supervisor: the proxy's listener,
//! the socket diagnostics the broker reads the job's listeners by, the connections forwarded into
//! the job's loopback. The job's first process joins these namespaces before anything else.
//!
//! Made before the job is forked, by a process that may have other threads: between its fork and
//! its end the holder makes only system calls (no allocation, no lock). It holds no descriptor of
//! the supervisor's but its end of the request socket, every signal back to its default; the job
//! can neither trace it (Landlock refuses a sandboxed process every process outside its domain)
//! nor, where Landlock scopes signals, signal it. It ends when the supervisor closes the socket
//! or dies, or at the stop sequence's SIGTERM (it is one of the supervisor's children).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, OnceLock};

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};

/// The holder this supervisor started, for the parts of it that make sockets for its job (the
/// broker's socket diagnostics, the proxy): one job per supervisor.
static CURRENT: OnceLock<Holder> = OnceLock::new();

/// A running holder.
pub struct Holder {
    pid: libc::pid_t,
    network: bool,
    requests: Mutex<OwnedFd>,
    /// Its user namespace, and its network namespace when it has one of its own: what the job's
    /// first process joins (never by `/proc/<pid>`, which names another process where `/proc`
    /// is of another pid namespace than isolate's).
    user_ns: OwnedFd,
    net_ns: Option<OwnedFd>,
}

/// The requests that ask for the holder's namespaces rather than a socket (`domain`).
const USER_NS: i32 = -1;
const NET_NS: i32 = -2;

/// One request: a socket's domain, type and protocol.
#[repr(C)]
#[derive(Clone, Copy)]
struct Request {
    domain: i32,
    kind: i32,
    protocol: i32,
}

impl Holder {
    /// Starts a holder (with a network namespace of its own when `network`) and makes it this
    /// supervisor's. Fails, saying why, where the kernel refuses an unprivileged user namespace.
    pub fn start(network: bool) -> io::Result<&'static Holder> {
        if let Some(current) = CURRENT.get() {
            return match current.network == network {
                true => Ok(current),
                false => Err(io::Error::other("a holder with other namespaces runs")),
            };
        }
        let holder = spawn(network)?;
        let _ = CURRENT.set(holder);
        CURRENT
            .get()
            .ok_or_else(|| io::Error::other("the namespace holder was not kept"))
    }

    /// This supervisor's holder, when it started one.
    pub fn current() -> Option<&'static Holder> {
        CURRENT.get()
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Ends the holder and collects it: the job has ended (its namespaces go with the last
    /// socket in them).
    pub fn end(&self) {
        // SAFETY: kill and waitpid of our own child (the reaper never collects it: it is not the
        // job's, tree.rs); a holder already collected makes both fail harmlessly.
        unsafe {
            if libc::kill(self.pid, libc::SIGKILL) == 0 {
                libc::waitpid(self.pid, std::ptr::null_mut(), 0);
            }
        }
    }

    /// The job has a network namespace of its own.
    pub fn network(&self) -> bool {
        self.network
    }

    /// The descriptor of its user namespace, which the job's first process inherits and joins.
    pub fn user_ns(&self) -> RawFd {
        self.user_ns.as_raw_fd()
    }

    /// The descriptor of its network namespace, when it has one of its own.
    pub fn net_ns(&self) -> Option<RawFd> {
        self.net_ns.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// A socket made in the job's namespaces (`socket(2)`'s arguments; close-on-exec here).
    pub fn socket(&self, domain: i32, kind: i32, protocol: i32) -> io::Result<OwnedFd> {
        if domain < 0 {
            return Err(io::Error::from_raw_os_error(libc::EAFNOSUPPORT));
        }
        let requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        ask(requests.as_raw_fd(), domain, kind, protocol)
    }
}

/// One request on `fd`, and the descriptor it is answered with.
fn ask(requests: RawFd, domain: i32, kind: i32, protocol: i32) -> io::Result<OwnedFd> {
    let request = Request {
        domain,
        kind,
        protocol,
    };
    // SAFETY: `request` is plain data of the size given, alive across the call.
    let sent = unsafe {
        libc::send(
            requests,
            (&request as *const Request).cast(),
            std::mem::size_of::<Request>(),
            libc::MSG_NOSIGNAL,
        )
    };
    if sent != std::mem::size_of::<Request>() as isize {
        return Err(io::Error::other("the namespace holder is gone"));
    }
    match receive(requests)? {
        (0, Some(fd)) => Ok(fd),
        (0, None) => Err(io::Error::other("the namespace holder sent no descriptor")),
        (e, _) => Err(io::Error::from_raw_os_error(e)),
    }
}

/// Receives one answer: an errno (0: success) and the descriptor sent with it.
fn receive(fd: RawFd) -> io::Result<(i32, Option<OwnedFd>)> {
    let mut errno = [0u8; 4];
    // SAFETY: CMSG_SPACE is a pure computation.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = [0u64; 4];
    let mut iov = libc::iovec {
        iov_base: errno.as_mut_ptr().cast(),
        iov_len: errno.len(),
    };
    // SAFETY: msghdr is plain data; every pointer set below outlives the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space.min(std::mem::size_of_val(&control));
    let n = loop {
        // SAFETY: as above.
        let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break n;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    if n != 4 {
        return Err(io::Error::other("the namespace holder is gone"));
    }
    let mut sent = None;
    // SAFETY: the CMSG macros walk the control buffer recvmsg filled, within msg_controllen.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if !cmsg.is_null()
            && (*cmsg).cmsg_level == libc::SOL_SOCKET
            && (*cmsg).cmsg_type == libc::SCM_RIGHTS
        {
            let raw = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
            sent = Some(OwnedFd::from_raw_fd(raw));
        }
    }
    Ok((i32::from_ne_bytes(errno), sent))
}

/// Forks the holder and waits until its namespaces exist (or it says why they cannot).
fn spawn(network: bool) -> io::Result<Holder> {
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(io::Error::from)?;
    // SAFETY: geteuid and getegid have no preconditions. The kernel maps the effective ids.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let uid_map = map_line(uid);
    let gid_map = map_line(gid);
    let parent = std::process::id() as libc::pid_t;
    let setup = Setup {
        socket: theirs.as_raw_fd(),
        parent,
        uid_map: &uid_map,
        gid_map: &gid_map,
        network,
    };
    // Every signal blocked across the fork: none may run a copy of the supervisor's handlers in
    // the child before it has set them back to their defaults.
    // SAFETY: sigset_t is plain data filled by sigfillset; the mask is this thread's own.
    let old = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        old
    };
    // SAFETY: the child runs only `hold`, which makes system calls on what was built above and
    // ends in `_exit`; glibc's fork handlers are not needed by it.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::SIGCHLD,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid == 0 {
        // SAFETY: in the child of the clone above, with `setup` copied with the address space.
        unsafe { hold(&setup) }
    }
    // SAFETY: the mask pthread_sigmask filled in above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    let pid = pid as libc::pid_t;
    drop(theirs);
    let ready = receive(ours.as_raw_fd());
    let fail = |e: io::Error| {
        // SAFETY: kill and waitpid of the child just made, which said it cannot go on.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        Err(e)
    };
    match ready {
        Ok((0, _)) => {}
        Ok((e, _)) => return fail(io::Error::from_raw_os_error(e)),
        Err(e) => return fail(e),
    }
    let requests = Mutex::new(ours);
    let ask = |which: i32| {
        let requests = requests.lock().unwrap_or_else(|e| e.into_inner());
        ask(requests.as_raw_fd(), which, 0, 0)
    };
    let user_ns = match ask(USER_NS) {
        Ok(fd) => fd,
        Err(e) => return fail(e),
    };
    let net_ns = match network {
        false => None,
        true => match ask(NET_NS) {
            Ok(fd) => Some(fd),
            Err(e) => return fail(e),
        },
    };
    Ok(Holder {
        pid,
        network,
        requests,
        user_ns,
        net_ns,
    })
}

impl Drop for Holder {
    fn drop(&mut self) {
        // SAFETY: kill of our own child, not reaped yet (the reaper, or this process's end,
        // collects it).
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
    }
}

/// `"<id> <id> 1\n"`: an id mapped onto itself, as the kernel reads `uid_map`.
fn map_line(id: u32) -> Vec<u8> {
    format!("{id} {id} 1\n").into_bytes()
}

/// What the holder's side needs, made before the fork.
struct Setup<'a> {
    socket: RawFd,
    parent: libc::pid_t,
    uid_map: &'a [u8],
    gid_map: &'a [u8],
    network: bool,
}

/// The holder: its namespaces made, then sockets made on request until the supervisor closes
/// its end. Never returns.
///
/// # Safety
///
/// Only in the child of the clone in `spawn`: system calls only, on `setup`'s copy.
unsafe fn hold(setup: &Setup<'_>) -> ! {
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    if libc::getppid() != setup.parent {
        libc::_exit(1);
    }
    // Every signal back to its default (SIGTERM ends it), then none blocked.
    for sig in 1..=libc::SIGRTMAX() {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    // Nothing of the supervisor's held open (a log's pipe would never see its end).
    let sock = setup.socket as libc::c_uint;
    if sock > 0 {
        libc::syscall(libc::SYS_close_range, 0u32, sock - 1, 0u32);
    }
    libc::syscall(libc::SYS_close_range, sock + 1, u32::MAX, 0u32);
    let errno = match namespaces(setup) {
        Ok(()) => 0,
        Err(e) => e,
    };
    answer(setup.socket, errno, None);
    if errno != 0 {
        libc::_exit(1);
    }
    serve(setup.socket)
}

/// The user namespace (and network namespace) made and mapped; `Err(errno)` on the first failure.
unsafe fn namespaces(setup: &Setup<'_>) -> Result<(), i32> {
    let errno = || *libc::__errno_location();
    let mut flags = libc::CLONE_NEWUSER;
    if setup.network {
        flags |= libc::CLONE_NEWNET;
    }
    if libc::unshare(flags) != 0 {
        return Err(errno());
    }
    write_file(c"/proc/self/setgroups", b"deny")?;
    write_file(c"/proc/self/uid_map", setup.uid_map)?;
    write_file(c"/proc/self/gid_map", setup.gid_map)?;
    if setup.network {
        loopback_up()?;
    }
    Ok(())
}

unsafe fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> Result<(), i32> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(*libc::__errno_location());
    }
    let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
    let e = *libc::__errno_location();
    libc::close(fd);
    match n == bytes.len() as isize {
        true => Ok(()),
        false => Err(e),
    }
}

/// `lo` up in the new network namespace (SIOCSIFFLAGS, as `ip link set lo up`).
unsafe fn loopback_up() -> Result<(), i32> {
    let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
    if fd < 0 {
        return Err(*libc::__errno_location());
    }
    let mut req: libc::ifreq = std::mem::zeroed();
    for (i, b) in b"lo".iter().enumerate() {
        req.ifr_name[i] = *b as libc::c_char;
    }
    let mut rc = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req);
    if rc == 0 {
        req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        rc = libc::ioctl(fd, libc::SIOCSIFFLAGS, &req);
    }
    let e = *libc::__errno_location();
    libc::close(fd);
    match rc {
        0 => Ok(()),
        _ => Err(e),
    }
}

/// Makes a socket for each request until the supervisor's end closes.
unsafe fn serve(sock: RawFd) -> ! {
    loop {
        let mut request = Request {
            domain: 0,
            kind: 0,
            protocol: 0,
        };
        let n = libc::recv(
            sock,
            (&mut request as *mut Request).cast(),
            std::mem::size_of::<Request>(),
            0,
        );
        if n < 0 && *libc::__errno_location() == libc::EINTR {
            continue;
        }
        if n != std::mem::size_of::<Request>() as isize {
            libc::_exit(0);
        }
        let fd = match request.domain {
            USER_NS => libc::open(
                c"/proc/self/ns/user".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            ),
            NET_NS => libc::open(
                c"/proc/self/ns/net".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            ),
            domain => libc::socket(domain, request.kind | libc::SOCK_CLOEXEC, request.protocol),
        };
        match fd {
            fd if fd < 0 => answer(sock, *libc::__errno_location(), None),
            fd => {
                answer(sock, 0, Some(fd));
                libc::close(fd);
            }
        }
    }
}

/// Sends `errno` (0: success), with `fd` when given.
unsafe fn answer(sock: RawFd, errno: i32, fd: Option<RawFd>) {
    let bytes = errno.to_ne_bytes();
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    let mut control = [0u64; 4];
    let mut msg: libc::msghdr = std::mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if let Some(fd) = fd {
        let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
    }
    libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL);
}

impl Holder {
    /// A TCP listener on `addr` in the job's network namespace.
    pub fn listen_tcp(&self, addr: std::net::SocketAddr) -> io::Result<std::net::TcpListener> {
        let fd = self.socket(family(&addr), libc::SOCK_STREAM, 0)?;
        let one: libc::c_int = 1;
        // SAFETY: setsockopt reads the int it is given, alive across the call.
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        let (storage, len) = sockaddr(&addr);
        // SAFETY: bind and listen on a descriptor owned here, with an address of `len` bytes.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&storage as *const libc::sockaddr_storage).cast(),
                len,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above.
        if unsafe { libc::listen(fd.as_raw_fd(), 128) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(std::net::TcpListener::from(fd))
    }

    /// A TCP connection to `addr` made in the job's network namespace (its loopback: only the
    /// job's own servers are there).
    pub fn connect_tcp(&self, addr: std::net::SocketAddr) -> io::Result<std::net::TcpStream> {
        let fd = self.socket(family(&addr), libc::SOCK_STREAM, 0)?;
        let (storage, len) = sockaddr(&addr);
        loop {
            // SAFETY: connect on a descriptor owned here, with an address of `len` bytes.
            let rc = unsafe {
                libc::connect(
                    fd.as_raw_fd(),
                    (&storage as *const libc::sockaddr_storage).cast(),
                    len,
                )
            };
            if rc == 0 {
                return Ok(std::net::TcpStream::from(fd));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

fn family(addr: &std::net::SocketAddr) -> i32 {
    match addr {
        std::net::SocketAddr::V4(_) => libc::AF_INET,
        std::net::SocketAddr::V6(_) => libc::AF_INET6,
    }
}

/// `addr` as the kernel takes it.
fn sockaddr(addr: &std::net::SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data, large enough for either family's address.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        std::net::SocketAddr::V4(v4) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: v4.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(v4.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: a sockaddr_in fits in a sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        std::net::SocketAddr::V6(v6) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: v6.port().to_be(),
                sin6_flowinfo: v6.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: v6.ip().octets(),
                },
                sin6_scope_id: v6.scope_id(),
            };
            // SAFETY: a sockaddr_in6 fits in a sockaddr_storage.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}
