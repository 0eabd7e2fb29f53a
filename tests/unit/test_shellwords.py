"""Where a shell line stops being one command (shellwords.py): quotes, $(...), and redirections."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slurmkit.core.shellwords import commands, raw_words, split_at_operators


@pytest.mark.parametrize("line, head, operators", [
    ("python t.py > log.txt", "python t.py", [">"]),
    ("python t.py 2>&1 | tee t.log", "python t.py", ["2>&1", "|"]),
    ("for i in 0 1 2 3; do srun ./t $i & done", "for i in 0 1 2 3", [";", "&"]),   # a digit before ';' is a word
    ("sleep 3; echo", "sleep 3", [";"]),
    ('python t.py ">" x', 'python t.py ">" x', []),
    ('python a.py --x="a>b|c"', 'python a.py --x="a>b|c"', []),
    ("echo $((A*B>2)) $(a|b)", "echo $((A*B>2)) $(a|b)", []),
    ("p x\\&y", "p x\\&y", []),
])
def test_operators_are_found_outside_quotes_and_substitutions(line, head, operators):
    assert split_at_operators(line) == (head, operators)


def test_commands_are_the_pieces_between_operators():
    assert commands('matlab -r "run(1); exit" && echo ok | tee x') == ['matlab -r "run(1); exit"', "echo ok", "tee x"]


def test_raw_words_keep_their_quotes():
    assert raw_words("srun python t.py --a \"b c\" $(echo a b) 'x y'") == [
        "srun", "python", "t.py", "--a", '"b c"', "$(echo a b)", "'x y'"]


@settings(max_examples=500, deadline=1000)
@given(st.text(alphabet="0123 ;&|<>'\"\\$()ab\n", max_size=30))
def test_any_line_is_scanned_to_its_end(line):
    head, operators = split_at_operators(line)
    assert len(head) <= len(line) and all(operators)
    raw_words(line)
    commands(line)


def test_a_variable_assigned_inside_a_kept_block_is_set_for_the_launch():
    """An option loop kept in environment.setup sets its variables on indented lines; check
    had warned that nothing sets them (and that the job would stop on them)."""
    from slurmkit.core.shellwords import assigned_names

    loop = ("while [ $# -gt 0 ]\ndo\n    case $1 in\n        --data)\n            data_path=$2\n"
            "            shift 2\n            ;;\n    esac\ndone")
    assert assigned_names([loop, "if x; then Y=1; else Z=2; fi", "echo a=b", "python p.py --x=1"]) == {"data_path", "Y", "Z"}
