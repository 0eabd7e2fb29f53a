"""The efficiency report: sacct's text read right, advice worded exactly, arrays summarised.

The sacct text below was captured from the local Slurm 22.05 cluster (``sacct -n -P -o
<SACCT_FIELDS> -j ID``) unless a test says it is made up to reach a case the cluster cannot.
"""

import json

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.report import efficiency
from slurmkit.report.efficiency import (
    EarlierRun,
    JobEfficiency,
    advice,
    figure_lines,
    format_report,
    gpu_count,
    parse,
    parse_cpu_time,
    parse_req_mem,
    parse_size,
    sacct_command,
    summarize,
    task_count,
)
from slurmkit.slurm import slurmcli

# python3 allocating 80 MiB for 8 s, --mem=1G --time=10
SINGLE = """\
49|COMPLETED|0:0|9|10|00:00.307|1|1G||billing=1,cpu=1,mem=1G,node=1|1|
49.batch|COMPLETED|0:0|9||00:00.307|1||96976K|cpu=1,mem=1G,node=1|1|1
"""

# --array=0-2 --mem=512M, task i allocating 20+10i MiB
ARRAY = """\
50_0|COMPLETED|0:0|7|5|00:00.233|1|512M||billing=1,cpu=1,mem=512M,node=1|1|
50_0.batch|COMPLETED|0:0|7||00:00.233|1||35364K|cpu=1,mem=512M,node=1|1|1
50_1|COMPLETED|0:0|7|5|00:00.252|1|512M||billing=1,cpu=1,mem=512M,node=1|1|
50_1.batch|COMPLETED|0:0|7||00:00.252|1||45748K|cpu=1,mem=512M,node=1|1|1
50_2|COMPLETED|0:0|7|5|00:00.260|1|512M||billing=1,cpu=1,mem=512M,node=1|1|
50_2.batch|COMPLETED|0:0|7||00:00.260|1||55868K|cpu=1,mem=512M,node=1|1|1
"""

# --ntasks=2: two srun steps after the batch step
MULTI_STEP = """\
51|COMPLETED|0:0|10|5|00:00.507|2|512M||billing=2,cpu=2,mem=512M,node=1|1|
51.batch|COMPLETED|0:0|10||00:00.040|2||11852K|cpu=2,mem=512M,node=1|1|1
51.0|COMPLETED|0:0|6||00:00.448|2||44108K|cpu=2,mem=512M,node=1|1|2
51.1|COMPLETED|0:0|0||00:00.018|2||4128K|cpu=2,mem=512M,node=1|1|2
"""

FAILED = """\
52|FAILED|3:0|2|5|00:00.007|1|256M||billing=1,cpu=1,mem=256M,node=1|1|
52.batch|FAILED|3:0|2||00:00.007|1||3016K|cpu=1,mem=256M,node=1|1|1
"""

GPU = """\
53|COMPLETED|0:0|3|5|00:00.008|2|512M||billing=2,cpu=2,gres/gpu=1,mem=512M,node=1|1|
53.batch|COMPLETED|0:0|3||00:00.008|2||3224K|cpu=2,gres/gpu=1,mem=512M,node=1|1|1
"""

RUNNING = """\
54|RUNNING|0:0|13|1|00:00:00|1|256M||billing=1,cpu=1,mem=256M,node=1|1|
54.batch|RUNNING|0:0|13||00:00:00|1|||cpu=1,mem=256M,node=1|1|
"""

# The same job, after --time=1 ran out: the allocation says TIMEOUT, its batch step CANCELLED.
TIMEOUT = """\
54|TIMEOUT|0:0|80|1|00:00.006|1|256M||billing=1,cpu=1,mem=256M,node=1|1|
54.batch|CANCELLED|0:15|83||00:00.006|1||3224K|cpu=1,mem=256M,node=1|1|1
"""

CANCELLED = """\
59|CANCELLED by 0|0:0|8|5|00:00.017|2|2G||billing=2,cpu=2,mem=2G,node=1|1|
59.batch|CANCELLED|0:15|11||00:00.007|2||11736K|cpu=2,mem=2G,node=1|1|1
59.0|CANCELLED|0:15|10||00:00.010|2||4064K|cpu=2,mem=2G,node=1|1|1
"""

# A held --array=0-3%2, cancelled before any task started: one row stands for four tasks.
CANCELLED_PENDING_RANGE = """\
60_[0-3%2]|CANCELLED by 0|0:0|0|5|00:00:00|1|256M|||1|
"""

# --nodes=2 --mem=500M: ReqMem is the whole job's (1000M), MaxRSS the largest task's.
TWO_NODES = """\
62|COMPLETED|0:0|4|5|00:00.042|2|1000M||billing=2,cpu=2,mem=1000M,node=2|2|
62.batch|COMPLETED|0:0|4||00:00.024|1||3164K|cpu=1,mem=500M,node=1|1|1
62.0|COMPLETED|0:0|0||00:00.017|2||4056K|cpu=2,mem=1000M,node=2|2|2
"""


# A Lightning job on 2 nodes (kind lightning) that saved and requeued itself on SIGUSR1 before its
# 1-minute limit, then resumed and completed: ``sacct -D`` keeps both runs (plain sacct only the last).
REQUEUED = """\
2596|REQUEUED|0:0|28|1|00:17.005|4|3000M||billing=4,cpu=4,mem=3000M,node=2|2|
2596.batch|FAILED|15:0|31||00:00.050|2||13660K|cpu=2,mem=1500M,node=1|1|1
2596.0|COMPLETED|0:0|37||00:16.955|4||329604K|cpu=4,mem=3000M,node=2|2|4
2596|COMPLETED|0:0|19|1|00:20.276|4|3000M||billing=4,cpu=4,mem=3000M,node=2|2|
2596.batch|COMPLETED|0:0|19||00:00.060|2||13788K|cpu=2,mem=1500M,node=1|1|1
2596.0|COMPLETED|0:0|16||00:20.215|4||329984K|cpu=4,mem=3000M,node=2|2|4
"""


def record(**changes) -> JobEfficiency:
    """A completed one-core job that fits its request, changed where a test says."""
    base = JobEfficiency(job_id="7", state="COMPLETED", exit_code=0, signal=0, elapsed_s=3000, timelimit_s=3600,
                         cpu_s=2900.0, cores=1, nodes=1, req_mem_mib=1024.0, peak_mib=700.0, peak_estimated=False,
                         gpus=0, steps=("batch",))
    return base._replace(**changes)


# ------------------------------------------------------------------------------ sacct_command

def test_sacct_command_is_one_call_with_every_field_including_steps():
    assert sacct_command("50") == ["sacct", "-n", "-P", "-D", "-o",
                                   "JobID,State,ExitCode,ElapsedRaw,TimelimitRaw,TotalCPU,NCPUS,ReqMem,MaxRSS,"
                                   "AllocTRES,NNodes,NTasks,TRESUsageInAve,TRESUsageInMax", "-j", "50"]
    assert "-X" not in sacct_command("50_1")  # MaxRSS lives on the step rows


# ------------------------------------------------------------------------------ requeued jobs

def test_a_requeued_job_is_its_last_run_with_the_runs_before_it():
    [eff] = parse(REQUEUED)
    assert (eff.state, eff.elapsed_s, eff.steps) == ("COMPLETED", 19, ("batch", "0"))
    assert eff.cpu_s == pytest.approx(20.276)                    # the last run's, not the first's
    assert eff.peak_mib == pytest.approx(329984 * 4 / 1024)      # ... nor a mix of both runs' steps
    assert eff.earlier_runs == (EarlierRun(state="REQUEUED", exit_code=0, elapsed_s=28, cpu_s=pytest.approx(17.005)),)
    assert eff.all_elapsed_s == 47


def test_the_report_of_a_requeued_job_names_every_run_and_the_time_over_all():
    text = format_report(parse(REQUEUED))
    assert "State: COMPLETED (exit code 0)\n" in text
    assert "Runs: 2, requeued 1 time (the figures above and below are of run 2, the last)\n" in text
    assert "  run 1: REQUEUED after 00:00:28\n" in text
    assert "All runs: 00:00:47 wall-clock, 00:03:08 core-walltime, 00:00:37 CPU\n" in text


def test_rows_of_the_same_id_before_a_run_that_was_not_requeued_are_another_job():
    # made up: job ids wrap at MaxJobId, so sacct -D can hold an old, finished job of the same id
    old = SINGLE.replace("49", "2596")
    [eff] = parse(old + REQUEUED)
    assert [run.state for run in eff.earlier_runs] == ["REQUEUED"]
    [eff] = parse(REQUEUED.split("2596|COMPLETED")[0].replace("REQUEUED", "COMPLETED", 1)
                  + "2596|COMPLETED" + REQUEUED.split("2596|COMPLETED")[1])
    assert eff.earlier_runs == ()
    # an old job of the id that ended NODE_FAIL without a requeue, with another request (3h, 8 cores)
    old_node_fail = "2596|NODE_FAIL|0:0|7200|180|00:00:00|8|8G||billing=8,cpu=8,mem=8G,node=1|1|\n"
    [eff] = parse(old_node_fail + REQUEUED)
    assert [run.elapsed_s for run in eff.earlier_runs] == [28]


def test_a_last_run_whose_time_limit_accounting_has_not_filled_in_yet_keeps_its_runs():
    # seen on Slurm 22.05 just after a requeued job's second run: its row had no TimelimitRaw for a moment
    last_without_limit = REQUEUED.replace("2596|COMPLETED|0:0|19|1|", "2596|COMPLETED|0:0|19||")
    [eff] = parse(last_without_limit)
    assert eff.timelimit_s is None and [run.elapsed_s for run in eff.earlier_runs] == [28]


def test_time_advice_of_a_requeued_job_counts_every_run():
    # made up: three runs of a 1-hour limit, the first two requeued at the limit (Lightning's auto-requeue)
    runs = (EarlierRun("REQUEUED", 0, 3510, 3000.0), EarlierRun("REQUEUED", 0, 3510, 3000.0))
    said = advice(record(elapsed_s=1200, earlier_runs=runs))
    assert said == ["took 2h17m over 3 runs of at most 1h, each requeue waiting in the queue again: a limit of 4h would run it "
                    "in one where the cluster allows that; else keep checkpointing"]
    assert [t.suggest for t in efficiency.tips(record(elapsed_s=1200, earlier_runs=runs))] == [None]   # nothing for --apply
    # requeued once (a node failure), the runs together well inside the limit: "less", over both
    said = advice(record(elapsed_s=300, earlier_runs=(EarlierRun("NODE_FAIL", None, 200, 100.0),)))
    assert said == ["asked 1h, used 8m over 2 runs: ask 15m"]


def test_an_array_report_names_its_requeued_tasks():
    text = format_report(parse(ARRAY.replace("50_1|COMPLETED|0:0|7|", "50_1|REQUEUED|0:0|3|", 1).replace(
        "50_2|", "50_1|COMPLETED|0:0|7|5|00:00.252|1|512M||billing=1,cpu=1,mem=512M,node=1|1|\n50_2|", 1)))
    assert "Requeued: 1 task: 50_1 (2 runs) (figures are of each task's last run)\n" in text


# ------------------------------------------------------------------------------ parsing

def test_single_job_combines_its_allocation_row_with_its_batch_step():
    [eff] = parse(SINGLE)
    assert eff == JobEfficiency(job_id="49", state="COMPLETED", exit_code=0, signal=0, elapsed_s=9, timelimit_s=600,
                                cpu_s=0.307, cores=1, nodes=1, req_mem_mib=1024.0, peak_mib=96976 / 1024,
                                peak_estimated=False, gpus=0, steps=("batch",))
    assert eff.cpu_efficiency == pytest.approx(0.307 / 9)
    assert eff.memory_efficiency == pytest.approx(96976 / 1024 / 1024)
    assert eff.time_fraction == pytest.approx(9 / 600)


def test_array_gives_one_record_per_task_in_sacct_order():
    effs = parse(ARRAY)
    assert [eff.job_id for eff in effs] == ["50_0", "50_1", "50_2"]
    assert [round(eff.peak_mib, 1) for eff in effs] == [34.5, 44.7, 54.6]


def test_peak_is_the_largest_step_and_multi_task_steps_are_estimated():
    [eff] = parse(MULTI_STEP)
    assert eff.steps == ("batch", "0", "1")
    assert eff.peak_mib == pytest.approx(44108 * 2 / 1024)  # MaxRSS of step 0 is one task's; it ran two
    assert eff.peak_estimated is True
    assert eff.cpu_s == pytest.approx(0.507)  # the allocation row already sums its steps


def test_running_job_has_no_peak_and_no_cpu_efficiency_yet():
    [eff] = parse(RUNNING)
    assert (eff.state, eff.done, eff.peak_mib, eff.cpu_efficiency) == ("RUNNING", False, None, None)


def test_timeout_failed_and_cancelled_states_come_from_the_allocation_row():
    assert [(e.state, e.exit_code) for e in parse(TIMEOUT + FAILED + CANCELLED)] == [
        ("TIMEOUT", 0), ("FAILED", 3), ("CANCELLED", 0)]


def test_pending_range_row_is_one_record_standing_for_its_tasks():
    [eff] = parse(CANCELLED_PENDING_RANGE)
    assert (eff.job_id, eff.state, eff.steps, eff.peak_mib, eff.req_mem_mib) == ("60_[0-3%2]", "CANCELLED", (), None, 256.0)
    assert task_count(eff.job_id) == 4


def test_gpus_come_from_alloc_tres():
    assert [eff.gpus for eff in parse(GPU + SINGLE)] == [1, 0]


def test_two_node_request_is_the_whole_jobs_memory():
    [eff] = parse(TWO_NODES)
    assert (eff.nodes, eff.cores, eff.req_mem_mib) == (2, 2, 1000.0)
    assert eff.peak_mib == pytest.approx(4056 * 2 / 1024)


def test_lines_that_are_not_sacct_rows_are_skipped():
    assert parse("\nsacct: warning: something\n" + SINGLE) == parse(SINGLE)
    assert parse("") == []


def test_text_without_the_ntasks_column_still_parses():
    trimmed = "\n".join(line.rsplit("|", 1)[0] for line in MULTI_STEP.splitlines())
    [eff] = parse(trimmed)
    assert (eff.peak_mib, eff.peak_estimated) == (pytest.approx(44108 / 1024), False)


@pytest.mark.parametrize("text, unit, mib", [
    ("96976K", "K", 96976 / 1024), ("1G", "M", 1024.0), ("256M", "M", 256.0), ("1.5G", "M", 1536.0),
    ("2T", "M", 2 * 1024 ** 2), ("0", "K", 0.0), ("4000", "M", 4000.0), ("2048", "K", 2.0), ("", "K", None),
    ("n/a", "M", None),
])
def test_sizes_in_sacct_units(text, unit, mib):
    assert parse_size(text, default_unit=unit) == mib


@pytest.mark.parametrize("text, mib", [
    ("1G", 1024.0), ("256M", 256.0), ("4000Mc", 16000.0), ("4000Mn", 8000.0), ("2Gn", 4096.0), ("", None),
])
def test_req_mem_is_the_whole_jobs_in_old_and_new_formats(text, mib):
    assert parse_req_mem(text, cores=4, nodes=2) == mib


@pytest.mark.parametrize("text, seconds", [
    ("00:00.307", 0.307), ("01:02.5", 62.5), ("00:00:00", 0.0), ("12:34:56", 45296.0), ("1-02:03:04", 93784.0),
    ("10-00:00:00.25", 864000.25), ("", None), ("INVALID", None),
])
def test_total_cpu_forms(text, seconds):
    assert parse_cpu_time(text) == pytest.approx(seconds) if seconds is not None else parse_cpu_time(text) is None


@pytest.mark.parametrize("tres, gpus", [
    ("billing=2,cpu=2,gres/gpu=1,mem=512M,node=1", 1), ("cpu=8,gres/gpu:a100=2,mem=64G", 2),
    ("cpu=8,gres/gpu=4,gres/gpu:h100=4", 4), ("cpu=1,mem=1G", 0), ("", 0),
])
def test_gpu_count(tres, gpus):
    assert gpu_count(tres) == gpus


@pytest.mark.parametrize("job_id, count", [("12", 1), ("12_3", 1), ("12_[0-9]", 10), ("12_[0-9%2]", 10),
                                           ("12_[1,3,5-7]", 5), ("12_[0-10:5]", 3)])
def test_task_count(job_id, count):
    assert task_count(job_id) == count


# ------------------------------------------------------------------------------ advice

def test_memory_advice_for_a_request_far_above_the_peak():
    made_up = ("7|COMPLETED|0:0|720|180|00:11:00|1|32G||billing=1,cpu=1,mem=32G,node=1|1|\n"
               "7.batch|COMPLETED|0:0|720||00:11:00|1||2202010K|cpu=1,mem=32G,node=1|1|1\n")
    [eff] = parse(made_up)
    assert advice(eff) == ["asked 3h, used 12m: ask 30m", "asked 32G, peak 2.1G: ask 4G"]


def test_memory_advice_rounds_the_peak_plus_a_quarter_up_to_a_sensible_size():
    assert advice(record(req_mem_mib=65536.0, peak_mib=5000.0)) == ["asked 64G, peak 4.9G: ask 8G"]
    assert advice(record(req_mem_mib=4096.0, peak_mib=95.0)) == ["asked 4G, peak 95M: ask 256M"]
    assert advice(record(req_mem_mib=196608.0, peak_mib=36000.0)) == ["asked 192G, peak 35.2G: ask 48G"]


def test_no_memory_advice_when_the_peak_is_over_half_the_request():
    assert advice(record(req_mem_mib=1024.0, peak_mib=600.0)) == []


def test_no_memory_advice_for_a_request_at_the_site_default():
    # 2 cores x 256M is what the job gets without asking: telling it to ask less helps no one.
    assert advice(record(cores=2, cpu_s=5900.0, req_mem_mib=512.0, peak_mib=20.0)) == []
    assert advice(record(cores=2, cpu_s=5900.0, req_mem_mib=512.0, peak_mib=20.0), default_mem_per_cpu_mib=None) == [
        "asked 512M, peak 20M: ask 256M"]


def test_memory_advice_close_to_the_limit():
    assert advice(record(req_mem_mib=1024.0, peak_mib=980.0)) == ["peak 980M of 1G, close to the limit: ask 2G"]


def test_memory_advice_per_node_for_multi_node_jobs():
    [eff] = parse(TWO_NODES)
    assert advice(eff) == ["asked 500M per node, peak about 4M per node: ask 256M per node"]


def test_missing_peak_is_said_not_guessed():
    assert advice(record(peak_mib=None)) == [
        "no peak memory recorded (steps shorter than the sampling interval leave none): no memory advice"]


def test_time_advice_keeps_a_floor():
    assert advice(record(elapsed_s=30, cpu_s=29.0, timelimit_s=86400)) == ["asked 1d, used 30s: ask 15m"]
    # 9 s of a 10 minute limit: the floor (15m) is no saving, so nothing is said.
    assert advice(parse(SINGLE)[0]) == ["asked 1G, peak 95M: ask 256M"]


def test_time_advice_close_to_the_limit():
    assert advice(record(elapsed_s=3300, cpu_s=3200.0)) == ["used 55m of 1h, close to the limit: ask 2h"]


def test_cpu_advice_for_cores_the_program_does_not_use():
    eff = record(cores=8, elapsed_s=3600, cpu_s=0.11 * 8 * 3600, timelimit_s=5400, req_mem_mib=None)
    assert advice(eff) == ["8 cores at 11% CPU efficiency: the program uses about 1 core; "
                           "ask cpus_per_task: 1 or make it use threads"]
    eff = eff._replace(cpu_s=0.3 * 8 * 3600)
    assert advice(eff) == ["8 cores at 30% CPU efficiency: the program uses about 2 cores; "
                           "ask cpus_per_task: 2 or make it use more threads"]


def test_no_cpu_advice_for_short_jobs_or_busy_cores():
    assert advice(record(cores=8, elapsed_s=30, cpu_s=10.0, timelimit_s=900, req_mem_mib=None)) == []
    assert advice(record(cores=8, cpu_s=0.9 * 8 * 3000, req_mem_mib=None)) == []


def test_gpus_are_counted_and_utilisation_is_not_invented():
    [eff] = parse(GPU)
    assert advice(eff) == ["1 GPU allocated: sacct does not record GPU utilisation; "
                           "watch it with nvidia-smi on the node while the job runs"]


def test_timeout_says_so():
    [eff] = parse(TIMEOUT)
    assert advice(eff) == ["hit its time limit of 1m: ask more time or checkpoint"]


def test_failed_job_points_at_its_output():
    [eff] = parse(FAILED)
    assert advice(eff) == ["failed with exit code 3: read its output file; the figures may not show a full run"]


def test_cancelled_jobs_before_and_after_starting():
    assert advice(parse(CANCELLED)[0]) == ["was cancelled: the figures cover only the part that ran"]
    assert advice(parse(CANCELLED_PENDING_RANGE)[0]) == ["was cancelled before it started: nothing to report"]


def test_out_of_memory_suggests_more():
    assert advice(record(state="OUT_OF_MEMORY", exit_code=0, peak_mib=1030.0)) == [
        "ran out of memory at 1G: ask 2G or make it use less"]


def test_running_and_pending_jobs_get_no_sizing_advice():
    assert advice(parse(RUNNING)[0]) == [
        "is still running: sacct records memory and CPU time when each step ends (sstat shows them now)"]
    assert advice(record(state="PENDING", elapsed_s=0, steps=(), peak_mib=None)) == ["has not started yet: nothing to report"]


def test_node_failure_is_not_blamed_on_the_job():
    assert advice(record(state="NODE_FAIL")) == ["ended as NODE_FAIL, not by its own doing: resubmit it"]


# ------------------------------------------------------------------------------ arrays

def test_array_summary_spreads_and_one_advice_from_the_largest_task():
    summary = summarize(parse(ARRAY))
    assert (summary.job_id, summary.tasks, summary.states) == ("50", 3, {"COMPLETED": 3})
    assert summary.elapsed_s == (7, 7, 7)
    assert summary.cpu_efficiency == pytest.approx((0.233 / 7, 0.252 / 7, 0.260 / 7))
    assert summary.peak_mib == pytest.approx((35364 / 1024, 45748 / 1024, 55868 / 1024))
    assert summary.advice == ["asked 512M, peak 55M: ask 256M"]


def test_array_summary_counts_states_and_sizes_advice_for_the_longest_and_largest():
    tasks = [record(job_id="9_0", elapsed_s=600, cpu_s=590.0, timelimit_s=8 * 3600, req_mem_mib=8192.0, peak_mib=900.0),
             record(job_id="9_1", elapsed_s=1500, cpu_s=1490.0, timelimit_s=8 * 3600, req_mem_mib=8192.0, peak_mib=2000.0),
             record(job_id="9_2", state="TIMEOUT", elapsed_s=8 * 3600, timelimit_s=8 * 3600, req_mem_mib=8192.0),
             record(job_id="9_[3-5]", state="PENDING", elapsed_s=0, steps=(), peak_mib=None)]
    summary = summarize(tasks)
    assert (summary.tasks, summary.states) == (6, {"COMPLETED": 2, "PENDING": 3, "TIMEOUT": 1})
    # a task that hit the limit outweighs the completed ones that used little: no "ask 1h" beside "ask more time"
    assert summary.advice == ["3 of 6 tasks have not started yet", "1 of 6 tasks hit the time limit: ask more time or checkpoint",
                              "asked 8G, peak 2G: ask 4G"]


def test_an_array_where_one_task_ran_out_of_memory_is_told_to_ask_more_and_only_that():
    """The report once said both "ask more memory" and "ask 4G"."""
    tasks = [record(job_id=f"9_{i}", req_mem_mib=8192.0, peak_mib=1500.0) for i in range(3)]
    tasks.append(record(job_id="9_3", state="OUT_OF_MEMORY", req_mem_mib=8192.0, peak_mib=8100.0))
    assert summarize(tasks).advice == ["1 of 4 tasks ran out of memory at 8G: ask 16G or make it use less"]


def test_summarize_needs_a_record():
    with pytest.raises(ValueError):
        summarize([])


# ------------------------------------------------------------------------------ output

def test_report_of_one_job_reads_like_seff():
    assert format_report(parse(SINGLE)) == (
        "Job ID: 49\n"
        "State: COMPLETED (exit code 0)\n"
        "Nodes: 1\n"
        "Cores: 1\n"
        "CPU Utilized: 00:00:00\n"
        "CPU Efficiency: 3.41% of 00:00:09 core-walltime\n"
        "Wall-clock: 00:00:09 of 00:10:00 time limit (1.5%)\n"
        "Memory Utilized: 95M\n"
        "Memory Efficiency: 9.25% of 1G\n"
        "GPUs: none\n"
        "Advice:\n"
        "  - asked 1G, peak 95M: ask 256M\n")


def test_report_of_an_array_is_a_summary():
    assert format_report(parse(ARRAY)) == (
        "Array ID: 50\n"
        "Tasks: 3 (COMPLETED 3)\n"
        "Per task: 1 node(s), 1 core(s), 512M memory, 00:05:00 time limit\n"
        "Wall-clock (min/median/max): 00:00:07 / 00:00:07 / 00:00:07\n"
        "CPU Efficiency (min/median/max): 3.33% / 3.60% / 3.71%\n"
        "Memory Utilized (min/median/max): 35M / 45M / 55M\n"
        "GPUs: none\n"
        "Advice:\n"
        "  - asked 512M, peak 55M: ask 256M\n")


def test_report_of_running_and_estimated_jobs_says_what_is_not_known():
    running = format_report(parse(RUNNING))
    assert "CPU Utilized: not known until the job ends" in running and "Memory Utilized: not recorded" in running
    assert "State: RUNNING\n" in running
    assert "Memory Utilized: 86M (estimated maximum)" in format_report(parse(MULTI_STEP))
    assert "GPUs: 1 (utilisation not recorded by sacct)" in format_report(parse(GPU))
    assert "Advice: none, the request fits the use" in format_report(parse(MULTI_STEP))


def test_report_lists_tasks_that_did_not_complete():
    text = format_report(parse(ARRAY.replace("50_1|COMPLETED|0:0", "50_1|FAILED|2:0")))
    assert "Not completed: 50_1" in text
    assert "  - 1 of 3 tasks failed: read their output files" in text


# ------------------------------------------------------------------------------ CLI

@pytest.fixture
def sacct_answers(monkeypatch):
    """Make run_slurm answer with the text a test sets, and remember the argv it got."""
    calls = []

    def answer(text="", error=None):
        def fake(argv, **kwargs):
            calls.append(list(argv))
            if error:
                raise slurmcli.SchedulerError(error)
            import subprocess
            return subprocess.CompletedProcess(argv, 0, text, "")
        monkeypatch.setattr(slurmcli, "run_slurm", fake)
        return calls
    return answer


def test_cli_prints_the_report(sacct_answers):
    calls = sacct_answers(SINGLE)
    result = CliRunner().invoke(main, ["report", "49"])
    assert result.exit_code == 0, result.output
    assert result.output == format_report(parse(SINGLE))
    assert calls == [sacct_command("49")]


def test_cli_json(sacct_answers):
    sacct_answers(ARRAY)
    result = CliRunner().invoke(main, ["report", "50", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [job["job_id"] for job in data["jobs"]] == ["50_0", "50_1", "50_2"]
    assert data["jobs"][0]["advice"] == ["asked 512M, peak 35M: ask 256M"]
    assert data["summary"]["tasks"] == 3 and data["summary"]["states"] == {"COMPLETED": 3}
    assert data["summary"]["peak_mib"]["max"] == pytest.approx(55868 / 1024)
    assert data["summary"]["advice"] == ["asked 512M, peak 55M: ask 256M"]


def test_cli_json_of_one_job_has_no_summary(sacct_answers):
    sacct_answers(SINGLE)
    data = json.loads(CliRunner().invoke(main, ["report", "49", "--json"]).output)
    assert data["summary"] is None and data["jobs"][0]["steps"] == ["batch"]


def test_cli_unknown_job_is_one_line_and_exit_1(sacct_answers):
    sacct_answers("")
    result = CliRunner().invoke(main, ["report", "999999"])
    assert result.exit_code == 1
    assert result.output == "error: sacct has no record of job 999999: check the id, and that it ran on this cluster\n"


def test_cli_sacct_failure_is_one_line_and_exit_1(sacct_answers):
    sacct_answers(error="sacct could not report on job 5: Slurm accounting storage is disabled")
    result = CliRunner().invoke(main, ["report", "5"])
    assert result.exit_code == 1
    assert result.output == "error: sacct could not report on job 5: Slurm accounting storage is disabled\n"
    assert "Traceback" not in result.output


@pytest.mark.parametrize("job_id", ["abc", "12.batch", "12_[0-3]", "-5"])
def test_cli_rejects_what_is_not_a_job_id(sacct_answers, job_id):
    calls = sacct_answers(SINGLE)
    result = CliRunner().invoke(main, ["report", "--", job_id])
    assert result.exit_code == 2
    assert "is not a job id" in result.output
    assert calls == []


def test_report_is_listed_in_help_without_importing_it():
    result = CliRunner().invoke(main, ["--help"])
    assert "report" in result.output and "Efficiency of a finished job" in result.output


def _submitted(monkeypatch, tmp_path, job_id, exit_files):
    """A registry that knows ``job_id`` with its log folder, and the exit files the script left there."""
    from slurmkit.slurm.registry import Submission, record

    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    folder = tmp_path / "logs"
    folder.mkdir()
    record(Submission(job_id=job_id, name="t", folder=str(folder), profile="local", submitted="2026-11-26T10:00:00+00:00"))
    for name, text in exit_files.items():
        (folder / f"{name}.exit").write_text(text)


def test_the_report_says_which_outputs_were_not_saved_and_why(sacct_answers, monkeypatch, tmp_path):
    lost = "74\nnot-saved\t/p/results/runs\tNo space left on device\n"
    _submitted(monkeypatch, tmp_path, "49", {"49": lost})
    sacct_answers(SINGLE.replace("COMPLETED|0:0", "FAILED|74:0"))
    result = CliRunner().invoke(main, ["report", "49"])
    assert result.exit_code == 0, result.output
    assert "Outputs: NOT saved: /p/results/runs: No space left on device\n" in result.output
    data = json.loads(CliRunner().invoke(main, ["report", "49", "--json"]).output)
    assert data["jobs"][0]["unsaved"] == ["/p/results/runs: No space left on device"]


def test_the_report_of_a_job_stopped_at_its_limit_after_saving_says_timeout_and_saved(sacct_answers, monkeypatch, tmp_path):
    """sacct says FAILED 124 when the USR1 trap saved the outputs and exited; the exit file says why."""
    _submitted(monkeypatch, tmp_path, "52", {"52": "124\ntimeout\nsaved\t/p/out\n"})
    sacct_answers(FAILED.replace("3:0", "124:0"))
    output = CliRunner().invoke(main, ["report", "52"]).output
    assert "State: TIMEOUT\n" in output and "Outputs: saved (/p/out)\n" in output


def test_an_array_report_counts_the_tasks_that_lost_outputs(sacct_answers, monkeypatch, tmp_path):
    _submitted(monkeypatch, tmp_path, "50", {"50_0": "0\nsaved\t/p/s\n", "50_2": "74\nnot-saved\t/p/s\tOperation not permitted\n"})
    sacct_answers(ARRAY)
    output = CliRunner().invoke(main, ["report", "50"]).output
    assert "Outputs NOT saved by 1 task: 50_2 (first: /p/s: Operation not permitted)\n" in output


@pytest.mark.parametrize("code, who", [(10, "srun"), (138, "bash")])
def test_a_failure_with_the_code_of_sigusr1_names_the_time_limit_signal(code, who):
    """An outside tester, on 22.05: a program without Lightning's SLURM plugin, under kind
    lightning, died of the USR1 sent 90 s before the limit; report said only 'exit code 10'."""
    [eff] = parse(FAILED)
    eff = eff._replace(exit_code=code)
    (said,) = advice(eff)
    assert said.startswith(f"failed with exit code {code}: read its output file") and f"({code} is also what {who} returns" in said


def test_cpu_advice_of_several_tasks_names_no_cpus_per_task_figure():
    # 2 tasks of 8 cores each (an srun step of NTasks 2), 4 cores busy in all
    said = advice(record(cores=16, cpu_s=3000 * 4, tasks=2))
    assert said[0] == ("16 cores at 25% CPU efficiency: its 2 tasks kept about 4.0 cores busy in all, 2.0 each of their 8: "
                       "ask cpus_per_task: 2 (per task) or make them use more threads")
    # 8 tasks of one core each at 20%: nothing less to ask per task
    assert not [line for line in advice(record(cores=8, cpu_s=3000 * 1.6, tasks=8)) if "cpus_per_task" in line]
    said = advice(record(cores=16, cpu_s=3000 * 4, nodes=2))
    assert said[0] == ("16 cores at 25% CPU efficiency over 2 nodes: its processes kept about 4 cores busy in all: ask fewer "
                       "cores per task or fewer tasks, or make them use more threads")


def test_tasks_are_the_largest_step_but_the_extern_one():
    [eff] = parse(MULTI_STEP)
    assert eff.tasks == 2
    [eff] = parse(SINGLE)
    assert eff.tasks == 1
    [eff] = parse(TWO_NODES.replace("62.0|", "62.extern|"))   # extern runs one task per node: no program's
    assert eff.tasks == 1


def test_a_job_waiting_between_its_runs_is_told_what_it_is_waiting_for():
    earlier = (EarlierRun("REQUEUED", 0, 28, 17.0),)
    assert advice(record(state="PENDING", elapsed_s=0, steps=(), earlier_runs=earlier)) == [
        "is queued to run again (run 2): the runs so far are listed with the figures"]
    assert advice(record(state="REQUEUE_HOLD", job_id="2596")) == [
        "was requeued and is held: `scontrol release 2596` lets it run again (submitting it again would run it twice)"]
    assert advice(record(state="REQUEUED")) == ["was requeued and waits to run again: the figures are of the run that ended"]


def test_an_array_is_advised_on_its_longest_task_over_all_its_runs():
    # made up: task 1 was requeued at 55m of a 1h limit and ran 20m more; task 0 ran 40m once
    effs = [record(job_id="9_0", elapsed_s=2400),
            record(job_id="9_1", elapsed_s=1200, earlier_runs=(EarlierRun("REQUEUED", 0, 3300, 3000.0),))]
    summary = summarize(effs)
    assert not [line for line in summary.advice if "ask 30m" in line or "asked 1h, used" in line], summary.advice
    assert any(line.startswith("took 1h15m over 2 runs of at most 1h") for line in summary.advice), summary.advice


def test_a_job_a_signal_ended_is_never_said_to_have_exit_code_0():
    assert "State: FAILED (killed by signal 9)" in figure_lines([record(state="FAILED", exit_code=0, signal=9)])
    assert "State: FAILED (exit code 3)" in figure_lines([record(state="FAILED", exit_code=3)])
    assert "State: FAILED (exit code 137, signal 9)" in figure_lines([record(state="FAILED", exit_code=137, signal=9)])


@pytest.mark.parametrize("seconds, said", [(0, "under 1s"), (0.4, "under 1s"), (3, "3s"), (59, "59s"), (61, "1m"), (3700, "1h2m")])
def test_an_elapsed_time_is_said_as_a_person_says_it(seconds, said):
    from slurmkit.report.efficiency import short_duration

    assert short_duration(seconds) == said


@pytest.mark.parametrize("line, limit", [("#SBATCH --time=0:10:00", 600), ("#SBATCH --time=2-00:00:00", 172800),
                                          ("#SBATCH -t 90", 5400), ("#SBATCH --time='1:00:00'", 3600), ("# no time", None)])
def test_a_limit_accounting_has_not_shown_yet_is_read_from_the_kept_script(line, limit):
    """Slurm 22.05 can show a just-ended job's row without TimelimitRaw, the moment submit --wait
    reports: the failed job's report lost "of 00:10:00 time limit". The kept script says it."""
    eff = efficiency.JobEfficiency(job_id="41", state="FAILED", exit_code=3, signal=0, elapsed_s=3, timelimit_s=None, cpu_s=0.0,
                                   cores=1, nodes=1, req_mem_mib=200.0, peak_mib=3.0, peak_estimated=False, gpus=0, steps=("batch",))
    files = {"41_submission.sh": f"#!/bin/bash\n#SBATCH --job-name=x\n{line}\nset -eu\n", "41.exit": "3\n"}
    [completed] = efficiency.with_job_files([eff], lambda job_id, suffix: files.get(job_id + suffix))
    assert completed.timelimit_s == limit
    wall = next(text for text in efficiency.format_report([completed]).splitlines() if text.startswith("Wall-clock"))
    assert ("time limit" in wall) == (limit is not None), wall
    sacct_said = eff._replace(timelimit_s=1200)
    assert efficiency.with_job_files([sacct_said], lambda job_id, suffix: files.get(job_id + suffix))[0].timelimit_s == 1200


@pytest.mark.parametrize("line, cores, nodes, mib", [("#SBATCH --mem=1G", 2, 1, 1024.0), ("#SBATCH --mem=1G", 2, 2, 2048.0),
                                                     ("#SBATCH --mem-per-cpu=256M", 4, 1, 1024.0), ("#SBATCH --mem=0", 4, 1, None),
                                                     ("#SBATCH --time=1:00:00", 1, 1, None)])
def test_a_memory_request_accounting_has_not_shown_yet_is_read_from_the_kept_script(line, cores, nodes, mib):
    """The same 22.05 row (ReqMem '16?') dropped the memory efficiency and advice."""
    [row] = efficiency.parse("5|COMPLETED|0:0|0||0|2|16?||billing=2|1|\n")
    assert row.partial and row.req_mem_mib is None and row.timelimit_s is None
    eff = row._replace(cores=cores, nodes=nodes)
    files = {"5_submission.sh": f"#!/bin/bash\n{line}\n"}
    [completed] = efficiency.with_job_files([eff], lambda job_id, suffix: files.get(job_id + suffix))
    assert completed.req_mem_mib == mib
