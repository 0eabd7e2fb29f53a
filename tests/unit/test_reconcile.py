"""The one word on a job (monitor.reconcile): what SLURM says, against what the job's exit and
started files say, row by row.

Each row is SLURM's answer (its state, code, signal, the run it is at, which command said it),
the job's exit file, its started file, the controller's word this poll (squeue's state; "" when
it answered without the job; None when it was not asked or did not answer) and how long a
watcher has seen the end (None: one look, as ``status``); then what the job is shown as.
"""

import pytest

from slurmkit.slurm.jobfiles import ExitRecord, StartedRecord, parse_exit_file, parse_started_file
from slurmkit.slurm.monitor import OUTCOME_WAIT_S, SHELL_KILLED, JobStatus, outputs_text, reconcile, verdict, with_exit_record


def slurm(state, code=None, signal=None, runs=1, source="sacct"):
    return JobStatus("7", state, code, signal, 12, "node1", source, runs=runs)


def exited(code, run=1, **more):
    return ExitRecord(code, run=run, **more)


STARTED = StartedRecord(1, ("results",))
KILLED_1 = (f"results: {SHELL_KILLED} (run 1)",)

# id, SLURM's answer, exit file, started file, controller, seen ended for (s) -> expected fields
ROWS = [
    # ---- no SLURM source knows the job: the exit file answers alone
    ("nothing-knows-it", None, None, None, None, None, dict(state="UNKNOWN", done=False)),
    ("file-alone-0", None, exited(0), None, None, None, dict(state="COMPLETED", exit_code=0, source="exit-file", done=True)),
    ("file-alone-143", None, exited(143), None, None, None, dict(state="ENDING", exit_code=None, done=False)),
    # ---- SLURM says the job has not ended
    ("running", slurm("RUNNING"), None, None, None, None, dict(state="RUNNING", exit_code=None, done=False)),
    ("sacct-lags-exit-0", slurm("RUNNING"), exited(0), None, None, None, dict(state="COMPLETED", exit_code=0, done=True, nodes="node1")),
    ("sacct-lags-exit-3", slurm("RUNNING"), exited(3), None, None, None, dict(state="FAILED", exit_code=3, done=True)),
    ("sacct-lags-timeout", slurm("RUNNING"), exited(124, timeout=True, saved=("results",)), None, None, None,
     dict(state="TIMEOUT", exit_code=124, saved=("results",), done=True)),
    ("cancel-completing-143", slurm("COMPLETING", source="squeue"), exited(143), None, "COMPLETING", None,
     dict(state="COMPLETING", done=False)),
    ("sacct-lags-signal-code", slurm("RUNNING"), exited(137), None, None, None, dict(state="ENDING", done=False, nodes="node1")),
    # ---- requeued: SLURM will run the job again, whatever run 1's exit file says
    ("requeued-pending", slurm("PENDING", runs=2, source="squeue"), exited(143), None, "PENDING", None,
     dict(state="PENDING", runs=2, exit_code=None, done=False)),
    ("requeued-accounting", slurm("REQUEUED", runs=2), exited(143), None, None, None, dict(state="REQUEUED", runs=2, done=False)),
    ("requeue-hold", slurm("REQUEUE_HOLD", runs=2), exited(0), None, None, None, dict(state="REQUEUE_HOLD", done=False)),
    ("requeue-completing", slurm("COMPLETING", runs=2, source="squeue"), exited(0), None, "COMPLETING", None,
     dict(state="COMPLETING", done=False)),
    ("run-2-running-old-file-0", slurm("RUNNING", runs=2), exited(0), None, None, None, dict(state="RUNNING", done=False)),
    ("run-2-lags-its-own-file", slurm("RUNNING", runs=2), exited(0, run=2), None, None, None,
     dict(state="COMPLETED", exit_code=0, runs=2, done=True)),
    ("run-2-ended-run-1-file", slurm("FAILED", 1, runs=2), exited(143), None, "", None, dict(state="FAILED", exit_code=1, done=True)),
    ("run-2-ended-its-file", slurm("COMPLETED", 0, runs=2), exited(0, run=2), None, None, None,
     dict(state="COMPLETED", exit_code=0, runs=2, done=True)),
    ("file-of-a-later-run", slurm("COMPLETED", 0, runs=1), exited(0, run=2), None, None, None, dict(state="COMPLETED", runs=2)),
    # ---- an end a requeue may take back: the controller is asked
    ("node-fail-unconfirmed", slurm("NODE_FAIL"), exited(143), None, None, None, dict(state="NODE_FAIL", done=False)),
    ("node-fail-controller-forgot", slurm("NODE_FAIL"), None, None, "", None, dict(state="NODE_FAIL", done=True)),
    ("node-fail-controller-agrees", slurm("NODE_FAIL"), None, None, "NODE_FAIL", None, dict(state="NODE_FAIL", done=True)),
    ("preempted-unconfirmed", slurm("PREEMPTED"), None, None, None, None, dict(state="PREEMPTED", done=False)),
    ("preempted-by-squeue", slurm("PREEMPTED", source="squeue"), None, None, None, None, dict(state="PREEMPTED", done=True)),
    # ---- whose exit code: the job's own file
    ("sacct-0-after-slurmdbd-back", slurm("COMPLETED", 0), exited(3), None, None, None, dict(state="FAILED", exit_code=3, ok=False)),
    ("sacct-exit-9-file-137", slurm("FAILED", 9), exited(137), None, None, None, dict(state="FAILED", exit_code=137, signal=None)),
    ("sacct-signal-9-file-137", slurm("FAILED", None, 9), exited(137), None, None, None,
     dict(state="FAILED", exit_code=137, signal=9)),
    ("sacct-failed-file-0", slurm("FAILED", 1), exited(0), None, None, None, dict(state="COMPLETED", exit_code=0, ok=True)),
    ("cancelled-file-143", slurm("CANCELLED"), exited(143), None, None, None, dict(state="CANCELLED", exit_code=143, signal=15)),
    ("saved-then-124", slurm("FAILED", 124), exited(124, timeout=True, saved=("results",)), None, None, None,
     dict(state="TIMEOUT", exit_code=124, saved=("results",), done=True)),
    ("killed-and-kept", slurm("TIMEOUT"),
     parse_exit_file("124\ntimeout\nrun\t1\nkilled\nnot-saved\tresults\t3 of 5 files arrived\nkept\tresults\tresults.partial-7\n"),
     None, None, None, dict(state="TIMEOUT", killed=True, kept=("results.partial-7",),
                            unsaved=("results: 3 of 5 files arrived; kept at results.partial-7",), ok=False)),
    # ---- an end with outputs but no exit file of its run
    ("one-look-still-completing", slurm("CANCELLED"), None, STARTED, "COMPLETING", None,
     dict(state="CANCELLED", settling="saving its outputs", done=False, exit_code=None)),
    ("one-look-nothing-running", slurm("CANCELLED"), None, STARTED, "", None, dict(state="CANCELLED", unsaved=KILLED_1, done=True)),
    ("one-look-controller-silent", slurm("TIMEOUT"), None, STARTED, None, None, dict(settling="saving its outputs", done=False)),
    ("shell-sigkilled", slurm("FAILED", None, 9), None, STARTED, None, None, dict(unsaved=KILLED_1, signal=9, done=True)),
    ("node-gone", slurm("NODE_FAIL"), None, STARTED, "", None, dict(unsaved=KILLED_1, done=True)),
    ("watch-within-the-wait", slurm("CANCELLED"), None, STARTED, "CANCELLED", 10.0, dict(settling="saving its outputs", done=False)),
    ("watch-controller-forgot-it", slurm("CANCELLED"), None, STARTED, "", 10.0, dict(unsaved=KILLED_1, done=True)),
    ("watch-completing-in-wait", slurm("TIMEOUT"), None, STARTED, "COMPLETING", 10.0, dict(done=False)),
    ("watch-wait-over-completing", slurm("TIMEOUT"), None, STARTED, "COMPLETING", OUTCOME_WAIT_S,
     dict(outputs_unknown=("results",), unsaved=(), done=True, ok=False)),
    ("watch-wait-over-gone", slurm("CANCELLED"), None, STARTED, "CANCELLED", OUTCOME_WAIT_S, dict(unsaved=KILLED_1, done=True)),
    ("started-of-an-earlier-run", slurm("CANCELLED", runs=2), None, STARTED, "", None, dict(unsaved=(), done=True)),
    ("started-without-outputs", slurm("CANCELLED"), None, StartedRecord(1, ()), "", None, dict(unsaved=(), done=True)),
    ("old-script-no-files", slurm("COMPLETED", 0), None, None, None, None, dict(state="COMPLETED", exit_code=0, ok=True)),
]


@pytest.mark.parametrize("answer, record, started, controller, ended_for, expected", [row[1:] for row in ROWS],
                         ids=[row[0] for row in ROWS])
def test_reconcile(answer, record, started, controller, ended_for, expected):
    status = reconcile("7", answer, record, started, controller, ended_for)
    shown = {name: getattr(status, name) for name in expected}
    assert shown == expected, verdict(status)


# ---- which source says how a job ended: sacct's job row, its batch step, squeue, the exit file.
# id, sacct's lines (job row, batch step), squeue's line, the exit file, sacct answered -> what the job is shown as
SOURCES = [
    # a cancel while accounting lags: the exit file's 143 alone is never FAILED until sacct has answered
    ("file-143-accounting-silent", None, None, exited(143), False,
     "ENDING (its exit file says 143, signal 15: waiting for SLURM to say why)"),
    ("file-143-accounting-answered-without-it", None, None, exited(143), True, "FAILED exit 143"),
    ("file-3-accounting-silent", None, None, exited(3), False, "FAILED exit 3"),
    ("file-124-timeout-accounting-silent", None, None, exited(124, timeout=True), False, "TIMEOUT exit 124"),
    # the controller has the cancel: its wait status is the job's code, and 128 + 15 is scancel's TERM
    ("squeue-cancelled-36608", None, "7|CANCELLED|36608|0:12|node1|0|", None, False, "CANCELLED by signal 15 (exit 143)"),
    ("squeue-cancelled-and-file", None, "7|CANCELLED|36608|0:12|node1|0|", exited(143), False, "CANCELLED by signal 15 (exit 143)"),
    # accounting: the job row says CANCELLED 0:0, the batch step how the shell ended
    ("sacct-cancelled-trap-143", "7|CANCELLED by 0|0:0|12|node1\n7.batch|FAILED|15:0|12|node1", None, exited(143), True,
     "CANCELLED by signal 15 (exit 143)"),
    ("sacct-cancelled-no-trap", "7|CANCELLED by 0|0:0|12|node1\n7.batch|CANCELLED|0:15|12|node1\n7.extern|COMPLETED|0:0|12|node1",
     None, None, True, "CANCELLED by signal 15"),
    ("sacct-cancelled-while-pending", "7|CANCELLED by 0|0:0|0|None assigned", None, None, True, "CANCELLED"),
    ("sacct-running-file-143", "7|RUNNING|0:0|12|node1", None, exited(143), True,
     "ENDING (its exit file says 143, signal 15: waiting for SLURM to say why)"),
    ("sacct-failed-batch-signal-kept-to-cancel", "7|FAILED|0:9|3|node1\n7.batch|CANCELLED|0:9|3|node1", None, None, True,
     "FAILED KILLED by signal 9"),
    ("sacct-143-printed-as-15", "7|FAILED|15:0|3|node1\n7.batch|FAILED|15:0|3|node1", None, exited(143), True, "FAILED exit 143"),
]


@pytest.mark.parametrize("sacct, squeue, record, accounted, shown", [row[1:] for row in SOURCES], ids=[row[0] for row in SOURCES])
def test_the_most_authoritative_source_that_answered_says_how_the_job_ended(sacct, squeue, record, accounted, shown):
    from slurmkit.slurm.monitor import parse_sacct, parse_squeue

    answer = parse_sacct(sacct + "\n").get("7") if sacct else None
    if squeue and (answer is None or not answer.done):
        answer = parse_squeue(squeue + "\n")["7"]
    assert verdict(reconcile("7", answer, record, accounted=accounted)) == shown


def test_sacct_zero_for_an_end_slurm_made_is_no_exit_code():
    """SLURM's 0:0 for CANCELLED or TIMEOUT is not the job's code: never ``CANCELLED exit 0``."""
    from slurmkit.slurm.monitor import parse_sacct, parse_squeue

    assert verdict(parse_sacct("5|CANCELLED by 0|0:0|12|node1\n")["5"]) == "CANCELLED"
    assert verdict(parse_sacct("5|TIMEOUT|0:0|61|node1\n")["5"]) == "TIMEOUT"
    assert verdict(reconcile("5", parse_squeue("5|CANCELLED|36608|0:12|node1|0|\n")["5"], None)) == "CANCELLED by signal 15 (exit 143)"
    assert verdict(parse_sacct("5|COMPLETED|0:0|3|node1\n")["5"]) == "COMPLETED exit 0"


def test_a_killed_batch_shell_says_outputs_not_saved_for_every_output_in_one_reason():
    status = reconcile("7", slurm("FAILED", None, 9), None, StartedRecord(1, ("results", "ckpt")))
    assert outputs_text(status) == f"outputs NOT saved: {SHELL_KILLED} (run 1): results, ckpt"
    assert verdict(status) == f"FAILED KILLED by signal 9; outputs NOT saved: {SHELL_KILLED} (run 1): results, ckpt"
    assert not status.ok


def test_a_batch_shell_killed_between_two_saves_names_only_the_output_it_did_not_save():
    started = parse_started_file("run\t1\noutput\tresults\noutput\tckpt\nsaved\tresults\n")
    assert started == StartedRecord(1, ("results", "ckpt"), ("results",))
    status = reconcile("7", slurm("FAILED", None, 9), None, started)
    assert (status.saved, status.unsaved) == (("results",), (f"ckpt: {SHELL_KILLED} (run 1)",))
    everything = reconcile("7", slurm("FAILED", None, 9), None, started._replace(saved=("results", "ckpt")))
    assert (everything.saved, everything.unsaved) == (("results", "ckpt"), ())
    assert parse_started_file("output\tresults\nsaved\tsomewhere else\n").saved == ()   # only what it listed


def test_verdicts_while_a_job_settles_or_runs_again():
    assert verdict(reconcile("7", slurm("CANCELLED"), None, STARTED, "COMPLETING")) == "CANCELLED (saving its outputs)"
    assert verdict(slurm("PENDING", runs=2)) == "PENDING (run 2)"
    unknown = reconcile("7", slurm("TIMEOUT"), None, STARTED, "COMPLETING", OUTCOME_WAIT_S)
    assert verdict(unknown) == "TIMEOUT; outputs not yet known (no exit file yet): results"
    saved = reconcile("7", slurm("COMPLETED", 0), exited(0, saved=("results",)))
    assert verdict(saved) == "COMPLETED exit 0; outputs saved"


def test_a_report_looks_once_after_the_end_with_nothing_left_running():
    """report: an end without an exit file, with outputs listed, is outputs NOT saved at once."""
    status = with_exit_record(slurm("CANCELLED"), None, STARTED)
    assert status.unsaved == KILLED_1 and status.done


# ------------------------------------------------------------------------------ the files

def test_an_exit_file_with_the_newer_lines_says_its_run_the_kill_and_the_kept_copy():
    record = parse_exit_file("124\ntimeout\nrun\t3\nkilled\nsaved\tckpt\nkept\tresults\t/p/results.partial-9\n"
                             "not-saved\tresults\t2 of 4 files, 1 KiB of 3 KiB arrived\n")
    assert (record.code, record.timeout, record.run, record.killed) == (124, True, 3, True)
    assert record.saved == ("ckpt",) and record.kept == ("/p/results.partial-9",)
    assert record.unsaved == ("results: 2 of 4 files, 1 KiB of 3 KiB arrived; kept at /p/results.partial-9",)


@pytest.mark.parametrize("text, run", [("0\n", 1), ("0\nrun\t2\n", 2), ("0\nrun\tx\n", 1), ("0\nrun\t0\n", 1)])
def test_an_exit_file_without_a_good_run_line_is_run_1(text, run):
    assert parse_exit_file(text).run == run


def test_a_started_file_lists_its_run_and_the_outputs_to_save():
    assert parse_started_file("run\t2\noutput\t/p/results\noutput\t/p/ckpt dir\n") == StartedRecord(2, ("/p/results", "/p/ckpt dir"))
    assert parse_started_file("") == StartedRecord(1, ())


def test_the_verdict_of_a_requeued_job_names_its_run():
    assert verdict(reconcile("7", slurm("COMPLETED", 0, runs=2), exited(0, run=2))) == "COMPLETED (run 2) exit 0"
    timeout = reconcile("7", slurm("TIMEOUT", runs=3), exited(124, run=3, timeout=True, saved=("results",)))
    assert verdict(timeout) == "TIMEOUT (outputs saved, run 3)"
