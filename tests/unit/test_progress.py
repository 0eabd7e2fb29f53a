"""Progress bars for a person at a terminal (pack, rsync), and nothing on a pipe."""

import io
import subprocess
import sys

import pytest

from slurmkit.core.progress import NO_METER, meter, rsync_percent, shows_progress


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_that_reaches_the_end():
    screen = FakeTerminal()
    with meter("packing data", stream=screen) as bar:
        bar.start(2_000_000)
        bar.advance(1_500_000)
        bar.advance(500_000)
    assert "packing data" in screen.getvalue() and "2.0/2.0 MB" in screen.getvalue()


def test_a_pipe_gets_no_bar_and_no_escape_codes():
    pipe = io.StringIO()
    with meter("packing data", stream=pipe) as bar:
        bar.start(10)
        bar.advance(10)
    assert bar is NO_METER and pipe.getvalue() == ""


def test_quiet_output_gets_no_bar(monkeypatch):
    monkeypatch.setattr("slurmkit.core.verbosity.quiet", lambda: True)
    assert not shows_progress(FakeTerminal())


@pytest.mark.parametrize("line, percent", [("     32,768  45%   31.25MB/s    0:00:00 (xfr#1, to-chk=2/4)", 45),
                                           ("  1,234,567 100%    1.23MB/s    0:00:01 (xfr#3, to-chk=0/10)", 100),
                                           ("sending incremental file list", None), ("", None)])
def test_rsync_progress2_lines_give_the_percent_done(line, percent):
    assert rsync_percent(line) == percent


def test_pack_on_a_terminal_draws_the_bytes_packed(tmp_path):
    from slurmkit.core.progress import Meter
    from slurmkit.resolve.staging import pack

    data = tmp_path / "data"
    data.mkdir()
    for i in range(30):
        (data / f"f{i}").write_bytes(b"x" * 1000 * (i + 1))

    class Counting(Meter):
        def __init__(self):
            self.total, self.done = None, 0

        def start(self, total):
            self.total = total

        def advance(self, amount):
            self.done += amount

    counted = Counting()
    pack(data, tmp_path / "data.pack", shards=3, compression="none", meter=counted)
    assert counted.total == counted.done == sum(1000 * (i + 1) for i in range(30))


def test_pack_piped_prints_no_bar(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "f").write_bytes(b"x" * 100)
    done = subprocess.run([sys.executable, "-m", "slurmkit.cli", "pack", str(data), "-o", str(tmp_path / "d.tar"),
                           "--compression", "none"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "\x1b" not in done.stdout + done.stderr and "━" not in done.stderr


def test_rsync_on_a_terminal_is_metered_by_its_percent(tmp_path, monkeypatch):
    from slurmkit.slurm.remote_jobs import _rsync_metered, rsync_reports_progress

    if not rsync_reports_progress():
        pytest.skip("this rsync has no --info=progress2")
    source = tmp_path / "src"
    source.mkdir()
    (source / "big").write_bytes(b"y" * 3_000_000)
    screen = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", screen)
    result = _rsync_metered(["rsync", "-r", f"{source}/", f"{tmp_path / 'dst'}/"], "rsync: copy to here", 60)
    assert result.returncode == 0 and (tmp_path / "dst" / "big").stat().st_size == 3_000_000
    assert "rsync: copy to here" in screen.getvalue() and "100%" in screen.getvalue()
