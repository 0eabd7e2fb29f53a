"""The JSON Schemas of job.yaml and site profiles (slurmkit/spec/schemas.py) say what the readers say.

- the shipped files are what the generator makes now (a changed reader fails here until
  ``python -m slurmkit.spec.schemas`` is run);
- every section the reader knows lists, in its unknown-key error, exactly the keys the schema has;
- every example and golden spec, and every bundled profile, is valid; the structurally bad
  profile fixtures are not;
- on generated specs, mutated or not, the schema and the reader give the same verdict, for the
  structural class: unknown keys, wrong types, values outside a choice.
"""

import copy
import datetime
import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slurmkit.core.errors import SpecError
from slurmkit.core.yamlfile import parse_yaml
from slurmkit.sites.profiles import load_profile
from slurmkit.spec import schemas
from slurmkit.spec.spec import SECTION_KEYS, load_spec, spec_from_mapping
from tests.unit.golden_specs import KINDS, spec_for

REPO = Path(__file__).resolve().parents[2]
JOB = jsonschema.Draft7Validator(schemas.job_schema())
PROFILE = jsonschema.Draft7Validator(schemas.profile_schema())
PROFILES = sorted(p.stem for p in (REPO / "site_profiles").glob("*.yaml"))


def test_the_schemas_are_valid_draft_7():
    jsonschema.Draft7Validator.check_schema(schemas.job_schema())
    jsonschema.Draft7Validator.check_schema(schemas.profile_schema())


def test_the_shipped_files_are_what_the_readers_schemas_make():
    for name, body in schemas.generated().items():
        shipped = (schemas.SCHEMA_DIR / name).read_text(encoding="utf-8")
        assert shipped == body, f"slurmkit/schema/{name} is stale: run `python -m slurmkit.spec.schemas`"


def test_generation_gives_the_same_bytes_twice():
    assert schemas.generated() == schemas.generated()


# A valid spec holding each section the reader knows, and where in it that section is.
_SECTION_HOMES = {
    "": ({}, ()),
    "resources": ({}, ("resources",)),
    "resources.gpus": ({"resources": {"time": "1h", "gpus": {"model": "h100", "count": 1}}}, ("resources", "gpus")),
    "environment": ({"environment": {}}, ("environment",)),
    "environment.venv": ({"environment": {"venv": {}}}, ("environment", "venv")),
    "launch": ({"launch": {"command": "python x.py"}}, ("launch",)),
    "array": ({"kind": "array", "array": {"parameters": {"lr": [1]}}}, ("array",)),
    "tasks": ({"kind": "many-tasks", "tasks": {"arguments": "t.txt"}}, ("tasks",)),
    "dependencies.*": ({"dependencies": [{"jobs": 1}]}, ("dependencies", 0)),
    "mail": ({"mail": {"user": "a@b.ca"}}, ("mail",)),
    "stage": ({"stage": {}}, ("stage",)),
    "stage.inputs.*": ({"stage": {"inputs": [{"from": "a"}]}}, ("stage", "inputs", 0)),
    "stage.outputs.*": ({"stage": {"outputs": [{"from": "a", "to": "b"}]}}, ("stage", "outputs", 0)),
    "stage.checkpoint": ({"stage": {"checkpoint": {"from": "a", "to": "b"}}}, ("stage", "checkpoint")),
    "resubmit": ({"resubmit": {}}, ("resubmit",)),
    "monitor": ({"monitor": {}}, ("monitor",)),
    "logs": ({"logs": {"output": "logs/%x-%j.out"}}, ("logs",)),
}


def _base(**more):
    return {"name": "probe", "resources": {"time": "1h"}, "launch": "python x.py", **more}


def _at(data, path):
    for part in path:
        data = data[part]
    return data


def _schema_keys(path):
    """The keys the JSON Schema allows at ``path`` of a spec, found by walking it as a validator would."""
    data = _base(**copy.deepcopy(_SECTION_HOMES_BY_PATH[path]))
    _at(data, path)["zz_unknown"] = 1
    errors = [e for e in JOB.iter_errors(data)]
    keys = set()
    for error in _walk(errors):
        if error.validator == "additionalProperties" and tuple(error.absolute_path) == path:
            keys = set(error.schema["properties"])
    return keys


def _walk(errors):
    for error in errors:
        yield error
        yield from _walk(error.context or ())


_SECTION_HOMES_BY_PATH = {path: data for data, path in _SECTION_HOMES.values()}


def test_every_section_of_the_reader_is_in_the_probe():
    assert set(_SECTION_HOMES) == set(SECTION_KEYS)


@pytest.mark.parametrize("section", sorted(_SECTION_HOMES))
def test_the_reader_and_the_schema_allow_the_same_keys(section):
    """The reader's own error (not its constants) is the witness: a key written inline in a
    reader function, past SECTION_KEYS, fails here."""
    home, path = _SECTION_HOMES[section]
    data = _base(**copy.deepcopy(home))
    assert spec_from_mapping(copy.deepcopy(data), "job.yaml")   # the home itself is valid
    _at(data, path)["zz_unknown"] = 1
    with pytest.raises(SpecError) as caught:
        spec_from_mapping(data, "job.yaml")
    reader = set(re.search(r"allowed: (.*)$", str(caught.value)).group(1).split(", "))
    assert reader == set(SECTION_KEYS[section]) == _schema_keys(path)


@pytest.mark.parametrize("path", sorted(REPO.glob("examples/*/job.yaml")), ids=lambda p: p.parent.name)
def test_every_example_is_valid(path):
    load_spec(path)
    assert not list(JOB.iter_errors(yaml.safe_load(path.read_text()))), path


@pytest.mark.parametrize("profile", PROFILES)
def test_every_golden_spec_is_valid(profile):
    site = load_profile(profile)
    for kind in KINDS:
        data = spec_for(site, kind)
        spec_from_mapping(copy.deepcopy(data), "golden")
        assert not [e.message for e in JOB.iter_errors(data)], (profile, kind)


def _as_editor_sees(data):
    """Dates as the text an editor's YAML server gives the schema."""
    if isinstance(data, dict):
        return {k: _as_editor_sees(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_as_editor_sees(v) for v in data]
    return data.isoformat() if isinstance(data, datetime.date) else data


@pytest.mark.parametrize("profile", PROFILES)
def test_every_bundled_profile_is_valid(profile):
    data = _as_editor_sees(yaml.safe_load((REPO / "site_profiles" / f"{profile}.yaml").read_text()))
    assert not [e.message for e in PROFILE.iter_errors(data)]


#: the bad profile fixtures whose mistake is structural: a key, a type or a choice.
STRUCTURAL = ("bad_enum", "misspelled_key", "not_a_mapping", "unknown_top_key", "wrong_type")


@pytest.mark.parametrize("name", STRUCTURAL)
def test_structurally_bad_profiles_are_rejected(name):
    data = yaml.safe_load((REPO / "tests/unit/fixtures/bad_profiles" / f"{name}.yaml").read_text())
    assert list(PROFILE.iter_errors(_as_editor_sees(data)))


def test_the_profile_schema_knows_every_key_of_the_loaders_schema():
    from slurmkit.sites.profiles import SCHEMA, Fields

    def keys(node, schema, path=()):
        schema = next((s for s in schema.get("anyOf", [schema]) if s.get("type") == "object"), schema)
        if isinstance(node, Fields):
            assert set(schema["properties"]) == set(node.fields), path
            for key, child in node.fields.items():
                keys(child, schema["properties"][key], path + (key,))

    keys(SCHEMA, schemas.profile_schema())


# ------------------------------------------------------------------ the property: same verdict

_names = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True)
_time = st.sampled_from(["1h", "30m", 90, "1-00:00:00", "2:00:00", "3h30m"])


@st.composite
def specs(draw):
    kind = draw(st.sampled_from(["serial", "threaded", "gpu", "mpi", "array", "many-tasks", "ddp"]))
    resources = {"time": draw(_time)}
    if draw(st.booleans()):
        resources["nodes"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        resources["cpus_per_task"] = draw(st.integers(1, 16))
    memory = draw(st.sampled_from([None, ("mem", "4G"), ("mem", 4000), ("mem", "node"), ("mem_per_cpu", "2G")]))
    if memory:
        resources[memory[0]] = memory[1]
    if kind in ("gpu", "ddp"):
        resources["gpus"] = draw(st.sampled_from([1, "h100:2", "h100", {"model": "h100", "count": 2}, "2"]))
    data = {"name": draw(_names), "kind": kind, "resources": resources}
    if draw(st.booleans()):
        data["account"] = draw(st.sampled_from(["def-someprof", "rrg-x"]))
    if draw(st.booleans()):
        data["environment"] = draw(st.fixed_dictionaries({}, optional={
            "modules": st.sampled_from([["python/3.11"], "python/3.11", ["gcc", "openmpi/4.1"]]),
            "venv": st.sampled_from([True, {"requirements": "r.txt"}, {"packages": ["numpy", "torch==2.3"]}]),
            "variables": st.sampled_from([{"A": "1"}, {"OMP_PLACES": 7}]),
            "setup": st.sampled_from([["echo hi"], "source x.sh"]),
            "builds": st.sampled_from([["mpi4py"], ["horovod==0.28.1"]])}))
    if kind == "array":
        data["array"] = {"parameters": {"lr": draw(st.sampled_from([[0.1, 0.01], ["a"], 3]))}}
        if draw(st.booleans()):
            data["array"]["throttle"] = 2
    if kind == "many-tasks":
        data["tasks"] = draw(st.sampled_from([{"commands": "t.txt"}, {"arguments": "t.txt", "separator": ","}]))
    if "commands" not in data.get("tasks", {}):
        data["launch"] = draw(st.sampled_from([
            "python x.py", ["python", "x.py", 3], {"command": "python x.py", "launcher": "srun"},
            {"shell": "python t.py > log.txt"}, {"command": ["./a"], "framework": "pytorch", "gpu_view": "own", "batch_size": 8}]))
    optional = draw(st.fixed_dictionaries({}, optional={
        "dependencies": st.sampled_from([123, [123, "456_7"], [{"after": "any", "jobs": [1]}]]),
        "mail": st.sampled_from(["me@example.org", {"events": ["end", "FAIL"]}]),
        "extra_directives": st.sampled_from([["--constraint=cascade"], "--exclusive"]),
        "stage": st.sampled_from([{"inputs": ["data.tar"]}, {"outputs": [{"from": "runs", "to": "results"}]},
                                  {"checkpoint": {"from": "ckpt", "to": "ckpts", "every": "30m"}, "lead": "5m"}]),
        "resubmit": st.sampled_from([True, {"max_links": 3}]),
        "profile": st.sampled_from(["nibi", "generic"])}))
    data.update(optional)
    return data


def _paths(data, path=()):
    """Every key path in ``data`` (mappings and list items), the root first."""
    yield path
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        yield from _paths(value, path + (key,))


#: where a value is one of a fixed set of words
_CHOICES = (("kind",), ("launch", "launcher"), ("launch", "framework"), ("launch", "gpu_view"), ("dependencies", 0, "after"))
_WRONG = [True, 7, {"zz": 1}, [[1]], None]


@st.composite
def mutated(draw):
    data = draw(specs())
    how = draw(st.sampled_from(["none", "unknown key", "wrong type", "not a choice"]))
    paths = list(_paths(data))
    if how == "unknown key":
        mappings = [p for p in paths if isinstance(_at(data, p), dict)]
        _at(data, draw(st.sampled_from(mappings)))[draw(st.sampled_from(["zz", "gpu", "nmae", "memory"]))] = 1
    elif how == "wrong type":
        path = draw(st.sampled_from(paths[1:]))
        _at(data, path[:-1])[path[-1]] = copy.deepcopy(draw(st.sampled_from(_WRONG)))
    elif how == "not a choice":
        present = [p for p in _CHOICES if _present(data, p)]
        if present:
            path = draw(st.sampled_from(present))
            _at(data, path[:-1])[path[-1]] = draw(st.sampled_from(["nope", "SRUN", "gpus"]))
    return data


def _present(data, path):
    try:
        _at(data, path)
        return True
    except (KeyError, IndexError, TypeError):
        return False


def _reader_accepts(text):
    data, lines, _ = parse_yaml(text, "job.yaml", SpecError)
    try:
        spec_from_mapping(data, "job.yaml", lines)
        return True, ""
    except SpecError as error:
        return False, str(error)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_the_schema_and_the_reader_agree(data):
    text = yaml.safe_dump(data, sort_keys=False)
    loaded = parse_yaml(text, "job.yaml", SpecError)[0]
    reader, why = _reader_accepts(text)
    schema = [e.message for e in JOB.iter_errors(loaded)]
    assert reader == (not schema), f"reader: {why or 'valid'}; schema: {schema or 'valid'}\n{text}"


@settings(max_examples=100, deadline=None)
@given(specs())
def test_generated_specs_are_valid_for_both(data):
    text = yaml.safe_dump(data, sort_keys=False)
    assert _reader_accepts(text) == (True, "")
    assert not list(JOB.iter_errors(parse_yaml(text, "job.yaml", SpecError)[0]))


def test_the_shipped_schema_is_plain_json():
    for name in schemas.generated():
        json.loads((schemas.SCHEMA_DIR / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("change, where", [
    (lambda d: d["resources"].update(gpu=1), "resources.gpu"),                 # unknown key
    (lambda d: d.update(nmae="x"), "nmae"),
    (lambda d: d["resources"].update(nodes="two"), "resources.nodes"),        # wrong type
    (lambda d: d.update(launch=7), "launch"),
    (lambda d: d["resources"].update(time=[1]), "resources.time"),
    (lambda d: d.update(kind="gpus"), "kind"),                               # not a choice
    (lambda d: d.update(launch={"command": "x", "launcher": "mpiexec"}), "launch.launcher"),
    (lambda d: d.update(mail={"events": ["END", "SOMETIMES"]}), "mail.events[1]"),
])
def test_both_reject_each_structural_mistake(change, where):
    """The property above is not vacuous: each class of mistake is refused by both."""
    data = _base()
    change(data)
    text = yaml.safe_dump(data, sort_keys=False)
    accepted, why = _reader_accepts(text)
    assert not accepted and f" {where}: " in why
    assert list(JOB.iter_errors(parse_yaml(text, "job.yaml", SpecError)[0]))
