"""The script's arguments ($1, "$@", $#) that a run with none passes by, taking its defaults.

A job script often reads options in a loop (``while [ "$1" != "" ]; do case $1 in ...; shift;
done``) after giving each variable a default, or writes ``${1:-10}``, or reads ``$1`` only under
``if [ $# -gt 0 ]``. Submitted with no arguments, such a script runs on its defaults: nothing is
left for the user to give. A read is optional where:

- it has a default of its own: ``${1:-x}``, ``${1-x}``, ``${1:+x}``, ``${1+x}``;
- or it is in a block that does not run without arguments: a ``while``/``until`` loop, an
  ``if`` branch or the right of ``&&``/``||``, whose test says so with no arguments (bash itself
  evaluates the test, which must read nothing but the arguments), or a ``for`` over ``"$@"``;
  or it is in such a test, and the way taken without arguments does not ``exit``;
- and, where it gives a variable its value (``ALPHA=$1``), the script sets that variable
  elsewhere too, where that block does not keep it out: its default. ``data_path=$2`` with no default elsewhere is a value the user
  must give, even in an option loop.

A read is also no input of the job where the job does not use its value:

- it is only printed: a word of ``echo`` or ``printf`` whose output stays in the job's log
  (treewalk.printed_only);
- it comes after the script has set its own arguments (``set -- a b`` at the top level);
- it gives a variable a value that nothing reads: the variable is set again at the top level
  before any mention of it (``x=$1`` ... ``x=fixed``), or, a name with a lower-case letter (not an
  environment variable's), it is mentioned nowhere else; a script with ``eval``, ``${!name}`` or
  a name reference may read any name, and keeps its reads.

Everything else (a bare ``X=$1``, ``python a.py "$@"``) reads what sbatch passed after the
script's name, which import cannot know: a to-do.
"""

from __future__ import annotations

import bisect
import re
import subprocess
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

from slurmkit.port.treewalk import POSITIONAL, nodes_under, printed_only

Node = Any   # a tree-sitter node (the grammar is imported lazily, by bashtree)
Text = Callable[[Any], str]

#: ${1:-x}, ${1-x}, ${1:+x}, ${1+x}: a value without the argument
_DEFAULTING = frozenset((":-", "-", ":+", "+"))
#: commands a test may be made of
_TEST_COMMANDS = frozenset(("test", "true", "false", "["))
_SUBSTITUTIONS = frozenset(("command_substitution", "process_substitution", "heredoc_redirect", "herestring_redirect"))
_EVALUATED: Dict[str, Optional[int]] = {}
#: set's options whose next word is an option's name (-o pipefail, -euo pipefail)
_TAKES_NAME = re.compile(r"[-+][A-Za-z]*o")
#: a name as the script writes it ($name, ${name}, name=, (( name )))
_WORD = re.compile(r"(?<!\w)[A-Za-z_]\w*")
#: what may read a variable without naming it
_INDIRECT = re.compile(r"\beval\b|\$\{!|\b(?:declare|local|typeset)\s+(?:-\w+\s+)*-\w*n")


def optional_reads(root: Node, text: Text) -> Tuple[Tuple[int, str], ...]:
    """(line, as written) of each read of the script's arguments, outside functions, that a run
    with no arguments passes by (the module's docstring says when)."""
    tree = _Tree(root, text)
    return tuple((n.start_point[0] + 1, text(n)) for n in tree.reads() if tree.optional(n))


class _Tree:
    def __init__(self, root: Node, text: Text) -> None:
        self.root = root
        self.text = text
        self.exiting = _exiting_functions(root, text)
        self.first_set: Optional[int] = None     # where the first top-level `set -- WORDS` ends (-1: none)
        self.index: Optional[_Index] = None

    def reads(self) -> Iterator[Node]:
        for node in nodes_under(self.root, frozenset(("function_definition",))):
            if _is_positional(node, self.text):
                yield node

    def optional(self, node: Node) -> bool:
        if printed_only(node, self.text) or self._replaced_before(node) or self._unread(node):
            return True
        if _defaulted(node):
            return True
        guard = self._guard(node)
        if guard is None:
            return False
        name = _assigned_from(node, guard, self.text)
        return name is None or self._set_elsewhere(name, guard)

    def _replaced_before(self, node: Node) -> bool:
        """After a top-level ``set -- WORDS`` (or ``set WORDS``): the arguments are the script's own."""
        if self.first_set is None:
            self.first_set = min((c.end_byte for c in self.root.named_children if _sets_arguments(c, self.text)), default=-1)
        return 0 <= self.first_set <= node.start_byte

    def _unread(self, node: Node) -> bool:
        """It gives a variable a value no command reads (see the module's docstring)."""
        assignment = node.parent
        while assignment is not None and assignment.type in ("string", "concatenation"):
            assignment = assignment.parent
        if assignment is None or assignment.type != "variable_assignment" or assignment.parent is None \
                or assignment.parent.type in ("command", "declaration_command") or not assignment.named_children:
            return False
        index = self._index()
        if index.indirect:
            return False
        name = self.text(assignment.named_children[0])
        top = _top_statement(assignment)
        assigned = index.assigned.get(name, [])
        later = bisect.bisect_left(assigned, top.end_byte, key=lambda n: n.start_byte)
        if later == len(assigned):   # never set again: mentioned nowhere else, and no environment variable's name
            return name != name.upper() and index.mentions(name, 0, len(index.code)) == index.mentions(
                name, assignment.start_byte, assignment.end_byte)
        again = assigned[later]
        spans = [(top.start_byte, assignment.start_byte), (assignment.end_byte, again.start_byte),
                 (again.named_children[0].end_byte, again.end_byte), *index.functions]
        return not any(index.mentions(name, start, end) for start, end in spans)

    def _index(self) -> "_Index":
        if self.index is None:
            self.index = _Index(self.root, self.text)
        return self.index

    def _guard(self, node: Node) -> Optional[Node]:
        """The outermost block around ``node`` that keeps it from running (or reading) without arguments."""
        found = None
        child, parent = node, node.parent
        while parent is not None:
            if self._keeps_out(parent, child, node.start_byte):
                found = parent
            child, parent = parent, parent.parent
        return found

    def _keeps_out(self, block: Node, child: Node, start: int) -> bool:
        kind = block.type
        if kind == "while_statement":
            return self._loop_skipped(block)
        if kind == "for_statement":
            return _over_arguments(block, self.text)
        if kind == "if_statement":
            return self._branch_skipped(block, start)
        if kind == "list":
            return self._list_skipped(block, child)
        if kind == "case_statement":
            return self._item_skipped(block, start)
        return False

    def _item_skipped(self, block: Node, start: int) -> bool:
        """``case $1 in ... *) break;; esac`` (the loop of an option parser): in an item that no
        arguments do not pick, or in the word read on the way to an item that does not exit."""
        items = [c for c in block.named_children if c.type == "case_item"]
        taken = _case_taken(block, items, self.text)
        if taken is None:
            return False
        for index, item in enumerate(items):
            if _holds(item, start):
                return index != taken
        return taken < 0 or not self._exits(_item_body(items[taken]))

    def _loop_skipped(self, loop: Node) -> bool:
        until = loop.children[0].type == "until"
        condition = [c for c in loop.named_children if c.type not in ("do_group", "comment")]
        value = self._value(condition)
        return value is not None and value == until

    def _branch_skipped(self, block: Node, start: int) -> bool:
        """In a branch not taken without arguments, or in a test read on the way to a branch that does not exit."""
        branches = _branches(block)
        taken = None
        for index, (condition, _) in enumerate(branches):
            value = True if condition is None else self._value(condition)
            if value is None:
                return False
            if value:
                taken = index
                break
        for index, (condition, body) in enumerate(branches):
            if condition and any(_holds(c, start) for c in condition):
                return taken is None or index > taken or not self._exits(branches[taken][1])
            if any(_holds(c, start) for c in body):
                return index != taken
        return False

    def _list_skipped(self, block: Node, child: Node) -> bool:
        if len(block.children) != 3:
            return False
        left, operator, right = block.children
        value = self._value([left])
        if value is None or operator.type not in ("&&", "||"):
            return False
        runs = value == (operator.type == "&&")
        if child == right:
            return not runs
        return child == left and (not runs or not self._exits([right]))

    def _value(self, condition: List[Node]) -> Optional[bool]:
        """The test's outcome with no arguments, where it reads nothing else (None otherwise)."""
        if len(condition) != 1 or not _pure_test(condition[0], self.text):
            return None
        return _evaluated(self.text(condition[0]))

    def _exits(self, body: List[Node]) -> bool:
        return any(n.type == "command_name" and self.text(n) in {"exit", *self.exiting}
                   for b in body for n in nodes_under(b, frozenset(("function_definition", "subshell"))))

    def _set_elsewhere(self, name: str, guard: Node) -> bool:
        """Whether the script gives ``name`` a value where ``guard`` does not keep it out (its default)."""
        return any(n.type == "variable_assignment" and n.named_children and self.text(n.named_children[0]) == name
                   and self._guard(n) != guard for n in nodes_under(self.root, frozenset(("function_definition",))))


class _Index:
    """Where the script (its comments blanked, one character a byte, as the tree's offsets count)
    names each word, sets each variable at its top level, and defines its functions: read once,
    so that each read of the arguments is judged without reading the script again."""

    def __init__(self, root: Node, text: Text) -> None:
        code = bytearray(root.text)
        for comment in (n for n in nodes_under(root) if n.type == "comment"):
            code[comment.start_byte:comment.end_byte] = b" " * (comment.end_byte - comment.start_byte)
        self.code = code.decode("latin-1")
        self.indirect = _INDIRECT.search(self.code) is not None
        self.words: Dict[str, List[int]] = {}
        for match in _WORD.finditer(self.code):
            self.words.setdefault(match.group(), []).append(match.start())
        self.assigned: Dict[str, List[Node]] = {}
        for child in root.named_children:
            if child.type == "variable_assignment" and child.named_children:
                self.assigned.setdefault(text(child.named_children[0]), []).append(child)
        self.functions = [(n.start_byte, n.end_byte) for n in nodes_under(root) if n.type == "function_definition"]

    def mentions(self, name: str, start: int, end: int) -> int:
        """How often ``name`` is written between offsets ``start`` and ``end``."""
        offsets = self.words.get(name, [])
        return bisect.bisect_left(offsets, end) - bisect.bisect_left(offsets, start)


def _sets_arguments(command: Node, text: Text) -> bool:
    """``set -- a b``, ``set a b``, ``set -e -- $(...)``: a ``set`` that gives the script new arguments
    (``set -`` with no word after it leaves them as they were)."""
    if command.type != "command" or text(command.child_by_field_name("name") or command) != "set":
        return False
    words = [text(c) for c in command.named_children if c.type != "command_name"]
    for index, word in enumerate(words):
        named_option = index > 0 and _TAKES_NAME.fullmatch(words[index - 1])   # set -o pipefail: no argument
        if word == "--" or word == "-" and index + 1 < len(words) or not word.startswith(("-", "+")) and not named_option:
            return True
    return False


def _top_statement(node: Node) -> Node:
    """The statement at the script's top level that holds ``node``."""
    while node.parent is not None and node.parent.parent is not None:
        node = node.parent
    return node


def _holds(node: Node, byte: int) -> bool:
    return bool(node.start_byte <= byte < node.end_byte)


def _is_positional(node: Node, text: Text) -> bool:
    if node.type not in ("simple_expansion", "expansion") or not node.named_children:
        return False
    name = node.named_children[0]
    return name.type in ("variable_name", "special_variable_name") and bool(POSITIONAL.fullmatch(text(name)))


def _defaulted(node: Node) -> bool:
    return node.type == "expansion" and any(c.type in _DEFAULTING for c in node.children)


def _over_arguments(loop: Node, text: Text) -> bool:
    """``for a; do``, ``for a in "$@"; do``: the body runs once per argument."""
    words = [c for c in loop.named_children if c.type not in ("variable_name", "do_group", "comment")]
    return all(text(w).strip('"') in ("$@", "$*", "${@}", "${*}") for w in words)


def _branches(block: Node) -> List[Tuple[Optional[List[Node]], List[Node]]]:
    """An if's (test, body) pairs in order; the else's test is None."""
    branches: List[Tuple[Optional[List[Node]], List[Node]]] = []
    for part in [block, *[c for c in block.children if c.type in ("elif_clause", "else_clause")]]:
        condition: List[Node] = []
        body: List[Node] = []
        in_body = part.type == "else_clause"
        for child in part.children:
            if child.type == "then":
                in_body = True
            elif child.is_named and child.type not in ("elif_clause", "else_clause", "comment"):
                (body if in_body else condition).append(child)
        branches.append((None if part.type == "else_clause" else condition, body))
    return branches


def _item_body(item: Node) -> List[Node]:
    """A case item's commands: what follows its ``)``."""
    close = next((i for i, c in enumerate(item.children) if c.type == ")"), len(item.children))
    return [c for c in item.children[close + 1:] if c.is_named]


def _case_taken(block: Node, items: List[Node], text: Text) -> Optional[int]:
    """The item a case picks with no arguments (-1: none), bash matching its word and patterns;
    None where they read more than the arguments."""
    subject = next((c for c in block.named_children if c.type != "case_item"), None)
    patterns = []
    for item in items:
        close = next((c for c in item.children if c.type == ")"), None)
        if close is None:
            return None
        patterns.append(text(item)[:close.start_byte - item.start_byte])
    parts = [subject, *(c for item in items for c in item.children if c.end_byte <= _close(item))]
    if subject is None or not all(_pure_test(p, text, words=True) for p in parts):
        return None
    script = f"case {text(subject)} in\n" + "".join(f"{p}) exit {10 + i};;\n" for i, p in enumerate(patterns)) + "esac\nexit 9"
    status = _status(script)
    return None if status is None or not 9 <= status < 10 + len(items) else status - 10


def _close(item: Node) -> int:
    return next((c.start_byte for c in item.children if c.type == ")"), item.start_byte)


def _pure_test(node: Node, text: Text, words: bool = False) -> bool:
    """A test that reads only the arguments: bash can run it here without touching anything
    (with ``words``, any word of that kind: a case's word or pattern)."""
    for inner in nodes_under(node):
        kind = inner.type
        if kind in _SUBSTITUTIONS or kind in ("simple_expansion", "expansion") and not _is_positional(inner, text):
            return False
        if kind == "variable_name" and inner.parent.type not in ("simple_expansion", "expansion"):
            return False
        if kind == "command_name" and text(inner) not in _TEST_COMMANDS:
            return False
    return words or node.type in ("test_command", "compound_statement", "negated_command", "list", "command")


def _evaluated(test: str) -> Optional[bool]:
    """The test's exit status under bash with no arguments: 0 true, 1 false, else unknown."""
    status = _status(test)
    return None if status is None else {0: True, 1: False}.get(status)


def _status(script: str) -> Optional[int]:
    """The exit status of ``script`` (pure: _pure_test) under bash with no arguments; None where bash fails."""
    if script not in _EVALUATED:
        try:
            done = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env={"PATH": "/usr/bin:/bin"},
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=10, cwd="/")
            _EVALUATED[script] = done.returncode
        except (OSError, subprocess.SubprocessError):
            _EVALUATED[script] = None
    return _EVALUATED[script]


def _assigned_from(node: Node, guard: Node, text: Text) -> Optional[str]:
    """The variable ``node`` gives its value to (``ALPHA=$1``), inside ``guard``; None where it gives none."""
    parent = node.parent
    while parent is not None and parent != guard:
        if parent.type == "variable_assignment" and parent.named_children:
            return text(parent.named_children[0])
        parent = parent.parent
    return None


def _exiting_functions(root: Node, text: Text) -> Set[str]:
    """The script's functions that end it (``die() { echo "$1"; exit 1; }``), and those that call them."""
    bodies = {text(n.named_children[0]): n for n in nodes_under(root)
              if n.type == "function_definition" and n.named_children}
    exiting: Set[str] = set()
    for _ in range(len(bodies) + 1):
        more = {name for name, body in bodies.items()
                if any(n.type == "command_name" and text(n) in {"exit", *exiting} for n in nodes_under(body))}
        if more == exiting:
            break
        exiting = more
    return exiting
