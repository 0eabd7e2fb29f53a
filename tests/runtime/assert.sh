# A few assertions for the runtime's own tests: each test is a function test_*; a failed check
# prints what it expected and the test file exits non-zero. Sourced by every test_*.sh here.
set -uo pipefail
_failed=0
expect_eq() {  # expect_eq WANT GOT WHAT
    if [ "$1" != "$2" ]; then
        printf 'FAIL %s: %s\n  want: %q\n  got:  %q\n' "${FUNCNAME[1]}" "$3" "$1" "$2" >&2
        _failed=1
    fi
}
run_tests() {  # every function test_* of the file, each in a fresh folder and a subshell of its own
    local name
    for name in $(compgen -A function test_); do
        (
            cd "$(mktemp -d)" || exit 1
            # shellcheck source=/dev/null
            source "$SLURMKIT_RUNTIME"
            "$name"
            exit "$_failed"
        ) || { echo "FAILED $name" >&2; _failed=1; }
    done
    exit "$_failed"
}
