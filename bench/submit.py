"""Submitting a sweep and polling many jobs, against the real local cluster.

1. A 1,000-point sweep submitted by slurmkit as ONE array job, against 1,000 sequential
   `sbatch` calls of the same script (what a shell loop does); target: at least 20x faster.
2. One status poll of those 1,000 jobs: how many SLURM commands it runs, and its time.

All jobs are submitted held (--hold) and cancelled at the end, so nothing runs.
Usage (cluster up, SLURM_CONF set):  python bench/submit.py [N]
"""

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from slurmkit import Job
from slurmkit.slurm.monitor import _run, poll


def sweep_spec(points: int) -> dict:
    return {"name": "bench-sweep", "profile": "local", "account": "def-test", "kind": "array",
            "resources": {"time": "10m"}, "extra_directives": ["--hold"],
            "array": {"parameters": {"point": list(range(points))}}, "launch": {"command": "echo $point"}}


def main(points: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="slurmkit-bench-"))
    submitted = []
    try:
        started = time.perf_counter()
        sweep = Job(**sweep_spec(points)).submit(folder=folder / "array")
        array_s = time.perf_counter() - started
        submitted.append(sweep.job_id)

        single = Job(**{**sweep_spec(points), "kind": "serial", "array": None, "launch": {"command": "echo 1"}}).render()
        script = folder / "single.sbatch"
        script.write_text(single)
        started = time.perf_counter()
        for _ in range(points):
            out = subprocess.run(["sbatch", "--parsable", f"--output={folder}/%j.out", str(script)],
                                 capture_output=True, text=True, check=True).stdout
            submitted.append(out.split(";")[0].strip())
        loop_s = time.perf_counter() - started

        calls = []

        def counting(argv):
            calls.append(argv[0])
            return _run(argv)

        times = []
        for _ in range(3):
            calls.clear()
            started = time.perf_counter()
            found = poll(submitted[1:], run=counting)
            times.append(time.perf_counter() - started)
        assert len(found) == points and all(s.state == "PENDING" for s in found.values()), "unexpected states"

        print(f"sweep of {points} points, one array (slurmkit):   {array_s:8.2f} s")
        print(f"{points} sequential sbatch calls:                {loop_s:8.2f} s")
        print(f"ratio (sequential / array):                   {loop_s / array_s:8.1f}x   (target >= 20x)")
        print(f"one poll of {points} jobs: {len(calls)} SLURM command(s) ({', '.join(calls)}), "
              f"median {statistics.median(times) * 1000:.0f} ms over {len(times)} polls")
    finally:
        for chunk in range(0, len(submitted), 200):
            subprocess.run(["scancel", *submitted[chunk:chunk + 200]], check=False)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
