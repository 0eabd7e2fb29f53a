"""A simple job reads like the Alliance's examples: directives, modules,
environment, venv, payload, in that order; slurmkit's own machinery (the exit file that
`slurmkit status` reads, the copy back of outputs) sits in one fenced block that says what it
is for, and nothing of it is scattered through the user's part of the script."""

import re
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent.parent / "golden"
FENCE_START = "# ---- slurmkit's part:"
FENCE_END = "# ---- end of slurmkit's part"
SIMPLE = sorted(GOLDEN.glob("*/serial.sbatch")) + sorted(GOLDEN.glob("*/threaded.sbatch"))


def _lines(path: Path):
    return path.read_text().splitlines()


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/*.sbatch")), ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_every_script_has_one_fenced_block_before_the_users_part(path):
    lines = _lines(path)
    assert [line for line in lines if line.startswith(FENCE_START)].__len__() == 1, path
    start = next(i for i, line in enumerate(lines) if line.startswith(FENCE_START))
    end = lines.index(FENCE_END)
    assert start < end
    assert max(i for i, line in enumerate(lines) if line.startswith("#SBATCH")) < start
    # The traps are set inside the block, and nowhere else.
    traps = [i for i, line in enumerate(lines) if line.startswith("trap ")]
    assert traps and all(start < i < end for i in traps), path


@pytest.mark.parametrize("path", SIMPLE, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_a_simple_job_is_short_and_in_the_alliance_order(path):
    lines = _lines(path)
    text = "\n".join(lines)
    end = lines.index(FENCE_END)
    start = next(i for i, line in enumerate(lines) if line.startswith(FENCE_START))
    assert end - start <= 11, "the machinery of a job with nothing to stage fits in a few lines"
    assert len(lines) <= 40, f"{path}: {len(lines)} lines"
    order = [text.index(FENCE_END)]
    if "module load" in text:
        order.append(text.index("module load"))
    order += [text.index("export OMP_NUM_THREADS"), text.index("_sk_payload=$!")]
    assert order == sorted(order), path
    # After the block, the only slurmkit names are the payload's pid and its wait.
    after = "\n".join(lines[end + 1:])
    assert set(re.findall(r"_sk_\w+", after)) <= {"_sk_payload"}, path
