"""Site profiles: units, loading, merging, validation, search path, detection, detect's parsers."""

import re
import textwrap
import warnings
from datetime import date
from pathlib import Path

import pytest
import yaml

from slurmkit.core.bundled import profiles_dir
from slurmkit.core.errors import NoProfileDetected, ProfileError, ProfileNotFound, UnitError
from slurmkit.core.units import format_duration, format_size, format_slurm_time, parse_duration, parse_size
from slurmkit.sites import detect as det
from slurmkit.sites import profiles as sp

BAD = Path(__file__).parent / "fixtures" / "bad_profiles"
SOURCE = "source: https://example.org"


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def cluster(folder: Path, name: str, extra: str = "") -> Path:
    """A minimal valid in-service profile, plus ``extra`` YAML at the top level."""
    return write(folder, name, f"name: {name}\nstatus: {{state: in-service, {SOURCE}}}\n" + textwrap.dedent(extra))


# ------------------------------------------------------------------------------------- units

@pytest.mark.parametrize("text, mib", [
    ("4G", 4096), ("4000M", 4000), ("4GiB", 4096), ("7T", 7 * 1024 * 1024), ("512K", 1),
    (4000, 4000), ("125g", 125 * 1024), ("1.5G", 1536), ("2048", 2048), ("0", 0),
])
def test_sizes_in_slurm_forms_become_mib(text, mib):
    assert parse_size(text) == mib


@pytest.mark.parametrize("text", ["4X", "", "G", "-4G", True, "4 GB of RAM"])
def test_unreadable_size_is_a_unit_error_that_shows_the_forms(text):
    with pytest.raises(UnitError, match="4G, 4000M"):
        parse_size(text)


@pytest.mark.parametrize("text, seconds", [
    ("7-00:00:00", 7 * 86400), ("24:00:00", 86400), ("1:00:00", 3600), ("30", 1800), (30, 1800),
    ("0-03:00", 3 * 3600), ("1-12", 36 * 3600), ("10:30", 630), ("7d", 7 * 86400), ("24h", 86400),
    ("90m", 5400), ("3h30m", 12600), ("45s", 45), ("1d12h", 36 * 3600),
])
def test_durations_in_slurm_and_short_forms_become_seconds(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["7 days", "", "1:2:3:4", "h", "UNLIMITED", 1.5, "-1"])
def test_unreadable_duration_is_a_unit_error_that_shows_the_forms(text):
    with pytest.raises(UnitError, match="7-00:00:00"):
        parse_duration(text)


def test_formatting_is_exact_and_slurm_time_never_rounds_down():
    assert format_duration(12600) == "3h30m" and format_duration(7 * 86400) == "7d"
    assert format_size(4096) == "4G" and format_size(4000) == "4000M" and format_size(3 * 1024 ** 2) == "3T"
    assert format_slurm_time(7 * 86400) == "7-00:00:00"
    assert format_slurm_time(61) == "0-00:02:00"


# ---------------------------------------------------------------------------- bundled files

def test_local_profile_states_the_test_cluster_facts():
    local = sp.load_profile("local")
    (node,) = local.node_types
    assert (node.count, node.cores, node.sockets, node.memory_mib) == (2, 2, 1, 4000)
    assert (node.gpus.model, node.gpus.count, node.gpus.gres) == ("p100", 2, "p100")
    assert local.detect.slurm_cluster_name == ("lab",)
    assert local.scheduling.max_walltime_seconds == 7 * 86400
    assert local.scheduling.partitions.allowed == ("compute",)
    assert local.accounts.required == "always"
    assert local.launch.mpi.srun_mpi == "pmix" and local.launch.mpi.flavour == "openmpi"
    assert local.software.stdenv == "StdEnv/2023"
    assert dict(local.software.modules) == {"gcc": "gcc/12.3", "python": "python/3.11", "cuda": "cuda/12.2",
                                            "cudnn": "cudnn/8.9.5.29", "openmpi": "openmpi/4.1.5", "nccl": "nccl/2.18.3",
                                            "parallel": ""}
    assert local.storage.internet_on_compute is True


def test_local_profile_agrees_with_the_cluster_script():
    script = (Path(__file__).parents[1] / "cluster" / "cluster.sh").read_text()
    local = sp.load_profile("local")
    assert "CLUSTER=lab" in script and "MaxTime=7-00:00:00" in script and "Gres=gpu:p100:$GPUS" in script
    assert "MpiDefault=pmix" in script and "DefMemPerCPU=256" in script
    assert local.scheduling.default_mem_per_cpu_mib == 256
    # parallel: "" (no module) because the script installs Debian's parallel on the machine
    assert local.software.modules["parallel"] == "" and re.search(r"PACKAGES=\([^)]*\bparallel\b", script)


@pytest.mark.parametrize("name", ["generic", "local"])
def test_my_bundled_profiles_pass_validate_with_sources(name):
    assert sp.validate_file(profiles_dir() / f"{name}.yaml") == []


def test_generic_profile_assumes_nothing_site_specific():
    generic = sp.load_profile("generic")
    assert generic.node_types == ()
    assert generic.detect == sp.Detect()  # never detected: chosen with --profile generic
    assert generic.scheduling.max_walltime_seconds is None
    assert generic.software.module_system == "none"


# ---------------------------------------------------------------------------------- merging

def test_raw_is_the_merged_mapping_as_plain_data(tmp_path):
    write(tmp_path, "base", f"""
        name: base
        abstract: true
        aliases: [b]
        scheduling: {{max_walltime: 1d, mem_request: true, {SOURCE}}}
        storage: {{scratch: {{path: /scratch, quota: 20T}}, {SOURCE}}}
    """)
    cluster(tmp_path, "child", """
        extends: base
        scheduling: {max_walltime: 2d}
        storage: {scratch: {quota: 10T}}
    """)
    raw = sp.load_profile("child", dirs=[tmp_path]).raw
    assert type(raw) is dict and type(raw["scheduling"]) is dict
    assert raw["scheduling"] == {"max_walltime": "2d", "mem_request": True, "source": "https://example.org"}
    assert raw["storage"]["scratch"] == {"path": "/scratch", "quota": "10T"}
    assert raw["name"] == "child" and raw["extends"] == "base"
    assert "abstract" not in raw and "aliases" not in raw  # not inherited: they say what the file itself is


def test_child_lists_and_scalars_replace_the_parents(tmp_path):
    write(tmp_path, "base", f"name: base\nabstract: true\naccounts: {{prefixes: [def-, rrg-], required: always, {SOURCE}}}\n")
    cluster(tmp_path, "child", "extends: base\naccounts: {prefixes: [abc-]}\n")
    accounts = sp.load_profile("child", dirs=[tmp_path]).accounts
    assert accounts.prefixes == ("abc-",) and accounts.required == "always"


def test_child_changes_one_field_of_one_node_type(tmp_path):
    write(tmp_path, "base", f"""
        name: base
        abstract: true
        node_types:
          cpu: {{count: 10, cores: 64, memory: 250G, {SOURCE}}}
          gpu: {{count: 2, cores: 32, memory: 500G, gpus: {{model: a100, count: 4, gres: a100}}, {SOURCE}}}
    """)
    cluster(tmp_path, "child", "extends: base\nnode_types: {gpu: {count: 5}}\n")
    child = sp.load_profile("child", dirs=[tmp_path])
    assert child.node_type("gpu").count == 5 and child.node_type("gpu").gpus.model == "a100"
    assert child.node_type("cpu").memory_mib == 250 * 1024
    assert child.gpu_models == ("a100",)


def test_cycle_in_extends_is_an_error(tmp_path):
    cluster(tmp_path, "a", "extends: b\n")
    write(tmp_path, "b", "name: b\nabstract: true\nextends: c\n")
    write(tmp_path, "c", "name: c\nabstract: true\nextends: a\n")
    with pytest.raises(ProfileError) as caught:
        sp.load_profile("a", dirs=[tmp_path])
    assert caught.value.file.endswith("a.yaml") and caught.value.line == 3
    assert "a -> b -> c -> a" in str(caught.value)


def test_extending_a_missing_profile_suggests_the_close_name(tmp_path):
    write(tmp_path, "alliance", "name: alliance\nabstract: true\n")
    cluster(tmp_path, "x", "extends: aliance\n")
    with pytest.raises(ProfileError, match=r"x\.yaml:3: extends: 'aliance'.*did you mean 'alliance'"):
        sp.load_profile("x", dirs=[tmp_path])


def test_error_in_a_parent_is_placed_in_the_parents_file_and_line(tmp_path):
    write(tmp_path, "base", "name: base\nabstract: true\nscheduling:\n  max_walltime: forever\n")
    cluster(tmp_path, "child", "extends: base\n")
    with pytest.raises(ProfileError) as caught:
        sp.load_profile("child", dirs=[tmp_path])
    assert caught.value.file.endswith("base.yaml") and caught.value.line == 4
    assert caught.value.keypath == "scheduling.max_walltime"


def test_a_child_may_fix_its_parents_value(tmp_path):
    write(tmp_path, "base", "name: base\nabstract: true\nscheduling:\n  max_walltime: forever\n")
    cluster(tmp_path, "child", "extends: base\nscheduling: {max_walltime: 1d}\n")
    assert sp.load_profile("child", dirs=[tmp_path]).scheduling.max_walltime_seconds == 86400


def test_abstract_base_may_leave_required_keys_to_its_children(tmp_path):
    write(tmp_path, "base", f"name: base\nabstract: true\nnode_types: {{cpu: {{count: 3, {SOURCE}}}}}\n")
    assert sp.load_profile("base", dirs=[tmp_path]).abstract
    cluster(tmp_path, "child", "extends: base\n")
    with pytest.raises(ProfileError, match="node_types.cpu.cores: required"):
        sp.load_profile("child", dirs=[tmp_path])


# ------------------------------------------------------------------------------ validation

BAD_CASES = {
    # file: (line, key path, words the message must hold)
    "misspelled_key": (11, "node_types.gpu.gpus.gress", "did you mean 'gres'"),
    "unknown_top_key": (4, "schedulng", "did you mean 'scheduling'"),
    "bad_enum": (4, "status.state", "one of in-service, retired (did you mean 'retired'?)"),
    "bad_size": (7, "node_types.cpu.memory", "got '4X'; allowed: a size"),
    "bad_duration": (5, "scheduling.max_walltime", "got '7 days'; allowed: a duration"),
    "wrong_type": (6, "node_types.cpu.cores", "allowed: a whole number >= 1"),
    "name_mismatch": (1, "name", "allowed: 'name_mismatch'"),
    "cycle_a": (2, "extends", "cycle_a -> cycle_b -> cycle_a"),
    "cycle_b": (3, "extends", "cycle_b -> cycle_a -> cycle_b"),
    "missing_parent": (2, "extends", "did you mean 'base'"),
    "invalid_yaml": (4, "", "not valid YAML"),
    "duplicate_key": (6, "scheduling.max_walltime", "is given twice"),
    "retired_without_successor": (3, "status.successor", "required when status.state is retired"),
    "missing_status": (1, "status", "required"),
    "not_a_mapping": (1, "", "must be a mapping"),
    "unsourced_mapping": (6, "accounts", "no source"),
    "unexplained_null": (5, "storage.internet_on_compute", "null must say why"),
}


@pytest.mark.parametrize("name", sorted(BAD_CASES))
def test_each_malformed_profile_gets_its_one_located_line(name):
    line, keypath, words = BAD_CASES[name]
    errors = sp.validate_file(BAD / f"{name}.yaml", dirs=[])
    assert len(errors) == 1, errors
    error = errors[0]
    assert (Path(error.file).name, error.line, error.keypath) == (f"{name}.yaml", line, keypath)
    assert words in error.message and "\n" not in error.message
    assert error.message.startswith(f"{error.file}:{line}: ")


def test_every_malformed_fixture_has_a_case():
    assert {p.stem for p in BAD.glob("*.yaml")} == set(BAD_CASES) | {"base"}
    assert sp.validate_file(BAD / "base.yaml", dirs=[]) == []


def test_source_rules_are_checked_by_validate_not_by_load():
    profile = sp.load_profile_file(BAD / "unsourced_mapping.yaml", dirs=[])
    assert profile.accounts.prefixes == ("def-",)
    assert sp.load_profile_file(BAD / "unexplained_null.yaml", dirs=[]).storage.internet_on_compute is None


def test_url_comment_on_every_fact_line_stands_in_for_source(tmp_path):
    path = cluster(tmp_path, "c", """
        accounts:
          required: always           # https://example.org/a
          prefixes: [def-]           # https://example.org/b
    """)
    assert sp.validate_file(path, dirs=[]) == []


def test_null_explained_on_the_line_above_is_accepted(tmp_path):
    path = cluster(tmp_path, "c", f"""
        storage:
          # not documented anywhere
          internet_on_compute: null
          {SOURCE}
    """)
    assert sp.validate_file(path, dirs=[]) == []


def test_retired_profile_needs_a_successor_that_exists(tmp_path):
    cluster(tmp_path, "fir", "")
    write(tmp_path, "cedar", "name: cedar\nstatus: {state: retired, retired_on: 2025-09-12, successor: fri, source: x}\n")
    with pytest.raises(ProfileError, match=r"status.successor: no profile named 'fri' \(did you mean 'fir'\?\)"):
        sp.load_profile("cedar", dirs=[tmp_path])


def test_dates_are_dates_and_quoted_dates_are_accepted(tmp_path):
    cluster(tmp_path, "c", "")
    write(tmp_path, "d", "name: d\nstatus: {state: retired, retired_on: '2025-09-12', successor: c, since: 2020-01-01, source: x}\n")
    profile = sp.load_profile("d", dirs=[tmp_path])
    assert profile.status.retired_on == date(2025, 9, 12) and profile.status.since == date(2020, 1, 1)


# ----------------------------------------------------------------------------- search path

def test_search_path_is_cwd_then_xdg_config_then_bundled(tmp_path):
    dirs = sp.search_path(cwd=tmp_path / "work", env={"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)})
    assert dirs == [tmp_path / "work" / "site_profiles", tmp_path / "cfg" / "slurmkit" / "site_profiles", profiles_dir()]


def test_search_path_without_xdg_uses_home_config(tmp_path):
    for env in ({"HOME": str(tmp_path)}, {"HOME": str(tmp_path), "XDG_CONFIG_HOME": "relative/ignored"}):
        assert sp.search_path(cwd=tmp_path, env=env)[1] == tmp_path / ".config" / "slurmkit" / "site_profiles"


def test_search_path_inside_the_repository_lists_bundled_once():
    dirs = sp.search_path(cwd=profiles_dir().parent, env={"HOME": "/nonexistent"})
    assert len(dirs) == 2 and dirs[0].resolve() == profiles_dir().resolve()


def test_user_profile_of_the_same_name_overrides_the_bundled_one(tmp_path):
    user, bundled = tmp_path / "user", tmp_path / "bundled"
    cluster(bundled, "lab", "scheduling: {max_walltime: 7d, source: x}\n")
    cluster(user, "lab", "scheduling: {max_walltime: 1d, source: x}\n")
    assert sp.load_profile("lab", dirs=[user, bundled]).scheduling.max_walltime_seconds == 86400


def test_override_that_extends_its_own_name_gets_the_next_one_down(tmp_path):
    user, bundled = tmp_path / "user", tmp_path / "bundled"
    cluster(bundled, "lab", "scheduling: {max_walltime: 7d, default_mem_per_cpu: 256M, source: x}\n")
    write(user, "lab", "name: lab\nextends: lab\nscheduling: {max_walltime: 1d}\n")
    lab = sp.load_profile("lab", dirs=[user, bundled])
    assert lab.scheduling.max_walltime_seconds == 86400 and lab.scheduling.default_mem_per_cpu_mib == 256
    assert lab.path == user / "lab.yaml"
    with pytest.raises(ProfileError, match="no other profile of that name further down"):
        sp.load_profile("lab", dirs=[user])


def test_unknown_name_suggests_the_closest_profile(tmp_path):
    cluster(tmp_path, "narval", "")
    with pytest.raises(ProfileNotFound, match=r"no site profile named 'narvl' \(did you mean 'narval'\?\)"):
        sp.load_profile("narvl", dirs=[tmp_path])


def test_alias_names_the_same_profile(tmp_path):
    cluster(tmp_path, "local", "aliases: [lab]\n")
    assert sp.load_profile("lab", dirs=[tmp_path]).name == "local"


def test_one_broken_profile_does_not_hide_the_others_in_the_listing(tmp_path):
    cluster(tmp_path, "good", "")
    write(tmp_path, "broken", "name: broken\nstatus: {state: gone}\n")
    found, errors = sp.list_profiles(dirs=[tmp_path])
    assert [p.name for p in found] == ["good"]
    assert len(errors) == 1 and "broken.yaml:2: status.state" in errors[0].message


def test_listing_leaves_out_abstract_bases_unless_asked(tmp_path):
    cluster(tmp_path, "c", "")
    write(tmp_path, "base", "name: base\nabstract: true\n")
    assert [p.name for p in sp.list_profiles(dirs=[tmp_path])[0]] == ["c"]
    assert [p.name for p in sp.list_profiles(dirs=[tmp_path], include_abstract=True)[0]] == ["base", "c"]


# ------------------------------------------------------------------------------- detection

@pytest.fixture
def clusters(tmp_path):
    cluster(tmp_path, "narval", "detect: {cc_cluster: [narval], slurm_cluster_name: [narval], hostnames: ['narval*'], source: x}\n")
    cluster(tmp_path, "fir", "detect: {cc_cluster: [fir], slurm_cluster_name: [fir], hostnames: ['*.fir.example'], source: x}\n")
    write(tmp_path, "base", "name: base\nabstract: true\n")
    return [tmp_path]


def test_detection_order_is_flag_variable_cc_cluster_cluster_name_hostname(clusters):
    everything = {"SLURMKIT_PROFILE": "fir", "CC_CLUSTER": "narval", "SLURM_CLUSTER_NAME": "fir"}
    assert sp.detect_profile("narval", env=everything, hostname="x", dirs=clusters) == sp.Detection("narval", "--profile")
    assert sp.detect_profile(None, env=everything, hostname="x", dirs=clusters).reason == "$SLURMKIT_PROFILE"
    del everything["SLURMKIT_PROFILE"]
    assert sp.detect_profile(None, env=everything, hostname="x", dirs=clusters) == sp.Detection("narval", "$CC_CLUSTER=narval")
    del everything["CC_CLUSTER"]
    assert sp.detect_profile(None, env=everything, hostname="x", dirs=clusters).name == "fir"
    found = sp.detect_profile(None, env={}, hostname="narval3", dirs=clusters)
    assert found.name == "narval" and "narval*" in found.reason
    assert sp.detect_profile(None, env={}, hostname="login1.fir.example", dirs=clusters).name == "fir"


def test_cluster_variable_without_a_profile_falls_through_to_the_hostname(clusters):
    assert sp.detect_profile(None, env={"CC_CLUSTER": "killarney"}, hostname="narval1", dirs=clusters).name == "narval"


def test_nothing_detected_lists_the_profiles_and_how_to_choose(clusters):
    with pytest.raises(NoProfileDetected) as caught:
        sp.detect_profile(None, env={"CC_CLUSTER": "killarney"}, hostname="laptop", dirs=clusters)
    message = str(caught.value)
    assert "$CC_CLUSTER=killarney" in message and "hostname laptop" in message
    assert "--profile NAME" in message and "SLURMKIT_PROFILE" in message and "profiles: fir, narval" in message
    assert "\n" not in message


def test_a_named_profile_must_exist_and_be_a_cluster(clusters):
    with pytest.raises(ProfileNotFound, match="did you mean 'narval'"):
        sp.detect_profile(None, env={"SLURMKIT_PROFILE": "narvall"}, hostname="x", dirs=clusters)
    with pytest.raises(ProfileNotFound, match="abstract base"):
        sp.detect_profile("base", env={}, hostname="x", dirs=clusters)


def test_user_profile_wins_detection_over_a_bundled_one_claiming_the_same_cluster(tmp_path):
    user, bundled = tmp_path / "user", tmp_path / "bundled"
    cluster(bundled, "local", "detect: {slurm_cluster_name: [lab], source: x}\n")
    cluster(user, "mylab", "detect: {slurm_cluster_name: [lab], source: x}\n")
    assert sp.detect_profile(None, env={"SLURM_CLUSTER_NAME": "lab"}, hostname="x", dirs=[user, bundled]).name == "mylab"


def test_retired_profile_warns_once_and_names_the_successor(tmp_path):
    cluster(tmp_path, "nibi", "")
    write(tmp_path, "graham", "name: graham\nstatus: {state: retired, retired_on: 2025-09-01, successor: nibi, source: x}\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(3):
            profile, _ = sp.select_profile("graham", env={}, dirs=[tmp_path])
    assert profile.is_retired
    assert len(caught) == 1 and issubclass(caught[0].category, sp.RetiredProfileWarning)
    assert "retired on 2025-09-01" in str(caught[0].message) and "slurmkit port JOB.yaml --to nibi" in str(caught[0].message)
    assert sp.retirement_notice(sp.load_profile("nibi", dirs=[tmp_path])) is None


# ------------------------------------------------------------------ detect's parsers (captured)

NODE_LINE = (
    "NodeName=node1 Arch=x86_64 CoresPerSocket=2  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=0.08 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:p100:2 NodeAddr=127.0.0.1 NodeHostName=node1 "
    "Port=17001 Version=22.05.8 OS=Linux 6.18.44-fc-v782 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=4000 AllocMem=0 "
    "FreeMem=23759 Sockets=1 Boards=1 State=IDLE ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A "
    "Partitions=compute  BootTime=2026-11-26T02:44:57 CfgTRES=cpu=2,mem=4000M,billing=2,gres/gpu=2 AllocTRES= "
    "CapWatts=n/a"
)
PARTITION_LINE = (
    "PartitionName=compute AllowGroups=ALL Default=YES QoS=N/A DefaultTime=NONE MaxNodes=UNLIMITED "
    "MaxTime=7-00:00:00 MinNodes=0 Nodes=node[1-2] OverSubscribe=NO State=UP TotalCPUs=4 TotalNodes=2 "
    "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED TRES=cpu=4,mem=8000M,node=2,billing=4,gres/gpu=4"
)
CONFIG_TEXT = """Configuration data as of 2026-11-26T03:00:00
AccountingStorageType   = accounting_storage/slurmdbd
ClusterName             = lab
DefMemPerCPU            = 256
MaxArraySize            = 1001
MpiDefault              = pmix
SelectTypeParameters    = CR_CORE_MEMORY
SLURM_VERSION           = 22.05.8
TmpFS                   = /tmp
"""


def test_scontrol_records_keep_values_that_hold_spaces():
    (record,) = det.parse_records(NODE_LINE)
    assert record["OS"] == "Linux 6.18.44-fc-v782 #1 SMP PREEMPT_DYNAMIC @0"
    assert record["CfgTRES"] == "cpu=2,mem=4000M,billing=2,gres/gpu=2" and record["AllocTRES"] == ""
    node = det.parse_node(record)
    assert (node.name, node.cores, node.sockets, node.memory_mib, node.partitions) == ("node1", 2, 1, 4000, ("compute",))
    assert node.gres == (det.Gres("gpu", "p100", 2),)


def test_scontrol_config_is_read_as_key_value_pairs():
    config = det.parse_config(CONFIG_TEXT)
    assert config["ClusterName"] == "lab" and config["DefMemPerCPU"] == "256" and "Configuration data as of" not in str(config)


@pytest.mark.parametrize("text, expected", [
    ("gpu:p100:2(S:0-1)", (det.Gres("gpu", "p100", 2),)),
    ("gpu:2", (det.Gres("gpu", None, 2),)),
    ("(null)", ()),
    ("gpu:a100:2(S:0),gpu:nvidia_a100_3g.20gb:4(S:1),mps:100", (
        det.Gres("gpu", "a100", 2), det.Gres("gpu", "nvidia_a100_3g.20gb", 4), det.Gres("mps", None, 100))),
])
def test_gres_strings_in_every_form_are_parsed(text, expected):
    assert det.parse_gres(text) == expected


def test_partition_without_time_limit_has_no_max_time():
    part = det.parse_partition(det.parse_records(PARTITION_LINE.replace("MaxTime=7-00:00:00", "MaxTime=UNLIMITED"))[0])
    assert part.max_time is None and part.default and not part.exclusive


def node(name, cores=2, memory=4000, gres=(), threads=1, tmp=0):
    return det.NodeInfo(name, cores, 2, threads, memory, tmp, tuple(gres), ("p",), "IDLE")


def test_identical_nodes_form_one_type_and_clashing_names_get_a_size_suffix():
    groups = det.group_nodes([
        node("c1", 64, 256000), node("c2", 64, 256000), node("c3", 64, 1000000),
        node("g1", 32, 500000, [det.Gres("gpu", "a100", 4)]),
    ])
    assert [(g.name, g.nodes) for g in groups] == [
        ("cpu-64c-250g", ("c1", "c2")), ("cpu-64c-1000000m", ("c3",)), ("gpu-a100", ("g1",))]


def test_host_patterns_match_the_login_node_siblings():
    assert det.host_patterns("narval2") == ["narval*"]
    assert det.host_patterns("login1.fir.alliancecan.ca") == ["*.fir.alliancecan.ca"]
    assert det.host_patterns("vm") == [] and det.host_patterns("login1") == []
    assert det.host_patterns("beluga") == ["beluga"]


def facts(nodes, partitions=(PARTITION_LINE,), **kwargs):
    defaults = dict(cluster_name="lab", slurm_version="22.05.8", config=det.parse_config(CONFIG_TEXT), nodes=tuple(nodes),
                    partitions=tuple(det.parse_partition(r) for r in det.parse_records("\n".join(partitions))),
                    accounting=True, accounts=("def-a", "def-b"), account_required=True, hostname="login1",
                    environment={"HOME": "/home/alice", "USER": "alice"}, mpi_flavour="openmpi")
    defaults.update(kwargs)
    return det.ClusterFacts(**defaults)


def test_detected_profile_of_a_mixed_cluster_validates_and_loads(tmp_path):
    mixed = facts([
        node("c1", 64, 256000, threads=2, tmp=800000), node("c2", 64, 256000, threads=2, tmp=800000),
        node("g1", 48, 500000, [det.Gres("gpu", "a100", 4)]),
        node("m1", 48, 500000, [det.Gres("gpu", "nvidia_a100_3g.20gb", 2), det.Gres("gpu", "nvidia_a100_1g.5gb", 4)]),
        node("u1", 8, 32000, [det.Gres("gpu", None, 1)]),
    ], account_required=None, notes=("sbatch --test-only failed",))
    detected = det.build_profile(mixed, "mixed")
    path = tmp_path / "mixed.yaml"
    assert sp.validate_text(detected.text, path, dirs=[]) == []
    path.write_text(detected.text)
    profile = sp.load_profile("mixed", dirs=[tmp_path])
    types = {t.name: t for t in profile.node_types}
    assert set(types) == {"cpu", "gpu", "gpu-a100", "gpu-a100-mig"}
    assert types["cpu"].cores == 64 and types["cpu"].local_disk.size_mib == 800000
    mig = types["gpu-a100-mig"].gpus
    assert mig.model == "a100" and mig.count == 6 and mig.gres is None
    assert [m.profile for m in mig.mig] == ["3g.20gb", "1g.5gb"] and mig.mig[0].memory_mib == 20 * 1024
    assert types["gpu"].gpus.gres is None  # untyped GRES: --gres=gpu:N
    assert types["gpu-a100"].gpus.max_cores_per_gpu == 12
    assert profile.accounts.required is None and profile.accounts.prefixes == ("def-",)
    assert profile.storage.home.path == "/home/$USER"
    assert profile.detect.hostnames == ()  # "login1" would claim every cluster's login nodes


def test_every_null_in_a_detected_profile_carries_a_comment():
    text = det.build_profile(facts([node("node1", gres=[det.Gres("gpu", "p100", 2)])]), "lab").text
    for line in text.splitlines():
        if "null" in line.split("#")[0]:
            assert "  # " in line, line
    assert yaml.safe_load(text)["node_types"]["gpu-p100"]["gpus"]["gres"] == "p100"


def test_bundled_profiles_read_fast_give_what_the_tracking_reader_gives():
    """Bundled profiles are read with libyaml and their lines made on demand (BundledFile);
    the data must be what the bounded, line-tracking reader makes of the same file."""
    from slurmkit.core.bundled import profiles_dir
    from slurmkit.sites.profiles import BundledFile, ProfileCatalog, parse_profile_text

    catalog = ProfileCatalog([profiles_dir()])
    for name in catalog.names():
        path = catalog.find(name).path
        fast, full = catalog.parsed(path), parse_profile_text(path.read_text(), path)
        assert isinstance(fast, BundledFile)
        assert fast.data == full.data, name
        assert fast.lines == full.lines and fast.text_lines == full.text_lines, name


def test_a_users_profile_is_always_read_by_the_tracking_reader(tmp_path):
    """./site_profiles is input: its duplicate keys are refused, as the fast reader would not."""
    from slurmkit.sites.profiles import ProfileCatalog, ProfileError

    folder = tmp_path / "site_profiles"
    folder.mkdir()
    (folder / "mine.yaml").write_text("name: mine\nextends: nibi\nname: mine\n")
    with pytest.raises(ProfileError, match="given twice|duplicate"):
        ProfileCatalog([folder]).parsed(folder / "mine.yaml")
