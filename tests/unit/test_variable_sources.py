"""Every environment variable a rendered script sets is one its target program reads, with
the place that program documents it (slurmkit/core/variables.py); names that do nothing are gone,
and `slurmkit import` says so where a user's script has the Alliance page's typo."""

import re
from pathlib import Path

import pytest

from slurmkit.core.variables import NO_OP_TYPOS, READERS
from slurmkit.port.porting import import_script
from slurmkit.sites.profiles import list_profiles, load_profile

from .golden_specs import spec_for

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
SCRIPTS = sorted(GOLDEN.glob("*/*.sbatch"))
_EXPORT = re.compile(r"^\s*export\s+(?!-f\b)(.*)$")


def exported_names(text: str):
    """The names a script exports: ``export A=1``, ``export A=1 B=$X``, ``export A B``."""
    names = []
    for line in text.splitlines():
        match = _EXPORT.match(line)
        if match:   # (words split as bash would only where it matters: not inside $((...)) or ${...})
            assigned = re.sub(r"\$\(\(.*?\)\)|\$\{[^}]*\}", "", match.group(1).split(" #")[0])
            names += [re.match(r"[A-Za-z_][A-Za-z0-9_]*", word).group() for word in assigned.split()
                      if re.match(r"[A-Za-z_][A-Za-z0-9_]*(=|$)", word)]
    return names


def _array_parameters(profile_name: str):
    return set(spec_for(load_profile(profile_name), "array").get("array", {}).get("parameters", {}))


def slurmkit_names(script: Path):
    """Exported names slurmkit chose for a program: not its runtime's own (_sk_ plumbing, the
    SLURMKIT_ names its functions read, as many-tasks' task file), not an array's parameters (the user's)."""
    own = _array_parameters(script.parent.name) if script.stem == "array" else set()
    return [n for n in exported_names(script.read_text()) if not n.startswith(("_sk_", "SLURMKIT_")) and n not in own]


def test_the_golden_scripts_export_variables_at_all():
    assert len(SCRIPTS) > 50 and sum(len(slurmkit_names(s)) for s in SCRIPTS) > 100


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_exported_variable_is_read_by_a_program_that_documents_it(script):
    unknown = [name for name in slurmkit_names(script) if name not in READERS]
    assert not unknown, f"{script}: {unknown} have no reader in slurmkit/core/variables.py: give each a source or remove it"


def test_every_reader_cites_a_web_page():
    assert all(reader.source.startswith(("https://", "http://")) and reader.program for reader in READERS.values())


def test_the_names_that_do_nothing_are_not_in_the_table():
    """TORCH_NCCL_ASYNC_HANDLING is the Alliance page's typo; NCCL_BLOCKING_WAIT is read by neither
    NCCL nor TensorFlow (old PyTorch only); NCCL_IB_DISABLE on Nibi had no source."""
    for name in ("TORCH_NCCL_ASYNC_HANDLING", "NCCL_BLOCKING_WAIT", "NCCL_IB_DISABLE"):
        assert name not in READERS
    assert all(right in READERS for right in NO_OP_TYPOS.values())


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_script_sets_no_variable_for_a_framework_it_does_not_run(script):
    text = script.read_text()
    programs = {READERS[name].program for name in slurmkit_names(script) if name in READERS}
    if "tensorflow" in programs:  # TF_CONFIG / TF thread pools: a TensorFlow job
        assert "pytorch" not in programs, f"{script} sets PyTorch's variables for TensorFlow"
    if script.stem == "horovod":  # Horovod does its own NCCL calls: torch.distributed's settings do nothing
        assert "TORCH_NCCL_ASYNC_ERROR_HANDLING" not in text


def test_pytorch_gpu_jobs_get_the_error_handling_the_alliance_page_meant():
    ddp = (GOLDEN / "narval" / "ddp.sbatch").read_text()
    assert "export TORCH_NCCL_ASYNC_ERROR_HANDLING=1  # a failed or timed-out NCCL call aborts the ranks instead of hanging\n" in ddp
    assert "TORCH_NCCL_ASYNC_HANDLING" not in ddp


@pytest.mark.parametrize("name", sorted(p.name for p in list_profiles()[0]))
def test_a_profiles_launch_variables_are_read_by_a_program_and_the_profile_cites_a_source(name):
    profile = load_profile(name)
    for variable in profile.launch.env:
        assert variable in READERS, f"{name}: launch.env {variable} has no reader in slurmkit/core/variables.py"
    if profile.launch.env:
        assert profile.raw["launch"].get("source"), f"{name}: launch.env has no source"


def test_import_flags_the_alliance_typo_as_a_no_op_and_names_the_right_variable():
    script = "#!/bin/bash\n#SBATCH --time=1:00:00\nexport TORCH_NCCL_ASYNC_HANDLING=1\nsrun python train.py\n"
    imported = import_script(script)
    note = next(n for n in imported.notes if "TORCH_NCCL_ASYNC_HANDLING" in n.text)
    assert note.outcome == "dropped"
    assert "does nothing" in note.reason and "TORCH_NCCL_ASYNC_ERROR_HANDLING" in note.reason
    assert "TORCH_NCCL_ASYNC_HANDLING" not in imported.spec.get("environment", {}).get("variables", {})


def test_import_keeps_the_right_variable_as_the_user_wrote_it():
    imported = import_script("#!/bin/bash\n#SBATCH --time=1:00:00\nexport TORCH_NCCL_ASYNC_ERROR_HANDLING=1\npython t.py\n")
    assert imported.spec["environment"]["variables"] == {"TORCH_NCCL_ASYNC_ERROR_HANDLING": "1"}
