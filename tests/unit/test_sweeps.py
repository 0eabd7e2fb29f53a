"""A split sweep followed as one job: its parts' tasks by their point, a point found in its part."""

import subprocess

import pytest

from slurmkit.slurm.monitor import JobStatus
from slurmkit.slurm.registry import Submission
from slurmkit.slurm.sweeps import as_one, joins_of, largest_array, live_max_array_size, locate, parts_of


def part(job_id, size, offset, sweep=None):
    return Submission(job_id=job_id, name="big", folder="/logs", profile="local", submitted="t", array_size=size,
                      offset=offset, parts=3, sweep=sweep)


RECORDS = {"10": part("10", 1001, 0), "11": part("11", 1001, 1001, "10"), "12": part("12", 498, 2002, "10")}


def test_each_parts_task_is_shown_under_the_sweep_numbered_by_its_point():
    statuses = {"10_0": JobStatus("10_0", "COMPLETED"), "12_398": JobStatus("12_398", "FAILED"), "7": JobStatus("7", "RUNNING")}
    shown = as_one(statuses, joins_of(RECORDS))
    assert sorted(shown) == ["10_0", "10_2400", "7"]
    assert shown["10_2400"] == JobStatus("10_2400", "FAILED")


def test_a_point_is_found_in_the_part_that_ran_it():
    parts = parts_of(RECORDS["10"], RECORDS)
    assert [p.job_id for p in parts] == ["10", "11", "12"]
    assert [(p.job_id, task) for p, task in (locate(n, parts) for n in (0, 1000, 1001, 2400))] == [
        ("10", 0), ("10", 1000), ("11", 0), ("12", 398)]


def test_a_plain_array_is_its_own_only_part():
    plain = Submission(job_id="5", name="a", folder="/l", profile="local", submitted="t", array_size=3)
    assert parts_of(plain, {"5": plain}) == [plain] and joins_of({"5": plain}) == {}


@pytest.mark.parametrize("profile, live, most", [(1001, 500, 500), (None, 1001, 1001), (300, None, 300), (None, None, None)])
def test_the_largest_array_is_the_smaller_of_the_profiles_and_the_clusters(profile, live, most):
    assert largest_array(profile, live) == most


def test_the_clusters_max_array_size_is_read_from_scontrol_show_config():
    def run(argv, **_):
        assert argv == ["scontrol", "show", "config"]
        return subprocess.CompletedProcess(argv, 0, "Configuration data as of 2026\nMaxArraySize            = 2001\n", "")

    assert live_max_array_size(run) == 2001


def test_a_cluster_that_cannot_be_asked_leaves_the_profiles_limit():
    from slurmkit.slurm.slurmcli import SchedulerError

    def run(argv, **_):
        raise SchedulerError("scontrol failed: Unable to contact slurm controller")

    assert live_max_array_size(run) is None


class FakeSubmit:
    """submit_script's stand-in: records each part's call; refuses the part numbered ``refuse``."""

    def __init__(self, refuse=None):
        self.calls, self.refuse = [], refuse

    def __call__(self, script, folder, name, profile, array_size=None, after=(), after_type="ok", part=None, **_):
        from slurmkit.core.errors import SlurmkitError
        from slurmkit.slurm.submit import SweepHandle

        if len(self.calls) + 1 == self.refuse:
            raise SlurmkitError("sbatch refused the job: QOSMaxSubmitJobPerUserLimit")
        self.calls.append((tuple(after), after_type, part))
        return SweepHandle(folder, str(100 + len(self.calls)), array_size)


PARTS = [(0, "a", 4), (4, "b", 4), (8, "c", 2)]


def test_parts_go_together_each_independent_and_are_one_handle(monkeypatch, tmp_path):
    fake = FakeSubmit()
    monkeypatch.setattr("slurmkit.slurm.submit.submit_script", fake)
    from slurmkit.slurm.sweeps import submit_sweep

    handle = submit_sweep(PARTS, False, tmp_path, "big", "local", after=("7",))
    assert fake.calls == [(("7",), "ok", (None, 0, 3)), (("7",), "ok", ("101", 4, 3)), (("7",), "ok", ("101", 8, 3))]
    assert (handle.job_id, handle.size, handle.parts) == ("101", 10, ["101", "102", "103"])
    assert [t.job_id for t in handle.tasks][3:6] == ["101_3", "102_0", "102_1"]


def test_a_throttled_sweeps_parts_each_wait_for_the_one_before(monkeypatch, tmp_path):
    fake = FakeSubmit()
    monkeypatch.setattr("slurmkit.slurm.submit.submit_script", fake)
    from slurmkit.slurm.sweeps import submit_sweep

    submit_sweep(PARTS, True, tmp_path, "big", "local")
    assert [call[:2] for call in fake.calls] == [((), "ok"), (("101",), "any"), (("102",), "any")]


def test_a_part_refused_after_others_names_those_submitted(monkeypatch, tmp_path):
    monkeypatch.setattr("slurmkit.slurm.submit.submit_script", FakeSubmit(refuse=3))
    from slurmkit.slurm.sweeps import SweepIncomplete, submit_sweep

    with pytest.raises(SweepIncomplete, match=r"stopped at part 3 of 3; parts 1-2 are jobs 101 102: `slurmkit cancel 101 102`"):
        submit_sweep(PARTS, False, tmp_path, "big", "local")


def test_remote_submit_refuses_a_sweep_it_would_have_to_split():
    from slurmkit.core.errors import SlurmkitError
    from slurmkit.slurm.remote_jobs import _refuse_split_sweep
    from tests.unit.test_arraysplit import sweep_plan

    _refuse_split_sweep(sweep_plan(1001), 1001)   # one array: taken
    with pytest.raises(SlurmkitError) as refused:
        _refuse_split_sweep(sweep_plan(2500), 1001)
    assert "\n" not in refused.value.message and refused.value.message.startswith("2500 tasks are more than one array holds on ")
    assert refused.value.message.endswith("(1001), and --remote does not split a sweep into linked arrays yet: run `slurmkit "
                                          "submit` on the cluster itself, which splits it, or cut the grid into specs of at most "
                                          "1001 points")


@pytest.mark.parametrize("size, most, sizes", [(25, 10, [9, 9, 7]), (1001, 1000, [501, 500]), (2500, 1001, [834, 834, 832]),
                                               (10, 10, [10]), (10, None, [10]), (7, 3, [3, 3, 1])])
def test_even_parts_are_as_many_as_the_splitters_and_as_even_as_it_makes_them(size, most, sizes):
    from slurmkit.resolve.arraysplit import even_part_sizes, part_sizes

    assert even_part_sizes(size, most) == sizes
    assert len(sizes) == len(part_sizes(size, most)) and sum(sizes) == size and max(sizes) <= (most or size)


def _scheduling(max_array_size=None, max_jobs_per_user=None):
    from types import SimpleNamespace

    return SimpleNamespace(max_array_size=max_array_size, max_jobs_per_user=max_jobs_per_user)


@pytest.mark.parametrize("count, profile, live, sizes", [
    (25, (10, None), None, [9, 9, 7]),        # the profile's largest array
    (25, (1001, None), 10, [9, 9, 7]),        # the cluster's, smaller
    (1000, (1000, 1000), 1001, [1000]),       # fits one array
    (12_000, (1001, None), None, [1000] * 12),  # no job limit stated: MaxArraySize alone
    (1, (None, None), None, [1]),             # the cluster is not asked for one call
])
def test_map_arrays_calls_go_as_one_array_or_even_linked_parts(count, profile, live, sizes):
    from slurmkit.api.functions import call_parts

    def ask():
        assert count > 1, "the cluster is asked only where there is more than one call"
        return live

    assert call_parts(count, _scheduling(*profile), "site", ask) == sizes


@pytest.mark.parametrize("count, profile, live, said", [
    (1001, (1001, 1000), None, "1001 calls are more than site lets one user queue (1000 jobs; each call is one)"),
    (10_001, (None, None), None, "10001 calls are more than site lets one user queue (10000 jobs"),   # slurmkit's own cap
    (7, (3, None), None, "7 calls in arrays of at most 3 tasks (site) would leave an array of one call"),
])
def test_map_array_refuses_what_splitting_cannot_take(count, profile, live, said):
    from slurmkit.api.functions import TooManyCalls, call_parts

    with pytest.raises(TooManyCalls) as raised:
        call_parts(count, _scheduling(*profile), "site", lambda: live)
    assert said in raised.value.message
