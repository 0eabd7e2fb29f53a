"""A job script as bash reads it: its commands, assignments, pipelines, blocks, functions, traps
and heredocs, each with its line, from bash's own grammar (tree-sitter-bash).

Line patterns misread scripts people write: ``DEST=/project/out`` looked like a program (a ``/``
in its first word), a double-quoted string was cut at its newline, ``srun -o FILE ./app`` lost
its program, and a function defined on one line with its trap was never seen. A grammar reads
them as bash does. tree-sitter's bash grammar is maintained, ships wheels for manylinux, and
recovers around what it cannot read (an ERROR node), so that the rest of a script is still read
and the lines that are not bash can be named; ``bash -n`` has the last word on those.

``parse`` gives a ``Script``; ``main_program`` names the job's program by what it is (the last
command that is not set-up), ``module_commands`` finds module lines in blocks and functions too,
``traps`` ties each trap to the functions it calls. tree_sitter is imported when a script is
parsed, not with this module: ``slurmkit check`` imports porting for its to-do notes and must not
pay for a parser it does not use.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple, Union

from slurmkit.core import launch_options
from slurmkit.core.records import Record
from slurmkit.port import scriptargs
from slurmkit.port.treewalk import POSITIONAL, nodes_under, printed_only

if TYPE_CHECKING:
    from tree_sitter import Node

#: the quoting of a word: no expansion at all; a variable, brace range, glob or ``~`` that bash
#: expands; a command substitution (``$(...)``, backquotes, ``<(...)``) that runs a command
LITERAL, EXPANDABLE, SUBSTITUTION = "literal", "expandable", "substitution"
#: what bash expands in a word, by kind
EXPANSION_KINDS = ("variable", "parameter", "arithmetic", "brace", "glob", "tilde", "substitution")
#: blocks nested deeper than this are not read (a script is not that deep; hostile input may be)
MAX_DEPTH = 100


class Word(Record):
    """One word as written (``text``) and after quote removal (``value``: ``"$HOME/a b"`` ->
    ``$HOME/a b``; expansions stay as written, since bash expands them only when it runs)."""
    text: str
    value: str
    kind: str       # LITERAL | EXPANDABLE | SUBSTITUTION
    line: int
    expansions: Tuple[str, ...] = ()    # what bash expands in it: EXPANSION_KINDS

    @property
    def beyond_variables(self) -> bool:
        """Whether bash does more to it than put in variables' values (a brace range, a glob,
        arithmetic, a command substitution, ``~``): what a plain list of words cannot say."""
        return any(kind != "variable" for kind in self.expansions)


class Assignment(Record):
    line: int
    name: str
    value: Word
    declaration: str = ""     # export, declare, local, readonly, typeset; "" for a plain NAME=value


class Redirect(Record):
    line: int
    operator: str     # >, >>, 2>, &>, 2>&1's >&, <, <<, <<-, <<<
    target: str       # the file, the descriptor, a heredoc's delimiter or a here-string's word
    descriptor: str = ""


class Heredoc(Record):
    line: int         # the line of the command that reads it
    end_line: int
    delimiter: str
    body: str
    expands: bool     # an unquoted delimiter: bash expands $NAME and $(...) in the body


class Command(Record):
    """A simple command: ``VAR=x name args > out``. A plain assignment is a command with no
    words and the assignment as its prefix, as bash reads it."""
    line: int
    end_line: int
    text: str
    words: Tuple[Word, ...]                 # the name first
    prefix: Tuple[Assignment, ...] = ()     # VAR=x before the name: for this command only
    declared: Tuple[Assignment, ...] = ()   # what export, declare, local, readonly assign
    redirects: Tuple[Redirect, ...] = ()
    heredocs: Tuple[Heredoc, ...] = ()
    within: Tuple[str, ...] = ()            # the blocks around it, outermost first: "for", "function save"
    background: bool = False

    @property
    def name(self) -> str:
        return self.words[0].value if self.words else ""

    @property
    def argv(self) -> List[str]:
        return [word.value for word in self.words]


class Pipeline(Record):
    line: int
    end_line: int
    text: str
    stages: Tuple["Statement", ...]
    redirects: Tuple[Redirect, ...] = ()    # on the last stage, as bash applies them
    within: Tuple[str, ...] = ()
    background: bool = False


class AndOr(Record):
    """``a && b || c``: items run in order, each after the one before succeeded (&&) or failed (||)."""
    line: int
    end_line: int
    text: str
    items: Tuple["Statement", ...]
    operators: Tuple[str, ...]
    within: Tuple[str, ...] = ()
    background: bool = False


class Branch(Record):
    """One branch of an ``if`` (the test that chooses it, "" for ``else``) or an item of a
    ``case`` (``case $V in a|b)``), and what it runs."""
    condition: str
    body: Tuple["Statement", ...]


class Block(Record):
    """if, for, while, until, case, a subshell ``( )`` or a group ``{ }``, with what it holds
    (an if's tests and branches in order in ``body``, and each branch again in ``branches``)."""
    kind: str
    line: int
    end_line: int
    text: str
    body: Tuple["Statement", ...]
    words: Tuple[Word, ...] = ()        # a for loop's list, a case's word
    variable: str = ""                  # a for loop's variable
    redirects: Tuple[Redirect, ...] = ()
    within: Tuple[str, ...] = ()
    background: bool = False
    branches: Tuple[Branch, ...] = ()   # an if's, or a case's items, in order


class Function(Record):
    name: str
    line: int
    end_line: int
    text: str
    body: Tuple["Statement", ...]
    within: Tuple[str, ...] = ()


Statement = Union[Command, Pipeline, AndOr, Block, Function]
#: blocks whose body runs at most once each time the script reaches them
ONCE = ("if", "case", "subshell", "group")
#: blocks whose body may run many times
LOOPS = ("for", "while", "until", "select")


class Comment(Record):
    line: int
    text: str


class Trap(Record):
    line: int
    action: str                       # the trap's command, quotes removed ("" ignores, "-" resets)
    signals: Tuple[str, ...]
    functions: Tuple[Function, ...]   # the script's functions the action calls
    command: Command


class Script(Record):
    statements: Tuple[Statement, ...]         # the top level, in order
    comments: Tuple[Comment, ...]
    functions: Dict[str, Function]            # the last definition of each name
    positional: Tuple[Tuple[int, str], ...]   # (line, $1 / ${10} / "$@" / $# as written) outside functions
    multiline_strings: Tuple[Tuple[int, int, str], ...]   # (first line, last line, text) of a quoted word over lines
    errors: Tuple[Tuple[int, str], ...]       # (line, its text) of each line that is not bash
    refusal: str = ""                         # why, in bash's words (bash -n's first complaint)
    optional_positional: Tuple[Tuple[int, str], ...] = ()   # those of positional a run with no arguments passes by,
                                                            # or whose value the job does not use (scriptargs.py)
    printed: Tuple[Tuple[int, str], ...] = ()   # (line, name) of each variable read only to be printed (treewalk.printed_only)
    broken: Tuple["Broken", ...] = ()           # commands a backslash meant to continue, and bash ended (broken_lines)

    @property
    def directives(self) -> Tuple[Comment, ...]:
        """The ``#SBATCH`` lines (sbatch reads those before the first command only)."""
        return tuple(c for c in self.comments if c.text.startswith("#SBATCH"))


class Broken(Record):
    """A command that ends where a backslash meant to continue it: ``prog --a \\ #note`` (the
    backslash escapes the blank after it, not the line's end), or ``prog --a \\`` before a blank
    or comment line. Bash runs it without the words of the lines meant for it, and runs the next
    line as a command of its own (``--nthread 4``: command not found)."""
    line: int        # the line whose backslash does not continue it
    why: str         # what ends it, in a reader's words
    next_line: int   # the line of the command that follows it, which was meant to be part of it
    next_text: str


# ------------------------------------------------------------------------------------- parse

_PARSER: List[Any] = []
#: The grammar sees each byte of a non-ASCII character as the letter x: tree-sitter-bash 0.25's
#: scanner reads memory it does not own on some code points (``{`` then U+C961F crashes the
#: process now and then), and to bash's grammar any such character is a word character like x.
#: The offsets stay the same, and every text is cut from the script itself, never from the tree.
_ASCII_ONLY = bytes(range(128)) + b"x" * 128


def _parser() -> Any:
    """One parser per process, made on first use (the import and the grammar cost milliseconds)."""
    if not _PARSER:
        import tree_sitter
        import tree_sitter_bash

        _PARSER.append(tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language())))
    return _PARSER[0]


#: a here-document whose delimiter starts with ``=`` (``cat <<==EOF==``): the grammar reads ``<<=``
#: as arithmetic's shift-and-assign, and the body as commands
_EQUALS_DELIMITER = re.compile(r"<<(-?)(=[^\s;&|<>()]*)")


def _spaced_heredocs(text: str) -> str:
    """``<<==EOF==`` as ``<< ==EOF==``, which bash reads alike, where a line ends the document
    (``==EOF==``): only then is it a here-document, not ``x <<= 2``."""
    lines = set(text.split("\n"))
    return _EQUALS_DELIMITER.sub(lambda m: f"<<{m.group(1)} {m.group(2)}" if m.group(2) in lines or (
        m.group(1) and any(line.lstrip("\t") == m.group(2) for line in lines)) else m.group(0), text)


#: an extended glob (``!(*_opt).xyz``, ``@(a|b)``), which the grammar does not know
_EXTGLOB = re.compile(rb"(?<![\w$=])[?*+@!]\([^()\n]*\)")


def _extglob_masked(source: bytes, text: str) -> bytes:
    """``source`` for the grammar: where the script turns extglob on, each extended glob's
    brackets and bars as word characters, byte for byte (the words are read from the script's
    own text, so they keep them)."""
    if not any("extglob" in names.split() for names in _SHOPT_SET.findall(text)):
        return source
    return _EXTGLOB.sub(lambda m: b"__" + re.sub(rb"[|()]", b"_", m.group(0)[2:-1]) + b"_", source)


def parse(text: str) -> Script:
    """The script as bash reads it. Text bash would not accept is in ``errors`` (what could be
    read around it is read all the same); CRLF line ends read as LF, as import reads them."""
    text = _spaced_heredocs(text.replace("\r\n", "\n"))
    source = text.encode("utf-8", "surrogatepass")
    tree = _parser().parse(_extglob_masked(source, text).translate(_ASCII_ONLY))
    root = tree.root_node
    reader = _Reader(source)
    statements = tuple(reader.statements(root, ()))
    errors, refusal = _errors(root, text)
    if reader.too_deep:
        errors = tuple(sorted({*errors, (reader.too_deep, f"blocks nested deeper than {MAX_DEPTH}: not read")}))
    functions = {f.name: f for f in _functions(statements)}
    return Script(statements, tuple(reader.comments), functions, _positional(root, reader),
                  _multiline_strings(root, reader), errors, refusal, scriptargs.optional_reads(root, reader.text),
                  _printed(root, reader), broken_lines(root, reader))


class _Reader:
    """Turns tree-sitter's nodes into the records above."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.comments: List[Comment] = []
        self.too_deep = 0      # the first line of a block nested deeper than MAX_DEPTH

    def text(self, node: "Node") -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def statements(self, node: "Node", within: Tuple[str, ...]) -> Iterator[Statement]:
        """The statements among ``node``'s children (a program, a block's body, an ERROR), each
        with ``background`` set where a ``&`` follows it."""
        children = node.children
        for index, child in enumerate(children):
            if child.type == "comment":
                self.comments.append(Comment(_line(child), self.text(child)))
                continue
            found = self.statement(child, within) if child.is_named else None
            if found is not None:
                after = children[index + 1] if index + 1 < len(children) else None
                yield found._replace(background=True) if after is not None and after.type == "&" and \
                    not isinstance(found, Function) else found
            elif child.type in _CONTAINERS or child.type == "ERROR":
                yield from self.statements(child, within)

    def statement(self, node: "Node", within: Tuple[str, ...]) -> Optional[Statement]:
        if len(within) >= MAX_DEPTH:
            self.too_deep = self.too_deep or _line(node)
            return None
        kind = node.type
        if kind in ("command", "declaration_command", "unset_command", "variable_assignment", "variable_assignments",
                    "test_command", "negated_command"):
            return self.command(node, within)
        if kind == "redirected_statement":
            return self.redirected(node, within)
        if kind == "pipeline":
            return Pipeline(_line(node), _end_line(node), self.text(node), tuple(self.statements(node, within)), within=within)
        if kind == "list":
            return self.and_or(node, within)
        if kind == "function_definition":
            return self.function(node, within)
        block = _BLOCKS.get(kind)
        if block is not None:
            return self.block(node, block, within)
        return None

    # ----------------------------------------------------------------------------- commands

    def command(self, node: "Node", within: Tuple[str, ...]) -> Optional[Statement]:
        kind = node.type
        if kind == "negated_command":   # ! cmd: the command, whose status is inverted
            inner = next((c for c in node.named_children), None)
            return self.statement(inner, within) if inner is not None else None
        if kind == "variable_assignment":
            return Command(_line(node), _end_line(node), self.text(node), (), (self.assignment(node, ""),), within=within)
        if kind == "test_command":   # [ ... ], [[ ... ]]: the test builtin and its words
            words = tuple(Word(w, w, LITERAL, _line(node)) for w in self.text(node).split())
            return Command(_line(node), _end_line(node), self.text(node), words, within=within)
        parts = _Parts()
        declaration = self.text(node.children[0]) if kind in ("declaration_command", "unset_command") and node.children else ""
        if declaration:
            parts.words.append(Word(declaration, declaration, LITERAL, _line(node)))
        for child in node.named_children:
            self.part(child, declaration, parts)
        return Command(_line(node), _end_line(node), self.text(node), tuple(parts.words), tuple(parts.prefix),
                       tuple(parts.declared), tuple(parts.redirects), tuple(parts.heredocs), within)

    def part(self, child: "Node", declaration: str, parts: "_Parts") -> None:
        """One child of a command: a prefix (or, after export/declare/local, a declared)
        assignment, the name, an argument or a redirection. A word that starts where the one
        before ends is the rest of it (the grammar splits ``$A/$B.c`` after its second ``$``)."""
        glued = child.start_byte == parts.end and child.type not in _REDIRECTS and child.type != "comment"
        parts.end = child.end_byte
        if child.type == "variable_assignment":
            (parts.declared if declaration else parts.prefix).append(self.assignment(child, declaration))
            parts.last = "declared" if declaration else "prefix"
            if declaration:
                parts.words.append(self.word(child))
        elif child.type == "variable_assignments":
            parts.prefix.extend(self.assignment(c, "") for c in child.named_children if c.type == "variable_assignment")
            parts.last = "prefix"
        elif child.type in _REDIRECTS:
            self.redirect(child, parts.redirects, parts.heredocs)
            parts.last = ""
        elif child.type != "comment":
            word = self.word(child.named_children[0] if child.type == "command_name" and child.named_children else child)
            if glued and parts.last:
                parts.glue(word)
            elif word.value or "\\\n" not in word.text:   # not a lone \ that continues into nothing
                parts.words.append(word)
                parts.last = "word"

    def glued_words(self, nodes: Sequence["Node"]) -> List[Word]:
        """Words, each piece that starts where the one before ends glued to it (_Parts.part)."""
        words: List[Word] = []
        end = -1
        for node in nodes:
            word = self.word(node)
            if words and node.start_byte == end:
                words[-1] = _glued(words[-1], word)
            else:
                words.append(word)
            end = node.end_byte
        return words

    def assignment(self, node: "Node", declaration: str) -> Assignment:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        word = self.word(value) if value is not None else Word("", "", LITERAL, _line(node))
        return Assignment(_line(node), self.text(name) if name is not None else "", word, declaration)

    def word(self, node: "Node") -> Word:
        expansions = _expansions(node, self)
        kind = SUBSTITUTION if "substitution" in expansions else EXPANDABLE if expansions else LITERAL
        return Word(self.text(node), self.value(node), kind, _line(node), expansions)

    def value(self, node: "Node") -> str:
        """The word after quote removal; expansions and substitutions stay as written."""
        kind, text = node.type, self.text(node)
        if kind == "word":
            return _unescaped(text)
        if kind == "raw_string":
            return text[1:-1]
        if kind == "ansi_c_string":
            return _ansi_c(text[2:-1])
        if kind in ("string", "translated_string"):
            inner = text[text.index('"') + 1:-1] if text.endswith('"') and '"' in text else text
            return re.sub(r'\\([$`"\\])|\\\n', lambda m: m.group(1) or "", inner)
        if kind in ("concatenation", "variable_assignment"):
            return self.joined(node)
        return text

    def joined(self, node: "Node") -> str:
        """A concatenation's value: each part's, with any text between parts as written. A
        name that ended at a quote keeps its end: ``"$NAME"_v1`` is ``${NAME}_v1``, never the
        ``$NAME_v1`` that bash would read as another variable."""
        joined, at, literal = "", node.start_byte, False
        for child in node.children:
            for part in (self.source[at:child.start_byte].decode("utf-8", "replace"),
                         self.value(child) if child.is_named else self.text(child)):
                if re.match(r"\w", part) and not literal:
                    joined = re.sub(r"\$([A-Za-z_]\w*)$", r"${\1}", joined)
                joined += part
            at, literal = child.end_byte, child.type in ("raw_string", "ansi_c_string")   # '$N': no name in it
        return joined

    def redirect(self, node: "Node", redirects: List[Redirect], heredocs: List[Heredoc]) -> None:
        descriptor = next((self.text(c) for c in node.children if c.type == "file_descriptor"), "")
        if node.type == "heredoc_redirect":
            start = next((c for c in node.children if c.type == "heredoc_start"), None)
            body = next((c for c in node.children if c.type == "heredoc_body"), None)
            operator = node.children[0].type if node.children else "<<"
            delimiter = self.text(start) if start is not None else ""
            redirects.append(Redirect(_line(node), operator, delimiter.strip("'\""), descriptor))
            heredocs.append(Heredoc(_line(node), _end_line(node), delimiter.strip("'\"\\"), self.text(body) if body else "",
                                    not re.search(r"['\"\\]", delimiter)))
            for inner in node.named_children:
                if inner.type in _REDIRECTS:
                    self.redirect(inner, redirects, heredocs)
            return
        operator = "".join(self.text(c) for c in node.children if not c.is_named)
        target = next((self.text(c) for c in node.named_children if c.type != "file_descriptor"), "")
        redirects.append(Redirect(_line(node), operator, target, descriptor))

    def redirected(self, node: "Node", within: Tuple[str, ...]) -> Optional[Statement]:
        """``body > out``, ``cmd << EOF``: the body with its redirections. A pipeline the grammar
        hangs inside a heredoc (``cat << EOF | python``) is a pipeline with the heredoc's command first."""
        body = node.child_by_field_name("body")
        inner = self.statement(body, within) if body is not None else None
        redirects: List[Redirect] = []
        heredocs: List[Heredoc] = []
        rest: List[Statement] = []
        for child in node.named_children:
            if child.type in _REDIRECTS:
                self.redirect(child, redirects, heredocs)
                rest.extend(s for p in child.named_children if p.type == "pipeline" for s in self.statements(p, within))
        if isinstance(inner, Command):
            inner = inner._replace(redirects=inner.redirects + tuple(redirects), heredocs=inner.heredocs + tuple(heredocs),
                                   text=self.text(node), end_line=_end_line(node))
        elif inner is not None and not isinstance(inner, (Function, AndOr)):
            inner = inner._replace(redirects=inner.redirects + tuple(redirects), text=self.text(node), end_line=_end_line(node))
        if rest and inner is not None:
            return Pipeline(_line(node), _end_line(node), self.text(node), (inner, *rest), within=within)
        return inner

    def and_or(self, node: "Node", within: Tuple[str, ...]) -> AndOr:
        items: List[Statement] = []
        operators: List[str] = []
        for child in node.children:
            if child.type == "list":
                nested = self.and_or(child, within)
                items.extend(nested.items)
                operators.extend(nested.operators)
            elif child.type in ("&&", "||"):
                operators.append(child.type)
            elif child.is_named:
                found = self.statement(child, within)
                if found is not None:
                    items.append(found)
        return AndOr(_line(node), _end_line(node), self.text(node), tuple(items), tuple(operators), within)

    def function(self, node: "Node", within: Tuple[str, ...]) -> Function:
        name_node = node.child_by_field_name("name")
        name = self.text(name_node) if name_node is not None else ""
        body = node.child_by_field_name("body")
        inside = within + (f"function {name}",)
        statements: Tuple[Statement, ...] = ()
        if body is not None:
            statements = tuple(self.statements(body, inside)) if body.type in _BLOCKS else \
                tuple(s for s in [self.statement(body, inside)] if s is not None)
        return Function(name, _line(node), _end_line(node), self.text(node), statements, within)

    def block(self, node: "Node", kind: str, within: Tuple[str, ...]) -> Optional[Block]:
        if kind == "loop":
            kind = "until" if node.children and node.children[0].type == "until" else "while"
        if kind == "group" and node.children and node.children[0].type == "((":
            return None   # (( arithmetic )): a test, not a block
        words = tuple(self.glued_words(node.children_by_field_name("value")))
        variable = node.child_by_field_name("variable") if kind in ("for", "select") else None
        inside = within + (kind,)
        body = tuple(self.statements(node, inside))
        branches = tuple(self.branches(node, inside)) if kind == "if" else \
            tuple(self.case_branches(node, inside)) if kind == "case" else ()
        return Block(kind, _line(node), _end_line(node), self.text(node), body, words,
                     self.text(variable) if variable is not None else "", within=within, branches=branches)

    def case_branches(self, node: "Node", within: Tuple[str, ...]) -> List[Branch]:
        """The items of a case, in order, as branches: the test ``case WORD in P1|P2)`` (read by
        cluster_branches.condition_holds), and the statements after it. The body was read already."""
        comments = len(self.comments)
        subject = next((self.text(c) for c in node.children if c.is_named and c.type not in ("case_item", "comment")), "")
        found: List[Branch] = []
        for item in (c for c in node.children if c.type == "case_item"):
            patterns: List[str] = []
            body: List[Statement] = []
            after = False
            for child in item.children:
                after = after or child.type == ")"
                if not after and child.is_named:
                    patterns.append(self.text(child))
                elif after and child.is_named and child.type != "comment":
                    body.extend(s for s in [self.statement(child, within)] if s is not None)
            found.append(Branch(f"case {subject} in {'|'.join(patterns)})", tuple(body)))
        del self.comments[comments:]
        return found

    def branches(self, node: "Node", within: Tuple[str, ...]) -> List[Branch]:
        """The branches of an if (or of its elif clause ``node``) in order: the test and the
        statements after ``then``, then those of its elif and else clauses. The body was read
        already: the comments this second reading meets are not recorded twice."""
        comments = len(self.comments)
        condition: List[str] = []
        body: List[Statement] = []
        after_then = False
        for child in node.children:
            if child.type in ("elif_clause", "else_clause", "fi"):
                break
            after_then = after_then or child.type == "then"
            if child.is_named and child.type != "comment" and not after_then:
                condition.append(self.text(child))
            elif child.is_named and after_then:
                body.extend(s for s in [self.statement(child, within)] if s is not None)
        found = [Branch(" ".join(condition), tuple(body))]
        for child in node.children:
            if child.type == "elif_clause":
                found.extend(self.branches(child, within))
            elif child.type == "else_clause":
                found.append(Branch("", tuple(self.statements(child, within))))
        del self.comments[comments:]
        return found


class _Parts:
    """A command's parts, gathered child by child."""

    def __init__(self) -> None:
        self.words: List[Word] = []
        self.prefix: List[Assignment] = []
        self.declared: List[Assignment] = []
        self.redirects: List[Redirect] = []
        self.heredocs: List[Heredoc] = []
        self.end = -1       # where the last part ends
        self.last = ""      # what it was: "word", "prefix", "declared" ("": nothing a word can continue)

    def glue(self, word: Word) -> None:
        """``word`` is the rest of the last part: a word, or an assignment's value."""
        if self.last == "word":
            self.words[-1] = _glued(self.words[-1], word)
            return
        assignments = self.prefix if self.last == "prefix" else self.declared
        assignments[-1] = assignments[-1]._replace(value=_glued(assignments[-1].value, word))
        if self.last == "declared":
            self.words[-1] = _glued(self.words[-1], word)


def _glued(first: Word, rest: Word) -> Word:
    """One word of two pieces the grammar split: a ``$`` that ends the first starts a variable."""
    expansions = set(first.expansions) | set(rest.expansions)
    if first.text.endswith("$") and re.match(r"[A-Za-z_{]", rest.text):
        expansions.add("variable")
    ordered = tuple(kind for kind in EXPANSION_KINDS if kind in expansions)
    kind = SUBSTITUTION if "substitution" in ordered else EXPANDABLE if ordered else LITERAL
    return Word(first.text + rest.text, first.value + rest.value, kind, first.line, ordered)


#: node types that hold statements without being one (a loop's do ... done, an if's else)
_CONTAINERS = frozenset(("do_group", "else_clause", "elif_clause", "case_item", "compound_statement"))
_BLOCKS = {"if_statement": "if", "for_statement": "for", "c_style_for_statement": "for", "select_statement": "select",
           "while_statement": "loop", "case_statement": "case", "subshell": "subshell", "compound_statement": "group"}
_REDIRECTS = frozenset(("file_redirect", "heredoc_redirect", "herestring_redirect"))


def _line(node: "Node") -> int:
    return int(node.start_point[0]) + 1


def _end_line(node: "Node") -> int:
    row, column = node.end_point[0], node.end_point[1]
    return int(row) + (1 if column or row == node.start_point[0] else 0)


def _unescaped(text: str) -> str:
    """An unquoted word's backslashes removed (``a\\ b`` -> ``a b``; a backslash-newline joins lines)."""
    return re.sub(r"\\\n|\\(.)", lambda m: m.group(1) or "", text, flags=re.S) if "\\" in text else text


_ANSI_C = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "v": "\v",
           "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _ansi_c(text: str) -> str:
    """``$'...'``'s escapes (the common ones; others stay as written)."""
    return re.sub(r"\\(.)", lambda m: _ANSI_C.get(m.group(1), m.group(0)), text, flags=re.S)


_PLAIN = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")
#: node types of what bash expands, by EXPANSION_KINDS
_EXPANSION_NODES = {"command_substitution": "substitution", "process_substitution": "substitution", "simple_expansion": "variable",
                    "expansion": "variable", "arithmetic_expansion": "arithmetic", "brace_expression": "brace"}
#: what bash expands in an unquoted word: a glob, a brace list or range, a leading ~
_UNQUOTED = (("glob", re.compile(r"[*?[]")), ("brace", re.compile(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")), ("tilde", re.compile(r"^~")))


def _expansions(node: "Node", reader: _Reader) -> Tuple[str, ...]:
    """What bash expands in the word ``node``: EXPANSION_KINDS, each once, in that order."""
    found = {_EXPANSION_NODES[n.type] for n in nodes_under(node) if n.type in _EXPANSION_NODES}
    if "variable" in found and any(n.type == "expansion" and not _PLAIN.fullmatch(reader.text(n)) for n in nodes_under(node)):
        found.add("parameter")   # ${NAME:-default}, ${NAME%.txt}, ${#NAME}: more than a value put in
    unquoted = re.sub(r"\\.", "", "".join(reader.text(n) for n in _unquoted_parts(node)))
    found.update(kind for kind, pattern in _UNQUOTED if pattern.search(unquoted))
    return tuple(kind for kind in EXPANSION_KINDS if kind in found)


def _unquoted_parts(node: "Node") -> List["Node"]:
    """The word's parts outside quotes (a word's own text, or a concatenation's unquoted words)."""
    if node.type in ("word", "number"):
        return [node]
    if node.type == "concatenation":
        return [c for c in node.children if c.type in ("word", "number")]
    return []


def _functions(statements: Sequence[Statement]) -> Iterator[Function]:
    for statement in statements:
        if isinstance(statement, Function):
            yield statement
            yield from _functions(statement.body)
        else:
            yield from _functions(inner(statement))


def inner(statement: Statement) -> Tuple[Statement, ...]:
    """The statements directly inside one (a pipeline's stages, a list's items, a block's body)."""
    if isinstance(statement, Pipeline):
        return statement.stages
    if isinstance(statement, AndOr):
        return statement.items
    if isinstance(statement, (Block, Function)):
        return statement.body
    return ()


#: a positional parameter in a heredoc's body, which the grammar leaves as text
_POSITIONAL_TEXT = re.compile(r"(?<!\\)\$(?:[1-9@*#]|\{(?:[1-9]\d*|[@*#])\})")


def _positional(root: "Node", reader: _Reader) -> Tuple[Tuple[int, str], ...]:
    """``$1``, ``${10}``, ``"$@"``, ``$*``, ``$#``: the script's own arguments (a function's are its
    own), in its commands and in the heredocs bash expands."""
    found = []
    for node in nodes_under(root, frozenset(("function_definition", "heredoc_redirect"))):
        if node.type in ("simple_expansion", "expansion") and node.named_children:
            name = node.named_children[0]
            if name.type in ("variable_name", "special_variable_name") and POSITIONAL.fullmatch(reader.text(name)):
                found.append((_line(node), reader.text(node)))
        elif node.type == "heredoc_redirect":
            found += _heredoc_positional(node, reader)
    return tuple(found)


def _printed(root: "Node", reader: _Reader) -> Tuple[Tuple[int, str], ...]:
    """(line, name) of each variable the script reads only to print it: a job that echoes
    ``$SLURM_ARRAY_TASK_ID`` does not depend on it."""
    return tuple((_line(node), reader.text(node.named_children[0])) for node in nodes_under(root)
                 if node.type in ("simple_expansion", "expansion") and node.named_children
                 and node.named_children[0].type in ("variable_name", "special_variable_name") and printed_only(node, reader.text))


#: what follows a command on its line where a backslash meant to continue it: ``\\ #note``, ``\\ ``
#: (an escaped blank), or ``\\`` at the end before a blank or comment line
_DANGLING = re.compile(rb"[ \t]*\\(?:[ \t]+(#.*)?|(\n[ \t]*(?:#.*)?(?=\n|$)))")


def broken_lines(root: "Node", reader: _Reader) -> Tuple[Broken, ...]:
    """The commands (a redirected one whole) that bash ends where a backslash meant to continue
    them, each with the command that follows it: read from the tree, which ends the command
    where bash does, and the rest of its line. A backslash before a blank or comment line
    counts only where the next command is an option (``--b 1``): before a command of its own
    (``# step 2`` then ``prog2``), it is a stray one, and bash runs what the author meant."""
    found: List[Broken] = []
    statements = [n for n in nodes_under(root, frozenset(("heredoc_body",))) if n.type in _STATEMENT_NODES]
    for node in statements:
        if node.parent is not None and node.parent.type == "redirected_statement":
            continue    # the whole statement's end decides
        rest = _DANGLING.match(reader.source, node.end_byte)
        if rest is None:
            continue
        after = next((n for n in statements if n.start_byte >= rest.end()), None)
        if after is None or reader.source[rest.end():after.start_byte].strip(b" \t") != b"\n":
            continue    # nothing on the next line that it was meant to take
        text = reader.text(after).split("\n", 1)[0]
        if rest.group(2) is not None and not text.startswith("-"):
            continue    # a stray backslash before a comment, then a command of its own (as bash runs it)
        why = ("a backslash followed by a blank (it escapes the blank, not the line's end)" if rest.group(2) is None
               else "a backslash before a blank or comment line")
        found.append(Broken(int(node.end_point[0]) + 1, why, _line(after), text))
    return tuple(found)


_STATEMENT_NODES = frozenset(("command", "redirected_statement", "declaration_command"))


def _heredoc_positional(node: "Node", reader: _Reader) -> List[Tuple[int, str]]:
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    body = next((c for c in node.children if c.type == "heredoc_body"), None)
    if start is None or body is None or re.search(r"['\"\\]", reader.text(start)):
        return []    # a quoted delimiter: bash expands nothing in the body
    text = reader.text(body)
    return [(_line(body) + text.count("\n", 0, m.start()), m.group()) for m in _POSITIONAL_TEXT.finditer(text)]


def _multiline_strings(root: "Node", reader: _Reader) -> Tuple[Tuple[int, int, str], ...]:
    return tuple((_line(n), _end_line(n), reader.text(n)) for n in nodes_under(root, frozenset(("heredoc_body",)))
                 if n.type in ("string", "raw_string", "ansi_c_string") and n.start_point[0] != n.end_point[0])


def _errors(root: "Node", text: str) -> Tuple[Tuple[Tuple[int, str], ...], str]:
    """The lines bash would not accept, and why: bash -n's word where bash is here (it is the
    authority: the grammar has gaps of its own, and bash refuses what the grammar lets pass),
    else where the grammar's ERROR and MISSING nodes start. Where bash names the end of the
    script (an ``if`` never closed), the line is where the grammar saw the unclosed block start."""
    lines = text.split("\n")
    guessed = sorted({_error_line(n) for n in nodes_under(root) if n.type == "ERROR" or n.is_missing}) if root.has_error else []
    said = _bash_says(text)
    if said is None:
        numbers, refusal = guessed, "the grammar cannot read it" if guessed else ""
    else:
        numbers = [n if 0 < n <= len(lines) and lines[n - 1].strip() else min(guessed or [n]) for n, _ in said]
        refusal = said[0][1] if said else ""
    return tuple((n, lines[n - 1].strip() if 0 < n <= len(lines) else "") for n in sorted(set(numbers))), refusal


def _error_line(node: "Node") -> int:
    """Where an ERROR node goes wrong: its first stray keyword or quote (an ERROR may wrap
    everything read before it), else where it starts; for a MISSING node (``fi``, ``done``),
    where the block that misses it starts."""
    if node.is_missing and node.parent is not None:
        return _line(node.parent)
    if node.type == "ERROR":
        stray = next((c for c in node.children if not c.is_named or c.type == "ERROR"), None)
        if stray is not None:
            return _line(stray)
    return _line(node)


_BASH_LINE = re.compile(r"line (\d+): (.*)")
#: ``shopt -s extglob``: bash runs it before it reads the lines after it, whose syntax it
#: changes (``!(*_opt).xyz``); ``bash -n`` runs nothing, so it is told the option itself
_SHOPT_SET = re.compile(r"^[ \t]*shopt[ \t]+-s[ \t]+(\w+(?:[ \t]+\w+)*)", re.M)
_PARSE_OPTIONS = ("extglob",)


def _bash_says(text: str) -> Optional[List[Tuple[int, str]]]:
    """(line, complaint) for each line ``bash -n`` (which reads, never runs) refuses; None where
    there is no bash to ask, or it names no line."""
    bash = shutil.which("bash")
    if bash is None:
        return None
    named = [name for names in _SHOPT_SET.findall(text) for name in names.split()]
    options = [word for name in dict.fromkeys(named) if name in _PARSE_OPTIONS for word in ("-O", name)]
    try:
        done = subprocess.run([bash, "--norc", "--noprofile", *options, "-n"], input=text.encode("utf-8", "surrogatepass"),
                              capture_output=True, timeout=20, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode == 0:
        return []
    said = [(int(n), why.strip()) for n, why in _BASH_LINE.findall(done.stderr.decode("utf-8", "replace"))]
    return said or None


# -------------------------------------------------------------------------------------- walk

def walk(statements: Sequence[Statement], functions: bool = True) -> Iterator[Command]:
    """Every simple command in ``statements``, in the order written, in blocks, pipelines and
    lists too, and in function bodies unless ``functions`` is False."""
    for statement in statements:
        if isinstance(statement, Command):
            yield statement
        elif functions or not isinstance(statement, Function):
            yield from walk(inner(statement), functions)


def module_commands(script: Script) -> Tuple[Command, ...]:
    """Every ``module`` and ``ml`` command, wherever it is (an if, a loop, a function): each
    loads modules the job depends on, and a port must see all of them."""
    return tuple(c for c in walk(script.statements) if c.name in ("module", "ml"))


#: ``ml``'s subcommands; any other first word is a module to load (``ml NAME...``)
#: Lmod's sub-commands, which ``ml`` takes as ``module`` does (``ml load X`` loads X, no module "load")
ML_SUBCOMMANDS = ("list", "purge", "save", "restore", "use", "unuse", "unload", "del", "rm", "spider", "av", "avail", "swap",
                  "switch", "show", "display", "help", "whatis", "keyword", "describe", "reset", "update", "overview",
                  "is-loaded", "is-avail", "savelist", "load", "add", "try-load", "try-add", "refresh", "tablelist")


def loaded_modules(argv: Sequence[str]) -> Optional[List[str]]:
    """The modules ``module load|add NAME...`` or ``ml NAME...`` loads; None for any other command."""
    if not argv or argv[0] not in ("module", "ml"):
        return None
    rest = [w for w in argv[1:] if not w.startswith("-")]
    if rest[:1] in (["load"], ["add"], ["try-load"], ["try-add"]):
        return rest[1:]
    return rest if argv[0] == "ml" and rest and rest[0] not in ML_SUBCOMMANDS else None


def traps(script: Script) -> Tuple[Trap, ...]:
    """Every ``trap ACTION SIGNAL...``, with the functions of the script its action calls."""
    found = []
    for command in walk(script.statements):
        argv = command.argv
        if command.name != "trap" or len(argv) < 3:
            continue
        rest = argv[1:]
        while rest and rest[0] in ("--", "-p", "-l") and len(rest) > 2:
            rest = rest[1:]
        action, signals = rest[0], tuple(rest[1:])
        called = _called(action, script.functions) if action not in ("", "-") else ()
        found.append(Trap(command.line, action, signals, called, command))
    return tuple(found)


def _called(action: str, functions: Dict[str, Function]) -> Tuple[Function, ...]:
    if re.fullmatch(r"[A-Za-z_][\w-]*", action.strip()):   # the usual case, without parsing it
        return tuple(functions[n] for n in [action.strip()] if n in functions)
    return tuple(functions[c.name] for c in walk(parse(action).statements) if c.name in functions)


def assignments(statements: Sequence[Statement]) -> Iterator[Assignment]:
    """The script's variables as they are set: ``NAME=value`` alone and export/declare/local's
    (not the prefix of a command, which sets it for that command only)."""
    for command in walk(statements):
        yield from command.declared
        if not command.words:
            yield from command.prefix


_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")


def assigned(statements: Sequence[Statement]) -> FrozenSet[str]:
    """Every variable ``statements`` set: by an assignment, a declaration or a for loop."""
    return frozenset([*(a.name for a in assignments(statements)), *_loop_variables(statements)])


#: the longest value known_values works out (a value may name another twice, which names another twice...)
MAX_VALUE = 4096


def known_values(statements: Sequence[Statement]) -> Dict[str, str]:
    """The variables of ``statements`` (a whole script: functions, blocks and all) whose value is
    certain wherever they are read: set once, with no command substitution, each reference in its
    value one that is known too or that the script never sets (the environment's: $HOME,
    $SLURM_TMPDIR), and none of the script's arguments. ``$src`` of ``src=$SLURM_TMPDIR/out; cp -r $src ~/`` is ``$SLURM_TMPDIR/out``."""
    seen: Dict[str, List[str]] = {}
    for assignment in assignments(statements):
        seen.setdefault(assignment.name, []).append(assignment.value.value if assignment.value.kind != SUBSTITUTION else "$(")
    for name in _loop_variables(statements):
        seen.setdefault(name, []).extend(("$(", "$("))   # a loop's variable takes many values
    values = {name: made[0] for name, made in seen.items()
              if len(made) == 1 and made[0] != "$(" and not _POSITIONAL.search(made[0])}
    for _ in range(len(values)):   # values in terms of one another, resolved in as many rounds as there are
        values = {n: substituted(v, values) for n, v in values.items() if len(v) <= MAX_VALUE}
    return {n: v for n, v in values.items() if all((r[0] or r[1]) not in seen for r in _REFERENCE.findall(v))}


#: the script's arguments ($1, ${10}, $@, $*, $#): a function's own where it is read in one
_POSITIONAL = re.compile(r"\$(?:[0-9@*#]|\{(?:[0-9]+|[@*#])\})")


def _loop_variables(statements: Sequence[Statement]) -> Iterator[str]:
    for statement in statements:
        if isinstance(statement, Block) and statement.variable:
            yield statement.variable
        yield from _loop_variables(inner(statement))


def substituted(text: str, values: Dict[str, str]) -> str:
    """``text`` with each ``$NAME`` / ``${NAME}`` of ``values`` replaced by its value."""
    def value(match: "re.Match[str]") -> str:
        name = match.group(1) or match.group(2)
        return values.get(name, match.group(0))
    return _REFERENCE.sub(value, text)


# ----------------------------------------------------------------------------------- program

#: commands that set the job up, stage files, or report: never the job's program. Shell builtins;
#: the module system and environment managers; copying, archiving and editing files; printing
#: what the node is; the scheduler's own commands.
SETUP_COMMANDS = frozenset((
    ":", ".", "[", "[[", "((", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "compgen", "complete", "continue",
    "declare", "dirs", "disown", "echo", "enable", "eval", "exit", "export", "false", "fc", "fg", "getopts", "hash", "help",
    "history", "jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray",
    "readonly", "return", "set", "shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset",
    "ulimit", "umask", "unalias", "unset", "wait",
    "module", "ml", "conda", "mamba", "micromamba", "pip", "pip3", "virtualenv", "activate", "deactivate", "spack",
    "cp", "mv", "rm", "rmdir", "mkdir", "ln", "touch", "chmod", "chgrp", "chown", "rsync", "scp", "tar", "unzip", "zip",
    "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "pigz", "cat", "zcat", "head", "tail", "sed", "awk", "grep",
    "cut", "sort", "uniq", "wc", "tee", "tr", "find", "wget", "curl", "git", "du", "mktemp", "basename", "dirname",
    "realpath", "readlink", "sha256sum", "md5sum", "seq", "expr", "bc", "lfs", "diskusage_report",
    "date", "hostname", "nvidia-smi", "env", "printenv", "which", "whoami", "id", "lscpu", "free", "df", "ls", "uname",
    "nproc", "sleep", "seff", "sacct", "squeue", "scontrol", "sstat", "sbatch", "scancel", "quota",
))
#: commands that run the command after their own options: the program is the command they run
#: (option -> how many values it takes; the number of plain words before the command)
WRAPPERS: Dict[str, Tuple[Dict[str, int], int]] = {
    "time": ({"-f": 1, "--format": 1, "-o": 1, "--output": 1}, 0), "nohup": ({}, 0), "exec": ({"-a": 1}, 0),
    "command": ({}, 0), "nice": ({"-n": 1, "--adjustment": 1}, 0), "stdbuf": ({"-i": 1, "-o": 1, "-e": 1}, 0),
    "env": ({"-u": 1, "--unset": 1, "-C": 1, "--chdir": 1}, 0), "timeout": ({"-s": 1, "--signal": 1, "-k": 1, "--kill-after": 1}, 1),
    "numactl": ({"-N": 1, "-m": 1, "-C": 1, "-i": 1, "-p": 1}, 0), "taskset": ({}, 1), "ionice": ({"-c": 1, "-n": 1}, 0),
}
#: how a Python's own module runs a set-up step
_PYTHON_SETUP_MODULES = ("venv", "pip", "virtualenv", "ensurepip")


class Program(Record):
    """The job's program: the command that starts it, in the top-level statement that holds it."""
    statement: Statement
    command: Command
    launcher: Optional[str]       # srun, mpirun, charmrun, torchrun, parallel...; None: started by the batch shell
    words: Tuple[Word, ...]       # the program and its arguments (after the launcher and the launcher's options)


def main_program(script: Script) -> Optional[Program]:
    """The job's program, found by what it is, not by its name.

    It is the last command of the job that is not set-up, among the top-level commands and those
    inside the blocks around them (an if, case, subshell or group runs once; a loop of runs is the
    payload all the same); a function's body counts where the script calls it, a trap's never.
    Set-up is SETUP_COMMANDS (builtins, module, source, cd, export, cp, tar, rsync, echo...),
    ``python -m venv|pip``, a command asked only for ``--version`` or ``--help``, and an assignment
    (``DEST=/project/out`` sets a variable: it runs nothing). Within a pipeline the program is its
    first stage that is not set-up (``srun ./app | tee log``: srun), within ``a && b`` the last.

    ``VAR=x python t.py`` is python with a prefix. WRAPPERS (time, timeout, env, nice...) run the
    command after their options, which decides. A launcher (srun, mpirun, charmrun, torchrun,
    parallel...: launch_options.ALL_LAUNCHERS) runs the program after its options, each read
    with the number of values it takes (``srun -o FILE ./app`` launches ./app), and is set-up
    where what it launches is (``srun hostname``, ``srun mkdir``). ``bash``/``sh`` given its
    script in this one (a heredoc, ``-c``) is what that script runs.
    """
    runs = [(statement, command) for statement in script.statements
            for command in [_last_run(statement, script.functions, frozenset())] if command is not None]
    if not runs:
        return None
    # the last program a parallel launcher starts (srun simpleFoam -parallel), before serial
    # post-processing (reconstructPar): the job's tasks are for it
    statement, command = next((run for run in reversed(runs) if _parallel_launcher(run[1])), runs[-1])
    parsed = launch_options.parse(_unwrapped(command.argv), launch_options.ALL_LAUNCHERS)
    words = command.words[len(command.words) - len(parsed.program):] if parsed.program else ()
    return Program(statement, command, parsed.launcher, tuple(words))


def command_names(text: str) -> FrozenSet[str]:
    """The names of the programs shell ``text`` runs: each command's name, past wrappers (time,
    env, timeout...) and launchers with their options (``srun -n 4 lmp -sf intel``: srun and
    lmp), and what ``bash -c`` runs; not its arguments (``-sf intel`` names no program)."""
    names = set()
    for command in walk(parse(text).statements):
        argv = _unwrapped(command.argv)
        if not argv:
            continue
        parsed = launch_options.parse(argv, launch_options.ALL_LAUNCHERS)
        launched = _unwrapped(list(parsed.program)) if parsed.launcher and parsed.program else []
        for run in (argv, launched):
            name = run[0].rsplit("/", 1)[-1] if run else ""
            names.update([name] if name else [])
            if name in ("bash", "sh") and "-c" in run[:-1]:
                names |= command_names(run[run.index("-c") + 1])
    return frozenset(names)


#: launchers that start a program's parallel tasks (not parallel or xargs, which run many small ones)
_TASK_LAUNCHERS = ("srun", "mpirun", "mpiexec")


def _parallel_launcher(command: Command) -> bool:
    """Started in the foreground by srun or mpirun (workers started with ``&`` serve a later driver)."""
    launcher = launch_options.parse(_unwrapped(command.argv), launch_options.ALL_LAUNCHERS).launcher
    return not command.background and launcher in _TASK_LAUNCHERS


def _last_run(statement: Statement, functions: Dict[str, Function], called: FrozenSet[str]) -> Optional[Command]:
    """The command of ``statement`` that would be the job's program (main_program), or None."""
    if isinstance(statement, Command):
        if statement.name in functions and statement.name not in called:
            body = functions[statement.name].body
            return _last_of(body, functions, called | {statement.name})
        return None if is_setup(statement) else statement
    if isinstance(statement, Function):
        return None
    if isinstance(statement, Pipeline):
        return next((c for c in (_last_run(s, functions, called) for s in statement.stages) if c is not None), None)
    return _last_of(inner(statement), functions, called)


def _last_of(statements: Sequence[Statement], functions: Dict[str, Function], called: FrozenSet[str]) -> Optional[Command]:
    found = None
    for inner in statements:
        found = _last_run(inner, functions, called) or found
    return found


def is_setup(command: Command) -> bool:
    """Whether ``command`` sets the job up, stages or reports (main_program says what that is)."""
    argv = _unwrapped(command.argv)
    if not argv:
        return True
    name = argv[0].rsplit("/", 1)[-1]
    if name in SETUP_COMMANDS or argv[1:] in (["--version"], ["-V"], ["--help"], ["-h"], ["version"]):
        return True
    if not argv[0].strip() or re.search(r"\s", argv[0]):
        return True   # a quoted text as a command (a block of text in triple quotes): no program by that name runs
    if re.fullmatch(r"([-=*_~+])\1{2,}", name):
        return True   # a rule of text (=====, ----): no program has such a name
    if name.startswith("python") and argv[1:2] == ["-m"] and argv[2:3] and argv[2] in _PYTHON_SETUP_MODULES:
        return True
    if name in ("bash", "sh"):
        return _shell_runs_setup(command, argv)
    parsed = launch_options.parse(argv, launch_options.ALL_LAUNCHERS)
    if parsed.launcher is not None and parsed.program:
        words = command.words[len(command.words) - len(parsed.program):]
        if parsed.launcher == "parallel":   # its command runs in a shell: NAME=value words before it are its variables
            words = words[next((i for i, w in enumerate(words) if not _ASSIGNED_WORD.match(w.value)), len(words)):]
            if words and re.search(r"\s", words[0].value):   # one quoted template: "samtools sort -o {.}.bam {}"
                return _template_is_setup(words[0].value)
        launched = command._replace(words=words, prefix=())
        return is_setup(launched) if launched.words else False
    return False


def _template_is_setup(template: str) -> bool:
    """Whether GNU Parallel's one-word command template runs set-up, judged by its first command."""
    statements = parse(template).statements
    first = next(iter(walk(statements)), None)
    return first is None or is_setup(first)


#: a word that is a variable's assignment where a shell reads it (``CUDA_VISIBLE_DEVICES={%}``)
_ASSIGNED_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _shell_runs_setup(command: Command, argv: List[str]) -> bool:
    """``bash << EOF`` and ``bash -c "..."``: set-up where all their script runs is."""
    script = command.heredocs[0].body if command.heredocs and len(argv) == 1 else \
        argv[argv.index("-c") + 1] if "-c" in argv[:-1] else None
    if script is None:
        return False
    inner = list(walk(parse(script).statements, functions=False))
    return bool(inner) and all(is_setup(c) for c in inner)


def _unwrapped(argv: List[str]) -> List[str]:
    """The command a wrapper runs (``timeout 2h python t.py`` -> ``python t.py``; ``env A=1 x`` -> ``x``)."""
    for _ in range(len(argv)):
        if not argv or argv[0].rsplit("/", 1)[-1] not in WRAPPERS:
            return argv
        options, plain = WRAPPERS[argv[0].rsplit("/", 1)[-1]]
        index = 1
        while index < len(argv) and (argv[index].startswith("-") or (argv[0] == "env" and "=" in argv[index])):
            index += 1 + (options.get(argv[index], 0) if "=" not in argv[index] else 0)
        argv = argv[index + plain:]
    return argv
