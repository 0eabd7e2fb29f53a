"""Write site_profiles/StdEnv-2023.modules: every module version the Alliance built for StdEnv/2023.

The Alliance publishes the EasyBuild recipe of every package it installed on its software stack,
one folder per standard environment (ComputeCanada/easybuild-easyconfigs-installed-avx2 and
-avx512, folder ``2023``). A recipe's file name says the package, its version, the toolchain it was built with
and a suffix; the module a user loads is the package name in lower case, with the suffix words
that make a separate module (``namd-multicore``, ``hdf5-mpi``, ``lammps-omp``). This reads the
recipes from a clone (``git cat-file``; nothing is kept but names and versions) and writes one
``family/version`` a line, sorted, with the source and its commit in the header.

    python bench/stdenv_modules.py CLONE_OF_installed-avx2 CLONE_OF_installed-avx512 > site_profiles/StdEnv-2023.modules
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Iterable, Iterator, List, Optional, Tuple

FOLDER = "2023"
SOURCE = "https://github.com/ComputeCanada/{name}/tree/{commit}/2023"

# Package names whose module has another name on the Alliance's stack (the catalogue's sources
# load these: intel/2023.2.1, intelmpi/2021.9.0, qt/5.15.11, fftw-mpi/3.3.10).
RENAMED = {"intel-compilers": "intel", "impi": "intelmpi", "qt5": "qt", "qt6": "qt"}

# A toolchain is a name and a version (``GCC-12.3.0``, ``gompi-2023a``, ``CUDAcore-12.2.2``,
# ``rocm-compilers-19.0.0-ROCm-6.4.1``); what follows it is the recipe's suffix.
TOOLCHAINS = ("GCCcore", "GCC", "CUDAcore", "gompi", "gompic", "gofb", "gofbc", "gfbf", "gfbfc", "foss", "fosscuda",
              "gcccuda", "gcccorecuda", "gcccoreflexiblas", "gccflexiblas", "gccflexiblascuda", "intel-compilers",
              "intelcompilerscuda", "iimpi", "iompi", "iompic", "iofb", "iofbc", "iofbf", "iofbfc", "ifb", "ifbc", "ifbf",
              "ifbfc", "iifb", "NVHPC", "nvompi", "nvompic", "nvhpccuda", "llvm-compilers", "rocm-compilers")
_NAMES = "|".join(map(re.escape, TOOLCHAINS))
TOOLCHAIN = re.compile(rf"-(?P<name>{_NAMES})-(?P<version>\d[\w.]*(?:-ROCm-[\d.]+)?)")
# A suffix of words alone makes a module of its own; one with a version (-CUDA-12.2.2,
# -Python-3.11, -Java-17) is a build of the same module.
WORDS = re.compile(r"(?:-[A-Za-z]+)+")
# The toolchains built on GCC 12.3 (with Open MPI, FlexiBLAS, FFTW, CUDA), at their 2023a versions.
GCC_2023A = ("gompi", "gofb", "gfbf", "foss", "gofbc", "gfbfc", "gompic", "gcccuda", "gcccorecuda",
             "gcccoreflexiblas", "gccflexiblas", "gccflexiblascuda", "fosscuda")
# Words that name a variant of a build, not a module of its own (java/1.8.0_292 is -OpenJDK).
SAME_MODULE = ("-core", "-gentoo", "-openjdk")


def recipe_module(path: str, version: Optional[str] = None) -> Optional[Tuple[str, str, str]]:
    """``(family, version, toolchain)`` of the module a recipe file installs (the toolchain empty
    where the default compiler of the StdEnv reaches it), or None for an alias
    (``Java-default.eb``) or a file that is not a recipe (patches). ``version`` is the recipe's
    own ``version`` field where it is plain text: a version may hold a dash (``2021.7-0.5.1``),
    which the file name alone cannot tell from a toolchain."""
    folder, name = path.split("/")[-2:]
    if not name.endswith(".eb") or not name.startswith(folder + "-"):
        return None
    rest = name[len(folder) + 1:-len(".eb")]
    if not version or "%" in version or not rest.startswith(version):
        version = rest.partition("-")[0]
    if not re.match(r"v?\d", version):
        return None
    tail = rest[len(version):]
    toolchain = TOOLCHAIN.match(tail)
    suffix = tail[toolchain.end():] if toolchain else tail
    family = RENAMED.get(folder.lower(), folder.lower().replace(".", "-"))
    if suffix and WORDS.fullmatch(suffix) and suffix.lower() not in SAME_MODULE and not family.endswith(suffix.lower()):
        family += suffix.lower()
    chain = f"{toolchain.group('name')}-{toolchain.group('version')}" if toolchain else ""
    return family, version, "" if default_chain(chain) else compiler_module(chain)


def compiler_module(toolchain: str) -> str:
    """The compiler module a user loads before a module built with ``toolchain`` (StdEnv/2023's
    Intel is 2023.2.1; the 2024a toolchains are GCC 13.3, the 2025b ones GCC 14.3), or the
    toolchain itself where it is none of those."""
    name, _, version = toolchain.partition("-")
    if name == "CUDAcore":
        return "cuda/" + ".".join(version.split(".")[:2])
    if name == "intel" and version.startswith("compilers-"):
        return "intel/" + version[len("compilers-"):]
    if name.startswith("i") and name in TOOLCHAINS:
        return {"2024a": "intel/2024.2.0", "2025b": "intel/2025.2.0"}.get(version, "intel/2023.2.1")
    if name == "GCC" or name in GCC_2023A:
        return {"13.3.0": "gcc/13.3", "2024a": "gcc/13.3", "14.3.0": "gcc/14.3", "2025b": "gcc/14.3"}.get(version, toolchain)
    return toolchain


def default_chain(toolchain: str) -> bool:
    """Whether a module built with ``toolchain`` loads under StdEnv/2023 as it comes (GCC 12.3,
    Open MPI 4.1.5): no toolchain, GCCcore and CUDAcore (their modules sit above the compiler),
    GCC 12.3.0 and the 2023a toolchains built on it. Intel, NVHPC, LLVM, ROCm and the newer GCC
    toolchains (2024a: GCC 13.3; 2025b: GCC 14.3) need their compiler loaded first; a build on
    CUDAcore, or on a 2023a toolchain with another CUDA (``gcccorecuda-2023.2.129``), needs its CUDA."""
    name, _, version = toolchain.partition("-")
    if not toolchain or name == "GCCcore":
        return True
    return (name == "GCC" and version == "12.3.0") or (name in GCC_2023A and version == "2023a")


def recipe_version(text: str) -> Optional[str]:
    """The ``version = '...'`` field of a recipe."""
    found = re.search(r"^version\s*=\s*['\"]([^'\"]*)['\"]", text, re.M)
    return found.group(1) if found else None


def recipe_pythons(text: str) -> List[str]:
    """The Python versions a recipe builds its Python bindings for (``multi_deps = {'Python':
    ['3.10', '3.11']}``): a module of such a recipe, loaded beside another python, has no
    packages that import (the Python page: extensions are built per Python version)."""
    found = re.search(r"^multi_deps\s*=\s*\{[^}]*?['\"]Python['\"]\s*:\s*\[([^\]]*)\]", text, re.M | re.S)
    return re.findall(r"['\"](\d+\.\d+)['\"]", found.group(1)) if found else []


def modules(recipes: Iterable[Tuple[str, str]]) -> List[str]:
    """The lines of ``(path, text)`` recipes of the StdEnv/2023 folder: ``family/version`` where
    the StdEnv's default compiler reaches it, else ``family/version TOOLCHAIN`` (one of them);
    then ``python=3.10,3.11`` where its recipes build Python bindings for those versions only."""
    recipes = [(path, text) for path, text in recipes if path.startswith(FOLDER + "/")]
    pythons: dict = {}
    for path, text in recipes:
        module = recipe_module(path, recipe_version(text))
        if module and recipe_pythons(text):
            pythons.setdefault(f"{module[0]}/{module[1]}", set()).update(recipe_pythons(text))
    lines = _module_lines([m for m in (recipe_module(path, recipe_version(text)) for path, text in recipes) if m])
    return [line + _python_token(pythons.get(line.split()[0])) for line in lines]


def _python_token(versions) -> str:
    return " python=" + ",".join(sorted(versions, key=lambda v: tuple(map(int, v.split("."))))) if versions else ""


def _module_lines(found: List[Tuple[str, str, str]]) -> List[str]:
    """``family/version`` and ``family/version TOOLCHAIN`` lines of the modules found, sorted."""
    plain = {f"{family}/{version}" for family, version, chain in found if not chain}
    other: dict = {}
    for family, version, chain in sorted(found, key=lambda m: (not m[2].startswith("gcc/"), m)):
        if chain:
            other.setdefault(f"{family}/{version}", chain)
    lines = plain | {f"{name} {chain}" for name, chain in other.items() if name not in plain}
    return sorted(lines, key=lambda line: (line.partition("/")[0], line))


def read_recipes(git: List[str]) -> Iterator[Tuple[str, str]]:
    """``(path, text)`` of each ``.eb`` file of the folder, through one ``git cat-file --batch``."""
    listing = subprocess.run(git + ["ls-tree", "-r", "HEAD", FOLDER], check=True, capture_output=True, text=True).stdout
    rows = [line.split(None, 3) for line in listing.splitlines()]
    wanted = [(sha, path) for _mode, _kind, sha, path in rows if path.endswith(".eb")]
    batch = subprocess.run(git + ["cat-file", "--batch"], input="".join(sha + "\n" for sha, _ in wanted).encode(),
                           check=True, capture_output=True).stdout
    for _sha, path in wanted:
        header, _, batch = batch.partition(b"\n")
        size = int(header.split()[2])
        yield path, batch[:size].decode(errors="replace")
        batch = batch[size + 1:]


def main(repos: List[str]) -> None:
    """The union of the AVX2 and AVX512 stacks' recipes (a few, blast+/2.15.0, are built for one
    only; a cluster's own module list, ``software.installed``, tells which it has)."""
    recipes: List[Tuple[str, str]] = []
    sources = []
    for repo in repos:
        git = ["git", "--git-dir", repo] if repo.endswith((".git", "/repo")) else ["git", "-C", repo]
        commit = subprocess.run(git + ["rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
        name = repo.rstrip("/").removesuffix("/repo").removesuffix(".git").rsplit("/", 1)[-1].split("+")[-1]
        sources.append(SOURCE.format(name=name, commit=commit))
        recipes += read_recipes(git)
    print("# Every module version the Alliance built for StdEnv/2023, one a line: family/version where it")
    print("# loads with the StdEnv's own compiler (GCC 12.3), else family/version and the module it needs")
    print("# first (its compiler or CUDA); python=3.10,3.11 where its Python packages are built for those")
    print("# Pythons only (the recipe's multi_deps). From the names, versions and multi_deps of its")
    print("# installed EasyBuild recipes:")
    for source in sources:
        print(f"# source: {source}")
    print("# Written by bench/stdenv_modules.py; do not edit by hand.")
    for name in modules(recipes):
        print(name)


if __name__ == "__main__":
    main(sys.argv[1:])
