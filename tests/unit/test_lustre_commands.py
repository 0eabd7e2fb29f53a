"""Lustre's lfs where the shared file systems are not Lustre (Nibi's and Trillium's are VAST)."""

import copy

import pytest

from slurmkit.port.porting import import_script
from slurmkit.port.retarget import choose_target, port_spec, untold_warnings
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

JOB = {"name": "les", "account": "def-x", "kind": "mpi", "resources": {"time": "12h", "nodes": 2, "tasks_per_node": 32},
       "environment": {"modules": ["StdEnv/2023", "openmpi/4.1.5"],
                       "setup": ["OUT=$SCRATCH/run1", "mkdir -p $OUT", "lfs setstripe -c 8 -S 4m $OUT"]},
       "launch": {"command": "./les_solver", "launcher": "srun"}}

SCRIPT = """#!/bin/bash
#SBATCH --account=def-someprof
#SBATCH --time=12:00:00
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=32
#SBATCH --mem-per-cpu=3G
module load StdEnv/2023 openmpi/4.1.5
OUT=$SCRATCH/run1
mkdir -p $OUT
lfs setstripe -c 8 -S 4m $OUT
srun ./les_solver --out $OUT
"""


def warnings(cluster, data=JOB):
    resolution = resolve(spec_from_mapping({**copy.deepcopy(data), "profile": cluster}, source="job.yaml"), load_profile(cluster))
    return [f for f in resolution.findings if f.level == "warning" and "Lustre" in f.message]


def port(to):
    data = import_script(SCRIPT, name="les", profile="graham").spec
    source = load_profile("graham")
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="les.yaml"), source, choose_target(source, to, load_profile))


@pytest.mark.parametrize("cluster, page", [("nibi", "Nibi/en"), ("trillium", "Trillium/en")])
def test_check_warns_of_lfs_setstripe_on_a_vast_cluster_with_the_source_and_the_fix(cluster, page):
    (finding,) = warnings(cluster)
    assert finding.field == "environment.setup[2]"
    assert finding.message.startswith("'lfs setstripe -c 8 -S 4m $OUT' runs Lustre's lfs")
    assert f"are VAST, not Lustre (source: https://docs.alliancecan.ca/wiki/{page})" in finding.message
    assert finding.message.endswith("remove the lfs line")


@pytest.mark.parametrize("cluster", ["fir", "rorqual"])
def test_lfs_is_no_warning_on_a_cluster_whose_profile_says_lustre(cluster):
    assert load_profile(cluster).storage.filesystem.type == "lustre"
    assert warnings(cluster) == []


def test_lfs_find_is_told_to_use_find_and_a_line_that_asks_for_lfs_first_is_not_warned_about():
    data = copy.deepcopy(JOB)
    data["environment"]["setup"] = ["if [ -d $OUT ]; then\n  lfs find $OUT -name '*.h5'\nfi",
                                    "command -v lfs >/dev/null && lfs setstripe -c 4 $OUT"]
    (finding,) = warnings("nibi", data)
    assert finding.field == "environment.setup[0]" and "'find' does what 'lfs find' does" in finding.message


def test_port_graham_to_nibi_writes_the_lfs_line_as_a_to_do_said_once():
    ported = port("nibi")
    (todo,) = [t for t in ported.todos if "Lustre" in t]
    assert todo.startswith("environment.setup[2]: 'lfs setstripe -c 8 -S 4m $OUT' runs Lustre's lfs, but nibi's shared file "
                           "systems (/home, /project, /scratch) are VAST")
    assert todo.endswith("remove the lfs line, then remove this line")
    assert not [w for w in untold_warnings(ported) if "Lustre" in w.message]


def test_port_graham_to_fir_writes_no_lfs_to_do_and_graham_whose_type_no_page_names_is_not_judged():
    assert not [t for t in port("fir").todos if "Lustre" in t]
    assert load_profile("graham").storage.filesystem is None and warnings("graham") == []
