"""Jobs on a cluster from a laptop, over one OpenSSH master connection.

Alliance login nodes ask for a second factor on every new SSH connection unless the client
shares one (https://docs.alliancecan.ca/wiki/Multifactor_authentication/en, "ControlMaster"),
so every command here goes through the system ``ssh`` with ``ControlMaster=auto``, a
``ControlPath`` in a private folder and ``ControlPersist``: the first command opens the master
(the user's ``~/.ssh/config``, agent, ProxyJump and MFA prompt work as they do for ``ssh``), the
others ride on it, and ``rsync -e 'ssh ...'`` uses the same socket.

The far side needs only SLURM's own commands (sbatch, squeue, sacct, scancel), a POSIX shell
and rsync: slurmkit renders the script here, for the cluster's profile, and runs plain SLURM
commands there. Nothing of slurmkit is installed on the cluster.

Where the user's settings come from: ``$XDG_CONFIG_HOME/slurmkit/remote.yaml`` (``user``,
``root``, ``max_sync_mb``, ``ssh_config``, and per cluster ``clusters: {fir: {host, user, root}}``)
over the profile's ``login_hosts``.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from slurmkit.core.errors import SlurmkitError
from slurmkit.core.records import Record
from slurmkit.slurm.slurmcli import SchedulerError, is_transient, scheduler_reason

if TYPE_CHECKING:
    from slurmkit.core.yamlfile import Source
    from slurmkit.sites.profiles import SiteProfile

#: how long an idle master connection stays open after the last command (seconds).
CONTROL_PERSIST_S = 600
#: the oldest SLURM whose sbatch/squeue/sacct options slurmkit uses (--parsable, --comment,
#: squeue -t all with %k, sacct -X -P): all there since 17.11; the test cluster runs 22.05.
MIN_SLURM = (17, 11)
#: what is synced to the cluster with a job, at most (MiB); bigger data is staged there by hand.
DEFAULT_MAX_SYNC_MB = 100
#: never synced: logs come back with `slurmkit fetch`, environments are built on the cluster.
SYNC_EXCLUDES = ("logs/", ".git/", ".venv/", "venv/", "__pycache__/", "*.pyc", ".slurmkit-remote/")
SSH_TIMEOUT_S = 60.0
#: a command that copies files back (GPU samples: up to 32 MiB each) may take longer than a query
COPY_TIMEOUT_S = 300.0
#: the longest socket folder: a unix socket name holds 108 bytes, and ssh adds "/" + 40 hex
#: (%C) + a 17-byte temporary suffix while it binds.
SOCKET_FOLDER_MAX = 108 - 1 - 40 - 17 - 1
#: where the socket folder goes when there is no runtime folder: shared by every user of the host.
SHARED_TMP = "/tmp"

_UNREACHABLE = ("Could not resolve hostname", "Connection refused", "Connection timed out", "No route to host",
                "Network is unreachable", "Operation timed out", "Name or service not known",
                "Temporary failure in name resolution", "connect to host")
_AUTH = ("Permission denied", "Too many authentication failures", "Authentication failed",
         "no more authentication methods")
_DROPPED = ("Connection closed", "Connection reset", "Broken pipe", "closed by remote host", "mux_client",
            "Control socket", "master", "Timeout, server", "not responding", "lost connection")
_QUOTA = ("Disk quota exceeded", "EDQUOT", "No space left on device")


class RemoteError(SlurmkitError):
    """The cluster could not be reached or asked (exit 1)."""

    exit_code = 1


class HostUnreachable(RemoteError):
    pass


class AuthRefused(RemoteError):
    pass


class ConnectionDropped(RemoteError):
    """The master connection went away under a command: transient, the command may have run."""


class NoSlurm(RemoteError):
    pass


class QuotaExceeded(RemoteError):
    pass


class TooBig(SlurmkitError):
    """The job folder is over the sync limit (bad input: exit 2)."""

    exit_code = 2


class RemoteConfigError(SlurmkitError):
    exit_code = 2


# ------------------------------------------------------------------------------- settings

class Remote(Record):
    """Where one cluster is and how slurmkit reaches it."""

    name: str                    # the profile (cluster) name
    host: str                    # what ssh is given: a host name or a ~/.ssh/config alias
    user: Optional[str]
    root: str                    # where job folders live on the cluster, e.g. $SCRATCH/slurmkit
    max_sync_mb: int = DEFAULT_MAX_SYNC_MB
    ssh_config: Optional[str] = None
    fallback_root: Optional[str] = None   # the profile's scratch/slurmkit, where $SCRATCH is unset
    read_only: Tuple[str, ...] = ()       # paths read-only inside jobs (the profile's rule): never the root

    @property
    def target(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host


def config_path(env: Optional[Mapping[str, str]] = None) -> Path:
    """``remote.yaml`` in the user's configuration folder (core/folders.py)."""
    from slurmkit.core.folders import config_folder

    return config_folder(env) / "remote.yaml"


_SETTING_KEYS = ("host", "user", "root", "max_sync_mb", "ssh_config")
_TOP_KEYS = _SETTING_KEYS + ("clusters",)


def read_config(path: Optional[Path] = None) -> Dict[str, Any]:
    """remote.yaml as a mapping ({} when there is none); unknown keys are errors with a did-you-mean."""
    from slurmkit.core.errors import closest
    from slurmkit.core.yamlfile import read_yaml_file

    path = path or config_path()
    if not path.exists():
        return {}
    _, (data, lines, _) = read_yaml_file(path, RemoteConfigErrorFromInput)
    data = data or {}
    if not isinstance(data, dict):
        raise RemoteConfigError(f"{path}: must be a mapping of {', '.join(_TOP_KEYS)}")
    for scope, allowed, keys in [((), _TOP_KEYS, data)] + [
            (("clusters", name), _SETTING_KEYS, value if isinstance(value, dict) else {})
            for name, value in (data.get("clusters") or {}).items()]:
        for key in keys:
            if key not in allowed:
                hint = closest(str(key), allowed)
                where = ".".join(map(str, scope + (key,)))
                raise RemoteConfigError(f"{path}: {where}: unknown key; allowed: {', '.join(allowed)}"
                                        + (f" (did you mean {hint!r}?)" if hint else ""))
    return data


def RemoteConfigErrorFromInput(source: Source, line: Optional[int], keypath: str, message: str) -> RemoteConfigError:  # noqa: N802
    """remote.yaml's problems as RemoteConfigError: the error factory that yamlfile raises through."""
    where = f"{source}:{line}" if line else str(source)
    return RemoteConfigError(f"{where}: {message}")


def login_hosts(profile: SiteProfile) -> List[Tuple[str, Optional[str]]]:
    """The profile's login hosts as (host, role) pairs: role ``cpu``/``gpu`` where the site has
    login nodes of each kind (Trillium), else None."""
    hosts = []
    for item in profile.raw.get("login_hosts") or ():
        if isinstance(item, dict):
            hosts.append((str(item["host"]), item.get("role")))
        else:
            hosts.append((str(item), None))
    return hosts


DEFAULT_ROOT = "$SCRATCH/slurmkit"


def profile_scratch_root(profile: SiteProfile) -> Optional[str]:
    """``<the profile's scratch path>/slurmkit`` (Fir: ``$HOME/scratch``): the root where the
    cluster's login shell has no ``$SCRATCH``."""
    scratch = ((profile.raw.get("storage") or {}).get("scratch") or {}).get("path")
    return f"{scratch}/slurmkit" if scratch else None


def remote_for(profile: SiteProfile, gpu: bool = False, config: Optional[Dict[str, Any]] = None) -> Remote:
    """The Remote of ``profile`` from remote.yaml (its ``clusters.<name>`` over its top level)
    over the profile's login hosts (the GPU login host for a GPU job where the site has one)."""
    top = read_config() if config is None else config
    own = (top.get("clusters") or {}).get(profile.name) or {}

    def setting(key: str, default: Any = None) -> Any:
        return own.get(key, top.get(key, default))

    host = own.get("host") or _login_host(profile, gpu)
    if not host:
        raise RemoteConfigError(f"profile {profile.name} names no login host: add `clusters: {{{profile.name}: "
                                f"{{host: HOST}}}}` to {config_path()}")
    max_mb = _max_sync_mb(setting("max_sync_mb", DEFAULT_MAX_SYNC_MB))
    root = str(setting("root") or DEFAULT_ROOT)
    fallback = None if setting("root") else profile_scratch_root(profile)
    for path in (root, fallback):
        if path:
            check_root(path)
    return Remote(profile.name, str(host), setting("user"), root, max_mb, setting("ssh_config"), fallback,
                  _read_only_paths(profile))


def _login_host(profile: SiteProfile, gpu: bool) -> Optional[str]:
    """The profile's first login host of the job's kind (GPU or CPU), else its first; None if it has none."""
    hosts = login_hosts(profile)
    wanted = [host for host, role in hosts if role == ("gpu" if gpu else "cpu")]
    return next(iter(wanted or [host for host, _ in hosts]), None)


def _max_sync_mb(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise RemoteConfigError(f"{config_path()}: max_sync_mb: must be a whole number of MiB") from None


def _read_only_paths(profile: SiteProfile) -> Tuple[str, ...]:
    """The profile's read-only-in-job paths that a root could be checked against: plain paths
    and $VARIABLES, never a command substitution."""
    rule = profile.rules.read_only_in_job
    return tuple(p for p in (rule.paths if rule else ()) if _ROOT_OK.fullmatch(p) and "$(" not in p)


_ROOT_OK = re.compile(r"[A-Za-z0-9_./~${}+-]+")
_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def check_root(root: str) -> None:
    """A root is a path with ``$VARIABLES`` and nothing else a shell would run."""
    if not _ROOT_OK.fullmatch(root) or "$(" in root:
        raise RemoteConfigError(f"{config_path()}: root: {root!r} may hold letters, digits, ./_-+~ and $VARIABLES only")


# ---------------------------------------------------------------------------- connection

def control_folder(env: Optional[Mapping[str, str]] = None) -> Path:
    """Where the master sockets live: ``$XDG_RUNTIME_DIR/slurmkit`` (a per-user 0700 tmpfs), else
    ``<SHARED_TMP>/slurmkit-<uid>``; either one is _private_folder's (made here, or refused)."""
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR")
    folder = Path(runtime) / "slurmkit" if runtime and os.path.isdir(runtime) else None
    if folder is None or len(str(folder)) > SOCKET_FOLDER_MAX:   # ssh's socket name must fit sun_path
        folder = Path(SHARED_TMP) / f"slurmkit-{os.getuid()}"
    return _private_folder(folder)


def _private_folder(folder: Path) -> Path:
    """``folder``, made 0700 with mkdir (which never follows a link), else what is there checked
    with lstat: in a folder every user may write to (/tmp), a link, a file or a folder another
    user put there first would get our sockets, or our chmod. Those are refused; a folder of
    ours open to others is made private through a descriptor that cannot be a link."""
    def refuse(what: str) -> RemoteError:
        return RemoteError(f"{folder} (the folder of ssh's control sockets) {what}: slurmkit keeps them only in a "
                           "folder it made itself; remove it, or set XDG_RUNTIME_DIR to a private folder of yours")

    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as error:
        raise refuse(f"cannot be made ({error.strerror})") from None
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        raise refuse(f"is a symbolic link (to {_link_target(folder)})")
    if not stat.S_ISDIR(info.st_mode):
        raise refuse("is not a folder")
    if info.st_uid != os.getuid():
        raise refuse(f"belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o077:
        _make_private(folder, info)
    return folder


def _link_target(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:
        return "somewhere: it changed since"


def _make_private(folder: Path, seen: os.stat_result) -> None:
    """chmod 0700 the folder lstat saw, through a descriptor of it (O_NOFOLLOW: a link swapped
    in since is refused, never followed)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY)
    except OSError as error:
        raise RemoteError(f"{folder} (the folder of ssh's control sockets) changed while it was checked "
                          f"({error.strerror}): try again") from None
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino, now.st_uid) != (seen.st_dev, seen.st_ino, seen.st_uid):
            raise RemoteError(f"{folder} (the folder of ssh's control sockets) changed while it was checked: try again")
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


Runner = Callable[..., subprocess.CompletedProcess]


class Connection:
    """Commands on one cluster over one master connection; errors as one line each.

    ``say`` gets the notes a user should see (a dropped connection being re-opened).
    """

    def __init__(self, remote: Remote, say: Callable[[str], None] = lambda line: None, run: Runner = subprocess.run,
                 ssh: str = "ssh") -> None:
        self.remote, self.say, self._run, self.ssh = remote, say, run, ssh
        self.control_path = str(control_folder() / "%C")
        self.opened = False
        self.reopened = 0
        self.master_pid: Optional[str] = None
        self.home: Optional[str] = None
        self.root: Optional[str] = None

    # ------------------------------------------------------------------ ssh command lines

    def ssh_options(self) -> List[str]:
        options = ["-o", "ControlMaster=auto", "-o", f"ControlPath={self.control_path}",
                   "-o", f"ControlPersist={CONTROL_PERSIST_S}", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4"]
        if self.remote.ssh_config:
            options = ["-F", str(Path(self.remote.ssh_config).expanduser())] + options
        return options

    def ssh_argv(self, command: str) -> List[str]:
        return [self.ssh, *self.ssh_options(), self.remote.target, "--", command]

    def rsync_shell(self) -> str:
        """The ``rsync -e`` value: this ssh, over the same master socket."""
        return shlex.join([self.ssh, *self.ssh_options()])

    # ------------------------------------------------------------------------- running

    def _ssh(self, command: str, input: Optional[str] = None, timeout: float = SSH_TIMEOUT_S) -> subprocess.CompletedProcess:
        try:
            # bytes that are not UTF-8 (a log, a sample file, a job name) read as U+FFFD, never as a traceback
            return self._run(self.ssh_argv(command), input=input, capture_output=True, text=True, errors="replace", timeout=timeout,
                             stdin=None if input is not None else subprocess.DEVNULL)
        except FileNotFoundError:
            raise RemoteError(f"`{self.ssh}` is not installed here: install OpenSSH's client") from None
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(command, 255, "", f"Connection timed out: no answer within {timeout:g} s")

    def alive(self) -> bool:
        """Whether the master connection is up (asks the local socket only)."""
        return self._master_check()[0]

    def _master_check(self) -> Tuple[bool, Optional[str]]:
        """(up, its pid as ssh says it, or None where it does not)."""
        argv = [self.ssh, *self.ssh_options(), "-O", "check", self.remote.target]
        try:
            result = self._run(argv, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return False, None
        pid = re.search(r"pid=(\d+)", result.stderr or "")
        return result.returncode == 0, pid.group(1) if pid else None

    def open(self) -> None:
        """Open the master (the second factor is asked here, once) and learn the far side:
        its SLURM version and the root folder, with its $VARIABLES expanded there."""
        result = self._ssh(self._probe_command(), timeout=300.0)
        if result.returncode == 255:
            raise self.transport_error(result.stderr)
        self._read_probe(result.stdout)
        self.opened = True
        self.master_pid = self._master_check()[1]

    def _note_a_silent_reopen(self) -> None:
        """Say so when the master went away since the last command, before the next one runs.

        With ControlMaster=auto, a master that exited cleanly after its TCP connection died
        leaves no socket, and the next ssh opens a new master itself, without an error to
        see; only the master's pid tells. Asked before the command, so a second factor that
        the new connection asks for comes after the note, not unexplained.
        """
        up, pid = self._master_check()
        if not up:
            self._say_dropped()
            self.open()
        elif pid is not None and self.master_pid is not None and pid != self.master_pid:
            self._say_dropped()
            self.master_pid = pid

    def _say_dropped(self) -> None:
        self.reopened += 1
        self.say(f"the connection to {self.remote.host} dropped; re-opening it")

    def ensure_open(self) -> None:
        """Re-open a master that went away since it was opened, saying so (once per drop)."""
        if not self.opened:
            self.open()
        elif not self.alive():
            self._say_dropped()
            self.open()

    def close(self) -> None:
        argv = [self.ssh, *self.ssh_options(), "-O", "exit", self.remote.target]
        self._run(argv, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)

    def run(self, argv: Sequence[str], input: Optional[str] = None, cwd: Optional[str] = None,
            env: Optional[Mapping[str, str]] = None, idempotent: bool = True,
            timeout: float = SSH_TIMEOUT_S) -> subprocess.CompletedProcess:
        """``argv`` on the cluster (in ``cwd``, with ``env`` set). A connection that drops under
        an idempotent command is re-opened once and the command run again; under another
        command (sbatch) ConnectionDropped is raised: it may have run."""
        command = _command_line(argv, cwd, env)
        if self.opened:
            self._note_a_silent_reopen()
        result = self._ssh(command, input, timeout)
        if not self._dropped(result):
            return self._checked(result)
        if not idempotent:
            raise ConnectionDropped(f"the connection to {self.remote.host} dropped while running {argv[0]}: "
                                    f"{_first_line(result.stderr)}")
        self._say_dropped()
        self.open()
        return self._checked(self._ssh(command, input, timeout))

    def _dropped(self, result: subprocess.CompletedProcess) -> bool:
        """ssh failed (255) on a master that was up and is now gone, or said so itself."""
        if result.returncode != 255 or _any(result.stderr, _AUTH) or not self.opened:
            return False
        return _is_dropped(result.stderr) or not self.alive()

    def _checked(self, result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
        if result.returncode == 255 and not result.stdout:
            raise self.transport_error(result.stderr)
        if result.returncode != 0 and _any(result.stderr, _QUOTA):
            raise self.quota_error(result.stderr)
        return result

    # --------------------------------------------------------------------- what went wrong

    def transport_error(self, stderr: str) -> RemoteError:
        """One line for what ssh itself said (exit 255)."""
        host, reason = self.remote.host, _first_line(stderr)
        if _any(stderr, _AUTH):
            return AuthRefused(f"{host} refused authentication for {self.remote.target} ({reason}): check `user:` in "
                               f"{config_path()}, that your public key is registered (CCDB > SSH keys on the Alliance), "
                               f"and try `ssh {self.remote.target}` by hand")
        if "Host key verification failed" in stderr:
            return RemoteError(f"the host key of {host} is unknown or changed ({reason}): run `ssh {self.remote.target}` "
                               "by hand once and check the key it shows against the site's published fingerprints")
        if _any(stderr, _DROPPED):
            return ConnectionDropped(f"the connection to {host} dropped ({reason}): try again")
        return HostUnreachable(f"cannot reach {host} ({reason}): check the host name (`host:` in {config_path()} or "
                               f"the profile's login_hosts), your network or VPN, and try `ssh {self.remote.target}`")

    def quota_error(self, stderr: str) -> QuotaExceeded:
        """One line for a quota (EDQUOT) or a full filesystem (ENOSPC) on the far side."""
        what = "disk quota exceeded" if "quota" in stderr.lower() else "no space left"
        return QuotaExceeded(f"{what} on {self.remote.host} ({_first_line(stderr, _QUOTA)}): free space "
                             f"under {self.root or self.remote.root} (`diskusage_report` shows your quotas) or set "
                             f"`root:` in {config_path()} to a filesystem with room")

    # ------------------------------------------------------------------------- the probe

    def _probe_command(self) -> str:
        remote = self.remote
        names = sorted(set(_VAR.findall(remote.root)))
        lines = [f"printf 'root=%s\\n' \"{remote.root}\"", "printf 'home=%s\\n' \"$HOME\""]
        lines += [f"printf 'var:{name}=%s\\n' \"${{{name}:-}}\"" for name in names]
        if remote.fallback_root:
            lines.append(f"printf 'fallback=%s\\n' \"{remote.fallback_root}\"")
        lines += [f"printf 'ro=%s\\n' \"{path}\"" for path in remote.read_only]
        lines += ["command -v rsync >/dev/null 2>&1 || echo norsync",
                  "if command -v sbatch >/dev/null 2>&1; then printf 'sbatch=%s\\n' \"$(sbatch --version 2>&1)\"; "
                  "else echo nosbatch; fi"]
        return "; ".join(lines)

    def _read_probe(self, stdout: str) -> None:
        values = dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)
        words = set(stdout.split())
        host = self.remote.host
        unset = [key[4:] for key, value in values.items() if key.startswith("var:") and not value]
        if "nosbatch" in words:
            raise NoSlurm(f"no SLURM on {host}: `sbatch` is not on the PATH of a login shell there; check that "
                          f"{host} is a login node of {self.remote.name} (`host:` in {config_path()})")
        version = _slurm_version(values.get("sbatch", ""))
        if version is None or version < MIN_SLURM:
            raise NoSlurm(f"{host} runs no slurmkit-compatible SLURM (`sbatch --version` said "
                          f"{values.get('sbatch', '').strip()[:80]!r}; slurmkit needs {MIN_SLURM[0]}.{MIN_SLURM[1]} or newer)")
        if "norsync" in words:
            raise NoSlurm(f"rsync is not installed on {host}: slurmkit copies job folders with it")
        root = values.get("root", "").rstrip("/")
        if unset and values.get("fallback", "").startswith("/"):
            root = values["fallback"].rstrip("/")
        elif unset:
            raise RemoteConfigError(f"${unset[0]} is not set on {host}, so the job root {self.remote.root} means nothing "
                                    f"there: set `root:` in {config_path()} (e.g. root: /scratch/$USER/slurmkit)")
        read_only = [line[3:].rstrip("/") for line in stdout.splitlines() if line.startswith("ro=") and len(line) > 4]
        for path in read_only:
            if root == path or root.startswith(path + "/"):
                raise RemoteConfigError(f"the job root {root} on {host} is under {path}, read-only inside jobs there: "
                                        f"set `root:` in {config_path()} to scratch (e.g. root: $SCRATCH/slurmkit)")
        if not root.startswith("/"):
            raise RemoteConfigError(f"the job root {self.remote.root} is {root!r} on {host}, not an absolute path: set `root:` "
                                    f"in {config_path()} to one ($SCRATCH/slurmkit, $HOME/scratch/slurmkit; not ~)")
        self.home, self.root = values.get("home"), root


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _command_line(argv: Sequence[str], cwd: Optional[str], env: Optional[Mapping[str, str]]) -> str:
    """One POSIX shell line: every word quoted, so that nothing the user wrote is run by the far
    shell. Variables go through ``env K=V``: a quoted ``'K=V'`` word (a value with a space or a
    parenthesis, as a folder's name may have) is no assignment to the shell but a command name."""
    for name in env or {}:
        if not _NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a variable name")
    prefix = ["env", *(f"{k}={v}" for k, v in env.items())] if env else []
    words = shlex.join([*prefix, *argv])
    return f"cd {shlex.quote(cwd)} && {words}" if cwd else words


def _any(text: str, markers) -> bool:
    return any(marker in text for marker in markers)


def _is_dropped(stderr: str) -> bool:
    return _any(stderr, _DROPPED) and not _any(stderr, _AUTH)


def _first_line(text: str, markers=()) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith(("debug", "Warning: Permanently"))]
    chosen = [line for line in lines if _any(line, markers)] if markers else []
    return (chosen or lines or ["no reason given"])[0][:200]


def _slurm_version(text: str) -> Optional[Tuple[int, int]]:
    match = re.search(r"slurm[-\w]*\s+(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


# ------------------------------------------------------------------------- SLURM over ssh

def slurm_runner(conn: Connection, timeout: float = 30.0):
    """A monitor.Runner: a SLURM command on the cluster; its failure as SLURM's SchedulerError."""
    def run(argv: Sequence[str]) -> str:
        result = conn.run(argv, timeout=timeout)
        if result.returncode != 0:
            raise SchedulerError(f"{argv[0]} on {conn.remote.host} failed: {scheduler_reason(result.stderr)}",
                                 transient=is_transient(result.stderr))
        return result.stdout
    return run


def read_remote_files(conn: Connection, paths: Sequence[str]) -> Dict[str, str]:
    """The text of each existing file of ``paths``, in one command."""
    if not paths:
        return {}
    marker = "\x1eslurmkit-file:"
    script = 'for f in "$@"; do if [ -f "$f" ]; then printf "\\036slurmkit-file:%s\\n" "$f"; cat "$f"; fi; done'
    result = conn.run(["sh", "-c", script, "sh", *paths])
    found: Dict[str, str] = {}
    for chunk in result.stdout.split(marker)[1:]:
        name, _, body = chunk.partition("\n")
        found[name] = body
    return found


def copy_gpu_samples(conn: Connection, folder: str, job_ids: Sequence[str], into: Path, cap: int) -> None:
    """Each job's GPU sample and state files (``<job>.gpu.<host>.csv|state``, gpuuse.py) from the
    cluster's ``folder`` into the local folder ``into``, in one command, each cut at ``cap`` + 1
    bytes (so that a file longer than the reader's cap still reads as cut short)."""
    marker = "\x1eslurmkit-file:"
    script = ('cd "$1" 2>/dev/null || exit 0; cap=$2; shift 2; for key in "$@"; do for f in "$key".gpu.*.csv "$key".gpu.*.state; do '
              'if [ -f "$f" ]; then printf "\\036slurmkit-file:%s\\n" "$f"; head -c "$cap" "$f"; fi; done; done')
    from slurmkit.core.progress import meter

    with meter(f"copying GPU samples from {conn.remote.host}") as bar:   # on a terminal: a bar that moves while it waits
        result = conn.run(["sh", "-c", script, "sh", folder, str(cap + 1), *job_ids], timeout=COPY_TIMEOUT_S)
        bar.start(len(result.stdout))
        bar.advance(len(result.stdout))
    for chunk in result.stdout.split(marker)[1:]:
        name, _, body = chunk.partition("\n")
        if "/" not in name and name.startswith(tuple(f"{job}.gpu." for job in job_ids)):
            (into / name).write_text(body, encoding="utf-8")


def remote_exit_files(conn: Connection, folders: Mapping[str, str], job_ids: Sequence[str],
                      suffixes: Sequence[str] = (".exit",)) -> Dict[str, str]:
    """job id + suffix (``12.exit``, ``12.started``) -> the text of that file of the job on the
    cluster, for the files that exist, in one command."""
    paths = {}
    for job in job_ids:
        folder = folders.get(job) or folders.get(job.split("_")[0])
        if folder:
            for suffix in suffixes:
                paths[str(PurePosixPath(folder) / f"{job}{suffix}")] = f"{job}{suffix}"
    return {paths[path]: text for path, text in read_remote_files(conn, list(paths)).items()}


def make_poller(conn: Connection, folders: Mapping[str, str], sizes: Mapping[str, int], waiting: bool = False):
    """A monitor.Poller whose queries and job files (exit and started) are on the cluster."""
    from slurmkit.slurm.jobfiles import parse_exit_file, parse_started_file
    from slurmkit.slurm.monitor import Poller, wanted_ids

    class RemotePoller(Poller):
        def poll(self, job_ids):
            conn.ensure_open()
            wanted = wanted_ids(self._open_ids([str(j) for j in job_ids]), self.sizes, self.final)
            self.job_texts = remote_exit_files(conn, self.folders, wanted, (".exit", ".started"))
            return super().poll(job_ids)

        def _record(self, job, records):
            if job not in records:
                text = getattr(self, "job_texts", {}).get(f"{job}.exit")
                records[job] = parse_exit_file(text) if text else None
            return records[job]

        def _started(self, job, started):
            if job not in started:
                text = getattr(self, "job_texts", {}).get(f"{job}.started")
                started[job] = parse_started_file(text) if text else None
            return started[job]

    return RemotePoller(dict(folders), dict(sizes), slurm_runner(conn), waiting=waiting)


def remote_tokens(conn: Connection, since: Optional[str] = None):
    """registry.query_tokens, asked on the cluster: token -> job id for slurmkit's jobs there."""
    from slurmkit.slurm.registry import Known, parse_token_lines, sacct_time

    run = slurm_runner(conn)
    found = parse_token_lines(run(["squeue", "--me", "-h", "-t", "all", "-o", "%i|%k"]))
    argv = ["sacct", "-X", "-n", "-P", "-o", "JobID,SubmitLine,Comment"] + (["-S", sacct_time(since)] if since else [])
    try:
        accounted = parse_token_lines(run(argv))
    except SchedulerError:
        return Known(found, complete=False)
    return Known({**accounted, **found}, complete=True)


def stderr_say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
