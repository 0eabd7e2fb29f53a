"""The console script's quick exit (cli.run): the same output, status and exit functions as
Python's own exit, without the interpreter's teardown."""

import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from slurmkit.cli import _exit_status, main

SPEC = """\
name: quick
profile: nibi
account: def-someprof
kind: serial
resources: {time: 1h, mem: 2G}
launch: {command: echo hi}
"""


def run_cli(*args, cwd, prelude=""):
    code = textwrap.dedent(prelude) + f"\nimport sys\nsys.argv = ['slurmkit', *{list(args)!r}]\nfrom slurmkit.cli import run\nrun()\n"
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
