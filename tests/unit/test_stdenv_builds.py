"""Pins settled from the list of every module the Alliance built for StdEnv/2023.

A family found in site_profiles/StdEnv-2023.modules is known whole: a pinned version among its
builds is kept, any other is rewritten to the nearest build (no "check that it loads" to-do),
and a build that needs another compiler or CUDA is kept with that module (bench/stdenv_modules.py
writes the list from the recipes' names)."""

import copy
import importlib.util
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.port.retarget import choose_target, port_spec
from slurmkit.sites.modulecat import catalogue_checks, stdenv_builds
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

ROOT = Path(__file__).resolve().parents[2]
JOB = {"name": "t", "account": "def-x", "kind": "serial", "resources": {"time": "1h"}, "launch": "./run"}


def _generator():
    spec = importlib.util.spec_from_file_location("stdenv_modules", ROOT / "bench" / "stdenv_modules.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(modules, profile="fir"):
    return {c.module: c for c in catalogue_checks(load_profile(profile), modules)}


def port(modules, source="cedar", to="fir"):
    data = {**copy.deepcopy(JOB), "profile": source, "environment": {"modules": modules}}
    profile = load_profile(source)
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), profile, choose_target(profile, to, load_profile))


@pytest.mark.parametrize("path, version, expected", [
    ("2023/Java/Java-17.0.6.eb", "17.0.6", ("java", "17.0.6", "")),
    ("2023/Java/Java-1.8.0_292-OpenJDK.eb", "1.%s.0_%s", ("java", "1.8.0_292", "")),
    ("2023/NAMD/NAMD-3.0.2-gfbf-2023a-multicore.eb", "3.0.2", ("namd-multicore", "3.0.2", "")),
    ("2023/NAMD/NAMD-2.14-ifbf-2023a-multicore.eb", "2.14", ("namd-multicore", "2.14", "intel/2023.2.1")),
    ("2023/HDF5/HDF5-1.14.2-gompi-2023a-mpi.eb", "1.14.2", ("hdf5-mpi", "1.14.2", "")),
    ("2023/HDF5/HDF5-1.14.6-GCC-14.3.0.eb", "1.14.6", ("hdf5", "1.14.6", "gcc/14.3")),
    ("2023/GROMACS/GROMACS-2021.7-0.5.1-gofb-2023a-SWAXS.eb", "2021.7-0.5.1", ("gromacs-swaxs", "2021.7-0.5.1", "")),
    ("2023/GROMACS-LS/GROMACS-LS-2016.3-gccflexiblas-2023a-LS.eb", "2016.3", ("gromacs-ls", "2016.3", "")),
    ("2023/GATK/GATK-4.4.0.0-Java-17.eb", "4.4.0.0", ("gatk", "4.4.0.0", "")),
    ("2023/cuDNN/cuDNN-9.5.1.17-CUDAcore-12.6.2.eb", "9.5.1.17", ("cudnn", "9.5.1.17", "cuda/12.6")),
    ("2023/intel-compilers/intel-compilers-2023.2.1.eb", "2023.2.1", ("intel", "2023.2.1", "")),
    ("2023/Qt5/Qt5-5.15.11.eb", "5.15.11", ("qt", "5.15.11", "")),
    ("2023/FFTW.MPI/FFTW.MPI-3.3.10-gompi-2023a.eb", "3.3.10", ("fftw-mpi", "3.3.10", "")),
    ("2023/GCC/GCC-12.3.eb", "12.3.0", ("gcc", "12.3", "")),
])
def test_a_recipe_name_gives_the_module_a_user_loads(path, version, expected):
    assert _generator().recipe_module(path, version) == expected


@pytest.mark.parametrize("path", ["2023/Java/Java-default.eb", "2023/OpenMPI/OpenMPI-4.1.5_fix-pmix3x.patch"])
def test_an_alias_or_a_patch_is_no_module(path):
    assert _generator().recipe_module(path, None) is None


def test_the_bundled_list_holds_the_stack_and_names_its_source():
    text = (ROOT / "site_profiles" / "StdEnv-2023.modules").read_text()
    assert "source: https://github.com/ComputeCanada/easybuild-easyconfigs-installed-avx2/tree/" in text
    builds = stdenv_builds("StdEnv/2023")
    assert {"gcc/12.3", "openmpi/4.1.5", "python/3.11.5", "perl/5.36.1", "r/4.3.1"} <= set(builds.plain)
    assert builds.other["cudnn/9.5.1.17"] == "cuda/12.6"
    assert stdenv_builds("StdEnv/2020").plain == ()


@pytest.mark.parametrize("module, new", [
    ("perl/5.30.2", "perl/5.36.1"),          # a StdEnv/2020 build: rewritten, no to-do
    ("java/13.0.2", "java/17.0.6"),
    ("java/1.8.0_121", "java/1.8.0_292"),    # java/1.8 is an alias, not a build to move to
    ("nextflow/22.04.3", "nextflow/23.10.0"),
    ("samtools/1.17", "samtools/1.18"),      # a family no page documents
    ("python/3.9", "python/3.12.4"),         # the oldest release served (3.12), at its newest patch
    ("cuda/11.4", "cuda/12.2"),              # a two-part version is a release: 12.2, not 12.9
    ("gcc/12.3.0", "gcc/12.3"),              # spelled with a trailing .0
])
def test_a_pin_not_built_for_the_stdenv_moves_to_the_nearest_build(module, new):
    found = check([module])[module]
    assert (found.new, found.warning, found.absent) == (new, None, True)
    assert "StdEnv/2023 builds of" in found.why


@pytest.mark.parametrize("module", ["perl/5.36.1", "java/17", "r/4.3.1", "samtools/1.20", "gromacs/2024.4", "python/3.11"])
def test_a_pin_built_for_the_stdenv_is_kept_without_a_word(module):
    assert check([module])[module] == check([module])[module].__class__(module, module)


def test_a_build_for_another_cuda_is_kept_when_the_spec_loads_that_cuda():
    found = check(["cuda/12.6", "cudnn/9.5.1.17"])
    assert (found["cudnn/9.5.1.17"].new, found["cudnn/9.5.1.17"].warning, found["cudnn/9.5.1.17"].why) == ("cudnn/9.5.1.17", None, None)
    alone = check(["cudnn/9.5.1.17"])["cudnn/9.5.1.17"]
    assert alone.new == "cudnn/9.5.1.17" and "load cuda/12.6 before it" in alone.warning


def test_a_moved_cuda_goes_to_the_one_the_jobs_cudnn_is_built_with():
    """intel + cuda/10.0 + cudnn/7.5: cudnn moves to 9.2.1.18, built with cuda/12.2, and the cuda
    with it (not intel's nearest, 11.8, which that cudnn does not load over); and the ported
    set checks clean."""
    ported = port(["StdEnv/2020", "intel/2018.3", "cuda/10.0.130", "cudnn/7.5"])
    modules = ported.spec["environment"]["modules"]
    assert "cuda/12.2" in modules and "cudnn/9.2.1.18" in modules, modules
    assert not [t for t in ported.todos if "cud" in t] and not [w for w in ported.warnings if "cud" in w.message]
    assert all(c.new == c.module and not c.warning for c in check(modules).values() if c.module.startswith("cud"))


def test_port_loads_the_compiler_a_kept_build_needs():
    ported = port(["StdEnv/2020", "namd-multicore/2.14"])
    assert ported.spec["environment"]["modules"] == ["StdEnv/2023", "intel/2023.2.1", "namd-multicore/2.14"]
    assert not [t for t in ported.todos if "namd" in t]


def test_port_keeps_a_compiler_build_with_a_to_do_among_other_modules():
    ported = port(["StdEnv/2020", "python/3.10", "namd-multicore/2.14"])
    assert "namd-multicore/2.14" in ported.spec["environment"]["modules"]
    assert "intel/2023.2.1" not in ported.spec["environment"]["modules"]
    assert [w for w in ported.warnings if "load intel/2023.2.1 before it" in w.message]


def test_a_cuda_built_only_for_another_compiler_moves_to_the_default_compilers_cuda():
    ported = port(["python/3.10", "cuda/11.8"])
    assert ported.spec["environment"]["modules"] == ["python/3.10", "cuda/12.2"]
    assert not [t for t in ported.todos if "cuda" in t] and not [w for w in ported.warnings if "cuda" in w.message]


def test_a_cuda_of_the_compiler_the_job_loads_is_kept():
    ported = port(["StdEnv/2023", "intel/2023.2.1", "cuda/11.8"])
    assert ported.spec["environment"]["modules"] == ["StdEnv/2023", "intel/2023.2.1", "cuda/11.8"]


def test_a_family_built_only_with_another_compiler_moves_to_that_build_and_says_what_it_needs():
    ported = port(["StdEnv/2020", "gcc/9.3.0", "openmpi/4.0.3", "nwchem/7.0.2"])   # Intel in place of gcc: openmpi has both
    assert ported.spec["environment"]["modules"] == ["StdEnv/2023", "intel/2023.2.1", "openmpi/4.1.5", "nwchem/7.2.3"]
    assert not [t for t in ported.todos if "nwchem" in t]
    with_hdf5 = port(["StdEnv/2020", "gcc/9.3.0", "hdf5/1.10.6", "nwchem/7.0.2"])         # hdf5 of gcc: the user's choice
    assert [t for t in with_hdf5.todos if "nwchem/7.2.3 is built for StdEnv/2023 only with intel/2023.2.1: load intel/2023.2.1" in t]
    alone = port(["StdEnv/2020", "nwchem/7.0.2"])
    assert alone.spec["environment"]["modules"] == ["StdEnv/2023", "intel/2023.2.1", "nwchem/7.2.3"]


def test_a_job_on_intel_gets_intels_build_not_the_default_compilers():
    ported = port(["StdEnv/2020", "intel/2020.1.217", "openmpi/4.0.3", "lammps-omp/20210929"])
    assert ported.spec["environment"]["modules"] == ["StdEnv/2023", "intel/2023.2.1", "openmpi/4.1.5", "lammps-omp/20230802"]
    on_gcc = port(["StdEnv/2020", "gcc/9.3.0", "openmpi/4.0.3", "lammps-omp/20210929"])
    assert on_gcc.spec["environment"]["modules"][-1] == "lammps-omp/20250722"


def test_an_old_compatibility_layer_goes_with_its_stdenv():
    ported = port(["StdEnv/2020", "gentoo/2020", "samtools/1.17"])
    assert "gentoo/2020" not in ported.spec["environment"]["modules"]
    (change,) = [c for c in ported.changes if c.field == "environment.modules"]
    assert "gentoo/2020 is the compatibility layer of StdEnv/2020; StdEnv/2023 loads gentoo/2023 itself" in change.why


def test_check_reports_a_pin_the_stdenv_never_built(tmp_path, monkeypatch):
    """check and port judge a pin alike: samtools/1.17 under StdEnv/2023 cannot load."""
    spec = {**JOB, "profile": "fir", "environment": {"modules": ["StdEnv/2023", "samtools/1.17"]}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(spec))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "job.yaml"])
    assert "samtools/1.17 is not built for StdEnv/2023" in result.output and "samtools/1.18" in result.output


# ------------------------------------------------- modules with Python packages for some Pythons

def test_a_recipes_multi_deps_give_the_pythons_its_packages_are_built_for():
    recipe = "name = 'SciPy-Stack'\nversion = '2023b'\nmulti_deps = {\n\t'Python': ['3.10', '3.11']  \n}\n"
    assert _generator().recipe_pythons(recipe) == ["3.10", "3.11"]
    assert _generator().recipe_pythons('multi_deps = {"Python": ["3.12", "3.11"]}\n') == ["3.12", "3.11"]
    assert _generator().recipe_pythons("name = 'GCC'\n") == []
    builds = stdenv_builds("StdEnv/2023")
    assert builds.pythons["scipy-stack/2023b"] == ("3.10", "3.11") and "scipy-stack/2023b" in builds.plain
    assert "3.12" in builds.pythons["arrow/17.0.0"] and "python/3.12.4" not in builds.pythons


def test_port_moves_a_module_it_chose_to_a_build_for_the_jobs_python():
    """scipy-stack/2020a is not built for StdEnv/2023; its nearest, 2023b, has packages for 3.10 and
    3.11 only, and the job loads python/3.12: 2024a, the nearest built for 3.12."""
    ported = port(["StdEnv/2023", "python/3.12", "scipy-stack/2020a"], source="narval", to="rorqual")
    assert ported.spec["environment"]["modules"] == ["StdEnv/2023", "python/3.12", "scipy-stack/2024a"]
    (change,) = [c for c in ported.changes if c.field == "environment.modules"]
    assert "scipy-stack/2023b has Python packages built for python 3.10, 3.11 only, and the job loads python/3.12" in change.why
    assert not [t for t in ported.todos if "scipy" in t]


def test_a_module_the_job_pinned_for_another_python_is_a_to_do_that_check_reports_too(tmp_path, monkeypatch):
    ported = port(["StdEnv/2023", "python/3.12.4", "arrow/14.0.1"], source="narval", to="rorqual")
    assert ported.spec["environment"]["modules"] == ["StdEnv/2023", "python/3.12.4", "arrow/14.0.1"]
    (todo,) = [t for t in ported.todos if "arrow" in t]
    assert "arrow/14.0.1 has Python packages built for python 3.10, 3.11 only, and the job loads python/3.12.4" in todo
    assert "load arrow/17.0.0 (built for 3.12)" in todo
    spec = {**JOB, "profile": "rorqual", "environment": {"modules": ["StdEnv/2023", "python/3.12.4", "arrow/14.0.1"]}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(spec))
    monkeypatch.chdir(tmp_path)
    assert "none of them would import" in CliRunner().invoke(main, ["check", "job.yaml"]).output
    spec["environment"]["modules"][1] = "python/3.11.5"
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(spec))
    assert "would import" not in CliRunner().invoke(main, ["check", "job.yaml"]).output


def _ported_modules(modules, source="beluga", to="rorqual"):
    data = {**copy.deepcopy(JOB), "profile": source, "launch": "python prog.py",
            "environment": {"modules": modules, "venv": {"packages": ["torch"]}}}
    profile = load_profile(source)
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), profile,
                     choose_target(profile, to, load_profile)).spec["environment"]["modules"]


def test_port_keeps_the_python_a_pinned_modules_packages_are_built_for():
    """A venv made anew moves python/3.10 to the oldest served (3.12), unless a module the job pins
    has packages for the old python only: then both stay as they were."""
    assert _ported_modules(["StdEnv/2020", "python/3.10", "scipy-stack/2023b"]) == ["StdEnv/2023", "python/3.10", "scipy-stack/2023b"]
    assert _ported_modules(["StdEnv/2020", "python/3.10"]) == ["StdEnv/2023", "python/3.12.4"]


def test_a_spec_that_pins_the_targets_own_stack_keeps_its_python():
    """Narval and Rorqual serve one StdEnv/2023 and one wheelhouse: what ran on one runs on the other."""
    assert _ported_modules(["StdEnv/2023", "python/3.11"], source="narval") == ["StdEnv/2023", "python/3.11"]
