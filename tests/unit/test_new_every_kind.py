"""``slurmkit new --yes`` on every bundled profile, for every kind: the scaffold's defaults are ones
the site takes, and what it writes passes ``slurmkit check``; a kind the site cannot run at all is
refused in one line, before anything is written."""

import os

import pytest
import yaml

from slurmkit.core.kinds import KINDS
from slurmkit.sites.profiles import load_profile

from .test_cli_jobs import controlled_environment, run  # noqa: F401  (autouse: an empty folder, no profile or account variables)

PROFILES = sorted(name[:-5] for name in os.listdir(os.path.join(os.path.dirname(__file__), "..", "..", "site_profiles"))
                  if name.endswith(".yaml") and name != "alliance.yaml")   # alliance: the abstract base


def refused_by_design(profile_name: str, kind) -> bool:
    """A kind that needs GPUs on a site without GPU nodes; one process on a site of whole nodes."""
    profile = load_profile(profile_name)
    no_gpus = not any(t.gpus for t in profile.node_types)
    return (kind.gpu_required and no_gpus) or (bool(profile.scheduling.whole_node) and bool(kind.whole_node_advice)
                                               and kind.whole_node_advice != "threads")


@pytest.mark.parametrize("profile", PROFILES)
def test_new_with_yes_writes_a_job_that_check_accepts_for_every_kind(profile):
    for kind in KINDS.values():
        folder = f"{profile}-{kind.name}"
        result = run("new", folder, "--profile", profile, "--kind", kind.name, "--account", "def-x", "--yes")
        if refused_by_design(profile, kind):
            assert result.exit_code == 2 and result.output.count("error:") == 1, (kind.name, result.output)
            assert not os.path.exists(folder)
            continue
        assert result.exit_code == 0, (kind.name, result.output)
        checked = run("check", f"{folder}/job.yaml")
        if load_profile(profile).is_retired:   # its one error: a retired cluster runs no jobs; port moves it
            errors = [line for line in checked.output.splitlines() if line.startswith("error:")]
            assert checked.exit_code == 2 and len(errors) == 1 and "slurmkit port" in errors[0], (kind.name, checked.output)
            continue
        assert "error:" not in checked.output and checked.exit_code == 0, (kind.name, checked.output)


def test_new_starts_a_multi_node_kind_from_whole_nodes_of_gpus():
    """Half nodes over two nodes would send NCCL's traffic over the fabric for nothing."""
    for kind in (k for k in KINDS.values() if k.spreads_over_nodes and k.gpus_example):
        for profile, per_node in (("narval", 4), ("nibi", 8), ("trillium", 4)):
            result = run("new", f"{profile}-{kind.name}", "--profile", profile, "--kind", kind.name, "--account", "def-x", "--yes")
            assert result.exit_code == 0, result.output
            resources = yaml.safe_load(open(f"{profile}-{kind.name}/job.yaml"))["resources"]
            assert resources["gpus"].endswith(f":{per_node}") and resources["nodes"] == 2, (kind.name, resources)


def test_new_starts_a_one_node_multi_gpu_kind_from_a_count_the_site_takes():
    kind = next(k for k in KINDS.values() if k.one_node_only and k.gpus_example > 1)
    for profile, count in (("narval", 2), ("trillium", 4)):
        result = run("new", profile, "--profile", profile, "--kind", kind.name, "--account", "def-x", "--yes")
        assert result.exit_code == 0, result.output
        assert yaml.safe_load(open(f"{profile}/job.yaml"))["resources"]["gpus"].endswith(f":{count}")
