"""``--remote`` under the faults a laptop meets: a folder whose name the far shell must have
quoted, a submit that sbatch refuses or whose copy fails, a fetch that comes up short.

The far side is the tests' own sshd in front of the real local cluster
(tests/integration/sshd.py); the laptop side runs the CLI in a process of its own without
SLURM_CONF, so that every SLURM answer came over ssh.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from slurmkit.slurm.registry import all_records, open_intents
from tests.integration.sshd import HOST_ALIAS
from tests.integration.test_remote import _error_line as one_error_line
from tests.integration.test_remote import job_id_of, laptop, slurmkit, sshd, staged_job  # noqa: F401  (fixtures)


def registry_of(laptop) -> Path:
    return Path(laptop["SLURMKIT_REGISTRY"])


def far_job_folders(sshd):
    root = sshd.scratch / "slurmkit"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def watch_to_the_end(laptop, job_id):
    watched = slurmkit(laptop, "watch", job_id, "--remote", "local", "--interval", "2")
    assert watched.returncode == 0 and f"{job_id} COMPLETED exit 0" in watched.stdout, watched.stdout + watched.stderr


# ----------------------------------------------------------------------- names to be quoted

@pytest.mark.parametrize("name", ["my run (v2)", "it's a \"run\" $HOME"])
def test_a_folder_whose_name_needs_quoting_is_submitted_recorded_once_and_shown(sshd, laptop, tmp_path, name):
    spec = staged_job(tmp_path / name)
    submitted = slurmkit(laptop, "submit", str(spec), "--remote", "local")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    job_id = job_id_of(submitted.stdout)
    records = all_records(registry_of(laptop))
    assert [r.job_id for r in records if r.job_id] == [job_id] and open_intents(records) == []
    [far] = far_job_folders(sshd)
    assert far.startswith(name + "-")

    status = slurmkit(laptop, "status", "--remote", "local", "--json")
    assert status.returncode == 0, status.stderr
    assert [row["job"] for row in json.loads(status.stdout)["jobs"]] == [job_id]
    watch_to_the_end(laptop, job_id)
    fetched = slurmkit(laptop, "fetch", job_id)
    assert fetched.returncode == 0, fetched.stderr
    assert (spec.parent / "results" / "count.txt").read_text().strip() == "42"


# ---------------------------------------------------------------------------- failed submits

def with_account(spec: Path, account: str) -> Path:
    data = yaml.safe_load(spec.read_text())
    spec.write_text(yaml.safe_dump({**data, "account": account}))
    return spec


def test_a_submit_that_sbatch_refuses_closes_its_intent_and_leaves_no_far_folder(sshd, laptop, tmp_path):
    """An account SLURM does not know (the cluster enforces associations): sbatch itself refuses."""
    spec = with_account(staged_job(tmp_path / "project"), "def-nobody")
    line = one_error_line(slurmkit(laptop, "submit", str(spec), "--remote", "local"))
    assert line.startswith(f"error: sbatch on {HOST_ALIAS} refused the job: ") and "account" in line, line
    records = all_records(registry_of(laptop))
    assert open_intents(records) == [] and not any(r.job_id for r in records)
    assert records[-1].note.startswith("not submitted: sbatch on ")
    assert far_job_folders(sshd) == []          # the folder this submit made is gone with it

    status = slurmkit(laptop, "status", "--remote", "local")
    assert status.returncode == 0 and status.stderr == "", status.stderr   # nothing left to look up


def test_a_refused_resubmit_keeps_the_far_folder_of_before_and_leaves_no_script(sshd, laptop, tmp_path):
    spec = staged_job(tmp_path / "project")
    first = slurmkit(laptop, "submit", str(spec), "--remote", "local")
    assert first.returncode == 0, first.stderr
    job_id = job_id_of(first.stdout)
    watch_to_the_end(laptop, job_id)
    one_error_line(slurmkit(laptop, "submit", str(with_account(spec, "def-nobody")), "--remote", "local"))
    [far] = far_job_folders(sshd)
    logs = sshd.scratch / "slurmkit" / far / "logs"
    assert (logs / f"{job_id}.exit").exists()                     # the first job's folder stays
    assert not [p.name for p in logs.iterdir() if p.name.endswith(".sbatch")]
    assert open_intents(all_records(registry_of(laptop))) == []


def test_a_failed_copy_to_the_cluster_records_nothing_open_and_leaves_no_far_folder(sshd, laptop, tmp_path):
    """The root on a 256 KiB tmpfs: rsync fails with ENOSPC after the job's folder was made."""
    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(full)], check=True)
    try:
        config = Path(laptop["XDG_CONFIG_HOME"]) / "slurmkit" / "remote.yaml"
        config.write_text(yaml.safe_dump({**yaml.safe_load(config.read_text()), "root": str(full)}))
        spec = staged_job(tmp_path / "project")
        (spec.parent / "data.bin").write_bytes(os.urandom(1024 * 1024))
        line = one_error_line(slurmkit(laptop, "submit", str(spec), "--remote", "local"))
        assert line.startswith(f"error: no space left on {HOST_ALIAS} ("), line
        assert list(full.iterdir()) == []
        assert not registry_of(laptop).exists() or open_intents(all_records(registry_of(laptop))) == []
    finally:
        subprocess.run(["umount", str(full)], check=True)


# ------------------------------------------------------------------------------------ fetch

def job_writing(folder: Path, outputs_to: str, script: str) -> Path:
    """A job whose payload writes into $SLURM_TMPDIR/out, copied back to ``outputs_to``."""
    folder.mkdir()
    spec = {"name": "remote-fetch", "profile": "local", "account": "def-test", "resources": {"time": "5m"},
            "stage": {"outputs": [{"from": "out", "to": outputs_to}]},
            "launch": {"command": ["bash", "-c", f"mkdir -p $SLURM_TMPDIR/out && cd $SLURM_TMPDIR/out && {script}"]}}
    (folder / "job.yaml").write_text(yaml.safe_dump(spec))
    return folder / "job.yaml"


def run_remote_job(laptop, spec: Path) -> str:
    submitted = slurmkit(laptop, "submit", str(spec), "--remote", "local")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    job_id = job_id_of(submitted.stdout)
    watch_to_the_end(laptop, job_id)
    return job_id


def far_folder(sshd) -> Path:
    [far] = far_job_folders(sshd)
    return sshd.scratch / "slurmkit" / far


def test_a_fetch_into_a_full_folder_here_is_an_error_naming_what_did_not_arrive(sshd, laptop, tmp_path):
    """The laptop's destination is a 256 KiB tmpfs; the job saved 1 MiB there: rsync fails with
    ENOSPC here (not on the cluster), and fetch names the file that did not arrive."""
    spec = job_writing(tmp_path / "project", "results", "echo small > small.txt && head -c 1048576 /dev/urandom > big.bin")
    job_id = run_remote_job(laptop, spec)
    assert (far_folder(sshd) / "results" / "big.bin").stat().st_size == 1048576
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(small)], check=True)
    try:
        result = slurmkit(laptop, "fetch", job_id, "--to", str(small))
        line = one_error_line(result)
        assert "fetched" not in result.stdout
        assert line.startswith(f"error: the fetch of job {job_id} from {HOST_ALIAS} came up short: "), line
        assert "missing: results/big.bin (1 MiB there, none here)" in line and "No space left on device" in line, line
        assert f"free space in {small}" in line and f"on {HOST_ALIAS} (" not in line, line   # the full disk is here
    finally:
        subprocess.run(["umount", str(small)], check=True)


def test_a_fetch_of_outputs_gone_from_the_cluster_is_an_error_not_fetched(sshd, laptop, tmp_path):
    """Scratch purged the saved outputs before the fetch: the logs come back, the outputs are
    named as not on the cluster, and nothing says they were fetched."""
    spec = job_writing(tmp_path / "project", "results", "echo 42 > count.txt")
    job_id = run_remote_job(laptop, spec)
    subprocess.run(["rm", "-rf", str(far_folder(sshd) / "results")], check=True)
    result = slurmkit(laptop, "fetch", job_id)
    line = one_error_line(result)
    assert line == (f"error: job {job_id}'s results is not on {HOST_ALIAS} (in {far_folder(sshd)}): the job did not save "
                    "it there, or it was removed since (scratch is purged)"), line
    assert result.stdout.startswith(f"fetched the logs of job {job_id} from {HOST_ALIAS}"), result.stdout
    assert (spec.parent / "logs" / f"{job_id}.exit").exists() and not (spec.parent / "results").exists()


def test_an_output_whose_name_rsync_would_read_as_a_pattern_arrives_whole(sshd, laptop, tmp_path):
    """``out[1]`` is a character class to rsync's filter rules: unescaped, nothing matched and
    rsync ended with 0 while the output never arrived."""
    spec = job_writing(tmp_path / "project", "out[1]", "echo one > a.txt && mkdir -p 'sub dir' && echo two > 'sub dir/b.txt'")
    job_id = run_remote_job(laptop, spec)
    result = slurmkit(laptop, "fetch", job_id)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith(f"fetched the logs and out[1] of job {job_id} from {HOST_ALIAS}"), result.stdout
    assert (spec.parent / "out[1]" / "a.txt").read_text() == "one\n"
    assert (spec.parent / "out[1]" / "sub dir" / "b.txt").read_text() == "two\n"


def test_a_fetch_where_a_local_file_sits_in_place_of_an_output_folder_is_refused_and_keeps_it(sshd, laptop, tmp_path):
    """rsync put the arriving ``results/`` folder in place of a local file ``results`` and fetch
    said fetched: the file was lost. It is refused before anything is copied; once moved away,
    the same fetch brings it all, and fetching again over the files it brought is allowed."""
    spec = job_writing(tmp_path / "project", "results", "echo 42 > count.txt")
    job_id = run_remote_job(laptop, spec)
    mine = spec.parent / "results"
    mine.write_text("a local file of mine\n")
    result = slurmkit(laptop, "fetch", job_id)
    line = one_error_line(result)
    assert line == (f"error: {mine} is a regular file here where a folder of the job arrives: nothing was fetched; "
                    "move it away, or fetch into another folder with --to"), line
    assert "fetched" not in result.stdout and mine.read_text() == "a local file of mine\n"
    assert not (spec.parent / "logs" / f"{job_id}.exit").exists()   # nothing transferred
    mine.rename(tmp_path / "moved")
    for _ in range(2):
        again = slurmkit(laptop, "fetch", job_id)
        assert again.returncode == 0, again.stdout + again.stderr
        assert (mine / "count.txt").read_text() == "42\n"
