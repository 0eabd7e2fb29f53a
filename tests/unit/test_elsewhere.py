"""Which cluster this host is on, and when a spec for another is refused (sites/elsewhere.py):
the decision table, without a cluster. The same judgement reaches check and submit through the
host rules (tests/faults/test_site_rules.py runs them on the local cluster)."""

import pytest

from slurmkit.sites.elsewhere import cluster_findings, cluster_here, conf_cluster_name, for_another_cluster, lineage
from slurmkit.sites.profiles import ProfileCatalog, load_profile, profiles_dir


def conf(tmp_path, text):
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("env, hostname, here", [
    ({"CC_CLUSTER": "fir"}, "laptop", ("fir", "$CC_CLUSTER=fir")),
    ({"CC_CLUSTER": "nibi", "SLURM_CLUSTER_NAME": "fir"}, "laptop", ("nibi", "$CC_CLUSTER=nibi")),   # the Alliance's word first
    ({"SLURM_CLUSTER_NAME": "narval"}, "laptop", ("narval", "$SLURM_CLUSTER_NAME=narval")),          # inside a job
    ({}, "fc30669", ("fir", "hostname fc30669 matches 'fc[0-9]*'")),
    ({}, "laptop", None),                                     # a laptop: nothing tells
    ({"CC_CLUSTER": "nowhere"}, "laptop", None),              # a value no profile claims
    ({"SLURM_CLUSTER_NAME": "lab"}, "laptop", ("local", "$SLURM_CLUSTER_NAME=lab")),   # the local test cluster counts too
    ({"SLURMKIT_PROFILE": "nibi"}, "laptop", None),           # what the user wants, not where they are
])
def test_the_cluster_here_is_told_by_the_alliance_variables_then_the_hostname(env, hostname, here, tmp_path):
    env = {"SLURM_CONF": str(tmp_path / "none.conf"), **env}
    found = cluster_here(env, hostname)
    assert (None if found is None else (found.name, found.reason)) == here


def test_the_cluster_name_of_slurms_configuration_tells_before_the_hostname(tmp_path):
    path = conf(tmp_path, "# the cluster\nSlurmctldHost=ctl\n  ClusterName = rorqual # ours\nNodeName=x\n")
    assert conf_cluster_name({"SLURM_CONF": path}) == "rorqual"
    found = cluster_here({"SLURM_CONF": path}, "fc30669")
    assert (found.name, found.reason) == ("rorqual", f"ClusterName=rorqual in {path}")
    assert cluster_here({"SLURM_CONF": conf(tmp_path, "ClusterName=unheard\n")}, "laptop") is None   # no profile claims it
    assert conf_cluster_name({"SLURM_CONF": str(tmp_path)}) is None     # a folder: no name, no error


@pytest.mark.parametrize("profile, refused", [
    ("nibi", True),       # another Alliance cluster
    ("graham", True),     # a retired one
    ("local", True),      # the test cluster's profile names ClusterName=lab
    ("fir", False),
    ("generic", False),   # names no cluster: fits every one
])
def test_a_spec_for_another_cluster_than_the_alliance_one_here_is_an_error_on_profile(profile, refused, tmp_path):
    env = {"CC_CLUSTER": "fir", "SLURM_CONF": str(tmp_path / "none.conf")}
    found = cluster_findings(load_profile(profile), "run/job.yaml", env, "laptop")
    assert bool(found) == refused
    if refused:
        assert found[0].level == "error" and found[0].field == "profile"
        assert found[0].message.startswith(f"this job is for {profile}, but this host is on fir ($CC_CLUSTER=fir): ")
        assert "`slurmkit port run/job.yaml --to fir -o fir.yaml`" in found[0].message
        assert "`--profile fir`" in found[0].message


def test_the_remote_way_is_offered_only_for_a_cluster_in_service_that_has_login_hosts(tmp_path):
    env = {"CC_CLUSTER": "fir", "SLURM_CONF": str(tmp_path / "none.conf")}
    said = {name: cluster_findings(load_profile(name), "job.yaml", env, "laptop")[0].message for name in ("nibi", "graham", "local")}
    assert said["nibi"].endswith("or send it to nibi with `--remote nibi`")
    assert "--remote" not in said["graham"] and "--remote" not in said["local"]


def test_nothing_is_refused_where_no_profile_claims_the_cluster_here(tmp_path):
    env = {"SLURM_CONF": conf(tmp_path, "ClusterName=unheard\n")}
    assert cluster_findings(load_profile("nibi"), "job.yaml", env, "vm") == []


def test_on_the_local_test_cluster_a_spec_for_an_alliance_cluster_is_refused_with_the_local_way_on(tmp_path):
    path = conf(tmp_path, "ClusterName=lab\n")
    found = cluster_findings(load_profile("nibi"), "job.yaml", {"SLURM_CONF": path}, "vm")
    assert [f.level for f in found] == ["error"]
    assert found[0].message.startswith(f"this job is for nibi, but this host is on local (ClusterName=lab in {path}): ")
    assert "`--profile local`" in found[0].message
    assert cluster_findings(load_profile("local"), "job.yaml", {"SLURM_CONF": path}, "vm") == []
    assert cluster_findings(load_profile("generic"), "job.yaml", {"SLURM_CONF": path}, "vm") == []


def test_a_users_profile_that_extends_the_cluster_here_is_that_cluster(tmp_path):
    mine = tmp_path / "site_profiles"
    mine.mkdir()
    (mine / "fir-gpu.yaml").write_text("name: fir-gpu\nextends: fir\ndescription: fir, my defaults\n")
    dirs = [mine, profiles_dir()]
    catalog = ProfileCatalog(dirs)
    assert lineage(catalog, "fir-gpu") == ["fir-gpu", "fir", "alliance"]
    here = cluster_here({"CC_CLUSTER": "fir", "SLURM_CONF": str(tmp_path / "none.conf")}, "laptop", dirs)
    assert not for_another_cluster(catalog.load("fir-gpu"), here, dirs)
    assert for_another_cluster(catalog.load("nibi"), here, dirs)


def test_a_users_file_named_after_the_cluster_that_extends_it_is_still_an_alliance_cluster(tmp_path):
    mine = tmp_path / "site_profiles"
    mine.mkdir()
    (mine / "fir.yaml").write_text("name: fir\nextends: fir\ndescription: fir, my defaults\n")
    dirs = [mine, profiles_dir()]
    assert lineage(ProfileCatalog(dirs), "fir") == ["fir", "fir", "alliance"]
    here = cluster_here({"CC_CLUSTER": "fir", "SLURM_CONF": str(tmp_path / "none.conf")}, "laptop", dirs)
    assert here is not None and here.name == "fir"
