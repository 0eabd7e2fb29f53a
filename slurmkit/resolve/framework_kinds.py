"""What the framework launcher kinds add to a plan: PyTorch Lightning and Hugging Face Accelerate.

``lightning``: srun starts one task per GPU on every node (``--ntasks-per-node`` = GPUs per
node); Lightning's SLURMEnvironment reads the ranks from SLURM itself and MASTER_ADDR/
MASTER_PORT from the environment ("You can configure the main_address and main_port properties
via the env variables MASTER_ADDR and MASTER_PORT", https://lightning.ai/docs/pytorch/stable/
api/lightning.pytorch.plugins.environments.SLURMEnvironment.html). Its auto-requeue: on
SIGUSR1 every rank saves ``hpc_ckpt_<n>.ckpt`` in the trainer's default_root_dir and rank 0
runs ``scontrol requeue $SLURM_JOB_ID``; the next run of the same job id resumes from it
(read in pytorch_lightning 2.6.6: trainer/connectors/signal_connector.py, _slurm_sigusr_handler_fn;
Lightning's cluster page, https://lightning.ai/docs/pytorch/stable/clouds/cluster_advanced.html,
asks ``#SBATCH --signal=SIGUSR1@90`` for it). Lightning installs its handler only where the
program has none for SIGUSR1 (signal_connector.py: ``not self._has_already_handler(sigusr)``).
Lightning's page writes the signal without ``B:``, which
(sbatch(1): "By default all job steps will be signaled, but not the batch shell itself")
signals the srun step's tasks and leaves the batch shell unaware that a requeue is coming: its
TERM trap would then write exit code 143, and `slurmkit status` would call a requeued job
failed. So slurmkit asks ``--signal=B:USR1@LEAD`` (the batch shell only) and the batch shell
passes the signal on to srun, which relays it to every task ("Signals sent to the srun command
are automatically forwarded to the tasks it is controlling", srun(1)): every rank gets it as
Lightning expects, and the batch shell knows that the TERM that follows is the requeue.
``--requeue`` makes the job requeueable whatever the site's JobRequeue default, and
``--open-mode=append`` keeps the first run's log (the save, the requeue) in front of the next's.

``accelerate``: srun starts one task per node, each runs ``accelerate launch`` with the job's
totals, its node's rank (SLURM_NODEID, read inside the task) and the rendezvous the ddp kind
uses (first host, port from the job id). Its processes per node are the job's tasks per node
(GPUs per node on GPUs), so the #SBATCH header says how many processes run, as for ddp.
"""

from __future__ import annotations

from typing import Optional, Tuple

from slurmkit.core.plan import FromSlurm

#: Lightning's documented lead (the cluster page's ``--signal=SIGUSR1@90``), in seconds.
REQUEUE_LEAD_S = 90
#: job names under which Lightning takes the job for an interactive session and ignores SLURM
#: (lightning_fabric/plugins/environments/slurm.py, _is_slurm_interactive_mode): no ranks from
#: SLURM, no requeue on SIGUSR1.
LIGHTNING_INTERACTIVE_NAMES = ("bash", "interactive")
#: Mixed precision for ``accelerate launch`` when the spec gives none: Accelerate's own default,
#: so that slurmkit does not change the numerics a script was written for (bf16 is one word away).
DEFAULT_MIXED_PRECISION = "no"


def requeue_lead(time_s: int, asked: Optional[int] = None) -> int:
    """Seconds before the limit that Lightning is told to save and requeue: ``asked`` (the spec's
    stage.lead: a large model saved by many ranks to /project can need minutes), else its
    documented 90, or half of a job shorter than three minutes (so that a one-minute test job gets
    it at all: SLURM may send it up to 60 s early, sbatch(1))."""
    return asked if asked is not None else min(REQUEUE_LEAD_S, max(1, time_s // 2))


def requeue_directives(time_s: int, asked: Optional[int] = None) -> Tuple[Tuple[str, str], ...]:
    return (("--signal", f"B:USR1@{requeue_lead(time_s, asked)}"), ("--requeue", ""), ("--open-mode", "append"))


def stage_conflict(kind, stage) -> Optional[Tuple[str, str]]:
    """Lightning's requeue and the copy back before the limit both need the one --signal."""
    if kind.requeues_on_signal and stage is not None and stage.lead_s:
        return ("stage", f"kind {kind.name!r} saves and requeues on the time-limit signal (SIGUSR1), which the copy back of "
                "stage.outputs/stage.checkpoint also needs: write checkpoints and outputs to a shared folder (the trainer's "
                "default_root_dir), not to $SLURM_TMPDIR")
    return None


def accelerate_launch(multi_process: bool, mixed_precision: Optional[str]) -> Tuple[object, ...]:
    """``accelerate launch`` as each node's task runs it: totals from the batch script
    (NUM_PROCESSES, SLURM_NNODES), the node's rank from srun's SLURM_NODEID, the rendezvous
    from MASTER_ADDR/MASTER_PORT; ``--no_python``: the command runs as written (python t.py).
    ``--multi_gpu`` is Accelerate's multi-process launcher (torchrun underneath); on CPU nodes
    ACCELERATE_USE_CPU=true (accelerate_environment) makes its processes use gloo on the CPU."""
    return ("accelerate", "launch", *(("--multi_gpu",) if multi_process else ()),
            FromSlurm('--num_processes="$NUM_PROCESSES"'), FromSlurm('--num_machines="$SLURM_NNODES"'),
            FromSlurm('--machine_rank="$SLURM_NODEID"'), FromSlurm('--main_process_ip="$MASTER_ADDR"'),
            FromSlurm('--main_process_port="$MASTER_PORT"'), f"--mixed_precision={mixed_precision or DEFAULT_MIXED_PRECISION}",
            "--dynamo_backend=no", "--no_python")


def accelerate_environment(gpus) -> Tuple[Tuple[str, str], ...]:
    """On CPU nodes Accelerate must be told: its launcher otherwise takes a machine without CUDA
    for one process (measured: DistributedType.NO on each of 2 processes, accelerate 1.15.0)."""
    return () if gpus else (("ACCELERATE_USE_CPU", "true"),)


#: the framework a package in a venv's requirements brings.
PACKAGE_FRAMEWORKS = {"torch": "pytorch", "tensorflow": "tensorflow", "tensorflow-cpu": "tensorflow"}


def package_name(requirement: str) -> str:
    """``torch==2.3.0`` -> ``torch``: the name before any version, extra or marker."""
    name = requirement.strip()
    for stop in "<>=!~[; @":
        name = name.split(stop, 1)[0]
    return name.lower().replace("_", "-")
