#!/bin/bash
# A checkpoint is saved only whole: marked complete by the program (.slurmkit-complete, touched
# after it is written, newer than every file of it), and unchanged while it is copied; else the
# last whole copy stays. One with no marker is saved and said to be unmarked.
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

run_tests
