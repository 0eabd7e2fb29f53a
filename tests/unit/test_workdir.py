"""The folder a script is in at a line (workdir.py): a relative venv path is read from there."""

import pytest

from slurmkit.port import bashtree, workdir


def _folder(text: str, line: int):
    script = bashtree.parse(text)
    tree = {s.line: (s,) for s in script.statements}
    return workdir.folder_at(tree, bashtree.known_values(script.statements), line)


@pytest.mark.parametrize("lines, folder", [
    (["python a.py"], ""),
    (["cd /home/u/proj"], "/home/u/proj"),
    (["cd ~/proj"], "$HOME/proj"),
    (["cd"], "$HOME"),
    (["cd /home/u", "cd proj/../p2"], "/home/u/p2"),
    (["cd sub"], "sub"),
    (["cd /home/u/proj", "cd $SLURM_SUBMIT_DIR"], ""),
    (["D=/data/x", "cd $D"], "/data/x"),
    (["D=$(cat f)", "cd $D"], None),
    (["cd -"], None),
    (["pushd /a"], None),
    (["if true; then cd /a; fi"], None),
    (["cd $UNKNOWN/x", "cd sub"], None),
])
def test_the_folder_after_the_cds_before_a_line(lines, folder):
    text = "\n".join(lines) + "\nsource .env/bin/activate\n"
    assert _folder(text, len(lines) + 1) == folder


def test_a_relative_path_joins_a_known_folder_only():
    assert workdir.resolved(".env/bin/activate", "/home/u/proj") == "/home/u/proj/.env/bin/activate"
    assert workdir.resolved(".env", "") == ".env"
    assert workdir.resolved("/abs/env", None) == "/abs/env"
    assert workdir.resolved(".env", None) is None
