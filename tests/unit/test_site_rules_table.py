"""The site-rules table (docs/site-rules.md, ``slurmkit check --site-rules``): every rule line of
every bundled profile, with its id, clusters, error or warning, and source, from the one place
that ``profiles show`` prints too (siterules.rule_lines). docs/site-rules.md being stale is
tests/unit/test_docs.py's test_generated_pages_match_the_cli_and_the_bundled_profiles."""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.resolve import siterules
from slurmkit.resolve.siterules import SEVERITIES, RuleLine, rule_lines, rule_table, rule_table_markdown
from slurmkit.sites.profiles import ProfileCatalog

REPO = Path(__file__).resolve().parents[2]


def bundled():
    profiles, errors = ProfileCatalog([REPO / "site_profiles"]).all()
    assert not errors
    return profiles


@pytest.fixture
def run(tmp_path, monkeypatch):
    """``slurmkit check ARGS`` with only the bundled profiles on the search path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for variable in ("SLURMKIT_PROFILE", "CC_CLUSTER", "SLURM_CLUSTER_NAME"):
        monkeypatch.delenv(variable, raising=False)
    return lambda *args: CliRunner().invoke(main, ["check", *args])


def test_every_rule_line_of_every_bundled_profile_names_its_rule_id_and_severity():
    for profile in bundled():
        for line in rule_lines(profile):
            assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", line.rule), (profile.name, line)
            assert line.severity in SEVERITIES, (profile.name, line)
            assert line.text and line.source, (profile.name, line)


def test_each_rule_line_is_a_row_of_the_table_with_its_cluster_and_source():
    profiles = bundled()
    rows = rule_table(profiles)
    for profile in profiles:
        for line in rule_lines(profile):
            row = next(r for r in rows if (r.rule, r.severity, r.text) == (line.rule, line.severity, line.text))
            assert profile.name in row.clusters and line.source in row.sources
    # one row per rule text: a rule the clusters state alike is one row naming them all
    assert len({(r.rule, r.text) for r in rows}) == len(rows)
    oldest = [r for r in rows if r.rule == "oldest-python"]
    assert len(oldest) == 1 and {"fir", "narval", "nibi", "rorqual", "trillium"} <= set(oldest[0].clusters)


def test_a_new_rule_line_reaches_the_table_with_nothing_else_to_add(monkeypatch):
    """What a new rule provides: its RuleLine in rule_lines (id, severity, text, source)."""
    real = siterules.rule_lines

    def with_new_rule(profile):
        extra = [RuleLine("no-internet", "warning", "compute nodes reach no internet", "https://example.org/p")]
        return real(profile) + (extra if profile.name == "narval" else [])

    monkeypatch.setattr(siterules, "rule_lines", with_new_rule)
    lines = rule_table_markdown(rule_table(bundled()))
    assert "| `no-internet` | narval | warning | compute nodes reach no internet | <https://example.org/p> |" in lines


@pytest.mark.parametrize("line", [RuleLine("", "error", "t", "s"), RuleLine("x-rule", "advice", "t", "s")])
def test_a_rule_line_without_an_id_or_a_known_severity_is_refused(monkeypatch, line):
    monkeypatch.setattr(siterules, "rule_lines", lambda profile: [line])
    with pytest.raises(ValueError, match="names no rule id or severity"):
        rule_table(bundled())


def test_check_site_rules_prints_the_docs_table(run):
    result = run("--site-rules")
    assert result.exit_code == 0, result.output
    page = (REPO / "docs" / "site-rules.md").read_text(encoding="utf-8")
    table = [line for line in page.splitlines() if line.startswith("|")]
    assert result.output.splitlines() == table


def test_check_site_rules_of_one_cluster_lists_its_rules_only(run):
    trillium = run("--site-rules", "trillium")
    assert trillium.exit_code == 0
    assert "| `multi-node-gpus` | trillium | error |" in trillium.output
    assert "| `partition-not-named` | trillium | warning |" in trillium.output
    fir = run("--site-rules", "--profile", "fir")
    assert fir.exit_code == 0
    assert "multi-node-gpus" not in fir.output and "| `name-no-partition` | fir | warning |" in fir.output


def test_check_site_rules_json_gives_rule_clusters_level_and_sources(run):
    result = run("--site-rules", "nibi", "--json")
    assert result.exit_code == 0
    rows = json.loads(result.output)["rules"]
    amd = next(r for r in rows if r["rule"] == "amd-gpus")
    assert amd["clusters"] == ["nibi"] and amd["level"] == "error" and amd["sources"][0].startswith("https://")


def test_check_site_rules_of_an_unknown_cluster_is_one_line_and_exit_2(run):
    result = run("--site-rules", "nosuch")
    assert result.exit_code == 2
    assert "no site profile named 'nosuch'" in result.output and "Traceback" not in result.output


def test_check_without_a_spec_or_site_rules_is_a_usage_error(run):
    result = run()
    assert result.exit_code == 2 and "Missing argument 'SPEC'" in result.output
