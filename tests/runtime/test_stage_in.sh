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
# An image takes SOURCE TARGET only: the runtime picks its copy on the node and the cores itself.
_image_stubs() {  # squashfuse_ll "mounts" (records its arguments); fusermount3 records the unmount
    mkdir -p bin && printf '%s\n' '#!/bin/sh' "echo \"\$*\" >> $PWD/calls" > bin/squashfuse_ll
    cp bin/squashfuse_ll bin/fusermount3 && printf '#!/bin/sh\nexit 0\n' > bin/mountpoint && chmod +x bin/*
}
test_mount_image_copies_to_the_node_and_is_unmounted_at_exit() {
    _image_stubs && echo img > t.sqfs && mkdir -p tmp
    (
        export SLURM_TMPDIR=$PWD/tmp PATH=$PWD/bin:$PATH
        slurmkit_exit_file
        slurmkit_stage_in mount-image t.sqfs "$SLURM_TMPDIR/tables" 2> /dev/null
    )
    local copy=$PWD/tmp/.slurmkit/images/${PWD//[^A-Za-z0-9._-]/_}_tmp_tables.sqfs
    expect_eq "$copy $PWD/tmp/tables|-u -z $PWD/tmp/tables" "$(paste -sd'|' calls)" "mounted from the node's copy, then unmounted"
    expect_eq img "$(cat "$copy")" "the copy"
}
test_two_images_get_two_copies() {
    _image_stubs && echo a > a.sqfs && echo b > b.sqfs && mkdir -p tmp
    SLURM_TMPDIR=$PWD/tmp PATH=$PWD/bin:$PATH slurmkit_stage_in mount-image a.sqfs tmp/a 2> /dev/null
    SLURM_TMPDIR=$PWD/tmp PATH=$PWD/bin:$PATH slurmkit_stage_in mount-image b.sqfs tmp/b/ 2> /dev/null
    expect_eq "a b" "$(cat tmp/.slurmkit/images/tmp_a.sqfs) $(cat tmp/.slurmkit/images/tmp_b.sqfs)" "one copy each"
}
test_extract_image_unpacks_with_this_steps_cores() {
    mkdir -p d && echo 1 > d/a && mksquashfs d d.sqfs -quiet -noappend > /dev/null && mkdir -p tmp
    SLURM_TMPDIR=$PWD/tmp slurmkit_stage_in extract-image d.sqfs "$PWD/tmp/d"
    expect_eq "1" "$(cat tmp/d/a)" "extracted"
    expect_eq "" "$(ls tmp/.slurmkit/images)" "the copy removed"
}
test_an_unknown_action_is_refused() {
    slurmkit_stage_in fetch a b 2> /dev/null
    expect_eq 2 "$?" "status"
}

run_tests
