"""A script named after a package its job imports (``lightning.py`` under kind lightning) is
refused: Python puts the script's folder first on its path, so ``import lightning`` imports the
script itself, half run ("partially initialized module 'lightning'"), and the job stops at once."""

import pytest

from slurmkit.core.kinds import KINDS
from slurmkit.core.programs import import_names, python_script, shadowed_package

from .test_cli_jobs import assert_bad_input, controlled_environment, run, write_spec  # noqa: F401 (fixture)
from .test_resolve import job, only_error

GPUS = {"nodes": 2, "gpus": "h100:4"}


@pytest.mark.parametrize("command, script", [
    (["python", "train.py", "--epochs", "5"], "train.py"),
    (["python3.11", "-u", "-W", "ignore", "src/lightning.py"], "src/lightning.py"),
    (["OMP_NUM_THREADS=1", "/usr/bin/python3", "-B", "horovod.py"], "horovod.py"),
    (["python", "-m", "torch.distributed.run", "train.py"], ""),   # a module: the package it names
    (["python", "-c", "import torch"], ""),
    (["./simulate", "torch.py"], ""),                                   # not Python
    (["exec", "python", "lightning.py"], "lightning.py"),               # a shell line that execs it
])
def test_the_script_a_python_command_runs(command, script):
    assert python_script(command) == script


@pytest.mark.parametrize("script, packages, hidden", [
    ("lightning.py", ("lightning", "torch"), "lightning"),
    ("src/torch.py", ("lightning", "torch"), "torch"),
    ("lightning/train.py", ("lightning",), ""),     # its folder is on the path, not the folder above it
    ("torch_utils.py", ("torch",), ""),
    ("lightning", ("lightning",), ""),              # not a .py file: import does not find it
])
def test_the_package_a_script_name_hides(script, packages, hidden):
    assert shadowed_package(script, packages) == hidden


def test_pip_and_module_names_become_import_names():
    assert import_names("pytorch-lightning") == ("pytorch_lightning",)
    assert import_names("mpi4py") == ("mpi4py",)
    assert "numpy" in import_names("scipy-stack")


def test_every_framework_kind_names_what_it_imports():
    assert {"lightning", "pytorch_lightning", "torch"} <= set(KINDS["lightning"].python_imports(None))
    assert "accelerate" in KINDS["accelerate"].python_imports(None)
    assert {"horovod", "tensorflow", "keras"} <= set(KINDS["horovod"].python_imports("tensorflow"))
    assert "tensorflow" in KINDS["tf-multiworker"].python_imports(None)
    assert KINDS["serial"].python_imports(None) == ()


@pytest.mark.parametrize("kind, script, why", [
    ("lightning", "lightning.py", "kind 'lightning' imports"),
    ("lightning", "pytorch_lightning.py", "kind 'lightning' imports"),
    ("accelerate", "accelerate.py", "kind 'accelerate' imports"),
    ("horovod", "horovod.py", "kind 'horovod' imports"),
    ("ddp", "torch.py", "kind 'ddp' imports"),
    ("tf-multiworker", "keras.py", "kind 'tf-multiworker' imports"),
])
def test_a_script_named_after_its_kinds_package_is_refused(kind, script, why):
    error = only_error(job("fir", GPUS, kind=kind, launch=f"python {script} --epochs 5"))
    name = script[:-3]
    assert error.field == "launch.command"
    assert error.message == (f"{script} has the name of the {name} package, which {why}: Python finds the script first and "
                             f"`import {name}` imports it in the package's place, so the job stops at once; rename the "
                             "script (e.g. train.py)")


@pytest.mark.parametrize("environment, script, why", [
    ({"venv": {"packages": ["numpy", "transformers==4.44"]}}, "transformers.py", "environment.venv.packages installs"),
    ({"venv": {"packages": ["deepspeed"]}}, "deepspeed.py", "environment.venv.packages installs"),
    ({"modules": ["mpi4py/4.0.3"]}, "mpi4py.py", "environment.modules loads"),
    ({"modules": ["scipy-stack/2025a"]}, "numpy.py", "environment.modules loads"),
])
def test_a_script_named_after_a_package_the_job_loads_is_refused(environment, script, why):
    error = only_error(job("fir", kind="serial", environment=environment, launch=f"python {script}"))
    assert f"which {why}:" in error.message and error.field == "launch.command"


def test_a_shell_line_is_judged_by_its_first_command():
    error = only_error(job("fir", GPUS, kind="accelerate", launch={"shell": "python accelerate.py | tee log.txt"}))
    assert error.field == "launch.shell"
    error = only_error(job("fir", GPUS, kind="lightning", launch={"shell": "exec python lightning.py > train.log 2>&1"}))
    assert error.field == "launch.shell" and error.message.startswith("lightning.py has the name of the lightning package")


@pytest.mark.parametrize("kind, command", [
    ("lightning", "python train.py"),
    ("lightning", "python -m lightning run model train.py"),     # the package, run as a module
    ("lightning", "python lightning/train.py"),
    ("serial", "python torch.py"),                               # nothing says the job imports torch
])
def test_other_scripts_pass(kind, command):
    resolution = job("fir", GPUS if kind != "serial" else None, kind=kind, launch=command)
    assert not [f for f in resolution.errors if "package" in f.message], resolution.errors


def test_check_refuses_it_in_one_located_line_and_exits_2(controlled_environment):
    spec = write_spec("""
        name: demo
        profile: fir
        account: def-someprof
        kind: horovod
        resources: {time: 1h, nodes: 2, gpus: h100:4}
        launch: python horovod.py --epochs 5
    """)
    result = run("check", spec)
    assert_bad_input(result)
    assert result.output == ("error: job.yaml:6: launch.command: horovod.py has the name of the horovod package, which kind "
                             "'horovod' imports: Python finds the script first and `import horovod` imports it in the "
                             "package's place, so the job stops at once; rename the script (e.g. train.py)\n")
