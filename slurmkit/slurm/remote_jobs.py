"""A job on a cluster from here: sync its folder, submit the locally rendered script with a
token, follow it, pull its logs and outputs back (the connection is remote.py's).

On the cluster a job lives in ``<root>/<folder name>-<hash of its local path>/``: the spec's
folder as synced (the spec, its small inputs, its requirements), with ``logs/`` beside it as
locally. sbatch runs there, so relative paths in the spec mean the same on both sides.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from slurmkit.core.errors import SlurmkitError
from slurmkit.core.records import Record
from slurmkit.slurm.remote import SYNC_EXCLUDES, Connection, ConnectionDropped, RemoteError, TooBig, remote_tokens
from slurmkit.slurm.slurmcli import SchedulerError, scheduler_reason


class RemoteHandle(Record):
    """What a remote submission gives back: the id, where its logs are on the cluster."""

    job_id: str
    folder: str
    size: Optional[int] = None


def remote_job_dir(conn: Connection, local_dir: Path) -> str:
    """The job's folder on the cluster: one per local folder, the same on every submit."""
    digest = hashlib.sha256(str(local_dir.resolve()).encode()).hexdigest()[:8]
    return f"{conn.root}/{local_dir.resolve().name}-{digest}"


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


def _rsync(conn: Connection, argv: List[str], doing: str) -> None:
    import subprocess

    try:
        result = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=3600)
    except FileNotFoundError:
        raise RemoteError("rsync is not installed here: install it (apt install rsync, brew install rsync)") from None
    if result.returncode == 0:
        return
    if any(marker in result.stderr for marker in ("Disk quota exceeded", "No space left")):
        raise conn.quota_error(result.stderr)
    if result.returncode == 255 or "connection unexpectedly closed" in result.stderr:
        raise conn.transport_error(result.stderr)
    raise RemoteError(f"rsync could not {doing} {conn.remote.host}: {scheduler_reason(result.stderr)}")


# ---------------------------------------------------------------------------------- submit

def submit(job, conn: Connection, after: Sequence[str] = (), after_type: str = "ok", warn=None) -> RemoteHandle:
    """Render for the cluster's profile here, sync the folder, submit there with a token; the
    registry gets the intent before sbatch and the id after, with the ssh target as ``remote``.
    A submit that made no job closes its intent and removes what it put on the cluster."""
    from slurmkit.render.render import render
    from slurmkit.slurm.registry import intent
    from slurmkit.slurm.submit import record_intent, record_job, sbatch_command

    plan = job._plan(conn.remote.name, warn)
    if plan.chain:
        raise SlurmkitError("a chain is not submitted with --remote yet: submit it on the cluster (`slurmkit submit` there)")
    script_text = render(plan)
    conn.ensure_open()
    local_dir = job.base_dir()
    job_dir = remote_job_dir(conn, local_dir)
    logs = f"{job_dir}/logs"
    made = job_dir if sync_folder(conn, local_dir, job_dir) else None
    token = uuid.uuid4().hex
    script = f"{logs}/.{job.spec.name}.{token[:8]}.sbatch"
    size = plan.array.size if plan.array else None
    planned = intent(job.spec.name, logs, plan.profile, token, array_size=size, spec=job._spec_path(),
                     after=",".join(after) or None, remote=conn.remote.target)
    try:
        _write_script(conn, script, script_text)
        record_intent(planned)
    except SlurmkitError as error:
        _undo(conn, error, made, script)
        raise
    argv = sbatch_command(PurePosixPath(script), PurePosixPath(logs), size is not None, tuple(after), after_type, token=token)
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

def fetch(conn: Connection, record, job_id: str, to: Optional[Path] = None) -> Tuple[Path, List[str]]:
    """Pull a job's logs, exit file and script (into ``<spec folder>/logs``) and the outputs its
    spec copies back (``stage.outputs``, ``stage.checkpoint``: into the spec's folder) from the
    cluster; returns the local folder and the output paths asked for."""
    local_dir = Path(to) if to else (Path(record.spec).parent if record.spec else Path.cwd())
    job_dir = str(PurePosixPath(record.folder).parent)
    outputs = _output_paths(record.spec)
    base = job_id.split("_")[0]
    rules = ["--include=logs/", f"--include=logs/{base}_*", f"--include=logs/{base}.exit"]
    for path in outputs:
        parts = PurePosixPath(path).parts
        rules += [f"--include={'/'.join(parts[:i])}/" for i in range(1, len(parts))]
        rules += [f"--include={path}", f"--include={path}/***"]
    rules.append("--exclude=*")
    local_dir.mkdir(parents=True, exist_ok=True)
    argv = ["rsync", "-rlptz", *rules, "-e", conn.rsync_shell(), f"{conn.remote.target}:{job_dir}/", f"{local_dir}/"]
    conn.ensure_open()
    _rsync(conn, argv, "fetch from")
    return local_dir, outputs


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
    return [path.strip("/") for path in found if path and not path.startswith(("/", "$", "~"))]


__all__ = ["RemoteHandle", "check_size", "fetch", "folder_size", "remote_job_dir", "submit", "sync_folder"]
