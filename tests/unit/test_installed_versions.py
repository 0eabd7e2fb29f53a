"""Old module pins settled from the site's list of installed versions (software.installed): a
version not installed on the target does not exist there and is rewritten, with the reason; an
installed one the catalogue documents for StdEnv/2023 is kept, or the older one rewritten to it;
an installed one no source places under StdEnv/2023 is kept with the one command that tells."""

import copy

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.port.retarget import choose_target, port_spec
from slurmkit.sites.modulecat import check_module, families, installed_replacement
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

JOB = {"name": "t", "account": "def-x", "kind": "serial", "resources": {"time": "1h"}, "launch": "nextflow run main.nf"}


def port(modules, source="cedar", to="fir"):
    data = {**copy.deepcopy(JOB), "profile": source, "environment": {"modules": modules}}
    profile = load_profile(source)
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), profile, choose_target(profile, to, load_profile))


def modules_of(ported):
    return next((c.new for c in ported.changes if c.field == "environment.modules"), None)


def module_warnings(ported):
    return [w.message for w in ported.warnings if w.field == "environment.modules"]


CATALOGUE = ["StdEnv/2023", "cmake/3.27.7", "java"]
INSTALLED = {"cmake": ["3.18.4", "3.27.7", "3.31.0"], "java": ["1.8.0_192", "1.8.0_292", "11.0.22", "17.0.6"]}


@pytest.mark.parametrize("module, new, rule", [
    ("java/1.8.0_121", "java/1.8.0_292", "the newest build of the same series"),
    ("java/12.0.1", "java/17.0.6", "the oldest newer version installed"),
    ("java/26.1", "java/17.0.6", "the newest version installed"),
])
def test_a_version_not_installed_becomes_an_installed_one_with_a_to_do_to_try_it(module, new, rule):
    check = check_module(module, CATALOGUE, "fir", stdenv="StdEnv/2023", installed=INSTALLED)
    assert (check.new, check.absent) == (new, True)
    assert check.why.startswith(f"{module} is not installed on fir: fir's java versions (any StdEnv) are 1.8.0_192, ")
    assert check.why.endswith(f"{new} is the nearest ({rule})")
    assert check.warning.startswith(f"{new} is installed on fir, but no source says whether it loads under StdEnv/2023: "
                                    f"run 'module load StdEnv/2023 {new}' on a fir login node")


def test_a_version_not_installed_of_a_documented_family_becomes_the_documented_one_without_a_to_do():
    check = check_module("cmake/3.17.3", CATALOGUE, "fir", stdenv="StdEnv/2023", installed=INSTALLED)
    assert (check.new, check.warning, check.absent) == ("cmake/3.27.7", None, True)
    assert check.why == ("cmake/3.17.3 is not installed on fir: fir's cmake versions (any StdEnv) are 3.18.4, 3.27.7, 3.31.0; "
                         "cmake/3.27.7 is the nearest documented for StdEnv/2023")


@pytest.mark.parametrize("module, new, to_do", [
    ("cmake/3.27.7", "cmake/3.27.7", False),    # documented for StdEnv/2023: settled, kept
    ("cmake/3.27", "cmake/3.27", False),        # Lmod's prefix match
    ("cmake/3.18.4", "cmake/3.27.7", False),    # installed, older than the StdEnv/2023 build: rewritten to it
    ("cmake/3.31.0", "cmake/3.31.0", True),     # installed, newer than any documented: kept, to try
    ("java/17.0.6", "java/17.0.6", True),       # installed, no version documented: kept, to try
    ("java", "java", False),                    # no pin: the StdEnv's default
])
def test_an_installed_version_is_kept_or_moved_to_the_documented_one_per_source(module, new, to_do):
    check = check_module(module, CATALOGUE, "fir", stdenv="StdEnv/2023", installed=INSTALLED)
    assert (check.new, bool(check.warning), check.absent) == (new, to_do, False)
    if to_do:
        assert check.warning == (f"{module} is installed on fir, but no source says whether it loads under StdEnv/2023: run "
                                 f"'module load StdEnv/2023 {module}' on a fir login node; if Lmod refuses it, load one that "
                                 f"'module avail {module.split('/')[0]}' lists there")


def test_the_newest_build_of_a_series_is_chosen_over_the_nearest_newer():
    assert installed_replacement("1.8.0_121", ["1.8.0_192", "1.8.0_292", "11.0.22"]) == "1.8.0_292"
    assert installed_replacement("3.17.3", ["3.18.4", "3.20.1"]) == "3.18.4"
    assert installed_replacement("7", ["6.1", "8.2", "9"]) == "8.2"   # a one-part version has no series: the nearest newer


def test_the_reported_stdenv_2020_pins_are_settled_on_fir():
    """java/1.8.0_121 and cmake/3.17.3 are not installed on Fir; rdkit/2021.03.3, java/14.0.2 and
    nextflow/22.04.3 are, but not among the StdEnv/2023 builds (StdEnv-2023.modules): each moves
    to the nearest build, and metis/5.1.0, one of them, stays. Nothing is left to check by hand."""
    ported = port(["StdEnv/2020", "java/1.8.0_121", "cmake/3.17.3", "rdkit/2021.03.3", "java/14.0.2", "nextflow/22.04.3",
                   "metis/5.1.0"])
    assert modules_of(ported) == ["StdEnv/2023", "java/1.8.0_292", "cmake/3.27.7", "rdkit/2023.09.5", "java/17.0.6",
                                  "nextflow/23.10.0", "metis/5.1.0"]
    assert module_warnings(ported) == []


def test_narval_has_the_avx2_builds_so_a_fir_only_version_moves():
    """blast+/2.15.0 is built for the AVX512 stack only (Fir), and 2.14.0 for no StdEnv/2023
    stack: a job pinning StdEnv/2023 keeps its versions across clusters, except one that is not
    built for the target's stack."""
    to_narval = port(["StdEnv/2023", "blast+/2.15.0"], source="fir", to="narval")
    assert modules_of(to_narval) == ["StdEnv/2023", "blast+/2.17.0"]
    assert not modules_of(port(["StdEnv/2023", "blast+/2.14.1"], source="narval", to="narval"))
    assert not modules_of(port(["StdEnv/2023", "blast+/2.15.0"], source="fir", to="fir"))
    assert modules_of(port(["StdEnv/2023", "blast+/2.14.0"], source="narval", to="fir")) == ["StdEnv/2023", "blast+/2.14.1"]


def test_a_documented_version_the_cluster_has_not_installed_is_not_offered():
    """The BUSCO page loads blast+/2.15 under StdEnv/2023, an AVX512 build: on Narval (AVX2) the
    nearest installed version replaces a pin that is not there, never the missing 2.15.0."""
    check = check_module("blast+/2.16.0", ["blast+/2.15.0"], "narval", stdenv="StdEnv/2023",
                         installed={"blast+": ["2.14.1", "2.17.0"]})
    assert (check.new, check.absent) == ("blast+/2.17.0", True)
    assert check.warning.startswith("blast+/2.17.0 is installed on narval, but no source says")


def test_check_says_a_version_not_installed_is_to_be_replaced(tmp_path, monkeypatch):
    spec = {**JOB, "profile": "fir", "environment": {"modules": ["StdEnv/2023", "cmake/3.17.3"]}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(spec))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "job.yaml"])
    assert "cmake/3.17.3 is not installed on fir" in result.output and "cmake/3.27.7" in result.output, result.output


@pytest.mark.parametrize("name", ["fir", "narval", "nibi", "rorqual", "trillium"])
def test_every_installed_family_is_in_the_catalogue_and_holds_its_documented_versions(name):
    """The catalogue's versions are read off the AVX512 clusters' pages: each is installed there;
    Narval (AVX2) lacks only blast+/2.15.0, and Gaussian is installed on Fir and Nibi only."""
    profile = load_profile(name)
    table = families(profile.software.catalogue)
    for family, versions in profile.software.installed.items():
        assert family in table, (name, family)
        if family == "gaussian" and not versions:
            assert name in ("narval", "rorqual", "trillium"), name
            continue
        missing = set(table[family]) - set(versions)
        assert missing == ({"2.15.0"} if (name, family) == ("narval", "blast+") else set()), (name, family)
