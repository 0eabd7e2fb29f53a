"""What a script says $SLURM_TMPDIR is comes from the site's profile, with the page that says it:
on Trillium and Niagara it is a RAM disk whose files count against the job's memory, not "the
node-local disk" a reader would take it for."""

import re

import pytest

from slurmkit.api.job import Job
from slurmkit.render.render import render
from slurmkit.sites.profiles import SlurmTmpdir, load_profile

from .golden_specs import spec_for


def _script(profile_name: str, kind: str) -> str:
    resolution = Job(**spec_for(load_profile(profile_name), kind)).resolve()
    assert resolution.plan is not None, resolution.errors
    return render(resolution.plan)


@pytest.mark.parametrize("profile, kind, words, source", [
    ("trillium", "ddp", "the node's RAM disk, whose files count against the job's memory",
     "https://docs.alliancecan.ca/wiki/Trillium/en"),
    ("niagara", "mpi", "the node's RAM disk, whose files count against the job's memory",
     "https://docs.alliancecan.ca/wiki/Data_management_at_Niagara/en"),
    ("fir", "ddp", "the node's local NVMe disk", "https://docs.alliancecan.ca/wiki/Using_node-local_storage/en"),
    ("narval", "gpu", "the node's local SSD", "https://docs.alliancecan.ca/wiki/Using_node-local_storage/en"),
])
def test_the_script_says_what_the_sites_slurm_tmpdir_is_and_where_that_is_said(profile, kind, words, source):
    script = _script(profile, kind)
    joined = re.sub(r"(\n# [^\n]*[^.:)\n])\n# ", r"\1 ", script)   # (a comment wrapped at 100 columns, as one line)
    assert f"# Inputs in $SLURM_TMPDIR, {words}" in joined
    assert re.search(rf"^# Inputs in \$SLURM_TMPDIR, {re.escape(words)}.* \({re.escape(source)}\)\.$", joined, re.M)
    assert "the node-local disk" not in script


def test_a_profile_with_no_source_says_no_page():
    script = _script("local", "gpu")
    assert "# Inputs in $SLURM_TMPDIR, the node-local disk.\n" in script
    assert "What $SLURM_TMPDIR is on" not in script


@pytest.mark.parametrize("tmpdir, words", [
    (SlurmTmpdir("ramdisk", None, True), "the node's RAM disk, whose files count against the job's memory"),
    (SlurmTmpdir("ramdisk", None, False), "the node's RAM disk"),
    (SlurmTmpdir("disk", None, False), "the node-local disk"),
    (SlurmTmpdir(None, None, None), "the node-local disk"),
])
def test_the_words_follow_the_kind(tmpdir, words):
    assert tmpdir.words() == words


def test_the_ram_disk_sites_cite_their_page():
    for name in ("trillium", "niagara"):
        tmpdir = load_profile(name).storage.slurm_tmpdir
        assert tmpdir.kind == "ramdisk" and tmpdir.counts_against_memory and tmpdir.source[0].startswith("https://")
