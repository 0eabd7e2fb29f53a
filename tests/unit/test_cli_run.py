"""``slurmkit status``, ``watch``, ``cancel`` and the report after ``--wait``, with SLURM faked at
``run_slurm`` (the texts are what Slurm 22.05 prints; the real commands are exercised in
tests/faults/test_monitor.py)."""

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.report import efficiency
from slurmkit.slurm import monitor, slurmcli
from slurmkit.slurm.registry import Submission, record
from slurmkit.slurm.slurmcli import SchedulerError


@pytest.fixture
def registry(tmp_path, monkeypatch):
    path = tmp_path / "jobs.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
    return path


def remember(job_id, folder, array_size=None):
    record(Submission(job_id=job_id, name=f"job{job_id}", folder=str(folder), profile="local",
                      submitted="2026-01-01T00:00:00+00:00", array_size=array_size))


class FakeSlurm:
    """``run_slurm`` answering from a table of command -> stdout (or an exception to raise)."""

    def __init__(self, **answers):
        self.answers, self.calls = answers, []

    def __call__(self, argv, **kwargs):
        self.calls.append(list(argv))
        answer = self.answers.get(argv[0], "")
        if callable(answer):
            answer = answer(argv)
        if isinstance(answer, Exception):
            raise answer
        return subprocess.CompletedProcess(argv, 0, answer, "")


def fake(monkeypatch, **answers) -> FakeSlurm:
    slurm = FakeSlurm(**answers)
    monkeypatch.setattr(monitor, "run_slurm", slurm)
    monkeypatch.setattr(slurmcli, "run_slurm", slurm)
    return slurm


def test_status_when_slurm_is_not_answering_is_one_line_and_exit_1(monkeypatch, registry):
    down = SchedulerError("squeue failed: Unable to contact slurm controller (connect failure)")
    fake(monkeypatch, sacct=SchedulerError("sacct failed: Connection refused"), squeue=down)
    result = CliRunner().invoke(main, ["status", "12"])
    assert result.exit_code == 1
    assert result.output == ("error: SLURM is not answering (sacct failed: Connection refused; squeue failed: Unable to "
                             "contact slurm controller (connect failure)): check `scontrol ping`, or try again when the "
                             "controller is back\n")


def test_status_json_has_the_signal_no_exit_code_while_running_and_the_unsaved_outputs(monkeypatch, registry, tmp_path):
    (tmp_path / "3.exit").write_text("74\nsaved\tresults/model.pt\nnot-saved\tresults/runs\tNo space left on device\n")
    for job in ("1", "2", "3"):
        remember(job, tmp_path)
    fake(monkeypatch, sacct="1|RUNNING|0:0|5|node1\n2|FAILED|0:9|3|node1\n3|FAILED|74:0|6|node2\n")
    rows = {row["job"]: row for row in json.loads(CliRunner().invoke(main, ["status", "1", "2", "3", "--json"]).stdout)["jobs"]}
    assert (rows["1"]["exit_code"], rows["1"]["signal"], rows["1"]["exit"]) == (None, None, "")
    assert (rows["2"]["exit_code"], rows["2"]["signal"], rows["2"]["exit"]) == (None, 9, "KILLED by signal 9")
    assert rows["3"]["unsaved"] == ["results/runs: No space left on device"] and rows["3"]["saved"] == ["results/model.pt"]
    assert rows["3"]["ok"] is False


def test_status_says_timeout_with_outputs_saved_and_names_outputs_not_saved(monkeypatch, registry, tmp_path):
    (tmp_path / "4.exit").write_text("124\ntimeout\nsaved\tcheckpoints\n")
    (tmp_path / "5.exit").write_text("74\nnot-saved\tresults/runs\tNo space left on device\n")
    remember("4", tmp_path)
    remember("5", tmp_path)
    fake(monkeypatch, sacct="4|FAILED|124:0|60|node1\n5|FAILED|74:0|6|node1\n")
    header, *lines = CliRunner().invoke(main, ["status", "4", "5"]).output.splitlines()
    assert header.split("\t") == ["job", "name", "state", "exit", "elapsed_s", "nodes", "source", "elapsed", "limit",
                                   "left", "reason", "outputs"]
    assert lines[0].split("\t")[2:4] == ["TIMEOUT (outputs saved)", "exit 124"]
    assert lines[1].split("\t")[-1] == "outputs NOT saved: results/runs: No space left on device"


def test_cancel_refuses_unknown_and_ended_jobs_and_still_cancels_the_live_one(monkeypatch, registry):
    slurm = fake(monkeypatch, sacct="7|COMPLETED|0:0|3|node1\n8|RUNNING|0:0|3|node1\n")
    result = CliRunner().invoke(main, ["cancel", "99999", "7", "8"])
    assert result.exit_code == 1
    assert result.stdout == "cancelled 8\n"
    assert result.stderr.splitlines() == [
        "error: job 99999: SLURM knows no such job: check the id (`slurmkit status` lists yours)",
        "error: job 7 had already ended (COMPLETED exit 0): nothing to cancel"]
    assert [argv for argv in slurm.calls if argv[0] == "scancel"] == [["scancel", "8"]]


def test_cancel_that_scancel_refuses_is_never_said_cancelled_and_is_exit_1(monkeypatch, registry):
    """The job ended (or was never SLURM's) between the look and scancel: scancel's reason, one line."""
    refused = SchedulerError("scancel failed: Kill job error on job id 9: Invalid job id specified")
    fake(monkeypatch, sacct="8|RUNNING|0:0|3|node1\n9|PENDING|0:0|0|None assigned\n", scancel=refused)
    result = CliRunner().invoke(main, ["cancel", "8", "9"])
    assert (result.exit_code, result.stdout) == (1, "cancelled 8\n")
    assert result.stderr == "error: job 9: scancel refused it: Invalid job id specified\n"
    fake(monkeypatch, sacct="9|PENDING|0:0|0|None assigned\n", scancel=SchedulerError("scancel failed: Access/permission denied"))
    result = CliRunner().invoke(main, ["cancel", "9"])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "error: job 9: scancel refused it: scancel failed: Access/permission denied\n"


def test_cancel_of_live_jobs_only_is_exit_0(monkeypatch, registry):
    fake(monkeypatch, sacct="8|PENDING|0:0|0|None assigned\n")
    result = CliRunner().invoke(main, ["cancel", "8"])
    assert (result.exit_code, result.output) == (0, "cancelled 8\n")


def test_watch_of_a_large_array_prints_counts_and_only_the_tasks_that_ended_badly(monkeypatch, registry, tmp_path):
    remember("9", tmp_path, array_size=1000)
    rounds = iter([["RUNNING"] * 3 + ["PENDING"] * 997,
                   ["COMPLETED"] * 998 + ["FAILED", "COMPLETED"]])

    def sacct(argv):
        states = next(rounds)
        return "".join(f"9_{i}|{state}|{'1' if state == 'FAILED' else '0'}:0|1|node1\n" for i, state in enumerate(states))

    fake(monkeypatch, sacct=sacct)
    monkeypatch.setattr(monitor.time, "sleep", lambda s: None)
    monkeypatch.setattr(efficiency, "settled_report", lambda job_id: (_ for _ in ()).throw(SchedulerError("skipped")))
    result = CliRunner().invoke(main, ["watch", "9"])
    lines = [line.split(" ", 1)[1] for line in result.stdout.splitlines()]
    assert lines[:3] == ["array 9: [....................] 0/1000 ended: 997 PENDING, 3 RUNNING; ETA not known until a task ends",
                         "array 9: [####################] 1000/1000 ended: 999 COMPLETED, 1 FAILED", "9_998 FAILED exit 1"]
    assert result.stdout.splitlines()[3:] == ["job 9_998 FAILED exit 1", f"--- stderr: no log at {tmp_path}/9_998_0_log.err ---",
                                              f"--- stdout: no log at {tmp_path}/9_998_0_log.out ---"]
    assert result.exit_code == 1


def test_watch_exits_1_when_a_completed_job_lost_an_output(monkeypatch, registry, tmp_path):
    (tmp_path / "6.exit").write_text("0\nnot-saved\tout\tNo space left on device\n")
    remember("6", tmp_path)
    fake(monkeypatch, sacct="6|COMPLETED|0:0|3|node1\n")
    monkeypatch.setattr(efficiency, "settled_report", lambda job_id: (_ for _ in ()).throw(SchedulerError("skipped")))
    result = CliRunner().invoke(main, ["watch", "6"])
    assert result.exit_code == 1
    assert result.stdout.split(" ", 1)[1] == "6 COMPLETED exit 0; outputs NOT saved: out: No space left on device\n"


def test_the_report_after_a_watch_waits_for_accounting_to_record_the_end(monkeypatch):
    answers = iter(["5|RUNNING|0:0|3|60|0|1|1G||billing=1|1|\n", "5|COMPLETED|0:0|4|60|0|1|1G||billing=1|1|\n"])
    fake(monkeypatch, sacct=lambda argv: next(answers))
    effs, settled = efficiency.settled_report("5", sleep=lambda s: None)
    assert settled and effs[0].state == "COMPLETED"


def test_a_report_that_does_not_settle_in_time_is_marked_preliminary(monkeypatch):
    now = [0.0]
    fake(monkeypatch, sacct="5|RUNNING|0:0|3|60|0|1|1G||billing=1|1|\n")
    effs, settled = efficiency.settled_report("5", settle_s=10, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert not settled and effs[0].state == "RUNNING" and now[0] >= 10


def test_watch_prints_preliminary_above_a_report_taken_before_accounting_settled(monkeypatch, registry, tmp_path):
    remember("5", tmp_path)
    fake(monkeypatch, sacct="5|COMPLETED|0:0|3|node1\n")
    running = efficiency.parse("5|RUNNING|0:0|3|60|0|1|1G||billing=1|1|\n")
    monkeypatch.setattr(efficiency, "settled_report", lambda job_id, report=None: (running, False))
    out = CliRunner().invoke(main, ["watch", "5"]).stdout
    assert "preliminary report for 5: accounting has not recorded its end yet" in out



def test_a_job_accounting_has_not_recorded_yet_is_asked_about_again_before_the_report(monkeypatch):
    answers = iter(["", "5|COMPLETED|0:0|4|60|0|1|1G||billing=1|1|\n"])
    fake(monkeypatch, sacct=lambda argv: next(answers))
    effs, settled = efficiency.settled_report("5", sleep=lambda s: None)
    assert settled and effs[0].state == "COMPLETED"


def _ctrl_c(argv):
    raise KeyboardInterrupt


def test_ctrl_c_during_submit_wait_says_the_job_keeps_running_and_how_to_follow_or_cancel_it(monkeypatch, registry, tmp_path):
    from slurmkit.api.job import Job

    spec = tmp_path / "job.yaml"
    spec.write_text("name: hello\nprofile: local\naccount: def-lab\nkind: serial\nresources: {time: 10m}\nlaunch: {command: echo hi}\n")
    handle = type("Handle", (), {"job_id": "77", "paths": type("Paths", (), {"folder": str(tmp_path)})()})()
    monkeypatch.setattr(Job, "submit", lambda self, *args, **kwargs: handle)
    remember("77", tmp_path)
    fake(monkeypatch, sacct=_ctrl_c)   # the user presses Ctrl-C while slurmkit asks SLURM
    result = CliRunner().invoke(main, ["submit", str(spec), "--wait"])
    assert result.exit_code == 130
    assert result.stdout == f"submitted job 77; logs in {tmp_path}\n"
    assert result.stderr == ("stopped watching; job 77 keeps running: follow with `slurmkit watch 77`, "
                             "cancel with `slurmkit cancel 77`\n")
    assert "Aborted" not in result.output


def test_ctrl_c_during_watch_of_several_jobs_names_them_all(monkeypatch, registry, tmp_path):
    remember("5", tmp_path)
    remember("6", tmp_path)
    fake(monkeypatch, sacct=_ctrl_c)
    result = CliRunner().invoke(main, ["watch", "5", "6"])
    assert (result.exit_code, result.stderr) == (130, "stopped watching; jobs 5 6 keep running: follow with "
                                                      "`slurmkit watch 5 6`, cancel with `slurmkit cancel 5 6`\n")


# ------------------------------------------------------------- exit 0 only when all is well

def test_status_of_an_id_slurm_does_not_know_is_exit_1_with_one_line(monkeypatch, registry):
    fake(monkeypatch, sacct="7|COMPLETED|0:0|3|node1\n")
    result = CliRunner().invoke(main, ["status", "7", "99999"])
    assert result.exit_code == 1
    assert "99999\t\tUNKNOWN" in result.stdout and "7\t\tCOMPLETED\texit 0" in result.stdout
    assert result.stderr == "error: job 99999: SLURM knows no such job: check the id (`slurmkit status` lists yours)\n"
    assert CliRunner().invoke(main, ["status", "7"]).exit_code == 0


@pytest.mark.parametrize("args", [["status", "12"], ["watch", "12"], ["logs", "12"]])
def test_a_monitoring_command_with_stdout_closed_is_exit_1_and_one_line(tmp_path, args):
    import os
    import sys

    result = subprocess.run(["bash", "-c", f"{sys.executable} -m slurmkit.cli {' '.join(args)} >&-"], cwd=tmp_path,
                            capture_output=True, text=True, env={**os.environ, "SLURMKIT_REGISTRY": str(tmp_path / "jobs.jsonl"),
                                 "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert result.returncode == 1
    assert result.stderr == "error: slurmkit could not write its output: the stream is closed\n"


@pytest.mark.parametrize("interval", ["0", "-1", "abc", "nan", "inf", "-inf"])
def test_watch_refuses_an_interval_that_is_not_seconds_above_0(registry, interval):
    result = CliRunner().invoke(main, ["watch", "5", "--interval", interval])
    assert result.exit_code == 2 and "Invalid value for '--interval'" in result.stderr, result.output


def test_watch_polls_no_more_often_than_the_interval_floor(monkeypatch, registry, tmp_path):
    from slurmkit.cli import run

    remember("5", tmp_path)
    fake(monkeypatch, sacct="5|COMPLETED|0:0|3|node1\n")
    caps = []
    real = monitor.Watch.__init__
    monkeypatch.setattr(monitor.Watch, "__init__", lambda self, *a, **k: (caps.append(k["interval"]), real(self, *a, **k))[1])
    monkeypatch.setattr(efficiency, "settled_report", lambda job_id, report=None: (_ for _ in ()).throw(SchedulerError("skipped")))
    assert CliRunner().invoke(main, ["watch", "5", "--interval", "0.1"]).exit_code == 0
    assert caps == [run.MIN_INTERVAL_S] == [5.0]


def test_logs_follow_of_a_job_whose_folder_is_gone_is_exit_1(monkeypatch, registry, tmp_path):
    remember("5", tmp_path / "gone")
    fake(monkeypatch, sacct="5|RUNNING|0:0|3|node1\n")
    for args in (["logs", "5", "-f"], ["logs", "5"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1
        assert result.stderr == (f"error: the log folder of job 5, {tmp_path / 'gone'}, is gone (moved or deleted): "
                                 "its logs and exit file were there\n")


def test_watch_of_a_job_no_source_knows_ends_unknown_and_exit_1(monkeypatch, registry, tmp_path):
    remember("5", tmp_path)
    fake(monkeypatch, sacct="", squeue="")
    now = [0.0]
    monkeypatch.setattr(monitor.time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    monkeypatch.setattr(monitor.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(efficiency, "settled_report", lambda job_id, report=None: (_ for _ in ()).throw(AssertionError("no report")))
    result = CliRunner().invoke(main, ["watch", "5"])
    assert result.exit_code == 1
    assert result.stdout.split(" ", 1)[1] == "5 UNKNOWN\n"
    assert result.stderr == ("error: job 5: neither accounting nor the controller knows it (purged, or submitted on "
                             "another cluster): stopped watching it\n")


def test_watch_says_the_controller_answers_again_only_when_sacct_or_squeue_answered(monkeypatch, registry, tmp_path):
    """SLURM goes down while the job runs; the job ends and its exit file answers: still lost,
    never "answers again"; the watch ends on the exit file's word."""
    remember("6", tmp_path)
    down = SchedulerError("squeue failed: Unable to contact slurm controller (connect failure)")
    polls = []

    def squeue(argv):
        polls.append(argv)
        if len(polls) == 1:
            return "6|RUNNING|0|0:03|node1|0|\n"
        if len(polls) == 3:
            (tmp_path / "6.exit").write_text("0\n")
        return down

    fake(monkeypatch, sacct=SchedulerError("sacct failed: Connection refused"), squeue=squeue)
    monkeypatch.setattr(monitor.time, "sleep", lambda s: None)
    monkeypatch.setattr(efficiency, "settled_report", lambda job_id, report=None: (_ for _ in ()).throw(SchedulerError("skipped")))
    result = CliRunner().invoke(main, ["watch", "6"])
    lines = [line.split(" ", 1)[1] for line in result.stdout.splitlines()]
    assert lines[0] == "6 RUNNING" and lines[1].startswith("lost the controller, retrying: ")
    assert lines[2:] == ["6 COMPLETED exit 0"] and result.exit_code == 0


def test_watch_never_says_cancelled_exit_0_while_the_trap_saves_and_ends_on_the_exit_file(monkeypatch, registry, tmp_path):
    remember("5", tmp_path)
    (tmp_path / "5.started").write_text("run\t1\noutput\t/p/results\n")
    polls = []

    def squeue(argv):
        polls.append(argv)
        if len(polls) == 3:
            (tmp_path / "5.exit").write_text("143\nrun\t1\nsaved\t/p/results\n")
        return "5|COMPLETING|0|0:09|node1|0|\n"

    fake(monkeypatch, sacct="5|CANCELLED by 0|0:0|9|node1\n", squeue=squeue)
    monkeypatch.setattr(monitor.time, "sleep", lambda s: None)
    monkeypatch.setattr(efficiency, "settled_report", lambda job_id, report=None: (_ for _ in ()).throw(SchedulerError("skipped")))
    result = CliRunner().invoke(main, ["watch", "5"])
    lines = [line.split(" ", 1)[1] for line in result.stdout.splitlines()]
    assert lines == ["5 CANCELLED (saving its outputs)", "5 CANCELLED by signal 15 (exit 143); outputs saved"]
    assert result.exit_code == 1


def test_status_and_report_say_outputs_not_saved_when_the_batch_shell_was_killed(monkeypatch, registry, tmp_path):
    remember("5", tmp_path)
    (tmp_path / "5.started").write_text("run\t1\noutput\t/p/results\noutput\t/p/ckpt\n")
    fake(monkeypatch, sacct="5|FAILED|0:9|9|node1\n")
    row = json.loads(CliRunner().invoke(main, ["status", "5", "--json"]).stdout)["jobs"][0]
    said = "outputs NOT saved: the batch shell was killed before it could save (run 1): /p/results, /p/ckpt"
    assert row["outputs"] == said and row["ok"] is False
    assert row["unsaved"] == ["/p/results: the batch shell was killed before it could save (run 1)",
                              "/p/ckpt: the batch shell was killed before it could save (run 1)"]
    [eff] = efficiency.with_exit_files(efficiency.parse("5|FAILED|0:9|9|60|0|1|1G||billing=1|1|\n"), str(tmp_path))
    assert "Outputs: NOT saved: the batch shell was killed before it could save (run 1): /p/results, /p/ckpt" in \
        efficiency.format_report([eff])


def test_cancel_of_a_job_slurm_ended_while_its_trap_saves_is_not_cancelled_again(monkeypatch, registry, tmp_path):
    remember("5", tmp_path)
    (tmp_path / "5.started").write_text("run\t1\noutput\t/p/results\n")
    slurm = fake(monkeypatch, sacct="5|CANCELLED by 0|0:0|9|node1\n", squeue="5|COMPLETING|0|0:09|node1|0|\n")
    result = CliRunner().invoke(main, ["cancel", "5"])
    assert result.exit_code == 1 and not [argv for argv in slurm.calls if argv[0] == "scancel"]
    assert result.stderr == "error: job 5 had already ended (CANCELLED (saving its outputs)): nothing to cancel\n"


def test_logs_of_a_job_whose_log_is_a_named_pipe_is_one_line_and_exit_1(monkeypatch, registry, tmp_path):
    import os

    remember("5", tmp_path)
    os.mkfifo(tmp_path / "5_0_log.out")
    fake(monkeypatch, sacct="5|RUNNING|0:0|3|node1\n")
    for args in (["logs", "5"], ["logs", "5", "-f"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1, result.output
        assert result.stderr == (f"error: {tmp_path / '5_0_log.out'}: cannot read it as the job's log: "
                                 "not a regular file (a named pipe)\n")


def test_logs_of_an_ended_job_whose_log_was_deleted_says_it_is_gone_exit_1(monkeypatch, registry, tmp_path):
    remember("5", tmp_path)
    fake(monkeypatch, sacct="5|COMPLETED|0:0|3|node1\n")
    for args in (["logs", "5"], ["logs", "5", "-f"], ["logs", "5", "--err"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1, result.output
        log = tmp_path / f"5_0_log.{'err' if '--err' in args else 'out'}"
        assert result.stderr == f"error: the log {log} is gone (the job ended COMPLETED)\n"


def test_logs_of_a_job_that_has_not_started_writing_keeps_exit_2(monkeypatch, registry, tmp_path):
    remember("5", tmp_path)
    fake(monkeypatch, sacct="5|PENDING|0:0|3|None assigned\n")
    result = CliRunner().invoke(main, ["logs", "5"])
    assert result.exit_code == 2
    assert result.stderr == f"error: no 5_0_log.out yet in {tmp_path}: the job has not started writing\n"


def test_logs_and_status_find_the_specs_own_log_names(monkeypatch, registry, tmp_path):
    record(Submission(job_id="5", name="fold", folder=str(tmp_path / "sk"), profile="local", submitted="2026-01-01T00:00:00+00:00",
                      logs=[f"{tmp_path}/out/fold-%j.o"]))
    (tmp_path / "sk").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "fold-5.o").write_text("mine\n")
    fake(monkeypatch, sacct="5|COMPLETED|0:0|3|node1\n")
    assert CliRunner().invoke(main, ["logs", "5"]).stdout == "mine\n"
    joined = CliRunner().invoke(main, ["logs", "5", "--err"])   # no logs.error: stderr is in the output log
    assert (joined.stdout, joined.stderr) == ("mine\n", "slurmkit: the spec names no logs.error, so stderr is in the output log: "
                                                        "showing it\n")
    row = json.loads(CliRunner().invoke(main, ["status", "5", "--json"]).stdout)["jobs"][0]
    assert row["log"] == f"{tmp_path}/out/fold-5.o"


def test_logs_follow_finds_a_log_named_by_its_node_once_it_is_there(monkeypatch, registry, tmp_path):
    record(Submission(job_id="6", name="n", folder=str(tmp_path), profile="local", submitted="2026-01-01T00:00:00+00:00",
                      logs=[f"{tmp_path}/n-%j-%N.out"]))
    slurm = fake(monkeypatch, sacct="6|RUNNING|0:0|3|node2\n")

    def job_writes(seconds):   # the job starts on node2 while logs follows it, then ends
        (tmp_path / "n-6-node2.out").write_text("from node2\n")
        slurm.answers["sacct"] = "6|COMPLETED|0:0|3|node2\n"
    monkeypatch.setattr("slurmkit.cli.run.time.sleep", job_writes)
    assert CliRunner().invoke(main, ["logs", "6", "-f"]).stdout == "from node2\n"


# ------------------------------------------------------------------- logs of an array

def test_logs_of_an_array_shows_every_task_under_a_header_and_one_task_with_task(monkeypatch, registry, tmp_path):
    """An array's logs are named by task (``420_1_0_log.out``), never ``420_0_log.out``."""
    remember("420", tmp_path, array_size=3)
    for task in range(3):
        (tmp_path / f"420_{task}_0_log.out").write_text(f"task {task}\n")
    fake(monkeypatch, sacct="".join(f"420_{t}|COMPLETED|0:0|3|node1\n" for t in range(3)))
    result = CliRunner().invoke(main, ["logs", "420"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == "==> 420_0 <==\ntask 0\n\n==> 420_1 <==\ntask 1\n\n==> 420_2 <==\ntask 2\n"
    assert CliRunner().invoke(main, ["logs", "420", "--task", "1"]).stdout == "task 1\n"
    assert CliRunner().invoke(main, ["logs", "420_2"]).stdout == "task 2\n"
    wrong = CliRunner().invoke(main, ["logs", "420", "--task", "7"])
    assert (wrong.exit_code, wrong.stderr) == (2, "error: --task 7: array 420 has no such task (its tasks: 0, 1, 2)\n")
    follow = CliRunner().invoke(main, ["logs", "420", "-f"])
    assert (follow.exit_code, follow.stderr) == (2, "error: logs -f follows one task: give --task N (or 420_N)\n")


def test_logs_of_an_array_says_which_tasks_have_no_log_yet(monkeypatch, registry, tmp_path):
    remember("421", tmp_path, array_size=3)
    (tmp_path / "421_0_0_log.out").write_text("first\n")
    fake(monkeypatch, sacct="421_0|COMPLETED|0:0|3|node1\n421_[1-2]|PENDING|0:0|0|None assigned\n")
    result = CliRunner().invoke(main, ["logs", "421"])
    assert (result.exit_code, result.stdout) == (0, "==> 421_0 <==\nfirst\n")
    assert result.stderr == "slurmkit: no log (not started, or gone) for 2 of 3 tasks: 1, 2\n"
    (tmp_path / "421_0_0_log.out").unlink()
    none = CliRunner().invoke(main, ["logs", "421"])
    assert (none.exit_code, none.stderr) == (2, f"error: no task of array 421 has a log in {tmp_path} yet: none has started writing\n")


def test_logs_of_an_array_with_the_specs_own_names_per_task_or_shared(monkeypatch, registry, tmp_path):
    record(Submission(job_id="430", name="sw", folder=str(tmp_path), profile="local", submitted="2026-01-01T00:00:00+00:00",
                      array_size=2, logs=[f"{tmp_path}/sw-%A_%2a.out"]))
    record(Submission(job_id="431", name="sw", folder=str(tmp_path), profile="local", submitted="2026-01-01T00:00:00+00:00",
                      array_size=2, logs=[f"{tmp_path}/all-%A.out"]))
    (tmp_path / "sw-430_00.out").write_text("a\n")
    (tmp_path / "sw-430_01.out").write_text("b\n")
    (tmp_path / "all-431.out").write_text("both\n")
    fake(monkeypatch, sacct="430_0|COMPLETED|0:0|3|node1\n")
    assert CliRunner().invoke(main, ["logs", "430"]).stdout == "==> 430_0 <==\na\n\n==> 430_1 <==\nb\n"
    assert CliRunner().invoke(main, ["logs", "431"]).stdout == "both\n"   # one file for every task: shown once


def test_logs_of_a_het_job_component_is_its_jobs_log_and_a_task_of_a_plain_job_is_refused(monkeypatch, registry, tmp_path):
    remember("440", tmp_path)
    (tmp_path / "440_0_log.out").write_text("het\n")
    fake(monkeypatch, sacct="440|COMPLETED|0:0|3|node1\n")
    assert CliRunner().invoke(main, ["logs", "440+1"]).stdout == "het\n"
    refused = CliRunner().invoke(main, ["logs", "440", "--task", "0"])
    assert (refused.exit_code, refused.stderr) == (2, "error: --task 0: job 440 is not an array: give --task only with an array's id\n")


def test_remote_status_of_a_recorded_job_the_cluster_forgot_is_one_line_and_exit_1(monkeypatch, registry, tmp_path):
    from types import SimpleNamespace

    from slurmkit.cli import remote
    from slurmkit.slurm import remote as far

    record(Submission(job_id="77", name="r", folder="/far/logs", profile="local", submitted="2026-01-01T00:00:00+00:00",
                      remote="me@far"))
    conn = SimpleNamespace(ensure_open=lambda: None, remote=SimpleNamespace(host="far"))
    monkeypatch.setattr(remote, "connect", lambda cluster, **kw: conn)
    monkeypatch.setattr(remote, "_adopt", lambda conn, cluster: None)
    monkeypatch.setattr(far, "make_poller", lambda *a, **kw: SimpleNamespace(poll=lambda ids: {"77": monitor.JobStatus("77", "UNKNOWN")}))
    result = CliRunner().invoke(main, ["status", "77", "--remote", "local"])
    assert result.exit_code == 1
    assert result.stderr == "error: job 77: SLURM on far knows no such job (purged from accounting, or another cluster's)\n"


def test_watch_with_no_job_recorded_says_so_and_ends(registry, monkeypatch):
    """With no id given and none recorded, a watch would follow nothing for ever, silently."""
    monkeypatch.setattr(slurmcli, "run_slurm", lambda *a, **k: (_ for _ in ()).throw(AssertionError("asked SLURM")))
    result = CliRunner().invoke(main, ["watch"])
    assert (result.exit_code, result.stdout) == (0, "no jobs submitted with slurmkit yet: nothing to watch\n")


def test_a_row_accounting_wrote_without_the_request_is_asked_about_again(monkeypatch):
    """Slurm 22.05: a job that ends before its pending row is written shows first as COMPLETED
    with ReqMem '16?' and no TimelimitRaw (seen on the local cluster), which dropped the time
    limit and the memory advice from the report; the whole row comes a moment later."""
    answers = iter(["5|COMPLETED|0:0|0||0|2|16?||billing=2|1|\n", "5|COMPLETED|0:0|0|60|0|2|1G||billing=2|1|\n"])
    fake(monkeypatch, sacct=lambda argv: next(answers))
    effs, settled = efficiency.settled_report("5", sleep=lambda s: None)
    assert settled and (effs[0].timelimit_s, effs[0].req_mem_mib) == (3600, 1024.0) and not effs[0].partial
