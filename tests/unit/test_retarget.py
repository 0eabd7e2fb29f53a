"""slurmkit port: a spec written for a retired cluster moves to its successor, every change
listed with its reason; what cannot move is refused, and what ports resolves without errors."""

import copy
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.core.errors import SlurmkitError
from slurmkit.port.retarget import PortRefused, choose_target, port_spec, ported_text
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile, load_profile_file
from slurmkit.spec.spec import spec_from_mapping


def port(data, to=None, source=None):
    """Port ``data`` from its profile (or ``source``) to ``to`` (or the successor)."""
    source = load_profile(source or data["profile"])
    target = choose_target(source, to, load_profile)
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), source, target)


def changed(ported):
    return {c.field: (c.old, c.new) for c in ported.changes}


GRAHAM_GPU = {
    "name": "train", "profile": "graham", "account": "rrg-prof", "kind": "gpu",
    "resources": {"gpus": "v100:2", "cpus_per_task": 10, "mem": "64G", "time": "3h"},
    "environment": {"modules": ["StdEnv/2020", "python/3.8", "cuda/11.4", "scipy-stack"], "venv": {"packages": ["torch"]}},
    "launch": "python train.py",
    "extra_directives": ["--constraint=cascade", "--signal=USR2@60"],
}


def test_a_graham_gpu_job_moves_to_nibi_with_every_change_and_its_reason():
    ported = port(GRAHAM_GPU)
    assert ported.target == "nibi"
    assert changed(ported) == {
        "profile": ("graham", "nibi"),
        "resources.gpus": ("v100:2", "h100:2"),
        "resources.cpus_per_task": (10, 28),             # graham's 5 per V100 was its bundle; nibi's is 14 per H100
        "environment.modules": (["StdEnv/2020", "python/3.8", "cuda/11.4", "scipy-stack"],
                                ["StdEnv/2023", "python/3.12.4", "cuda/12.2", "scipy-stack"]),   # the nearest of nibi's catalogue
        "extra_directives": (["--constraint=cascade", "--signal=USR2@60"], ["--signal=USR2@60"]),
    }
    why = {c.field: c.why for c in ported.changes}
    assert "retired on 2025-09-01; nibi is its successor" in why["profile"]
    assert "V100 32G" in why["resources.gpus"] and "H100 80G" in why["resources.gpus"]
    assert "node features" in why["extra_directives"]
    assert any(w.field == "account" and "RAC" in w.message for w in ported.warnings)
    assert ported.spec["resources"]["mem"] == "64G" and ported.spec["launch"] == "python train.py"   # the rest as written
    assert GRAHAM_GPU["resources"]["gpus"] == "v100:2"   # the input is not modified


def test_the_ported_file_says_what_moved_reads_back_and_resolves_without_errors():
    ported = port(GRAHAM_GPU)
    text = ported_text(ported)
    assert "\n# note: account: 'rrg-prof' is a RAC allocation" in text     # sbatch tells at once: a note, not a to-do
    assert "# Ported from graham to nibi by slurmkit port.\n#   profile: graham -> nibi" in text
    data = yaml.safe_load(text)
    assert data == ported.spec
    resolution = resolve(spec_from_mapping(data), load_profile("nibi"))
    assert resolution.errors == () and ("--gpus-per-node", "h100:2") in resolution.plan.directives
    assert ported_text(port(GRAHAM_GPU)) == text         # the same input, the same bytes


def test_an_explicit_core_count_under_the_targets_advice_is_kept():
    data = {**GRAHAM_GPU, "resources": {**GRAHAM_GPU["resources"], "cpus_per_task": 6}}
    assert "resources.cpus_per_task" not in changed(port(data))


def test_a_multi_node_kind_keeps_its_gpus_on_nodes_that_have_fewer():
    data = {"name": "ddp", "profile": "graham", "kind": "ddp", "resources": {"gpus": "a100:8", "mem": "256G", "time": "1h"},
            "launch": "python train.py"}
    ported = port(data, to="fir")
    assert changed(ported)["resources.gpus"] == ("a100:8", "h100:4")
    assert changed(ported)["resources.nodes"] == (None, 2)


def test_a_lightning_job_spread_over_more_nodes_says_the_trainer_must_follow():
    data = {"name": "lt", "profile": "graham", "kind": "lightning", "resources": {"gpus": "a100:8", "mem": "256G", "time": "1h"},
            "launch": "python train.py"}
    ported = port(data, to="fir")
    assert changed(ported)["resources.nodes"] == (None, 2)
    # (Graham's files went to Nibi: the "files:" to-do says to copy them to Fir)
    assert tuple(t for t in ported.todos if not t.startswith("files:")) == (
        "the program's Trainer(num_nodes=..., devices=...) must say 2 node(s) of 4 GPUs, as SLURM now runs it (it said 1 of 8) on fir",)


def test_one_process_on_more_gpus_than_a_target_node_has_is_refused_with_the_way_out():
    data = {"name": "big", "profile": "graham", "kind": "gpu", "resources": {"gpus": "a100:8", "time": "1h"}, "launch": "python a.py"}
    with pytest.raises(PortRefused) as refused:
        port(data, to="fir")
    (finding,) = refused.value.findings
    assert finding.field == "resources.gpus"
    assert "fir takes 1 to 4 GPUs per node" in finding.message and "kind 'ddp'" in finding.message


def test_trillium_takes_one_or_four_gpus_per_node():
    data = {"name": "two", "profile": "graham", "kind": "gpu", "resources": {"gpus": "t4:2", "time": "1h"}, "launch": "python a.py"}
    with pytest.raises(PortRefused, match="trillium takes 1 or 4 GPUs per node"):
        port(data, to="trillium")


def test_a_mig_instance_moves_to_the_smallest_instance_with_as_much_memory():
    data = {"name": "mig", "profile": "narval", "kind": "gpu", "resources": {"gpus": "a100_3g.20gb", "time": "1h"}, "launch": "python a.py"}
    assert changed(port(data, to="nibi"))["resources.gpus"] == ("a100_3g.20gb", "h100_2g.20gb")


def test_a_small_single_gpu_job_hears_of_the_mig_instance_it_may_fit():
    data = {"name": "t4", "profile": "graham", "kind": "gpu", "resources": {"gpus": "t4:1", "time": "1h"}, "launch": "python a.py"}
    ported = port(data)
    assert changed(ported)["resources.gpus"] == ("t4:1", "h100:1")
    assert any("h100_2g.20gb" in w.message for w in ported.warnings)


def test_cuda_code_is_not_moved_onto_amd_gpus(tmp_path):
    amd = tmp_path / "amdonly.yaml"
    amd.write_text(Path("site_profiles/nibi.yaml").read_text().replace("name: nibi", "name: amdonly")
                   .split("  gpu-h100:")[0] + "  gpu-mi300a:" + Path("site_profiles/nibi.yaml").read_text().split("  gpu-mi300a:")[1])
    target = load_profile_file(amd)
    data = {"name": "c", "profile": "graham", "kind": "gpu", "resources": {"gpus": "v100:1", "time": "1h"}, "launch": "python a.py"}
    with pytest.raises(PortRefused, match=r"amdonly's GPUs \(mi300a\) are not NVIDIA GPUs"):
        port_spec(data, spec_from_mapping(data), load_profile("graham"), target)


def port_repacked(data, to=None):
    source = load_profile(data["profile"])
    return port_spec(copy.deepcopy(data), spec_from_mapping(data), source, choose_target(source, to, load_profile), repack=True)


NIAGARA_MPI = {"name": "mpi", "profile": "niagara", "kind": "mpi", "resources": {"nodes": 4, "time": "12h"},
               "environment": {"modules": ["NiaEnv/2019b", "intel", "openmpi"]}, "launch": {"command": "./a.out", "launcher": "mpirun"}}


@pytest.mark.parametrize("repack", [False, True])
def test_a_hybrid_niagara_job_whose_threads_do_not_divide_trillium_s_node_is_kept_not_refused(repack):
    """4 ranks x 10 threads (Niagara's 40 cores): 10 does not divide 192, and the shape is the
    user's decomposition, so it is kept on a node charged whole, with the warning, not refused."""
    data = {**NIAGARA_MPI, "resources": {"nodes": 1, "tasks_per_node": 4, "cpus_per_task": 10, "time": "1h"}}
    source = load_profile("niagara")
    ported = port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), source, load_profile("trillium"), repack=repack)
    assert ported.spec["resources"] == data["resources"]
    resolution = resolve(spec_from_mapping({**ported.spec, "account": "def-x"}), load_profile("trillium"))
    assert resolution.errors == () and any("the other 152 are idle but charged" in w.message for w in resolution.warnings)


def test_niagara_mpi_keeps_its_rank_count_on_trillium_and_says_how_to_repack():
    """4 x 40 = 160 ranks stay 160 (a changed rank count changes the domain decomposition: the
    user's choice), on 4 nodes that Trillium charges whole."""
    ported = port(NIAGARA_MPI)
    assert ported.target == "trillium"
    assert changed(ported) == {"profile": ("niagara", "trillium"), "resources.tasks_per_node": (None, 40),
                               "environment.modules": (["NiaEnv/2019b", "intel", "openmpi"], ["StdEnv/2023", "intel", "openmpi"])}
    why = {c.field: c.why for c in ported.changes}["resources.tasks_per_node"]
    assert why == ("niagara filled its nodes with 40 ranks: the 160 ranks are kept (4 x 40), as trillium would fill its larger nodes "
                   "with 192; trillium's nodes of 192 cores are partly used (40 each, charged whole); slurmkit port --repack packs "
                   "them into 1 node(s)")
    assert "partly used" in ported_text(ported)      # the ported file says it too
    plan = resolve(spec_from_mapping({**ported.spec, "account": "def-x"}), load_profile("trillium")).plan
    assert (dict(plan.directives)["--nodes"], dict(plan.directives)["--ntasks-per-node"]) == ("4", "40")


def test_repack_packs_niagaras_ranks_into_fewer_whole_trillium_nodes():
    ported = port_repacked({**NIAGARA_MPI, "resources": {"nodes": 4, "tasks_per_node": 80, "time": "12h"}})   # 80: Hyper-Threading
    assert changed(ported)["resources.nodes"] == (4, 2) and changed(ported)["resources.tasks_per_node"] == (80, 160)
    why = {c.field: c.why for c in ported.changes}["resources.nodes"]
    assert why == "--repack: the same 320 ranks (4 x 80 on niagara) packed into 2 whole node(s) of 192 cores, 160 per node"
    assert "--repack: the same 320 ranks" in ported_text(ported)
    plan = resolve(spec_from_mapping({**ported.spec, "account": "def-x"}), load_profile("trillium")).plan
    assert (dict(plan.directives)["--nodes"], dict(plan.directives)["--ntasks-per-node"]) == ("2", "160")


def test_explicit_niagara_ranks_are_kept_and_repacked_evenly_on_request():
    data = {"name": "mpi", "profile": "niagara", "kind": "mpi",
            "resources": {"nodes": 10, "tasks_per_node": 20, "cpus_per_task": 2, "time": "20h"}, "launch": "./a.out"}
    kept = port(data)
    assert changed(kept) == {"profile": ("niagara", "trillium")}
    assert [w.message for w in kept.warnings if w.field == "resources.tasks_per_node"] == [
        "the 200 ranks are kept (10 x 20); trillium's nodes of 192 cores are partly used (40 each, charged whole); slurmkit port "
        "--repack packs them into 4 node(s)"]
    assert "# note: resources.tasks_per_node: the 200 ranks are kept (10 x 20); trillium's nodes" in ported_text(kept)
    assert not [w for w in kept.warnings if "idle but charged" in w.message]     # the resolver's same warning is not repeated
    # 200 ranks of 2 cores: 96 fit a node; 3 nodes cannot hold 200 evenly, 4 do (50 each).
    assert changed(port_repacked(data)) == {"profile": ("niagara", "trillium"), "resources.nodes": (10, 4),
                                            "resources.tasks_per_node": (20, 50)}


def test_repack_of_ranks_that_split_evenly_only_one_a_node_keeps_them_and_says_so():
    data = {"name": "mpi", "profile": "niagara", "kind": "mpi", "resources": {"nodes": 1, "tasks_per_node": 37, "time": "1h"},
            "launch": "./a.out"}
    assert changed(port_repacked(data)) == {"profile": ("niagara", "trillium")}
    assert not [w for w in port_repacked(data).warnings if w.field == "resources.nodes"]     # one node: nothing to pack
    data["resources"]["nodes"] = 7                     # 259 = 7 x 37 ranks: 2 nodes of 192 hold them, but not evenly
    ported = port_repacked(data)
    assert changed(ported) == {"profile": ("niagara", "trillium")}
    assert any(w.message.startswith("--repack: 259 ranks do not split evenly into fewer than 7 node(s)") for w in ported.warnings)


def test_port_repack_on_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.yaml").write_text(yaml.safe_dump({**NIAGARA_MPI, "resources": {"nodes": 4, "tasks_per_node": 80, "time": "12h"}}))
    plain = CliRunner().invoke(main, ["port", "job.yaml"])
    assert plain.exit_code == 0 and "--repack packs them into 2 node(s)" in plain.output and "nodes: 4" in plain.stdout
    packed = CliRunner().invoke(main, ["port", "job.yaml", "--repack"])
    assert packed.exit_code == 0, packed.output
    assert "changed: resources.nodes: 4 -> 2: --repack: the same 320 ranks (4 x 80 on niagara)" in packed.output
    assert "nodes: 2" in packed.stdout and "tasks_per_node: 160" in packed.stdout


def test_a_niagara_job_on_a_by_core_cluster_asks_for_the_node_it_used_to_fill():
    data = {"name": "omp", "profile": "niagara", "kind": "threaded", "resources": {"time": "12h"}, "launch": "./omp"}
    assert changed(port(data, to="nibi")) == {"profile": ("niagara", "nibi"), "resources.cpus_per_task": (None, 40),
                                               "resources.mem": (None, "188G")}


def test_a_trillium_gpu_job_on_a_by_core_cluster_gets_its_gpus_bundle_not_a_whole_nodes_memory():
    data = {"name": "t", "profile": "trillium", "kind": "gpu", "resources": {"gpus": "h100:1", "time": "3h"}, "launch": "python t.py"}
    ported = port(data, to="nibi")
    assert changed(ported) == {"profile": ("trillium", "nibi")}
    d = dict(resolve(spec_from_mapping({**ported.spec, "account": "def-x"}), load_profile("nibi")).plan.directives)
    assert (d["--cpus-per-task"], d["--mem"]) == ("14", "250G")    # one H100's bundle on Nibi, not 749G


def test_memory_requests_are_removed_on_whole_node_sites():
    data = {"name": "omp", "profile": "cedar", "kind": "threaded", "resources": {"cpus_per_task": 48, "mem": "180G", "time": "12h"},
            "launch": "./omp"}
    assert changed(port(data, to="trillium")) == {"profile": ("cedar", "trillium"), "resources.cpus_per_task": (48, 192),
                                                   "resources.mem": ("180G", None)}


def test_a_serial_job_has_no_place_on_a_whole_node_site():
    data = {"name": "s", "profile": "graham", "resources": {"time": "1h"}, "launch": "./a"}
    with pytest.raises(PortRefused, match="whole nodes of 192 cores; a 'serial' job of 1 core"):
        port(data, to="trillium")


def test_a_run_longer_than_the_targets_limit_stops_at_it_and_asks_for_a_checkpoint():
    """Refused, the port wrote nothing; the job now ports at the limit, with a to-do that holds it."""
    data = {"name": "long", "profile": "cedar", "kind": "gpu", "resources": {"gpus": "p100:1", "time": "10d"}, "launch": "python x.py"}
    capped = port(data)
    assert changed(capped)["resources.time"] == ("10d", "7d")
    assert "10d is above fir's maximum walltime of 7d (cedar allowed 28d)" in {c.field: c.why for c in capped.changes}["resources.time"]
    assert [t for t in capped.todos if t.startswith("resources.time")] == [
        "resources.time: the job asked 10d and now stops at fir's 7d: add a stage.checkpoint the program resumes from "
        "(slurmkit then runs a chain of jobs), or check that it finishes in time, then remove this line"]
    data["stage"] = {"checkpoint": {"from": "ckpt", "to": "checkpoints"}}
    ported = port(data)
    assert any("runs as a chain of 2 jobs" in w.message for w in ported.warnings)


def test_the_target_is_the_successor_and_never_a_retired_cluster():
    assert choose_target(load_profile("beluga"), None, load_profile).name == "rorqual"
    with pytest.raises(SlurmkitError, match="graham is retired; port to its successor instead: --to nibi"):
        choose_target(load_profile("cedar"), "graham", load_profile)
    with pytest.raises(SlurmkitError, match="nibi is in service.*give --to CLUSTER"):
        choose_target(load_profile("nibi"), None, load_profile)


def test_an_unknown_source_gpu_is_refused_with_a_did_you_mean():
    data = {"name": "t", "profile": "graham", "kind": "gpu", "resources": {"gpus": "v10:1", "time": "1h"}, "launch": "x"}
    with pytest.raises(PortRefused, match="graham has no GPU called 'v10' \\(did you mean 'v100'\\?\\)"):
        port(data)


# ------------------------------------------------------------------------------------- CLI


def test_cli_writes_the_ported_spec_and_lists_the_changes(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text(yaml.safe_dump(GRAHAM_GPU, sort_keys=False))
    out = tmp_path / "nibi.yaml"
    result = CliRunner().invoke(main, ["port", str(spec), "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "changed: resources.gpus: v100:2 -> h100:2:" in result.stderr
    assert "warning: account: 'rrg-prof' is a RAC allocation" in result.stderr
    assert yaml.safe_load(out.read_text())["profile"] == "nibi"
    again = CliRunner().invoke(main, ["port", str(spec), "-o", str(out)])
    assert again.exit_code == 2 and "already exists; use --force" in again.stderr


def test_cli_refusal_is_one_line_per_reason_with_the_line_and_writes_nothing(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text("name: s\nprofile: graham\nkind: serial\nresources:\n  time: 1h\nlaunch: ./a\n")
    out = tmp_path / "trillium.yaml"
    result = CliRunner().invoke(main, ["port", str(spec), "--to", "trillium", "-o", str(out)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith(f"error: {spec}:3: kind: trillium schedules whole nodes of 192 cores")
    assert lines[-1] == f"error: {spec} cannot move from graham to trillium; nothing written"
    assert "Traceback" not in result.stderr and not out.exists()


def test_cli_needs_to_know_where_the_spec_came_from(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text("name: a\nresources: {time: 1h}\nlaunch: ./a\n")
    result = CliRunner().invoke(main, ["port", str(spec), "--to", "nibi"])
    assert result.exit_code == 2 and "the spec names no cluster; give --from CLUSTER" in result.stderr
    result = CliRunner().invoke(main, ["port", str(spec), "--from", "graham"])
    assert result.exit_code == 0 and "profile: nibi" in result.stdout


# ------------------------------------------------- real scripts: Alliance docs and HPC courses

#: The TensorFlow MultiWorkerMirroredStrategy job of the Alliance TensorFlow page (StdEnv/2020 era).
ALLIANCE_TF_MULTIWORKER = """#!/bin/bash
#SBATCH --nodes 2
#SBATCH --gres=gpu:2
#SBATCH --ntasks-per-node=2
#SBATCH --mem=8G
#SBATCH --time=0-00:30
#SBATCH --output=%N-%j.out
srun -N $SLURM_NNODES -n $SLURM_NNODES config_env.sh
module load gcc/9.3.0 cuda/11.8
export NCCL_BLOCKING_WAIT=1
export XLA_FLAGS=--xla_gpu_cuda_data_dir=$CUDA_HOME
srun launch_training.sh
"""

#: The Graham-era job script of the SHARCNET course "Leveraging HPC to Accelerate Machine Learning".
SHARCNET_COURSE = """#!/bin/bash
#SBATCH --time=0-10:05      # Run time limit (DD-HH:MM)
#SBATCH --account=def-user  # account
#SBATCH --ntasks=4         # Number of MPI processes, default 1
#SBATCH --cpus-per-task=32 # Normally defined for threaded jobs
#SBATCH --gres=gpu:2       # number of GPUs
#SBATCH --mem=120G        # memory request

srun ./myprog
"""

#: The machine-learning tutorial's starting point (its comments are from the Cedar/Béluga/Graham days).
ALLIANCE_ML_TUTORIAL = """#!/bin/bash
#SBATCH --gres=gpu:1       # Request GPU "generic resources"
#SBATCH --cpus-per-task=3  # Cores proportional to GPUs: 6 on Cedar, 10 on Béluga, 16 on Graham.
#SBATCH --mem=32000M       # Memory proportional to GPUs: 32000 Cedar, 47000 Béluga, 64000 Graham.
#SBATCH --time=0-03:00
#SBATCH --output=%N-%j.out
module load python/3.6
virtualenv --no-download $SLURM_TMPDIR/env
source $SLURM_TMPDIR/env/bin/activate
pip install --no-index tensorflow_gpu
python train.py
"""


@pytest.mark.parametrize("old", ["graham", "cedar", "beluga"])
@pytest.mark.parametrize("script", ["ALLIANCE_DDP", "ALLIANCE_TF_MULTIWORKER", "SHARCNET_COURSE", "ALLIANCE_ML_TUTORIAL"])
def test_doc_and_course_scripts_imported_for_an_old_cluster_port_to_its_successor(old, script):
    from slurmkit.port.porting import import_script

    from .test_import import ALLIANCE_DDP  # noqa: F401 - looked up by name below

    text = {**globals(), "ALLIANCE_DDP": ALLIANCE_DDP}[script]
    imported = import_script(text, name="doc", profile=old)
    ported = port(imported.spec)
    assert ported.source == old and ported.target == load_profile(old).status.successor
    assert resolve(spec_from_mapping(ported.spec), load_profile(ported.target)).errors == ()


def test_the_course_scripts_128_cores_for_2_gpus_come_down_to_the_new_advice():
    from slurmkit.port.porting import import_script

    ported = port(import_script(SHARCNET_COURSE, name="course", profile="graham").spec)
    assert changed(ported)["resources.cpus_per_task"] == (32, 7)    # 4 tasks x 7 = nibi's 14 per GPU x 2
    assert "128 cores for 2 GPU(s) is above nibi's 14 per H100" in {c.field: c.why for c in ported.changes}["resources.cpus_per_task"]


def test_versions_of_an_older_day_become_the_nearest_the_new_stack_has():
    from slurmkit.port.porting import import_script

    ported = port(import_script(ALLIANCE_ML_TUTORIAL, name="tut", profile="cedar").spec)
    assert changed(ported)["environment.modules"] == (["python/3.6"], ["python/3.12.4"])
    assert ("python/3.6 is not built for StdEnv/2023; fir's StdEnv/2023 builds of python are 3.10.13, 3.11.5, 3.12.4, "
            "3.13.2, 3.14.2; python/3.12.4 is the nearest of those it builds wheels for (python/3.12 and newer)") \
        in {c.field: c.why for c in ported.changes}["environment.modules"]


OLD_STACK = {"name": "old", "profile": "graham", "kind": "mpi", "resources": {"nodes": 2, "tasks_per_node": 8, "time": "3h"},
             "launch": "./a.out"}


@pytest.mark.parametrize("old, new", [
    ("gcc/9.3.0", "gcc/12.3"), ("openmpi/4.0.3", "openmpi/4.1.5"), ("cuda/11.4", "cuda/12.2"), ("cuda/11.8.0", "cuda/12.2"),
    ("intel/2019u4", "intel/2023.2.1"), ("scipy-stack/2019a", "scipy-stack/2023b"), ("python/3.11.2", "python/3.12.4"),
    ("python/3.8", "python/3.12.4"), ("cudnn/8.2.0", "cudnn/9.2.1.18"), ("nccl/2.12.12", "nccl/2.18.3"),
    ("arrow/8", "arrow/14.0.1"), ("opencv/4.5.1", "opencv/4.8.1"),
])
def test_a_module_the_target_lacks_becomes_the_nearest_version_it_has(old, new):
    ported = port({**OLD_STACK, "environment": {"modules": [old]}})
    assert changed(ported)["environment.modules"] == ([old], [new])
    why = {c.field: c.why for c in ported.changes}["environment.modules"]
    assert f"{old} is not in nibi's stack" in why or f"{old} is not built for StdEnv/2023" in why


@pytest.mark.parametrize("module", ["gcc/12.3", "python/3.12", "python/3.13", "cuda/12.6", "openmpi/4.1.5", "scipy-stack/2025a",
                                    "arrow/24", "opencv/4.13", "cudnn/9.2", "python", "StdEnv/2023", "python/3.14", "cuda/13.2"])
def test_a_module_the_target_has_is_kept_as_written(module):
    ported = port({**OLD_STACK, "environment": {"modules": [module]}})
    assert "environment.modules" not in changed(ported)
    assert not [w for w in ported.warnings if w.field == "environment.modules"]


@pytest.mark.parametrize("module, nearest", [("cudnn/10.1", "cudnn/9.2.1.18"), ("python/3.15", "python/3.14.2"),
                                             ("cuda/14.0", "cuda/13.2")])
def test_a_version_newer_than_the_catalogue_knows_is_kept_with_a_warning(module, nearest):
    """The catalogue and the list of StdEnv/2023 builds are of their day: a newer install may exist."""
    ported = port({**OLD_STACK, "environment": {"modules": [module]}})
    assert "environment.modules" not in changed(ported)
    [warning] = [w.message for w in ported.warnings if w.field == "environment.modules"]
    assert warning.startswith(f"{module} is newer than the {module.split('/')[0]} ")
    assert warning.endswith(f"check that it exists there ('module spider {module}'), or use {nearest}")


def test_a_build_for_another_compiler_gets_that_compiler_before_it():
    """openmpi/5.0.3 is built for StdEnv/2023 with GCC 13.3 only: alone, port loads gcc/13.3 first."""
    ported = port({**OLD_STACK, "environment": {"modules": ["openmpi/5.0.3"]}})
    assert changed(ported)["environment.modules"] == (["openmpi/5.0.3"], ["gcc/13.3", "openmpi/5.0.3"])


@pytest.mark.parametrize("version", ["cuda12-8.8.0", "v2", "latest"])
def test_a_version_spelt_with_words_where_the_catalogue_has_numbers_is_kept_with_a_warning(version):
    """Old sites named versions after what they were built with (cudnn/cuda12-8.8.0): compared
    part by part with the catalogue's numbers, a word must not stop the port with a TypeError."""
    ported = port({**OLD_STACK, "environment": {"modules": [f"cudnn/{version}"]}})
    assert "environment.modules" not in changed(ported)
    assert [w.message for w in ported.warnings if w.field == "environment.modules"][0].startswith(
        f"cudnn/{version} is newer than the cudnn versions of nibi's module catalogue")


def test_a_family_the_catalogue_does_not_list_is_kept_with_a_warning_naming_the_nearest():
    ported = port({**OLD_STACK, "environment": {"modules": ["pyhton/3.11", "gaussian/g16.c01"]}})
    assert "environment.modules" not in changed(ported)
    warnings = [w.message for w in ported.warnings if w.field == "environment.modules"]
    assert warnings[0].startswith("pyhton/3.11: 'pyhton' is not in nibi's module catalogue (did you mean 'python': python/3.10.13, ")
    assert len(warnings) == 1   # gaussian/g16.c01 is installed on Nibi (the Gaussian page)


def test_a_family_a_cluster_has_none_of_is_said_not_installed_there():
    to = choose_target(load_profile("cedar"), "rorqual", load_profile)
    data = {"name": "g", "profile": "cedar", "account": "def-x", "resources": {"time": "1h", "cpus_per_task": 16},
            "environment": {"modules": ["gaussian/g16.c01"]}, "launch": {"shell": "g16 < a.com > a.log"}}
    ported = port_spec(copy.deepcopy(data), spec_from_mapping(data), load_profile("cedar"), to)
    assert [t for t in ported.todos if t.startswith("environment.modules: gaussian is not installed on rorqual")]


def test_a_pinned_version_of_a_family_listed_without_versions_is_a_to_do():
    """perl/5.30.2 is installed on Nibi (the site's module list) but is no StdEnv/2023 build: the
    port moves it to the one there is; a family name alone stays quiet."""
    ported = port({**OLD_STACK, "environment": {"modules": ["perl/5.30.2", "nextflow"]}})
    assert changed(ported)["environment.modules"] == (["perl/5.30.2", "nextflow"], ["perl/5.36.1", "nextflow"])
    assert not [w for w in ported.warnings if w.field == "environment.modules"]
    assert not [t for t in ported.todos if "perl" in t]


def test_a_pinned_version_of_a_family_without_an_installed_list_is_a_to_do():
    """Where the profile lists neither the versions of a family nor those installed, the port
    cannot tell, and says so."""
    from slurmkit.sites.modulecat import check_module

    assert check_module("perl/5.30.2", ["perl"], "nibi", stdenv="StdEnv/2023").warning == (
        "check that perl/5.30.2 loads under StdEnv/2023: module spider perl/5.30.2 (the catalogue lists the family, not its versions)")


def test_every_module_a_profile_names_is_in_its_catalogue():
    from slurmkit.core.bundled import profiles_dir
    from slurmkit.sites.modulecat import families, is_available

    for name in sorted(p.stem for p in profiles_dir().glob("*.yaml") if p.stem != "alliance"):
        profile = load_profile(name)
        table = families(profile.software.catalogue)
        for module in filter(None, profile.software.modules.values()):
            if table:
                family, _, version = module.partition("/")
                assert family in table and (not version or is_available(version, table[family])), (name, module)


def test_a_lasting_virtualenv_built_under_the_old_stack_must_be_rebuilt(tmp_path, monkeypatch):
    data = {**OLD_STACK, "kind": "serial", "resources": {"time": "1h"}, "account": "def-prof",
            "environment": {"modules": ["StdEnv/2020", "python/3.8"], "venv": {"path": "$HOME/envs/py38"}}}
    ported = port(data)
    assert ported.todos == ("environment.venv.path: $HOME/envs/py38 was built under StdEnv/2020 and python/3.8 on graham; a "
                            "virtualenv works only with the Python, StdEnv and CPUs it was made with: rebuild it for nibi's stack, "
                            "under StdEnv/2023 and python/3.12.4 (virtualenv --no-download, pip install --no-index -r requirements.txt), "
                            "then remove this line",
                            "launch.command: ./a.out is a program from your folders, built on graham under StdEnv/2020 and python/3.8: "
                            "rebuild it for nibi's stack, under StdEnv/2023 and python/3.12.4 (load the modules it needs, build it "
                            "again), then remove this line")
    # In the ported file it is a to-do, so `slurmkit check` does not say "no problems" until it is done.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(main, ["port", "job.yaml", "-o", "ported.yaml"])
    assert result.exit_code == 0, result.output
    assert "to do: environment.venv.path: $HOME/envs/py38 was built under" in result.output
    check = CliRunner().invoke(main, ["check", "ported.yaml"])
    assert "environment.venv.path: $HOME/envs/py38 was built under" in check.output and "no problems" not in check.output
    # A venv built per job (no path) needs nothing.
    per_job = {**data, "environment": {"modules": ["StdEnv/2020", "python/3.8"], "venv": {"requirements": "r.txt"}}}
    assert not [t for t in port(per_job).todos if "virtualenv" in t]


def test_a_count_pinned_to_the_old_ranks_per_node_is_flagged_only_when_repacking_changes_it():
    data = {**NIAGARA_MPI, "environment": {"variables": {"RANKS_PER_NODE": "40"}}}
    assert not [w for w in port(data).warnings if w.field.startswith("environment.")]      # still 40 per node
    flagged = [w for w in port_repacked(data).warnings if w.field.startswith("environment.")]
    assert [w.field for w in flagged] == ["environment.variables.RANKS_PER_NODE"]
    assert "on trillium it has 160" in flagged[0].message                                   # 160 ranks on 1 node


def test_a_thread_count_pinned_to_the_old_nodes_cores_is_flagged():
    data = {"name": "tf", "profile": "niagara", "kind": "threaded", "resources": {"time": "1h"}, "launch": "python tf.py",
            "environment": {"variables": {"TF_NUM_INTRAOP_THREADS": "40", "TF_NUM_INTEROP_THREADS": "2"},
                            "modules": ["python/3.12"]}}
    ported = port(data)
    flagged = [w for w in ported.warnings if w.field.startswith("environment.")]
    assert [w.field for w in flagged] == ["environment.variables.TF_NUM_INTRAOP_THREADS"]   # python/3.12 is trillium's 3.12.4
    assert "on trillium it has 192" in flagged[0].message


GRAHAM_DDP = {"name": "ddp", "profile": "graham", "kind": "ddp", "resources": {"nodes": 2, "gpus": "t4:4", "mem": "64G", "time": "1h"},
              "launch": "python train.py"}


def test_gpus_spread_over_half_used_nodes_are_kept_with_a_note_naming_repack():
    ported = port(GRAHAM_DDP, to="nibi")
    assert changed(ported)["resources.gpus"] == ("t4:4", "h100:4") and "resources.nodes" not in changed(ported)
    assert ported.notes == ("resources.nodes: nibi's nodes hold 8 of these GPUs: the 8 GPUs are kept as 2 nodes x 4; "
                            "slurmkit port --repack puts them on 1 node (NVLink between them, no network)",)
    assert "# note: resources.nodes: nibi's nodes hold 8 of these GPUs" in ported_text(ported)


def test_repack_puts_the_gpus_on_as_few_nodes_as_hold_them_with_their_memory():
    ported = port_repacked(GRAHAM_DDP, to="nibi")
    assert changed(ported) == {"profile": ("graham", "nibi"), "resources.gpus": ("t4:4", "h100:8"), "resources.nodes": (2, 1),
                               "resources.mem": ("64G", "128G")}
    why = {c.field: c.why for c in ported.changes}
    assert why["resources.nodes"] == "--repack: the same 8 GPUs (2 x 4 on graham) on 1 node of 8"
    assert why["resources.mem"] == "--repack: 64G per node for 4 GPUs is 128G for 8"
    assert ported.todos == ()


def test_repack_of_a_lightning_job_says_the_trainer_must_follow():
    ported = port_repacked({**GRAHAM_DDP, "kind": "lightning"}, to="nibi")
    assert changed(ported)["resources.nodes"] == (2, 1)
    assert ported.todos == ("the program's Trainer(num_nodes=..., devices=...) must say 1 node(s) of 8 GPUs, "
                            "as SLURM now runs it (it said 2 of 4) on nibi",)


def test_gpus_that_fill_their_nodes_or_a_site_of_fixed_counts_are_not_packed():
    assert port(GRAHAM_DDP, to="trillium").notes == ()            # 1 or 4 GPUs a node there
    one = {**GRAHAM_DDP, "resources": {**GRAHAM_DDP["resources"], "nodes": 1}}
    assert port(one, to="nibi").notes == () and "resources.nodes" not in changed(port_repacked(one, to="nibi"))


def test_repack_scales_a_written_tasks_per_node_with_the_gpus():
    data = {**GRAHAM_DDP, "resources": {**GRAHAM_DDP["resources"], "tasks_per_node": 4}}
    ported = port_repacked(data, to="nibi")
    assert changed(ported)["resources.tasks_per_node"] == (4, 8) and changed(ported)["resources.nodes"] == (2, 1)
    assert resolve(spec_from_mapping(ported.spec), load_profile("nibi")).errors == ()
    one = {**GRAHAM_DDP, "resources": {"nodes": 2, "gpus": "t4:1", "mem": "40G", "time": "1h"}}
    why = {c.field: c.why for c in port_repacked(one, to="nibi").changes}
    assert why["resources.mem"] == "--repack: 40G per node for 1 GPU is 80G for 2"


# ---------------------------------------------------------------- module lines kept as written

KEPT_MODULES = {"name": "old", "profile": "cedar", "account": "def-prof", "resources": {"time": "1h"},
                "environment": {"modules": ["StdEnv/2020"]}, "launch": {"command": "app"}}    # on PATH: nothing to rebuild


def test_a_module_line_in_a_kept_block_is_ported_as_the_specs_modules_are():
    setup = ['if [ -n "$OLD" ]; then\n    module load StdEnv/2018.3 gcc/7.3.0\nfi', "f() { ml NiaEnv/2019b; }"]
    ported = port({**KEPT_MODULES, "environment": {"modules": ["StdEnv/2020"], "setup": setup}})
    assert ported.spec["environment"]["setup"] == ['if [ -n "$OLD" ]; then\n    module load StdEnv/2023 gcc/12.3\nfi',
                                                   "f() { ml NiaEnv/2019b; }"]
    # another site's own stack in a Cedar job leaves nothing to load in its place: the user's to change
    assert ported.todos == ("environment.setup[1]: `ml NiaEnv/2019b` (its line 1) is kept as written, and port does not rewrite "
                            "it: NiaEnv/2019b is one site's own module stack, which fir does not have; change it for fir, then "
                            "remove this line",)
    (change,) = [c for c in ported.changes if c.field == "environment.setup"]
    assert str(change).startswith("environment.setup: `module load StdEnv/2018.3 gcc/7.3.0` (its line 2) -> "
                                  "`module load StdEnv/2023 gcc/12.3`: StdEnv/2018.3 is deprecated")


def test_a_kept_module_line_port_cannot_rewrite_is_a_to_do():
    """After `module use`, the user's own modules load beside the stack's: port leaves the line to the user."""
    setup = ["module use $HOME/modules", 'if [ -n "$OLD" ]; then\n    module load StdEnv/2018.3 mytool/1.0\nfi']
    ported = port({**KEPT_MODULES, "environment": {"modules": ["StdEnv/2020"], "setup": setup}})
    assert ported.todos == (
        "environment.setup[1]: `module load StdEnv/2018.3 mytool/1.0` (its line 2) is kept as written, and port does not "
        "rewrite it: StdEnv/2018.3 is not fir's standard environment, StdEnv/2023; change it for fir, then remove this line",)
    assert ported.spec["environment"]["setup"] == setup   # as written: the user changes it


def test_module_lines_that_load_on_the_target_or_from_the_users_own_folder_are_left_alone():
    setup = ["for m in a b; do\n  module load gcc/12.3 StdEnv/2023\ndone", "module use $HOME/modules", "module load mytool/1.0"]
    assert port({**KEPT_MODULES, "environment": {"modules": ["StdEnv/2020"], "setup": setup}}).todos == ()
    ported = port({**KEPT_MODULES, "launch": {"shell": "module load StdEnv/2020 && app"}})
    assert (ported.todos, ported.spec["launch"]["shell"]) == ((), "module load StdEnv/2023 && app")


# ------------------------------------------------------------- mem: node on part of a node's cores


def cedar_all_memory(**resources):
    return {"name": "m", "profile": "cedar", "kind": "mpi", "resources": {"mem": "node", "time": "1h", **resources},
            "launch": "./app"}


@pytest.mark.parametrize("resources, mem", [
    ({"tasks_per_node": 40}, "156G"),                      # 187G x 40 / 48 = 155.8G, rounded up to a whole G
    ({"tasks_per_node": 4, "cpus_per_task": 2}, "32G"),    # 187G x 8 / 48 = 31.2G
    ({"nodes": 2, "tasks_per_node": 24}, "94G"),           # per node: half of each 187G node
])
def test_all_of_a_node_s_memory_for_part_of_its_cores_becomes_that_share_on_bigger_nodes(resources, mem):
    ported = port(cedar_all_memory(**resources), to="fir")
    assert changed(ported)["resources.mem"] == ("node", mem)
    why = next(c.why for c in ported.changes if c.field == "resources.mem")
    assert "cedar" in why and "of its 48 cores" in why and "187G" in why and "fir" in why


def test_all_of_a_node_s_memory_for_all_its_cores_becomes_that_memory_on_a_bigger_node():
    """48 ranks filled a Cedar node (187G); a Fir node has 192 cores and 750G: mem: node would
    hold all of it, charged as the whole node, for the same 48 ranks. They get the 187G they had."""
    assert changed(port(cedar_all_memory(tasks_per_node=48), to="fir"))["resources.mem"] == ("node", "187G")


def test_all_of_a_node_s_memory_is_dropped_on_a_whole_node_site():
    data = {"name": "m", "profile": "cedar", "kind": "threaded", "resources": {"cpus_per_task": 40, "mem": "node", "time": "1h"},
            "launch": "./omp"}
    assert changed(port(data, to="trillium"))["resources.mem"] == ("node", None)


@pytest.mark.parametrize("gpus, mem", [(2, None), (4, "node")])
def test_all_of_a_gpu_node_s_memory_for_part_of_its_gpus_becomes_the_gpus_share(gpus, mem):
    """--mem=0 with 2 GPUs on Cedar held a Cedar node's memory; on Fir (4 H100s, 1125G) it would
    hold all 1125G, charged as 4 GPUs: the request is dropped, so the job gets its 2 GPUs' share.
    A job that asks every GPU of the node keeps it."""
    data = {"name": "g", "profile": "cedar", "kind": "gpu", "resources": {"gpus": gpus, "cpus_per_task": 16, "mem": "node",
                                                                         "time": "1h"}, "launch": "python t.py"}
    ported = port(data, to="fir")
    assert ported.spec["resources"].get("mem") == mem
    if mem is None:
        why = {c.field: c.why for c in ported.changes}["resources.mem"]
        assert "1125G of a fir GPU node for 2 of its 4 GPUs" in why and "Allocations_and_compute_scheduling" in why


@pytest.mark.parametrize("module", ["gnu-parallel", "gnu-parallel/20191122", "parallel/20220722"])
def test_a_gnu_parallel_module_goes_where_parallel_needs_none(module):
    """On the Alliance stack `parallel` is on PATH without a module (the GNU Parallel page's
    scripts load none): a module for it would not be found, so the port drops it and says why."""
    data = {"name": "p", "profile": "cedar", "kind": "threaded", "resources": {"cpus_per_task": 8, "time": "1h"},
            "environment": {"modules": ["StdEnv/2023", module]}, "launch": {"shell": "parallel -j 8 ./one {} ::: a b"}}
    ported = port(data)
    assert changed(ported)["environment.modules"] == (["StdEnv/2023", module], ["StdEnv/2023"])
    assert f"{module}: GNU Parallel is on PATH on fir without a module" in {c.field: c.why for c in ported.changes}["environment.modules"]
    assert not any("catalogue" in t for t in ported.todos)


@pytest.mark.parametrize("to, model, others", [("nibi", "h100", "AMD MI300A"), ("fir", "h100", "1g.10gb"), ("narval", "a100", "1g.5gb")])
def test_an_untyped_gpu_takes_the_targets_whole_gpu_where_it_could_get_a_slice_or_another_makers(to, model, others):
    """On Nibi an untyped request may land on an MI300A (AMD: CUDA code cannot use it) and is
    sized from those nodes; on Fir and Narval it may get a MIG slice of 5 or 10 GB."""
    job = {"name": "t", "profile": "graham", "account": "def-x", "resources": {"time": "1h", "gpus": 1, "mem": "8G"},
           "launch": {"command": ["python", "a.py"]}}
    change = {c.field: c for c in port(job, to=to).changes}["resources.gpus"]
    assert (change.old, change.new) == (1, model) and others in change.why and "any GPU model on graham" in change.why


def test_an_untyped_gpu_stays_untyped_where_the_target_has_one_kind_of_gpu():
    job = {"name": "t", "profile": "graham", "account": "def-x", "resources": {"time": "1h", "gpus": 1},
           "launch": {"command": ["python", "a.py"]}}
    assert "resources.gpus" not in {c.field for c in port(job, to="trillium").changes}


@pytest.mark.parametrize("to, whole, first, page", [
    ("fir", "H100 80G", "nvidia_h100_80gb_hbm3_1g.10gb", None),
    ("nibi", "H100 80G", "h100_1g.10gb", "https://docs.alliancecan.ca/wiki/Nibi/en"),
    ("rorqual", "H100 80G", "h100_1g.10gb", "https://docs.alliancecan.ca/wiki/Rorqual/en"),
    ("narval", "A100 40G", "a100_1g.5gb", None),
])
@pytest.mark.parametrize("gres", ["--gres=gpu:1", "--gpus-per-node=1"])
def test_one_untyped_gpu_says_it_now_holds_a_whole_one_and_names_the_mig_instances(to, whole, first, page, gres):
    """An untyped GPU becomes the target's whole GPU (the request is not changed further); the
    one note of that change says so and spells every MIG instance of it the profile offers, each
    a request the target resolves, with the profile's page for them where it cites one."""
    from slurmkit.port.porting import import_script

    script = f"#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n#SBATCH {gres} --cpus-per-task=2 --mem=8G\npython a.py\n"
    data = import_script(script, name="t", profile="cedar").spec
    ported = port(data, to=to)
    assert [c.field for c in ported.changes if "MIG" in c.why] == ["resources.gpus"]
    assert not [said for said in (*ported.notes, *ported.todos, *(w.message for w in ported.warnings)) if "MIG" in said]
    change = next(c for c in ported.changes if c.field == "resources.gpus")
    assert change.new == whole.split()[0].lower()
    assert f"the job now holds a whole {whole}; a job that needs less can ask for a MIG instance of it instead, gpus: {first} (" \
        in change.why
    target = load_profile(to)
    instances = [mig.gres for t in target.node_types if t.gpus for mig in t.gpus.mig]
    assert all(name in change.why for name in instances)
    assert (f"({page})" in change.why) if page else "https://" not in change.why
    for name in instances:
        asked = copy.deepcopy(ported.spec)
        asked["resources"]["gpus"] = name
        assert resolve(spec_from_mapping(asked, source="job.yaml"), target).errors == ()


def test_several_untyped_gpus_get_no_mig_advice():
    """A MIG instance is one per job: a job of 4 GPUs is told only why its GPUs are typed."""
    job = {"name": "t", "profile": "cedar", "account": "def-x", "kind": "multigpu",
           "resources": {"time": "1h", "gpus": 4, "mem": "32G"}, "launch": {"command": ["python", "a.py"]}}
    why = {c.field: c.why for c in port(job, to="fir").changes}["resources.gpus"]
    assert "now holds" not in why and "the H100 80G is its whole NVIDIA GPU" in why


def test_an_older_gpu_the_source_never_had_is_ported_as_any_gpu_with_a_to_do():
    """``--gres=gpu:k80:1`` in a script import guessed was Cedar's (Helios had the K80s): no
    refusal; the job asks Fir for a GPU, and a to-do says to check the program runs on it.
    A misspelt name of the source's own GPUs is still refused, with the spelling."""
    data = {"name": "k", "profile": "cedar", "kind": "gpu", "resources": {"time": "1h", "gpus": "k80:1"},
            "launch": {"command": "Rscript a.R"}}
    ported = port(data, to="fir")
    assert ported.spec["resources"]["gpus"] == "h100:1"
    assert any("k80 GPUs, which cedar never had" in todo for todo in ported.todos)
    with pytest.raises(PortRefused, match="did you mean"):
        port({**data, "resources": {"time": "1h", "gpus": "v100k:1"}}, to="fir")


def test_a_whole_node_asked_with_exclusive_keeps_its_node_memory():
    """--exclusive --mem=0 and no core count: the job had a whole node (a 48-thread program); its
    memory is not cut to one core's share, and the node stays the job's alone."""
    data = {"name": "x", "profile": "cedar", "kind": "serial", "resources": {"time": "4h", "nodes": 1, "mem": "node"},
            "launch": {"command": "./omp_prog"}, "extra_directives": ["--exclusive"]}
    ported = port(data, to="fir")
    assert ported.spec["resources"]["mem"] == "node" and ported.spec["extra_directives"] == ["--exclusive"]
    assert any("drop --exclusive and ask cpus_per_task: 48" in str(n) for n in ported.notes), ported.notes
    assert port({**data, "extra_directives": []}, to="fir").spec["resources"]["mem"] == "4G"


@pytest.mark.parametrize("venv, moved", [({"packages": ["numpy"]}, True), ({"requirements": "req.txt"}, True),
                                         ({"path": "$HOME/env", "packages": ["numpy"]}, False), ({"path": "$HOME/env"}, False)])
def test_a_python_without_wheels_moves_only_where_the_job_builds_its_packages_anew(venv, moved):
    """python/3.10 is still on Fir, with no wheels built for it: a job that makes its venv in
    $SLURM_TMPDIR each run loses nothing by 3.12; one that reuses a venv keeps the python it has.
    (A spec that pins StdEnv/2023, Fir's own, keeps every version: test_stdenv_builds.)"""
    data = {"name": "p", "profile": "cedar", "account": "def-x", "kind": "serial", "resources": {"time": "1h"},
            "environment": {"modules": ["StdEnv/2020", "python/3.10"], "venv": venv}, "launch": {"command": "python t.py"}}
    ported = port_spec(copy.deepcopy(data), spec_from_mapping(data), load_profile("cedar"), load_profile("fir"))
    assert ("python/3.12.4" in ported.spec["environment"]["modules"]) is moved
    assert bool([w for w in ported.warnings if "still builds wheels for" in w.message]) is not moved   # check's warning stays


@pytest.mark.parametrize("step", ["--gres=gpu:1", "--gres=gpu:v100:1"])
def test_the_jobs_own_gpu_steps_name_the_type_the_ported_header_asks(step):
    """An untyped step under the typed --gpus-per-node the port writes is refused by Slurm, and an
    old type is not on the new cluster: each step names the new type; check is then quiet."""
    shell = f"srun --ntasks=1 {step} --exclusive python t.py --fold 0 &\nsrun --ntasks=1 {step} python t.py --fold 1 &\nwait"
    data = {"name": "s", "profile": "beluga", "account": "def-x", "kind": "mpi",
            "resources": {"time": "1h", "tasks_per_node": 2, "gpus": "v100:2" if ":" in step[7:] else 2},
            "environment": {"venv": {"path": "$HOME/env"}}, "launch": {"shell": shell, "launcher": "direct"}}
    ported = port(data, to="rorqual")
    assert ported.spec["launch"]["shell"].count("--gres=gpu:h100:1") == 2, ported.spec["launch"]
    assert not [w for w in resolve(spec_from_mapping(ported.spec), load_profile("rorqual")).warnings if "names no GPU type" in w.message]
