"""remote.py and remote_jobs.py without a network: ssh is a scripted stand-in that answers
each command line, so that every failure the issue names is checked to give its one line."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from slurmkit.sites.profiles import select_profile
from slurmkit.slurm import remote as remote_mod
from slurmkit.slurm import remote_jobs
from slurmkit.slurm.remote import (
    AuthRefused,
    Connection,
    ConnectionDropped,
    HostUnreachable,
    NoSlurm,
    QuotaExceeded,
    Remote,
    RemoteConfigError,
    TooBig,
    read_config,
    remote_for,
)

PROBE_OK = "root=/scratch/me/slurmkit\nhome=/home/me\nvar:SCRATCH=/scratch/me\nsbatch=slurm 23.11.10\n"


class FakeSsh:
    """subprocess.run for ssh: ``answers`` is a list of (returncode, stdout, stderr) for the
    commands run on the far side, in order. ``-O check`` answers from ``up``: True or False for
    every check, or a list of states taken one per check (the last one stays), each True, False
    or a master's pid (up, and saying its pid as ssh does)."""

    def __init__(self, answers, up=True):
        self.answers, self.commands = list(answers), []
        self.states = list(up) if isinstance(up, list) else [up]

    def __call__(self, argv, **kwargs):
        if "-O" in argv:
            state = self.states.pop(0) if len(self.states) > 1 else self.states[0]
            said = f"Master running (pid={state})\r\n" if state not in (True, False) else ""
            return subprocess.CompletedProcess(argv, 255 if state is False else 0, "", said)
        self.commands.append(argv[-1])
        code, out, err = self.answers.pop(0)
        return subprocess.CompletedProcess(argv, code, out, err)


@pytest.fixture(autouse=True)
def runtime(tmp_path, monkeypatch):
    """A short runtime folder, as /run/user/UID is (a socket name must fit 108 bytes)."""
    short = Path(tempfile.mkdtemp(prefix="skr-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(short))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    yield short
    shutil.rmtree(short)


def connection(answers, up=True, **fields):
    remote = Remote(**{"name": "fir", "host": "fir.example", "user": "me", "root": "$SCRATCH/slurmkit", **fields})
    said = []
    fake = FakeSsh(answers, up)
    return Connection(remote, say=said.append, run=fake), fake, said


def test_every_command_shares_one_master_socket_in_a_private_folder(runtime):
    conn, fake, _ = connection([(0, PROBE_OK, "")])
    argv = conn.ssh_argv("true")
    assert ["-o", "ControlMaster=auto"] == argv[1:3] and "ControlPersist=600" in argv
    socket_folder = Path(conn.control_path).parent
    assert socket_folder == runtime / "slurmkit" and socket_folder.stat().st_mode & 0o777 == 0o700
    assert f"ControlPath={conn.control_path}" in conn.rsync_shell()   # rsync rides the same master


def test_the_probe_learns_the_root_with_its_variables_expanded_on_the_cluster():
    conn, fake, _ = connection([(0, PROBE_OK, "")])
    conn.open()
    assert conn.root == "/scratch/me/slurmkit"
    assert '"$SCRATCH/slurmkit"' in fake.commands[0]


@pytest.mark.parametrize("stderr, error, start", [
    ("ssh: Could not resolve hostname fir.example: Name or service not known", HostUnreachable, "cannot reach fir.example ("),
    ("ssh: connect to host fir.example port 22: Connection timed out", HostUnreachable, "cannot reach fir.example ("),
    ("me@fir.example: Permission denied (publickey,keyboard-interactive).", AuthRefused,
     "fir.example refused authentication for me@fir.example ("),
])
def test_ssh_failures_are_one_line_each(stderr, error, start):
    conn, _, _ = connection([(255, "", stderr)])
    with pytest.raises(error) as raised:
        conn.open()
    assert raised.value.message.startswith(start) and "\n" not in raised.value.message


def test_no_sbatch_on_the_far_side_is_one_line():
    conn, _, _ = connection([(0, "root=/scratch/me/slurmkit\nvar:SCRATCH=/scratch/me\nnosbatch\n", "")])
    with pytest.raises(NoSlurm, match=r"^no SLURM on fir.example: `sbatch` is not on the PATH"):
        conn.open()


def test_a_slurm_too_old_is_refused():
    conn, _, _ = connection([(0, PROBE_OK.replace("23.11.10", "17.02.1"), "")])
    with pytest.raises(NoSlurm, match=r"runs no slurmkit-compatible SLURM .*17.11 or newer"):
        conn.open()


def test_an_unset_scratch_falls_back_to_the_profiles_scratch_and_else_says_what_to_set():
    probe = "root=/slurmkit\nvar:SCRATCH=\nfallback=/home/me/scratch/slurmkit\nsbatch=slurm 23.11.1\n"
    conn, _, _ = connection([(0, probe, "")], fallback_root="$HOME/scratch/slurmkit")
    conn.open()
    assert conn.root == "/home/me/scratch/slurmkit"
    conn, _, _ = connection([(0, "root=/slurmkit\nvar:SCRATCH=\nsbatch=slurm 23.11.1\n", "")])
    with pytest.raises(RemoteConfigError, match=r"^\$SCRATCH is not set on fir.example.*set `root:`"):
        conn.open()


def test_a_root_under_a_path_read_only_in_jobs_is_refused():
    probe = "root=/home/me/slurmkit\nvar:HOME=/home/me\nro=/home/me\nro=\nsbatch=slurm 24.05.1\n"
    conn, _, _ = connection([(0, probe, "")], root="$HOME/slurmkit", read_only=("$HOME", "$PROJECT"))
    with pytest.raises(RemoteConfigError, match="read-only inside jobs there"):
        conn.open()


def test_a_quota_error_on_the_far_side_is_one_line_with_advice():
    conn, _, _ = connection([(0, PROBE_OK, ""), (1, "", "mkdir: cannot create directory 'x': Disk quota exceeded")])
    conn.open()
    with pytest.raises(QuotaExceeded) as raised:
        conn.run(["mkdir", "-p", "x"])
    assert raised.value.message.startswith("disk quota exceeded on fir.example (mkdir: cannot create directory 'x': Disk quota exceeded)")
    assert "diskusage_report" in raised.value.message


def test_a_dropped_connection_is_reopened_once_for_a_query_and_the_query_asked_again():
    conn, fake, said = connection([(255, "", ""), (0, PROBE_OK, ""), (0, "ok\n", "")], up=[True, False])
    conn.opened = True   # the master was up; ssh failing with no word and `-O check` failing: it dropped
    assert conn.run(["squeue", "-h"]).stdout == "ok\n"
    assert said == ["the connection to fir.example dropped; re-opening it"]
    assert fake.commands[0] == fake.commands[2] == "squeue -h" and fake.commands[1].startswith("printf 'root=")


def test_a_master_gone_between_two_commands_is_said_and_reopened_before_the_next_runs():
    conn, fake, said = connection([(0, PROBE_OK, ""), (0, "a\n", ""), (0, PROBE_OK, ""), (0, "b\n", "")],
                                  up=[101, 101, False, 202])
    conn.open()
    assert conn.run(["squeue"]).stdout == "a\n" and said == []
    assert conn.run(["squeue"]).stdout == "b\n"      # gone before it: said, re-opened, then asked once
    assert said == ["the connection to fir.example dropped; re-opening it"]
    assert fake.commands[2].startswith("printf 'root=") and fake.commands[3] == "squeue"


def test_a_master_that_ssh_replaced_without_an_error_is_still_said_once():
    """ControlMaster=auto opens a new master itself when the old one left no socket: no
    error, only a new pid tells. It is said once, not on every command after."""
    conn, fake, said = connection([(0, PROBE_OK, "")] + [(0, "ok\n", "")] * 3, up=[101, 101, 202, 202])
    conn.open()
    for _ in range(3):
        conn.run(["squeue"])
    assert said == ["the connection to fir.example dropped; re-opening it"] and conn.reopened == 1


def test_a_connection_that_cannot_be_reopened_ends_with_its_reason():
    conn, _, said = connection([(255, "", "Connection closed by 1.2.3.4 port 22"),
                                (255, "", "ssh: connect to host fir.example port 22: Connection refused")], up=[True, False])
    conn.opened = True
    with pytest.raises(HostUnreachable, match="Connection refused"):
        conn.run(["squeue", "-h"])
    assert len(said) == 1


def test_sbatch_is_never_run_again_blindly_after_a_drop_its_token_is_looked_up():
    """A drop under sbatch may have submitted the job: the token is looked up on the cluster
    (after the master is re-opened) and the job found there is the answer, not a second sbatch."""
    token = "abc123"
    answers = [(255, "", "Connection closed by remote host"),                 # sbatch: dropped
               (0, PROBE_OK, ""),                                              # re-opened
               (0, f"4242|slurmkit:{token}\n", ""), (0, "", "")]               # squeue finds it; sacct
    conn, fake, said = connection(answers, up=[True, False, True])   # up, dropped under sbatch, re-opened
    conn.opened = True
    job_id = remote_jobs.sbatch_once(conn, ["sbatch", "--parsable", "x.sbatch"], token, cwd="/scratch/me/j", env={},
                                     sleep=lambda s: None, retry_for=5)
    assert job_id == "4242"
    assert sum(command.startswith("cd /scratch/me/j && sbatch") for command in fake.commands) == 1


def test_a_query_is_not_retried_when_the_master_is_still_up():
    conn, _, said = connection([(255, "", "")], up=True)
    conn.opened = True
    with pytest.raises(HostUnreachable):
        conn.run(["squeue"])
    assert said == []


def test_the_folder_over_the_limit_is_refused_naming_the_largest_and_the_advice(tmp_path):
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "a.bin").write_bytes(b"x" * (3 * 2**20))
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "huge.out").write_bytes(b"x" * (5 * 2**20))   # excluded: logs stay where they are
    (tmp_path / "job.yaml").write_text("name: x\n")
    with pytest.raises(TooBig) as raised:
        remote_jobs.check_size(tmp_path, 2)
    assert "holds 3 MiB to copy to the cluster, over the 2 MiB limit (largest: big (3 MiB)" in raised.value.message
    assert "put big data on the cluster once" in raised.value.message
    assert remote_jobs.check_size(tmp_path, 4) == 3 * 2**20 + len("name: x\n")


def test_remote_yaml_unknown_keys_are_errors_with_a_did_you_mean(tmp_path):
    path = tmp_path / "remote.yaml"
    path.write_text("clusters:\n  fir: {hots: fir.example}\n")
    with pytest.raises(RemoteConfigError, match=r"clusters.fir.hots: unknown key.*did you mean 'host'"):
        read_config(path)


def test_a_root_that_a_shell_would_run_is_refused():
    with pytest.raises(RemoteConfigError, match="root:"):
        remote_for(select_profile("fir")[0], config={"root": "$(rm -rf ~)/x"})


def test_the_host_comes_from_the_profile_and_a_gpu_job_goes_to_the_gpu_login_node():
    trillium = select_profile("trillium")[0]
    assert remote_for(trillium, config={}).host == "trillium.alliancecan.ca"
    assert remote_for(trillium, gpu=True, config={}).host == "trillium-gpu.alliancecan.ca"
    fir = remote_for(select_profile("fir")[0], config={"user": "me", "clusters": {"fir": {"host": "fir-alias"}}})
    assert (fir.target, fir.root, fir.fallback_root) == ("me@fir-alias", "$SCRATCH/slurmkit", "$HOME/scratch/slurmkit")


def test_a_profile_without_login_hosts_says_where_to_name_one():
    with pytest.raises(RemoteConfigError, match=r"profile local names no login host: add `clusters: \{local: \{host: HOST\}\}`"):
        remote_for(select_profile("local")[0], config={})


def test_slurmkit_help_imports_no_remote_module():
    code = ("import sys; from slurmkit.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('slurmkit.slurm.remote') or m == 'slurmkit.cli.remote'))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_command_words_are_quoted_for_the_far_shell():
    line = remote_mod._command_line(["sbatch", "--comment=a b", "x;rm -rf ~"], "/scratch/me/my job", {"V": "$HOME"})
    assert line == "cd '/scratch/me/my job' && env 'V=$HOME' sbatch '--comment=a b' 'x;rm -rf ~'"


@pytest.mark.parametrize("name", ["my run (v2)", "it's a \"run\" $HOME `x`", "plain"])
def test_a_variable_whose_value_needs_quoting_reaches_the_far_command(tmp_path, name):
    """A quoted ``'K=V'`` word is a command name to the far shell, not an assignment: the
    variables go through ``env``, each K=V one quoted word."""
    folder = tmp_path / name
    folder.mkdir()
    fake = ShOnThisHost([])
    conn = far_side(fake)
    conn.opened = True
    script = 'printf "%s|%s" "$PWD" "$SLURMKIT_JOB_DIR"'
    result = conn.run(["sh", "-c", script], cwd=str(folder), env={"SLURMKIT_JOB_DIR": f"{folder}/logs"})
    assert (result.returncode, result.stdout, result.stderr) == (0, f"{folder}|{folder}/logs", "")


def test_a_variable_name_that_is_not_one_is_refused():
    with pytest.raises(ValueError, match="not a variable name"):
        remote_mod._command_line(["true"], None, {"A=B": "x"})


def test_a_root_that_is_not_absolute_on_the_cluster_is_refused():
    conn, _, _ = connection([(0, "root=~/slurmkit\nsbatch=slurm 23.11.1\n", "")], root="~/slurmkit")
    with pytest.raises(RemoteConfigError, match=r"is '~/slurmkit' on fir.example, not an absolute path"):
        conn.open()


def test_a_runtime_folder_too_long_for_a_socket_name_falls_back_to_tmp(tmp_path, monkeypatch):
    deep = tmp_path / ("d" * 60)
    deep.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(deep))
    folder = remote_mod.control_folder()
    assert folder == Path(f"/tmp/slurmkit-{os.getuid()}") and folder.stat().st_mode & 0o777 == 0o700


def test_a_drop_under_a_command_that_may_have_run_is_not_run_again():
    conn, fake, said = connection([(255, "", "Connection closed by remote host")], up=[True, False])
    conn.opened = True
    with pytest.raises(ConnectionDropped, match="dropped while running sbatch"):
        conn.run(["sbatch", "x.sbatch"], idempotent=False)
    assert fake.commands == ["sbatch x.sbatch"] and said == []


@pytest.mark.parametrize("option", [["--dry-run"], ["--folder", "elsewhere"], ["--profile", "nibi"]])
def test_local_submit_options_that_mean_nothing_remotely_are_refused_in_one_line(tmp_path, option):
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    (tmp_path / "job.yaml").write_text("name: x\nprofile: local\nresources: {time: 5m}\nlaunch: 'true'\n")
    result = CliRunner().invoke(main, ["submit", str(tmp_path / "job.yaml"), "--remote", "local", *option])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {option[0]} is not taken with --remote")


def test_a_remote_intent_is_never_looked_up_in_the_local_slurm_nor_listed_by_local_status(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from slurmkit.cli.main import main
    from slurmkit.slurm.registry import adopt_interrupted, intent, record

    registry = tmp_path / "jobs.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(registry))
    record(intent("far", "/scratch/me/x/logs", "fir", "tok1", remote="me@fir.example")._replace(
        host="elsewhere", pid=None, submitted="2026-01-01T00:00:00+00:00"))   # long past in flight
    asked = []
    adopt_interrupted(lambda line: None, registry, lookup=lambda since: asked.append(since))
    assert asked == []   # the local SLURM is not asked about a job on fir
    result = CliRunner().invoke(main, ["status"])
    assert result.exit_code == 0 and result.output == "no jobs submitted with slurmkit yet\n"


class ShOnThisHost(FakeSsh):
    """ssh whose far side is this host: the command runs with sh, as sshd would run it."""

    def __call__(self, argv, **kwargs):
        if "-O" in argv:
            return subprocess.CompletedProcess(argv, 0, "", "")
        self.commands.append(argv[-1])
        done = subprocess.run(["sh", "-c", argv[-1]], capture_output=True, text=True, timeout=60)
        return subprocess.CompletedProcess(argv, done.returncode, done.stdout, done.stderr)


def test_gpu_samples_are_copied_from_the_cluster_in_one_command_and_cut_past_the_cap(tmp_path):
    from slurmkit.slurm.remote import copy_gpu_samples

    far = tmp_path / "far side's logs"          # a space, as a user's folder may have
    far.mkdir()
    (far / "41.gpu.node1.csv").write_text("2026/11/26 20:00:01.123, 0, GPU-1, Tesla P100, 97, 4000, 16384, 200.50\n")
    (far / "41.gpu.node1.state").write_text("stopped 1 interval=1\n")
    (far / "41.gpu.node2.csv").write_text("x" * 100)                    # longer than the cap below
    (far / "42.gpu.node1.csv").write_text("another job's\n")
    (far / "41.exit").write_text("not a sample\n")
    near = tmp_path / "near"
    near.mkdir()
    fake = ShOnThisHost([])
    conn = Connection(Remote(name="fir", host="fir.example", user="me", root="/r"), say=lambda _: None, run=fake)
    copy_gpu_samples(conn, str(far), ["41"], near, cap=10)
    assert sorted(p.name for p in near.iterdir()) == ["41.gpu.node1.csv", "41.gpu.node1.state", "41.gpu.node2.csv"]
    assert (near / "41.gpu.node1.csv").read_text() == (far / "41.gpu.node1.csv").read_text()[:11]
    assert (near / "41.gpu.node2.csv").read_text() == "x" * 11     # cap + 1: the reader sees it was cut
    assert len(fake.commands) == 1
    copy_gpu_samples(conn, str(tmp_path / "gone"), ["41"], near, cap=10)   # a folder that is gone: nothing, no error


def test_gpu_samples_that_cannot_be_written_here_fail_in_one_line_naming_the_folder(tmp_path, monkeypatch):
    import tempfile

    from slurmkit.cli import remote as cli_remote
    from slurmkit.core.errors import SlurmkitError
    from slurmkit.report.efficiency import parse
    from slurmkit.slurm.registry import Submission

    far = tmp_path / "far"
    far.mkdir()
    (far / "53.gpu.node1.csv").write_text("2026/11/26 20:00:01.123, 0, GPU-1, Tesla P100, 97, 4000, 16384, 200.50\n")
    conn = Connection(Remote(name="fir", host="fir.example", user="me", root="/r"), say=lambda _: None, run=ShOnThisHost([]))
    effs = parse("53|COMPLETED|0:0|3|5|00:00.008|2|512M||billing=2,cpu=2,gres/gpu=1,mem=512M,node=1|1|\n")
    record = Submission(job_id="53", name="j", folder=str(far), profile="fir", submitted="2026-11-27T00:00:00Z")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def full_disk(self, text, **options):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(SlurmkitError) as failed:
        cli_remote._with_gpu_samples(conn, effs, record)
    assert failed.value.message == (f"cannot copy the GPU samples of job 53 from fir.example into a temporary folder here ({tmp_path}): "
                                    "No space left on device; free space there or set TMPDIR")


class ShOnThisHostAsSsh(ShOnThisHost):
    """As ShOnThisHost, decoding the far side's bytes as Connection._ssh asks subprocess to."""

    def __call__(self, argv, **kwargs):
        if "-O" in argv:
            return subprocess.CompletedProcess(argv, 0, "", "")
        self.commands.append(argv[-1])
        done = subprocess.run(["sh", "-c", argv[-1]], capture_output=True, timeout=60)
        errors = kwargs.get("errors", "strict")
        return subprocess.CompletedProcess(argv, done.returncode, done.stdout.decode("utf-8", errors), done.stderr.decode("utf-8", errors))


def far_side(fake):
    return Connection(Remote(name="fir", host="fir.example", user="me", root="/r"), say=lambda _: None, run=fake)


def test_bytes_that_are_not_utf8_on_the_far_side_are_read_not_a_traceback(tmp_path):
    from slurmkit.slurm.remote import copy_gpu_samples

    far = tmp_path / "far"
    far.mkdir()
    line = "2026/11/26 20:00:01.123, 0, GPU-1, Tesla P100, 97, 4000, 16384, 200.50\n".encode()
    (far / "41.gpu.node1.csv").write_bytes(line + b"\xff\xfe junk \xc3\n" + line)
    near = tmp_path / "near"
    near.mkdir()
    conn = far_side(ShOnThisHostAsSsh([]))
    conn.opened = True
    copy_gpu_samples(conn, str(far), ["41"], near, cap=1000)
    from slurmkit.report.gpuuse import read_job
    [gpu] = read_job("41", str(near)).gpus
    assert gpu.mean_util == 97.0


def test_logs_follow_counts_the_bytes_the_far_side_sent_not_the_characters_read(tmp_path, capsys):
    from slurmkit.cli.remote import _print_from

    log = tmp_path / "41_0_log.out"
    log.write_bytes(b"caf\xc3\xa9 \xff\n")        # 8 bytes: an e-acute (2 bytes) and a byte that is not UTF-8
    conn = far_side(ShOnThisHostAsSsh([]))
    assert _print_from(conn, str(log), 0) == 8
    with log.open("ab") as handle:
        handle.write(b"next\n")
    assert _print_from(conn, str(log), 8) == 13
    assert _print_from(conn, str(log), 13) == 13      # nothing new
    assert capsys.readouterr().out == "caf\u00e9 \ufffd\nnext\n"
    assert _print_from(conn, str(tmp_path / "none"), 0) == 0


def test_what_a_failed_submit_cannot_remove_on_the_cluster_is_named_in_its_error():
    from slurmkit.core.errors import SlurmkitError

    conn, fake, _ = connection([(1, "", "rm: cannot remove 'x': Device or resource busy")])
    conn.opened, conn.root = True, "/scratch/me/slurmkit"
    error = SlurmkitError("rsync could not copy the job folder to fir.example: boom")
    remote_jobs._undo(conn, error, "/scratch/me/slurmkit/run-1a2b3c4d")
    assert fake.commands == ["rm -rf -- /scratch/me/slurmkit/run-1a2b3c4d"]
    assert error.message.endswith("; /scratch/me/slurmkit/run-1a2b3c4d was left on fir.example: remove it by hand")


def test_a_failed_submit_never_removes_a_folder_outside_the_job_root():
    from slurmkit.core.errors import SlurmkitError

    conn, fake, _ = connection([(0, "", "")])
    conn.opened, conn.root = True, "/scratch/me/slurmkit"
    remote_jobs._undo(conn, SlurmkitError("x"), "/scratch/me", "/scratch/me/slurmkit/j/logs/.x.sbatch")
    assert fake.commands == ["rm -f -- /scratch/me/slurmkit/j/logs/.x.sbatch"]


def test_a_far_shell_that_cannot_run_sbatch_is_not_blamed_on_sbatch_and_closes_the_submit():
    from slurmkit.slurm.slurmcli import SchedulerError

    conn, _, _ = connection([(127, "", "sh: 1: sbatch: not found")])
    conn.opened = True
    with pytest.raises(SchedulerError) as raised:
        remote_jobs.sbatch_once(conn, ["sbatch", "x.sbatch"], "tok", cwd="/j", env={}, sleep=lambda s: None, retry_for=0)
    assert raised.value.message == "sbatch could not be run on fir.example: sh: 1: sbatch: not found"
    assert not raised.value.transient


def far_job_folder(tmp_path) -> Path:
    """A job's folder as the cluster holds it: job 41's logs, another job's, two outputs."""
    far = tmp_path / "far side"
    (far / "logs").mkdir(parents=True)
    for name in ("41_0_log.out", "41_0_log.err", "41.exit", "41_submission.sh", "410_0_log.out", "42.exit"):
        (far / "logs" / name).write_text(name)
    (far / "out[1]" / "sub dir").mkdir(parents=True)
    (far / "out[1]" / "sub dir" / "b\nc.txt").write_text("two")
    (far / "a*b").write_text("star")
    (far / "a-b").write_text("not asked for")
    (far / "out[1]" / "link").symlink_to("/nowhere")
    return far


def test_fetch_rules_take_names_with_pattern_characters_literally(tmp_path):
    """Run by a real rsync (here to here): only the job's logs and the outputs come, whatever their names."""
    far = far_job_folder(tmp_path)
    near = tmp_path / "near"
    argv = ["rsync", "-rlpt", *remote_jobs.fetch_rules("41", ["out[1]", "a*b"]), f"{far}/", f"{near}/"]
    subprocess.run(argv, check=True, capture_output=True)
    got = sorted(str(p.relative_to(near)) for p in near.rglob("*") if not p.is_dir())
    assert got == ["a*b", "logs/41.exit", "logs/41_0_log.err", "logs/41_0_log.out", "logs/41_submission.sh",
                   "out[1]/link", "out[1]/sub dir/b\nc.txt"]


def test_the_far_listing_of_a_fetch_is_what_its_rules_bring(tmp_path):
    far = far_job_folder(tmp_path)
    conn = far_side(ShOnThisHostAsSsh([]))
    conn.opened = True
    listed = remote_jobs.far_files(conn, str(far), "41", ["out[1]", "a*b", "not-there"])
    assert listed == {"logs/41_0_log.out": ("f", 12), "logs/41_0_log.err": ("f", 12), "logs/41.exit": ("f", 7),
                      "logs/41_submission.sh": ("f", 16), "out[1]/sub dir/b\nc.txt": ("f", 3),
                      "out[1]/link": ("l", len("/nowhere")), "a*b": ("f", 4)}
    assert remote_jobs.far_files(conn, str(tmp_path / "gone"), "41", ["out[1]"]) == {}


@pytest.mark.parametrize("here, later, missing", [
    ({"a": 10, "b": 5}, None, []),                                   # all here, whole
    ({"a": 10}, None, [("b", 5, None)]),                             # one never arrived
    ({"a": 4, "b": 5}, None, [("a", 10, 4)]),                        # one cut short
    ({"a": 12, "b": 5}, None, [("a", 10, 12)]),                      # longer than listed: not what was there
    ({"a": 12, "b": 5}, {"a": 15, "b": 5}, []),                      # a log written meanwhile: between the listings
    ({"a": 10}, {"a": 10}, []),                                      # b gone from the cluster since: not asked for
    ({"a": 10, "b": "dir"}, None, [("b", 5, None)]),                 # a folder where a file should be
])
def test_what_did_not_arrive_whole(tmp_path, here, later, missing):
    for name, size in here.items():
        (tmp_path / name).mkdir() if size == "dir" else (tmp_path / name).write_bytes(b"x" * size)
    listed = {"a": ("f", 10), "b": ("f", 5)}
    again = {name: ("f", size) for name, size in later.items()} if later is not None else None
    assert remote_jobs.not_arrived(listed, tmp_path, again) == missing


def test_a_symlink_arrives_as_a_symlink(tmp_path):
    (tmp_path / "link").symlink_to("/nowhere")
    (tmp_path / "file-not-link").write_text("x")
    listed = {"link": ("l", 8), "file-not-link": ("l", 8)}
    assert remote_jobs.not_arrived(listed, tmp_path) == [("file-not-link", 8, 1)]


def test_outputs_outside_the_job_folder_are_not_fetched(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text("name: x\nprofile: local\nresources: {time: 5m}\nlaunch: 'true'\n"
                    "stage: {outputs: [{from: a, to: ./res/}, {from: b, to: ../shared}, {from: c, to: /abs}], "
                    "checkpoint: {from: ck, to: ckpt, every: 1h}}\n")
    assert remote_jobs._output_paths(str(spec)) == ["res", "ckpt"]


def test_a_copy_that_ends_well_but_brought_too_little_is_an_error_naming_what_is_missing(tmp_path, monkeypatch):
    """rsync's 0 is not proof (a filter rule that matched nothing ends with 0): what the cluster
    listed is checked here, listed again once in case it changed, and what is short named."""
    from slurmkit.slurm.remote import RemoteError

    monkeypatch.setattr(remote_jobs, "_rsync", lambda *args, **kwargs: None)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "41.exit").write_text("x" * 7)
    listed = {"logs/41.exit": ("f", 7), "results/a.bin": ("f", 2048), "results/b": ("f", 3)}
    asked = []
    conn, _, _ = connection([])
    with pytest.raises(RemoteError) as raised:
        remote_jobs._copy_checked(conn, "41", ["rsync"], listed, tmp_path, lambda: asked.append(1) or listed)
    assert raised.value.message == (f"the fetch of job 41 from fir.example came up short: 1 of 3 files (7 bytes of 2 KiB) "
                                    f"arrived in {tmp_path}; missing: results/a.bin (2 KiB there, none here), "
                                    "results/b (3 bytes there, none here); fetch again")
    assert asked == [1]


@pytest.mark.parametrize("name", ["new\nline", "tab\there", "bell\x07", "del\x7f"])
def test_a_job_folder_whose_name_holds_a_control_character_is_refused(tmp_path, name):
    from slurmkit.core.errors import SlurmkitError

    folder = tmp_path / name
    folder.mkdir()
    with pytest.raises(SlurmkitError) as raised:
        remote_jobs.check_plain_name(folder)
    assert raised.value.message == (f"the job's folder {str(folder)!r} has a control character in its name: rename it "
                                    "(letters, digits, spaces and punctuation only) to submit it with --remote")
    assert "\n" not in raised.value.message
    remote_jobs.check_plain_name(tmp_path / "a b (c)")   # quoting is not refused


def test_submit_remote_from_a_folder_named_with_a_newline_is_one_line_and_asks_nothing(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    registry = tmp_path / "jobs.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(registry))
    monkeypatch.setattr(Connection, "ensure_open", lambda self: pytest.fail("the cluster was contacted"))
    monkeypatch.setattr(Connection, "run", lambda self, *a, **k: pytest.fail("a command was sent"))
    (tmp_path / "config" / "slurmkit").mkdir(parents=True)
    (tmp_path / "config" / "slurmkit" / "remote.yaml").write_text("clusters: {local: {host: far.example}}\n")
    folder = tmp_path / "new\nline"
    folder.mkdir()
    (folder / "job.yaml").write_text("name: x\nprofile: local\naccount: def-me\nresources: {time: 5m}\nlaunch: 'true'\n")
    result = CliRunner().invoke(main, ["submit", str(folder / "job.yaml"), "--remote", "local"])
    assert result.exit_code == 2
    assert result.stdout == "" and result.stderr.count("\n") == 1, result.output
    assert result.stderr.startswith(f"error: the job's folder {str(folder)!r} has a control character")
    assert not registry.exists()


@pytest.mark.parametrize("make, refused", [
    (lambda p: p.joinpath("results").write_text("mine"), "a regular file here where a folder"),
    (lambda p: p.joinpath("results").symlink_to(p / "elsewhere"), "a symbolic link here where a folder"),
    (lambda p: os.mkfifo(p / "results"), "a named pipe here where a folder"),
    (lambda p: p.joinpath("logs", "41.exit").mkdir(parents=True), "a folder here where a file"),
    (lambda p: (p.joinpath("logs").mkdir(), os.mkfifo(p / "logs" / "41.exit")), "a named pipe here where a file"),
    (lambda p: p.joinpath("logs", "41.exit").parent.mkdir() or p.joinpath("logs", "41.exit").write_text("old"), None),
    (lambda p: p.joinpath("results", "deep").mkdir(parents=True), None),
])
def test_a_fetch_that_would_replace_what_is_here_by_another_kind_is_refused_first(tmp_path, make, refused):
    from slurmkit.slurm.remote import RemoteError

    here = tmp_path / "here"
    here.mkdir()
    make(here)
    listed = {"logs/41.exit": ("f", 7), "results/deep/a.bin": ("f", 2048)}
    if refused is None:
        remote_jobs.check_arrivals(listed, here)   # a file fetched again, a folder that is one: allowed
        return
    with pytest.raises(RemoteError) as raised:
        remote_jobs.check_arrivals(listed, here)
    where = here / ("results" if "where a folder" in refused else "logs/41.exit")
    assert raised.value.message == (f"{where} is {refused} of the job arrives: nothing was fetched; move it away, "
                                    "or fetch into another folder with --to")


def test_fetch_checks_what_is_here_before_rsync_runs(tmp_path, monkeypatch):
    from slurmkit.slurm.registry import Submission
    from slurmkit.slurm.remote import RemoteError

    (tmp_path / "results").write_text("a local file that must stay")
    monkeypatch.setattr(remote_jobs, "far_files", lambda *args: {"results/a.bin": ("f", 3)})
    monkeypatch.setattr(remote_jobs, "_rsync", lambda *args, **kwargs: pytest.fail("rsync ran"))
    conn, _, _ = connection([])
    conn.opened = True
    record = Submission(job_id="41", name="x", folder="/r/x/logs", profile="fir", submitted="2026-01-01T00:00:00+00:00")
    with pytest.raises(RemoteError, match="is a regular file here where a folder"):
        remote_jobs.fetch(conn, record, "41", to=tmp_path)
    assert (tmp_path / "results").read_text() == "a local file that must stay"


def test_the_gpu_sample_copy_draws_a_bar_on_a_terminal_only(tmp_path, monkeypatch):
    import io
    import sys

    from slurmkit.slurm.remote import copy_gpu_samples

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    far = tmp_path / "far"
    far.mkdir()
    (far / "41.gpu.node1.csv").write_text("1\n")
    conn = Connection(Remote(name="fir", host="fir.example", user="me", root="/r"), say=lambda _: None, run=ShOnThisHost([]))
    for stream, drawn in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        copy_gpu_samples(conn, str(far), ["41"], tmp_path, cap=10)
        assert ("copying GPU samples from fir.example" in stream.getvalue()) is drawn
