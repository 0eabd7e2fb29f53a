"""Job scripts read with bash's grammar (slurmkit/port/bashtree.py): the words, blocks, functions,
traps and heredocs as bash reads them, and the job's program found by what it is."""

import subprocess
import sys

import pytest

from slurmkit.port import bashtree
from slurmkit.port.bashtree import EXPANDABLE, LITERAL, SUBSTITUTION, main_program, parse

HEAD = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n"


def program_of(body: str):
    return main_program(parse(HEAD + body))


def run_of(body: str):
    """(launcher, the program's words, the line of the command that starts it)."""
    found = program_of(body)
    return found.launcher, [w.value for w in found.words], found.command.line


# ------------------------------------------------------------------------- the program by what it is

def test_an_assignment_whose_value_is_a_path_is_not_the_program():
    assert run_of("srun ./app\nDEST=/project/def-x/out\nmkdir -p $DEST\n") == ("srun", ["./app"], 3)


@pytest.mark.parametrize("line, launcher, words", [
    ("srun gmx_mpi mdrun -deffnm md", "srun", ["gmx_mpi", "mdrun", "-deffnm", "md"]),
    ("gmx mdrun -ntomp $SLURM_CPUS_PER_TASK -deffnm md", None, ["gmx", "mdrun", "-ntomp", "$SLURM_CPUS_PER_TASK", "-deffnm", "md"]),
    ("mpirun -np 8 lmp -in in.lj", "mpirun", ["lmp", "-in", "in.lj"]),
    ("lmp -in in.lj", None, ["lmp", "-in", "in.lj"]),
    ("namd2 +p8 apoa1.namd", None, ["namd2", "+p8", "apoa1.namd"]),
    ("charmrun ++p $SLURM_NTASKS ++ppn 39 namd3 +setcpuaffinity in.namd", "charmrun", ["namd3", "+setcpuaffinity", "in.namd"]),
    ("srun pw.x -input scf.in", "srun", ["pw.x", "-input", "scf.in"]),
    ("srun cp2k.psmp -i h2o.inp -o h2o.out", "srun", ["cp2k.psmp", "-i", "h2o.inp", "-o", "h2o.out"]),
])
def test_a_science_code_outside_any_list_is_the_program(line, launcher, words):
    assert run_of(f"module load StdEnv/2020 gromacs\ncd $SLURM_SUBMIT_DIR\n{line}\necho done\n") == (launcher, words, 5)


def test_a_variable_prefix_is_the_programs_own_and_hides_nothing():
    found = program_of("OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 python train.py --epochs 10\n")
    assert [w.value for w in found.words] == ["python", "train.py", "--epochs", "10"]
    assert [(a.name, a.value.value) for a in found.command.prefix] == [("OMP_NUM_THREADS", "1"), ("PYTHONUNBUFFERED", "1")]


@pytest.mark.parametrize("line", ["srun -o run_%t.out ./app --steps 10", "srun --output=run.out -e err.txt ./app --steps 10"])
def test_srun_output_options_take_their_value(line):
    assert run_of(line + "\n")[:2] == ("srun", ["./app", "--steps", "10"])


def test_a_double_quoted_string_over_two_lines_is_one_word():
    script = parse(HEAD + 'python run.py --comment "first part\nsecond part" --steps 10\n')
    (command,) = script.statements
    assert command.argv == ["python", "run.py", "--comment", "first part\nsecond part", "--steps", "10"]
    assert (command.line, command.end_line) == (3, 4)
    assert script.multiline_strings == ((3, 4, '"first part\nsecond part"'),)


@pytest.mark.parametrize("word, kind, expansions", [
    ("{1..5}", EXPANDABLE, ("brace",)), ("run{a,b}.txt", EXPANDABLE, ("brace",)), ("{}", LITERAL, ()),
    ("'{1..5}'", LITERAL, ()), ("inputs/*.dat", EXPANDABLE, ("glob",)), ("'a b'", LITERAL, ()),
    ('"$HOME/a b"', EXPANDABLE, ("variable",)), ("${X:-1}", EXPANDABLE, ("variable", "parameter")),
    ("$((1+2))", EXPANDABLE, ("arithmetic",)), ('"$(date)"', SUBSTITUTION, ("substitution",)), ("~/x", EXPANDABLE, ("tilde",)),
])
def test_each_word_says_what_bash_expands_in_it(word, kind, expansions):
    (command,) = parse(f"echo {word}\n").statements
    assert (command.words[1].kind, command.words[1].expansions) == (kind, expansions)


def test_quotes_are_removed_and_expansions_kept_as_written():
    (command,) = parse("""echo 'a b' "x \\"y\\" $HOME" a\\ b $'t\\tu' --x="a>b"\n""").statements
    assert command.argv[1:] == ["a b", 'x "y" $HOME', "a b", "t\tu", "--x=a>b"]


def test_gnu_parallel_runs_its_command_with_the_arguments_on_its_line():
    assert run_of("parallel -j 4 ./process {} ::: a b c\n")[:2] == ("parallel", ["./process", "{}", ":::", "a", "b", "c"])


def test_a_pipe_after_srun_is_a_pipeline_of_which_srun_is_the_first_stage():
    found = program_of("srun ./app | grep -v DEBUG > app.log\n")
    assert isinstance(found.statement, bashtree.Pipeline)
    assert [s.name for s in found.statement.stages] == ["srun", "grep"]
    assert found.command is found.statement.stages[0] and found.launcher == "srun"
    assert [(r.operator, r.target) for r in found.statement.redirects] == [(">", "app.log")]


@pytest.mark.parametrize("body, line", [
    ("python a.py\nsrun hostname\nsrun mkdir -p $SLURM_TMPDIR/x\n", 3),
    ("python a.py\nsrun --ntasks=$SLURM_NNODES bash << EOF\nvirtualenv --no-download $SLURM_TMPDIR/env\nEOF\n", 3),
    ("python a.py\npython -m venv env\npip install -r req.txt\nsource env/bin/activate\nnvidia-smi\n", 3),
    ("python a.py\ncp -r out $HOME/res\ntar -czf out.tgz out\nrm -rf $SLURM_TMPDIR/x\necho done\n", 3),
])
def test_set_up_staging_and_reports_are_never_the_program(body, line):
    assert program_of(body).command.line == line


def test_a_loop_of_runs_or_an_if_around_the_run_is_the_programs_statement():
    found = program_of("for i in {1..3}; do\n  srun ./app $i\ndone\n")
    assert isinstance(found.statement, bashtree.Block) and found.statement.kind == "for"
    assert found.statement.words[0].expansions == ("brace",) and found.statement.variable == "i"
    assert found.command.line == 4 and found.command.within == ("for",)


def test_a_function_the_script_calls_runs_its_program_there():
    found = program_of("run() {\n  srun ./app\n}\nrun\n")
    assert found.command.name == "srun" and found.command.within == ("function run",)
    assert found.statement.line == 6   # the call


@pytest.mark.parametrize("line, words", [
    ("timeout 2h python t.py", ["python", "t.py"]), ("time ./app", ["./app"]), ("env A=1 ./app", ["./app"]),
    ("exec srun ./app", ["./app"]), ("nohup stdbuf -oL ./app", ["./app"]),
])
def test_a_wrapper_runs_the_command_after_its_options(line, words):
    assert run_of(line + "\n")[1] == words


def test_no_program_where_every_command_is_set_up():
    assert program_of("module load python\nexport A=1\necho hi\n") is None


# ------------------------------------------------------------------------------ what the tree holds

def test_positional_parameters_are_listed_and_a_functions_own_are_not():
    script = parse(HEAD + 'f() { echo "$1"; }\npython run.py --input "$1" --seed ${10} "$@" $#\necho $0 $$\n')
    assert script.positional == ((4, "$1"), (4, "${10}"), (4, "$@"), (4, "$#"))


def test_a_one_line_function_and_its_trap_on_the_same_line():
    script = parse(HEAD + "save() { cp -r $SLURM_TMPDIR/out $HOME/results/; }; trap save USR1\n")
    function, trap_command = script.statements
    assert function.name == "save" and [c.name for c in bashtree.walk(function.body)] == ["cp"]
    (trap,) = bashtree.traps(script)
    assert (trap.line, trap.action, trap.signals, trap.functions) == (3, "save", ("USR1",), (function,))


def test_a_traps_action_calls_the_functions_it_names():
    script = parse("finish() { :; }\ntrap 'finish; exit 0' EXIT TERM\ntrap - USR1\n")
    first, reset = bashtree.traps(script)
    assert [f.name for f in first.functions] == ["finish"] and first.signals == ("EXIT", "TERM")
    assert reset.action == "-" and reset.functions == ()


def test_variables_a_copy_back_goes_through_are_worked_out():
    script = parse("OUT=$HOME/results\nsave() { src=$SLURM_TMPDIR/out; cp -r $src $OUT/$NAME; }\n"
                   "NAME=run1\nSTAMP=$(date +%s)\nfor f in a b; do echo $f; done\nX=1\nX=2\n")
    values = bashtree.known_values(script.statements)
    assert values == {"OUT": "$HOME/results", "src": "$SLURM_TMPDIR/out", "NAME": "run1"}
    (cp,) = [c for c in bashtree.walk(script.statements) if c.name == "cp"]
    assert [bashtree.substituted(w, values) for w in cp.argv[2:]] == ["$SLURM_TMPDIR/out", "$HOME/results/run1"]


def test_values_that_name_each_other_stay_bounded():
    values = bashtree.known_values(parse("A=$B$B$B$B\nB=$A$A$A$A\nC=$C/x\n").statements)
    assert values == {}


def test_module_lines_are_found_in_blocks_and_functions_too():
    script = parse("module load StdEnv/2020\nif [ -n \"$OLD\" ]; then\n  module load StdEnv/2018.3 gcc/7.3.0\nfi\n"
                   "setup() { ml python/3.8; }\n")
    assert [(c.line, c.argv[1:], c.within) for c in bashtree.module_commands(script)] == [
        (1, ["load", "StdEnv/2020"], ()), (3, ["load", "StdEnv/2018.3", "gcc/7.3.0"], ("if",)),
        (5, ["python/3.8"], ("function setup",))]


def test_assignments_prefixes_declarations_redirections_and_background():
    script = parse("A=1\nexport B=\"x y\" C\nlocal D=2\nE=3 ./run > log 2>&1 &\n./a && ./b || ./c\n")
    plain, export, local, run, chain = script.statements
    assert [(a.name, a.value.value, a.declaration) for a in bashtree.assignments(script.statements)] == [
        ("A", "1", ""), ("B", "x y", "export"), ("D", "2", "local")]
    assert plain.words == () and export.argv == ["export", "B=x y", "C"]
    assert run.background and [(r.descriptor, r.operator, r.target) for r in run.redirects] == [("", ">", "log"), ("2", ">&", "1")]
    assert [a.name for a in run.prefix] == ["E"] and not run.declared
    assert isinstance(chain, bashtree.AndOr) and chain.operators == ("&&", "||") and [c.name for c in chain.items] == ["./a", "./b", "./c"]


def test_heredocs_keep_their_body_and_say_whether_bash_expands_it():
    script = parse("python - << 'EOF'\nprint('$x')\nEOF\ncat <<EOF | python -\nprint(\"$1\")\nEOF\n")
    first, pipeline = script.statements
    assert first.heredocs == (bashtree.Heredoc(1, 3, "EOF", "print('$x')\n", False),)
    assert isinstance(pipeline, bashtree.Pipeline) and [s.name for s in pipeline.stages] == ["cat", "python"]
    assert pipeline.stages[0].heredocs[0].expands and script.positional == ((5, "$1"),)


def test_blocks_nest_and_every_command_says_where_it_is():
    script = parse("case $1 in\n  a) while read l; do ( cd x && { ./y; } ); done < f ;;\nesac\n")
    (block,) = script.statements
    assert block.kind == "case" and [w.value for w in block.words] == ["$1"]
    assert [(c.name, c.within) for c in bashtree.walk(script.statements)] == [
        ("read", ("case", "while")), ("cd", ("case", "while", "subshell")), ("./y", ("case", "while", "subshell", "group"))]


def test_sbatch_lines_are_comments_with_their_line():
    script = parse(HEAD + "#SBATCH --mem=4G\n./app  # the run\n")
    assert [(c.line, c.text) for c in script.directives] == [(2, "#SBATCH --account=def-x --time=1:00:00"), (3, "#SBATCH --mem=4G")]
    assert script.statements[0].text == "./app"


def test_lines_that_are_not_bash_are_named_and_the_rest_still_read():
    script = parse("module load python\nif then fi\n./app\n")
    assert script.errors == ((2, "if then fi"),)
    assert "module" in [c.name for c in bashtree.walk(script.statements)]


def test_a_script_bash_reads_has_no_errors_whatever_the_grammar_thinks():
    assert parse("cmd &> f <<< \"$x\"\n").errors == ()   # a here-string after &>: a gap in the grammar, not in bash


def test_a_python_file_given_as_a_script_is_named_at_its_first_line_bash_refuses():
    assert parse("#!/bin/bash\nimport os\ndef main(args):\n    pass\n").errors == ((3, "def main(args):"),)


def test_crlf_line_ends_read_as_lf():
    (command,) = parse("srun ./app --x 1\r\n").statements
    assert command.argv == ["srun", "./app", "--x", "1"]


def test_blocks_nested_past_the_cap_are_not_read_and_say_so():
    depth = bashtree.MAX_DEPTH + 5
    script = parse("( " * depth + "./app" + " )" * depth + "\n")
    assert script.errors and "nested deeper" in script.errors[-1][1]


def test_the_grammar_is_loaded_when_a_script_is_read_not_when_import_is_imported():
    code = ("import sys\nimport slurmkit.port.porting\nassert 'tree_sitter' not in sys.modules\n"
            "from slurmkit.port.bashtree import parse\nparse('true')\nassert 'tree_sitter' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("line, argv", [
    ("echo $HOME/data/$NAME.tar x", ["echo", "$HOME/data/$NAME.tar", "x"]),
    ("$FOO/$BAR/exe x", ["$FOO/$BAR/exe", "x"]),
    ("echo ${A}/$B.c", ["echo", "${A}/$B.c"]),
])
def test_a_word_the_grammar_splits_after_its_second_dollar_is_one_word(line, argv):
    """tree-sitter-bash 0.25 reads ``$A/$B.c`` as ``$A/$`` and ``B.c``; bash reads one word."""
    (command,) = parse(line + "\n").statements
    assert command.argv == argv and "variable" in command.words[-2 if line.endswith(" x") else -1].expansions


def test_an_assignment_the_grammar_splits_is_still_an_assignment_and_runs_nothing():
    script = parse("DEST=$HOME/$NAME.out\nexport D2=$A/$B.c\n./app\n")
    dest, export, app = script.statements
    assert dest.words == () and dest.prefix[0].value.value == "$HOME/$NAME.out"
    assert export.argv == ["export", "D2=$A/$B.c"] and export.declared[0].value.value == "$A/$B.c"
    assert main_program(script).command is app


def test_characters_the_grammars_scanner_misreads_never_crash_the_process():
    """tree-sitter-bash 0.25 reads memory it does not own after ``{`` and U+C961F, and crashes the
    process on some runs: 300 parses in a child process, which dies by signal if it happens."""
    probe = ("from slurmkit.port import bashtree\n"
             "for _ in range(300):\n"
             "    bashtree.parse('{\\U000c961f')\n"
             "    script = bashtree.parse('#!/bin/bash\\n{\\U000c961f\\necho \\u00e9t\\u00e9 > \\U0001f600.txt\\n')\n"
             "assert script.statements[-1].words[1].value == '\\u00e9t\\u00e9', script.statements[-1]\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize("body, broken", [
    # a backslash that escapes the blank after it (and a comment after that), not the line's end
    ("rmats.py --gtf a.gtf \\ #testing\n  --nthread 4 --od out\n", [(1, 2, "--nthread 4 --od out")]),
    ("python r.py \\  \n  in.txt\n", [(1, 2, "in.txt")]),
    ("prog -a \\\n  -b 1 > log \\ #x\n  -c\n", [(2, 3, "-c")]),
    ("f() {\n  run \\ #x\n  -q\n}\n", [(2, 3, "-q")]),
    ("srun prog | tee log \\ \n  -a\n", [(1, 2, "-a")]),
    # a backslash that continues into a blank or comment line, which ends the command
    ("cmd --a \\\n  # --b 1\n  --c 2\n", [(1, 3, "--c 2")]),
    ("cmd --a \\\n\n  --c 2\n", [(1, 3, "--c 2")]),
    # no break: continued lines, an escaped blank inside a word or quotes, nothing on the next line
    ("cmd --a \\\n  --b\nx\n", []), ('echo "x \\ "\nb\n', []), ("echo a\\ b\nc\n", []), ("a \\ \n\nb\n", []),
    ("cmd \\\n# end\n", []),
    # a stray backslash before a comment line, then a command of its own: bash runs what was meant
    ("prog1 --out a.json \\\n# step 2\nprog2 --in a.json\n", []),
])
def test_a_backslash_that_does_not_continue_the_line_is_found(body, broken):
    """Bash ends the command there and runs the next line as a command of its own."""
    found = parse(HEAD + body).broken
    assert [(b.line - 2, b.next_line - 2, b.next_text) for b in found] == broken


@pytest.mark.parametrize("line, value", [
    ('DS="$NAME"_v1', "${NAME}_v1"),        # bash reads NAME, then the text _v1: never $NAME_v1
    ("DS=$NAME'_v1'", "${NAME}_v1"),
    ('DS="$NAME".v1', "$NAME.v1"),          # a dot ends a name by itself
    ('DS="${NAME}"_v1', "${NAME}_v1"),
    ('DS="$A""$B"', "$A$B"),
])
def test_quote_removal_never_joins_a_name_to_the_text_after_it(line, value):
    [assignment] = bashtree.assignments(parse(line + "\n").statements)
    assert assignment.value.value == value


def test_a_value_made_from_the_scripts_arguments_is_not_a_known_value():
    """``NAME=$1``: the words sbatch passed, which setup reads in order; a copy staged in before
    setup runs must not take ``$1`` (a function's own argument, where a runtime function reads it)."""
    values = bashtree.known_values(parse('NAME=$1\nDS="$NAME"_v1\nALL="$@"\nN=${10}\nOK=$HOME/x\n').statements)
    assert values == {"OK": "$HOME/x"}


def test_an_if_holds_its_branches_in_order_with_their_tests():
    script = bashtree.parse('if [ "$A" = x ]; then\n  one # a comment\nelif test -f f; then two; three\nelse\n  four\nfi\n')
    (block,) = script.statements
    assert [(b.condition, [c.name for c in bashtree.walk(b.body)]) for b in block.branches] == [
        ('[ "$A" = x ]', ["one"]), ("test -f f", ["two", "three"]), ("", ["four"])]
    assert [c.text for c in script.comments] == ["# a comment"]


@pytest.mark.parametrize("condition, holds", [
    ('[ "$CC_CLUSTER" = fir ]', True), ("[ $CC_CLUSTER == graham ]", False), ("[[ ${CC_CLUSTER} != graham ]]", True),
    ("[[ $CC_CLUSTER == f* ]]", True), ('[[ $CC_CLUSTER == "f*" ]]', False), ('[ "$HOST" = fir ]', None),
    ('[ -n "$CC_CLUSTER" ]', None), ("$NIAGARA", False), ("${LOCAL}", True), ("$UNSET", None)])
def test_a_test_of_the_cluster_variable_is_judged_and_any_other_is_not(condition, holds):
    from slurmkit.port.cluster_branches import condition_holds
    assert condition_holds(condition, {"CC_CLUSTER": ["fir"], "NIAGARA": ["false"], "LOCAL": ["true"]}) is holds


def test_a_here_document_whose_delimiter_starts_with_equals_is_one():
    script = bashtree.parse("cat <<==EOF== > step2.sh\n#!/bin/bash\n./step2\n==EOF==\n./step1\n")
    assert [c.name for c in bashtree.walk(script.statements)] == ["cat", "./step1"]
    assert bashtree.parse("(( x <<= 2 ))\n").errors == ()


def test_an_extended_glob_after_shopt_extglob_is_read_as_bash_runs_it():
    """bash runs ``shopt -s extglob`` before it reads the loop after it; ``bash -n`` runs nothing,
    so it is told the option, and the grammar reads the glob as a word."""
    body = "shopt -s extglob nullglob\nfor f in inputs/!(*_opt).xyz; do\n  xtb \"$f\" > \"${f%.xyz}.out\"\ndone\nls @(a|b).txt\n"
    script = parse(body)
    assert script.errors == ()
    loop, listing = script.statements[1], script.statements[2]
    assert "inputs/!(*_opt).xyz" in str(loop) and listing.argv == ["ls", "@(a|b).txt"]
    assert parse(body.replace("shopt -s extglob nullglob\n", "")).errors   # without it, bash refuses the line
