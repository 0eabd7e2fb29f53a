"""What the documentation says the code does, checked against the code: the cookbook's counts and
what `slurmkit port` does to each example, the README's count of examples, and the account rule
of docs/troubleshooting.md. A change to either side that makes them disagree fails here."""

import copy
import re
from pathlib import Path

import pytest

from slurmkit.api.job import Job
from slurmkit.core.yamlfile import read_yaml_file
from slurmkit.port.retarget import choose_target, port_spec
from slurmkit.resolve import accounts
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (REPO / "examples").iterdir() if p.is_dir())
NUMBERS = {word: n for n, word in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                            "fourteen fifteen sixteen".split())}
COOKBOOK = (REPO / "docs" / "cookbook.md").read_text(encoding="utf-8")


def test_the_cookbook_counts_and_lists_every_example():
    count = re.match(r"# Cookbook\n\n(\w+) complete jobs", COOKBOOK).group(1).lower()
    assert NUMBERS[count] == len(EXAMPLES)
    assert sorted(re.findall(r"^\| \[`([\w-]+)`\]", COOKBOOK, re.M)) == EXAMPLES


def test_the_readme_counts_the_examples():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    count = re.search(r"`examples/` \| the cookbook: (\w+) jobs", readme).group(1).lower()
    assert NUMBERS[count] == len(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_cookbook_table_gives_each_examples_kind_and_profile(name):
    kind, profile = re.search(rf"^\| \[`{name}`\]\(#{name}\) \| `([\w-]+)` \| `(\w+)` \|", COOKBOOK, re.M).groups()
    spec = Job.from_yaml(REPO / "examples" / name / "job.yaml").spec
    assert (spec.kind, spec.profile) == (kind, profile)


def _ported(name):
    path = REPO / "examples" / name / "job.yaml"
    _, (data, lines, _) = read_yaml_file(path)
    spec = spec_from_mapping(data, str(path), lines)
    source = load_profile(spec.profile)
    return port_spec(copy.deepcopy(data), spec, source, choose_target(source, None, load_profile))


def _shown(value) -> str:
    return "" if value is None else str(value)


@pytest.mark.parametrize("name", EXAMPLES)
def test_what_the_cookbook_says_port_does_to_each_example_is_what_it_does(name):
    """``**Port target:** `X`. `slurmkit port job.yaml`: CLAIMS``: the target, "only the profile
    changes", each "`A` becomes `B`" (a value, or a key then its value), and "gets N cores"."""
    section = COOKBOOK.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
    target, claims = re.search(r"\*\*Port target:\*\* `(\w+)`\. `slurmkit port job.yaml`: (.*)", section).groups()
    ported = _ported(name)
    assert ported.target == target
    changed = [change for change in ported.changes if change.field != "profile"]
    if "only the profile changes" in claims:
        assert changed == [], [str(c) for c in changed]
    for before, after in re.findall(r"`([\w:.]+)`(?: [\w:.]+)? becomes `?([\w:.]+)`?", claims):
        assert any(before in (_shown(c.old), c.field.rsplit(".", 1)[-1]) and _shown(c.new) == after for c in changed), (
            before, after, [str(c) for c in changed])
    cores = re.search(r"gets (\d+) cores", claims)
    if cores:
        directives = Job(spec_from_mapping(ported.spec, "ported.yaml")).resolve(target).plan.directives
        assert ("--cpus-per-task", cores.group(1)) in directives


def _troubleshooting_row(field: str, starts: str) -> str:
    page = (REPO / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    return next(line for line in page.splitlines() if line.startswith(f"| `{field}` | `{starts}"))


def test_the_troubleshooting_account_rule_is_the_resolvers():
    """The row of the missing-account error names the variables that stand in for the spec's
    account (and when the error is given): both as the resolver has them."""
    row = _troubleshooting_row("account", "<profile> needs an account")
    assert tuple(re.findall(r"\$(S\w+_ACCOUNT)", row.split("|")[3])) == accounts.ACCOUNT_VARIABLES
    base = {"name": "x", "profile": "local", "resources": {"time": "1h"}, "launch": "true"}
    assert load_profile("local").accounts.required == "always"
    from slurmkit.resolve.localfacts import LocalFacts
    from slurmkit.resolve.resolve import resolve

    bare = resolve(spec_from_mapping(base, "j.yaml"), load_profile("local"), LocalFacts())
    message = next(f.message for f in bare.errors if f.field == "account")
    assert message == row.split("|")[2].strip().strip("`").replace("<profile>", "local")
    for variable in accounts.ACCOUNT_VARIABLES:
        given = resolve(spec_from_mapping(base, "j.yaml"), load_profile("local"), LocalFacts(environment=((variable, "def-me"),)))
        assert not [f for f in given.errors if f.field == "account"] and ("--account", "def-me") in given.plan.directives
