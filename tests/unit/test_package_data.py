"""Every file of the package that is not Python is declared package data, so a wheel carries it.

A file the code reads at run time (port/trace.sh, the recording prelude of import's
verification) but the packaging does not name is present in a checkout and missing from every
install: import and port then said "not verified" on every script. This checks the class: each
non-Python file under slurmkit/, and each bundled folder's files, matches a declared pattern."""

import configparser
import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def declared() -> dict:
    """{package: [patterns]} from setup.cfg's [options.package_data], or pyproject.toml's
    [tool.setuptools.package-data] where the metadata lives there."""
    pyproject = ROOT / "pyproject.toml"
    if pyproject.exists():
        import tomllib

        table = tomllib.loads(pyproject.read_text()).get("tool", {}).get("setuptools", {}).get("package-data")
        if table:
            return {package: list(patterns) for package, patterns in table.items()}
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return {package: [p.strip() for p in value.replace("\n", ",").split(",") if p.strip()]
            for package, value in config["options.package_data"].items()}


def covered(package: str, relative: str, table: dict) -> bool:
    return any(fnmatch.fnmatch(relative, pattern) for pattern in table.get(package, []))


def test_every_non_python_file_of_the_package_is_package_data():
    table = declared()
    files = [p for p in (ROOT / "slurmkit").rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")
             and "__pycache__" not in p.parts and p.name != "summaries.py"]
    assert files, "no data files found: the test looks in the wrong place"
    missing = [str(p.relative_to(ROOT)) for p in files if not covered("slurmkit", str(p.relative_to(ROOT / "slurmkit")), table)]
    assert missing == []


def test_every_file_of_the_bundled_folders_is_package_data():
    table = declared()
    for folder, package in (("templates", "slurmkit.templates"), ("site_profiles", "slurmkit.site_profiles"), ("docs", "slurmkit.docs")):
        missing = [p.name for p in (ROOT / folder).iterdir() if p.is_file() and p.suffix != ".py" and not covered(package, p.name, table)]
        assert missing == [], folder


def test_the_runtime_library_job_scripts_source_is_package_data():
    """Every rendered script sources slurmkit/render/runtime.sh (by its versioned name): an install
    without it could write no runtime, and every job would stop at its check."""
    assert covered("slurmkit", "render/runtime.sh", declared())
    assert (ROOT / "slurmkit" / "render" / "runtime.sh").is_file()
