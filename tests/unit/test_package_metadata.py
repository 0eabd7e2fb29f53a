"""The package's metadata as pyproject.toml declares it, read statically (the packaging tier
builds the wheel): a distribution name of its own, the MIT licence it names as a file, one
version, dependency floors that hold, and the data files the wheel must carry."""

import subprocess
import sys
from pathlib import Path

import pytest

from slurmkit.core.version import __version__

tomllib = pytest.importorskip("tomllib")   # Python 3.11+; the CI's Python has it

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
sys.path.insert(0, str(ROOT / ".ci"))
from minimum_versions import floors  # noqa: E402


def _floor(name):
    (pin,) = [p for p in floors((ROOT / "pyproject.toml").read_text()) if p.split("==")[0].lower() == name]
    return tuple(int(part) for part in pin.split("==")[1].split("."))


def test_the_distribution_is_not_the_pypi_projects_slurmkit_but_imports_and_runs_as_slurmkit():
    project = PROJECT["project"]
    assert project["name"] == "slurmkit-alliance"
    assert project["scripts"] == {"slurmkit": "slurmkit.cli:run"}
    setup_cfg = (ROOT / "setup.cfg").read_text()   # tool settings only: one place for the metadata
    assert "[metadata]" not in setup_cfg and "[options" not in setup_cfg


def test_the_version_has_one_source():
    assert PROJECT["project"]["dynamic"] == ["version"] and "version" not in PROJECT["project"]
    assert PROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "slurmkit.core.version.__version__"}
    assert __version__


def test_the_mit_licence_the_metadata_names_is_a_file():
    assert PROJECT["project"]["license"] == "MIT" and PROJECT["project"]["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n") and "Copyright (c) 2026 the slurmkit authors" in text


def test_the_dependency_floors_are_ones_that_work():
    """Jinja 3.0.0 and 3.0.1 fail every render; submitit is used through private attributes, so
    it is capped at a minor release that was tested; every dependency has a floor CI installs."""
    assert _floor("jinja2") >= (3, 0, 2)
    (submitit,) = [d for d in PROJECT["project"]["dependencies"] if d.startswith("submitit")]
    assert ",<" in submitit
    assert len(floors((ROOT / "pyproject.toml").read_text())) == len(PROJECT["project"]["dependencies"])


def test_the_wheel_is_told_to_carry_templates_profiles_module_lists_and_py_typed():
    setuptools = PROJECT["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"slurmkit.templates": "templates", "slurmkit.site_profiles": "site_profiles",
                                         "slurmkit.docs": "docs"}
    data = setuptools["package-data"]
    assert "py.typed" in data["slurmkit"] and (ROOT / "slurmkit" / "py.typed").is_file()
    assert data["slurmkit.templates"] == ["*.j2"] and data["slurmkit.site_profiles"] == ["*.yaml", "*.modules"]
    assert list((ROOT / "site_profiles").glob("*.modules")), "no module list to ship"
    assert {"slurmkit.templates", "slurmkit.site_profiles", "slurmkit.docs"} <= set(setuptools["packages"])
    assert data["slurmkit.docs"] == ["*.md"] and "port/*.sh" in data["slurmkit"]


def test_python_dash_m_slurmkit_is_the_command():
    result = subprocess.run([sys.executable, "-m", "slurmkit", "--version"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"slurmkit, version {__version__}\n"


def test_ci_runs_the_floors_and_checks_the_built_metadata_before_the_suite():
    """CI's command runs .ci/minimum-versions (the unit tier on the floors, the wheel built and
    twine-checked) and then tests/run; a failure of the first fails CI (set -e, no `|| true`)."""
    steps = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert "set -euo pipefail" in steps
    assert steps.index('bash .ci/minimum-versions "${FLOOR_TESTS[@]}"') < steps.index("exec bash tests/run")
    assert 'listed=$("${PYTHON:-python3}" .ci/floor_tests.py)' in steps   # the rule's list, or CI stops (set -e)
    floors_step = (ROOT / ".ci" / "minimum-versions").read_text()
    assert "-m build" in floors_step and "twine check --strict" in floors_step


def test_the_floor_tests_run_every_module_that_imports_a_dependency():
    """.ci/floor_tests.py's list: existing files, and for each slurmkit module that imports
    jinja2, click, yaml, ruamel, tree-sitter, submitit or rich, a file that imports it."""
    import floor_tests

    listed = subprocess.run([sys.executable, str(ROOT / ".ci" / "floor_tests.py")], capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    chosen = [ROOT / line for line in listed.stdout.splitlines()]
    assert chosen and all(path.is_file() for path in chosen) and ROOT / "tests/unit/test_house.py" not in chosen
    commands = floor_tests.lazy_commands()
    reached = set().union(*(floor_tests.imported(path, commands) for path in chosen))
    touching = [floor_tests.module_name(path) for path in (ROOT / "slurmkit").rglob("*.py")
                if {name.split(".")[0] for name in floor_tests.imported(path, {})} & {"jinja2", "click", "yaml", "ruamel", "rich",
                                                                                     "submitit", "tree_sitter", "tree_sitter_bash"}]
    assert {"slurmkit.render.render", "slurmkit.cli.main", "slurmkit.api.functions", "slurmkit.port.bashtree"} <= set(touching)
    assert set(touching) <= reached


def test_the_floor_tests_fail_naming_a_module_that_imports_a_dependency_and_no_test_imports(tmp_path, monkeypatch, capsys):
    import floor_tests

    (tmp_path / "slurmkit" / "cli").mkdir(parents=True)
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = [\n    "rich>=12.0",\n]\n')
    (tmp_path / "slurmkit" / "cli" / "main.py").write_text('LAZY_COMMANDS = {"show": "slurmkit.cli.show:show"}\n')
    (tmp_path / "slurmkit" / "cli" / "show.py").write_text("def show():\n    import rich\n")
    (tmp_path / "tests" / "unit" / "test_other.py").write_text("from slurmkit.cli import main\n")
    monkeypatch.setattr(floor_tests, "ROOT", tmp_path)
    assert floor_tests.main() == 1
    assert capsys.readouterr().err == "floor-tests: no unit test imports slurmkit.cli.show (it imports rich): add one\n"
    (tmp_path / "tests" / "unit" / "test_cli.py").write_text('from slurmkit.cli.main import main\nARGS = ["show"]\n')
    assert floor_tests.main() == 0   # the CLI's test names the command: main loads its module on that name
    assert capsys.readouterr().out == "tests/unit/test_package_metadata.py\ntests/unit/test_cli.py\n"
