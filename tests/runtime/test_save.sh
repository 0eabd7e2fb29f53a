#!/bin/bash
# slurmkit_save: a file or folder arrives whole at its destination or not at all, and says so.
# shellcheck disable=SC2154  # (_sk_outcome and _sk_lost: the runtime's, which the tests read)
# shellcheck source=assert.sh
source "$(dirname -- "$0")/assert.sh"

test_a_folder_is_saved_and_its_files_join_the_destination() {
    mkdir -p out dest && echo 1 > out/a && echo keep > dest/b
    slurmkit_save out dest 2> /dev/null
    expect_eq 0 "$?" "status"
    expect_eq "1 keep" "$(cat dest/a) $(cat dest/b)" "files"
    expect_eq "saved	dest" "${_sk_outcome%$'\n'}" "outcome"
}
test_replace_swaps_the_previous_whole_and_leaves_nothing_beside_it() {
    mkdir -p ck dest && echo new > ck/s && echo old > dest/s && echo stale > dest/t
    slurmkit_save ck dest replace 2> /dev/null
    expect_eq "new" "$(cat dest/s)" "new checkpoint"
    expect_eq "" "$(ls dest/t 2> /dev/null)" "nothing of the old one"
    expect_eq "" "$(ls -d dest.* 2> /dev/null)" "no partial or old copy"
}
test_nothing_to_save_is_not_saved_and_says_why() {
    mkdir -p empty
    slurmkit_save empty dest 2> /dev/null
    expect_eq 1 "$?" "status"
    expect_eq 1 "$_sk_lost" "lost"
    expect_eq "not-saved	dest	the job left nothing at empty" "${_sk_outcome%$'\n'}" "outcome"
}
test_a_destination_that_cannot_be_written_is_not_saved() {
    mkdir -p out locked && echo 1 > out/a && chmod 555 locked
    [ "$(id -u)" = 0 ] && return 0   # root writes anywhere: tests/unit/test_copy_back.py uses chattr
    slurmkit_save out locked/dest 2> /dev/null
    expect_eq 1 "$?" "status"
    chmod 755 locked
}
test_a_crash_between_the_two_renames_is_recovered() {
    mkdir -p dest.slurmkit-old && echo 1 > dest.slurmkit-old/s
    _sk_recover dest
    expect_eq "1" "$(cat dest/s)" "the previous checkpoint is back"
}
test_sizes_read_as_a_person_writes_them() {
    expect_eq "64 KiB" "$(_sk_bytes 65536)" "64 KiB"
    expect_eq "1.5 GiB" "$(_sk_bytes 1610612736)" "1.5 GiB"
}

run_tests
