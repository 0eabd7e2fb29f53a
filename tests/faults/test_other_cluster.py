"""A spec for another cluster than the one this host is on, on the real local cluster: where
``$CC_CLUSTER`` says fir, a ``profile: nibi`` spec is refused by ``check`` and ``submit`` with the
ways on (port, --profile, --remote), and nothing reaches sbatch. The local cluster is a cluster
too (the ``local`` profile claims ``ClusterName=lab``): there the same spec is refused, where it
used to be submitted and pend for ever."""

import json
import os

import pytest

from slurmkit import Job
from slurmkit.core.errors import SpecError
from slurmkit.slurm.registry import all_records

from .test_slurm_config import counted, runs  # noqa: F401  (the fixture)
from .test_submission import run_cli


def nibi_spec(tmp_path):
    path = tmp_path / "nibi.yaml"
    path.write_text("name: for-nibi\nprofile: nibi\naccount: def-test\nresources: {time: 1h}\nlaunch: {command: [\"true\"]}\n")
    return path


def said(spec) -> str:
    return (f"error: {spec}:2: profile: this job is for nibi, but this host is on fir ($CC_CLUSTER=fir): sbatch would send it "
            f"to fir, which would refuse it or leave it pending for ever; move it with `slurmkit port {spec} --to fir -o "
            "fir.yaml`, submit it here as it is with `--profile fir` if it asks only what fir has, or send it to nibi with `--remote nibi`")


def test_a_nibi_spec_where_cc_cluster_says_fir_is_refused_by_check_and_submit_and_nothing_is_submitted(cluster, registry, tmp_path,
                                                                                                       counted):  # noqa: F811
    folder, log = counted
    spec = nibi_spec(tmp_path)
    env = {**os.environ, "CC_CLUSTER": "fir", "PATH": f"{folder}:{os.environ['PATH']}"}
    checked = run_cli("check", spec, env=env)
    assert checked.returncode == 2 and checked.stdout.strip() == said(spec)
    as_json = json.loads(run_cli("check", spec, "--json", env=env).stdout)
    assert [(f["level"], f["field"], f["line"]) for f in as_json["findings"]] == [("error", "profile", 2)]
    for argv in (("submit", spec), ("submit", "--dry-run", spec)):
        refused = run_cli(*argv, env=env)
        assert (refused.returncode, refused.stderr.strip()) == (2, said(spec)), argv
    assert runs(log) == [] and all_records(registry) == []    # nothing reached sbatch, nothing was recorded
    assert run_cli("check", spec, "--profile", "fir", env=env).returncode == 0   # the way on it names


def test_the_python_api_refuses_a_spec_for_another_cluster_before_sbatch(cluster, registry, tmp_path, counted, monkeypatch):  # noqa: F811
    folder, log = counted
    monkeypatch.setenv("CC_CLUSTER", "fir")
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    job = Job.from_yaml(nibi_spec(tmp_path))
    for send in (job.submit, job.test_only):
        with pytest.raises(SpecError, match=r"this job is for nibi, but this host is on fir \(\$CC_CLUSTER=fir\)"):
            send()
    assert runs(log) == [] and all_records(registry) == []


def test_on_the_local_cluster_a_nibi_spec_is_refused_and_its_own_profile_is_the_way_on(cluster, registry, tmp_path,
                                                                                       counted):  # noqa: F811
    folder, log = counted
    env = {k: v for k, v in os.environ.items() if k not in ("CC_CLUSTER", "SLURM_CLUSTER_NAME")}
    env["PATH"] = f"{folder}:{env['PATH']}"
    spec = nibi_spec(tmp_path)
    for argv in (("check", spec), ("submit", spec)):
        refused = run_cli(*argv, env=env)
        said = refused.stdout + refused.stderr
        assert refused.returncode == 2, argv
        assert f"this job is for nibi, but this host is on local (ClusterName=lab in {os.environ['SLURM_CONF']})" in said, said
        assert "`--profile local`" in said
    assert runs(log) == [] and all_records(registry) == []
    assert run_cli("check", spec, "--profile", "local", env=env).returncode == 0
