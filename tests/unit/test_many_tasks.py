"""Kind many-tasks: the spec's tasks section, whole nodes filled, GNU Parallel's module, the
script's shape (bash -n and shellcheck), `check` reading the task file, `new`, `port`, and the
whole-node refusals that point to it. The job on the cluster: tests/integration/test_many_tasks_on_cluster.py."""

import copy
import functools
import subprocess

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.api.job import Job
from slurmkit.cli.main import main
from slurmkit.core.errors import SpecError
from slurmkit.core.findings import Finding
from slurmkit.port.retarget import PortRefused, choose_target, port_spec
from slurmkit.render.render import render
from slurmkit.resolve.manytasks import colsep
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import Launch, Tasks, spec_from_mapping


def spec(**overrides) -> dict:
    data = {"name": "sweep", "account": "def-someprof", "kind": "many-tasks", "resources": {"time": "3h"},
            "tasks": {"arguments": "params.txt"}, "launch": {"command": "python simulate.py --seed {}"}}
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def error_of(data) -> str:
    with pytest.raises(SpecError) as caught:
        spec_from_mapping(data, source="job.yaml")
    return str(caught.value)


@functools.lru_cache(maxsize=None)
def profile(name: str):
    return load_profile(name)


def resolved(profile_name: str, **overrides):
    return resolve(spec_from_mapping(spec(**overrides), source="job.yaml"), profile(profile_name))


def directives(resolution) -> dict:
    assert resolution.plan is not None, resolution.errors
    return dict(resolution.plan.directives)


# ---------------------------------------------------------------------------- the spec


def test_a_commands_file_needs_no_launch_and_an_arguments_file_keeps_the_command():
    commands = spec_from_mapping(spec(tasks={"commands": "commands.txt", "joblog": "logs/sweep"}, launch=None))
    assert commands.tasks == Tasks("commands.txt", "commands", None, "logs/sweep") and commands.launch == Launch(command=())
    arguments = spec_from_mapping(spec(tasks={"arguments": "params.txt", "separator": "\t"}))
    assert arguments.tasks == Tasks("params.txt", "arguments", "\t") and arguments.launch.command[-1] == "{}"


@pytest.mark.parametrize("overrides, message", [
    ({"tasks": None}, "job.yaml: tasks: kind 'many-tasks' needs a tasks section: {commands: FILE} (a command a line) "
                      "or {arguments: FILE} (the arguments of launch.command, a line each)"),
    ({"kind": "serial"}, "job.yaml: tasks: only kind 'many-tasks' runs a task file; set kind: many-tasks (it is 'serial')"),
    ({"tasks": {"commands": "a.txt", "arguments": "b.txt"}},
     "job.yaml: tasks: give one of commands (a file with a command a line) "
     "or arguments (a file with the arguments of launch.command, a line each), not both"),
    ({"tasks": {"joblog": "j"}}, "job.yaml: tasks: give one of commands (a file with a command a line) "
                                 "or arguments (a file with the arguments of launch.command, a line each)"),
    ({"tasks": {"commands": "c.txt"}}, "job.yaml: launch: each line of tasks.commands is a command of its own: leave launch out, "
                                       "or give the lines as tasks.arguments of launch.command"),
    ({"tasks": {"commands": "c.txt", "separator": ","}, "launch": None},
     "job.yaml: tasks.separator: splits argument lines into {1} {2} ...; a commands file has no columns: use arguments"),
    ({"launch": None}, "job.yaml: launch: is required"),
    ({"tasks": {"argument": "p.txt"}}, "job.yaml: tasks.argument: unknown key; did you mean 'arguments'? "
                                       "allowed: commands, arguments, separator, joblog"),
])
def test_a_tasks_section_that_cannot_run_is_one_line_naming_its_key(overrides, message):
    assert error_of(spec(**overrides)) == message


def test_the_separator_is_literal_text_made_into_gnu_parallels_regular_expression():
    assert [colsep(s) for s in ("\t", ",", ".", "|", " ; ")] == ["\\t", ",", "\\.", "\\|", " ; "]


# ---------------------------------------------------------------------------- resolving


@pytest.mark.parametrize("name, cores", [("trillium", 192), ("niagara", 40)])
def test_a_whole_node_site_runs_as_many_tasks_at_a_time_as_its_node_has_cores(name, cores):
    # one node: GNU Parallel is one task with every core (the GNU Parallel page's shape)
    got = directives(resolved(name))
    assert ("--ntasks-per-node" not in got, got["--cpus-per-task"]) == (True, str(cores))
    got = directives(resolved(name, resources={"time": "3h", "cpus_per_task": 4, "nodes": 2}))
    assert (got["--ntasks-per-node"], got["--cpus-per-task"]) == (str(cores // 4), "4")


def test_cores_per_task_that_do_not_divide_the_node_are_refused_with_divisors_that_do():
    (error,) = resolved("trillium", resources={"time": "3h", "cpus_per_task": 5}).errors
    assert error.message == ("trillium schedules whole nodes of 192 cores, which 5 cores per task does not divide: "
                             "pick one that does (e.g. 2, 3, 4, 6)")


def test_one_task_at_a_time_on_a_shared_node_site_is_a_warning():
    resolution = resolved("fir")
    assert [f.message for f in resolution.warnings if f.field == "resources.tasks_per_node"] == [
        "kind 'many-tasks' with one task per node runs its tasks one after another; set tasks_per_node to how many run at a time"]
    assert directives(resolved("fir", resources={"time": "3h", "tasks_per_node": 32}))["--cpus-per-task"] == "32"


@pytest.mark.parametrize("overrides, field, message", [
    ({"resources": {"time": "3h", "gpus": "h100:1"}}, "resources.gpus",
     "kind 'many-tasks' runs CPU tasks; for GPU work use kind 'gpu', or 'array' for one job per GPU task"),
    ({"resubmit": True, "stage": {"checkpoint": {"from": "c", "to": "c"}}}, "resubmit",
     "kind 'many-tasks' resumes from its joblog, not from a checkpoint: submit the same job again to run the tasks that are left"),
    ({"launch": {"command": ["python", "a.py", ":::", "1"]}}, "launch.command.2",
     "GNU Parallel reads ':::' as an input source; the tasks come from tasks.arguments, so leave it out "
     "(quote it inside a word if your program needs it)"),
    ({"tasks": {"arguments": "p.txt", "joblog": "./"}}, "tasks.joblog",
     "'./' is not a folder of its own: give the joblogs one (e.g. sweep.joblog)"),
    ({"launch": {"command": "python a.py {}", "launcher": "srun"}}, "launch.launcher",
     "kind 'many-tasks' cannot use 'srun'; it can use direct"),
])
def test_what_gnu_parallel_cannot_run_is_refused(overrides, field, message):
    errors = resolved("fir", **overrides).errors
    assert Finding("error", field, message) in errors


def test_gnu_parallels_module_is_loaded_where_the_profile_names_one(tmp_path, monkeypatch):
    folder = tmp_path / "site_profiles"
    folder.mkdir()
    (folder / "oldnia.yaml").write_text("name: oldnia\nextends: niagara\nsoftware:\n  modules:\n    parallel: gnu-parallel/20180322\n")
    monkeypatch.chdir(tmp_path)
    site = load_profile("oldnia")
    loaded = resolve(spec_from_mapping(spec()), site).plan.modules
    assert loaded[-1] == "gnu-parallel/20180322"
    own = resolve(spec_from_mapping(spec(environment={"modules": ["gnu-parallel/20190322"]})), site).plan.modules
    assert "gnu-parallel/20180322" not in own and "gnu-parallel/20190322" in own
    assert not any("parallel" in m for m in resolved("trillium").plan.modules)   # parallel: "" -- on PATH, no module


# ---------------------------------------------------------------------- whole-node refusals


@pytest.mark.parametrize("name, kind, resources, message", [
    ("trillium", "serial", {}, "trillium schedules whole nodes of 192 cores and a serial job uses 1: run such tasks 192 at a time "
                               "in one job of kind 'many-tasks' (GNU Parallel; tasks_per_node: 192)"),
    ("niagara", "array", {}, "niagara schedules whole nodes of 40 cores and each array task uses 1: put the sweep's points in a task "
                             "file and run them 40 at a time in one job of kind 'many-tasks' (GNU Parallel; tasks_per_node: 40)"),
    ("niagara", "array", {"cpus_per_task": 4}, "niagara schedules whole nodes of 40 cores and each array task uses 4: put the sweep's "
                                               "points in a task file and run them 10 at a time in one job of kind 'many-tasks' "
                                               "(GNU Parallel; tasks_per_node: 10, cpus_per_task: 4)"),
    ("trillium", "mpi", {"tasks_per_node": 100, "cpus_per_task": 5}, "trillium schedules whole nodes of 192 cores, which 5 cores per "
                                                                     "task does not divide: pick one that does (e.g. 2, 3, 4, 6)"),
])
def test_a_job_below_a_whole_node_is_refused_with_the_way_to_fill_it(name, kind, resources, message):
    data = {"name": "s", "account": "def-x", "kind": kind, "resources": {"time": "3h", **resources}, "launch": "./a"}
    if kind == "array":
        data["array"] = {"parameters": {"seed": [1, 2]}}
    errors = resolve(spec_from_mapping(data), profile(name)).errors
    assert Finding("error", "resources", message) in errors


# ------------------------------------------------------------------------------ the script


def script_of(profile_name: str, **overrides) -> str:
    return render(resolved(profile_name, **overrides).plan)


@pytest.mark.parametrize("profile_name, overrides", [
    ("trillium", {"tasks": {"arguments": "p.tsv", "separator": "\t", "joblog": "/scratch/me/sweep.joblog"},
                  "launch": {"command": "python s.py --a {1} --b {2} --tag 'it''s {}' --data $SLURM_TMPDIR/x"}}),
    ("fir", {"resources": {"time": "3h", "nodes": 3, "tasks_per_node": 16, "cpus_per_task": 2}, "tasks": {"commands": "cmds.txt"},
             "launch": None}),
    ("generic", {"resources": {"time": "3h", "tasks_per_node": 8}, "tasks": {"arguments": "a file; $$(rm -rf x).txt"}}),
    ("fir", {"environment": {"setup": ["source settings.sh", "cd $SCRATCH/videos"], "errexit": False, "nounset": False},
             "launch": {"command": "./task.sh {} $MODE"}}),
])
def test_every_many_tasks_script_passes_bash_n_and_shellcheck(tmp_path, profile_name, overrides):
    path = tmp_path / "job.sbatch"
    path.write_text(script_of(profile_name, **overrides))
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
    check = subprocess.run(["shellcheck", "--shell=bash", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout


def test_the_script_takes_its_counts_from_slurm_and_keeps_the_joblog_beside_the_spec():
    text = script_of("trillium", resources={"time": "3h", "nodes": 2})
    assert 'SLURMKIT_TASKS_AT_ONCE="${SLURM_NTASKS_PER_NODE:-1}"' in text and 'parallel --jobs "$SLURMKIT_TASKS_AT_ONCE"' in text
    assert 'SLURMKIT_JOBLOGS="${SLURM_SUBMIT_DIR}/sweep.joblog"' in text
    assert "SLURM_TMPDIR" not in text.split("SLURMKIT_JOBLOGS=")[1].split("\n")[0]
    assert '--resume-failed' in text and '--resume ' not in text
    assert "\nslurmkit_run_many_tasks tasks_on_this_node\n" in text   # (srun, one task per node, where the job has several: tests/runtime)
    assert "--quote -- python simulate.py --seed \"{}\"" in text


def test_the_set_up_lines_run_before_gnu_parallel_starts_the_tasks():
    """The kind replaces the launch block, where the base script runs environment.setup: an
    imported ``source settings.sh`` or ``cd`` was never run, and the tasks ran without it."""
    text = script_of("fir", environment={"setup": ["source settings.sh", "cd $SCRATCH/videos"]})
    assert text.index("eval 'source settings.sh'\neval 'cd $SCRATCH/videos'\n") < text.index("\nslurmkit_run_many_tasks ")


def test_user_values_reach_gnu_parallel_quoted_and_literal():
    text = script_of("generic", resources={"time": "3h", "tasks_per_node": 2},
                     tasks={"arguments": "my tasks $$(x).txt", "separator": "|", "joblog": "it's.joblog"},
                     launch={"command": ["prog", "a b", "$(date)", "`id`"]})
    assert 'SLURMKIT_TASK_FILE="${SLURM_SUBMIT_DIR}/my tasks \\$(x).txt"' in text
    assert 'SLURMKIT_JOBLOGS="${SLURM_SUBMIT_DIR}/it\'s.joblog"' in text
    assert "--colsep '\\|' --quote -- prog \"a b\" \"\\$(date)\" \"\\`id\\`\"" in text


def test_the_same_spec_renders_the_same_bytes():
    assert script_of("niagara") == script_of("niagara")


# --------------------------------------------------------------------------- check, new, port


def _check(tmp_path, tasks_text, **overrides):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec(profile="trillium", **overrides)))
    if tasks_text is not None:
        (tmp_path / "params.txt").write_text(tasks_text)
    return Job.from_yaml(path).check()


def test_check_reads_the_task_file(tmp_path):
    assert _check(tmp_path, None) == (Finding("error", "tasks.arguments", f"cannot read {tmp_path}/params.txt: No such file or directory"),)
    assert _check(tmp_path, "\n  \n") == (
        Finding("error", "tasks.arguments", f"{tmp_path}/params.txt has no tasks (blank lines are skipped)"),)
    assert _check(tmp_path, "1\n2\n\n3\n") == (
        Finding("warning", "resources.tasks_per_node", "3 tasks for 192 at a time (nodes x tasks_per_node): "
                "189 slots stay idle for the whole job; bundle more tasks into the job"),)
    assert _check(tmp_path, "".join(f"{i}\n" for i in range(192))) == ()
    assert _check(tmp_path, "".join(f"{i}\r\n" for i in range(192))) == (
        Finding("error", "tasks.arguments", f"{tmp_path}/params.txt has DOS line endings: each task would end in a carriage return; "
                                            "convert it with dos2unix"),)


def test_check_warns_when_task_commands_run_python_without_the_python_module(tmp_path):
    findings = _check(tmp_path, None, tasks={"commands": "params.txt"}, launch=None)
    assert findings[0].field == "tasks.commands"
    (tmp_path / "params.txt").write_text("".join(f"python run.py {i}\n" for i in range(192)))
    (warning,) = Job.from_yaml(tmp_path / "job.yaml").check()
    assert warning.field == "environment.modules" and warning.message.startswith("task 1 runs Python and no python module is loaded")
    data = yaml.safe_load((tmp_path / "job.yaml").read_text())
    data["environment"] = {"modules": ["python/3.12.4"]}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(data))
    assert Job.from_yaml(tmp_path / "job.yaml").check() == ()


def test_new_scaffolds_a_many_tasks_job_with_a_first_task_file_it_never_replaces(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["new", "sweep", "--kind", "many-tasks", "--profile", "trillium", "--yes"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "sweep" / "tasks.txt").read_text() == "1\n2\n3\n4\n"
    data = yaml.safe_load((tmp_path / "sweep" / "job.yaml").read_text())
    assert data["tasks"] == {"arguments": "tasks.txt"} and "tasks_per_node" not in data["resources"]   # Trillium fills the node
    (tmp_path / "sweep" / "tasks.txt").write_text("mine\n")
    assert CliRunner().invoke(main, ["new", "sweep", "--kind", "many-tasks", "--profile", "fir", "--yes", "--force"]).exit_code == 0
    assert (tmp_path / "sweep" / "tasks.txt").read_text() == "mine\n"
    assert yaml.safe_load((tmp_path / "sweep" / "job.yaml").read_text())["resources"]["tasks_per_node"] == 4


def port(data, to):
    source = load_profile(data["profile"])
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), source, choose_target(source, to, load_profile))


def test_port_of_a_serial_job_to_a_whole_node_site_points_to_many_tasks():
    with pytest.raises(PortRefused) as refused:
        port({"name": "s", "profile": "graham", "resources": {"time": "1h"}, "launch": "./a"}, "trillium")
    assert refused.value.findings[0].message == (
        "trillium schedules whole nodes of 192 cores; a 'serial' job of 1 core(s) would leave the rest idle: run 192 such tasks at a "
        "time in one job of kind 'many-tasks' (GNU Parallel, a task file with a line each), or port to another cluster")


def test_port_of_a_many_tasks_job_fills_the_whole_nodes_and_asks_for_them_off_them():
    data = spec(profile="fir", resources={"time": "3h", "tasks_per_node": 32, "mem_per_cpu": "2G"})
    changes = {c.field: (c.old, c.new) for c in port(data, "trillium").changes}
    assert changes["resources.tasks_per_node"] == (32, 192) and changes["resources.mem_per_cpu"] == ("2G", None)
    changes = {c.field: (c.old, c.new) for c in port(spec(profile="niagara"), "fir").changes}
    assert changes["resources.tasks_per_node"] == (None, 40)


# ---------------------------------------------------------------------------------- import

ALLIANCE_COMMANDS = """#!/bin/bash
#SBATCH --account=def-someuser
#SBATCH --cpus-per-task=4
#SBATCH --time=00-02:00
#SBATCH --mem=4000M     # Total memory for all tasks

parallel --joblog parallel.log < ./my_commands.txt
"""
ALLIANCE_ARGUMENTS = """#!/bin/bash
#SBATCH --account=def-someuser
#SBATCH --nodes=1
#SBATCH --cpus-per-task=32
#SBATCH --time=03:00:00
#SBATCH --mem-per-cpu=2G

# Read the parameters, placing each column to their respective argument
parallel -j $SLURM_CPUS_PER_TASK --colsep '\\t' my_simulator --alpha {1} --beta {2} :::: ./my_parameters.txt
"""


def test_the_gnu_parallel_pages_scripts_import_as_many_tasks_jobs():
    """The two job scripts of https://docs.alliancecan.ca/wiki/GNU_Parallel/en: --cpus-per-task=N
    with -j $SLURM_CPUS_PER_TASK is N one-core tasks at a time."""
    from slurmkit.port.porting import import_script

    commands = import_script(ALLIANCE_COMMANDS, name="farm", profile="fir")
    assert commands.spec["kind"] == "many-tasks" and "launch" not in commands.spec
    assert commands.spec["tasks"] == {"commands": "./my_commands.txt"}
    assert commands.spec["resources"] == {"time": "00-02:00", "mem": "4000M", "tasks_per_node": 4}
    assert [n.reason for n in commands.notes if n.line == 7] == [
        "kind many-tasks; dropped: --joblog (a joblog per node in <name>.joblog/, resumed with --resume-failed)"]
    arguments = import_script(ALLIANCE_ARGUMENTS, name="sim", profile="fir")
    assert arguments.spec["tasks"] == {"arguments": "./my_parameters.txt", "separator": "\t"}
    assert spec_from_mapping(arguments.spec).launch.command == ("my_simulator", "--alpha", "{1}", "--beta", "{2}")
    assert arguments.spec["resources"]["tasks_per_node"] == 32 and "cpus_per_task" not in arguments.spec["resources"]
    assert resolve(spec_from_mapping(arguments.spec), profile("fir")).errors == ()


def test_gnu_parallel_with_values_on_its_command_line_runs_as_written():
    """Values after several ``:::`` groups become the task file's lines, every combination in
    GNU Parallel's order as columns split by a tab (nothing lost, nothing to do); read with
    ``{}`` (the whole line) they are not columns, and the line stays GNU Parallel's own."""
    from slurmkit.port.porting import import_script

    imported = import_script("#!/bin/bash\n#SBATCH --time=1:00:00\nparallel -j 4 sim {1} {2} ::: 1 2 ::: a b\n", name="x")
    assert imported.unmapped == () and imported.spec["tasks"] == {"arguments": "x.tasks", "separator": "\t"}
    assert imported.files == (("x.tasks", "1\ta\n1\tb\n2\ta\n2\tb\n"),)
    assert imported.spec["launch"] == {"command": "sim '{1}' '{2}'"}
    imported = import_script("#!/bin/bash\n#SBATCH --time=1:00:00\nparallel -j 4 sim {} ::: 1 2 ::: a b\n", name="x")
    assert imported.unmapped == () and "tasks" not in imported.spec
    assert imported.spec["launch"] == {"command": "parallel -j 4 sim '{}' ::: 1 2 ::: a b"}


def test_on_one_node_gnu_parallel_runs_one_task_a_core_as_the_gnu_parallel_page_does():
    text = script_of("fir", resources={"time": "3h", "tasks_per_node": 32, "mem_per_cpu": "2G"})
    assert "#SBATCH --nodes=1\n#SBATCH --cpus-per-task=32\n#SBATCH --mem-per-cpu=2G\n" in text
    assert "--ntasks-per-node" not in text and "SLURMKIT_TASKS_AT_ONCE" not in text
    assert 'parallel --jobs "$SLURM_CPUS_PER_TASK" --resume-failed' in text
    assert "export OMP_NUM_THREADS=1\n" in text   # each task one core, not the job's 32
    assert "https://docs.alliancecan.ca/wiki/GNU_Parallel/en" in text


def test_on_one_node_tasks_of_several_cores_share_the_jobs_cores():
    text = script_of("fir", resources={"time": "3h", "tasks_per_node": 8, "cpus_per_task": 4})
    assert "#SBATCH --cpus-per-task=32\n" in text and 'parallel --jobs "$((SLURM_CPUS_PER_TASK / 4))"' in text
    assert "export OMP_NUM_THREADS=4\n" in text and "one on every 4 of the job's\n# $SLURM_CPUS_PER_TASK cores at a time" in text


def test_several_nodes_keep_the_per_node_relay():
    text = script_of("fir", resources={"time": "3h", "nodes": 2, "tasks_per_node": 16})
    assert "#SBATCH --ntasks-per-node=16\n" in text and 'parallel --jobs "$SLURMKIT_TASKS_AT_ONCE"' in text
