"""``slurmkit profiles detect`` against the real local SLURM cluster of tests/cluster/."""

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.sites import detect
from slurmkit.sites.profiles import load_profile, validate_file

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def facts(cluster):
    return detect.gather_facts()


@pytest.fixture
def workdir(cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for variable in ("SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME"):
        monkeypatch.delenv(variable, raising=False)
    return tmp_path


def slurmkit(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


def test_detect_finds_both_nodes_their_cores_memory_and_p100s(facts):
    assert facts.cluster_name == "lab"
    assert sorted(n.name for n in facts.nodes) == ["node1", "node2"]
    (group,) = facts.groups
    assert (group.name, group.nodes, group.cores, group.sockets, group.memory_mib) == ("gpu-p100", ("node1", "node2"), 2, 1, 4000)
    assert group.gpus == (detect.Gres("gpu", "p100", 2),)


def test_detect_finds_the_partition_its_time_limit_and_the_accounting_rules(facts):
    (partition,) = facts.partitions
    assert (partition.name, partition.default, partition.max_time) == ("compute", True, "7-00:00:00")
    assert facts.accounting and facts.account_required is True
    assert {"def-test", "def-other"} <= set(facts.accounts)
    assert facts.config["MpiDefault"] == "pmix"


def test_detect_writes_a_profile_that_every_command_can_use(workdir):
    result = slurmkit("profiles", "detect", "-o", "site_profiles/lab.yaml")
    assert result.exit_code == 0, result.output
    assert "node type gpu-p100: 2 x (2 cores, 1 socket, 4000M memory, 2 x p100 GPU) [node1, node2]" in result.stdout
    written = workdir / "site_profiles" / "lab.yaml"
    assert validate_file(written) == []
    assert not [p for p in written.parent.iterdir() if p.name != "lab.yaml"]  # no temp file left behind

    lab = load_profile("lab")
    (node,) = lab.node_types
    assert (node.name, node.count, node.cores, node.memory_mib) == ("gpu-p100", 2, 2, 4000)
    assert (node.gpus.model, node.gpus.count, node.gpus.gres) == ("p100", 2, "p100")
    assert lab.scheduling.max_walltime_seconds == 7 * 86400
    assert lab.accounts.required == "always" and lab.accounts.prefixes == ("def-",)

    listed = {e["name"]: e for e in json.loads(slurmkit("profiles", "list", "--json").stdout)["profiles"]}
    assert listed["lab"]["gpu_models"] == ["p100"] and listed["lab"]["path"] == str(written)
    shown = slurmkit("profiles", "show", env={"SLURM_CLUSTER_NAME": "lab"})
    assert shown.exit_code == 0 and shown.stdout.startswith("lab: ")  # the user's profile wins over bundled local
    assert slurmkit("profiles", "validate", str(written)).exit_code == 0


def test_detected_profile_agrees_with_the_bundled_local_profile(workdir):
    result = slurmkit("profiles", "detect")
    assert result.exit_code == 0, result.output
    detected = yaml.safe_load(result.stdout)
    assert detected["name"] == "lab"
    local = load_profile("local").raw
    got, want = detected["node_types"]["gpu-p100"], local["node_types"]["gpu-p100"]
    for key in ("count", "cores", "sockets", "memory"):
        assert got[key] == want[key], key
    for key in ("model", "count", "gres", "max_cores_per_gpu"):
        assert got["gpus"][key] == want["gpus"][key], key
    for key in ("max_walltime", "default_mem_per_cpu", "mem_request", "partitions"):
        assert detected["scheduling"][key] == local["scheduling"][key], key
    assert detected["launch"]["mpi"]["srun_mpi"] == local["launch"]["mpi"]["srun_mpi"]
    assert detected["accounts"]["required"] == local["accounts"]["required"]
    assert "cluster lab" in result.stderr  # the human summary goes to stderr when YAML goes to stdout


def test_detect_into_an_existing_file_needs_force(workdir):
    target = Path("site_profiles") / "lab.yaml"
    assert slurmkit("profiles", "detect", "-o", str(target)).exit_code == 0
    target.write_text("name: lab\n# edited by hand\n")
    assert slurmkit("profiles", "detect", "-o", str(target)).exit_code == 2
    assert target.read_text() == "name: lab\n# edited by hand\n"
    assert slurmkit("profiles", "detect", "-o", str(target), "--force").exit_code == 0
    assert validate_file(target) == []
