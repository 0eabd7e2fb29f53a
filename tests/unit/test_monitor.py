"""Parsing SLURM's answers and choosing between them (monitor.py), without a cluster.

The texts below were captured from the local test cluster (Slurm 22.05); squeue's raw
exit_code field is printed the same way by 23.x and 24.x (src/squeue/print.c).
"""

from unittest.mock import patch

import pytest

from slurmkit.slurm.monitor import (
    Cadence,
    ExitRecord,
    JobStatus,
    Poller,
    SlurmNotConfigured,
    SlurmUnreachable,
    Watch,
    parse_exit_file,
    parse_sacct,
    parse_squeue,
    poll,
    sacct_command,
    verdict,
)
from slurmkit.slurm.slurmcli import SchedulerError

SACCT = """\
48|FAILED|3:0|1|node1
58|COMPLETED|0:0|12|node2
150_0|RUNNING|0:0|2|node1
150_[1-2%1]|PENDING|0:0|0|None assigned
151|CANCELLED by 0|0:15|3|node1
"""

SQUEUE = (  # squeue -h -t all --jobs=... -O JobArrayID:|,State:|,exit_code:|,TimeUsed:|,NodeList:|
    "150_0|RUNNING|0|0:02|node1|\n"
    "150_[1-2%1]|PENDING|0|0:00||\n"
    "200|FAILED|1280|1-00:00:07|node2|\n"
    "201|FAILED|9|0:03|node1|\n"
)


def test_sacct_rows_become_statuses_with_exit_codes_and_expanded_array_ranges():
    found = parse_sacct(SACCT)
    assert found["48"] == JobStatus("48", "FAILED", 3, None, 1, "node1", "sacct")
    assert found["151"].state == "CANCELLED" and found["151"].signal == 15
    assert [found[f"150_{i}"].state for i in range(3)] == ["RUNNING", "PENDING", "PENDING"]
    assert found["150_1"].nodes == ""


def test_squeue_lines_become_statuses_keyed_like_sacct_with_the_wait_status_decoded():
    found = parse_squeue(SQUEUE)
    assert found["150_0"] == JobStatus("150_0", "RUNNING", None, None, 2, "node1", "squeue")
    assert found["150_1"].state == found["150_2"].state == "PENDING"
    assert found["200"] == JobStatus("200", "FAILED", 5, None, 86407, "node2", "squeue")
    assert (found["201"].exit_code, found["201"].signal) == (None, 9)


def test_a_running_job_has_no_exit_code_yet():
    assert parse_sacct(SACCT)["150_0"].exit_code is None
    assert parse_squeue(SQUEUE)["150_0"].exit_code is None


def test_a_job_killed_by_a_signal_shows_the_signal_not_exit_0():
    status = parse_sacct("7|FAILED|0:9|3|node1\n")["7"]
    assert (status.exit_code, status.signal) == (None, 9)
    assert verdict(status) == "FAILED KILLED by signal 9"


class FakeSlurm:
    """Answers like sacct and squeue would; either can be 'down'. Records every call."""

    def __init__(self, sacct="", squeue="", sacct_down=False, squeue_down=False, reason="Connection refused"):
        self.texts = {"sacct": sacct, "squeue": squeue}
        self.down = {"sacct": sacct_down, "squeue": squeue_down}
        self.reason = reason
        self.calls, self.argvs = [], []

    def __call__(self, argv):
        self.calls.append(argv[0])
        self.argvs.append(list(argv))
        if self.down[argv[0]]:
            raise SchedulerError(f"{argv[0]} failed: {self.reason}")
        return self.texts[argv[0]]


def test_one_sacct_call_answers_for_all_jobs_when_accounting_knows_them():
    slurm = FakeSlurm(sacct=SACCT)
    found = poll(["48", "58", "150"], run=slurm)
    assert slurm.calls == ["sacct", "squeue"]   # the controller only for why the pending tasks wait
    assert slurm.argvs[1][4] == "--jobs=150_1,150_2"
    assert list(found) == ["48", "58", "150_0", "150_1", "150_2"]
    assert poll(["48", "58"], run=(slurm := FakeSlurm(sacct=SACCT))) and slurm.calls == ["sacct"]


def test_the_controller_is_asked_only_for_jobs_sacct_does_not_know_and_by_their_ids():
    slurm = FakeSlurm(sacct=SACCT, squeue=SQUEUE)
    found = poll(["48", "200"], run=slurm)
    assert slurm.calls == ["sacct", "squeue"]
    assert "--jobs=200" in slurm.argvs[1]          # never every job on the cluster
    assert (found["48"].source, found["200"].source) == ("sacct", "squeue")


def test_when_sacct_lags_behind_an_ended_job_the_controller_settles_it(tmp_path):
    (tmp_path / "150_0.exit").write_text("0\n")
    slurm = FakeSlurm(sacct=SACCT, squeue="150_0|COMPLETED|0|0:09|node1|\n")
    found = poll(["150_0"], {"150": str(tmp_path)}, run=slurm)
    assert slurm.calls == ["sacct", "squeue"]
    assert (found["150_0"].state, found["150_0"].source, found["150_0"].elapsed_s) == ("COMPLETED", "squeue", 9)


def test_with_accounting_down_the_controller_answers():
    slurm = FakeSlurm(squeue=SQUEUE, sacct_down=True)
    assert poll(["200"], run=slurm)["200"].exit_code == 5


def test_with_both_down_the_exit_files_answer_for_the_jobs_that_have_one(tmp_path):
    (tmp_path / "300.exit").write_text("0\n")
    (tmp_path / "301.exit").write_text("42\n")
    found = poll(["300", "301"], {"300": str(tmp_path), "301": str(tmp_path)}, run=FakeSlurm(sacct_down=True, squeue_down=True))
    assert (found["300"].state, found["300"].exit_code) == ("COMPLETED", 0)
    assert (found["301"].state, found["301"].exit_code, found["301"].source) == ("FAILED", 42, "exit-file")


def test_with_both_down_a_job_without_an_answer_is_an_error_naming_both_commands_not_unknown(tmp_path):
    (tmp_path / "300.exit").write_text("0\n")
    with pytest.raises(SlurmUnreachable) as raised:
        poll(["300", "302"], {"300": str(tmp_path), "302": str(tmp_path)}, run=FakeSlurm(sacct_down=True, squeue_down=True))
    assert "sacct failed: Connection refused" in raised.value.message and "squeue failed" in raised.value.message
    assert not isinstance(raised.value, SlurmNotConfigured)


def test_no_slurm_configuration_says_to_set_slurm_conf(monkeypatch):
    monkeypatch.delenv("SLURM_CONF", raising=False)
    slurm = FakeSlurm(sacct_down=True, squeue_down=True, reason="squeue: fatal: Could not establish a configuration source")
    with pytest.raises(SlurmNotConfigured) as raised:
        poll(["5"], run=slurm)
    assert raised.value.message.endswith("set SLURM_CONF or run on a login node")
    assert "SLURM_CONF is unset" in raised.value.message


def test_a_job_the_controller_does_not_know_is_unknown_when_everything_answered():
    found = poll(["99999"], run=FakeSlurm(sacct="", squeue=""))
    assert found["99999"].state == "UNKNOWN"


def test_with_accounting_down_sacct_is_tried_on_a_doubling_number_of_polls():
    slurm = FakeSlurm(squeue="5|RUNNING|0|0:02|node1|\n", sacct_down=True)
    poller = Poller(run=slurm)
    tried = []
    for _ in range(12):
        before = slurm.calls.count("sacct")
        assert poller.poll(["5"])["5"].state == "RUNNING"
        tried.append(slurm.calls.count("sacct") - before)
    assert tried == [1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0]   # skips 1, 2, 4, ... polls
    assert slurm.calls.count("squeue") == 12


def test_sacct_is_used_again_once_accounting_answers():
    slurm = FakeSlurm(squeue="5|RUNNING|0|0:02|node1|\n", sacct_down=True)
    poller = Poller(run=slurm)
    poller.poll(["5"])
    slurm.down["sacct"], slurm.texts["sacct"] = False, "5|RUNNING|0:0|2|node1\n"
    poller.poll(["5"])                      # skipped once
    calls = len(slurm.calls)
    assert poller.poll(["5"])["5"].source == "sacct" and slurm.calls[calls:] == ["sacct"]


def test_a_job_that_ended_is_not_asked_about_again():
    slurm = FakeSlurm(sacct="1|COMPLETED|0:0|3|node1\n2|RUNNING|0:0|3|node1\n")
    poller = Poller(run=slurm)
    poller.poll(["1", "2"])
    poller.poll(["1", "2"])
    assert slurm.argvs[-1][-1] == "2"       # only the running one
    slurm.texts["sacct"] = "2|COMPLETED|0:0|9|node1\n"
    poller.poll(["1", "2"])
    calls = len(slurm.calls)
    assert [s.state for s in poller.poll(["1", "2"]).values()] == ["COMPLETED", "COMPLETED"]
    assert len(slurm.calls) == calls        # nothing left to ask


def test_an_array_with_few_open_tasks_is_asked_about_by_those_tasks():
    slurm = FakeSlurm(sacct="".join(f"9_{i}|COMPLETED|0:0|1|node1\n" for i in range(98))
                      + "9_98|RUNNING|0:0|1|node1\n9_99|PENDING|0:0|0|None assigned\n")
    poller = Poller(run=slurm, array_sizes={"9": 100})
    poller.poll(["9"])
    assert slurm.argvs[0][-1] == "9"        # many open: the array id
    poller.poll(["9"])
    assert [argv[-1] for argv in slurm.argvs if argv[0] == "sacct"][-1] == "9_98,9_99"


def test_an_exit_file_overrides_a_stale_running_state(tmp_path):
    (tmp_path / "150_0.exit").write_text("0\n")
    found = poll(["150_0"], {"150": str(tmp_path)}, run=FakeSlurm(sacct=SACCT))
    assert found["150_0"].state == "COMPLETED"
    assert found["150_0"].nodes == "node1"   # where it ran still comes from the stale answer


def test_an_array_that_no_source_remembers_is_listed_by_its_size(tmp_path):
    for task in range(3):
        (tmp_path / f"400_{task}.exit").write_text("0\n")
    found = poll(["400"], {"400": str(tmp_path)}, run=FakeSlurm(sacct_down=True, squeue_down=True), array_sizes={"400": 3})
    assert list(found) == ["400_0", "400_1", "400_2"]


def test_the_cadence_doubles_from_half_a_second_to_its_cap():
    cadence = Cadence(15.0)
    assert [cadence.next() for _ in range(8)] == [0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 15.0, 15.0]


def test_watching_a_60_s_job_with_a_15_s_cap_makes_at_most_15_slurm_calls():
    now = [0.0]
    slurm = FakeSlurm()
    slurm.texts = {"squeue": ""}

    def run(argv):
        slurm.calls.append(argv[0])
        state = "RUNNING" if now[0] < 60 else "COMPLETED"
        return f"1|{state}|0:0|{int(now[0])}|node1\n"

    watch = Watch(["1"], interval=15.0, run=run, sleep=lambda s: now.__setitem__(0, now[0] + s))
    states = [s["1"].state for s in watch]
    assert states[-1] == "COMPLETED" and len(slurm.calls) <= 15
    assert now[0] < 60 + 15 + 0.01           # seen within one cap of its end


def test_watch_reports_a_lost_controller_keeps_trying_and_resumes():
    answers = iter([SchedulerError("squeue failed: Unable to contact slurm controller (connect failure)")] * 4
                   + ["1|RUNNING|0|0:05|node1|\n", "1|COMPLETED|0|0:09|node1|\n"])

    def run(argv):
        if argv[0] == "sacct":
            raise SchedulerError("sacct failed: Connection refused")
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    slept, lost = [], []
    watch = Watch(["1"], interval=30.0, run=run, sleep=slept.append)
    for statuses in watch:
        lost.append(watch.lost is not None)
    assert lost == [True, True, True, True, False, False]
    assert statuses["1"].state == "COMPLETED"
    assert slept == [0.5, 1.0, 2.0, 4.0, 8.0]        # backing off while lost, then on the same cadence


def test_watch_without_slurm_configuration_stops_at_once():
    watch = Watch(["1"], run=FakeSlurm(sacct_down=True, squeue_down=True, reason="fatal: Could not establish a configuration source"))
    with pytest.raises(SlurmNotConfigured):
        next(iter(watch))


def test_watch_stops_after_the_poll_where_every_job_is_done():
    answers = iter(["1|RUNNING|0:0|1|node1\n", "1|RUNNING|0:0|2|node1\n", "1|COMPLETED|0:0|3|node1\n"])
    slept = []
    watch = Watch(["1"], interval=5, run=lambda argv: next(answers), sleep=slept.append)
    states = [s["1"].state for s in watch]
    assert states == ["RUNNING", "RUNNING", "COMPLETED"] and len(slept) == 2 and watch.polls == 3


@pytest.mark.parametrize("sacct_line, state", [("5|TIMEOUT|0:0|61|node1", "TIMEOUT"), ("5|OUT_OF_MEMORY|0:125|3|node1", "OUT_OF_MEMORY"),
                                                ("5|COMPLETED+|0:0|3|node1", "COMPLETED")])
def test_terminal_states_are_read_as_done(sacct_line, state):
    status = parse_sacct(sacct_line)["5"]
    assert status.state == state and status.done


# ------------------------------------------------------------------------------ exit files

def test_an_exit_file_lists_timeout_and_what_was_saved_and_what_was_not():
    record = parse_exit_file("74\nsaved\tresults/model.pt\nnot-saved\tresults/runs\tNo space left on device\n")
    assert (record.code, record.timeout) == (74, False)
    assert record.saved == ("results/model.pt",)
    assert record.unsaved == ("results/runs: No space left on device",)
    assert parse_exit_file("0\n") == ExitRecord(0, False, (), (), run=1)   # an old exit file is still valid: run 1
    assert parse_exit_file("") is None and parse_exit_file("oops\n") is None


def test_a_job_stopped_at_its_limit_after_saving_is_timeout_not_failed_124(tmp_path):
    (tmp_path / "8.exit").write_text("124\ntimeout\nsaved\tresults\n")
    status = poll(["8"], {"8": str(tmp_path)}, run=FakeSlurm(sacct="8|FAILED|124:0|61|node1\n"))["8"]
    assert (status.state, status.exit_code, status.saved) == ("TIMEOUT", 124, ("results",))
    assert verdict(status) == "TIMEOUT (outputs saved)" and status.done and not status.ok


def test_outputs_not_saved_make_a_job_not_ok_and_are_said_plainly(tmp_path):
    (tmp_path / "9.exit").write_text("74\nnot-saved\tresults/runs\tNo space left on device\n")
    status = poll(["9"], {"9": str(tmp_path)}, run=FakeSlurm(sacct="9|FAILED|74:0|6|node1\n"))["9"]
    assert status.unsaved == ("results/runs: No space left on device",) and not status.ok
    assert verdict(status) == "FAILED exit 74; outputs NOT saved: results/runs: No space left on device"


def test_a_completed_job_with_an_unsaved_output_is_not_ok():
    assert not JobStatus("1", "COMPLETED", 0, unsaved=("x: y",)).ok and JobStatus("1", "COMPLETED", 0).ok


def test_a_requeued_job_is_its_last_run_and_counts_its_runs():
    # sacct -n -P -X -D of a job requeued twice, in its third run (Slurm 22.05's rows, oldest first)
    text = "2596|REQUEUED|0:0|28|node[1-2]\n2596|REQUEUED|0:0|30|node[1-2]\n2596|RUNNING|0:0|5|node[1-2]\n"
    status = parse_sacct(text)["2596"]
    assert (status.state, status.elapsed_s, status.runs) == ("RUNNING", 5, 3)
    # an older row of the id in another state is another job (ids wrap): not a run of this one
    assert parse_sacct("2596|COMPLETED|0:0|9|node1\n2596|RUNNING|0:0|5|node1\n")["2596"].runs == 1
    assert "-D" in sacct_command(["2596"])


# ------------------------------------------------------------------- requeued jobs

def test_squeue_is_asked_for_the_restart_count_and_it_makes_the_run():
    from slurmkit.slurm.monitor import squeue_command

    assert "RestartCnt:|" in squeue_command(["5"])[-1]
    found = parse_squeue("5|PENDING|0|0:00||1|\n6|RUNNING|0|0:02|node1|\n")
    assert (found["5"].state, found["5"].runs) == ("PENDING", 2)
    assert found["6"].runs == 1                    # a line without the field: run 1


def test_accounting_between_two_runs_says_requeued_and_stands_for_the_run_to_come():
    status = parse_sacct("5|REQUEUED|0:0|3|node1\n")["5"]
    assert (status.state, status.runs, status.done) == ("REQUEUED", 2, False)
    assert parse_sacct("5|REQUEUED|0:0|3|node1\n5|PENDING|0:0|0|None assigned\n")["5"].runs == 2


def sequence(*answers):
    """A runner answering each poll's sacct with the next text (squeue with what follows a '||')."""
    rounds = iter(answers)
    current = {}

    def run(argv):
        if argv[0] == "sacct":
            sacct, _, squeue = next(rounds).partition("||")
            current["squeue"] = squeue
            return sacct
        return current.get("squeue", "")
    return run


def test_a_requeued_job_is_not_ended_by_its_first_runs_exit_file_and_the_watch_follows_run_2(tmp_path):
    """scontrol requeue of a running job: run 1's TERM trap wrote 143; SLURM runs the job again."""
    (tmp_path / "5.exit").write_text("143\n")     # an exit file of run 1 (no run line)
    run = sequence("5|RUNNING|0:0|9|node1\n||5|COMPLETING|0|0:09|node1|1|\n",
                   "5|REQUEUED|0:0|9|node1\n",
                   "5|REQUEUED|0:0|9|node1\n5|PENDING|0:0|0|None assigned\n",
                   "5|REQUEUED|0:0|9|node1\n5|RUNNING|0:0|3|node1\n",
                   "5|REQUEUED|0:0|9|node1\n5|FAILED|3:0|8|node1\n")
    seen = [(s["5"].state, s["5"].runs, s["5"].done) for s in Watch(["5"], folders={"5": str(tmp_path)}, run=run, sleep=lambda s: None)]
    assert seen == [("COMPLETING", 2, False), ("REQUEUED", 2, False), ("PENDING", 2, False), ("RUNNING", 2, False),
                    ("FAILED", 2, True)]


def test_node_fail_is_not_the_end_when_the_controller_holds_the_job_again(tmp_path):
    slurm = FakeSlurm(sacct="5|NODE_FAIL|0:0|30|node1\n", squeue="5|PENDING|0|0:00||1|\n")
    status = poll(["5"], run=slurm)["5"]
    assert slurm.calls == ["sacct", "squeue"]
    assert (status.state, status.runs, status.done) == ("PENDING", 2, False)
    gone = poll(["5"], run=FakeSlurm(sacct="5|NODE_FAIL|0:0|30|node1\n", squeue=""))["5"]
    assert (gone.state, gone.done) == ("NODE_FAIL", True)
    unasked = poll(["5"], run=FakeSlurm(sacct="5|NODE_FAIL|0:0|30|node1\n", squeue_down=True))["5"]
    assert (unasked.state, unasked.done) == ("NODE_FAIL", False)   # the controller could not say: not final


def test_a_cancel_while_accounting_lags_is_never_failed_143(tmp_path):
    """The TERM trap wrote 143; sacct still says RUNNING, squeue COMPLETING: the job has not ended yet."""
    (tmp_path / "5.exit").write_text("143\n")
    status = poll(["5"], {"5": str(tmp_path)}, run=FakeSlurm(sacct="5|RUNNING|0:0|9|node1\n", squeue="5|COMPLETING|0|0:09|node1|0|\n"))["5"]
    assert not status.done and status.state in ("ENDING", "COMPLETING")
    ended = poll(["5"], {"5": str(tmp_path)}, run=FakeSlurm(sacct="5|CANCELLED by 0|0:0|9|node1\n"))["5"]
    assert (ended.state, ended.exit_code) == ("CANCELLED", 143)


# ------------------------------------------------------------- waiting for the outcome

class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_a_watch_waits_for_the_exit_file_of_a_job_that_stages_outputs(tmp_path):
    """SLURM says CANCELLED at once; the EXIT trap is still saving (squeue: COMPLETING). The watch
    shows it saving, not ``CANCELLED exit 0``, and ends on what the exit file says."""
    (tmp_path / "5.started").write_text("run\t1\noutput\t/p/results\n")
    clock, polls = Clock(), []

    def run(argv):
        if not argv[-1].endswith(".batch"):   # the batch step, asked too, is not a poll
            polls.append(argv[0])
        if len(polls) > 6:
            (tmp_path / "5.exit").write_text("143\nrun\t1\nsaved\t/p/results\n")
        return "5|CANCELLED by 0|0:0|9|node1\n" if argv[0] == "sacct" else "5|COMPLETING|0|0:09|node1|0|\n"

    seen = [verdict(s["5"]) for s in Watch(["5"], folders={"5": str(tmp_path)}, run=run, sleep=clock.sleep, clock=clock)]
    assert seen[:3] == ["CANCELLED (saving its outputs)"] * 3
    assert seen[-1] == "CANCELLED by signal 15 (exit 143); outputs saved"


def test_a_watch_gives_up_waiting_for_the_exit_file_and_says_the_outputs_are_not_yet_known(tmp_path):
    from slurmkit.slurm.monitor import OUTCOME_WAIT_S

    (tmp_path / "5.started").write_text("run\t1\noutput\t/p/results\n")
    clock = Clock()
    run = lambda argv: "5|TIMEOUT|0:0|61|node1\n" if argv[0] == "sacct" else "5|COMPLETING|0|1:01|node1|0|\n"  # noqa: E731
    watch = Watch(["5"], interval=5, folders={"5": str(tmp_path)}, run=run, sleep=clock.sleep, clock=clock)
    final = list(watch)[-1]["5"]
    assert OUTCOME_WAIT_S <= clock.now < OUTCOME_WAIT_S + 6
    assert (final.done, final.ok, final.outputs_unknown) == (True, False, ("/p/results",))
    assert verdict(final) == "TIMEOUT; outputs not yet known (no exit file yet): /p/results"


def test_one_look_at_a_job_whose_batch_shell_was_killed_says_its_outputs_were_not_saved(tmp_path):
    (tmp_path / "5.started").write_text("run\t1\noutput\t/p/results\n")
    status = poll(["5"], {"5": str(tmp_path)}, run=FakeSlurm(sacct="5|FAILED|0:9|9|node1\n"))["5"]
    assert verdict(status) == ("FAILED KILLED by signal 9; outputs NOT saved: the batch shell was killed before it could save "
                               "(run 1): /p/results")


# ------------------------------------------------------------- jobs no source knows

def test_a_watch_of_a_job_no_source_knows_ends_unknown_after_a_bounded_time():
    from slurmkit.slurm.monitor import FORGOTTEN_POLLS, FORGOTTEN_S

    clock = Clock()
    watch = Watch(["5"], interval=5, run=FakeSlurm(sacct="", squeue=""), sleep=clock.sleep, clock=clock)
    final = list(watch)[-1]
    assert final["5"].state == "UNKNOWN" and watch.forgotten == ["5"]
    assert watch.polls >= FORGOTTEN_POLLS and FORGOTTEN_S <= clock.now <= FORGOTTEN_S + 5


def test_a_job_unknown_only_while_slurm_is_down_is_not_forgotten():
    clock = Clock()
    slurm = FakeSlurm(sacct_down=True, squeue_down=True)
    watch = Watch(["5"], interval=5, run=slurm, sleep=clock.sleep, clock=clock)
    for polls, _ in enumerate(watch):
        if polls == 10:
            break
    assert watch.forgotten == [] and watch.lost is not None


def test_exit_files_answering_alone_do_not_clear_a_lost_controller(tmp_path):
    (tmp_path / "5.exit").write_text("0\n")
    slurm = FakeSlurm(sacct_down=True, squeue_down=True)
    watch = Watch(["5"], folders={"5": str(tmp_path)}, run=slurm, sleep=lambda s: None)
    final = list(watch)[-1]
    assert final["5"].state == "COMPLETED" and watch.lost is not None


# ------------------------------------------------------- the strongest source that answered

def test_a_cancel_read_from_the_exit_file_alone_stays_ending_until_accounting_says_cancelled(tmp_path):
    """sacct and squeue silent, the TERM trap's 143 in the exit file: ENDING, asked again, never
    FAILED; the next poll that sacct answers says CANCELLED by signal 15."""
    (tmp_path / "5.exit").write_text("143\n")
    slurm = FakeSlurm(sacct_down=True, squeue_down=True)
    poller = Poller({"5": str(tmp_path)}, run=slurm)
    first = poller.poll(["5"])["5"]
    assert (first.state, first.done) == ("ENDING", False)
    slurm.down = {"sacct": False, "squeue": False}
    slurm.texts["sacct"] = "5|CANCELLED by 0|0:0|9|node1\n5.batch|FAILED|15:0|9|node1\n"
    seen = [verdict(poller.poll(["5"])["5"]) for _ in range(2)]   # sacct is left alone for a poll after failing
    assert seen == ["ENDING (its exit file says 143, signal 15: waiting for SLURM to say why)", "CANCELLED by signal 15 (exit 143)"]


def test_an_end_the_controller_told_is_upgraded_when_accounting_answers_then_never_asked_again(tmp_path):
    slurm = FakeSlurm(squeue="5|COMPLETED|0|0:09|node1|0|\n6|RUNNING|0|0:09|node1|0|\n", sacct_down=True)
    poller = Poller(run=slurm)
    assert poller.poll(["5", "6"])["5"].source == "squeue"
    slurm.down["sacct"] = False
    slurm.texts["sacct"] = "5|FAILED|0:9|9|node1\n6|RUNNING|0:0|9|node1\n"
    seen = [verdict(poller.poll(["5", "6"])["5"]) for _ in range(2)]   # sacct is left alone for a poll after failing
    assert seen == ["COMPLETED exit 0", "FAILED KILLED by signal 9"]
    slurm.argvs.clear()
    poller.poll(["5", "6"])
    assert all("5" not in argv[-1].split(",") and "--jobs=5,6" not in argv for argv in slurm.argvs), slurm.argvs


def test_sacct_reads_a_batch_steps_signal_and_asks_for_it_only_for_a_cancel_nothing_else_explains(tmp_path):
    found = parse_sacct("5|CANCELLED by 0|0:0|9|node1\n5.batch|CANCELLED|0:15|9|node1\n5.0|CANCELLED|0:9|9|node1\n"
                        "6_1|COMPLETED|0:0|3|node2\n6_1.batch|COMPLETED|0:0|3|node2\n")
    assert list(found) == ["5", "6_1"]
    assert (found["5"].signal, found["5"].exit_code, found["6_1"].exit_code) == (15, None, 0)
    assert "-X" in sacct_command(["5"])   # a job of thousands of srun steps: its row alone
    (tmp_path / "8.exit").write_text("143\n")

    def sacct(argv):
        if argv[-1].endswith(".batch"):
            return "".join(f"{job.split('.')[0]}|CANCELLED|0:15|9|node1\n{job}|CANCELLED|0:15|9|node1\n"
                           for job in argv[-1].split(","))
        return "5|CANCELLED by 0|0:0|9|node1\n7|COMPLETED|0:0|9|node1\n8|CANCELLED by 0|0:0|9|node1\n"
    slurm = FakeSlurm()
    slurm.texts["sacct"] = None
    found = poll(["5", "7", "8"], {"8": str(tmp_path)}, run=lambda argv: slurm(argv) or sacct(argv))
    assert [argv[-1] for argv in slurm.argvs] == ["5,7,8", "5.batch"]   # 8's exit file says 143: signal 15
    assert [verdict(found[job]) for job in ("5", "7", "8")] == ["CANCELLED by signal 15", "COMPLETED exit 0",
                                                               "CANCELLED by signal 15 (exit 143)"]


def test_the_python_watcher_asks_again_about_an_end_only_the_controller_told_until_accounting_answers():
    from slurmkit.slurm.submit import SlurmkitWatcher

    slurm = FakeSlurm(squeue="5|COMPLETED|0|0:09|node1|0|\n", sacct_down=True)
    watcher = SlurmkitWatcher(delay_s=0)
    watcher.poller.run = slurm
    watcher.register_job("5")
    watcher.update()
    assert watcher.status_of("5").source == "squeue" and watcher.status_of("5").done
    slurm.down["sacct"] = False
    slurm.texts["sacct"] = "5|COMPLETED|0:0|9|node1\n"
    watcher.update()   # sacct is left alone for a poll after failing
    watcher.update()
    assert watcher.status_of("5").source == "sacct"
    asked = len(slurm.calls)
    watcher.update()
    assert len(slurm.calls) == asked   # accounting's word is final: never asked again


def test_a_watch_of_an_ending_job_the_controller_forgot_while_accounting_is_down_ends_in_bounded_time(tmp_path):
    """ENDING waits for SLURM's word; when the controller answers without the job (past MinJobAge)
    and sacct stays down, the watch gives it up as it does an unknown job, never waits forever."""
    (tmp_path / "5.exit").write_text("143\n")
    clock = Clock()
    watch = Watch(["5"], interval=5, folders={"5": str(tmp_path)}, run=FakeSlurm(squeue="", sacct_down=True),
                  sleep=clock.sleep, clock=clock)
    final = list(watch)[-1]
    assert final["5"].state == "ENDING" and watch.forgotten == ["5"]


def test_the_controllers_running_outranks_accountings_lagging_pending_in_one_poll():
    """sacct said PENDING for a moment after the controller had started the job (seen on the local
    cluster: status printed PENDING while raw sacct and squeue both said RUNNING a moment later)."""
    slurm = FakeSlurm(sacct="5|PENDING|0:0|0|None assigned\n", squeue="5|RUNNING|0|0:02|node1|\n")
    status = poll(["5"], run=slurm)["5"]
    assert slurm.calls == ["sacct", "squeue"] and (status.state, status.source) == ("RUNNING", "squeue")


def test_a_watch_never_shows_a_started_job_waiting_again_in_the_same_run():
    """watch printed RUNNING, PENDING, RUNNING for one job with no requeue: a step back in one
    run is a lagging answer; a requeue is a new run and shows PENDING (the requeue test above)."""
    run = sequence("5|RUNNING|0:0|1|node1\n", "5|PENDING|0:0|0|None assigned\n||5|PENDING|0|0:00||0|\n",
                   "5|RUNNING|0:0|3|node1\n", "5|COMPLETED|0:0|4|node1\n")
    seen = [s["5"].state for s in Watch(["5"], run=run, sleep=lambda s: None)]
    assert seen == ["RUNNING", "RUNNING", "RUNNING", "COMPLETED"]   # one a poll: no PENDING between


@pytest.mark.parametrize("state", ["CONFIGURING", "SUSPENDED", "REQUEUE_HOLD", "STOPPED", "SIGNALING", "STAGE_OUT", "RESIZING"])
def test_the_python_watcher_never_counts_a_live_state_submitit_does_not_know_as_finished(state):
    """Whether a job ended is the poller's word (JobStatus.done), never submitit's list of live
    states: a job held, suspended or booting its node is asked about again until it ends."""
    from slurmkit.slurm.submit import SlurmkitWatcher

    slurm = FakeSlurm(sacct=f"5|{state}|0:0|9|node1\n", squeue=f"5|{state}|0|0:09|node1|0|\n")
    watcher = SlurmkitWatcher(delay_s=0)
    watcher.poller.run = slurm
    watcher.register_job("5")
    watcher.update()
    assert not watcher.is_done("5", mode="cache") and not watcher.status_of("5").done
    slurm.texts = {"sacct": "5|COMPLETED|0:0|9|node1\n", "squeue": ""}
    watcher.update()
    assert watcher.status_of("5").state == "COMPLETED" and watcher.is_done("5", mode="cache")


RUN_1_TERM = "143\n"
RUN_2_OK = "0\nrun\t2\n"


@pytest.mark.parametrize("rounds", [
    # (sacct, squeue, exit file) a poll; None: that command does not answer. The last round repeats.
    [("5|RUNNING|0:0|9|node1\n", None, RUN_1_TERM), (None, None, RUN_1_TERM),
     ("5|REQUEUED|0:0|9|node1\n5|COMPLETED|0:0|1|node1\n", "", RUN_2_OK)],            # run 1 seen ENDING
    [("5|REQUEUED|0:0|9|node1\n", "5|PENDING|0|0:00||1|\n", RUN_1_TERM),
     ("5|REQUEUED|0:0|9|node1\n", "5|PENDING|0|0:00||1|\n", RUN_2_OK),                # run 2 never seen running
     ("5|REQUEUED|0:0|9|node1\n5|COMPLETED|0:0|1|node1\n", "", RUN_2_OK)],
    [("5|RUNNING|0:0|9|node1\n", "5|COMPLETED|0|0:01|node1|1|\n", RUN_2_OK)],          # accounting still at run 1
    [(None, "5|COMPLETING|0|0:00|node1|1|\n", RUN_1_TERM), (None, "5|COMPLETED|0|0:01|node1|1|\n", RUN_1_TERM),
     ("5|REQUEUED|0:0|9|node1\n5|COMPLETED|0:0|1|node1\n", "", RUN_2_OK)],            # accounting down, then back
], ids=["run-1-ending", "run-2-unseen", "accounting-at-run-1", "accounting-down"])
def test_the_python_wait_returns_run_2s_end_whatever_order_the_sources_tell_it(tmp_path, rounds):
    """Run 2 ends within a second of its start: its exit file, the controller and accounting
    tell it in any order, and wait() returns COMPLETED (run 2) exit 0 in a bounded time. It hung
    (``watch`` returned) when run 1's TERM trap had written 143 and one poll got no REQUEUED from
    SLURM: ENDING, which submitit's list of live states lacks, so the shared watcher counted the
    job finished and never asked about it again."""
    from slurmkit.slurm.submit import SlurmkitWatcher, wait_all

    class Handle:
        job_id = "5"

    watcher = SlurmkitWatcher(delay_s=0)
    written = []

    def run(argv):
        sacct, squeue, exit_text = rounds[min(watcher.num_calls, len(rounds)) - 1]
        if written[-1:] != [exit_text]:
            (tmp_path / "5.exit").write_text(exit_text)
            written.append(exit_text)
        text = sacct if argv[0] == "sacct" else squeue
        if text is None:
            raise SchedulerError(f"{argv[0]} failed: timed out")
        return text

    watcher.poller.run = run
    watcher.register_folder("5", tmp_path)
    watcher.register_job("5")
    with patch("slurmkit.slurm.submit.JobHandle.watcher", watcher):
        final = wait_all([Handle()], poll_s=0.01, timeout=10)[0]
    assert (final.state, final.exit_code, final.runs) == ("COMPLETED", 0, 2), final
