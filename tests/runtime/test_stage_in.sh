#!/bin/bash
# slurmkit_stage_in: each action puts the input where the script says; an unknown action is refused.
# shellcheck source=assert.sh
source "$(dirname -- "$0")/assert.sh"

test_copy_and_copy_as() {
    mkdir -p src node && echo 1 > src/a
    slurmkit_stage_in copy src node && slurmkit_stage_in copy-as src node/deep/x
    expect_eq "1 1" "$(cat node/src/a) $(cat node/deep/x/a)" "copies"
}
test_extract_passes_tars_options() {
    mkdir -p d && echo 1 > d/a && tar -czf d.tar.gz d
    slurmkit_stage_in extract d.tar.gz node --gzip
    expect_eq "1" "$(cat node/d/a)" "extracted"
}
test_extract_shards_takes_every_shard() {
    mkdir -p shards s1 s2 && echo 1 > s1/a && echo 2 > s2/b
    tar -cf shards/shard-0.tar s1 && tar -cf shards/shard-1.tar s2
    slurmkit_stage_in extract-shards shards node 2
    expect_eq "1 2" "$(cat node/s1/a) $(cat node/s2/b)" "both shards"
}
test_an_unknown_action_is_refused() {
    slurmkit_stage_in fetch a b 2> /dev/null
    expect_eq 2 "$?" "status"
}

run_tests
