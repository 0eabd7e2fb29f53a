"""The job spec: every error is one line ``file[:line]: key.path: message``; units and forms read right."""

import textwrap

import pytest

from slurmkit.api.job import Job
from slurmkit.core.errors import InputError, SpecError
from slurmkit.spec.spec import Dependency, GpuRequest, load_spec, spec_from_mapping

TOP_KEYS = ("name, profile, account, kind, resources, environment, launch, array, tasks, stage, resubmit, dependencies, mail, "
            "extra_directives, monitor, logs")
RESOURCE_KEYS = "nodes, tasks_per_node, cpus_per_task, mem, mem_per_cpu, gpus, time, tmp"


def minimal(**overrides) -> dict:
    """The smallest valid spec, with top-level keys replaced (None removes a key)."""
    data = {"name": "demo", "resources": {"time": "1h"}, "launch": {"command": "python main.py"}}
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def with_resources(**resources) -> dict:
    return minimal(resources={"time": "1h", **resources})


def error_of(data) -> str:
    """The message of the SpecError that ``data`` raises, checked to be one line."""
    with pytest.raises(SpecError) as caught:
        spec_from_mapping(data, source="job.yaml")
    message = str(caught.value)
    assert "\n" not in message
    return message


def write_spec(tmp_path, text: str):
    path = tmp_path / "job.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load_error(path) -> str:
    with pytest.raises(InputError) as caught:
        load_spec(path)
    return str(caught.value)


# ---------------------------------------------------------------------------- unknown keys


def test_misspelt_top_level_key_suggests_the_right_one():
    data = minimal(resources=None)
    data["resoures"] = {"time": "1h"}
    assert error_of(data) == f"job.yaml: resoures: unknown key; did you mean 'resources'? allowed: {TOP_KEYS}"


def test_misspelt_resource_key_suggests_gpus():
    assert error_of(with_resources(gpu="h100:1")) == (
        f"job.yaml: resources.gpu: unknown key; did you mean 'gpus'? allowed: {RESOURCE_KEYS}")


@pytest.mark.parametrize("data, expected", [
    (minimal(launch={"comand": "x"}),
     "job.yaml: launch.comand: unknown key; did you mean 'command'? "
     "allowed: command, shell, launcher, framework, batch_size, gpu_view, mixed_precision"),
    (minimal(environment={"venv": {"packges": ["numpy"]}}),
     "job.yaml: environment.venv.packges: unknown key; did you mean 'packages'? allowed: path, requirements, packages"),
    (minimal(environment={"modlues": ["gcc"]}),
     "job.yaml: environment.modlues: unknown key; did you mean 'modules'? "
     "allowed: modules, venv, variables, builds, build_cache, setup, errexit, nounset, allexport, login_shell"),
    (minimal(kind="array", array={"parameters": {"lr": [1]}, "throtle": 2}),
     "job.yaml: array.throtle: unknown key; did you mean 'throttle'? allowed: parameters, throttle, indices"),
    (with_resources(gpus={"modle": "h100"}),
     "job.yaml: resources.gpus.modle: unknown key; did you mean 'model'? allowed: model, count"),
])
def test_misspelt_nested_keys_name_their_full_path(data, expected):
    assert error_of(data) == expected


def test_unknown_key_with_nothing_close_lists_what_is_allowed_without_a_guess():
    assert error_of(minimal(zzzz=1)) == f"job.yaml: zzzz: unknown key; allowed: {TOP_KEYS}"


# ---------------------------------------------------------------------------- required keys


@pytest.mark.parametrize("data, field", [
    (minimal(name=None), "name"),
    (minimal(resources=None), "resources"),
    (minimal(launch=None), "launch"),
    (minimal(resources={"mem": "4G"}), "resources.time"),
    (minimal(launch={"launcher": "srun"}), "launch.command"),
    (minimal(kind="array", array={"throttle": 2}), "array.parameters"),
    (minimal(dependencies=[{"after": "ok"}]), "dependencies[0].jobs"),
])
def test_missing_required_key_is_named(data, field):
    assert error_of(data) == f"job.yaml: {field}: is required"


def test_a_required_key_given_as_null_counts_as_missing():
    assert error_of({**minimal(), "name": None}) == "job.yaml: name: is required"


# ---------------------------------------------------------------------------- types


@pytest.mark.parametrize("data, expected", [
    (with_resources(nodes="two"), "job.yaml: resources.nodes: expected a whole number from 1 to 1,000,000, got str 'two'"),
    (with_resources(nodes=True), "job.yaml: resources.nodes: expected a whole number from 1 to 1,000,000, got bool True"),
    (with_resources(nodes=0), "job.yaml: resources.nodes: expected a whole number from 1 to 1,000,000, got int 0"),
    (with_resources(cpus_per_task=2.5), "job.yaml: resources.cpus_per_task: expected a whole number from 1 to 1,000,000, got float 2.5"),
    (minimal(resources=["1h"]), f"job.yaml: resources: expected a mapping with keys {RESOURCE_KEYS}, got a list"),
    (minimal(name=["a"]), "job.yaml: name: expected text, got a list"),
    (minimal(launch=5),
     "job.yaml: launch: expected a mapping with keys command, shell, launcher, framework, batch_size, gpu_view, mixed_precision, "
     "got int 5"),
    (minimal(environment={"modules": {"gcc": 1}}), "job.yaml: environment.modules: expected a list, got a mapping"),
    (minimal(environment={"variables": 5}),
     "job.yaml: environment.variables: expected a mapping of variable names to values, got int 5"),
    (minimal(environment={"variables": "FOO=1"}),
     "job.yaml: environment.variables: expected a mapping of variable names to values, got str 'FOO=1'"),
    (minimal(environment={"variables": {"DEBUG": {"on": 1}}}), "job.yaml: environment.variables.DEBUG: expected text, got a mapping"),
    (minimal(kind="array", array={"parameters": 5}),
     "job.yaml: array.parameters: expected a mapping of parameter names to lists of values, got int 5"),
    (minimal(kind="array", array={"parameters": ["lr"]}),
     "job.yaml: array.parameters: expected a mapping of parameter names to lists of values, got a list"),
    (minimal(launch={"command": [["python"]]}), "job.yaml: launch.command[0]: expected text, got a list"),
    (with_resources(gpus=0), "job.yaml: resources.gpus: expected a whole number from 1 to 1,000,000, got int 0"),
    (with_resources(gpus={"model": "h100", "count": 0}),
     "job.yaml: resources.gpus.count: expected a whole number from 1 to 1,000,000, got int 0"),
    (with_resources(gpus="h100:two"), "job.yaml: resources.gpus: 'h100:two' is not MODEL:COUNT (e.g. h100:2)"),
    (with_resources(gpus="h100:\u00b2"), "job.yaml: resources.gpus: 'h100:\u00b2' is not MODEL:COUNT (e.g. h100:2)"),
    (minimal(kind="gpus"),
     "job.yaml: kind: 'gpus' is not one of them; did you mean 'gpu'? "
     "allowed: serial, threaded, mpi, gpu, array, many-tasks, multigpu, ddp, tf-multiworker, horovod, lightning, accelerate"),
    (minimal(launch={"command": "x", "launcher": "srunn"}),
     "job.yaml: launch.launcher: 'srunn' is not one of them; did you mean 'srun'? allowed: direct, srun, mpirun, torchrun, accelerate"),
])
def test_wrong_type_says_what_was_expected_and_what_was_given(data, expected):
    assert error_of(data) == expected


# ---------------------------------------------------------------------------- units


def test_unknown_size_unit_says_how_to_write_a_size():
    assert error_of(with_resources(mem="4X")) == (
        "job.yaml: resources.mem: '4X' is not a size: use a number with K, M, G or T "
        "(binary units: 4G, 4000M, 4GiB, 7T, 512K); a bare number means MiB; or 'node' for all the memory "
        "of each node (--mem=0)")
    assert error_of(with_resources(mem_per_cpu="4X")) == (
        "job.yaml: resources.mem_per_cpu: '4X' is not a size: use a number with K, M, G or T "
        "(binary units: 4G, 4000M, 4GiB, 7T, 512K); a bare number means MiB")


def test_duration_in_words_says_how_to_write_a_duration():
    assert error_of(minimal(resources={"time": "7 days"})) == (
        "job.yaml: resources.time: '7 days' is not a duration: use a SLURM time (7-00:00:00, 24:00:00, "
        "1:00:00, 0-03:00, or minutes such as 30) or a short form (7d, 24h, 90m, 3h30m)")


@pytest.mark.parametrize("data, expected", [
    (minimal(resources={"time": 0}), "job.yaml: resources.time: must be longer than zero"),
    (minimal(resources={"time": "0-00:00"}), "job.yaml: resources.time: must be longer than zero"),
    (minimal(resources={"time": -5}), "job.yaml: resources.time: -5 is not a duration: durations cannot be negative"),
    (with_resources(mem=-1), "job.yaml: resources.mem: -1 is not a size: sizes cannot be negative"),
    (with_resources(tmp="lots"), "job.yaml: resources.tmp: 'lots' is not a size: use a number with K, M, G or T "
                                 "(binary units: 4G, 4000M, 4GiB, 7T, 512K); a bare number means MiB"),
])
def test_impossible_amounts_are_refused(data, expected):
    assert error_of(data) == expected


@pytest.mark.parametrize("written, seconds", [
    ("0-03:00", 3 * 3600), ("3:00:00", 3 * 3600), ("90m", 90 * 60), ("2d", 2 * 86400), ("1-00:00:00", 86400),
    ("2-12", 60 * 3600), ("3h30m", 12600), (30, 30 * 60), ("30", 30 * 60), ("24h", 86400),
])  # M:S ("10:30", which SLURM reads as 10m30s) is refused: tests/unit/test_hostile_input.py
def test_durations_in_slurm_and_short_forms(written, seconds):
    assert spec_from_mapping(minimal(resources={"time": written})).resources.time_s == seconds


@pytest.mark.parametrize("written, mib", [("4G", 4096), ("4000M", 4000), ("4GiB", 4096), ("1T", 1024 ** 2), (2048, 2048), ("512K", 1)])
def test_memory_sizes_become_mib(written, mib):
    assert spec_from_mapping(with_resources(mem=written)).resources.mem_mb == mib
    assert spec_from_mapping(with_resources(mem_per_cpu=written)).resources.mem_per_cpu_mb == mib


def test_mem_and_mem_per_cpu_together_are_refused():
    assert error_of(with_resources(mem="4G", mem_per_cpu="1G")) == (
        "job.yaml: resources.mem_per_cpu: give either mem (per node) or mem_per_cpu, not both")


# ---------------------------------------------------------------------------- GPU forms


@pytest.mark.parametrize("written, wanted", [
    (2, GpuRequest(None, 2)),
    ("h100:2", GpuRequest("h100", 2)),
    ("h100", GpuRequest("h100", 1)),
    ({"model": "a100", "count": 4}, GpuRequest("a100", 4)),
    ({"count": 3}, GpuRequest(None, 3)),
])
def test_gpus_in_every_documented_form(written, wanted):
    assert spec_from_mapping(with_resources(gpus=written)).resources.gpus == wanted


# ---------------------------------------------------------------------------- unsafe values


@pytest.mark.parametrize("data, expected", [
    (minimal(name="my job"), "job.yaml: name: 'my job' is not allowed here: use letters, digits, '.', '_', '+' and '-'"),
    (minimal(name="x;reboot"), "job.yaml: name: 'x;reboot' is not allowed here: use letters, digits, '.', '_', '+' and '-'"),
    (minimal(name="-x"), "job.yaml: name: '-x' is not allowed here: use letters, digits, '.', '_', '+' and '-'"),
    (minimal(name="demo\n"), "job.yaml: name: 'demo\\n' is not allowed here: use letters, digits, '.', '_', '+' and '-'"),
    (minimal(account="def-x $(id)"), "job.yaml: account: 'def-x $(id)' is not allowed here: an account name such as def-someprof"),
    (minimal(account="def-x\n"), "job.yaml: account: 'def-x\\n' is not allowed here: an account name such as def-someprof"),
    (minimal(profile="../etc"), "job.yaml: profile: '../etc' is not allowed here: a profile name"),
    (minimal(environment={"modules": ["gcc", "cuda; rm -rf ~"]}),
     "job.yaml: environment.modules[1]: 'cuda; rm -rf ~' is not allowed here: a module name such as python/3.11"),
    (minimal(environment={"modules": ["`id`"]}),
     "job.yaml: environment.modules[0]: '`id`' is not allowed here: a module name such as python/3.11"),
    (minimal(environment={"variables": {"1BAD": "x"}}),
     "job.yaml: environment.variables.1BAD: '1BAD' is not allowed here: a variable name is letters, digits and '_'"),
    (minimal(environment={"variables": {"A-B": "x"}}),
     "job.yaml: environment.variables.A-B: 'A-B' is not allowed here: a variable name is letters, digits and '_'"),
    (minimal(mail="not-an-address"), "job.yaml: mail.user: 'not-an-address' is not allowed here: an e-mail address"),
    (minimal(mail="me@x.org; id"), "job.yaml: mail.user: 'me@x.org; id' is not allowed here: an e-mail address"),
    (minimal(mail="me@x.org\n"), "job.yaml: mail.user: 'me@x.org\\n' is not allowed here: an e-mail address"),
    (minimal(mail={"user": "me@x.org", "events": ["FINISH"]}),
     "job.yaml: mail.events[0]: 'FINISH' is not one of them; "
     "allowed: BEGIN, END, FAIL, REQUEUE, ALL, TIME_LIMIT, TIME_LIMIT_80, ARRAY_TASKS"),
    (minimal(extra_directives=["--constraint=a b"]),
     "job.yaml: extra_directives[0]: '--constraint=a b' is not allowed here: an sbatch option such as --constraint=cascade "
     "(one option, no spaces or quotes)"),
    (minimal(extra_directives=["--comment='$(id)'"]),
     "job.yaml: extra_directives[0]: \"--comment='$(id)'\" is not allowed here: an sbatch option such as --constraint=cascade "
     "(one option, no spaces or quotes)"),
    (minimal(extra_directives=["--exclusive\n#SBATCH --x"]),
     "job.yaml: extra_directives[0]: '--exclusive\\n#SBATCH --x' is not allowed here: an sbatch option such as "
     "--constraint=cascade (one option, no spaces or quotes)"),
    (with_resources(gpus="h100 ;x"),
     "job.yaml: resources.gpus: 'h100 ;x' is not allowed here: a GPU model such as h100, optionally with :COUNT"),
])
def test_values_that_reach_sbatch_or_lmod_unquoted_are_restricted(data, expected):
    assert error_of(data) == expected


def test_safe_values_pass_and_keep_their_spelling():
    spec = spec_from_mapping(minimal(
        name="run_1.b+c-d", account="rrg-prof_ab", environment={"modules": ["python/3.11", "StdEnv/2023"]},
        mail={"user": "a.b+c@uni.ca", "events": ["end", "fail"]}, extra_directives=["--constraint=cascade", "--exclusive"]))
    assert (spec.name, spec.account) == ("run_1.b+c-d", "rrg-prof_ab")
    assert spec.environment.modules == ("python/3.11", "StdEnv/2023")
    assert (spec.mail.user, spec.mail.events) == ("a.b+c@uni.ca", ("END", "FAIL"))
    assert spec.extra_directives == ("--constraint=cascade", "--exclusive")


# ---------------------------------------------------------------------------- the command


def test_command_that_cannot_be_split_asks_for_a_list():
    assert error_of(minimal(launch='python -c "print(1)')) == (
        "job.yaml: launch.command: cannot split it into arguments (No closing quotation); give a list of arguments instead")


@pytest.mark.parametrize("command", ["", "   ", []])
def test_empty_command_is_refused(command):
    assert error_of(minimal(launch={"command": command})) == "job.yaml: launch.command: is empty: say what the job runs"


def test_command_string_is_split_like_a_shell_and_a_list_is_kept_as_given():
    assert spec_from_mapping(minimal(launch="python main.py --tag 'run 1'")).launch.command == ("python", "main.py", "--tag", "run 1")
    assert spec_from_mapping(minimal(launch=["python", "a b", "$x"])).launch.command == ("python", "a b", "$x")


# ---------------------------------------------------------------------------- array section


def test_kind_array_needs_an_array_section():
    assert error_of(minimal(kind="array")) == (
        "job.yaml: array: kind 'array' needs an array section with the parameters to sweep")


@pytest.mark.parametrize("kind", ["serial", "threaded", "mpi", "gpu"])
def test_other_kinds_cannot_have_an_array_section(kind):
    assert error_of(minimal(kind=kind, array={"parameters": {"lr": [1, 2]}})) == (
        f"job.yaml: array: only kind 'array' sweeps parameters; set kind: array (it is '{kind}')")


def test_a_serial_job_is_the_default_so_an_array_section_alone_is_refused():
    assert error_of(minimal(array={"parameters": {"lr": [1]}})) == (
        "job.yaml: array: only kind 'array' sweeps parameters; set kind: array (it is 'serial')")


@pytest.mark.parametrize("array, expected", [
    ({"parameters": {}}, "job.yaml: array.parameters: name at least one parameter and its values"),
    ({"parameters": {"lr": []}}, "job.yaml: array.parameters.lr: has no values"),
    ({"parameters": {"lr-rate": [1]}},
     "job.yaml: array.parameters.lr-rate: 'lr-rate' is not allowed here: "
     "a parameter name is a shell variable name (letters, digits, '_'), not SLURM_* or a name starting with '_'"),
    ({"parameters": {"SLURM_ARRAY_TASK_ID": [1]}},
     "job.yaml: array.parameters.SLURM_ARRAY_TASK_ID: 'SLURM_ARRAY_TASK_ID' is not allowed here: "
     "a parameter name is a shell variable name (letters, digits, '_'), not SLURM_* or a name starting with '_'"),
    ({"parameters": {"PATH": ["/x"]}},
     "job.yaml: array.parameters.PATH: 'PATH' would replace the shell's own variable; choose another name"),
    ({"parameters": {"lr": [1]}, "throttle": 0}, "job.yaml: array.throttle: expected a whole number from 1 to 1,000,000, got int 0"),
])
def test_array_section_rules(array, expected):
    assert error_of(minimal(kind="array", array=array)) == expected


@pytest.mark.parametrize("package", ["-e", "--index-url=http://x", " numpy", ""])
def test_a_venv_package_that_pip_would_read_as_an_option_is_refused(package):
    assert error_of(minimal(environment={"venv": {"packages": [package]}})) == (
        f"job.yaml: environment.venv.packages[0]: {package!r} is not allowed here: "
        "a requirement such as numpy or torch==2.3 (options are not packages)")


@pytest.mark.parametrize("gpus", ["h100:", 2.5])
def test_a_gpu_request_that_is_neither_count_nor_model_count_is_refused(gpus):
    assert error_of(minimal(resources={"time": "1h", "gpus": gpus})).startswith("job.yaml: resources.gpus: ")


def test_array_parameters_keep_their_order_and_read_values_as_text():
    spec = spec_from_mapping(minimal(kind="array", array={"parameters": {"seed": [1, 2], "lr": 0.1}, "throttle": 3}))
    assert spec.array.parameters == (("seed", ("1", "2")), ("lr", ("0.1",)))
    assert spec.array.throttle == 3


# ---------------------------------------------------------------------------- dependencies


@pytest.mark.parametrize("written, expected", [
    (123, (Dependency("ok", ("123",)),)),
    ("123", (Dependency("ok", ("123",)),)),
    ([1, 2], (Dependency("ok", ("1",)), Dependency("ok", ("2",)))),
    ({"after": "any", "jobs": [1, 2]}, (Dependency("any", ("1", "2")),)),
    ([{"after": "ok", "jobs": [1, 2]}, {"after": "notok", "jobs": "3"}], (Dependency("ok", ("1", "2")), Dependency("notok", ("3",)))),
    ([{"after": "start", "jobs": ["45_3"]}], (Dependency("start", ("45_3",)),)),
])
def test_dependency_forms(written, expected):
    assert spec_from_mapping(minimal(dependencies=written)).dependencies == expected


@pytest.mark.parametrize("written, expected", [
    ({"after": "okk", "jobs": [1]},
     "job.yaml: dependencies[0].after: 'okk' is not one of them; did you mean 'ok'? allowed: ok, any, notok, start"),
    ("12a", "job.yaml: dependencies[0].jobs[0]: '12a' is not allowed here: a job id such as 12345"),
    (["123\n"], "job.yaml: dependencies[0].jobs[0]: '123\\n' is not allowed here: a job id such as 12345"),
    ([{"after": "ok", "jobs": [1, "x;y"]}], "job.yaml: dependencies[0].jobs[1]: 'x;y' is not allowed here: a job id such as 12345"),
    ({"after": "ok", "jobs": [1], "kind": "x"},
     "job.yaml: dependencies[0].kind: unknown key; allowed: after, jobs"),
])
def test_bad_dependencies_are_located(written, expected):
    assert error_of(minimal(dependencies=written)) == expected


# ---------------------------------------------------------------------------- file and line


def test_unknown_nested_key_names_its_file_and_line(tmp_path):
    path = write_spec(tmp_path, """
        # a comment line
        name: demo
        resources:
          time: 3h
          gpu: h100:1
        launch: python train.py
    """)
    assert load_error(path) == (
        f"{path}:5: resources.gpu: unknown key; did you mean 'gpus'? allowed: {RESOURCE_KEYS}")


def test_bad_unit_points_at_its_line(tmp_path):
    path = write_spec(tmp_path, """
        name: demo
        launch: python main.py
        resources:
          time: 1h
          mem: 4X
    """)
    assert load_error(path).startswith(f"{path}:5: resources.mem: '4X' is not a size: ")


def test_missing_nested_key_points_at_its_section(tmp_path):
    path = write_spec(tmp_path, """
        name: demo
        launch: python main.py

        resources:
          mem: 4G
    """)
    assert load_error(path) == f"{path}:4: resources.time: is required"


def test_bad_list_item_points_at_the_item(tmp_path):
    path = write_spec(tmp_path, """
        name: demo
        resources: {time: 1h}
        environment:
          modules:
            - gcc
            - cuda; id
        launch: python main.py
    """)
    assert load_error(path) == (
        f"{path}:6: environment.modules[1]: 'cuda; id' is not allowed here: a module name such as python/3.11")


def test_a_resolve_error_reported_by_job_render_points_at_the_spec_line(tmp_path):
    path = write_spec(tmp_path, """
        name: demo
        profile: nibi
        account: def-someprof
        kind: gpu
        resources:
          time: 3h
          gpus: h10:1
        launch: python train.py
    """)
    with pytest.raises(SpecError) as caught:
        Job.from_yaml(path).render()
    assert str(caught.value).startswith(f"{path}:7: resources.gpus: nibi has no GPU called 'h10'; did you mean 'h100'?")


def test_yaml_syntax_error_names_file_and_line(tmp_path):
    path = write_spec(tmp_path, """
        name: demo
        resources: {time: 3h
        launch: python main.py
    """)
    assert load_error(path) == f"{path}:3: not valid YAML: did not find expected ',' or '}}'"


def test_tab_indentation_names_its_line(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("name: demo\nresources:\n  time: 3h\n\tmem: 4G\nlaunch: x\n")
    assert load_error(path) == f"{path}:4: not valid YAML: found a tab character that violates indentation"


def test_a_key_given_twice_is_an_error_not_a_silent_override(tmp_path):
    path = write_spec(tmp_path, """
        name: demo
        resources:
          time: 3h
          gpus: h100:1
        launch: python main.py
        resources:
          time: 1h
    """)
    assert load_error(path) == f"{path}:6: resources: is given twice (first on line 2); keep one"


def test_a_python_tag_is_refused_as_yaml_not_run(tmp_path):
    path = write_spec(tmp_path, "name: !!python/object/apply:os.system [id]\n")
    assert load_error(path).startswith(f"{path}:1: not valid YAML: could not determine a constructor")


def test_a_list_as_a_key_is_a_yaml_error(tmp_path):
    path = write_spec(tmp_path, "? [a, b]\n: x\n")
    assert load_error(path) == f"{path}:1: not valid YAML: found unhashable key"


def test_a_key_that_is_not_text_is_refused(tmp_path):
    path = write_spec(tmp_path, "name: demo\nresources:\n  1: x\n")
    assert load_error(path) == f"{path}:3: resources: key 1 is not a string; quote it"


def test_a_file_that_is_not_utf8_is_an_input_error(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    assert load_error(path) == f"{path}: not UTF-8 text (byte 9 cannot be decoded)"


def test_a_missing_file_is_an_input_error(tmp_path):
    assert load_error(tmp_path / "nope.yaml") == f"{tmp_path / 'nope.yaml'}: cannot read it: No such file or directory"


def test_a_spec_that_is_not_a_mapping_is_refused_at_line_1(tmp_path):
    path = write_spec(tmp_path, "- name: demo\n")
    assert load_error(path) == f"{path}:1: expected a mapping with keys {TOP_KEYS}, got a list"


def test_an_empty_file_asks_for_the_name_first(tmp_path):
    path = write_spec(tmp_path, "# nothing yet\n")
    assert load_error(path).splitlines() == [f"{path}: name: is required", f"{path}: resources: is required",
                                             f"{path}: launch: is required"]


def test_a_valid_file_loads_with_its_source_and_lines(tmp_path):
    path = write_spec(tmp_path, """
        name: demo
        resources:
          time: 0-03:00
          mem: 4GiB
        launch: [python, main.py]
    """)
    spec = load_spec(path)
    assert (spec.source, spec.resources.time_s, spec.resources.mem_mb, spec.launch.command) == (
        str(path), 10800, 4096, ("python", "main.py"))
    assert (spec.line_of("resources.mem"), spec.line_of("resources.gpus"), spec.line_of("launch")) == (4, 2, 5)


def test_job_keyword_fields_are_checked_like_a_file_and_named_job():
    with pytest.raises(SpecError) as caught:
        Job(name="demo", resources={"time": "1h", "gpu": 1}, launch="x")
    assert str(caught.value) == f"Job(...): resources.gpu: unknown key; did you mean 'gpus'? allowed: {RESOURCE_KEYS}"


@pytest.mark.parametrize("key", ["errexit", "nounset"])
def test_the_plain_bash_switches_are_true_unless_false_and_nothing_else(key):
    """errexit is true unless false; nounset unset (the launch line's set -u only) unless true or false."""
    base = {"name": "j", "resources": {"time": "1h"}, "launch": {"command": "./app"}}
    assert getattr(spec_from_mapping(base).environment, key) is (True if key == "errexit" else None)
    assert getattr(spec_from_mapping({**base, "environment": {key: True}}).environment, key) is True
    assert getattr(spec_from_mapping({**base, "environment": {key: False}}).environment, key) is False
    with pytest.raises(SpecError, match=rf"environment\.{key}: must be true or false, not 'no'"):
        spec_from_mapping({**base, "environment": {key: "no"}})


def test_login_shell_is_false_unless_true_and_renders_bash_l():
    base = {"name": "j", "resources": {"time": "1h"}, "launch": {"command": "./app"}}
    assert spec_from_mapping(base).environment.login_shell is False
    assert spec_from_mapping({**base, "environment": {"login_shell": True}}).environment.login_shell is True
    with pytest.raises(SpecError, match=r"environment\.login_shell: must be true or false, not 'yes'"):
        spec_from_mapping({**base, "environment": {"login_shell": "yes"}})
    plain = Job(name="j", resources={"time": "1h"}, launch="./app", profile="generic").render()
    login = Job(name="j", resources={"time": "1h"}, launch="./app", profile="generic",
                environment={"login_shell": True}).render()
    assert plain.startswith("#!/bin/bash\n") and login.startswith("#!/bin/bash -l\n")


@pytest.mark.parametrize("section, said, meant", [("array", "range", "indices"), ("resources", "walltime", "time"),
                                                  ("resources", "gres", "gpus"), ("mail", "email", "user")])
def test_a_word_from_sbatch_or_habit_gets_the_key_it_means(section, said, meant):
    """``array: {range: 1-10}`` shares no letters with ``indices``: spelling alone suggested nothing."""
    data = {"name": "x", "profile": "generic", "launch": {"command": "true"}, section: {said: "1"}}
    with pytest.raises(SpecError, match=f"{section}.{said}: unknown key; did you mean '{meant}'"):
        spec_from_mapping(data)
