"""A read of the script's arguments or of an array variable is a to-do only where the job uses
its value (a command's word, a path, a condition): one only printed, made after the script set
its own arguments, or given to a variable nothing reads asks the user for nothing."""

import pytest

from slurmkit.port.porting import import_script

HEADER = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n"


def _todo_lines(body: str, about: str):
    imported = import_script(HEADER + body, name="job", profile="fir")
    return [note.line for note in imported.notes if note.outcome == "to do" and about in note.reason]


ARGUMENTS = "the script's arguments"
ARRAY = "reads $SLURM_ARRAY_TASK_ID but has no #SBATCH --array"


@pytest.mark.parametrize("body", [
    'echo "called with: $@ ($# words)"\n./model in.txt\n',                   # printed to the log
    'printf "first: %s\\n" "$1" >&2\n./model in.txt\n',
    "set -- small 10\n./model --size $1 --steps $2\n",                         # the script's own arguments
    "set -euo pipefail\nset -- small\n./model --size $1\n",
    "mode=$1\nmode=fast\n./model --mode $mode\n",                              # overwritten before it is read
    "scratch=$1\n./model in.txt\n",                                            # read by nothing
])
def test_arguments_the_job_does_not_use_ask_nothing(body):
    assert _todo_lines(body, ARGUMENTS) == []


@pytest.mark.parametrize("body, line", [
    ("./model --size $1\n", 3),                                                # a command's word
    ("mode=$1\n./model --mode $mode\nmode=fast\n", 3),                         # read before it is set again
    ("echo $1 > settings.txt\n./model settings.txt\n", 3),                     # printed into a file the job reads
    ('if [ -z "$X" ]; then set -- small; fi\n./model --size $1\n', 4),         # set only sometimes
    ("set -euo pipefail\n./model --size $1\n", 4),                             # options, not arguments
    ("INPUT=$1\n./model in.txt\n", 3),                                         # an environment variable's name
    ("mode=$1\nmode=fast\neval \"./model --mode $mode\"\n", 3),                # eval may read any name
    ('run() { ./model --mode "$mode"; }\nmode=$1\nrun\nmode=fast\n', 4),       # a function reads it in between
    ("for n in 1 2; do ./model $mode; mode=$1; done\nmode=fast\n", 3),         # the loop's next turn reads it
])
def test_arguments_the_job_uses_keep_their_to_do(body, line):
    assert _todo_lines(body, ARGUMENTS) == [line]


@pytest.mark.parametrize("body", [
    'echo "task $SLURM_ARRAY_TASK_ID starting on $(hostname)"\n./model in.txt\n',
    'echo "task ${SLURM_ARRAY_TASK_ID} of $SLURM_ARRAY_TASK_COUNT" >&2\n./model in.txt\n',
    'printf "%s.%s\\n" "$SLURM_ARRAY_JOB_ID" "$SLURM_ARRAY_TASK_ID"\n./model in.txt\n',
])
def test_an_array_id_only_printed_asks_for_no_range(body):
    assert _todo_lines(body, ARRAY) == []


@pytest.mark.parametrize("body, line", [
    ('echo "task $SLURM_ARRAY_TASK_ID"\n./model --seed $SLURM_ARRAY_TASK_ID\n', 4),
    ("./model in_${SLURM_ARRAY_TASK_ID}.txt\n", 3),
    ('if [ "$SLURM_ARRAY_TASK_ID" -eq 1 ]; then ./prepare; fi\n./model in.txt\n', 3),
    ("echo $SLURM_ARRAY_TASK_ID > id.txt\n./model id.txt\n", 3),
    ('echo "task $SLURM_ARRAY_TASK_ID"; ./model --seed $SLURM_ARRAY_TASK_ID\n', 3),
])
def test_an_array_id_the_job_uses_asks_for_the_range(body, line):
    assert _todo_lines(body, ARRAY) == [line]


def test_a_job_name_only_printed_asks_for_no_name():
    assert _todo_lines('echo "job $SLURM_JOB_NAME"\n./model in.txt\n', "$SLURM_JOB_NAME") == []
    assert _todo_lines("./model --out $SLURM_JOB_NAME.out\n", "$SLURM_JOB_NAME") == [0]
