"""A copy-back trap that copies through the script's variables: what import reads of it, and
that a trap it cannot read leaves one to-do, never a spec that check refuses for the signal."""

import pytest
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.port import bashtree, trapsave
from slurmkit.port.porting import import_script, imported_text

HEAD = "#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --time=1:00:00\n#SBATCH --signal=B:USR1@300\n"
RUN = "python run.py --out $SLURM_TMPDIR/res\n"


def _left(imported):
    """What import left to do but the question where the program's python comes from (these
    scripts run a python they never load: a to-do of its own, tested in test_import_launch)."""
    return tuple(n for n in imported.unmapped if n.text != "environment.venv")


@pytest.mark.parametrize("lines, expected", [
    ("OUT=$PWD/results\n", "$SLURM_SUBMIT_DIR/results"),
    ("OUT=$(pwd)/results\ncd $SLURM_TMPDIR\n", "$SLURM_SUBMIT_DIR/results"),
    ("OUT=`pwd`\n", "$SLURM_SUBMIT_DIR"),
    ("cd /project/def-x/runs\nOUT=$PWD/a\n", "/project/def-x/runs/a"),
])

def test_a_variable_set_from_the_folder_is_the_folder_where_it_is_set(lines, expected):
    script = bashtree.parse("#!/bin/bash\n" + lines + RUN)
    assert trapsave.values_at_save(script, 99)["OUT"] == expected


@pytest.mark.parametrize("lines", ["OUT=$1\n", "OUT=$(date +%F)\n", "OUT=a\nOUT=b\n", "for OUT in a b; do :; done\n"])
def test_a_variable_only_the_job_knows_is_not_put_in(lines):
    script = bashtree.parse("#!/bin/bash\n" + lines + RUN)
    assert "OUT" not in trapsave.values_at_save(script, 99)


@pytest.mark.parametrize("lines, to", [
    ("OUT=$PWD/results\n", "$SLURM_SUBMIT_DIR/results"),
    ("OUT=$PWD/results\nmkdir -p $OUT\n", "$SLURM_SUBMIT_DIR/results/res"),   # a folder that exists: cp puts it inside
    ("", "$SLURM_SUBMIT_DIR/done"),
])
def test_a_usr1_trap_copying_through_the_folder_it_was_in_is_stage_outputs(lines, to):
    destination = "$PWD/done" if not lines else "$OUT"
    text = HEAD + lines + f"save() {{ cp -r $SLURM_TMPDIR/res {destination}; }}\ntrap save USR1\n" + RUN
    imported = import_script(text, name="t", profile="cedar")
    assert imported.spec["stage"] == {"outputs": [{"from": "res", "to": to}], "lead": "300s"}
    assert _left(imported) == () and "extra_directives" not in imported.spec


@pytest.mark.parametrize("copy, to", [
    ('save() { local d=$HOME/res; mkdir -p "$d"; cp -r "$SLURM_TMPDIR"/res "$d/$SLURM_JOB_ID"/; }\ntrap save EXIT\n',
     "$HOME/res/$SLURM_JOB_ID/res"),
    ("trap 'cp -r $SLURM_TMPDIR/res ~/runs/${SLURM_JOB_NAME}_$SLURM_ARRAY_TASK_ID' EXIT\n",
     "$HOME/runs/${SLURM_JOB_NAME}_$SLURM_ARRAY_TASK_ID"),
])
def test_a_copy_back_to_a_folder_named_by_the_job_is_stage_outputs_and_verifies_equal(copy, to):
    """SLURM sets $SLURM_JOB_ID before any line: an output's destination may name it."""
    from slurmkit.port import verify

    text = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n" + copy + "./sim --out $SLURM_TMPDIR/res\n"
    imported = import_script(text, name="t", profile="narval")
    assert imported.spec["stage"]["outputs"] == [{"from": "res", "to": to}]
    assert verify.verify_import(text, imported, "narval").findings == ()


def test_a_copy_back_from_a_folder_named_by_the_job_stays_the_scripts_own():
    text = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n./sim\ncp -r $SLURM_TMPDIR/$SLURM_JOB_ID $HOME/r\n"
    assert "stage" not in import_script(text, name="t", profile="narval").spec


def test_a_trap_copying_to_a_path_from_the_arguments_is_one_to_do_and_check_does_not_refuse_the_signal(tmp_path, monkeypatch):
    text = HEAD + "OUT=$1\nsave() { cp -r $SLURM_TMPDIR/res $OUT; }\ntrap save USR1\n" + RUN
    imported = import_script(text, name="t", profile="cedar")
    assert "extra_directives" not in imported.spec and "stage" not in imported.spec
    trap_todos = [n for n in _left(imported) if "trap" in n.text]
    assert len(trap_todos) == 1 and "stage.lead: 300s" in trap_todos[0].reason
    assert [n.outcome for n in imported.notes if n.line == 4] == ["dropped"]
    (tmp_path / "t.yaml").write_text(imported_text(imported, "t.sh"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "t.yaml"])
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert all("describes a cluster retired" in line for line in errors)   # the one error: port it first
    assert "to do: line 7: trap save USR1" in result.output


def test_a_trap_with_one_copy_import_cannot_read_maps_none_of_them():
    """Mapping the copy it can read and dropping the trap would lose the other without a word."""
    text = HEAD + "OUT=$(date +%s)\nsave() { cp -r $SLURM_TMPDIR/res $HOME/r; cp $SLURM_TMPDIR/log $OUT; }\ntrap save USR1\n" + RUN
    imported = import_script(text, name="t", profile="cedar")
    assert "stage" not in imported.spec
    assert [n.outcome for n in imported.notes if n.text == "trap save USR1"] == ["to do"]


def test_a_signal_for_the_program_with_no_copy_back_trap_is_still_kept():
    imported = import_script(HEAD + RUN, name="t", profile="cedar")
    assert imported.spec["extra_directives"] == ["--signal=B:USR1@300"]
