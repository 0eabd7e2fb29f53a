"""Which branches of a script's ``if`` (or items of its ``case``) run on a cluster, where the
test names the cluster.

Scripts shared between clusters choose their modules by ``$CC_CLUSTER``, which the Alliance's
shell profile sets on every cluster (``if [ "$CC_CLUSTER" = graham ]; then module load
StdEnv/2020 …; else module load StdEnv/2023 …; fi``). On the cluster a job is ported to, the
graham branch does not run: its modules are no reason for a to-do, and the else branch's are the
ones to check. An ``if`` with no else whose every test names another cluster runs nothing there,
and the modules it loaded are then not loaded at all: that is the finding. Only a test of one
variable against a word is judged (``[ "$V" = w ]``, ``[[ $V == pat* ]]`` and ``!=``); any other
test may go either way, so its branch is taken as one that may run.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from slurmkit.port.bashtree import Block, Branch, Command, Statement, inner, walk

#: [ "$NAME" = word ], [[ $NAME == pattern ]] and their != forms
_VALUE_TEST = re.compile(r"""^\[(?P<double>\[)?\s+"?\$\{?(?P<name>\w+)\}?"?\s+(?P<op>==?|!=)\s+"""
                         r"""(?P<quote>["']?)(?P<word>[^"'\s\]]+)(?P=quote)\s+\]\]?$""")

#: the values a variable has on a cluster: CC_CLUSTER's, from the profile's detection names
Values = Mapping[str, Sequence[str]]


#: ``if $flag`` / ``if ${flag}``: the variable's value run as a command (true or false)
_FLAG = re.compile(r"^\$\{?(?P<name>\w+)\}?$")


#: a case item's test as bashtree writes it: ``case $NAME in pattern|"word")``
_CASE_TEST = re.compile(r"""^case\s+"?\$\{?(?P<name>\w+)\}?"?\s+in\s+(?P<patterns>.*)\)$""", re.S)


def _case_holds(match: "re.Match[str]", values: Values) -> Optional[bool]:
    """Whether a case item's patterns match the variable's value (each a glob, quoted parts literal)."""
    patterns = match["patterns"].split("|")
    if not values.get(match["name"]) or any("$" in p or "`" in p for p in patterns):
        return None
    outcomes = {any(fnmatch.fnmatchcase(value, p.strip("'\"") if p[:1] in "'\"" else p) for p in patterns)
                for value in values[match["name"]]}
    return outcomes.pop() if len(outcomes) == 1 else None


def condition_holds(condition: str, values: Values) -> Optional[bool]:
    """Whether ``condition`` holds where each variable of ``values`` has one of its values; None
    where that cannot be told (another test, a variable not in ``values``, values that disagree)."""
    case = _CASE_TEST.match(condition)
    if case:
        return _case_holds(case, values)
    flag = _FLAG.match(condition.strip().rstrip(";").rstrip())
    if flag and len(values.get(flag["name"]) or ()) == 1 and values[flag["name"]][0] in ("true", "false"):
        return values[flag["name"]][0] == "true"   # niagara=false; if $niagara; then ...
    match = _VALUE_TEST.match(condition.strip().rstrip(";").rstrip())
    if match is None or not values.get(match["name"]):
        return None
    pattern = bool(match["double"]) and not match["quote"]    # [[ == ]] matches an unquoted word as a glob
    outcomes = {(fnmatch.fnmatchcase(value, match["word"]) if pattern else value == match["word"]) != (match["op"] == "!=")
                for value in values[match["name"]]}
    return outcomes.pop() if len(outcomes) == 1 else None


def branches_run(block: Block, values: Values) -> List[Branch]:
    """The branches of the if ``block`` that may run: up to the first whose test holds, without
    those whose test fails."""
    found: List[Branch] = []
    for branch in block.branches:
        outcome = condition_holds(branch.condition, values) if branch.condition else True
        if outcome is not False:
            found.append(branch)
        if outcome:
            break
    return found


def walk_run(statements: Sequence[Statement], values: Values) -> Iterator[Command]:
    """Every simple command of ``statements`` (as ``bashtree.walk``) but those of an if's
    branches that cannot run where the variables have ``values``."""
    for statement in statements:
        if isinstance(statement, Block) and statement.branches:
            for branch in branches_run(statement, values):
                yield from walk_run(branch.body, values)
        elif isinstance(statement, Command):
            yield statement
        else:
            yield from walk_run(inner(statement), values)


def none_run(statements: Sequence[Statement], values: Values) -> Iterator[Tuple[Block, Tuple[Command, ...]]]:
    """Each if (where it may be reached) none of whose branches runs where the variables have
    ``values``, with the commands its branches would have run elsewhere."""
    for statement in statements:
        if isinstance(statement, Block) and statement.branches:
            taken = branches_run(statement, values)
            if not taken:
                yield statement, tuple(c for branch in statement.branches for c in walk(branch.body))
            for branch in taken:
                yield from none_run(branch.body, values)
        elif not isinstance(statement, Command):
            yield from none_run(inner(statement), values)



def values_on(statements: Sequence[Statement], cluster_names: Sequence[str]) -> Dict[str, Sequence[str]]:
    """The values the branches of ``statements`` are judged with: $CC_CLUSTER's on the cluster,
    and each variable the script sets once to a value known here (bashtree.known_values)."""
    from slurmkit.port.bashtree import known_values

    return {**{name: (value,) for name, value in known_values(statements).items()}, "CC_CLUSTER": tuple(cluster_names)}
