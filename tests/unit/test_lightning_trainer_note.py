"""A Lightning script names the Trainer arguments its request implies.

Lightning reads its ranks from SLURM, and since 2.1 refuses a Trainer whose num_nodes or devices
differ from --nodes and --ntasks-per-node; the numbers the program must use are the request's.
"""

import pytest

from slurmkit.api.job import Job
from slurmkit.sites.profiles import load_profile

from .golden_specs import spec_for


@pytest.mark.parametrize("profile, expected", [("fir", "num_nodes=2, devices=4"), ("nibi", "num_nodes=2, devices=8")])
def test_the_trainer_note_gives_the_requests_nodes_and_gpus_per_node(profile, expected):
    script = Job(**spec_for(load_profile(profile), "lightning")).render()
    assert f"Trainer({expected})" in script


def test_one_node_says_one_node():
    spec = spec_for(load_profile("fir"), "lightning")
    spec["resources"] = {**spec["resources"], "nodes": 1, "gpus": "h100:2"}
    assert "Trainer(num_nodes=1, devices=2)" in Job(**spec).render()
