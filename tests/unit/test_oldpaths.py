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
