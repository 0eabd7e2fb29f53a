"""The site's own modules outside its EasyBuild stack, and a RAC account, on a port.

httpproxy is how a job reaches the internet where compute nodes have none of their own (Narval,
Rorqual); Fir's and Nibi's compute nodes reach it themselves, Trillium's not at all. A RAC
account may not exist on the target, which sbatch tells at once: a note, not a to-do."""

import copy

from slurmkit.port.retarget import choose_target, port_spec
from slurmkit.sites.modulecat import catalogue_checks
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

JOB = {"name": "t", "account": "def-x", "kind": "serial", "resources": {"time": "1h", "mem": "4G"}, "launch": "python train.py"}


def port(data, source="cedar", to="fir"):
    data = {**copy.deepcopy(JOB), "profile": source, **data}
    profile = load_profile(source)
    return port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), profile, choose_target(profile, to, load_profile))


def test_httpproxy_goes_where_compute_nodes_reach_the_internet_themselves():
    for to in ("fir", "nibi"):
        ported = port({"environment": {"modules": ["StdEnv/2020", "httpproxy"]}}, to=to)
        assert ported.spec["environment"]["modules"] == ["StdEnv/2023"]
        assert f"httpproxy: {to}'s compute nodes reach the internet without a proxy module" in \
            {c.field: c.why for c in ported.changes}["environment.modules"]


def test_httpproxy_stays_without_a_word_where_the_site_has_it():
    for to in ("rorqual", "narval"):
        ported = port({"environment": {"modules": ["StdEnv/2020", "httpproxy"]}}, source="beluga", to=to)
        assert ported.spec["environment"]["modules"] == ["StdEnv/2023", "httpproxy"]
        assert not [w for w in ported.warnings if "httpproxy" in w.message] and not [t for t in ported.todos if "httpproxy" in t]


def test_httpproxy_where_compute_nodes_reach_no_internet_says_the_job_must_work_offline():
    [check] = catalogue_checks(load_profile("trillium"), ["httpproxy"])
    assert check.new == "httpproxy" and "trillium's compute nodes reach no internet" in check.warning


def test_a_rac_account_is_a_note_of_what_sbatch_will_say_not_a_to_do():
    ported = port({"account": "rrg-someprof"})
    assert not [t for t in ported.todos if t.startswith("account")]
    assert [n for n in ported.notes if n.startswith("account: 'rrg-someprof' is a RAC allocation")]
    assert "sbatch refuses the job at once (Invalid account)" in ported.notes[0]


def test_a_hidden_version_is_checked_as_the_version_it_is_and_moves_hidden():
    """Lmod lists a version whose name starts with a dot only when asked (gcccore/.12.3), and knows
    it only by that name; the catalogue names versions from the build recipes, without the dot."""
    checks = catalogue_checks(load_profile("trillium"), ["gcccore/.12.3", "cudacore/.11.0", "gcccore/8.3.0"])
    assert [(c.module, c.new, bool(c.why or c.warning)) for c in checks] == [
        ("gcccore/.12.3", "gcccore/.12.3", False), ("cudacore/.11.0", "cudacore/.11.8.0", True),
        ("gcccore/8.3.0", "gcccore/12.3", True)]
    assert "cudacore/.11.8.0 is the nearest" in checks[1].why


def test_a_gcccore_the_new_compiler_loads_itself_goes_with_a_changed_line():
    """gcccore is GCC's core libraries, which each gcc module loads: an old script loaded it by
    hand, and the ported version (gcccore/.12.3) comes with gcc/12.3, the job's or the StdEnv's."""
    for modules, kept in ((["NiaEnv", "CCEnv", "StdEnv", "gcccore/.8.3.0", "gcc/7.3.0"], ["StdEnv", "gcc/12.3"]),
                          (["NiaEnv/2019b", "gcccore/.8.3.0", "hdf5"], ["StdEnv/2023", "hdf5"])):
        ported = port({"environment": {"modules": modules}, "kind": "threaded", "resources": {"time": "1h", "cpus_per_task": 40}},
                      source="niagara", to="trillium")
        assert ported.spec["environment"]["modules"] == kept
        why = {c.field: c.why for c in ported.changes}["environment.modules"]
        assert "gcccore/.8.3.0 goes: gcc/12.3 loads GCC's core libraries (gcccore/.12.3) itself" in why
        assert "gcccore/.12.3 is the nearest" not in why


def test_a_gcccore_the_port_does_not_move_is_kept_as_written():
    ported = port({"environment": {"modules": ["StdEnv/2023", "gcccore/.13.3"]}}, source="fir", to="nibi")
    assert ported.spec["environment"]["modules"] == ["StdEnv/2023", "gcccore/.13.3"]
    assert not [c for c in ported.changes if c.field == "environment.modules"]


def test_a_cudacore_beside_a_cuda_the_port_moves_goes_with_it():
    """cudacore is CUDA's toolkit, which each cuda module loads: kept beside cuda/12.2, an old
    script's cudacore/.11.8.0 would put the 11.8 toolkit under a cudnn built for CUDA 12."""
    modules = ["StdEnv/2020", "gcc/9.3.0", "cuda/11.8.0", "cudacore/.11.8.0", "cudnn/8.6.0.163"]
    ported = port({"environment": {"modules": modules}}, source="cedar", to="fir")
    assert ported.spec["environment"]["modules"] == ["StdEnv/2023", "gcc/12.3", "cuda/12.2", "cudnn/9.2.1.18"]
    why = {c.field: c.why for c in ported.changes}["environment.modules"]
    assert "cudacore/.11.8.0 goes: cuda/12.2 loads CUDA's toolkit itself" in why
    same = port({"environment": {"modules": ["StdEnv/2023", "cuda/12.2", "cudacore/.12.2.2"]}}, source="fir", to="nibi")
    assert same.spec["environment"]["modules"] == ["StdEnv/2023", "cuda/12.2", "cudacore/.12.2.2"]
