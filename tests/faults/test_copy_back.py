"""Copy-back under faults (an immutable or full destination, a kill mid-save, the time limit), on
the real local cluster: jobs submitted through slurmkit, the outcome read from sacct and from the
job's exit file.

Proved on Debian's Slurm 22.05; nothing used here (sacct's State and ExitCode, --signal=B:USR1,
scancel --signal=KILL, afterany) differs in the Alliance's 23.x/24.x.
"""

import subprocess
import time
from pathlib import Path

import yaml

from slurmkit import Job
from tests.integration.slurm import CLI, near_its_time_limit, wait_for_job, wait_until
from tests.unit.test_copy_back import checkpoint_every

from .conftest import immutable, node_pids, on_node, small_filesystem

MAKE_OUT = "mkdir -p $$SLURM_TMPDIR/out && for i in 1 2 3 4 5; do head -c 40000 /dev/urandom > $$SLURM_TMPDIR/out/f$$i; done"


def _job(tmp_path, name="cb", **fields):
    spec = {"name": name, "profile": "local", "account": "def-test", "resources": {"time": "5m"}, **fields}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return Job.from_yaml(path)


def _ended(handle, timeout=120):
    """sacct's row for the job once it has ended, and the lines of its exit file."""
    row = wait_for_job(handle.job_id, timeout)
    exit_file = Path(handle.paths.folder) / f"{handle.job_id}.exit"
    deadline = time.monotonic() + 10
    while not exit_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    return row, exit_file.read_text().splitlines()


def test_an_immutable_destination_ends_failed_74_and_the_exit_file_says_operation_not_permitted(cluster, registry, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    with immutable(locked):
        handle = _job(tmp_path, stage={"outputs": [{"from": "out", "to": "locked/out"}]},
                      launch={"command": ["bash", "-c", MAKE_OUT]}).submit()
        row, lines = _ended(handle)
    assert (row["State"], row["ExitCode"]) == ("FAILED", "74:0")
    assert lines[0] == "74"
    state, destination, reason = lines[1].split("\t")
    assert (state, destination) == ("not-saved", f"{tmp_path}/locked/out")
    assert reason.startswith("cp: cannot create") and reason.endswith("Operation not permitted")
    assert f"slurmkit: NOT saved: {tmp_path}/locked/out: {reason}" in handle.stderr()
    assert list(locked.iterdir()) == []


def test_a_full_destination_ends_failed_74_no_space_and_the_previous_copy_stays_whole(cluster, registry, tmp_path):
    with small_filesystem(cluster, "64k") as full:
        for node in node_pids(cluster):          # a previous run's output, on every node's filesystem
            on_node(cluster, node, "sh", "-c", f"mkdir {full}/out && echo previous > {full}/out/old")
        handle = _job(tmp_path, stage={"outputs": [{"from": "out", "to": f"{full}/out"}]},
                      launch={"command": ["bash", "-c", MAKE_OUT]}).submit()
        row, lines = _ended(handle)
        left = on_node(cluster, row["NodeList"], "sh", "-c", f"ls -A {full}; cat {full}/out/old").stdout
    assert (row["State"], row["ExitCode"]) == ("FAILED", "74:0"), (row, lines, handle.stderr())
    assert lines[0] == "74"
    state, destination, reason = lines[1].split("\t")
    assert (state, destination) == ("not-saved", f"{full}/out")
    assert reason.endswith("No space left on device"), reason
    assert left == "out\nprevious\n"             # no partial copy left, the previous output untouched


# The first periodic save goes through; the second stops half-way (some files copied) and hangs,
# so that the job is killed in the middle of it. Later saves (the next link's) go through.
STALLING_CP = """#!/bin/bash
case "${@: -1}" in
*/ckpt) ;;              # the resume, into $SLURM_TMPDIR
*)
    echo x >> SAVES
    if [ "$(wc -l < SAVES)" = 2 ]; then
        /bin/cp "$@"
        rm -f "${@: -1}/big"
        touch STALLED
        exec sleep 300
    fi;;
esac
exec /bin/cp "$@"
"""

RESUMING = ("step=$$(cat $$SLURM_TMPDIR/ckpt/step 2>/dev/null || echo 0); echo resumed at $$step; "
            "if [ $$step = 0 ]; then echo 1 > $$SLURM_TMPDIR/ckpt/step; head -c 300000 /dev/urandom > $$SLURM_TMPDIR/ckpt/big; "
            "sleep 3; echo 2 > $$SLURM_TMPDIR/ckpt/step; sleep 300; else echo $$((step + 1)) > $$SLURM_TMPDIR/ckpt/step; fi")


def test_a_job_killed_during_a_checkpoint_save_leaves_the_previous_checkpoint_and_the_next_link_resumes(
        cluster, registry, tmp_path, monkeypatch):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "cp").write_text(STALLING_CP.replace("SAVES", str(tmp_path / "saves")).replace("STALLED", str(tmp_path / "stalled")))
    (fake / "cp").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")     # sbatch exports it to the job
    job = _job(tmp_path, resources={"time": "2m"}, resubmit={"max_links": 2},
               stage={"checkpoint": {"from": "ckpt", "to": "saved"}, "lead": "30s"},
               launch={"command": ["bash", "-c", RESUMING]})
    chain = checkpoint_every(job, 2).submit()  # a save every 2 s: below what a spec may ask
    first, second = chain.links
    deadline = time.monotonic() + 90
    while not (tmp_path / "stalled").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (tmp_path / "stalled").exists(), first.stderr()
    # Mid-save: the half-made copy sits beside the checkpoint, which is still the first save, whole.
    assert [p.name for p in tmp_path.glob("saved.partial-*")] == [f"saved.partial-{first.job_id}"]
    assert (tmp_path / "saved" / "step").read_text() == "1\n" and (tmp_path / "saved" / "big").stat().st_size == 300000
    # SIGKILL to every process of the batch step at once, as a node crash: no trap runs. (Without
    # --batch, scancel --signal=KILL cancels the job the usual way: TERM first, and the trap saves.)
    subprocess.run(["scancel", "--batch", "--signal=KILL", first.job_id], check=True)
    killed = wait_for_job(first.job_id, 60)
    row = wait_for_job(second.job_id, 120)
    assert killed["State"] != "COMPLETED", (killed, first.stderr())
    assert (row["State"], row["ExitCode"]) == ("COMPLETED", "0:0"), second.stderr()
    assert second.stdout().strip() == "resumed at 1", (killed, first.stderr())
    assert (tmp_path / "saved" / "step").read_text() == "2\n"
    assert sorted(p.name for p in (tmp_path / "saved").iterdir()) == [".slurmkit-chain-done", "big", "step"]
    assert list(tmp_path.glob("saved.*")) == []           # the killed job's partial was removed on resume


PRODUCER = ("mkdir -p $$SLURM_TMPDIR/results; for i in $$(seq 1 100); do echo $$i > $$SLURM_TMPDIR/results/r$$i; done; "
            "echo produced; sleep 600")


def _at_its_limit_once_produced(handle):
    """The job's time limit brought near once its payload has said ``produced``: SLURM's signal
    to save can come at any time in a job of a one-minute limit, before the payload has begun
    (near_its_time_limit), and the save is tested on what the payload wrote."""
    wait_until(lambda: "produced" in (handle.stdout() or ""), "the payload's 'produced'", job_id=handle.job_id)
    near_its_time_limit(handle.job_id)


def test_at_a_real_time_limit_the_outputs_come_back_and_the_exit_file_says_timeout(cluster, registry, tmp_path):
    handle = _job(tmp_path, resources={"time": "10m"}, stage={"outputs": [{"from": "results", "to": "saved"}], "lead": "30s"},
                  launch={"command": ["bash", "-c", PRODUCER]}).submit()
    _at_its_limit_once_produced(handle)
    row, lines = _ended(handle, 300)
    assert lines == ["124", "timeout", f"saved\t{tmp_path}/saved"]
    assert row["State"] == "TIMEOUT", (row, handle.stderr())   # SLURM ended it at its limit, after the save
    assert sorted(p.name for p in (tmp_path / "saved").iterdir()) == sorted(f"r{i}" for i in range(1, 101))


def test_the_gpu_kinds_save_at_a_real_time_limit_ends_as_timeout_in_sacct_with_its_outputs_back(cluster, registry, tmp_path):
    """Proved on Slurm 22.05.8 (the local cluster): the time-limit save of every kind (one rule in
    the runtime, here the gpu kind) writes the exit file, then waits for SLURM to end the job at
    its limit, so that sacct says TIMEOUT, never FAILED 124. (A job ended by SLURM at its limit is
    TIMEOUT however its shell then exits: the same in 23.x/24.x.)"""
    handle = _job(tmp_path, kind="gpu", resources={"time": "10m", "gpus": "p100:1"}, monitor={"gpu": False},
                  stage={"outputs": [{"from": "results", "to": "saved"}], "lead": "20s"},
                  launch={"command": ["bash", "-c", PRODUCER]}).submit()
    _at_its_limit_once_produced(handle)
    row, lines = _ended(handle, 300)
    assert (row["State"], lines) == ("TIMEOUT", ["124", "timeout", f"saved\t{tmp_path}/saved"]), handle.stderr()
    assert sorted(p.name for p in (tmp_path / "saved").iterdir()) == sorted(f"r{i}" for i in range(1, 101))
    assert "for SLURM to end the job at its time limit (sacct: TIMEOUT)" in handle.stderr()


def test_a_signal_to_save_before_the_payload_started_runs_nothing_and_status_says_why_no_output_came(cluster, registry, tmp_path):
    """Proved on Slurm 22.05: SLURM sends the --signal=B:USR1@30 of a one-minute job at its first
    time-limit check, which can come before the payload starts (here the setup waits for it, as a
    slow module load would): the payload does not start, the job ends TIMEOUT at its limit, and
    status names each output as not saved and why, never a bare timeout."""
    handle = _job(tmp_path, resources={"time": "1m"}, stage={"outputs": [{"from": "results", "to": "saved"}], "lead": "30s"},
                  environment={"setup": "sleep 300 & wait $!"}, launch={"command": ["touch", "ran"]}).submit()
    row, lines = _ended(handle, 300)
    why = ("the time limit's signal (USR1) came before the payload started, so it did not run: "
           "SLURM may send it up to 60 s before stage.lead")
    assert (row["State"], lines) == ("TIMEOUT", ["124", "timeout", f"not-saved\t{tmp_path}/saved\t{why}"]), handle.stderr()
    assert not (tmp_path / "ran").exists() and not (tmp_path / "saved").exists()
    shown = subprocess.run([*CLI, "status", handle.job_id], capture_output=True, text=True, timeout=120)
    assert f"NOT saved: {tmp_path}/saved: {why}" in shown.stdout, shown


# The payload of a job at a real time limit that ignores TERM and writes a file every 50 ms until
# it is killed, as a program still writing at its limit does (it says `produced` at its 21st).
STUBBORN = ("trap '' TERM; i=0; mkdir -p $$SLURM_TMPDIR/out; "
            "while :; do i=$$((i+1)); echo $$i > $$SLURM_TMPDIR/out/f$$i; [ $$i != 21 ] || echo produced; sleep 0.05; done")


def test_at_a_real_time_limit_a_payload_that_ignores_term_is_killed_and_every_file_it_wrote_is_saved(cluster, registry, tmp_path):
    handle = _job(tmp_path, resources={"time": "10m"}, stage={"outputs": [{"from": "out", "to": "saved"}], "lead": "20s"},
                  launch={"command": ["bash", "-c", STUBBORN]}).submit()
    _at_its_limit_once_produced(handle)
    row, lines = _ended(handle, 300)
    assert lines == ["124", "timeout", "killed", f"saved\t{tmp_path}/saved"], handle.stderr()
    names = {p.name for p in (tmp_path / "saved").iterdir()}
    # Every file it wrote until the kill: f1..fN with no gap, each whole (the payload is dead
    # before the copy, so the copy checks at the first try).
    assert len(names) > 20 and names == {f"f{i}" for i in range(1, len(names) + 1)}
    # (the last may be empty: the KILL can land between its open and its write)
    assert all((tmp_path / "saved" / f"f{i}").read_text() == f"{i}\n" for i in range(1, len(names)))
    assert "trying once more" not in handle.stderr()
    assert list(tmp_path.glob("saved.partial-*")) == []


def test_a_batch_shell_killed_before_it_could_save_leaves_a_started_file_naming_what_was_not_saved(cluster, registry, tmp_path):
    # SIGKILL to the batch shell alone (the OOM killer's choice, a node's cleanup): no trap runs,
    # no exit file is written; the started file says what this run was to save.
    handle = _job(tmp_path, stage={"outputs": [{"from": "out", "to": "saved"}]},
                  launch={"command": ["bash", "-c", "mkdir -p $$SLURM_TMPDIR/out; echo 1 > $$SLURM_TMPDIR/out/f; sleep 90"]}).submit()
    started = Path(handle.paths.folder) / f"{handle.job_id}.started"
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert started.read_text().splitlines() == ["run\t1", f"output\t{tmp_path}/saved"]
    subprocess.run(["scancel", "--batch", "--signal=KILL", handle.job_id], check=True)
    row = wait_for_job(handle.job_id, 60)
    assert row["State"] != "COMPLETED"
    assert not (Path(handle.paths.folder) / f"{handle.job_id}.exit").exists()
    assert not (tmp_path / "saved").exists()
    shown = subprocess.run([*CLI, "status", handle.job_id], capture_output=True, text=True, timeout=120)
    assert f"outputs NOT saved: the batch shell was killed before it could save (run 1): {tmp_path}/saved" in shown.stdout, shown


def test_at_a_real_time_limit_srun_tasks_that_ignore_term_are_ended_with_their_step(cluster, registry, tmp_path):
    # The tasks of an srun step are not below the batch shell, so a KILL to the tree would miss
    # them: the TERM to srun ends them (srun kills its step), before the copy.
    handle = _job(tmp_path, kind="mpi", resources={"time": "10m", "tasks_per_node": 1},
                  stage={"outputs": [{"from": "out", "to": "saved"}], "lead": "20s"},
                  launch={"command": ["bash", "-c", STUBBORN]}).submit()
    _at_its_limit_once_produced(handle)
    row, lines = _ended(handle, 300)
    # srun answers the TERM by killing its step itself (22.05: "forcing job termination"), so the
    # batch shell may not need its KILL; either way the step is gone before the copy.
    assert lines in (["124", "timeout", f"saved\t{tmp_path}/saved"], ["124", "timeout", "killed", f"saved\t{tmp_path}/saved"]), \
        handle.stderr()
    names = {p.name for p in (tmp_path / "saved").iterdir()}
    assert len(names) > 20 and names == {f"f{i}" for i in range(1, len(names) + 1)}
    assert "trying once more" not in handle.stderr()


def test_an_output_to_a_missing_folder_named_with_a_slash_is_made_and_saved(cluster, registry, tmp_path):
    """`to: results/run/` is the folder results/run, made with its parents, not a place inside it."""
    handle = _job(tmp_path, stage={"outputs": [{"from": "out", "to": "results/run/"}]},
                  launch={"command": ["bash", "-c", MAKE_OUT]}).submit()
    row, lines = _ended(handle)
    assert (row["State"], row["ExitCode"]) == ("COMPLETED", "0:0"), (row, lines, handle.stderr())
    assert lines == ["0", f"saved\t{tmp_path}/results/run"]
    assert sorted(p.name for p in (tmp_path / "results" / "run").iterdir()) == ["f1", "f2", "f3", "f4", "f5"]
