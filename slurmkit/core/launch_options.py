"""The options of the launchers people write in their scripts (srun, mpirun/mpiexec, torchrun,
horovodrun), with how many values each takes, so that ``import`` finds where the program starts.

Without the arity, ``mpirun -np 4 -mca pml ob1 python t.py`` reads as the program ``ob1``. Each
option also says what import does with it: slurmkit derives counts and binding itself, an
environment option becomes a variable, a transport override is dropped with a note.
Sources: srun(1) and mpirun(1) of Slurm 22.05 / Open MPI 4.1, Intel MPI's mpiexec.hydra reference,
``torchrun --help`` (PyTorch 2.x), ``horovodrun --help`` (0.28), ``accelerate launch``'s parser
(accelerate 1.15.0, accelerate/commands/launch.py: launch_command_parser; its CustomArgumentParser
takes every ``--a_b`` option as ``--a-b`` too, and no abbreviations).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from slurmkit.core.records import Record

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
    "folder": "srun ran the tasks in that folder: add `cd FOLDER` to environment.setup (or start launch.shell with it)",
    "by_hand": "slurmkit does not write this option: if the job needs it, add it by hand (an #SBATCH line of the "
               "same name asks it for the whole job)",
    "output": "srun wrote its tasks' output (or read their input) there; slurmkit's tasks write to the job's log "
              "(%x-%j.out): if something reads that file, redirect the program's output in launch.shell",
}
#: the actions of accelerate's options, which accelerate_import.py reads and gives their reasons
ACCELERATE_READ = ("accelerate_counts", "accelerate_precision", "accelerate_program", "accelerate_cpu", "accelerate_dynamo",
                   "not_carried", "accelerate_rendezvous", "accelerate_multi", "accelerate_gpus", "accelerate_threads",
                   "accelerate_logs")


class Option(Record):
    arity: int          # values after the option word (0 for a flag; --opt=value is always one word)
    action: str         # a key of ACTIONS, one of ACCELERATE_READ, or "unknown"


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
    **_table("output", 1, "-o", "--output", "-e", "--error", "-i", "--input", "--open-mode"),
    **_table("folder", 1, "-D", "--chdir"),
    # the rest of srun(1)'s options (Slurm 22.05) that take a value as the next word: read with
    # their value, so that the program is found after them, each a to-do to carry over by hand
    **_table("by_hand", 1, "-A", "--account", "--acctg-freq", "--bb", "--bbf", "--begin", "--cluster-constraint", "-M",
             "--clusters", "--comment", "-C", "--constraint", "--container", "-S", "--core-spec", "--cores-per-socket",
             "--cpu-freq", "-d", "--dependency", "--deadline", "--delay-boot", "--epilog", "--gid", "--gpu-freq",
             "--gpus-per-socket", "--gres-flags", "--het-group", "--jobid", "-L", "--licenses", "--mail-type", "--mail-user",
             "--mcs-label", "--mincpus", "--network", "--ntasks-per-gpu", "-p", "--partition", "--power", "--prolog", "-q",
             "--qos", "--reservation", "--signal", "--slurmd-debug", "--sockets-per-node", "--switches", "--task-epilog",
             "--task-prolog", "--thread-spec", "--threads-per-core", "-T", "--threads", "-t", "--time", "--time-min", "--tmp",
             "--uid", "--wckey", "-B", "--extra-node-info"),
    **_table("by_hand", 0, "--contiguous", "-H", "--hold", "-O", "--overcommit", "--pty", "--quit-on-interrupt", "--reboot",
             "--spread-job", "--test-only", "--use-min-nodes", "-X", "--disable-status", "-Z", "--no-allocate", "--multi-prog",
             "-k", "--no-kill", "-s", "--oversubscribe", "-E", "--preserve-env"),
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
#: ``accelerate launch``: every option of accelerate 1.15.0's parser, each in both spellings (_both).
_ACCELERATE_NOT_CARRIED = (
    "config_file", "tpu", "use_deepspeed", "use_fsdp", "use_parallelism_config", "use_megatron_lm", "dynamo_use_fullgraph",
    "dynamo_use_dynamic", "dynamo_use_regional_compilation", "max_restarts", "monitor_interval", "tpu_cluster",
    "no_tpu_cluster", "tpu_use_sudo", "vm", "env", "main_training_function", "downcast_bf16", "dynamo_mode",
    "deepspeed_config_file", "zero_stage", "offload_optimizer_device", "offload_param_device", "offload_optimizer_nvme_path",
    "offload_param_nvme_path", "gradient_accumulation_steps", "gradient_clipping", "zero3_init_flag", "zero3_save_16bit_model",
    "deepspeed_hostfile", "deepspeed_exclusion_filter", "deepspeed_inclusion_filter", "deepspeed_multinode_launcher",
    "deepspeed_moe_layer_cls_names", "fsdp_version", "fsdp_offload_params", "fsdp_min_num_params", "fsdp_sharding_strategy",
    "fsdp_reshard_after_forward", "fsdp_auto_wrap_policy", "fsdp_transformer_layer_cls_to_wrap", "fsdp_backward_prefetch",
    "fsdp_state_dict_type", "fsdp_forward_prefetch", "fsdp_use_orig_params", "fsdp_cpu_ram_efficient_loading",
    "fsdp_sync_module_states", "fsdp_activation_checkpointing", "fsdp_activation_checkpointing_offload",
    "megatron_lm_tp_degree", "megatron_lm_use_custom_fsdp", "megatron_lm_no_load_optim", "megatron_lm_eod_mask_loss",
    "megatron_lm_overlap_cpu_optimizer_d2h_h2d", "megatron_lm_no_save_optim", "megatron_lm_optimizer_cpu_offload",
    "megatron_lm_use_precision_aware_optimizer", "megatron_lm_decoder_last_pipeline_num_layers", "megatron_lm_pp_degree",
    "megatron_lm_num_micro_batches", "megatron_lm_sequence_parallelism", "megatron_lm_recompute_activations",
    "megatron_lm_use_distributed_optimizer", "megatron_lm_gradient_clipping", "megatron_lm_recompute_granularity",
    "megatron_lm_recompute_method", "megatron_lm_recompute_num_layers", "megatron_lm_attention_backend",
    "megatron_lm_expert_model_parallel_size", "megatron_lm_context_parallel_size", "megatron_lm_attention_dropout",
    "megatron_lm_hidden_dropout", "megatron_lm_attention_softmax_in_fp32", "megatron_lm_expert_tensor_parallel_size",
    "megatron_lm_calculate_per_token_loss", "megatron_lm_use_rotary_position_embeddings", "fp8_backend",
    "fp8_use_autocast_during_eval", "fp8_margin", "fp8_interval", "fp8_format", "fp8_amax_history_len",
    "fp8_amax_compute_algo", "fp8_override_linear_precision", "fp8_opt_level", "fp8_enable_fsdp_float8_all_gather",
    "fp8_pad_inner_dim", "aws_access_key_id", "aws_secret_access_key", "mpirun_hostfile",
    "parallelism_config_dp_replicate_size", "parallelism_config_dp_shard_size", "parallelism_config_tp_size",
    "parallelism_config_cp_size", "parallelism_config_cp_backend", "parallelism_config_cp_comm_strategy",
    "parallelism_config_sp_size", "parallelism_config_sp_backend", "parallelism_config_sp_seq_length",
    "parallelism_config_sp_seq_length_is_variable", "parallelism_config_sp_attn_implementation")
#: the flags among them (the rest take one value)
_ACCELERATE_FLAGS = {"cpu", "multi_gpu", "tpu", "enable_cpu_affinity", "dynamo_use_fullgraph", "dynamo_use_dynamic",
                     "dynamo_use_regional_compilation", "use_deepspeed", "use_fsdp", "use_parallelism_config", "use_megatron_lm",
                     "same_network", "module", "no_python", "tpu_cluster", "no_tpu_cluster", "tpu_use_sudo", "downcast_bf16",
                     "fp8_use_autocast_during_eval", "debug", "quiet"}


def _both(action: str, *names: str) -> Dict[str, Option]:
    """accelerate's options, each as ``--a_b`` and ``--a-b`` (accelerate's CustomArgumentParser)."""
    table: Dict[str, Option] = {}
    for name in names:
        arity = 0 if name in _ACCELERATE_FLAGS else 1
        table.update(_table(action, arity, f"--{name}", f"--{name.replace('_', '-')}"))
    return table


ACCELERATE = {
    **_both("accelerate_counts", "num_processes", "num_machines"),
    **_both("accelerate_rendezvous", "machine_rank", "main_process_ip", "main_process_port", "same_network",
            "rdzv_backend", "rdzv_conf", "role"),
    **_both("accelerate_multi", "multi_gpu"),
    **_both("accelerate_precision", "mixed_precision"),
    **_both("accelerate_program", "module", "no_python"), **_table("accelerate_program", 0, "-m"),
    **_both("accelerate_cpu", "cpu"),
    **_both("accelerate_dynamo", "dynamo_backend"),
    **_both("accelerate_gpus", "gpu_ids"),
    **_both("accelerate_threads", "num_cpu_threads_per_process"),
    **_both("binding", "enable_cpu_affinity"),
    **_both("accelerate_logs", "quiet", "debug", "tee", "log_dir"), **_table("accelerate_logs", 0, "-q"),
    **_table("accelerate_logs", 1, "-t"),
    **_both("not_carried", *_ACCELERATE_NOT_CARRIED),
}
#: charmrun (Charm++, NAMD's launcher): its options start with + (``++p 80``, ``++ppn 39``, ``+p8``);
#: the program's own + options (``namd2 +setcpuaffinity``) follow the program. Sources: NAMD 3.0's
#: release notes and Charm++'s manual (charmrun's ++ options).
CHARMRUN = {
    **_table("counts", 1, "++p", "+p", "++n", "++np", "++ppn", "+ppn", "++numHosts"),
    **_table("hosts", 1, "++nodelist", "++nodegroup", "++remote-shell", "++runscript", "++mpiexec-no-n", "++server-port"),
    **_table("hosts", 0, "++mpiexec", "++local", "++scalable-start", "++batch"),
    **_table("binding", 1, "+pemap", "+commap"),
    **_table("binding", 0, "+setcpuaffinity"),
    **_table("cosmetic", 0, "++verbose", "++quiet"),
    **_table("cosmetic", 1, "++timeout"),
}
#: GNU Parallel's options (those of the Alliance's GNU Parallel page and more): the ones listed take
#: the next word as their value; the command follows them, then ``:::``/``::::`` and its arguments.
PARALLEL_VALUE_OPTIONS = frozenset((
    "-j", "--jobs", "-P", "--joblog", "--colsep", "-C", "--delay", "--sshdelay", "--workdir", "--wd", "--env",
    "--sshloginfile", "--slf", "-S", "--sshlogin", "--results", "--tmpdir", "--halt", "--timeout", "--memfree", "--load",
    "--retries", "--tagstring", "--block", "--recstart", "--recend", "-a", "--arg-file"))
PARALLEL = _table("tasks", 1, *PARALLEL_VALUE_OPTIONS)
LAUNCHERS = {"srun": SRUN, "mpirun": MPIRUN, "mpiexec": MPIRUN, "mpiexec.hydra": MPIRUN, "torchrun": TORCHRUN,
             "horovodrun": HOROVODRUN, "accelerate": ACCELERATE}
#: every launcher whose program import finds after its options: LAUNCHERS, which import maps onto a
#: spec's launcher, and those it only reads past (charmrun starts its own processes; GNU Parallel
#: runs its command once per argument).
ALL_LAUNCHERS = {**LAUNCHERS, "charmrun": CHARMRUN, "parallel": PARALLEL}
#: launchers whose options start with + rather than -
_PLUS_OPTIONS = frozenset(("charmrun",))
#: launchers that run their program with a Python of their own unless told not to (python_program).
RUN_WITH_PYTHON = frozenset(("torchrun", "accelerate"))
#: srun reads a short option's value glued to it (-n4), as accelerate's argparse does (-t3); the MPI launchers do not.
GLUED_SHORT = {"srun", "accelerate"}
#: `python -m torch.distributed.launch|run` is torchrun under another name.
TORCH_MODULES = ("torch.distributed.launch", "torch.distributed.run")
#: ``accelerate launch`` under its other names: the accelerate-launch script and the module it runs.
ACCELERATE_MODULE = "accelerate.commands.launch"


class Parsed(Record):
    launcher: Optional[str]                      # srun | mpirun | torchrun | horovodrun | accelerate | None (no launcher)
    options: Tuple[Tuple[str, Tuple[str, ...], str], ...]   # (option, its values, action)
    program: Tuple[str, ...]                     # the command the launcher starts


def parse(words: List[str], launchers: Dict[str, Dict[str, Option]] = LAUNCHERS) -> Parsed:
    """Split a launch line's words into its launcher (one of ``launchers``), the launcher's
    options and the program."""
    name = words[0].rsplit("/", 1)[-1] if words else ""
    if name.startswith("python") and len(words) > 2 and words[1] == "-m" and words[2] in TORCH_MODULES:
        name, words = "torchrun", ["torchrun", *words[3:]]
    name, words = _accelerate_launch(name, words)
    table = launchers.get(name)
    if table is None:
        return Parsed(None, (), tuple(words))
    options, index = [], 1
    start = "+" if name in _PLUS_OPTIONS else "-"
    while index < len(words) and words[index].startswith(start) and words[index] not in ("--", ":::", "::::"):
        option, values, index = _one_option(name, table, words, index)
        options.append((option, values, table[option].action if option in table else "unknown"))
    if index < len(words) and words[index] == "--":
        index += 1
    launcher = "mpirun" if name.startswith("mpiexec") else name
    return Parsed(launcher, tuple(options), tuple(words[index:]))


def python_program(parsed: Parsed, program: List[str]) -> List[str]:
    """The command torchrun or accelerate launch ran: ``python`` (each runs a script with its own
    Python), ``python -m`` for a module, the words as written with ``--no_python``."""
    given = {option for option, _, _ in parsed.options}
    if given & {"--no_python", "--no-python"}:
        return program
    return ["python", *(["-m"] if given & {"-m", "--module"} else []), *program]


def _accelerate_launch(name: str, words: List[str]) -> Tuple[str, List[str]]:
    """``accelerate launch``, ``accelerate-launch`` and ``python -m accelerate.commands.launch`` as one
    launcher, ``accelerate``, its options from the word after ``launch``."""
    if name == "accelerate" and words[1:2] == ["launch"]:
        return "accelerate", ["accelerate", *words[2:]]
    if name == "accelerate-launch":
        return "accelerate", ["accelerate", *words[1:]]
    if name.startswith("python") and words[1:3] == ["-m", ACCELERATE_MODULE]:
        return "accelerate", ["accelerate", *words[3:]]
    return ("" if name == "accelerate" else name), words   # another accelerate command (config, env): no launcher


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
