"""Horovod on the real local cluster (Debian's Slurm 22.05; nothing here depends on the version):
a GPU Horovod build whose cuda/nccl modules the profile cannot name is refused by ``slurmkit
submit`` before sbatch (exit 2, one located line, no job at the controller, nothing recorded),
and the same spec with the modules named does reach the controller."""

import os
import subprocess
import sys

import pytest
import yaml

from slurmkit.slurm.registry import submissions

#: the local cluster's profile without the cuda and nccl versions, as on the Alliance profiles.
NO_CUDA_PROFILE = "name: lab-nocuda\nextends: local\nsoftware:\n  modules: {cuda: null, nccl: null}\n"


@pytest.fixture
def registry(tmp_path, monkeypatch):
    path = tmp_path / "registry.jsonl"
    monkeypatch.setenv("SLURMKIT_REGISTRY", str(path))
    return path


def _spec(tmp_path, name, modules=()):
    (tmp_path / "site_profiles").mkdir(exist_ok=True)
    (tmp_path / "site_profiles" / "lab-nocuda.yaml").write_text(NO_CUDA_PROFILE)
    environment = {"venv": {"packages": ["torch"]}, "builds": ["horovod"], **({"modules": list(modules)} if modules else {})}
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(yaml.safe_dump({"name": name, "profile": "lab-nocuda", "account": "def-test", "kind": "horovod",
                                    "resources": {"time": "5m", "nodes": 2, "gpus": "p100:1", "mem": "500M"},
                                    "environment": environment, "launch": {"command": "python train.py"}}, sort_keys=False))
    return spec


def _slurmkit(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "slurmkit.cli", *args], cwd=tmp_path, capture_output=True, text=True)


def _jobs_named(name):
    """Every job of that name the controller knows, pending, running or recently ended."""
    out = subprocess.run(["squeue", "-h", "-t", "all", "-n", name, "-o", "%i"], capture_output=True, text=True, check=True).stdout
    return out.split()


def test_submit_refuses_a_gpu_horovod_build_without_cuda_and_nccl_before_sbatch(cluster, registry, tmp_path):
    name = f"hvd-nomods-{os.getpid()}"
    spec = _spec(tmp_path, name)
    result = _slurmkit(tmp_path, "submit", spec.name)
    assert result.returncode == 2, result.stderr
    line = spec.read_text().splitlines().index("environment:") + 1
    # Before it: the note that the profile comes from the current folder, and the memory warning of a 500M GPU job.
    assert result.stderr.splitlines()[0] == "note: using ./site_profiles/lab-nocuda.yaml from the current folder"
    assert result.stderr.splitlines()[-1] == (
        f"error: {spec.name}:{line}: environment.modules: the horovod build compiles against cuda and nccl, and "
        "lab-nocuda's profile names no version: add cuda/VERSION, nccl/VERSION to environment.modules "
        "(`module spider NAME` lists the versions)")
    assert [line for line in result.stderr.splitlines() if line.startswith("error:")] == result.stderr.splitlines()[-1:]
    assert result.stdout == ""
    assert _jobs_named(name) == [] and submissions(registry) == []


def test_with_cuda_and_nccl_named_the_same_horovod_spec_reaches_the_controller(cluster, registry, tmp_path):
    spec = _spec(tmp_path, f"hvd-mods-{os.getpid()}", modules=["cuda/12.2", "nccl/2.18.3"])
    result = _slurmkit(tmp_path, "submit", "--dry-run", spec.name)
    assert result.returncode == 0, result.stderr
    assert "to start at" in result.stdout + result.stderr      # sbatch --test-only answered; nothing queued
    assert submissions(registry) == []
