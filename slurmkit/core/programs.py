"""What program a command runs: the one place that tells a Python interpreter from the rest."""

from __future__ import annotations

import re
from typing import Sequence, Tuple

#: the program of a command that is a Python interpreter: python, python3, python3.11 (any folder).
_PYTHON_PROGRAM = re.compile(r"(?:.*/)?python(?:\d+(?:\.\d+)?)?")


def runs_python(command: Sequence[str]) -> bool:
    """Whether the payload is a Python interpreter (the first word that is not VAR=value): such a
    job needs the site's python module, since the OS python on a compute node has none of the
    site's wheels and is not the one the Alliance Python page supports."""
    program = next((word for word in command if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", word)), "")
    return bool(_PYTHON_PROGRAM.fullmatch(program))


#: interpreters whose programs start worker processes of their own as a matter of course
#: (Python's multiprocessing, R's mclapply, a MATLAB parpool, Julia's Distributed), as a word of a
#: line: ``python``, ``python3.11``, ``/usr/bin/Rscript``; a workflow manager (nextflow, snakemake:
#: its tasks run side by side) or a JVM; and a shell script, which may run one
_WORKER_STARTERS = re.compile(r"(?:^|(?<=[\s;&|(/]))(?:(?:python(?:\d+(?:\.\d+)?)?|Rscript|julia|matlab|octave|java|nextflow|snakemake"
                              r"|bash|sh)(?=\s|$)"
                              r"|R(?=\s+(?:CMD|-))|[\w.-]+\.sh(?=\s|$))", re.M)


def interpreter_in(text: str) -> str:
    """The interpreter a job's launch line runs (``_WORKER_STARTERS``), or "". A worker process it
    forks inherits the CPUs its first thread is bound to: OpenMP's pinning (``OMP_PROC_BIND``),
    which a library such as PyTorch or scikit-learn brings into the interpreter, binds that thread
    to the first core, and every worker then shares it."""
    found = _WORKER_STARTERS.search(text)
    return found.group(0) if found else ""


#: Interpreter options that take the next word as their value (``python -W ignore x.py``).
_OPTIONS_WITH_VALUE = ("-W", "-X", "--check-hash-based-pycs")
#: Packages whose import name is not their pip or module name (the rest: ``-`` becomes ``_``).
_IMPORT_NAMES = {"pytorch-lightning": ("pytorch_lightning",), "tensorflow-cpu": ("tensorflow",), "scikit-learn": ("sklearn",),
                 "opencv-python": ("cv2",), "opencv": ("cv2",), "pillow": ("PIL",), "pyyaml": ("yaml",),
                 "scipy-stack": ("numpy", "scipy", "pandas", "matplotlib")}


def python_script(command: Sequence[str]) -> str:
    """The script a Python command runs (``python -u train.py`` -> ``train.py``), or "" where it
    runs none (``-c``, ``-m``: a module is the package it names, found as packages are)."""
    words = [word for word in command if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", word)]
    words = words[1:] if words[:1] == ["exec"] else words   # a shell line that execs it (Lightning's requeue)
    if not runs_python(words):
        return ""
    rest = iter(words[1:])
    for word in rest:
        if word in _OPTIONS_WITH_VALUE:
            next(rest, None)
        elif word.startswith(("-c", "-m")) or word == "-":
            return ""
        elif not word.startswith("-"):
            return word
    return ""


def import_names(package: str) -> Tuple[str, ...]:
    """The top-level names ``import`` finds a pip package (``pytorch-lightning``) or a module
    family (``mpi4py``) under."""
    name = package.lower()
    return _IMPORT_NAMES.get(name, (name.replace("-", "_"),))


def shadowed_package(script: str, packages: Sequence[str]) -> str:
    """The package of ``packages`` a script's file name hides (``lightning.py`` hides lightning):
    Python puts the script's folder first on its path, so ``import lightning`` finds the script."""
    base = script.rsplit("/", 1)[-1]
    if not base.endswith(".py"):
        return ""
    return base[:-3] if base[:-3] in packages else ""
