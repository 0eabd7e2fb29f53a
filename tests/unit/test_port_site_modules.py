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
