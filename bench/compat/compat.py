#!/usr/bin/env python3
"""The compatibility benchmark's driver (bench/compat.sh runs it; see bench/README.md).

Each directory of bench/compat/projects/ becomes a real git repository in the scratch directory,
once (its prepare.sh, if any, fetches its sources or lockfile from the registries, bare). Each of
its steps (.compat/NN-name.sh) runs bare, in a fresh shared clone, and under `isolate run
--worktree --policy P` from the project, one policy after another, in the steps' order. A step is
self-sufficient: it installs what it needs itself, since every run starts from a fresh checkout.

What it records per run: exit status, wall time, and for a failure the last lines of output,
isolate's own lines, and the record's refusals (`isolate status --json`, `isolate logs --net`).
What it prints: the matrix, pass rates and median overhead per policy, as Markdown.
"""

import argparse
import datetime
import fnmatch
import hashlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PROJECTS = HERE / "projects"
AGENTS = ["claude-code", "codex", "aider", "opencode", "gemini"]
ALL_POLICIES = ["default", *AGENTS, "strict-claude-code"]
TAIL = 12
# Steps at least this long bare (seconds) get an overhead column of their own: below it, the
# launch and the worktree (a fixed cost of a few hundred milliseconds) dominate the ratio.
LONG = 5.0


def parse_args():
    p = argparse.ArgumentParser(prog="bench/compat.sh", description=__doc__.split("\n\n")[0])
    p.add_argument("--policies", default=",".join(ALL_POLICIES),
                   help="comma-separated policies besides bare (built-in or user profiles; "
                        "strict-AGENT is written as a user profile extending strict and AGENT, "
                        "POLICY-local as one extending POLICY with allow_local = true); "
                        "default: %(default)s")
    p.add_argument("--projects", default="*",
                   help="comma-separated globs over project names (default: all)")
    p.add_argument("--steps", default="*", help="comma-separated globs over PROJECT/STEP")
    p.add_argument("--tier", choices=["auto", "landlock"], default="auto",
                   help="landlock: run isolate with ISOLATE_TIER=landlock (the Landlock-only tier)")
    p.add_argument("--isolate", default=os.environ.get("ISOLATE", "isolate"),
                   help="the isolate binary (default: $ISOLATE, else isolate on PATH)")
    p.add_argument("--work", default=None,
                   help="scratch directory (default: $TMPDIR/isolate-compat-UID); projects set up "
                        "there are reused while their files are unchanged")
    p.add_argument("--timeout", type=int, default=600, help="seconds per step (default 600)")
    p.add_argument("--out", default=None,
                   help="the Markdown report (default: bench/results/compat-DATE-TIER[-user].md)")
    p.add_argument("--proxy-allow-local", action="store_true",
                   help="run each policy with an allowlist as a user profile POLICY-local that "
                        "extends it with allow_local = true (for machines whose registries "
                        "resolve to addresses the proxy counts as local)")
    p.add_argument("--no-bare", action="store_true",
                   help="reuse the bare results of an earlier run in the same --work")
    p.add_argument("--resume", action="store_true",
                   help="reuse every result of an earlier run in the same --work (an interrupted "
                        "run goes on where it stopped)")
    p.add_argument("--list", action="store_true", help="list the selected steps and exit")
    p.add_argument("--from", dest="merge", action="append", default=[], metavar="RESULTS",
                   help="run nothing: the report of these results.jsonl files (repeatable; each "
                        "policy's overhead against its own file's bare runs, pass rates against "
                        "the first file's)")
    return p.parse_args()


def pick(names, globs):
    pats = [g for g in globs.split(",") if g]
    return [n for n in names if any(fnmatch.fnmatchcase(n, g) for g in pats)]


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def tree_digest(d):
    h = hashlib.sha256()
    for f in sorted(d.rglob("*")):
        if f.is_file():
            h.update(str(f.relative_to(d)).encode() + b"\0" + f.read_bytes() + b"\0")
    h.update((HERE / "common.sh").read_bytes())
    return h.hexdigest()


def git(repo, *args):
    return sh(["git", "-C", str(repo), *args])


def setup_project(name, work):
    """The project as a git repository under work/repos, made once per content of its files."""
    src = PROJECTS / name
    repo = work / "repos" / name
    stamp = work / "repos" / f"{name}.digest"
    digest = tree_digest(src)
    if repo.is_dir() and stamp.is_file() and stamp.read_text() == digest:
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(src, repo, symlinks=True)
    shutil.copy(HERE / "common.sh", repo / ".compat" / "common.sh")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Compat Bench")
    git(repo, "config", "user.email", "compat@example.com")
    prepare = repo / "prepare.sh"
    if prepare.is_file():
        print(f"  preparing {name} (prepare.sh, bare)", file=sys.stderr)
        subprocess.run(["bash", "prepare.sh"], cwd=repo, check=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", f"{name}: the compatibility project")
    stamp.write_text(digest)
    return repo


def write_strict_profiles(policies):
    """strict-AGENT: a user profile `extends = ["strict", "AGENT"]` (docs/sandbox.md, Policies)."""
    conf = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "isolate" / "policy"
    for p in policies:
        if p.startswith("strict-") and p[len("strict-"):] in AGENTS:
            conf.mkdir(parents=True, exist_ok=True)
            text = (f"# Written by bench/compat.sh: strict reads, {p[7:]}'s state and allowlist.\n"
                    f'extends = ["strict", "{p[7:]}"]\n')
            f = conf / f"{p}.toml"
            if not f.exists() or f.read_text() != text:
                f.write_text(text)


def write_local_profiles(policies):
    """POLICY-local: POLICY with `[network] allow_local = true`; the names run instead."""
    conf = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "isolate" / "policy"
    out = []
    for p in policies:
        if p == "default":
            out.append(p)
            continue
        conf.mkdir(parents=True, exist_ok=True)
        text = (f"# Written by bench/compat.sh --proxy-allow-local: {p}, its proxy reaching local "
                f'addresses.\nextends = "{p}"\n\n[network]\nallow_local = true\n')
        f = conf / f"{p}-local.toml"
        if not f.exists() or f.read_text() != text:
            f.write_text(text)
        out.append(f"{p}-local")
    return out


def tail(text, n=TAIL):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-n:]


def run_bare(repo, step, work, timeout, log):
    d = work / "bare" / f"{repo.name}-{step}"
    shutil.rmtree(d, ignore_errors=True)
    d.parent.mkdir(parents=True, exist_ok=True)
    sh(["git", "clone", "-q", "--shared", str(repo), str(d)])
    git(d, "config", "user.name", "Compat Bench")
    git(d, "config", "user.email", "compat@example.com")
    t0 = time.monotonic()
    with open(log, "w") as out:
        # Its own session, so that what it leaves behind (a dev server npm started) is ended
        # with it, as isolate ends a job's whole tree.
        proc = subprocess.Popen(["bash", f".compat/{step}.sh"], cwd=d, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = 124
    wall = time.monotonic() - t0
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    subprocess.run(["chmod", "-R", "u+w", str(d)], capture_output=True)
    shutil.rmtree(d, ignore_errors=True)
    return rc, wall, {}


def run_isolate(args, env, repo, step, policy, timeout, log, work):
    report = work / "report.json"
    report.unlink(missing_ok=True)
    cmd = [args.isolate, "run", "--worktree", "-q", "--timeout", f"{timeout}s",
           "--report", str(report), "--name", f"{repo.name}-{step}",
           "--policy", policy, "--", "bash", f".compat/{step}.sh"]
    t0 = time.monotonic()
    with open(log, "w") as out:
        rc = subprocess.run(cmd, cwd=repo, env=env, stdout=out, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL).returncode
    wall = time.monotonic() - t0
    extra = {}
    try:
        rec = json.loads(report.read_text())
    except (OSError, ValueError):
        rec = {}
    job = rec.get("id") or rec.get("job", {}).get("id") if isinstance(rec, dict) else None
    refused = rec.get("sandbox", {}).get("refused") if isinstance(rec, dict) else None
    if isinstance(refused, dict):
        net = refused.get("network") or {}
        refused = {k: v for k, v in refused.items() if k != "network" and v}
        if net.get("refused"):
            refused["network"] = net
    if refused:
        extra["refused"] = refused
    if job:
        extra["job"] = job
        if rc != 0:
            for what, c in (("status", ["status", "--json", job]), ("net", ["logs", "--net", job])):
                r = subprocess.run([args.isolate, *c], cwd=repo, env=env, capture_output=True,
                                   text=True)
                Path(f"{log}.{what}").write_text(r.stdout + r.stderr)
        subprocess.run([args.isolate, "rm", "--force", job], cwd=repo, env=env,
                       capture_output=True)
    return rc, wall, extra


def main():
    args = parse_args()
    policies = [p for p in args.policies.split(",") if p and p != "bare"]
    uid = os.getuid()
    work = Path(args.work or Path(os.environ.get("TMPDIR", "/tmp")) / f"isolate-compat-{uid}")
    work = work.resolve()
    (work / "logs").mkdir(parents=True, exist_ok=True)
    names = pick(sorted(d.name for d in PROJECTS.iterdir() if d.is_dir()), args.projects)
    plan = []
    for n in names:
        steps = sorted(f.stem for f in (PROJECTS / n / ".compat").glob("[0-9]*.sh"))
        plan += [(n, s) for s in steps if pick([f"{n}/{s}"], args.steps)]
    if args.merge:
        return merged_report(args)
    if args.list:
        for n, s in plan:
            print(f"{n}/{s}")
        return 0
    if shutil.which(args.isolate) is None:
        sys.exit(f"compat: no isolate binary at {args.isolate} (--isolate or $ISOLATE)")
    isolate = shutil.which(args.isolate)
    args.isolate = str(Path(isolate).resolve())
    write_strict_profiles([p.removesuffix("-local") for p in policies])
    named_local = [p for p in policies if p.endswith("-local")]
    if named_local:
        write_local_profiles([p.removesuffix("-local") for p in named_local])
    if args.proxy_allow_local:
        policies = write_local_profiles(policies)

    env = dict(os.environ)
    env["ISOLATE_HOME"] = str(work / "state")
    if args.tier == "landlock":
        env["ISOLATE_TIER"] = "landlock"
    # The steps run python through this interpreter (a pyenv shim is a shell script of its own).
    env.setdefault("COMPAT_PYTHON", sh(["python3", "-c", "import sys; print(sys.executable)"]).strip())
    os.environ["COMPAT_PYTHON"] = env["COMPAT_PYTHON"]

    results_file = work / "results.jsonl"
    earlier = {}
    if (args.no_bare or args.resume) and results_file.is_file():
        for line in results_file.read_text().splitlines():
            r = json.loads(line)
            if r["policy"] == "bare" or args.resume:
                earlier[(r["project"], r["step"], r["policy"])] = r
    results = []
    started = time.monotonic()
    with open(results_file, "a") as rf:
        for i, (name, step) in enumerate(plan, 1):
            try:
                repo = setup_project(name, work)
            except (subprocess.CalledProcessError, OSError) as e:
                print(f"compat: {name} could not be set up ({e}); its steps are skipped",
                      file=sys.stderr)
                continue
            for policy in ["bare", *policies]:
                if (name, step, policy) in earlier:
                    results.append(earlier[(name, step, policy)])
                    continue
                log = work / "logs" / f"{name}.{step}.{policy}.log"
                if policy == "bare":
                    rc, wall, extra = run_bare(repo, step, work, args.timeout, log)
                else:
                    rc, wall, extra = run_isolate(args, env, repo, step, policy, args.timeout,
                                                  log, work)
                out = log.read_text(errors="replace")
                r = {"project": name, "step": step, "policy": policy, "rc": rc,
                     "wall": round(wall, 3), **extra, "log": str(log)}
                if rc != 0:
                    r["tail"] = tail(out)
                    r["isolate_lines"] = [l for l in out.splitlines()
                                          if l.startswith("isolate")][-6:]
                results.append(r)
                rf.write(json.dumps(r) + "\n")
                rf.flush()
                mark = "ok  " if rc == 0 else f"FAIL {rc}"
                print(f"[{i}/{len(plan)} {time.monotonic() - started:6.0f}s] {name}/{step} "
                      f"{policy:20} {mark} {wall:6.1f}s", file=sys.stderr, flush=True)

    md = report(results, ["bare", *policies], args)
    out = args.out
    if out is None:
        date = datetime.date.today().isoformat()
        user = "" if uid == 0 else "-user"
        out = ROOT / "bench" / "results" / f"compat-{date}-{args.tier}{user}.md"
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(md)
    print(md)
    print(f"compat: report written to {out}; logs in {work / 'logs'}", file=sys.stderr)
    return 0


def merged_report(args):
    """The report of earlier runs' results: each policy from the last file that ran it, its
    overhead against that file's own bare runs; pass rates against the first file's."""
    files = []
    for f in args.merge:
        keep = {}
        for line in Path(f).read_text().splitlines():
            r = json.loads(line)
            keep[(r["project"], r["step"], r["policy"])] = r  # a later line is a rerun
        files.append(list(keep.values()))
    owner = {}
    for i, rs in enumerate(files):
        for r in rs:
            if r["policy"] != "bare":
                owner[r["policy"]] = i
    results, policies = [], ["bare"]
    for i, rs in enumerate(files):
        for r in rs:
            if r["policy"] == "bare":
                results.append(r if i == 0 else {**r, "policy": f"bare#{i}"})
            elif owner[r["policy"]] == i:
                results.append({**r, "baseline": "bare" if i == 0 else f"bare#{i}"})
                if r["policy"] not in policies:
                    policies.append(r["policy"])
    md = report(results, policies, args)
    if args.out:
        Path(args.out).write_text(md)
    print(md)
    return 0


def report(results, policies, args):
    by = {(r["project"], r["step"], r["policy"]): r for r in results}
    steps = list(dict.fromkeys((r["project"], r["step"]) for r in results))
    projects = list(dict.fromkeys(p for p, _ in steps))
    bare_ok = {s for s in steps if by.get((*s, "bare"), {}).get("rc") == 0}
    exe = shutil.which(args.isolate)
    version = subprocess.run([exe, "--version"], capture_output=True,
                             text=True).stdout.strip() if exe else "isolate"
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    lines = [
        f"# Compatibility benchmark, {datetime.date.today().isoformat()}",
        "",
        f"{version}, bench at {commit}, tier `{args.tier}`, uid {os.getuid()}, "
        f"Linux {platform.release()}, {os.cpu_count()} cores. {len(projects)} projects, "
        f"{len(steps)} steps; {len(bare_ok)} pass bare. Pass rates count the steps that pass "
        "bare; overhead is isolate's wall time over bare's, median over the steps that pass both.",
        "",
        f"| policy | steps passed | rate | projects whole | median overhead (steps) | same, steps of {LONG:g} s or more bare |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for p in policies:
        # A policy run on some of the steps only (--from several runs) is judged on those.
        ran = [s for s in bare_ok if (*s, p) in by]
        ok = [s for s in ran if by[(*s, p)]["rc"] == 0]
        with_bare = [pr for pr in projects if any(q == pr for q, _ in ran)]
        whole = [pr for pr in with_bare
                 if all(by[(q, st, p)]["rc"] == 0 for (q, st) in ran if q == pr)]
        ratios, long_ratios = [], []
        for s in ok:
            base = by.get((*s, by[(*s, p)].get("baseline", "bare")))
            if base and base["rc"] == 0:
                ratios.append(by[(*s, p)]["wall"] / max(base["wall"], 1e-3))
                if base["wall"] >= LONG:
                    long_ratios.append(ratios[-1])
        med = f"{statistics.median(ratios):.2f}x ({len(ratios)})" if ratios and p != "bare" else "-"
        if long_ratios and p != "bare":
            med += f" | {statistics.median(long_ratios):.2f}x ({len(long_ratios)})"
        elif p != "bare":
            med += " | -"
        else:
            med += " | -"
        rate = 100 * len(ok) / len(ran) if ran else 0
        lines.append(f"| {p} | {len(ok)}/{len(ran)} | {rate:.1f}% | "
                     f"{len(whole)}/{len(with_bare)} | {med} |")
    lines += ["", "## Matrix", "",
              "`ok`, or the exit status (124: the step's time limit); bare's column gives its wall "
              "time; an empty cell was not run.", "",
              "| project/step | " + " | ".join(policies) + " |",
              "| --- | " + " | ".join("---" for _ in policies) + " |"]
    for s in steps:
        cells = []
        for p in policies:
            r = by.get((*s, p))
            if r is None:
                cells.append("")
            elif p == "bare":
                cells.append(f"ok {r['wall']:.1f}s" if r["rc"] == 0 else f"**{r['rc']}**")
            else:
                cells.append("ok" if r["rc"] == 0 else f"**{r['rc']}**")
        lines.append(f"| {s[0]}/{s[1]} | " + " | ".join(cells) + " |")
    lines += ["", "## Failures", "",
              "Each run that failed where bare passed: the last lines of its output, and the "
              "record's refusals.", ""]
    for s in steps:
        for p in policies[1:]:
            r = by.get((*s, p))
            if r is None or r["rc"] == 0 or s not in bare_ok:
                continue
            lines.append(f"- **{s[0]}/{s[1]}** under `{p}`: exit {r['rc']}"
                         + (f", refused {json.dumps(r['refused'])}" if r.get("refused") else ""))
            for l in r.get("tail", [])[-4:]:
                lines.append(f"  - `{l[:200].replace('`', chr(39))}`")
    bare_fail = [s for s in steps if s not in bare_ok and (*s, "bare") in by]
    if bare_fail:
        lines += ["", "Steps that failed bare (not counted): "
                  + ", ".join(f"{a}/{b}" for a, b in bare_fail)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
