"""MPI settings of Cedar's Omni-Path (PSM2) are to-dos where the job moves to InfiniBand."""

import copy

from slurmkit.port.retarget import choose_target, port_spec
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

JOB = {"name": "t", "account": "def-x", "kind": "mpi", "resources": {"time": "1h", "nodes": 2, "tasks_per_node": 48},
       "environment": {"modules": ["StdEnv/2020", "openmpi/4.0.3"]}, "launch": {"command": "./turb3d", "launcher": "srun"}}


def port(data, source="cedar", to="fir"):
    data = {**copy.deepcopy(data), "profile": source}
    profile = load_profile(source)
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), profile, choose_target(profile, to, load_profile))


def test_psm2_settings_of_omnipath_are_a_to_do_on_infiniband():
    data = copy.deepcopy(JOB)
    data["environment"]["variables"] = {"OMPI_MCA_mtl": "psm2", "OMPI_MCA_pml": "cm", "PSM2_MQ_RNDV_HFI_THRESH": "64000",
                                        "OMP_NUM_THREADS": "1"}
    data["environment"]["setup"] = ["export FI_PROVIDER=psm2"]
    (todo,) = [t for t in port(data).todos if "Omni-Path" in t]
    assert todo.startswith("environment.variables.OMPI_MCA_mtl, environment.variables.OMPI_MCA_pml, "
                           "environment.variables.PSM2_MQ_RNDV_HFI_THRESH, environment.setup[0]: ")
    assert "fir's InfiniBand does not have" in todo and "OMP_NUM_THREADS" not in todo


def test_an_mca_option_on_the_launch_line_is_one_too_and_nothing_is_said_without_them():
    data = {**copy.deepcopy(JOB), "launch": {"shell": "mpirun --mca mtl psm2 -np 96 ./turb3d", "launcher": "direct"}}
    assert [t for t in port(data).todos if "--mca mtl psm2" in t]
    assert not [t for t in port(JOB).todos if "Omni-Path" in t]
    assert not [t for t in port({**copy.deepcopy(data), "profile": "graham"}, source="graham", to="nibi").todos if "Omni-Path" in t]
