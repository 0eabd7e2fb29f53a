#!/bin/bash
# slurmkit_run_many_tasks: the script's per-node function runs on each node (srun, one task per
# node) or here, then the joblogs say how the tasks ended. A script whose --nodes was changed by
# hand from the one-node shape (one task holding the node's cores, no SLURMKIT_TASKS_AT_ONCE)
# still runs; a run that left no joblog counts its tasks as not run.
# shellcheck disable=SC2317  # (srun, parallel, node_tasks: stand-ins the runtime calls)
# shellcheck source=assert.sh
source "$(dirname -- "$0")/assert.sh"

_job() {  # _job NODES: the environment SLURM gives a many-tasks job, with a task file of 3 lines
    export SLURM_NNODES=$1 SLURM_CPUS_PER_TASK=32 SLURM_JOB_ID=1 SLURM_SUBMIT_DIR=$PWD
    export SLURMKIT_TASK_FILE=$PWD/params.txt SLURMKIT_JOBLOGS=$PWD/joblogs
    printf '1\n2\n3\n' > params.txt
    _sk_saves="" _sk_checkpoint=()
    slurmkit_prepare_joblogs() { mkdir -p "$SLURMKIT_JOBLOGS"; }
    parallel() { return 0; }  # (GNU Parallel's stand-in)
}
_joblog() {  # _joblog NODE EXIT...: a GNU Parallel joblog with one line per task
    local i=1 rc
    printf 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n' > "joblogs/node-$1-of-$SLURM_NNODES.log"
    shift
    for rc in "$@"; do printf '%s\t:\t0\t0\t0\t0\t%s\t0\tt\n' "$i" "$rc" >> "joblogs/node-1-of-$SLURM_NNODES.log"; i=$((i + 1)); done
}
test_nodes_changed_by_hand_from_the_one_node_shape_gives_each_node_its_cores() {
    _job 2 && mkdir -p joblogs
    unset SLURMKIT_TASKS_AT_ONCE
    srun() { echo "$*" > srun.args; _joblog 1 0 0 0; }
    node_tasks() { :; }
    slurmkit_run_many_tasks node_tasks 2> err
    expect_eq 0 "$?" "status"
    expect_eq 1 "$(grep -c -- '--ntasks-per-node=1 --cpus-per-task=32 ' srun.args)" "one task per node with its 32 cores"
    expect_eq 1 "$(grep -c '3 of 3 tasks succeeded' err)" "the tally"
}
test_a_run_that_left_no_joblog_says_its_tasks_did_not_run() {
    _job 1
    node_tasks() { :; }
    slurmkit_run_many_tasks node_tasks 2> err
    expect_eq 1 "$?" "status"
    expect_eq 1 "$(grep -c '0 of 3 tasks succeeded, 0 failed, 3 not run' err)" "the tally"
    expect_eq 0 "$(grep -c 'awk' err)" "no error of awk's"
}

run_tests
