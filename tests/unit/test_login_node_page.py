"""docs/login-node.md, the first page for a researcher on a login node: it installs from this
repository (never the PyPI name, which is another project's), and its first job in five
commands works as written (the first two here; submit, status and report on the cluster)."""

import re
import shlex
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main

REPO = Path(__file__).resolve().parents[2]
PAGE = (REPO / "docs" / "login-node.md").read_text()


def _blocks():
    return re.findall(r"```bash\n(.*?)```", PAGE, re.S)


def test_it_is_in_the_site_and_linked_from_the_first_page_and_the_readme():
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"]
    assert {"Start here (login node)": "login-node.md"} in nav[:2]
    assert "(login-node.md)" in (REPO / "docs" / "index.md").read_text()
    assert "(docs/login-node.md)" in (REPO / "README.md").read_text()


def test_it_never_installs_the_pypi_name_and_installs_into_home():
    commands = [line.split("#")[0].strip() for block in _blocks() for line in block.splitlines()]
    installs = [c for c in commands if " install " in f" {c} "]
    assert installs, "the page installs slurmkit"
    for command in installs:
        words = shlex.split(command)
        targets = [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
        assert targets and all("/" in t for t in targets), f"{command}: install a path (this repository), not a name"
    assert any("--user" in c for c in installs) and any("venv" in c for c in commands)
    assert not any(c.startswith(("sudo", "apt")) for c in commands)


def test_the_first_job_is_five_commands_and_the_first_two_work(tmp_path, monkeypatch):
    [first_job] = [b for b in _blocks() if "slurmkit new" in b]
    commands = [shlex.split(line.split("#")[0]) for line in first_job.strip().splitlines()]
    assert len(commands) == 5 and all(c[0] == "slurmkit" for c in commands)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("CC_CLUSTER", "nibi")          # as on a Nibi login node
    for name in ("SLURMKIT_PROFILE", "SLURM_CLUSTER_NAME", "SBATCH_ACCOUNT", "SLURM_ACCOUNT"):
        monkeypatch.delenv(name, raising=False)
    made = CliRunner().invoke(main, commands[0][1:])
    assert made.exit_code == 0, made.output
    checked = CliRunner().invoke(main, commands[1][1:])
    assert (checked.exit_code, checked.stdout) == (0, "myjob/job.yaml: no problems found\n")
    for argv in commands[2:]:   # the rest parse as the CLI has them (they need a cluster to run)
        command = main.get_command(None, argv[1])
        command.make_context(argv[1], argv[2:], resilient_parsing=False)


@pytest.mark.parametrize("page", ["job-spec.md", "cookbook.md", "moving.md", "python-api.md", "json.md", "troubleshooting.md"])
def test_where_to_go_next_links_pages_that_exist(page):
    assert f"({page})" in PAGE and (REPO / "docs" / page).is_file()
