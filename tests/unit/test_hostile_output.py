"""Hostile input, second tier: what slurmkit prints and writes.

Scripts and specs printed on stdout are the bytes ``-o`` writes; messages escape control
characters; every write that cannot happen is one line, exit 2; files slurmkit writes are
private; a named pipe or a device never makes slurmkit wait.
"""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from .test_hostile_input import GOOD_SPEC, cli, folders, measured, refused  # noqa: F401 (fixture)

ESCAPES_SPEC = GOOD_SPEC.replace("launch:", 'environment:\n  variables:\n    ESC: "\\e[31mred\\e[0m\\a"\nlaunch:')
PORTABLE_SPEC = """\
name: p
profile: cedar
account: def-someprof
resources: {cpus_per_task: 1, mem: 4G, time: 1h}
environment:
  variables:
    ESC: "\\e[31mred\\e[0m"
launch: python run.py
"""


def _stdout_bytes(args, cwd: Path, home: Path) -> bytes:
    """What ``slurmkit ARGS > file`` writes: stdout a file, not a terminal (click would strip escapes)."""
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache"),
           "XDG_STATE_HOME": str(home / "state")}
    done = subprocess.run([sys.executable, "-c", cli(*args)], cwd=cwd, env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


# ------------------------------------------------------------------------- stdout is what -o writes

def test_render_to_stdout_is_byte_identical_to_render_o_escape_sequences_included(folders):
    work, home = folders
    (work / "job.yaml").write_text(ESCAPES_SPEC)
    printed = _stdout_bytes(["render", "job.yaml"], work, home)
    _stdout_bytes(["render", "job.yaml", "-o", "job.sbatch"], work, home)
    assert b"\x1b[31mred\x1b[0m\x07" in printed
    assert printed == (work / "job.sbatch").read_bytes()


def test_port_and_import_to_stdout_are_byte_identical_to_their_o_files(folders):
    work, home = folders
    (work / "job.yaml").write_text(PORTABLE_SPEC)
    printed = _stdout_bytes(["port", "job.yaml", "--to", "fir"], work, home)
    _stdout_bytes(["port", "job.yaml", "--to", "fir", "-o", "ported.yaml"], work, home)
    assert printed == (work / "ported.yaml").read_bytes()
    (work / "old.sh").write_bytes(b"#!/bin/bash\n#SBATCH --time=1:00:00\nexport ESC=$'\\e[1m'\necho '\x1b[31mred'\npython run.py\n")
    printed = _stdout_bytes(["import", "old.sh"], work, home)
    _stdout_bytes(["import", "old.sh", "-o", "imported.yaml"], work, home)
    assert printed == (work / "imported.yaml").read_bytes()
    assert b"\x1b" not in printed and b"# kept: line 4: echo '\\x1b[31mred'" in printed   # YAML refuses a raw ESC, even in a comment
    outcome = measured(cli("check", "imported.yaml", "--profile", "local"), work, home)
    assert "unacceptable character" not in outcome.stderr and "Traceback" not in outcome.stderr


def test_new_prints_the_script_it_wrote_byte_for_byte(folders):
    work, home = folders
    printed = _stdout_bytes(["-q", "new", "myjob", "--yes", "--profile", "nibi", "--account", "def-x", "--time", "1h",
                             "--command", "echo '\x1b[31mred'", "--show"], work, home)
    assert b"\x1b[31mred" in printed and printed == (work / "myjob" / "job.sbatch").read_bytes()


def test_logs_prints_a_jobs_output_byte_for_byte(tmp_path, monkeypatch, capfdbinary):
    from slurmkit.cli.run import _print_from

    log = tmp_path / "1.out"
    log.write_bytes(b"\x1b[31mred\x1b[0m \xff not utf-8\n")
    assert _print_from(log, 0) == log.stat().st_size
    assert capfdbinary.readouterr().out == log.read_bytes()


# ---------------------------------------------------------------- messages escape control characters

def test_a_profile_file_name_with_terminal_escapes_is_shown_escaped_in_the_error(folders):
    work, home = folders
    (work / "site_profiles").mkdir()
    (work / "site_profiles" / "x\x1b[2J\x1b]0;PWNED\x07.yaml").write_text("a: &a [*a]\n")
    outcome = measured(cli("profiles", "list"), work, home)
    line = outcome.stderr.splitlines()[0]
    assert "\x1b" not in outcome.stderr and "\x07" not in outcome.stderr
    assert "x\\x1b[2J\\x1b]0;PWNED\\x07.yaml" in line


def test_a_spec_value_with_control_characters_is_escaped_in_errors_and_warnings(folders):
    work, home = folders
    (work / "job.yaml").write_text(GOOD_SPEC.replace("profile: local", "profile: \"lo\\e]0;x\\acal\""))
    outcome = measured(cli("check", "job.yaml"), work, home)
    assert outcome.rc == 2 and "\x1b" not in outcome.stderr and "\x07" not in outcome.stderr
    assert "\\x1b]0;x\\x07" in outcome.stderr


def test_escaped_keeps_tab_and_newline_and_shows_bidi_overrides():
    from slurmkit.core.output import escaped

    assert escaped("a\tb\nc\rd\x00e\x9b\u202ef") == "a\tb\nc\\rd\\x00e\\x9b\\u202ef"


# ------------------------------------------------- items 5 and 10: writes that cannot happen, modes

@pytest.mark.parametrize("target, reason", [("/sys/x.sh", "Permission denied"), ("/proc/x.sh", "No such file or directory")])
@pytest.mark.parametrize("command", ["render", "port", "import"])
def test_an_unwritable_target_is_one_line_exit_2(folders, command, target, reason):
    work, home = folders
    (work / "job.yaml").write_text(PORTABLE_SPEC)
    (work / "ok.yaml").write_text(GOOD_SPEC)
    (work / "old.sh").write_text("#!/bin/bash\n#SBATCH --time=1:00:00\npython run.py\n")
    args = {"render": ["render", "ok.yaml"], "port": ["port", "job.yaml", "--to", "fir"], "import": ["import", "old.sh"]}
    refused(work, home, cli(*args[command], "-o", target), f"{target}: cannot write it: {reason}")


def test_a_read_only_folder_is_one_line(folders):
    work, home = folders
    if os.geteuid() == 0:
        target = "/proc/self/x.sh"   # root writes into any folder whose mode says no; /proc refuses everyone
    else:
        (work / "ro").mkdir(mode=0o500)
        target = str(work / "ro" / "x.sh")
    (work / "job.yaml").write_text(GOOD_SPEC)
    outcome = measured(cli("render", "job.yaml", "-o", target), work, home)
    assert outcome.rc == 2 and outcome.stderr.count("\n") == 1 and outcome.stderr.startswith(f"error: {target}: cannot write it")


def test_a_255_byte_file_name_is_written_and_folders_made_private(folders):
    work, home = folders
    (work / "job.yaml").write_text(GOOD_SPEC)
    name = "a" * 252 + ".sh"
    outcome = measured(cli("render", "job.yaml", "-o", f"new/sub/{name}"), work, home)
    assert (outcome.rc, outcome.stderr) == (0, "")
    assert stat.S_IMODE((work / "new" / "sub" / name).stat().st_mode) == 0o700
    assert stat.S_IMODE((work / "new").stat().st_mode) == stat.S_IMODE((work / "new" / "sub").stat().st_mode) == 0o700
    from slurmkit.render.runtime import runtime

    # no temporary file left; the runtime the script sources beside it
    assert sorted(p.name for p in (work / "new" / "sub").iterdir()) == sorted([name, runtime().name])


def test_an_existing_wider_file_is_replaced_private(folders):
    work, home = folders
    (work / "job.yaml").write_text(PORTABLE_SPEC)
    for existing in ("job.sbatch", "ported.yaml"):
        (work / existing).write_text("old\n")
        (work / existing).chmod(0o755)
    assert measured(cli("render", "job.yaml", "-o", "job.sbatch"), work, home).rc == 0
    assert measured(cli("port", "job.yaml", "--to", "fir", "-o", "ported.yaml", "--force"), work, home).rc == 0
    assert stat.S_IMODE((work / "job.sbatch").stat().st_mode) == 0o700
    assert stat.S_IMODE((work / "ported.yaml").stat().st_mode) == 0o600


def test_new_makes_its_folder_0700_the_spec_0600_and_the_script_0700(folders):
    work, home = folders
    outcome = measured(cli("new", "myjob", "--yes", "--profile", "nibi", "--account", "def-x", "--time", "1h",
                           "--command", "python a.py"), work, home)
    assert outcome.rc == 0, outcome.stderr
    modes = {p: stat.S_IMODE((work / p).stat().st_mode) for p in ("myjob", "myjob/job.yaml", "myjob/job.sbatch")}
    assert modes == {"myjob": 0o700, "myjob/job.yaml": 0o600, "myjob/job.sbatch": 0o700}


def _in_the_way(work: Path, what: str) -> str:
    path = work / "out"
    if what == "fifo":
        os.mkfifo(path)
    elif what == "symlink":
        (work / "elsewhere").write_text("kept\n")
        path.symlink_to("elsewhere")
    elif what == "dangling symlink":
        path.symlink_to("/proc/self/fd/1")
    elif what == "socket":
        import socket

        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    return "out"


@pytest.mark.parametrize("what, message", [
    ("fifo", "out: not a regular file (a named pipe): slurmkit replaces only regular files; remove it or name another file"),
    ("socket", "out: not a regular file (a socket): slurmkit replaces only regular files; remove it or name another file"),
    ("symlink", "out: a symbolic link: slurmkit does not write through links; remove it or name another file"),
    ("dangling symlink", "out: a symbolic link: slurmkit does not write through links; remove it or name another file"),
])
def test_render_o_refuses_what_is_not_a_regular_file_at_the_target(folders, what, message):
    work, home = folders
    (work / "job.yaml").write_text(GOOD_SPEC)
    target = _in_the_way(work, what)
    refused(work, home, cli("render", "job.yaml", "-o", target), message)
    assert os.path.lexists(work / "out") and not (work / "out").is_file() or (work / "out").is_symlink()


@pytest.mark.parametrize("command", ["port", "import"])
def test_port_and_import_refuse_a_link_without_force_and_replace_the_link_with_it(folders, command):
    work, home = folders
    (work / "job.yaml").write_text(PORTABLE_SPEC)
    (work / "old.sh").write_text("#!/bin/bash\n#SBATCH --time=1:00:00\npython run.py\n")
    _in_the_way(work, "symlink")
    args = ["port", "job.yaml", "--to", "fir"] if command == "port" else ["import", "old.sh"]
    refused(work, home, cli(*args, "-o", "out"), "out already exists; use --force to overwrite")
    outcome = measured(cli(*args, "-o", "out", "--force"), work, home)
    assert outcome.rc == 0, outcome.stderr
    assert not (work / "out").is_symlink() and (work / "elsewhere").read_text() == "kept\n"
    _in_the_way_fifo = work / "pipe"
    os.mkfifo(_in_the_way_fifo)
    outcome = measured(cli(*args, "-o", "pipe", "--force"), work, home)
    assert (outcome.rc, outcome.stderr.splitlines()[0]) == (2, "error: pipe: not a regular file (a named pipe): slurmkit "
                                                               "replaces only regular files; remove it or name another file")


# --------------------------------------------------------- a named pipe or a device is never waited on

def test_open_regular_refuses_a_fifo_a_device_and_a_folder_at_once(tmp_path):
    from slurmkit.core.files import NotARegularFile, TooLarge, open_regular, read_bytes_bounded

    os.mkfifo(tmp_path / "p")
    with pytest.raises(NotARegularFile, match=r"not a regular file \(a named pipe\)"):
        open_regular(tmp_path / "p")
    with pytest.raises(NotARegularFile, match=r"not a regular file \(a character device\)"):
        open_regular("/dev/zero")
    with pytest.raises(IsADirectoryError):
        open_regular(tmp_path)
    (tmp_path / "f").write_bytes(b"x" * 11)
    (tmp_path / "link").symlink_to("f")
    assert read_bytes_bounded(tmp_path / "link", 11) == b"x" * 11
    with pytest.raises(TooLarge):
        read_bytes_bounded(tmp_path / "f", 10)
    with pytest.raises(NotARegularFile, match="symbolic link"):
        open_regular(tmp_path / "link", follow_symlinks=False)


def _fifo_spec_outcome(work, home, code, rc=2):
    outcome = measured(code, work, home)   # measured's timeout (60 s) would be the hang
    assert outcome.rc == rc and "Traceback" not in outcome.stderr, outcome
    assert outcome.cpu_s < 2
    return outcome


@pytest.mark.parametrize("entry", ["check", "render", "submit --dry-run", "port", "Job.from_yaml", "import",
                                   "profiles validate"])
def test_a_named_pipe_as_the_spec_is_one_line_on_every_entry_point(folders, entry):
    from .test_hostile_input import SPEC_ENTRY_POINTS

    work, home = folders
    os.mkfifo(work / "job.yaml")
    code = {**SPEC_ENTRY_POINTS, "import": cli("import", "job.yaml"),
            "profiles validate": cli("profiles", "validate", "job.yaml")}[entry]
    outcome = _fifo_spec_outcome(work, home, code)
    assert outcome.stderr.splitlines()[-1] == "error: job.yaml: cannot read it: not a regular file (a named pipe)"
    assert outcome.stderr.count("\n") == 1


def test_a_named_pipe_in_site_profiles_is_skipped_by_list_and_refused_by_show(folders):
    work, home = folders
    (work / "site_profiles").mkdir()
    os.mkfifo(work / "site_profiles" / "evil.yaml")
    outcome = _fifo_spec_outcome(work, home, cli("profiles", "list"))
    assert "evil.yaml: cannot read it: not a regular file (a named pipe) (skipped" in outcome.stderr
    assert "nibi" in outcome.stdout
    outcome = _fifo_spec_outcome(work, home, cli("profiles", "show", "evil"))
    assert "not a regular file (a named pipe)" in outcome.stderr


@pytest.mark.parametrize("field", ["requirements", "tasks"])
def test_a_named_pipe_as_requirements_or_task_file_is_a_check_error_not_a_hang(folders, field):
    work, home = folders
    os.mkfifo(work / "pipe.txt")
    if field == "requirements":
        spec = GOOD_SPEC.replace("launch:", "environment:\n  venv: {path: $SLURM_TMPDIR/env, requirements: pipe.txt}\nlaunch:")
        expected = f"environment.venv.requirements: {work}/pipe.txt: not a regular file (a named pipe)"
    else:
        spec = GOOD_SPEC.replace("launch: python main.py", "kind: many-tasks\ntasks: {commands: pipe.txt}")
        expected = f"cannot read {work}/pipe.txt: not a regular file (a named pipe)"
    (work / "job.yaml").write_text(spec)
    outcome = _fifo_spec_outcome(work, home, cli("check", "job.yaml"))
    assert expected in outcome.stdout + outcome.stderr


def test_a_device_as_the_task_file_is_one_error_not_a_memory_error(folders):
    work, home = folders
    (work / "job.yaml").write_text(GOOD_SPEC.replace("launch: python main.py", "kind: many-tasks\ntasks: {commands: /dev/zero}"))
    outcome = _fifo_spec_outcome(work, home, cli("check", "job.yaml"))
    assert "cannot read /dev/zero: not a regular file (a character device)" in outcome.stdout + outcome.stderr


def test_a_task_file_past_the_cap_is_one_error(folders, monkeypatch):
    from slurmkit.api.job import Job
    from slurmkit.resolve import manytasks
    from slurmkit.resolve.manytasks import task_file_findings

    work, _ = folders
    (work / "tasks.txt").write_text("echo 1\n" * 100)
    monkeypatch.setattr(manytasks, "MAX_TASK_FILE_BYTES", 64)
    job = Job(name="t", profile="local", kind="many-tasks", resources={"time": "1h"}, tasks={"commands": "tasks.txt"})
    findings = task_file_findings(job.spec, job.profile(), None, work)
    assert [f.message for f in findings] == [f"cannot read {work}/tasks.txt: larger than 64 bytes, slurmkit's limit for this file"]


def test_a_named_pipe_as_the_registry_is_one_line_for_status_and_submit(folders):
    work, home = folders
    (home / "state" / "slurmkit").mkdir(parents=True)
    os.mkfifo(home / "state" / "slurmkit" / "jobs.jsonl")
    code = f"import os; os.environ['XDG_STATE_HOME'] = {str(home / 'state')!r}\n" + cli("status")
    outcome = _fifo_spec_outcome(work, home, code, rc=1)   # the registry's errors are the machine's (RegistryError: 1)
    assert outcome.stderr.count("\n") == 1 and "jobs.jsonl" in outcome.stderr
    assert "not a regular file (a named pipe); remove it or set SLURMKIT_REGISTRY to a file" in outcome.stderr


def test_a_huge_line_in_the_registry_is_skipped_with_one_warning(tmp_path, monkeypatch, capsys):
    from slurmkit.slurm import registry

    path = tmp_path / "jobs.jsonl"
    path.write_bytes(b'{"job_id": "1", "name": "a", "folder": "f", "profile": "p", "submitted": "t"}\n'
                     + b'"' + b"x" * 4096 + b'"\n')
    monkeypatch.setattr(registry, "MAX_RECORD_BYTES", 1024)
    assert [r.job_id for r in registry.all_records(path)] == ["1"]
    assert "line 2 is not a slurmkit record" in capsys.readouterr().err


# ------------------------------------------------------- any failure of a template is one line, bounded

TOO_BIG = "would build about {:,} items, past the 1,048,576 a template may build; templates format the plan"


@pytest.mark.parametrize("body, message", [
    ('{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}', "RecursionError: maximum recursion depth exceeded"),
    ('{% include "serial.sbatch.j2" %}', "RecursionError: maximum recursion depth exceeded"),
    ('{{ "a" * 2000000000 }}', "'*' " + TOO_BIG.format(2000000000)),
    ('{{ [0] * 1000000000 }}', "'*' " + TOO_BIG.format(1000000000)),
    ('{{ 10 ** 10000000 }}', "'**' would build about 12,000,000 items"),
    ('{{ "a"|center(2000000000) }}', "center " + TOO_BIG.format(2000000000)),
    ('{{ "x"|indent(2000000000, true) }}', "indent " + TOO_BIG.format(2000000000)),
    ('{{ "%2000000000s"|format("a") }}', "a %-format width " + TOO_BIG.format(2000000000)),
    ('{{ "%2000000000s" % "a" }}', "a %-format width " + TOO_BIG.format(2000000000)),
    ('{{ "{:2000000000}".format("a") }}', "a format width " + TOO_BIG.format(2000000000)),
    ('{{ 1/0 }}', "ZeroDivisionError: division by zero"),
    ('{{ 1 + "a" }}', "TypeError: unsupported operand type(s) for +: 'int' and 'str'"),
    ('{% for i in range(10**9) %}{% endfor %}', "OverflowError: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."),
    ('{{ (10**5000)|string }}', "ValueError: Exceeds the limit (4300 digits) for integer string conversion"),
    ('{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}{% endfor %}',
     "the script would be larger than 16 MiB (a script is a few KiB): the template repeats without end"),
    ('{% set ns = namespace(s="a") %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}',
     "MemoryError: the template asked for more than 1 GiB of memory, slurmkit's bound for a render; templates format the plan"),
    ('{% macro f(s, n) %}{{ f(s ~ s, n - 1) if n else s|length }}{% endmacro %}{{ f("a", 40) }}',
     "MemoryError: the template asked for more than 1 GiB of memory"),
], ids=lambda value: value[:40] if isinstance(value, str) else value)
def test_a_template_that_fails_in_any_way_is_one_line_at_its_file_exit_2_bounded(folders, body, message):
    work, home = folders
    (work / "templates").mkdir()
    (work / "templates" / "serial.sbatch.j2").write_text(body + "\nline two\n")
    (work / "job.yaml").write_text(GOOD_SPEC)
    before = sorted(work.rglob("*"))
    outcome = measured(cli("-q", "render", "job.yaml", "-o", "job.sbatch"), work, home)
    assert outcome.rc == 2, outcome
    assert outcome.stderr.count("\n") == 1 and "Traceback" not in outcome.stderr
    assert outcome.stderr.startswith(f"error: {work}/templates/serial.sbatch.j2")
    assert message in outcome.stderr
    assert sorted(work.rglob("*")) == before
    bound_mb = 1300 if message.startswith("MemoryError") else 200   # template_limits.MAX_RENDER_MEMORY: 1 GiB more
    assert outcome.cpu_s < 6 and outcome.peak_mb < bound_mb, outcome


def test_a_template_that_loops_without_output_is_stopped_by_the_time_limit(tmp_path, monkeypatch):
    from slurmkit import Job
    from slurmkit.core.errors import InputError
    from slurmkit.render import template_limits

    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "serial.sbatch.j2").write_text(
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(template_limits, "MAX_RENDER_SECONDS", 1)
    job = Job(name="t", profile="local", account="def-x", resources={"time": "1h"}, launch="python a.py")
    with pytest.raises(InputError, match="rendering took more than 1 s of CPU time"):
        job.render()


def test_templates_of_ordinary_size_still_render_in_the_bounded_sandbox(folders):
    work, home = folders
    (work / "templates").mkdir()
    (work / "templates" / "serial.sbatch.j2").write_text(
        '#!/bin/bash\n{{ "-" * 40 }}\n{{ "%-10s|"|format("ab") }}{{ "{:>6}".format("cd") }}{{ 2 ** 10 }} {{ 7 % 3 }}\n'
        '{{ "x"|center(9) }}\n')
    (work / "job.yaml").write_text(GOOD_SPEC)
    outcome = measured(cli("render", "job.yaml"), work, home)
    assert outcome.rc == 0, outcome
    assert outcome.stdout == '#!/bin/bash\n' + "-" * 40 + '\nab        |    cd1024 1\n    x    \n'


# --------------------------------------------------- check's walk of staged folders is bounded

def test_check_stops_counting_a_huge_staged_folder_with_a_warning(tmp_path, monkeypatch):
    from slurmkit import Job
    from slurmkit.resolve import staging

    data = tmp_path / "data"
    data.mkdir()
    for i in range(50):
        (data / f"f{i}").write_text("x")
    monkeypatch.setattr(staging, "MAX_WALK_FILES", 20)
    job = Job(name="w", profile="local", account="def-x", resources={"time": "1h"},
              stage={"inputs": [{"from": str(data), "to": "d"}]}, launch="python run.py $SLURM_TMPDIR/d")
    messages = [f.message for f in job.check() if f.field == "stage.inputs.0"]
    assert f"{data}: stopped counting after 20 files or 2 s (check counts at most 20): its sizes and file counts are at " \
           "least what was counted; is this the folder you meant to stage?" in messages


def test_check_of_the_whole_file_system_as_an_input_ends_in_bounded_time(folders):
    work, home = folders
    (work / "job.yaml").write_text(GOOD_SPEC.replace("launch:", "stage:\n  inputs: [{from: /, to: d}]\nlaunch:"))
    outcome = measured(cli("check", "job.yaml"), work, home)
    assert outcome.cpu_s < 6, outcome
    assert "Traceback" not in outcome.stderr


def test_walk_skips_links_and_pipes_and_says_so(tmp_path):
    from slurmkit.resolve.staging import walk

    (tmp_path / "a").write_text("a")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_text("bb")
    (tmp_path / "link").symlink_to("a")
    (tmp_path / "dirlink").symlink_to("sub")
    os.mkfifo(tmp_path / "pipe")
    seen = walk(tmp_path)
    assert seen.files == [("a", 1), ("sub/b", 2)] and seen.complete
    assert sorted(seen.skipped) == ["dirlink", "link", "pipe"]


# ------------------------------------------------------------ pack says what it skipped; dry runs leave no folder

def test_pack_reports_the_entries_it_did_not_pack(folders):
    work, home = folders
    (work / "data").mkdir()
    (work / "data" / "a").write_text("a")
    (work / "data" / "l").symlink_to("a")
    os.mkfifo(work / "data" / "p")
    outcome = measured(cli("pack", "data", "-o", "data.tar", "--compression", "none"), work, home)
    assert outcome.rc == 0, outcome
    assert outcome.stderr == ("warning: skipped 2 entries that are not regular files (symbolic links, named pipes, "
                              "sockets and devices are not packed): l, p\n")
    assert outcome.stdout.startswith("packed 1 files")


def test_a_dry_run_that_sbatch_refuses_leaves_no_logs_folder(tmp_path, monkeypatch):
    from slurmkit import Job
    from slurmkit.core.errors import SlurmkitError

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text("#!/bin/sh\necho 'sbatch: error: Batch job submission failed: Invalid account' >&2\nexit 1\n")
    (bin_dir / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    job = Job(name="d", profile="local", account="def-x", resources={"time": "1h"}, launch="python a.py")
    with pytest.raises(SlurmkitError, match="Invalid account"):
        job.test_only(folder=tmp_path / "logs" / "deep")
    assert not (tmp_path / "logs").exists()
    (tmp_path / "kept").mkdir()
    with pytest.raises(SlurmkitError):
        job.test_only(folder=tmp_path / "kept")
    assert (tmp_path / "kept").is_dir() and not list((tmp_path / "kept").iterdir())


# ------------------------------------------------ ~ in venv and build-cache paths; ~user refused

def test_tilde_in_venv_requirements_and_build_cache_renders_as_home(tmp_path):
    from slurmkit import Job

    job = Job(name="t", profile="nibi", account="def-x", resources={"time": "1h", "mem": "4G"},
              environment={"venv": {"path": "~/venvs/torch", "requirements": "~/proj/req.txt", "packages": ["numpy"]},
                           "builds": ["mpi4py"], "build_cache": "~/builds"}, launch="python run.py")
    script = job.render()
    assert 'virtualenv --no-download "${HOME}/venvs/torch"' in script
    assert '-r "${HOME}/proj/req.txt"' in script
    assert '"${HOME}/builds"' in script
    assert "~" not in script.replace("~/.", "")   # no literal ~ path left (comments aside)


def test_check_looks_for_a_tilde_requirements_file_in_home(tmp_path, monkeypatch):
    from slurmkit import Job

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "req.txt").write_text("numpy\n")
    job = Job(name="t", profile="nibi", account="def-x", resources={"time": "1h", "mem": "4G"},
              environment={"venv": {"requirements": "~/req.txt"}}, launch="python run.py")
    assert not [f for f in job.check() if "not on this host" in f.message]


@pytest.mark.parametrize("field, spec", [
    ("environment.venv.path", {"environment": {"venv": {"path": "~alice/venvs/t"}}}),
    ("environment.venv.requirements", {"environment": {"venv": {"requirements": "~alice/r.txt"}}}),
    ("environment.build_cache", {"environment": {"builds": ["mpi4py"], "build_cache": "~alice/b"}}),
    ("stage.inputs.0.from", {"stage": {"inputs": [{"from": "~alice/d.tar", "to": "d"}]}}),
    ("stage.outputs.0.to", {"stage": {"outputs": [{"from": "runs", "to": "~alice/runs"}]}}),
    ("stage.checkpoint.to", {"stage": {"checkpoint": {"from": "ck", "to": "~alice/ck"}}}),
])
def test_another_users_home_is_refused_in_every_path_field(field, spec):
    from slurmkit import Job

    job = Job(name="t", profile="local", account="def-x", resources={"time": "1h"}, launch="python run.py $SLURM_TMPDIR", **spec)
    errors = [f for f in job.resolve().errors if f.field == field]
    assert len(errors) == 1 and "(another user's home) is not expanded: slurmkit cannot know where it is on the cluster; " \
        "write the full path (e.g. /home/alice/...), or ~/... for your own" in errors[0].message


@pytest.mark.parametrize("form", ["${HOME:-/home/me}", "$(pwd)", "`pwd`", "$1", "${SCRATCH%/}"])
@pytest.mark.parametrize("field, spec", [
    ("environment.venv.path", lambda p: {"environment": {"venv": {"path": f"{p}/venvs/t"}}}),
    ("environment.build_cache", lambda p: {"environment": {"builds": ["mpi4py"], "build_cache": f"{p}/b"}}),
    ("stage.inputs.0.from", lambda p: {"stage": {"inputs": [{"from": f"{p}/d.tar", "to": "d"}]}}),
    ("stage.outputs.0.to", lambda p: {"stage": {"outputs": [{"from": "runs", "to": f"{p}/runs"}]}}),
    ("stage.checkpoint.to", lambda p: {"stage": {"checkpoint": {"from": "ck", "to": f"{p}/ck"}}}),
])
def test_a_shell_form_a_path_would_keep_as_text_is_refused_in_every_path_field(form, field, spec):
    """A path expands $NAME and ${NAME}; ${HOME:-/x} or $(pwd) stayed literal text, and the job
    read or wrote a folder named '${HOME:-' under the spec's."""
    from slurmkit import Job

    job = Job(name="t", profile="local", account="def-x", resources={"time": "1h"}, launch="python run.py $SLURM_TMPDIR", **spec(form))
    errors = [f for f in job.resolve().errors if f.field == field]
    assert len(errors) == 1 and errors[0].message.endswith(
        f"{form} is not expanded in a path, only $NAME and ${{NAME}} are (and $$ for a literal $): write the value it stands for")


def test_the_forms_a_path_expands_are_not_refused():
    from slurmkit import Job

    job = Job(name="t", profile="local", account="def-x", resources={"time": "1h"}, launch="python run.py $SLURM_TMPDIR",
              stage={"inputs": [{"from": "${SCRATCH}/d.tar", "to": "d"}], "outputs": [{"from": "runs", "to": "$HOME/a$$b"}]})
    assert not [f for f in job.resolve().findings if "not expanded" in f.message]


# ------------------------------- extra directives that clash with what slurmkit writes, abbreviations too

@pytest.mark.parametrize("directive, message", [
    ("--mem-per-gpu=8G", "'--mem-per-gpu=8G' contradicts --mem or --mem-per-cpu, which slurmkit writes from "
                         "resources.mem or resources.mem_per_cpu; use resources.mem or resources.mem_per_cpu instead"),
    ("--cpus-per-gpu=4", "'--cpus-per-gpu=4' contradicts --cpus-per-task, which slurmkit writes from resources.cpus_per_task; "
                         "use resources.cpus_per_task instead"),
    ("--ntasks-per-gpu=1", "'--ntasks-per-gpu=1' contradicts --ntasks-per-node"),
    ("--gpus-per-socket=1", "'--gpus-per-socket=1' contradicts the GPU request"),
    ("--chdir=/", "'--chdir=/' cannot be given: slurmkit runs the job in the spec's folder"),
    ("-D/", "'-D/' cannot be given: slurmkit runs the job in the spec's folder"),
    ("--gre=gpu:h100:1", "'--gre=gpu:h100:1' asks for GPUs, which resources.gpus says"),
    ("--gres=gpu:h100:1", "'--gres=gpu:h100:1' asks for GPUs, which resources.gpus says"),
    ("--mem-per-g=8G", "contradicts --mem or --mem-per-cpu"),
    ("--chd=/tmp", "cannot be given: slurmkit runs the job in the spec's folder"),
])
def test_an_extra_directive_that_contradicts_what_slurmkit_writes_is_refused(directive, message):
    from slurmkit.core.sanity import directive_problem

    assert message in (directive_problem(directive, {}) or "")


@pytest.mark.parametrize("directive", ["--gres=lscratch:10", "--gres-flags=enforce-binding", "--constraint=cascade",
                                       "--signal=USR2@60", "--nodelist=n1"])
def test_extra_directives_slurmkit_does_not_write_still_pass(directive):
    from slurmkit.core.sanity import directive_problem

    assert directive_problem(directive, {}) is None


@pytest.mark.parametrize("directive", ["--signal=B:USR1@60", "--sig=B:USR1@60"])
def test_an_extra_signal_is_refused_only_where_slurmkit_writes_its_own(directive):
    from slurmkit import Job

    base = dict(name="s", profile="local", account="def-x", resources={"time": "1h"}, launch="python run.py",
                extra_directives=[directive])
    errors = Job(**base, stage={"outputs": [{"from": "runs", "to": "res"}]}).resolve().errors
    assert [e.field for e in errors] == ["extra_directives.0"]
    assert "replaces the --signal=B:USR1@" in errors[0].message and "use stage.lead" in errors[0].message
    # without a copy back the batch script has no USR1 trap: it would die of the signal, unrecorded
    (error,) = Job(**base).resolve().errors
    assert "the batch script has no handler for USR1" in error.message
    assert not Job(**dict(base, extra_directives=[directive.replace("B:", "")])).resolve().errors
    # the job's own set-up traps it: the batch shell hears it, as in the script it came from
    for trap in ["trap 'touch STOP; wait' USR1", 'save() { cp -r out ~/o; }; trap save SIGUSR1', "trap 'touch STOP' 10"]:
        assert not Job(**dict(base, environment={"setup": [trap]})).resolve().errors, trap
    assert Job(**dict(base, environment={"setup": ["trap 'touch STOP' TERM"]})).resolve().errors


# --------------------------------- destinations compared after ~, $HOME, $PWD; array values in destinations

@pytest.mark.parametrize("first, second", [("~/out", "$HOME/out"), ("$HOME/o", "~/o/x"), ("$PWD/res", "res"),
                                           ("${SLURM_SUBMIT_DIR}/res/", "./res"), ("${HOME}/a", "~/a")])
def test_outputs_that_are_one_place_spelled_two_ways_collide(first, second):
    from slurmkit.core.sanity import output_collision

    found = output_collision([(("stage", "outputs", 0, "to"), first), (("stage", "outputs", 1, "to"), second)])
    assert found is not None and found[0] == ("stage", "outputs", 1, "to")


def test_outputs_in_different_places_do_not_collide():
    from slurmkit.core.sanity import output_collision

    assert output_collision([(("stage", "outputs", 0, "to"), "~/out"), (("stage", "outputs", 1, "to"), "$SCRATCH/out"),
                             (("stage", "outputs", 2, "to"), "$PWD/res"), (("stage", "outputs", 3, "to"), "results")]) is None


def _array_findings(parameters, stage):
    from slurmkit import Job

    job = Job(name="a", profile="local", account="def-x", kind="array", resources={"time": "1h"},
              array={"parameters": parameters}, stage=stage, launch="python run.py")
    return [(f.level, f.field, f.message) for f in job.resolve().findings]


def test_array_values_that_repeat_send_two_tasks_to_one_destination():
    found = _array_findings({"p": ["1", "1"]}, {"outputs": [{"from": "out", "to": "res2/$p"}]})
    assert ("warning", "stage.outputs.0.to", "'res2/$p' is 'res2/1' for two tasks of the array (p=1 and p=1): the second's "
            "files overwrite the first's; make each task's destination its own, e.g. res2/$p/$SLURM_ARRAY_TASK_ID") in found


def test_a_destination_that_leaves_out_a_parameter_of_the_grid_is_shared():
    found = _array_findings({"p": ["1", "2"], "q": ["a", "b"]}, {"outputs": [{"from": "out", "to": "res/$p"}]})
    assert any(level == "warning" and "'res/1' for two tasks of the array (p=1, q=a and p=1, q=b)" in message
               for level, _, message in found)
    assert not [f for f in _array_findings({"p": ["1", "2"], "q": ["a", "b"]},
                                           {"outputs": [{"from": "out", "to": "res/$p-${q}"}]}) if "two tasks" in f[2]]


@pytest.mark.parametrize("value", ["..", "a/b", "."])
@pytest.mark.parametrize("stage", [{"checkpoint": {"from": "ck", "to": "ck/$p"}}, {"outputs": [{"from": "o", "to": "res/$p"}]}])
def test_an_array_value_that_would_leave_the_destination_folder_is_refused(value, stage):
    found = _array_findings({"p": ["1", value]}, stage)
    assert [f for f in found if f[0] == "error"] == [
        ("error", "array.parameters.p", f"the value {value!r} reaches "
         f"{'stage.checkpoint.to' if 'checkpoint' in stage else 'stage.outputs.0.to'} "
         f"({'ck/$p' if 'checkpoint' in stage else 'res/$p'!r}): a value in a destination is one folder name, without '/' and "
         "not '.' or '..'; change the value, or keep it out of the destination")]


# ------------------------------------------------- import of pathological scripts is linear and quiet

_HEAD = "#!/bin/bash\n#SBATCH --time=1:00:00\n"
_NEAR_CAP = 250_000


_BODIES = {
    "long word": lambda n: "a" * n + "\n",
    "nested $(": lambda n: "echo " + "$(" * (n // 2) + "\n",
    "backslashes": lambda n: "echo " + "\\" * n + "\n",
    "many long lines": lambda n: ("echo " + "\\" * 8000 + "\n") * (30 * n // _NEAR_CAP),
    "huge heredoc": lambda n: "cat <<EOF\n" + "x\n" * (n // 2) + "EOF\npython a.py\n",
    "many notes": lambda n: "echo $A\n" * (n // 8),
    "many argument reads": lambda n: "x=$1\n" * (n // 10) + "./p $1\n" * (n // 16),
}


@pytest.mark.parametrize("name", list(_BODIES))
def test_import_reads_a_pathological_script_below_the_cap_quickly_with_bounded_notes(folders, name):
    """Quick is how the cost grows, not a time: the import of the script near the cap is
    measured against that of the same script at half the size, in the same test, so that a
    loaded machine slows both alike. A linear reader costs at most twice as much for twice the
    script (less, with its fixed start-up cost); a quadratic one four times."""
    work, home = folders
    (work / "half.sh").write_text(_HEAD + _BODIES[name](_NEAR_CAP // 2))
    (work / "odd.sh").write_text(_HEAD + _BODIES[name](_NEAR_CAP))
    half = measured(cli("import", "half.sh", "-o", "half.yaml"), work, home)
    outcome = measured(cli("import", "odd.sh", "-o", "job.yaml"), work, home)
    assert outcome.rc == 0 and "Traceback" not in outcome.stderr, outcome.stderr[-500:]
    if outcome.cpu_s >= 3 * max(half.cpu_s, 0.3):
        # CPU time too grows on a busy machine (shared caches and cores): each is measured once
        # more and the least kept, the usual reading of a timing; a quadratic reader fails again
        half = min(half, measured(cli("import", "half.sh", "-o", "half.yaml"), work, home), key=lambda o: o.cpu_s)
        outcome = min(outcome, measured(cli("import", "odd.sh", "-o", "job.yaml"), work, home), key=lambda o: o.cpu_s)
    assert outcome.cpu_s < 3 * max(half.cpu_s, 0.3), (outcome.cpu_s, half.cpu_s)
    assert len(outcome.stderr) < 40_000 and outcome.stderr.count("\n") <= 103


def test_import_refuses_a_script_past_its_cap_in_one_line(folders):
    from slurmkit.port.porting import MAX_SCRIPT_BYTES

    work, home = folders
    (work / "big.sh").write_text(_HEAD + "a" * MAX_SCRIPT_BYTES)
    refused(work, home, cli("import", "big.sh"), "big.sh: larger than 256 KiB, slurmkit's limit for this file; "
                                                  "a job spec or profile is a few KiB")


def test_a_named_pipe_as_a_template_in_the_folder_is_one_line(folders):
    work, home = folders
    (work / "templates").mkdir()
    os.mkfifo(work / "templates" / "serial.sbatch.j2")
    (work / "job.yaml").write_text(GOOD_SPEC)
    refused(work, home, cli("render", "job.yaml"), f"{work}/templates/serial.sbatch.j2: not a regular file")


def test_a_named_pipe_as_a_jobs_exit_file_or_an_input_manifest_is_not_waited_on(tmp_path):
    from slurmkit.resolve.localdisk import _manifest_bytes
    from slurmkit.slurm.monitor import read_exit_file

    os.mkfifo(tmp_path / "7.exit")
    os.mkfifo(tmp_path / "d.tar.manifest.json")
    assert read_exit_file("7", str(tmp_path)) is None
    assert _manifest_bytes(tmp_path / "d.tar.manifest.json") is None


def test_profiles_show_escapes_control_characters_in_a_profiles_values(folders):
    work, home = folders
    (work / "site_profiles").mkdir()
    (work / "site_profiles" / "mine.yaml").write_text('name: mine\nextends: local\ndescription: "x\\e]0;PWNED\\ay"\n')
    outcome = measured(cli("profiles", "show", "mine"), work, home)
    assert outcome.rc == 0, outcome.stderr
    assert "\x1b" not in outcome.stdout and "mine: x\\x1b]0;PWNED\\x07y" in outcome.stdout
