"""A simple job reads like the Alliance's examples: directives, modules,
environment, venv, payload, in that order; slurmkit's own machinery (the exit file that
`slurmkit status` reads, the copy back of outputs) sits in one fenced block that says what it
is for, and nothing of it is scattered through the user's part of the script."""

import re
from pathlib import Path

import pytest

from slurmkit.render.runtime import runtime

GOLDEN = Path(__file__).parent.parent / "golden"
FENCE_START = "# ---- slurmkit's runtime:"
FENCE_END = "# ---- end of slurmkit's runtime"
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
    # The traps are the runtime's (slurmkit_exit_file, called in the block): none in the script.
    assert not [line for line in lines if line.lstrip().startswith("trap ")], path
    assert "slurmkit_exit_file" in lines[start:end], path


@pytest.mark.parametrize("path", SIMPLE, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_a_simple_job_is_short_and_in_the_alliance_order(path):
    lines = _lines(path)
    text = "\n".join(lines)
    end = lines.index(FENCE_END)
    start = next(i for i, line in enumerate(lines) if line.startswith(FENCE_START))
    assert end - start <= 15, "the machinery of a job with nothing to stage fits in a few lines"
    assert len(lines) <= 40, f"{path}: {len(lines)} lines"
    order = [text.index(FENCE_END)]
    if "module load" in text:
        order.append(text.index("module load"))
    order += [text.index("export OMP_NUM_THREADS"), text.index("\nslurmkit_run ")]
    assert order == sorted(order), path
    # After the block, the only slurmkit name is the function that runs the payload.
    after = "\n".join(lines[end + 1:])
    assert not re.findall(r"_sk_\w+", after) and set(re.findall(r"slurmkit_\w+", after)) == {"slurmkit_run"}, path


#: the most lines of the user's part (everything but the runtime's fenced block: header, modules,
#: environment, staging, launch; blank lines and comments count) of any golden script of each kind.
#: 40 for every kind, the outputs and checkpoint lines included (they are the user's, after the
#: fenced block): the per-node virtualenv and the rendezvous are one named runtime call each
#: (slurmkit_venv_on_each_node, slurmkit_rendezvous); a number here may only go down.
USER_PART_CEILING = {"serial": 40, "threaded": 40, "array": 40, "mpi": 40, "many-tasks": 40, "gpu": 40,
                     "multigpu": 40, "ddp": 40, "lightning": 40, "accelerate": 40, "horovod": 40, "tf-multiworker": 40}


def user_part(path: Path) -> list:
    """The lines of a golden script that are not slurmkit's runtime (its one fenced block)."""
    lines = _lines(path)
    start = next(i for i, line in enumerate(lines) if line.startswith(FENCE_START))
    return lines[:start] + lines[lines.index(FENCE_END) + 1:]


@pytest.mark.parametrize("kind", sorted(USER_PART_CEILING))
def test_the_part_a_user_edits_fits_one_screen_for_every_kind(kind):
    counts = {path.parent.name: len(user_part(path)) for path in sorted(GOLDEN.glob(f"*/{kind}.sbatch"))}
    assert counts, kind
    assert max(counts.values()) <= USER_PART_CEILING[kind], counts


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/*.sbatch")), ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_every_script_sources_the_runtime_of_its_version_after_checking_its_hash(path):
    text = path.read_text()
    assert f"_sk_lib=${{SLURM_SUBMIT_DIR:-.}}/{runtime().name}  #" in text
    assert f'sha256sum --status -c <<< "{runtime().sha256}  $_sk_lib"' in text
    assert text.index("sha256sum --status") < text.index('source "$_sk_lib"') < text.index("slurmkit_exit_file")


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/*.sbatch")), ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_the_loader_is_four_short_lines_that_reuse_no_name_as_a_loop_variable(path):
    """The loader runs before the library can be read, so it stays in the script: a reader meets
    it first, so it is a few plain lines (the full sha256 makes one of them ~120 characters)."""
    lines = _lines(path)
    start = next(i for i, line in enumerate(lines) if line.startswith("_sk_lib="))
    loader = [line for line in lines[start:lines.index('source "$_sk_lib"')] if not line.startswith("# shellcheck")]
    assert len(loader) <= 4, loader
    assert max(map(len, loader)) <= 120, loader
    assert not any(line.startswith("for ") for line in loader), loader


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*/*.sbatch")), ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_a_task_env_comment_claims_no_binding_that_srun_makes(path):
    """Where srun binds the cores (--cpu-bind=cores), the comment on the task env must not say the
    task env sets them: a reader would look for binding in the wrong place."""
    text = path.read_text()
    if "--cpu-bind=cores" not in text:
        return
    comment = " ".join(line for line in text.splitlines() if line.startswith("# ") and "SLURMKIT_TASK_ENV" in line)
    assert not re.search(r"\bcores\b", comment), comment
