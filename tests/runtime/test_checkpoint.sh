#!/bin/bash
# A checkpoint is saved only whole: marked complete by the program (.slurmkit-complete, touched
# after it is written, newer than every file of it), and unchanged while it is copied; else the
# last whole copy stays. One with no marker is said to be unmarked: saved, except the final copy
# after the payload was stopped by a signal, which is kept beside the saved one.
# shellcheck disable=SC2154  # (_sk_outcome: the runtime's, which the tests read)
# shellcheck source=assert.sh
source "$(dirname -- "$0")/assert.sh"

_marked() {  # _marked FOLDER VALUE: a whole checkpoint holding VALUE, marked complete after it
    mkdir -p "$1" && echo "$2" > "$1/step"
    touch -d '-2 seconds' "$1/step"  # (written before its marker, however coarse the clock)
    touch "$1/$_sk_complete"
}
test_a_checkpoint_marked_complete_replaces_the_previous_whole() {
    _marked dest 1 && _marked ck 2
    slurmkit_save ck dest checkpoint 2> /dev/null
    expect_eq 0 "$?" "status"
    expect_eq 2 "$(cat dest/step)" "the new checkpoint"
    expect_eq "" "$(ls -d dest.* 2> /dev/null)" "nothing beside it"
}
test_a_file_written_after_the_marker_is_a_checkpoint_being_written_and_the_previous_stays() {
    _marked dest 1 && _marked ck 2
    touch -d '+2 seconds' ck/step  # the next checkpoint begun, not yet marked
    slurmkit_save ck dest checkpoint 2> /dev/null
    expect_eq 1 "$?" "status"
    expect_eq 1 "$(cat dest/step)" "the previous whole copy"
    expect_eq "not-saved	dest	not marked complete: step was written after .slurmkit-complete (a checkpoint being written): the previous whole copy stays" \
        "${_sk_outcome%$'\n'}" "outcome"
    expect_eq "" "$(ls -d dest.* 2> /dev/null)" "no partial left"
}
test_a_checkpoint_written_to_during_the_copy_is_not_put_in_place() {
    _marked dest 1 && mkdir -p ck && echo 2 > ck/step  # (unmarked: only the copy's own check guards it)
    mkdir -p bin
    printf '#!/bin/sh\n/bin/cp "$@" && touch -d "+5 seconds" %s/ck/step\n' "$PWD" > bin/cp  # the program writes as it is copied
    chmod +x bin/cp
    PATH=$PWD/bin:$PATH slurmkit_save ck dest checkpoint 2> /dev/null
    expect_eq 1 "$?" "status"
    expect_eq 1 "$(cat dest/step)" "the previous whole copy"
    expect_eq "not-saved	dest	the program wrote to it while it was copied: the previous whole copy stays" "${_sk_outcome%$'\n'}" "outcome"
}
test_a_checkpoint_with_no_marker_is_said_to_be_unmarked() {
    mkdir -p ck && echo 2 > ck/step
    _sk_say_unmarked ck dest 2> err
    expect_eq "unmarked	dest" "${_sk_outcome%$'\n'}" "outcome"
    expect_eq 1 "$(grep -c 'has no completion marker' err)" "log line"
    _sk_outcome="" && _marked ck2 1 && _sk_say_unmarked ck2 dest 2> /dev/null
    expect_eq "" "$_sk_outcome" "a marked one is not"
}
test_a_restored_checkpoint_is_complete_and_the_program_is_told_its_marker() {
    _marked dest 1
    _sk_outcome="" _sk_checkpoint=("$PWD/ck" "$PWD/dest" 3600)
    _sk_restore_checkpoint
    kill "$_sk_sync" 2> /dev/null
    expect_eq "$PWD/ck/.slurmkit-complete" "$SLURMKIT_CHECKPOINT_COMPLETE" "the marker's path"
    expect_eq "" "$(find ck -newer ck/.slurmkit-complete ! -name .slurmkit-complete)" "no file newer than its marker"
    slurmkit_save ck dest checkpoint 2> /dev/null
    expect_eq 0 "$?" "saved again"
}
test_pruning_old_checkpoints_after_the_touch_leaves_it_complete() {
    _marked dest 1 && mkdir -p ck && echo 1 > ck/ckpt_1.pt && echo 2 > ck/ckpt_2.pt
    touch -d '-2 seconds' ck/ckpt_1.pt ck/ckpt_2.pt && touch ck/"$_sk_complete"
    mkdir -p ck/run && touch -d '-2 seconds' ck/run && sleep 0.02
    rm ck/ckpt_1.pt && touch -d '+2 seconds' ck ck/run  # (save_top_k: the old one pruned, the folders' own times move)
    slurmkit_save ck dest checkpoint 2> /dev/null
    expect_eq 0 "$?" "status"
    expect_eq "2" "$(cat dest/ckpt_2.pt)" "the new checkpoint"
    expect_eq "no" "$([ -e dest/ckpt_1.pt ] && echo yes || echo no)" "the pruned one is gone"
}
_job_stopped() {  # _job_stopped MARK RC: the final copy of a checkpoint (MARK: marked or not) after the payload ended with RC
    _marked dest good
    mkdir -p ck && head -c 1234 /dev/zero > ck/model.pt  # (torn as torch.save was stopped)
    if [ "$1" = marked ]; then touch -d '-2 seconds' ck/model.pt && touch ck/"$_sk_complete"; fi
    _sk_outcome="" _sk_outputs=() _sk_checkpoint=("$PWD/ck" "$PWD/dest" 3600) _sk_exit_stop_s=1
    export SLURM_JOB_ID=7
    bash -c "exit ${2/none/0}" &
    _sk_payload=$!
    wait "$_sk_payload"
    _sk_payload_rc=$2
    if [ "$2" = none ]; then _sk_payload_rc=""; fi  # (a trap ended the job during slurmkit_run's wait)
    _sk_copy_back 2> err
}
test_an_unmarked_checkpoint_after_a_signal_goes_beside_the_saved_one_which_stays() {
    _job_stopped unmarked 143
    expect_eq 1 "$?" "status"
    expect_eq good "$(cat dest/step)" "the last whole copy stays"
    expect_eq 1234 "$(stat -c %s dest.partial-7/model.pt)" "the final copy, beside it"
    expect_eq 1 "$(grep -c 'stopped by a signal and the checkpoint has no completion marker' err)" "the log says which"
    expect_eq "unmarked $PWD/dest|not-saved $PWD/dest the payload was stopped by a signal and the checkpoint has no completion marker, so it may be torn; the previous one stays|kept $PWD/dest $PWD/dest.partial-7" \
        "$(tr '\t' ' ' <<< "${_sk_outcome%$'\n'}" | paste -sd '|')" "outcome"
}
test_an_unmarked_checkpoint_after_a_trap_ended_the_job_is_not_put_in_place() {
    _job_stopped unmarked none
    expect_eq good "$(cat dest/step)" "the last whole copy stays"
    expect_eq yes "$([ -e dest.partial-7.manifest ] && echo yes)" "kept, with its manifest"
}
test_an_unmarked_checkpoint_of_a_payload_that_ended_on_its_own_replaces_the_saved_one() {
    _job_stopped unmarked 1
    expect_eq 0 "$?" "status"
    expect_eq 1234 "$(stat -c %s dest/model.pt)" "put in place"
}
test_a_marked_checkpoint_after_a_signal_replaces_the_saved_one() {
    _job_stopped marked 143
    expect_eq 0 "$?" "status"
    expect_eq 1234 "$(stat -c %s dest/model.pt)" "put in place"
}
test_the_first_unmarked_checkpoint_after_a_signal_is_saved_as_there_is_none_before() {
    _job_stopped unmarked 143
    rm -rf dest dest.partial-7* && _sk_copied_back="" && _sk_outcome=""
    _sk_copy_back 2> /dev/null
    expect_eq 0 "$?" "status"
    expect_eq 1234 "$(stat -c %s dest/model.pt)" "saved"
}
test_a_run_that_wrote_no_checkpoint_yet_loses_nothing_and_the_saved_one_stays() {
    _marked dest good
    mkdir -p ck out && echo result > out/r
    _sk_outcome="" _sk_outputs=("$PWD/out" "$PWD/outdest") _sk_checkpoint=("$PWD/ck" "$PWD/dest" 3600) _sk_exit_stop_s=1
    bash -c "exit 0" &
    _sk_payload=$!
    wait "$_sk_payload"
    _sk_payload_rc=0
    _sk_copy_back 2> err
    expect_eq 0 "$?" "status"
    expect_eq "" "${_sk_lost:-}" "nothing lost"
    expect_eq good "$(cat dest/step)" "the saved checkpoint stays"
    expect_eq result "$(cat outdest/r)" "the outputs saved"
    expect_eq 1 "$(grep -c 'no checkpoint at .*: nothing to save' err)" "the log says so"
}

run_tests
