#!/bin/bash
# slurmkit_run: the payload runs in the background (signals reach the traps at once) and still
# reads the script's stdin (a here-document or `< input` on the launch line), with job control
# off (nothing to save) and on (outputs registered: the payload in a process group of its own).
# shellcheck disable=SC2154  # (_sk_payload_rc: the runtime's, which the tests read)
# shellcheck source=assert.sh
source "$(dirname -- "$0")/assert.sh"

test_the_payload_reads_a_here_document_given_to_slurmkit_run() {
    _sk_saves="" _sk_checkpoint=()
    expect_eq "fed" "$(slurmkit_run cat <<< fed)" "job control off"
}
test_the_payload_reads_stdin_in_a_process_group_of_its_own() {
    slurmkit_exit_file && trap - EXIT
    slurmkit_save_on_exit 1 1
    expect_eq "fed" "$(slurmkit_run cat <<< fed)" "job control on"
}
test_slurmkit_run_returns_the_payloads_status() {
    _sk_saves="" _sk_checkpoint=()
    slurmkit_run bash -c 'exit 3'
    expect_eq 3 "$?" "status"
    expect_eq 3 "$_sk_payload_rc" "kept for the final save"
}

run_tests
