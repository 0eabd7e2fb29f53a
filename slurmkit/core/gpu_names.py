"""How a spec may spell a site's GPU: one place for resolve (what a request matches, what
did-you-mean offers) and retarget (which GPU a ported job ran on).

A whole GPU goes by its model (``h100``) or its gres name where the profile gives one; a MIG
instance by its gres (``nvidia_h100_80gb_hbm3_1g.10gb``), ``MODEL_PROFILE`` (``h100_1g.10gb``)
or its bare profile (``1g.10gb``), the last accepted but not suggested. Either also goes by the
synonyms the site documents (Nibi's ``h100_80gb``, ``h100_10gb``): read, never suggested, and
written in the site's own spelling (``synonym_note`` says so).
"""

from __future__ import annotations

import re
from typing import List, Tuple

#: a job step's GPU request in a line that runs srun (``srun --gres=gpu:1``, ``--gres=gpu:p100:1``):
#: group 1 the type, where named, group 2 the count
STEP_GRES = re.compile(r"(?<=\s)--gres[= ]gpu:(?:([A-Za-z][\w.-]*):)?(\d+)(?=\s|$)")


def whole_gpu_names(gpus) -> Tuple[str, ...]:
    """The names of a node type's whole GPUs (profiles.Gpus): model, its gres where set, and the
    names old scripts gave them (aliases), so that those scripts still read."""
    return (gpus.model, sbatch_gpu_name(gpus), *getattr(gpus, "aliases", ()), *getattr(gpus, "synonyms", ()))


def sbatch_gpu_name(gpus) -> str:
    """How #SBATCH --gpus-per-node names a whole GPU: its gres where the profile gives one, else its model."""
    return gpus.gres or gpus.model


def mig_names(gpus, mig) -> Tuple[str, ...]:
    """The names of one MIG instance of ``gpus``: gres, MODEL_PROFILE, the bare profile, and the
    synonyms the site documents."""
    return (mig.gres, f"{gpus.model}_{mig.profile}", mig.profile, *getattr(mig, "synonyms", ()))


def synonym_note(site: str, written: str, gpus, mig=None) -> str:
    """What a spec that names a GPU by one of the site's documented synonyms is told, or "" for
    any other name: the script says the site's own spelling, and the user should know it."""
    named = mig if mig is not None else gpus
    if written not in getattr(named, "synonyms", ()):
        return ""
    spelling = mig.gres if mig is not None else sbatch_gpu_name(gpus)
    sources = getattr(named, "source", ()) or getattr(gpus, "source", ())
    cited = f" (source: {sources[0]})" if sources else ""
    return f"{written!r} is {site}'s documented name for {spelling}; slurmkit writes {spelling}{cited}"


def suggested_gpu_names(profile) -> List[str]:
    """Every name a spec may write for ``profile``'s GPUs, as messages list them (no bare MIG profile)."""
    names: List[str] = []
    for node_type in profile.node_types:
        if node_type.gpus:
            names += (node_type.gpus.model, sbatch_gpu_name(node_type.gpus))   # an old alias is read, not suggested
            for mig in node_type.gpus.mig:
                names += mig_names(node_type.gpus, mig)[:2]
    return list(dict.fromkeys(n for n in names if n))


#: NVIDIA compute capability of each GPU model the bundled profiles name, from NVIDIA's CUDA GPUs
#: page (https://developer.nvidia.com/cuda-gpus): Tesla P100 6.0, V100 7.0, T4 7.5, A100 8.0,
#: RTX A5000 8.6, H100 9.0. p100l and v100l are Cedar's larger-memory boards of the same chips.
COMPUTE_CAPABILITY = {"p100": (6, 0), "p100l": (6, 0), "v100": (7, 0), "v100l": (7, 0), "t4": (7, 5),
                      "a100": (8, 0), "a5000": (8, 6), "h100": (9, 0)}
#: bf16 arithmetic came with compute capability 8.0 (Ampere): PyTorch's
#: torch.cuda.is_bf16_supported(including_emulation=False) is true from a device's major 8 on;
#: below it bf16 is emulated (slow) or refused.
BF16_CAPABILITY = (8, 0)


def has_bf16(gpus) -> bool:
    """Whether a node type's GPUs (profiles.Gpus) do bf16 arithmetic; a model the table does not
    know (another vendor's, a user's own profile) is taken to, so that it is not warned about."""
    capability = COMPUTE_CAPABILITY.get(gpus.model.lower()) if gpus.vendor == "nvidia" else None
    return capability is None or capability >= BF16_CAPABILITY


def capability_text(model: str) -> str:
    major, minor = COMPUTE_CAPABILITY[model.lower()]
    return f"{major}.{minor}"


def bf16_warnings(node_types) -> List[str]:
    """One message if any node type the job may land on has GPUs without bf16: PyTorch then
    emulates it slowly or refuses it, and Accelerate's bf16 autocast is no faster than fp32."""
    lacking = list(dict.fromkeys(t.gpus.model for t in node_types if t.gpus and not has_bf16(t.gpus)))
    if not lacking:
        return []
    which = ", ".join(f"{m} ({capability_text(m)})" for m in lacking)
    return [f"bf16 needs NVIDIA compute capability {BF16_CAPABILITY[0]}.{BF16_CAPABILITY[1]} or later (Ampere); this job "
            f"may run on {which}: no bf16 arithmetic there; use fp16, or ask for a GPU with bf16 (A100, H100)"]


def _srun_lines(text: str) -> List[str]:
    return [line for line in text.splitlines() if re.search(r"(^|[\s;&|(])srun\s", line)]


def untyped_step_gres(text: str) -> List[str]:
    """The GPU requests of job steps in ``text`` that name no GPU type (``srun --gres=gpu:1``).
    Under a header that names one (``--gpus-per-node=h100:2``) Slurm refuses such a step:
    "Invalid GRES specification (with and without type identification)" (Slurm 22.05, run)."""
    return [m.group(0) for line in _srun_lines(text) for m in STEP_GRES.finditer(line) if not m.group(1)]


def typed_step_gres(text: str, name: str) -> str:
    """``text`` with each job step's GPU request naming ``name``, the type the job's header asks
    (``--gres=gpu:1`` and ``--gres=gpu:p100:1`` -> ``--gres=gpu:h100:1``): under a typed header
    an untyped step is refused, and an old type is not on the new cluster."""
    lines = text.split("\n")
    return "\n".join(STEP_GRES.sub(lambda m: f"--gres=gpu:{name}:{m.group(2)}", line) if _srun_lines(line) else line
                     for line in lines)
