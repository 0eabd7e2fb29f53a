"""The user's folders follow the XDG Base Directory rule: an absolute XDG_* value is used, a
relative one is ignored (it would put the registry under whatever folder slurmkit runs in)."""

from pathlib import Path

import pytest

from slurmkit.core.folders import cache_folder, config_folder, state_folder
from slurmkit.sites.profiles import search_path
from slurmkit.slurm.registry import registry_path
from slurmkit.slurm.remote import config_path


@pytest.mark.parametrize("folder, variable, default", [
    (config_folder, "XDG_CONFIG_HOME", ".config"),
    (state_folder, "XDG_STATE_HOME", ".local/state"),
    (cache_folder, "XDG_CACHE_HOME", ".cache"),
])
def test_an_absolute_xdg_folder_is_used_and_a_relative_or_empty_one_ignored(folder, variable, default):
    assert folder({"HOME": "/home/u", variable: "/xdg"}) == Path("/xdg/slurmkit")
    assert folder({"HOME": "/home/u", variable: "relative/dir"}) == Path("/home/u", default, "slurmkit")
    assert folder({"HOME": "/home/u", variable: ""}) == Path("/home/u", default, "slurmkit")
    assert folder({"HOME": "/home/u"}) == Path("/home/u", default, "slurmkit")


def test_the_registry_ignores_a_relative_xdg_state_home():
    assert registry_path({"HOME": "/home/u", "XDG_STATE_HOME": "state"}) == Path("/home/u/.local/state/slurmkit/jobs.jsonl")
    assert registry_path({"HOME": "/home/u", "XDG_STATE_HOME": "/s"}) == Path("/s/slurmkit/jobs.jsonl")
    assert registry_path({"HOME": "/home/u", "SLURMKIT_REGISTRY": "/r/jobs.jsonl"}) == Path("/r/jobs.jsonl")


def test_remote_settings_and_profiles_read_the_same_config_folder(tmp_path):
    env = {"HOME": "/home/u", "XDG_CONFIG_HOME": "conf"}      # relative: ignored by both
    assert config_path(env) == Path("/home/u/.config/slurmkit/remote.yaml")
    assert Path("/home/u/.config/slurmkit/site_profiles") in search_path(tmp_path, env)
