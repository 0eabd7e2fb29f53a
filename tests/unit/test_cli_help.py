"""Help that is true: the top-level listing is each command's own words, -v and -q work before
or after the command, and every documentation page help text names comes with slurmkit."""

import re
import textwrap

import click
import pytest
from click.testing import CliRunner

from slurmkit.cli.main import LAZY_COMMANDS, main, summary
from slurmkit.cli.summaries import SUMMARIES
from slurmkit.core.bundled import doc_page

SPEC = """
    name: train
    profile: nibi
    account: def-someprof
    kind: gpu
    resources: {time: 3h, gpus: h100:1, cpus_per_task: 8, mem: 32G}
    launch: python train.py
"""


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME", "SLURMKIT_VERBOSITY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "job.yaml").write_text(textwrap.dedent(SPEC).lstrip("\n"))


def every_command():
    """(path, command) of every command under ``slurmkit``, groups' subcommands included."""
    root = click.Context(main, info_name="slurmkit")
    found = []

    def walk(ctx):
        found.append((ctx.command_path, ctx.command))
        if isinstance(ctx.command, click.Group):
            for name in ctx.command.list_commands(ctx):
                walk(click.Context(ctx.command.get_command(ctx, name), info_name=name, parent=ctx))
    walk(root)
    return found


def test_the_listing_of_slurmkit_help_is_each_commands_own_first_sentence():
    root = click.Context(main)
    stale = {name: (SUMMARIES.get(name), summary(main.get_command(root, name))) for name in LAZY_COMMANDS
             if SUMMARIES.get(name) != summary(main.get_command(root, name))}
    assert not stale, f"slurmkit/cli/summaries.py is stale: run `python docs/gen.py` ({stale})"
    listing = " ".join(CliRunner().invoke(main, ["--help"]).stdout.split())
    for name in LAZY_COMMANDS:
        assert f"{name} {SUMMARIES[name][:30]}" in listing


@pytest.mark.parametrize("args", [["-v", "check", "job.yaml"], ["check", "job.yaml", "-v"], ["check", "-v", "job.yaml"]])
def test_verbose_works_before_and_after_the_command(args):
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 2), result.output
    assert "slurmkit: profile nibi (named in job.yaml)" in result.stderr


def test_quiet_after_the_command_drops_the_wrote_lines():
    result = CliRunner().invoke(main, ["new", "demo", "--profile", "nibi", "--yes", "--account", "def-x", "-q"])
    assert result.exit_code == 0, result.output
    assert "wrote" not in result.output


@pytest.mark.parametrize("args", [["-q", "check", "job.yaml", "-v"], ["check", "job.yaml", "-v", "-q"]])
def test_verbose_and_quiet_together_are_refused_wherever_given(args):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "give -v (more) or -q (less), not both" in result.output


def test_every_command_and_subcommand_takes_verbose_and_quiet():
    for path, command in every_command():
        names = {opt for param in command.params for opt in getattr(param, "opts", ())}
        assert {"-v", "-q"} <= names, path


def _help_texts():
    for path, command in every_command():
        texts = [command.help or "", command.short_help or ""]
        texts += [getattr(param, "help", None) or "" for param in command.params]
        yield path, " ".join(" ".join(texts).split())


def test_help_names_documentation_pages_that_are_installed_with_slurmkit():
    named = []
    for path, text in _help_texts():
        assert not re.search(r"docs/[\w.-]+\.md", text), f"{path}: a docs/*.md path is not there once installed: {text}"
        named += [(path, page) for page in re.findall(r"slurmkit docs ([\w-]+)", text)]
    assert named, "no help text names a page: the test looks for the wrong form"
    for path, page in named:
        assert doc_page(page).is_file(), f"{path}: `slurmkit docs {page}` names no page"


def test_docs_prints_a_page_lists_them_and_refuses_an_unknown_one_with_a_did_you_mean():
    runner = CliRunner()
    page = runner.invoke(main, ["docs", "json"])
    assert page.exit_code == 0 and page.stdout.startswith("# Scripts: JSON output")
    assert runner.invoke(main, ["docs", "docs/json.md", "--path"]).stdout.strip() == str(doc_page("json"))
    assert "  troubleshooting" in runner.invoke(main, ["docs"]).stdout.splitlines()
    wrong = runner.invoke(main, ["docs", "jsn"])
    assert wrong.exit_code == 2 and "did you mean 'json'?" in wrong.stderr
