"""An sbatch the job runs keeps the options its line gives, which override the #SBATCH lines of
the script it submits: the old cluster's GPU types, partitions and RAC accounts are to-dos."""

import copy

from slurmkit.port.retarget import choose_target, port_spec
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

JOB = {"name": "t", "account": "def-x", "resources": {"time": "1h", "cpus_per_task": 4, "mem": "8G"},
       "environment": {"modules": ["python/3.11"]}, "launch": {"shell": "python prep.py"}}

OVERRIDE = "Options on sbatch's command line override the #SBATCH lines of the script it submits"


def todos(setup=(), shell="python prep.py", source="graham", to="nibi"):
    data = {**copy.deepcopy(JOB), "profile": source, "launch": {"shell": shell}}
    data["environment"]["setup"] = list(setup)
    profile = load_profile(source)
    ported = port_spec(copy.deepcopy(data), spec_from_mapping(data, source="job.yaml"), profile,
                       choose_target(profile, to, load_profile))
    return [t for t in ported.todos if OVERRIDE in t]


def test_the_next_stages_gpu_type_partition_and_rac_account_are_a_to_do_naming_the_new_clusters_gpu():
    (todo,) = todos(shell="python prep.py\nsbatch --dependency=afterok:$SLURM_JOB_ID --account=rrg-prof --gres=gpu:t4:1 "
                          "-p gpubase train.sh")
    assert todo.startswith("launch.shell: the sbatch it runs is given --account=rrg-prof, a RAC award, which is for the old "
                           "cluster only; --gres=gpu:t4:1: nibi has no t4 GPU; its closest is the H100 80G (h100); "
                           "--partition=gpubase, a partition of the old cluster, which nibi may not have. " + OVERRIDE)


def test_a_submission_in_a_substitution_and_a_workflow_managers_submit_string_are_read():
    found = todos(setup=["job=$(sbatch --parsable --gpus-per-node=v100:2 prep.sh)"],
                  shell='snakemake --cluster "sbatch --account=def-x --gres=gpu:p100:{resources.gpus} -c {threads}" -j 10 -p')
    assert [t.split(": the sbatch")[0] for t in found] == ["environment.setup[0]", "launch.shell"]
    assert "--gpus-per-node=v100:2: nibi has no v100 GPU" in found[0]
    assert "--gres=gpu:p100:{resources.gpus}: nibi has no p100 GPU" in found[1] and "-j" not in found[1]


def test_options_that_do_on_the_new_cluster_a_comment_and_a_port_to_the_same_cluster_say_nothing():
    assert todos(setup=["# sbatch -p old --gres=gpu:k80:1 next.sh"],
                 shell="sbatch --dependency=afterok:$SLURM_JOB_ID --account=def-x --gres=gpu:h100:1 -c 4 next.sh") == []
    assert todos(shell="sbatch -p gpubase --gres=gpu:t4:1 next.sh", source="nibi", to="nibi") == []
