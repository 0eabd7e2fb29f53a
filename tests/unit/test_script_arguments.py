"""`slurmkit submit SPEC -- ARGS` and ``Job.submit(args=...)``: the words sbatch passes to the
script after its name (``sbatch [options] script [args...]``). They reach sbatch as argv, never
through a shell here; over ssh each is quoted for the far shell; the intent records them before
sbatch runs, so that a retry under the same token is the same job and ``status`` shows them.
(The real controller: tests/integration/test_script_arguments_on_cluster.py.)"""

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.slurm.registry import Submission, all_records, record
from slurmkit.slurm.submit import BadArguments, sbatch_command, script_arguments, submit_script

#: what a user might pass, and no shell may read: blanks, quotes, substitutions, a newline, a glob, nothing.
HOSTILE = ["a b", "$(touch pwned)", "`touch pwned`", "x\ny", "it's", '"q"', "*", "", "--wait", "-- "]
SEPARATOR = "\x01"


def _recording_sbatch(tmp_path: Path) -> Path:
    """A fake sbatch that writes its argv (one word each, SEPARATOR after each) and the registry
    as it was when it ran, then prints a job id."""
    path = tmp_path / "bin" / "sbatch"
    path.parent.mkdir()
    path.write_text('#!/bin/bash\nfor a in "$@"; do printf "%s\\001" "$a"; done > "$ARGV_FILE"\n'
                    'cp "$SLURMKIT_REGISTRY" "$ARGV_FILE.registry"\necho 41\n')
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return tmp_path / "argv"


@pytest.fixture
def sbatch_here(tmp_path, monkeypatch):
    argv_file = _recording_sbatch(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    monkeypatch.setenv("ARGV_FILE", str(argv_file))
    monkeypatch.chdir(tmp_path)
    return argv_file


def _words(path: Path):
    return path.read_text().split(SEPARATOR)[:-1]


def test_the_arguments_follow_the_script_in_sbatchs_argv():
    argv = sbatch_command(Path("/j/x.sbatch"), Path("/j"), array=False, token="t", args=("a b", "$1"))
    assert argv[-3:] == ["/j/x.sbatch", "a b", "$1"]
    assert sbatch_command(Path("/j/x.sbatch"), Path("/j"), array=False)[-1] == "/j/x.sbatch"


def test_hostile_arguments_reach_sbatch_as_words_and_the_intent_holds_them_before_it_runs(sbatch_here, tmp_path):
    handle = submit_script("#!/bin/bash\ntrue\n", tmp_path / "logs", "t", "local", args=HOSTILE)
    words = _words(sbatch_here)
    assert words[words.index(next(w for w in words if w.endswith(".sbatch"))) + 1:] == HOSTILE
    assert not (tmp_path / "pwned").exists()
    # The intent (written before sbatch ran) holds them: an adopted job is the same job, arguments and all.
    intents = [json.loads(line) for line in Path(f"{sbatch_here}.registry").read_text().splitlines()]
    assert [r["args"] for r in intents] == [HOSTILE] and intents[0]["job_id"] == ""
    assert handle.job_id == "41" and [r.args for r in all_records()] == [HOSTILE, HOSTILE]


def test_a_job_with_no_arguments_records_none(sbatch_here, tmp_path):
    submit_script("#!/bin/bash\ntrue\n", tmp_path / "logs", "t", "local")
    assert _words(sbatch_here)[-1].endswith(".sbatch") and {r.args for r in all_records()} == {None}


@pytest.mark.parametrize("args, message", [
    ("abc", "a list of words, not one string"),
    (["ok", 3], "argument 2 of the job is int 3, not a string"),
    (["a\0b"], "argument 1 of the job holds a NUL byte"),
    (["x" * 200_000], "more than slurmkit's limit"),
])
def test_arguments_sbatch_cannot_pass_are_refused_in_one_line_before_anything_is_submitted(args, message, sbatch_here, tmp_path):
    with pytest.raises(BadArguments, match=message) as raised:
        submit_script("#!/bin/bash\ntrue\n", tmp_path / "logs", "t", "local", args=args)
    assert raised.value.exit_code == 2 and "\n" not in raised.value.message
    assert not sbatch_here.exists() and not (tmp_path / "jobs.jsonl").exists()


def test_script_arguments_keeps_words_as_given():
    assert script_arguments(iter(["a", ""])) == ("a", "")


SPEC = "name: hello\nprofile: local\naccount: def-lab\nkind: serial\nresources: {time: 10m}\nlaunch: {shell: 'echo \"$1\"'}\n"


def _handle(tmp_path):
    return type("Handle", (), {"job_id": "77", "paths": type("Paths", (), {"folder": str(tmp_path)})()})()


def test_submit_passes_the_words_after_double_dash_and_says_them(monkeypatch, tmp_path):
    from slurmkit.api.job import Job

    (tmp_path / "job.yaml").write_text(SPEC)
    given = {}
    monkeypatch.setattr(Job, "submit", lambda self, *a, **kw: (given.update(kw), _handle(tmp_path))[1])
    result = CliRunner().invoke(main, ["submit", str(tmp_path / "job.yaml"), "--", "a b", "--wait", "x\ny", "$(id)"])
    assert result.exit_code == 0, result.output
    assert given["args"] == ("a b", "--wait", "x\ny", "$(id)")   # after --, --wait is the job's word, not an option
    assert result.stdout == f"submitted job 77 with arguments 'a b' --wait $'x\\ny' '$(id)'; logs in {tmp_path}\n"


def test_submit_without_double_dash_passes_no_arguments(monkeypatch, tmp_path):
    from slurmkit.api.job import Job

    (tmp_path / "job.yaml").write_text(SPEC)
    given = {}
    monkeypatch.setattr(Job, "submit", lambda self, *a, **kw: (given.update(kw), _handle(tmp_path))[1])
    assert CliRunner().invoke(main, ["submit", str(tmp_path / "job.yaml")]).exit_code == 0
    assert given["args"] == ()


def test_a_second_word_without_double_dash_is_refused_not_passed_to_the_job(monkeypatch, tmp_path):
    from slurmkit.api.job import Job

    (tmp_path / "job.yaml").write_text(SPEC)
    monkeypatch.setattr(Job, "submit", lambda self, *a, **kw: pytest.fail("submitted"))
    result = CliRunner().invoke(main, ["submit", str(tmp_path / "job.yaml"), "other.yaml"])
    assert result.exit_code == 2 and "unexpected extra argument" in result.output


def test_submit_help_shows_where_the_arguments_go():
    result = CliRunner().invoke(main, ["submit", "--help"])
    assert "SPEC [-- ARGS]..." in result.output


def test_the_python_api_refuses_one_string_for_arguments(sbatch_here, tmp_path):
    from slurmkit import Job

    (tmp_path / "job.yaml").write_text(SPEC)
    with pytest.raises(BadArguments, match="not one string"):
        Job.from_yaml(tmp_path / "job.yaml").submit(args="input.dat")   # type: ignore[arg-type]
    assert not sbatch_here.exists()


# ------------------------------------------------------------------------------ status, report

def test_status_shows_the_arguments_in_json_and_on_one_line(tmp_path, monkeypatch):
    from slurmkit.slurm import monitor, slurmcli

    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    record(Submission(job_id="12", name="train", folder=str(tmp_path), profile="local", submitted="2026-01-01T00:00:00+00:00",
                      args=["a b", "x\ny", "[red]"]))
    done = "12|COMPLETED|0:0|00:00:05|node1\n"

    def slurm(argv, **kwargs):
        return subprocess.CompletedProcess(argv, 0, done if argv[0] == "sacct" else "", "")

    monkeypatch.setattr(monitor, "run_slurm", slurm)
    monkeypatch.setattr(slurmcli, "run_slurm", slurm)
    rows = json.loads(CliRunner().invoke(main, ["status", "12", "--json"]).stdout)["jobs"]
    assert rows[0]["args"] == ["a b", "x\ny", "[red]"]
    plain = CliRunner().invoke(main, ["status", "12"]).stdout.splitlines()
    assert len(plain) == 2 and plain[1].split("\t")[1] == "train -- 'a b' $'x\\ny' '[red]'"


def test_the_words_status_shows_read_back_in_bash_as_the_job_got_them():
    from slurmkit.cli.views import typed_words

    words = [*HOSTILE, "back\\slash\nq'", " t\tz", "\x1b[31m"]
    loop = f"for a in {typed_words(words)}; do printf '%s\\001' \"$a\"; done"
    assert "\n" not in typed_words(words)
    assert subprocess.run(["bash", "-c", loop], capture_output=True, text=True).stdout.split(SEPARATOR)[:-1] == words


def test_an_old_registry_line_without_arguments_and_a_bad_one_read_as_before(tmp_path):
    from slurmkit.slurm.registry import submissions

    path = tmp_path / "jobs.jsonl"
    base = {"job_id": "1", "name": "a", "folder": "/f", "profile": "local", "submitted": "2026-01-01T00:00:00+00:00"}
    path.write_text(json.dumps(base) + "\n" + json.dumps({**base, "job_id": "2", "args": [1]}) + "\n")
    assert [(s.job_id, s.args) for s in submissions(path)] == [("1", None)]


# --------------------------------------------------------------------------------------- remote

def test_over_ssh_each_argument_is_quoted_for_the_far_shell(tmp_path):
    """The line ssh hands the far shell, run by a POSIX shell with a recording sbatch: the same words arrive."""
    from slurmkit.slurm import remote_jobs

    from .test_remote import connection

    conn, fake, _ = connection([(0, "41\n", "")])
    conn.opened = True
    argv = sbatch_command(Path("/j/x.sbatch"), Path("/j/logs"), array=False, token="tok", args=HOSTILE)
    assert remote_jobs.sbatch_once(conn, argv, "tok", cwd=str(tmp_path), env={"SLURMKIT_JOB_DIR": "/j/logs"},
                                   sleep=lambda s: None, retry_for=0) == "41"
    argv_file = _recording_sbatch(tmp_path)
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "ARGV_FILE": str(argv_file), "SLURMKIT_REGISTRY": "/dev/null"}
    subprocess.run(["sh", "-c", fake.commands[0]], env=env, check=True, capture_output=True)
    assert _words(argv_file) == argv[1:] and _words(argv_file)[-len(HOSTILE):] == HOSTILE
    assert not (tmp_path / "pwned").exists()


def test_a_remote_submit_records_and_passes_the_arguments(tmp_path, monkeypatch):
    from slurmkit import Job
    from slurmkit.slurm import remote_jobs

    from .test_remote import connection

    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    (tmp_path / "job.yaml").write_text(SPEC.replace("profile: local", "profile: fir").replace("10m", "1h"))
    conn, _, _ = connection([])
    conn.opened, conn.root = True, "/scratch/me/slurmkit"
    sent = []
    monkeypatch.setattr(remote_jobs, "remote_job_dir", lambda conn, local: "/scratch/me/slurmkit/j")
    monkeypatch.setattr(remote_jobs, "sync_folder", lambda conn, local, far: False)
    monkeypatch.setattr(remote_jobs, "_write_script", lambda conn, script, text: None)
    monkeypatch.setattr(remote_jobs, "write_far_runtime", lambda conn: None)
    monkeypatch.setattr(remote_jobs, "_keep_script", lambda conn, script, kept: None)
    monkeypatch.setattr(remote_jobs, "sbatch_once", lambda conn, argv, token, **kw: (sent.append(argv), "41")[1])
    remote_jobs.submit(Job.from_yaml(tmp_path / "job.yaml"), conn, args=["a b", "$(id)"])
    assert sent[0][-2:] == ["a b", "$(id)"] and sent[0][-3].endswith(".sbatch")
    assert [r.args for r in all_records()] == [["a b", "$(id)"]] * 2


# ------------------------------------------------------------------------ a command's literal $1

def _launch_warnings(launch):
    from slurmkit import Job

    job = Job(name="w", profile="fir", account="def-x", resources={"time": "1h"}, launch=launch)
    return [f.message for f in job.resolve().warnings if f.field == "launch.command"]


def test_a_command_that_names_the_script_arguments_is_told_to_be_a_shell_line():
    [message] = _launch_warnings('python run.py $1 "$@"')
    assert "reach the program as that text" in message and "launch.shell" in message and "$$1" in message


@pytest.mark.parametrize("launch", [{"shell": 'python run.py "$1"'}, "python run.py $$1 $HOME ${HOME}"])
def test_a_shell_line_or_a_literal_dollar_is_not_warned(launch):
    assert _launch_warnings(launch) == []


def test_the_report_after_a_watch_names_the_arguments_the_job_ran_with(tmp_path, monkeypatch, capsys):
    from slurmkit.cli import views
    from slurmkit.report import efficiency

    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    record(Submission(job_id="12", name="train", folder=str(tmp_path), profile="local", submitted="2026-01-01T00:00:00+00:00",
                      args=["in put.dat", "x\ny"]))
    monkeypatch.setattr(efficiency, "settled_report", lambda job_id, report=None: ("effs", True))
    views.print_reports(["12"], with_exit_files=lambda job_id, effs: effs,
                        gpu_report=lambda job_id, effs: type("Report", (), {"text": "REPORT\n"})())
    assert capsys.readouterr().out == "job 12 ran with arguments: 'in put.dat' $'x\\ny'\nREPORT\n"


def test_slurmkit_report_names_the_arguments_above_the_report(tmp_path, monkeypatch):
    from slurmkit.cli import views
    from slurmkit.report import efficiency

    monkeypatch.setenv("SLURMKIT_REGISTRY", str(tmp_path / "jobs.jsonl"))
    monkeypatch.setenv("NO_COLOR", "1")
    record(Submission(job_id="12", name="train", folder=str(tmp_path), profile="local", submitted="2026-01-01T00:00:00+00:00",
                      args=["a b"]))
    monkeypatch.setattr(efficiency, "report_for", lambda job_id: "effs")
    monkeypatch.setattr(efficiency, "with_exit_files", lambda effs, folder: effs)
    monkeypatch.setattr(views, "local_gpu_report", lambda job_id, effs, spec_path=None: "made")
    monkeypatch.setattr(views, "show_report", lambda made, as_json: print("REPORT"))
    result = CliRunner().invoke(main, ["report", "12"])
    assert result.exit_code == 0 and result.stdout == "job 12 ran with arguments: 'a b'\nREPORT\n"
    assert CliRunner().invoke(main, ["report", "12", "--json"]).stdout == "REPORT\n"


def test_a_dry_run_asks_sbatch_about_the_same_words(sbatch_here, tmp_path):
    from slurmkit.slurm.submit import test_only

    test_only("#!/bin/bash\ntrue\n", tmp_path / "logs", "t", args=HOSTILE)
    words = _words(sbatch_here)
    assert "--test-only" in words and words[-len(HOSTILE):] == HOSTILE and not (tmp_path / "pwned").exists()
