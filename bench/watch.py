"""What following jobs costs, against the real local cluster, this code against a baseline
(by default the commit before the polling rework, 7597ac9) measured in the same run:

1. ``JobHandle.wait()`` on a job of ``--job-s`` seconds (60): how many SLURM commands it runs
   (target: at most 15). Old and new wait on jobs submitted at the same moment.
2. ``slurmkit watch`` of a 1,000-task array, held so that no payload runs: its polls (SLURM
   commands) and CPU share of one core in the steady state (after ``--settle-s``), piped and
   on a terminal (a pty: rich Live), with the default interval (30 s). Target: under 5 %.

Each measurement runs in a child process of its own (``--child``) whose SLURM calls are
counted where monitor.py runs them. Usage (cluster up, SLURM_CONF set, under the cluster lock):
    python bench/watch.py [--job-s 60] [--tasks 1000] [--watch-s 90] [--json bench/results/watch-vm-2core.json]
"""

import argparse
import json
import os
import pty
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BASELINE = "7597ac9"


# ------------------------------------------------------------------------------ child process

def count_calls(out: Path) -> dict:
    """Count every SLURM command monitor.py runs in this process; written to ``out`` at exit."""
    import atexit

    from slurmkit.slurm import monitor

    counts: dict = {}
    real = monitor.run_slurm

    def counting(argv, **kwargs):
        counts[argv[0]] = counts.get(argv[0], 0) + 1
        return real(argv, **kwargs)

    monitor.run_slurm = counting
    atexit.register(lambda: out.write_text(json.dumps(counts)))
    return counts


def child(args) -> None:
    counts = count_calls(Path(args.out))
    import slurmkit

    counts["_code"] = str(Path(slurmkit.__file__).parent.parent)   # which slurmkit this child runs
    if args.child == "wait":
        from slurmkit import Job

        spec = {"name": "bench-wait", "profile": "local", "account": "def-test", "resources": {"time": "10m"},
                "launch": {"command": ["sleep", str(args.job_s)]}}
        handle = Job(**spec).submit(folder=Path(args.folder))
        code = counts["_code"]
        counts.clear()   # only what waiting costs
        counts["_code"] = code
        started = time.monotonic()
        final = handle.wait()
        counts["_state"], counts["_wait_s"] = final.state, round(time.monotonic() - started, 1)
    else:
        from slurmkit.cli.main import main

        try:
            main(["watch", args.child, "--interval", "30"])
        except SystemExit:
            pass


# ----------------------------------------------------------------------------- parent process

def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def spawn(code: Path, out: Path, *child_args: str, terminal: bool = False):
    env = {**os.environ, "PYTHONPATH": str(code), "COLUMNS": "120"}
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", *child_args, "--out", str(out)]
    if not terminal:
        return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), None
    leader, follower = pty.openpty()
    process = subprocess.Popen(argv, env=env, stdin=follower, stdout=follower, stderr=follower)
    os.close(follower)
    return process, leader


def drain(leaders, seconds: float) -> None:
    """Read the terminals' output (as a terminal emulator would) for ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready = select.select(leaders, [], [], 0.2)[0] if leaders else time.sleep(0.2)
        for leader in ready or []:
            try:
                os.read(leader, 65536)
            except OSError:
                leaders.remove(leader)


def baseline_code(work: Path, commit: str) -> Path:
    target = work / "baseline"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "slurmkit", "site_profiles", "templates"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def measure_wait(codes, work: Path, job_s: int) -> dict:
    runs = {}
    for name, code in codes.items():
        folder = work / f"wait-{name}"
        folder.mkdir()
        runs[name] = (spawn(code, work / f"wait-{name}.json", "wait", "--job-s", str(job_s), "--folder", str(folder))[0],
                      work / f"wait-{name}.json")
    result = {}
    for name, (process, out) in runs.items():
        process.wait(timeout=job_s + 300)
        counts = json.loads(out.read_text())
        if "_state" not in counts:
            raise SystemExit(f"the {name} wait child failed (exit {process.returncode}); run it alone to see why")
        result[name] = {"calls": sum(v for k, v in counts.items() if not k.startswith("_")), "by_command": {
            k: v for k, v in counts.items() if not k.startswith("_")}, "state": counts.get("_state"), "wait_s": counts.get("_wait_s"),
            "code": counts.get("_code")}
    return result


def measure_watch(codes, work: Path, tasks: int, settle_s: float, watch_s: float) -> dict:
    sys.path.insert(0, str(REPO))
    from slurmkit import Job

    spec = {"name": "bench-watch", "profile": "local", "account": "def-test", "kind": "array",
            "resources": {"time": "10m"}, "extra_directives": ["--hold"], "launch": {"command": "true"},
            "array": {"parameters": {"point": list(range(tasks))}}}
    sweep = Job(**spec).submit(folder=work / "array")
    processes = {}
    try:
        for name, code in codes.items():
            for mode in ("piped", "terminal"):
                processes[(name, mode)] = spawn(code, work / f"watch-{name}-{mode}.json", sweep.job_id, terminal=mode == "terminal")
        leaders = [leader for _, leader in processes.values() if leader is not None]
        drain(leaders, settle_s)
        before = {key: cpu_s(process.pid) for key, (process, _) in processes.items()}
        drain(leaders, watch_s)
        share = {key: (cpu_s(process.pid) - before[key]) / watch_s for key, (process, _) in processes.items()}
    finally:
        stop(processes)
        subprocess.run(["scancel", sweep.job_id], check=False)
    result = {}
    for (name, mode), _ in processes.items():
        out = work / f"watch-{name}-{mode}.json"
        counts = json.loads(out.read_text()) if out.exists() else None   # None: it had to be killed
        result.setdefault(name, {})[mode] = {"cpu_share": round(share[(name, mode)], 4), "slurm_calls": counts}
    return result


def stop(processes) -> None:
    """Ctrl-C each watch, reading the terminals meanwhile (a full pty would block its last
    words); kill what has not ended within a minute."""
    for process, _ in processes.values():
        process.send_signal(signal.SIGINT)
    leaders = [leader for _, leader in processes.values() if leader is not None]
    deadline = time.monotonic() + 60
    while any(process.poll() is None for process, _ in processes.values()) and time.monotonic() < deadline:
        drain(leaders, 0.5)
    for process, leader in processes.values():
        if process.poll() is None:
            process.kill()
            process.wait()
        if leader is not None:
            os.close(leader)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-s", type=int, default=60)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--settle-s", type=float, default=10.0)
    parser.add_argument("--watch-s", type=float, default=90.0)
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    work = Path(tempfile.mkdtemp(prefix="slurmkit-watch-bench-"))
    os.environ["SLURMKIT_REGISTRY"] = str(work / "jobs.jsonl")   # the children's, not the user's
    codes = {"new": REPO, "baseline": baseline_code(work, args.baseline)}
    waits = measure_wait(codes, work, args.job_s)
    for name, figures in waits.items():
        print(f"JobHandle.wait() on a {args.job_s} s job, {name}: {figures['calls']} SLURM calls {figures['by_command']}, "
              f"ended {figures['state']} after {figures['wait_s']} s")
    print(f"  baseline / new: {waits['baseline']['calls'] / max(1, waits['new']['calls']):.1f}x the calls")
    watches = measure_watch(codes, work, args.tasks, args.settle_s, args.watch_s)
    for name, modes in watches.items():
        for mode, figures in modes.items():
            print(f"watch of {args.tasks} held tasks, {name}, {mode}: {figures['cpu_share']:.2%} of a core over "
                  f"{args.watch_s:.0f} s, SLURM calls {figures['slurm_calls']}")
    for mode in ("piped", "terminal"):
        new, old = watches["new"][mode]["cpu_share"], watches["baseline"][mode]["cpu_share"]
        print(f"  {mode}: baseline / new CPU: {old / new:.1f}x" if new else f"  {mode}: new CPU below the clock tick")
    if args.json:
        Path(args.json).write_text(json.dumps({"cores": os.cpu_count(), "baseline": args.baseline, "job_s": args.job_s,
                                               "tasks": args.tasks, "settle_s": args.settle_s, "watch_s": args.watch_s,
                                               "wait": waits, "watch": watches}, indent=2) + "\n")


if __name__ == "__main__":
    main()
