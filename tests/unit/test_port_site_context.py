"""What belongs to the old cluster does not travel silently: a dependency on one of its job ids,
and (on Trillium) a job that writes under /project, read-only inside jobs there, or names a
Niagara-only path. Each becomes a to-do of the spec, which ``check`` reports until done."""

import copy

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.port.porting import import_script
from slurmkit.port.retarget import choose_target, port_spec, ported_text
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

HEADER = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n"
JOB = {"name": "t", "account": "def-x", "resources": {"time": "1h"}, "launch": {"command": ["python", "a.py"]}}


def port(data, to=None):
    source = load_profile(data["profile"])
    target = choose_target(source, to, load_profile)
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), source, target)


def todos_of(imported):
    return [f"{n.text}: {n.reason}" for n in imported.unmapped]


# ------------------------------------------------------------------ a dependency on an old job id

def test_import_leaves_out_a_dependency_on_an_old_job_id_with_a_to_do_saying_how_to_wait():
    imported = import_script(HEADER + "#SBATCH --dependency=afterok:17035229\n./app\n", name="t", profile="graham")
    assert "dependencies" not in imported.spec
    [todo] = todos_of(imported)
    assert "17035229" in todo and "slurmkit submit SPEC --after JOBID" in todo


def test_import_says_the_type_of_wait_to_ask_for_again():
    imported = import_script(HEADER + "#SBATCH -d afterany:12:13\n./app\n", name="t", profile="narval")
    [todo] = todos_of(imported)
    assert "12, 13" in todo and "--after-type any" in todo and "{after: any, jobs: [JOBID]}" in todo


def test_a_dependency_the_spec_cannot_say_is_left_out_with_a_to_do():
    imported = import_script(HEADER + "#SBATCH --dependency=singleton\n./app\n", name="t", profile="narval")
    assert "dependencies" not in imported.spec
    assert ["--dependency=singleton" in t for t in todos_of(imported)] == [True]


def test_port_to_another_cluster_drops_the_old_clusters_job_ids_with_a_to_do_check_reports(tmp_path, monkeypatch):
    data = {**JOB, "profile": "graham", "dependencies": [{"after": "ok", "jobs": [17035229]}]}
    ported = port(data)
    assert "dependencies" not in ported.spec
    assert any(t.startswith("dependencies: the job waited for job 17035229 of graham") for t in ported.todos)
    (tmp_path / "p.yaml").write_text(ported_text(ported))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "p.yaml"])
    assert "no problems found" not in result.output and "17035229" in result.output


def test_a_port_to_the_same_cluster_keeps_its_dependencies():
    data = {**JOB, "profile": "narval", "dependencies": [{"after": "ok", "jobs": [5]}]}
    assert port(data, to="narval").spec["dependencies"] == [{"after": "ok", "jobs": [5]}]


# ------------------------------------------- Trillium: /project is read-only inside jobs; Niagara's own paths

NIAGARA = {"name": "t", "profile": "niagara", "kind": "threaded", "resources": {"time": "1h", "nodes": 1, "cpus_per_task": 40}}


def niagara_job(setup, shell):
    return {**NIAGARA, "environment": {"setup": setup}, "launch": {"shell": shell}}


def test_a_job_that_cds_into_project_and_runs_there_gets_a_to_do_on_trillium():
    ported = port(niagara_job(["cd $PROJECT/run1"], "./model"))
    [todo] = [t for t in ported.todos if "read-only inside trillium jobs" in t]
    assert todo.startswith("launch.shell: the program runs in $PROJECT/run1") and "$SCRATCH" in todo


def test_an_output_written_under_project_gets_a_to_do_naming_what_writes_it():
    ported = port(niagara_job(["mkdir -p /project/def-x/out"], "python a.py > ${PROJECT}/out/log.txt"))
    todos = [t for t in ported.todos if "read-only inside trillium jobs" in t]
    assert [t.split(":")[0] for t in todos] == ["environment.setup[0]", "launch.shell"]
    assert "`> ${PROJECT}/out/log.txt` writes ${PROJECT}/out/log.txt, under $PROJECT" in todos[1]


def test_a_job_that_writes_in_scratch_and_reads_project_gets_none():
    ported = port(niagara_job(["cd $SCRATCH/run1", "cp $PROJECT/in.dat ."], "python a.py --in $PROJECT/in.dat > out.log"))
    assert not [t for t in ported.todos if "read-only" in t]


def test_niagara_only_paths_ported_off_niagara_are_named_in_a_to_do(tmp_path, monkeypatch):
    data = niagara_job(["cd /scratch/g/grp/me/run"], "cp -r out /gpfs/fs0/project/g/grp/me/keep")
    ported = port(data)
    [own] = [t for t in ported.todos if "niagara's own layout" in t]
    assert own.startswith("environment.setup[0], launch.shell: /scratch/g/grp/me/run, /gpfs/fs0/project/g/grp/me/keep are paths")
    (tmp_path / "p.yaml").write_text(ported_text(ported))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "p.yaml"])
    assert "no problems found" not in result.output and "/gpfs/fs0/project/g/grp/me/keep" in result.output


def test_niaenv_software_paths_ported_off_niagara_get_a_module_to_do():
    """NiaEnv's /scinet/niagara/software is not on Trillium: a variable naming it needs the new stack's module."""
    ported = port(niagara_job(["export METISROOT=/scinet/niagara/software/2019b/opt/metis/5.1.0"], "./solver"))
    [own] = [t for t in ported.todos if "own layout" in t]
    assert "/scinet/niagara/software/2019b/opt/metis/5.1.0 is a path of niagara's own layout" in own
    assert "load the module of trillium's stack that provides what it held" in own and "$SCRATCH" not in own


def test_a_trillium_layout_path_is_not_taken_for_niagaras():
    ported = port(niagara_job(["cd /scratch/me/run"], "./model"))
    assert not [t for t in ported.todos if "own layout" in t or "read-only" in t]


def test_niagara_paths_in_a_job_imported_for_another_cluster_are_named_in_a_to_do():
    """A Mist script read as Cedar's still names Niagara's /scratch/g/group/user: Fir has no such folder."""
    imported = import_script(HEADER + "#SBATCH --gpus-per-node=1\n#SBATCH --output=/scratch/g/grp/me/out_%j.txt\n"
                             "cd /scratch/g/grp/me\npython train.py\n", name="t", profile="cedar")
    ported = port(imported.spec)
    [own] = [t for t in ported.todos if "own layout" in t]
    assert own.startswith("environment.setup[0], logs.output: /scratch/g/grp/me, /scratch/g/grp/me/out_%j.txt are paths "
                          "of niagara's own layout, which fir does not have")


def test_a_cedar_job_with_its_own_paths_gets_no_layout_to_do():
    imported = import_script(HEADER + "cd /scratch/me/run\npython /project/def-x/me/a.py\n", name="t", profile="cedar")
    assert not [t for t in port(imported.spec).todos if "own layout" in t]


# ------------------------------------------------------------ files that stayed where the old cluster's went

GRAHAM = "python /home/me/projects/def-x/me/run.py --data /home/me/projects/def-x/me/data\n"


def test_a_port_off_the_cluster_that_took_the_files_names_them_in_a_to_do():
    """Graham's /home, /project and /scratch are on Nibi: Fir has none of them."""
    imported = import_script(HEADER + "#SBATCH --output=/scratch/me/logs/%j.out\ncd ~/run\n" + GRAHAM, name="t", profile="graham")
    [files] = [t for t in port(imported.spec, "fir").todos if t.startswith("files:")]
    assert files.startswith("files: the job uses ~/run, /home/me/projects/def-x/me/run.py, /home/me/projects/def-x/me/data, "
                            "/scratch/me/logs/%j.out and the folder it is submitted from; graham's /home, /project and /scratch "
                            "went to nibi, and fir does not mount them: copy what the job reads from nibi to fir first (Globus")


def test_a_port_to_the_cluster_that_took_the_files_asks_nothing():
    imported = import_script(HEADER + GRAHAM, name="t", profile="graham")
    assert not [t for t in port(imported.spec, "nibi").todos if t.startswith("files:")]
    cedar = import_script(HEADER + GRAHAM, name="t", profile="cedar")
    assert not [t for t in port(cedar.spec, "fir").todos if t.startswith("files:")]


def test_a_port_off_a_cluster_in_service_names_its_files_in_a_to_do():
    """Narval's /home, /project and /scratch are Narval's own (its own Globus endpoint): a job
    moved to Fir reads none of them until they are copied."""
    imported = import_script(HEADER + GRAHAM, name="t", profile="narval")
    [files] = [t for t in port(imported.spec, "fir").todos if t.startswith("files:")]
    assert ("narval's /home, /project and /scratch are narval's own, and fir does not mount them: copy what the job "
            "reads from narval to fir first (Globus") in files
    assert not [t for t in port(imported.spec, "narval").todos if t.startswith("files:")]


# ------------------------------------------------------------------ a bare python of an old stack


def test_a_bare_python_of_stdenv_2020_is_ported_as_its_default_and_its_pins_are_checked():
    data = {**JOB, "profile": "cedar", "environment": {"modules": ["gcc/9.3.0", "python"], "venv": {"packages": ["arch==4.19"]}}}
    ported = port(data, "fir")
    [change] = [c for c in ported.changes if c.field == "environment.modules"]
    assert "python/3.12" in str(change) and "python with no version loaded python/3.8 under StdEnv/2020" in str(change)
    assert [t for t in ported.todos if "installs arch==4.19 under python/3.12" in t and "not python 3.8" in t]


def test_a_bare_python_with_no_sign_of_its_stack_is_left_to_the_default_and_its_pins_checked():
    """The default python of cedar's stack is not fir's: a pin may have no wheel for fir's."""
    data = {**JOB, "profile": "cedar", "environment": {"modules": ["python"], "venv": {"packages": ["arch==4.19"]}}}
    ported = port(data, "fir")
    assert ported.spec["environment"]["modules"] == ["python"]
    assert [t for t in ported.todos if "installs arch==4.19 under python on fir now, not python on cedar" in t]


@pytest.mark.parametrize("source, path, to", [("beluga", "/lustre03/project/6008063/me/run", "rorqual"),
                                              ("beluga", "/lustre04/scratch/me", "fir"), ("narval", "/lustre07/scratch/me", "rorqual")])
def test_a_clusters_own_lustre_mounts_are_named_in_a_to_do_off_it(source, path, to):
    """/lustre03/project/GROUP is where Béluga's /project lived (Narval's: /lustre06): no other
    cluster mounts it, and a `cd` into it ends the job at its first line there."""
    data = {**NIAGARA, "profile": source, "resources": {"time": "1h", "cpus_per_task": 4},
            "environment": {"setup": [f"cd {path}"]}, "launch": {"shell": "./model"}}
    [own] = [t for t in port(data, to=to).todos if "own layout" in t]
    assert f"{path} is a path of {source}'s own layout" in own
