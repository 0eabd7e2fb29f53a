"""Everything port learns goes into the spec: its warnings become ``# to do:`` lines that
``check`` reports, ``check`` compares module versions with the catalogue port uses, module lines
in kept blocks and in sourced files are checked by both, and a stack change asks for old
environments and binaries to be rebuilt."""

import copy
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.port.porting import pending_import_notes
from slurmkit.port.retarget import choose_target, port_spec, ported_text
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

JOB = {"name": "t", "account": "def-x", "resources": {"time": "1h"}, "launch": {"command": ["./app"]}}


def port(data, to=None, folder=None):
    source = load_profile(data["profile"])
    target = choose_target(source, to, load_profile)
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source=str(Path(folder or ".") / "job.yaml")), source, target)


def check(tmp_path, data, monkeypatch, name="job.yaml", text=None):
    (tmp_path / name).write_text(text if text is not None else yaml.safe_dump(data))
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(main, ["check", name])


# ------------------------------------------------------------------- port warnings are to-dos


def test_a_port_warning_is_a_to_do_of_the_ported_spec_that_check_reports(tmp_path, monkeypatch):
    data = {**JOB, "profile": "graham", "account": "rrg-x", "environment": {"modules": ["StdEnv/2020", "gnu-parallel"]}}
    ported = port(data)
    text = ported_text(ported)
    todos = pending_import_notes(text)
    assert any("'gnu-parallel' is not in nibi's module catalogue" in t for t in todos)
    assert any(t.startswith("account: 'rrg-x' is a RAC allocation") for t in todos)
    result = check(tmp_path, None, monkeypatch, text=text)
    assert "no problems found" not in result.output
    assert "gnu-parallel" in result.output and "RAC allocation" in result.output


def test_port_tells_a_warning_once_as_a_to_do(tmp_path, monkeypatch):
    (tmp_path / "job.yaml").write_text(yaml.safe_dump({**JOB, "profile": "graham", "account": "rrg-x"}))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["port", "job.yaml", "--no-verify", "-o", "new.yaml"])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("RAC allocation") == 1
    assert "to do: account: 'rrg-x' is a RAC allocation" in result.stderr


# ------------------------------------------------ the shared 2023 stack is in the catalogue


@pytest.mark.parametrize("module", ["r/4.4.0", "r", "mrtrix/3.0.4", "ants/2.5.0", "fsl/6.0.7.7", "afni/24.1.03", "gromacs/2024.4",
                                    "namd-multicore/3.0.2", "julia/1.11.3", "cmake", "matlab/2024b.1", "java/17.0.6", "apptainer"])
def test_a_module_of_the_shared_2023_stack_is_not_warned_as_missing(module):
    data = {**JOB, "profile": "graham", "environment": {"modules": ["StdEnv/2020", module]}}
    ported = port(data)
    assert not [w for w in ported.warnings if w.field == "environment.modules"]
    assert not [t for t in ported.todos if module in t]


def test_an_old_version_of_a_catalogued_science_code_moves_to_the_nearest_2023_one():
    ported = port({**JOB, "profile": "graham", "environment": {"modules": ["StdEnv/2020", "r/4.0.2", "gromacs/2020.4"]}})
    assert {c.field: c.new for c in ported.changes}["environment.modules"] == ["StdEnv/2023", "r/4.4.0", "gromacs/2023.3"]


# ------------------------------------------------------- check uses port's module catalogue


def test_check_reports_a_module_version_the_clusters_stack_lacks_with_the_nearest(tmp_path, monkeypatch):
    data = {**JOB, "profile": "narval", "environment": {"modules": ["StdEnv/2023", "gcc/9.3.0"]}}
    result = check(tmp_path, data, monkeypatch)
    assert "gcc/9.3.0 is not in narval's stack, which has gcc 12.3, 13.3; gcc/12.3 is the nearest" in result.output
    assert "no problems found" not in result.output


def test_check_and_port_flag_the_same_modules(tmp_path, monkeypatch):
    """One function decides for both: what port rewrites, check reports, and nothing else."""
    modules = ["StdEnv/2023", "gcc/9.3.0", "python/3.11", "cuda/11.4", "r/4.4.0"]
    ported = port({**JOB, "profile": "graham", "environment": {"modules": modules}}, to="narval")
    result = check(tmp_path, {**JOB, "profile": "narval", "environment": {"modules": modules}}, monkeypatch)
    flagged = sorted(m for m in modules if f"{m} is not in narval's stack" in result.output)
    changes = {c.field: c for c in ported.changes}
    assert flagged == ["cuda/11.4", "gcc/9.3.0"]
    assert changes["environment.modules"].new == ["StdEnv/2023", "gcc/12.3", "python/3.11", "cuda/12.2", "r/4.4.0"]


def test_check_does_not_judge_a_retired_clusters_modules_by_todays_stack(tmp_path, monkeypatch):
    data = {**JOB, "profile": "graham", "environment": {"modules": ["StdEnv/2020", "gcc/9.3.0"]}}
    assert "is not in graham's stack" not in check(tmp_path, data, monkeypatch).output
