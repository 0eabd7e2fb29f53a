"""The site rule behind a header value is a comment line above its #SBATCH line
(slurmkit/resolve/headernotes.py): cores per GPU with the page that says so, what --mem means,
and where Trillium's jobs are submitted from and write to."""

from pathlib import Path

import pytest

from slurmkit import Job

GOLDEN = Path(__file__).parent.parent / "golden"


def script(profile, kind="gpu", **resources):
    return Job(name="n", profile=profile, account="def-x", kind=kind, launch="python t.py",
               resources={"time": "3h", **resources}).render(warn=False)


def above(text, directive):
    """The comment just above the #SBATCH line that starts with ``directive``, its lines (wrapped at
    100 columns) joined into one."""
    lines = text.splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith(f"#SBATCH {directive}"))
    start = end
    while start > 0 and lines[start - 1].startswith("# "):
        start -= 1
    return "# " + " ".join(line[2:] for line in lines[start:end]) if start < end else lines[end - 1]


def test_a_gpu_jobs_cores_and_whole_node_memory_say_the_sites_rule_above_them():
    text = script("fir", kind="ddp", nodes=2, gpus="h100:4")
    assert above(text, "--cpus-per-task=12") == "# fir: at most 12 cores per H100 (https://docs.alliancecan.ca/wiki/Using_GPUs_with_Slurm/en)"
    assert above(text, "--mem=0") == "# --mem=0: all of each node's memory, as the job takes every core of its nodes"


def test_a_one_gpu_jobs_memory_is_its_gpus_share_of_the_node_where_the_site_recommends_none():
    text = script("cedar", gpus="v100l:1")
    assert above(text, "--mem=") == "# --mem=46G: for each GPU, its share of the node's memory (187G over 4 GPUs)"


@pytest.mark.parametrize("site, gpus, line", [
    ("rorqual", "h100:1", "# --mem=124G: rorqual recommends 124G per H100"),
    ("narval", "a100:2", "# --mem=248G: narval recommends 124G per A100"),
    ("nibi", "h100:1", "# --mem=250G: nibi recommends 250G per H100")])
def test_a_gpu_jobs_memory_cites_the_recommendation_per_gpu_of_the_bundles_table(site, gpus, line):
    """Allocations_and_compute_scheduling, Ratios in bundles: "Recommended per GPU"."""
    assert above(script(site, gpus=gpus), "--mem=") == f"{line} (https://docs.alliancecan.ca/wiki/Allocations_and_compute_scheduling/en)"


def test_memory_the_spec_asks_has_no_rule_above_it():
    assert not above(script("fir", gpus="h100:1", mem="100G"), "--mem=").startswith("# --mem")


def test_trillium_says_where_its_jobs_run_and_that_it_ignores_memory():
    text = script("trillium", gpus="h100:1")
    head = " ".join(line[2:] for line in text.split("#SBATCH", 1)[0].splitlines() if line.startswith("# "))
    assert "submit from $SCRATCH and write there: $HOME and $PROJECT are read-only in jobs" in head
    assert "GPU jobs from trig-login*, no --partition (https://docs.alliancecan.ca/wiki/Trillium_Quickstart/en)" in head
    assert above(text, "--cpus-per-task") == ("# trillium: each H100 comes with 24 cores and its share of the node's memory "
                                              "(--mem is ignored); 1 GPU or a multiple of 4 per job "
                                              "(https://docs.alliancecan.ca/wiki/Trillium_Quickstart/en)")
    assert "CPU jobs from tri-login*" in script("trillium", kind="threaded").split("#SBATCH", 1)[0].replace("\n# ", " ")


def test_a_cpu_job_on_a_site_without_such_rules_has_no_notes():
    text = script("fir", kind="serial")
    assert [line for line in text.split("# Generated", 1)[0].splitlines() if line.startswith("# ")] == []


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/*.sbatch")), ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_no_sbatch_line_carries_a_trailing_comment(path):
    """A comment after an #SBATCH value is read as part of it by some Slurm versions."""
    assert [line for line in path.read_text().splitlines() if line.startswith("#SBATCH") and "#" in line[1:]] == []


def test_the_place_jobs_write_to_comes_from_the_profile(tmp_path, monkeypatch):
    folder = tmp_path / "site_profiles"
    folder.mkdir()
    (folder / "mylab.yaml").write_text(
        "name: mylab\nextends: trillium\nrules:\n  read_only_in_job:\n    paths: [$HOME]\n"
        "    write_to: $LAB_SCRATCH\n    source: https://example.org/lab\n")
    monkeypatch.chdir(tmp_path)
    head = script("mylab", gpus="h100:1").split("#SBATCH", 1)[0]
    assert "mylab: submit from $LAB_SCRATCH and write there: $HOME are read-only in jobs;" in head


def test_a_read_only_rule_without_a_place_to_write_still_loads_and_says_to_write_elsewhere(tmp_path, monkeypatch):
    """A user's profile written before write_to existed keeps working."""
    folder = tmp_path / "site_profiles"
    folder.mkdir()
    (folder / "mylab.yaml").write_text(
        "name: mylab\nextends: local\nrules:\n  read_only_in_job:\n    paths: [$HOME]\n    source: https://example.org/lab\n")
    monkeypatch.chdir(tmp_path)
    head = script("mylab", kind="threaded").split("#SBATCH", 1)[0]
    assert "mylab: submit from and write to a folder outside them: $HOME are read-only in jobs;" in head
