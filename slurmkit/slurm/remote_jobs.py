"""A job on a cluster from here: sync its folder, submit the locally rendered script with a
token, follow it, pull its logs and outputs back (the connection is remote.py's).

On the cluster a job lives in ``<root>/<folder name>-<hash of its local path>/``: the spec's
folder as synced (the spec, its small inputs, its requirements), with ``logs/`` beside it as
locally. sbatch runs there, so relative paths in the spec mean the same on both sides.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import stat
import time
import uuid
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from slurmkit.core.errors import SlurmkitError
from slurmkit.core.files import check_destination
from slurmkit.core.records import Record
from slurmkit.slurm.remote import COPY_TIMEOUT_S, SYNC_EXCLUDES, Connection, ConnectionDropped, RemoteError, TooBig, remote_tokens
from slurmkit.slurm.slurmcli import SchedulerError, scheduler_reason


class RemoteHandle(Record):
    """What a remote submission gives back: the id, where its logs are on the cluster."""

    job_id: str
    folder: str
    size: Optional[int] = None


def remote_job_dir(conn: Connection, local_dir: Path) -> str:
    """The job's folder on the cluster: one per local folder, the same on every submit."""
    check_plain_name(local_dir)
    digest = hashlib.sha256(str(local_dir.resolve()).encode()).hexdigest()[:8]
    far = f"{conn.root}/{local_dir.resolve().name}-{digest}"
    if _CONTROL.search(far):
        raise SlurmkitError(f"the job's folder on {conn.remote.host}, {far!r}, would hold a control character: "
                            "set a root without one in remote.yaml")
    return far


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_plain_name(local_dir: Path) -> None:
    """A job folder whose name holds a control character (a newline, a tab) is refused before
    anything is sent: rsync, the far shell and the records read by lines would each name a
    different folder (the files land in one, sbatch runs in another)."""
    name = local_dir.resolve().name
    if _CONTROL.search(name):
        raise SlurmkitError(f"the job's folder {str(local_dir.resolve())!r} has a control character in its name: "
                            "rename it (letters, digits, spaces and punctuation only) to submit it with --remote")


# ------------------------------------------------------------------------------------ sync

def _excluded(relative: str, is_dir: bool) -> bool:
    name = relative.rsplit("/", 1)[-1]
    for pattern in SYNC_EXCLUDES:
        if pattern.endswith("/"):
            if is_dir and (relative == pattern[:-1] or name == pattern[:-1]):
                return True
        elif fnmatch(name, pattern):
            return True
    return False


def folder_size(local_dir: Path) -> Tuple[int, List[Tuple[int, str]]]:
    """Bytes that would be synced, and the largest top-level entries (bytes, name)."""
    total = 0
    by_top: Dict[str, int] = {}
    for top, dirs, files in os.walk(local_dir):
        rel_top = os.path.relpath(top, local_dir)
        dirs[:] = [d for d in dirs if not _excluded(os.path.normpath(os.path.join(rel_top, d)), True)]
        for name in files:
            relative = os.path.normpath(os.path.join(rel_top, name))
            if _excluded(relative, False):
                continue
            try:
                size = os.lstat(os.path.join(top, name)).st_size
            except OSError:
                continue
            total += size
            first = relative.split(os.sep, 1)[0]
            by_top[first] = by_top.get(first, 0) + size
    return total, sorted(((size, name) for name, size in by_top.items()), reverse=True)


def check_size(local_dir: Path, max_mb: int) -> int:
    total, largest = folder_size(local_dir)
    if total > max_mb * 1024 * 1024:
        biggest = ", ".join(f"{name} ({size / 2**20:.0f} MiB)" for size, name in largest[:3])
        raise TooBig(f"{local_dir} holds {total / 2**20:.0f} MiB to copy to the cluster, over the {max_mb} MiB limit "
                     f"(largest: {biggest}): put big data on the cluster once (rsync or Globus to your project or "
                     "scratch space) and name it there by absolute path in the spec, or raise max_sync_mb in remote.yaml")
    return total


def sync_folder(conn: Connection, local_dir: Path, remote_dir: str) -> bool:
    """rsync the job folder to the cluster over the master connection (excludes: SYNC_EXCLUDES).
    Returns whether the folder was made here; a copy that fails removes the folder it made."""
    check_size(local_dir, conn.remote.max_sync_mb)
    made = _make_far_folder(conn, remote_dir)
    argv = ["rsync", "-rlptz", "--chmod=Dgo-rwx,Fgo-rwx", *(f"--exclude={p}" for p in SYNC_EXCLUDES),
            "-e", conn.rsync_shell(), f"{local_dir}/", f"{conn.remote.target}:{remote_dir}/"]
    try:
        _rsync(conn, argv, "copy the job folder to")
    except SlurmkitError as error:
        _undo(conn, error, remote_dir if made else None)
        raise
    return made


def _make_far_folder(conn: Connection, remote_dir: str) -> bool:
    """``remote_dir/logs`` on the cluster; whether ``remote_dir`` is new (so a failed submit may remove it)."""
    script = 'test -d "$1" && echo existed; mkdir -p "$1/logs"'
    result = conn.run(["sh", "-c", script, "sh", remote_dir])
    if result.returncode != 0:
        raise RemoteError(f"cannot make {remote_dir} on {conn.remote.host}: {scheduler_reason(result.stderr)}")
    return "existed" not in result.stdout.split()


def _undo(conn: Connection, error: SlurmkitError, made: Optional[str], script: Optional[str] = None) -> None:
    """What a failed submit put on the cluster, removed: the job's folder if it made it, else its
    script. What cannot be removed is named in ``error``'s message."""
    if made and made.startswith(f"{conn.root}/"):   # never anything outside the job root
        argv = ["rm", "-rf", "--", made]
    elif script:
        argv = ["rm", "-f", "--", script]
    else:
        return
    try:
        removed = conn.run(argv).returncode == 0
    except RemoteError:
        removed = False
    if not removed:
        error.message += f"; {made or script} was left on {conn.remote.host}: remove it by hand"


#: the longest one rsync may take (a big job folder over a slow link).
RSYNC_TIMEOUT_S = 3600


def rsync_reports_progress() -> bool:
    """This rsync has ``--info=progress2`` (3.1 and later; macOS's 2.6.9 and openrsync do not)."""
    import re
    import subprocess

    try:
        first = subprocess.run(["rsync", "--version"], capture_output=True, text=True, timeout=30).stdout.split("\n")[0]
    except (OSError, subprocess.SubprocessError):
        return False
    match = re.search(r"version\s+(\d+)\.(\d+)", first)
    if match is None or "openrsync" in first:
        return False
    return (int(match.group(1)), int(match.group(2))) >= (3, 1)


def _rsync_metered(argv: List[str], what: str, timeout_s: float):
    """rsync with ``--info=progress2``, its percent done drawn as a bar (core/progress.py); what
    ``subprocess.run`` would return (without stdout), TimeoutExpired past ``timeout_s``."""
    import os
    import re
    import selectors
    import subprocess
    import tempfile
    import time

    from slurmkit.core.progress import meter, rsync_percent

    with meter(what, unit="percent") as bar, tempfile.TemporaryFile("w+") as errors:
        bar.start(100)
        with subprocess.Popen([argv[0], "--info=progress2", *argv[1:]], stdout=subprocess.PIPE, stderr=errors,
                              stdin=subprocess.DEVNULL) as rsync:
            assert rsync.stdout is not None
            deadline, pending = time.monotonic() + timeout_s, b""
            with selectors.DefaultSelector() as waiting:
                waiting.register(rsync.stdout, selectors.EVENT_READ)
                while True:
                    if time.monotonic() > deadline:
                        rsync.kill()
                        raise subprocess.TimeoutExpired(argv, timeout_s)
                    if not waiting.select(1.0):
                        continue
                    chunk = os.read(rsync.stdout.fileno(), 65536)
                    if not chunk:
                        break
                    *lines, pending = re.split(rb"[\r\n]", pending + chunk)
                    for percent in (rsync_percent(line.decode(errors="replace")) for line in lines):
                        if percent is not None:
                            bar.reach(percent)
            rsync.wait(timeout=max(deadline - time.monotonic(), 1.0))
        errors.seek(0)
        return subprocess.CompletedProcess(argv, rsync.returncode, "", errors.read())


def _rsync(conn: Connection, argv: List[str], doing: str, here: Optional[Path] = None) -> None:
    """``here``: the local folder rsync writes into (a fetch): a full disk is then this one."""
    import subprocess

    from slurmkit.core.progress import shows_progress

    try:
        if shows_progress() and rsync_reports_progress():
            result = _rsync_metered(argv, f"rsync: {doing} {conn.remote.host}", RSYNC_TIMEOUT_S)
        else:
            result = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=RSYNC_TIMEOUT_S)
    except FileNotFoundError:
        raise RemoteError("rsync is not installed here: install it (apt install rsync, brew install rsync)") from None
    if result.returncode == 0:
        return
    if any(marker in result.stderr for marker in ("Disk quota exceeded", "No space left")):
        if here is not None:
            raise RemoteError(f"rsync could not write here ({scheduler_reason(result.stderr)}): free space in {here} "
                              "or fetch into another folder with --to")
        raise conn.quota_error(result.stderr)
    if result.returncode == 255 or "connection unexpectedly closed" in result.stderr:
        raise conn.transport_error(result.stderr)
    raise RemoteError(f"rsync could not {doing} {conn.remote.host}: {scheduler_reason(result.stderr)}")


# ---------------------------------------------------------------------------------- submit

def submit(job, conn: Connection, after: Sequence[str] = (), after_type: str = "ok", warn=None,
           args: Sequence[str] = (), ignore_todos: bool = False) -> RemoteHandle:
    """Render for the cluster's profile here, sync the folder, submit there with a token; the
    registry gets the intent before sbatch and the id after, with the ssh target as ``remote``.
    ``args`` go to the script as sbatch's words after its name, each quoted for the far shell.
    A submit that made no job closes its intent and removes what it put on the cluster. A spec
    with ``# to do:`` lines is refused first, as locally, unless ``ignore_todos``."""
    from slurmkit.core.todos import refuse_open_todos
    from slurmkit.render.render import render
    from slurmkit.slurm.registry import intent
    from slurmkit.slurm.submit import record_intent, record_job, sbatch_command, script_arguments

    args = script_arguments(args)   # before the cluster is asked anything
    if not ignore_todos:
        refuse_open_todos(job._spec_path())
    held: list = []   # the spec's warnings, said once the job is known to be taken (a split sweep's says "submit splits it")
    plan = job._plan(conn.remote.name, held.append)
    if plan.chain:
        raise SlurmkitError("a chain is not submitted with --remote yet: submit it on the cluster (`slurmkit submit` there)")
    _refuse_split_sweep(plan, job.profile(conn.remote.name).scheduling.max_array_size)
    held += _unfetched_sources(plan)
    for finding in held if warn else ():
        warn(finding)
    script_text = render(plan)
    local_dir = job.base_dir()
    check_plain_name(local_dir)   # before the cluster is asked anything
    conn.ensure_open()
    job_dir = remote_job_dir(conn, local_dir)
    logs = f"{job_dir}/logs"
    made = job_dir if sync_folder(conn, local_dir, job_dir) else None
    token = uuid.uuid4().hex
    script = f"{logs}/.{job.spec.name}.{token[:8]}.sbatch"
    size = plan.array.size if plan.array else None
    planned = intent(job.spec.name, logs, plan.profile, token, array_size=size, spec=job._spec_path(),
                     array_ids=plan.array.indices if plan.array else None,
                     after=",".join(after) or None, remote=conn.remote.target, args=list(args) or None)
    try:
        _write_script(conn, script, script_text)
        write_far_runtime(conn)
        record_intent(planned)
    except SlurmkitError as error:
        _undo(conn, error, made, script)
        raise
    argv = sbatch_command(PurePosixPath(script), PurePosixPath(logs), size is not None, tuple(after), after_type, token=token,
                          args=args)
    try:
        job_id = sbatch_once(conn, argv, token, cwd=job_dir, env={"SLURMKIT_JOB_DIR": logs})
    except SchedulerError as error:
        if not error.transient:    # a transient one may have reached the controller: status adopts it by its token
            _close_intent(planned, error)
            _undo(conn, error, made, script)
        raise
    handle = RemoteHandle(job_id, logs, size)
    try:
        record_job(planned, job_id, handle)   # NotRecorded carries the handle: the caller shows the id first
    finally:
        _keep_script(conn, script, f"{logs}/{job_id}_submission.sh")
    return handle


#: the far side writes the runtime into its data folder, where the job's script looks for it
#: (render/runtime.py): kept if whole, else written beside and renamed, never half there.
_WRITE_RUNTIME = ('d="${XDG_DATA_HOME:-$HOME/.local/share}/slurmkit/runtime" && mkdir -p "$d" && '
                  'if echo "$2  $d/$1" | sha256sum --status -c 2> /dev/null; then cat > /dev/null; '
                  'else cat > "$d/.$1.$$" && mv -f "$d/.$1.$$" "$d/$1"; fi')


def write_far_runtime(conn: Connection) -> None:
    """slurmkit's runtime library in the cluster's data folder, over the one connection."""
    from slurmkit.render.runtime import runtime

    lib = runtime()
    result = conn.run(["sh", "-c", _WRITE_RUNTIME, "sh", lib.name, lib.sha256], input=lib.text)
    if result.returncode != 0:
        raise RemoteError(f"nothing was submitted: cannot write slurmkit's runtime {lib.name} into the data folder on "
                          f"{conn.remote.host}: {scheduler_reason(result.stderr)}")


def _write_script(conn: Connection, script: str, text: str) -> None:
    result = conn.run(["sh", "-c", 'umask 077 && cat > "$1"', "sh", script], input=text)
    if result.returncode != 0:
        raise RemoteError(f"nothing was submitted: cannot write the job script {script} on {conn.remote.host}: "
                          f"{scheduler_reason(result.stderr)}")


def _close_intent(planned, error: SlurmkitError) -> None:
    """The intent of a submit that made no job, closed, so that ``status`` does not look for it
    (best effort: an open intent is only looked up in vain, and closed after a day)."""
    from slurmkit.slurm.registry import RegistryError, record

    try:
        record(planned._replace(note=f"not submitted: {error.message}", host=None, pid=None))
    except RegistryError:
        pass


def _keep_script(conn: Connection, script: str, kept: str) -> None:
    """The script under the name submitit's JobPaths looks for; the job exists whatever happens here."""
    try:
        conn.run(["mv", "-f", "--", script, kept])
    except RemoteError:
        pass


def _unfetched_sources(plan) -> list:
    """A warning for each build that compiles a source fetched on the submit host (Horovod's):
    from here it is not fetched into the cluster's build cache, so the job stops if none is there."""
    from slurmkit.core.findings import Finding

    return [Finding("warning", "environment.builds", f"{b.requirement} is compiled from its source, which --remote does not "
                    f"fetch: run `slurmkit build --spec` (or `slurmkit submit`) once on the cluster's login node, which fetches it "
                    f"into {b.source}, or the job stops at its build") for b in plan.builds if b.source]


def sbatch_once(conn: Connection, argv: Sequence[str], token: str, cwd: str, env, sleep: Callable[[float], None] = time.sleep,
                retry_for: Optional[float] = None) -> str:
    """submit.sbatch_once over ssh: a failure that may have reached the controller (a dropped
    connection, a busy controller) is looked up by its token on the cluster before sbatch runs
    again; never two jobs for one token."""
    from slurmkit.slurm.registry import now_iso
    from slurmkit.slurm.submit import sbatch_once as once

    since = now_iso()

    def run() -> str:
        try:
            result = conn.run(argv, cwd=cwd, env=env, idempotent=False, timeout=120.0)
        except ConnectionDropped as error:
            conn.ensure_open()
            raise SchedulerError(error.message, transient=True) from None
        if result.returncode in (126, 127):   # the far shell found no sbatch to run: it never ran
            raise SchedulerError(f"sbatch could not be run on {conn.remote.host}: {scheduler_reason(result.stderr)}")
        if result.returncode != 0:
            raise SchedulerError(f"sbatch on {conn.remote.host} refused the job: {scheduler_reason(result.stderr)}",
                                 transient=_transient(result.stderr))
        return result.stdout

    return once(argv, token, retry_for=retry_for, sleep=sleep, lookup=lambda: remote_tokens(conn, since).jobs, run=run,
                adopt=f"`slurmkit status --remote {conn.remote.name}` adopts it")


def _transient(stderr: str) -> bool:
    from slurmkit.slurm.slurmcli import is_transient

    return is_transient(stderr)


# ----------------------------------------------------------------------------------- fetch

class Fetched(Record):
    """What ``fetch`` brought: every file the cluster listed for it arrived whole."""

    folder: Path
    outputs: List[str]      # the spec's outputs that were on the cluster, and arrived
    absent: List[str]       # the spec's outputs that are not on the cluster
    files: int
    size: int


def fetch(conn: Connection, record, job_id: str, to: Optional[Path] = None) -> Fetched:
    """Pull a job's logs, exit file and script (into ``<spec folder>/logs``) and the outputs its
    spec copies back (``stage.outputs``, ``stage.checkpoint``: into the spec's folder) from the
    cluster. rsync's exit code alone is no proof (a filter that matched nothing ends with 0):
    the cluster lists what is to come first, and what is here is checked against it."""
    local_dir = Path(to) if to else (Path(record.spec).parent if record.spec else Path.cwd())
    check_destination(local_dir, folder=True)   # rsync would write through a link, or fail on a pipe
    job_dir = str(PurePosixPath(record.folder).parent)
    outputs = _output_paths(record.spec)
    base = job_id.split("_")[0]
    _make_local_folder(local_dir)
    argv = ["rsync", "-rlptz", *fetch_rules(base, outputs), "-e", conn.rsync_shell(),
            f"{conn.remote.target}:{job_dir}/", f"{local_dir}/"]
    conn.ensure_open()
    listed = far_files(conn, job_dir, base, outputs)
    check_arrivals(listed, local_dir)
    _copy_checked(conn, job_id, argv, listed, local_dir, lambda: far_files(conn, job_dir, base, outputs))
    absent = [path for path in outputs if not any(_under(name, path) for name in listed)]
    return Fetched(local_dir, [path for path in outputs if path not in absent], absent, len(listed),
                   sum(size for _, size in listed.values()))


def _copy_checked(conn: Connection, job_id: str, argv: List[str], listed: Listing, here: Path,
                  list_again: Callable[[], Listing]) -> None:
    """rsync, then every listed file checked here; RemoteError naming what did not arrive whole."""
    failed: Optional[RemoteError] = None
    try:
        _rsync(conn, argv, "fetch from", here=here)
    except RemoteError as error:
        failed = error
    missing = not_arrived(listed, here)
    if missing and failed is None:   # perhaps changed on the cluster meanwhile (a log still written): ask again
        missing = not_arrived(listed, here, list_again())
    if failed is not None and not listed:
        raise failed
    if missing or failed is not None:
        raise RemoteError(_short_message(conn, job_id, listed, missing, here, failed))


def check_arrivals(listed: Listing, here: Path) -> None:
    """Refuse, before anything is copied, a fetch that would replace what is here by something
    else: rsync silently puts a folder in place of a file (the file lost) and fails half-way on
    a folder or a pipe where a file comes. A regular file (or link) that a file replaces is a
    fetch again, and allowed."""
    folders = {str(parent) for path in listed for parent in PurePosixPath(path).parents if str(parent) != "."}
    for path in sorted(folders | set(listed)):
        try:
            mode = os.lstat(here / path).st_mode
        except FileNotFoundError:
            continue
        except OSError as error:
            raise RemoteError(f"{here / path}: cannot fetch into it: {error.strerror or error}") from None
        if path in folders and not stat.S_ISDIR(mode):
            wanted, what = "a folder", "a regular file" if stat.S_ISREG(mode) else f"a {_kind(mode)}"
        elif path not in folders and not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            wanted, what = "a file", "a folder" if stat.S_ISDIR(mode) else f"a {_kind(mode)}"
        else:
            continue
        raise RemoteError(f"{here / path} is {what} here where {wanted} of the job arrives: nothing was fetched; "
                          "move it away, or fetch into another folder with --to")


def _kind(mode: int) -> str:
    return {stat.S_IFLNK: "symbolic link", stat.S_IFIFO: "named pipe", stat.S_IFSOCK: "socket",
            stat.S_IFCHR: "character device", stat.S_IFBLK: "block device"}.get(stat.S_IFMT(mode), "special file")


def _make_local_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RemoteError(f"cannot make {folder} here to fetch into: {error.strerror or error}; "
                          "choose another folder with --to") from None


def _literal(pattern: str, always: bool = False) -> str:
    """``pattern`` as rsync's filter rules read it literally: ``*?[`` (and ``\\``, which escapes
    them only where one of them is in the rule) escaped."""
    if not always and not any(char in pattern for char in "*?["):
        return pattern
    return re.sub(r"([*?\[\\])", r"\\\1", pattern)


def fetch_rules(base: str, outputs: Sequence[str]) -> List[str]:
    """rsync's filter rules for a fetch: the job's logs and exit file, and each output (a file,
    or a folder with all it holds), with the folders on the way to it; nothing else."""
    rules = ["--include=logs/", f"--include=logs/{base}_*", f"--include=logs/{base}.exit"]
    for path in outputs:
        parts = PurePosixPath(path).parts
        rules += [f"--include={_literal('/'.join(parts[:i]))}/" for i in range(1, len(parts))]
        rules += [f"--include={_literal(path)}", f"--include={_literal(path, always=True)}/***"]
    return rules + ["--exclude=*"]


#: (kind: "f" a file, "l" a symbolic link; size in bytes) by path relative to the job's folder
Listing = Dict[str, Tuple[str, int]]
#: (path, bytes there, bytes here or None) of a file that did not arrive whole
Missing = List[Tuple[str, int, Optional[int]]]

_LIST_SCRIPT = (
    'cd "$1" || exit 0; base=$2; shift 2; rc=0\n'
    'find ./logs -maxdepth 1 \\( -name "$base"_\\* -o -name "$base.exit" \\) \\( -type f -o -type l \\) '
    "-printf '%y %s %p\\0' 2>/dev/null\n"
    'for p in "$@"; do if [ -e "./$p" ] || [ -L "./$p" ]; then '
    "find \"./$p\" \\( -type f -o -type l \\) -printf '%y %s %p\\0' || rc=1; fi; done\n"
    "exit $rc")


def far_files(conn: Connection, job_dir: str, base: str, outputs: Sequence[str]) -> Listing:
    """What a fetch is to bring, as the cluster lists it (one command, GNU find)."""
    result = conn.run(["sh", "-c", _LIST_SCRIPT, "sh", job_dir, base, *outputs], timeout=COPY_TIMEOUT_S)
    if result.returncode != 0:
        raise RemoteError(f"cannot list what to fetch in {job_dir} on {conn.remote.host}: {scheduler_reason(result.stderr)}")
    listed: Listing = {}
    for entry in result.stdout.split("\0"):
        kind, _, rest = entry.partition(" ")
        size, _, path = rest.partition(" ")
        if kind in ("f", "l") and size.isdigit() and path.startswith("./"):
            listed[path[2:]] = (kind, int(size))
    return listed


def not_arrived(listed: Listing, here: Path, later: Optional[Listing] = None) -> Missing:
    """(path, bytes there, bytes here or None) of each listed file that is not here whole. A file
    is whole at a size it had there when listed (``later``: listed again after the copy; a log
    still written lies between the two); one gone from the cluster since is not asked for."""
    missing: Missing = []
    for path, (kind, size) in sorted(listed.items()):
        sizes = [size]
        if later is not None:
            if path not in later:
                continue
            sizes.append(later[path][1])
        try:
            info = os.lstat(here / path)
        except OSError:
            missing.append((path, size, None))
            continue
        if kind == "l":
            ok = stat.S_ISLNK(info.st_mode)
        else:
            ok = stat.S_ISREG(info.st_mode) and min(sizes) <= info.st_size <= max(sizes)
        if not ok:
            missing.append((path, size, info.st_size if stat.S_ISREG(info.st_mode) else None))
    return missing


def _under(name: str, path: str) -> bool:
    return name == path or name.startswith(path + "/")


def _short_message(conn: Connection, job_id: str, listed: Listing, missing: Missing, here: Path, failed: Optional[RemoteError]) -> str:
    """One line: how much arrived of what was listed, what did not (the first three), and rsync's reason."""
    from slurmkit.core.units import human_size

    total = sum(size for _, size in listed.values())
    lost = {path for path, _, _ in missing}
    arrived = sum(size for path, (_, size) in listed.items() if path not in lost)
    named = ", ".join(f"{path} ({human_size(there)} there, {'none' if got is None else human_size(got)} here)"
                      for path, there, got in missing[:3])
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    line = (f"the fetch of job {job_id} from {conn.remote.host} came up short: {len(listed) - len(missing)} of {len(listed)} "
            f"files ({human_size(arrived)} of {human_size(total)}) arrived in {here}")
    if missing:
        line += f"; missing: {named}{more}"
    return line + (f"; {failed.message}" if failed is not None else "; fetch again")


def _output_paths(spec_path: Optional[str]) -> List[str]:
    """The relative destinations the spec copies outputs back to (none when it is gone)."""
    if not spec_path or not Path(spec_path).exists():
        return []
    from slurmkit.spec.spec import load_spec

    try:
        spec = load_spec(Path(spec_path))
    except SlurmkitError:
        return []
    stage = spec.stage
    if stage is None:
        return []
    found = [out.to for out in stage.outputs] + ([stage.checkpoint.to] if stage.checkpoint else [])
    relative = [posixpath.normpath(path.strip("/")) for path in found if path and not path.startswith(("/", "$", "~"))]
    return [path for path in relative if path != "." and ".." not in PurePosixPath(path).parts]   # outside the job's folder: not fetched


__all__ = ["Fetched", "RemoteHandle", "check_arrivals", "check_plain_name", "check_size",
           "far_files", "fetch", "fetch_rules", "folder_size", "not_arrived",
           "remote_job_dir", "submit", "sync_folder"]


def _refuse_split_sweep(plan, largest) -> None:
    """A sweep above the site's largest array is split into linked arrays (arraysplit.py) only
    by a submit on the cluster: here it would be one array that sbatch refuses. Said in one
    line, before the cluster is asked anything, with the two ways that work."""
    from slurmkit.resolve.arraysplit import part_sizes

    if plan.array is not None and not plan.array.ids and len(part_sizes(plan.array.size, largest)) > 1:
        raise SlurmkitError(f"{plan.array.size} tasks are more than one array holds on {plan.profile} ({largest}), and --remote "
                            f"does not split a sweep into linked arrays yet: run `slurmkit submit` on the cluster itself, "
                            f"which splits it, or cut the grid into specs of at most {largest} points")
