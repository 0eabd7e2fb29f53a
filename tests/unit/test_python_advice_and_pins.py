"""The advice to load a newer python agrees with what the job itself pins: a module it loads that
is built for older pythons only (arrow/14.0.1: 3.10 and 3.11), and the exact versions its
virtualenv installs (numpy==1.23.5), which may have no wheel for the newer python. Where nothing
pins, the advice is the plain one."""

import copy

from slurmkit.port.retarget import choose_target, port_spec
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

PYTHON = "https://docs.alliancecan.ca/wiki/Python/en"
VENV = "$SLURM_TMPDIR/env"


def _spec(modules, packages=(), setup=(), path=VENV, profile="fir"):
    return {"name": "demo", "profile": profile, "account": "def-x", "kind": "threaded", "resources": {"time": "3h"},
            "launch": {"command": "python analyse.py"},
            "environment": {"modules": list(modules), "venv": {"path": path, "packages": list(packages)}, "setup": list(setup)}}


def _python_warnings(data):
    found = resolve(spec_from_mapping(data, source="job.yaml"), load_profile(data["profile"])).findings
    return [f.message for f in found if f.field == "environment.modules" and f.message.startswith("python/")]


def test_a_module_built_for_older_pythons_and_a_pin_turn_the_advice_into_keep_or_move_together():
    (advice,) = _python_warnings(_spec(["python/3.10", "arrow/14.0.1"], ["numpy==1.23.5", "pandas"]))
    assert "load python/3.12 or newer" not in advice
    assert advice.startswith("python/3.10 is older than the pythons fir still builds wheels for (python/3.12 is the oldest), "
                             "but arrow/14.0.1 is built for python 3.10 and 3.11 only, and numpy==1.23.5 may have no wheel "
                             "for python 3.12: keep python/3.10")
    assert "or load python/3.12 with arrow/17.0.0 (the nearest built for it)" in advice
    assert "avail_wheels numpy==1.23.5 --python 3.12" in advice and "pandas" not in advice
    assert advice.endswith(f"(source: {PYTHON})")


def test_a_module_built_for_older_pythons_alone_is_named_without_pins():
    (advice,) = _python_warnings(_spec(["python/3.10", "arrow/14.0.1"], ["numpy"]))
    assert "but arrow/14.0.1 is built for python 3.10 and 3.11 only: keep python/3.10" in advice
    assert "avail_wheels" not in advice and "load python/3.12 or newer" not in advice


def test_pins_alone_keep_the_advice_to_move_and_name_the_pins_to_check():
    (advice,) = _python_warnings(_spec(["python/3.10"], setup=["pip install --no-index scipy==1.9.3 'tqdm<4.60'"]))
    assert advice == ("python/3.10 is older than the pythons fir still builds wheels for (python/3.12 is the oldest); load "
                      "python/3.12 or newer, and check that the pinned scipy==1.9.3 and tqdm<4.60 have a wheel for it "
                      f"(avail_wheels scipy==1.9.3 'tqdm<4.60' --python 3.12) (source: {PYTHON})")


def test_nothing_pinned_keeps_the_plain_advice():
    """A guard: bare names and lower bounds get the newest wheel there is, so the advice is as it was."""
    (advice,) = _python_warnings(_spec(["python/3.10", "arrow/17.0.0"], ["numpy", "pandas>=1.5"]))
    assert advice == ("python/3.10 is older than the pythons fir still builds wheels for (python/3.12 is the oldest); "
                      f"load python/3.12 or newer (source: {PYTHON})")


def test_a_reused_venvs_rebuild_to_do_keeps_the_python_a_loaded_module_is_built_for():
    data = _spec(["StdEnv/2023", "python/3.10", "arrow/14.0.1"], path="$HOME/envs/arrowenv", profile="narval")
    data["environment"]["venv"] = {"path": "$HOME/envs/arrowenv"}
    source = load_profile("narval")
    ported = port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), source,
                       choose_target(source, "fir", load_profile))
    (todo,) = [t for t in ported.todos if t.startswith("environment.venv.path")]
    assert "load python/3.12.4 in environment.modules too" not in todo
    assert ("under StdEnv/2023 and python/3.10 (fir builds no new wheels for it, but arrow/14.0.1 is built for python 3.10 "
            "and 3.11 only: keep it, or load python/3.12.4 with arrow/17.0.0 in environment.modules)") in todo
