"""The corpus: scripts of the retired clusters as people wrote them (tests/corpus/*.sh), each
with the spec import makes of it (<name>.expected.yaml, notes included, reviewed by hand once)
and what `slurmkit check` says about that spec (<name>.check.txt). Regenerate after an intended
change with SLURMKIT_UPDATE_GOLDEN=1 and review the diff like code."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.core.todos import pending_import_notes
from slurmkit.port.porting import import_script, imported_text

CORPUS = Path(__file__).parent.parent / "corpus"
SCRIPTS = sorted(CORPUS.glob("*.sh"))
UPDATE = os.environ.get("SLURMKIT_UPDATE_GOLDEN") == "1"


def cluster_of(script: Path) -> str:
    """Each corpus script names the cluster it was written for in a ``# cluster: NAME`` line."""
    return re.search(r"^# cluster: (\S+)$", script.read_text(), re.M).group(1)


def imported_of(script: Path):
    return import_script(script.read_text(), name=script.stem.replace("_", "-"), profile=cluster_of(script))


def _golden(path: Path, text: str) -> None:
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; run with SLURMKIT_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text()


def test_the_corpus_covers_the_reported_patterns():
    assert len(SCRIPTS) >= 20


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_import_makes_the_reviewed_spec_and_notes(script):
    _golden(script.with_suffix(".expected.yaml"), imported_text(imported_of(script), script.name))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_check_on_the_imported_spec_says_what_is_left_to_do(script, tmp_path, monkeypatch):
    imported = imported_of(script)
    spec = tmp_path / f"{script.stem}.yaml"
    spec.write_text(imported_text(imported, script.name))
    for name, body in imported.files:   # a task file, which `slurmkit import` writes beside the spec
        (tmp_path / name).write_text(body)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", spec.name])
    assert result.exit_code in (0, 2) and result.exception is None or isinstance(result.exception, SystemExit), result.output
    # Where the spec and the home folder are differs from run to run and host to host.
    _golden(script.with_suffix(".check.txt"),
            result.output.replace(str(tmp_path), "<spec folder>").replace(os.path.expanduser("~") + "/", "<home>/"))
    # A note the user must act on is never answered with "no problems".
    if imported.unmapped:
        assert "no problems found" not in result.output
        assert len(pending_import_notes(spec.read_text())) == len(imported.unmapped)
        assert result.output.count("import: to do:") == len(imported.unmapped)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_every_line_of_the_script_has_a_note_or_a_field(script):
    """Nothing silently lost: each command line of the script is named by a note, unless it is a
    plain mapping (an #SBATCH option, a module or a literal variable)."""
    imported = imported_of(script)
    noted = {line for n in imported.notes for line in range(n.line, n.line + n.text.count("\n") + 1)}
    lines = script.read_text().splitlines()
    for number, line in enumerate(lines, 1):
        if number > 1 and lines[number - 2].endswith("\\") and number - 1 in noted:
            noted.add(number)   # a continued line: one command with the line before, and its notes
        if line.strip() and not line.startswith("#"):
            assert number in noted, f"{script.name}:{number}: {line!r} has no note"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_the_imported_spec_renders_a_script_that_passes_bash_n_and_shellcheck(script, tmp_path):
    from slurmkit import Job

    spec = dict(imported_of(script).spec, account="def-prof")
    resolution = Job(**spec).resolve()
    if resolution.plan is None:   # the old cluster cannot run it (the check golden says why); port moves it
        assert resolution.errors
        return
    from slurmkit.render.render import render

    text = render(resolution.plan)
    (tmp_path / "job.sh").write_text(text)
    assert subprocess.run(["bash", "-n", str(tmp_path / "job.sh")]).returncode == 0
    if shutil.which("shellcheck"):
        result = subprocess.run(["shellcheck", "--shell=bash", str(tmp_path / "job.sh")], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("script", [s for s in SCRIPTS if cluster_of(s) != "local"], ids=lambda p: p.stem)
def test_the_imported_spec_ports_to_the_successor_as_reviewed(script, tmp_path, monkeypatch):
    """`slurmkit port` of the imported spec (what it changed and warned, and the spec, or why it
    refused): the to-do notes of import travel with it."""
    imported = imported_of(script)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.yaml").write_text(imported_text(imported, script.name))
    for name, body in imported.files:
        (tmp_path / name).write_text(body)
    result = CliRunner().invoke(main, ["port", "job.yaml"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    _golden(script.with_suffix(".port.txt"), result.output)
    if result.exit_code == 0:
        port_todos = [line for line in result.stderr.splitlines() if line.startswith("to do: ")]   # a virtualenv to rebuild
        assert len(pending_import_notes(result.stdout)) == len(imported.unmapped) + len(port_todos)


# -------------------------------------------------------------- never a traceback, always a spec

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FRAGMENTS = [line for script in SCRIPTS for line in script.read_text().splitlines()] + [
    "if [ -f x ]; then", "fi", "done", "}", "f() {", "EOF", "cat <<EOF", "'", '"', "\\", "srun", "mpirun -np",
    "#SBATCH --array=", "#SBATCH --gres=gpu:", "#SBATCH -n", "export =", "trap", "source", "tar -C", "cp", "$(", "`",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=20)), max_size=12))
def test_any_script_imports_into_a_spec_that_reads_or_a_clear_error(lines):
    from slurmkit.core.errors import SlurmkitError
    from slurmkit.spec.spec import spec_from_mapping

    try:
        imported = import_script("#!/bin/bash\n" + "\n".join(lines) + "\n", name="fuzz")
    except SlurmkitError:
        return
    spec_from_mapping(imported.spec)


@pytest.mark.parametrize("golden", sorted((Path(__file__).parent.parent / "golden").glob("*/*.sbatch"))[::7],
                         ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_a_script_slurmkit_rendered_imports_too(golden):
    from slurmkit.spec.spec import spec_from_mapping

    spec_from_mapping(import_script(golden.read_text(), name="again").spec)
