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
test_the_jobs_own_exit_trap_runs_and_the_exit_file_is_still_written() {
    expect_eq "rc=3 3 theirs:3" "$(_job 'trap "echo theirs:\$? > theirs" EXIT; exit 3' | tr '\n' ' ')$(cat theirs)" "their EXIT trap"
}
test_the_jobs_own_exit_trap_runs_after_the_outputs_are_saved() {
    local got
    got=$(_job 'mkdir -p out && echo r > out/r; trap "rm -rf out" EXIT; slurmkit_save_on_exit 1 1 "$PWD/out" "$PWD/dest"; slurmkit_run true' | head -2 | tr '\n' ' ')
    expect_eq "rc=0 0 saved:$PWD/dest r gone" "$got$(cat dest/r) $([ -e out ] || echo gone)" "their rm -rf of the output after the copy back"
}
test_the_jobs_own_term_trap_runs_before_slurmkits() {
    expect_eq "rc=143 143 term" "$(_job 'trap "echo term > theirs" TERM; kill -TERM $$; sleep 5' | tr '\n' ' ')$(cat theirs)" "their TERM trap"
}
test_a_trap_set_inside_a_function_of_theirs_joins_too() {
    expect_eq "rc=0 0 f" "$(_job 'f() { trap "echo f > theirs" 0; }; f' | tr '\n' ' ')$(cat theirs)" "trap in a function, signal 0"
}
test_their_trap_on_a_signal_slurmkit_leaves_alone_is_bashs_own() {
    expect_eq "rc=0 0 usr2" "$(_job 'trap "echo usr2 > theirs" USR2; kill -USR2 $$' | tr '\n' ' ')$(cat theirs)" "USR2"
}
test_a_payload_in_the_background_sets_its_own_exit_trap() {
    expect_eq "rc=0 0 payload" "$(_job 'p() { trap "echo payload > theirs" EXIT; true; }; slurmkit_run p' | tr '\n' ' ')$(cat theirs)" "payload's trap"
}
test_trap_p_still_lists_the_traps() {
    expect_eq "rc=0 0 trap -- '_sk_on_exit' EXIT" "$(_job 'trap -p EXIT > theirs' | tr '\n' ' ')$(cat theirs)" "trap -p"
}

run_tests
