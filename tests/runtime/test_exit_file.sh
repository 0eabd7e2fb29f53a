#!/bin/bash
# slurmkit_exit_file: the exit file holds the script's code; a TERM is 143; a save lost turns 0 into 74.
# shellcheck source=assert.sh
source "$(dirname -- "$0")/assert.sh"

_job() {  # _job BODY: a job shell that sources the runtime and runs BODY; prints its exit file
    SLURMKIT_JOB_DIR=$PWD SLURM_JOB_ID=5 bash -c "source \"\$SLURMKIT_RUNTIME\"; slurmkit_exit_file; $1" 2> /dev/null
    echo "rc=$?"
    tr '\n\t' ' :' < 5.exit
}
test_the_exit_file_holds_the_code() {
    expect_eq "rc=3 3 " "$(_job 'exit 3' | tr '\n' ' ')" "exit 3"
}
test_a_term_ends_the_job_as_143() {
    expect_eq "rc=143 143 " "$(_job 'kill -TERM $$; sleep 5' | tr '\n' ' ')" "TERM"
}
test_a_payload_that_succeeded_with_an_output_not_saved_exits_74() {
    local got
    got=$(_job 'slurmkit_save_on_exit 1 1 "$PWD/none" "$PWD/dest"; slurmkit_run true' | tr '\n' ' ')
    expect_eq "rc=74 74 not-saved:$PWD/dest:the job left nothing at $PWD/none " "$got" "74"
}
test_slurmkit_run_gives_the_payloads_code() {
    expect_eq "rc=7 7 " "$(_job 'set -e; slurmkit_run bash -c "exit 7"' | tr '\n' ' ')" "the payload's code"
}

run_tests
