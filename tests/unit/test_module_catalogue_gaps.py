"""Modules of the shared 2023 stack that old scripts load (petsc, hdf5-mpi, eigen, swig) are in
the catalogue, each with the page that shows it there, so port and check do not call them
missing; and an old stack's base layer (nixpkgs/16.09) loaded without its StdEnv goes as that
StdEnv would, said in the change."""

import copy

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.port.retarget import choose_target, port_spec
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

JOB = {"name": "t", "account": "def-x", "kind": "mpi", "resources": {"time": "1h", "tasks_per_node": 4},
       "launch": {"launcher": "srun", "command": ["./solver"]}}
STACK_2023 = ["petsc", "petsc/3.21.6", "petsc/3.25.1", "hdf5-mpi", "hdf5-mpi/1.14.2", "eigen", "swig"]


def port(modules, source="cedar", to="fir"):
    data = {**copy.deepcopy(JOB), "profile": source, "environment": {"modules": modules}}
    profile = load_profile(source)
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), profile, choose_target(profile, to, load_profile))


@pytest.mark.parametrize("module", STACK_2023)
def test_a_module_of_the_2023_stack_is_not_reported_missing(module, tmp_path, monkeypatch):
    ported = port(["StdEnv/2023", module])
    assert not [w for w in ported.warnings if module.split("/")[0] in w.message]
    assert not [t for t in ported.todos if module.split("/")[0] in t]
    import yaml

    (tmp_path / "job.yaml").write_text(yaml.safe_dump({**JOB, "profile": "fir", "environment": {"modules": ["StdEnv/2023", module]}}))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "job.yaml"])
    assert module.split("/")[0] not in result.output, result.output


def test_an_older_petsc_moves_to_the_nearest_of_the_2023_stack():
    changes = {c.field: c for c in port(["StdEnv/2020", "petsc/3.17.1", "hdf5-mpi/1.10.6"]).changes}
    assert changes["environment.modules"].new == ["StdEnv/2023", "petsc/3.20.0", "hdf5-mpi/1.14.6"]   # the nearest StdEnv/2023 builds


@pytest.mark.parametrize("stdenv", [[], ["StdEnv/2016.4"], ["StdEnv/2018.3"]])
def test_nixpkgs_of_the_old_stacks_goes_with_them_named_or_not(stdenv):
    ported = port([*stdenv, "nixpkgs/16.09", "gcc/7.3.0"])
    change = next(c for c in ported.changes if c.field == "environment.modules")
    assert "nixpkgs/16.09" not in change.new and "gcc/12.3" in change.new
    assert "nixpkgs/16.09 came with StdEnv/2016.4" in change.why or "nixpkgs/16.09 came with StdEnv/2018.3" in change.why
    assert not [t for t in ported.todos if "nixpkgs" in t]
