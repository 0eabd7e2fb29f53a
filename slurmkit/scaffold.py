"""``slurmkit new``: a first job.yaml with sensible defaults, and its rendered script.

The spec is checked and rendered *before* anything is written, so a bad answer leaves no
half-made folder behind; an existing job is never overwritten without ``force``.
"""

import os
from pathlib import Path
from typing import Callable, List, Optional

import yaml

from .errors import SlurmkitError
from .files import write_atomic
from .job import Job
from .profiles import detect_profile
from .spec import KINDS, NAME_RE

DEFAULT_COMMANDS = {
    "serial": "python main.py",
    "threaded": "python main.py",
    "mpi": "./my_mpi_program",
    "gpu": "python train.py",
    "array": "python main.py --lr $lr",
    "many-tasks": "python main.py --seed {}",
    "multigpu": "python train.py",
    "ddp": "python train.py",
    "tf-multiworker": "python train.py",
    "horovod": "python train.py",
}
#: A many-tasks job's first task file: one line per task, each the {} of its command.
EXAMPLE_TASKS = ("tasks.txt", "1\n2\n3\n4\n")
#: GPUs per node the scaffold starts from, for the kinds that need several.
MULTI_GPU_KINDS = {"multigpu": 2, "ddp": 2, "tf-multiworker": 2, "horovod": 2}


class ScaffoldError(SlurmkitError):
    """``slurmkit new`` cannot write the job (it exists, or the name is not usable)."""


def scaffold(name: str, profile: Optional[str] = None, kind: Optional[str] = None, account: Optional[str] = None,
             time: Optional[str] = None, gpus: Optional[str] = None, command: Optional[str] = None,
             force: bool = False, ask: Optional[Callable] = None, env=None, warn: Optional[Callable] = None) -> List[Path]:
    """Write ``name/job.yaml`` and ``name/job.sbatch`` (a many-tasks job also gets a first
    ``name/tasks.txt``, unless one is there); ``ask(prompt, default=...)`` fills gaps,
    ``warn(finding)`` hears the resolver's warnings."""
    env = os.environ if env is None else env
    folder = Path(name)
    if not NAME_RE.fullmatch(folder.name):
        raise ScaffoldError(f"{name!r}: a job name uses letters, digits, '.', '_', '+' and '-'")
    targets = [folder / "job.yaml", folder / "job.sbatch"]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not force:
        raise ScaffoldError(f"{', '.join(existing)} already exist; use --force to overwrite")
    ask = ask or (lambda _prompt, default=None: default)
    profile = profile or ask("Site profile", default=_detected(env))
    kind = kind or ask(f"Kind ({', '.join(KINDS)})", default="serial")
    data = {"name": folder.name, "profile": profile, "kind": kind}
    account = account or ask("Account", default=env.get("SBATCH_ACCOUNT") or env.get("SLURM_ACCOUNT") or "")
    if account:
        data["account"] = account
    resources = {"time": time or ask("Time limit", default="1h")}
    if kind == "gpu" or kind in MULTI_GPU_KINDS:
        resources["gpus"] = gpus or ask("GPUs per node (MODEL:COUNT)", default=_first_gpu(profile, MULTI_GPU_KINDS.get(kind, 1)))
    elif gpus:
        resources["gpus"] = gpus
    if kind in ("ddp", "tf-multiworker", "horovod"):
        resources["nodes"] = 2
    if kind == "mpi":
        resources.update(nodes=1, tasks_per_node=4)
    if kind == "threaded":
        resources["cpus_per_task"] = 4
    if kind == "many-tasks" and not _whole_nodes(profile):
        resources["tasks_per_node"] = 4
    data["resources"] = resources
    if kind == "array":
        data["array"] = {"parameters": {"lr": ["0.1", "0.01", "0.001"]}}
    if kind == "many-tasks":
        data["tasks"] = {"arguments": EXAMPLE_TASKS[0]}
    data["launch"] = {"command": command or ask("Command", default=DEFAULT_COMMANDS[kind])}
    spec_text = yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    job = Job(**data)
    script = job.render(warn=warn)
    written = [write_atomic(targets[0], spec_text)]
    task_file = folder / EXAMPLE_TASKS[0]
    if kind == "many-tasks" and not task_file.exists():   # the user's own task list is never replaced
        written.append(write_atomic(task_file, EXAMPLE_TASKS[1]))
    return written + [write_atomic(targets[1], script, 0o755)]


def _detected(env) -> str:
    try:
        return detect_profile(env=env).name
    except SlurmkitError:
        return "generic"


def _whole_nodes(profile: str) -> bool:
    from .profiles import load_profile

    return bool(load_profile(profile).scheduling.whole_node)


def _first_gpu(profile: str, count: int = 1) -> str:
    from .profiles import load_profile

    models = load_profile(profile).gpu_models
    return f"{models[0]}:{count}" if models else str(count)
