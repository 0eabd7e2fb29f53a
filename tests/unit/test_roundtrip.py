"""The user's YAML survives `slurmkit port` (and `new --force`): comments, key order, quoting and indentation stay,
only the values the port changed differ (roundtrip.py, the one user of ruamel.yaml); and the
commands whose start-up is budgeted never import ruamel.yaml."""

import difflib
import subprocess
import sys

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.core.roundtrip import rewritten_text

COMMENTED_SPEC = """\
# Training on Graham: the V100 run from the 2023 paper.
# Keep the seed fixed.
name: train              # the job's name in squeue
profile: graham
account: def-prof
kind: gpu

resources:
  gpus: "v100:2"         # two V100s
  cpus_per_task: 10      # Graham's bundle
  mem: 64G
  time: '3h'             # measured: 2h40
environment:
  modules:
  - StdEnv/2020          # the stack of the paper
  - python/3.11
  - cuda/11.4
  variables: {SEED: '42', DEBUG: 'yes'}
launch: python train.py --seed $SEED    # see README
extra_directives: [--constraint=cascade, --signal=USR2@60]
"""


def ported(tmp_path, monkeypatch, text=COMMENTED_SPEC, *args):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.yaml").write_text(text)
    result = CliRunner().invoke(main, ["port", "job.yaml", "-o", "ported.yaml", *args])
    assert result.exit_code == 0, result.output
    return (tmp_path / "ported.yaml").read_text()


def body(text: str) -> str:
    """The ported file less the header port writes above the user's own lines."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if not line.startswith(("# Ported from", "#   ", "# note: ", "# to do: ")))
    return "".join(lines[start:])


def test_a_ported_spec_keeps_its_comments_and_key_order_and_only_changed_values_differ(tmp_path, monkeypatch):
    text = ported(tmp_path, monkeypatch)
    diff = [line for line in difflib.unified_diff(COMMENTED_SPEC.splitlines(), body(text).splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert diff == [
        "-profile: graham",
        "+profile: nibi",
        '-  gpus: "v100:2"         # two V100s',
        "-  cpus_per_task: 10      # Graham's bundle",
        '+  gpus: "h100:2"',            # "two V100s" described the old value: dropped
        "+  cpus_per_task: 28",         # "Graham's bundle" named the old cluster's figure: dropped
        "-  - StdEnv/2020          # the stack of the paper",
        "+  - StdEnv/2023          # the stack of the paper",
        "-  - cuda/11.4",
        "+  - cuda/12.2",
        "-extra_directives: [--constraint=cascade, --signal=USR2@60]",
        "+extra_directives: [--signal=USR2@60]",
    ]
    assert text.startswith("# Ported from graham to nibi by slurmkit port.\n")
    # What it reads back as is the port's spec.
    assert yaml.safe_load(text)["resources"] == {"gpus": "h100:2", "cpus_per_task": 28, "mem": "64G", "time": "3h"}


def test_values_pyyaml_reads_otherwise_are_written_back_as_they_were(tmp_path, monkeypatch):
    """YAML 1.1 (PyYAML) reads 03:00:00 as the number 10800, YAML 1.2 (ruamel.yaml) as text: a
    value the port did not change is the user's text, whatever either reads."""
    text = COMMENTED_SPEC.replace("time: '3h'", "time: 03:00:00")
    out = body(ported(tmp_path, monkeypatch, text))
    assert "  time: 03:00:00             # measured: 2h40\n" in out


@pytest.mark.parametrize("modules", [
    "  modules:\n  - StdEnv/2020\n  - cuda/11.4\n",            # PyYAML's own layout
    "  modules:\n    - StdEnv/2020\n    - cuda/11.4\n",        # dashes indented under their key
])
def test_the_files_indentation_is_kept(modules):
    text = f"name: x\nenvironment:\n{modules}"
    out = rewritten_text(text, yaml.safe_load(text), {"name": "x", "environment": {"modules": ["StdEnv/2023", "cuda/12.2"]}})
    assert out == text.replace("2020", "2023").replace("11.4", "12.2")


def test_a_file_with_crlf_line_ends_comes_out_with_plain_line_ends():
    text = "name: x   # the name\r\nenvironment:\r\n  modules: [gcc/9.3.0]\r\n"
    out = rewritten_text(text, yaml.safe_load(text), {"name": "x", "environment": {"modules": ["gcc/12.3"]}})
    assert out == "name: x   # the name\nenvironment:\n  modules: [gcc/12.3]\n"


def test_a_key_the_port_adds_goes_last_in_its_mapping_and_a_removed_one_goes_with_its_comment():
    text = "resources:\n  nodes: 4      # four\n  mem: 100G     # a lot\n  time: 3h\n"
    new = {"resources": {"nodes": 4, "time": "3h", "tasks_per_node": 40}}
    assert rewritten_text(text, yaml.safe_load(text), new, ["# head"]) == (
        "# head\nresources:\n  nodes: 4      # four\n  time: 3h\n  tasks_per_node: 40\n")


def test_the_same_port_gives_the_same_bytes(tmp_path, monkeypatch):
    assert ported(tmp_path, monkeypatch) == ported(tmp_path, monkeypatch, COMMENTED_SPEC, "--force")


def test_imports_to_do_lines_stay_at_the_top_where_check_finds_them(tmp_path, monkeypatch):
    from slurmkit.core.todos import pending_import_notes

    text = "# to do: line 7: conda activate x: list its packages\n" + COMMENTED_SPEC
    assert pending_import_notes(ported(tmp_path, monkeypatch, text)) == ("line 7: conda activate x: list its packages",)


def test_a_spec_written_by_new_and_commented_by_its_user_keeps_the_comments(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made = CliRunner().invoke(main, ["new", "train", "--profile", "graham", "--kind", "gpu", "--gpus", "v100:1", "--account", "def-prof",
                                     "--command", "python train.py", "--time", "2h", "--yes"])
    assert made.exit_code == 0, made.output
    monkeypatch.chdir(tmp_path / "train")
    spec = tmp_path / "train" / "job.yaml"
    spec.write_text("# my first job\n" + spec.read_text().replace("kind: gpu", "kind: gpu   # one GPU is enough"))
    result = CliRunner().invoke(main, ["port", "job.yaml"])
    assert result.exit_code == 0, result.output
    assert "# my first job\n" in result.stdout and "kind: gpu   # one GPU is enough\n" in result.stdout


def test_new_force_over_a_spec_the_user_commented_keeps_the_comments(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    flags = ["new", "train", "--profile", "nibi", "--kind", "serial", "--account", "def-prof", "--command", "python a.py", "--yes"]
    assert CliRunner().invoke(main, [*flags, "--time", "2h"]).exit_code == 0
    spec = tmp_path / "train" / "job.yaml"
    fresh = spec.read_text()
    spec.write_text("# my notes on this job\n" + fresh.replace("kind: serial", "kind: serial    # one core is enough"))
    result = CliRunner().invoke(main, [*flags, "--time", "5h", "--force"])
    assert result.exit_code == 0, result.output
    assert spec.read_text() == "# my notes on this job\n" + fresh.replace("kind: serial", "kind: serial    # one core is enough") \
        .replace("time: 2h", "time: 5h")
    # A file that is not a mapping (or not YAML) is replaced by a fresh one, as before.
    spec.write_text("- not a spec\n")
    assert CliRunner().invoke(main, [*flags, "--time", "2h", "--force"]).exit_code == 0
    assert spec.read_text() == fresh


@pytest.mark.parametrize("argv", [["render", "job.yaml"], ["--help"], ["render", "--help"], ["check", "job.yaml"]])
def test_render_check_and_help_do_not_import_ruamel(argv, tmp_path):
    (tmp_path / "job.yaml").write_text("name: t\nprofile: nibi\naccount: def-x\nkind: serial\nresources: {time: 1h}\nlaunch: ./a\n")
    code = ("import sys\nfrom slurmkit.cli.main import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "print('ruamel loaded' if any(m.startswith('ruamel') for m in sys.modules) else 'ruamel not loaded')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path).stdout
    assert out.splitlines()[-1] == "ruamel not loaded"


def test_port_does_import_ruamel(tmp_path):
    """The probe above can see ruamel when it is loaded."""
    (tmp_path / "job.yaml").write_text(COMMENTED_SPEC)
    code = ("import sys\nfrom slurmkit.cli.main import main\n"
            "try:\n    main(['port', 'job.yaml'])\nexcept SystemExit:\n    pass\n"
            "print('ruamel loaded' if any(m.startswith('ruamel') for m in sys.modules) else 'ruamel not loaded')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path).stdout
    assert out.splitlines()[-1] == "ruamel loaded"


def test_a_free_comment_that_states_the_old_values_is_kept_and_named_in_the_header(tmp_path, monkeypatch):
    """A comment on no field (``# Training on Graham: the V100 run``, ``# two nodes of four
    A100s``) cannot be rewritten, and dropping it would lose the rest of what it says: it stays,
    and the header says which of the values it states are now different."""
    text = ported(tmp_path, monkeypatch)
    assert "# note: the comment 'Training on Graham: the V100 run from the 2023 ...' states resources.gpus as before\n" in text
    assert "Keep the seed fixed." in body(text) and "'Keep the seed fixed.'" not in text
    spec = ("# Two nodes of four A100s, 12 cores each: 8 GPUs for 2 epochs.\nname: ddp\nprofile: narval\naccount: def-x\n"
            "kind: ddp\nresources: {nodes: 2, gpus: 'a100:4', cpus_per_task: 12, mem: 498G, time: 3h}\nlaunch: python train.py\n")
    text = ported(tmp_path, monkeypatch, spec, "--to", "nibi", "--repack", "--force")
    notes = [line for line in text.splitlines() if line.startswith("# note: the comment")]
    assert notes == ["# note: the comment 'Two nodes of four A100s, 12 cores each: 8 GPUs ...' states resources.nodes, "
                     "resources.gpus, resources.cpus_per_task as before"]
    assert "# Two nodes of four A100s, 12 cores each: 8 GPUs for 2 epochs." in body(text)


def test_port_says_on_the_terminal_which_kept_comment_is_out_of_date(tmp_path, monkeypatch):
    """The header note alone went unread: port said nothing of it and check cannot see it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.yaml").write_text("# DDP on 2 Graham T4 nodes\nname: ddp\nprofile: graham\naccount: def-x\nkind: ddp\n"
                                       "resources: {nodes: 2, gpus: 't4:2', mem: 64G, time: 3h}\nlaunch: python train.py\n")
    result = CliRunner().invoke(main, ["port", "job.yaml", "--to", "fir", "--repack", "-o", "fir.yaml", "--no-verify"])
    assert result.exit_code == 0, result.output
    assert ("to do: the comment 'DDP on 2 Graham T4 nodes' states resources.nodes, resources.gpus as before: "
            "edit or remove it\n") in result.output, result.output
    assert result.output.count("DDP on 2 Graham") == 1


def test_a_bare_number_in_a_free_comment_is_not_taken_for_a_count():
    """``2 epochs`` is not ``nodes: 2``: a count in a free comment must come with its unit."""
    original = "# 2 epochs, seed 4\nname: x\nresources: {nodes: 2, time: 1h}\n"
    old = {"name": "x", "resources": {"nodes": 2, "time": "1h"}}
    new = {"name": "x", "resources": {"nodes": 1, "time": "1h"}}
    assert "# note:" not in rewritten_text(original, old, new)
    said = rewritten_text(original.replace("2 epochs", "2 nodes"), old, new)
    assert said.startswith("# note: the comment '2 nodes, seed 4' states resources.nodes as before\n")


@pytest.mark.parametrize("comment", ["two whole nodes", "2 Graham T4 nodes", "PyTorch DDP on 2 Graham T4 nodes"])
def test_an_amount_with_words_before_its_unit_is_still_the_old_amount(comment):
    """``nodes: 2 # two whole nodes`` kept its comment over ``nodes: 1``, and a free ``# PyTorch
    DDP on 2 Graham T4 nodes`` was not named: up to two words may stand between an amount and its unit."""
    old = {"name": "x", "resources": {"nodes": 2, "time": "1h"}}
    new = {"name": "x", "resources": {"nodes": 1, "time": "1h"}}
    field = rewritten_text(f"name: x\nresources:\n  nodes: 2   # {comment}\n  time: 1h\n", old, new)
    assert comment not in field and "nodes: 1" in field
    free = rewritten_text(f"# {comment}\nname: x\nresources: {{nodes: 2, time: 1h}}\n", old, new)
    assert free.startswith("# note: the comment ") and "states resources.nodes as before" in free.splitlines()[0]
    for other in ("2 epochs on 3 whole nodes", "one per OpenMP thread, two per node"):
        kept = rewritten_text(f"# {other}\nname: x\nresources: {{nodes: 2, time: 1h}}\n", old, new)
        assert kept.startswith(f"# {other}\n"), kept   # no note: it does not state 2 nodes


def test_a_comment_on_a_rewritten_value_that_names_the_old_cluster_goes_with_it():
    """`new` writes the site's figures beside gpus (``the share of a nibi GPU node``); a port off
    nibi rewrote gpus and left that comment over figures of another cluster."""
    original = ("name: x\nprofile: nibi\nresources:\n  gpus: h100:1   # job.sbatch asks --cpus-per-task=14 and --mem=250G, "
                "the share of a nibi GPU node\n  time: 1h   # an hour on nibi is plenty\n")
    old = {"name": "x", "profile": "nibi", "resources": {"gpus": "h100:1", "time": "1h"}}
    new = {"name": "x", "profile": "local", "resources": {"gpus": "p100:1", "time": "1h"}}
    text = rewritten_text(original, old, new)
    assert "  gpus: p100:1\n" in text and "share of a nibi GPU node" not in text
    assert "  time: 1h   # an hour on nibi is plenty\n" in text   # an unchanged value keeps its comment
