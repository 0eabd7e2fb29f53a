"""The bundled Alliance profiles state the facts the Alliance documents, each profile naming its sources.

Each test pins one fact a generated script depends on: GPU spellings and counts, usable memory,
walltime, whole-node rules, what $SLURM_TMPDIR is, CPU:GPU caps and which clusters are retired.
The last tests read the YAML text itself: every fact section and node type must carry a source.
"""

import fnmatch
import glob
import os
import re

import pytest
import yaml

from slurmkit.core.bundled import profiles_dir
from slurmkit.sites.profiles import load_profile, retirement_notice, validate_file

BUNDLED = profiles_dir()
ALLIANCE_CLUSTERS = ["graham", "beluga", "cedar", "niagara", "narval", "fir", "nibi", "rorqual", "trillium"]
RETIRED = {"graham": ("nibi", "2025-09-01"), "cedar": ("fir", "2025-09-12"),
           "niagara": ("trillium", "2025-09-30"), "beluga": ("rorqual", "2025-07-31")}
IN_SERVICE = ["narval", "fir", "nibi", "rorqual", "trillium"]
FACT_SECTIONS = ("status", "detect", "scheduling", "accounts", "storage", "software", "launch")
_URL_COMMENT = re.compile(r"(?:^|\s)#.*https?://")


def raw(name):
    """The merged mapping of a bundled profile (user override folders left out)."""
    return load_profile(name, dirs=[BUNDLED]).raw


def node(name, node_type):
    return raw(name)["node_types"][node_type]


def gpus(name, node_type):
    return node(name, node_type)["gpus"]


# ----------------------------------------------------------------------------- all clusters

@pytest.mark.parametrize("name", ALLIANCE_CLUSTERS)
def test_every_alliance_cluster_extends_the_abstract_alliance_base(name):
    data = raw(name)
    assert data["name"] == name
    assert data["extends"] == "alliance"
    assert not data.get("abstract", False)
    assert load_profile("alliance", dirs=[BUNDLED]).raw["abstract"] is True


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(str(BUNDLED), "*.yaml"))), ids=os.path.basename)
def test_bundled_profile_has_no_schema_or_source_problems(path):
    assert [str(problem) for problem in validate_file(path, dirs=[BUNDLED])] == []


def test_alliance_base_states_the_shared_account_memory_and_partition_rules():
    base = raw("alliance")
    assert base["accounts"]["required"] == "when-several"
    assert base["accounts"]["prefixes"] == ["def-", "rrg-", "rpp-", "ctb-"]
    assert base["accounts"]["env"] == ["SLURM_ACCOUNT", "SBATCH_ACCOUNT", "SALLOC_ACCOUNT"]
    assert base["scheduling"]["default_mem_per_cpu"] == "256M"
    assert base["scheduling"]["partitions"]["name_partition"] == "never"
    assert base["scheduling"]["min_walltime_advice"] == "1h"
    assert base["scheduling"]["whole_node"] is None


def test_alliance_base_uses_stdenv_2023_lmod_and_no_download_virtualenvs():
    software = raw("alliance")["software"]
    assert software["module_system"] == "lmod"
    assert software["stdenv"] == "StdEnv/2023"
    assert software["modules"]["gcc"] == "gcc/12.3"
    assert software["modules"]["openmpi"] == "openmpi/4.1.5"
    assert software["virtualenv"] == {"command": "virtualenv --no-download", "wheelhouse": True}


def test_alliance_base_launches_open_mpi_with_srun():
    launch = raw("alliance")["launch"]
    assert launch["default"] == "srun"
    assert launch["mpi"]["flavour"] == "openmpi"


@pytest.mark.parametrize("name", ALLIANCE_CLUSTERS)
def test_every_alliance_cluster_inherits_the_account_prefixes(name):
    assert raw(name)["accounts"]["prefixes"] == ["def-", "rrg-", "rpp-", "ctb-"]


# ---------------------------------------------------------------------------------- status

@pytest.mark.parametrize("name", sorted(RETIRED))
def test_retired_cluster_names_its_successor_and_retirement_date(name):
    successor, retired_on = RETIRED[name]
    status = raw(name)["status"]
    assert status["state"] == "retired"
    assert status["successor"] == successor
    assert str(status["retired_on"]) == retired_on
    assert raw(successor)["status"]["state"] == "in-service"


def test_beluga_notice_says_compute_nodes_are_off_since_2025_07_31_once():
    """The notice states the date; the note says what happened then, without repeating it."""
    notice = retirement_notice(load_profile("beluga", dirs=[BUNDLED]), "job.yaml")
    assert notice.count("2025-07-31") == 1 and "compute nodes powered off then" in notice


def test_beluga_note_says_its_storage_ended_on_2026_06_20():
    """Béluga/en: "March, 2019, to June, 2026": no longer "being decommissioned"."""
    note = raw("beluga")["status"]["note"]
    assert "ended on 2026-06-20" in note and "being decommissioned" not in note


@pytest.mark.parametrize("name, value, url", [
    ("narval", "a100_3g.20gb", "https://docs.alliancecan.ca/wiki/Narval/en"),
    ("fir", "max_jobs_per_user: 1000", "https://docs.alliancecan.ca/wiki/Running_jobs/en"),
    ("cedar", "internet_on_compute: true", "https://docs.alliancecan.ca/wiki/Singularity/en"),
    ("nibi", "memory: 128G", "https://docs.alliancecan.ca/wiki/Using_GPUs_with_Slurm/en"),
    ("nibi", "max_cores_per_gpu: 24", "https://docs.alliancecan.ca/wiki/Nibi/en"),
    ("beluga", "ended on 2026-06-20", "https://docs.alliancecan.ca/wiki/B%C3%A9luga/en"),
])
def test_facts_corrected_in_2026_carry_their_source_on_their_own_or_the_mig_line(name, value, url):
    """Each value re-checked against the Alliance's pages in 2026 has its source URL beside it
    (same line, or for a MIG list, on the ``mig:`` line above)."""
    lines = open(os.path.join(str(BUNDLED), f"{name}.yaml"), encoding="utf-8").read().splitlines()
    at = next(i for i, line in enumerate(lines) if value in line)
    beside = [lines[at]] + [line for line in lines[max(0, at - 3):at] if line.strip().startswith("mig:")]
    assert any(url in line for line in beside)


@pytest.mark.parametrize("name, stale", [
    ("nibi", "documented for 1g.10gb only"),
    ("nibi", "no per-node-type whole-node key"),
    ("alliance", "Cedar and Fir undocumented"),
    ("beluga", "still being decommissioned"),
    ("narval", "Took the English page"),
])
def test_stale_comments_are_gone(name, stale):
    assert stale not in open(os.path.join(str(BUNDLED), f"{name}.yaml"), encoding="utf-8").read()


@pytest.mark.parametrize("name", IN_SERVICE)
def test_successor_generation_and_narval_are_in_service(name):
    status = raw(name)["status"]
    assert status["state"] == "in-service"
    assert status.get("successor") is None


# ---------------------------------------------------------------------------------- detect

@pytest.mark.parametrize("name, hostname", [
    ("graham", "gra-login1"), ("graham", "gra800"),
    ("cedar", "cdr234"), ("cedar", "cdr544.int.cedar.computecanada.ca"),
    ("beluga", "blg9876"),
    ("narval", "nc30408"),
    ("niagara", "nia-login07"), ("niagara", "nia1265"),
    ("trillium", "tri-login01"), ("trillium", "trig-login01"),
    ("fir", "fc30669"), ("fir", "fc3281.int.fir.alliancecan.ca"),
    ("rorqual", "rc12509"),
    ("nibi", "c630.nibi.sharcnet"),
])
def test_documented_hostname_matches_only_its_own_cluster(name, hostname):
    names = {hostname.lower(), hostname.split(".")[0].lower()}

    def matches(cluster):
        return any(fnmatch.fnmatchcase(n, pattern.lower())
                   for pattern in raw(cluster)["detect"]["hostnames"] for n in names)

    assert [cluster for cluster in ALLIANCE_CLUSTERS if matches(cluster)] == [name]


@pytest.mark.parametrize("name", ALLIANCE_CLUSTERS)
def test_cc_cluster_value_is_the_lowercase_cluster_name(name):
    assert raw(name)["detect"]["cc_cluster"] == [name]


# --------------------------------------------------------------------------- GPU node types

def test_graham_v100_nodes_have_8_gpus_spelled_v100_and_5_cores_per_gpu():
    assert gpus("graham", "gpu-v100") == {"model": "v100", "count": 8, "memory": "32G", "gres": "v100",
                                           "max_cores_per_gpu": 5}
    assert node("graham", "gpu-v100")["cores"] == 40


def test_graham_t4_a100_and_a5000_are_spelled_t4_a100_a5000():
    assert gpus("graham", "gpu-t4-16c")["gres"] == "t4" and gpus("graham", "gpu-t4-16c")["count"] == 4
    assert gpus("graham", "gpu-t4-44c")["gres"] == "t4" and gpus("graham", "gpu-t4-44c")["count"] == 4
    assert gpus("graham", "gpu-a100-8gpu")["gres"] == "a100" and gpus("graham", "gpu-a100-8gpu")["count"] == 8
    assert gpus("graham", "gpu-a100-4gpu")["gres"] == "a100" and gpus("graham", "gpu-a100-4gpu")["count"] == 4
    assert gpus("graham", "gpu-a5000")["gres"] == "a5000" and gpus("graham", "gpu-a5000")["count"] == 4
    assert gpus("graham", "gpu-t4-44c")["max_cores_per_gpu"] == 16


def test_beluga_v100_nodes_have_4_gpus_spelled_v100_and_10_cores_per_gpu():
    assert gpus("beluga", "gpu-v100") == {"model": "v100", "count": 4, "memory": "16G", "gres": "v100",
                                           "max_cores_per_gpu": 10}
    assert node("beluga", "gpu-v100")["count"] == 172


def test_cedar_gpus_are_spelled_p100_p100l_v100l_with_4_per_node():
    assert {t: gpus("cedar", t)["gres"] for t in ("gpu-p100", "gpu-p100l", "gpu-v100l")} == {
        "gpu-p100": "p100", "gpu-p100l": "p100l", "gpu-v100l": "v100l"}
    assert all(gpus("cedar", t)["count"] == 4 for t in ("gpu-p100", "gpu-p100l", "gpu-v100l"))


def test_cedar_allows_6_cores_per_p100_and_8_per_v100l():
    assert gpus("cedar", "gpu-p100")["max_cores_per_gpu"] == 6
    assert gpus("cedar", "gpu-p100l")["max_cores_per_gpu"] == 6
    assert gpus("cedar", "gpu-v100l")["max_cores_per_gpu"] == 8


def test_cedar_p100_node_count_follows_the_cedar_page_not_the_gpu_table():
    assert node("cedar", "gpu-p100")["count"] == 96


def test_niagara_has_no_gpu_nodes():
    assert all("gpus" not in spec for spec in raw("niagara")["node_types"].values())


def test_narval_a100_nodes_have_4_gpus_spelled_a100_and_12_cores_per_gpu():
    assert gpus("narval", "gpu-a100")["gres"] == "a100"
    assert gpus("narval", "gpu-a100")["count"] == 4
    assert gpus("narval", "gpu-a100")["memory"] == "40G"
    assert gpus("narval", "gpu-a100")["max_cores_per_gpu"] == 12


def test_narval_mig_instances_are_the_three_a100_sizes_without_4g_20gb():
    """Narval/en rev 2026-04-17: 1g.5gb, 2g.10gb, 3g.20gb; the 4g profile is gone."""
    assert [m["gres"] for m in gpus("narval", "gpu-a100")["mig"]] == ["a100_1g.5gb", "a100_2g.10gb", "a100_3g.20gb"]


def test_fir_h100_nodes_have_4_gpus_spelled_h100_and_12_cores_per_gpu():
    assert gpus("fir", "gpu-h100")["gres"] == "h100"
    assert gpus("fir", "gpu-h100")["count"] == 4
    assert gpus("fir", "gpu-h100")["max_cores_per_gpu"] == 12
    assert node("fir", "gpu-h100")["cores"] == 48


def test_fir_mig_instances_use_the_long_nvidia_names():
    assert [m["gres"] for m in gpus("fir", "gpu-h100")["mig"]] == [
        "nvidia_h100_80gb_hbm3_1g.10gb", "nvidia_h100_80gb_hbm3_2g.20gb", "nvidia_h100_80gb_hbm3_3g.40gb"]


def test_nibi_h100_nodes_have_8_gpus_spelled_h100():
    assert gpus("nibi", "gpu-h100")["gres"] == "h100"
    assert gpus("nibi", "gpu-h100")["count"] == 8
    assert gpus("nibi", "gpu-h100")["memory"] == "80G"


def test_nibi_allows_14_cores_per_h100():
    assert gpus("nibi", "gpu-h100")["max_cores_per_gpu"] == 14


def test_nibi_mig_instances_are_spelled_h100_size():
    assert [m["gres"] for m in gpus("nibi", "gpu-h100")["mig"]] == ["h100_1g.10gb", "h100_2g.20gb", "h100_3g.40gb"]


def test_nibi_mi300a_nodes_have_4_apus_spelled_mi300a():
    assert gpus("nibi", "gpu-mi300a")["gres"] == "mi300a"
    assert gpus("nibi", "gpu-mi300a")["count"] == 4


def test_nibi_mi300a_has_128g_unified_memory_and_24_cores_per_apu():
    """Using_GPUs_with_Slurm/en lists MI300A-128gb; the Nibi example gives 24 cores per APU."""
    assert gpus("nibi", "gpu-mi300a")["memory"] == "128G"
    assert gpus("nibi", "gpu-mi300a")["max_cores_per_gpu"] == 24
    assert gpus("nibi", "gpu-mi300a")["vendor"] == "amd"
    assert gpus("nibi", "gpu-mi300a")["whole_node"] is True
    assert "whole_node" not in gpus("nibi", "gpu-h100")


def test_rorqual_h100_nodes_have_4_gpus_spelled_h100_and_16_cores_per_gpu():
    assert gpus("rorqual", "gpu-h100")["gres"] == "h100"
    assert gpus("rorqual", "gpu-h100")["count"] == 4
    assert gpus("rorqual", "gpu-h100")["max_cores_per_gpu"] == 16


def test_rorqual_gpu_node_count_is_the_newer_revisions_93():
    assert node("rorqual", "gpu-h100")["count"] == 93


def test_trillium_h100_nodes_have_4_gpus_spelled_h100_and_24_cores_per_gpu_without_mig():
    assert gpus("trillium", "gpu-h100")["gres"] == "h100"
    assert gpus("trillium", "gpu-h100")["count"] == 4
    assert gpus("trillium", "gpu-h100")["max_cores_per_gpu"] == 24
    assert not gpus("trillium", "gpu-h100").get("mig")
    assert node("trillium", "gpu-h100")["count"] == 63


# ----------------------------------------------------------------------- typical CPU node

@pytest.mark.parametrize("name, node_type, cores, memory", [
    ("graham", "cpu-base", 44, "187G"),
    ("beluga", "cpu-base", 40, "186G"),
    ("cedar", "cpu-cascade", 48, "187G"),
    ("cedar", "cpu-broadwell-125g", 32, "125G"),
    ("niagara", "cpu", 40, "188G"),
    ("narval", "cpu-base", 64, "250G"),
    ("fir", "cpu-base", 192, "750G"),
    ("nibi", "cpu-base", 192, "748G"),
    ("rorqual", "cpu-base", 192, "750G"),
    ("trillium", "cpu", 192, "749G"),
])
def test_typical_cpu_node_has_documented_cores_and_available_memory(name, node_type, cores, memory):
    spec = node(name, node_type)
    assert "gpus" not in spec
    assert (spec["cores"], spec["memory"]) == (cores, memory)


# ---------------------------------------------------------------------------- scheduling

@pytest.mark.parametrize("name, walltime", [
    ("graham", "7d"), ("beluga", "7d"), ("cedar", "28d"), ("niagara", "24h"), ("narval", "7d"),
    ("fir", "7d"), ("nibi", "7d"), ("rorqual", "7d"), ("trillium", "24h"),
])
def test_max_walltime(name, walltime):
    assert raw(name)["scheduling"]["max_walltime"] == walltime


def test_niagara_schedules_whole_40_core_nodes_and_ignores_mem():
    scheduling = raw("niagara")["scheduling"]
    assert scheduling["whole_node"]["cores"] == 40
    assert scheduling["mem_request"] is False
    assert scheduling["partitions"]["name_partition"] == "debug-only"
    assert "debug" in scheduling["partitions"]["allowed"]


def test_trillium_schedules_whole_192_core_nodes_and_1_or_4_gpus_and_ignores_mem():
    scheduling = raw("trillium")["scheduling"]
    assert scheduling["whole_node"] == {"cores": 192, "gpu_counts": [1, 4]}
    assert scheduling["mem_request"] is False
    assert scheduling["partitions"] == {"name_partition": "debug-only", "allowed": ["debug"], "source": None}


@pytest.mark.parametrize("name", ["graham", "beluga", "cedar", "narval", "fir", "nibi", "rorqual"])
def test_general_purpose_cluster_shares_nodes_and_honours_mem(name):
    scheduling = raw(name)["scheduling"]
    assert scheduling["whole_node"] is None
    assert scheduling["mem_request"] is True
    assert scheduling["default_mem_per_cpu"] == "256M"
    assert scheduling["partitions"]["name_partition"] == "never"


@pytest.mark.parametrize("name, limit", [
    ("graham", 1000), ("beluga", 1000), ("narval", 1000), ("nibi", 1000), ("rorqual", 1000),
    ("fir", 1000),       # Running_jobs/en rev 2026-02-27
    ("cedar", None),
])
def test_max_jobs_per_user_is_1000_where_documented_and_null_elsewhere(name, limit):
    assert raw(name)["scheduling"]["max_jobs_per_user"] == limit


@pytest.mark.parametrize("name", ["niagara", "trillium"])
def test_whole_node_sites_pick_the_account_automatically(name):
    assert raw(name)["accounts"]["required"] == "auto"


# ------------------------------------------------------------------------------- storage

@pytest.mark.parametrize("name, kind, size", [
    ("graham", "ssd", "750G"), ("beluga", "ssd", "370G"), ("cedar", "ssd", "840G"),
    ("narval", "ssd", "800G"), ("fir", "nvme", "7T"), ("nibi", "disk", "3T"), ("rorqual", "ssd", "375G"),
])
def test_slurm_tmpdir_is_node_local_disk_on_general_purpose_clusters(name, kind, size):
    assert raw(name)["storage"]["slurm_tmpdir"] == {"kind": kind, "size": size, "counts_against_memory": False,
                                                    "source": "https://docs.alliancecan.ca/wiki/Using_node-local_storage/en"}


@pytest.mark.parametrize("name", ["niagara", "trillium"])
def test_slurm_tmpdir_is_a_ram_disk_that_counts_against_memory(name):
    data = raw(name)
    assert data["storage"]["slurm_tmpdir"]["kind"] == "ramdisk"
    assert data["storage"]["slurm_tmpdir"]["counts_against_memory"] is True
    assert all(spec["local_disk"]["kind"] == "ramdisk" for spec in data["node_types"].values())


@pytest.mark.parametrize("name, internet", [
    ("graham", False), ("beluga", False), ("cedar", True), ("niagara", False), ("narval", False),
    ("fir", True), ("nibi", True), ("rorqual", False), ("trillium", False),
])
def test_internet_on_compute_nodes(name, internet):
    assert raw(name)["storage"]["internet_on_compute"] is internet


def test_nibi_scratch_is_not_purged_but_fir_scratch_is():
    assert raw("nibi")["storage"]["scratch"]["purged"] is False
    assert raw("fir")["storage"]["scratch"]["purged"] is True


def test_trillium_home_quota_is_100g_and_scratch_25t():
    storage = raw("trillium")["storage"]
    assert storage["home"]["quota"] == "100G"
    assert storage["scratch"]["quota"] == "25T"


# ------------------------------------------------------------------------ software, launch

def test_niagara_needs_ccenv_before_stdenv():
    software = raw("niagara")["software"]
    assert software["preload"][0] == "CCEnv"
    assert software["stdenv"] == "StdEnv/2023"


def test_trillium_loads_stdenv_2023_itself_and_uses_cuda_12_6():
    software = raw("trillium")["software"]
    assert software["preload"] == []
    assert software["stdenv"] == "StdEnv/2023"
    assert software["modules"]["cuda"] == "cuda/12.6"


@pytest.mark.parametrize("name, fabric", [
    ("graham", "infiniband"), ("beluga", "infiniband"), ("cedar", "omnipath"), ("niagara", "infiniband"),
    ("narval", "infiniband"), ("fir", "infiniband"), ("nibi", "ethernet"), ("rorqual", "infiniband"),
    ("trillium", "infiniband"),
])
def test_interconnect_fabric(name, fabric):
    assert raw(name)["launch"]["interconnect"]["fabric"] == fabric


def test_nibi_ethernet_gets_no_invented_nccl_variables():
    assert raw("nibi")["launch"]["env"] == {}


def test_only_beluga_sets_ucx_net_devices():
    assert raw("beluga")["launch"]["env"] == {"UCX_NET_DEVICES": "mlx5_0:1"}
    assert all(raw(name)["launch"]["env"] == {} for name in ALLIANCE_CLUSTERS if name != "beluga")


# -------------------------------------------------------------- sources, read from the text

def _files():
    return sorted(glob.glob(os.path.join(str(BUNDLED), "*.yaml")))


def _leaf_lines(node):
    """The line numbers (0-based) of every fact in a composed YAML node."""
    if isinstance(node, yaml.MappingNode) and node.value:
        for _, value in node.value:
            yield from _leaf_lines(value)
    elif isinstance(node, yaml.SequenceNode) and node.value:
        for item in node.value:
            yield from _leaf_lines(item)
    else:
        yield node.end_mark.line


def _source_of(mapping):
    for key, value in mapping.value:
        if key.value == "source":
            return value
    return None


def _unsourced(mapping, lines):
    """None if ``mapping`` has a non-empty ``source:`` or a URL comment on every fact line."""
    source = _source_of(mapping)
    if source is not None:
        items = source.value if isinstance(source, yaml.SequenceNode) else [source]
        return None if items and all(str(item.value).strip() for item in items) else "empty source"
    bare = [n + 1 for n in _leaf_lines(mapping) if not _URL_COMMENT.search(lines[n])]
    return f"no source key and no URL comment on line(s) {bare}" if bare else None


def _fact_mappings(path):
    text = open(path, encoding="utf-8").read()
    root = yaml.compose(text)
    for key, value in root.value:
        if key.value in FACT_SECTIONS:
            yield key.value, value
        elif key.value == "node_types" and isinstance(value, yaml.MappingNode):
            for name, spec in value.value:
                yield f"node_types.{name.value}", spec


@pytest.mark.parametrize("path", _files(), ids=os.path.basename)
def test_every_fact_section_and_node_type_in_the_text_has_a_source(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    missing = {where: why for where, mapping in _fact_mappings(path)
               if isinstance(mapping, yaml.MappingNode) for why in [_unsourced(mapping, lines)] if why}
    assert missing == {}


@pytest.mark.parametrize("name", ["alliance"] + ALLIANCE_CLUSTERS)
def test_alliance_sources_are_https_urls(name):
    path = os.path.join(str(BUNDLED), f"{name}.yaml")
    for where, mapping in _fact_mappings(path):
        source = _source_of(mapping)
        assert source is not None, where
        items = source.value if isinstance(source, yaml.SequenceNode) else [source]
        assert all(item.value.startswith("https://") for item in items), where


@pytest.mark.parametrize("name", ["alliance"] + ALLIANCE_CLUSTERS)
def test_alliance_nulls_carry_a_comment(name):
    path = os.path.join(str(BUNDLED), f"{name}.yaml")
    lines = open(path, encoding="utf-8").read().splitlines()

    def nulls(node):
        if isinstance(node, yaml.MappingNode):
            for _, value in node.value:
                yield from nulls(value)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                yield from nulls(item)
        elif node.tag == "tag:yaml.org,2002:null":
            yield node

    bare = [n.start_mark.line + 1 for n in nulls(yaml.compose("\n".join(lines)))
            if "#" not in lines[n.end_mark.line][n.end_mark.column:]]
    assert bare == []
