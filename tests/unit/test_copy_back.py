"""The rendered script's copy-back, run with bash: each save is checked, retried once, swapped
in (an output's files join its destination, a checkpoint replaces the previous one whole),
and its outcome written to the exit file (the contract of docs/templates.md).

The whole rendered script of a small serial job runs here, with SLURM's variables set by hand
and, where a test needs one, a fake ``cp`` first on PATH. The same faults on the real cluster
(an immutable folder, a full filesystem, a job killed mid-save, a true time limit) are in
tests/faults/test_copy_back.py. Nothing here depends on the Slurm version.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import time

import pytest

from slurmkit import Job
from slurmkit.render.runtime import runtime, write_runtime

BASH = shutil.which("bash")
REAL_CP = shutil.which("cp")
MAKE_OUT = "mkdir -p $$SLURM_TMPDIR/out && for i in 1 2 3 4 5; do head -c 20000 /dev/zero > $$SLURM_TMPDIR/out/f$$i; done"


def _render(tmp_path, command, every_s=None, **stage):
    stage.setdefault("outputs", [{"from": "out", "to": "saved/out"}])
    job = Job(name="cb", profile="local", account="def-x", resources={"time": "1h"},
              launch={"command": ["bash", "-c", command]}, stage=stage)
    if every_s is not None:
        job = checkpoint_every(job, every_s)
    script = tmp_path / "job.sh"
    script.write_text(job.render(warn=False))
    return script


def checkpoint_every(job, seconds: int):
    """``job`` with a checkpoint period shorter than a spec may ask (at least 1 minute), so that
    a test sees several periodic saves in seconds: the script's loop is the same at any period."""
    stage = job.spec.stage
    return Job(job.spec._replace(stage=stage._replace(checkpoint=stage.checkpoint._replace(every_s=seconds))))


class Run:
    def __init__(self, tmp_path):
        self.root = tmp_path
        self.submit = tmp_path / "submit"
        self.node = tmp_path / "node"
        self.jobs = tmp_path / "jobs"
        self.bin = tmp_path / "bin"
        for folder in (self.submit, self.node, self.jobs, self.bin):
            folder.mkdir()
        write_runtime(self.submit)   # as slurmkit submit writes it (the script looks in $SLURM_SUBMIT_DIR first)
        (self.bin / "module").write_text("#!/bin/sh\n")    # the local profile loads modules; none here
        (self.bin / "module").chmod(0o755)
        # A USR1 sent here comes by hand, a day before the job's limit: the job ends at once (no squeue:
        # the time left would be estimated from the lead, and the job would wait for SLURM's TERM).
        (self.bin / "squeue").write_text("#!/bin/sh\necho 1-00:00:00\n")
        (self.bin / "squeue").chmod(0o755)

    @property
    def env(self):
        return {"PATH": f"{self.bin}:/usr/bin:/bin", "SLURM_TMPDIR": str(self.node), "SLURM_SUBMIT_DIR": str(self.submit),
                "SLURM_JOB_ID": "42", "SLURMKIT_JOB_DIR": str(self.jobs), "HOME": str(self.root)}

    def fake_cp(self, body):
        """A ``cp`` first on PATH; ``$REAL_CP`` is the real one, ``$CALLS`` counts the calls."""
        (self.bin / "cp").write_text(f"#!/bin/bash\nREAL_CP={REAL_CP}\necho x >> {self.root}/cp-calls\n"
                                     f"CALLS=$(wc -l < {self.root}/cp-calls)\n{body}\n")
        (self.bin / "cp").chmod(0o755)

    def start(self, script):
        return subprocess.Popen([BASH, str(script)], env=self.env, cwd=self.submit, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def __call__(self, script):
        process = self.start(script)
        out, err = process.communicate(timeout=60)
        return process.returncode, err

    def exit_lines(self):
        return (self.jobs / "42.exit").read_text().splitlines()

    def leftovers(self):
        return sorted(p.name for p in self.submit.rglob("*") if ".partial-" in p.name or p.name.endswith(".slurmkit-old"))


@contextlib.contextmanager
def unwritable(folder):
    """Nothing can be created in ``folder``: ``chattr +i`` as root (as on the cluster), else mode 0555."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    else:
        folder.chmod(0o555)
    try:
        yield "Operation not permitted" if os.geteuid() == 0 else "Permission denied"
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


def test_outputs_that_arrive_whole_are_saved_and_listed_in_the_exit_file(tmp_path):
    run = Run(tmp_path)
    rc, err = run(_render(tmp_path, MAKE_OUT))
    assert rc == 0, err
    assert run.exit_lines() == ["0", f"saved\t{run.submit}/saved/out"]
    assert sorted(p.name for p in (run.submit / "saved" / "out").iterdir()) == ["f1", "f2", "f3", "f4", "f5"]
    assert run.leftovers() == []


def test_an_unwritable_destination_is_not_saved_the_job_exits_74_and_says_why(tmp_path):
    run = Run(tmp_path)
    (run.submit / "saved").mkdir()
    with unwritable(run.submit / "saved") as errno_text:
        rc, err = run(_render(tmp_path, MAKE_OUT))
    assert rc == 74
    code, line = run.exit_lines()
    assert code == "74"
    state, destination, reason = line.split("\t")
    assert (state, destination) == ("not-saved", f"{run.submit}/saved/out")
    assert reason.startswith("cp: cannot create") and reason.endswith(errno_text)
    assert f"slurmkit: NOT saved: {run.submit}/saved/out: {reason}" in err.splitlines()
    assert "trying once more" in err
    assert list((run.submit / "saved").iterdir()) == []


def test_a_short_copy_is_caught_by_the_check_and_the_previous_destination_stays_whole(tmp_path):
    run = Run(tmp_path)
    previous = run.submit / "saved" / "out"
    previous.mkdir(parents=True)
    (previous / "old").write_text("the previous run\n")
    # A copy that says it succeeded but left two files out and cut another short, as a full disk can.
    run.fake_cp('"$REAL_CP" "$@" || exit; d=${@: -1}; rm -f "$d/f4" "$d/f5"; truncate -s 4096 "$d/f3"')
    rc, err = run(_render(tmp_path, MAKE_OUT))
    assert rc == 74, err
    kept = run.submit / "saved" / "out.partial-42"
    assert run.exit_lines()[1:] == [f"not-saved\t{previous}\t3 of 5 files, 43.1 KiB of 97.7 KiB arrived", f"kept\t{previous}\t{kept}"]
    assert sorted(p.name for p in previous.iterdir()) == ["old"]
    # What arrived of the final copy is kept beside the destination, never deleted, with its manifest.
    assert run.leftovers() == ["out.partial-42", "out.partial-42.manifest"]
    manifest = (run.submit / "saved" / "out.partial-42.manifest").read_text().splitlines()
    assert manifest[0].startswith("# slurmkit: what arrived of ") and manifest[0].endswith("(3 of 5 files, 43.1 KiB of 97.7 KiB arrived)")
    assert manifest[1:] == ["20000\tf1", "20000\tf2", "4096\tf3"]
    assert f"slurmkit: what arrived is kept at {kept} (listed in {kept}.manifest)" in err


def test_a_save_that_fails_once_is_tried_again_and_saved(tmp_path):
    run = Run(tmp_path)
    run.fake_cp('if [ "$CALLS" = 1 ]; then echo "cp: error writing \'x\': Input/output error" >&2; exit 1; fi\nexec "$REAL_CP" "$@"')
    rc, err = run(_render(tmp_path, MAKE_OUT))
    assert rc == 0, err
    assert "failed (cp: error writing 'x': Input/output error): trying once more" in err
    assert run.exit_lines() == ["0", f"saved\t{run.submit}/saved/out"]
    assert len((tmp_path / "cp-calls").read_text().splitlines()) == 2
    assert run.leftovers() == []


def test_an_outputs_files_join_its_destination_and_what_else_is_there_stays(tmp_path):
    """Outputs merge, as `cp -r` into a results folder always did: a later job (or chain link)
    never deletes an earlier one's results; a file of the same name is replaced whole."""
    run = Run(tmp_path)
    (run.submit / "saved" / "out").mkdir(parents=True)
    (run.submit / "saved" / "out" / "earlier").write_text("from before\n")
    (run.submit / "saved" / "out" / "f1").write_text("an older f1\n")
    rc, err = run(_render(tmp_path, MAKE_OUT))
    assert rc == 0, err
    assert sorted(p.name for p in (run.submit / "saved" / "out").iterdir()) == ["earlier", "f1", "f2", "f3", "f4", "f5"]
    assert (run.submit / "saved" / "out" / "f1").stat().st_size == 20000
    assert (run.submit / "saved" / "out" / "earlier").read_text() == "from before\n"
    assert run.leftovers() == []


def test_a_folder_output_never_replaces_a_file_of_the_same_name(tmp_path):
    run = Run(tmp_path)
    (run.submit / "saved").mkdir()
    (run.submit / "saved" / "out").write_text("a file the user keeps\n")
    rc, err = run(_render(tmp_path, MAKE_OUT))
    assert rc == 74, err
    assert run.exit_lines()[1] == f"not-saved\t{run.submit}/saved/out\t{run.submit}/saved/out is a file: a folder does not replace it"
    assert (run.submit / "saved" / "out").read_text() == "a file the user keeps\n"
    assert run.leftovers() == []


def test_a_failed_payload_keeps_its_code_and_the_exit_file_still_says_what_was_lost(tmp_path):
    run = Run(tmp_path)
    (run.submit / "saved").mkdir()
    with unwritable(run.submit / "saved"):
        rc, _ = run(_render(tmp_path, MAKE_OUT + " && exit 3"))
    assert rc == 3
    assert run.exit_lines()[0] == "3" and run.exit_lines()[1].startswith("not-saved\t")


def test_an_output_the_job_never_wrote_is_not_saved(tmp_path):
    run = Run(tmp_path)
    rc, _ = run(_render(tmp_path, "true"))
    assert rc == 74
    assert run.exit_lines() == ["74", f"not-saved\t{run.submit}/saved/out\tthe job left nothing at {run.node}/out"]


def test_the_output_folder_is_there_for_the_payload_to_write_into(tmp_path):
    run = Run(tmp_path)
    rc, err = run(_render(tmp_path, "echo r > $$SLURM_TMPDIR/out/r"))
    assert rc == 0, err
    assert run.exit_lines() == ["0", f"saved\t{run.submit}/saved/out"]
    assert (run.submit / "saved" / "out" / "r").read_text() == "r\n"


def test_usr1_at_the_time_limit_saves_the_outputs_exits_124_and_says_timeout(tmp_path):
    run = Run(tmp_path)
    process = run.start(_render(tmp_path, MAKE_OUT + " && touch $$SLURM_TMPDIR/ready && sleep 60"))
    deadline = time.monotonic() + 30
    while not (run.node / "ready").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGUSR1)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 124, err
    assert run.exit_lines() == ["124", "timeout", f"saved\t{run.submit}/saved/out"]
    assert len(list((run.submit / "saved" / "out").iterdir())) == 5


CHECKPOINTED = ("cat $$SLURM_TMPDIR/ckpt/step 2>/dev/null || echo none; mkdir -p $$SLURM_TMPDIR/out; "
                "echo 2 > $$SLURM_TMPDIR/ckpt/step; touch $$SLURMKIT_CHECKPOINT_COMPLETE; echo done > $$SLURM_TMPDIR/out/r")


def test_the_checkpoint_is_swapped_in_and_the_exit_file_lists_it(tmp_path):
    run = Run(tmp_path)
    (run.submit / "ck").mkdir()
    (run.submit / "ck" / "step").write_text("1\n")
    process = run.start(_render(tmp_path, CHECKPOINTED, checkpoint={"from": "ckpt", "to": "ck", "every": "1h"}))
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out) == (0, "1\n"), err
    assert (run.submit / "ck" / "step").read_text() == "2\n"
    assert run.exit_lines() == ["0", f"saved\t{run.submit}/saved/out", f"saved\t{run.submit}/ck"]
    assert run.leftovers() == []


# A program that marks step 1 complete, waits for it to be saved, then begins step 2 and ends
# before it marks it: a checkpoint half-written, as a torch.save cut short.
HALF_WRITTEN = ("echo 1 > $$SLURM_TMPDIR/ckpt/step; touch $$SLURMKIT_CHECKPOINT_COMPLETE; "
                "until [ -e $$SLURM_SUBMIT_DIR/ck/step ]; do sleep 0.1; done; sleep 0.1; "
                "echo half > $$SLURM_TMPDIR/ckpt/step; sleep 2.5; mkdir -p $$SLURM_TMPDIR/out; echo r > $$SLURM_TMPDIR/out/r")


def test_a_half_written_checkpoint_does_not_replace_the_last_whole_one(tmp_path):
    """Written after its completion marker: neither the periodic copies (every second here) nor
    the final one put it in place; the last whole copy stays, and the exit file says why."""
    run = Run(tmp_path)
    script = _render(tmp_path, HALF_WRITTEN, every_s=1, checkpoint={"from": "ckpt", "to": "ck", "every": "1h"})
    rc, err = run(script)
    assert (run.submit / "ck" / "step").read_text() == "1\n", err
    assert rc == 74, err
    assert run.exit_lines() == ["74", f"saved\t{run.submit}/saved/out",
                                f"not-saved\t{run.submit}/ck\tnot marked complete: step was written after .slurmkit-complete "
                                "(a checkpoint being written): the previous whole copy stays"]
    assert run.leftovers() == []


def test_a_checkpoint_replaces_the_previous_one_whole(tmp_path):
    """A file the program deleted from its checkpoint does not come back from the saved copy."""
    run = Run(tmp_path)
    (run.submit / "ck").mkdir()
    (run.submit / "ck" / "old-shard").write_text("deleted by the program\n")
    command = "rm $$SLURM_TMPDIR/ckpt/old-shard && echo 2 > $$SLURM_TMPDIR/ckpt/step && echo r > $$SLURM_TMPDIR/out/r"
    rc, err = run(_render(tmp_path, command, checkpoint={"from": "ckpt", "to": "ck", "every": "1h"}))
    assert rc == 0, err
    assert sorted(p.name for p in (run.submit / "ck").iterdir()) == ["step"]
    assert run.leftovers() == []


def test_a_crash_between_the_two_renames_resumes_from_the_previous_checkpoint(tmp_path):
    run = Run(tmp_path)
    (run.submit / "ck.slurmkit-old").mkdir()           # ck was moved aside, the new copy never took its place
    (run.submit / "ck.slurmkit-old" / "step").write_text("1\n")
    (run.submit / "ck.partial-41").mkdir()             # and a killed job's half-made copy
    (run.submit / "ck.partial-41" / "step").write_text("")
    process = run.start(_render(tmp_path, CHECKPOINTED, checkpoint={"from": "ckpt", "to": "ck", "every": "1h"}))
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out) == (0, "1\n"), err
    assert (run.submit / "ck" / "step").read_text() == "2\n"
    assert run.leftovers() == []


def test_a_failed_final_checkpoint_save_leaves_the_previous_one_and_no_chain_marker(tmp_path):
    run = Run(tmp_path)
    (run.submit / "ck").mkdir()
    (run.submit / "ck" / "step").write_text("1\n")
    job = Job(name="cb", profile="local", account="def-x", resources={"time": "1h"}, resubmit={"max_links": 2},
              launch={"command": ["bash", "-c", CHECKPOINTED]},
              stage={"checkpoint": {"from": "ckpt", "to": "ck", "every": "1h"}, "lead": "60s"})
    script = tmp_path / "job.sh"
    script.write_text(job.render(warn=False))
    with unwritable(run.submit):
        rc, err = run(script)
    assert rc == 74, err
    assert (run.submit / "ck" / "step").read_text() == "1\n"
    assert sorted(p.name for p in (run.submit / "ck").iterdir()) == ["step"]   # no .slurmkit-chain-done


def test_the_periodic_checkpoint_save_is_stopped_before_the_final_one(tmp_path):
    """Every save records its start and end; with a save every second and a slow cp, none may overlap."""
    run = Run(tmp_path)
    log = tmp_path / "saves"
    run.fake_cp(f'case "${{@: -1}}" in *.partial-*) echo start >> {log}; sleep 0.7; "$REAL_CP" "$@"; s=$?; '
                f'echo end >> {log}; exit $s;; esac\n'
                'exec "$REAL_CP" "$@"')
    script = _render(tmp_path, "mkdir -p $$SLURM_TMPDIR/out; echo 1 > $$SLURM_TMPDIR/ckpt/x; sleep 2.5; echo r > $$SLURM_TMPDIR/out/r",
                     checkpoint={"from": "ckpt", "to": "ck"}, every_s=1)
    rc, err = run(script)
    assert rc == 0, err
    events = log.read_text().split()
    assert events == ["start", "end"] * (len(events) // 2) and len(events) >= 6   # periodic ones, then the two finals
    assert run.leftovers() == []


@pytest.mark.parametrize("size, text", [(0, "0 B"), (1023, "1023 B"), (65536, "64 KiB"), (1 << 20, "1 MiB"), (1536 << 20, "1.5 GiB"),
                                        (1048474, "1023.9 KiB")])
def test_sizes_in_a_reason_read_as_a_person_would_write_them(tmp_path, size, text):
    script = runtime().text
    start = script.index("_sk_bytes() {")
    function = script[start:script.index("\n}\n", start) + 3]
    result = subprocess.run([BASH, "-c", f"{function}_sk_bytes {size}"], capture_output=True, text=True, check=True)
    assert result.stdout == f"{text}\n"


def test_a_python_callables_setup_restores_its_checkpoint_with_the_save_functions_it_calls(tmp_path):
    """submit_function() runs the environment part of the script (setup.sh.j2) without its traps;
    its checkpoint restore calls _sk_recover, so the save functions must be there too."""
    from slurmkit.api.functions import setup_lines

    run = Run(tmp_path)
    (run.submit / "ck.slurmkit-old").mkdir()
    (run.submit / "ck.slurmkit-old" / "step").write_text("1\n")
    job = Job(name="cb", profile="local", account="def-x", resources={"time": "1h"}, launch="true",
              stage={"checkpoint": {"from": "ckpt", "to": "ck", "every": "1h"}})
    lines = "\n".join(setup_lines(job.resolve().plan))
    result = subprocess.run([BASH, "-c", f"set -euo pipefail\n{lines}\nkill \"$_sk_sync\"\n"], env=run.env, cwd=run.submit,
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert (run.node / "ckpt" / "step").read_text() == "1\n"


def test_array_tasks_outputs_join_one_folder_and_each_task_keeps_its_own_checkpoint(tmp_path):
    """A checkpoint replaces its destination whole, so each task's is DEST/<task>; outputs join."""
    run = Run(tmp_path)
    job = Job(name="cb", profile="local", account="def-x", kind="array", resources={"time": "1h"},
              array={"parameters": {"lr": ["0.1", "0.01"]}},
              stage={"outputs": [{"from": "out", "to": "sweep"}], "checkpoint": {"from": "ckpt", "to": "ck", "every": "1h"}},
              launch={"command": ["bash", "-c", "mkdir -p $$SLURM_TMPDIR/out && echo $$lr > $$SLURM_TMPDIR/out/lr-$$SLURM_ARRAY_TASK_ID"
                                  " && echo $$lr > $$SLURM_TMPDIR/ckpt/state"]})
    script = tmp_path / "job.sh"
    script.write_text(job.render(warn=False))
    for task in ("0", "1"):
        env = {**run.env, "SLURM_ARRAY_JOB_ID": "40", "SLURM_ARRAY_TASK_ID": task, "SLURM_JOB_ID": f"4{task}"}
        result = subprocess.run([BASH, str(script)], env=env, cwd=run.submit, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        # (its program marks no checkpoint complete: saved, and said to be unmarked)
        assert (run.jobs / f"40_{task}.exit").read_text() == \
            f"0\nsaved\t{run.submit}/sweep\nunmarked\t{run.submit}/ck/{task}\nsaved\t{run.submit}/ck/{task}\n"
    assert [(run.submit / "sweep" / f"lr-{t}").read_text() for t in ("0", "1")] == ["0.1\n", "0.01\n"]
    assert [(run.submit / "ck" / t / "state").read_text() for t in ("0", "1")] == ["0.1\n", "0.01\n"]


@pytest.mark.parametrize("to", [".", "..", "results/..", "/"])
def test_a_destination_that_is_the_specs_folder_or_above_is_refused(to):
    job = Job(name="cb", profile="local", account="def-x", resources={"time": "1h"}, launch="true",
              stage={"outputs": [{"from": "out", "to": to}]})
    (error,) = job.resolve().errors
    assert error.field == "stage.outputs.0.to"
    assert error.message.endswith("give it a folder of its own (e.g. results), not the spec's folder or one above it")


# A payload that ignores TERM and keeps writing, as a program still writing its last checkpoint
# or one that never looks at signals; its writer is a process below it, which a KILL to the
# payload alone would leave running.
STUBBORN = ("trap '' TERM; mkdir -p $$SLURM_TMPDIR/out; "
            "(trap '' TERM; i=0; while :; do i=$$((i+1)); echo $$i > $$SLURM_TMPDIR/out/f$$i; "
            "[ $$i != 20 ] || touch $$SLURM_TMPDIR/ready; sleep 0.01; done) & wait")


def _wait_for(path, timeout=30):
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path.exists(), f"{path} never appeared"


def _written_in_order(folder):
    """The files f1..fN, each holding its number: every file the payload wrote. (The last may be
    empty: the KILL can land between its open and its write, and the copy is of what is there.)"""
    names = {p.name for p in folder.iterdir()}
    count = len(names)
    assert names == {f"f{i}" for i in range(1, count + 1)}
    assert all((folder / f"f{i}").read_text() == f"{i}\n" for i in range(1, count))
    assert (folder / f"f{count}").read_text() in ("", f"{count}\n")
    return count


def test_at_the_time_limit_a_payload_that_ignores_term_is_killed_and_every_file_it_wrote_is_saved(tmp_path):
    run = Run(tmp_path)
    process = run.start(_render(tmp_path, STUBBORN, lead="2s"))
    _wait_for(run.node / "ready")
    process.send_signal(signal.SIGUSR1)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 124, err
    assert run.exit_lines() == ["124", "timeout", "killed", f"saved\t{run.submit}/saved/out"]
    assert "the payload ran on for 1s after TERM: killing it" in err
    saved = _written_in_order(run.submit / "saved" / "out")
    assert saved == len(list((run.node / "out").iterdir())) > 20     # the writer below it was killed too
    time.sleep(0.3)
    assert len(list((run.node / "out").iterdir())) == saved          # and wrote nothing after


def test_a_payload_that_ends_on_term_is_not_killed(tmp_path):
    run = Run(tmp_path)
    process = run.start(_render(tmp_path, MAKE_OUT + " && touch $$SLURM_TMPDIR/ready && sleep 60", lead="2s"))
    _wait_for(run.node / "ready")
    process.send_signal(signal.SIGUSR1)
    _, err = process.communicate(timeout=60)
    assert run.exit_lines() == ["124", "timeout", f"saved\t{run.submit}/saved/out"]
    assert "killing it" not in err


def test_on_scancel_a_payload_that_ignores_term_is_killed_before_the_copy(tmp_path):
    # scancel (and SLURM at the limit without a lead's USR1) sends TERM to the batch shell and the
    # payload at once; the copy must not race a payload that runs on.
    run = Run(tmp_path)
    process = run.start(_render(tmp_path, STUBBORN, lead="2s"))
    _wait_for(run.node / "ready")
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert run.exit_lines() == ["143", "killed", f"saved\t{run.submit}/saved/out"]
    assert _written_in_order(run.submit / "saved" / "out") == len(list((run.node / "out").iterdir()))


def test_a_requeued_run_says_its_run_number_and_keeps_its_own_partial(tmp_path):
    run = Run(tmp_path)
    run.fake_cp('"$REAL_CP" "$@" || exit; d=${@: -1}; rm -f "$d/f5"')
    env = {**run.env, "SLURM_RESTART_COUNT": "1"}
    process = subprocess.run([BASH, str(_render(tmp_path, MAKE_OUT))], env=env, cwd=run.submit, capture_output=True, text=True,
                             timeout=60)
    assert process.returncode == 74, process.stderr
    kept = run.submit / "saved" / "out.partial-42-run2"
    assert run.exit_lines() == ["74", "run\t2", f"not-saved\t{run.submit}/saved/out\t4 of 5 files, 78.1 KiB of 97.7 KiB arrived",
                                f"kept\t{run.submit}/saved/out\t{kept}"]
    assert sorted(p.name for p in kept.iterdir()) == ["f1", "f2", "f3", "f4"]


def test_the_started_file_names_the_run_and_every_destination_before_the_payload_runs(tmp_path):
    run = Run(tmp_path)
    script = _render(tmp_path, "cat $$SLURMKIT_JOB_DIR/42.started > $$SLURM_SUBMIT_DIR/seen; echo 1 > $$SLURM_TMPDIR/ckpt/s; " + MAKE_OUT,
                     checkpoint={"from": "ckpt", "to": "ck", "every": "1h"})
    rc, err = run(script)
    assert rc == 0, err
    assert (run.submit / "seen").read_text().splitlines() == ["run\t1", f"output\t{run.submit}/saved/out", f"output\t{run.submit}/ck"]


TWO_OUTPUTS = [{"from": "out", "to": "saved/out"}, {"from": "out2", "to": "saved/out2"}]
MAKE_TWO = MAKE_OUT + " && mkdir -p $$SLURM_TMPDIR/out2 && echo 2 > $$SLURM_TMPDIR/out2/g"


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 0), (signal.SIGUSR1, 0)])
def test_a_signal_during_the_final_copy_cuts_nothing_short(tmp_path, sig, code):
    # The payload is done; SLURM's TERM (scancel, the limit) or its USR1 comes while the first
    # output is copied: every output still arrives and the exit file is written.
    run = Run(tmp_path)
    run.fake_cp(f'case "${{@: -1}}" in *.partial-*) touch {tmp_path}/copying; sleep 1;; esac\nexec "$REAL_CP" "$@"')
    process = run.start(_render(tmp_path, MAKE_TWO, outputs=TWO_OUTPUTS))
    _wait_for(tmp_path / "copying")
    process.send_signal(sig)
    _, err = process.communicate(timeout=60)
    assert process.returncode == code, err
    assert run.exit_lines() == [str(code), f"saved\t{run.submit}/saved/out", f"saved\t{run.submit}/saved/out2"]


def test_a_payload_that_ends_on_term_leaves_no_writer_behind_it(tmp_path):
    # The payload itself ends on TERM; a process it started ignores TERM and writes on. It is
    # in the payload's process group, so it is killed before the copy.
    command = ("mkdir -p $$SLURM_TMPDIR/out; (trap '' TERM; i=0; while :; do i=$$((i+1)); echo $$i > $$SLURM_TMPDIR/out/f$$i; "
               "[ $$i != 20 ] || touch $$SLURM_TMPDIR/ready; sleep 0.01; done) & wait")
    run = Run(tmp_path)
    process = run.start(_render(tmp_path, command, lead="2s"))
    _wait_for(run.node / "ready")
    process.send_signal(signal.SIGUSR1)
    _, err = process.communicate(timeout=60)
    assert run.exit_lines() == ["124", "timeout", "killed", f"saved\t{run.submit}/saved/out"], err
    saved = _written_in_order(run.submit / "saved" / "out")
    time.sleep(0.3)
    assert len(list((run.node / "out").iterdir())) == saved


def test_writers_the_payload_keeps_forking_are_all_killed(tmp_path):
    # A new writer every 10 ms: none may be forked between listing and killing the payload's processes.
    command = ("trap '' TERM; mkdir -p $$SLURM_TMPDIR/out; touch $$SLURM_TMPDIR/ready; i=0; "
               "while :; do i=$$((i+1)); (trap '' TERM; sleep 0.05; echo $$i > $$SLURM_TMPDIR/out/f$$i) & sleep 0.01; done")
    run = Run(tmp_path)
    process = run.start(_render(tmp_path, command, lead="2s"))
    _wait_for(run.node / "ready")
    time.sleep(0.2)
    process.send_signal(signal.SIGUSR1)
    _, err = process.communicate(timeout=60)
    assert run.exit_lines()[:3] == ["124", "timeout", "killed"], err
    assert run.exit_lines()[3] == f"saved\t{run.submit}/saved/out", err
    before = {p.name for p in (run.node / "out").iterdir()}
    time.sleep(0.3)
    assert {p.name for p in (run.node / "out").iterdir()} == before == {p.name for p in (run.submit / "saved" / "out").iterdir()}


def test_a_shell_killed_between_two_saves_leaves_the_first_in_the_started_file(tmp_path):
    run = Run(tmp_path)
    pid_file = tmp_path / "shell.pid"
    run.fake_cp(f'case "${{@: -1}}" in *out2.partial-*) until [ -s {pid_file} ]; do sleep 0.05; done; '
                f'kill -KILL "$(cat {pid_file})"; sleep 5;; esac\nexec "$REAL_CP" "$@"')
    process = run.start(_render(tmp_path, MAKE_TWO, outputs=TWO_OUTPUTS))
    pid_file.write_text(str(process.pid))
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL
    assert not (run.jobs / "42.exit").exists()
    assert (run.jobs / "42.started").read_text().splitlines() == [
        "run\t1", f"output\t{run.submit}/saved/out", f"output\t{run.submit}/saved/out2", f"saved\t{run.submit}/saved/out"]


def test_a_program_under_a_wrapper_script_gets_the_term_and_saves_on_it(tmp_path):
    # `bash run.sh` running `python train.py`: the TERM goes to the whole process group, as
    # SLURM's own does, so the program below the wrapper saves its state and nothing is killed.
    command = ("mkdir -p $$SLURM_TMPDIR/out; bash -c 'trap \"echo on-term > $$SLURM_TMPDIR/out/state; exit 0\" TERM; "
               "touch $$SLURM_TMPDIR/ready; while :; do sleep 0.1; done'; echo the wrapper goes on")   # (not its last command: no exec)
    run = Run(tmp_path)
    process = run.start(_render(tmp_path, command, lead="2s"))
    _wait_for(run.node / "ready")
    process.send_signal(signal.SIGUSR1)
    _, err = process.communicate(timeout=60)
    assert run.exit_lines() == ["124", "timeout", f"saved\t{run.submit}/saved/out"], err
    assert (run.submit / "saved" / "out" / "state").read_text() == "on-term\n"
    assert "killing it" not in err


def test_the_checkpoint_of_a_killed_payload_is_kept_beside_the_previous_one_which_stays(tmp_path):
    run = Run(tmp_path)
    (run.submit / "ck").mkdir()
    (run.submit / "ck" / "step").write_text("whole\n")
    command = ("trap '' TERM; echo 1 > $$SLURM_TMPDIR/ckpt/step; touch $$SLURM_TMPDIR/ready; "
               "while :; do head -c 100000 /dev/zero > $$SLURM_TMPDIR/ckpt/model; sleep 0.01; done")
    process = run.start(_render(tmp_path, command, lead="2s", outputs=[], checkpoint={"from": "ckpt", "to": "ck", "every": "1h"}))
    _wait_for(run.node / "ready")
    process.send_signal(signal.SIGUSR1)
    _, err = process.communicate(timeout=60)
    kept = run.submit / "ck.partial-42"
    assert run.exit_lines() == ["124", "timeout", "killed",
                                f"not-saved\t{run.submit}/ck\tthe payload was killed as it ran, so it may be torn; the previous one stays",
                                f"kept\t{run.submit}/ck\t{kept}"], err
    assert (run.submit / "ck" / "step").read_text() == "whole\n" and sorted(p.name for p in (run.submit / "ck").iterdir()) == ["step"]
    assert sorted(p.name for p in kept.iterdir()) == ["model", "step"] and (tmp_path / "submit" / "ck.partial-42.manifest").exists()


@pytest.mark.parametrize("to", ["saved/out/", "saved/out//", "saved/out"])
def test_a_destination_ending_in_a_slash_is_that_folder_made_if_missing_as_without_it(tmp_path, to):
    """`to:` is the folder out's files join (docs/job-spec.md): a trailing `/` names the same
    folder, which is made with its parents when it is not there yet."""
    run = Run(tmp_path)
    rc, err = run(_render(tmp_path, MAKE_OUT, outputs=[{"from": "out", "to": to}]))
    assert rc == 0, err
    assert run.exit_lines() == ["0", f"saved\t{run.submit}/saved/out"]
    assert sorted(p.name for p in (run.submit / "saved" / "out").iterdir()) == ["f1", "f2", "f3", "f4", "f5"]
    assert run.leftovers() == []
