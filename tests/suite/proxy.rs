//! Network by domain: a policy with `[network] allow` routes the job's TCP through isolate's proxy.
//! Allowed names are reached (plain HTTP, TLS through CONNECT, and the tools that use them: curl,
//! git over dumb HTTP, pip, npm), everything else is refused and logged; the job's sockets reach the
//! proxy's exact address and its own servers, nothing else (another loopback address on the
//! proxy's port, a server bypassing the proxy, UDP); a client speaking garbage loses only its own
//! connection. Local servers stand in for the internet: `localhost` with `allow_local = true`.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::*;

/// A plain HTTP server in the test: every request gets `body`; the heads it received are kept.
fn http_server(body: &'static str) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&heads);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
                    match stream.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                seen.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&head).into_owned());
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (port, heads)
}

/// A child process the test started, killed when the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A python3 program in `dir` that binds 127.0.0.1:0, prints its port, and serves: its port.
fn python_server(env: &TestEnv, dir: &Path, program: &str) -> (Server, u16) {
    let mut cmd = Command::new("python3");
    env.apply(&mut cmd);
    let mut child = cmd
        .current_dir(dir)
        .args(["-u", "-c", program])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\n") {
        assert_eq!(out.read(&mut byte).unwrap(), 1, "the server did not start");
        line.push(byte[0]);
    }
    let port = String::from_utf8(line).unwrap().trim().parse().unwrap();
    (Server(child), port)
}

/// An HTTPS server answering `hello over tls` with a self-signed certificate for localhost
/// (`cert.pem` in `dir`).
fn tls_server(env: &TestEnv, dir: &Path) -> (Server, u16) {
    let made = Command::new("openssl")
        .current_dir(dir)
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
            "-keyout",
            "key.pem",
            "-out",
            "cert.pem",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(made.success(), "openssl req failed");
    python_server(
        env,
        dir,
        "import http.server, ssl\n\
         class H(http.server.BaseHTTPRequestHandler):\n\
         \x20   def do_GET(self):\n\
         \x20       body = b'hello over tls\\n'\n\
         \x20       self.send_response(200); self.send_header('Content-Length', str(len(body))); self.end_headers()\n\
         \x20       self.wfile.write(body)\n\
         \x20   def log_message(self, *a): pass\n\
         srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n\
         ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain('cert.pem', 'key.pem')\n\
         srv.socket = ctx.wrap_socket(srv.socket, server_side=True)\n\
         print(srv.server_address[1])\n\
         srv.serve_forever()\n",
    )
}

/// A port free on 127.0.0.1 right now.
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn job_id(report: &serde_json::Value) -> String {
    report["id"].as_str().unwrap().to_string()
}

#[test]
fn allowed_names_go_through_the_proxy_and_every_other_way_out_is_refused_and_logged() {
    // The Landlock-only tier, where the proxy listens on the machine's loopback behind its secret
    // and the broker refuses every other way out; the namespaces tier: ordinary.rs.
    let env = TestEnv::landlock_only();
    let dir = env.path().join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let (http, heads) = http_server("hello over http\n");
    let (_tls, tls) = tls_server(&env, &dir);
    // Someone else's listener on the proxy's port, on another loopback address.
    let proxy_port = free_port();
    let squatter = TcpListener::bind(("127.0.0.2", proxy_port)).unwrap();
    squatter.set_nonblocking(true).unwrap();
    let policy = env.file(
        "net.toml",
        &format!(
            "extends = \"default\"\n[network]\nallow = [\"localhost:{http}\", \"localhost:{tls}\"]\nallow_local = true\n"
        ),
    );
    let probe = env.probe(
        "net.py",
        &format!(
            "def connect(host, port):\n\
             \x20   s = socket.socket(); s.settimeout(5); s.connect((host, port)); s.close()\n\
             attempt('another loopback address on the proxy port', lambda: connect('127.0.0.2', {proxy_port}))\n\
             attempt('the server bypassing the proxy', lambda: connect('127.0.0.1', {http}))\n\
             attempt('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))\n\
             def garbage():\n\
             \x20   s = socket.socket(); s.settimeout(10); s.connect(('127.0.0.1', {proxy_port}))\n\
             \x20   s.sendall(b'\\x16\\x03\\x01\\x00\\xffgarbage\\r\\n\\r\\n')\n\
             \x20   got = b''\n\
             \x20   while True:\n\
             \x20       chunk = s.recv(4096)\n\
             \x20       if not chunk: break\n\
             \x20       got += chunk\n\
             \x20   print('garbage answered', got.split(b'\\r\\n')[0].decode(), flush=True)\n\
             attempt('garbage', garbage)\n\
             def sni(name):\n\
             \x20   import base64, ssl, urllib.parse\n\
             \x20   u = urllib.parse.urlsplit(os.environ['HTTPS_PROXY'])\n\
             \x20   auth = base64.b64encode(f'{{u.username}}:{{u.password}}'.encode()).decode()\n\
             \x20   s = socket.create_connection((u.hostname, u.port), timeout=10)\n\
             \x20   s.sendall(f'CONNECT localhost:{tls} HTTP/1.1\\r\\nProxy-Authorization: Basic {{auth}}\\r\\n\\r\\n'.encode())\n\
             \x20   s.recv(4096)\n\
             \x20   ctx = ssl.create_default_context(cafile='cert.pem'); ctx.check_hostname = False\n\
             \x20   try:\n\
             \x20       ctx.wrap_socket(s, server_hostname=name).close(); print('sni', name, 'handshake', flush=True)\n\
             \x20   except (ssl.SSLError, OSError):\n\
             \x20       print('sni', name, 'closed', flush=True)\n\
             sni('localhost')\n\
             sni('evil.example')\n\
             def tunnel():\n\
             \x20   import base64, urllib.parse\n\
             \x20   u = urllib.parse.urlsplit(os.environ['HTTPS_PROXY'])\n\
             \x20   auth = base64.b64encode(f'{{u.username}}:{{u.password}}'.encode()).decode()\n\
             \x20   s = socket.create_connection((u.hostname, u.port), timeout=10)\n\
             \x20   s.sendall(f'CONNECT localhost:{tls} HTTP/1.1\\r\\nProxy-Authorization: Basic {{auth}}\\r\\n\\r\\n'.encode())\n\
             \x20   s.recv(4096)\n\
             \x20   return s\n\
             def fragments(name):\n\
             \x20   import ssl\n\
             \x20   ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE\n\
             \x20   out = ssl.MemoryBIO()\n\
             \x20   tls = ctx.wrap_bio(ssl.MemoryBIO(), out, server_hostname=name)\n\
             \x20   try: tls.do_handshake()\n\
             \x20   except ssl.SSLWantReadError: pass\n\
             \x20   body = out.read()[5:]\n\
             \x20   return b''.join(b'\\x16\\x03\\x01' + len(body[k:k + 40]).to_bytes(2, 'big') + body[k:k + 40] for k in range(0, len(body), 40))\n\
             def split(name):\n\
             \x20   s = tunnel(); s.sendall(fragments(name))\n\
             \x20   try: got = s.recv(5)\n\
             \x20   except OSError: got = b''\n\
             \x20   print('split sni', name, 'answered' if got else 'closed', flush=True)\n\
             split('localhost')\n\
             split('evil.example')\n"
        ),
    );
    let script = format!(
        "curl -sS http://localhost:{http}/one\n\
         curl -sS --cacert cert.pem https://localhost:{tls}/\n\
         echo \"refused: $(curl -sS -o $TMPDIR/body -w '%{{http_code}}' http://refused.invalid/) $(cat $TMPDIR/body)\"\n\
         curl -sS https://refused.invalid/ 2>&1 | head -1\n\
         echo \"without the secret: $(curl -sS -o /dev/null -w '%{{http_code}}' -x http://127.0.0.1:{proxy_port} http://localhost:{http}/)\"\n\
         python3 {probe}\n\
         curl -sS http://localhost:{http}/after-garbage\n\
         python3 -m http.server $ISOLATE_PORT --bind 127.0.0.1 >/dev/null 2>&1 &\n\
         for i in $(seq 50); do curl -s --noproxy '*' -o /dev/null http://127.0.0.1:$ISOLATE_PORT/ && break; sleep 0.1; done\n\
         echo \"own direct: $(curl -sS --noproxy '*' -o /dev/null -w '%{{http_code}}' http://127.0.0.1:$ISOLATE_PORT/)\"\n\
         echo \"own through the proxy: $(curl -sS -o /dev/null -w '%{{http_code}}' http://localhost:$ISOLATE_PORT/)\"\n\
         kill $!\n"
    );
    let (out, report) = env.policy_job(
        &dir,
        &[("ISOLATE_PROXY_PORT", &proxy_port.to_string())],
        policy.to_str().unwrap(),
        &script,
    );
    let said = stdout(&out);
    let shown = format!("stdout:\n{said}\nstderr:\n{}", stderr(&out));
    assert_status(&out, 0);
    for line in [
        "hello over http\nhello over tls\n",
        "refused: 403 isolate: refused refused.invalid:80: not in the job's network allowlist",
        "CONNECT tunnel failed, response 403",
        "without the secret: 407",
        "another loopback address on the proxy port: EACCES",
        // An entry naming a local destination (`localhost:PORT`) allows exactly it, directly too:
        // a tool that ignores the proxy variables still reaches a gateway the user named.
        "the server bypassing the proxy: ok",
        "udp: EACCES",
        "garbage answered HTTP/1.1 400 Bad Request",
        "garbage: ok",
        // TLS naming another site than the CONNECT target (a CDN routes by it) goes nowhere.
        "sni localhost handshake",
        "sni evil.example closed",
        // Nor does a ClientHello split across records, whose first named nothing.
        "split sni localhost answered",
        "split sni evil.example closed",
        "hello over http\nown direct: 200",
        "own through the proxy: 200",
    ] {
        assert!(said.contains(line), "missing {line:?}\n{shown}");
    }
    assert!(
        squatter.accept().is_err(),
        "the listener on 127.0.0.2 was reached"
    );
    // What reached the server: origin-form, the proxy's credentials stripped, one request per connection.
    let heads = heads.lock().unwrap().clone();
    assert!(
        heads.iter().any(|h| h.starts_with("GET /one HTTP/1.1\r\n")),
        "{heads:?}"
    );
    for head in &heads {
        assert!(
            !head.to_lowercase().contains("proxy-authorization"),
            "{head}"
        );
        assert!(head.contains("Connection: close\r\n"), "{head}");
    }

    // The record counts the decisions; the log has a line for each; status and logs show them.
    let network = &report["sandbox"]["refused"]["network"];
    assert!(network["allowed"].as_u64().unwrap() >= 4, "{report}");
    assert!(network["refused"].as_u64().unwrap() >= 4, "{report}");
    let first: Vec<&str> = network["first_refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(first.contains(&"refused.invalid:80"), "{first:?}");
    assert!(first.contains(&"refused.invalid:443"), "{first:?}");
    // The connect to another loopback address on the proxy's port (the direct one to the named
    // server is allowed now).
    assert!(
        report["sandbox"]["refused"]["tcp_connect"]
            .as_u64()
            .unwrap()
            >= 1,
        "{report}"
    );
    let id = job_id(&report);
    let logs = env.isolate(&dir, ["logs", "--net", &id]);
    assert_status(&logs, 0);
    let lines: Vec<serde_json::Value> = stdout(&logs)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let refused = lines
        .iter()
        .find(|l| l["host"] == "refused.invalid" && l["port"] == 80)
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(refused["decision"], "refused");
    assert_eq!(refused["method"], "GET");
    let allowed = lines
        .iter()
        .find(|l| l["port"] == tls)
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(allowed["decision"], "allowed");
    assert_eq!(allowed["method"], "CONNECT");
    assert!(allowed["bytes_down"].as_u64().unwrap() > 0, "{allowed}");
    assert!(
        lines
            .iter()
            .any(|l| l["reason"].as_str().unwrap().starts_with("malformed")),
        "{lines:?}"
    );
    let status = env.isolate(&dir, ["status", &id]);
    assert!(
        stdout(&status).contains("refused by the proxy (first: "),
        "{}",
        stdout(&status)
    );
}

#[test]
fn git_pip_and_npm_reach_allowed_servers_through_the_proxy() {
    let env = TestEnv::new();
    let served = env.path().join("served");
    std::fs::create_dir_all(served.join("simple/demo")).unwrap();
    std::fs::create_dir_all(served.join("files")).unwrap();
    // A bare repository served as files (git's dumb HTTP).
    let repo = env.repo("app");
    env.git(
        env.path(),
        [
            "clone",
            "-q",
            "--bare",
            repo.to_str().unwrap(),
            served.join("app.git").to_str().unwrap(),
        ],
    );
    env.git(&served.join("app.git"), ["update-server-info"]);
    // A package index with one wheel.
    let made = Command::new("python3")
        .current_dir(served.join("files"))
        .args([
            "-c",
            "import zipfile\n\
             z = zipfile.ZipFile('demo-1.0-py3-none-any.whl', 'w')\n\
             z.writestr('demo/__init__.py', '')\n\
             z.writestr('demo-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: demo\\nVersion: 1.0\\n')\n\
             z.writestr('demo-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n\
             z.writestr('demo-1.0.dist-info/RECORD', '')\n\
             z.close()\n",
        ])
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(
        served.join("simple/demo/index.html"),
        "<html><body><a href=\"../../files/demo-1.0-py3-none-any.whl\">demo-1.0-py3-none-any.whl</a></body></html>\n",
    )
    .unwrap();
    let (_server, port) = python_server(
        &env,
        &served,
        "import http.server, functools\n\
         class H(http.server.SimpleHTTPRequestHandler):\n\
         \x20   def log_message(self, *a): pass\n\
         srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n\
         print(srv.server_address[1])\n\
         srv.serve_forever()\n",
    );
    // An npm registry's document for one package.
    std::fs::write(
        served.join("demo"),
        format!(
            "{{\"name\":\"demo\",\"dist-tags\":{{\"latest\":\"1.2.3\"}},\"versions\":{{\"1.2.3\":{{\"name\":\"demo\",\"version\":\"1.2.3\",\"dist\":{{\"tarball\":\"http://localhost:{port}/demo-1.2.3.tgz\"}}}}}}}}"
        ),
    )
    .unwrap();
    let policy = env.file(
        "tools.toml",
        &format!("extends = \"default\"\n[network]\nallow = [\"localhost:{port}\"]\nallow_local = true\n"),
    );
    let script = format!(
        "cd \"$TMPDIR\"\n\
         git clone -q http://localhost:{port}/app.git clone && echo \"cloned: $(cat clone/README)\"\n\
         pip download -q --no-cache-dir --disable-pip-version-check --index-url http://localhost:{port}/simple --no-deps -d dl demo==1.0 && ls dl\n\
         echo \"npm: $(npm_config_cache=$TMPDIR/npm npm view demo version --registry http://localhost:{port}/ 2>&1)\"\n\
         git clone -q http://refused.invalid/app.git other 2>&1 | head -1\n"
    );
    let (out, report) = env.policy_job(env.path(), &[], policy.to_str().unwrap(), &script);
    let said = stdout(&out);
    let shown = format!("stdout:\n{said}\nstderr:\n{}", stderr(&out));
    for line in [
        "cloned: hello",
        "demo-1.0-py3-none-any.whl",
        "npm: 1.2.3",
        "isolate: refused refused.invalid:80: not in the job's network allowlist",
    ] {
        assert!(said.contains(line), "missing {line:?}\n{shown}");
    }
    let network = &report["sandbox"]["refused"]["network"];
    assert!(network["allowed"].as_u64().unwrap() >= 3, "{report}");
}

#[test]
fn allowlist_entries_that_are_not_host_names_and_a_proxy_that_cannot_bind_fail_with_125() {
    // The proxy binds the machine's loopback in the Landlock-only tier (in the namespaces tier
    // it listens in the job's own network namespace, where no port is taken).
    let env = TestEnv::landlock_only();
    let dir = env.path();
    for entry in [
        "https://api.example.com",
        "/usr/bin",
        "*",
        "*.com",
        "exa mple.com",
        "example.com:99999",
    ] {
        let policy = env.file(
            "bad.toml",
            &format!("extends = \"default\"\n[network]\nallow = [{entry:?}]\n"),
        );
        let out = env.isolate(
            dir,
            ["run", "--policy", policy.to_str().unwrap(), "--", "true"],
        );
        assert_status(&out, 125);
        assert!(
            stderr(&out).contains(&format!("{entry:?}")),
            "{entry}: {}",
            stderr(&out)
        );
    }
    let out = env.isolate(
        dir,
        ["run", "--allow-net", "http://example.com/", "--", "true"],
    );
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("\"http://example.com/\""),
        "{}",
        stderr(&out)
    );
    // offline stays offline.
    let out = env.isolate(
        dir,
        [
            "run",
            "--policy",
            "offline",
            "--allow-net",
            "example.com",
            "--",
            "true",
        ],
    );
    assert_status(&out, 125);
    assert!(stderr(&out).contains("refuses all TCP"), "{}", stderr(&out));
    // The proxy's port is taken.
    let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = env.isolate_with(
        dir,
        &[("ISOLATE_PROXY_PORT", &port)],
        &[
            "run",
            "--allow-net",
            "example.com",
            "--",
            "sh",
            "-c",
            "echo ran",
        ],
    );
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("cannot start the network proxy"),
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("ran"));
}

#[test]
fn allow_net_narrows_an_open_profile_and_agent_profiles_show_their_allowlists() {
    let env = TestEnv::new();
    let dir = env.path();
    let (http, _) = http_server("reached\n");
    // Under default (TCP open) --allow-net makes the run's network exactly that name. An entry
    // that names a local destination itself (`localhost:PORT`, `127.0.0.1:PORT`) allows exactly
    // it, directly and through the proxy; a name that only resolves there (the machine's own
    // name) stays refused without allow_local.
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    let host = host.trim();
    for entry in [format!("localhost:{http}"), format!("127.0.0.1:{http}")] {
        let out = env.isolate(
            dir,
            [
                "run",
                "--allow-net",
                &entry,
                "--",
                "sh",
                "-c",
                &format!(
                    "env | grep -c '^HTTPS_PROXY=http://'; curl -sS http://localhost:{http}/; \
                     curl -sS --noproxy '*' http://127.0.0.1:{http}/ 2>&1 | head -1; \
                     curl -sS http://{host}:{http}/ 2>&1 | head -1"
                ),
            ],
        );
        let said = stdout(&out);
        assert!(
            said.starts_with("1\nreached\nreached\n"),
            "{entry}: {said}{}",
            stderr(&out)
        );
        if !host.is_empty() {
            assert!(
                said.contains("not in the job's network allowlist"),
                "{said}"
            );
        }
    }
    let out = env.isolate(
        dir,
        [
            "run",
            "--allow-net",
            &format!("{host}:{http}"),
            "--",
            "sh",
            "-c",
            &format!("curl -sS http://{host}:{http}/ 2>&1 | head -1"),
        ],
    );
    if !host.is_empty() {
        assert!(
            stdout(&out).contains("resolves to the local address"),
            "{}",
            stdout(&out)
        );
    }
    let show = env.isolate(dir, ["policy", "show", "claude-code"]);
    let text = stdout(&show);
    assert!(text.contains("tcp connect: isolate's proxy"), "{text}");
    assert!(text.contains("  api.anthropic.com\n"), "{text}");
    assert!(text.contains("  registry.npmjs.org\n"), "{text}");
    let show = env.isolate(dir, ["policy", "show", "default"]);
    assert!(
        stdout(&show).contains("tcp connect: all"),
        "{}",
        stdout(&show)
    );
    let doctor = env.isolate(dir, ["doctor"]);
    let text = stdout(&doctor);
    assert!(text.contains("network allowlists"), "{text}");
    assert!(
        text.contains("codex") && text.contains("api.openai.com"),
        "{text}"
    );
}
