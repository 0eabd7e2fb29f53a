#!/bin/bash
# slurmkit_place_tasks and _sk_task: each process's rank from SLURM, its own GPU.
# shellcheck source=assert.sh
source "$(dirname -- "$0")/assert.sh"

test_ranks_come_from_slurm() {
    slurmkit_place_tasks ranks
    expect_eq "3 1 8 4" "$(SLURM_PROCID=3 SLURM_LOCALID=1 SLURM_NTASKS=8 SLURM_NTASKS_PER_NODE=4 \
        bash -c '_sk_task "$@"' _sk_task bash -c 'echo $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE')" "ranks"
}
test_each_process_gets_the_gpu_at_its_place_on_the_node() {
    slurmkit_place_tasks gpu=SLURM_LOCALID
    expect_eq "6" "$(SLURM_LOCALID=1 CUDA_VISIBLE_DEVICES=4,6 bash -c '_sk_task "$@"' _sk_task bash -c 'echo $CUDA_VISIBLE_DEVICES')" "gpu"
    SLURM_LOCALID=2 CUDA_VISIBLE_DEVICES=4,6 bash -c '_sk_task "$@"' _sk_task true 2> /dev/null
    expect_eq 1 "$?" "a process without a GPU of its own stops"
}
test_a_bound_rank_takes_its_slice_of_the_cores() {
    local all
    all=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
    [ "$all" = 0-1 ] || [[ $all == 0-[2-9]* ]] || { echo "skipped: needs CPUs 0-1 (has $all)" >&2; return 0; }
    slurmkit_place_tasks bind
    expect_eq 1 "$(LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 taskset -c 0,1 bash -c '_sk_task "$@"' _sk_task \
        sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)" "rank 1 of 2 on CPUs 0-1"
    expect_eq 0-1 "$(LOCAL_RANK=0 LOCAL_WORLD_SIZE=4 taskset -c 0,1 bash -c '_sk_task "$@"' _sk_task \
        sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)" "more ranks than CPUs: unbound"
}

run_tests
