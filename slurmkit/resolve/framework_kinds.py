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

``accelerate``: srun starts one task per process, as for ddp (each on its own cores, with RANK,
LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), and runs the command itself: Accelerate's docs
say `accelerate launch` is not required under a launcher such as torchrun that sets these
(https://huggingface.co/docs/accelerate/basic_tutorials/launch), and its launch settings reach the
Accelerator as the variables `accelerate launch` would export (accelerate_environment).
"""

from __future__ import annotations

from typing import Optional, Tuple

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


def accelerate_environment(mixed_precision: Optional[str]) -> Tuple[Tuple[str, str], ...]:
    """What ``accelerate launch --multi_gpu`` itself exports to its processes for these settings
    (accelerate/utils/launch.py, prepare_multi_gpu_env): the Accelerator reads them from the
    environment, so srun's tasks, which set the torch.distributed variables, need no launcher.
    DynamoBackend's values are upper case ("NO")."""
    return (("ACCELERATE_MIXED_PRECISION", mixed_precision or DEFAULT_MIXED_PRECISION),
            ("ACCELERATE_DYNAMO_BACKEND", "NO"))


#: the framework a package in a venv's requirements brings.
PACKAGE_FRAMEWORKS = {"torch": "pytorch", "tensorflow": "tensorflow", "tensorflow-cpu": "tensorflow"}


def package_name(requirement: str) -> str:
    """``torch==2.3.0`` -> ``torch``: the name before any version, extra or marker."""
    name = requirement.strip()
    for stop in "<>=!~[; @":
        name = name.split(stop, 1)[0]
    return name.lower().replace("_", "-")
