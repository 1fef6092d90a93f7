//! A scripted model on loopback for the agent tests: tests/data/model-server.py, started for one
//! test with its plan, answering in each agent's wire format at once, and stopped when dropped.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// One step of what the model has the agent do.
pub enum Step<'a> {
    /// Write `text` to `path` (the agent's own tool for it where it offers one).
    Write(&'a str, &'a str),
    /// Run a command in the agent's shell.
    Run(&'a str),
}

/// The scripted model, running.
pub struct Model {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

impl Model {
    /// Starts the model with `steps`, its plan and log in `dir`; waits (bounded) for its port.
    pub fn start(dir: &Path, steps: &[Step<'_>]) -> Model {
        let steps: Vec<serde_json::Value> = steps
            .iter()
            .map(|step| match step {
                Step::Write(path, text) => serde_json::json!({ "write": path, "text": text }),
                Step::Run(command) => serde_json::json!({ "run": command }),
            })
            .collect();
        let plan = dir.join("model-plan.json");
        fs::write(&plan, serde_json::json!({ "steps": steps }).to_string()).unwrap();
        let log = dir.join("model-log.jsonl");
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/model-server.py");
        let mut child = Command::new("python3")
            .arg(server)
            .arg(&plan)
            .arg(&log)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 is installed (.ci/run installs it)");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(20)).unwrap_or_default();
        let port = match line.trim().parse() {
            Ok(port) => port,
            Err(_) => {
                let _ = child.kill();
                panic!("the model server did not start: {line:?}");
            }
        };
        Model { child, port, log }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `--allow-net 127.0.0.1:PORT`'s value.
    pub fn destination(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Every request the model answered, one JSON line each.
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
