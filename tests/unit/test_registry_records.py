"""The registry's records: appends that survive torn lines, short writes and bad paths; reads
that skip what is not a record; intents that an interrupted submit left, adopted once."""

import fcntl
import json
import os
import subprocess

import pytest

from slurmkit.slurm import registry
from slurmkit.slurm.registry import (
    NEVER_REACHED,
    Known,
    RegistryError,
    Submission,
    adopt_interrupted,
    all_records,
    intent,
    open_intents,
    parse_token_lines,
    record,
    submissions,
    token_in,
)


def _job(job_id, **fields):
    return Submission(job_id=job_id, name="n", folder="/f", profile="local", submitted="2026-01-01T00:00:00+00:00", **fields)


def _dead_pid():
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_an_append_after_a_torn_line_starts_on_a_line_of_its_own(tmp_path):
    path = tmp_path / "jobs.jsonl"
    record(_job("7"), path)
    with open(path, "a") as handle:
        handle.write('{"job_id": "8", "na')
    record(_job("9"), path)
    lines = path.read_text().split("\n")
    assert lines[1] == '{"job_id": "8", "na' and json.loads(lines[2])["job_id"] == "9"
    assert [s.job_id for s in submissions(path)] == ["7", "9"]


def test_lines_that_are_not_records_are_skipped_with_one_warning_naming_file_and_lines(tmp_path, capsys):
    path = tmp_path / "jobs.jsonl"
    record(_job("1"), path)
    good = path.read_text()
    wrong_type = json.dumps({**_job("3")._asdict(), "array_size": "many"})
    a_bool = json.dumps({**_job("4")._asdict(), "link": True})
    path.write_text(good + "[1,2]\nnot json\n" + wrong_type + "\n" + a_bool + "\n" + '{"job_id": 5}\n' + good.replace('"1"', '"2"'))
    assert [s.job_id for s in submissions(path)] == ["1", "2"]
    assert [s.job_id for s in submissions(path)] == ["1", "2"]   # read twice: still one warning
    assert capsys.readouterr().err == f"warning: {path}: lines 2, 3, 4, 5, 6 are not slurmkit records and were skipped\n"


def test_a_short_write_is_truncated_away_and_reported(tmp_path, monkeypatch):
    path = tmp_path / "jobs.jsonl"
    record(_job("1"), path)
    before = path.read_bytes()
    real_write = os.write
    monkeypatch.setattr(registry.os, "write", lambda fd, data: real_write(fd, data[:10]))
    with pytest.raises(RegistryError, match=rf"cannot write the job registry {path}: short write \(10 of \d+ bytes\)"):
        record(_job("2"), path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("layout, says", [
    ("folder", "it is a folder, not a file; remove it or set SLURMKIT_REGISTRY to a file"),
    ("parent-is-a-file", "a folder above it is a file, not a folder"),
])
def test_a_registry_path_that_cannot_be_a_file_is_one_line_naming_it(tmp_path, layout, says):
    if layout == "folder":
        path = tmp_path / "jobs.jsonl"
        path.mkdir()
    else:
        (tmp_path / "state").write_text("")
        path = tmp_path / "state" / "slurmkit" / "jobs.jsonl"
    with pytest.raises(RegistryError) as caught:
        record(_job("1"), path)
    assert str(caught.value).startswith(f"cannot write the job registry {path}: {says}")
    assert "\n" not in str(caught.value) and caught.value.exit_code == 1


def test_a_folder_as_registry_is_an_error_on_reading_too(tmp_path):
    (tmp_path / "jobs.jsonl").mkdir()
    with pytest.raises(RegistryError, match="cannot read the job registry .*: it is a folder"):
        submissions(tmp_path / "jobs.jsonl")


def test_the_lock_wait_is_bounded(tmp_path):
    path = tmp_path / "jobs.jsonl"
    path.write_text("")
    with open(path) as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)
        with pytest.raises(RegistryError, match="stayed locked by another process for 0s"):
            record(_job("1"), path, wait_s=0.2)
    assert path.read_text() == ""


def test_an_intent_is_not_a_job_until_its_id_is_recorded(tmp_path):
    path = tmp_path / "jobs.jsonl"
    planned = intent("n", "/f", "local", "tok1")
    record(planned, path)
    assert submissions(path) == [] and open_intents(all_records(path)) == [planned]
    record(registry.adopted(planned, "42"), path)
    assert [s.job_id for s in submissions(path)] == ["42"] and open_intents(all_records(path)) == []


def test_status_adopts_an_intent_slurm_knows_by_its_token_once(tmp_path):
    path = tmp_path / "jobs.jsonl"
    record(intent("n", "/f", "local", "tok1")._replace(pid=_dead_pid()), path)
    said = []
    adopt_interrupted(said.append, path, lookup=lambda since: Known({"tok1": "42"}, True))
    adopt_interrupted(said.append, path, lookup=lambda since: Known({"tok1": "42"}, True))
    assert said == ["adopted job 42 (submitted by an interrupted slurmkit)"]
    assert [(s.job_id, s.token) for s in submissions(path)] == [("42", "tok1")]


def test_the_intent_of_a_live_submit_is_left_to_it(tmp_path):
    path = tmp_path / "jobs.jsonl"
    record(intent("n", "/f", "local", "tok1"), path)   # this process: alive, still submitting
    looked = []
    assert adopt_interrupted(print, path, lookup=lambda since: looked.append(since) or Known({"tok1": "42"}, True)) == []
    assert looked == [] and submissions(path) == []


def test_an_unknown_intent_is_said_once_kept_and_after_a_day_closed_as_never_reached(tmp_path):
    path = tmp_path / "jobs.jsonl"
    young = intent("young", "/f", "local", "tok-young")._replace(pid=_dead_pid())
    old = intent("old", "/f", "local", "tok-old")._replace(pid=_dead_pid(), submitted="2020-01-01T00:00:00+00:00")
    record(young, path)
    record(old, path)
    said = []
    adopt_interrupted(said.append, path, lookup=lambda since: Known({}, True))
    assert said[0].startswith(f"warning: the submission of young at {young.submitted} (token tok-young) is not known to "
                              "SLURM yet; slurmkit status keeps looking")
    assert said[1] == f"the submission of old at {old.submitted} (token tok-old) {NEVER_REACHED}; it is no longer looked up"
    said.clear()
    looked = []
    adopt_interrupted(said.append, path, lookup=lambda since: looked.append(since) or Known({}, True))
    assert said == [] and looked == [young.submitted]   # still looked up, not said again
    assert [entry.token for entry in open_intents(all_records(path))] == ["tok-young"]
    assert [(entry.name, entry.note) for entry in all_records(path)] == [
        ("young", None), ("old", None), ("young", "not known to SLURM yet"), ("old", NEVER_REACHED)]   # nothing lost
    adopt_interrupted(said.append, path, lookup=lambda since: Known({"tok-young": "43"}, True))
    assert said == ["adopted job 43 (submitted by an interrupted slurmkit)"] and open_intents(all_records(path)) == []


def test_an_old_intent_is_not_given_up_while_accounting_does_not_answer(tmp_path):
    path = tmp_path / "jobs.jsonl"
    old = intent("old", "/f", "local", "tok-old")._replace(pid=_dead_pid(), submitted="2020-01-01T00:00:00+00:00")
    record(old, path)
    said = []
    adopt_interrupted(said.append, path, lookup=lambda since: Known({}, complete=False))
    assert len(said) == 1 and "is not known to SLURM yet" in said[0]
    assert open_intents(all_records(path)) == [old]
    adopt_interrupted(said.append, path, lookup=lambda since: Known({}, complete=True))
    assert NEVER_REACHED in said[1] and open_intents(all_records(path)) == []


def test_a_controller_that_does_not_answer_leaves_intents_open_with_a_warning(tmp_path):
    from slurmkit.slurm.slurmcli import SchedulerError

    path = tmp_path / "jobs.jsonl"
    record(intent("n", "/f", "local", "tok1")._replace(pid=_dead_pid()), path)

    def down(since):
        raise SchedulerError("squeue failed: Unable to contact slurm controller")

    said = []
    assert adopt_interrupted(said.append, path, lookup=down) == []
    assert said == ["warning: 1 interrupted submission(s) not looked up: squeue failed: Unable to contact slurm controller"]
    assert len(open_intents(all_records(path))) == 1


def test_an_unreadable_registry_goes_to_on_error(tmp_path):
    (tmp_path / "jobs.jsonl").mkdir()
    errors = []
    adopt_interrupted(print, tmp_path / "jobs.jsonl", on_error=errors.append)
    assert len(errors) == 1 and "it is a folder" in errors[0].message


def test_tokens_are_read_from_squeue_comments_and_sacct_submit_lines():
    squeue = "11|slurmkit:aa11\n12_[0-3]|slurmkit:bb22\n13|someone else's comment\n14|(null)\n"
    sacct = "15|sbatch --parsable --comment=slurmkit:cc33 /f/.t.sbatch|\n16||slurmkit:dd44\n17_2|sbatch x|\n"
    assert parse_token_lines(squeue) == {"aa11": "11", "bb22": "12"}
    assert parse_token_lines(sacct) == {"cc33": "15", "dd44": "16"}
    assert token_in("sbatch --comment=slurmkit:ab12|slurmkit:ab12") == "ab12"


def test_deeply_nested_or_undecodable_lines_are_skipped_like_any_bad_line(tmp_path, capsys):
    path = tmp_path / "jobs.jsonl"
    record(_job("1"), path)
    with open(path, "ab") as handle:
        handle.write(b"[" * 100000 + b"\n\xff\xfe\n")
    assert [s.job_id for s in submissions(path)] == ["1"]
    assert capsys.readouterr().err == f"warning: {path}: lines 2, 3 are not slurmkit records and were skipped\n"
