"""tests/run's choice of pytest runs (``--plan`` prints them and runs nothing): the tiers
without the cluster on two processes, the cluster tiers in one, and only the runs that the
named tests fall in, so that ``bash tests/run TEST_ID`` runs just that test."""

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTEST = ".venv/bin/python -m pytest -p no:cacheprovider -q -m not\\ slow"
UNIT = f"{PYTEST} -n 2"
CLUSTER = f"{PYTEST} --durations=30"


def plan(*args, cwd=REPO):
    result = subprocess.run(["bash", str(REPO / "tests" / "run"), "--plan", *args], cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return result.stdout.splitlines()


def test_no_arguments_is_every_tier_but_the_slow_one_in_two_runs():
    assert plan() == [f"{UNIT} tests/unit tests/packaging", f"{CLUSTER} tests/integration tests/faults"]


@pytest.mark.parametrize("options", [["-k", "cluster"], ["-m", "slow"], ["-x", "-k", "tests/unit"]])
def test_options_alone_go_to_both_runs_over_every_tier(options):
    quoted = " ".join(options)
    assert plan(*options) == [f"{UNIT} tests/unit tests/packaging {quoted}", f"{CLUSTER} tests/integration tests/faults {quoted}"]


def test_a_unit_test_id_is_the_only_run():
    assert plan("tests/unit/test_units.py::test_x", "-x") == [f"{UNIT} tests/unit/test_units.py::test_x -x"]


def test_a_cluster_test_file_is_the_only_run_in_one_process():
    assert plan("tests/faults/test_monitor.py", "-k", "1000") == [f"{CLUSTER} tests/faults/test_monitor.py -k 1000"]


def test_test_ids_of_both_kinds_go_each_to_its_run():
    assert plan("tests/faults", "tests/unit/test_cli.py", "tests/integration/test_remote.py::test_a") == [
        f"{UNIT} tests/unit/test_cli.py", f"{CLUSTER} tests/faults tests/integration/test_remote.py::test_a"]


@pytest.mark.parametrize("folder", ["tests", ".", "tests/"])
def test_a_folder_above_the_tiers_is_each_tier_in_its_run(folder):
    assert plan(folder) == [f"{UNIT} tests/unit tests/packaging", f"{CLUSTER} tests/integration tests/faults"]


def test_paths_are_read_from_the_callers_folder():
    assert plan("unit/test_cli.py", "../tests/faults", cwd=REPO / "tests") == [f"{UNIT} tests/unit/test_cli.py",
                                                                              f"{CLUSTER} tests/faults"]


def test_an_option_value_is_no_test_id_even_where_it_names_a_test():
    assert plan("--deselect", "tests/unit/test_cli.py::test_x", "tests/unit") == [
        f"{UNIT} tests/unit --deselect tests/unit/test_cli.py::test_x"]


def test_a_file_that_does_not_exist_is_left_to_pytest_to_refuse():
    assert plan("tests/unit/test_nope.py") == [f"{UNIT} tests/unit tests/packaging tests/unit/test_nope.py",
                                               f"{CLUSTER} tests/integration tests/faults tests/unit/test_nope.py"]
