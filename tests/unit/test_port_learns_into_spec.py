"""Everything port learns goes into the spec: its warnings become ``# to do:`` lines that
``check`` reports, ``check`` compares module versions with the catalogue port uses, module lines
in kept blocks and in sourced files are checked by both, and a stack change asks for old
environments and binaries to be rebuilt."""

import copy

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.core.todos import pending_import_notes
from slurmkit.port.retarget import choose_target, port_spec, ported_text
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

JOB = {"name": "t", "account": "def-x", "resources": {"time": "1h"}, "launch": {"command": ["./app"]}}


def port(data, to=None, folder=None):
    source = load_profile(data["profile"])
    target = choose_target(source, to, load_profile)
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), source, target, folder=folder)


def check(tmp_path, data, monkeypatch, name="job.yaml", text=None):
    (tmp_path / name).write_text(text if text is not None else yaml.safe_dump(data))
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, ["check", name])


# ------------------------------------------------------------------- port warnings are to-dos


def test_a_port_warning_is_a_to_do_of_the_ported_spec_that_check_reports(tmp_path, monkeypatch):
    data = {**JOB, "profile": "graham", "account": "rrg-x", "environment": {"modules": ["StdEnv/2020", "vasp-tools/1.2"]}}
    ported = port(data)
    text = ported_text(ported)
    todos = pending_import_notes(text)
    assert any("'vasp-tools' is not in nibi's module catalogue" in t for t in todos)
    assert not any(t.startswith("account:") for t in todos)      # a RAC account is a note: sbatch tells at once
    result = check(tmp_path, None, monkeypatch, text=text)
    assert "no problems found" not in result.output
    assert "vasp-tools" in result.output


def test_port_tells_a_warning_once_as_a_to_do(tmp_path, monkeypatch):
    (tmp_path / "job.yaml").write_text(yaml.safe_dump({**JOB, "profile": "graham", "account": "rrg-x"}))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["port", "job.yaml", "--no-verify", "-o", "new.yaml"])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("RAC allocation") == 1
    assert "warning: account: 'rrg-x' is a RAC allocation" in result.stderr


# ------------------------------------------------ the shared 2023 stack is in the catalogue


@pytest.mark.parametrize("module", ["r/4.4.0", "r", "mrtrix/3.0.4", "ants/2.5.0", "fsl/6.0.7.7", "afni/24.1.03", "gromacs/2024.4",
                                    "namd-multicore/3.0.2", "julia/1.11.3", "cmake", "matlab/2024b.1", "java/17.0.6", "apptainer"])
def test_a_module_of_the_shared_2023_stack_is_not_warned_as_missing(module):
    data = {**JOB, "profile": "graham", "environment": {"modules": ["StdEnv/2020", module]}}
    ported = port(data)
    assert not [w for w in ported.warnings if w.field == "environment.modules" and "is not in" in w.message]
    assert not [t for t in ported.todos if "not in graham" in t or "not in nibi" in t]
    # A family the catalogue lists without versions: a pinned version installed there is a question, not "missing".
    assert all(w.message.startswith(f"{module} is installed on nibi, but no source says whether it loads under StdEnv/2023")
               for w in ported.warnings if w.field == "environment.modules")


def test_an_old_version_of_a_catalogued_science_code_moves_to_the_nearest_2023_one():
    ported = port({**JOB, "profile": "graham", "environment": {"modules": ["StdEnv/2020", "r/4.0.2", "gromacs/2020.4"]}})
    assert {c.field: c.new for c in ported.changes}["environment.modules"] == ["StdEnv/2023", "r/4.3.1", "gromacs/2023.3"]


def test_niagaras_mkl_is_the_alliances_imkl_on_trillium():
    """NiaEnv named Intel's MKL ``mkl``; the 2023 stack names it ``imkl``: a rename, not a to-do."""
    data = {**JOB, "profile": "niagara", "kind": "threaded", "resources": {"time": "1h", "nodes": 1, "cpus_per_task": 40},
            "environment": {"modules": ["NiaEnv/2019b", "intel/2019u4", "mkl/2019u4"]}}
    ported = port(data)
    assert {c.field: c.new for c in ported.changes}["environment.modules"] == ["StdEnv/2023", "intel/2023.2.1", "imkl"]
    assert not [t for t in ported.todos if "mkl" in t]
    assert not [w for w in ported.warnings if "mkl" in w.message]


# ------------------------------------------------------- check uses port's module catalogue


def test_check_reports_a_module_version_the_clusters_stack_lacks_with_the_nearest(tmp_path, monkeypatch):
    data = {**JOB, "profile": "narval", "environment": {"modules": ["StdEnv/2020", "gcc/9.3.0"]}}
    result = check(tmp_path, data, monkeypatch)
    said = "gcc/9.3.0 is not built for StdEnv/2023; narval's StdEnv/2023 builds of gcc are 12.3, 13.3, 14.3; gcc/12.3 is the nearest"
    assert said in result.output
    assert "no problems found" not in result.output
    pinned = check(tmp_path, {**data, "environment": {"modules": ["StdEnv/2023", "gcc/9.3.0"]}}, monkeypatch)
    assert said + ": load it instead" in pinned.output     # no StdEnv/2023 build: it cannot load, pinned or not


def test_check_and_port_flag_the_same_modules(tmp_path, monkeypatch):
    """One function decides for both: what port rewrites or asks about, check reports, and nothing else."""
    modules = ["StdEnv/2020", "gcc/9.3.0", "python/3.11", "cuda/11.4", "r/4.4.0"]
    ported = port({**JOB, "profile": "graham", "environment": {"modules": modules}}, to="narval")
    result = check(tmp_path, {**JOB, "profile": "narval", "environment": {"modules": modules}}, monkeypatch)
    flagged = sorted(m for m in modules[1:] if f"{m} is not built for StdEnv/2023" in result.output)
    changes = {c.field: c for c in ported.changes}
    assert flagged == ["cuda/11.4", "gcc/9.3.0"]
    assert changes["environment.modules"].new == ["StdEnv/2023", "gcc/12.3", "python/3.11", "cuda/12.2", "r/4.4.0"]
    pinned = ["StdEnv/2023", "python/3.11", "r/4.3.1", "openmpi/5.0.3"]
    ported = port({**JOB, "profile": "graham", "environment": {"modules": pinned}}, to="narval")
    result = check(tmp_path, {**JOB, "profile": "narval", "environment": {"modules": pinned}}, monkeypatch)
    asked = sorted(m for m in pinned if f"{m} is built for" in result.output or f"{m} is built only" in result.output)
    assert asked == ["openmpi/5.0.3"] and "environment.modules" not in {c.field for c in ported.changes}
    assert sorted(t.split()[1] for t in ported.todos if "is built for StdEnv/2023 only" in t) == asked


def test_a_version_of_the_clusters_own_stack_is_kept_when_the_spec_pins_that_stack():
    """Every Alliance cluster serves the same StdEnv/2023 (CVMFS): r/4.3.1 is one of its builds,
    no page documents it, and rewriting it would break the user's R library."""
    for to in ("narval", "fir"):
        ported = port({**JOB, "profile": "narval", "environment": {"modules": ["StdEnv/2023", "r/4.3.1"]}}, to=to)
        assert "environment.modules" not in {c.field for c in ported.changes}
        # (Narval's ~/R is not on Fir: that library is a to-do of its own, which keeps r/4.3.1 too)
        assert [t for t in ported.todos if "r/4.3.1" in t and "of narval's home, which fir does not mount" not in t] == []
    moved = port({**JOB, "profile": "narval", "environment": {"modules": ["StdEnv/2020", "r/4.0.2"]}}, to="fir")
    assert {c.field: c.new for c in moved.changes}["environment.modules"] == ["StdEnv/2023", "r/4.3.1"]


def test_check_does_not_judge_a_retired_clusters_modules_by_todays_stack(tmp_path, monkeypatch):
    data = {**JOB, "profile": "graham", "environment": {"modules": ["StdEnv/2020", "gcc/9.3.0"]}}
    assert "is not in graham's stack" not in check(tmp_path, data, monkeypatch).output


# ------------------------------------------------------------- module lines anywhere


SETUP_BLOCK = 'if [ -n "$OLD" ]; then\n  module load StdEnv/2018.3 gcc/7.3.0\nfi'


def test_check_reports_a_module_line_in_a_kept_block_that_would_not_load(tmp_path, monkeypatch):
    data = {**JOB, "profile": "narval", "environment": {"modules": ["StdEnv/2023"], "setup": [SETUP_BLOCK]}}
    result = check(tmp_path, data, monkeypatch)
    assert ("environment.setup[0]: `module load StdEnv/2018.3 gcc/7.3.0` (its line 2) would not load on narval: StdEnv/2018.3 is "
            "not narval's standard environment, StdEnv/2023; gcc/7.3.0 is not built for StdEnv/2023") in result.output
    assert "no problems found" not in result.output


BY_CLUSTER = ('if [ "$CC_CLUSTER" = "graham" ]; then\n  module load StdEnv/2020 gcc/9.3.0\n'
              'elif [[ $CC_CLUSTER == ced* ]]; then\n  module load StdEnv/2018.3\n')


def module_todos(data, to):
    return [t for t in port(data, to).todos if t.startswith("environment.setup")]


def test_a_branch_for_another_cluster_is_not_judged_by_the_new_clusters_stack():
    data = {**JOB, "profile": "graham", "environment": {"setup": [BY_CLUSTER + "else\n  module load StdEnv/2023 gcc/12.3\nfi"]}}
    assert module_todos(data, "nibi") == []


def test_the_branch_the_new_cluster_takes_is_ported():
    data = {**JOB, "profile": "graham", "environment": {"setup": [BY_CLUSTER + "else\n  module load StdEnv/2020 gcc/9.3.0\nfi"]}}
    ported = port(data, "nibi")
    assert module_todos(data, "nibi") == []
    assert ported.spec["environment"]["setup"] == [BY_CLUSTER + "else\n  module load StdEnv/2023 gcc/12.3\nfi"]


def test_a_module_named_through_a_variable_is_judged_by_its_value_or_said_unknown():
    known = {**JOB, "profile": "cedar", "environment": {"setup": ["PYV=3.8", 'if [ -n "$X" ]; then\n  module load python/$PYV\nfi']}}
    (todo,) = [t for t in port(known, "fir").todos if t.startswith("environment.setup")]
    assert "python/3.8 is not built for StdEnv/2023" in todo and "is kept as written" in todo
    unknown = {**JOB, "profile": "cedar", "environment": {"setup": ['if [ -n "$X" ]; then\n  module load python/$(cat v)\nfi']}}
    (todo,) = [t for t in port(unknown, "fir").todos if t.startswith("environment.setup")]
    assert "python/$(cat v) is named through a variable whose value slurmkit cannot tell" in todo


def test_an_if_with_no_branch_for_the_new_cluster_says_its_modules_are_not_loaded(tmp_path, monkeypatch):
    data = {**JOB, "profile": "graham", "environment": {"setup": [BY_CLUSTER + "fi"]}}
    (todo,) = module_todos(data, "nibi")
    assert ("no branch of it runs on nibi ($CC_CLUSTER is nibi there), so the modules it loads on other clusters "
            "(StdEnv/2020 gcc/9.3.0 StdEnv/2018.3) are not loaded") in todo
    result = check(tmp_path, {**data, "profile": "nibi"}, monkeypatch)
    assert "no branch of it runs on nibi" in result.output and "no problems found" not in result.output


@pytest.mark.parametrize("items, lost", [('cedar)  module load StdEnv/2020 gcc/9.3.0 ;;\n  "graham") module load StdEnv/2020 ;;', True),
                                          ("cedar|fir*) module load StdEnv/2020 gcc/9.3.0 ;;", False),
                                          ("cedar) module load StdEnv/2020 ;;\n  *) module load StdEnv/2023 ;;", False)])
def test_a_case_on_cc_cluster_with_no_item_for_the_new_cluster_says_its_modules_are_not_loaded(items, lost):
    """``case $CC_CLUSTER in cedar) module load ...;; esac`` is the if's other spelling: on Fir no
    item runs, and the job goes on without the modules."""
    data = {**JOB, "profile": "cedar", "environment": {"setup": [f"case $CC_CLUSTER in\n  {items}\nesac"]}}
    todos = [t for t in module_todos(data, "fir") if "no branch of it runs on fir" in t]
    assert bool(todos) is lost, module_todos(data, "fir")


def test_a_test_of_anything_else_may_go_either_way():
    data = {**JOB, "profile": "graham", "environment": {"setup": [
        'if [ "$(hostname)" = gra1 ]; then\n  module load StdEnv/2020\nfi']}}
    assert port(data, "nibi").spec["environment"]["setup"] == ['if [ "$(hostname)" = gra1 ]; then\n  module load StdEnv/2023\nfi']


def test_a_sourced_file_beside_the_spec_has_its_module_lines_ported_and_checked(tmp_path, monkeypatch):
    (tmp_path / "old_env.sh").write_text("module purge\nmodule load NiaEnv/2019b intel/2019u4\nexport X=1\n")
    data = {**JOB, "profile": "niagara", "kind": "threaded", "resources": {"time": "1h", "nodes": 1, "cpus_per_task": 40},
            "environment": {"setup": ["source ./old_env.sh"]}}
    ported = port(data, folder=tmp_path)
    todo = next(t for t in ported.todos if "old_env.sh" in t)
    assert todo.startswith("environment.setup[0]: `source ./old_env.sh` reads ./old_env.sh, whose line 2 `module load NiaEnv/2019b "
                           "intel/2019u4` would not load on trillium: NiaEnv/2019b is one site's own module stack")
    assert "slurmkit does not rewrite your file" in todo
    assert not [t for t in port(data, folder=tmp_path / "elsewhere").todos if "old_env.sh" in t]   # not there: not read
    # check, from the ported spec's folder, says the same until the file is changed.
    result = check(tmp_path, None, monkeypatch, name="new.yaml", text=ported_text(ported))
    said = "`source ./old_env.sh` reads ./old_env.sh, whose line 2 `module load NiaEnv/2019b intel/2019u4` would not load on trillium"
    assert result.output.count(said) == 2          # the to-do, and check's own finding
    (tmp_path / "old_env.sh").write_text("module load StdEnv/2023 intel/2023.2.1\n")
    result = CliRunner().invoke(main, ["check", "new.yaml"])
    assert result.output.count(said) == 1          # the to-do only, until removed


def test_import_reads_a_sourced_file_beside_the_script(tmp_path, monkeypatch):
    (tmp_path / "env.sh").write_text("module load StdEnv/2020 gcc/9.3.0\n")
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n. ./env.sh\nsrun ./app\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["import", "job.sh", "--profile", "narval", "--no-verify", "-o", "job.yaml"])
    assert result.exit_code == 0, result.output
    assert any("`. ./env.sh` reads ./env.sh, whose line 1 `module load StdEnv/2020 gcc/9.3.0` would not load on narval" in t
               for t in pending_import_notes((tmp_path / "job.yaml").read_text()))


def test_a_sourced_path_with_a_variable_or_a_venv_activation_is_not_followed(tmp_path, monkeypatch):
    from slurmkit.port.modulelines import module_line_problems

    (tmp_path / "env.sh").write_text("module load NiaEnv/2019b\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "activate").write_text("module load NiaEnv/2019b\n")
    fields = [("environment.setup[0]", "source $DIR/env.sh\nsource bin/activate")]
    assert module_line_problems(load_profile("trillium"), fields, tmp_path) == []
    monkeypatch.setenv("HOME", str(tmp_path))     # $HOME and ~ are the submit host's home
    home = [("environment.setup[0]", "source $HOME/env.sh; . ~/env.sh")]
    assert [line.sourced for line in module_line_problems(load_profile("trillium"), home, tmp_path / "x")] == ["$HOME/env.sh", "~/env.sh"]


# ------------------------------------------------------------------------- rebuild to-dos


def venv_todos(ported):
    return [t for t in ported.todos if t.startswith("environment.venv.path:")]


def test_a_reused_virtualenv_is_rebuilt_when_the_script_named_no_stdenv_nor_python():
    """The 2020-era habit: no StdEnv, no python module; the old cluster's default applied."""
    data = {**JOB, "profile": "graham", "launch": {"command": ["python", "train.py"]}, "environment": {"venv": {"path": "~/env"}}}
    assert venv_todos(port(data)) == [
        "environment.venv.path: ~/env was built under the StdEnv that was graham's default when it was built (StdEnv/2020 from "
        "April 2021, StdEnv/2023 from April 2024; the job loads none) and the python it was made with on "
        "graham; a virtualenv works only with the Python, StdEnv and CPUs it was made with: rebuild it for nibi's stack, under "
        "StdEnv/2023 (nibi's default: the job loads no StdEnv) and python/3.12 (virtualenv --no-download, pip install --no-index "
        "-r requirements.txt), then remove this line"]


@pytest.mark.parametrize("made, todo", [('virtualenv --no-download "$ENV_PATH"', False),
                                         ("tar -xf $HOME/venv.tar -C $SLURM_TMPDIR", True)])
def test_a_virtualenv_the_job_makes_in_its_tmpdir_is_not_rebuilt(made, todo):
    data = {**JOB, "profile": "cedar", "environment": {"modules": ["StdEnv/2020", "python/3.10"],
                                                      "setup": [made, 'source "$SLURM_TMPDIR/env/bin/activate"']}}
    assert bool([t for t in port(data, "fir").todos if "the virtualenv $SLURM_TMPDIR/env, entered as written" in t]) is todo


def test_a_reused_virtualenv_under_scipy_stack_without_python_is_rebuilt():
    data = {**JOB, "profile": "cedar", "launch": {"command": ["python", "fit.py"]},
            "environment": {"modules": ["scipy-stack/2019b"], "venv": {"path": "$HOME/venvs/fit"}}}
    [todo] = venv_todos(port(data))
    assert ("was built under the StdEnv that was cedar's default when it was built (StdEnv/2020 from April 2021, StdEnv/2023 "
            "from April 2024; the job loads none) and the python scipy-stack/2019b loads on cedar") in todo
    assert "rebuild it for fir's stack" in todo


def test_a_program_from_the_users_folders_is_rebuilt_for_the_new_stack():
    setup = ["cd $SCRATCH/run\nbuild/prep input.dat", "python make_inputs.py"]
    data = {**JOB, "profile": "beluga", "environment": {"modules": ["StdEnv/2020", "gcc/9.3.0"], "setup": setup},
            "launch": {"shell": "timeout 2h $HOME/bin/solver < in.txt > out.log"}}
    todos = [t for t in port(data).todos if "a program from your folders" in t]
    assert [t.split(" is a program")[0] for t in todos] == ["environment.setup[0]: build/prep", "launch.shell: $HOME/bin/solver"]
    assert todos[1] == ("launch.shell: $HOME/bin/solver is a program from your folders, built on beluga under StdEnv/2020: rebuild it "
                        "for rorqual's stack, under StdEnv/2023 (load the modules it needs, build it again), then remove this line")
    mpi = {**JOB, "profile": "beluga", "kind": "mpi", "resources": {"time": "1h", "nodes": 1, "tasks_per_node": 4},
           "launch": {"command": ["./a.out", "in.txt"]}}
    assert [t.split(" is a program")[0] for t in port(mpi).todos if "a program from your folders" in t] == ["launch.command: ./a.out"]


def test_programs_on_path_and_scripts_need_no_rebuild():
    for command in (["python", "./train.py"], ["./run.sh"], ["gmx", "mdrun"], ["srun", "-n", "4", "lmp"]):
        data = {**JOB, "profile": "graham", "launch": {"command": command}}
        assert not [t for t in port(data).todos if "a program from your folders" in t], command


def test_a_to_do_is_written_once_and_port_does_not_repeat_what_import_asked(tmp_path, monkeypatch):
    """Verification of the port finds again what import's found (a sourced file it cannot
    trace): the spec asks it once. Kept module lines that would not load alike say it once."""
    (tmp_path / "job.sh").write_text("#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00 --mem=4G\n"
                                     "source /home/me/env.conf\npython a.py\n")
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, ["import", "job.sh", "--profile", "cedar", "-o", "job.yaml"]).exit_code == 0
    result = CliRunner().invoke(main, ["port", "job.yaml", "-o", "new.yaml"])
    assert result.exit_code == 0, result.output
    # Neither trace reads the user's file (no difference: a note); on another cluster what it loads
    # may not work: one to-do the user can act on, not "not traced".
    todos = pending_import_notes((tmp_path / "new.yaml").read_text())
    assert [t for t in todos if "env.conf" in t] == [
        "environment.setup: the job sources /home/me/env.conf, whose lines slurmkit neither traced nor ported: check that "
        "the modules it loads and the paths it sets work on fir (they were cedar's), then remove this line"]
    assert "to do: verify: not traced: source /home/me/env.conf" not in result.stderr
    from slurmkit.port.retarget import written_todos

    assert written_todos(["a: x", "b: y", "a: x"], "# to do: script: b: y\nname: t\n") == ["a: x"]


def test_the_modules_a_pipeline_beside_the_spec_pins_are_ported_to_dos_and_checked(tmp_path, monkeypatch):
    """A Nextflow pipeline loads its own modules in the jobs it submits (``module 'java/1.8.0_121'``):
    port reads the .nf beside the spec as it reads a sourced file; without it, a to-do to check them."""
    (tmp_path / "run.nf").write_text("process a {\n  executor 'slurm'\n  module 'java/1.8.0_121:r/3.4.0'\n}\n"
                                     "process b {\n  module 'java/17.0.6'\n}\n")
    data = {**JOB, "profile": "cedar", "launch": {"command": "nextflow run run.nf -resume"},
            "environment": {"modules": ["StdEnv/2020", "java/1.8.0_192"]}}
    ported = port(data, to="fir", folder=tmp_path)
    todos = [t for t in ported.todos if "run.nf" in t]
    assert len(todos) == 1 and "whose line 3 `module 'java/1.8.0_121:r/3.4.0'` would not load on fir" in todos[0]
    assert "java/1.8.0_121 is not installed on fir" in todos[0] and "r/3.4.0" in todos[0]
    result = check(tmp_path, None, monkeypatch, name="new.yaml", text=ported_text(ported))
    assert result.output.count("whose line 3 `module 'java/1.8.0_121:r/3.4.0'` would not load on fir") == 2
    elsewhere = port(data, to="fir", folder=tmp_path / "elsewhere")
    (todo,) = [t for t in elsewhere.todos if "nextflow" in t]
    assert "runs a pipeline whose file is not beside the spec" in todo and "written for cedar; check them for fir" in todo


def test_a_venv_rebuild_names_the_python_check_asks_for_not_one_it_warns_about():
    """A reused venv keeps its python/3.10 (changing it would break the venv until rebuilt), and
    check warns that Rorqual builds no wheels for it: the rebuild to-do names the served python."""
    data = {**JOB, "profile": "narval", "launch": {"command": "python train.py"},
            "environment": {"modules": ["python/3.10"], "venv": {"path": "$HOME/envs/lstm"}}}
    ported = port(data, to="rorqual")
    (todo,) = [t for t in ported.todos if t.startswith("environment.venv.path")]
    assert "rebuild it for rorqual's stack, under StdEnv/2023" in todo
    assert "python/3.12.4 (python/3.10 is older than the pythons rorqual builds wheels for: load python/3.12.4" in todo
    kept = port({**data, "environment": {**data["environment"], "modules": ["python/3.12"]}}, to="rorqual")
    assert "older than" not in next(t for t in kept.todos if t.startswith("environment.venv.path"))
