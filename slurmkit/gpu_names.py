"""How a spec may spell a site's GPU: one place for resolve (what a request matches, what
did-you-mean offers) and retarget (which GPU a ported job ran on).

A whole GPU goes by its model (``h100``) or its gres name where the profile gives one; a MIG
instance by its gres (``nvidia_h100_80gb_hbm3_1g.10gb``), ``MODEL_PROFILE`` (``h100_1g.10gb``)
or its bare profile (``1g.10gb``), the last accepted but not suggested.
"""

from __future__ import annotations

from typing import List, Tuple


def whole_gpu_names(gpus) -> Tuple[str, ...]:
    """The names of a node type's whole GPUs (profiles.Gpus): model, and its gres where set."""
    return (gpus.model, sbatch_gpu_name(gpus))


def sbatch_gpu_name(gpus) -> str:
    """How #SBATCH --gpus-per-node names a whole GPU: its gres where the profile gives one, else its model."""
    return gpus.gres or gpus.model


def mig_names(gpus, mig) -> Tuple[str, ...]:
    """The names of one MIG instance of ``gpus``: gres, MODEL_PROFILE, and the bare profile."""
    return (mig.gres, f"{gpus.model}_{mig.profile}", mig.profile)


def suggested_gpu_names(profile) -> List[str]:
    """Every name a spec may write for ``profile``'s GPUs, as messages list them (no bare MIG profile)."""
    names: List[str] = []
    for node_type in profile.node_types:
        if node_type.gpus:
            names += whole_gpu_names(node_type.gpus)
            for mig in node_type.gpus.mig:
                names += mig_names(node_type.gpus, mig)[:2]
    return list(dict.fromkeys(n for n in names if n))
