"""Parsing SLURM's answers and choosing between them (monitor.py), without a cluster.

The texts below were captured from the local test cluster (Slurm 22.05).
"""

import pytest

from slurmkit.monitor import JobStatus, Watch, parse_sacct, parse_scontrol, poll
from slurmkit.slurmcli import SchedulerError

SACCT = """\
48|FAILED|3:0|1|node1
58|COMPLETED|0:0|12|node2
150_0|RUNNING|0:0|2|node1
150_[1-2%1]|PENDING|0:0|0|None assigned
151|CANCELLED by 0|0:15|3|node1
"""

SCONTROL = (
    "JobId=151 ArrayJobId=150 ArrayTaskId=0 ArrayTaskThrottle=1 JobName=wrap JobState=RUNNING Reason=None "
    "ExitCode=0:0 RunTime=00:00:02 TimeLimit=00:05:00 NodeList=node1\n"
    "JobId=150 ArrayJobId=150 ArrayTaskId=1-2%1 ArrayTaskThrottle=1 JobName=wrap JobState=PENDING "
    "Reason=JobArrayTaskLimit ExitCode=0:0 RunTime=00:00:00 NodeList=(null)\n"
    "JobId=200 JobName=x JobState=FAILED Reason=NonZeroExitCode ExitCode=5:0 RunTime=1-00:00:07 NodeList=node2\n"
)


def test_sacct_rows_become_statuses_with_exit_codes_and_expanded_array_ranges():
    found = parse_sacct(SACCT)
    assert found["48"] == JobStatus("48", "FAILED", 3, 0, 1, "node1", "sacct")
    assert found["151"].state == "CANCELLED" and found["151"].signal == 15
    assert [found[f"150_{i}"].state for i in range(3)] == ["RUNNING", "PENDING", "PENDING"]
    assert found["150_1"].nodes == ""


def test_scontrol_lines_become_statuses_keyed_like_sacct():
    found = parse_scontrol(SCONTROL)
    assert found["150_0"].state == "RUNNING" and found["150_0"].nodes == "node1"
    assert found["150_1"].state == found["150_2"].state == "PENDING"
    assert found["200"] == JobStatus("200", "FAILED", 5, 0, 86407, "node2", "scontrol")


class FakeSlurm:
    """Answers like sacct and scontrol would; either can be 'down'. Records every call."""

    def __init__(self, sacct="", scontrol="", sacct_down=False, scontrol_down=False):
        self.texts = {"sacct": sacct, "scontrol": scontrol}
        self.down = {"sacct": sacct_down, "scontrol": scontrol_down}
        self.calls = []

    def __call__(self, argv):
        self.calls.append(argv[0])
        if self.down[argv[0]]:
            raise SchedulerError(f"{argv[0]} failed: Connection refused")
        return self.texts[argv[0]]


def test_one_sacct_call_answers_for_all_jobs_when_accounting_knows_them():
    slurm = FakeSlurm(sacct=SACCT)
    found = poll(["48", "58", "150"], run=slurm)
    assert slurm.calls == ["sacct"]
    assert list(found) == ["48", "58", "150_0", "150_1", "150_2"]


def test_the_controller_is_asked_only_for_jobs_sacct_does_not_know():
    slurm = FakeSlurm(sacct=SACCT, scontrol=SCONTROL)
    found = poll(["48", "200"], run=slurm)
    assert slurm.calls == ["sacct", "scontrol"]
    assert (found["48"].source, found["200"].source) == ("sacct", "scontrol")


def test_when_sacct_lags_behind_an_ended_job_the_controller_settles_it(tmp_path):
    (tmp_path / "150_0.exit").write_text("0\n")
    slurm = FakeSlurm(sacct=SACCT, scontrol="JobId=151 ArrayJobId=150 ArrayTaskId=0 JobState=COMPLETED ExitCode=0:0 RunTime=00:00:09 NodeList=node1\n")
    found = poll(["150_0"], {"150": str(tmp_path)}, run=slurm)
    assert slurm.calls == ["sacct", "scontrol"]
    assert (found["150_0"].state, found["150_0"].source, found["150_0"].elapsed_s) == ("COMPLETED", "scontrol", 9)


def test_with_accounting_down_the_controller_answers():
    slurm = FakeSlurm(scontrol=SCONTROL, sacct_down=True)
    assert poll(["200"], run=slurm)["200"].exit_code == 5


def test_with_both_down_the_exit_file_answers_and_other_jobs_stay_unknown(tmp_path):
    (tmp_path / "300.exit").write_text("0\n")
    (tmp_path / "301.exit").write_text("42\n")
    found = poll(["300", "301", "302"], {"300": str(tmp_path), "301": str(tmp_path), "302": str(tmp_path)},
                 run=FakeSlurm(sacct_down=True, scontrol_down=True))
    assert (found["300"].state, found["300"].exit_code) == ("COMPLETED", 0)
    assert (found["301"].state, found["301"].exit_code, found["301"].source) == ("FAILED", 42, "exit-file")
    assert found["302"].state == "UNKNOWN" and not found["302"].done


def test_an_exit_file_overrides_a_stale_running_state(tmp_path):
    (tmp_path / "150_0.exit").write_text("0\n")
    found = poll(["150_0"], {"150": str(tmp_path)}, run=FakeSlurm(sacct=SACCT))
    assert found["150_0"].state == "COMPLETED"
    assert found["150_0"].nodes == "node1"   # where it ran still comes from the stale answer


def test_an_array_that_no_source_remembers_is_listed_by_its_size(tmp_path):
    found = poll(["400"], {"400": str(tmp_path)}, run=FakeSlurm(sacct_down=True, scontrol_down=True), array_sizes={"400": 3})
    assert list(found) == ["400_0", "400_1", "400_2"]


def test_watch_polls_often_while_young_then_never_slower_than_the_interval():
    now = [0.0]
    watch = Watch(["1"], interval=30.0, run=FakeSlurm(), clock=lambda: now[0], sleep=lambda s: None)
    delays = []
    for age in (0, 2, 20, 100, 1000):
        now[0] = age
        delays.append(watch.delay())
    assert delays == [0.5, 0.5, 5.0, 25.0, 30.0]


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
