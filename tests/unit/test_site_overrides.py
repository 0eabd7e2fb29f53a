"""What a user's own profiles and templates change: MPI flavour, template blocks, `new`'s questions."""

import pytest

from slurmkit.api.job import Job
from slurmkit.api.scaffold import scaffold


def _user_profile(tmp_path, monkeypatch, flavour):
    folder = tmp_path / "site_profiles"
    folder.mkdir()
    (folder / "mylab.yaml").write_text(f"name: mylab\nextends: local\nlaunch:\n  mpi:\n    flavour: {flavour}\n    bind_flags: null\n")
    monkeypatch.chdir(tmp_path)


def _mpirun_job():
    return Job(name="m", profile="mylab", account="def-test", kind="mpi",
               resources={"time": "1h", "nodes": 2, "tasks_per_node": 2, "cpus_per_task": 1},
               launch={"command": "./app", "launcher": "mpirun"})


def test_intel_mpi_sites_pin_with_i_mpi_variables_and_take_placement_from_slurm(tmp_path, monkeypatch):
    _user_profile(tmp_path, monkeypatch, "intelmpi")
    plan = _mpirun_job().resolve().plan
    assert tuple(map(str, plan.launcher)) == ("mpirun", "-np", "\"${SLURM_NTASKS:-$SLURM_NNODES}\"")
    assert ("I_MPI_PIN_DOMAIN", "omp") in plan.environment and ("I_MPI_DEBUG", "4") in plan.environment


def test_mvapich2_sites_bind_with_mv2_variables(tmp_path, monkeypatch):
    _user_profile(tmp_path, monkeypatch, "mvapich2")
    plan = _mpirun_job().resolve().plan
    assert tuple(map(str, plan.launcher)) == ("mpirun", "-np", "\"${SLURM_NTASKS:-$SLURM_NNODES}\"")
    assert ("MV2_CPU_BINDING_POLICY", "hybrid") in plan.environment
    assert str(dict(plan.environment)["MV2_THREADS_PER_PROCESS"]) == "\"${SLURM_CPUS_PER_TASK:-1}\""


def test_open_mpi_is_the_default_flavour_with_report_bindings(tmp_path, monkeypatch):
    _user_profile(tmp_path, monkeypatch, "openmpi")
    plan = _mpirun_job().resolve().plan
    assert tuple(map(str, plan.launcher)) == ("mpirun", "-np", "\"${SLURM_NTASKS:-$SLURM_NNODES}\"", "--bind-to", "core", "--map-by",
                                              "slot:PE=\"${SLURM_CPUS_PER_TASK:-1}\"", "--report-bindings")
    assert not any(name.startswith(("I_MPI", "MV2")) for name, _ in plan.environment)


@pytest.mark.parametrize("profile", ["nibi", "trillium", "rorqual"])
def test_a_job_loading_intel_mpi_gets_intel_mpis_binding_not_the_sites_open_mpi_flags(profile):
    """Intel MPI's hydra stops on an argument it does not know: Open MPI's --map-by or the
    site's own bind_flags (Open MPI's) would end the job before any rank starts."""
    job = Job(name="m", profile=profile, account="def-x", kind="mpi",
              resources={"time": "1h", "nodes": 1, "tasks_per_node": 4},
              environment={"modules": ["StdEnv/2023", "intel/2023.2.1", "intelmpi/2021.9.0"]},
              launch={"command": "./app", "launcher": "mpirun"})
    plan = job.resolve().plan
    assert tuple(map(str, plan.launcher)) == ("mpirun", "-np", "\"${SLURM_NTASKS:-$SLURM_NNODES}\"")
    assert ("I_MPI_PIN_DOMAIN", "omp") in plan.environment


def test_a_template_in_the_working_folder_overrides_the_bundled_one(tmp_path, monkeypatch):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "serial.sbatch.j2").write_text(
        '{% extends "base.sbatch.j2" %}\n{% block stage_in %}\necho "site hook for {{ plan.name }}"\n{% endblock %}\n')
    monkeypatch.chdir(tmp_path)
    script = Job(name="s", profile="nibi", account="def-x", resources={"time": "1h"}, launch="python a.py").render()
    assert 'echo "site hook for s"\n' in script
    assert script.index("site hook") < script.index("python a.py")


def test_new_asks_for_what_the_flags_did_not_say(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    asked = []
    answers = {"Site profile": "nibi",
               "Kind (serial, threaded, mpi, gpu, array, many-tasks, multigpu, ddp, tf-multiworker, horovod, lightning, accelerate)": "gpu",
               "Account": "def-me",
               "Time limit (e.g. 3h, 1-00:00:00)": "2h", "GPUs per node (MODEL:COUNT; h100, mi300a)": "h100:2",
               "Command": "python train.py"}

    def ask(prompt, default=None):
        asked.append((prompt, default))
        return answers[prompt]

    written = scaffold("job1", ask=ask, env={"SBATCH_ACCOUNT": "def-env"})
    assert [p for p, _ in asked] == list(answers)
    assert dict(asked)["Account"] == "def-env"            # the default comes from SBATCH_ACCOUNT
    assert dict(asked)["GPUs per node (MODEL:COUNT; h100, mi300a)"] == "h100:1"
    script = written[1].read_text()
    assert "#SBATCH --gpus-per-node=h100:2\n" in script and "#SBATCH --time=0-02:00:00\n" in script
