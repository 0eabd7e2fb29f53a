"""The GPU sampler every GPU job runs, so that ``slurmkit report`` can say how each GPU was used:
what resolve() decides about it.

The script formats it (templates/base.sbatch.j2); the files it writes, and how the report reads
them, are fixed in the contract (docs/job-spec.md, "monitor"): ``<key>.gpu.<host>.csv`` in the
job's log folder, one line per GPU per sample, and ``<key>.gpu.<host>.state`` when it stops.
"""

from typing import Optional

from slurmkit.core.plan import GpuSamplerPlan

#: about this many samples over the time limit, at least 1 s and at most 60 s apart.
SAMPLES = 300
MIN_INTERVAL_S = 1
MAX_INTERVAL_S = 60


def interval_s(limit_s: int) -> int:
    """Seconds between samples: a few hundred over the limit, never below 1 s (nvidia-smi's own
    floor for -l), never above a minute (a short burst of use must still show)."""
    return max(MIN_INTERVAL_S, min(MAX_INTERVAL_S, limit_s // SAMPLES))


def sampler_plan(spec, gpus, chain) -> Optional[GpuSamplerPlan]:
    """The sampler for a job with GPUs, unless the spec says ``monitor: {gpu: false}``.

    AMD node types (the profile's ``gpus.vendor: amd``, Nibi's MI300A) have no nvidia-smi: the
    script reads rocm-smi there and writes the same CSV layout."""
    if gpus is None or spec.monitor.gpu is False:
        return None
    limit_s = chain.link_time_s if chain else spec.resources.time_s
    # Only where every node the job may get is AMD: a request for any model may land on either
    # (Nibi's "2"), and there nvidia-smi is the likelier tool; on an AMD node it says unavailable.
    amd = bool(gpus.node_types) and all(t.gpus and t.gpus.vendor == "amd" for t in gpus.node_types)
    return GpuSamplerPlan(tool="rocm-smi" if amd else "nvidia-smi", interval_s=interval_s(limit_s),
                          per_node=spec.resources.nodes > 1)
