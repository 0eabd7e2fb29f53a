"""Every environment variable a rendered script sets, the program that reads it, and where
that program documents the name.

A variable that no program reads does nothing, and one meant for another program misleads
whoever copies the script: the Alliance PyTorch page's ``TORCH_NCCL_ASYNC_HANDLING`` is a
typo that PyTorch never reads, and ``NCCL_BLOCKING_WAIT`` means nothing to TensorFlow. So
slurmkit sets only names in this table (tests/unit/test_variable_sources.py holds every
rendered script to it), and ``slurmkit import`` names the right variable for known typos.
A site profile's ``launch.env`` carries its own source URL beside the value.
"""

from __future__ import annotations

from typing import Dict

from slurmkit.core.records import Record


class Reader(Record):
    program: str        # who reads it: "openmp", "pytorch", "tensorflow", ...
    source: str         # where that program documents (or reads) the name


_OPENMP = "https://www.openmp.org/spec-html/5.0/openmpch6.html"
_MKL = "https://www.intel.com/content/www/us/en/docs/onemkl/developer-guide-linux/2024-2/onemkl-specific-env-vars-for-openmp-thread-ctrl.html"
_INTEL_TF = "https://www.intel.com/content/www/us/en/developer/articles/guide/guide-to-tensorflow-runtime-optimizations-for-cpu.html"
_TF_THREADS = "https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/common_runtime/process_util.cc"
_TORCH_DIST = "https://pytorch.org/docs/stable/distributed.html#environment-variable-initialization"
_TORCHRUN = "https://pytorch.org/docs/stable/elastic/run.html#environment-variables"
_TORCH_NCCL = "https://pytorch.org/docs/stable/torch_nccl_environment_variables.html"
_INTEL_MPI = "https://www.intel.com/content/www/us/en/docs/mpi-library/developer-reference-linux/2021-13/interoperability-with-openmp-api.html"
_MVAPICH2 = "http://mvapich.cse.ohio-state.edu/static/media/mvapich/mvapich2-2.3b-userguide.html"

#: name -> who reads it. Template-set names (the rendezvous, each rank's place) are here too.
READERS: Dict[str, Reader] = {
    "OMP_NUM_THREADS": Reader("openmp", _OPENMP),
    # the accelerate kind's own launch line reads it, in each node's task: --num_processes="$NUM_PROCESSES"
    "NUM_PROCESSES": Reader("accelerate", "https://huggingface.co/docs/accelerate/package_reference/cli#accelerate-launch"),
    # what `accelerate launch --multi_gpu` sets for its processes (utils/launch.py, prepare_multi_gpu_env);
    # the Accelerator reads them: the kind starts its ranks with srun and sets them itself
    "ACCELERATE_MIXED_PRECISION": Reader("accelerate", "https://huggingface.co/docs/accelerate/basic_tutorials/launch"),
    "ACCELERATE_DYNAMO_BACKEND": Reader("accelerate", "https://huggingface.co/docs/accelerate/basic_tutorials/launch"),
    "OMP_PLACES": Reader("openmp", _OPENMP),
    "OMP_PROC_BIND": Reader("openmp", _OPENMP),
    "MKL_NUM_THREADS": Reader("mkl", _MKL),
    "KMP_BLOCKTIME": Reader("intel-openmp", _INTEL_TF),
    "KMP_AFFINITY": Reader("intel-openmp", _INTEL_TF),
    "CUDA_VISIBLE_DEVICES": Reader("cuda", "https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html"),
    "PYTHONUNBUFFERED": Reader("python", "https://docs.python.org/3/using/cmdline.html#envvar-PYTHONUNBUFFERED"),
    "TF_NUM_INTRAOP_THREADS": Reader("tensorflow", _TF_THREADS),
    "TF_NUM_INTEROP_THREADS": Reader("tensorflow", _TF_THREADS),
    # XLA reads its flags from XLA_FLAGS (https://openxla.org/xla/flags_guidance); the Alliance
    # TensorFlow page sets --xla_gpu_cuda_data_dir=$CUDA_HOME after loading cuda.
    "XLA_FLAGS": Reader("tensorflow", "https://docs.alliancecan.ca/wiki/TensorFlow/en"),
    "TF_CONFIG": Reader("tensorflow", "https://www.tensorflow.org/guide/distributed_training#setting_up_the_tf_config_environment_variable"),
    "MASTER_ADDR": Reader("pytorch", _TORCH_DIST),
    "MASTER_PORT": Reader("pytorch", _TORCH_DIST),
    "RANK": Reader("pytorch", _TORCH_DIST),
    "WORLD_SIZE": Reader("pytorch", _TORCH_DIST),
    "LOCAL_RANK": Reader("pytorch", _TORCHRUN),
    "LOCAL_WORLD_SIZE": Reader("pytorch", _TORCHRUN),
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": Reader("pytorch", _TORCH_NCCL),
    "I_MPI_PIN": Reader("intel-mpi", "https://www.intel.com/content/www/us/en/docs/mpi-library/developer-reference-linux/2021-13/environment-variables-for-process-pinning.html"),
    "I_MPI_PIN_DOMAIN": Reader("intel-mpi", _INTEL_MPI),
    "I_MPI_DEBUG": Reader("intel-mpi", "https://www.intel.com/content/www/us/en/docs/mpi-library/developer-reference-linux/2021-13/other-environment-variables.html"),
    "MV2_ENABLE_AFFINITY": Reader("mvapich2", _MVAPICH2),
    "MV2_CPU_BINDING_POLICY": Reader("mvapich2", _MVAPICH2),
    "MV2_HYBRID_BINDING_POLICY": Reader("mvapich2", _MVAPICH2),
    "MV2_THREADS_PER_PROCESS": Reader("mvapich2", _MVAPICH2),
    "MV2_SHOW_CPU_BINDING": Reader("mvapich2", _MVAPICH2),
    "UCX_NET_DEVICES": Reader("ucx", "https://docs.open-mpi.org/en/v5.0.0/tuning-apps/networking/ib-and-roce.html"),
    # The script's own GPU sampler reads it (its -l, nvidia-smi's loop in seconds); the report
    # finds it again in the .state line (docs/job-spec.md "monitor").
    "SLURMKIT_GPU_SAMPLE_INTERVAL": Reader("nvidia-smi (slurmkit's GPU sampler)", "https://docs.nvidia.com/deploy/nvidia-smi/index.html"),
}

#: Names that look right and do nothing, copied from pages users trust: name -> what to use.
NO_OP_TYPOS: Dict[str, str] = {
    # The Alliance PyTorch page's typo; PyTorch reads TORCH_NCCL_ASYNC_ERROR_HANDLING (_TORCH_NCCL).
    "TORCH_NCCL_ASYNC_HANDLING": "TORCH_NCCL_ASYNC_ERROR_HANDLING",
}


def typo_note(name: str) -> str:
    """Why ``name`` does nothing and what to write instead, or "" when it is no known typo."""
    right = NO_OP_TYPOS.get(name)
    if not right:
        return ""
    return (f"{name} is not read by {READERS[right].program} (a typo copied from the Alliance PyTorch page): "
            f"it does nothing; the variable is {right} ({READERS[right].source})")


#: Every name the runtime library (render/runtime.sh) assigns or loops over, beyond its own
#: ``_sk_*``: a name the script chooses for the user's data stays clear of these
#: (tests/unit/test_array_names.py reads runtime.sh and holds this set to it).
RUNTIME_NAMES = frozenset({
    "CUDA_VISIBLE_DEVICES", "IFS", "LC_ALL", "MASTER_ADDR", "MASTER_PORT", "NAME", "SLURMKIT_CHECKPOINT_COMPLETE",
    "SLURMKIT_GPU_SAMPLE_INTERVAL", "SLURMKIT_GPU_TOOL", "SLURMKIT_TASK_ENV", "action", "all", "allowed", "archives",
    "b", "base", "before", "by", "cache", "check", "copy", "cores", "count", "cpu", "cpu_list", "cpus", "days", "destinations",
    "dir", "disable", "entry", "exports", "fewest", "file", "folder", "g", "got", "gpu", "gpus", "h", "home", "host", "hosts",
    "inputs", "interval", "joblogs", "kept", "key", "left", "line", "log", "m", "marker", "name", "newer", "node",
    "node_tasks", "nodes", "now", "options", "other", "partial", "pgid", "profile", "range", "ranges", "rank", "rc",
    "requirement", "requires", "s", "setrpaths", "share", "shell", "smi", "source", "stale", "stat", "step", "stop",
    "tarball", "target", "the", "top", "topology", "try", "ts", "want", "why", "with", "word", "workers",
    # slurmkit_horovod_wheel's and the GPU sampler's (the HOROVOD_* build switches are exported to the build)
    "HOROVOD_CPU_OPERATIONS", "HOROVOD_GPU_OPERATIONS", "HOROVOD_WITHOUT_GLOO", "HOROVOD_WITHOUT_MXNET", "HOROVOD_WITH_MPI",
    "framework", "frameworks", "horovod", "index", "limit", "module", "nccl", "site", "variables", "version",
})
