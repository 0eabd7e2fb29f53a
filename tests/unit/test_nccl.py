"""``builds: [horovod, {nccl: TARBALL}]``: NVIDIA's NCCL tarball for the Horovod build, read,
planned and rendered (the job's unpack runs here in bash; on the cluster: test_nccl_on_cluster.py)."""

import re
import subprocess
import tarfile

import pytest

from slurmkit import Job
from slurmkit.core.errors import SpecError
from slurmkit.render.runtime import runtime
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

TARBALL = "nccl_2.21.5-1+cuda12.4_x86_64.txz"


def spec(builds, profile="narval", gpus="a100:4", modules=("python/3.11", "cuda/12.2")):
    return spec_from_mapping({"name": "hvd", "profile": profile, "account": "def-x", "kind": "horovod",
                              "resources": {"gpus": gpus, "nodes": 2, "time": "3h"} if gpus else {"nodes": 2, "time": "3h"},
                              "environment": {"modules": list(modules), "venv": {"packages": ["torch"]}, "builds": builds},
                              "launch": {"command": "python train.py"}}, source="job.yaml")


def resolved(builds, **fields):
    the_spec = spec(builds, **fields)
    return resolve(the_spec, load_profile(the_spec.profile))


def test_the_version_comes_from_nvidias_name_or_is_given():
    assert spec(["horovod", {"nccl": f"~/{TARBALL}"}]).environment.nccl.version == "2.21.5-1+cuda12.4"
    assert spec([{"nccl": "nccl.txz", "version": "2.23.4-1+cuda12.6"}, "horovod"]).environment.nccl.version == "2.23.4-1+cuda12.6"
    assert [b.name for b in spec(["horovod", {"nccl": TARBALL}]).environment.builds] == ["horovod"]


@pytest.mark.parametrize("builds, field, message", [
    (["horovod", {"nccl": "my-nccl.txz"}], "environment.builds[1].nccl",
     "'my-nccl.txz' is not named as NVIDIA names NCCL's tarballs (nccl_2.21.5-1+cuda12.4_x86_64.txz), so its version is unknown"),
    (["horovod", {"nccl": TARBALL}, {"nccl": TARBALL}], "environment.builds[2]", "names a second NCCL; a job builds against one"),
    (["horovod", {"nccl": TARBALL, "verison": "2"}], "environment.builds[1].verison", "unknown key; did you mean 'version'?"),
    (["horovod", {"version": "2.1.1"}], "environment.builds[1].nccl", "is required"),
    (["horovod", {"nccl": "x.txz", "version": "two"}], "environment.builds[1].version", "'two' is not allowed here"),
    (["horovod", {"nccl": "~/nccl/"}], "environment.builds[1].nccl",
     "'~/nccl/' names a folder: give the path of NVIDIA's NCCL tarball itself"),
    (["horovod", {"nccl": "/scratch/nccl/.."}], "environment.builds[1].nccl", "names a folder"),
    (["horovod", {"nccl": f"a\n{TARBALL}"}], "environment.builds[1].nccl", "has a control character (a newline?)"),
])
def test_a_wrong_nccl_item_is_one_located_line(builds, field, message):
    with pytest.raises(SpecError) as raised:
        spec(builds)
    assert raised.value.keypath == field and message in raised.value.detail


def test_the_build_compiles_against_the_tarball_not_the_module():
    resolution = resolved(["horovod", {"nccl": f"~/{TARBALL}"}])
    assert resolution.plan is not None, resolution.errors      # no nccl module asked for (narval names none)
    plan = resolution.plan
    assert plan.nccl.home == "/scratch/$USER/slurmkit-builds/nccl/2.21.5-1+cuda12.4"
    assert plan.nccl.tarball == f"$HOME/{TARBALL}" and plan.nccl.setrpaths == "setrpaths.sh"
    (build,) = plan.builds
    assert ("HOROVOD_NCCL_HOME", plan.nccl.home) in build.variables and not build.from_wheelhouse
    assert not any(m.startswith("nccl/") for m in plan.modules)


def test_without_the_tarball_the_module_is_still_required():
    resolution = resolved(["horovod"])
    assert any("compiles against nccl" in e.message for e in resolution.errors)


def test_a_tarball_without_horovod_is_refused():
    resolution = resolved(["mpi4py", {"nccl": TARBALL}])
    assert [e.message for e in resolution.errors if e.field == "environment.builds"] == [
        "an NCCL tarball is for the Horovod build to compile against: add horovod to environment.builds, or leave the "
        "tarball out (PyTorch's wheels bring their own NCCL)"]


def test_each_version_is_its_own_build_key():
    homes = {dict(resolved(["horovod", {"nccl": f"nccl_{v}_x86_64.txz"}]).plan.builds[0].variables)["HOROVOD_NCCL_HOME"]
             for v in ("2.21.5-1+cuda12.4", "2.23.4-1+cuda12.6")}
    assert len(homes) == 2


def test_a_job_without_gpus_is_refused():
    resolution = resolved(["horovod", {"nccl": TARBALL}], gpus=None)
    assert [e.message for e in resolution.errors] == [
        "Horovod uses NCCL for its GPU operations only, and this job has no GPUs: leave the NCCL tarball out (the CPU build uses MPI)"]


def test_the_nccl_module_beside_the_tarball_is_warned():
    resolution = resolved(["horovod", {"nccl": TARBALL}], modules=("cuda/12.2", "nccl/2.18.3"))
    assert any("the nccl module is not what Horovod builds against" in w.message for w in resolution.warnings)


def test_a_relative_build_cache_is_the_spec_folders():
    the_spec = spec(["horovod", {"nccl": TARBALL}])
    the_spec = the_spec._replace(environment=the_spec.environment._replace(build_cache="mycache"))
    plan = resolve(the_spec, load_profile("narval")).plan
    assert plan.nccl.home == "$SLURM_SUBMIT_DIR/mycache/nccl/2.21.5-1+cuda12.4"
    assert plan.builds[0].cache == "$SLURM_SUBMIT_DIR/mycache"


@pytest.mark.parametrize("item, field, message", [
    ({"nccl": TARBALL, "version": "2.22.3-1+cuda12.6"}, "environment.builds[1].version",
     "'2.22.3-1+cuda12.6' is not the version the tarball's name says (2.21.5-1+cuda12.4)"),
    ({"nccl": "x.txz", "version": "2.21.5+x.partial"}, "environment.builds[1].version", "is not allowed here"),
    ({"nccl": "x.txz", "version": "2.21.5.lock"}, "environment.builds[1].version", "is not allowed here"),
])
def test_a_version_that_disagrees_or_names_the_caches_own_files_is_refused(item, field, message):
    with pytest.raises(SpecError) as raised:
        spec(["horovod", item])
    assert raised.value.keypath == field and message in raised.value.detail


def test_another_users_home_is_refused_as_in_every_path_field():
    resolution = resolved(["horovod", {"nccl": f"~root/{TARBALL}"}])
    assert [e.field for e in resolution.errors] == ["environment.builds.nccl"]
    assert "~root (another user's home) is not expanded" in resolution.errors[0].message


def _script(tmp_path, setrpaths=None):
    profile = tmp_path / "site_profiles"
    profile.mkdir(exist_ok=True)
    (profile / "lab.yaml").write_text("name: lab\nextends: local\n" + (f"software:\n  setrpaths: {setrpaths}\n" if setrpaths else ""))
    job = Job(name="hvd", profile="lab", account="def-x", resources={"time": "1h", "gpus": "p100:1"},
              environment={"venv": {"packages": ["torch"]}, "builds": ["horovod", {"nccl": TARBALL}],
                           "build_cache": str(tmp_path / "cache")},
              launch={"command": "python train.py"})
    return job.render(warn=False)


def _unpack_function(script):
    """The script's call of the runtime's slurmkit_unpack_nccl, run alone with the runtime."""
    body = re.search(r"^slurmkit_unpack_nccl .*?\nexport LD_LIBRARY_PATH=.*?\n", script, re.S | re.M).group()
    return "set -euo pipefail\nSLURM_SUBMIT_DIR=$PWD\n" + runtime().text + body + 'echo "LD=${LD_LIBRARY_PATH:-}"\n'


def _tarball(folder, name=TARBALL, layout=True, second_folder=False, library_link=None):
    top = folder / "top"
    (top / "lib").mkdir(parents=True)
    (top / "include").mkdir()
    if layout:
        if library_link:
            (top / "lib" / "libnccl.so").symlink_to(library_link)
        else:
            (top / "lib" / "libnccl.so").write_text("lib")
        (top / "include" / "nccl.h").write_text("h")
    with tarfile.open(folder / name, "w:xz") as tar:
        tar.add(top, arcname="nccl_x")
        if second_folder:
            tar.add(top / "lib", arcname="other/lib")


def _unpack(tmp_path, script):
    return subprocess.run(["bash", "-c", _unpack_function(script)], capture_output=True, text=True, cwd=tmp_path)


def test_the_unpack_runs_once_with_setrpaths_and_is_renamed_whole(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "setrpaths.sh").write_text(f'#!/bin/bash\necho "$@" >> {tmp_path}/calls\n')
    (tmp_path / "setrpaths.sh").chmod(0o755)
    script = _script(tmp_path, setrpaths=tmp_path / "setrpaths.sh")
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    _tarball(tmp_path)
    home = tmp_path / "cache" / "nccl" / "2.21.5-1+cuda12.4"
    runs = [subprocess.run(["bash", "-c", _unpack_function(script)], capture_output=True, text=True, cwd=tmp_path) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert "unpacking NCCL" in runs[0].stderr and "unpacking NCCL" not in runs[1].stderr
    assert (home / "lib" / "libnccl.so").read_text() == "lib" and not (tmp_path / "cache" / "nccl" / "2.21.5-1+cuda12.4.partial").exists()
    assert (tmp_path / "calls").read_text() == f"--path {home}.partial/nccl_x --add_origin\n"
    assert runs[1].stdout == f"LD={home}/lib\n"


def test_a_tarball_without_nccls_layout_stops_the_job_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = _script(tmp_path)
    assert "setrpaths" not in re.search(r"^slurmkit_unpack_nccl .*$", script, re.M).group()   # the local profile has none
    _tarball(tmp_path, layout=False)
    run = subprocess.run(["bash", "-c", _unpack_function(script)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1
    assert "is not an NCCL tarball (one folder holding lib/libnccl.so and include/nccl.h): nothing was unpacked" in run.stderr
    assert [p.name for p in (tmp_path / "cache" / "nccl").iterdir()] == ["2.21.5-1+cuda12.4.lock"]


def test_check_warns_when_the_tarball_is_not_on_this_host(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _script(tmp_path)
    job = Job(name="hvd", profile="lab", account="def-x", resources={"time": "1h", "gpus": "p100:1"},
              environment={"venv": {"packages": ["torch"]}, "builds": ["horovod", {"nccl": TARBALL}]},
              launch={"command": "python train.py"})
    warnings = [w for w in job.check() if w.field == "environment.builds"]
    assert warnings and f"{TARBALL} is not on this host" in warnings[0].message


NOT_NCCL = "is not an NCCL tarball (one folder holding lib/libnccl.so and include/nccl.h): nothing was unpacked"


@pytest.mark.parametrize("shape", [{"second_folder": True}, {"library_link": "/etc/passwd"}])
def test_two_top_folders_or_a_library_outside_it_are_not_nccl(tmp_path, monkeypatch, shape):
    monkeypatch.chdir(tmp_path)
    script = _script(tmp_path)
    _tarball(tmp_path, **shape)
    run = _unpack(tmp_path, script)
    assert run.returncode == 1 and NOT_NCCL in run.stderr
    assert [p.name for p in (tmp_path / "cache" / "nccl").iterdir()] == ["2.21.5-1+cuda12.4.lock"]


def test_an_incomplete_folder_in_its_place_is_replaced_whole(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = _script(tmp_path)
    _tarball(tmp_path)
    home = tmp_path / "cache" / "nccl" / "2.21.5-1+cuda12.4"
    (home / "include").mkdir(parents=True)
    (home / "include" / "old.h").write_text("left by a crash")
    run = _unpack(tmp_path, script)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in home.rglob("*")) == ["include", "lib", "libnccl.so", "nccl.h"]
    assert sorted(p.name for p in home.parent.iterdir()) == ["2.21.5-1+cuda12.4", "2.21.5-1+cuda12.4.lock"]


def test_a_missing_tarball_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = _unpack(tmp_path, _script(tmp_path))
    assert run.returncode == 1
    assert f"slurmkit: the NCCL tarball {tmp_path / TARBALL} is not there (or not readable)" in run.stderr


def test_a_failed_setrpaths_says_so_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "setrpaths.sh").write_text("#!/bin/bash\nexit 3\n")
    (tmp_path / "setrpaths.sh").chmod(0o755)
    script = _script(tmp_path, setrpaths=tmp_path / "setrpaths.sh")
    _tarball(tmp_path)
    run = _unpack(tmp_path, script)
    assert run.returncode == 1 and f"slurmkit: {tmp_path / 'setrpaths.sh'} failed on NCCL's libraries: nothing was unpacked" in run.stderr
    assert [p.name for p in (tmp_path / "cache" / "nccl").iterdir()] == ["2.21.5-1+cuda12.4.lock"]


def test_paths_this_host_cannot_examine_are_left_to_the_node_not_a_traceback(tmp_path, monkeypatch):
    """A name longer than the host allows (ENAMETOOLONG) in the tarball or a staged input."""
    monkeypatch.chdir(tmp_path)
    _script(tmp_path)
    deep = "/".join(["b" * 200] * 30)
    job = Job(name="hvd", profile="lab", account="def-x", resources={"time": "1h", "gpus": "p100:1"},
              environment={"venv": {"packages": ["torch"]}, "builds": ["horovod", {"nccl": f"{tmp_path}/{'a' * 300}/{TARBALL}"}]},
              stage={"inputs": [f"/p/{deep}/data.tar"]}, launch={"command": "python train.py"})
    assert not [w for w in job.check() if w.field in ("environment.builds", "stage.inputs.0")]
