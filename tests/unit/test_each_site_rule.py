"""One row per rule the Alliance pages state that decides whether a job is accepted or runs well
(docs/site-rules.md and the audit behind it): a spec that breaks the rule gets the finding on
the cluster it binds, a spec that keeps it gets none, and the breaking spec gets none on a
cluster where the rule does not hold. Rules read from the submit host (login nodes, data movers,
read-only folders, environments built on the login node) are proved in test_site_rules.py and
test_documented_rules.py, which give check a host name and an environment.

Each row names the words of the finding that only that rule gives, so that a finding of another
rule for the same spec does not pass for it.
"""

import copy
import functools

import pytest

from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

BASE = {"name": "demo", "account": "def-someprof", "kind": "mpi", "resources": {"time": "3h"}, "launch": {"command": "./solver"}}
GPU = {"kind": "gpu", "resources": {"gpus": "h100:1"}}


@functools.lru_cache(maxsize=None)
def profile(name: str):
    return load_profile(name)


def spec(*changes):
    """BASE with each change laid over it (nested mappings merged, a None value removes the key)."""
    data = copy.deepcopy(BASE)
    for change in changes:
        _merge(data, change)
    return data


def _merge(data, change):
    for key, value in change.items():
        if value is None:
            data.pop(key, None)
        elif isinstance(value, dict) and isinstance(data.get(key), dict):
            _merge(data[key], value)
        else:
            data[key] = copy.deepcopy(value)


def findings(cluster, data, level):
    resolution = resolve(spec_from_mapping(data, source="job.yaml"), profile(cluster))
    return [f.message for f in resolution.findings if f.level == level]


def res(**resources):
    return {"resources": resources}


def env(**environment):
    return {"environment": environment}


def extra(*directives):
    return {"extra_directives": list(directives)}


def array(n):
    return {"kind": "array", "array": {"parameters": {"i": list(range(n))}}}


#: rule id (docs/site-rules.md where it is a profile rule), the cluster it binds, one where it
#: does not (None: it binds on every cluster with the hardware), the breaking spec, the keeping
#: spec, the level check gives, and the words only that rule's finding has.
ROWS = [
    ("short-jobs", "fir", "trillium", spec(res(time="30m")), spec(res(time="1h")), "warning", "production jobs to run at least 1h"),
    ("short-jobs", "narval", "trillium", spec(res(time="2m")), spec(res(time="2h")), "warning", "production jobs to run at least 1h"),
    ("short-jobs", "rorqual", "trillium", spec(res(time="30m")), spec(res(time="1h")), "warning", "production jobs to run at least 1h"),
    ("short-jobs", "nibi", "trillium", spec(res(time="30m")), spec(res(time="1h")), "warning", "production jobs to run at least 1h"),
    ("max-walltime", "trillium", "fir", spec(res(time="25h")), spec(res(time="24h")), "error", "maximum walltime of 1d"),
    ("max-walltime", "fir", None, spec(res(time="8d")), spec(res(time="7d")), "error", "maximum walltime of 7d"),
    ("max-walltime", "nibi", None, spec(res(time="8d")), spec(res(time="7d")), "error", "maximum walltime of 7d"),
    ("gpus-per-node-most", "fir", "nibi", spec(GPU, {"kind": "multigpu"}, res(gpus="h100:5")),
     spec(GPU, {"kind": "multigpu"}, res(gpus="h100:4")), "error", "per node is more than any fir node has"),
    ("one-mig-instance", "nibi", None, spec(GPU, res(gpus="h100_1g.10gb:2")), spec(GPU, res(gpus="h100_1g.10gb:1")), "error",
     "a job may use one MIG instance"),
    ("one-mig-instance", "narval", None, spec(GPU, res(gpus="a100_2g.10gb:2")), spec(GPU, res(gpus="a100_2g.10gb:1")), "error",
     "a job may use one MIG instance"),
    ("gpu-names", "rorqual", "fir", spec(GPU, res(gpus="h100_20gb:1")), spec(GPU, res(gpus="h100_2g.20gb:1")),
     "warning", "is rorqual's documented name for h100_2g.20gb"),
    ("cores-per-gpu", "nibi", None, spec(GPU, res(cpus_per_task=20)), spec(GPU, res(cpus_per_task=14)), "warning",
     "above the site's advice of 14 cores per GPU"),
    ("cores-per-gpu", "rorqual", None, spec(GPU, res(cpus_per_task=20)), spec(GPU, res(cpus_per_task=16)), "warning",
     "above the site's advice of 16 cores per GPU"),
    ("gpu-share", "nibi", "trillium", spec(GPU, res(mem="600G")), spec(GPU, res(mem="250G")), "warning",
     "nibi recommends at most 250G per GPU"),
    ("gpu-share", "nibi", "trillium", spec(GPU, res(gpus="h100_3g.40gb:1", cpus_per_task=7)),
     spec(GPU, res(gpus="h100_3g.40gb:1", cpus_per_task=6)), "warning", "more than nibi recommends (6 at most)"),
    ("gpu-model-asked", "nibi", "trillium", spec(GPU, res(gpus=1)), spec(GPU), "warning", "names no GPU model"),
    ("whole-gpu-nodes", "nibi", None, spec(GPU, {"kind": "multigpu"}, res(gpus="mi300a:2")),
     spec(GPU, {"kind": "multigpu"}, res(gpus="mi300a:4")), "error", "nodes are scheduled whole"),
    ("amd-gpus", "nibi", None, spec(GPU, {"kind": "multigpu"}, res(gpus="mi300a:4"), env(modules=["cuda/12.6"])),
     spec(GPU, {"kind": "multigpu"}, res(gpus="mi300a:4")), "error", "is NVIDIA's CUDA"),
    ("no-internet", "trillium", "fir", spec(env(setup=["curl -LO https://zenodo.org/x.tgz"])), spec(env(setup=["tar xf x.tgz"])),
     "error", "compute nodes reach no internet"),
    ("no-internet", "narval", "nibi", spec({"launch": {"command": "wget https://zenodo.org/x.tgz"}}), spec(),
     "warning", "compute nodes reach no internet unless support granted"),
    ("no-internet-pip", "rorqual", "nibi", spec(env(setup=["pip install torch"])), spec(env(setup=["pip install --no-index torch"])),
     "warning", "installs from the package index"),
    ("wheelhouse", "fir", "local", spec(env(setup=["pip install torch"])), spec(env(setup=["pip install --no-index torch"])),
     "warning", "installs from PyPI"),
    ("wheelhouse", "nibi", "local", spec(env(setup=["pip install torch"])), spec(env(setup=["pip install --no-index torch"])),
     "warning", "installs from PyPI"),
    ("python-env", "fir", "local", spec(env(setup=["export PYTHONPATH=$HOME/lib"])), spec(env(setup=["export OMP_NUM_THREADS=4"])),
     "warning", "sets PYTHONPATH"),
    ("python-env", "nibi", "local", spec(env(venv={"packages": ["numpy"]}, setup=["module load gcc"])),
     spec(env(venv={"packages": ["numpy"]}, modules=["StdEnv/2023", "gcc"])), "warning", "loads a module while"),
    ("time-partitions", "fir", "trillium", spec(res(time="3h10m")), spec(res(time="3h")), "warning", "just above fir's 3h partitions"),
    ("time-partitions", "nibi", "trillium", spec(res(time="13h")), spec(res(time="12h")), "warning", "just above nibi's 12h partitions"),
    ("blocked-modules", "narval", "fir", spec(env(modules=["StdEnv/2018.3"])), spec(env(modules=["StdEnv/2023"])), "error",
     "has blocked StdEnv/2018 on purpose"),
    ("host-cpu-flags", "narval", "fir", spec(env(setup=["gcc -O3 -march=native -o solver solver.c"])),
     spec(env(setup=["gcc -O3 -march=core-avx2 -o solver solver.c"])), "warning", "builds for the CPU the job compiles on"),
    ("tmp-request", "rorqual", "nibi", spec(res(tmp="4000G")), spec(res(tmp="1000G")), "error",
     "--tmp from 370G to 3360G"),
    ("max-jobs-per-user", "nibi", "local", spec(array(1200)), spec(array(1000)), "error", "allows 1000 queued per user"),
    ("max-jobs-per-user", "trillium", "nibi", spec(array(600)),
     spec(array(500)), "error", "allows 500 queued per user"),
    ("max-jobs-per-user", "nibi", "local", spec(array(800)), spec(array(400)), "warning",
     "your other jobs included, which slurmkit cannot see"),
    ("name-no-partition", "nibi", "trillium", spec(extra("--partition=cpubase_bycore_b1")), spec(extra("--partition=default")),
     "warning", "asks jobs not to name a partition"),
    ("account", "fir", "local", spec({"account": None}), spec(), "warning", "no account: fir rejects the job"),
    ("node-memory", "nibi", None, spec(res(mem="7000G")), spec(res(mem="6000G")), "error", "largest usable memory"),
    ("mem-ignored", "trillium", "fir", spec(res(mem="100G")), spec(), "error", "memory requests are ignored there"),
    ("whole-cpu-nodes", "trillium", "fir", spec({"kind": "threaded"}, res(cpus_per_task=4)),
     spec({"kind": "threaded"}, res(cpus_per_task=192)), "error", "schedules whole nodes of 192 cores"),
    ("gpus-per-node", "trillium", "nibi", spec(GPU, {"kind": "multigpu"}, res(gpus="h100:2")),
     spec(GPU, {"kind": "multigpu"}, res(gpus="h100:4")), "error", "gives GPU jobs 1 or 4 GPUs per node"),
    ("multi-node-gpus", "trillium", "nibi", spec(GPU, {"kind": "ddp"}, res(nodes=2)),
     spec(GPU, {"kind": "ddp"}, res(nodes=2, gpus="h100:4")), "error", "whole GPU nodes only"),
    ("partition-limits", "trillium", "nibi", spec(res(time="10m")), spec(res(time="15m")), "error", "(15m at least)"),
    ("partition-limits", "trillium", "nibi", spec(res(nodes=20)), spec(res(nodes=10)), "warning", "which slurmkit cannot see"),
    ("partition-limits", "trillium", "nibi", spec(res(nodes=200)), spec(res(nodes=128), {"account": "rrg-someprof"}), "error",
     "(128 at most with a RAC allocation)"),
    ("partition-limits", "trillium", "nibi", spec(GPU, {"kind": "ddp"}, res(nodes=6, gpus="h100:4")),
     spec(GPU, {"kind": "ddp"}, res(nodes=5, gpus="h100:4")), "warning", "24 GPUs in all is more than"),
    ("partition-limits", "trillium", "nibi", spec(res(time="2h"), extra("--partition=debug")),
     spec(res(time="1h"), extra("--partition=debug")), "error", "debug partition allows (1h at most)"),
    ("partition-limits", "trillium", "nibi", spec(res(time="1h", nodes=3), extra("--partition=debug")),
     spec(res(time="1h", nodes=2), extra("--partition=debug")), "error", "debug partition takes (2 at most)"),
    ("partition-limits", "trillium", "nibi", spec(GPU, {"kind": "multigpu"}, res(gpus="h100:4", time="1h"), extra("--partition=debug")),
     spec(GPU, {"kind": "multigpu"}, res(gpus="h100:4", time="30m"), extra("--partition=debug")), "error",
     "debug partition allows for 4 GPU(s) (30m at most)"),
    ("partition-limits", "trillium", "nibi", spec(GPU, res(time="3h"), extra("--partition=debug")),
     spec(GPU, res(time="2h"), extra("--partition=debug")), "error", "debug partition allows for 1 GPU(s) (2h at most)"),
    ("partition-not-named", "trillium", "nibi", spec(GPU, extra("--partition=compute")), spec(GPU), "warning",
     "asks GPU jobs not to name the compute partition"),
    ("jobs-submit-jobs", "trillium", "fir", spec({"launch": {"command": "sbatch next.sh"}}), spec(), "error",
     "jobs cannot submit jobs on trillium"),
    ("preload-launcher", "trillium", "narval", spec(env(setup=["source /scinet/vast/etc/vastpreload-openmpi.bash"])),
     spec(env(setup=["source /scinet/vast/etc/vastpreload-openmpi.bash"]), {"launch": {"launcher": "mpirun"}}), "warning",
     "takes effect only under mpirun"),
    ("oldest-python", "fir", "local", spec(env(modules=["StdEnv/2023", "python/3.11.5"], venv={"packages": ["numpy"]})),
     spec(env(modules=["StdEnv/2023", "python/3.12.4"], venv={"packages": ["numpy"]})), "warning", "python/3.12 is the oldest"),
    ("venv-not-under", "fir", "local", spec(env(setup=["virtualenv --no-download $SCRATCH/env"])),
     spec(env(setup=["virtualenv --no-download $SLURM_TMPDIR/env"])), "warning", "may get partially deleted"),
    ("gpu-profiling", "fir", "trillium", spec(GPU, {"launch": {"command": "nsys profile python train.py"}}),
     spec(GPU, {"launch": {"command": "python train.py"}}), "warning", "is not available on fir yet"),
    ("gpu-profiling", "rorqual", "trillium", spec(GPU, {"launch": {"command": "nsys profile python train.py"}}),
     spec(GPU, {"launch": {"command": "nsys profile python train.py"}},
          env(setup=["while [ -n \"$(dcgmi -v | grep 'Hostengine build info:')\" ]; do sleep 5; done"])), "warning",
     "allows only with DCGM disabled"),
    ("mig-no-graphics", "fir", "trillium", spec(GPU, res(gpus="h100_1g.10gb:1"), env(variables={"MUJOCO_GL": "egl"})),
     spec(GPU, res(gpus="h100_1g.10gb:1"), env(variables={"MUJOCO_GL": "osmesa"})), "warning", "which a MIG instance"),
    ("mig-no-graphics", "nibi", "trillium", spec(GPU, res(gpus="h100_10gb:1"), {"launch": {"command": "vglrun python viz.py"}}),
     spec(GPU, {"launch": {"command": "vglrun python viz.py"}}), "warning", "vglrun uses a GPU graphics API"),
    ("min-versions", "nibi", "narval", spec(GPU, env(venv={"packages": ["torch==2.4.0"]})),
     spec(GPU, env(venv={"packages": ["torch==2.5.1"]})), "warning", "pins torch below 2.5.1"),
    ("lustre-commands", "nibi", "fir", spec(env(setup=["lfs setstripe -c 8 $SCRATCH/out"])),
     spec(env(setup=["mkdir -p $SCRATCH/out"])), "warning", "runs Lustre's lfs"),
    ("lustre-commands", "trillium", "rorqual", spec(res(nodes=1), env(setup=["lfs getstripe $SCRATCH/out"])),
     spec(res(nodes=1), env(setup=["ls $SCRATCH/out"])), "warning", "runs Lustre's lfs"),
]


def _free_spec(row):
    """The breaking spec on the other cluster, with its GPU model where that cluster names it otherwise."""
    rule, _, free, broken, _, _, _ = row
    data = copy.deepcopy(broken)
    if free == "narval" and data.get("resources", {}).get("gpus") == "h100:1":
        data["resources"]["gpus"] = "a100:1"
    return data


def _id(row):
    return f"{row[0]}-{row[1]}-{row[6][:24]}"


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_the_breaking_spec_gets_the_finding_where_the_rule_binds(row):
    rule, binds, _, broken, _, level, words = row
    assert [m for m in findings(binds, broken, level) if words in m], (rule, findings(binds, broken, level))


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_the_keeping_spec_gets_none(row):
    rule, binds, _, _, kept, level, words = row
    assert [m for m in findings(binds, kept, level) if words in m] == [], rule


@pytest.mark.parametrize("row", [r for r in ROWS if r[2]], ids=_id)
def test_the_breaking_spec_gets_none_where_the_rule_does_not_bind(row):
    rule, _, free, _, _, level, words = row
    assert [m for m in findings(free, _free_spec(row), level) if words in m] == [], (rule, free)


#: Rules of the table proved elsewhere: read from the submit host, or not an Alliance page's.
ELSEWHERE = {
    "read-only-in-job": "test_site_rules.py::test_a_log_folder_under_home_is_an_error_on_trillium_with_the_fix_and_the_source",
    "login-nodes": "test_site_rules.py::test_a_job_from_the_wrong_trillium_login_node_is_an_error_naming_the_right_one",
    "no-submit-hosts": "test_documented_rules.py::test_trillium_refuses_a_submission_from_a_data_mover_with_the_fix",
    "env-build": "test_envbuild.py::test_submit_from_a_host_that_is_no_login_node_still_refuses_a_missing_env",
    "max-array-size": "test_arraysplit.py::test_2500_tasks_with_a_largest_array_of_1001_are_parts_of_1001_1001_498",
}


def test_every_rule_of_the_site_rules_table_has_a_row_or_a_test_elsewhere():
    """A rule added to a profile (and so to docs/site-rules.md) without a row here fails."""
    from slurmkit.resolve.siterules import rule_lines
    from slurmkit.sites.profiles import list_profiles

    ids = {line.rule for site in list_profiles()[0] if not site.abstract for line in rule_lines(profile(site.name))}
    assert ids - {row[0] for row in ROWS} - set(ELSEWHERE) == set()


def test_every_rendered_script_puts_its_sbatch_directives_before_any_command():
    """Running_jobs: directives "must precede all executable commands" (sbatch ignores the rest)."""
    from pathlib import Path

    scripts = sorted((Path(__file__).parent.parent / "golden").glob("*/*.sbatch"))
    assert len(scripts) > 20
    for script in scripts:
        lines = script.read_text(encoding="utf-8").splitlines()
        first = next(i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#"))
        assert not [line for line in lines[first:] if line.startswith("#SBATCH")], script


@pytest.mark.parametrize("cluster, words", [("fir", "install from PyPI"), ("rorqual", "install from the package index")])
def test_pip_lines_of_one_field_are_one_warning_naming_each(cluster, words):
    said = [m for m in findings(cluster, spec(env(setup=["pip install torch", "echo hi", "pip install kaleido"])), "warning")
            if words in m]
    assert len(said) == 1 and "'pip install torch' and 'pip install kaleido' install" in said[0], said
