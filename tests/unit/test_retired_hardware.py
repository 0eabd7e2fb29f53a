"""Hardware a cluster retired before its end (Graham's P100 nodes): old scripts that ask for it
import and port, and no job is ever placed on it (check and submit refuse, in one line)."""

import datetime

import pytest
from click.testing import CliRunner

from slurmkit.api.job import Job
from slurmkit.cli.main import main
from slurmkit.core.bundled import profiles_dir
from slurmkit.core.errors import SpecError
from slurmkit.port.porting import import_script, imported_text
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile, load_profile_file, validate_file
from slurmkit.spec.spec import spec_from_mapping

P100_SCRIPT = """#!/bin/bash
#SBATCH --account=def-prof --time=1:00:00
#SBATCH --gres=gpu:p100:1
source ~/env/bin/activate
python train.py
"""
REFUSAL = ("resources.gpus: graham's p100 GPUs were retired on 2025-01-13: no job runs on them; graham itself was retired "
           "on 2025-09-01: `slurmkit port job.yaml --to nibi` moves the job onto nibi's hardware")


def _imported_spec(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text(imported_text(import_script(P100_SCRIPT, name="old", profile="graham"), "old.sh"))
    return spec


def test_graham_keeps_its_retired_node_types_with_their_date_but_places_no_job_on_them():
    graham = load_profile("graham")
    retired = {t.name: t for t in graham.retired_node_types}
    assert retired["gpu-p100"].gpus.model == "p100" and retired["gpu-p100"].retired_on == datetime.date(2025, 1, 13)
    assert {"gpu-p100", "gpu-v100-16gb", "cpu-broadwell"} <= set(retired)
    assert not set(retired) & {t.name for t in graham.node_types}
    assert "p100" not in graham.gpu_models


def test_check_refuses_a_graham_p100_spec_in_one_line_saying_since_when_and_what_to_use(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    _imported_spec(tmp_path)
    result = CliRunner().invoke(main, ["check", "job.yaml"])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert errors == [f"error: job.yaml:9: {REFUSAL}"]   # below the import's note on the python it runs
    assert "has no GPU called" not in result.output


def test_submit_refuses_a_graham_p100_job_before_any_sbatch(tmp_path, monkeypatch):
    monkeypatch.setattr("slurmkit.slurm.submit.submit_script", lambda *a, **k: pytest.fail("submitted"))
    with pytest.raises(SpecError, match="graham's p100 GPUs were retired on 2025-01-13"):
        Job.from_yaml(_imported_spec(tmp_path)).submit()


@pytest.mark.parametrize("target", ["nibi", "fir"])
def test_a_graham_p100_script_imports_and_ports_to_an_h100_whose_spec_passes_check(target, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    _imported_spec(tmp_path)
    ported = CliRunner().invoke(main, ["port", "job.yaml", "--to", target, "-o", "new.yaml"])
    assert ported.exit_code == 0, ported.output
    assert (f"changed: resources.gpus: p100:1 -> h100:1: graham's P100 12G (retired there on 2025-01-13); {target}'s H100 80G "
            "is the smallest with at least its memory") in ported.output
    checked = CliRunner().invoke(main, ["check", "new.yaml"])
    assert checked.exit_code == 0, checked.output


def test_a_gpu_name_in_service_is_taken_before_a_retired_one_of_the_same_name():
    """Graham had 16G V100s (retired) and 32G ones (to the end): gpus: v100 is the 32G kind."""
    spec = spec_from_mapping({"name": "v", "account": "def-prof", "kind": "gpu", "launch": "python t.py",
                              "resources": {"time": "1h", "gpus": "v100:1"}})
    resolution = resolve(spec, load_profile("graham"))
    assert not resolution.errors
    assert "v100:1" in dict(resolution.plan.directives).values()


RETIRED_ON_A_CLUSTER_IN_SERVICE = """\
name: mysite
extends: narval
status: {state: in-service, source: https://example.org/status}
node_types:
  gpu-k80:
    cores: 24
    memory: 120G
    gpus: {model: k80, count: 4, memory: 12G, gres: k80}
    since: 2016-01-05
    retired_on: 2021-10-01
    source: https://example.org/k80
"""


def test_on_a_cluster_in_service_the_refusal_names_the_gpus_it_has(tmp_path):
    path = tmp_path / "mysite.yaml"
    path.write_text(RETIRED_ON_A_CLUSTER_IN_SERVICE)
    spec = spec_from_mapping({"name": "k", "account": "def-prof", "kind": "gpu", "launch": "python t.py",
                              "resources": {"time": "1h", "gpus": "k80:1"}})
    errors = resolve(spec, load_profile_file(path, dirs=[tmp_path, profiles_dir()])).errors
    assert [(e.field, e.message) for e in errors] == [
        ("resources.gpus", "mysite's k80 GPUs were retired on 2021-10-01: no job runs on them; ask for one it has: a100, "
                           "a100_1g.5gb, a100_2g.10gb, a100_3g.20gb")]


def test_a_node_type_retired_before_it_came_into_service_is_a_profile_error(tmp_path):
    path = tmp_path / "mysite.yaml"
    path.write_text(RETIRED_ON_A_CLUSTER_IN_SERVICE.replace("since: 2016-01-05", "since: 2022-01-05"))
    problems = [str(p) for p in validate_file(path, dirs=[tmp_path, profiles_dir()])]
    assert any("node_types.gpu-k80.retired_on: 2021-10-01 is before its since: 2022-01-05" in p for p in problems), problems
