//! Ordinary work inside the sandbox, in the tier where it works, and what each tier still
//! refuses: POSIX shared memory and semaphores (Python's multiprocessing), System V IPC
//! (PostgreSQL), the job's own servers on any port and address, the proxy reached without a
//! secret, its port block from the user's side, local gateways named in the allowlist, scheduling
//! calls on the job's own threads, writable caches that never touch the user's, and the tier
//! stated. Both directions: what the namespaces tier gives stays the job's own (nothing outside
//! reaches it, nothing of the user's is reached), and the Landlock-only tier still refuses.

use std::fs;
use std::io::{BufRead, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::time::Duration;

use crate::support::{assert_status, finish, stderr, stdout, TestEnv, LIMIT};

fn said(out: &std::process::Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", stdout(out), stderr(out))
}

/// A web server of the user's on the machine's loopback, answering `body` to every request.
fn users_server(body: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[test]
fn the_tier_is_stated_and_the_landlock_only_tier_can_be_forced() {
    let env = TestEnv::new();
    let (out, report) = env.policy_job(env.path(), &[], "default", "true");
    assert_status(&out, 0);
    assert_eq!(report["sandbox"]["tier"], "namespaces", "{report}");
    assert!(
        stderr(&out).contains(", namespaces, policy default"),
        "{}",
        said(&out)
    );
    let env = TestEnv::landlock_only();
    let (out, report) = env.policy_job(env.path(), &[], "default", "true");
    assert_status(&out, 0);
    assert_eq!(report["sandbox"]["tier"], "landlock", "{report}");
    assert!(
        stderr(&out).contains("Landlock-only tier"),
        "{}",
        said(&out)
    );
    let gaps = report["sandbox"]["gaps"].to_string();
    assert!(
        gaps.contains("the Landlock-only tier (ISOLATE_TIER=landlock"),
        "{gaps}"
    );
    let doctor = env.isolate_with(env.path(), &[("ISOLATE_TIER", "landlock")], &["doctor"]);
    assert!(
        stdout(&doctor).contains("tier          Landlock only"),
        "{}",
        said(&doctor)
    );
    let bad = env.isolate_with(
        env.path(),
        &[("ISOLATE_TIER", "bubble")],
        &["run", "--", "true"],
    );
    assert_status(&bad, 125);
    assert!(
        stderr(&bad).contains("ISOLATE_TIER=\"bubble\""),
        "{}",
        said(&bad)
    );
}

#[test]
fn python_multiprocessing_works_in_the_namespaces_tier_and_the_users_shm_is_not_there() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let users = format!("/dev/shm/isolate-users-{}", std::process::id());
    fs::write(&users, "the user's\n").unwrap();
    let script = format!(
        "python3 -c '\n\
         import multiprocessing as mp, concurrent.futures as cf\n\
         with mp.Pool(2) as p: print(\"pool\", p.map(abs, [-1, -2]))\n\
         with cf.ProcessPoolExecutor(2) as e: print(\"executor\", sorted(e.map(abs, [-3])))\n\
         q = mp.get_context(\"spawn\").Queue(); q.put(7); print(\"queue\", q.get())\n\
         '; ls /dev/shm; cat {users} 2>&1 | head -1"
    );
    for policy in ["default", "claude-code", "offline"] {
        let (out, report) = env.worktree_job(&repo, &["--policy", policy], &script);
        assert_status(&out, 0);
        assert_eq!(report["sandbox"]["tier"], "namespaces");
        let text = stdout(&out);
        for line in ["pool [1, 2]", "executor [3]", "queue 7"] {
            assert!(text.contains(line), "{policy}: {}", said(&out));
        }
        assert!(!text.contains("the user's"), "{policy}: {text}");
        assert!(text.contains("No such file"), "{policy}: {text}");
    }
    assert_eq!(fs::read_to_string(&users).unwrap(), "the user's\n");
    fs::remove_file(&users).unwrap();
    // The Landlock-only tier has no shared memory of the job's own: refused, as before.
    let env = TestEnv::landlock_only();
    let repo = env.repo("app");
    let (out, _) = env.worktree_job(
        &repo,
        &[],
        "python3 -c 'import multiprocessing as mp; mp.Lock()' 2>&1 | tail -1",
    );
    assert!(stdout(&out).contains("PermissionError"), "{}", said(&out));
}

/// A System V shared memory segment, made and attached through libc as PostgreSQL's `initdb` makes
/// its 56 bytes.
const SYSV: &str = "python3 -c '\n\
import ctypes\n\
libc = ctypes.CDLL(None, use_errno=True)\n\
libc.shmat.restype = ctypes.c_void_p\n\
i = libc.shmget(0, 56, 0o1600)\n\
print(\"shmget\", \"ok\" if i >= 0 else ctypes.get_errno())\n\
if i >= 0:\n\
\x20   a = libc.shmat(i, None, 0); ctypes.memmove(a, b\"pg\", 2); print(\"shmat ok\")\n\
\x20   libc.shmctl(i, 0, None)\n\
'";

#[test]
fn system_v_ipc_is_the_jobs_own_in_the_namespaces_tier_and_refused_by_name_elsewhere() {
    let env = TestEnv::new();
    // A segment of the user's, which the job must not see.
    let users = std::process::Command::new("python3")
        .args([
            "-c",
            "import ctypes; libc = ctypes.CDLL(None); print(libc.shmget(0x15a7e, 64, 0o1600))",
        ])
        .output()
        .unwrap();
    let id: i32 = stdout(&users).trim().parse().unwrap();
    assert!(id >= 0);
    let script = format!(
        "{SYSV}; python3 -c 'import ctypes; libc = ctypes.CDLL(None); \
         print(\"users\", libc.shmget(0x15a7e, 0, 0))'"
    );
    let (out, report) = env.policy_job(env.path(), &[], "default", &script);
    assert_status(&out, 0);
    let text = stdout(&out);
    assert!(text.contains("shmget ok\nshmat ok"), "{}", said(&out));
    assert!(text.contains("users -1"), "{}", said(&out));
    assert!(report["sandbox"]["refused"]["ipc"].is_null(), "{report}");
    // Landlock-only: refused, counted, and named at the end.
    let env = TestEnv::landlock_only();
    let (out, report) = env.policy_job(env.path(), &[], "default", SYSV);
    assert!(stdout(&out).contains("shmget 1"), "{}", said(&out));
    assert_eq!(report["sandbox"]["refused"]["ipc"], 1, "{report}");
    assert!(
        stderr(&out).contains("ipc:      1 call of System V IPC or POSIX queues refused")
            && stderr(&out).contains("Landlock-only tier"),
        "{}",
        said(&out)
    );
    // SAFETY: shmctl(IPC_RMID) of the segment this test made.
    unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
}

#[test]
fn postgresql_initializes_and_serves_in_a_job() {
    // The real server (CI installs Debian's postgresql), as an ordinary user: it refuses root.
    let bin = fs::read_dir("/usr/lib/postgresql")
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| e.ok())
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists())
        .expect("PostgreSQL's server is installed (apt-get install postgresql)");
    let env = TestEnv::new();
    let job = format!(
        "export PATH={bin}:$PATH; cd \"$TMPDIR\"; initdb -D db -A trust -U pg >/dev/null && \
         pg_ctl -D db -o \"-k $TMPDIR -c listen_addresses=''\" -l log -w start >/dev/null && \
         psql -h \"$TMPDIR\" -U pg -d postgres -Atc 'select 40 + 2'; \
         pg_ctl -D db -w stop >/dev/null 2>&1; tail -2 log",
        bin = bin.display()
    );
    fs::write(env.path().join("pg.sh"), &job).unwrap();
    let out = env.as_ordinary_user(
        "git init -q pg && cd pg && OLDPWD=$(dirname \"$PWD\") && git -c user.name=u -c user.email=u@x commit -q --allow-empty -m i && \
         \"$ISOLATE\" run --worktree -- sh \"$OLDPWD/pg.sh\"",
    );
    assert_status(&out, 0);
    assert!(stdout(&out).contains("42\n"), "{}", said(&out));
}

#[test]
fn under_an_allowlist_the_jobs_own_servers_work_on_any_port_and_reach_nobody_else() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let go = env.path().join("go");
    let probe = env.probe(
        "servers.py",
        &format!(
            "import http.server, threading, urllib.request\n\
             class H(http.server.BaseHTTPRequestHandler):\n\
             \x20   def do_GET(self):\n\
             \x20       self.send_response(200); self.end_headers(); self.wfile.write(b'own')\n\
             \x20   def log_message(self, *a): pass\n\
             srv = http.server.ThreadingHTTPServer(('0.0.0.0', 0), H)\n\
             port = srv.server_address[1]\n\
             threading.Thread(target=srv.serve_forever, daemon=True).start()\n\
             ab = socket.socket(socket.AF_UNIX); ab.bind(b'\\0isolate-own-{pid}'); ab.listen()\n\
             print('port', port, flush=True)\n\
             print('direct', urllib.request.build_opener(urllib.request.ProxyHandler({{}})).open(f'http://127.0.0.1:{{port}}/', timeout=10).read().decode(), flush=True)\n\
             print('proxied', urllib.request.urlopen(f'http://localhost:{{port}}/', timeout=10).read().decode(), flush=True)\n\
             c = socket.socket(socket.AF_UNIX); c.connect(b'\\0isolate-own-{pid}'); print('abstract ok', flush=True)\n\
             print('proxy', os.environ['HTTPS_PROXY'], flush=True)\n\
             while not os.path.exists('{go}'): time.sleep(0.05)\n",
            pid = std::process::id(),
            go = go.display()
        ),
    );
    let mut child = env
        .isolate_cmd(
            &repo,
            ["run", "--policy", "claude-code", "--", "python3", &probe],
        )
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut got = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let done = line.starts_with("proxy ");
        got.push(line);
        if done {
            break;
        }
    }
    let port: u16 = got[0].strip_prefix("port ").unwrap().parse().unwrap();
    // Nothing outside reaches the job's server on 0.0.0.0, its abstract name, or its proxy.
    let outside = TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_secs(2),
    );
    let abstract_name = format!("\0isolate-own-{}", std::process::id());
    let outside_abstract = std::os::unix::net::UnixStream::connect(&abstract_name);
    let proxy: std::net::SocketAddr = got[4]
        .strip_prefix("proxy http://")
        .unwrap()
        .parse()
        .unwrap();
    let outside_proxy = TcpStream::connect_timeout(&proxy, Duration::from_secs(2));
    fs::write(&go, "").unwrap();
    let out = finish(child, LIMIT);
    assert_status(&out, 0);
    assert_eq!(
        got[1..4],
        ["direct own", "proxied own", "abstract ok"],
        "{got:?}\n{}",
        said(&out)
    );
    assert!(
        !got[4].contains('@'),
        "the proxy's URL carries no secret inside: {got:?}"
    );
    assert!(
        outside.is_err(),
        "the job's server was reached from outside"
    );
    assert!(
        outside_abstract.is_err(),
        "the job's abstract name was reached from outside"
    );
    assert!(
        outside_proxy.is_err(),
        "the job's proxy was reached from outside"
    );
}

#[test]
fn offline_has_loopback_of_its_own_and_no_route_out() {
    // The namespaces tier: a loopback of the job's own, no route out. The Landlock-only tier: the
    // job's own listeners on the machine's loopback, everything else refused by the broker.
    for env in [TestEnv::new(), TestEnv::landlock_only()] {
        let users = TcpListener::bind("127.0.0.1:0").unwrap();
        users.set_nonblocking(true).unwrap();
        let port = users.local_addr().unwrap().port();
        let probe = env.probe(
            "offline.py",
            &format!(
                "srv = socket.create_server(('127.0.0.1', 0)); p = srv.getsockname()[1]\n\
                 attempt('own', lambda: socket.create_connection(('127.0.0.1', p), timeout=5))\n\
                 attempt('users', lambda: socket.create_connection(('127.0.0.1', {port}), timeout=5))\n\
                 attempt('out', lambda: socket.create_connection(('192.0.2.1', 80), timeout=5))\n\
                 attempt('udp out', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('192.0.2.1', 53)))\n"
            ),
        );
        let (out, report) = env.policy_job(env.path(), &[], "offline", &format!("python3 {probe}"));
        assert_status(&out, 0);
        let expected: &[&str] = match env.tier_is_landlock() {
            false => &[
                "own: ok",
                "users: ECONNREFUSED",
                "out: ENETUNREACH",
                "udp out: ENETUNREACH",
            ],
            true => &["own: ok", "users: EACCES", "out: EACCES", "udp out: EACCES"],
        };
        let text = stdout(&out);
        for line in expected {
            assert!(
                text.contains(line),
                "missing {line:?}\n{}\n{report}",
                said(&out)
            );
        }
        assert!(users.accept().is_err(), "the user's server was reached");
    }
}

#[test]
fn the_jobs_port_block_opens_from_the_users_side_and_local_gateways_named_are_reached() {
    let env = TestEnv::new();
    let gateway = users_server("gateway");
    let go = env.path().join("go");
    let script = format!(
        "python3 -m http.server \"$ISOLATE_PORT\" --bind 0.0.0.0 --directory \"$TMPDIR\" >/dev/null 2>&1 &\n\
         echo hello > \"$TMPDIR/index.html\"\n\
         for i in $(seq 100); do curl -s --noproxy '*' -o /dev/null http://127.0.0.1:$ISOLATE_PORT/ && break; sleep 0.1; done\n\
         echo \"port $ISOLATE_PORT\"\n\
         echo \"direct $(curl -s --noproxy '*' http://127.0.0.1:{gateway}/)\"\n\
         echo \"proxied $(curl -s http://localhost:{gateway}/)\"\n\
         while ! test -e {go}; do sleep 0.05; done; kill %1",
        go = go.display()
    );
    let mut child = env
        .isolate_cmd(
            env.path(),
            [
                "run",
                "--policy",
                "claude-code",
                "--allow-net",
                &format!("localhost:{gateway}"),
                "--",
                "sh",
                "-c",
                &script,
            ],
        )
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let port: u16 = first.strip_prefix("port ").unwrap().parse().unwrap();
    let mut page = String::new();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stream, "GET / HTTP/1.0\r\n\r\n").unwrap();
    stream.read_to_string(&mut page).unwrap();
    let rest: Vec<String> = lines.by_ref().take(2).map(Result::unwrap).collect();
    fs::write(&go, "").unwrap();
    let out = finish(child, LIMIT);
    assert!(page.ends_with("hello\n"), "{page}");
    assert_eq!(
        rest,
        ["direct gateway", "proxied gateway"],
        "{}",
        said(&out)
    );
}

#[test]
fn scheduling_calls_on_the_jobs_own_threads_work_and_on_others_are_refused() {
    let outsider = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = outsider.id();
    let before = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let probe = |env: &TestEnv| {
        env.probe(
            "sched.py",
            &format!(
                "import threading\n\
                 tid = []\n\
                 t = threading.Thread(target=lambda: (tid.append(threading.get_native_id()), time.sleep(1)))\n\
                 t.start(); time.sleep(0.2)\n\
                 attempt('affinity', lambda: os.sched_setaffinity(tid[0], {{0}}))\n\
                 attempt('scheduler', lambda: os.sched_setscheduler(tid[0], os.SCHED_BATCH, os.sched_param(0)))\n\
                 attempt('parent', lambda: os.setpriority(os.PRIO_PROCESS, os.getppid(), 5))\n\
                 attempt('outsider', lambda: os.setpriority(os.PRIO_PROCESS, {pid}, 19))\n\
                 attempt('outsider affinity', lambda: os.sched_setaffinity({pid}, {{0}}))\n\
                 t.join()\n"
            ),
        )
    };
    for env in [TestEnv::new(), TestEnv::landlock_only()] {
        let probe = probe(&env);
        let (out, report) = env.policy_job(env.path(), &[], "default", &format!("python3 {probe}"));
        let text = stdout(&out);
        for line in [
            "affinity: ok",
            "scheduler: ok",
            "parent: ok",
            "outsider: EPERM",
            "outsider affinity: EPERM",
        ] {
            assert!(text.contains(line), "missing {line:?}\n{}", said(&out));
        }
        assert_eq!(report["sandbox"]["refused"]["process"], 2, "{report}");
    }
    let after = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Its nice value (the 19th field) is as it was.
    let nice = |stat: &str| {
        stat.rsplit(')')
            .next()
            .unwrap()
            .split(' ')
            .nth(17)
            .map(String::from)
    };
    assert_eq!(nice(&before), nice(&after));
    let mut outsider = outsider;
    let _ = outsider.kill();
    let _ = outsider.wait();
}

#[test]
fn caches_are_writable_kept_for_the_next_job_and_never_the_users() {
    for env in [TestEnv::new(), TestEnv::landlock_only()] {
        let repo = env.repo("app");
        // The user's caches: npm's, pip's, and a credential beside cargo's registry.
        fs::create_dir_all(env.home.join(".npm")).unwrap();
        fs::write(env.home.join(".npm/users-entry"), "the user's\n").unwrap();
        fs::create_dir_all(env.home.join(".cache/pip")).unwrap();
        fs::create_dir_all(env.home.join(".cargo/registry")).unwrap();
        fs::write(
            env.home.join(".cargo/credentials.toml"),
            "token = \"secret\"\n",
        )
        .unwrap();
        let before = crate::support::snapshot::Snapshot::take(&env.home);
        let write =
            "for d in \"${npm_config_cache:-$HOME/.npm}\" \"${PIP_CACHE_DIR:-$HOME/.cache/pip}\" \
                     \"${CARGO_HOME:-$HOME/.cargo}/registry\"; do \
                       mkdir -p \"$d\" && echo kept > \"$d/from-the-job\" && echo wrote; done; \
                     cat \"${CARGO_HOME:-$HOME/.cargo}/credentials.toml\" 2>&1 | grep -c secret; \
                     cat \"$HOME/.npm/users-entry\" 2>/dev/null";
        let (out, _) = env.worktree_job(&repo, &[], write);
        assert_status(&out, 0);
        let text = stdout(&out);
        assert!(
            text.starts_with("wrote\nwrote\nwrote\n0\n"),
            "{}",
            said(&out)
        );
        if !env.tier_is_landlock() {
            // The user's cache read through.
            assert!(text.contains("the user's"), "{}", said(&out));
        }
        // Nothing of the user's changed; the next job of the project finds what this one wrote.
        before.assert_unchanged(&crate::support::snapshot::Snapshot::take(&env.home), "home");
        let read =
            "for d in \"${npm_config_cache:-$HOME/.npm}\" \"${PIP_CACHE_DIR:-$HOME/.cache/pip}\" \
                    \"${CARGO_HOME:-$HOME/.cargo}/registry\"; do cat \"$d/from-the-job\"; done";
        let (out, _) = env.worktree_job(&repo, &[], read);
        assert_eq!(stdout(&out), "kept\nkept\nkept\n", "{}", said(&out));
        // Another project's jobs do not see it.
        let other = env.repo("other");
        let (out, _) = env.worktree_job(&other, &[], read);
        assert!(!stdout(&out).contains("kept"), "{}", said(&out));
        // prune --caches empties them; doctor says where they are.
        let doctor = env.isolate(env.path(), ["doctor"]);
        assert!(
            stdout(&doctor).contains("caches        "),
            "{}",
            said(&doctor)
        );
        let pruned = env.isolate(env.path(), ["prune", "--caches"]);
        assert_status(&pruned, 0);
        assert!(stderr(&pruned).contains("removed"), "{}", said(&pruned));
        let (out, _) = env.worktree_job(&repo, &[], read);
        assert!(!stdout(&out).contains("kept"), "{}", said(&out));
    }
}

#[test]
fn a_store_beneath_an_overlaid_cache_stays_hidden_made_before_or_during_the_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::create_dir_all(env.home.join(".cargo/registry")).unwrap();
    fs::write(env.home.join(".cargo/credentials"), "old-secret\n").unwrap();
    fs::create_dir_all(env.home.join(".cache")).unwrap();
    fs::write(env.home.join(".cache/browsing"), "the user's cache\n").unwrap();
    let go = env.path().join("go");
    let script = format!(
        "cat ~/.cargo/credentials; echo ready; \
         while ! test -e {go}; do sleep 0.05; done; \
         cat ~/.cargo/credentials.toml; echo x > ~/.cargo/credentials.toml; rm -f ~/.cargo/credentials.toml; \
         cat ~/.cargo/credentials.toml; echo end",
        go = go.display()
    );
    let mut child = env
        .isolate_cmd(&repo, ["run", "--worktree", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    // `cargo login` in another terminal while the job runs.
    fs::write(
        env.home.join(".cargo/credentials.toml"),
        "token = \"new-secret\"\n",
    )
    .unwrap();
    fs::write(&go, "").unwrap();
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let out = finish(child, LIMIT);
    let text = format!("{first}\n{}\n", rest.join("\n"));
    assert!(text.ends_with("end\n"), "{text}{}", said(&out));
    assert!(!text.contains("secret"), "{text}{}", said(&out));
    assert_eq!(
        fs::read_to_string(env.home.join(".cargo/credentials.toml")).unwrap(),
        "token = \"new-secret\"\n"
    );
    // Under strict, the rest of the home directory is not read through an overlay: the tools'
    // variables point at the jobs' caches instead.
    let (out, _) = env.worktree_job(
        &repo,
        &["--policy", "strict"],
        "cat ~/.cache/browsing 2>&1; echo x > \"$PIP_CACHE_DIR/mine\" && echo wrote",
    );
    assert!(!stdout(&out).contains("the user's cache"), "{}", said(&out));
    assert!(stdout(&out).contains("wrote"), "{}", said(&out));
}

#[test]
fn a_unix_socket_in_tmpdir_has_room_for_its_name() {
    // Chromium's singleton socket, ssh's control path: a unix socket's path holds 107 bytes, and
    // the job's TMPDIR is deep in the state directory; the job is given a short name for it.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, _) = env.worktree_job(
        &repo,
        &[],
        "python3 -c 'import os, socket\n\
         s = socket.socket(socket.AF_UNIX); s.bind(os.path.join(os.environ[\"TMPDIR\"], \"s\" * 72))\n\
         print(\"bound\", len(os.environ[\"TMPDIR\"]))'",
    );
    assert!(stdout(&out).contains("bound"), "{}", said(&out));
    // The name is gone with the job.
    let links = fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            e.file_type().is_ok_and(|t| t.is_symlink())
                && fs::read_link(e.path()).is_ok_and(|t| t.starts_with(env.path()))
                && name.starts_with("isolate-")
        })
        .count();
    assert_eq!(links, 0);
}
