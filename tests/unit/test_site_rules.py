"""The profile ``rules:`` that decide whether a job runs, each with a spec
that trips it and one that passes, and the fix and the source in its message.

The host-side rules (read-only paths, login nodes, requirements files, staged bytes) are called
with an explicit environment and host name, so that no test depends on where it runs.
"""

import functools
from pathlib import Path

import pytest
import yaml

from slurmkit.api.job import Job
from slurmkit.core.errors import SpecError
from slurmkit.resolve.localdisk import StagedSize
from slurmkit.resolve.resolve import resolve
from slurmkit.resolve.siterules import host_findings, login_node_findings, read_only_findings, tmp_for_staged
from slurmkit.sites.profiles import load_profile, validate_file
from slurmkit.spec.spec import spec_from_mapping

QUICKSTART = "https://docs.alliancecan.ca/wiki/Trillium_Quickstart/en"
PYTORCH = "https://docs.alliancecan.ca/wiki/PyTorch/en"
PYTHON = "https://docs.alliancecan.ca/wiki/Python/en"
RORQUAL = "https://docs.alliancecan.ca/wiki/Rorqual/en"


@functools.lru_cache(maxsize=None)
def profile(name):
    return load_profile(name)


def spec(**fields):
    data = {"name": "demo", "account": "def-someprof", "kind": "threaded", "resources": {"time": "3h"},
            "launch": {"command": "python main.py"}}
    data.update(fields)
    return spec_from_mapping(data, source="job.yaml")


def findings(name, **fields):
    return resolve(spec(**fields), profile(name)).findings


def messages(found, field):
    return [f.message for f in found if f.field == field]


# ------------------------------------------------------------------------------- the profiles

def test_trillium_states_its_read_only_paths_self_submission_and_login_roles_with_sources():
    rules = profile("trillium").rules
    assert rules.read_only_in_job.paths == ("$HOME", "$PROJECT", "/home", "/project")
    assert rules.read_only_in_job.source == (QUICKSTART,)
    assert rules.read_only_in_job.write_to == "$SCRATCH"
    assert rules.jobs_submit_jobs.allowed is False and rules.jobs_submit_jobs.source == (QUICKSTART,)
    assert rules.login_nodes.gpu == ("trig-login*",) and rules.login_nodes.cpu == ("tri-login*",)


def test_every_alliance_cluster_inherits_the_h100_torch_minimum_and_the_oldest_python():
    for name in ("fir", "nibi", "rorqual", "trillium", "narval"):
        rules = profile(name).rules
        assert [(m.package, m.version, m.gpu_models, m.source) for m in rules.min_versions] == [("torch", "2.5.1", ("h100",), (PYTORCH,))]
        assert rules.oldest_python.version == "3.12" and rules.oldest_python.source == (PYTHON,)


def test_rorqual_tmp_request_range_is_370g_to_3360g():
    rule = profile("rorqual").rules.tmp_request
    assert (rule.min_mib, rule.max_mib, rule.source) == (370 * 1024, 3360 * 1024, (RORQUAL,))
    assert profile("fir").rules.tmp_request is None


def test_a_rule_without_its_source_is_a_profile_error(tmp_path):
    path = tmp_path / "site.yaml"
    path.write_text("name: site\nstatus: {state: in-service}\nrules:\n  jobs_submit_jobs: {allowed: false}\n", encoding="utf-8")
    problems = [str(p) for p in validate_file(str(path), dirs=[tmp_path])]
    assert any("rules.jobs_submit_jobs.source" in p and "required" in p for p in problems), problems


# ------------------------------------------------------------------- (b) jobs submitting jobs

@pytest.mark.parametrize("launch, field", [
    ({"shell": "python train.py && sbatch next.sh"}, "launch.shell"),
    ({"command": "sbatch job.sh"}, "launch.command"),
    ({"command": "bash -c 'x; /usr/bin/sbatch again.sh'"}, "launch.command"),
])
def test_a_command_that_calls_sbatch_is_an_error_on_trillium_naming_the_chain_and_the_source(launch, field):
    found = messages(findings("trillium", launch=launch), field)
    assert len(found) == 1
    assert "jobs cannot submit jobs on trillium" in found[0] and QUICKSTART in found[0]
    assert "'resubmit:'" in found[0] and "slurmkit submit --after JOBID" in found[0]


@pytest.mark.parametrize("name, command", [
    ("trillium", "python sbatch_tools.py"),     # a word containing sbatch is not sbatch
    ("trillium", "python train.py"),
    ("fir", "python train.py && sbatch next.sh"),   # no such rule stated for Fir
])
def test_commands_that_do_not_submit_or_sites_that_allow_it_pass(name, command):
    assert messages(findings(name, launch={"shell": command}), "launch.shell") == []


def test_setup_lines_that_call_sbatch_are_an_error_on_trillium():
    found = messages(findings("trillium", launch={"command": "python t.py"}, environment={"setup": ["sbatch other.sh"]}),
                     "environment.setup")
    assert len(found) == 1 and "jobs cannot submit jobs on trillium" in found[0]


# ------------------------------------------------------------------------ (c) GPUs per node

@pytest.mark.parametrize("count, ok", [(1, True), (2, False), (3, False), (4, True)])
def test_trillium_gives_gpu_jobs_1_or_4_gpus_per_node(count, ok):
    found = [f.message for f in findings("trillium", kind="multigpu", resources={"time": "3h", "gpus": f"h100:{count}"})
             if f.level == "error"]
    assert (found == []) is ok
    if not ok:
        assert found == [f"trillium gives GPU jobs 1 or 4 GPUs per node, not {count}"]


@pytest.mark.parametrize("gpus, ok", [("mi300a:1", False), ("mi300a:2", False), ("mi300a:4", True), ("h100:1", True)])
def test_nibi_mi300a_nodes_are_taken_whole_and_its_h100_nodes_are_not(gpus, ok):
    found = [f for f in findings("nibi", kind="gpu", resources={"time": "3h", "gpus": gpus}) if f.level == "error"]
    assert (found == []) is ok
    if not ok:
        assert found[0].message.startswith("nibi's gpu-mi300a nodes are scheduled whole: ask for all 4 mi300a GPUs of a node (mi300a:4)")
        assert "https://docs.alliancecan.ca/wiki/Nibi/en" in found[0].message


@pytest.mark.parametrize("gpus, modules, ok", [
    ("mi300a:4", ["cuda/12.2"], False),
    ("mi300a:4", ["cudnn"], False),
    ("mi300a:4", [], True),
    ("h100:1", ["cuda/12.2"], True),
])
def test_cuda_modules_on_nibi_amd_mi300a_are_an_error_and_on_h100_pass(gpus, modules, ok):
    found = messages(findings("nibi", kind="gpu", resources={"time": "3h", "gpus": gpus}, environment={"modules": modules}),
                     "environment.modules")
    assert (found == []) is ok
    if not ok:
        assert "GPUs are AMD: CUDA code does not run there; build for ROCm (/opt/rocm)" in found[0]


# ------------------------------------------------------------------------ (d) software pins

@pytest.mark.parametrize("pin", ["torch==2.4.0", "torch<2.5", "torch<=2.5.0", "torch~=2.3.0", "torch==2.1.2+cu121"])
def test_a_torch_pin_below_2_5_1_for_an_h100_job_is_a_warning_with_the_source(pin):
    found = messages(findings("fir", kind="gpu", resources={"time": "3h", "gpus": "h100:1"},
                              environment={"venv": {"packages": ["numpy", pin]}}), "environment.venv.packages")
    assert found == [f"{pin!r} pins torch below 2.5.1, which fir needs on H100 GPUs; ask for torch>=2.5.1 (source: {PYTORCH})"]


@pytest.mark.parametrize("name, gpus, pin", [
    ("fir", "h100:1", "torch==2.5.1"),
    ("fir", "h100:1", "torch>=2.0"),
    ("fir", "h100:1", "torch~=2.5.0"),     # allows 2.5.1
    ("narval", "a100:1", "torch==2.1.0"),  # not an H100 job
])
def test_torch_pins_that_reach_2_5_1_or_jobs_without_h100_pass(name, gpus, pin):
    found = findings(name, kind="gpu", resources={"time": "3h", "gpus": gpus}, environment={"venv": {"packages": [pin]}})
    assert messages(found, "environment.venv.packages") == []


def test_an_old_torch_in_the_requirements_file_is_a_warning_naming_the_file(tmp_path):
    (tmp_path / "requirements.txt").write_text("numpy\ntorch==2.3.1  # old\n", encoding="utf-8")
    job = spec(kind="gpu", resources={"time": "3h", "gpus": "h100:1"}, environment={"venv": {"requirements": "requirements.txt"}})
    plan = resolve(job, profile("nibi")).plan
    found = host_findings(job, profile("nibi"), plan, tmp_path, tmp_path / "logs", {}, "laptop")
    assert [f.message for f in found] == [f"'torch==2.3.1' in requirements.txt pins torch below 2.5.1, which nibi needs on H100 GPUs; "
                                          f"ask for torch>=2.5.1 (source: {PYTORCH})"]
    (tmp_path / "requirements.txt").write_text("torch==2.6.0\n", encoding="utf-8")
    assert host_findings(job, profile("nibi"), plan, tmp_path, tmp_path / "logs", {}, "laptop") == []


def test_a_python_module_older_than_the_three_served_is_a_warning_where_the_job_installs_packages():
    venv = {"path": "$SLURM_TMPDIR/env", "packages": ["numpy"]}
    found = messages(findings("fir", environment={"modules": ["python/3.11"], "venv": venv}), "environment.modules")
    assert found == [f"python/3.11 is older than the pythons fir still builds wheels for (python/3.12 is the oldest); "
                     f"load python/3.12 or newer (source: {PYTHON})"]
    assert messages(findings("fir", environment={"modules": ["python/3.11"], "setup": ["pip install --no-index numpy"]}),
                    "environment.modules") != []
    assert messages(findings("fir", environment={"modules": ["python/3.12.4"], "venv": venv}), "environment.modules") == []
    assert messages(findings("fir", environment={"modules": ["python/3.13"], "venv": venv}), "environment.modules") == []
    # nothing installed: the wheelhouse's range does not touch the job
    assert messages(findings("fir", environment={"modules": ["python/3.11"]}), "environment.modules") == []


def test_a_python_module_of_a_major_version_alone_is_the_newest_of_it_not_too_old():
    """``python/3`` is Lmod's default python 3 (the newest), not python 3.0."""
    assert messages(findings("fir", environment={"modules": ["python/3"]}), "environment.modules") == []


# ------------------------------------------------------------------------- (a) read-only paths

def _ro(tmp_path, folder, env=None, **fields):
    job = spec(**fields)
    return read_only_findings(job, profile("trillium"), tmp_path / "home" / "me" / "proj", Path(folder),
                              env if env is not None else {"HOME": str(tmp_path / "home" / "me")})


def test_a_log_folder_under_home_is_an_error_on_trillium_with_the_fix_and_the_source(tmp_path):
    logs = tmp_path / "home" / "me" / "proj" / "logs"
    found = _ro(tmp_path, logs)
    assert [(f.level, f.field) for f in found] == [("error", "folder")]
    assert found[0].message == (f"{logs} (the job's log and exit-status files) is under $HOME, which is read-only inside trillium jobs, "
                                f"so the job cannot write it; submit from $SCRATCH (keep the spec there), or set the output folder "
                                f"there (slurmkit submit --folder $SCRATCH/...); copy results to $SCRATCH (source: {QUICKSTART})")


def test_a_log_folder_under_scratch_passes(tmp_path):
    assert _ro(tmp_path, tmp_path / "scratch" / "me" / "logs") == []


def test_a_link_from_home_into_scratch_counts_where_it_points(tmp_path):
    """$HOME/links/scratch is /scratch/$USER: a folder reached through it is writable."""
    (tmp_path / "scratch").mkdir()
    (tmp_path / "home" / "me" / "links").mkdir(parents=True)
    (tmp_path / "home" / "me" / "links" / "scratch").symlink_to(tmp_path / "scratch")
    assert _ro(tmp_path, tmp_path / "home" / "me" / "links" / "scratch" / "logs") == []


def test_copy_back_and_checkpoint_destinations_under_home_are_errors(tmp_path):
    stage = {"outputs": [{"from": "out", "to": "results"}, {"from": "model", "to": "$SCRATCH/models"}],
             "checkpoint": {"from": "ckpt", "to": "$HOME/ckpt"}}
    env = {"HOME": str(tmp_path / "home" / "me"), "SCRATCH": str(tmp_path / "scratch" / "me")}
    found = _ro(tmp_path, tmp_path / "scratch" / "me" / "logs", env=env, stage=stage)
    assert [f.field for f in found] == ["stage.outputs.0.to", "stage.checkpoint.to"]
    assert "a copy-back destination" in found[0].message and "the checkpoint destination" in found[1].message


def test_an_unset_variable_leaves_its_path_unchecked_and_other_sites_have_no_rule(tmp_path):
    assert _ro(tmp_path, tmp_path / "home" / "me" / "logs", env={}) == []
    job = spec()
    assert read_only_findings(job, profile("fir"), tmp_path, Path("/home/me/logs"), {"HOME": "/home/me"}) == []


def test_check_and_submit_refuse_a_trillium_spec_under_home(tmp_path, monkeypatch):
    """The whole path: Job.check lists the error, Job.submit raises it before any sbatch runs."""
    home = tmp_path / "home" / "me"
    (home / "proj").mkdir(parents=True)
    (home / "proj" / "job.yaml").write_text(
        "name: demo\nprofile: trillium\naccount: def-someprof\nkind: threaded\nresources: {time: 3h}\n"
        "launch: {command: python main.py}\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr("slurmkit.slurm.submit.submit_script", lambda *a, **k: pytest.fail("submitted"))
    job = Job.from_yaml(home / "proj" / "job.yaml")
    assert [f.field for f in job.check() if f.level == "error"] == ["folder"]
    with pytest.raises(SpecError, match="read-only inside trillium jobs"):
        job.submit()
    assert [f.field for f in job.check() if f.level == "error"] == ["folder"]
    calls = []
    monkeypatch.setattr("slurmkit.slurm.submit.submit_script", lambda *a, **k: calls.append(a[1]))
    job.submit(folder=tmp_path / "scratch" / "logs")   # the fix: the output folder elsewhere
    assert calls == [tmp_path / "scratch" / "logs"]


def test_check_folder_checks_the_job_as_submitted_with_that_log_folder(tmp_path, monkeypatch):
    """slurmkit check --folder DIR: the same rule as submit --folder (the log folder under $HOME, or not)."""
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    home = tmp_path / "home" / "me"
    (home / "proj").mkdir(parents=True)
    spec_path = home / "proj" / "job.yaml"
    spec_path.write_text("name: demo\nprofile: trillium\naccount: def-someprof\nkind: threaded\nresources: {time: 3h}\n"
                         "launch: {command: python main.py}\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("NO_COLOR", "1")
    refused = CliRunner().invoke(main, ["check", str(spec_path)])
    assert refused.exit_code == 2 and f"{home}/proj/logs (the job's log and exit-status files) is under $HOME" in refused.output
    scratch = tmp_path / "scratch" / "logs"
    passed = CliRunner().invoke(main, ["check", str(spec_path), "--folder", str(scratch)])
    assert passed.exit_code == 0, passed.output
    assert "read-only" not in passed.output
    assert [f.field for f in Job.from_yaml(spec_path).check(folder=home / "elsewhere") if f.level == "error"] == ["folder"]


# --------------------------------------------------------------------------- login-node roles

@pytest.mark.parametrize("hostname, gpus, field", [
    ("tri-login03", True, "resources.gpus"),
    ("tri-login03.scinet.local", True, "resources.gpus"),
    ("trig-login01", False, "resources"),
])
def test_a_job_from_the_wrong_trillium_login_node_is_an_error_naming_the_right_one(hostname, gpus, field):
    found = login_node_findings(profile("trillium"), hostname, gpus)
    assert [f.field for f in found] == [field]
    assert QUICKSTART in found[0].message
    assert ("trig-login*" if gpus else "tri-login*") in found[0].message


@pytest.mark.parametrize("hostname, gpus", [("trig-login01", True), ("tri-login01", False), ("laptop", True)])
def test_a_job_from_the_right_login_node_or_another_host_passes(hostname, gpus):
    assert login_node_findings(profile("trillium"), hostname, gpus) == []


# ------------------------------------------------------------------------ (e) Rorqual --tmp

def _staged(gigabytes, estimated=False):
    return (StagedSize(0, "data.tar", gigabytes * (1 << 30), f"{gigabytes}G copied", estimated),)


STAGED = spec(stage={"inputs": ["data.tar"]})


def test_staged_bytes_below_rorqual_default_disk_add_no_tmp():
    # 300G and 10% headroom is 330G: it fits the default 375G.
    assert tmp_for_staged(STAGED, profile("rorqual"), _staged(300)) == (None, [])


def test_staged_bytes_above_rorqual_375g_add_a_tmp_within_the_range_saying_what_and_why():
    tmp, found = tmp_for_staged(STAGED, profile("rorqual"), _staged(400))
    assert tmp == 440 * 1024     # 400G staged, 10% more for what the job writes: 440G
    assert [(f.level, f.field) for f in found] == [("warning", "resources.tmp")]
    assert found[0].message == (
        "400G staged (data.tar: 400G copied) does not fit rorqual's default 375G $SLURM_TMPDIR: slurmkit added --tmp=440G (the "
        "staged bytes and 10% more for what the job writes there, rounded up to whole gigabytes), which sends the job to the nodes "
        "with more local disk (--tmp from 370G to 3360G; the disk is shared with other jobs on the node); set resources.tmp to "
        f"choose the size yourself (source: {RORQUAL})")


def test_staged_bytes_just_above_the_default_ask_at_least_the_range_start():
    # 340G with 10% is 374G (fits); 345G is 380G (above 375G): asked as 380G, within 370..3360.
    assert tmp_for_staged(STAGED, profile("rorqual"), _staged(340))[0] is None
    assert tmp_for_staged(STAGED, profile("rorqual"), _staged(345))[0] == 380 * 1024


def test_staged_bytes_whose_headroom_passes_the_range_get_its_largest():
    tmp, found = tmp_for_staged(STAGED, profile("rorqual"), _staged(3200))
    assert tmp == 3360 * 1024 and "the range's largest" in found[0].message


def test_staged_bytes_above_rorqual_largest_tmp_are_an_error_to_stage_less():
    tmp, found = tmp_for_staged(STAGED, profile("rorqual"), _staged(4000))
    assert tmp is None and [(f.level, f.field) for f in found] == [("error", "stage.inputs")]
    assert "stage less" in found[0].message and "--tmp at most 3360G" in found[0].message and RORQUAL in found[0].message
    assert "estimate" not in found[0].message
    assert "set resources.tmp yourself" in tmp_for_staged(STAGED, profile("rorqual"), _staged(4000, estimated=True))[1][0].message


def test_the_spec_own_tmp_is_kept_and_one_too_small_is_an_error_naming_the_size():
    asked = spec(stage={"inputs": ["data.tar"]}, resources={"time": "3h", "tmp": "500G"})
    assert tmp_for_staged(asked, profile("rorqual"), _staged(450)) == (None, [])
    tmp, found = tmp_for_staged(asked, profile("rorqual"), _staged(600))
    assert tmp is None and [(f.level, f.field) for f in found] == [("error", "resources.tmp")]
    assert "does not fit the --tmp=500G the spec asks; ask 'tmp: 660G'" in found[0].message


def test_sites_without_a_tmp_range_add_nothing():
    assert tmp_for_staged(STAGED, profile("fir"), _staged(4000)) == (None, [])


def _rorqual_job(tmp_path, **fields):
    data = {"name": "big", "profile": "rorqual", "account": "def-someprof", "resources": {"time": "3h"},
            "stage": {"inputs": [{"from": "data.tar", "to": "data"}]}, "launch": {"command": "python main.py"}}
    data.update(fields)
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return Job.from_yaml(tmp_path / "job.yaml")


def _sparse(path, gigabytes):
    with open(path, "wb") as handle:    # a sparse file: its size without its blocks
        handle.truncate(gigabytes * (1 << 30))


def test_the_rendered_rorqual_script_gets_the_tmp_its_staged_archive_needs(tmp_path):
    _sparse(tmp_path / "data.tar", 400)
    job = _rorqual_job(tmp_path)
    warnings = []
    script = job.render(warn=warnings.append)
    assert "#SBATCH --tmp=440G\n" in script
    assert any("slurmkit added --tmp=440G" in w.message for w in warnings)
    assert any("slurmkit added --tmp=440G" in f.message for f in job.check())


def test_the_rendered_rorqual_script_gets_no_tmp_for_a_small_input_or_a_missing_one(tmp_path):
    job = _rorqual_job(tmp_path)
    assert "\n#SBATCH --tmp" not in job.render()  # data.tar is not here yet: nothing to measure
    _sparse(tmp_path / "data.tar", 10)
    assert "\n#SBATCH --tmp" not in job.render()  # (the staging comment says how to ask more)


def test_too_much_staged_on_rorqual_stops_the_render_naming_the_fix(tmp_path):
    _sparse(tmp_path / "data.tar", 4000)
    with pytest.raises(SpecError, match="stage less"):
        _rorqual_job(tmp_path).render()


def test_a_tmp_request_above_rorqual_range_is_an_error_and_within_it_passes():
    found = messages(findings("rorqual", resources={"time": "3h", "tmp": "4000G"}), "resources.tmp")
    assert found == [f"--tmp=4000G is more local disk than any rorqual node gives (--tmp from 370G to 3360G); stage less, or read "
                     f"the rest from scratch (source: {RORQUAL})"]
    assert messages(findings("rorqual", resources={"time": "3h", "tmp": "1000G"}), "resources.tmp") == []
