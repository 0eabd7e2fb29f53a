"""The script's arguments a run with none passes by (scriptargs.py): import asks for the others,
in one to-do for the whole script."""

import pytest

from slurmkit.port import bashtree
from slurmkit.port.porting import import_script

HEADER = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n"


def needed(body: str):
    """The lines (of ``body``) whose reads of the arguments a run without them does not pass by."""
    script = bashtree.parse(body)
    optional = list(script.optional_positional)
    lines = []
    for read in script.positional:
        if read in optional:
            optional.remove(read)
        else:
            lines.append(read[0])
    return sorted(set(lines))


@pytest.mark.parametrize("body, lines", [
    # an option loop after defaults: nothing to give
    ('A=1\nwhile [ "$1" != "" ]; do case $1 in -a) shift; A=$1;; esac; shift; done\n', []),
    ("A=1\nwhile [ $# -gt 0 ]; do\n case $1 in\n --a) A=$2; shift 2;;\n *) echo bad $1; exit 1;;\n esac\ndone\n", []),
    ("A=1\nwhile (( $# )); do A=$1; shift; done\n", []),
    ("A=1\nuntil [ -z \"$1\" ]; do A=$1; shift; done\n", []),
    ("A=1\nwhile :; do\n case $1 in\n -a) A=$2; shift;;\n -?*) echo \"unknown $1\";;\n *) break\n esac\n shift\ndone\n", []),
    ('M=fast\ncase "$1" in\n slow) M=$1;;\nesac\n', []),
    ("case $1 in\n start) X=1;;\n *) echo usage; exit 1;;\nesac\n", [1]),
    ("case $1 in\n $HOME) X=$1;;\nesac\n", [1, 2]),
    # a variable the loop sets with no default elsewhere is the user's to give
    ("while [ $# -gt 0 ]; do\n case $1 in\n --data) D=$2; shift 2;;\n esac\ndone\n", [3]),
    # defaults of their own
    ("N=${1:-10}\nM=${2-5}\nF=${3:+--fast}\n", []),
    # guards
    ("N=10\nif [ $# -gt 0 ]; then N=$1; fi\n", []),
    ("N=10\n[ -n \"$1\" ] && N=$1\n", []),
    ("N=10\ntest $# -ge 1 && N=$1\n", []),
    ("if [ $# -eq 0 ]; then N=10; else N=$1; fi\n", []),
    ("for a in \"$@\"; do echo $a; done\n", []),
    # a test that stops the script without arguments: they are required
    ("if [ $# -lt 1 ]; then echo usage; exit 1; fi\n", [1]),
    ("die() { echo \"$1\"; exit 1; }\n[ -z \"$1\" ] && die 'give a name'\n", [2]),
    ("[ $# -eq 1 ] || exit 2\n", [1]),
    # plain reads
    ("X=$1\npython a.py $X\n", [1]),
    ("python a.py \"$@\"\n", [1]),
    ("./prog --count $#\n", [1]),
    # printed only: the job's log shows them, nothing depends on them
    ("echo $#\n", []),
    # a test that reads more than the arguments is not run: the read is needed
    ("N=1\nif [ -f \"$HOME/x\" ] && [ -n \"$1\" ]; then N=$1; fi\n", [2]),
    ("N=1\nif [ \"$(cat f)\" = \"$1\" ]; then N=$1; fi\n", [2]),
])
def test_reads_a_run_without_arguments_passes_by(body, lines):
    assert needed(body) == lines


def test_one_to_do_names_every_line_that_needs_an_argument():
    text = HEADER + "IN=$1\nSEED=${2:-0}\nOUT=$3\npython run.py $IN $SEED $OUT\n"
    todos = [n for n in import_script(text, name="job").unmapped if "arguments" in n.reason]
    assert [(n.line, n.text) for n in todos] == [(0, "lines 3, 5")]
    assert todos[0].reason.startswith("they read the script's arguments ($1, $3)")


def test_an_option_loop_with_defaults_is_no_to_do():
    text = HEADER + 'A=1\nwhile [ "$1" != "" ]; do case $1 in -a) shift; A=$1;; esac; shift; done\npython a.py $A\n'
    assert not [n for n in import_script(text, name="job").unmapped if "arguments" in n.reason]


def test_a_variable_an_option_loop_sets_is_set_for_check():
    """check's "$OUT: nothing sets it" reads the setup lines: an assignment in a case item, after
    then/do/else or indented in a block sets the name too."""
    from slurmkit.core.shellwords import assigned_names

    loop = "while [ $# -gt 0 ]; do\n    case $1 in\n        --out) OUT=$2; shift 2 ;;\n    esac\n    N=1\ndone"
    assert assigned_names([loop, "if [ -z \"$M\" ]; then M=a; else E=b; fi", "echo a=b", "python x.py --lr=3"]) == {"OUT", "N", "M", "E"}
