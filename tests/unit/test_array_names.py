"""An array job's lists are named as the user's data (``lrs``), never like anything else the
job sets, and a parameter is exported only when the command does not pass it as an argument."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from slurmkit import Job
from slurmkit.core.variables import RUNTIME_NAMES
from slurmkit.resolve.array_names import exported, list_names, plural

RUNTIME = Path(__file__).resolve().parents[2] / "slurmkit" / "render" / "runtime.sh"


@pytest.mark.parametrize("name,expected", [("lr", "lrs"), ("seed", "seeds"), ("batch", "batches"), ("loss", "losses"),
                                           ("policy", "policies"), ("day", "days"), ("SEED", "SEEDS"), ("x", "xes")])
def test_a_list_is_named_by_the_parameters_plural(name, expected):
    assert plural(name) == expected


def test_a_plural_that_is_taken_gives_way():
    # "lrs" is the other parameter's own name; "nodes" is a variable the runtime sets
    assert list_names(("lr", "lrs", "node"), RUNTIME_NAMES) == ("lr_values", "lrses", "node_values")


def test_when_every_readable_name_is_taken_the_private_prefix_is_left():
    assert list_names(("lr",), {"lrs", "lr_values"}) == ("_sk_lr",)


def test_a_list_is_never_named_like_slurm_or_slurmkit():
    # the spec reader refuses SLURM_*, not SLURMKIT_*: its plural would read as slurmkit's own
    assert list_names(("SLURMKIT_X", "BASH_x"), set()) == ("_sk_SLURMKIT_X", "_sk_BASH_x")


def test_only_a_parameter_the_command_does_not_name_is_exported():
    assert exported(("lr", "seed", "wd"), ("python", "main.py", "--lr", "${lr}", "--seed=$seed", "$$wd")) == (False, False, True)


def _assigned_in_runtime():
    text = RUNTIME.read_text()
    names = set(re.findall(r"(?:^|[\s;(&|])(?:(?:export|local|declare|readonly)(?:\s+-[a-zA-Z]+)*\s+)?"
                           r"([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=", text, re.M))
    names |= set(re.findall(r"\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b", text))
    names |= {w for m in re.findall(r"\bread\s+(?:-[a-zA-Z]+\s+)*((?:[A-Za-z_][A-Za-z0-9_]*\s*)+)", text) for w in m.split()}
    return {n for n in names if not n.startswith("_sk_")}


def test_every_name_the_runtime_sets_is_kept_clear_of():
    assert _assigned_in_runtime() <= RUNTIME_NAMES


def _script(tmp_path, parameters: str, launch: str) -> str:
    path = tmp_path / "job.yaml"
    path.write_text(f"name: ok\nprofile: local\naccount: def-someprof\nresources: {{time: 1h}}\nlaunch: {launch}\n"
                    f"kind: array\narray:\n  parameters:\n{parameters}")
    return Job.from_yaml(path).render()


def test_the_script_reads_like_the_users_data_and_exports_nothing_it_passes(tmp_path):
    script = _script(tmp_path, "    lr: [0.1, 0.01]\n    seed: [1, 2]\n", "python main.py --lr $lr --seed $seed")
    assert "lrs=(0.1 0.1 0.01 0.01)\nlr=${lrs[$SLURM_ARRAY_TASK_ID]}\nseeds=(1 2 1 2)\n" in script
    assert "export lr" not in script and "export seed" not in script and "_sk_lr" not in script
    assert "\n\n\n" not in script


def test_a_parameter_the_program_reads_from_its_environment_is_exported(tmp_path):
    script = _script(tmp_path, "    lr: [0.1, 0.01]\n    seed: [1, 2]\n", "python main.py --lr $lr")
    assert "export seed  #" in script and "export lr" not in script


def test_colliding_names_still_give_each_task_its_own_values(tmp_path):
    script = _script(tmp_path, "    lr: ['a b', \"it's\"]\n    lrs: ['$HOME', '*']\n    node: [1, 2]\n",
                     "python main.py $lr $lrs $node")
    table = script.split("of each list.\n", 1)[1].split("\n\n", 1)[0]
    seen = set()
    for task in range(8):
        out = subprocess.run(["bash", "-euc", table + '\nprintf "%s|" "$lr" "$lrs" "$node"'], capture_output=True,
                             text=True, check=True, env={"SLURM_ARRAY_TASK_ID": str(task), "PATH": os.environ["PATH"]}).stdout
        seen.add(out)
    assert seen == {f"{a}|{b}|{c}|" for a in ("a b", "it's") for b in ("$HOME", "*") for c in "12"}
