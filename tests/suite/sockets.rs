//! The seccomp layer from the job's side: what must keep working (its own unix servers and
//! socketpairs, TCP and UDP where the policy allows them, the sockets a policy names), what the
//! default profile takes out of the environment, and how the layer fails closed where the kernel
//! lacks it. The attacks on it are in escapes.rs; a killed supervisor is in faults.rs.

use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

use crate::support::*;

fn probe(env: &TestEnv, name: &str, body: &str) -> String {
    env.probe(name, body)
}

#[track_caller]
fn assert_said(out: &std::process::Output, needle: &str) {
    assert!(
        stdout(out).contains(needle),
        "expected {needle:?}\nstdout: {}\nstderr: {}",
        stdout(out),
        stderr(out)
    );
}

#[test]
fn the_jobs_own_unix_servers_and_socketpairs_work_and_a_thousand_rounds_all_succeed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let prog = probe(
        &env,
        "own.py",
        "def serve(srv):\n\
         \x20   c, _ = srv.accept(); c.sendall(c.recv(5).upper()); c.close()\n\
         def round_trip(path, kind=socket.SOCK_STREAM):\n\
         \x20   srv = socket.socket(socket.AF_UNIX, kind); srv.bind(path); srv.listen()\n\
         \x20   t = threading.Thread(target=serve, args=(srv,)); t.start()\n\
         \x20   c = socket.socket(socket.AF_UNIX, kind); c.connect(path); c.sendall(b'hello')\n\
         \x20   assert c.recv(5) == b'HELLO'; t.join()\n\
         attempt('relative', lambda: round_trip('a.sock'))\n\
         attempt('absolute', lambda: round_trip(os.path.abspath('b.sock')))\n\
         attempt('tmpdir', lambda: round_trip(os.path.join(os.environ['TMPDIR'], 'c.sock')))\n\
         attempt('abstract', lambda: round_trip('\\0isolate-own-%d' % os.getpid()))\n\
         attempt('seqpacket', lambda: round_trip('d.sock', socket.SOCK_SEQPACKET))\n\
         def pair(kind):\n\
         \x20   a, b = socket.socketpair(socket.AF_UNIX, kind); a.sendall(b'x'); assert b.recv(1) == b'x'\n\
         attempt('pair stream', lambda: pair(socket.SOCK_STREAM))\n\
         attempt('pair seqpacket', lambda: pair(socket.SOCK_SEQPACKET))\n\
         # A server in another process of the job, a daemon in a session of its own.\n\
         srv = socket.socket(socket.AF_UNIX); srv.bind('daemon.sock'); srv.listen()\n\
         if os.fork() == 0:\n\
         \x20   os.setsid()\n\
         \x20   while True: serve(srv)\n\
         srv.close()\n\
         def to_daemon():\n\
         \x20   c = socket.socket(socket.AF_UNIX); c.connect('daemon.sock'); c.sendall(b'hello')\n\
         \x20   assert c.recv(5) == b'HELLO'\n\
         attempt('daemon', to_daemon)\n\
         srv = socket.socket(socket.AF_UNIX); srv.bind('loop.sock'); srv.listen(64)\n\
         ok = 0\n\
         for i in range(1000):\n\
         \x20   c = socket.socket(socket.AF_UNIX); c.connect('loop.sock'); s, _ = srv.accept()\n\
         \x20   c.sendall(b'ping'); ok += s.recv(4) == b'ping'; s.close(); c.close()\n\
         print('rounds: %d' % ok)\n",
    );
    let (out, report) = env.worktree_job(&repo, &[], &format!("python3 {prog}"));
    assert_status(&out, 0);
    for name in [
        "relative",
        "absolute",
        "tmpdir",
        "seqpacket",
        "pair stream",
        "pair seqpacket",
        "daemon",
    ] {
        assert_said(&out, &format!("{name}: ok"));
    }
    assert_said(&out, "rounds: 1000");
    // An abstract name of the job's choosing is refused where the policy scopes abstract sockets
    // (outsiders would reach the job's server by it: escapes.rs); the kernel's own (autobind)
    // is not.
    assert_said(&out, "abstract: EACCES");
    assert_eq!(report["sandbox"]["enforced"], true);
    assert_eq!(
        report["sandbox"]["refused"],
        serde_json::json!({"unix_connect": 0, "tcp_connect": 0, "listen": 0}),
        "{report}"
    );
}

#[test]
fn tcp_and_udp_still_work_where_the_policy_allows_them() {
    let env = TestEnv::new();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let mut got = Vec::new();
        for _ in 0..3 {
            let (mut c, _) = tcp.accept().unwrap();
            let mut buf = [0u8; 1];
            c.read_exact(&mut buf).unwrap();
            c.write_all(&buf).unwrap();
            got.push(buf[0]);
        }
        got
    });
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let prog = probe(
        &env,
        "net.py",
        "addr = ('127.0.0.1', int(sys.argv[1]))\n\
         def echo(s, b):\n\
         \x20   s.sendall(b); assert s.recv(1) == b\n\
         def blocking():\n\
         \x20   s = socket.socket(); s.connect(addr); echo(s, b'a')\n\
         attempt('blocking', blocking)\n\
         attempt('timeout', lambda: echo(socket.create_connection(addr, timeout=5), b'b'))\n\
         def nonblocking():\n\
         \x20   s = socket.socket(); s.setblocking(False)\n\
         \x20   assert s.connect_ex(addr) in (0, errno.EINPROGRESS)\n\
         \x20   import select; select.select([], [s], [], 5); s.setblocking(True); echo(s, b'c')\n\
         attempt('nonblocking', nonblocking)\n\
         attempt('refused', lambda: socket.create_connection(('127.0.0.1', 1), timeout=5))\n\
         attempt('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'u', ('127.0.0.1', int(sys.argv[2]))))\n",
    );
    let script = format!("python3 {prog} {port} {}", udp.local_addr().unwrap().port());
    let (out, _) = env.policy_job(env.path(), &[], "default", &script);
    assert_status(&out, 0);
    for name in ["blocking", "timeout", "nonblocking", "udp"] {
        assert_said(&out, &format!("{name}: ok"));
    }
    assert_said(&out, "refused: ECONNREFUSED");
    assert_eq!(server.join().unwrap(), b"abc");
    let mut buf = [0u8; 4];
    assert_eq!(udp.recv(&mut buf).unwrap(), 1);
}

#[test]
fn a_policy_names_the_outside_sockets_a_job_may_reach() {
    let env = TestEnv::new();
    let named = env.path().join("named.sock");
    let dir = env.path().join("run dir");
    std::fs::create_dir(&dir).unwrap();
    let listeners = [
        UnixListener::bind(&named).unwrap(),
        UnixListener::bind(dir.join("beneath.sock")).unwrap(),
        UnixListener::bind(env.path().join("other.sock")).unwrap(),
    ];
    for l in &listeners {
        l.set_nonblocking(true).unwrap();
    }
    let policy = env.file(
        "sockets.toml",
        &format!(
            "extends = \"default\"\n[network]\nunix_sockets = [\"{}\", \"{}\", {{ path = \"/nonexistent/x.sock\", missing = \"ignore\" }}]\n",
            named.display(),
            dir.display()
        ),
    );
    let prog = probe(
        &env,
        "named.py",
        "def send(path):\n\
         \x20   s = socket.socket(socket.AF_UNIX); s.connect(path); s.sendall(b'hi')\n\
         for path in sys.argv[1:]: attempt(os.path.basename(path), lambda: send(path))\n",
    );
    let script = format!(
        "python3 {prog} '{}' '{}' '{}'",
        named.display(),
        dir.join("beneath.sock").display(),
        env.path().join("other.sock").display()
    );
    let (out, report) = env.policy_job(env.path(), &[], policy.to_str().unwrap(), &script);
    assert_status(&out, 0);
    assert_said(&out, "named.sock: ok");
    assert_said(&out, "beneath.sock: ok");
    assert_said(&out, "other.sock: EACCES");
    for (listener, reached) in listeners.iter().zip([true, true, false]) {
        let mut got = String::new();
        match listener.accept() {
            Ok((mut c, _)) => {
                c.set_nonblocking(false).unwrap();
                c.read_to_string(&mut got).unwrap();
                assert!(reached, "an unnamed outside socket was reached");
                assert_eq!(got, "hi");
            }
            Err(_) => assert!(!reached, "a named socket was not reached"),
        }
    }
    assert_eq!(report["sandbox"]["refused"]["unix_connect"], 1, "{report}");

    // policy show lists them, with the right they grant.
    let out = env.isolate_with(
        env.path(),
        &[],
        &["policy", "show", policy.to_str().unwrap(), "--json"],
    );
    assert_status(&out, 0);
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let connect: Vec<&serde_json::Value> = shown["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["access"] == "connect")
        .collect();
    assert_eq!(connect.len(), 3, "{shown}");
    assert_eq!(connect[0]["rights"], serde_json::json!(["connect_unix"]));
    assert_eq!(connect[2]["outcome"], "skipped");

    // A named socket that is not there follows the missing rules of other paths.
    let strict = env.file(
        "missing.toml",
        "extends = \"default\"\n[network]\nunix_sockets = [{ path = \"/nonexistent/x.sock\", missing = \"error\" }]\n",
    );
    let (out, _) = env.policy_job(env.path(), &[], strict.to_str().unwrap(), "true");
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("/nonexistent/x.sock"),
        "{}",
        stderr(&out)
    );
    let noted = env.file(
        "noted.toml",
        "extends = \"default\"\n[network]\nunix_sockets = [\"/nonexistent/x.sock\"]\n",
    );
    let (out, _) = env.policy_job(env.path(), &[], noted.to_str().unwrap(), "true");
    assert_status(&out, 0);
    assert!(
        stderr(&out).contains("/nonexistent/x.sock skipped"),
        "{}",
        stderr(&out)
    );
    // A path that is neither a socket nor a directory is an error, not a silent grant.
    let file = env.file("plain", "");
    let wrong = env.file(
        "wrong.toml",
        &format!(
            "extends = \"default\"\n[network]\nunix_sockets = [\"{}\"]\n",
            file.display()
        ),
    );
    let (out, _) = env.policy_job(env.path(), &[], wrong.to_str().unwrap(), "true");
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("neither a unix socket"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn control_variables_of_multiplexers_terminals_editors_and_desktops_are_removed() {
    let env = TestEnv::new();
    let doors = [
        "TMUX",
        "TMUX_PANE",
        "STY",
        "ZELLIJ",
        "ZELLIJ_SESSION_NAME",
        "KITTY_LISTEN_ON",
        "WEZTERM_UNIX_SOCKET",
        "ALACRITTY_SOCKET",
        "NVIM",
        "NVIM_LISTEN_ADDRESS",
        "VSCODE_IPC_HOOK_CLI",
        "VSCODE_GIT_IPC_HANDLE",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "SWAYSOCK",
        "DBUS_SESSION_BUS_ADDRESS",
        "SSH_AUTH_SOCK",
        "NOTIFY_SOCKET",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "VAULT_AGENT_ADDR",
        "VAULT_ADDR",
        "CONSUL_HTTP_ADDR",
        "BUILDKIT_HOST",
        "REMOTE_CONTAINERS_IPC",
        "IBUS_ADDRESS",
        "MPD_HOST",
        "LIBVIRT_DEFAULT_URI",
    ];
    let mut vars: Vec<(&str, &str)> = doors.iter().map(|d| (*d, "/tmp/door")).collect();
    vars.push(("KEEP_ME", "kept"));
    for policy in ["default", "strict", "offline"] {
        let (out, _) = env.policy_job(env.path(), &vars, policy, "env");
        assert_status(&out, 0);
        let text = stdout(&out);
        for door in doors {
            assert!(
                !text.lines().any(|l| l.starts_with(&format!("{door}="))),
                "{policy}: {door} reached the job"
            );
        }
        assert!(text.contains("KEEP_ME=kept"), "{policy}: {text}");
    }
}

#[test]
fn without_kernel_support_the_layer_fails_closed_or_is_a_listed_gap() {
    let env = TestEnv::new();
    let outside = UnixListener::bind(env.path().join("outside.sock")).unwrap();
    outside.set_nonblocking(true).unwrap();
    let no = [("ISOLATE_NO_SECCOMP", "1")];
    let (out, _) = env.policy_job(env.path(), &no, "default", "echo ran");
    assert_status(&out, 125);
    assert!(!stdout(&out).contains("ran"));
    assert!(
        stderr(&out).contains("requires the seccomp layer") && stderr(&out).contains("best_effort"),
        "{}",
        stderr(&out)
    );
    // Best effort: the run goes on, the gap is listed, and it is a real one.
    let weak = env.file(
        "weak.toml",
        "extends = \"default\"\n[compatibility]\nseccomp = \"best_effort\"\n",
    );
    let script = format!(
        "python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{}'); print('reached')\"",
        env.path().join("outside.sock").display()
    );
    let (out, report) = env.policy_job(env.path(), &no, weak.to_str().unwrap(), &script);
    assert_status(&out, 0);
    assert_said(&out, "reached");
    assert!(outside.accept().is_ok(), "the gap closed: update the docs");
    let gaps = report["sandbox"]["gaps"].to_string();
    assert!(gaps.contains("no seccomp layer"), "{gaps}");
    // With the layer, the same policy refuses.
    let (out, _) = env.policy_job(env.path(), &[], weak.to_str().unwrap(), &script);
    assert!(stderr(&out).contains("PermissionError"), "{}", stderr(&out));
    assert!(outside.accept().is_err());
}

#[test]
fn listen_works_on_a_bound_port_where_bind_is_restricted_and_not_on_an_unbound_socket() {
    let env = TestEnv::new();
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let policy = env.file(
        "bind.toml",
        &format!("extends = \"default\"\n[network]\nbind = [{port}]\n"),
    );
    let prog = probe(
        &env,
        "listen.py",
        "def bound():\n\
         \x20   s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen()\n\
         \x20   c = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5); s.accept()\n\
         attempt('bound', bound)\n\
         attempt('unbound', lambda: socket.socket().listen())\n\
         attempt('unix', lambda: socket.socket(socket.AF_UNIX).listen())\n",
    );
    let (out, report) = env.policy_job(
        env.path(),
        &[],
        policy.to_str().unwrap(),
        &format!("python3 {prog} {port}"),
    );
    assert_status(&out, 0);
    assert_said(&out, "bound: ok");
    assert_said(&out, "unbound: EACCES");
    // Other sockets listen as the kernel says (an unbound unix socket cannot: EINVAL).
    assert_said(&out, "unix: EINVAL");
    assert_eq!(report["sandbox"]["refused"]["listen"], 1, "{report}");
}

#[test]
fn a_job_flooding_the_broker_slows_only_itself() {
    // 100,000 connects from the job while its supervisor relays its output and honours `stop`.
    let env = TestEnv::new();
    let prog = probe(
        &env,
        "flood.py",
        "srv = socket.socket(socket.AF_UNIX); srv.bind('f.sock'); srv.listen(4096); srv.setblocking(False)\n\
         for i in range(100000):\n\
         \x20   c = socket.socket(socket.AF_UNIX); c.connect('f.sock'); c.close()\n\
         \x20   try: srv.accept()[0].close()\n\
         \x20   except BlockingIOError: pass\n\
         \x20   if i % 1000 == 0: print('flooding', i, flush=True)\n\
         print('done', flush=True)\n",
    );
    let out = env.isolate(
        env.path(),
        [
            "run",
            "--bg",
            "--",
            "sh",
            "-c",
            &format!("cd \"$TMPDIR\" && python3 {prog}"),
        ],
    );
    assert_status(&out, 0);
    let id = stdout(&out).trim().to_string();
    let mut log = String::new();
    let flooding = wait_until(Duration::from_secs(60), || {
        log = stdout(&env.isolate(env.path(), ["logs", &id]));
        log.matches("flooding").count() >= 3
    });
    assert!(
        flooding,
        "the job's output was not relayed while it flooded: {log}"
    );
    let asked = Instant::now();
    assert_status(&env.isolate(env.path(), ["stop", &id, "--grace", "2s"]), 0);
    let ended = env.isolate(env.path(), ["wait", &id]);
    assert!(
        asked.elapsed() < Duration::from_secs(20),
        "stop took {:?}",
        asked.elapsed()
    );
    assert_ne!(ended.status.code(), Some(0), "{}", stderr(&ended));
    let status = env.isolate(env.path(), ["status", &id, "--json"]);
    let record: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(record["state"], "killed", "{record}");
}

/// A server that makes itself not dumpable first, as ssh-agent and gpg-agent do: a supervisor
/// without `CAP_SYS_PTRACE` (an ordinary user's) could not read such a process's calls, and its
/// bind and listen were refused. The prctl succeeds and changes nothing; the server serves. And a
/// listen on an unbound unix socket gets the kernel's EINVAL; one on an unbound TCP socket a port.
#[test]
fn a_server_that_makes_itself_not_dumpable_still_binds_and_listens() {
    let env = TestEnv::new();
    let script = r#"
        mkdir app && cd app && git init -q && echo hi > README && git add . && git commit -qm init
        "$ISOLATE" run -q -- python3 -c '
import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
print("dumpable off:", libc.prctl(4, 0, 0, 0, 0))
def attempt(name, f):
    try:
        f(); print(name + ": ok", flush=True)
    except OSError as e:
        print(name + ": " + errno.errorcode[e.errno], flush=True)
def serve():
    s = socket.socket(socket.AF_UNIX); s.bind(os.environ["TMPDIR"] + "/agent.sock"); s.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect(os.environ["TMPDIR"] + "/agent.sock")
attempt("agent", serve)
attempt("unbound unix", lambda: socket.socket(socket.AF_UNIX).listen(1))
def unbound_tcp():
    s = socket.socket(); s.listen(1); assert s.getsockname()[1] > 0
attempt("unbound tcp", unbound_tcp)
'"#;
    let out = env.as_ordinary_user(script);
    let said = stdout(&out);
    for line in [
        "dumpable off: 0",
        "agent: ok",
        "unbound unix: EINVAL",
        "unbound tcp: ok",
    ] {
        assert!(
            said.contains(line),
            "missing {line:?}: {said}{}",
            stderr(&out)
        );
    }
}
