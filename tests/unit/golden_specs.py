"""The job specs behind tests/golden/: one per job kind, fitted to each bundled profile.

They are written the way a user of that cluster would write them (its GPU model, whole nodes
where the site schedules whole nodes) so that every golden script is one a user could get.
A command that reads from $SLURM_TMPDIR has what it reads staged there (on every node), as
`slurmkit check` asks (tests/unit/test_reads.py holds them to it); the simple jobs (serial,
threaded) read their small input where it is, in the spec's folder, and stage nothing.
"""

from slurmkit.core.gpu_names import has_bf16
from slurmkit.core.kinds import KINDS as KIND_ROWS

KINDS = ("serial", "threaded", "mpi", "gpu", "array", "many-tasks", "multigpu", "ddp", "tf-multiworker", "horovod",
         "lightning", "accelerate")
GPU_KINDS = ("gpu", "multigpu", "ddp", "tf-multiworker", "horovod", "lightning", "accelerate")


def spec_for(profile, kind: str) -> dict:
    whole = profile.scheduling.whole_node
    whole_cores = whole.cores if whole and whole.cores else None
    cpu_cores = max(t.cores for t in profile.node_types if not t.gpus) if any(not t.gpus for t in profile.node_types) else 1
    resources = {"time": "3h"}
    # GPU jobs say neither cores nor memory: they get the site's bundle per GPU (sizing.py),
    # which the GPU's charge covers; 2G would starve a PyTorch or TensorFlow process.
    if profile.scheduling.mem_request is not False and kind not in GPU_KINDS:
        resources["mem"] = "2G"
    spec = {"name": f"{kind}-demo", "profile": profile.name, "account": "def-someprof", "kind": kind,
            "resources": resources, "launch": {"command": "python main.py --input data.csv --tag 'run 1'"}}
    if kind == "threaded":
        resources["cpus_per_task"] = whole_cores or min(8, cpu_cores)
    elif kind == "mpi":   # ranks by count (--ntasks) unless the site gives whole nodes (Advanced MPI scheduling)
        resources["nodes"] = 2 if whole_cores else 1
        if not whole_cores:
            resources["tasks_per_node"] = min(8, cpu_cores)
            if "mem" in resources:   # 2G for each rank, as the Alliance's MPI example asks per core
                resources["mem_per_cpu"] = resources.pop("mem")
        if profile.software.module_system == "lmod":
            spec["environment"] = {"modules": [profile.software.modules.get("openmpi", "openmpi")]}
        spec["stage"] = {"inputs": [{"from": "mesh", "to": "mesh"}, {"from": "tables.sqfs", "to": "tables"}]}
        spec["launch"] = {"command": "./simulate --steps 1000 --mesh $SLURM_TMPDIR/mesh --tables $SLURM_TMPDIR/tables"}
    elif kind == "gpu":
        models = profile.gpu_models
        count = min(whole.gpu_counts) if whole and whole.gpu_counts else 1
        resources["gpus"] = f"{models[0]}:{count}" if models else "1"
        spec["environment"] = {"venv": {"requirements": "requirements.txt"}}
        spec["stage"] = {"inputs": [{"from": "data.tar.zst", "to": "data"}], "outputs": [{"from": "runs", "to": "results/runs"}],
                         "checkpoint": {"from": "ckpt", "to": "checkpoints", "every": "30m"}}
        spec["launch"] = {"command": "python train.py --epochs 10 --data $SLURM_TMPDIR/data --out $SLURM_TMPDIR/runs "
                                     "--checkpoint $SLURM_TMPDIR/ckpt"}
    elif kind in ("multigpu", "ddp", "tf-multiworker", "horovod", "lightning", "accelerate"):
        models = profile.gpu_models
        most = max((t.gpus.count for t in profile.node_types if t.gpus), default=2)
        # Two nodes only past what one node holds: a node's GPUs talk over NVLink, nodes over the network.
        count = max(whole.gpu_counts) if whole and whole.gpu_counts else (min(most, 2) if kind == "multigpu" else most)
        resources["gpus"] = f"{models[0]}:{count}" if models else str(count)
        resources["nodes"] = 1 if kind == "multigpu" else 2
        framework = "tensorflow" if kind == "tf-multiworker" else "pytorch"
        spec["environment"] = {"venv": {"packages": ["tensorflow" if framework == "tensorflow" else "torch",
                                                     *KIND_ROWS[kind].needs_one_of[:1]]}}   # lightning, accelerate
        spec["launch"] = {"command": "python train.py --epochs 10 --data $SLURM_TMPDIR/data", "batch_size": 128}
        if kind == "accelerate":   # bf16 where the GPU does it (A100, H100); fp16 on a P100 or V100 (gpu_names.has_bf16)
            first = next((t.gpus for t in profile.node_types if t.gpus), None)
            spec["launch"]["mixed_precision"] = "bf16" if first is None or has_bf16(first) else "fp16"
        if kind == "multigpu":
            spec["stage"] = {"inputs": [{"from": "imagenet.sqfs", "to": "data"}]}
        else:   # on each of the nodes: $SLURM_TMPDIR is every node's own disk
            spec["stage"] = {"inputs": [{"from": "data.tar", "to": "data"}]}
        if kind == "tf-multiworker" and profile.software.module_system == "lmod" and not profile.software.modules.get("cuda"):
            # TensorFlow loads cuda; where the profile names no version, the user pins one (check
            # warns otherwise): cuda/12.6, the version StdEnv/2023's Trillium and VASP pages load.
            spec["environment"]["modules"] = ["cuda/12.6"]
        if kind == "horovod":   # srun, the site's launcher; the resolver loads the MPI, cuda and nccl modules the profile names
            spec["environment"]["builds"] = ["horovod"]
            software = profile.software
            if software.module_system == "lmod" and not (software.modules.get("cuda") and software.modules.get("nccl")):
                # Only what the profile does not name: its own cuda (Trillium's cuda/12.6) stays.
                # cuda/12.6 and nccl/2.26.2: loaded together under StdEnv/2023 on the VASP page, and
                # both in the catalogue that check and port hold module versions to.
                spec["environment"]["modules"] = [family for family in ("cuda/12.6", "nccl/2.26.2")
                                                  if not software.modules.get(family.split("/")[0])]
    elif kind == "many-tasks":   # the GNU Parallel page's parameter sweep: 2G per core, a tab-separated argument file
        if not whole_cores:
            any_cores = max((t.cores for t in profile.node_types), default=8)
            resources["tasks_per_node"] = min(32, cpu_cores if cpu_cores > 1 else any_cores)
        if resources.pop("mem", None):   # 2G a core, or a core's share of the smallest node
            share = min((t.memory_mib // t.cores for t in profile.node_types), default=2048)
            resources["mem_per_cpu"] = "2G" if share >= 2048 else f"{share}M"
        spec["tasks"] = {"arguments": "params.txt", "separator": "\t"}
        spec["launch"] = {"command": "python simulate.py --alpha {1} --beta {2} --out results/{1}-{2}.json"}
    elif kind == "array":
        spec["array"] = {"parameters": {"lr": ["0.1", "0.01"], "seed": [1, 2, 3]}, "throttle": 2}
        spec["launch"] = {"command": "python main.py --lr $lr --seed $seed"}
    return spec
