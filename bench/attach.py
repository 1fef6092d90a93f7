#!/usr/bin/env python3
"""bench/attach.py: keystroke-to-echo latency through `isolate attach`, against a direct pty, and
the peak RSS of the background supervisor of a `--tty` job whose screen has seen 1,000 lines.

    bench/attach.py [--isolate PATH] [--rounds N]

Both sides run `cat` on a pty: the baseline is `cat` on a pty of this script's own; the measured
side is `isolate attach JOB` on this script's pty, relaying to a `run --bg --tty -- cat` job. Each
round writes one byte and waits for its echo; the figures are medians over N rounds (default 500),
and the difference is what the relay adds. Prints one JSON object.
"""

import argparse
import json
import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time


def echo_latency(argv, env, rounds):
    """Median seconds from writing a byte to reading its echo on a pty running argv."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(argv[0], argv, env)
    try:
        time.sleep(1.0)
        drain(fd, 0.5)
        samples = []
        for i in range(rounds):
            byte = bytes([ord("a") + i % 26])
            start = time.perf_counter()
            os.write(fd, byte)
            got = b""
            while byte not in got:
                ready, _, _ = select.select([fd], [], [], 5)
                if not ready:
                    raise SystemExit("no echo within 5 s")
                got += os.read(fd, 4096)
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def drain(fd, seconds):
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:
                return


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def main():
    parser = argparse.ArgumentParser()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--isolate", default=os.path.join(root, "target/release/isolate"))
    parser.add_argument("--rounds", type=int, default=500)
    args = parser.parse_args()
    state = tempfile.mkdtemp(prefix="isolate-bench-attach-")
    env = dict(os.environ, ISOLATE_HOME=state, TERM="xterm")

    direct = echo_latency(["cat"], env, args.rounds)

    job = subprocess.run(
        [args.isolate, "run", "--bg", "--tty", "--", "cat"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()
    record = json.loads(subprocess.run(
        [args.isolate, "status", job, "--json"], env=env, capture_output=True, text=True, check=True,
    ).stdout)
    supervisor = record["supervisor_pid"]
    attached = echo_latency([args.isolate, "attach", job], env, args.rounds)

    # The screen model after 1,000 lines of output: a job that prints them, then waits.
    lines = subprocess.run(
        [args.isolate, "run", "--bg", "--tty", "--", "sh", "-c",
         "i=0; while [ $i -lt 1000 ]; do echo line $i of the output; i=$((i+1)); done; sleep 30"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()
    lines_record = json.loads(subprocess.run(
        [args.isolate, "status", lines, "--json"], env=env, capture_output=True, text=True, check=True,
    ).stdout)
    time.sleep(2)
    rss = peak_rss_kib(lines_record["supervisor_pid"])
    idle = peak_rss_kib(supervisor)
    for j in (job, lines):
        subprocess.run([args.isolate, "stop", j], env=env, capture_output=True)
    print(json.dumps({
        "rounds": args.rounds,
        "direct_pty_ms": round(direct * 1000, 3),
        "attach_ms": round(attached * 1000, 3),
        "added_ms": round((attached - direct) * 1000, 3),
        "tty_supervisor_peak_rss_kib": rss,
        "attached_tty_supervisor_peak_rss_kib": idle,
    }))


if __name__ == "__main__":
    sys.exit(main())
