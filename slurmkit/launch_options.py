"""The options of the launchers people write in their scripts (srun, mpirun/mpiexec, torchrun,
horovodrun), with how many values each takes, so that ``import`` finds where the program starts.

Without the arity, ``mpirun -np 4 -mca pml ob1 python t.py`` reads as the program ``ob1``. Each
option also says what import does with it: slurmkit derives counts and binding itself, an
environment option becomes a variable, a transport override is dropped with a note.
Sources: srun(1) and mpirun(1) of Slurm 22.05 / Open MPI 4.1, Intel MPI's mpiexec.hydra reference,
``torchrun --help`` (PyTorch 2.x), ``horovodrun --help`` (0.28).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .records import Record

#: what an option is for -> what import does with it, and why (the note the user reads)
ACTIONS = {
    "counts": "slurmkit starts one task per slot of the allocation: counts come from the #SBATCH request",
    "binding": "slurmkit derives binding and mapping from the request",
    "hosts": "SLURM gives the launcher the job's nodes",
    "transport": "the site's MPI chooses the transport (a forced pml/btl breaks on the new fabric); "
                 "set it as an OMPI_MCA_ variable if you still need it",
    "rendezvous": "slurmkit sets the rendezvous (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE) for the distributed kinds",
    "environment": "the value becomes environment.variables",
    "exported": "jobs pass the submitting environment to every task",
    "cosmetic": "output labelling only",
    "mpi": "the profile names the MPI plugin srun uses",
}


class Option(Record):
    arity: int          # values after the option word (0 for a flag; --opt=value is always one word)
    action: str         # a key of ACTIONS, or "unknown"


def _table(action: str, arity: int, *names: str) -> Dict[str, Option]:
    return {name: Option(arity, action) for name in names}


SRUN = {
    **_table("counts", 1, "-n", "--ntasks", "-N", "--nodes", "--ntasks-per-node", "-c", "--cpus-per-task",
             "--gpus-per-task", "--gpus", "-G", "--gres", "--gpus-per-node", "--mem", "--mem-per-cpu", "--mem-per-gpu",
             "--cpus-per-gpu", "--ntasks-per-socket", "--ntasks-per-core"),
    **_table("binding", 1, "--cpu-bind", "--cpu_bind", "-m", "--distribution", "--hint", "--gpu-bind", "--mem-bind"),
    **_table("binding", 0, "--exclusive", "--overlap", "--exact"),
    **_table("hosts", 1, "-w", "--nodelist", "-x", "--exclude", "-r", "--relative"),
    **_table("mpi", 1, "--mpi"),
    **_table("exported", 1, "--export"),
    **_table("cosmetic", 0, "-l", "--label", "-u", "--unbuffered", "-v", "--verbose", "-Q", "--quiet",
             "-K", "--kill-on-bad-exit"),
    **_table("cosmetic", 1, "-J", "--job-name", "-W", "--wait"),
}
MPIRUN = {
    **_table("counts", 1, "-np", "-n", "-c", "--np", "--n"),
    **_table("binding", 1, "-npernode", "--npernode", "-ppn", "-perhost", "-N", "--map-by", "-map-by", "--bind-to",
             "-bind-to", "--rank-by", "-rank-by", "-cpus-per-proc", "--cpus-per-proc", "-cpus-per-rank",
             "--cpus-per-rank", "-npersocket", "--npersocket", "-binding"),
    **_table("binding", 0, "--report-bindings", "-report-bindings", "-bind-to-core", "--bind-to-core",
             "-bind-to-socket", "--bind-to-socket", "-bynode", "--bynode", "-byslot", "--byslot", "-bysocket",
             "--bysocket", "--oversubscribe", "-oversubscribe", "--use-hwthread-cpus", "-use-hwthread-cpus"),
    **_table("hosts", 1, "-H", "-host", "--host", "-hostfile", "--hostfile", "-machinefile", "--machinefile",
             "-f", "-hosts", "--prefix", "-prefix"),
    **_table("transport", 2, "-mca", "--mca", "-gmca", "--gmca"),
    **_table("transport", 1, "-iface"),
    **_table("environment", 1, "-x"),
    **_table("environment", 2, "-genv", "-env"),
    **_table("exported", 0, "-genvall", "-envall"),
    **_table("cosmetic", 0, "--tag-output", "-tag-output", "--timestamp-output", "-timestamp-output", "-v",
             "--verbose", "-q", "--quiet", "-l", "-prepend-rank", "--display-map", "-display-map",
             "--display-allocation", "-display-allocation"),
    **_table("cosmetic", 1, "--output-filename", "-output-filename"),
}
TORCHRUN = {
    **_table("rendezvous", 1, "--nproc_per_node", "--nproc-per-node", "--nnodes", "--node_rank", "--node-rank",
             "--master_addr", "--master-addr", "--master_port", "--master-port", "--rdzv_backend", "--rdzv-backend",
             "--rdzv_endpoint", "--rdzv-endpoint", "--rdzv_id", "--rdzv-id", "--rdzv_conf", "--rdzv-conf",
             "--max_restarts", "--max-restarts", "--monitor_interval", "--monitor-interval", "--local_addr",
             "--local-addr", "--role", "--start_method", "--start-method", "--log_dir", "--log-dir",
             "--redirects", "-r", "--tee", "-t"),
    **_table("rendezvous", 0, "--standalone", "--no_python", "--no-python", "--use_env", "--use-env",
             "--module", "-m"),
}
HOROVODRUN = {
    **_table("counts", 1, "-np", "--num-proc"),
    **_table("hosts", 1, "-H", "--hosts", "--hostfile", "-hostfile", "-p", "--ssh-port", "--network-interface"),
    **_table("transport", 0, "--gloo", "--mpi", "--jsm"),
    **_table("cosmetic", 0, "--verbose", "--disable-cache"),
    **_table("cosmetic", 1, "--log-level", "--output-filename"),
}
LAUNCHERS = {"srun": SRUN, "mpirun": MPIRUN, "mpiexec": MPIRUN, "mpiexec.hydra": MPIRUN, "torchrun": TORCHRUN,
             "horovodrun": HOROVODRUN}
#: srun reads a short option's value glued to it (-n4); the MPI launchers do not.
GLUED_SHORT = {"srun"}
#: `python -m torch.distributed.launch|run` is torchrun under another name.
TORCH_MODULES = ("torch.distributed.launch", "torch.distributed.run")


class Parsed(Record):
    launcher: Optional[str]                      # srun | mpirun | torchrun | horovodrun | None (no launcher)
    options: Tuple[Tuple[str, Tuple[str, ...], str], ...]   # (option, its values, action)
    program: Tuple[str, ...]                     # the command the launcher starts


def parse(words: List[str]) -> Parsed:
    """Split a launch line's words into its launcher, the launcher's options and the program."""
    name = words[0].rsplit("/", 1)[-1] if words else ""
    if name.startswith("python") and len(words) > 2 and words[1] == "-m" and words[2] in TORCH_MODULES:
        name, words = "torchrun", ["torchrun", *words[3:]]
    table = LAUNCHERS.get(name)
    if table is None:
        return Parsed(None, (), tuple(words))
    options, index = [], 1
    while index < len(words) and words[index].startswith("-") and words[index] != "--":
        option, values, index = _one_option(name, table, words, index)
        options.append((option, values, table[option].action if option in table else "unknown"))
    if index < len(words) and words[index] == "--":
        index += 1
    launcher = "mpirun" if name.startswith("mpiexec") else name
    return Parsed(launcher, tuple(options), tuple(words[index:]))


def _one_option(name: str, table: Dict[str, Option], words: List[str], index: int):
    word = words[index]
    option, equals, value = word.partition("=")
    if equals and option in table:
        return option, (value,), index + 1
    if option in table:
        arity = table[option].arity
        return option, tuple(words[index + 1:index + 1 + arity]), index + 1 + arity
    if name in GLUED_SHORT and len(word) > 2 and word[:2] in table and not word.startswith("--"):
        return word[:2], (word[2:],), index + 1
    return word, (), index + 1   # unknown: taken as a flag, and reported
