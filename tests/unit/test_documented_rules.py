"""Site rules the Alliance pages state, each from the profile's ``rules:`` with its source: a spec
that breaks the rule and one that keeps it on the cluster it applies to, and the breaking spec
on a cluster where it does not apply.

Trillium's job-size caps and data movers (Trillium_Quickstart, Trillium), Narval's blocked
standard environments (Narval), a GPU request without a model (Using_GPUs_with_Slurm), memory
and cores above a GPU's or MIG instance's share (Allocations_and_compute_scheduling's "Ratios in
bundles"), and downloads where compute nodes reach no internet (Narval, Rorqual, Trillium).
"""

import functools

import pytest

from slurmkit import Job
from slurmkit.core.errors import SpecError
from slurmkit.resolve.downloads import fetches
from slurmkit.resolve.resolve import resolve
from slurmkit.resolve.siterules import no_submit_host_findings
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

QUICKSTART = "(source: https://docs.alliancecan.ca/wiki/Trillium_Quickstart/en)"
GPUS_PAGE = "(source: https://docs.alliancecan.ca/wiki/Using_GPUs_with_Slurm/en)"


@functools.lru_cache(maxsize=None)
def profile(name: str):
    return load_profile(name)


def resolved(cluster: str, kind: str = "mpi", account: str = "def-someprof", environment=None, command="./solver", **resources):
    data = {"name": "demo", "account": account, "kind": kind, "resources": {"time": "3h", **resources},
            "launch": {"command": command}}
    if environment:
        data["environment"] = environment
    return resolve(spec_from_mapping(data, source="job.yaml"), profile(cluster))


def said(resolution, field, level=None):
    return [f.message for f in resolution.findings if f.field == field and (level is None or f.level == level)]


# ------------------------------------------------------------------ Trillium's job-size caps

def test_trillium_warns_of_cpu_nodes_above_the_cap_without_an_allocation_with_the_reason():
    resolution = resolved("trillium", nodes=20)
    assert resolution.errors == ()
    assert said(resolution, "resources.nodes") == [
        "20 nodes is more than trillium's compute partition (where a job that names no partition runs) takes without a RAC "
        "allocation (10 at most; 128 with one): the job runs only under an account with a RAC allocation (rrg-, rpp-), "
        f"which slurmkit cannot see; without one ask 10 or fewer {QUICKSTART}"]


def test_trillium_refuses_cpu_nodes_above_the_cap_with_an_allocation():
    assert said(resolved("trillium", nodes=200), "resources.nodes", "error") == [
        "200 nodes is more than trillium's compute partition (where a job that names no partition runs) takes (128 at most "
        f"with a RAC allocation); ask fewer {QUICKSTART}"]


def test_trillium_gpu_caps_are_5_nodes_and_20_gpus_or_25_and_100_with_an_allocation():
    between = resolved("trillium", kind="ddp", nodes=6, gpus="h100:4")
    assert between.errors == ()
    assert [m.split(" is more")[0] for m in said(between, "resources.nodes") + said(between, "resources.gpus")] == [
        "6 nodes", "24 GPUs in all"]
    above = resolved("trillium", kind="ddp", nodes=30, gpus="h100:4")
    assert said(above, "resources.nodes", "error") and said(above, "resources.gpus", "error") == [
        "120 GPUs in all is more than trillium's compute partition (where a job that names no partition runs) takes (100 at "
        f"most with a RAC allocation); ask fewer {QUICKSTART}"]


def test_trillium_takes_jobs_within_the_caps_and_an_rac_account_above_the_default_cap():
    assert resolved("trillium", nodes=10).findings == resolved("trillium", nodes=1).findings == ()
    assert resolved("trillium", kind="ddp", nodes=5, gpus="h100:4").errors == ()
    assert said(resolved("trillium", kind="ddp", nodes=5, gpus="h100:4"), "resources.nodes") == []
    assert said(resolved("trillium", nodes=20, account="rrg-someprof"), "resources.nodes") == []


def test_elsewhere_many_nodes_meet_no_job_size_cap():
    resolution = resolved("nibi", nodes=200)
    assert said(resolution, "resources.nodes") == [] or all("RAC" not in m for m in said(resolution, "resources.nodes"))


# ------------------------------------------------------------------ Trillium's data movers

@pytest.mark.parametrize("hostname", ["tri-dm2", "tri-dm3.scinet.utoronto.ca", "nia-datamover1"])
def test_trillium_refuses_a_submission_from_a_data_mover_with_the_fix(hostname):
    found = no_submit_host_findings(profile("trillium"), hostname)
    assert [(f.level, f.field) for f in found] == [("error", "host")]
    assert found[0].message == (
        f"{hostname} is one of trillium's data-mover nodes, which cannot submit jobs: log in to a login node (tri-login*, "
        f"trig-login*) and submit from there {QUICKSTART}")


@pytest.mark.parametrize("cluster, hostname", [("trillium", "tri-login01"), ("trillium", "trig-login01"), ("trillium", ""),
                                               ("narval", "tri-dm2"), ("nibi", "tri-dm1")])
def test_a_login_node_or_another_cluster_has_no_data_mover_rule(cluster, hostname):
    assert no_submit_host_findings(profile(cluster), hostname) == []


def test_check_and_submit_refuse_a_trillium_job_from_a_data_mover(tmp_path, monkeypatch):
    (tmp_path / "job.yaml").write_text("name: demo\nprofile: trillium\naccount: def-someprof\nkind: mpi\nresources: {time: 3h}\n"
                                       "launch: {command: ./solver}\n", encoding="utf-8")
    monkeypatch.setattr("socket.gethostname", lambda: "tri-dm2.scinet.utoronto.ca")
    monkeypatch.setattr("slurmkit.slurm.submit.submit_script", lambda *a, **k: pytest.fail("submitted"))
    job = Job.from_yaml(tmp_path / "job.yaml")
    assert "host" in [f.field for f in job.check(folder=tmp_path / "logs") if f.level == "error"]
    with pytest.raises(SpecError, match="data-mover nodes"):
        job.submit(folder=tmp_path / "logs")


# ------------------------------------------------------------------ Narval's blocked stacks

@pytest.mark.parametrize("module", ["StdEnv/2018.3", "StdEnv/2016.4", "StdEnv/2018"])
def test_narval_refuses_the_standard_environments_it_blocked(module):
    errors = said(resolved("narval", environment={"modules": [module]}), "environment.modules", "error")
    blocked = module[:11]
    assert errors == [f"{module}: narval has blocked {blocked} on purpose (module load fails in the job); load StdEnv/2023 and "
                      "module versions of it, or ask technical support for software only the old environment has "
                      "(source: https://docs.alliancecan.ca/wiki/Narval/en)"]


def test_narval_takes_stdenv_2023_and_another_cluster_only_warns_of_an_old_stack():
    assert said(resolved("narval", environment={"modules": ["StdEnv/2023"]}), "environment.modules", "error") == []
    elsewhere = resolved("fir", environment={"modules": ["StdEnv/2018.3"]})
    assert said(elsewhere, "environment.modules", "error") == [] and said(elsewhere, "environment.modules", "warning")


# ------------------------------------------------------------------ a GPU request without a model

def test_nibi_warns_of_a_gpu_request_without_a_model_that_may_land_on_the_mi300a():
    resolution = resolved("nibi", kind="gpu", gpus=1)
    assert resolution.errors == ()
    assert said(resolution, "resources.gpus") == [
        "'gpus: 1' names no GPU model: nibi has h100, mi300a, h100_1g.10gb, h100_2g.20gb, h100_3g.40gb, and the site asks "
        "every GPU request to name one (one without may be refused, or sent to any of them); it may land on the mi300a "
        "nodes, whose GPUs are AMD (ROCm: CUDA code does not run there); ask e.g. 'gpus: h100:1' " + GPUS_PAGE]
    directives = dict(resolution.plan.directives)   # sized for the H100 nodes, not the whole-node MI300A
    assert (directives["--cpus-per-task"], directives["--mem"]) == ("14", "250G")


def test_a_named_model_on_nibi_and_no_model_on_trillium_are_no_warning():
    assert said(resolved("nibi", kind="gpu", gpus="h100:1"), "resources.gpus") == []
    assert said(resolved("trillium", kind="gpu", gpus=1), "resources.gpus") == []   # one kind of GPU, no MIG


def test_narval_warns_of_no_model_where_a_mig_instance_may_take_it():
    assert said(resolved("narval", kind="gpu", gpus=1), "resources.gpus", "warning")[0].startswith(
        "'gpus: 1' names no GPU model: narval has a100, a100_1g.5gb")


# ------------------------------------------------------------------ memory and cores per GPU

@pytest.mark.parametrize("gpus, mem, share, two", [("h100:1", "600G", "250G", "500G"), ("h100:1", "1000G", "250G", "500G"),
                                                   ("h100_1g.10gb:1", "200G", "31G", "62G")])
def test_nibi_warns_of_memory_above_a_gpus_share(gpus, mem, share, two):
    """More than the shares of one GPU more: another GPU of the node is left without its memory."""
    resolution = resolved("nibi", kind="gpu", gpus=gpus, mem=mem)
    assert resolution.errors == ()
    each = "instance" if "g." in gpus else "GPU"
    assert said(resolution, "resources.mem") == [
        f"{mem} per node for 1 {gpus[:-2]} is more than the memory of 2 (nibi recommends at most {share} per {each}, a node's "
        f"share): the job is charged for it as for more GPUs, and leaves another GPU of the node without its memory; ask at "
        f"most {share}, or a larger {each} " + GPUS_PAGE]


@pytest.mark.parametrize("cluster, gpus, cores, most", [("nibi", "h100_1g.10gb:1", 8, 2), ("rorqual", "h100_1g.10gb:1", 6, 2),
                                                        ("narval", "a100_1g.5gb:1", 6, 1)])
def test_cores_above_a_mig_instances_share_are_warned_about(cluster, gpus, cores, most):
    warned = said(resolved(cluster, kind="gpu", gpus=gpus, cpus_per_task=cores), "resources.cpus_per_task", "warning")
    assert f"{cores} cores for one {gpus[:-2]} instance is more than {cluster} recommends ({most} at most)" in " ".join(warned)


def test_memory_and_cores_within_the_share_pass_and_more_than_a_node_is_refused():
    assert said(resolved("nibi", kind="gpu", gpus="h100:1", mem="250G"), "resources.mem") == []
    assert said(resolved("nibi", kind="gpu", gpus="h100:1", mem="260G"), "resources.mem") == []   # a little above: apply's headroom
    assert said(resolved("nibi", kind="gpu", gpus="h100_1g.10gb:1", mem="31G", cpus_per_task=2), "resources.cpus_per_task") == []
    assert said(resolved("rorqual", kind="gpu", gpus="h100:1", mem="1000G"), "resources.mem", "error")   # the node has 498G


def test_where_memory_comes_with_the_node_no_share_is_checked():
    """Trillium gives a GPU job a quarter node whatever it asks: --mem is refused there, no share warned of."""
    assert all("recommends" not in m for m in said(resolved("trillium", kind="gpu", gpus="h100:1", mem="600G"), "resources.mem"))


# ------------------------------------------------------------------ no internet on compute nodes

@pytest.mark.parametrize("line, kind", [
    ("pip install torch", "pip"), ("python -m pip install -r requirements.txt", "pip"), ("PIP_X=1 pip3 install numpy", "pip"),
    ("curl -LO https://zenodo.org/x.tgz && tar xf x.tgz", "download"), ("git clone https://github.com/a/b", "download"),
    ("python fetch.py --url https://example.org/d", "download"), ("git pull", "download")])
def test_a_command_that_needs_the_internet_is_found(line, kind):
    assert [k for k, _, _ in fetches([line])] == [kind]


@pytest.mark.parametrize("line", ["pip install --no-index torch", "pip install ./dist/x-1.0-py3-none-any.whl", "pip install -e .",
                                  "echo pip install x", "echo 'see https://x.org'", "wget http://localhost:8000/x",
                                  "git clone /project/repo.git", "python train.py --data $SCRATCH/x"])
def test_an_offline_command_is_not(line):
    assert fetches([line]) == []


def test_trillium_refuses_a_download_and_warns_of_pip_from_the_index():
    resolution = resolved("trillium", environment={"setup": ["pip install torch", "curl -LO https://zenodo.org/x.tgz"]})
    source = "(source: https://docs.alliancecan.ca/wiki/Trillium/en)"
    assert said(resolution, "environment.setup", "warning") == [
        "'pip install torch' installs from the package index, but trillium's compute nodes reach no internet: add --no-index "
        f"(the wheelhouse), or list the packages in environment.venv.packages (slurmkit installs them so) {source}"]
    assert said(resolution, "environment.setup", "error") == [
        "'curl -LO https://zenodo.org/x.tgz' reaches zenodo.org, but trillium's compute nodes reach no internet: download it "
        f"on the login node before you submit (into the spec's folder, or stage it) {source}"]


def test_narval_warns_of_a_download_in_the_command_as_support_may_grant_an_exception():
    resolution = resolved("narval", command="wget https://zenodo.org/x.tgz")
    assert resolution.errors == ()
    assert said(resolution, "launch.command") == [
        "'wget https://zenodo.org/x.tgz' reaches zenodo.org, but narval's compute nodes reach no internet unless support granted "
        "your group an exception: download it on the login node before you submit (into the spec's folder, or stage it), or "
        "load the httpproxy module (environment.modules), which lets a job through "
        "(source: https://docs.alliancecan.ca/wiki/Narval/en)"]


def test_offline_setup_the_proxy_module_or_a_cluster_with_internet_is_no_finding():
    setup = {"setup": ["pip install --no-index torch", "tar xf $SCRATCH/x.tgz"]}
    assert said(resolved("rorqual", environment=setup), "environment.setup") == []
    proxied = {"modules": ["httpproxy"], "setup": ["curl -LO https://zenodo.org/x.tgz"]}
    assert said(resolved("rorqual", environment=proxied), "environment.setup") == []
    online = {"setup": ["pip install --no-index torch", "curl -LO https://zenodo.org/x.tgz"]}
    assert said(resolved("nibi", environment=online), "environment.setup") == []
    assert said(resolved("fir", environment=online), "environment.setup") == []


def test_the_offline_rule_goes_with_the_profiles_word_on_internet():
    """storage.internet_on_compute and rules.no_internet agree on every cluster in service."""
    from slurmkit.sites.profiles import list_profiles

    for name in sorted(p.name for p in list_profiles()[0]):
        site = profile(name)
        if site.abstract or site.is_retired:
            continue
        assert (site.rules.no_internet is not None) == (site.storage.internet_on_compute is False), name


# ------------------------------------------------------------------ builds for the host CPU (Narval)

NARVAL = "(source: https://docs.alliancecan.ca/wiki/Narval/en)"


@pytest.mark.parametrize("setup, flags", [
    (["gcc -O3 -march=native -o solver solver.c"], ["-march=native"]),
    (["icc -xHost -o a a.c"], ["-xHost"]),
    (['export CFLAGS="-O2 -xCORE-AVX2"', "make"], ["-xCORE-AVX2"]),
    (["cmake -DCMAKE_CXX_FLAGS='-march=native' .."], ["-march=native"])])
def test_narval_warns_of_a_build_for_the_host_cpu(setup, flags):
    resolution = resolved("narval", environment={"setup": setup})
    assert resolution.errors == ()
    assert said(resolution, "environment.setup") == [
        f"{flag!r} builds for the CPU the job compiles on: on narval it gives code that runs as on the oldest CPUs, or (an "
        f"Intel -x<code> build) does not run at all; build with -march=core-avx2 instead {NARVAL}" for flag in flags]


def test_a_portable_build_on_narval_and_a_host_build_elsewhere_are_no_warning():
    keep = {"setup": ["gcc -O3 -march=core-avx2 -o solver solver.c", "tar -xJf src.tar.xz", "bash -x run.sh"]}
    assert said(resolved("narval", environment=keep), "environment.setup") == []
    assert said(resolved("fir", environment={"setup": ["gcc -O3 -march=native -o solver solver.c"]}), "environment.setup") == []


# ------------------------------------------------------------------ Trillium's VAST preload wants mpirun

VAST = {"setup": ["source /scinet/vast/etc/vastpreload-openmpi.bash"]}


def test_trillium_warns_of_the_vast_preload_under_srun():
    resolution = resolved("trillium", environment=VAST)
    assert resolution.errors == ()
    assert said(resolution, "environment.setup") == [
        "the job preloads vastpreload, which takes effect only under mpirun, but it runs its command with srun: set "
        f"'launch.launcher: mpirun', or leave the preload out {QUICKSTART}"]


def test_the_vast_preload_under_mpirun_or_on_another_cluster_is_no_warning():
    data = {"name": "demo", "account": "def-someprof", "kind": "mpi", "resources": {"time": "3h"},
            "launch": {"command": "./solver", "launcher": "mpirun"}, "environment": VAST}
    assert said(resolve(spec_from_mapping(data, source="job.yaml"), profile("trillium")), "environment.setup") == []
    assert said(resolved("narval", environment=VAST), "environment.setup") == []


# ------------------------------------------------------------------ no virtualenv under $SCRATCH (Python page)

PYTHON_PAGE = "(source: https://docs.alliancecan.ca/wiki/Python/en)"


@pytest.mark.parametrize("cluster", ["fir", "nibi", "rorqual", "narval", "trillium"])
@pytest.mark.parametrize("environment, field, path, under", [
    ({"venv": {"packages": ["numpy"], "path": "$SCRATCH/env"}}, "environment.venv.path", "$SCRATCH/env", "$SCRATCH"),
    ({"venv": {"packages": ["numpy"], "path": "${SCRATCH}/envs/a"}}, "environment.venv.path", "${SCRATCH}/envs/a", "$SCRATCH"),
    ({"setup": ["virtualenv --no-download $SCRATCH/env"]}, "environment.setup", "$SCRATCH/env", "$SCRATCH"),
    ({"setup": ["python3 -m venv ~/scratch/env && source ~/scratch/env/bin/activate"]}, "environment.setup", "~/scratch/env",
     "~/scratch")])
def test_a_virtualenv_under_scratch_is_warned_about(cluster, environment, field, path, under):
    assert said(resolved(cluster, environment=environment), field) == [
        f"{path}: a virtual environment under {under} may get partially deleted, and then fails in a later job; make it in "
        f"$HOME or the project space, or let slurmkit build it in $SLURM_TMPDIR (no environment.venv.path) {PYTHON_PAGE}"]


def test_a_virtualenv_elsewhere_or_on_a_non_alliance_cluster_is_no_warning():
    keep = {"setup": ["virtualenv --no-download $SLURM_TMPDIR/env", "python -m venv $HOME/envs/a"]}
    assert said(resolved("fir", environment=keep), "environment.setup") == []
    assert said(resolved("fir", environment={"venv": {"packages": ["numpy"], "path": "$HOME/envs/a"}}), "environment.venv.path") == []
    assert said(resolved("local", kind="threaded", environment={"setup": ["virtualenv $SCRATCH/env"]}), "environment.setup") == []


# ------------------------------------------------------------------ GPU profiling (Using_GPUs_with_Slurm)

def profiled(cluster, gpus, setup=()):
    return said(resolved(cluster, kind="gpu", gpus=gpus, command="nsys profile -o out python train.py",
                         environment={"setup": list(setup)}), "launch.command")


@pytest.mark.parametrize("cluster", ["fir", "nibi"])
def test_fir_and_nibi_warn_that_gpu_profiling_is_not_available(cluster):
    assert profiled(cluster, "h100:1") == [f"nsys profiles GPUs, which is not available on {cluster} yet: profile on a cluster "
                                           f"that allows it {GPUS_PAGE}"]


@pytest.mark.parametrize("cluster, gpus", [("narval", "a100:1"), ("rorqual", "h100:1")])
def test_narval_and_rorqual_ask_dcgm_disabled_at_submission_unless_the_setup_waits_for_it(cluster, gpus):
    wait = """while [ -n "$(dcgmi -v | grep 'Hostengine build info:')" ]; do sleep 5; done"""
    assert profiled(cluster, gpus) == [
        f"nsys profiles GPUs, which {cluster} allows only with DCGM disabled: submit with DISABLE_DCGM=1 set (DISABLE_DCGM=1 "
        f"slurmkit submit ...), and add to environment.setup the wait until it is off: {wait} {GPUS_PAGE}"]
    assert profiled(cluster, gpus, setup=[wait]) == []


def test_no_profiler_or_trillium_is_no_profiling_warning():
    assert said(resolved("fir", kind="gpu", gpus="h100:1", command="python train.py"), "launch.command") == []
    assert profiled("trillium", "h100:1") == []


# ------------------------------------------------------------------ the wheelhouse (Python page)

@pytest.mark.parametrize("cluster", ["fir", "nibi"])
def test_where_compute_nodes_reach_pypi_a_pip_install_from_it_is_still_warned_about(cluster):
    assert said(resolved(cluster, environment={"setup": ["pip install torch"]}), "environment.setup") == [
        f"'pip install torch' installs from PyPI, but {cluster} provides wheels built for its software stack and strongly "
        "recommends them: add --no-index (the wheelhouse; a package it lacks can be downloaded first), or list the packages in "
        f"environment.venv.packages {PYTHON_PAGE}"]


def test_pip_with_no_index_or_a_cluster_without_a_wheelhouse_is_no_wheelhouse_warning():
    assert said(resolved("fir", environment={"setup": ["pip install --no-index torch"]}), "environment.setup") == []
    assert said(resolved("local", kind="threaded", environment={"setup": ["pip install torch"]}), "environment.setup") == []
    offline = said(resolved("rorqual", environment={"setup": ["pip install torch"]}), "environment.setup")
    assert len(offline) == 1 and "reach no internet" in offline[0]   # the no-internet warning, not a second one


# ------------------------------------------------------------------ PYTHONPATH and modules under a venv (Python page)

def test_a_setup_line_that_sets_pythonpath_is_warned_about():
    assert said(resolved("nibi", environment={"setup": ["export PYTHONPATH=$HOME/lib:$PYTHONPATH"]}), "environment.setup") == [
        "'export PYTHONPATH=$HOME/lib:$PYTHONPATH' sets PYTHONPATH, which the site lists as a cause of 'No module named X' and "
        f"asks jobs not to do: install the package into the virtual environment instead {PYTHON_PAGE}"]


@pytest.mark.parametrize("environment, active", [
    ({"venv": {"packages": ["numpy"]}, "setup": ["module load gcc"]}, "the job's virtual environment"),
    ({"setup": ["source $HOME/env/bin/activate", "module load scipy-stack"]}, "the virtual environment it activates")])
def test_a_module_loaded_under_an_active_venv_is_warned_about(environment, active):
    piece = environment["setup"][-1]
    assert said(resolved("fir", environment=environment), "environment.setup") == [
        f"'{piece}' loads a module while {active} is active, which the site lists as a cause of 'No module named X': list the "
        f"module in environment.modules, which are loaded before it {PYTHON_PAGE}"]


def test_modules_before_the_venv_or_a_non_alliance_cluster_are_no_python_env_warning():
    keep = {"setup": ["module load gcc", "source $HOME/env/bin/activate", "export OMP_NUM_THREADS=4"]}
    assert said(resolved("fir", environment=keep), "environment.setup") == []
    assert said(resolved("local", kind="threaded", environment={"setup": ["export PYTHONPATH=/x"]}), "environment.setup") == []


# ------------------------------------------------------------------ time partitions (Job_scheduling_policies)

@pytest.mark.parametrize("cluster, time, bound", [("fir", "3h10m", "3h"), ("nibi", "1d2h", "1d"), ("narval", "12h30m", "12h"),
                                                  ("rorqual", "3d5h", "3d")])
def test_a_time_just_above_a_partition_bound_is_warned_about(cluster, time, bound):
    assert said(resolved(cluster, time=time), "resources.time") == [
        f"{time} is just above {cluster}'s {bound} partitions: a job of {bound} or less can also run in them, which gives it "
        f"more scheduling opportunities; ask {bound} if the job fits in it "
        "(source: https://docs.alliancecan.ca/wiki/Job_scheduling_policies/en)"]


def test_a_time_at_a_bound_or_well_above_it_or_on_trillium_is_no_partition_warning():
    for time in ("3h", "3h30m", "12h", "2d"):
        assert said(resolved("fir", time=time), "resources.time") == []
    assert said(resolved("trillium", time="3h10m"), "resources.time") == []
