#!/bin/bash
# The GPU sampler is on by default in slurmkit_run: a job SLURM gave GPUs, run under slurmkit
# submit (SLURMKIT_JOB_DIR), is sampled with no call in the script, every limit/300 s (1 to 60),
# with nvidia-smi, or rocm-smi where only that is installed; `slurmkit_sample_gpus off` stops it.
# shellcheck source=assert.sh
source "$(dirname -- "$0")/assert.sh"

_stand_ins() {  # _stand_ins TOOL... LIMIT: a bin folder with those tools and an squeue that says LIMIT (%l)
    local tool limit=${*: -1}
    mkdir -p bin
    for tool in "${@:1:$#-1}"; do printf '#!/bin/bash\necho %s "$@" >> %s/ran\nexec sleep 30\n' "$tool" "$PWD" > "bin/$tool"; done
    printf '#!/bin/bash\n[ "$5" = %%l ] && echo %s\n' "$limit" > bin/squeue
    chmod +x bin/*
    PATH=$PWD/bin:/usr/bin:/bin
}
_job() {  # the variables of a one-node job with a GPU, under slurmkit submit
    export SLURM_JOB_ID=7 SLURM_JOB_GPUS=0 SLURM_NNODES=1 SLURMKIT_JOB_DIR=$PWD
    _sk_saves="" _sk_checkpoint=()
}
_ran() {  # what the sampler ran, once it has started (or after 3 s)
    local i
    for ((i = 0; i < 30; i++)); do [ -s ran ] && break; sleep 0.1; done
    _sk_gpu_stop
    cat ran 2> /dev/null
}

test_a_gpu_job_is_sampled_with_no_call_in_the_script() {
    _stand_ins nvidia-smi 3:00:00 && _job
    slurmkit_run true
    expect_eq 36 "$SLURMKIT_GPU_SAMPLE_INTERVAL" "3 h over 300 samples"
    [[ $(_ran) == "nvidia-smi --query-gpu="*" -l 36" ]] || expect_eq "nvidia-smi ... -l 36" "$(cat ran)" "the sampler ran"
    expect_eq "stopped" "$(cut -d' ' -f1 7.gpu.*.state)" "its state line"
}
test_the_interval_is_one_to_sixty_seconds() {
    _stand_ins nvidia-smi 1:00 && _job
    expect_eq 1 "$(_sk_gpu_interval_s)" "a minute"
    _stand_ins nvidia-smi 2-00:00:00
    expect_eq 60 "$(_sk_gpu_interval_s)" "two days"
    _stand_ins nvidia-smi 10:00
    expect_eq 2 "$(_sk_gpu_interval_s)" "ten minutes"
}
test_an_interval_set_beforehand_wins() {
    _stand_ins nvidia-smi 3:00:00 && _job
    export SLURMKIT_GPU_SAMPLE_INTERVAL=5
    slurmkit_run true
    _ran > /dev/null
    expect_eq 5 "$SLURMKIT_GPU_SAMPLE_INTERVAL" "the interval"
}
test_without_squeue_it_samples_every_minute_and_says_so() {
    _stand_ins nvidia-smi UNLIMITED && _job
    expect_eq 60 "$(_sk_gpu_interval_s 2> err)" "the interval"
    expect_eq "slurmkit: squeue gave no time limit: the GPUs are sampled every 60s" "$(cat err)" "said"
}
test_rocm_smi_where_it_is_the_only_tool() {
    _stand_ins rocm-smi 3:00:00 && _job
    slurmkit_run true
    _ran > /dev/null
    expect_eq rocm-smi "$SLURMKIT_GPU_TOOL" "the tool"
}
test_off_starts_no_sampler() {
    _stand_ins nvidia-smi 3:00:00 && _job
    slurmkit_sample_gpus off
    slurmkit_run true
    expect_eq "" "${_sk_gpu:-}" "no sampler"
}
test_a_job_without_gpus_starts_no_sampler() {
    _stand_ins nvidia-smi 3:00:00 && _job
    unset SLURM_JOB_GPUS SLURM_GPUS_ON_NODE
    slurmkit_run true
    expect_eq "" "${_sk_gpu:-}" "no sampler"
}
test_plain_sbatch_starts_no_sampler() {
    _stand_ins nvidia-smi 3:00:00 && _job
    unset SLURMKIT_JOB_DIR
    slurmkit_run true
    expect_eq "" "${_sk_gpu:-}" "no sampler"
}

run_tests
