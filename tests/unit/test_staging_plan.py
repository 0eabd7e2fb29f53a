"""What the resolver decides for stage: and resubmit: (the shell is checked on the cluster)."""

import pytest

from slurmkit import Job
from slurmkit.core.errors import SpecError
from slurmkit.core.plan import StageStep


def plan_of(**fields):
    spec = {"name": "s", "profile": "nibi", "account": "def-x", "resources": {"time": "3h"}, "launch": "python a.py", **fields}
    resolution = Job(**spec).resolve()
    return resolution


def test_inputs_become_copy_or_extract_steps_by_their_kind():
    plan = plan_of(stage={"inputs": ["data.tar.zst", "d.tgz", "x.tar", "images.pack", "cfg.json",
                                     {"from": "/scratch/ds", "to": "ds"}]}).plan
    steps = [(s.action, s.source, s.target, s.tar_options) for s in plan.stage.inputs]
    assert steps == [
        ("extract", "$SLURM_SUBMIT_DIR/data.tar.zst", "$SLURM_TMPDIR", ("--zstd",)),
        ("extract", "$SLURM_SUBMIT_DIR/d.tgz", "$SLURM_TMPDIR", ("-z",)),
        ("extract", "$SLURM_SUBMIT_DIR/x.tar", "$SLURM_TMPDIR", ()),
        ("extract-shards", "$SLURM_SUBMIT_DIR/images.pack", "$SLURM_TMPDIR", ()),
        ("copy", "$SLURM_SUBMIT_DIR/cfg.json", "$SLURM_TMPDIR", ()),
        ("copy-as", "/scratch/ds", "$SLURM_TMPDIR/ds", ()),
    ]


def test_submit_host_paths_expand_as_in_the_command_and_tmpdir_paths_stay_literal():
    """~, $HOME, $SCRATCH... in an input's from and an output's to mean what the shell
    makes of them ($$ is a literal $); paths inside $SLURM_TMPDIR stay as written."""
    plan = plan_of(stage={"inputs": ["we$$ird", "~/d.tar", "$SCRATCH/x"], "outputs": [{"from": "o$ut", "to": "r$$es"}]}).plan
    assert [step.source for step in plan.stage.inputs] == ["$SLURM_SUBMIT_DIR/we$$ird", "$HOME/d.tar", "$SCRATCH/x"]
    assert plan.stage.outputs == (("$SLURM_TMPDIR/o$$ut", "$SLURM_SUBMIT_DIR/r$$es"),)


def test_outputs_ask_for_usr1_a_lead_before_the_limit():
    plan = plan_of(stage={"outputs": [{"from": "r", "to": "r"}]}).plan
    assert ("--signal", "B:USR1@300") in plan.directives and plan.stage.lead_s == 300
    short = plan_of(resources={"time": "20m"}, stage={"outputs": [{"from": "r", "to": "r"}]}).plan
    assert short.stage.lead_s == 120


def test_no_outputs_means_no_signal():
    plan = plan_of(stage={"inputs": ["a.tar"]}).plan
    assert not any(flag == "--signal" for flag, _ in plan.directives)


def test_a_lead_as_long_as_the_job_is_an_error():
    resolution = plan_of(resources={"time": "1m"}, stage={"outputs": [{"from": "r", "to": "r"}], "lead": "1m"})
    assert [f.message for f in resolution.errors] == [
        "copying back 60s before the end leaves no time to run in 60s; ask more time or a shorter lead"]


def test_a_lead_within_slurms_early_signal_of_the_limit_is_a_warning():
    """SLURM may send the signal up to 60 s before the lead: in 1m with a 30s lead, at the start."""
    lead = "stage.lead"
    warned = plan_of(resources={"time": "1m"}, stage={"outputs": [{"from": "r", "to": "r"}], "lead": "30s"})
    assert [w.message for w in warned.warnings if w.field == lead] == [
        "SLURM may send the signal to save up to 60s before the lead (sbatch --signal), so in 60s with a 30s lead the payload "
        "may be stopped as it starts, or never start; ask more than 90s, or a shorter lead"]
    for time, given in (("2m", "30s"), ("3m", None)):   # a second to run at the least; the default lead of 3m is 60s
        stage = {"outputs": [{"from": "r", "to": "r"}], **({"lead": given} if given else {})}
        assert not [w for w in plan_of(resources={"time": time}, stage=stage).warnings if w.field == lead], time


def test_multi_node_jobs_stage_in_once_per_node():
    plan = plan_of(kind="mpi", resources={"time": "3h", "nodes": 3, "tasks_per_node": 4}, stage={"inputs": ["a.tar"]}).plan
    assert (plan.stage.per_node, plan.stage.nodes) == (True, 3)


def test_a_job_longer_than_the_walltime_with_a_checkpoint_becomes_a_chain():
    resolution = plan_of(resources={"time": "20d"}, stage={"checkpoint": {"from": "ckpt", "to": "ck"}})
    chain = resolution.plan.chain
    assert (chain.links, chain.link_time_s) == (3, 7 * 86400)
    assert ("--time", "7-00:00:00") in resolution.plan.directives
    assert chain.marker == "$SLURM_SUBMIT_DIR/ck/.slurmkit-chain-done"
    assert any("runs as a chain of 3 jobs" in w.message for w in resolution.warnings)


def test_a_job_longer_than_the_walltime_without_a_checkpoint_is_an_error():
    assert "maximum walltime" in plan_of(resources={"time": "20d"}).errors[0].message


def test_resubmit_needs_a_checkpoint_and_respects_max_links():
    assert plan_of(resubmit=True).errors[0].message.startswith("a chain resumes from a checkpoint")
    too_many = plan_of(resources={"time": "30d"}, resubmit={"max_links": 3}, stage={"checkpoint": {"from": "c", "to": "c"}})
    assert "at most 3 links" in too_many.errors[0].message
    asked = plan_of(resubmit={"max_links": 4}, stage={"checkpoint": {"from": "c", "to": "c"}}).plan.chain
    assert (asked.links, asked.link_time_s) == (4, 3 * 3600)


@pytest.mark.parametrize("stage, message", [
    ({"outputs": [{"from": "/abs", "to": "x"}]}, "stage.outputs[0].from: '/abs' is not allowed here"),
    ({"inputs": [{"from": "a", "to": "../up"}]}, "stage.inputs[0].to: '../up' is not allowed here"),
    ({"checkpoint": {"from": "c"}}, "stage.checkpoint.to: is required"),
    ({"inputs": "a.tar", "lead": "soon"}, "stage.lead: 'soon' is not a duration"),
])
def test_bad_stage_sections_are_one_line_errors(stage, message):
    with pytest.raises(SpecError) as caught:
        Job(name="s", profile="nibi", resources={"time": "1h"}, launch="x", stage=stage)
    assert message in str(caught.value)


def test_a_squashfs_image_is_mounted_on_one_node_and_extracted_on_several():
    one = plan_of(stage={"inputs": [{"from": "imagenet.sqfs", "to": "data"}]}).plan.stage
    assert one.inputs == (StageStep("mount-image", "$SLURM_SUBMIT_DIR/imagenet.sqfs", "$SLURM_TMPDIR/data"),)
    several = plan_of(kind="mpi", resources={"time": "3h", "nodes": 2, "tasks_per_node": 4},
                      stage={"inputs": ["a.tar", {"from": "/p/t.squashfs", "to": "t"}]}).plan.stage
    assert [s.action for s in several.inputs] == ["extract", "extract-image"]


def test_a_squashfs_image_without_a_folder_of_its_own_is_an_error():
    resolution = plan_of(stage={"inputs": ["data/imagenet.sqfs"]})
    (error,) = resolution.errors
    assert (error.field, error.message) == ("stage.inputs.0", "a squashfs image is mounted on a folder of its own: "
                                            "give it one ({from: data/imagenet.sqfs, to: imagenet})")
