"""The module catalogue as the Alliance's "Available software" pages (Modules_avx512, Modules_avx2)
list the 2023 stack: python/3.14.2 and the science codes old scripts load are kept by port and
check without a word on every cluster in service, a version those pages do not list still
warns, and the oldest python is the Python page's (wheels for the 3 most recent only)."""

import copy

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.port.retarget import choose_target, port_spec
from slurmkit.sites.modulecat import catalogue_checks, lacking_versions
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

CLUSTERS = ("fir", "nibi", "rorqual", "trillium", "narval")
JOB = {"name": "t", "account": "def-x", "kind": "threaded", "resources": {"time": "1h"}, "launch": {"command": ["hostname"]}}
#: a StdEnv/2023 build of each, as the Available software pages list it (rev 2026-08)
SCIENCE = ["python/3.14.2", "python/3.13.2", "python/3.12.4", "r/4.6.1", "r/4.4.0", "gromacs/2026.1", "gromacs/2024.4",
           "lammps-omp/20250722", "namd-multicore/3.0.2", "namd-ucx/3.0.2", "mrtrix/3.0.8", "ants/2.6.5", "fsl/6.0.7.20",
           "afni/26.0.09", "freesurfer/8.2.0-1", "quantumespresso/7.5", "quantumespresso/7.3.1"]


def port(modules, source="cedar", to="fir"):
    data = {**copy.deepcopy(JOB), "profile": source, "environment": {"modules": modules}}
    profile = load_profile(source)
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), profile, choose_target(profile, to, load_profile))


def check(tmp_path, monkeypatch, cluster, modules):
    (tmp_path / "job.yaml").write_text(yaml.safe_dump({**JOB, "profile": cluster, "environment": {"modules": modules}}))
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, ["check", "job.yaml"])


@pytest.mark.parametrize("cluster", CLUSTERS)
@pytest.mark.parametrize("module", SCIENCE)
def test_a_2023_build_the_pages_list_is_kept_without_a_word(cluster, module):
    [found] = catalogue_checks(load_profile(cluster), [module])
    assert (found.new, found.why, found.warning) == (module, None, None)
    assert lacking_versions(load_profile(cluster), ["StdEnv/2023", module]) == []


@pytest.mark.parametrize("cluster", ["fir", "trillium", "narval"])
def test_check_and_port_say_nothing_of_python_3_14_2(cluster, tmp_path, monkeypatch):
    result = check(tmp_path, monkeypatch, cluster, ["StdEnv/2023", "python/3.14.2"])
    assert result.exit_code == 0 and "python" not in result.output, result.output
    ported = port(["StdEnv/2023", "python/3.14.2"], to=cluster)
    assert not [w for w in ported.warnings if "python" in w.message] and not [t for t in ported.todos if "python" in t]
    assert not [c for c in ported.changes if c.field == "environment.modules"]


def test_a_python_the_pages_do_not_list_is_rewritten_and_check_says_so(tmp_path, monkeypatch):
    """3.12.9 was never installed, and 3.11.4 is a StdEnv/2023 recipe no cluster lists: neither loads
    (3.11.4 moves to the oldest python served, 3.12)."""
    for module, new in (("python/3.12.9", "python/3.13.2"), ("python/3.11.4", "python/3.12.4")):
        result = check(tmp_path, monkeypatch, "fir", ["StdEnv/2023", module])
        assert "warning: job.yaml:" in result.output and module in result.output, result.output
        [found] = catalogue_checks(load_profile("fir"), [module])
        assert found.new == new and found.absent


def test_a_python_newer_than_the_pages_list_is_kept_with_a_to_do():
    ported = port(["StdEnv/2023", "python/3.15.1"])
    assert [t for t in ported.todos if "python/3.15.1 is newer than the python builds" in t and "python/3.14.2" in t]


@pytest.mark.parametrize("old, new", [("gromacs/2020.4", "gromacs/2023.3"), ("quantumespresso/6.8", "quantumespresso/7.3.1"),
                                      ("freesurfer/5.3.0", "freesurfer/7.4.1"), ("r/4.1.2", "r/4.3.1")])
def test_an_old_science_code_moves_to_the_nearest_2023_build(old, new):
    change = next(c for c in port(["StdEnv/2020", old]).changes if c.field == "environment.modules")
    assert new in change.new and old in change.why


def test_a_namd_build_of_an_older_stack_is_installed_not_unknown():
    """namd-ofi/2.14 is on the pages (no StdEnv/2023 recipe): said as a question, not as 'not in the catalogue'."""
    [found] = catalogue_checks(load_profile("fir"), ["namd-ofi/2.14"])
    assert "is installed on fir, but no source says whether it loads under StdEnv/2023" in found.warning


def test_the_oldest_python_is_the_python_pages_three_most_recent():
    """Python page: wheels "only for the 3 most recent Python versions available" (3.12, 3.13, 3.14
    under StdEnv/2023); the python slurmkit loads by default is one of them."""
    for cluster in CLUSTERS:
        profile = load_profile(cluster)
        assert profile.rules.oldest_python.version == "3.12"
        assert profile.rules.oldest_python.source == ("https://docs.alliancecan.ca/wiki/Python/en",)
        assert profile.software.modules["python"] in ("python/3.12", "python/3.12.4")
