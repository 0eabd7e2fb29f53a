"""``slurmkit new``, ``render`` and ``check``: files, exit codes, one-line errors, never a traceback."""

import json
import os
import stat
import textwrap

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.render.runtime import runtime

SERIAL_SPEC = """
    name: job
    profile: local
    account: def-someprof
    resources:
      time: 1h
    launch: python main.py
"""

GPU_SPEC = """
    name: train
    profile: nibi
    account: def-someprof
    kind: gpu
    resources:
      time: 3h
      gpus: h100:1
      cpus_per_task: 8
    launch: python train.py
"""


@pytest.fixture(autouse=True)
def controlled_environment(tmp_path, monkeypatch):
    """Run in an empty folder, with no variable that picks a profile or an account."""
    monkeypatch.chdir(tmp_path)
    for name in ("SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME", "SBATCH_ACCOUNT", "SLURM_ACCOUNT", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def run(*args):
    return CliRunner().invoke(main, list(args))


def write_spec(text: str, name: str = "job.yaml") -> str:
    with open(name, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(text).lstrip("\n"))
    return name


def assert_bad_input(result) -> None:
    """Exit 2 through SystemExit, with no traceback anywhere."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output


def files_under(folder=".") -> list:
    return sorted(os.path.relpath(os.path.join(root, f), folder) for root, _, names in os.walk(folder) for f in names
                  if not root.startswith(os.path.join(folder, "config")))


# ---------------------------------------------------------------------------- new


def test_new_with_yes_writes_the_spec_and_its_script_and_says_what_next(tmp_path):
    result = run("new", "demo", "--yes", "--profile", "nibi", "--account", "def-someprof", "--kind", "gpu")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:3] == ["wrote demo/job.yaml", "wrote demo/job.sbatch",
                                              "next: edit demo/job.yaml (what the job runs and what it needs), then"]
    assert "slurmkit check demo/job.yaml" in result.stdout and "slurmkit submit demo/job.yaml --wait" in result.stdout
    assert "#!/bin/bash" not in result.stdout and len(result.stdout.splitlines()) == 5   # the script is in the file
    script = tmp_path / "demo" / "job.sbatch"
    assert "#SBATCH --gpus-per-node=h100:1\n" in script.read_text()
    shown = run("new", "demo", "--yes", "--profile", "nibi", "--account", "def-someprof", "--kind", "gpu", "--force", "--show")
    assert shown.stdout.startswith(script.read_text())   # the script first: the next steps stay on the screen
    assert shown.stdout.splitlines()[-3:] == ["next: edit demo/job.yaml (what the job runs and what it needs), then",
                                              "  slurmkit check demo/job.yaml           # errors and warnings on its cluster",
                                              "  slurmkit submit demo/job.yaml --wait   # submit it and follow it to the end"]
    assert stat.S_IMODE(script.stat().st_mode) == 0o700   # private: a script holds environment.variables
    assert files_under("demo") == ["job.sbatch", "job.yaml"]


def test_new_points_editors_at_the_shipped_json_schema_which_the_spec_meets(tmp_path):
    import jsonschema
    import yaml

    from slurmkit.spec.schemas import job_schema_path

    assert run("new", "demo", "--yes", "--profile", "nibi", "--account", "def-someprof", "--kind", "gpu").exit_code == 0
    first, _, rest = (tmp_path / "demo" / "job.yaml").read_text().partition("\n")
    assert first == f"# yaml-language-server: $schema={job_schema_path()}"
    assert job_schema_path().is_file() and job_schema_path().is_absolute()
    schema = json.loads(job_schema_path().read_text())
    assert not list(jsonschema.Draft7Validator(schema).iter_errors(yaml.safe_load(rest)))


@pytest.mark.parametrize("profile, kind, line", [
    ("nibi", "gpu", "  gpus: h100:1  # no cores or memory said: job.sbatch asks --cpus-per-task=14 and --mem=250G, the share "
                    "of a nibi GPU node that each GPU's charge covers (https://docs.alliancecan.ca/wiki/Allocations_and_compute_scheduling/en)"),
    ("fir", "gpu", "  gpus: h100:1  # no cores or memory said: job.sbatch asks --cpus-per-task=12 and --mem=280G, the share "
                   "of a fir GPU node that each GPU's charge covers (https://docs.alliancecan.ca/wiki/Allocations_and_compute_scheduling/en)"),
    ("nibi", "serial", "  mem_per_cpu: 2G  # a first job's memory per core "
                       "(https://docs.alliancecan.ca/wiki/Best_practices_for_job_submission/en); "
                       "without it SLURM gives 256M (https://docs.alliancecan.ca/wiki/Running_jobs/en)"),
    ("narval", "mpi", "  mem_per_cpu: 2G  # a first job's memory per core "
                      "(https://docs.alliancecan.ca/wiki/Best_practices_for_job_submission/en); "
                      "without it SLURM gives 256M (https://docs.alliancecan.ca/wiki/Running_jobs/en)"),
])
def test_new_says_where_the_cores_and_memory_of_the_job_come_from(tmp_path, profile, kind, line):
    """A first job runs well as is, and its spec says why each size is what it is;
    the comment and the rendered script agree, and check has nothing to say."""
    args = ["--gpus", "h100:1"] if kind == "gpu" else []
    result = run("new", "demo", "--yes", "--profile", profile, "--account", "def-x", "--kind", kind, *args)
    assert result.exit_code == 0, result.output
    spec = (tmp_path / "demo" / "job.yaml").read_text()
    assert line in spec.splitlines(), spec
    script = (tmp_path / "demo" / "job.sbatch").read_text()
    for asked in ("--cpus-per-task", "--mem", "--mem-per-cpu"):
        if f"{asked}=" in line:
            value = line.split(f"{asked}=")[1].split()[0].rstrip(",")
            assert f"#SBATCH {asked}={value}\n" in script
    if "mem_per_cpu" in line:
        assert "#SBATCH --mem-per-cpu=2G\n" in script
    checked = run("check", "demo/job.yaml")
    assert checked.exit_code == 0 and "warning" not in checked.output, checked.output


def test_new_on_a_whole_node_site_asks_no_memory_for_a_cpu_job(tmp_path):
    assert run("new", "demo", "--yes", "--profile", "trillium", "--account", "def-x", "--kind", "mpi").exit_code == 0
    spec = (tmp_path / "demo" / "job.yaml").read_text()
    assert "mem" not in spec


def test_new_writes_a_spec_that_renders_to_the_same_script():
    assert run("new", "demo", "--yes", "--profile", "nibi", "--account", "def-x", "--time", "2h").exit_code == 0
    result = run("render", "demo/job.yaml")
    assert result.exit_code == 0, result.output
    with open("demo/job.sbatch", encoding="utf-8") as handle:
        assert result.stdout == handle.read()


def test_new_takes_the_account_from_the_environment(monkeypatch):
    monkeypatch.setenv("SBATCH_ACCOUNT", "rrg-envprof")
    assert run("new", "demo", "--yes", "--profile", "local").exit_code == 0
    with open("demo/job.yaml", encoding="utf-8") as handle:
        assert "account: rrg-envprof\n" in handle.read()


def test_new_refuses_to_overwrite_without_force():
    assert run("new", "demo", "--yes", "--profile", "nibi", "--account", "def-x").exit_code == 0
    with open("demo/job.yaml", "a", encoding="utf-8") as handle:
        handle.write("# my edits\n")
    result = run("new", "demo", "--yes", "--profile", "nibi", "--account", "def-x")
    assert_bad_input(result)
    assert result.stderr == "error: demo/job.yaml, demo/job.sbatch already exist; use --force to overwrite\n"
    with open("demo/job.yaml", encoding="utf-8") as handle:
        assert handle.read().endswith("# my edits\n")


def test_new_with_force_overwrites():
    assert run("new", "demo", "--yes", "--profile", "nibi", "--account", "def-x").exit_code == 0
    result = run("new", "demo", "--yes", "--profile", "nibi", "--account", "def-x", "--time", "5h", "--force")
    assert result.exit_code == 0, result.output
    with open("demo/job.sbatch", encoding="utf-8") as handle:
        assert "#SBATCH --time=0-05:00:00\n" in handle.read()


@pytest.mark.parametrize("args, message", [
    (["--kind", "gpu", "--gpus", "nope:1"],
     "error: --gpus: nibi has no GPU called 'nope'; it has: h100, h100_1g.10gb, h100_2g.20gb, h100_3g.40gb, mi300a\n"),
    (["--time", "7 days"],
     "error: --time: '7 days' is not a duration: use a SLURM time (7-00:00:00, 24:00:00, 1:00:00, 0-03:00, "
     "or minutes such as 30) or a short form (7d, 24h, 90m, 3h30m)\n"),
    (["--time", "8d"],
     "error: --time: 8d is above nibi's maximum walltime of 7d; split the work into shorter jobs that resume from a checkpoint\n"),
    (["--command", "python 'unclosed"],
     "error: --command: cannot split it into arguments (No closing quotation); give a list of arguments instead\n"),
])
def test_new_with_a_bad_answer_writes_nothing(args, message):
    result = run("new", "demo", "--yes", "--profile", "nibi", "--account", "def-x", *args)
    assert_bad_input(result)
    assert result.stderr == message
    assert files_under() == []


def test_new_without_an_account_where_one_is_required_writes_nothing():
    result = run("new", "demo", "--yes", "--profile", "local")
    assert_bad_input(result)
    assert result.stderr == ("error: --account: local needs an account: give one such as def-yourprof "
                             "(or export SBATCH_ACCOUNT)\n")
    assert files_under() == []


@pytest.mark.parametrize("name", ["my job", "x;id", "-x", "demo\n"])
def test_new_refuses_a_name_that_is_not_a_job_name(name):
    result = run("new", "--yes", "--profile", "nibi", "--", name)
    assert_bad_input(result)
    assert result.stderr == f"error: {name!r}: a job name uses letters, digits, '.', '_', '+' and '-'\n"
    assert files_under() == []


def test_new_with_an_unknown_profile_is_one_line_of_error():
    result = run("new", "demo", "--yes", "--profile", "nosuch")
    assert_bad_input(result)
    assert result.stderr.startswith("error: no site profile named 'nosuch'")
    assert result.stderr.count("\n") == 1
    assert files_under() == []


def test_new_for_a_retired_cluster_warns_in_one_line():
    result = run("new", "demo", "--yes", "--profile", "graham", "--account", "def-x")
    assert result.exit_code == 0, result.output
    assert result.stderr == ("warning: profile: profile 'graham' describes a cluster retired on 2025-09-01; its successor is 'nibi': "
                             "move the job with `slurmkit port JOB.yaml --to nibi -o nibi.yaml` "
                             "(its files remain available on Nibi, which shares its file systems)\n")


def test_new_reports_the_resolvers_warnings_on_stderr():
    result = run("new", "demo", "--yes", "--profile", "nibi")
    assert result.exit_code == 0, result.output
    assert result.stderr == ("warning: account: no account: nibi rejects the job if you belong to several allocations; "
                             "add 'account: def-yourprof'\n")
    assert result.stdout.startswith("wrote demo/job.yaml\n")


# ---------------------------------------------------------------------------- render


def test_render_prints_the_script_and_nothing_else():
    result = run("render", write_spec(GPU_SPEC))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("#!/bin/bash\n#SBATCH --job-name=train\n")
    assert "#SBATCH --gpus-per-node=h100:1\n" in result.stdout
    assert result.stderr == ""


def test_render_to_a_file_writes_it_executable_and_leaves_no_temporary_file(tmp_path):
    result = run("render", write_spec(GPU_SPEC), "-o", "out/train.sbatch")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    script = tmp_path / "out" / "train.sbatch"
    assert script.read_text().startswith("#!/bin/bash\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o700   # private: a script holds environment.variables
    assert sorted(os.listdir(tmp_path / "out")) == sorted(["train.sbatch", runtime().name])   # the runtime it sources, beside it


def test_render_standalone_carries_the_runtime_and_runs_with_no_file_beside_it(tmp_path):
    """render --standalone appends the library: the script alone runs (here: bash, no SLURM), and
    one whose appended library was edited is refused with the runtime's exit code."""
    import subprocess

    result = run("render", write_spec(SERIAL_SPEC), "--standalone", "-o", "alone/job.sbatch")
    assert result.exit_code == 0, result.output
    assert os.listdir(tmp_path / "alone") == ["job.sbatch"]
    script = tmp_path / "alone" / "job.sbatch"
    assert script.read_text().endswith(runtime().text)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "nohome"), "SLURMKIT_JOB_DIR": str(tmp_path), "SLURM_JOB_ID": "7"}
    stand_in = tmp_path / "bin"
    stand_in.mkdir()
    for name in ("module", "python"):
        (stand_in / name).write_text("#!/bin/sh\n")
        (stand_in / name).chmod(0o755)
    env["PATH"] = f"{stand_in}:{env['PATH']}"
    done = subprocess.run(["bash", str(script)], env=env, cwd=tmp_path / "alone", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "7.exit").read_text() == "0\n"
    script.write_text(script.read_text().replace("slurmkit: saved", "slurmkit: kept"))
    done = subprocess.run(["bash", str(script)], env=env, cwd=tmp_path / "alone", capture_output=True, text=True, timeout=60)
    assert done.returncode == runtime().exit_code and "render --standalone" in done.stderr


def test_render_with_errors_leaves_an_existing_output_untouched():
    with open("train.sbatch", "w", encoding="utf-8") as handle:
        handle.write("old\n")
    spec = write_spec(GPU_SPEC.replace("h100:1", "h10:1"))
    result = run("render", spec, "-o", "train.sbatch")
    assert_bad_input(result)
    with open("train.sbatch", encoding="utf-8") as handle:
        assert handle.read() == "old\n"
    assert sorted(os.listdir(".")) == ["job.yaml", "train.sbatch"]


def test_render_errors_are_located_file_line_field_message():
    result = run("render", write_spec(GPU_SPEC.replace("h100:1", "h10:1").replace("time: 3h", "time: 8d")))
    assert_bad_input(result)
    assert result.stdout == ""
    assert result.stderr == (
        "error: job.yaml:6: resources.time: 8d is above nibi's maximum walltime of 7d; split the work into shorter jobs "
        "that resume from a checkpoint\n"
        "error: job.yaml:7: resources.gpus: nibi has no GPU called 'h10'; did you mean 'h100'? it has: "
        "h100, h100_1g.10gb, h100_2g.20gb, h100_3g.40gb, mi300a\n")


def test_render_warnings_go_to_stderr_and_the_script_still_to_stdout():
    result = run("render", write_spec(GPU_SPEC.replace("cpus_per_task: 8", "cpus_per_task: 20")))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("#!/bin/bash\n")
    assert result.stderr == ("warning: job.yaml:8: resources.cpus_per_task: 20 cores for 1 GPU(s) is above the site's advice of "
                             "14 cores per GPU; ask at most 14 so that other GPUs on the node stay usable\n")


def test_render_for_a_retired_cluster_warns_once_with_its_location():
    spec = write_spec("name: sim\nprofile: niagara\nkind: mpi\nresources: {time: 3h, nodes: 2}\nlaunch: ./sim\n")
    result = run("render", spec)
    assert result.exit_code == 0, result.output
    assert result.stderr == ("warning: job.yaml:2: profile: profile 'niagara' describes a cluster retired on 2025-09-30; its successor "
                             "is 'trillium': move the job with `slurmkit port job.yaml --to trillium -o trillium.yaml` "
                             "(Trillium replaced Niagara and Mist)\n")


def test_render_with_profile_option_overrides_the_spec():
    result = run("render", write_spec(GPU_SPEC.replace("h100:1", "a100:1")), "--profile", "narval")
    assert result.exit_code == 0, result.output
    assert "#SBATCH --gpus-per-node=a100:1\n" in result.stdout
    assert "for narval, kind gpu:" in result.stdout


@pytest.mark.parametrize("text, message", [
    ("name: train\nresources:\n  time: 3h\n  gpu: 1\nlaunch: x\n",
     "error: job.yaml:4: resources.gpu: unknown key; did you mean 'gpus'? allowed: nodes, tasks_per_node, cpus_per_task, mem, "
     "mem_per_cpu, gpus, time, tmp\n"),
    ("name: train\nresources: {time: 3h\nlaunch: x\n", "error: job.yaml:3: not valid YAML: did not find expected ',' or '}'\n"),
    ("name: train\nprofile: nibi\nresources: {time: 3h}\nlaunch: x\nname: again\n",
     "error: job.yaml:5: name: is given twice (first on line 1); keep one\n"),
])
def test_render_spec_errors_are_one_located_line(text, message):
    result = run("render", write_spec(text))
    assert_bad_input(result)
    assert result.stderr == message


def test_render_of_a_missing_file_is_bad_input():
    result = run("render", "nope.yaml")
    assert_bad_input(result)
    assert result.stderr == "error: nope.yaml: cannot read it: No such file or directory\n"


def test_render_of_a_file_that_is_not_utf8_is_bad_input():
    with open("job.yaml", "wb") as handle:
        handle.write(b"name: \xff\n")
    result = run("render", "job.yaml")
    assert_bad_input(result)
    assert result.stderr == "error: job.yaml: not UTF-8 text (byte 6 cannot be decoded)\n"


def test_render_without_any_way_to_tell_the_cluster_is_bad_input(monkeypatch):
    monkeypatch.setattr("socket.gethostname", lambda: "laptop.example.org")
    result = run("render", write_spec("name: x\nresources: {time: 1h}\nlaunch: ./x\n"))
    assert_bad_input(result)
    assert result.stderr.startswith("error: cannot tell which cluster this is")
    assert result.stderr.count("\n") == 1


def test_render_takes_the_profile_from_cc_cluster(monkeypatch):
    monkeypatch.setenv("CC_CLUSTER", "narval")
    result = run("render", write_spec("name: x\naccount: def-x\nresources: {time: 1h}\nlaunch: ./x\n"))
    assert result.exit_code == 0, result.output
    assert "for narval, kind serial:" in result.stdout


@pytest.mark.parametrize("profile", ["nosuch", "alliance"])
def test_render_with_a_profile_that_cannot_be_used_is_bad_input(profile):
    result = run("render", write_spec(GPU_SPEC), "--profile", profile)
    assert_bad_input(result)
    assert result.stderr.startswith("error: ")
    assert result.stderr.count("\n") == 1


# ---------------------------------------------------------------------------- check


def test_check_of_a_good_spec_says_so_and_exits_zero():
    result = run("check", write_spec(GPU_SPEC))
    assert result.exit_code == 0, result.output
    assert result.stdout == "job.yaml: no problems found\n"


def test_check_lists_errors_and_warnings_and_exits_two():
    result = run("check", write_spec(GPU_SPEC.replace("account: def-someprof", "account: someprof").replace("h100:1", "h100:9")))
    assert_bad_input(result)
    assert result.stdout == (
        "warning: job.yaml:3: account: 'someprof' does not look like a nibi account (def-..., rrg-..., rpp-..., ctb-...)\n"
        "error: job.yaml:7: resources.gpus: 9 h100 per node is more than any nibi node has (at most 8); use more nodes\n")


def test_check_with_only_warnings_exits_zero():
    result = run("check", write_spec(GPU_SPEC.replace("    account: def-someprof\n", "")))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("warning: job.yaml:1: account: no account: nibi rejects the job")


def test_check_json_has_the_spec_and_one_row_per_finding():
    result = run("check", write_spec(GPU_SPEC.replace("time: 3h", "time: 10m").replace("h100:1", "h10")), "--json")
    assert_bad_input(result)
    assert json.loads(result.stdout) == {"schema": 1, "spec": "job.yaml", "findings": [
        {"level": "warning", "field": "resources.time", "line": 6,
         "message": "10m is short: nibi asks production jobs to run at least 1h; "
                    "bundle short tasks into one longer job (kind 'many-tasks' runs them with GNU Parallel)"},
        {"level": "error", "field": "resources.gpus", "line": 7,
         "message": "nibi has no GPU called 'h10'; did you mean 'h100'? it has: h100, h100_1g.10gb, h100_2g.20gb, h100_3g.40gb, mi300a"},
    ]}


def test_check_json_of_a_good_spec_is_an_empty_list():
    result = run("check", write_spec(GPU_SPEC), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"schema": 1, "spec": "job.yaml", "findings": []}


def test_check_of_a_spec_with_a_schema_error_is_one_located_line():
    result = run("check", write_spec(GPU_SPEC.replace("kind: gpu", "kind: gpus")), "--json")
    assert_bad_input(result)
    assert json.loads(result.stdout)["error"] == {"code": "spec-invalid", "file": "job.yaml", "line": 4, "field": "kind", "message":
                                                  "'gpus' is not one of them; did you mean 'gpu'? allowed: serial, threaded, mpi, "
                                                  "gpu, array, many-tasks, multigpu, ddp, tf-multiworker, horovod, lightning, accelerate"}
    assert result.stderr == ("error: job.yaml:4: kind: 'gpus' is not one of them; did you mean 'gpu'? allowed: serial, threaded, mpi, "
                             "gpu, array, many-tasks, multigpu, ddp, tf-multiworker, horovod, lightning, accelerate\n")


@pytest.mark.parametrize("command", ["render", "check"])
def test_a_folder_given_as_the_spec_is_bad_input(command, tmp_path):
    (tmp_path / "folder").mkdir()
    result = run(command, "folder")
    assert_bad_input(result)
