"""Paths into an older software stack named by hand (slurmkit/port/oldpaths.py): port and check
name each, with its stack year and what replaces it."""

from click.testing import CliRunner

from slurmkit.cli.main import main
from slurmkit.port.oldpaths import old_stack_paths
from slurmkit.sites.profiles import load_profile

OLD = "/cvmfs/soft.computecanada.ca/easybuild/software/2017/avx512/Compiler/gcc7.3/openmpi/3.1.2/lib/libmpi.so"


def test_a_path_into_an_older_stack_is_found_with_its_year_and_module():
    found = old_stack_paths(load_profile("fir"), [("environment.setup[0]", f"export LD_PRELOAD={OLD}"),
                                                  ("launch.shell", "ls /cvmfs/soft.computecanada.ca/easybuild/software/2023/x")])
    assert [(p.field, p.path, p.year, p.module) for p in found] == [("environment.setup[0]", OLD, "2017", "openmpi")]


def test_check_names_a_path_into_an_older_stack_on_a_2023_cluster(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.yaml").write_text(
        "name: old\nprofile: fir\naccount: def-prof\nkind: serial\nresources: {time: '1:00:00'}\n"
        f"environment:\n  variables:\n    LD_PRELOAD: {OLD}\nlaunch:\n  command: ./app\n")
    result = CliRunner().invoke(main, ["check", "job.yaml"])
    assert "no problems found" not in result.output
    assert (f"environment.variables.LD_PRELOAD: {OLD} is in the 2017 software stack, not fir's StdEnv/2023: "
            "load the openmpi module and use $EBROOTOPENMPI") in result.output.replace("\n", " ")


def ported(environment, command="./app"):
    import copy

    from slurmkit.port.retarget import port_spec
    from slurmkit.spec.spec import spec_from_mapping

    data = {"name": "old", "profile": "cedar", "account": "def-prof", "resources": {"time": "1h"},
            "environment": {"modules": ["StdEnv/2020", "gcc/9.3.0", "openmpi/4.0.3"], **environment}, "launch": {"command": command}}
    return port_spec(copy.deepcopy(data), spec_from_mapping(data), load_profile("cedar"), load_profile("fir"))


def test_a_file_of_a_module_the_job_loads_is_named_under_its_folder():
    done = ported({"variables": {"LD_PRELOAD": OLD}, "setup": [f"cp {OLD} ."]})
    assert done.spec["environment"]["setup"] == ['export LD_PRELOAD="$EBROOTOPENMPI/lib/libmpi.so"', "cp $EBROOTOPENMPI/lib/libmpi.so ."]
    assert "variables" not in done.spec["environment"] and not [t for t in done.todos if "software stack" in t]


def test_a_file_whose_name_carries_the_old_version_or_of_a_module_not_loaded_stays_a_to_do():
    jar = "/cvmfs/soft.computecanada.ca/easybuild/software/2017/Core/gatk/4.0.8.1/gatk-package-4.0.8.1-local.jar"
    done = ported({"modules": ["StdEnv/2020", "gatk/4.0.8.1"]}, f"java -jar {jar}")
    assert done.spec["launch"]["command"] == f"java -jar {jar}"
    assert [t for t in done.todos if "is in the 2017 software stack" in t]
    other = ported({"modules": ["StdEnv/2020"], "setup": [f"export LD_PRELOAD={OLD}"]})
    assert other.spec["environment"]["setup"] == [f"export LD_PRELOAD={OLD}"] and [t for t in other.todos if "software stack" in t]


def test_verification_declares_the_path_it_moved_in_a_programs_words():
    from slurmkit.port import verify

    lib = "/cvmfs/soft.computecanada.ca/easybuild/software/2020/avx2/Compiler/gcc9/openmpi/4.0.3/lib"
    data = {"name": "old", "profile": "cedar", "account": "def-prof", "resources": {"time": "1h"},
            "environment": {"modules": ["StdEnv/2020", "gcc/9.3.0", "openmpi/4.0.3"]},
            "launch": {"command": f"./configure --with-mpi-lib={lib}"}}
    done = ported({"modules": data["environment"]["modules"]}, data["launch"]["command"])
    assert done.spec["launch"]["command"] == "./configure --with-mpi-lib=$EBROOTOPENMPI/lib"
    found = verify.verify_port(data, done, "cedar")
    assert not [d.text for d in found.findings if "configure" in d.text], [d.text for d in found.findings]
    assert [d for d in found.declared if d.what == "argv" and d.subject == "configure"]
