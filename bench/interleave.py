#!/usr/bin/env python3
"""bench/interleave.py: two or more isolate binaries timed in the same rounds, so that a change
smaller than the machine's drift between two script runs still shows.

    bench/interleave.py launch    --isolate BEFORE --isolate AFTER [--rounds N]
    bench/interleave.py roundtrip --isolate BEFORE --isolate AFTER --project DIR [--rounds N]
    bench/interleave.py worktrees --isolate BEFORE --isolate AFTER [--rounds N]

Each round runs every command once, in a new random order: `launch` times `isolate run -q -- true`
beside `bwrap --ro-bind / / --dev /dev --bind W W --unshare-pid --die-with-parent true` and
`timeout 100 true`; `roundtrip` times `isolate run -q --worktree -- true` in the git project DIR
beside git's own `worktree add -b`, `worktree remove --force` and `branch -D` there; `worktrees`
times `isolate worktrees --json` in the current directory against the state in ISOLATE_HOME (for
the kept worktrees made there beforehand). `launch` and `roundtrip` use a fresh ISOLATE_HOME and
HOME of their own in a scratch directory under TMPDIR (`TMPDIR=/dev/shm` for tmpfs, as the other
scripts: on a disk every record write waits for fsync). Prints the median, first quartile and
minimum of each command in ms, and each median as a ratio to the first binary's and to each
baseline's.
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time


def timed(argv, **kw):
    start = time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True, **kw)
    return (time.perf_counter() - start) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["launch", "roundtrip", "worktrees"])
    parser.add_argument("--isolate", action="append", required=True, help="a binary (repeat)")
    parser.add_argument("--project", help="the git project of `roundtrip`")
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="isolate-interleave.")
    env = dict(os.environ)
    if args.mode != "worktrees":
        for name in ("state", "home", "cwd"):
            os.mkdir(os.path.join(scratch, name))
        env.update(ISOLATE_HOME=os.path.join(scratch, "state"), HOME=os.path.join(scratch, "home"))
    cwd = os.path.join(scratch, "cwd") if args.mode == "launch" else (args.project or os.getcwd())
    commands = {b: [b, "run", "-q", "--", "true"] for b in args.isolate}
    baselines = {}
    if args.mode == "launch":
        bwrap = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--bind", cwd, cwd]
        if shutil.which("bwrap"):
            baselines["bwrap"] = bwrap + ["--unshare-pid", "--die-with-parent", "true"]
        baselines["timeout"] = ["timeout", "100", "true"]
    elif args.mode == "roundtrip":
        if not args.project:
            parser.error("roundtrip needs --project")
        commands = {b: [b, "run", "-q", "--worktree", "--", "true"] for b in args.isolate}
        baselines["git"] = None
    else:
        commands = {b: [b, "worktrees", "--json"] for b in args.isolate}
    times = {name: [] for name in list(commands) + list(baselines)}
    for i in range(args.rounds):
        order = list(times)
        random.shuffle(order)
        for name in order:
            if name == "git":
                tree, branch = os.path.join(scratch, f"wt{i}"), f"interleave-{os.getpid()}-{i}"
                git = ["git", "-C", cwd]
                times[name].append(
                    timed(git + ["worktree", "add", "-q", "-b", branch, tree])
                    + timed(git + ["worktree", "remove", "--force", tree])
                    + timed(git + ["branch", "-q", "-D", branch])
                )
            else:
                argv = commands.get(name) or baselines[name]
                times[name].append(timed(argv, cwd=cwd, env=env))
    shutil.rmtree(scratch, ignore_errors=True)
    first = statistics.median(times[args.isolate[0]])
    for name, values in times.items():
        values.sort()
        median = statistics.median(values)
        line = f"{name:40s} median {median:8.2f} ms  q1 {values[len(values) // 4]:8.2f}"
        line += f"  min {values[0]:8.2f}"
        if name in commands:
            line += f"  {median / first:.3f}x of {os.path.basename(args.isolate[0])}"
            for base in baselines:
                line += f"  {median / statistics.median(times[base]):.2f}x {base}"
        print(line)


if __name__ == "__main__":
    main()
