"""How much `slurmkit --help` and `slurmkit render` cost against the imports they need.

Prints the median CPU time (user + sys, from the child's rusage) of each command over N runs,
and each one's ratio to the floor `python -c "import jinja2, yaml, click"`, measured in the
same run. Targets: render <= 1.25x the floor, --help <= 0.7x.

The commands run through ``slurmkit.cli.run`` (the console script), which ends with a quick
exit: no interpreter teardown. The last line runs the same render through click's ``main`` and
Python's ordinary exit, to show what that teardown costs.
Usage: python bench/startup.py [N]
"""

import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SPEC = """\
name: resnet50
profile: nibi
account: def-someprof
kind: gpu
resources: {gpus: h100:1, cpus_per_task: 12, mem: 64G, time: 3h}
environment:
  modules: [python/3.12]
  venv: {requirements: requirements.txt}
stage: {inputs: [{from: data.tar, to: data}]}
launch: {command: python train.py --epochs 10 --data $SLURM_TMPDIR/data}
"""
SPEC_FILE = Path(tempfile.mkdtemp()) / "job.yaml"
SPEC_FILE.write_text(SPEC)

FLOOR = [sys.executable, "-c", "import jinja2, yaml, click"]
COMMANDS = {
    "floor: import jinja2, yaml, click": FLOOR,
    "slurmkit --help": [sys.executable, "-m", "slurmkit.cli", "--help"],
    "slurmkit --version": [sys.executable, "-m", "slurmkit.cli", "--version"],
    "slurmkit render job.yaml": [sys.executable, "-m", "slurmkit.cli", "render", str(SPEC_FILE)],
    "  the same, Python's own exit": [sys.executable, "-c", "import sys; from slurmkit.cli.main import main; "
                                      f"sys.argv = ['slurmkit', 'render', {str(SPEC_FILE)!r}]; main()"],
}


# Installed packages run from compiled bytecode (pip compiles on install); a
# PYTHONDONTWRITEBYTECODE in the environment would make slurmkit, and only slurmkit, recompile
# its source on every run. The warm-up run below writes the .pyc files.
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
ENV["NO_COLOR"] = "1"


def cpu_seconds(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(runs):
    samples = {name: [] for name in COMMANDS}
    for argv in COMMANDS.values():  # warm-up: bytecode written, page cache filled
        cpu_seconds(argv)
    for _ in range(runs):  # interleaved, so drift hits every command alike
        for name, argv in COMMANDS.items():
            samples[name].append(cpu_seconds(argv))
    floor = statistics.median(samples["floor: import jinja2, yaml, click"])
    print(f"{'command':36} {'median ms':>10} {'x floor':>8}   ({runs} runs, {sys.version.split()[0]})")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:36} {median * 1000:10.1f} {median / floor:8.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
