# The stand-ins of a traced run (slurmkit/port/verify.py), sourced through BASH_ENV before the
# job script. Every command the script runs is recorded by the recorder (tracerecord.py), one
# JSON line each; no real program runs. PATH holds only the recorder's stand-ins, and any other
# command reaches command_not_found_handle. The builtins that could reach outside the trace
# folder are functions here: they record, and refuse what they cannot keep inside it.
# This file's own names start with _tr_; the DEBUG trap passes over commands that do (and over
# the builtins the stand-ins call, written _tr_=1 builtin NAME). Its functions' locals are
# declared +x: bash exports a local that shadows a variable the script exported (a script's
# `export name=T-1` would reach its programs as the stand-in's own `name`).

_tr_record() {  # _tr_record KIND WORD...: one line in the trace; the recorder's output, if any
    _tr_busy=1
    local -
    set +x
    # none of this file's names reaches a program: one assigned under the script's set -a is exported
    # (_tr_busy=1 in a task GNU Parallel's stand-in starts would turn its trace off)
    builtin export -n "${!_tr_@}"
    _TR_CALLER="${FUNCNAME[*]:2} ${_TR_OUTER_CALLER-}" _TR_LINES="${BASH_LINENO[*]:1} ${_TR_OUTER_LINES-}" \
        "$_TR_PYTHON" -S "$_TR_RECORDER" "$@"
    _tr_status=$?
    _tr_busy=
    return $_tr_status
}

_tr_written() {  # _tr_written WORDS: WORDS (as the script wrote them) hold text of their own, not only expansions
    local +x rest=$1          # eval "$cmd" and bash -c "$cmd" run what the script computed: not traceable
    # "$@" alone passes on a caller's words, written out where it was called (srun bash -c 'f "$@"' f WORDS)
    [[ $rest =~ ^[[:space:]]*\"?\$\{?@(:[0-9]+)?\}?\"?[[:space:]]*$ ]] && return 0
    while [[ $rest =~ \$\([^\)]*\)|\`[^\`]*\`|\$\{[^\}]*\}|\$[A-Za-z_@*#?0-9][A-Za-z0-9_]* ]]; do
        rest=${rest/"${BASH_REMATCH[0]}"/}
    done
    rest=${rest//[\"\'[:space:]]/}
    [[ -n $rest ]]
}

_tr_expand() {  # _tr_expand WORD ARG...: WORD expanded (in _tr_w) as the command would, with ARG... as $1...; 1 if that could run anything
    local -
    set +eu
    _tr_w=
    case $1 in *'$('* | *'`'* | *'?'*) return 1 ;; esac
    local +x word=$1
    case $word in '"$@"' | '$@' | '"${@}"' | '${@}' | '$*' | '"$*"') word='$1' ;; esac
    shift
    builtin eval "_tr_w=$word" 2> /dev/null
}

_tr_debug() {  # the DEBUG trap: the guard, with the script's BASH_REMATCH kept (the guard matches too), not under set -x
    [[ -o functrace ]] || builtin set -o functrace   # bash turns it off when it finds no debugger for extdebug
    [[ " ${FUNCNAME[*]:1} " == *" _tr_"* ]] && return 0   # the trace's own functions (in a trap too, see below)
    [[ ${_tr_bang_shell-} == "$BASHPID" && ${!-} == "${_tr_bang-}" ]] || _tr_async
    local -
    local +x matched=("${BASH_REMATCH[@]}") status
    set +x
    # In a trap, BASH_COMMAND is the command that ran before it: one refused is not recorded again.
    if [[ -n ${_tr_refused-} && $BASH_COMMAND == "$_tr_refused" ]]; then
        status=1
    else
        _tr_guard "$@"
        status=$?
    fi
    ((status)) && _tr_refused=$BASH_COMMAND || _tr_refused=
    BASH_REMATCH=("${matched[@]}") 2> /dev/null
    return $status
}

# Background jobs: the job ends when the batch script does, and stops what it started in the
# background and did not wait for. Bash runs the DEBUG trap before it starts a command, in the
# shell that starts it, so a background job's $! is new at the shell's next command, its wait or
# its end: one line each in the trace (async: its pid and shell; wait: what it waits for), from
# which verify.py tells, for each start (its processes' pids), whether it ended before the script.
_tr_async() {  # a background job this shell started since it last looked
    if [[ ${_tr_bang_shell-} != "$BASHPID" ]]; then   # a subshell's first look: $! is its parent's
        _tr_bang_shell=$BASHPID _tr_bang=${!-}
    elif [[ -n ${!-} && $! != "${_tr_bang-}" ]]; then
        _tr_bang=$!
        printf "{'kind': 'async', 'pid': %d, 'shell': %d}\n" "$!" "$BASHPID" >> "$_TR_ROOT/.trace/log" 2> /dev/null
    fi
    return 0
}

_tr_exit() {  # the shell's EXIT trap where the script sets none: its last background job (the shell's status stays)
    _tr_async
}

wait() {  # the builtin, after a line in the trace that says which of this shell's jobs it waits for
    _tr_async
    local +x words=("$@") named=() any=0 index=0
    while ((index < ${#words[@]})); do
        case ${words[index]} in
            -p) index=$((index + 1)) ;;   # -p NAME: the variable that gets the pid
            -*n*) any=1 ;;
            -*) ;;
            %*) named+=(%) ;;
            *) named+=("${words[index]//[^0-9]/}") ;;
        esac
        index=$((index + 1))
    done
    printf "{'kind': 'wait', 'shell': %d, 'any': %d, 'pids': '%s'}\n" "$BASHPID" "$any" "${named[*]}" >> "$_TR_ROOT/.trace/log" 2> /dev/null
    _tr_=1 builtin wait "$@"
}

_tr_guard() {  # before each command: PATH back to the stand-ins, paths and writes checked; 1 skips the command
    [[ -n ${_tr_busy-} || $BASH_COMMAND == _tr_* ]] && return 0
    _tr_cmd=$BASH_COMMAND
    # eval's text reads the positional parameters where it is called, not the stand-in's own
    # (the trap runs again as the stand-in is entered, with its arguments: FUNCNAME[2] is eval then)
    if [[ ${FUNCNAME[2]-} != eval && ($BASH_COMMAND == eval || $BASH_COMMAND == eval[[:space:]]*) ]]; then
        _tr_args=("$@")
    fi
    PATH=$_TR_PATH
    local +x text=$BASH_COMMAND path_prefix=
    while [[ $text =~ ^[A-Za-z_][A-Za-z0-9_]*\+?=[^[:space:]]*[[:space:]]+(.*)$ ]]; do
        [[ $text == PATH=* ]] && path_prefix=1
        text=${BASH_REMATCH[1]}
    done
    local +x word=${text%%[[:space:]]*}
    if [[ $word == builtin || $word == command ]]; then
        _tr_bypass "$text" || return 1
    elif [[ $word == *[/\$]* && $word != *=* ]] && _tr_expand "$word" "$@" && [[ $_tr_w == */* && $_tr_w != *=* ]] &&
        ! declare -F -- "$_tr_w" > /dev/null; then
        # a program named by its path: a function of that name records it, inside the folder or not
        builtin eval "function $(printf '%q' "$_tr_w") { _tr_record path \"\${FUNCNAME[0]}\" \"\$@\"; }" 2> /dev/null || {
            _tr_record untraceable "$_tr_w"
            return 1
        }
    elif [[ -n $path_prefix && -n $word ]] && ! declare -F -- "$word" > /dev/null && [[ $(type -t -- "$word") != builtin ]]; then
        builtin eval "function $(printf '%q' "$word") { _tr_record start \"\${FUNCNAME[0]}\" \"\$@\"; }" 2> /dev/null || return 1
    fi
    case $word in cp | mv | rsync | tar | ln) [[ $text == *\** ]] && _tr_globs "$text" "$@" ;; esac
    _tr_writes_inside "$text" "$@"
}

_tr_globs() {  # TEXT ARG...: a file of the user's for each glob a file tool names that matches none here (tracerecord.globs)
    local +x words word skip= patterns=()
    read -ra words <<< "$1"
    shift
    for word in "${words[@]:1}"; do
        if [[ -n $skip ]]; then
            skip=
            continue
        fi
        case $word in
            --exclude | --include | --exclude-from | --include-from | --filter | --files-from | -X | -T) skip=1 ;;   # a pattern, not a path
            -*) ;;
            *\**) _tr_expand "$word" "$@" && [[ -n $_tr_w ]] && patterns+=("$_tr_w") ;;
        esac
    done
    [[ ${#patterns[@]} -eq 0 ]] || _tr_record glob "${patterns[@]}"
}

_tr_bypass() {  # builtin X, command X: allowed unless X is one of the stand-ins below, or command -p looks beyond PATH
    local +x words
    read -ra words <<< "$1"
    local +x name=${words[1]-}
    [[ $name == -p ]] && { _tr_record untraceable "$1"; return 1; }
    [[ $name == -* ]] && return 0
    # slurmkit's runtime sets its own traps with bash's trap (its `trap` keeps the job's beside them)
    [[ $name == trap && ($1 != *DEBUG* && (${FUNCNAME[3]-} == _sk_* || ${FUNCNAME[3]-} == trap)) ]] && return 0
    case $name in
        eval | source | . | exec | cd | pushd | enable | trap | kill) _tr_record untraceable "$1"; return 1 ;;
    esac
}

_tr_writes_inside() {  # TEXT ARG...: 1 (the command is skipped) where it redirects its output outside the trace folder
    local +x rest=$1 target
    shift
    # neither arithmetic ((i<=3)), $((a>b)) nor a comment (eval's text keeps one: ## <-- note) redirects
    while [[ $rest =~ ^(.*)\(\([^\)]*\)\)(.*)$ ]]; do rest="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"; done
    rest=${rest%%[[:space:]]#*}
    # a file of the user's read with < is there on the cluster: made, as the file tools make one
    if [[ $rest =~ (^|[^<])\<[[:space:]]*([^[:space:]\;\&\|\<\>\(]+) ]] && _tr_expand "${BASH_REMATCH[2]}" "$@" &&
        [[ -n $_tr_w && ! -e $_tr_w && $_tr_w != "$SLURM_TMPDIR"/* ]]; then
        _tr_record file "$_tr_w"
    fi
    while [[ $rest =~ [0-9\&]?\>[\>\|]?[[:space:]]*([^[:space:]\;\&\|\<\>]+)(.*)$ ]]; do
        target=${BASH_REMATCH[1]} rest=${BASH_REMATCH[2]}
        [[ $target == \&* ]] && continue
        _tr_expand "$target" "$@" || continue   # computed by a command: the trace folder's own, as a rule
        case $_tr_w in
            /dev/null | /dev/stdout | /dev/stderr | /dev/fd/*) ;;
            /*) [[ $_tr_w == "$_TR_ROOT"/* ]] || { _tr_record untraceable "$_tr_cmd"; return 1; } ;;
        esac
        # the folder a file of the user's is written into is there on the cluster ($SLURM_TMPDIR starts empty)
        [[ $_tr_w != */* || -d ${_tr_w%/*} || $_tr_w == "$SLURM_TMPDIR"/* ]] || _tr_record folder "${_tr_w%/*}"
    done
    return 0
}

_tr_inside() {  # _tr_inside PATH: PATH's folder is inside the trace folder, links resolved
    local +x folder=.
    [[ $1 == */* ]] && folder=${1%/*}
    folder=${folder:-/}
    (_tr_=1 builtin cd -- "$folder" 2> /dev/null && [[ $(builtin pwd -P)/ == "$_TR_ROOT"/* ]])
}

command_not_found_handle() {  # any command without a stand-in of its own: a start, recorded
    _tr_record start "$@"
}

eval() {  # text written out in the command runs; text the script computed is a to do
    _tr_src=$_tr_cmd
    if _tr_written "${_tr_src#*eval}"; then
        _tr_text="$*"   # (names that start with _tr_: the guard passes over them and keeps _tr_args)
        _tr_=1 builtin set -- "${_tr_args[@]}"
        # the text runs in the stand-in, a function, where a declare would make a local of it: at the
        # script's top level, as the builtin runs it there, it makes a global
        [[ ${FUNCNAME[1]-main} != main ]] || _tr_text=${_tr_text//declare /declare -g } _tr_text=${_tr_text//typeset /typeset -g }
        _tr_=1 builtin eval "$_tr_text"
        _tr_status=$?
        # `set -- WORDS` in the text sets the caller's arguments, as the builtin would: the DEBUG
        # trap sets them before the caller's next command, in the caller (its functions, none at the top)
        _tr_back=("$@")
        _tr_back_at="${FUNCNAME[*]:1}"
        [[ $_tr_back_at != main ]] || _tr_back_at=
        return $_tr_status
    fi
    _tr_record untraceable eval "$@"
}

source() {  # a file the script made inside the trace folder is read; a virtualenv is entered; else a to do
    _tr_src=$_tr_cmd
    case ${1-} in
        */bin/activate) export VIRTUAL_ENV=${1%/bin/activate} _TR_PYTHON_FROM=virtualenv; return 0 ;;
        bin/activate) export VIRTUAL_ENV=$PWD _TR_PYTHON_FROM=virtualenv; return 0 ;;
    esac
    if [[ -f ${1-} ]] && _tr_inside "$1"; then
        _tr_=1 builtin source "$@"
        return
    fi
    _tr_record untraceable source "$@"
}
.() { source "$@"; }

cd() {  # inside the trace folder only; a folder of the user's that is not there is made (it is on the cluster)
    _tr_src=$_tr_cmd
    local +x target=${!#}
    [[ $# -eq 0 ]] && target=$HOME
    [[ $target == - ]] && target=$OLDPWD
    [[ $target == -* ]] && target=$HOME
    # a folder the script computed at run time ($ws/runs, $ws set by the user's login shell, empty
    # here: /runs) is under the trace folder's abs/, as one the script writes out is
    if [[ $# -gt 0 && $target == "${!#}" && $target == /* && $target != "$_TR_ROOT" && $target != "$_TR_ROOT"/* &&
          $target != /dev && $target != /dev/* && $target != /proc* && $target != /sys* ]]; then
        target=$_TR_ROOT/abs${target%/}
        set -- "${@:1:$#-1}" "$target"
    fi
    if [[ $target == "$_TR_ROOT" || $target == "$_TR_ROOT"/* || $target != /* ]] && _tr_record folder "$target"; then
        _tr_=1 builtin cd "$@"
        return
    fi
    _tr_record untraceable cd "$@"
    return 1
}
pushd() {
    _tr_src=$_tr_cmd
    if [[ $# -eq 1 && $1 != [-+]* ]]; then
        cd "$1" > /dev/null && _tr_=1 builtin cd - > /dev/null && _tr_=1 builtin pushd "$1" > /dev/null
        return
    fi
    _tr_=1 builtin pushd "$@"
}

exec() {  # exec COMMAND: the command, then the shell ends (without its EXIT trap, as exec's would not run)
    _tr_src=$_tr_cmd
    while [[ ${1-} == -[acl]* ]]; do
        [[ $1 == -a ]] && shift
        shift
    done
    [[ $# -eq 0 ]] && return 0   # redirections only
    "$@"
    _tr_status=$?
    _tr_async
    _tr_=1 builtin trap - EXIT
    exit $_tr_status
}

enable() {
    _tr_record untraceable enable "$@"
}

trap() {  # the script's traps, except DEBUG, which the trace holds; an EXIT trap removed is the trace's (_tr_exit)
    case " $* " in
        *" DEBUG "*) _tr_record untraceable trap "$@"; return 0 ;;
    esac
    [[ ${1-} == -- ]] && shift
    [[ $# -eq 1 && ${1^^} =~ ^((SIG)?EXIT|0)$ ]] && set -- - "$1"   # trap EXIT: back to none
    _tr_=1 builtin trap "$@" || return
    # (a trap of the script's own runs the DEBUG trap before its first command, which looks too)
    [[ $# -ge 2 && ($1 == - || -z $1) && " ${*^^} " =~ \ ((SIG)?EXIT|0)\  ]] && _tr_=1 builtin trap -- _tr_exit EXIT
    return 0
}

kill() {  # signals to this shell's own processes (and the process groups they lead) only
    local +x words=("$@") first=0 word pid live=()
    case ${1-} in
        -s | -n) first=2 ;;
        -l | -L) _tr_=1 builtin kill "$@"; return ;;
        -*) first=1 ;;
    esac
    [[ ${words[first]-} == -- ]] && first=$((first + 1))
    for word in "${words[@]:first}"; do
        [[ $word == %* ]] && { live+=("$word"); continue; }
        [[ $word =~ ^-?[1-9][0-9]*$ ]] || { _tr_record untraceable kill "$@"; return 1; }
        pid=${word#-}   # -PGID: the group its leader leads
        while [[ $pid != "$_TR_SHELL" && -e /proc/$pid ]]; do
            pid=$(_tr_parent "$pid") || break
        done
        [[ $pid == "$_TR_SHELL" || ! -e /proc/${word#-} ]] || { _tr_record untraceable kill "$@"; return 1; }
        # the job ends what it killed, from any of its shells (verify.py's _waited); a stand-in
        # ends at once, where the program it stands for would still run: killed, not missing
        printf "{'kind': 'kill', 'pid': %d}\n" "${word#-}" >> "$_TR_ROOT/.trace/log" 2> /dev/null
        [[ -e /proc/${word#-} ]] && live+=("$word")
    done
    ((${#live[@]})) || return 0
    _tr_=1 builtin kill "${words[@]:0:first}" "${live[@]}"
}
_tr_parent() {  # _tr_parent PID: its parent's PID
    local +x stat
    read -r stat < "/proc/$1/stat" || return 1
    stat=${stat##*) }
    stat=${stat#* }
    echo "${stat%% *}"
}

bash() {  # bash -c TEXT runs TEXT traced, if written out in the command; bash FILE made in the trace runs it; else a start
    _tr_src=$_tr_cmd
    _tr_shell bash "$@"
}
sh() {
    _tr_src=$_tr_cmd
    _tr_shell sh "$@"
}
_tr_shell() {  # _tr_shell NAME OPTION... (-c TEXT [NAME ARG...] | FILE ARG... | << EOF)
    local +x name=$1 options=() text file
    shift
    while [[ ${1-} == [-+]* && $1 != -c && $1 != -- ]]; do
        if [[ $1 == -[A-Za-z]*c ]]; then   # bash -lc TEXT, bash -ec TEXT
            text=${1%c}
            set -- -c "${@:2}"
        else
            text=$1
            shift
        fi
        [[ $text == [-+]*o && $# -gt 0 && $1 != -c ]] && { text+=" $1"; shift; }
        [[ $text =~ ^[-+][aefhkmnoptuvxBCEHPT]+(\ [a-z]+)?$ ]] && options+=($text)   # those set takes (not -l, --norc)
    done
    # A new bash (with these stand-ins, through BASH_ENV), as the script's would be: it sees only
    # what is exported. ": ;" first turns function tracing on before any subshell (see verify.py).
    # Its records name the functions and lines it was started from, in the script, after its own.
    local -x _TR_OUTER_CALLER="${FUNCNAME[*]} ${_TR_OUTER_CALLER-}" _TR_OUTER_LINES="${BASH_LINENO[*]} ${_TR_OUTER_LINES-}"
    if [[ ${1-} == -c ]]; then
        text=${2-}
        [[ $_tr_src =~ [[:space:]]-[A-Za-z]*c[[:space:]](.*)$ ]] || BASH_REMATCH=("" "$_tr_src")
        _tr_written "${BASH_REMATCH[1]}" || { _tr_record untraceable "$name" "$@"; return 0; }
        _tr_=1 "$_TR_BASH" "${options[@]}" -c ": ; $text" "${@:3}"
    elif [[ ${1-} == */* && -f $1 ]] && _tr_inside "$1"; then
        _tr_=1 "$_TR_BASH" "${options[@]}" -c ': ; source "$0" "$@"' "$@"
    elif [[ $# -eq 0 && $_tr_src == *"<<"* ]]; then   # bash << EOF: the here-document is the script
        IFS= read -r -d '' text
        _tr_=1 "$_TR_BASH" "${options[@]}" -c ": ; $text"
    else
        _tr_record start "$name" "${options[@]}" "$@"
    fi
}

srun() {
    _tr_src=$_tr_cmd
    _tr_launch srun "$@"
}
mpirun() {
    _tr_src=$_tr_cmd
    _tr_launch mpirun "$@"
}
mpiexec() {
    _tr_src=$_tr_cmd
    _tr_launch mpiexec "$@"
}
torchrun() {
    _tr_src=$_tr_cmd
    _tr_launch torchrun "$@"
}
horovodrun() {
    _tr_src=$_tr_cmd
    _tr_launch horovodrun "$@"
}
accelerate() {
    _tr_src=$_tr_cmd
    _tr_launch accelerate "$@"
}
_tr_launch() {  # the launcher's start is recorded with its count; a shell it launches runs once, traced, as task 0
    local +x plan
    plan=$(_tr_record launch "$@") || return
    if [[ $plan != shell\ * ]]; then
        [[ -z $plan ]] || printf '%s\n' "$plan"   # what a printer it launched printed
        return 0
    fi
    set -- "$1" "${@:$((${plan##* } + 1))}"   # the launcher, then the shell's name and words
    plan=${plan#shell }
    local +x count=${plan%% *}   # the first process's variables, as the launcher sets them
    _TR_COUNT=$((${_TR_COUNT:-1} * count)) _TR_VIA=$1 SLURM_PROCID=0 SLURM_LOCALID=0 RANK=0 LOCAL_RANK=0 \
        WORLD_SIZE=$count LOCAL_WORLD_SIZE=$count _tr_shell "${@:2}"
}

parallel() {  # GNU Parallel: the tasks' commands, built as it builds them, each run traced (tracerecord.parallel)
    _tr_src=$_tr_cmd
    _tr_record parallel "$@"
}

module() {  # Lmod's module, as a shell function: loads change LOADEDMODULES, one version of a name at a time
    _tr_record module "$@"
    while [[ ${1-} == -* ]]; do shift; done
    local +x command=${1-}
    [[ $# -eq 0 ]] || shift
    case $command in
        load | add | try-load) _tr_modules load "$@" ;;
        unload | del | rm) _tr_modules unload "$@" ;;
        purge) LOADEDMODULES= ;;
        swap | switch) _tr_modules unload "${1-}"; _tr_modules load "${2-${1-}}" ;;
    esac
    export LOADEDMODULES
    return 0
}
ml() {
    case ${1-} in
        "" | list | purge | save | restore | use | unuse | spider | av | avail | show | load | unload | swap) module "$@"; return ;;
    esac
    local +x name
    for name; do
        if [[ $name == -* ]]; then module unload "${name#-}"; else module load "$name"; fi
    done
}
_tr_modules() {  # _tr_modules load|unload NAME...: and the variables the Alliance's modules set (EBROOT..., CUDA_HOME)
    local +x how=$1 name loaded kept list root
    shift
    for name; do
        [[ $name == -* ]] && continue
        kept=
        IFS=: read -ra list <<< "${LOADEDMODULES-}"
        for loaded in "${list[@]}"; do
            [[ -n $loaded && ${loaded%/*} != "${name%/*}" && $loaded != "$name" ]] && kept+=${kept:+:}$loaded
        done
        root=${name%%/*}
        root=${root^^}
        root=${root//[^A-Z0-9]/}
        if [[ $how == load ]]; then
            kept+=${kept:+:}$name
            # Lmod puts a python module's bin first on PATH, before a virtualenv entered earlier
            [[ $root != PYTHON ]] || export _TR_PYTHON_FROM=module
            export "EBROOT$root=$_TR_ROOT/abs/cvmfs/modules/$name" "EBVERSION$root=${name#*/}"
            [[ $root == CUDA* ]] && export CUDA_HOME=$_TR_ROOT/abs/cvmfs/modules/$name CUDA_PATH=$_TR_ROOT/abs/cvmfs/modules/$name
        else
            unset "EBROOT$root" "EBVERSION$root"
        fi
        LOADEDMODULES=$kept
    done
}

# $RANDOM from one seed in every shell of both runs: the old and the new script draw the same
# numbers where they draw them in the same order (--seed=$RANDOM is no difference). $SRANDOM
# cannot be seeded: unset, it is a plain variable, the same in both.
RANDOM=1
unset SRANDOM
SRANDOM=1
export _TR_SHELL=${_TR_SHELL:-$$}   # the traced script's shell: its processes are the ones kill may signal
set -o functrace
shopt -s extdebug
builtin trap _tr_exit EXIT
builtin trap '[[ -z ${_tr_back_at+x} || $_tr_back_at != "${FUNCNAME[*]-}" ]] || { builtin set -- "${_tr_back[@]}"; unset _tr_back_at; }; _tr_debug "$@"' DEBUG
# A trap's DEBUG trap sees the command that ran last (BASH_COMMAND is not the trap's): in a shell
# that ran none of its own, this one, which the guard passes over, not the line above.
_tr_ready=1
