"""The resolver: each error and warning with its message, and the values it derives for the script."""

import functools

import pytest

from slurmkit.core.findings import Finding
from slurmkit.resolve.localfacts import LocalFacts, submit_environment
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping


@functools.lru_cache(maxsize=None)
def profile(name: str):
    return load_profile(name)


def job(profile_name: str, resources=None, environ=None, **fields):
    """Resolve a spec on a bundled profile; ``resources`` are added to ``time: 3h``; ``environ``:
    the submit shell's variables, given to resolve as facts (it reads none itself)."""
    data = {"name": "demo", "account": "def-someprof", "resources": {"time": "3h", **(resources or {})},
            "launch": {"command": "python main.py"}}
    data.update(fields)
    data = {key: value for key, value in data.items() if value is not None}
    local = LocalFacts(environment=submit_environment(environ)) if environ is not None else None
    return resolve(spec_from_mapping(data, source="job.yaml"), profile(profile_name), local)


def only_error(resolution) -> Finding:
    assert resolution.plan is None
    assert len(resolution.errors) == 1, resolution.errors
    return resolution.errors[0]


def directives(resolution) -> dict:
    assert resolution.plan is not None, resolution.errors
    return dict(resolution.plan.directives)


def warnings_of(resolution, field: str):
    return [f.message for f in resolution.warnings if f.field == field]


# ---------------------------------------------------------------------------- GPUs


def test_unknown_gpu_model_suggests_the_closest_from_the_profile():
    error = only_error(job("nibi", kind="gpu", resources={"gpus": "h10:1"}))
    assert error == Finding("error", "resources.gpus", "nibi has no GPU called 'h10'; did you mean 'h100'? it has: "
                                                        "h100, h100_1g.10gb, h100_2g.20gb, h100_3g.40gb, mi300a")


def test_unknown_gpu_model_with_nothing_close_lists_the_models_only():
    error = only_error(job("narval", kind="gpu", resources={"gpus": "zzz:1"}))
    assert error.message == "narval has no GPU called 'zzz'; it has: a100, a100_1g.5gb, a100_2g.10gb, a100_3g.20gb"


def test_narval_refuses_the_retired_4g_20gb_mig_profile_naming_the_sizes_it_offers():
    """Narval/en rev 2026-04-17: no 4g.20gb any more; the job would never start."""
    error = only_error(job("narval", kind="gpu", resources={"gpus": "a100_4g.20gb:1"}))
    assert error == Finding("error", "resources.gpus", "narval has no GPU called 'a100_4g.20gb'; did you mean 'a100_3g.20gb'? "
                                                        "it has: a100, a100_1g.5gb, a100_2g.10gb, a100_3g.20gb")
    assert only_error(job("narval", kind="gpu", resources={"gpus": "4g.20gb:1"})).field == "resources.gpus"


def test_more_gpus_per_node_than_any_node_has_is_an_error():
    error = only_error(job("nibi", kind="gpu", resources={"gpus": "h100:9"}))
    assert error == Finding("error", "resources.gpus", "9 h100 per node is more than any nibi node has (at most 8); use more nodes")


def test_gpus_without_a_model_count_against_the_largest_gpu_node():
    error = only_error(job("narval", kind="gpu", resources={"gpus": 5}))
    assert error.message == "5 GPUs per node is more than any narval node has (at most 4); use more nodes"
    assert directives(job("narval", kind="gpu", resources={"gpus": 4}))["--gpus-per-node"] == "4"


def test_gpu_kind_without_gpus_suggests_a_model_of_the_site():
    error = only_error(job("nibi", kind="gpu"))
    assert error == Finding("error", "resources.gpus", "kind 'gpu' needs GPUs: add e.g. 'gpus: h100:1'")


def test_gpus_on_a_cluster_without_gpu_nodes_name_its_successor():
    resolution = job("niagara", kind="gpu", resources={"gpus": 1})
    assert Finding("error", "resources.gpus", "niagara has no GPU nodes; its successor trillium may") in resolution.errors


def test_nibi_spells_two_h100_as_gpus_per_node_h100_2():
    assert directives(job("nibi", kind="gpu", resources={"gpus": "h100:2"}))["--gpus-per-node"] == "h100:2"


def test_gpus_as_a_mapping_spell_the_same_as_model_colon_count():
    assert directives(job("nibi", kind="gpu", resources={"gpus": {"model": "h100", "count": 2}}))["--gpus-per-node"] == "h100:2"


@pytest.mark.parametrize("written", ["1g.10gb", "h100_1g.10gb", "nvidia_h100_80gb_hbm3_1g.10gb"])
def test_fir_spells_a_mig_instance_by_its_long_gres_name(written):
    resolution = job("fir", kind="gpu", resources={"gpus": written})
    assert directives(resolution)["--gpus-per-node"] == "nvidia_h100_80gb_hbm3_1g.10gb:1"


def test_narval_spells_a_mig_instance_by_its_short_gres_name():
    assert directives(job("narval", kind="gpu", resources={"gpus": "a100_3g.20gb"}))["--gpus-per-node"] == "a100_3g.20gb:1"


def test_more_than_one_mig_instance_is_an_error_on_narval():
    error = only_error(job("narval", kind="gpu", resources={"gpus": "a100_1g.5gb:2"}))
    assert error == Finding("error", "resources.gpus", "a job may use one MIG instance; ask for a100_1g.5gb:1 or for whole a100 GPUs")


def test_more_than_one_mig_instance_is_an_error_on_fir():
    error = only_error(job("fir", kind="gpu", resources={"gpus": {"model": "2g.20gb", "count": 3}}))
    assert error.message == "a job may use one MIG instance; ask for nvidia_h100_80gb_hbm3_2g.20gb:1 or for whole h100 GPUs"


def test_trillium_refuses_gpu_counts_other_than_1_or_4():
    error = only_error(job("trillium", kind="gpu", resources={"gpus": "h100:2"}))
    assert error.message == "trillium gives GPU jobs 1 or 4 GPUs per node, not 2"
    assert directives(job("trillium", kind="gpu", resources={"gpus": "h100:4"}))["--gpus-per-node"] == "h100:4"


def test_cores_per_gpu_above_the_site_advice_is_a_warning():
    resolution = job("nibi", kind="gpu", resources={"gpus": "h100:1", "cpus_per_task": 20})
    assert resolution.plan is not None
    assert warnings_of(resolution, "resources.cpus_per_task") == [
        "20 cores for 1 GPU(s) is above the site's advice of 14 cores per GPU; ask at most 14 so that other GPUs on the node stay usable"]


def test_cores_per_gpu_at_the_advice_is_not_a_warning():
    assert job("nibi", kind="multigpu", resources={"gpus": "h100:2", "cpus_per_task": 28}, environment={"modules": ["cuda/12.6"]},
               launch={"command": "python main.py", "framework": "tensorflow"}).findings == ()


# ---------------------------------------------------------------------------- memory and time


def test_memory_above_the_largest_node_is_an_error_that_says_the_most_one_can_ask():
    error = only_error(job("nibi", resources={"mem": "7000G"}))
    assert error == Finding("error", "resources.mem", "7000G per node is more than the largest usable memory of a node on nibi "
                                                       "(6000G); ask at most 6000G")


def test_memory_per_cpu_counts_every_core_of_the_node():
    error = only_error(job("narval", kind="gpu", resources={"gpus": "a100:1", "cpus_per_task": 12, "mem_per_cpu": "64G"}))
    assert error == Finding("error", "resources.mem_per_cpu", "768G per node is more than the largest usable memory of a GPU node "
                                                               "on narval (498G); ask at most 498G")


def test_mem_becomes_mem_and_mem_per_cpu_stays_mem_per_cpu():
    assert directives(job("nibi", resources={"mem": "4000M"}))["--mem"] == "4000M"
    per_cpu = directives(job("nibi", resources={"mem_per_cpu": "2G"}))
    assert per_cpu["--mem-per-cpu"] == "2G" and "--mem" not in per_cpu


def test_no_memory_asked_gives_no_memory_directive():
    assert not {"--mem", "--mem-per-cpu"} & set(directives(job("nibi")))


def test_time_above_the_maximum_walltime_is_an_error():
    error = only_error(job("nibi", resources={"time": "8d"}))
    assert error == Finding("error", "resources.time", "8d is above nibi's maximum walltime of 7d; "
                                                        "split the work into shorter jobs that resume from a checkpoint")


def test_time_at_the_maximum_walltime_is_allowed_and_spelt_for_sbatch():
    assert directives(job("nibi", resources={"time": "7d"}))["--time"] == "7-00:00:00"


def test_very_short_job_is_a_warning():
    resolution = job("nibi", resources={"time": "10m"})
    assert resolution.plan is not None
    assert resolution.warnings == (Finding("warning", "resources.time",
                                           "10m is short: nibi asks production jobs to run at least 1h; "
                                           "bundle short tasks into one longer job (kind 'many-tasks' runs them with GNU Parallel)"),)
    assert directives(resolution)["--time"] == "0-00:10:00"


# ---------------------------------------------------------------------------- whole-node clusters


def test_niagara_fills_whole_nodes_with_mpi_tasks_when_tasks_per_node_is_not_said():
    d = directives(job("niagara", kind="mpi", resources={"nodes": 2}))
    assert (d["--nodes"], d["--ntasks-per-node"], d["--cpus-per-task"]) == ("2", "40", "1")


def test_niagara_fills_whole_nodes_with_tasks_of_the_given_width():
    d = directives(job("niagara", kind="mpi", resources={"cpus_per_task": 4}))
    assert (d["--ntasks-per-node"], d["--cpus-per-task"]) == ("10", "4")


def test_niagara_gives_a_threaded_job_all_40_cores_and_as_many_threads():
    resolution = job("niagara", kind="threaded")
    assert directives(resolution)["--cpus-per-task"] == "40"
    env = dict(resolution.plan.environment)
    assert (str(env["OMP_NUM_THREADS"]), str(env["MKL_NUM_THREADS"])) == ("\"${SLURM_CPUS_PER_TASK:-1}\"",) * 2  # the 40 of the header


def test_fewer_mpi_ranks_than_a_whole_niagara_node_has_cores_run_with_a_warning():
    """The rank count is the user's domain decomposition: nodes partly used are charged
    whole, which is said, not refused."""
    resolution = job("niagara", kind="mpi", resources={"tasks_per_node": 4})
    assert resolution.errors == ()
    assert Finding("warning", "resources", "niagara schedules whole nodes of 40 cores; this uses 4 per node (tasks_per_node x "
                   "cpus_per_task), the other 36 are idle but charged: fill them (tasks_per_node: 40) where the rank count is "
                   "yours to choose") in resolution.warnings
    assert directives(resolution)["--ntasks-per-node"] == "4"


def test_niagara_takes_a_rank_per_hardware_thread_with_hyper_threading():
    """Niagara's page: Hyper-Threading on, "40 or 80 tasks per node"."""
    assert job("niagara", kind="mpi", resources={"tasks_per_node": 80}).errors == ()
    assert job("niagara", kind="mpi", resources={"tasks_per_node": 81}).errors


def test_more_mpi_ranks_than_a_whole_niagara_node_has_cores_is_an_error():
    errors = job("niagara", kind="mpi", resources={"tasks_per_node": 50}).errors
    assert Finding("error", "resources", "niagara schedules whole nodes of 40 cores; this asks 50 per node "
                                         "(tasks_per_node x cpus_per_task): make it 40, e.g. tasks_per_node: 40") in errors


def test_partial_node_on_trillium_is_an_error():
    error = only_error(job("trillium", kind="threaded", resources={"cpus_per_task": 8}))
    assert error.message == ("trillium schedules whole nodes of 192 cores and this threaded job uses 8: give it the node "
                             "(cpus_per_task: 192), or run such jobs 24 at a time in one job of kind 'many-tasks' "
                             "(GNU Parallel; tasks_per_node: 24, cpus_per_task: 8)")


@pytest.mark.parametrize("cluster", ["niagara", "trillium"])
@pytest.mark.parametrize("key", ["mem", "mem_per_cpu"])
def test_memory_request_on_a_whole_node_cluster_is_an_error(cluster, key):
    error = only_error(job(cluster, kind="mpi", resources={key: "4G"}))
    assert error == Finding("error", f"resources.{key}",
                            f"{cluster} gives every job whole nodes with all their memory; memory requests are ignored there: remove it")


# ---------------------------------------------------------------------------- accounts and status


def test_no_account_where_the_site_always_needs_one_is_an_error():
    error = only_error(job("local", account=None))
    assert error == Finding("error", "account",
                            "local needs an account: add 'account: def-yourprof' to the spec (or export SBATCH_ACCOUNT)")


def test_no_account_where_it_matters_only_with_several_allocations_is_a_warning():
    resolution = job("nibi", account=None)
    assert resolution.warnings == (Finding("warning", "account", "no account: nibi rejects the job if you belong to several "
                                                                 "allocations; add 'account: def-yourprof'"),)
    assert "--account" not in directives(resolution)


def test_no_account_where_the_site_picks_a_default_is_fine():
    assert job("generic", account=None).findings == ()


def test_account_without_a_known_prefix_is_a_warning():
    resolution = job("nibi", account="someprof")
    assert warnings_of(resolution, "account") == ["'someprof' does not look like a nibi account (def-..., rrg-..., rpp-..., ctb-...)"]
    assert directives(resolution)["--account"] == "someprof"


@pytest.mark.parametrize("cluster, successor, day", [("graham", "nibi", "2025-09-01"), ("cedar", "fir", "2025-09-12"),
                                                     ("niagara", "trillium", "2025-09-30")])
def test_retired_cluster_is_a_warning_naming_its_successor(cluster, successor, day):
    resolution = job(cluster, kind="mpi", resources={"nodes": 1} if cluster != "niagara" else {})
    assert resolution.plan is not None
    (warning,) = warnings_of(resolution, "profile")
    assert warning.startswith(f"profile '{cluster}' describes a cluster retired on {day}; its successor is '{successor}': "
                              f"move the job with `slurmkit port job.yaml --to {successor} -o {successor}.yaml`")


def test_in_service_cluster_has_no_profile_warning():
    assert warnings_of(job("nibi"), "profile") == []


# ---------------------------------------------------------------------------- launchers


def test_mpi_launched_directly_runs_once_with_the_jobs_tasks_kept():
    """charmrun, a Ray driver: started once by the batch shell, they start their own processes
    over the job's tasks, which the #SBATCH lines still ask for."""
    resolution = job("narval", kind="mpi", resources={"nodes": 2, "tasks_per_node": 4},
                     launch={"command": "charmrun ++p $SLURM_NTASKS ./namd3 in.namd", "launcher": "direct"})
    assert resolution.errors == () and resolution.plan.launcher == ()
    assert (directives(resolution)["--nodes"], directives(resolution)["--ntasks-per-node"]) == ("2", "4")


def test_mpi_cannot_launch_with_torchrun():
    error = only_error(job("local", kind="mpi", launch={"command": "./a", "launcher": "torchrun"}))
    assert error == Finding("error", "launch.launcher", "kind 'mpi' cannot use 'torchrun'; it can use srun, mpirun, direct")


def test_serial_cannot_launch_with_mpirun():
    error = only_error(job("local", launch={"command": "./a", "launcher": "mpirun"}))
    assert error == Finding("error", "launch.launcher", "kind 'serial' cannot use 'mpirun'; it can use direct, srun")


def test_mpirun_maps_ranks_by_cpus_per_task_and_counts_every_rank():
    resolution = job("nibi", kind="mpi", resources={"nodes": 3, "tasks_per_node": 4, "cpus_per_task": 8},
                     launch={"command": "./a", "launcher": "mpirun"})
    assert directives(resolution)["--ntasks-per-node"] == "4" and directives(resolution)["--cpus-per-task"] == "8"
    assert tuple(map(str, resolution.plan.launcher)) == ("mpirun", "-np", "\"${SLURM_NTASKS:-$SLURM_NNODES}\"", "--bind-to", "core",
                                                         "--map-by", "slot:PE=\"${SLURM_CPUS_PER_TASK:-1}\"", "--report-bindings")


def test_srun_on_local_names_pmix_for_mpi():
    assert tuple(map(str, job("local", kind="mpi", resources={"tasks_per_node": 2}).plan.launcher)) == (
        "srun", "--mpi=pmix", "--cpus-per-task=\"${SLURM_CPUS_PER_TASK:-1}\"")


def test_srun_without_a_site_mpi_type_adds_no_flag():
    assert tuple(map(str, job("nibi", kind="mpi", resources={"tasks_per_node": 2}).plan.launcher)) == (
        "srun", "--cpus-per-task=\"${SLURM_CPUS_PER_TASK:-1}\"")


def test_srun_for_a_serial_job_never_names_an_mpi_type():
    assert tuple(map(str, job("local", launch={"command": "./a", "launcher": "srun"}).plan.launcher)) == (
        "srun", "--cpus-per-task=\"${SLURM_CPUS_PER_TASK:-1}\"")


def test_serial_job_runs_its_command_directly():
    assert job("local").plan.launcher == ()


def test_several_tasks_of_a_serial_job_without_srun_is_a_warning():
    resolution = job("nibi", resources={"tasks_per_node": 4})
    assert warnings_of(resolution, "resources.tasks_per_node") == [
        "kind 'serial' runs one process; 4 tasks per node only help with launcher: srun"]


@pytest.mark.parametrize("variables, launch, warned", [
    ({}, {"command": "python train.py"}, True), ({}, {"shell": "python train.py > log 2>&1"}, True),
    ({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}, {"command": "python train.py"}, False),
    ({}, {"shell": "CUDA_VISIBLE_DEVICES=0 python t.py > a.log 2>&1 &\nCUDA_VISIBLE_DEVICES=1 python t.py &\nwait"}, False)])
def test_one_process_on_several_gpus_is_warned_unless_it_spawns_its_own_ranks(variables, launch, warned):
    """With MASTER_ADDR set for its one process, the program starts a process per GPU itself;
    a launch line that starts one per GPU in the background does the same: kind multigpu, as the
    warning would advise, would start four of each."""
    resolution = job("nibi", kind="gpu", resources={"gpus": "h100:4"}, environment={"variables": variables}, launch=launch)
    assert bool(warnings_of(resolution, "resources.gpus")) == warned
    assert not warned or "kind 'multigpu'" in warnings_of(resolution, "resources.gpus")[0]


def test_threaded_job_with_one_cpu_is_a_warning():
    assert warnings_of(job("nibi", kind="threaded"), "resources.cpus_per_task") == [
        "kind 'threaded' with one CPU per task runs one thread; set cpus_per_task"]


# ---------------------------------------------------------------------------- environment and modules


@pytest.mark.parametrize("command", ["python pool_run.py --workers 8", "/usr/bin/python3.11 -u x.py", "Rscript fit.R",
                                     "R CMD BATCH fit.R", "julia -p 8 run.jl", "matlab -batch run", "apptainer exec img.sif python x.py",
                                     "bash run_pool.sh", "./run_pool.sh 8",
                                     "nextflow run nf-core/rnaseq", "java -jar gatk.jar"])
def test_an_interpreter_that_may_start_workers_is_not_pinned(command):
    resolution = job("nibi", kind="threaded", resources={"cpus_per_task": 8}, launch={"command": command})
    env = dict(resolution.plan.environment)
    assert "OMP_PLACES" not in env and "OMP_PROC_BIND" not in env and str(env["OMP_NUM_THREADS"]) == '"${SLURM_CPUS_PER_TASK:-1}"'
    assert "worker processes" in " ".join(resolution.plan.thread_note)


@pytest.mark.parametrize("command", ["./sim in.dat", "gmx mdrun -ntomp 8", "./run -R 3", "lmp -in in.lj"])
def test_a_compiled_program_is_pinned(command):
    env = dict(job("nibi", kind="threaded", resources={"cpus_per_task": 8}, launch={"command": command}).plan.environment)
    assert (str(env["OMP_PLACES"]), str(env["OMP_PROC_BIND"])) == ("cores", "close")


def test_thread_variables_follow_cpus_per_task():
    env = dict(job("nibi", kind="threaded", resources={"cpus_per_task": 6}, launch={"command": "./sim in.dat"}).plan.environment)
    threads = "\"${SLURM_CPUS_PER_TASK:-1}\""  # the header's --cpus-per-task=6, read back at run time
    assert (tuple(map(str, (env["OMP_NUM_THREADS"], env["MKL_NUM_THREADS"], env["OMP_PLACES"], env["OMP_PROC_BIND"])))
            == (threads, threads, "cores", "close"))


def test_user_variables_are_added_after_the_thread_variables_and_win():
    env = job("nibi", environment={"variables": {"OMP_NUM_THREADS": "2", "DATA": "/x"}}).plan.environment
    assert tuple((name, str(value)) for name, value in env) == (
        ("OMP_NUM_THREADS", "2"), ("MKL_NUM_THREADS", "\"${SLURM_CPUS_PER_TASK:-1}\""), ("DATA", "/x"))


def test_a_virtualenv_gets_the_site_python_module():
    resolution = job("nibi", environment={"venv": {"packages": ["numpy"]}})
    assert resolution.plan.modules == ("StdEnv/2023", "python/3.12")
    assert resolution.plan.venv.pip_options == ("--no-index",)


def test_a_python_module_the_user_chose_is_kept_instead_of_the_default():
    resolution = job("nibi", environment={"modules": ["python/3.12"], "venv": {"requirements": "req.txt"}})
    assert resolution.plan.modules == ("StdEnv/2023", "python/3.12")


def test_niagara_preloads_the_alliance_stack_before_the_users_modules():
    assert job("niagara", kind="mpi", environment={"modules": ["openmpi/4.1.5"]}).plan.modules == (
        "CCEnv", "arch/avx512", "StdEnv/2023", "openmpi/4.1.5", "python/3.12")   # the payload is python


@pytest.mark.parametrize("site, modules, first", [
    ("fir", ["intel/2023.2.1", "StdEnv/2023", "namd-multicore/2.14"], ("StdEnv/2023", "intel/2023.2.1", "namd-multicore/2.14")),
    ("nibi", ["cuda/12.2", "gcc/12.3", "StdEnv/2023", "nccl/2.18.3"], ("StdEnv/2023", "cuda/12.2", "gcc/12.3", "nccl/2.18.3")),
    ("niagara", ["gcc/7.3.0", "NiaEnv/2019b", "StdEnv/2018.3", "nixpkgs/16.09", "hdf5/1.10.5"],
     ("CCEnv", "arch/avx512", "NiaEnv/2019b", "StdEnv/2018.3", "nixpkgs/16.09", "gcc/7.3.0", "hdf5/1.10.5")),
])
def test_a_stack_the_user_names_is_loaded_before_any_compiler(site, modules, first):
    """Loading a StdEnv (or a site's stack, or its base layer) swaps out the compiler loaded before
    it (StdEnv/2023 replaces intel with gcc/12.3), and the Intel build of namd is then not found."""
    plan = job(site, environment={"modules": modules}, launch={"command": "./app"}, kind="threaded",
               resources={"cpus_per_task": 40 if site == "niagara" else 4}).plan
    assert plan.modules[:len(first)] == first


def test_modules_on_a_site_without_a_module_system_are_an_error():
    error = only_error(job("generic", environment={"modules": ["gcc"]}))
    assert error == Finding("error", "environment.modules", "generic has no module system; remove the modules")


# ---------------------------------------------------------------------------- arrays, dependencies, mail


def test_a_2x3_grid_with_throttle_2_is_array_0_5_percent_2():
    resolution = job("generic", kind="array", array={"parameters": {"lr": [0.1, 0.01], "seed": [1, 2, 3]}, "throttle": 2})
    d = directives(resolution)
    assert (d["--array"], d["--output"]) == ("0-5%2", "%x-%A_%a.out")
    assert resolution.plan.array.parameters == (("lr", ("0.1", "0.1", "0.1", "0.01", "0.01", "0.01")),
                                                ("seed", ("1", "2", "3", "1", "2", "3")))


def test_an_array_without_throttle_has_no_percent():
    assert directives(job("generic", kind="array", array={"parameters": {"x": ["a", "b"]}}))["--array"] == "0-1"


def test_an_array_larger_than_the_site_allows_is_planned_whole_and_said_to_be_split():
    resolution = job("generic", kind="array", array={"parameters": {"i": list(range(2500))}})
    assert resolution.plan is not None and resolution.plan.array.size == 2500
    assert [f.message.split(";")[0] for f in resolution.warnings if f.field == "array.parameters"] == [
        "2500 tasks are more than generic's largest array (1001): submit splits the sweep into 3 arrays of at most 1001 "
        "tasks, followed as one job"]


def test_an_array_above_the_queued_job_limit_is_an_error():
    error = only_error(job("nibi", kind="array", array={"parameters": {"i": list(range(1001))}}))
    assert error == Finding("error", "array.parameters", "1001 tasks: each array task counts as a job and nibi allows 1000 queued per user")


def test_dependencies_are_spelt_afterok_with_colons_and_joined_by_commas():
    d = directives(job("generic", dependencies=[{"after": "ok", "jobs": [1, 2]}, {"after": "any", "jobs": 3}]))
    assert d["--dependency"] == "afterok:1:2,afterany:3"


def test_dependency_on_start_is_spelt_after():
    assert directives(job("generic", dependencies={"after": "start", "jobs": [7]}))["--dependency"] == "after:7"


def test_mail_and_extra_directives_reach_the_header():
    d = directives(job("generic", mail={"user": "me@uni.ca", "events": ["all"]}, extra_directives=["--constraint=cascade", "--exclusive"]))
    assert (d["--mail-user"], d["--mail-type"], d["--constraint"], d["--exclusive"]) == ("me@uni.ca", "ALL", "cascade", "")


def test_mail_with_no_events_writes_no_mail_type_so_slurm_sends_none():
    d = directives(job("generic", mail={"user": "me@uni.ca", "events": []}))
    assert d["--mail-user"] == "me@uni.ca" and "--mail-type" not in d


# ---------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("cluster, fields", [
    ("nibi", {"kind": "gpu", "resources": {"gpus": "h100:2", "cpus_per_task": 8, "mem": "64G"},
              "environment": {"venv": {"requirements": "r.txt"}, "variables": {"B": "2", "A": "1"}}}),
    ("niagara", {"kind": "mpi", "resources": {"nodes": 4}}),
    ("generic", {"kind": "array", "array": {"parameters": {"b": [1, 2], "a": ["x"]}, "throttle": 1}}),
])
def test_the_same_spec_twice_gives_equal_plans_and_findings(cluster, fields):
    first, second = job(cluster, **fields), job(cluster, **fields)
    assert first.plan is not None and first.plan == second.plan
    assert first.findings == second.findings


def test_the_plan_does_not_depend_on_the_order_variables_were_written_in():
    one = job("nibi", environment={"variables": {"B": "2", "A": "1"}}).plan
    two = job("nibi", environment={"variables": {"A": "1", "B": "2"}}).plan
    assert one == two


@pytest.mark.parametrize("step, warned", [("--gres=gpu:1", True), ("--gres=gpu:h100:1", False), ("--gres gpu:1", True)])
def test_an_untyped_gpu_step_under_a_typed_header_is_warned(step, warned):
    """Slurm refuses the step ("with and without type identification", 22.05): it never runs."""
    resolution = job("rorqual", kind="mpi", resources={"tasks_per_node": 2, "gpus": "h100:2"},
                     launch={"shell": f"srun -n1 {step} ./a &\nsrun -n1 {step} ./b &\nwait", "launcher": "direct"})
    found = warnings_of(resolution, "launch.shell")
    assert bool(found) is warned
    assert not warned or found == [f"the step's {step} names no GPU type under the job's h100:2: Slurm refuses such a step (with "
                                   "and without type identification), so it never runs; write --gres=gpu:h100:1"]
