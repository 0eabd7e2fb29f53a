"""The user's own folders, one rule for every file slurmkit keeps: configuration (profiles,
templates, remote.yaml), state (the registry) and cache (compiled templates).

They follow the XDG Base Directory specification, which says of ``XDG_CONFIG_HOME``,
``XDG_STATE_HOME`` and ``XDG_CACHE_HOME``: "All paths set in these environment variables must
be absolute. If an implementation encounters a relative path in any of these variables it
should consider the path invalid and ignore it." A relative value would otherwise put the
registry, or a config file, under whatever folder slurmkit happens to run in.
"""

import os
from pathlib import Path
from typing import Mapping, Optional


def _xdg(variable: str, under_home: str, env: Optional[Mapping[str, str]]) -> Path:
    env = os.environ if env is None else env
    value = env.get(variable, "")
    if value and os.path.isabs(value):
        return Path(value) / "slurmkit"
    return Path(env.get("HOME") or Path.home(), under_home, "slurmkit")


def config_folder(env: Optional[Mapping[str, str]] = None) -> Path:
    """``$XDG_CONFIG_HOME/slurmkit`` (default ``~/.config/slurmkit``)."""
    return _xdg("XDG_CONFIG_HOME", ".config", env)


def state_folder(env: Optional[Mapping[str, str]] = None) -> Path:
    """``$XDG_STATE_HOME/slurmkit`` (default ``~/.local/state/slurmkit``)."""
    return _xdg("XDG_STATE_HOME", os.path.join(".local", "state"), env)


def cache_folder(env: Optional[Mapping[str, str]] = None) -> Path:
    """``$XDG_CACHE_HOME/slurmkit`` (default ``~/.cache/slurmkit``)."""
    return _xdg("XDG_CACHE_HOME", ".cache", env)


def data_folder(env: Optional[Mapping[str, str]] = None) -> Path:
    """``$XDG_DATA_HOME/slurmkit`` (default ``~/.local/share/slurmkit``): the runtime library's
    versions, which job scripts read on the compute nodes."""
    return _xdg("XDG_DATA_HOME", os.path.join(".local", "share"), env)
