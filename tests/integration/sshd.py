"""An sshd of the tests' own, on a loopback port, in front of the local SLURM cluster: the far
side of the ``--remote`` tests.

Host and user keys are made here; the far side is this machine as root, with SLURM_CONF and
$SCRATCH set by sshd (``SetEnv``) as a login node sets them. It logs at VERBOSE, one
"Connection from" line per accepted TCP connection, which the tests count. Only the sshd
started here (and the per-connection children it forks) is ever stopped, by PID.
"""

import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import List

SSHD = "/usr/sbin/sshd"
HOST_ALIAS = "slurmkit-test"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)], check=True)


class Sshd:
    """``start()`` the daemon; ``connections()`` counts what it accepted; ``stop()`` ends it."""

    def __init__(self, folder: Path, slurm_conf: str) -> None:
        self.folder = folder
        self.port = free_port()
        self.bare_port = free_port()   # a second port whose sessions find no SLURM (PATH=/nonexistent)
        self.log = folder / "sshd.log"
        self.scratch = folder / "scratch"
        self.home = folder / "home"
        self.slurm_conf = slurm_conf
        self.process = None
        # a short runtime folder: a ControlPath must fit a unix socket name (108 bytes)
        self.runtime = Path(tempfile.mkdtemp(prefix="skr-", dir="/tmp"))

    def write_files(self) -> None:
        folder = self.folder
        self.scratch.mkdir(parents=True, exist_ok=True)
        # A home of its own, as a new account on a login node has: bash reads this machine's root
        # ~/.bashrc otherwise, whose `pyenv rehash` takes a lock that a test killing a session
        # mid-rehash leaves behind, and every later session then waits 60 s for it.
        self.home.mkdir(parents=True, exist_ok=True)
        for key in ("host_key", "user_key", "stranger_key"):
            keygen(folder / key)
        (folder / "authorized_keys").write_text((folder / "user_key.pub").read_text())
        host_pub = (folder / "host_key.pub").read_text().split()[:2]
        (folder / "known_hosts").write_text("".join(f"[127.0.0.1]:{port} {' '.join(host_pub)}\n"
                                                    for port in (self.port, self.bare_port)))
        (folder / "sshd_config").write_text(f"""\
Port {self.port}
Port {self.bare_port}
ListenAddress 127.0.0.1
HostKey {folder}/host_key
PidFile {folder}/sshd.pid
AuthorizedKeysFile {folder}/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
LogLevel VERBOSE
MaxSessions 100
SetEnv SLURM_CONF={self.slurm_conf} SCRATCH={self.scratch} HOME={self.home}
Subsystem sftp internal-sftp
Match LocalPort {self.bare_port}
  SetEnv PATH=/nonexistent
""")
        self.write_client_config("user_key")

    def write_client_config(self, key: str, name: str = "ssh_config", bare: bool = False) -> Path:
        """A ssh_config whose ``slurmkit-test`` host is this sshd, offering ``key`` only
        (``bare``: on the port whose login shell finds no SLURM)."""
        path = self.folder / name
        path.write_text(f"""\
Host {HOST_ALIAS}
  HostName 127.0.0.1
  Port {self.bare_port if bare else self.port}
  User root
  IdentityFile {self.folder}/{key}
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile {self.folder}/known_hosts
  StrictHostKeyChecking yes
  PasswordAuthentication no
  KbdInteractiveAuthentication no
  BatchMode yes
  LogLevel ERROR
""")
        path.chmod(0o600)
        return path

    def start(self) -> None:
        self.write_files()
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)   # sshd's privilege-separation folder
        self.process = subprocess.Popen([SSHD, "-D", "-f", str(self.folder / "sshd_config"), "-E", str(self.log)],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.process.stderr.read().decode()} "
                                   f"{self.log.read_text() if self.log.exists() else ''}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
                self.accepted_by_probe = 1
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("sshd did not listen within 15 s")

    def connections(self) -> int:
        """TCP connections sshd accepted, less the readiness probe of start()."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return sum("Connection from 127.0.0.1" in line for line in lines) - self.accepted_by_probe

    def session_pids(self) -> List[int]:
        """The per-connection processes of this sshd (its direct children)."""
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.process.pid)], capture_output=True, text=True).stdout
        return [int(word) for word in out.split()]

    def drop_connections(self) -> int:
        """Kill every connection this sshd serves (what a network drop does to the master)."""
        pids = self.session_pids()
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        return len(pids)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            for pid in self.session_pids():
                os.kill(pid, signal.SIGKILL)
            self.process.terminate()
            self.process.wait(timeout=10)
        subprocess.run(["rm", "-rf", str(self.runtime)], check=False)
