"""Environments built on the login node (Trillium's Python advice; slurmkit/build/envbuild.py):
the rule in the profile, the key that decides which environment a job activates, the script that
activates it and installs nothing, check's error when it is not built, and slurmkit env build
itself (on this host, with a profile variant that loads no modules)."""

import subprocess
import textwrap

import pytest
import yaml

from slurmkit.api.job import Job
from slurmkit.core.errors import InputError, SpecError
from slurmkit.render.render import render
from slurmkit.resolve.localfacts import LocalFacts
from slurmkit.resolve.loginenv import KEY_FILE, PARTIAL_FILE, built_key, env_key
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

PYTHON_PAGE = "https://docs.alliancecan.ca/wiki/Python/en"


def spec(venv=None, profile="trillium", **fields):
    data = {"name": "demo", "account": "def-someprof", "kind": "gpu", "profile": profile,
            "resources": {"time": "3h", "gpus": "h100:1"}, "environment": {"venv": venv or {"requirements": "requirements.txt"}},
            "launch": {"command": "python train.py"}}
    data.update(fields)
    return spec_from_mapping(data, source="job.yaml")


def plan(job_spec, profile="trillium", local=None):
    resolution = resolve(job_spec, load_profile(profile), local)
    assert resolution.errors == (), resolution.errors
    return resolution.plan


def test_trillium_builds_environments_on_the_login_node_in_home_with_the_python_page_as_source():
    rule = load_profile("trillium").rules.env_build
    assert (rule.path, rule.source) == ("$HOME/.slurmkit/envs", (PYTHON_PAGE,))
    assert load_profile("fir").rules.env_build is None


def test_a_trillium_job_activates_the_prebuilt_env_and_installs_nothing():
    script = render(plan(spec()))
    key = plan(spec()).venv.prebuilt_key
    assert len(key) == 16
    assert (f'slurmkit_activate_built "${{HOME}}/.slurmkit/envs/{key}" {key} \'slurmkit env build job.yaml\'\n') in script
    assert "pip install" not in script and "virtualenv --no-download" not in script


def test_the_missing_env_line_really_stops_the_job_with_one_line(tmp_path):
    from slurmkit.render.runtime import runtime

    job_plan = plan(spec())
    script = render(job_plan)
    line = next(line for line in script.splitlines() if line.startswith("slurmkit_activate_built "))
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", runtime().text + line], capture_output=True, text=True,
                            env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 1
    assert result.stderr == (f"slurmkit: no virtualenv is built for this job at {tmp_path}/.slurmkit/envs/{job_plan.venv.prebuilt_key}: "
                             "run slurmkit env build job.yaml on the login node, then submit again\n")


def test_sites_that_make_envs_in_the_job_and_a_venv_in_slurm_tmpdir_are_unchanged():
    assert plan(spec(profile="fir"), "fir").venv.prebuilt_key == ""
    local = plan(spec(venv={"packages": ["numpy"], "path": "$SLURM_TMPDIR/env"}))
    assert local.venv.prebuilt_key == "" and local.venv.path == "$SLURM_TMPDIR/env"


def test_a_spec_venv_path_is_the_prebuilt_one():
    job_plan = plan(spec(venv={"packages": ["numpy"], "path": "$HOME/envs/mine"}))
    assert job_plan.venv.path == "$HOME/envs/mine" and job_plan.venv.prebuilt_key


def test_the_key_changes_with_modules_packages_requirements_and_nothing_else():
    base = plan(spec(), local=LocalFacts(requirements_digest="aa")).venv.prebuilt_key
    assert plan(spec(), local=LocalFacts(requirements_digest="aa")).venv.prebuilt_key == base
    assert plan(spec(), local=LocalFacts(requirements_digest="bb")).venv.prebuilt_key != base      # requirements edited
    assert plan(spec(environment={"venv": {"requirements": "requirements.txt"}, "modules": ["scipy-stack"]}),
                local=LocalFacts(requirements_digest="aa")).venv.prebuilt_key != base               # another module
    assert plan(spec(name="other"), local=LocalFacts(requirements_digest="aa")).venv.prebuilt_key == base   # the name is not in it
    venv = plan(spec(venv={"packages": ["numpy"]})).venv
    assert (env_key("trillium", ("python/3.11.5",), venv, None, ())
            != env_key("trillium", ("python/3.11.5",), venv._replace(packages=("scipy",)), None, ()))


def test_builds_run_when_the_env_is_built_not_in_the_job():
    horovod = spec(venv={"packages": ["torch"]}, kind="horovod", resources={"time": "3h", "gpus": "h100:4", "nodes": 2},
                   environment={"venv": {"packages": ["torch"]}, "builds": ["horovod"], "modules": ["nccl/2.18.3"]},
                   launch={"command": "python h.py"})
    assert plan(horovod).builds == ()
    building = plan(horovod, local=LocalFacts(building_env=True))
    assert [b.name for b in building.builds] == ["horovod"] and building.venv.prebuilt_key == ""
    assert building.venv.path == plan(horovod).venv.path and building.venv.upgrade_pip


def test_check_says_the_env_is_not_built_and_passes_once_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr("socket.gethostname", lambda: "trig-login01")   # Trillium's GPU login node
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "scratch").mkdir()
    path = tmp_path / "scratch" / "job.yaml"
    data = {"name": "demo", "account": "def-someprof", "profile": "trillium", "kind": "gpu",
            "resources": {"time": "3h", "gpus": "h100:1"}, "environment": {"venv": {"packages": ["numpy"]}},
            "launch": {"command": "python train.py"}}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    job = Job.from_yaml(path)
    errors = [f for f in job.check() if f.level == "error"]
    assert [f.field for f in errors] == ["environment.venv"]
    assert f"run 'slurmkit env build {path}' here, then submit" in errors[0].message and PYTHON_PAGE in errors[0].message
    with pytest.raises(SpecError, match=f"slurmkit env build {path}"):
        job.submit()
    env = tmp_path / "home" / ".slurmkit" / "envs" / job.resolve().plan.venv.prebuilt_key
    env.mkdir(parents=True)
    (env / KEY_FILE).write_text(job.resolve().plan.venv.prebuilt_key + "\n")
    assert [f for f in job.check() if f.level == "error"] == []


def test_off_the_cluster_a_missing_env_is_a_warning_to_build_it_on_the_login_node(tmp_path):
    from slurmkit.resolve.siterules import prebuilt_env_findings

    job_plan = plan(spec())
    env = {"HOME": str(tmp_path)}
    (on_login,) = prebuilt_env_findings(load_profile("trillium"), job_plan, env, "trig-login01.scinet.local")
    (laptop,) = prebuilt_env_findings(load_profile("trillium"), job_plan, env, "my-laptop")
    assert on_login.level == "error" and "run 'slurmkit env build job.yaml' here, then submit" in on_login.message
    assert laptop.level == "warning" and "run 'slurmkit env build job.yaml' on trillium's login node, then submit" in laptop.message


# ------------------------------------------------------------------- slurmkit env build, here

NO_MODULES = textwrap.dedent("""\
    name: localenvunit
    extends: local
    description: the local profile with environments built on the login node, and no modules to load
    software: {module_system: none, stdenv: null}
    rules:
      env_build: {path: $SLURMKIT_TEST_ENVS, source: tests/unit/test_envbuild.py}
    """)


@pytest.fixture
def here(tmp_path, monkeypatch):
    profiles = tmp_path / "xdg" / "slurmkit" / "site_profiles"
    profiles.mkdir(parents=True)
    (profiles / "localenvunit.yaml").write_text(NO_MODULES, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SLURMKIT_TEST_ENVS", str(tmp_path / "envs"))
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    (tmp_path / "requirements.txt").write_text("", encoding="utf-8")   # nothing to install: no network needed
    (tmp_path / "job.yaml").write_text(yaml.safe_dump({
        "name": "e", "profile": "localenvunit", "account": "def-test", "resources": {"time": "5m"},
        "environment": {"venv": {"requirements": "requirements.txt"}}, "launch": {"command": "python -V"}}), encoding="utf-8")
    return tmp_path


def test_env_build_makes_the_env_the_job_activates_then_reuses_it(here):
    job = Job.from_yaml(here / "job.yaml")
    key = job.resolve().plan.venv.prebuilt_key
    path = job.build_env()
    assert path == here / "envs" / key and built_key(path) == key and not (path / PARTIAL_FILE).exists()
    assert (path / "bin" / "python").exists() and "key: " + key in (path / "slurmkit-env.txt").read_text()
    stamp = (path / KEY_FILE).stat().st_mtime_ns
    from slurmkit.build.envbuild import build

    assert build(job)[1] is False and (path / KEY_FILE).stat().st_mtime_ns == stamp    # the same key: reused
    (here / "requirements.txt").write_text("# edited\n", encoding="utf-8")
    assert Job.from_yaml(here / "job.yaml").resolve().plan.venv.prebuilt_key != key     # edited: a new env, never a stale one


def test_env_build_replaces_a_half_built_env_and_never_a_folder_it_did_not_make(here):
    job = Job.from_yaml(here / "job.yaml")
    path = here / "envs" / job.resolve().plan.venv.prebuilt_key
    path.mkdir(parents=True)
    (path / PARTIAL_FILE).write_text("x")
    assert job.build_env() == path and built_key(path)
    mine = here / "envs" / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    data = yaml.safe_load((here / "job.yaml").read_text())
    data["environment"]["venv"]["path"] = "$SLURMKIT_TEST_ENVS/mine"
    (here / "job.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match="was not built by slurmkit env build: remove it"):
        Job.from_yaml(here / "job.yaml").build_env()
    assert (mine / "notes.txt").read_text() == "keep me"


def test_a_relative_venv_path_is_from_the_spec_folder_for_env_build_and_check(here, monkeypatch, tmp_path_factory):
    data = yaml.safe_load((here / "job.yaml").read_text())
    data["environment"]["venv"]["path"] = "envs/rel"
    (here / "job.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    job = Job.from_yaml(here / "job.yaml")
    assert [f.field for f in job.check() if f.level == "error"] == ["environment.venv"]
    assert job.build_env() == here / "envs" / "rel" and built_key(here / "envs" / "rel")
    assert [f for f in job.check() if f.level == "error"] == []


def test_env_build_refuses_inside_a_job_on_sites_without_the_rule_and_without_a_venv(here, monkeypatch):
    job = Job.from_yaml(here / "job.yaml")
    with pytest.raises(InputError, match="jobs make their own virtualenv"):
        job.build_env(profile="local")
    monkeypatch.setenv("SLURM_JOB_ID", "12")
    with pytest.raises(InputError, match="runs on the login node, not inside a job"):
        job.build_env()
    monkeypatch.delenv("SLURM_JOB_ID")
    (here / "requirements.txt").unlink()
    with pytest.raises(SpecError, match="requirements.txt cannot be read here"):
        job.build_env()


def test_a_failed_build_says_so_and_leaves_no_key(here):
    (here / "requirements.txt").write_text("/nonexistent/nothing-1.0-py3-none-any.whl\n")
    job = Job.from_yaml(here / "job.yaml")
    from slurmkit.core.errors import ClusterError

    with pytest.raises(ClusterError, match="failed"):
        job.build_env()
    path = here / "envs" / job.resolve().plan.venv.prebuilt_key
    assert built_key(path) is None and (path / PARTIAL_FILE).exists()


def test_the_cli_builds_and_reports(here, monkeypatch):
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    monkeypatch.chdir(here)
    first = CliRunner().invoke(main, ["env", "build", "job.yaml"])
    assert first.exit_code == 0 and first.output.strip().endswith(
        str(here / "envs" / Job.from_yaml(here / "job.yaml").resolve().plan.venv.prebuilt_key))
    again = CliRunner().invoke(main, ["env", "build", "job.yaml"])
    assert again.exit_code == 0 and "already built" in again.output
    refused = CliRunner().invoke(main, ["env", "build", "job.yaml", "--profile", "local"])
    assert refused.exit_code == 2 and "jobs make their own virtualenv" in refused.output


def test_the_cookbook_kmeans_ported_to_trillium_activates_an_env_whose_build_makes_mpi4py():
    """docs/cookbook.md's Trillium entry: `slurmkit env build` makes the venv and mpi4py's build; the job activates it."""
    import copy
    from pathlib import Path

    from slurmkit.core.yamlfile import read_yaml_file
    from slurmkit.port.retarget import choose_target, port_spec
    from slurmkit.render.render import render_env_build

    path = Path(__file__).resolve().parents[2] / "examples" / "kmeans-mpi4py" / "job.yaml"
    _, (data, lines, _) = read_yaml_file(path)
    source = load_profile("niagara")
    ported = port_spec(copy.deepcopy(data), spec_from_mapping(data, str(path), lines), source, choose_target(source, None, load_profile))
    moved = spec_from_mapping(ported.spec, str(path.with_name("trillium.yaml")))
    job_plan = plan(moved)
    assert job_plan.venv.prebuilt_key and job_plan.builds == ()
    assert job_plan.venv.build_command == f"slurmkit env build {path.with_name('trillium.yaml')}"
    built = render_env_build(plan(moved, local=LocalFacts(building_env=True)))
    assert "module load StdEnv/2023" in built and "pip install --no-index numpy" in built and " mpi4py mpi4py " in built
    assert f'virtualenv --no-download "${{HOME}}/.slurmkit/envs/{job_plan.venv.prebuilt_key}"' in built


def test_env_build_without_the_module_command_stops_with_one_line(tmp_path):
    """A shell without Lmod (not a login shell of the cluster): the build stops before making anything."""
    from slurmkit.render.render import render_env_build

    building = plan(spec(venv={"packages": ["numpy"]}), local=LocalFacts(building_env=True))
    result = subprocess.run(["bash", "-c", render_env_build(building)], capture_output=True, text=True, cwd=tmp_path,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert result.returncode == 1
    assert result.stderr == ("slurmkit: the module command is not defined in this shell: run slurmkit env build in a login "
                             "shell of the cluster\n")
    assert not (tmp_path / ".slurmkit").exists()


@pytest.mark.parametrize("kind", ["gpu", "multigpu", "ddp", "tf-multiworker", "horovod", "mpi", "threaded"])
def test_the_env_build_script_of_every_trillium_kind_passes_bash_n_and_shellcheck(kind, tmp_path):
    import shutil

    from slurmkit.render.render import render_env_build
    from tests.unit.golden_specs import spec_for

    data = spec_for(load_profile("trillium"), kind)
    data.setdefault("environment", {}).setdefault("venv", {"packages": ["numpy"]})
    building = plan(spec_from_mapping(data, source="job.yaml"), local=LocalFacts(building_env=True))
    script = tmp_path / "build.sh"
    script.write_text(render_env_build(building))
    from slurmkit.render.runtime import runtime

    text = script.read_text().replace(runtime().text, "")   # (the runtime's functions are there for the builds to call)
    assert "srun" not in text and "SLURM_TMPDIR" not in text and "python main.py" not in text   # the environment only
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    if shutil.which("shellcheck"):
        result = subprocess.run(["shellcheck", "--shell=bash", str(script)], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout


def test_the_env_build_hint_names_the_spec_as_given_so_it_runs_from_here(tmp_path, monkeypatch):
    """``check myjob/job.yaml`` says ``slurmkit env build myjob/job.yaml``, not ``job.yaml``, which
    would name no file from where the user is."""
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    monkeypatch.setattr("socket.gethostname", lambda: "trig-login01")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "myjob").mkdir()
    data = {"name": "demo", "account": "def-someprof", "profile": "trillium", "kind": "gpu",
            "resources": {"time": "3h", "gpus": "h100:1"}, "environment": {"venv": {"packages": ["numpy"]}},
            "launch": {"command": "python train.py"}}
    (tmp_path / "myjob" / "job.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "myjob/job.yaml"])
    assert result.exit_code == 2 and "run 'slurmkit env build myjob/job.yaml' here" in result.output
    rendered = CliRunner().invoke(main, ["render", "myjob/job.yaml"]).stdout
    assert "'slurmkit env build myjob/job.yaml'" in rendered


def test_submit_from_a_host_that_is_no_login_node_still_refuses_a_missing_env(tmp_path, monkeypatch):
    """check on a laptop only warns (the env may be built on the cluster), but submit runs
    sbatch from this host: the job activates the env from the files this host sees, so a
    missing one stops it at its first line, and submit refuses it."""
    import socket

    import slurmkit.slurm.submit as submit

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(socket, "gethostname", lambda: "my-laptop")
    monkeypatch.setattr(submit, "submit_script", lambda *a, **k: (_ for _ in ()).throw(AssertionError("submitted")))
    path = tmp_path / "job.yaml"
    data = {"name": "demo", "account": "def-someprof", "profile": "trillium", "kind": "gpu",
            "resources": {"time": "3h", "gpus": "h100:1"}, "environment": {"venv": {"packages": ["numpy"]}},
            "launch": {"command": "python train.py"}}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    job = Job.from_yaml(path)
    assert [f.level for f in job.check() if f.field == "environment.venv"] == ["warning"]
    with pytest.raises(SpecError, match="no virtualenv is built for this job"):
        job.submit()
    monkeypatch.setattr(submit, "test_only", lambda *a, **k: (_ for _ in ()).throw(AssertionError("sbatch --test-only ran")))
    with pytest.raises(SpecError, match="no virtualenv is built for this job"):   # a dry run refuses what submit refuses
        job.test_only()
