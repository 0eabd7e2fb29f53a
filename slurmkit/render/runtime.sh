#!/bin/bash
# slurmkit's runtime: the machinery of a job script slurmkit rendered, as functions the script
# calls by name. The script names this file by slurmkit's version and its sha256, and checks the
# hash before it sources it; a changed file is never used, an old one is never overwritten.
# What each function promises: docs/why-the-script.md. Its own tests: tests/runtime/.
# shellcheck shell=bash disable=SC2034,SC2154

# ---- The exit file: how the job ended, for `slurmkit status`.

slurmkit_exit_file() {  # registers the traps that, on every exit, write <job>.exit in $SLURMKIT_JOB_DIR (none without it): the code, then what was saved
    _sk_outcome="" _sk_lost="" _sk_requeue="" _sk_saves="" _sk_outputs=() _sk_checkpoint=() _sk_mounts=()
    _sk_trap _sk_on_exit EXIT
    _sk_trap _sk_on_term TERM
}
_sk_on_term() {
    _sk_their_trap TERM
    if [ -n "$_sk_requeue" ]; then _sk_requeued=1; fi
    exit 143
}
_sk_on_exit() {  # save the outputs, then the job's own exit trap, then write the exit file whole (beside it, then renamed)
    local rc=$? folder
    builtin trap '' USR1 TERM INT  # a signal now would end this trap in the middle of a copy, with no exit file
    if [ -n "${_sk_gpu:-}" ]; then _sk_gpu_stop; fi
    if [ -n "${_sk_requeued:-}" ]; then
        echo "slurmkit: requeued by Lightning after SIGUSR1: this run ends here, the next resumes from its checkpoint" >&2
        _sk_their_trap EXIT "$rc"
        exit "$rc"
    fi
    if [ -n "$_sk_saves" ]; then
        _sk_copy_back || true
    fi
    # theirs after the copy back: a clean-up of $SLURM_TMPDIR (rm -rf out) must not come before it
    _sk_their_trap EXIT "$rc"
    if [ "$rc" = 0 ] && [ -n "$_sk_lost" ]; then rc=74; fi  # EX_IOERR: the work is done, not all of it saved
    for folder in "${_sk_mounts[@]}"; do
        if mountpoint -q "$folder"; then fusermount3 -u -z "$folder" 2> /dev/null || fusermount -u -z "$folder" || true; fi
    done
    _sk_write_exit_file "$rc"
    exit "$rc"
}
_sk_write_exit_file() {  # _sk_write_exit_file RC: <job>.exit written whole (beside it, then renamed)
    local file=${SLURMKIT_JOB_DIR:-}/${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-0}}${SLURM_ARRAY_TASK_ID:+_$SLURM_ARRAY_TASK_ID}.exit
    if [ -n "${SLURMKIT_JOB_DIR:-}" ]; then
        {
            echo "$1"
            [ -z "${_sk_timeout:-}" ] || echo timeout
            [ -z "${_sk_killed:-}" ] || echo killed
            [ -z "${SLURM_RESTART_COUNT:-}" ] || printf 'run\t%s\n' "$((SLURM_RESTART_COUNT + 1))"
            printf '%s' "$_sk_outcome"
        } > "$file.partial" &&
            mv -f -- "$file.partial" "$file" || echo "slurmkit: the exit file $file could not be written" >&2
    fi
}

# ---- The job's own traps.
# A `trap CMD SIGNAL` of the job's own lines (environment.setup, a function, a sourced file) on a
# signal slurmkit traps would replace slurmkit's handler, and the exit file and the outputs'
# copy-back with it. This `trap` keeps theirs beside slurmkit's: on TERM and USR1 theirs runs
# first; on exit after the outputs are copied back (a clean-up of $SLURM_TMPDIR must not come
# before it), then the exit file. On any other signal, and for -p, -l and the like, it is bash's own.

# shellcheck disable=SC2064  # (their command and slurmkit's handler are passed on as given)
_sk_trap() {  # _sk_trap FUNCTION SIGNAL: slurmkit's own handler of SIGNAL, remembered so that theirs joins it
    printf -v "_sk_own_$2" %s "$1"
    printf -v "_sk_user_$2" %s ""
    _sk_trap_shell=$BASHPID
    builtin trap "$1" "$2"
}
# shellcheck disable=SC2064
trap() {  # the job's own trap: on a signal slurmkit traps, run by slurmkit's handler, not instead of it
    # (in a subshell, the payload's for one, slurmkit's handlers are not there: bash's own trap)
    if [ "$BASHPID" != "${_sk_trap_shell:-}" ] || [ $# -lt 2 ] || { [[ $1 == -* ]] && [ "$1" != -- ] && [ "$1" != - ]; }; then
        builtin trap "$@"
        return
    fi
    if [ "$1" = -- ]; then shift; fi
    local _sk_command=$1 _sk_signal _sk_own
    shift
    for _sk_signal; do
        _sk_signal=${_sk_signal^^} && _sk_signal=${_sk_signal#SIG}
        case $_sk_signal in 0) _sk_signal=EXIT ;; 15) _sk_signal=TERM ;; 10) _sk_signal=USR1 ;; esac
        _sk_own=_sk_own_$_sk_signal
        if [ -n "${!_sk_own:-}" ]; then
            if [ "$_sk_command" = - ]; then _sk_command=""; fi  # their reset or ignore leaves slurmkit's handler
            printf -v "_sk_user_$_sk_signal" %s "$_sk_command"
        else
            builtin trap -- "$_sk_command" "$_sk_signal"
        fi
    done
}
_sk_their_trap() {  # _sk_their_trap SIGNAL [STATUS]: the job's own trap on SIGNAL, run as a trap of a subshell that exits STATUS (their $?); it never ends slurmkit's
    local _sk_theirs=_sk_user_$1
    if [ -n "${!_sk_theirs:-}" ]; then
        ( set +eu; builtin trap -- "${!_sk_theirs}" EXIT; exit "${2:-0}" ) || true
    fi
}

# ---- The payload.

slurmkit_run() {  # slurmkit_run COMMAND...: does the work the slurmkit_* calls above registered, around the payload
    # The payload runs in the background, so that signals reach the traps at once, and keeps the
    # script's stdin (`<&0`: bash gives a background command /dev/null otherwise), so that
    # `slurmkit_run ./prog < input` or a here-document reaches it.
    _sk_restore_checkpoint
    if [ -n "$_sk_saves" ]; then _sk_write_started; fi
    _sk_start_gpu_sampler
    # in a process group of its own, so that all it starts is stopped with it before the final copy
    if [ -n "$_sk_saves" ]; then set -m; fi
    "$@" <&0 &
    _sk_payload=$! _sk_payload_rc=""
    if [ -n "$_sk_saves" ]; then set +m; fi
    local rc=0
    wait "$_sk_payload" || rc=$?
    _sk_payload_rc=$rc  # (never set where a trap ended the job during the wait: the payload did not end on its own)
    return "$rc"
}

slurmkit_without_errexit() {  # slurmkit_without_errexit FUNCTION [ARG...]: a shell function of the job's own lines,
    # run with set -e off, as in the script it came from (environment.errexit: false): in a
    # function, set -e would stop at its first failing command where that script went on
    set +e
    "$@"
}

slurmkit_activate() {  # slurmkit_activate VIRTUALENV: its activate script, read with `set -u` paused (it reads unset variables)
    set +u
    # shellcheck source=/dev/null
    source "$1/bin/activate"
    set -u
}

# ---- Outputs saved on every exit.
# Outputs come back from $SLURM_TMPDIR on every exit: success, failure, and the time limit
# (SLURM sends USR1 before it; the payload is stopped, then they are saved).
# Each is copied beside its destination, checked (files and bytes) and only then put in place:
# an output's files join its destination (what else is there stays), the checkpoint replaces
# the previous one whole; no file is ever half of one. What arrived and what did not goes to
# the exit file; a payload that succeeded then exits 74.

slurmkit_save_on_exit() {  # slurmkit_save_on_exit STOP_S EXIT_STOP_S [SOURCE DESTINATION]...: registers the outputs and the USR1 trap; slurmkit_run and the exit do the work
    # (STOP_S is half the USR1 lead: slurmkit renders both from it, and the time limit is estimated from it where squeue fails)
    _sk_saves=1 _sk_stop_s=$1 _sk_exit_stop_s=$2
    shift 2
    _sk_outputs=("$@")
    _sk_trap _sk_on_usr1 USR1
}
_sk_tally() {  # _sk_tally PATH: "FILES BYTES" of the regular files at or under PATH
    find "$1" -type f -printf '%s\n' | awk '{ n++; b += $1 } END { printf "%d %.0f\n", n, b }'
}
_sk_bytes() {  # _sk_bytes N: N bytes for a person (64 KiB)
    awk -v b="$1" 'BEGIN { split("B KiB MiB GiB TiB", u); i = 1; while (b >= 1024 && i < 5) { b /= 1024; i++ } s = sprintf("%.1f", b); sub(/\.0$/, "", s); print s " " u[i] }'
}
_sk_recover() {  # _sk_recover DEST: a crash between _sk_swap's two renames left DEST.slurmkit-old: it is DEST
    if [ -e "$1.slurmkit-old" ]; then
        if [ -e "$1" ]; then rm -rf -- "$1.slurmkit-old"; else mv -T -- "$1.slurmkit-old" "$1"; fi
    fi
}
_sk_swap() {  # _sk_swap NEW DEST: NEW takes DEST's place; the previous DEST stays whole until it has
    _sk_recover "$2" || return 1
    if [ -e "$2" ] || [ -L "$2" ]; then
        mv -T -- "$2" "$2.slurmkit-old" || return 1
        if ! mv -T -- "$1" "$2"; then mv -T -- "$2.slurmkit-old" "$2"; return 1; fi
        rm -rf -- "$2.slurmkit-old"
    else
        mv -T -- "$1" "$2"
    fi
}
_sk_merge() {  # _sk_merge NEW DEST: NEW's files join DEST (same names replaced, each file whole); the rest of DEST stays
    if [ -d "$2" ] && [ ! -L "$2" ]; then
        [ -d "$1" ] || { echo "$2 is a folder: a file does not replace it"; return 1; }
        # Hard links from the checked copy beside DEST: no data is written twice, no file is half-made.
        cp -rlfT -- "$1" "$2" 2> /dev/null || cp -rfT -- "$1" "$2" || return 1
        rm -rf -- "$1"
    elif [ -d "$1" ] && [ -e "$2" ]; then
        echo "$2 is a file: a folder does not replace it"
        return 1
    else
        mv -fT -- "$1" "$2"
    fi
}
_sk_put() {  # _sk_put SOURCE DEST PARTIAL MODE: copy SOURCE to PARTIAL, check it, then merge or swap it in; else say why
    local want got before=""
    if [ "$4" = checkpoint ]; then before=$(_sk_checkpoint_whole "$1") || { echo "$before"; return 1; }; fi
    mkdir -p -- "$(dirname -- "$2")" || return 1
    cp -rT -- "$1" "$3" || return 1
    want=$(_sk_tally "$1") || return 1
    got=$(_sk_tally "$3") || return 1
    if [ "$want" != "$got" ]; then
        echo "${got% *} of ${want% *} files, $(_sk_bytes "${got#* }") of $(_sk_bytes "${want#* }") arrived"
        return 1
    fi
    if [ "$4" = checkpoint ] && [ "$(_sk_checkpoint_whole "$1")" != "$before" ]; then
        echo "the program wrote to it while it was copied: the previous whole copy stays"
        return 1
    fi
    if [ "$4" = replace ] || [ "$4" = checkpoint ]; then _sk_swap "$3" "$2"; else _sk_merge "$3" "$2"; fi
}
slurmkit_save() {  # slurmkit_save SOURCE DESTINATION [replace|checkpoint]: SOURCE (a file or a folder) arrives at DESTINATION whole or not at all
    local partial="$2.partial-${SLURM_JOB_ID:-$$}${SLURM_RESTART_COUNT:+-run$((SLURM_RESTART_COUNT + 1))}" why="" try kept=""
    # An empty folder is nothing too: the script made the outputs' folders before the payload.
    if _sk_empty "$1"; then
        why="the job left nothing at $1"
    else
        for try in 1 2; do
            if why=$(_sk_put "$1" "$2" "$partial" "${3:-merge}" 2>&1); then
                echo "slurmkit: saved $1 -> $2" >&2
                _sk_outcome+="saved"$'\t'"$2"$'\n'
                # (and in the started file, for status should the shell be killed before its exit file)
                if [ -n "${_sk_final:-}" ] && [ -n "${_sk_started:-}" ]; then printf 'saved\t%s\n' "$2" >> "$_sk_started" || true; fi
                return 0
            fi
            why=${why%%$'\n'*}
            why=${why//$'\t'/ }
            why=${why:-the copy was stopped}
            # The final copy arrived but did not check: what came is kept, never deleted.
            if [ "$try" = 2 ] && [ -n "${_sk_final:-}" ] && [ -e "$partial" ] && [[ $why == *" arrived" ]]; then
                _sk_keep "$partial" "$1" "$why" && kept="kept"$'\t'"$2"$'\t'"$partial"$'\n'
                break
            fi
            rm -rf -- "$partial"
            [ "$try" = 2 ] || echo "slurmkit: saving $1 -> $2 failed ($why): trying once more" >&2
        done
    fi
    echo "slurmkit: NOT saved: $2: $why" >&2
    _sk_lost=1
    _sk_outcome+="not-saved"$'\t'"$2"$'\t'"$why"$'\n'"$kept"
    return 1
}
_sk_empty() {  # _sk_empty PATH: nothing there, or an empty folder
    [ ! -e "$1" ] || { [ -d "$1" ] && [ -z "$(ls -A -- "$1")" ]; }
}
_sk_keep() {  # _sk_keep PARTIAL SOURCE WHY: PARTIAL stays, with PARTIAL.manifest listing what arrived
    {
        printf '# slurmkit: what arrived of %s when job %s ended; it did not check (%s)\n' "$2" "${SLURM_JOB_ID:-}" "$3"
        find "$1" -type f -printf '%s\t%P\n' | LC_ALL=C sort -t $'\t' -k 2
    } > "$1.manifest" || return 1
    echo "slurmkit: what arrived is kept at $1 (listed in $1.manifest)" >&2
}
_sk_hold() {  # _sk_hold SOURCE DEST WHY: a copy of SOURCE kept beside DEST, never in its place, and said so
    local partial="$2.partial-${SLURM_JOB_ID:-$$}${SLURM_RESTART_COUNT:+-run$((SLURM_RESTART_COUNT + 1))}" why=$3
    echo "slurmkit: NOT saved: $2: $why" >&2
    _sk_lost=1
    _sk_outcome+="not-saved"$'\t'"$2"$'\t'"$why"$'\n'
    [ -e "$1" ] && cp -rT -- "$1" "$partial" && _sk_keep "$partial" "$1" "$why" && _sk_outcome+="kept"$'\t'"$2"$'\t'"$partial"$'\n'
}
_sk_copy_back() {  # once, and only once the payload has started: before that there is nothing
    # to save, and a checkpoint cut short while it was restored must not replace the saved one
    local i
    if [ -z "${_sk_payload:-}" ] || [ -n "${_sk_copied_back:-}" ]; then return "${_sk_copied_back:-0}"; fi
    _sk_copied_back=0 _sk_final=1
    _sk_stop_payload "$_sk_exit_stop_s"  # the copy is of files that no longer change
    if [ -n "${_sk_sync:-}" ]; then  # the periodic checkpoint save ends first: never two at once
        kill "$_sk_sync" 2> /dev/null || true
        wait "$_sk_sync" 2> /dev/null || true
    fi
    for ((i = 0; i < ${#_sk_outputs[@]}; i += 2)); do
        slurmkit_save "${_sk_outputs[i]}" "${_sk_outputs[i + 1]}" || _sk_copied_back=1
    done
    if [ "${#_sk_checkpoint[@]}" = 0 ]; then
        :
    elif _sk_empty "${_sk_checkpoint[0]}"; then  # none written yet (a run shorter than its first checkpoint): nothing is lost
        echo "slurmkit: no checkpoint at ${_sk_checkpoint[0]}: nothing to save; ${_sk_checkpoint[1]} stays as it was" >&2
    elif [ -n "${_sk_killed:-}" ]; then  # killed as it ran, the checkpoint may be torn: it is kept beside the previous one, which stays
        _sk_hold "${_sk_checkpoint[0]}" "${_sk_checkpoint[1]}" "the payload was killed as it ran, so it may be torn; the previous one stays" || true
        _sk_copied_back=1
    elif _sk_unmarked_after_a_signal "${_sk_checkpoint[@]}"; then  # (nothing says it is whole: the saved one stays)
        _sk_say_unmarked "${_sk_checkpoint[0]}" "${_sk_checkpoint[1]}"
        _sk_hold "${_sk_checkpoint[0]}" "${_sk_checkpoint[1]}" "the payload was stopped by a signal and the checkpoint has no completion marker, so it may be torn; the previous one stays" || true
        _sk_copied_back=1
    else
        _sk_say_unmarked "${_sk_checkpoint[0]}" "${_sk_checkpoint[1]}"
        slurmkit_save "${_sk_checkpoint[0]}" "${_sk_checkpoint[1]}" checkpoint || _sk_copied_back=1
    fi
    return "$_sk_copied_back"
}
slurmkit_save_now() {  # the final save, now (a chain's link saves before it marks the work done)
    _sk_copy_back
}
_sk_stop_payload() {  # _sk_stop_payload SECONDS: TERM to the payload's process group, as SLURM's own; what is left after SECONDS is killed
    local i
    if [ -z "${_sk_payload:-}" ] || ! _sk_group_runs "$_sk_payload"; then return 0; fi
    kill -TERM -- "-$_sk_payload" 2> /dev/null || true
    for ((i = 0; i < $1 * 10; i++)); do
        _sk_group_runs "$_sk_payload" || return 0
        sleep 0.1
    done
    echo "slurmkit: the payload ran on for $1s after TERM: killing it, so that what is saved no longer changes" >&2
    _sk_killed=1
    kill -KILL -- "-$_sk_payload" 2> /dev/null || true
    wait "$_sk_payload" 2> /dev/null || true
}
_sk_group_runs() {  # _sk_group_runs PGID: a process of the group still runs (a zombie, not yet reaped by its parent, does not)
    kill -0 -- "-$1" 2> /dev/null && ps -e -o pgid= -o stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { n++ } END { exit !n }'
}
_sk_on_usr1() {
    _sk_their_trap USR1
    builtin trap '' USR1 TERM INT  # from here the job only ends: no signal may cut the copy short (SLURM's KILL is the bound)
    _sk_timeout=1 _sk_usr1_at=$SECONDS
    if [ -z "${_sk_payload:-}" ]; then
        _sk_signalled_before_the_payload
    else
        echo "slurmkit: the time limit is near: stopping the payload to save its outputs" >&2
        _sk_stop_payload "$_sk_stop_s"
        _sk_copy_back || true
    fi
    _sk_end_at_limit
    exit 124
}
_sk_signalled_before_the_payload() {  # USR1 came before the payload started (SLURM may send it up to 60 s
    # before the lead, at any time in a job not much longer than the lead): it does not start, and
    # every output is said not saved, so that status names why they are missing
    local i why="the time limit's signal (USR1) came before the payload started, so it did not run: SLURM may send it up to 60 s before stage.lead"
    echo "slurmkit: $why" >&2
    for ((i = 0; i < ${#_sk_outputs[@]}; i += 2)); do
        _sk_outcome+="not-saved"$'\t'"${_sk_outputs[i + 1]}"$'\t'"$why"$'\n'
    done
    if [ "${#_sk_checkpoint[@]}" != 0 ]; then echo "slurmkit: ${_sk_checkpoint[1]} stays as it was" >&2; fi
    _sk_lost=1
}
_sk_end_at_limit() {  # the outputs are saved: the exit file is written now, and SLURM ends the job at its
    # limit, so that sacct says TIMEOUT (a job that exits on its own before it is FAILED 124). The GPU
    # idles until then: the lead less what the stop and the copy took. No limit in sight (no SLURM, or
    # USR1 sent by hand, long before it): the job ends now. Where squeue does not answer, the time
    # left is the USR1 lead (twice STOP_S, as slurmkit renders them) less the time since USR1 came.
    local left
    [ -n "${SLURM_JOB_ID:-}" ] || return 0
    if ! left=$(_sk_time_left_s); then
        left=$((2 * _sk_stop_s - (SECONDS - ${_sk_usr1_at:-$SECONDS})))
        ((left > 0)) || left=0
        echo "slurmkit: squeue gave no time left: estimated from the USR1 lead ($((2 * _sk_stop_s))s before the limit) as ${left}s" >&2
    fi
    if ((left > 2 * _sk_stop_s + 120)); then return 0; fi
    echo "slurmkit: outputs saved; waiting ${left}s for SLURM to end the job at its time limit (sacct: TIMEOUT)" >&2
    _sk_write_exit_file 124
    sleep "$((left + 120))" > /dev/null 2>&1 &
    _sk_nap=$!
    builtin trap 'kill "$_sk_nap" 2> /dev/null; exit 124' TERM  # SLURM's TERM at the limit (its KILL, KillWait later, would do as well)
    wait "$_sk_nap" || true
}
_sk_time_left_s() {  # seconds until this job's time limit, from squeue ([D-]HH:MM:SS); fails where it is not known
    _sk_squeue_s %L
}
_sk_time_limit_s() {  # this job's time limit in seconds, from squeue; fails where it is not known
    _sk_squeue_s %l
}
_sk_squeue_s() {  # _sk_squeue_s %L|%l: squeue's [D-]HH:MM:SS for this job, in seconds
    local left days=0 h=0 m=0 s
    [ -n "${SLURM_JOB_ID:-}" ] && command -v squeue > /dev/null || return 1
    left=$(squeue -h -j "$SLURM_JOB_ID" -o "$1" 2> /dev/null) || return 1
    [[ $left =~ ^(([0-9]+)-)?(([0-9]+):)?(([0-9]+):)?([0-9]+)$ ]] || return 1
    days=${BASH_REMATCH[2]:-0} s=${BASH_REMATCH[7]}
    if [ -n "${BASH_REMATCH[5]}" ]; then h=${BASH_REMATCH[4]} m=${BASH_REMATCH[6]}; else m=${BASH_REMATCH[4]:-0}; fi
    echo "$((((10#$days * 24 + 10#$h) * 60 + 10#$m) * 60 + 10#$s))"
}
_sk_write_started() {  # what this run will save, for `slurmkit status` to name should the shell be killed before it can
    local i destinations=()
    [ -n "${SLURMKIT_JOB_DIR:-}" ] || return 0
    for ((i = 1; i < ${#_sk_outputs[@]}; i += 2)); do destinations+=("${_sk_outputs[i]}"); done
    if [ "${#_sk_checkpoint[@]}" != 0 ]; then destinations+=("${_sk_checkpoint[1]}"); fi
    _sk_started=$SLURMKIT_JOB_DIR/${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-0}}${SLURM_ARRAY_TASK_ID:+_$SLURM_ARRAY_TASK_ID}.started
    printf 'run\t%s\n' "$((${SLURM_RESTART_COUNT:-0} + 1))" > "$_sk_started.partial" &&
        printf 'output\t%s\n' "${destinations[@]}" >> "$_sk_started.partial" &&
        mv -f -- "$_sk_started.partial" "$_sk_started" || echo "slurmkit: $_sk_started could not be written" >&2
}

# ---- The checkpoint: restored before the payload, saved while it runs and at the end.

slurmkit_checkpoint() {  # slurmkit_checkpoint SOURCE DESTINATION SECONDS: registers the checkpoint; slurmkit_run restores DESTINATION to SOURCE before the payload and saves it back every SECONDS
    _sk_checkpoint=("$1" "$2" "$3")
}
_sk_restore_checkpoint() {  # the registered checkpoint copied in, then saved back every SECONDS while the payload runs
    local stale
    [ "${#_sk_checkpoint[@]}" != 0 ] || return 0
    set -- "${_sk_checkpoint[@]}"
    _sk_recover "$2"  # a save cut short between its two renames left the previous one under another name: it comes back
    for stale in "$2".partial-*; do  # copies a killed job left half-made are removed (not one kept with its manifest)
        if [ -e "$stale" ] && [[ $stale != *.manifest ]] && [ ! -e "$stale.manifest" ]; then rm -rf -- "$stale"; fi
    done
    mkdir -p -- "$1"
    if [ -e "$2" ]; then
        cp -rT -- "$2" "$1"
        # (saved only whole: its marker, copied in any order among its files, is made the newest again)
        if [ -e "$1/$_sk_complete" ]; then touch -- "$1/$_sk_complete"; fi
    fi
    export SLURMKIT_CHECKPOINT_COMPLETE=$1/$_sk_complete  # the program touches it after each whole checkpoint
    _sk_sync_loop "$1" "$2" "$3" &
    _sk_sync=$!
}
# A checkpoint is taken only whole: the program touches $SLURMKIT_CHECKPOINT_COMPLETE (the file
# .slurmkit-complete in the checkpoint's folder) once a checkpoint is written; a file written after
# it (the next checkpoint begun) makes it incomplete until the next touch. A copy is put in place
# only if it was complete before the copy and nothing changed during it; else the last whole copy
# stays. The program touches it last, after any pruning of old checkpoints (only files are compared
# with it). A folder with no marker is said to be unmarked: no copier can tell a pause in the middle
# of a write from its end. While the payload runs, and after it ended on its own, it is copied when
# it does not change during the copy; after the payload was stopped by a signal (the time limit, a
# cancel), the final copy is kept beside the saved one (DEST.partial-JOB, with its manifest), which stays.
_sk_complete=.slurmkit-complete
_sk_checkpoint_whole() {  # _sk_checkpoint_whole SOURCE: its files' list (type, size, time, name), unless it is marked and not complete
    local marker=$1/$_sk_complete newer
    if [ -e "$marker" ]; then
        # (files only: a folder's own time changes when the program prunes old checkpoints after the touch)
        newer=$(find "$1" -type f -newer "$marker" ! -path "$marker" -print -quit) || return 1
        if [ -n "$newer" ]; then
            echo "not marked complete: ${newer#"$1"/} was written after $_sk_complete (a checkpoint being written): the previous whole copy stays"
            return 1
        fi
    fi
    find "$1" -printf '%y %s %T@ %P\n' | LC_ALL=C sort
}
_sk_unmarked_after_a_signal() {  # _sk_unmarked_after_a_signal SOURCE DEST: the final copy may be torn and a saved one exists
    # (the payload did not end on its own: stopped at the time limit, cancelled, or killed by a signal,
    # perhaps in the middle of writing the checkpoint; with no marker nothing says the copy is whole)
    [ -d "$1" ] && [ ! -e "$1/$_sk_complete" ] && [ -n "$(ls -A -- "$1" 2> /dev/null)" ] || return 1
    { [ -e "$2" ] || [ -e "$2.slurmkit-old" ]; } || return 1
    [ -z "${_sk_payload_rc:-}" ] || ((_sk_payload_rc > 128))
}
_sk_say_unmarked() {  # _sk_say_unmarked SOURCE DEST: a checkpoint with no completion marker is saved, and said to be
    if [ -d "$1" ] && [ ! -e "$1/$_sk_complete" ] && [ -n "$(ls -A -- "$1" 2> /dev/null)" ]; then
        echo "slurmkit: the checkpoint $1 has no completion marker: it is copied when it does not change during the copy, which cannot tell a paused write from a whole one; touch \$SLURMKIT_CHECKPOINT_COMPLETE last, after each whole checkpoint and any pruning" >&2
        _sk_outcome+="unmarked"$'\t'"$2"$'\n'
    fi
}
_sk_sync_loop() {  # stopped with TERM, it ends after the command in hand (a rename is never cut in two)
    builtin trap 'kill "${_sk_nap:-}" 2> /dev/null; exit 0' TERM
    while true; do
        sleep "$3" > /dev/null 2>&1 &  # an orphan (TERM between two lines) holds no pipe
        _sk_nap=$!
        wait "$_sk_nap"
        slurmkit_save "$1" "$2" checkpoint || true
    done
}

# ---- Inputs into $SLURM_TMPDIR.

slurmkit_stage_in() {  # slurmkit_stage_in ACTION SOURCE TARGET [MORE...]: one input into this node's local disk
    local action=$1 source=$2 target=$3
    shift 3
    case $action in
        copy) cp -r -- "$source" "$target"/ ;;
        copy-as)
            mkdir -p -- "$(dirname -- "$target")"
            cp -rT -- "$source" "$target"
            ;;
        extract)  # MORE: tar's own options (--zstd)
            mkdir -p -- "$target"
            tar "$@" -b 2048 -xf "$source" -C "$target"
            ;;
        mount-image | extract-image)  # a squashfs image: mounted (unmounted when the job ends), or extracted
            _sk_image "${action%-image}" "$source" "$target"
            ;;
        extract-shards)  # MORE: how many at once
            mkdir -p -- "$target"
            find "$source" -maxdepth 1 -name 'shard-*.tar*' -print0 | xargs -0 -r -P "$1" -n 1 tar -b 2048 -C "$target" -xf
            ;;
        *)
            echo "slurmkit: slurmkit_stage_in does not know $action" >&2
            return 2
            ;;
    esac
}
# A squashfs image is copied whole (one large read) under $SLURM_TMPDIR/.slurmkit, then mounted
# read-only with squashfuse, which creates no file on the node, and unmounted when the job ends;
# where it cannot be mounted, unsquashfs extracts it with every core this step has.
_sk_image() {  # _sk_image mount|extract IMAGE FOLDER
    local copy
    copy=${SLURM_TMPDIR:-${TMPDIR:-/tmp}}/.slurmkit/images/$(_sk_image_copy_name "$3")
    mkdir -p -- "$3" "$(dirname -- "$copy")"
    cp -- "$2" "$copy"
    if [ "$1" = mount ]; then
        if command -v squashfuse_ll > /dev/null && squashfuse_ll "$copy" "$3"; then
            _sk_mounts+=("$3")  # unmounted last, by the EXIT trap
            echo "slurmkit: $2 mounted read-only at $3" >&2
            return 0
        fi
        echo "slurmkit: $2 cannot be mounted here (no squashfuse or no FUSE): extracting it" >&2
    fi
    if ! command -v unsquashfs > /dev/null; then
        echo "slurmkit: $2 can be neither mounted nor extracted here (no squashfuse, no unsquashfs): pack it to .tar or .pack" >&2
        return 1
    fi
    unsquashfs -q -n -f -p "$(nproc)" -d "$3" "$copy" > /dev/null
    rm -f -- "$copy"
}
_sk_image_copy_name() {  # _sk_image_copy_name FOLDER: a file name for the image mounted at FOLDER, one per folder
    local name=${1%/}
    echo "${name//[^A-Za-z0-9._-]/_}.sqfs"
}
slurmkit_on_each_node() {  # slurmkit_on_each_node COMMAND...: COMMAND (a function too) once on each of the job's nodes, at once
    # One task on each node, with all the job's cores there (read now: an #SBATCH count edited by hand is followed).
    local cores
    cores=$(_sk_cores_on_each_node)
    (
        # shellcheck disable=SC2046,SC2163
        export -f $(compgen -A function | grep -E '^(_sk_|slurmkit_)') "$1" 2> /dev/null || true
        srun --nodes="$SLURM_NNODES" --ntasks="$SLURM_NNODES" --ntasks-per-node=1 --cpus-per-task="$cores" bash -euo pipefail -c '"$@"' slurmkit-on-each-node "$@"
    )
}
_sk_cores_on_each_node() {  # the job's cores on each node; under --ntasks, SLURM may give nodes unequal shares: the fewest
    if [ -n "${SLURM_NTASKS_PER_NODE:-}" ] || [ -z "${SLURM_JOB_CPUS_PER_NODE:-}" ]; then
        echo $((${SLURM_CPUS_PER_TASK:-1} * ${SLURM_NTASKS_PER_NODE:-1}))
        return
    fi
    local IFS=, share fewest=""
    for share in $SLURM_JOB_CPUS_PER_NODE; do  # "8(x2),4": 8 on each of two nodes, then 4
        share=${share%%(*}
        if [ -z "$fewest" ] || ((share < fewest)); then fewest=$share; fi
    done
    echo "$fewest"
}

# ---- GPU use, for `slurmkit report`.
# slurmkit_run samples the job's GPUs in the background, into <job>.gpu.<host>.csv beside the exit
# file (so only under slurmkit submit, which names that folder), one sampler per node, and stops
# it before the exit file is written. It needs no call in the script: a job SLURM gave GPUs is
# sampled with nvidia-smi (rocm-smi where only that is installed), about 300 times over its time
# limit (every 1 to 60 s); `monitor: {gpu: false}` in the spec renders `slurmkit_sample_gpus off`.

slurmkit_sample_gpus() {  # slurmkit_sample_gpus off: no GPU sampler for this job (it is on by default)
    _sk_gpu_off=1
}
_sk_start_gpu_sampler() {  # (with slurmkit submit's log folder only: the samples go beside the exit file)
    [ -z "${_sk_gpu_off:-}" ] && [ -n "${SLURMKIT_JOB_DIR:-}" ] && [ -n "${SLURM_JOB_GPUS:-}${SLURM_GPUS_ON_NODE:-}" ] &&
        [ -z "${_sk_gpu:-}" ] || return 0
    SLURMKIT_GPU_TOOL=nvidia-smi
    if ! command -v nvidia-smi > /dev/null && command -v rocm-smi > /dev/null; then SLURMKIT_GPU_TOOL=rocm-smi; fi
    SLURMKIT_GPU_SAMPLE_INTERVAL=${SLURMKIT_GPU_SAMPLE_INTERVAL:-$(_sk_gpu_interval_s)}   # one set beforehand wins (a benchmark's)
    export SLURMKIT_GPU_TOOL SLURMKIT_GPU_SAMPLE_INTERVAL
    if [ "${SLURM_NNODES:-1}" -gt 1 ]; then
        # One per node: a step beside the payload step (--overlap) with one core; it keeps the GPUs of the job
        # in view, as a step does by default, so that nvidia-smi sees them through the cgroup.
        (
            export -f _sk_gpu_sample _sk_rocm_loop
            exec srun --overlap --nodes="$SLURM_NNODES" --ntasks="$SLURM_NNODES" --ntasks-per-node=1 --cpus-per-task=1 --mem=0 \
                bash -c _sk_gpu_sample
        ) &
    else
        builtin trap '' USR2   # the sampler's stop signal: one sent as it starts is ignored, not fatal, until its trap is set
        _sk_gpu_sample &
    fi
    _sk_gpu=$!
}
_sk_gpu_interval_s() {  # seconds between samples: the time limit over 300, from 1 to 60 (slurmkit/resolve/gpusampler.py's rule)
    local limit
    if ! limit=$(_sk_time_limit_s); then
        echo "slurmkit: squeue gave no time limit: the GPUs are sampled every 60s" >&2
        echo 60
        return 0
    fi
    limit=$((limit / 300))
    echo $((limit < 1 ? 1 : limit > 60 ? 60 : limit))
}
_sk_gpu_sample() {  # on one node until USR2 or TERM: the CSV; when it stops, the .state line
    local smi="" host base stop=""
    builtin trap 'stop=1' TERM INT USR2   # a stop before the sampler has started is kept for below
    host=$(hostname -s)
    base=$SLURMKIT_JOB_DIR/${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}${SLURM_ARRAY_TASK_ID:+_$SLURM_ARRAY_TASK_ID}.gpu.$host
    if ! command -v "$SLURMKIT_GPU_TOOL" > /dev/null; then
        echo "unavailable $SLURMKIT_GPU_TOOL is not on PATH on $host" > "$base.state"
        return 0
    fi
    # (every command of the trap may fail: set -e must not cut it short)
    # Once, and with no command substitution in it: at the time limit SLURM's TERM and the exit
    # trap's USR2 come together, and bash 5.2 run again inside its own $(...) fails to parse it.
    builtin trap 'builtin trap "" TERM INT USR2; if [ -n "$smi" ]; then kill "$smi" 2> /dev/null || true; fi; wait || true; printf "stopped %(%s)T interval=%s\n" -1 "$SLURMKIT_GPU_SAMPLE_INTERVAL" > "$base.state"; exit 0' TERM INT USR2
    if [ -n "$stop" ]; then kill -USR2 "$BASHPID"; fi
    if [ "$SLURMKIT_GPU_TOOL" = rocm-smi ]; then
        _sk_rocm_loop >> "$base.csv" &
    else
        nvidia-smi --query-gpu=timestamp,index,uuid,name,utilization.gpu,memory.used,memory.total,power.draw \
            --format=csv,noheader,nounits -l "$SLURMKIT_GPU_SAMPLE_INTERVAL" >> "$base.csv" 2> /dev/null &
    fi
    smi=$!
    wait "$smi" || true
    printf 'stopped %(%s)T interval=%s\n' -1 "$SLURMKIT_GPU_SAMPLE_INTERVAL" > "$base.state"
}
_sk_rocm_loop() {  # rocm-smi has no loop of its own: its CSV becomes the layout of nvidia-smi (what it lacks is [N/A])
    while true; do
        rocm-smi --showuse --showmeminfo vram --showpower --showproductname --csv 2> /dev/null | awk -F, -v ts="$(date '+%Y/%m/%d %H:%M:%S.000')" '
            function v(i) {return (i && $i != "" && $i != "N/A") ? $i : "[N/A]"}
            function mib(i) {return (i && $i ~ /^[0-9]+$/) ? int($i / 1048576) : "[N/A]"}
            NR == 1 {for (i = 1; i <= NF; i++) {u = $i ~ /GPU use/ ? i : u; m = $i ~ /VRAM Total Used/ ? i : m
                     t = $i ~ /VRAM Total Memory/ ? i : t; p = ($i ~ /Power/ && !p) ? i : p; n = ($i ~ /Card [Ss]eries/ && !n) ? i : n}
                     next}
            $1 ~ /^card[0-9]+$/ {printf "%s, %s, [N/A], %s, %s, %s, %s, %s\n", ts, substr($1, 5), v(n), v(u), mib(m), mib(t), v(p)}'
        sleep "$SLURMKIT_GPU_SAMPLE_INTERVAL"
    done
}
_sk_gpu_stop() {  # USR2 to the sampler (srun passes it on; a TERM it would answer with a KILL to its
    local i           # tasks), again each second (a step still starting its tasks misses one); its
    for ((i = 0; i < 100; i++)); do   # .state line is written within 10 s, else it is not waited for
        if ((i % 10 == 0)); then kill -USR2 "$_sk_gpu" 2> /dev/null || return 0; fi
        kill -0 "$_sk_gpu" 2> /dev/null || break
        sleep 0.1
    done
    kill -0 "$_sk_gpu" 2> /dev/null || wait "$_sk_gpu" 2> /dev/null || true
}

# ---- Each process's place (distributed kinds).
# srun's tasks: `srun --task-prolog="$SLURMKIT_TASK_ENV" COMMAND`. slurmstepd runs this file
# (executed, not sourced: see its last lines) before each task, with the task's environment,
# and sets every `export NAME=value` it prints in that task. Ranks that torchrun or mpirun
# start: `... bash -c '_sk_task "$@"' _sk_task COMMAND`, where _sk_task exports the same.

slurmkit_task_env() {  # slurmkit_task_env [ranks] [tf-config=FIRST_PORT] [gpu=VARIABLE]: SLURMKIT_TASK_ENV, for srun --task-prolog
    slurmkit_place_tasks "$@"
    # The file the script checked and sourced (a path: render --standalone's has none), if executable
    if [[ ${_sk_lib:-} == /* ]] && [ -f "$_sk_lib" ] && [ -x "$_sk_lib" ]; then
        SLURMKIT_TASK_ENV=$_sk_lib
    else  # else a copy of what it needs, on each node's local disk
        SLURMKIT_TASK_ENV=$SLURM_TMPDIR/slurmkit-task-env
        { echo '#!/bin/bash'; declare -f _sk_task_env _sk_task_exports _sk_task_cpus _sk_allowed_cpus _sk_count_cpus _sk_count_cores _sk_cpu_slice; echo _sk_task_env; } > "$SLURMKIT_TASK_ENV.src" &&
            chmod +x "$SLURMKIT_TASK_ENV.src" || return 1
        sbcast -f "$SLURMKIT_TASK_ENV.src" "$SLURMKIT_TASK_ENV" || { echo "slurmkit: sbcast could not copy the task set-up to the job's nodes" >&2; return 1; }
    fi
    export SLURMKIT_TASK_ENV
}
_sk_task_env() {  # as srun's task prolog: the task's place as `export` lines; its CPU slice, where SLURM bound none
    local exports cpus
    # (its stderr goes to slurmd's log: a line `print TEXT` is what reaches the task's output)
    if ! exports=$(_sk_task_exports 2>&1); then echo "print ${exports##*$'\n'}"; return 1; fi
    [ -z "$exports" ] || echo "export ${exports//$'\n'/$'\n'export }"
    cpus=$(_sk_task_cpus "/proc/$PPID/status") || return 0
    # The prolog's parent is the task itself, before it execs the command: the binding stays with it.
    [ -z "$cpus" ] || taskset -p -c "$cpus" "$PPID" > /dev/null
}
_sk_task_exports() {  # NAME=value lines (values without spaces but TF_CONFIG's, which slurmstepd takes to the end of the line)
    if [ -n "${_sk_task_ranks:-}" ]; then
        printf '%s\n' "RANK=$SLURM_PROCID" "LOCAL_RANK=$SLURM_LOCALID" "WORLD_SIZE=$SLURM_NTASKS" "LOCAL_WORLD_SIZE=${SLURM_NTASKS_PER_NODE:-1}"
    fi
    if [ -n "${_sk_tf_workers:-}" ]; then
        echo "TF_CONFIG={\"cluster\": {\"worker\": [\"${_sk_tf_workers//,/\", \"}\"]}, \"task\": {\"type\": \"worker\", \"index\": $SLURM_PROCID}}"
    fi
    if [ -n "${_sk_task_gpu:-}" ]; then
        # One GPU per process, as TensorFlow's SlurmClusterResolver gives it: of the node's GPUs in
        # CUDA_VISIBLE_DEVICES, the one at this process's place on the node.
        local gpus rank=${!_sk_task_gpu:-}
        IFS=, read -ra gpus <<< "${CUDA_VISIBLE_DEVICES:-}"
        if [[ ! $rank =~ ^[0-9]+$ ]] || ((rank >= ${#gpus[@]})); then
            echo "slurmkit: process $_sk_task_gpu=${rank:-unset} on $(hostname) has no GPU of its own in CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-}: ask one task per GPU on each node" >&2
            return 1
        fi
        echo "CUDA_VISIBLE_DEVICES=${gpus[rank]}"
    fi
}
_sk_task_cpus() {  # _sk_task_cpus STATUS_FILE (the task's): this task's slice of the CPUs its node gives the step (the i-th of as many as it has tasks there), or nothing
    local allowed
    allowed=$(_sk_allowed_cpus "$1")
    # Already no more than its own (srun --cpu-bind, where the task plugin binds): as it is. Its own
    # counted either way SLURM counts a CPU: logical CPUs, or cores (with SMT, 12 cores are 24 CPUs).
    (($(_sk_count_cpus "$allowed") > ${SLURM_CPUS_PER_TASK:-1})) || return 0
    (($(_sk_count_cores "$allowed") > ${SLURM_CPUS_PER_TASK:-1})) || return 0
    _sk_cpu_slice "$allowed" "${SLURM_LOCALID:-0}" "${SLURM_NTASKS_PER_NODE:-1}"
}
_sk_allowed_cpus() {  # _sk_allowed_cpus STATUS_FILE: the CPUs a process may run on, one per line
    local ranges range cpu
    IFS=, read -ra ranges <<< "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$1")"
    for range in "${ranges[@]}"; do
        for ((cpu = ${range%-*}; cpu <= ${range#*-}; cpu++)); do echo "$cpu"; done
    done
}
_sk_count_cpus() {  # _sk_count_cpus LINES: how many CPUs _sk_allowed_cpus listed
    local cpus
    mapfile -t cpus <<< "$1"
    echo "${#cpus[@]}"
}
_sk_count_cores() {  # _sk_count_cores LINES: how many distinct cores hold the CPUs _sk_allowed_cpus listed (sysfs topology; a CPU without one is a core)
    local cpu topology cores=()
    while IFS= read -r cpu; do
        [ -n "$cpu" ] || continue
        topology=${_sk_cpu_sysfs:-/sys/devices/system/cpu}/cpu$cpu/topology
        if [ -r "$topology/core_id" ]; then
            cores+=("$(cat "$topology/physical_package_id" 2> /dev/null):$(cat "$topology/core_id")")
        else
            cores+=("cpu$cpu")
        fi
    done <<< "$1"
    if ((${#cores[@]} == 0)); then echo 0; else printf '%s\n' "${cores[@]}" | sort -u | wc -l; fi
}
_sk_cpu_slice() {  # _sk_cpu_slice LINES INDEX COUNT: the INDEX-th of COUNT equal slices of the CPUs, comma-separated (nothing if a slice is empty)
    local cpus share
    [ -n "$1" ] || return 0
    mapfile -t cpus <<< "$1"
    share=$((${#cpus[@]} / $3))
    ((share > 0)) || return 0
    (IFS=,; echo "${cpus[*]:$2*share:share}")
}

slurmkit_place_tasks() {  # slurmkit_place_tasks [ranks] [tf-config=FIRST_PORT] [gpu=VARIABLE] [bind]: what _sk_task gives each process
    local word
    export _sk_task_ranks="" _sk_task_gpu="" _sk_task_bind="" _sk_tf_workers=""
    for word in "$@"; do
        case $word in
            ranks) _sk_task_ranks=1 ;;
            tf-config=*) _sk_tf_workers=$(_sk_tf_worker_list "${word#tf-config=}") ;;
            gpu=*) _sk_task_gpu=${word#gpu=} ;;
            bind) _sk_task_bind=1 ;;
        esac
    done
    export -f _sk_task _sk_task_exports _sk_bind_share _sk_allowed_cpus _sk_cpu_slice
}
_sk_tf_worker_list() {  # _sk_tf_worker_list FIRST_PORT: every task is a TensorFlow worker; SLURM places ranks node by node, in this host order. Each
    local host i rank=0 workers=""  # worker has a port of its own, so that workers on hosts that share an address do not collide
    for host in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
        for ((i = 0; i < ${SLURM_NTASKS_PER_NODE:-1}; i++)); do
            workers+="${workers:+,}$host:$(($1 + 1 + rank))"
            rank=$((rank + 1))
        done
    done
    echo "$workers"
}
_sk_task() {  # _sk_task COMMAND...: COMMAND with its place (rank, TF_CONFIG, its own GPU, its share of the CPUs)
    local exports line
    exports=$(_sk_task_exports) || exit 1
    while IFS= read -r line; do
        # shellcheck disable=SC2163  # each line is NAME=value: export that, not a variable named by it
        [ -z "$line" ] || export "$line"
    done <<< "$exports"
    if [ -n "${_sk_task_bind:-}" ]; then _sk_bind_share "$@"; fi
    exec "$@"
}
_sk_bind_share() {  # this rank's share of the CPUs the job may use: rank i takes the i-th slice, so that
    local cpu_list      # ranks do not steal each other's cores (torchrun itself binds nothing)
    cpu_list=$(_sk_cpu_slice "$(_sk_allowed_cpus /proc/self/status)" "$LOCAL_RANK" "$LOCAL_WORLD_SIZE")
    if [ -n "$cpu_list" ]; then exec taskset -c "$cpu_list" "$@"; fi
}

# ---- The rendezvous and the per-node virtualenv (distributed kinds).

slurmkit_rendezvous() {  # slurmkit_rendezvous PORT: MASTER_ADDR (the job's first host, which leads) and MASTER_PORT=PORT, exported
    local hosts
    hosts=$(scontrol show hostnames "$SLURM_JOB_NODELIST") || return 1
    export MASTER_ADDR=${hosts%%$'\n'*} MASTER_PORT=$1
}
slurmkit_venv_on_each_node() {  # slurmkit_venv_on_each_node VENV PIP_ARGUMENTS...: VENV made on every node at once, then activated here
    # On each node, with one task and all the node's cores: virtualenv --no-download VENV, then
    # pip install PIP_ARGUMENTS in it. Where pip reads the site's wheelhouse (--no-index), pip
    # itself is upgraded from it first, as the Alliance's recipe does.
    slurmkit_on_each_node _sk_make_node_venv "$@"
    slurmkit_activate "$1"
}
_sk_make_node_venv() {  # _sk_make_node_venv VENV PIP_ARGUMENTS...: on this node
    virtualenv --no-download "$1"
    slurmkit_activate "$1"
    if [[ " ${*:2} " == *" --no-index "* ]]; then pip install --no-index --upgrade pip; fi
    pip install "${@:2}"
}
slurmkit_activate_built() {  # slurmkit_activate_built VENV KEY BUILD_COMMAND: VENV, built whole on the login node for this job, activated
    # Its key (.slurmkit-env-key, written last by the build) says it was built whole, for these
    # modules and requirements; without it the job stops at once with the command that builds it.
    if ! grep -qx -- "$2" "$1/.slurmkit-env-key" 2> /dev/null; then
        printf 'slurmkit: no virtualenv is built for this job at %s: run %s on the login node, then submit again\n' "$1" "$3" >&2
        exit 1
    fi
    slurmkit_activate "$1"
}
slurmkit_horovod_wheel() {  # slurmkit_horovod_wheel --frameworks pytorch[,tensorflow] --cache DIR [OPTION...]: Horovod in the venv
    # Horovod with MPI and the frameworks named: the site's wheelhouse's horovod if the check
    # (import horovod.torch ...) passes with it, else slurmkit_build's wheel for this toolchain,
    # compiled once from the source fetched at submission (DIR/sources/horovod-VERSION) and
    # cached in DIR. The other options: --version V (horovod==V; default: the newest),
    # --profile NAME (part of the cache key), --cpu-only (no NCCL), --nccl HOME (default: the nccl
    # module's $EBROOTNCCL), --no-site-wheel (skip the wheelhouse's horovod), --index (no
    # wheelhouse: requirements from the package index, nothing prebuilt).
    local frameworks="" cache="" version="" profile="" gpu=1 nccl=${EBROOTNCCL:-} index=--no-index site=1 framework check=""
    local variables=(HOROVOD_WITH_MPI=1 HOROVOD_WITHOUT_MXNET=1 HOROVOD_WITHOUT_GLOO=1)
    while [ $# -gt 0 ]; do
        case $1 in
            --frameworks) frameworks=$2; shift ;;
            --cache) cache=$2; shift ;;
            --version) version=$2; shift ;;
            --profile) profile=$2; shift ;;
            --nccl) nccl=$2; shift ;;
            --cpu-only) gpu="" ;;
            --no-site-wheel) site="" ;;
            --index) index="" site="" ;;
            *) echo "slurmkit_horovod_wheel: unknown option $1" >&2; return 2 ;;
        esac
        shift
    done
    for framework in pytorch tensorflow; do
        local name=${framework^^} module=horovod.${framework/pytorch/torch}
        if [[ ,$frameworks, == *,$framework,* ]]; then
            variables+=("HOROVOD_WITH_$name=1") check+=${check:+, }$module
        else
            variables+=("HOROVOD_WITHOUT_$name=1")
        fi
    done
    if [ -n "$gpu" ]; then
        variables+=(HOROVOD_GPU_OPERATIONS=NCCL ${nccl:+"HOROVOD_NCCL_HOME=$nccl"} ${CUDA_HOME:+"HOROVOD_CUDA_HOME=$CUDA_HOME"})
    else
        variables+=(HOROVOD_CPU_OPERATIONS=MPI)
    fi
    local requirement=horovod${version:+==$version}
    if [ -n "$site" ] && pip install --no-index "$requirement" && python -c "import $check"; then
        echo "slurmkit: horovod from the site's wheelhouse" >&2
        return 0
    fi
    slurmkit_build "$profile" "$index" 'setuptools wheel cmake packaging psutil pyyaml cloudpickle cffi' horovod "$requirement" \
        "$cache/sources/horovod-${version:-newest}" "$cache" "import $check" "${variables[@]}"
}

# ---- Lightning's auto-requeue.

slurmkit_lightning_requeue() {  # slurmkit_lightning_requeue SECONDS: USR1 goes to the ranks; the requeue's TERM that follows is no failure
    _sk_requeue_wait_s=$1
    _sk_trap _sk_on_requeue_signal USR1
}
_sk_on_requeue_signal() {
    local rc=0
    _sk_their_trap USR1
    _sk_requeue=1
    if [ -z "${_sk_payload:-}" ]; then
        echo "slurmkit: the time limit is near and the payload has not started: nothing to save" >&2
        return 0
    fi
    echo "slurmkit: the time limit is near: SIGUSR1 to the ranks, for Lightning to save a checkpoint and requeue the job" >&2
    kill -USR1 "$_sk_payload" 2> /dev/null || true
    wait "$_sk_payload" || rc=$?
    # The payload ended before the requeue's TERM came: give the requeue time to arrive rather
    # than end the job under it (the job would end as done, then start again).
    echo "slurmkit: the program ended (exit $rc) after SIGUSR1; waiting up to ${_sk_requeue_wait_s}s for Lightning's requeue (none comes if the program did not ask for one: the job then ends at its limit)" >&2
    sleep "$_sk_requeue_wait_s" > /dev/null 2>&1 &
    wait $! || true
    _sk_requeue=""
    exit "$rc"
}

# ---- Many small tasks (GNU Parallel).

slurmkit_run_many_tasks() {  # slurmkit_run_many_tasks FUNCTION: the script's FUNCTION on each node at once (GNU Parallel's there), then the tasks counted
    local rc=0 node_tasks=$1
    export -f "${node_tasks:?}" slurmkit_tasks_of_this_node
    _sk_restore_checkpoint
    if [ -n "$_sk_saves" ]; then _sk_write_started; fi
    _sk_start_gpu_sampler
    if [ -n "$_sk_saves" ]; then set -m; fi  # in a process group of its own, so that all it starts is stopped with it before the final copy
    if ((SLURM_NNODES > 1)); then  # (no SLURMKIT_TASKS_AT_ONCE where one task holds the node's cores: --nodes changed by hand)
        # shellcheck disable=SC2016  # ($1 in single quotes: the function's name, read by the step's bash)
        srun --nodes="$SLURM_NNODES" --ntasks="$SLURM_NNODES" --ntasks-per-node=1 --cpus-per-task="$((${SLURMKIT_TASKS_AT_ONCE:-1} * ${SLURM_CPUS_PER_TASK:-1}))" \
            bash -c 'set -euo pipefail; "$1"' slurmkit-many-tasks "$node_tasks" &
    else
        "$node_tasks" &
    fi
    _sk_payload=$!
    if [ -n "$_sk_saves" ]; then set +m; fi
    wait "$_sk_payload" || rc=$?
    _sk_tally_tasks "$rc"
}
slurmkit_prepare_joblogs() {  # GNU Parallel on PATH; $SLURMKIT_JOBLOGS holds joblogs of this task file and node count, or none
    local log other
    if ! command -v parallel > /dev/null; then
        echo "slurmkit: GNU Parallel (parallel) is not on PATH on $(hostname): add its module to environment.modules" >&2
        return 1
    fi
    mkdir -p -- "$SLURMKIT_JOBLOGS" || return 1
    # Tasks are known by their line: the file may grow at its end, nothing else.
    if [ -e "$SLURMKIT_JOBLOGS/tasks" ] && ! cmp -s -n "$(stat -c %s -- "$SLURMKIT_JOBLOGS/tasks")" -- "$SLURMKIT_JOBLOGS/tasks" "$SLURMKIT_TASK_FILE"; then
        echo "slurmkit: $SLURMKIT_TASK_FILE is not the task file the joblogs in $SLURMKIT_JOBLOGS began with (or is gone): add lines at the end only, or remove $SLURMKIT_JOBLOGS to start over" >&2
        return 2
    fi
    other=$(find "$SLURMKIT_JOBLOGS" -maxdepth 1 -name 'node-*.log' ! -name "node-*-of-$SLURM_NNODES.log" -print -quit)
    if [ -n "$other" ]; then
        echo "slurmkit: $other is from a run on another number of nodes: resume on as many nodes, or remove $SLURMKIT_JOBLOGS to start over" >&2
        return 2
    fi
    for log in "$SLURMKIT_JOBLOGS"/node-*-of-"$SLURM_NNODES".log; do  # a last line cut short by a kill goes
        if [ -n "$(tail -c 1 -- "$log" 2> /dev/null)" ]; then sed -i '$d' -- "$log" || return 1; fi
    done
    cp -- "$SLURMKIT_TASK_FILE" "$SLURMKIT_JOBLOGS/tasks.partial" && mv -f -- "$SLURMKIT_JOBLOGS/tasks.partial" "$SLURMKIT_JOBLOGS/tasks"
}
slurmkit_tasks_of_this_node() {  # this node's lines of the task file: node i of N takes lines i, i+N, ... (blank lines skipped)
    awk -v node="${SLURM_NODEID:-0}" -v nodes="$SLURM_NNODES" 'NF && k++ % nodes == node' "$SLURMKIT_TASK_FILE"
}
_sk_tally_tasks() {  # _sk_tally_tasks RC: a task's last line in the joblogs says how it ended; any failed or not run: 1, else RC
    local _sk_logs=("$SLURMKIT_JOBLOGS"/node-*-of-"$SLURM_NNODES".log)
    [ -e "${_sk_logs[0]}" ] || _sk_logs=(/dev/null)  # no joblog: no task ran
    awk -F '\t' -v all="$(awk NF "$SLURMKIT_TASK_FILE" | wc -l)" -v joblogs="$SLURMKIT_JOBLOGS" '
        FNR > 1 { failed[FILENAME, $1] = ($7 != 0 || $8 != 0) }
        END {
            for (task in failed) { ran++; bad += failed[task] }
            printf "slurmkit: %d of %d tasks succeeded, %d failed, %d not run (joblogs: %s)\n", ran - bad, all, bad, all - ran, joblogs
            exit (bad > 0 || ran < all)
        }' "${_sk_logs[@]}" >&2 || return 1
    return "$1"
}

# ---- Builds: a wheel built once for each toolchain, kept in the build cache.
# A wheel is built once for each toolchain (the loaded modules, python, framework versions) and
# kept in the build cache; later jobs install it in seconds. A lock keeps two jobs from building
# the same one at once. CHECK imports the compiled part (horovod.torch, not just horovod), so a
# wheel built for another framework version fails here. pip's own wheel cache is not used: it
# keys a wheel by its source alone, so it would hand back one built against the modules of an
# earlier toolchain. SOURCE, where given, is the folder of the source archive fetched on the
# login node (slurmkit submit, slurmkit build, slurmkit env build: compute nodes may reach no
# index, and a wheelhouse holds no source); the wheel is compiled from it, and its hash is part
# of the key.

slurmkit_build() {  # slurmkit_build PROFILE 'PIP OPTIONS' 'BUILD REQUIREMENTS' NAME REQUIREMENT SOURCE CACHE CHECK [VAR=VALUE...]
    local profile=$1 options requires name=$4 requirement=$5 source=$6 cache=$7 check=$8 target=$5 inputs key dir
    read -ra options <<< "$2"
    read -ra requires <<< "$3"
    shift 8
    if [ -n "$source" ]; then
        target=$(_sk_fetched_source "$source" "$requirement") || return 1
    fi
    inputs=$(
        echo "profile=$profile"
        echo "requirement=$requirement"
        if [ -n "$source" ]; then echo "source=$(sha256sum < "$target" | cut -c1-64)"; fi
        printf 'variable %s\n' "$@"
        python -c 'import platform; print("python=" + platform.python_version())'
        python -c 'import importlib.metadata as m
for name in ("torch", "tensorflow"):
    try:
        print(name + "=" + m.version(name))
    except m.PackageNotFoundError:
        pass'
        echo "modules=${LOADEDMODULES:-}"
    )
    key=$(sha256sum <<< "$inputs" | cut -c1-16)
    dir=$cache/$name/$profile-$key
    mkdir -p -- "$cache/$name" || return 1
    {
        flock 9 || return 1
        if compgen -G "$dir/*.whl" > /dev/null; then
            echo "slurmkit: $requirement from the build cache: $dir" >&2
        else
            # Only a whole build is renamed into place; a folder without a wheel is not one.
            echo "slurmkit: building $requirement for this toolchain into $dir" >&2
            rm -rf -- "$dir.partial" "$dir"
            mkdir -p -- "$dir.partial" || return 1
            pip install "${options[@]}" "${requires[@]}" || return 1
            if ! env "$@" pip wheel --no-cache-dir --no-deps --no-build-isolation "${options[@]}" -w "$dir.partial" "$target"; then
                rm -rf -- "$dir.partial"
                echo "slurmkit: the build of $requirement failed: nothing was cached" >&2
                return 1
            fi
            echo "$inputs" > "$dir.partial/key.txt" && mv -T -- "$dir.partial" "$dir" || return 1
        fi
    } 9> "$dir.lock" || return 1
    # --force-reinstall: a site wheel of the same version that failed the check stays installed otherwise.
    pip install --no-index --no-deps --force-reinstall "$dir"/*.whl || return 1
    python -c "$check"
}
_sk_fetched_source() {  # _sk_fetched_source FOLDER REQUIREMENT: the one source archive in FOLDER, else why the job stops
    local archives
    archives=$(compgen -G "$1/*.tar.gz") || archives=
    if [ -z "$archives" ] || [[ $archives == *$'\n'* ]]; then
        printf 'slurmkit: no source of %s in %s: on the login node, slurmkit submit (or slurmkit build --spec JOB.yaml) fetches it there\n' "$2" "$1" >&2
        return 1
    fi
    if [ -f "$1/SOURCE.txt" ]; then sed 's/^/slurmkit: source: /' "$1/SOURCE.txt" >&2; fi
    printf '%s\n' "$archives"
}

# ---- NCCL from a tarball, unpacked once into the build cache.
# Horovod builds against it (HOROVOD_NCCL_HOME) and the job loads it (LD_LIBRARY_PATH). A lock
# keeps two jobs from unpacking it at once; it is unpacked beside its place and renamed into
# place only whole: one folder holding lib/libnccl.so and include/nccl.h inside it, as NVIDIA's
# tarballs are. SETRPATHS: the site's script for binaries installed by hand, if it has one.

slurmkit_unpack_nccl() {  # slurmkit_unpack_nccl TARBALL HOME [SETRPATHS]
    local tarball=$1 home=$2 setrpaths=${3:-} top
    mkdir -p -- "${home%/*}" || return 1
    {
        flock 9 || return 1
        [ -f "$home/lib/libnccl.so" ] && return 0
        if [ ! -f "$tarball" ] || [ ! -r "$tarball" ]; then
            echo "slurmkit: the NCCL tarball $tarball is not there (or not readable) on $(hostname -s)" >&2
            return 1
        fi
        echo "slurmkit: unpacking NCCL from $tarball into $home" >&2
        rm -rf -- "$home.partial" && mkdir -p -- "$home.partial" || return 1
        top=$(tar -xf "$tarball" -C "$home.partial" --no-same-owner && _sk_nccl_folder "$home.partial") || {
            rm -rf -- "$home.partial"
            echo "slurmkit: $tarball is not an NCCL tarball (one folder holding lib/libnccl.so and include/nccl.h): nothing was unpacked" >&2
            return 1
        }
        if [ -n "$setrpaths" ] && ! "$setrpaths" --path "$top" --add_origin; then
            rm -rf -- "$home.partial"
            echo "slurmkit: $setrpaths failed on NCCL's libraries: nothing was unpacked" >&2
            return 1
        fi
        rm -rf -- "$home" && mv -T -- "$top" "$home" && rm -rf -- "$home.partial"
    } 9> "$home.lock"
}
_sk_nccl_folder() {  # the one folder an unpacked NCCL tarball holds, if it has NCCL's layout and its library is in it
    local entry count=0 folder=
    for entry in "$1"/* "$1"/.[!.]*; do
        if [ -e "$entry" ] || [ -L "$entry" ]; then count=$((count + 1)) folder=$entry; fi
    done
    [ "$count" -eq 1 ] && [ -d "$folder" ] && [ ! -L "$folder" ] || return 1
    [ -f "$folder/lib/libnccl.so" ] && [ -f "$folder/include/nccl.h" ] || return 1
    case $(readlink -f -- "$folder/lib/libnccl.so") in "$(readlink -f -- "$folder")"/*) ;; *) return 1 ;; esac
    printf '%s\n' "$folder"
}

# ---- Run rather than sourced: srun's task prolog (slurmkit_task_env) prints the task's place.
if [ "${BASH_SOURCE[0]-}" = "$0" ] && [[ ${0##*/} == slurmkit-runtime-* ]]; then _sk_task_env; fi
