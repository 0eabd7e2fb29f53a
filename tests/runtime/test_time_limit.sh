#!/bin/bash
# At the time limit (SLURM's USR1, the lead before it): the outputs are saved, the exit file is
# written, and the job waits for SLURM to end it at its limit, so that sacct says TIMEOUT.
# squeue is a stand-in on PATH that prints the time left as squeue's %L does.
# shellcheck source=assert.sh
source "$(dirname -- "$0")/assert.sh"

_squeue() {  # _squeue LEFT: a squeue on PATH that prints LEFT
    mkdir -p bin
    printf '#!/bin/sh\necho %s\n' "$1" > bin/squeue
    chmod +x bin/squeue
}
_job_at_limit() {  # _job_at_limit LEFT [fails]: a job whose payload gets USR1; TERM follows once the exit file is there
    [ -n "${2:-}" ] || _squeue "$1"
    PATH=$PWD/bin:$PATH SLURMKIT_JOB_DIR=$PWD SLURM_JOB_ID=5 SLURM_TMPDIR=$PWD bash -c '
        source "$SLURMKIT_RUNTIME"; slurmkit_exit_file
        mkdir -p out && echo 1 > out/a
        slurmkit_save_on_exit 5 1 "$PWD/out" "$PWD/dest"
        slurmkit_run sleep 60' 2> err &
    local job=$! i
    for ((i = 0; i < 100; i++)); do [ -n "$(pgrep -P "$job" -x sleep)" ] && break; sleep 0.1; done
    kill -USR1 "$job"
    for ((i = 0; i < 100; i++)); do [ -e 5.exit ] && break; sleep 0.1; done
    echo "exit file before the end: $(paste -sd ' ' 5.exit 2> /dev/null)"
    if grep -q "waiting .* for SLURM to end the job" err; then echo "waits"; fi
    kill -TERM "$job" 2> /dev/null
    wait "$job"
    echo "rc=$?"
}
test_squeues_time_left_is_read_in_seconds() {
    _squeue 4:05 && expect_eq 245 "$(PATH=$PWD/bin:$PATH SLURM_JOB_ID=5 _sk_time_left_s)" "MM:SS"
    _squeue 1:02:03 && expect_eq 3723 "$(PATH=$PWD/bin:$PATH SLURM_JOB_ID=5 _sk_time_left_s)" "H:MM:SS"
    _squeue 2-00:00:10 && expect_eq 172810 "$(PATH=$PWD/bin:$PATH SLURM_JOB_ID=5 _sk_time_left_s)" "D-HH:MM:SS"
    _squeue UNLIMITED && expect_eq "no" "$(PATH=$PWD/bin:$PATH SLURM_JOB_ID=5 _sk_time_left_s || echo no)" "no limit"
}
test_after_the_save_the_job_waits_for_slurms_term_with_its_exit_file_written() {
    local got
    got=$(_job_at_limit 0:20)
    expect_eq "exit file before the end: 124 timeout saved	$PWD/dest waits rc=124" "$(paste -sd ' ' <<< "$got")" "waits"
    expect_eq "1" "$(cat dest/a)" "saved"
    expect_eq "124 timeout saved	$PWD/dest" "$(paste -sd ' ' 5.exit)" "the exit file after TERM"
}
test_a_usr1_long_before_any_limit_ends_the_job_at_once() {
    local got
    got=$(_job_at_limit 2:00:00)
    expect_eq "exit file before the end: 124 timeout saved	$PWD/dest rc=124" "$(paste -sd ' ' <<< "$got")" "no wait"
}
test_where_squeue_fails_the_time_left_is_estimated_from_the_lead_and_the_job_still_waits() {
    local got
    mkdir -p bin && printf '#!/bin/sh\nexit 1\n' > bin/squeue && chmod +x bin/squeue
    got=$(_job_at_limit "" fails)
    expect_eq "exit file before the end: 124 timeout saved	$PWD/dest waits rc=124" "$(paste -sd ' ' <<< "$got")" "waits"
    expect_eq 1 "$(grep -c 'squeue gave no time left: estimated from the USR1 lead (10s before the limit)' err)" "the fallback is logged"
}
test_a_usr1_before_the_payload_started_runs_nothing_and_says_every_output_not_saved() {
    # SLURM may send it up to 60 s before the lead: in a job of a one-minute limit, as it starts
    local why="the time limit's signal (USR1) came before the payload started, so it did not run: SLURM may send it up to 60 s before stage.lead"
    _squeue 0:20
    PATH=$PWD/bin:$PATH SLURMKIT_JOB_DIR=$PWD SLURM_JOB_ID=5 SLURM_TMPDIR=$PWD bash -c '
        source "$SLURMKIT_RUNTIME"; slurmkit_exit_file
        slurmkit_save_on_exit 5 1 "$PWD/out" "$PWD/dest" "$PWD/log" "$PWD/log-dest"
        kill -USR1 $$
        slurmkit_run touch ran' 2> err &
    local job=$! i
    for ((i = 0; i < 100; i++)); do [ -e 5.exit ] && break; sleep 0.1; done
    kill -TERM "$job" 2> /dev/null
    wait "$job"
    expect_eq "124 timeout not-saved	$PWD/dest	$why not-saved	$PWD/log-dest	$why" "$(paste -sd ' ' 5.exit)" "the exit file"
    expect_eq "no" "$([ -e ran ] && echo yes || echo no)" "the payload did not start"
    expect_eq 1 "$(grep -c "slurmkit: $why" err)" "said in the log"
    expect_eq 0 "$(grep -c "stopping the payload" err)" "no payload to stop"
}

run_tests
