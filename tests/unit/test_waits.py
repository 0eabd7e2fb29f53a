"""Why a job waits and how long it has left: the Reason table, ``H:MM:SS``, the bars, an array's
ETA, SLURM's fields read for them, and what ``status``, ``watch --json`` and ``submit --json`` /
``--parsable`` print (SLURM faked at ``run_slurm``; the real cluster is tests/faults/test_glance.py)."""

import json

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.report import efficiency
from slurmkit.slurm import monitor
from slurmkit.slurm.monitor import JobStatus, Poller, parse_sacct, parse_squeue
from slurmkit.slurm.waits import array_progress, bar_text, hms, reason_text, time_left_s
from tests.unit.test_cli_run import fake, registry, remember  # noqa: F401  (the fixture)


@pytest.mark.parametrize("reason, words", [
    ("Priority", "waiting for jobs of higher priority to start first"),
    ("Resources", "next in line, waiting for nodes to become free"),
    ("BeginTime", "not allowed to start before its --begin time"),
    ("Dependency", "waiting for the jobs it depends on (--after) to end"),
    ("JobHeldUser", "held by its owner: `scontrol release ID` lets it start"),
    ("QOSMaxJobsPerUserLimit", "you have as many jobs running as the QOS allows: it starts when one ends"),
    ("AssocGrpGRESMinutes", "your account's group has reached one of its limits (AssocGrpGRESMinutes): it starts when the "
                            "group's jobs end"),
    ("PartitionTimeLimit", "its time limit is above the partition's maximum: it will never start as it is"),
    ("SomethingNew", "SomethingNew"),
])
def test_a_pending_reason_is_said_in_words_and_an_unknown_one_as_slurm_said_it(reason, words):
    assert reason_text(reason) == words


@pytest.mark.parametrize("seconds, text", [(None, ""), (0, "0:00:00"), (59, "0:00:59"), (3600, "1:00:00"),
                                           (90061, "25:01:01"), (-5, "0:00:00")])
def test_times_are_h_mm_ss_with_hours_past_a_day(seconds, text):
    assert hms(seconds) == text


def test_time_left_counts_down_from_the_limit_and_is_none_without_one():
    assert (time_left_s(600, 3600), time_left_s(None, 3600), time_left_s(4000, 3600), time_left_s(5, None)) == (3000, 3600, 0, None)


def test_a_text_bar_is_plain_characters():
    assert (bar_text(0.5, 10), bar_text(0, 4), bar_text(2, 4), bar_text(None)) == ("[#####.....]", "[....]", "[####]", "")


def task(job, state, elapsed):
    return JobStatus(job, state, elapsed_s=elapsed)


def test_an_arrays_eta_is_from_the_mean_of_its_ended_tasks_run_as_many_at_a_time_as_run_now():
    tasks = ([task(f"9_{i}", "COMPLETED", 100) for i in range(4)] + [task("9_4", "RUNNING", 40), task("9_5", "RUNNING", 10)]
             + [task(f"9_{i}", "PENDING", 0) for i in range(6, 10)])
    progress = array_progress("9", tasks, monitor.TERMINAL)
    assert (progress.ended, progress.total, progress.counts) == (4, 10, {"COMPLETED": 4, "PENDING": 4, "RUNNING": 2})
    assert progress.eta_s == 90 + 2 * 100   # the slower running task's 90 s, then two waves of two
    assert progress.text() == "array 9: [########............] 4/10 ended: 4 COMPLETED, 4 PENDING, 2 RUNNING; ETA 0:04:50"
    assert array_progress("9", tasks[4:], monitor.TERMINAL).eta_s is None   # nothing ended: no mean yet


def test_squeue_gives_the_reason_and_the_limit_and_sacct_the_limit():
    found = parse_squeue("5|PENDING|0|0:00||0|BeginTime|1:30:00|\n6|RUNNING|0|0:02|node1|0|None|7:00|\n")
    assert (found["5"].reason, found["5"].time_limit_s) == ("BeginTime", 5400)
    assert (found["6"].reason, found["6"].time_limit_s) == ("", 420)
    sacct = parse_sacct("5|PENDING|0:0|0|None assigned|None|90\n7|COMPLETED|0:0|3|node1|None|UNLIMITED\n")
    assert (sacct["5"].reason, sacct["5"].time_limit_s, sacct["7"].time_limit_s) == ("", 5400, None)


def test_a_job_accounting_says_is_pending_gets_its_reason_from_the_controller():
    calls = []

    def run(argv):
        calls.append(argv[0])
        return {"sacct": "5|PENDING|0:0|0|None assigned|None|90\n", "squeue": "5|PENDING|0|0:00||0|JobHeldUser|1:30:00|\n"}[argv[0]]

    status = Poller(run=run).poll(["5"])["5"]
    assert (status.state, status.reason, status.time_limit_s, status.source, calls) == ("PENDING", "JobHeldUser", 5400, "sacct",
                                                                                         ["sacct", "squeue"])


def test_the_controllers_reason_outranks_the_one_accounting_still_holds():
    """Accounting lags the controller: a job held after it waited on a dependency still reads
    Dependency in sacct for a while; the controller's JobHeldUser is the reason it waits now."""
    def run(argv):
        return {"sacct": "5|PENDING|0:0|0|None assigned|Dependency|90\n", "squeue": "5|PENDING|0|0:00||0|JobHeldUser|1:30:00|\n"}[argv[0]]

    assert Poller(run=run).poll(["5"])["5"].reason == "JobHeldUser"

def test_piped_status_has_plain_time_and_reason_columns_and_no_bar(monkeypatch, registry, tmp_path):  # noqa: F811
    remember("5", tmp_path)
    remember("6", tmp_path)
    fake(monkeypatch, sacct="5|PENDING|0:0|0|None assigned|None|90\n6|RUNNING|0:0|600|node1|None|60\n",
         squeue="5|PENDING|0|0:00||0|BeginTime|1:30:00|\n")
    result = CliRunner().invoke(main, ["status", "5", "6"])
    header, *lines = result.stdout.splitlines()
    rows = [dict(zip(header.split("\t"), line.split("\t"))) for line in lines]
    assert [(r["state"], r["elapsed"], r["limit"], r["left"], r["reason"]) for r in rows] == [
        ("PENDING", "0:00:00", "1:30:00", "1:30:00", "BeginTime: not allowed to start before its --begin time"),
        ("RUNNING", "0:10:00", "1:00:00", "0:50:00", "")]
    assert "#" not in result.stdout and "━" not in result.stdout
    doc = json.loads(CliRunner().invoke(main, ["status", "5", "--json"]).stdout)
    job = doc["jobs"][0]
    assert (job["reason"], job["reason_text"], job["time_limit"], job["time_left_s"]) == (
        "BeginTime", "not allowed to start before its --begin time", "1:30:00", 5400)


def test_status_json_has_each_arrays_counts_and_eta(monkeypatch, registry, tmp_path):  # noqa: F811
    remember("9", tmp_path, array_size=3)
    fake(monkeypatch, sacct="9_0|COMPLETED|0:0|60|node1|None|10\n9_1|RUNNING|0:0|20|node1|None|10\n9_2|FAILED|1:0|30|node1|None|10\n")
    doc = json.loads(CliRunner().invoke(main, ["status", "9", "--json"]).stdout)
    assert doc["arrays"] == [{"job": "9", "tasks": 3, "ended": 2, "counts": {"COMPLETED": 1, "FAILED": 1, "RUNNING": 1},
                              "eta_s": 25, "eta": "0:00:25"}]


def test_watch_json_prints_a_line_per_change_then_the_final_states(monkeypatch, registry, tmp_path):  # noqa: F811
    remember("5", tmp_path)
    rounds = iter(["5|PENDING|0:0|0|None assigned|None|5\n", "5|PENDING|0:0|0|None assigned|None|5\n",
                   "5|RUNNING|0:0|1|node1|None|5\n", "5|COMPLETED|0:0|2|node1|None|5\n"])
    fake(monkeypatch, sacct=lambda argv: next(rounds), squeue="5|PENDING|0|0:00||0|Priority|5:00|\n")
    monkeypatch.setattr(monitor.time, "sleep", lambda s: None)
    monkeypatch.setattr(efficiency, "settled_report", lambda job_id: pytest.fail("no report under --json"))
    result = CliRunner().invoke(main, ["watch", "5", "--json"])
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(line["event"], line.get("state"), line.get("reason")) for line in lines] == [
        ("state", "PENDING", "Priority"), ("state", "RUNNING", ""), ("state", "COMPLETED", ""), ("end", None, None)]
    assert lines[-1]["ok"] is True and lines[-1]["jobs"][0]["state"] == "COMPLETED"
    assert all(line["schema"] == 1 and line["time"].endswith("Z") for line in lines)
    assert result.exit_code == 0


@pytest.mark.parametrize("flags, field", [(["--json", "--parsable"], "--parsable"), (["--json", "--wait"], "--wait"),
                                          (["--json", "--dry-run"], "--dry-run")])
def test_submit_json_refuses_options_whose_output_is_not_a_submission_as_json(tmp_path, flags, field):
    spec = tmp_path / "job.yaml"
    spec.write_text("name: x\n")
    result = CliRunner().invoke(main, ["submit", str(spec), *flags])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"] == {"code": "usage", "message": f"--json is not taken with {field}"
                                                  + (": submit, then follow with `slurmkit watch --json ID`" if field == "--wait" else ""),
                                                  "field": field}


def test_submit_parsable_with_wait_is_one_line_and_exit_2(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text("name: x\n")
    result = CliRunner().invoke(main, ["submit", str(spec), "--parsable", "--wait"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.strip().startswith("error: --parsable is not taken with --wait")


def test_a_usage_error_of_watch_json_is_one_json_line():
    result = CliRunner().invoke(main, ["watch", "5", "--json", "--interval", "0"])
    assert result.exit_code == 2
    (line,) = result.stdout.splitlines()
    assert (json.loads(line)["event"], json.loads(line)["error"]["field"]) == ("error", "--interval")
