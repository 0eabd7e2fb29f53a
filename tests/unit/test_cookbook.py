"""The cookbook (examples/): every job renders on the retired cluster it was written for, moves
to that cluster's successor with `slurmkit port` without an error, and renders there; every
script passes bash -n and shellcheck, and every payload compiles."""

import copy
import py_compile
import shutil
import subprocess
from pathlib import Path

import pytest

from slurmkit.api.job import Job
from slurmkit.core.yamlfile import read_yaml_file
from slurmkit.port.retarget import choose_target, port_spec, ported_text
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import load_spec, spec_from_mapping

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
COOKBOOK = ("mnist-keras-multigpu", "resnet50-horovod", "ddp-multinode", "tf-multiworker", "kmeans-mpi4py",
            "tf-cpu-threads", "imagenet-tarball-staging", "sweep-1000", "long-run-chain", "serial-farm", "lightning-requeue",
            "accelerate-multinode")
OLD_CLUSTERS = ("graham", "cedar", "beluga", "niagara")


def test_the_cookbook_has_every_example_and_nothing_else():
    assert sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()) == sorted(COOKBOOK)
    for name in COOKBOOK:
        assert (EXAMPLES / name / "job.yaml").is_file() and (EXAMPLES / name / "README.md").is_file(), name


def _ported(name):
    path = EXAMPLES / name / "job.yaml"
    _, (data, lines, _) = read_yaml_file(path)
    spec = spec_from_mapping(data, str(path), lines)
    source = load_profile(spec.profile)
    return source, port_spec(copy.deepcopy(data), spec, source, choose_target(source, None, load_profile))


def _render(spec_path: Path, tmp_path: Path, profile=None) -> Path:
    job = Job.from_yaml(spec_path)
    resolution = job.resolve(profile)
    assert resolution.errors == (), [str(f) for f in resolution.errors]
    script = tmp_path / f"{spec_path.parent.name}-{profile or job.spec.profile}.sbatch"
    script.write_text(job.render(profile))
    assert job.render(profile) == script.read_text()          # the same spec, the same bytes
    return script


@pytest.mark.parametrize("name", COOKBOOK)
def test_an_example_renders_for_its_old_cluster_and_for_the_successor_it_ports_to(name, tmp_path):
    source, ported = _ported(name)
    assert source.name in OLD_CLUSTERS and ported.target == source.status.successor
    assert ported.changes[0].field == "profile"
    moved = EXAMPLES / name / f".ported-{ported.target}.yaml"   # beside job.yaml: relative paths keep their meaning
    try:
        moved.write_text(ported_text(ported))
        assert load_spec(moved).profile == ported.target
        scripts = [_render(EXAMPLES / name / "job.yaml", tmp_path), _render(moved, tmp_path)]
    finally:
        moved.unlink(missing_ok=True)
    for script in scripts:
        assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    if shutil.which("shellcheck"):   # tests/run installs it; test_golden fails loudly without it
        result = subprocess.run(["shellcheck", "--shell=bash", *map(str, scripts)], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("name", COOKBOOK)
def test_an_examples_payloads_compile(name, tmp_path):
    programs = sorted((EXAMPLES / name).glob("*.py"))
    assert programs, name
    for program in programs:
        py_compile.compile(str(program), cfile=str(tmp_path / (program.name + "c")), doraise=True)


def test_the_cookbook_page_shows_each_spec_as_it_is():
    import re

    page = (Path(__file__).resolve().parents[2] / "docs" / "cookbook.md").read_text()
    shown = dict(re.findall(r"`examples/([\w-]+)/job\.yaml`:\n\n```yaml\n(.*?)```", page, re.S))
    assert sorted(shown) == sorted(COOKBOOK)
    for name, text in shown.items():
        assert text == (EXAMPLES / name / "job.yaml").read_text(), f"docs/cookbook.md shows an old {name}/job.yaml"
