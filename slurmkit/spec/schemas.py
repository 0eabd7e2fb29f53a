"""JSON Schemas for job.yaml and for site profiles, made from the schemas the readers use.

Editors (VS Code's YAML extension, anything on yaml-language-server) complete and check keys
from a JSON Schema; ``slurmkit new`` points job.yaml at the one shipped in the package. Both
are *generated*, never written by hand:

- job.yaml's from spec.py: the keys of every section (``SECTION_KEYS``, which the reader
  itself allows), its choices (``KINDS``, ``LAUNCHERS`` ...) and its name patterns;
- a site profile's from ``profiles.SCHEMA``, the tree of checks the profile loader runs.

``python -m slurmkit.spec.schemas`` (or ``python docs/gen.py``) rewrites the shipped files;
tests/unit/test_schemas.py fails when they drift from what these functions make, and compares
the schema's verdict with the reader's on generated specs.

What a JSON Schema cannot say stays the reader's: durations and sizes are checked for their
type (text or a number), not their spelling; a command is not split; the resolver's checks
against the cluster (does nibi have that GPU?) are not here at all.
"""

import json
import re
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Pattern

from slurmkit.core.kinds import first_kind
from slurmkit.core.launchers import LAUNCHERS, MIXED_PRECISIONS
from slurmkit.core.sbatch_options import DEPENDENCY_TYPES

DRAFT = "http://json-schema.org/draft-07/schema#"
#: where the shipped schemas live, inside the installed package.
SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"
JOB_SCHEMA_FILE = "job.schema.json"
PROFILE_SCHEMA_FILE = "site-profile.schema.json"

Schema = Dict[str, Any]

NULL: Schema = {"type": "null"}
#: a value the reader takes as text: YAML numbers and booleans are kept as the file spells them.
TEXT_TYPES = ["string", "number", "boolean"]


def _pattern(regex: Pattern) -> str:
    """``regex`` as an ECMA-262 pattern (what JSON Schema's ``pattern`` is): with ``re.S`` a
    ``.`` also matches a newline, which ECMA-262 spells ``[\\s\\S]``."""
    text = regex.pattern
    return text.replace(".", r"[\s\S]") if regex.flags & re.S else text


def text(regex: Optional[Pattern] = None, nullable: bool = False) -> Schema:
    """A value the reader takes as text. A YAML number or boolean is read as the file spells
    it; JSON Schema checks patterns on strings only, so numbers (booleans) are allowed only
    where the pattern takes their spellings, and negative numbers only where it takes ``-3``."""
    types = ["string"]
    schema: Schema = {}
    if regex is None or all(regex.fullmatch(word) for word in _NUMBER_SPELLINGS):
        types.append("number")
    elif all(regex.fullmatch(word) for word in _INTEGER_SPELLINGS):
        types.append("integer")
    if len(types) > 1:
        if regex is not None and not regex.fullmatch("-3"):
            schema["not"] = {"type": "number", "exclusiveMaximum": 0}
    if regex is None or all(regex.fullmatch(word) for word in _BOOLEAN_SPELLINGS):
        types.append("boolean")
    schema["type"] = types + (["null"] if nullable else [])
    if regex is not None:
        schema["pattern"] = _pattern(regex)
    return schema


_INTEGER_SPELLINGS = ("7", "10", "123")
_NUMBER_SPELLINGS = _INTEGER_SPELLINGS + ("1.5", "0.001")
_BOOLEAN_SPELLINGS = ("true", "false", "yes", "no")


def one_or_list(item: Schema, nullable: bool = True) -> Schema:
    """What ``text_list`` reads: one item, or a list of them (null: none)."""
    return {"anyOf": [item, {"type": "array", "items": item}] + ([NULL] if nullable else [])}


def integer(minimum: int = 1, nullable: bool = True) -> Schema:
    schema: Schema = {"type": "integer", "minimum": minimum}
    return {"anyOf": [schema, NULL]} if nullable else schema


def choice(choices: Iterable[str], nullable: bool = True) -> Schema:
    return {"enum": list(choices) + ([None] if nullable else [])}


def any_case(words: Iterable[str]) -> Schema:
    """A choice the reader upper-cases first (mail events): ``end`` is ``END``."""
    spelled = ["".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word) for word in words]
    return {"type": "string", "pattern": f"^({'|'.join(spelled)})$"}


def duration(minimum_minutes: int = 0, nullable: bool = True) -> Schema:
    """A duration: text (``3h``, ``1-00:00:00``) or a whole number of minutes, as sbatch --time."""
    types = [{"type": "string"}, {"type": "integer", "minimum": minimum_minutes}] + ([NULL] if nullable else [])
    return {"anyOf": types, "description": "a duration such as 3h, 90m, 1-12:00:00 or a number of minutes"}


def size(nullable: bool = True, extra: Optional[str] = None) -> Schema:
    """A size: text (``32G``) or a number of MiB."""
    types = [{"type": "string"}, {"type": "number", "minimum": 0}] + ([NULL] if nullable else [])
    described = "a size such as 32G or 4000M (a bare number is MiB)" + (f", or {extra}" if extra else "")
    return {"anyOf": types, "description": described}


def closed(section: str, properties: Dict[str, Schema], required: Iterable[str] = (), nullable: bool = False,
           **more: Any) -> Schema:   # more: other keywords of the mapping's schema (anyOf, not, ...)
    """A mapping with exactly the keys the reader allows in ``section`` (spec.SECTION_KEYS)."""
    from slurmkit.spec.spec import SECTION_KEYS

    keys = SECTION_KEYS[section]
    if set(properties) != set(keys):
        raise AssertionError(f"schemas.py describes {sorted(properties)} for {section!r}; the reader allows {sorted(keys)}")
    schema: Schema = {"type": ["object", "null"] if nullable else "object",
                      "properties": {key: properties[key] for key in keys}, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
        # The reader counts a null value as missing.
        for key in required:
            schema["properties"][key] = {"allOf": [schema["properties"][key], {"not": NULL}]}
    schema.update(more)
    return schema


def _not_both(first: str, second: str) -> Schema:
    """The reader refuses two keys together (when neither is null)."""
    given = {"not": NULL}
    return {"not": {"required": [first, second], "properties": {first: given, second: given}}}


def _given(key: str, value: Optional[Schema] = None) -> Schema:
    """``key`` is there and not null (and matches ``value``)."""
    return {"required": [key], "properties": {key: {"allOf": [{"not": NULL}] + ([value] if value else [])}}}


# ------------------------------------------------------------------------------------ job.yaml

def job_schema() -> Schema:
    """The JSON Schema of job.yaml, from spec.py's keys, choices and patterns."""
    from slurmkit.spec import spec

    top = closed("", {
        "name": text(spec.NAME_RE),
        "profile": text(spec.NAME_RE, nullable=True),
        "account": text(spec.NAME_RE, nullable=True),
        "kind": {"enum": list(spec.KINDS), "description": "what the job is: " + ", ".join(spec.KINDS)},
        "resources": _resources(spec),
        "environment": _environment(spec),
        "launch": _launch(spec),
        "array": _array(spec),
        "tasks": _tasks(spec),
        "stage": _stage(spec),
        "resubmit": {"anyOf": [{"type": ["boolean", "null"]}, closed("resubmit", {"max_links": integer(nullable=False)})]},
        "dependencies": one_or_list(_dependency(spec)),
        "mail": {"anyOf": [NULL, {"type": "string", "pattern": _pattern(spec.MAIL_RE)}, closed("mail", {
            "user": text(spec.MAIL_RE, nullable=True),
            "events": one_or_list(any_case(spec.MAIL_EVENTS), nullable=False)})]},
        "extra_directives": one_or_list(text(spec._DIRECTIVE_RE)),
        "monitor": closed("monitor", {"gpu": {"type": ["boolean", "null"],
                                              "description": "sample the GPUs' use while the job runs (default: on for a job with GPUs)"}},
                          nullable=True),
        "logs": _logs(),
    }, required=("name", "resources"))
    sweeps, task_file = first_kind(sweeps=True).name, first_kind(runs_task_file=True).name
    top["allOf"] = [
        # kind array <=> an array section; kind many-tasks <=> a tasks section
        {"if": _given("kind", {"const": sweeps}), "then": _given("array")},
        {"if": _given("array"), "then": _given("kind", {"const": sweeps})},
        {"if": _given("kind", {"const": task_file}), "then": _given("tasks")},
        {"if": _given("tasks"), "then": _given("kind", {"const": task_file})},
        # launch is required, except beside a tasks file of commands (each line is one)
        {"if": _given("tasks", _given("commands")), "then": {"not": _given("launch")}, "else": _given("launch")},
    ]
    return {"$schema": DRAFT, "title": "slurmkit job.yaml",
            "description": "A slurmkit job spec (docs/job-spec.md); generated by slurmkit/spec/schemas.py", **top}


def _resources(spec) -> Schema:
    return closed("resources", {
        "nodes": integer(nullable=False),
        "tasks_per_node": integer(),
        "cpus_per_task": integer(),
        "mem": size(extra="'node' for all the memory of each node"),
        "mem_per_cpu": size(),
        "gpus": {"anyOf": [NULL, {"type": "integer", "minimum": 1},
                           {"type": "string", "pattern": _GPUS_TEXT},
                           closed("resources.gpus", {"model": text(spec.NAME_RE, nullable=True),
                                                     "count": integer(nullable=False)})],
                 "description": "GPUs per node: a count, MODEL:COUNT (h100:2), MODEL, or {model, count}"},
        "time": duration(minimum_minutes=1, nullable=False),
        "tmp": size(),
    }, required=("time",), **_not_both("mem", "mem_per_cpu"))


#: ``2``, ``h100``, ``h100:2`` (a count of at least one; all digits is a count, not a model).
_GPUS_TEXT = r"^(0*[1-9][0-9]*|(?![0-9]+$)[A-Za-z0-9][A-Za-z0-9._+-]{0,127}(:0*[1-9][0-9]*)?)$"


def _nccl_tarball(spec) -> Schema:
    """``{nccl: PATH, version: V}``: NVIDIA's NCCL tarball for the Horovod build (spec._read_nccl)."""
    return {"type": "object", "properties": {"nccl": {"type": "string", "pattern": r"\S"},
                                             "version": text(spec.NCCL_VERSION_RE, nullable=True)},
            "required": ["nccl"], "additionalProperties": False}


def _environment(spec) -> Schema:
    variables = {"type": ["object", "null"], "propertyNames": {"pattern": _pattern(spec.IDENTIFIER_RE)},
                 "additionalProperties": text()}
    venv = closed("environment.venv", {"path": text(nullable=True), "requirements": text(nullable=True),
                                       "packages": one_or_list(text(spec._PACKAGE_RE))})
    return closed("environment", {
        "modules": one_or_list(text(spec.MODULE_RE)),
        "venv": {"anyOf": [{"type": ["boolean", "null"]}, venv]},
        "variables": variables,
        "builds": one_or_list({"anyOf": [text(spec.BUILD_RE), _nccl_tarball(spec)]}),
        "build_cache": text(nullable=True),
        "setup": one_or_list(text(spec._SETUP_RE)),
        "errexit": {"type": ["boolean", "null"]},
        "nounset": {"type": ["boolean", "null"]},
        "allexport": {"type": ["boolean", "null"]},
        "login_shell": {"type": ["boolean", "null"]},
    }, nullable=True)


#: a command line (not empty: it says what the job runs), or its arguments as a list.
_COMMAND_TEXT = {"type": TEXT_TYPES, "pattern": r"\S"}
_ARGUMENTS = {"type": "array", "items": text(), "minItems": 1}


def _launch(spec) -> Schema:
    command = {"anyOf": [NULL, _COMMAND_TEXT, _ARGUMENTS]}
    long_form = closed("launch", {
        "command": command,
        "shell": text(spec._SETUP_RE, nullable=True),
        "launcher": choice(tuple(LAUNCHERS)),
        "framework": choice(spec.FRAMEWORKS),
        "batch_size": integer(),
        "gpu_view": choice(spec.GPU_VIEWS),
        "mixed_precision": {"anyOf": [choice(MIXED_PRECISIONS), {"const": False}]},   # a bare `no` reads as false
    }, anyOf=[_given("command"), _given("shell")], **_not_both("command", "shell"))
    return {"anyOf": [NULL, {"type": "string", "pattern": _COMMAND_TEXT["pattern"]}, _ARGUMENTS, long_form],
            "description": "the command (text or a list of arguments), or {command | shell, launcher, ...}"}


def _array(spec) -> Schema:
    names = {"pattern": _pattern(spec.PARAMETER_RE), "not": {"enum": sorted(spec.RESERVED_VARIABLES)}}
    values = {"anyOf": [text(), {"type": "array", "items": text(), "minItems": 1}]}
    return closed("array", {
        "parameters": {"type": "object", "propertyNames": names, "additionalProperties": values, "minProperties": 1},
        "throttle": integer(),
        "indices": text(re.compile(r"^\d+(-\d+(:\d+)?)?(,\d+(-\d+(:\d+)?)?)*$")),
    }, required=("parameters",), nullable=True)


def _tasks(spec) -> Schema:
    path = text(spec._ANY_PATH_RE, nullable=True)
    tasks = closed("tasks", {"commands": path, "arguments": path, "separator": path, "joblog": path},
                   oneOf=[_given("commands"), _given("arguments")])
    tasks["not"] = {"allOf": [_given("commands"), _given("separator")]}   # a commands file has no columns
    return {"anyOf": [NULL, tasks]}


def _dependency(spec) -> Schema:
    jobs = one_or_list(text(re.compile(r"^\d+(_\d+)?$")), nullable=False)
    return {"anyOf": [text(re.compile(r"^\d+(_\d+)?$")), {"type": "array", "items": text(re.compile(r"^\d+(_\d+)?$"))},
                      closed("dependencies.*", {"after": choice(tuple(DEPENDENCY_TYPES), nullable=False), "jobs": jobs},
                             required=("jobs",))]}


def _logs() -> Schema:
    """sbatch's --output/--error patterns (logpatterns.py: the symbols are the reader's to check)."""
    from slurmkit.core.logpatterns import ALLOWED

    pattern = {"type": "string", "pattern": r"\S", "description": f"a file name pattern: {ALLOWED}"}
    logs = closed("logs", {"output": pattern, "error": {"anyOf": [pattern, NULL]}}, required=("output",))
    return {"anyOf": [NULL, pattern, logs], "description": "where sbatch writes the job's output and error"}


def _stage(spec) -> Schema:
    from slurmkit.core.sanity import MIN_CHECKPOINT_S

    inside, anywhere = text(spec._STAGE_PATH_RE), text(spec._ANY_PATH_RE)
    given_to = text(spec._STAGE_PATH_RE, nullable=True)
    an_input = {"anyOf": [{"type": "string", "pattern": _pattern(spec._ANY_PATH_RE)},
                          closed("stage.inputs.*", {"from": anywhere, "to": given_to}, required=("from",))]}
    an_output = closed("stage.outputs.*", {"from": inside, "to": anywhere}, required=("from", "to"))
    checkpoint = closed("stage.checkpoint", {"from": inside, "to": inside,
                                             "every": duration(MIN_CHECKPOINT_S // 60, nullable=False)},
                        required=("from", "to"), nullable=True)
    return closed("stage", {
        "inputs": one_or_list(an_input),
        "outputs": one_or_list(an_output),
        "checkpoint": checkpoint,
        "lead": duration(),
    }, nullable=True)


# ---------------------------------------------------------------------------------- profiles

def profile_schema() -> Schema:
    """The JSON Schema of a site profile, from ``profiles.SCHEMA``. ``required`` keys are
    left out: a base or a child of an ``extends:`` chain may leave them to the other, and
    only the merged profile must have them (the loader checks that)."""
    from slurmkit.sites.profiles import SCHEMA

    return {"$schema": DRAFT, "title": "slurmkit site profile",
            "description": "A slurmkit site profile (docs/site-profiles.md); generated by slurmkit/spec/schemas.py",
            **_profile_node(SCHEMA)}


def _profile_node(node) -> Schema:
    from slurmkit.sites import profiles as p

    schema = _profile_value(node, p)
    if node.nullable:
        return {"anyOf": [schema, NULL]}
    return schema


def _profile_value(node, p) -> Schema:
    """One check of the profile loader as JSON Schema; a kind it does not know is an error
    here (and so in the drift test), never a silent ``{}``."""
    if isinstance(node, p.Fields):
        return {"type": "object", "properties": {key: _profile_node(value) for key, value in node.fields.items()},
                "additionalProperties": False}
    if isinstance(node, p.MapOf):
        return {"type": "object", "additionalProperties": _profile_node(node.value), "description": node.allowed()}
    if isinstance(node, p.ListOf):
        return {"type": "array", "items": _profile_node(node.item)}
    if isinstance(node, p.Enum):
        return {"enum": list(node.choices)}
    if isinstance(node, p.Str):
        schema = {"type": ["string", "number"]} if node.numbers else {"type": "string"}
        return schema if node.nullable else {**schema, "pattern": r"\S"}   # not empty
    if isinstance(node, p.Int):
        return {"type": "integer", "minimum": node.minimum}
    if isinstance(node, p.Bool):
        return {"type": "boolean"}
    if isinstance(node, p.Unit):
        return {"type": ["string", "number"], "description": node.allowed()}
    if isinstance(node, p.Date):
        return {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$", "description": node.allowed()}
    if isinstance(node, p.Sources):
        return {"anyOf": [{"type": "string", "minLength": 1}, {"type": "array", "items": {"type": "string"}, "minItems": 1}],
                "description": node.allowed()}
    raise TypeError(f"no JSON Schema for the profile check {type(node).__name__}")


# ------------------------------------------------------------------------------------ files

def generated() -> Dict[str, str]:
    """``{file name: text}`` of the schemas as shipped: sorted keys, so that the bytes depend
    on nothing but the readers' schemas."""
    return {name: json.dumps(schema, indent=2, sort_keys=True) + "\n"
            for name, schema in ((JOB_SCHEMA_FILE, job_schema()), (PROFILE_SCHEMA_FILE, profile_schema()))}


def write(folder: Path = SCHEMA_DIR) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in generated().items():
        (folder / name).write_text(body, encoding="utf-8")


def job_schema_path() -> Path:
    """The shipped job.yaml schema, for the ``# yaml-language-server: $schema=`` line."""
    return SCHEMA_DIR / JOB_SCHEMA_FILE


if __name__ == "__main__":
    write()
