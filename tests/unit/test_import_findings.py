"""slurmkit import and port say what a user must act on: a science code that no module the
job loads provides (it came from the submitting shell's PATH) is a note at import and a to-do
naming the module at port."""

from slurmkit.port.porting import import_script
from slurmkit.spec.spec import spec_from_mapping

HEAD = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n"


def imported(body: str, profile: str = "cedar"):
    result = import_script(HEAD + body, name="job", profile=profile)
    spec_from_mapping(result.spec)
    return result


def todos(result):
    return [f"{n.text}: {n.reason}" for n in result.unmapped]


# ------------------------------------------------------------------ a science code no module provides


def test_a_science_code_no_module_provides_is_a_note_at_import_and_a_to_do_at_port():
    import copy

    from slurmkit.port.retarget import choose_target, port_spec
    from slurmkit.sites.profiles import load_profile
    result = imported("#SBATCH -c 8\n# module load namd-multicore/2.14\ncd run1\nnamd2 +p8 md.namd > md.out\n", "beluga")
    assert [n for n in result.notes if n.outcome == "note" and n.reason.startswith("namd2 comes from no module")]
    source = load_profile("beluga")
    target = choose_target(source, "rorqual", load_profile)
    data = copy.deepcopy(result.spec)
    ported = port_spec(data, spec_from_mapping(result.spec, source="job.yaml"), source, target)
    [todo] = [t for t in ported.todos if "namd2 comes from no module" in t]
    assert "add namd-multicore/2.14 to environment.modules (after intel/2023.2.1" in todo


def test_a_science_code_its_module_provides_or_a_folder_named_like_it_is_no_finding():
    for body in ("module load gromacs/2023.3\ngmx mdrun -deffnm md\n", "mkdir lmp && cd lmp && ./run.sh\n"):
        assert not [n for n in imported(body).notes if "comes from no module" in n.reason], body


def test_an_older_stacks_namd_build_provides_namd2():
    """namd-mpi/2.14 (StdEnv/2020) put namd2 on PATH: no 'comes from no module' for it."""
    from slurmkit.port.sciencecodes import unloaded_programs

    assert unloaded_programs(["StdEnv/2020", "namd-mpi/2.14"], ["srun namd2 apoa1.namd"]) == []
    assert unloaded_programs(["StdEnv/2020"], ["srun namd2 apoa1.namd"]) == ["namd2"]
