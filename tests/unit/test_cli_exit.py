"""The console script's quick exit (cli.run): the same output, status and exit functions as
Python's own exit, without the interpreter's teardown."""

import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import _exit_status, main

SPEC = """\
name: quick
profile: nibi
account: def-someprof
kind: serial
resources: {time: 1h, mem: 2G}
launch: {command: echo hi}
"""


def run_cli(*args, cwd, prelude=""):
    code = textwrap.dedent(prelude) + f"\nimport sys\nsys.argv = ['slurmkit', *{list(args)!r}]\nfrom slurmkit.cli.main import run\nrun()\n"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True)


def test_render_output_is_byte_identical_to_clicks(tmp_path, monkeypatch):
    (tmp_path / "job.yaml").write_text(SPEC)
    quick = run_cli("render", "job.yaml", cwd=tmp_path)
    monkeypatch.chdir(tmp_path)
    clicks = CliRunner().invoke(main, ["render", "job.yaml"])
    assert quick.returncode == clicks.exit_code == 0
    assert quick.stdout == clicks.stdout_bytes and quick.stdout.startswith(b"#!/bin/bash")


def test_bad_input_keeps_its_status_and_line(tmp_path):
    quick = run_cli("render", "missing.yaml", cwd=tmp_path)
    assert quick.returncode == 2
    assert quick.stderr.decode().strip().startswith("error: missing.yaml")


def test_exit_functions_run_and_buffered_output_is_flushed(tmp_path):
    prelude = """
        import atexit, sys
        sys.stdout.write('buffered, no newline')
        atexit.register(lambda: open('ran', 'w').write('yes'))
    """
    quick = run_cli("--version", cwd=tmp_path, prelude=prelude)
    assert quick.returncode == 0
    assert quick.stdout.startswith(b"buffered, no newline")
    assert (tmp_path / "ran").read_text() == "yes"


def test_a_running_thread_gets_pythons_own_exit(tmp_path):
    prelude = """
        import threading, time
        threading.Thread(target=lambda: (time.sleep(0.3), print('thread finished', flush=True))).start()
    """
    quick = run_cli("--version", cwd=tmp_path, prelude=prelude)
    assert quick.returncode == 0 and b"thread finished" in quick.stdout


@pytest.mark.parametrize("code, status", [(None, 0), (0, 0), (2, 2), (256 + 3, 3), ("bye", 1)])
def test_exit_status_is_systemexits(code, status, capsys):
    assert _exit_status(code) == status
    assert capsys.readouterr().err == ("bye\n" if code == "bye" else "")


def _shell(command, cwd):
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize("redirect", ["> /dev/full", ">&-"])
@pytest.mark.parametrize("args", ["render job.yaml", "check job.yaml", "--help", "--version"])
def test_an_output_that_cannot_be_written_is_one_line_never_a_traceback(tmp_path, args, redirect):
    (tmp_path / "job.yaml").write_text(SPEC)
    result = _shell(f"{sys.executable} -m slurmkit.cli {args} {redirect}", tmp_path)
    assert "Traceback" not in result.stderr
    # A full disk fails every write; a closed stdout is None in Python, where click drops what it
    # echoes, and only render's own byte-exact writer meets it.
    if redirect == "> /dev/full" or args.startswith("render"):
        assert result.returncode == 1
        reason = "No space left on device" if redirect == "> /dev/full" else "the stream is closed"
        assert result.stderr.splitlines()[-1] == f"error: slurmkit could not write its output: {reason}"
    else:
        assert result.returncode == 0


@pytest.mark.parametrize("args, status", [("render missing.yaml", 2), ("--version", 0)])
def test_a_closed_stderr_keeps_the_exit_status(tmp_path, args, status):
    assert _shell(f"{sys.executable} -m slurmkit.cli {args} 2>&-", tmp_path).returncode == status
