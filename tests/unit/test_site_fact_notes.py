"""Site facts a user needs beside the line they concern, each with the page that states it.

- Fir: "Recommended per GPU: 12 cores, 280 GB" (Allocations and compute scheduling, Ratios in
  bundles): --mem is 280G per H100, not the node's 1125G over 4 (281G), and its line cites the page.
- Rorqual: "--tmp=xG, where x is a value between 370 and 3360" for a larger $SLURM_TMPDIR.
- Narval, Rorqual, Trillium: compute nodes have no internet; pip reads the wheelhouse.
- Trillium: "exactly 1 GPU or a multiple of 4 GPUs"; envs built on a login node (Python page).
"""

import pytest

from slurmkit.api.job import Job
from slurmkit.render.render import render
from slurmkit.sites.profiles import load_profile

from .golden_specs import spec_for

RATIOS = "https://docs.alliancecan.ca/wiki/Allocations_and_compute_scheduling/en#Ratios_in_bundles"


def _script(profile: str, kind: str) -> str:
    return render(Job(**spec_for(load_profile(profile), kind)).resolve().plan)


@pytest.mark.parametrize("kind, mem", [("gpu", "280G"), ("multigpu", "560G")])
def test_fir_asks_the_recommended_280g_per_h100_and_cites_the_page(kind, mem):
    script = _script("fir", kind)
    assert f"\n#SBATCH --mem={mem}\n" in script
    assert f"# --mem={mem}: fir recommends 280G per H100 ({RATIOS})\n#SBATCH --mem={mem}\n" in script


def test_rorqual_says_how_to_ask_a_bigger_slurm_tmpdir_where_it_stages():
    assert ("# Inputs into $SLURM_TMPDIR, the node's local NVMe disk (https://docs.alliancecan.ca/wiki/Using_node-local_storage/en); "
            "more room: #SBATCH --tmp=xG, x from 370 to 3360 (https://docs.alliancecan.ca/wiki/Rorqual/en).\n"
            in _script("rorqual", "gpu"))
    assert "more room" not in _script("fir", "gpu")


@pytest.mark.parametrize("profile, kind", [("narval", "gpu"), ("rorqual", "gpu"), ("trillium", "multigpu")])
def test_a_site_without_internet_on_compute_nodes_says_so_by_the_venv(profile, kind):
    script = _script(profile, kind)
    line = (f"# {profile}'s compute nodes have no internet (https://docs.alliancecan.ca/wiki/{profile.capitalize()}/en): "
            "wheels come from the wheelhouse; download models and data on a login node.\n")
    assert script.count(line) == 1
    assert script.index(line) < script.index("slurmkit_activate")


@pytest.mark.parametrize("profile", ["fir", "nibi"])
def test_a_site_with_internet_on_compute_nodes_has_no_such_line(profile):
    assert "have no internet" not in _script(profile, "gpu")


@pytest.mark.parametrize("kind, count", [("multigpu", 4), ("gpu", 1)])
def test_trillium_says_one_gpu_or_a_multiple_of_four_above_the_gpu_line(kind, count):
    """Also on a one-GPU job: a user who edits 1 to 2 is refused at submission."""
    script = _script("trillium", kind)
    assert ("; 1 GPU or a multiple of 4 per job (https://docs.alliancecan.ca/wiki/Trillium_Quickstart/en)\n"
            f"#SBATCH --cpus-per-task=24\n#SBATCH --gpus-per-node=h100:{count}\n") in script


def test_trillium_cites_the_python_page_for_the_env_built_on_the_login_node():
    assert ("# The virtualenv, built on the login node as trillium asks (https://docs.alliancecan.ca/wiki/Python/en): "
            "the job only activates it.\n") in _script("trillium", "multigpu")
