"""An unquoted variable in the launch line keeps bash's word splitting (wordsplit.py): a computed
value that is empty or holds several words reaches the program as the script gave it."""

import pytest

from slurmkit.port import verify
from slurmkit.port.porting import import_script
from slurmkit.port.wordsplit import may_split, unquoted_names

HEADER = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n"


@pytest.mark.parametrize("text, names", [
    ("$A", ["A"]), ("${A}/x", ["A"]), ('"$A"', []), ("'$A'", []), ("\\$A", []), ('x"$A"$B', ["B"]),
    ("--opt=$A", ["A"]), ('"it\'s $A" $B', ["B"]),
])
def test_the_variables_a_word_expands_outside_quotes(text, names):
    assert unquoted_names(text) == names


def test_only_what_the_script_sets_to_unknown_or_several_words_splits():
    assigned = frozenset({"DIR", "OPTS", "OUT", "IN"})
    values = {"OPTS": "--fast --quiet", "OUT": "results", "IN": "$1"}
    assert may_split("$DIR $OPTS $OUT $HOME $IN", assigned, values) == ["DIR", "OPTS", "IN"]


def test_a_computed_unquoted_variable_stays_unquoted_and_verifies_equal():
    script = HEADER + '#SBATCH --array=1-2\nDIR=$(sed -n "${SLURM_ARRAY_TASK_ID}p" list.txt)\npython p.py $DIR\n'
    imported = import_script(script, name="job", profile="narval")
    assert imported.spec["launch"] == {"shell": "python p.py $DIR"}
    verification = verify.verify_import(script, imported, "narval")
    assert not verification.findings and not verification.not_run


def test_the_same_line_requoted_is_a_difference_verification_finds():
    """What import wrote before: the empty value became an argument ('')."""
    script = HEADER + "DIR=$(cat dirs.txt)\npython p.py $DIR\n"
    imported = import_script(script, name="job", profile="narval")
    requoted = dict(imported.spec, launch={"command": "python p.py $DIR"})
    verification = verify.verify_import(script, type(imported)(requoted, imported.notes), "narval")
    assert {d.what for d in verification.findings} == {"argv"}
