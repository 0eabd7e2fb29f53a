"""The compiled-template cache (render._bytecode_cache): private, used, and never trusted blindly.

What is cached there is Python code that render() runs, so the folder must be the user's own
and closed to others; an entry that does not match its template is compiled again."""

import stat

import pytest

from slurmkit.api.job import Job
from slurmkit.render import render as render_module
from slurmkit.render.runtime import runtime

SPEC = dict(name="cached", profile="nibi", account="def-x", kind="serial",
            resources={"time": "1h", "mem": "1G"}, launch="echo hi")


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "slurmkit" / "jinja-sandboxed-2"


def _entries(folder):
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_the_cache_folder_is_private_and_its_entries_are_used(cache_home):
    first = Job(**SPEC).render()
    assert stat.S_IMODE(cache_home.stat().st_mode) == 0o700
    entries = _entries(cache_home)
    assert entries and all(stat.S_IMODE(e.stat().st_mode) == 0o600 for e in entries)
    cache = render_module._bytecode_cache()
    assert cache is not None
    loaded = []
    original = type(cache).load_bytecode

    def spying(self, bucket):
        original(self, bucket)
        loaded.append(bucket.code is not None)

    type(cache).load_bytecode = spying
    try:
        env = render_module._environment(render_module.template_search_path())
        env.bytecode_cache = cache
        assert env.get_template("serial.sbatch.j2").render(plan=Job(**SPEC).resolve().plan, runtime=runtime()) == first
    finally:
        type(cache).load_bytecode = original
    assert loaded and all(loaded)


def test_a_damaged_entry_is_compiled_again(cache_home):
    first = Job(**SPEC).render()
    for entry in _entries(cache_home):
        data = entry.read_bytes()
        entry.write_bytes(data[: len(data) // 2] + b"\x00garbage")
    assert Job(**SPEC).render() == first


@pytest.mark.parametrize("mode", [0o770, 0o777, 0o757])
def test_a_folder_others_can_write_is_not_used(cache_home, mode):
    cache_home.mkdir(parents=True)
    cache_home.chmod(mode)
    assert render_module._bytecode_cache() is None
    Job(**SPEC).render()
    assert _entries(cache_home) == []


def test_an_edited_template_is_compiled_again(cache_home, tmp_path, monkeypatch):
    work = tmp_path / "work"
    (work / "templates").mkdir(parents=True)
    template = work / "templates" / "serial.sbatch.j2"
    monkeypatch.chdir(work)
    template.write_text("#!/bin/bash\necho {{ plan.name }} one\n")
    assert Job(**SPEC).render() == "#!/bin/bash\necho cached one\n"
    template.write_text("#!/bin/bash\necho {{ plan.name }} two\n")
    assert Job(**SPEC).render() == "#!/bin/bash\necho cached two\n"


def test_no_cache_where_the_folder_cannot_be_made(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert render_module._bytecode_cache() is None
    assert "echo hi" in Job(**SPEC).render()


def test_entries_compiled_by_another_jinja_release_are_not_run(cache_home, monkeypatch):
    """Two virtualenvs with different Jinja releases share the cache folder; code compiled by
    one calls names the other lacks, so each release reads only the entries it wrote."""
    import marshal
    import pickle

    import jinja2
    from jinja2.bccache import bc_magic

    first = Job(**SPEC).render()
    for entry in _entries(cache_home):   # valid entries whose code fails, as foreign code would
        header = entry.read_bytes()[: len(bc_magic)]
        checksum = pickle.loads(entry.read_bytes()[len(bc_magic):])
        entry.write_bytes(header + pickle.dumps(checksum, 2) + marshal.dumps(compile("raise AssertionError('foreign')", "x", "exec")))
    monkeypatch.setattr(jinja2, "__version__", "0.0-another-release")
    assert Job(**SPEC).render() == first
