"""What the retired clusters had during their lives, beyond Graham's P100s: Cedar's P100 and
P100L nodes (and the `lgpu` name old scripts gave the P100L), and the module stacks before
StdEnv/2020 (StdEnv/2016.4, StdEnv/2018.3, Niagara's NiaEnv). Old scripts that name them import;
`port` moves them to the successor's; `check` says they are old, and refuses a job for the
retired GPUs."""

import datetime

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.core.gpu_names import suggested_gpu_names
from slurmkit.port.porting import import_script, imported_text
from slurmkit.sites.profiles import load_profile

CEDAR = datetime.date(2025, 9, 12)


def _script(gres: str, cores: int, modules: str = "") -> str:
    return ("#!/bin/bash\n#SBATCH --account=def-prof --time=1:00:00\n"
            f"#SBATCH --gres=gpu:{gres} --cpus-per-task={cores}\n{modules}python train.py\n")


def _imported(tmp_path, script: str, profile: str = "cedar"):
    spec = tmp_path / "job.yaml"
    spec.write_text(imported_text(import_script(script, name="old", profile=profile), "old.sh"))
    return spec


def _run(*args):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(autouse=True)
def _here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")


def test_cedar_keeps_its_p100_and_p100l_nodes_retired_with_the_cluster_and_lgpu_as_the_p100l():
    cedar = load_profile("cedar")
    retired = {t.name: t for t in cedar.retired_node_types}
    assert retired["gpu-p100"].retired_on == CEDAR == retired["gpu-p100l"].retired_on
    assert CEDAR == cedar.status.retired_on
    p100, p100l = retired["gpu-p100"], retired["gpu-p100l"]
    assert (p100.gpus.model, p100.gpus.count, p100.gpus.memory_mib, p100.cores) == ("p100", 4, 12 * 1024, 24)
    assert p100.gpus.max_cores_per_gpu == 6
    assert (p100l.gpus.model, p100l.gpus.count, p100l.gpus.memory_mib, p100l.cores) == ("p100l", 4, 16 * 1024, 24)
    assert p100l.gpus.aliases == ("lgpu",)
    assert [t.name for t in cedar.node_types if t.gpus] == ["gpu-v100l"]
    assert "lgpu" not in suggested_gpu_names(cedar)


@pytest.mark.parametrize("gres, model", [("p100:2", "p100"), ("p100l:4", "p100l"), ("lgpu:4", "p100l")])
def test_check_refuses_a_cedar_p100_job_in_one_line_with_the_port_to_run(gres, model, tmp_path):
    _imported(tmp_path, _script(gres, 6))
    result = _run("check", "job.yaml")
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].endswith(
        f"resources.gpus: cedar's {model} GPUs were retired on 2025-09-12: no job runs on them; cedar itself was retired on "
        "2025-09-12: `slurmkit port job.yaml --to fir` moves the job onto fir's hardware"), result.output


@pytest.mark.parametrize("gres, label", [("p100:2", "P100 12G"), ("lgpu:4", "P100L 16G")])
def test_a_cedar_p100_script_ports_to_fir_h100s_with_fir_cores_per_gpu(gres, label, tmp_path):
    count = int(gres.split(":")[1])
    _imported(tmp_path, _script(gres, 6 * count))
    ported = _run("port", "job.yaml", "--to", "fir", "-o", "new.yaml", "--no-verify")
    assert ported.exit_code == 0, ported.output
    said = f"changed: resources.gpus: {gres} -> h100:{count}: cedar's {label} (retired there on 2025-09-12); fir's H100 80G"
    assert said in ported.output, ported.output
    assert f"changed: resources.cpus_per_task: {6 * count} -> {12 * count}: cedar's 6 cores per" in ported.output
    checked = _run("check", "new.yaml")
    assert checked.exit_code == 0 and "error:" not in checked.output, checked.output


@pytest.mark.parametrize("profile, stack, said", [
    ("cedar", "StdEnv/2016.4", "StdEnv/2016.4 is an old stack (GCC 5.4.0, Intel 2016.4, Open MPI 2.1.1; came with Cedar and Graham; "
                               "deprecated)"),
    ("graham", "StdEnv/2018.3", "StdEnv/2018.3 is an old stack (GCC 7.3.0, Intel 2018.3, Open MPI 3.1.2; came with Béluga and "
                                "Niagara; deprecated)"),
    ("niagara", "NiaEnv/2018a", "NiaEnv/2018a is an old stack (Niagara's own stack"),
    ("niagara", "NiaEnv/2019b", "NiaEnv/2019b is an old stack (Niagara's own stack, a later NiaEnv than the documented 2018a; "
                                "UNVERIFIED: seen in user scripts, in no documentation read)"),
])
def test_check_on_a_retired_profile_says_an_old_stack_is_old(profile, stack, said, tmp_path):
    script = ("#!/bin/bash\n#SBATCH --account=def-prof --time=1:00:00 --nodes=1 --ntasks-per-node=40\n"
              f"module load {stack}\nsrun ./app\n")
    _imported(tmp_path, script, profile)
    result = _run("check", "job.yaml")
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and "describes a cluster retired" in errors[0], result.output
    lines = [line for line in result.output.splitlines() if "environment.modules" in line]
    assert len(lines) == 1 and said in lines[0] and "`slurmkit port`" in lines[0], result.output
    assert "catalogue" not in result.output and "unknown" not in result.output


@pytest.mark.parametrize("profile, target, modules, after", [
    ("cedar", "fir", "StdEnv/2016.4 nixpkgs/16.09 gcc/5.4.0", "[StdEnv/2016.4, nixpkgs/16.09, gcc/5.4.0] -> [StdEnv/2023, gcc/12.3]"),
    ("niagara", "trillium", "NiaEnv/2019b gcc/8.3.0", "[NiaEnv/2019b, gcc/8.3.0] -> [StdEnv/2023, gcc/12.3]"),
    ("niagara", "trillium", "NiaEnv/2018a", "[NiaEnv/2018a] -> [StdEnv/2023]"),
])
def test_port_moves_an_old_stack_and_its_base_to_the_successors_stdenv(profile, target, modules, after, tmp_path):
    script = ("#!/bin/bash\n#SBATCH --account=def-prof --time=1:00:00 --nodes=1 --ntasks-per-node=40\n"
              f"module load {modules}\nsrun ./app\n")
    _imported(tmp_path, script, profile)
    ported = _run("port", "job.yaml", "--to", target, "-o", "new.yaml", "--no-verify")
    assert ported.exit_code == 0, ported.output
    assert f"changed: environment.modules: {after}: " in ported.output, ported.output
    assert "warning: environment.modules" not in ported.output, ported.output


def test_submit_refuses_a_cedar_lgpu_job_before_any_sbatch(tmp_path, monkeypatch):
    from slurmkit.api.job import Job
    from slurmkit.core.errors import SpecError

    monkeypatch.setattr("slurmkit.slurm.submit.submit_script", lambda *a, **k: pytest.fail("submitted"))
    with pytest.raises(SpecError, match="cedar's p100l GPUs were retired on 2025-09-12"):
        Job.from_yaml(_imported(tmp_path, _script("lgpu:4", 24, "source ~/env/bin/activate\n"))).submit()
