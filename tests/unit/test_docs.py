"""The documentation site: the generated pages match the code, and MkDocs builds it strictly."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GENERATED = ("cli.md", "profiles.md", "site-rules.md", "why-the-script.md")


def test_generated_pages_match_the_cli_and_the_bundled_profiles(tmp_path):
    out = tmp_path / "generated"
    result = subprocess.run([sys.executable, str(REPO / "docs" / "gen.py"), "--out", str(out)],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, f"docs/gen.py failed:\n{result.stderr}"
    for name in GENERATED:
        committed = (REPO / "docs" / name).read_text(encoding="utf-8")
        assert (out / name).read_text(encoding="utf-8") == committed, (
            f"docs/{name} is stale: run `python docs/gen.py` and commit the result")


def test_generator_is_deterministic(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        subprocess.run([sys.executable, str(REPO / "docs" / "gen.py"), "--out", str(out)], cwd=tmp_path,
                       capture_output=True, text=True, check=True)
    assert sorted(p.name for p in first.iterdir()) == sorted(GENERATED)
    for name in GENERATED:
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_mkdocs_builds_the_site_in_strict_mode(tmp_path):
    site = tmp_path / "site"
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(REPO / "mkdocs.yml"),
                             "--site-dir", str(site)], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}{result.stderr}"
    assert (site / "index.html").is_file()
    for page in ("cli", "profiles", "job-spec", "troubleshooting"):
        assert (site / page / "index.html").is_file(), f"{page}.md is missing from the site"


def test_every_test_the_fault_table_names_exists():
    """docs/faults.md promises behaviour under each fault and names the test that holds it: a
    renamed or deleted test must not leave a promise that nothing checks."""
    import re

    text = (REPO / "docs" / "faults.md").read_text(encoding="utf-8")
    named = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`", text)
    assert len(named) >= 20
    for path, test in named:
        source = (REPO / path).read_text(encoding="utf-8") if (REPO / path).is_file() else None
        assert source is not None, f"docs/faults.md names {path}, which does not exist"
        if test:
            assert re.search(rf"^def {test}\(", source, re.M), f"docs/faults.md names {path}::{test}, which does not exist"


def test_why_the_script_explains_every_line_of_the_ddp_golden_script():
    """docs/why-the-script.md walks through a rendered DDP job line by line: its bash blocks,
    joined, must be that golden script exactly, so the page cannot fall behind the renderer."""
    import re
    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "why-the-script.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", page, re.S)
    assert "".join(blocks) == (root / "tests" / "golden" / "fir" / "ddp.sbatch").read_text()


def test_the_spec_on_why_the_script_renders_that_script(tmp_path):
    import re

    from slurmkit.api.job import Job
    root = Path(__file__).resolve().parents[2]
    spec = re.search(r"```yaml\n(.*?)```", (root / "docs" / "why-the-script.md").read_text(), re.S).group(1)
    (tmp_path / "job.yaml").write_text(spec)
    script = Job.from_yaml(tmp_path / "job.yaml").render(profile="fir")
    assert script == (root / "tests" / "golden" / "fir" / "ddp.sbatch").read_text()


def test_why_the_script_follows_a_golden_that_keeps_its_line_count_and_stops_at_one_that_does_not():
    import importlib.util

    import pytest
    spec = importlib.util.spec_from_file_location("docs_gen", REPO / "docs" / "gen.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    why_the_script_page = gen.why_the_script_page
    page = "intro\n```bash\na\nb\n```\nprose\n```bash\nc\n```\nend\n"
    assert why_the_script_page(page, "A\nB\nC\n") == "intro\n```bash\nA\nB\n```\nprose\n```bash\nC\n```\nend\n"
    with pytest.raises(SystemExit, match="shows 3 lines .* which now has 4"):
        why_the_script_page(page, "A\nB\nC\nD\n")
