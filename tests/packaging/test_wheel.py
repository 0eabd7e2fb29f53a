"""The wheel carries the bundled templates and site profiles and works outside the checkout."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import slurmkit

REPO = Path(__file__).resolve().parents[2]


def _run(*args, cwd):
    # Without PYTHONPATH: a checkout on it (and the egg-info that building the wheel leaves there)
    # would pass for an installed slurmkit, and pip would install nothing into the fresh virtualenv.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, env=env)
    assert result.returncode == 0, f"{args} failed:\n{result.stderr}"
    return result.stdout


def test_wheel_installs_into_a_fresh_virtualenv_with_templates_and_profiles(tmp_path):
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist, REPO, cwd=tmp_path)
    (wheel,) = dist.glob("slurmkit_alliance-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "slurmkit/templates/base.sbatch.j2" in names
    assert "slurmkit/py.typed" in names and "slurmkit/port/trace.sh" in names
    assert {"slurmkit/schema/job.schema.json", "slurmkit/schema/site-profile.schema.json"} <= set(names)
    for repo_file in sorted((REPO / "site_profiles").glob("*.yaml")) + sorted((REPO / "site_profiles").glob("*.modules")):
        assert f"slurmkit/site_profiles/{repo_file.name}" in names
    for page in sorted((REPO / "docs").glob("*.md")):   # the pages help text names (`slurmkit docs NAME`)
        assert f"slurmkit/docs/{page.name}" in names
    assert "slurmkit/__main__.py" in names
    info = f"slurmkit_alliance-{slurmkit.__version__}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    assert {"Name: slurmkit-alliance", f"Version: {slurmkit.__version__}", "License-Expression: MIT"} <= set(metadata.splitlines())

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    _run(python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel, cwd=tmp_path)

    assert _run(venv / "bin" / "slurmkit", "--version", cwd=tmp_path).strip() == f"slurmkit, version {slurmkit.__version__}"
    where = _run(python, "-c", "from slurmkit.core.bundled import templates_dir, profiles_dir; "
                               "print(templates_dir()); print(profiles_dir())", cwd=tmp_path).split()
    for folder in where:
        assert folder.startswith(str(venv)), f"{folder} is not inside the fresh virtualenv"
    assert (Path(where[0]) / "base.sbatch.j2").is_file()
    shipped = _run(python, "-c", "from slurmkit.spec.schemas import job_schema_path; print(job_schema_path())", cwd=tmp_path).strip()
    assert shipped.startswith(str(venv)) and Path(shipped).is_file()
    page = _run(venv / "bin" / "slurmkit", "docs", "json", "--path", cwd=tmp_path).strip()
    assert page.startswith(str(venv)) and Path(page).is_file()
    assert sorted(p.name for p in Path(where[1]).glob("*.yaml")) == sorted(p.name for p in (REPO / "site_profiles").glob("*.yaml"))
