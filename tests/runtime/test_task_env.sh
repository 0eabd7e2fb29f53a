#!/bin/bash
# The runtime run as srun's task prolog (slurmkit_task_env): the `export` lines it prints for a
# task, and the CPU slice it gives the task (its parent) where SLURM bound none; the rendezvous;
# the per-node virtualenv. (On a real cluster: tests/integration/test_task_env_cluster.py.)
# shellcheck source=assert.sh
source "$(dirname -- "$0")/assert.sh"

_as_prolog() {  # the library, executed under its own kind of name, as slurmstepd runs it
    cp -- "$SLURMKIT_RUNTIME" slurmkit-runtime-test.sh && chmod +x slurmkit-runtime-test.sh && ./slurmkit-runtime-test.sh
}
test_executed_it_prints_each_tasks_ranks() {
    slurmkit_place_tasks ranks
    expect_eq $'export RANK=5\nexport LOCAL_RANK=1\nexport WORLD_SIZE=8\nexport LOCAL_WORLD_SIZE=4' \
        "$(SLURM_PROCID=5 SLURM_LOCALID=1 SLURM_NTASKS=8 SLURM_NTASKS_PER_NODE=4 _as_prolog)" "ranks"
}
test_executed_it_prints_tf_config_and_the_tasks_own_gpu() {
    export _sk_tf_workers=n1:20001,n2:20002 _sk_task_gpu=SLURM_LOCALID
    expect_eq $'export TF_CONFIG={"cluster": {"worker": ["n1:20001", "n2:20002"]}, "task": {"type": "worker", "index": 1}}\nexport CUDA_VISIBLE_DEVICES=6' \
        "$(SLURM_PROCID=1 SLURM_LOCALID=1 CUDA_VISIBLE_DEVICES=4,6 _as_prolog)" "TF_CONFIG and GPU"
    SLURM_PROCID=2 SLURM_LOCALID=2 CUDA_VISIBLE_DEVICES=4,6 _as_prolog > /dev/null 2>&1
    expect_eq 1 "$?" "a task without a GPU of its own fails its prolog"
}
test_sourced_it_prints_nothing() {
    cp -- "$SLURMKIT_RUNTIME" slurmkit-runtime-test.sh
    slurmkit_place_tasks ranks
    expect_eq "" "$(SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NTASKS=1 bash -c 'source ./slurmkit-runtime-test.sh')" "sourced"
    # In the script itself (its text inline, as verification runs it), with set -u: nothing either.
    expect_eq "0:" "$(bash -euc "$(cat slurmkit-runtime-test.sh); echo \$?:" 2>&1)" "inline, set -u"
}
test_a_task_slurm_left_unbound_gets_its_slice_of_the_cores() {
    local all
    all=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
    [ "$all" = 0-1 ] || [[ $all == 0-[2-9]* ]] || { echo "skipped: needs CPUs 0-1 (has $all)" >&2; return 0; }
    cp -- "$SLURMKIT_RUNTIME" slurmkit-runtime-test.sh && chmod +x slurmkit-runtime-test.sh
    # The prolog's parent stands for the task: after the prolog, its own affinity is the slice.
    expect_eq 1 "$(SLURM_LOCALID=1 SLURM_NTASKS_PER_NODE=2 SLURM_CPUS_PER_TASK=1 bash -c \
        './slurmkit-runtime-test.sh > /dev/null; sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status')" "rank 1 of 2 on 2 CPUs"
    expect_eq 0 "$(SLURM_LOCALID=0 SLURM_NTASKS_PER_NODE=2 SLURM_CPUS_PER_TASK=1 bash -c \
        'taskset -p -c 0 $$ > /dev/null; ./slurmkit-runtime-test.sh > /dev/null; sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status')" "one bound already stays"
}
_smt_node() {  # _smt_node CORES: sysfs topology of one socket with CORES cores of two threads (CPU i and i+CORES share core i)
    local cpu
    for ((cpu = 0; cpu < 2 * $1; cpu++)); do
        mkdir -p "sys/cpu$cpu/topology"
        echo 0 > "sys/cpu$cpu/topology/physical_package_id"
        echo "$((cpu % $1))" > "sys/cpu$cpu/topology/core_id"
    done
}
test_a_task_bound_to_its_cores_on_an_smt_node_keeps_all_their_threads() {
    _smt_node 24 && export _sk_cpu_sysfs=$PWD/sys
    echo "Cpus_allowed_list:	0-11,24-35" > bound  # 12 cores, 24 threads: SLURM bound it to --cpus-per-task=12 cores
    expect_eq "" "$(SLURM_LOCALID=1 SLURM_NTASKS_PER_NODE=2 SLURM_CPUS_PER_TASK=12 _sk_task_cpus bound)" "bound already: as it is"
    echo "Cpus_allowed_list:	0-47" > unbound  # the node's 24 cores for 2 tasks of 12
    expect_eq 24 "$(SLURM_LOCALID=1 SLURM_NTASKS_PER_NODE=2 SLURM_CPUS_PER_TASK=12 _sk_task_cpus unbound | tr , '\n' | wc -l)" "unbound: its half"
    expect_eq 12 "$(_sk_count_cores "$(_sk_allowed_cpus bound)")" "cores"
}
test_the_rendezvous_is_the_first_host_and_the_port_given() {
    scontrol() { printf 'node7\nnode8\n'; }
    SLURM_JOB_NODELIST='node[7-8]' slurmkit_rendezvous 23456
    expect_eq "node7 23456" "$MASTER_ADDR $MASTER_PORT" "rendezvous"
}
test_a_command_on_each_node_gets_one_task_there_with_the_jobs_cores_on_the_node() {
    srun() { echo "srun $*" | cut -d' ' -f1-5; }
    export -f srun
    expect_eq "srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=12" \
        "$(SLURM_NNODES=2 SLURM_CPUS_PER_TASK=3 SLURM_NTASKS_PER_NODE=4 slurmkit_on_each_node true)" "the node's cores"
    expect_eq "srun --nodes=1 --ntasks=1 --ntasks-per-node=1 --cpus-per-task=1" \
        "$(SLURM_NNODES=1 slurmkit_on_each_node true)" "no counts: one core"
    # --ntasks: no SLURM_NTASKS_PER_NODE, and the nodes' shares may differ: the fewest
    expect_eq "srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=3" \
        "$(SLURM_NNODES=2 SLURM_CPUS_PER_TASK=1 SLURM_JOB_CPUS_PER_NODE=5,3 slurmkit_on_each_node true)" "uneven shares"
    expect_eq "srun --nodes=3 --ntasks=3 --ntasks-per-node=1 --cpus-per-task=4" \
        "$(SLURM_NNODES=3 SLURM_CPUS_PER_TASK=2 SLURM_JOB_CPUS_PER_NODE='8(x2),4' slurmkit_on_each_node true)" "repeated shares"
}
test_the_virtualenv_is_made_on_each_node_then_activated_here() {
    srun() { while [[ $1 == --* ]]; do shift; done; "$@"; }  # one node: the command itself
    virtualenv() { mkdir -p "$2/bin" && echo "VIRTUAL_ENV=$2" > "$2/bin/activate"; }
    pip() { echo "pip $*" >> "$OLDPWD/pip.log"; }
    export -f srun virtualenv pip
    OLDPWD=$PWD SLURM_NNODES=1 slurmkit_venv_on_each_node "$PWD/env" --no-index torch lightning
    expect_eq $'pip install --no-index --upgrade pip\npip install --no-index torch lightning' "$(cat pip.log)" "wheelhouse"
    expect_eq "$PWD/env" "$VIRTUAL_ENV" "activated here"
    rm pip.log
    OLDPWD=$PWD SLURM_NNODES=1 slurmkit_venv_on_each_node "$PWD/env2" torch
    expect_eq "pip install torch" "$(cat pip.log)" "no wheelhouse: pip as it is"
}

run_tests
