"""Environments a user builds against one software stack, besides a virtualenv: a Julia project
or depot, an R library, an Lmod collection. Port asks for each to be built again for the new
stack, naming both versions; import makes a saved collection a to-do."""

import copy

import pytest

from slurmkit.port.porting import import_script
from slurmkit.port.retarget import choose_target, port_spec
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

HEAD = "#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --time=1:00:00\n"


def port_todos(body, profile, to=None):
    """The to-dos port writes for the script ``body`` imported on ``profile``."""
    data = import_script(HEAD + body, name="t", profile=profile).spec
    source = load_profile(profile)
    target = choose_target(source, to, load_profile)
    return list(port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), source, target).todos)


def about(todos, word):
    return [t for t in todos if word in t]


# ------------------------------------------------------------------------------------ julia


@pytest.mark.parametrize("launch, option", [("julia --project=$HOME/proj run.jl", "--project=$HOME/proj"),
                                            ("julia --project -t 38 run.jl", "--project"),
                                            ("srun julia --project=../. ../src/run.jl", "--project=../.")])
def test_a_julia_project_under_a_new_julia_is_a_to_do_to_instantiate_it(launch, option):
    todos = about(port_todos(f"module load StdEnv/2020 julia/1.5.2\n{launch}\n", "beluga"), "Pkg.instantiate")
    assert len(todos) == 1, todos
    assert f"julia {option} -e 'using Pkg; Pkg.instantiate(); Pkg.precompile()'" in todos[0]
    assert "julia 1.5.2 and StdEnv/2020 on beluga" in todos[0] and "julia 1.9.3 and StdEnv/2023" in todos[0]
    assert todos[0].startswith("launch.command: ") and todos[0].endswith("then remove this line")


def test_julia_project_named_by_a_variable_and_a_depot_are_one_to_do_with_the_depot():
    body = ("module load StdEnv/2020 julia/1.5.2\nexport JULIA_PROJECT=/project/def-x/proj\n"
            "export JULIA_DEPOT_PATH=/project/def-x/depot\njulia run.jl\n")
    todos = about(port_todos(body, "beluga"), "julia")
    assert len(todos) == 1, todos
    assert todos[0].startswith("environment.variables.JULIA_PROJECT: julia --project=/project/def-x/proj:")
    assert "in the depot /project/def-x/depot (JULIA_DEPOT_PATH)" in todos[0] and "with the same JULIA_DEPOT_PATH" in todos[0]


def test_a_julia_depot_alone_is_a_to_do_to_install_its_environment_again():
    body = "module load StdEnv/2020 julia/1.8.5\nexport JULIA_DEPOT_PATH=/project/def-x/depot\njulia fit.jl\n"
    todos = about(port_todos(body, "graham"), "julia")
    assert len(todos) == 1, todos
    assert todos[0].startswith("environment.variables.JULIA_DEPOT_PATH: /project/def-x/depot holds packages installed under "
                               "julia 1.8.5 and StdEnv/2020 on graham")
    assert "copy environments/v1.8 to environments/v1.9" in todos[0]


def test_plain_julia_whose_minor_version_changes_is_a_to_do_for_its_default_environment():
    todos = about(port_todos("module load StdEnv/2020 julia/1.8.5\njulia fit.jl\n", "graham"), "julia")
    assert len(todos) == 1, todos
    assert "julia/1.8.5 became julia/1.9.3" in todos[0] and "~/.julia/environments/v1.8" in todos[0]


def test_julia_without_a_module_gets_no_julia_to_do():
    assert not about(port_todos("module load StdEnv/2020\njulia --project run.jl\n", "graham"), "julia")


def test_julia_of_the_same_minor_version_needs_a_to_do_for_a_project_on_a_new_cluster_only():
    body = "module load StdEnv/2023 julia/1.11.3\njulia {} fit.jl\n"
    assert not about(port_todos(body.format(""), "narval", to="narval"), "julia")
    assert not about(port_todos(body.format("--project"), "narval", to="narval"), "julia")
    todos = about(port_todos(body.format("--project"), "narval", to="nibi"), "julia")
    assert len(todos) == 1 and "nibi's depot does not hold them" in todos[0], todos


# ---------------------------------------------------------------------------------------- R


@pytest.mark.parametrize("library, field", [("export R_LIBS=/home/me/local/R_libs/", "environment.variables.R_LIBS"),
                                            ("export R_LIBS_USER=$HOME/Rlib", "environment.setup[0]")])
def test_an_r_user_library_is_a_to_do_to_install_its_packages_again(library, field):
    todos = about(port_todos(f"module load StdEnv/2020 r/4.0.2\n{library}\nRscript a.R\n", "cedar"), "R packages")
    assert len(todos) == 1, todos
    assert todos[0].startswith(f"{field}: ")
    assert "under R 4.0.2 and StdEnv/2020 on cedar" in todos[0] and "for fir under R 4.3.1 and StdEnv/2023" in todos[0]


def test_lib_paths_in_rscript_names_the_user_library():
    todos = about(port_todos("module load StdEnv/2020 r/4.0.2\nRscript -e '.libPaths(\"~/Rlib\"); source(\"a.R\")'\n",
                             "cedar"), "R packages")
    assert len(todos) == 1 and todos[0].startswith("launch.command: ~/Rlib holds R packages"), todos


def test_r_default_library_is_a_to_do_when_the_minor_version_changes():
    todos = about(port_todos("module load StdEnv/2020 r/4.0.2\nRscript a.R\n", "graham"), "R packages")
    assert len(todos) == 1, todos
    assert todos[0].startswith("environment.modules: r/4.0.2 became r/4.3.1: ")
    assert "~/R/x86_64-pc-linux-gnu-library/4.0, which R 4.3.1 does not read" in todos[0]


def test_r_default_library_on_the_same_minor_version_needs_nothing_where_the_home_is_mounted():
    assert not about(port_todos("module load StdEnv/2023 r/4.3.1\nRscript a.R\n", "graham", to="nibi"), "R packages")
    assert about(port_todos("module load StdEnv/2023 r/4.4.0\nRscript a.R\n", "narval", to="nibi"), "R packages")


# -------------------------------------------------------------------------- Lmod collections


@pytest.mark.parametrize("line, name", [("module restore analysis", "analysis"), ("ml restore analysis", "analysis"),
                                        ("module -q restore", "default")])
def test_a_saved_module_collection_is_an_import_to_do_and_runs_as_written(line, name):
    imported = import_script(HEAD + f"{line}\npython a.py\n", name="t", profile="cedar")
    todos = [n for n in imported.unmapped if n.text == line]
    assert len(todos) == 1, imported.notes
    assert f"module collection {name}" in todos[0].reason and f"`module describe {name}`" in todos[0].reason
    assert imported.spec["environment"]["setup"] == [line]


def test_restoring_the_system_collection_is_no_to_do():
    imported = import_script(HEAD + "module restore system\npython a.py\n", name="t", profile="cedar")
    assert not [n for n in imported.unmapped if "restore" in n.text]


def test_port_to_a_new_cluster_keeps_the_collection_to_do(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from slurmkit.cli.main import main
    from slurmkit.core.todos import pending_import_notes
    from slurmkit.port.porting import imported_text

    imported = import_script(HEAD + "module restore analysis\npython a.py\n", name="t", profile="cedar")
    (tmp_path / "job.yaml").write_text(imported_text(imported, "job.sh"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["port", "job.yaml", "--to", "nibi", "-o", "nibi.yaml", "--no-verify"])
    assert result.exit_code == 0, result.output
    assert [t for t in pending_import_notes((tmp_path / "nibi.yaml").read_text()) if "module describe analysis" in t]
    checked = CliRunner().invoke(main, ["check", "nibi.yaml"])
    assert "module describe analysis" in checked.output and "no problems found" not in checked.output


def test_a_julia_of_the_old_default_version_is_named_as_the_clusters_default():
    todos = about(port_todos("module load gcc/7.3.0 julia\njulia --project run.jl\n", "graham"), "Pkg.instantiate")
    assert len(todos) == 1 and "under graham's default julia on graham" in todos[0] and "under nibi's default julia" in todos[0]


def test_an_r_user_library_without_an_r_module_is_a_to_do_on_a_new_cluster():
    """A workflow whose steps load R themselves (snakemake) names the library the job exports."""
    todos = about(port_todos("module load StdEnv/2020\nexport R_LIBS=/project/def-x/Rlib\nsnakemake --cores 4\n", "graham"),
                  "R packages")
    assert len(todos) == 1, todos
    assert "under the R the job finds and StdEnv/2020 on graham" in todos[0] and "for nibi under the R the job finds" in todos[0]
    assert "module load None" not in todos[0]
    assert not about(port_todos("module load StdEnv/2023\nexport R_LIBS=/project/def-x/Rlib\nsnakemake\n", "narval", "narval"),
                     "R packages")


# ------------------------------------------------------------------------------------ python


@pytest.mark.parametrize("made", ["virtualenv --no-download $SLURM_TMPDIR/env\nsource $SLURM_TMPDIR/env/bin/activate\n",
                                  "rm -rf $HOME/e\nvirtualenv --no-download $HOME/e\nsource $HOME/e/bin/activate\n",
                                  "virtualenv --no-download ~/ENV\nsource ~/ENV/bin/activate\n",
                                  "python -m venv $HOME/e2\n. $HOME/e2/bin/activate\n"])
def test_a_python_the_jobs_own_venv_runs_reads_no_user_site_and_its_old_pins_are_checked(made):
    """A venv the job makes itself, in environment.venv or in its own lines kept as written: its
    python reads that venv, not ~/.local: no user-site to-do. A package of its own pip lines with
    no wheel for the new python (tensorflow_gpu) gets the wheel to-do, wherever the line is."""
    todos = port_todos(f"module load python/3.7.4\n{made}pip install --no-index tensorflow_gpu numpy\npython fit.py\n", "graham")
    assert not about(todos, "site-packages (pip install --user)"), todos
    (wheel,) = about(todos, "avail_wheels")
    assert "the job installs tensorflow_gpu under python/3.12.4 now, not python 3.7" in wheel and "numpy" not in wheel
    assert "tensorflow holds its GPU support since 2.1, so install tensorflow instead" in wheel


@pytest.mark.parametrize("launch", ["python fit.py", "sh ./produce_dataset.sh", "./run_all.sh"])
def test_a_python_with_no_venv_reads_the_user_site_which_the_new_python_does_not(launch):
    """Run directly or by a script of the user's (whose lines import cannot see): a job that
    loads a python module runs it."""
    todos = port_todos(f"module load python/3.7.4\n{launch}\n", "graham")
    assert len(about(todos, "~/.local/lib/python3.7/site-packages (pip install --user)")) == 1


def test_a_default_python_names_its_user_site_without_a_version_it_does_not_have():
    """``module load python`` (Lmod's default): no minor version to name, never "pythonNone"."""
    (todo,) = about(port_todos("module load python\npython fit.py\n", "graham"), "pip install --user")
    assert "None" not in todo and "~/.local/lib/pythonX.Y/site-packages (X.Y: python on graham" in todo


@pytest.mark.parametrize("conf", ["printf '0-3 ./ocean\\n4-7 ./atmos\\n' > mp.conf\n",
                                  "cat > mp.conf << EOF\n0-3 ./ocean\n4-7 ./atmos\nEOF\n"])
def test_programs_a_multi_prog_file_names_get_the_rebuild_to_do(conf):
    """srun --multi-prog starts what its file names as srun ./ocean would: built on the old stack."""
    todos = port_todos(f"#SBATCH --ntasks=8\nmodule load StdEnv/2020 gcc/9.3.0 openmpi/4.0.3\n{conf}srun --multi-prog mp.conf\n",
                       "cedar")
    assert len(about(todos, "./ocean is a program from your folders")) == 1
    assert len(about(todos, "./atmos is a program from your folders")) == 1


PIP = ("module load python/3.11\nvirtualenv --no-download $SLURM_TMPDIR/env\nsource $SLURM_TMPDIR/env/bin/activate\n"
       "pip install --no-index numpy\npip install progress\npython run.py\n")


def test_a_pip_line_without_no_index_where_compute_nodes_reach_pypi_is_kept_and_moving_offline_is_a_to_do():
    """On Cedar (compute nodes online) ``pip install progress`` could take it from PyPI, and a failure
    did not stop the script: the line stays as written (environment.setup, errexit false), never
    rewritten to --no-index; a port to a cluster whose compute nodes are offline asks about it."""
    spec = import_script(HEAD + PIP, name="t", profile="cedar").spec
    # (both pip lines stay lines: without set -e each failed alone, test_venv_import_port.py)
    assert spec["environment"]["setup"] == ["pip install --no-index numpy", "pip install progress"]
    assert spec["environment"]["errexit"] is False and spec["environment"]["venv"] == {}
    assert not about(port_todos(PIP, "cedar"), "PyPI")   # fir's compute nodes are online too
    (todo,) = about(port_todos(PIP, "cedar", "narval"), "PyPI")
    assert todo.startswith("environment.setup[1]: pip install progress could take from PyPI on cedar") and "narval's do not" in todo
    spec = import_script(HEAD + "set -e\n" + PIP, name="t", profile="cedar").spec   # under set -e the recipe takes numpy
    assert spec["environment"]["setup"] == ["pip install progress"] and spec["environment"]["venv"] == {"packages": ["numpy"]}


def test_a_pip_line_where_compute_nodes_are_offline_found_the_wheelhouse_only_and_is_the_venvs():
    spec = import_script(HEAD + "set -e\n" + PIP, name="t", profile="graham").spec
    assert spec["environment"]["venv"] == {"packages": ["numpy", "progress"]} and "setup" not in spec["environment"]


@pytest.mark.parametrize("old, new, shared", [("cedar", "fir", True), ("graham", "nibi", True), ("beluga", "rorqual", False),
                                              ("cedar", "narval", False)])
def test_an_r_library_on_the_file_systems_the_successor_shares_is_said_to_be_there(old, new, shared):
    """Fir mounts Cedar's /home (status.files_on_successor): the library is there, and its compiled
    packages still need the new stack; Rorqual does not have Béluga's, nor Narval Cedar's."""
    (todo,) = about(port_todos("module load StdEnv/2020 python/3.9\nexport R_LIBS=~/.local/R/$EBVERSIONR/\npython run.py\n",
                               old, new), "R packages")
    there = f"{new} sees the same folder ({old}'s file systems are shared with it), but packages with compiled code"
    assert (there in todo) is shared and (f"{new} does not have that folder" in todo) is not shared, todo


@pytest.mark.parametrize("python", ["python/3", "python"])
def test_pins_under_a_default_python_are_checked_on_a_new_cluster(python):
    """python/3 (or python) is the stack's default python, which differs between the old cluster
    and the new one: a pinned package may have no wheel for the new one (tensorflow==2.8)."""
    body = (f"module load {python} cuda cudnn\nvirtualenv --no-download $SLURM_TMPDIR/env && source $SLURM_TMPDIR/env/bin/activate\n"
            "pip install --no-index tensorflow==2.8\npython train.py\n")
    (wheel,) = about(port_todos(body, "cedar"), "avail_wheels")
    assert f"not {python} on cedar (a default python, which changes with the stack)" in wheel


@pytest.mark.parametrize("body, word", [("module load StdEnv/2023 julia/1.9.1\njulia fit.jl\n", "~/.julia/environments/v1.9"),
                                        ("module load StdEnv/2023 r/4.3.1\nRscript fit.R\n", "~/R/x86_64-pc-linux-gnu-library/4.3")])
def test_default_package_folders_left_on_a_home_the_new_cluster_does_not_mount_are_a_to_do(body, word):
    """Béluga's /home is not Rorqual's: packages added to julia's default environment or R's
    default library there are not on Rorqual, though the minor version stays."""
    todos = about(port_todos(body, "beluga"), word)
    assert len(todos) == 1, todos
    assert "of beluga's home, which rorqual does not mount" in todos[0] and "again on rorqual under" in todos[0]


def test_default_package_folders_on_a_home_the_new_cluster_mounts_need_nothing_on_the_same_version():
    """Cedar's /home is Fir's: julia's default environment is still there for the same julia."""
    assert not about(port_todos("module load StdEnv/2023 julia/1.9.3\njulia fit.jl\n", "cedar"), "julia")
