"""What ``slurmkit status --remote`` costs for 100 jobs over an existing master connection,
against opening a fresh ssh connection per call, measured in the same run.

The "cluster" is the local SLURM cluster behind the tests' own sshd (tests/integration/sshd.py,
a loopback port), so a fresh connection here costs only TCP + key exchange + public-key
authentication on one machine: on a real login node add the network's round trips and, on
the Alliance, a second factor typed by a person for every connection.

Measured, each ``--repeat`` times (median reported):
  master:     ``slurmkit status --remote local ID...`` (100 ids), the master already open; the
              whole command: Python start-up, the registry, sacct + squeue + exit files over ssh;
  cold:       the same, the first call of a session (it opens the master);
  fresh-one:  one ``ssh -o ControlMaster=no host squeue --jobs=ID,...`` (a fresh connection);
  fresh-each: a fresh ``ssh -o ControlMaster=no host squeue --jobs=ID`` per job, 100 calls:
              what a tool that opens a connection per command pays.

The 100 jobs are held (``sbatch --hold``), so nothing runs; they are cancelled at the end.
Usage (cluster up, SLURM_CONF set, as root for sshd, under the cluster lock):
    python bench/remote_status.py [--jobs 100] [--repeat 5] [--json bench/results/remote-status-vm-2core.json]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.integration.sshd import HOST_ALIAS, Sshd  # noqa: E402

CLI = [sys.executable, "-c", "from slurmkit.cli.main import main; main()"]


def held_jobs(count: int):
    ids = []
    for i in range(count):
        out = subprocess.run(["sbatch", "--parsable", "--hold", "-A", "def-test", "-t", "1", "-J", f"bench-remote-{i}",
                              "-o", "/dev/null", "--wrap", "true"], check=True, capture_output=True, text=True).stdout
        ids.append(out.strip().split(";")[0])
    return ids


def record(ids, registry: Path, folder: str) -> None:
    from slurmkit.slurm.registry import Submission, now_iso, record_all

    record_all([Submission(job_id, f"bench-remote-{i}", folder, "local", now_iso(), remote=HOST_ALIAS)
                for i, job_id in enumerate(ids)], registry)


def timed(argv, env) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{argv[:4]}... failed: {result.stderr.strip()[:400]}")
    return elapsed


def fresh_ssh(sshd: Sshd, command: str):
    return ["ssh", "-F", str(sshd.folder / "ssh_config"), "-o", "ControlMaster=no", "-o", "ControlPath=none",
            HOST_ALIAS, "--", command]


def measure(args, sshd: Sshd, env, ids):
    status = [*CLI, "status", "--remote", "local", "--json", *ids]
    runs = {"master": [], "cold": [], "fresh-one": [], "fresh-each": []}
    for _ in range(args.repeat):
        subprocess.run(["ssh", "-F", str(sshd.folder / "ssh_config"), "-o", f"ControlPath={sshd.runtime}/slurmkit/%C",
                        "-O", "exit", HOST_ALIAS], capture_output=True, env=env)
        runs["cold"].append(timed(status, env))
        runs["master"].append(timed(status, env))
        runs["fresh-one"].append(timed(fresh_ssh(sshd, f"squeue -h --jobs={','.join(ids)}"), env))
        start = time.perf_counter()
        for job_id in ids:
            timed(fresh_ssh(sshd, f"squeue -h --jobs={job_id}"), env)
        runs["fresh-each"].append(time.perf_counter() - start)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-remote-"))
    sshd = Sshd(work / "sshd", os.environ["SLURM_CONF"])
    sshd.folder.mkdir()
    sshd.start()
    ids = []
    try:
        config = work / "config" / "slurmkit"
        config.mkdir(parents=True)
        (config / "remote.yaml").write_text(f"ssh_config: {sshd.folder / 'ssh_config'}\nclusters:\n  local: {{host: {HOST_ALIAS}}}\n")
        env = {k: v for k, v in os.environ.items() if k != "SLURM_CONF"}
        env.update(XDG_CONFIG_HOME=str(work / "config"), XDG_RUNTIME_DIR=str(sshd.runtime),
                   SLURMKIT_REGISTRY=str(work / "registry.jsonl"), NO_COLOR="1")
        ids = held_jobs(args.jobs)
        record(ids, work / "registry.jsonl", str(sshd.scratch / "slurmkit" / "bench" / "logs"))
        runs = measure(args, sshd, env, ids)
    finally:
        if ids:
            subprocess.run(["scancel", *ids], check=False)
        sshd.stop()
        subprocess.run(["rm", "-rf", str(work)], check=False)
    medians = {name: statistics.median(values) for name, values in runs.items()}
    result = {"jobs": args.jobs, "repeat": args.repeat, "machine": f"{platform.node()} ({os.cpu_count()} cores)",
              "openssh": subprocess.run(["ssh", "-V"], capture_output=True, text=True).stderr.strip(),
              "seconds": {name: [round(v, 4) for v in values] for name, values in runs.items()},
              "median_s": {name: round(v, 4) for name, v in medians.items()},
              "fresh_each_over_master": round(medians["fresh-each"] / medians["master"], 1),
              "fresh_one_over_master": round(medians["fresh-one"] / medians["master"], 2)}
    for name, value in medians.items():
        print(f"{name:>10}: {value * 1000:8.1f} ms (median of {args.repeat})")
    print(f"a fresh connection per job costs {result['fresh_each_over_master']}x `status --remote` over the master")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
