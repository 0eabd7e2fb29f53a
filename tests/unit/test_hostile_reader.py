"""Hostile input the YAML and spec readers must refuse in one line: numbers Python cannot read,
aliases of long text, YAML 1.1's number forms, merge keys, NUL characters, values beyond any
cluster, long extends chains.

Bounds are measured as in test_hostile_input.py: a child process reports its CPU time and
peak memory.
"""

import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slurmkit.api.job import Job
from slurmkit.core.errors import SpecError
from slurmkit.core.yamlfile import MAX_CHARS, MAX_DIGITS, parse_yaml

from .test_hostile_input import SPEC_ENTRY_POINTS, cli, folders, measured, refused  # noqa: F401 (folders: a fixture)

BASE = """\
name: myjob
profile: local
account: def-someprof
kind: serial
resources: {cpus_per_task: 1, mem: 4G, time: 1h}
launch: python run.py
"""


def spec_error(**fields) -> str:
    with pytest.raises(SpecError) as caught:
        Job(**fields)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def yaml_spec_error(tmp_path: Path, text: str) -> str:
    (tmp_path / "job.yaml").write_text(text)
    with pytest.raises(SpecError) as caught:
        Job.from_yaml(tmp_path / "job.yaml")
    assert "\n" not in str(caught.value)
    return str(caught.value)


# ------------------------------------------------------------- 2: numbers Python cannot read

HUGE_NUMBERS = {
    "4,401 decimal digits": ("1" + "0" * 4400, 4401),
    "0x and 4,000 hex digits": ("0x" + "f" * 4000, 4000),
    "digits between underscores": ("1" + "_0" * 4400, 4401),
}


@pytest.mark.parametrize("entry", sorted(SPEC_ENTRY_POINTS))
@pytest.mark.parametrize("number", sorted(HUGE_NUMBERS))
def test_a_number_longer_than_python_reads_is_one_line_on_every_entry_point(folders, entry, number):
    work, home = folders
    written, digits = HUGE_NUMBERS[number]
    (work / "job.yaml").write_text(BASE + f"note: {written}\n")
    refused(work, home, SPEC_ENTRY_POINTS[entry],
            f"job.yaml:7: note: a whole number of {digits:,} digits, longer than any count, size or time "
            f"(slurmkit reads at most {MAX_DIGITS}); quote it if it is text")


def test_a_profile_with_a_huge_number_is_skipped_by_profiles_list_and_the_rest_are_listed(folders):
    work, home = folders
    (work / "site_profiles").mkdir()
    (work / "site_profiles" / "evil.yaml").write_text("name: evil\nextends: local\nnote: " + "9" * 4400 + "\n")
    outcome = refused(work, home, cli("profiles", "list"),
                      f"{work}/site_profiles/evil.yaml:3: note: a whole number of 4,400 digits, longer than any count, "
                      f"size or time (slurmkit reads at most {MAX_DIGITS}); quote it if it is text "
                      f"(skipped; the other profiles are listed)")
    names = [line.split()[0] for line in outcome.stdout.splitlines()[1:]]
    assert "local" in names and "nibi" in names and "evil" not in names


def test_a_quoted_long_number_is_text_and_an_ordinary_one_is_a_number():
    assert parse_yaml(f"a: '{'1' * 5000}'\nb: 12345678901234567890\n", "x.yaml")[0] == {"a": "1" * 5000, "b": 12345678901234567890}


# --------------------------------------------------------------- 3: aliases of long text

LONG = "x" * (MAX_CHARS // 2 + 1)


@pytest.mark.parametrize("where, entry", [
    ("environment:\n  variables:\n    V0: &a '{long}'\n    V1: *a\n", "check"),
    ("environment:\n  variables:\n    V0: &a '{long}'\n    V1: *a\n", "render"),
    ("environment:\n  setup:\n    - &a 'echo {long}'\n    - *a\n", "check"),
    ("environment:\n  venv:\n    packages:\n      - &a 'p{long}'\n      - *a\n", "render"),
])
def test_aliases_that_repeat_long_text_past_the_character_cap_are_one_line(folders, where, entry):
    work, home = folders
    text = BASE + where.format(long=LONG)
    (work / "job.yaml").write_text(text)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "*a" in row)
    refused(work, home, SPEC_ENTRY_POINTS[entry],
            f"job.yaml:{line}: more than {MAX_CHARS:,} characters of text once aliases are expanded, slurmkit's limit "
            f"for one file (as much as the largest file holds); write the values out or shorten them")


def test_a_thousand_aliases_of_a_long_value_stop_at_the_cap_not_at_the_alias_limit():
    text = "a: &a '" + "x" * 2000 + "'\nb: [" + ", ".join(["*a"] * 999) + "]\n"
    with pytest.raises(SpecError, match="characters of text once aliases are expanded"):
        parse_yaml(text, "job.yaml", SpecError)
    parse_yaml("a: &a '" + "x" * 1000 + "'\nb: [" + ", ".join(["*a"] * 999) + "]\n", "job.yaml", SpecError)


# ------------------------------------------------------------------------ 14: merge keys

def test_an_explicit_key_overrides_a_merged_one_as_yaml_says(tmp_path):
    text = BASE.replace("resources: {cpus_per_task: 1, mem: 4G, time: 1h}\n",
                        "resources: {<<: &r {cpus_per_task: 1, mem: 4G, time: 1h}, mem: 8G}\n")
    (tmp_path / "job.yaml").write_text(text)
    job = Job.from_yaml(tmp_path / "job.yaml")
    assert (job.spec.resources.mem_mb, job.spec.resources.cpus_per_task, job.spec.resources.time_s) == (8192, 1, 3600)
    data, lines, _ = parse_yaml("r: &r {cpus_per_task: 1, mem: 4G, time: 1h}\nresources: {<<: *r, mem: 8G}\n", "job.yaml")
    assert data["resources"] == {"cpus_per_task": 1, "mem": "8G", "time": "1h"}
    assert lines[("resources", "mem")] == 2


def test_earlier_merged_mappings_win_over_later_ones_and_an_alias_can_name_a_merged_mapping_again():
    data = parse_yaml("a: &a {x: 1}\nb: &b {x: 2, y: 3}\nc: &c {<<: [*a, *b], z: 4}\nd: *c\ne: {<<: *c, z: 5}\n", "x.yaml")[0]
    assert data["c"] == data["d"] == {"x": 1, "y": 3, "z": 4}
    assert data["e"] == {"x": 1, "y": 3, "z": 5}


def test_a_key_given_twice_explicitly_is_still_refused_beside_a_merge():
    with pytest.raises(SpecError) as caught:
        parse_yaml("r: &r {mem: 4G}\nres: {<<: *r, mem: 8G, mem: 9G}\n", "job.yaml", SpecError)
    assert str(caught.value) == "job.yaml:2: res.mem: is given twice (first on line 2); keep one"


def test_a_merge_key_that_names_no_mapping_is_one_line():
    with pytest.raises(SpecError) as caught:
        parse_yaml("a: &a [1]\nb: {<<: *a}\n", "job.yaml", SpecError)
    assert str(caught.value) == "job.yaml:1: not valid YAML: a merge key (<<) takes a mapping or a list of mappings"


# ------------------------------------------------------------------ 13: YAML 1.1 number forms

@pytest.mark.parametrize("resources, message", [
    ("time: 010", "resources.time: '010' is octal to YAML 1.1 (8, not 10), which sbatch does not read so: "
                  "write 10 (minutes) or '0:10:00'"),
    ("time: 0b11", "resources.time: '0b11' is binary to YAML 1.1 (3), which sbatch does not read so: "
                   "write 3 (minutes) or '0:03:00'"),
    ("time: 0x10", "resources.time: '0x10' is hexadecimal to YAML 1.1 (16), which sbatch does not read so: "
                   "write 16 (minutes) or '0:16:00'"),
    ("time: 1_000", "resources.time: '1_000' is a number with '_' between digits to YAML 1.1 (1000), which sbatch "
                    "does not read so: write 1000 (minutes) or '16:40:00'"),
    ("time: 1h, cpus_per_task: 010", "resources.cpus_per_task: '010' is octal to YAML 1.1 (8, not 10), which sbatch "
                                     "does not read so: write 10"),
    ("time: 1h, nodes: 0x2", "resources.nodes: '0x2' is hexadecimal to YAML 1.1 (2), which sbatch does not read so: write 2"),
    ("time: 1h, gpus: 0b1", "resources.gpus: '0b1' is binary to YAML 1.1 (1), which sbatch does not read so: write 1"),
    ("time: 1h, mem: 010", "resources.mem: '010' is octal to YAML 1.1 (8, not 10), which sbatch does not read so: "
                           "write 10 (MiB) or a size with its unit, such as 10G"),
    ("time: 1h, tmp: 1_024", "resources.tmp: '1_024' is a number with '_' between digits to YAML 1.1 (1024), which "
                             "sbatch does not read so: write 1024 (MiB) or a size with its unit, such as 1024G"),
    ("time: 1h, mem_per_cpu: 1_0.5", "resources.mem_per_cpu: '1_0.5' is a number with '_' between digits to YAML 1.1 "
                                     "(10.5), which sbatch does not read so: write 10.5 (MiB) or a size with its unit, "
                                     "such as 10.5G"),
])
def test_yaml_1_1_number_forms_in_counts_sizes_and_times_are_refused_with_the_spelling_to_use(tmp_path, resources, message):
    text = BASE.replace("resources: {cpus_per_task: 1, mem: 4G, time: 1h}", "resources: {" + resources + "}")
    assert yaml_spec_error(tmp_path, text) == f"{tmp_path}/job.yaml:5: {message}"


def test_yaml_1_1_forms_elsewhere_in_a_spec_are_refused_too(tmp_path):
    text = BASE + "kind: array\narray: {parameters: {p: [1]}, throttle: 010}\nstage:\n  checkpoint: {from: c, to: c, every: 0x3c}\n"
    text = text.replace("kind: serial\n", "")
    (tmp_path / "job.yaml").write_text(text)
    with pytest.raises(SpecError) as caught:   # both at once: one is no reason to hide the other
        Job.from_yaml(tmp_path / "job.yaml")
    assert str(caught.value).splitlines()[0].endswith(
        "array.throttle: '010' is octal to YAML 1.1 (8, not 10), which sbatch does not read so: write 10")
    text = text.replace("throttle: 010", "throttle: 10")
    assert yaml_spec_error(tmp_path, text).endswith(
        "stage.checkpoint.every: '0x3c' is hexadecimal to YAML 1.1 (60), which sbatch does not read so: "
        "write 60 (minutes) or '1:00:00'")


def test_plain_decimal_numbers_and_quoted_ones_read_as_before(tmp_path):
    text = BASE.replace("{cpus_per_task: 1, mem: 4G, time: 1h}", "{cpus_per_task: 10, mem: 1.5, time: '010', nodes: +2}")
    (tmp_path / "job.yaml").write_text(text)
    resources = Job.from_yaml(tmp_path / "job.yaml").spec.resources
    assert (resources.cpus_per_task, resources.mem_mb, resources.time_s, resources.nodes) == (10, 2, 600, 2)


# --------------------------------------------- 6: infinite, not-a-number and huge sizes, times, counts

SIZE_HELP = "use a number with K, M, G or T (binary units: 4G, 4000M, 4GiB, 7T, 512K); a bare number means MiB"
TOO_BIG_SIZE = "is more than slurmkit's largest size, 1024P, more than any node or file system holds"
TOO_LONG = "is more than slurmkit's largest duration, 365 days; Alliance clusters run jobs of 28 days at most"


@pytest.mark.parametrize("entry", ["check", "render"])
@pytest.mark.parametrize("resources, message", [
    ("mem: .inf", f"resources.mem: inf is not a size: {SIZE_HELP}"),
    ("mem: .nan", f"resources.mem: nan is not a size: {SIZE_HELP}"),
    ("mem_per_cpu: -.inf", f"resources.mem_per_cpu: -inf is not a size: {SIZE_HELP}"),
    ("tmp: .NaN", f"resources.tmp: nan is not a size: {SIZE_HELP}"),
    ("tmp: 99999999999999999999", f"resources.tmp: 99999999999999999999 {TOO_BIG_SIZE}"),
    ("mem_per_cpu: '" + "9" * 400 + "G'", f"resources.mem_per_cpu: 401 characters is not a size: {SIZE_HELP}"),
])
def test_non_finite_and_huge_sizes_are_one_line(folders, entry, resources, message):
    work, home = folders
    (work / "job.yaml").write_text(BASE.replace("mem: 4G, time: 1h", "time: 1h, " + resources))
    refused(work, home, SPEC_ENTRY_POINTS[entry], f"job.yaml:5: {message}")


@pytest.mark.parametrize("resources, message", [
    ({"time": "1h", "mem": float("nan")}, f"resources.mem: nan is not a size: {SIZE_HELP}"),
    ({"time": "1h", "mem": float("inf")}, f"resources.mem: inf is not a size: {SIZE_HELP}"),
    ({"time": "1h", "tmp": float("-inf")}, f"resources.tmp: -inf is not a size: {SIZE_HELP}"),
    ({"time": "1h", "mem_per_cpu": 10 ** 5000}, f"resources.mem_per_cpu: a number of 5,001 digits {TOO_BIG_SIZE}"),
    ({"time": 10 ** 5000}, f"resources.time: a number of 5,001 digits {TOO_LONG}"),
    ({"time": "9" * 5000}, "resources.time: 5,000 characters is not a duration: use a SLURM time (7-00:00:00, 24:00:00, "
                           "1:00:00, 0-03:00, or minutes such as 30) or a short form (7d, 24h, 90m, 3h30m)"),
    ({"time": 525601}, f"resources.time: 525601 {TOO_LONG}"),
    ({"time": "1h", "nodes": 10 ** 5000}, "resources.nodes: expected a whole number from 1 to 1,000,000, "
                                          "got int, a number of 5,001 digits"),
    ({"time": "1h", "cpus_per_task": 1_000_001}, "resources.cpus_per_task: expected a whole number from 1 to 1,000,000, "
                                                 "got int 1000001"),
    ({"time": "1h", "gpus": "h100:" + "1" * 5000}, "resources.gpus: 5,005 characters is not a GPU request: give a count, "
                                                   "MODEL:COUNT (e.g. h100:2) or a mapping"),
])
def test_job_from_python_gives_a_spec_error_for_non_finite_and_huge_values(resources, message):
    assert spec_error(name="j", profile="local", resources=resources, launch="python a.py") == f"Job(...): {message}"


def test_a_huge_array_throttle_and_checkpoint_interval_are_refused(tmp_path):
    text = BASE.replace("kind: serial\n", "kind: array\n") + "array: {parameters: {p: [1]}, throttle: 99999999999999999999}\n"
    assert yaml_spec_error(tmp_path, text) == (f"{tmp_path}/job.yaml:7: array.throttle: expected a whole number from 1 to "
                                               f"1,000,000, got int 99999999999999999999")
    text = BASE + "stage:\n  checkpoint: {from: c, to: c, every: 99999999999999999999}\n"
    assert yaml_spec_error(tmp_path, text) == f"{tmp_path}/job.yaml:8: stage.checkpoint.every: 99999999999999999999 {TOO_LONG}"


# ------------------------------------------------------------------- 8: NUL in any string

NUL_FIELDS = {
    # field: (YAML lines appended to BASE or replacing its launch, key path, position of the NUL)
    "variable": ('environment:\n  variables: {TOK: "abc\\0def"}\n', "environment.variables.TOK", 4),
    "venv path": ('environment:\n  venv: {path: "/v\\0"}\n', "environment.venv.path", 3),
    "venv requirements": ('environment:\n  venv: {requirements: "r\\0.txt"}\n', "environment.venv.requirements", 2),
    "venv package": ('environment:\n  venv: {packages: ["n\\0umpy"]}\n', "environment.venv.packages[0]", 2),
    "module": ('environment:\n  modules: ["py\\0"]\n', "environment.modules[0]", 3),
    "build cache": ('environment:\n  build_cache: "/c\\0"\n', "environment.build_cache", 3),
    "setup line": ('environment:\n  setup: ["echo \\0"]\n', "environment.setup[0]", 6),
    "command word": ('launch: [python, "a\\0b"]\n', "launch.command[1]", 2),
    "command line": ('launch: "python a\\0b"\n', "launch.command", 9),
    "shell line": ('launch: {shell: "python a\\0b"}\n', "launch.shell", 9),
    "name": ('name: "j\\0"\n', "name", 2),
    "array value": ('kind: array\narray: {parameters: {p: ["1", "x\\0"]}}\n', "array.parameters.p[1]", 2),
    "mail user": ('mail: {user: "a\\0@b.c"}\n', "mail.user", 2),
    "stage output": ('stage: {outputs: [{from: o, to: "r\\0"}]}\n', "stage.outputs[0].to", 2),
}


@pytest.mark.parametrize("field", sorted(NUL_FIELDS))
def test_a_nul_in_any_string_of_a_yaml_spec_is_refused_at_read_time_with_its_field(tmp_path, field):
    lines, keypath, position = NUL_FIELDS[field]
    kept = [row for row in BASE.splitlines(keepends=True)
            if not any(row.startswith(added.split(":")[0] + ":") for added in lines.splitlines() if not added.startswith(" "))]
    text = "".join(kept) + lines
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "\\0" in row)
    message = yaml_spec_error(tmp_path, text)
    assert message.endswith(f": {keypath}: holds a NUL character (\\0) at position {position}, which bash cannot carry "
                            f"(it would drop it and the job would see another value); remove it"), message
    assert message.startswith(f"{tmp_path}/job.yaml:{line}:"), (message, line)


@pytest.mark.parametrize("fields, keypath", [
    ({"environment": {"variables": {"TOK": "abc\0def"}}}, "environment.variables.TOK"),
    ({"environment": {"venv": {"path": "/v\0", "packages": ["x"]}}}, "environment.venv.path"),
    ({"launch": ["python", "a\0"]}, "launch.command[1]"),
    ({"launch": "python a\0"}, "launch.command"),
    ({"environment": {"build_cache": "\0"}}, "environment.build_cache"),
    ({"kind": "array", "array": {"parameters": {"p": ["\0"]}}}, "array.parameters.p[0]"),
])
def test_a_nul_from_python_is_the_same_spec_error(fields, keypath):
    spec = {"name": "j", "profile": "local", "resources": {"time": "1h"}, "launch": "python a.py", **fields}
    assert spec_error(**spec).startswith(f"Job(...): {keypath}: holds a NUL character (\\0)")


def test_a_key_with_a_nul_is_named_with_the_nul_escaped():
    message = spec_error(name="j", profile="local", resources={"time": "1h"}, launch="a",
                         environment={"variables": {"A\0": "1"}})
    assert "\0" not in message and message.startswith("Job(...): environment.variables.'A\\x00': ")


def test_import_never_writes_a_nul_into_the_spec_it_writes(folders):
    work, home = folders
    (work / "s.sh").write_bytes(b"#!/bin/bash\n#SBATCH --time=1:00:00\n#SBATCH --comment=x\0y\nexport TOK=\"a\0b\"\n"
                                b"cd /x\0y\nmodule load py\0thon\npython a\0b.py\necho do\0ne\n")
    outcome = measured(cli("import", "s.sh", "-o", "job.yaml"), work, home)
    assert outcome.rc == 0, outcome.stderr
    written = (work / "job.yaml").read_bytes()
    assert b"\0" not in written
    assert b"#SBATCH --comment=x\\x00y" in written  # the comment says what was there
    assert "environment.variables.TOK: left out, the spec reader refuses it (holds a NUL" in written.decode()
    parse_yaml(written.decode(), "job.yaml")  # and it reads back


# --------------------------------------------------------------- 15: a long extends chain

def _chain_of_profiles(work: Path, length: int) -> None:
    """q0 extends q1 ... extends q{length-1}, which extends local."""
    folder = work / "site_profiles"
    folder.mkdir()
    for i in range(length):
        parent = f"q{i + 1}" if i + 1 < length else "local"
        (folder / f"q{i}.yaml").write_text(f"name: q{i}\nextends: {parent}\n")


def test_a_long_extends_chain_is_one_line_naming_the_chain_not_a_recursion_error(folders):
    from slurmkit.sites.profiles import MAX_EXTENDS

    work, home = folders
    _chain_of_profiles(work, 1500)
    names = " -> ".join(f"q{i}" for i in range(MAX_EXTENDS + 2))
    refused(work, home, cli("profiles", "show", "q0"),
            f"{work}/site_profiles/q0.yaml:2: extends: the extends chain is longer than {MAX_EXTENDS} profiles, "
            f"slurmkit's limit: {names} -> ...; merge some of them into one")


def test_profiles_list_with_a_1500_file_chain_skips_the_long_ones_in_linear_time(folders):
    from slurmkit.sites.profiles import MAX_EXTENDS

    work, home = folders
    _chain_of_profiles(work, 1500)
    outcome = measured(cli("profiles", "list"), work, home)
    assert outcome.rc == 2
    skipped = [line for line in outcome.stderr.splitlines() if "the extends chain is longer than" in line]
    # q1484 -> ... -> q1499 -> local is 16 links, the limit; q1483's chain is one more
    assert len(skipped) == 1500 - MAX_EXTENDS and all(line.startswith("error: ") for line in skipped)
    listed = [line.split()[0] for line in outcome.stdout.splitlines()[1:]]
    assert "q1499" in listed and f"q{1500 - MAX_EXTENDS}" in listed and f"q{1500 - MAX_EXTENDS - 1}" not in listed
    assert outcome.cpu_s < 10 and outcome.peak_mb < 200, outcome   # CPU time: the clock's would fail on a loaded machine


def test_a_chain_of_the_limit_loads_and_merges_as_before(tmp_path):
    from slurmkit.sites.profiles import MAX_EXTENDS, ProfileCatalog, profiles_dir

    _chain_of_profiles(tmp_path, MAX_EXTENDS)
    (tmp_path / "site_profiles" / "q3.yaml").write_text("name: q3\nextends: q4\nscheduling: {default_mem_per_cpu: 3G}\n")
    profile = ProfileCatalog([tmp_path / "site_profiles", profiles_dir()]).load("q0")
    local = ProfileCatalog([profiles_dir()]).load("local")
    assert profile.name == "q0" and profile.scheduling.default_mem_per_cpu_mib == 3072
    assert profile.scheduling.max_walltime_seconds == local.scheduling.max_walltime_seconds and profile.node_types == local.node_types


# ------------------------------------------------------------------- 19: values past the job

NODE = "write `mem: node` for all of each node's memory"


@pytest.mark.parametrize("mem, shown", [("0", "0"), ("-0", "0"), ("'0G'", "'0G'"), ("'0'", "'0'")])
def test_mem_zero_is_refused_with_the_spelling_for_all_of_each_nodes_memory(tmp_path, mem, shown):
    text = BASE.replace("mem: 4G", f"mem: {mem}")
    assert yaml_spec_error(tmp_path, text) == (f"{tmp_path}/job.yaml:5: resources.mem: {shown} is no memory at all to a "
                                               f"reader, and all of each node's memory to sbatch: {NODE}")
    assert spec_error(name="j", resources={"time": "1h", "mem": 0}, launch="a").endswith(NODE)
    assert spec_error(name="j", resources={"time": "1h", "mem_per_cpu": "0M"}, launch="a") == (
        "Job(...): resources.mem_per_cpu: '0M' is no memory: ask at least 1M a CPU, or give `mem: node` (not mem_per_cpu) "
        "for all of each node's memory")


def test_mem_node_still_asks_all_of_each_nodes_memory():
    assert Job(name="j", resources={"time": "1h", "mem": "node"}, launch="a").spec.resources.mem_mb == 0


def findings_of(profile: str, **fields):
    spec = {"name": "j", "profile": profile, "account": "def-x", "resources": {"time": "1h"}, "launch": "python a.py", **fields}
    return [(f.level, f.field, f.message) for f in Job(**spec).resolve().findings if f.field != "profile"]


def test_tmp_beyond_the_largest_local_disk_of_the_nodes_that_fit_is_refused():
    found = findings_of("narval", resources={"time": "1h", "tmp": "999999T"})
    assert ("error", "resources.tmp", "999999T of node-local disk is more than any narval node that fits this job has "
                                      "(the largest: 960G); ask at most 960G, or read the rest from scratch") in found
    assert not [f for f in findings_of("narval", resources={"time": "1h", "tmp": "960G"}) if f[1] == "resources.tmp"]
    # a profile that does not state its nodes' disks cannot say
    assert not [f for f in findings_of("local", resources={"time": "1h", "tmp": "999T"}) if f[1] == "resources.tmp"]


def test_a_checkpoint_interval_longer_than_the_job_is_warned_about():
    found = findings_of("local", stage={"checkpoint": {"from": "c", "to": "c", "every": "2h"}})
    assert ("warning", "stage.checkpoint.every", "2h is longer than the job's time (1h): the checkpoint is copied back "
                                                 "only when the job ends; choose an interval shorter than resources.time") in found
    assert not [f for f in findings_of("local", stage={"checkpoint": {"from": "c", "to": "c", "every": "1h"}})
                if f[1] == "stage.checkpoint.every"]


def test_an_array_throttle_above_the_array_size_is_warned_about():
    array = {"kind": "array", "launch": "python a.py $p"}
    found = findings_of("local", array={"parameters": {"p": [1, 2]}, "throttle": 5}, **array)
    assert ("warning", "array.throttle", "5 at a time is more than the array's 2 tasks, so it limits nothing; "
                                         "lower it or leave it out") in found
    assert not [f for f in findings_of("local", array={"parameters": {"p": [1, 2]}, "throttle": 2}, **array)
                if f[1] == "array.throttle"]


def test_a_setup_line_is_capped_like_a_launch_command(folders):
    from slurmkit.core.sanity import MAX_COMMAND_CHARS

    work, home = folders
    (work / "job.yaml").write_text(BASE + "environment:\n  setup:\n    - echo hi\n    - echo " + "x" * MAX_COMMAND_CHARS + "\n")
    refused(work, home, cli("check", "job.yaml"),
            f"job.yaml:10: environment.setup[1]: {MAX_COMMAND_CHARS + 5} characters, more than slurmkit's limit of "
            f"{MAX_COMMAND_CHARS} (the most Linux passes as one argument); put a long command in a script, or its data "
            f"in a file the program reads")


# ------------------------------------------------------------- 20: a value that starts with '='

def test_an_environment_value_starting_with_equals_is_quoted_so_shellcheck_passes(tmp_path):
    import shutil
    import subprocess

    script = Job(name="j", profile="local", account="def-x", resources={"time": "1h"}, launch="python a.py",
                 environment={"variables": {"V": "=", "W": "==x", "X": "a=b"}}).render()
    assert "export V='='\n" in script and "export W='==x'\n" in script and "export X=a=b\n" in script
    path = tmp_path / "job.sh"
    path.write_text(script)
    if shutil.which("shellcheck"):
        done = subprocess.run(["shellcheck", str(path)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout
    done = subprocess.run(["bash", "-c", f"source <(grep '^export [VW]=' {path}); printf '%s|' \"$V\" \"$W\""],
                          capture_output=True, text=True)
    assert done.stdout == "=|==x|"


def test_a_profile_with_a_yaml_1_1_number_is_refused_and_skipped_by_profiles_list(folders):
    work, home = folders
    (work / "site_profiles").mkdir()
    (work / "site_profiles" / "octal.yaml").write_text("name: octal\nextends: local\nscheduling:\n  max_array_size: 010\n")
    outcome = refused(work, home, cli("profiles", "list"),
                      f"{work}/site_profiles/octal.yaml:4: scheduling.max_array_size: '010' is octal to YAML 1.1 (8, not 10), "
                      f"which sbatch does not read so: write 10 (skipped; the other profiles are listed)")
    assert "local" in [line.split()[0] for line in outcome.stdout.splitlines()[1:]]


@pytest.mark.parametrize("fields, message", [
    ({"name": 10 ** 5000}, "name: expected text, got int, a number of 5,001 digits"),
    ({"environment": {"variables": {"N": 10 ** 5000}}}, "environment.variables.N: expected text, got int, a number of 5,001 digits"),
    ({"launch": ["python", 10 ** 5000]}, "launch.command[1]: expected text, got int, a number of 5,001 digits"),
])
def test_a_huge_python_int_where_text_belongs_is_a_spec_error(fields, message):
    spec = {"name": "j", "profile": "local", "resources": {"time": "1h"}, "launch": "python a.py", **fields}
    assert spec_error(**spec) == f"Job(...): {message}"


def test_a_long_seed_as_an_array_value_keeps_its_spelling(tmp_path):
    text = BASE.replace("kind: serial", "kind: array") + "array: {parameters: {seed: [123456789012345678901234, 7]}}\n"
    text = text.replace("launch: python run.py", "launch: python run.py $seed")
    (tmp_path / "job.yaml").write_text(text)
    assert dict(Job.from_yaml(tmp_path / "job.yaml").spec.array.parameters) == {"seed": ("123456789012345678901234", "7")}


# Random mappings with merge keys: what the reader makes of them is what yaml's own loader
# makes (the mapping's own keys win, then the earlier merged mapping), key order aside.

KEYS = st.sampled_from(["a", "b", "c", "d"])


@st.composite
def merge_documents(draw):
    anchors = draw(st.lists(st.dictionaries(KEYS, st.integers(0, 9), min_size=1, max_size=4), min_size=1, max_size=3))
    lines = [f"m{i}: &m{i} {{{', '.join(f'{k}: {v}' for k, v in anchor.items())}}}" for i, anchor in enumerate(anchors)]
    merged = draw(st.lists(st.integers(0, len(anchors) - 1), min_size=1, max_size=3, unique=True))
    own = draw(st.dictionaries(KEYS, st.integers(10, 19), max_size=4))
    source = f"*m{merged[0]}" if len(merged) == 1 else "[" + ", ".join(f"*m{i}" for i in merged) + "]"
    items = [f"<<: {source}"] + [f"{k}: {v}" for k, v in own.items()]
    if draw(st.booleans()):
        items.reverse()  # the merge key after the mapping's own keys
    lines.append("x: {" + ", ".join(items) + "}")
    return "\n".join(lines) + "\n"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(merge_documents())
def test_merge_keys_read_as_yaml_reads_them(text):
    assert parse_yaml(text, "x.yaml")[0] == yaml.safe_load(text)


def test_a_merge_into_a_mapping_of_many_keys_reads_in_linear_time():
    text = "m: &m {z: 1}\nx:\n  <<: *m\n" + "".join(f"  k{i}: 1\n" for i in range(24_000))
    started = time.process_time()
    data = parse_yaml(text, "x.yaml")[0]
    assert time.process_time() - started < 3
    assert list(data["x"])[:2] == ["z", "k0"] and len(data["x"]) == 24_001


@pytest.mark.parametrize("directive", ["--nodes=", "--ntasks=", "--cpus-per-task=", "--ntasks-per-node=", "--gpus=",
                                       "--array=0-", "--array=1-2%", "-N "])
def test_import_leaves_a_huge_number_out_with_a_to_do_not_a_traceback(folders, directive):
    work, home = folders
    (work / "h.sh").write_text(f"#!/bin/bash\n#SBATCH --time=1:00:00\n#SBATCH {directive}1{'0' * 4400}\npython a.py\n")
    outcome = measured(cli("import", "h.sh", "-o", "job.yaml"), work, home)
    assert outcome.rc == 0 and "Traceback" not in outcome.stderr, outcome.stderr
    assert (f"to do: h.sh:3: #SBATCH {directive}1") in outcome.stderr
    assert f"a number of more than {MAX_DIGITS} digits, longer than any count, size or time: left out; set it by hand" \
        in outcome.stderr
    assert outcome.cpu_s < 1.5 and outcome.peak_mb < 100, outcome
    parse_yaml((work / "job.yaml").read_text(), "job.yaml")


@pytest.mark.parametrize("mem", ["0", "0G", "00M"])
def test_import_maps_any_zero_mem_to_mem_node_now_that_a_spec_refuses_zero(mem):
    from slurmkit.port.porting import import_script

    spec = import_script(f"#!/bin/bash\n#SBATCH --mem={mem} -t 1:00:00\nsrun ./app\n").spec
    assert spec["resources"]["mem"] == "node"


@pytest.mark.parametrize("written, message", [
    ("cpus_per_task: 0o7", "resources.cpus_per_task: expected a whole number from 1 to 1,000,000, got str '0o7'"),
    ("cpus_per_task: 1:30", "resources.cpus_per_task: expected a whole number from 1 to 1,000,000, got str '1:30'"),
    ("mem: 1:30", "resources.mem: '1:30' is not a size: use a number with K, M, G or T (binary units: 4G, 4000M, 4GiB, "
                  "7T, 512K); a bare number means MiB; or 'node' for all the memory of each node (--mem=0)"),
])
def test_octal_0o_and_base_60_forms_in_counts_and_sizes_are_text_and_refused(tmp_path, written, message):
    text = BASE.replace("cpus_per_task: 1, mem: 4G", "cpus_per_task: 1, mem: 4G, " + written)
    key = written.split(":")[0]
    text = text.replace(f"{key}: 1, " if key == "cpus_per_task" else f"{key}: 4G, ", "", 1)
    assert yaml_spec_error(tmp_path, text) == f"{tmp_path}/job.yaml:5: {message}"
