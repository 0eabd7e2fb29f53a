"""What a job reads that nothing provides (slurmkit/resolve/reads.py): paths on the node-local disk,
shell variables the batch script expands, and files that are not on the submit host.

Each case is one a user met: a command that reads $SLURM_TMPDIR/data with no stage section,
$MASTER_ADDR in an mpi job under `set -u` (an error: the job would stop), $i inside single quotes (kept as a shell keeps it), a
requirements file or staged input that is not there."""

import functools
import os
import re

import pytest

from slurmkit import Job
from slurmkit.resolve.reads import BATCH_SET_BY, PER_PROCESS, SET_BY_SPEC, batch_variables, tmpdir_paths
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

from .golden_specs import KINDS, spec_for


@functools.lru_cache(maxsize=None)
def profile(name):
    return load_profile(name)


def resolved(command, profile_name="nibi", **fields):
    data = {"name": "r", "account": "def-x", "resources": {"time": "3h"}, "launch": {"command": command}}
    for key, value in fields.items():
        data[key] = {**data[key], **value} if key in ("resources", "launch") else value
    return resolve(spec_from_mapping(data, source="job.yaml"), profile(profile_name))


def read_warnings(resolution, field="launch.command"):
    assert resolution.plan is not None, resolution.errors
    return [f.message for f in resolution.warnings if f.field == field]


def read_errors(resolution, field="launch.command"):
    """What will stop the job: an error, so that no plan is made and submit refuses it."""
    assert resolution.plan is None and not resolution.warnings, resolution.findings
    return [f.message for f in resolution.errors if f.field == field]


UNSTAGED = ("$SLURM_TMPDIR/data: nothing puts it on the node (no stage input, venv, build or checkpoint makes it), "
            "so a program that reads it finds nothing there; stage it (stage.inputs: [{from: DATA, to: data}]); "
            "if the program writes it, save it with stage.outputs ({from: data, to: DESTINATION}), or it is lost when the job ends")


# ------------------------------------------------------------------ paths under $SLURM_TMPDIR


@pytest.mark.parametrize("command", [
    "python main.py --data $SLURM_TMPDIR/data",
    "python main.py --data ${SLURM_TMPDIR}/data",
    'python main.py --data "$SLURM_TMPDIR"/data',
    'python main.py --data "${SLURM_TMPDIR}/data/"',
    "python main.py --data=$SLURM_TMPDIR/data/*.png",
    ["python", "main.py", '--data="$SLURM_TMPDIR"/data'],
    ["bash", "-c", "ls $SLURM_TMPDIR/data; python main.py"],
])
def test_every_spelling_of_a_path_under_slurm_tmpdir_that_nothing_stages_is_warned(command):
    assert read_warnings(resolved(command)) == [UNSTAGED]


def test_the_warning_names_the_path_as_deep_as_the_command_does():
    (message,) = read_warnings(resolved("python main.py --data=$SLURM_TMPDIR/data/train/*.png"))
    assert message.startswith("$SLURM_TMPDIR/data/train: nothing puts it on the node")
    assert "(stage.inputs: [{from: DATA, to: data/train}])" in message


@pytest.mark.parametrize("setup", [
    ["mkdir -p $SLURM_TMPDIR/data"],
    ["cd $SLURM_TMPDIR", "mkdir data", "mv train.zarr data"],
    ["cp -r ~/data $SLURM_TMPDIR/"],
    ["mkdir $SLURM_TMPDIR/x && mv ~/d.zarr $SLURM_TMPDIR/data"],
    ['tar -xf ~/data.tar -C "$SLURM_TMPDIR/data"'],
    ["cd $SLURM_TMPDIR", "tar xf ~/train.tar"],          # spread over the folder: its contents are unknown
    ["srun --ntasks=1 unzip -qq ~/data.zip -d $SLURM_TMPDIR/data"],   # srun runs the unzip: it makes the folder
    ["srun -n 1 cp -r ~/data $SLURM_TMPDIR/"],
    # a function that fills a folder its argument names: what it makes is unknown here
    ['fill() {\n  for i in a b; do\n    mkdir -p $SLURM_TMPDIR/$1\n    cat $i.part?? | tar -xC $SLURM_TMPDIR/$1\n  done\n}', "fill data"],
    ["for d in data other; do mkdir -p ${SLURM_TMPDIR}/$d; done"],
])
def test_a_path_that_setup_makes_on_the_node_is_not_warned(setup):
    assert read_warnings(resolved("python main.py --data $SLURM_TMPDIR/data", environment={"setup": setup})) == []


@pytest.mark.parametrize("setup", [["mkdir $SLURM_TMPDIR/other"], ["cd $SLURM_TMPDIR/w", "mkdir data"], ["mkdir data"],
                                   ["if true; then\n  mkdir $SLURM_TMPDIR/other\nfi"], ["echo $SLURM_TMPDIR/$1"]])
def test_a_path_that_setup_makes_elsewhere_is_still_warned(setup):
    assert read_warnings(resolved("python main.py --data $SLURM_TMPDIR/data", environment={"setup": setup})) == [UNSTAGED]


@pytest.mark.parametrize("kind, resources", [
    ("serial", {}), ("threaded", {"cpus_per_task": 4}), ("mpi", {"nodes": 2, "tasks_per_node": 4}),
    ("ddp", {"nodes": 2, "gpus": "h100:4"}), ("tf-multiworker", {"nodes": 2, "gpus": "h100:4"}),
])
def test_the_warning_holds_for_every_kind(kind, resources):
    assert read_warnings(resolved("python t.py --data $SLURM_TMPDIR/data", kind=kind, resources=resources)) == [UNSTAGED]


@pytest.mark.parametrize("stage, read", [
    ({"inputs": [{"from": "d.tar", "to": "data"}]}, "data/train"),               # extracted to data: covers what is under it
    ({"inputs": [{"from": "d.tar", "to": "data/train"}]}, "data"),               # data is made to hold train
    ({"inputs": ["dataset"]}, "dataset/x.csv"),                                 # a folder copied in keeps its name
    ({"inputs": ["/project/def-x/cfg.json"]}, "cfg.json"),
    ({"inputs": ["images.pack"]}, "anything/at/all"),                           # shards spread over $SLURM_TMPDIR: unknown contents
    ({"inputs": ["data.tar.zst"]}, "data"),
    ({"inputs": [{"from": "i.sqfs", "to": "images"}]}, "images/001.png"),
    ({"outputs": [{"from": "runs", "to": "results"}]}, "runs/epoch1"),          # the program writes its outputs
    ({"checkpoint": {"from": "ckpt", "to": "checkpoints"}}, "ckpt/last.pt"),    # restored before the payload
])
def test_what_a_stage_section_puts_on_the_node_covers_the_read(stage, read):
    assert read_warnings(resolved(f"python t.py --data $SLURM_TMPDIR/{read}", stage=stage)) == []


def test_a_stage_input_elsewhere_does_not_cover_the_read():
    resolution = resolved("python t.py --data $SLURM_TMPDIR/data", stage={"inputs": [{"from": "d.tar", "to": "other"}]})
    assert read_warnings(resolution) == [UNSTAGED]


def test_the_venv_and_a_build_cache_under_slurm_tmpdir_are_made_by_the_job():
    assert read_warnings(resolved("$SLURM_TMPDIR/env/bin/python t.py", environment={"venv": {"packages": ["numpy"]}})) == []
    built = resolved("ls $SLURM_TMPDIR/wheels/horovod", environment={"venv": {}, "builds": ["mpi4py"],
                                                                   "build_cache": "$SLURM_TMPDIR/wheels"})
    assert read_warnings(built) == []


def test_a_literal_dollar_and_the_folder_itself_are_not_reads():
    assert read_warnings(resolved("python t.py --pattern $$SLURM_TMPDIR/data --cwd $SLURM_TMPDIR")) == []


def test_a_requirements_file_and_a_variable_value_under_slurm_tmpdir_are_reads_too():
    resolution = resolved("python t.py", environment={"venv": {"requirements": "$SLURM_TMPDIR/req.txt"},
                                                      "variables": {"DATA": "$SLURM_TMPDIR/data"}})
    assert [m.split(":")[0] for m in read_warnings(resolution, "environment.venv.requirements")] == ["$SLURM_TMPDIR/req.txt"]
    assert read_warnings(resolution, "environment.variables.DATA") == [UNSTAGED]


def test_tmpdir_paths_finds_each_path_relative_to_slurm_tmpdir():
    assert tmpdir_paths("--a=$SLURM_TMPDIR/x,${SLURM_TMPDIR}/y/z:'$SLURM_TMPDIR'/w $SLURM_TMPDIR") == ["x", "y/z", "w", ""]
    assert tmpdir_paths("$SLURM_TMPDIRX/a $$SLURM_TMPDIR/b") == []


# --------------------------------------------------------------------------- variables


def test_master_addr_in_an_mpi_job_is_unset_and_the_error_names_kind_ddp():
    (message,) = read_errors(resolved("./solver --peer $MASTER_ADDR", kind="mpi", resources={"nodes": 2}))
    assert message == ("$MASTER_ADDR: nothing sets it in a kind 'mpi' job (kind 'ddp' or 'multigpu' or 'lightning' or 'accelerate' does), "
                       "so under set -u the job stops with 'MASTER_ADDR: unbound variable'; "
                       "use kind 'ddp' or 'multigpu' or 'lightning' or 'accelerate', or set it in environment.variables")


def test_what_the_kind_the_spec_and_slurm_set_is_not_warned():
    ddp = resolved("python t.py --addr $MASTER_ADDR:$MASTER_PORT --threads $OMP_NUM_THREADS --job $SLURM_JOB_ID --home $HOME "
                   "--scratch $SCRATCH --token $TOKEN --env $VIRTUAL_ENV --gpus $CUDA_VISIBLE_DEVICES",
                   kind="ddp", resources={"nodes": 2, "gpus": "h100:4"}, environment={"variables": {"TOKEN": "x"}, "venv": {}})
    assert read_warnings(ddp) == []
    array = resolved("python t.py --lr $lr --task $SLURM_ARRAY_TASK_ID", kind="array", array={"parameters": {"lr": [0.1, 0.2]}})
    assert read_warnings(array) == []


def test_a_variable_nothing_sets_is_warned_with_what_to_do():
    (message,) = read_warnings(resolved("python t.py --data $DATASET"))
    assert message == ("$DATASET: nothing sets it (not SLURM, the spec, the script or a login shell), so under set -u the job "
                       "stops with 'DATASET: unbound variable' unless it is exported when you submit; set it in "
                       "environment.variables, or write '$DATASET' (single quotes keep it as written) if a shell inside the "
                       "command sets it")


def test_an_array_variable_outside_an_array_job_names_kind_array():
    (message,) = read_errors(resolved("python t.py --seed $SLURM_ARRAY_TASK_ID"))
    assert message == ("$SLURM_ARRAY_TASK_ID: SLURM sets it only in array jobs (kind 'array'), so under set -u the job stops "
                       "with 'SLURM_ARRAY_TASK_ID: unbound variable'")
    (empty,) = read_warnings(resolved("python t.py --seed $SLURM_ARRAY_TASK_ID", environment={"nounset": False}))
    assert empty.endswith("so it reads as empty there (environment.nounset: false)")


def test_a_process_own_variable_in_the_command_is_expanded_once_by_the_batch_script():
    (message,) = read_errors(resolved("python t.py --rank $RANK", kind="ddp", resources={"nodes": 2, "gpus": "h100:4"}))
    assert message == ("$RANK: each process gets it in its environment (from kind 'ddp' or torchrun), but the batch script "
                       "expands the command once, before any process starts, and it is unset there, so under set -u the job "
                       "stops with 'RANK: unbound variable'; read it in the program (os.environ['RANK']), or write it inside "
                       "the single quotes of a bash -c '... $RANK ...', which keep it for each process's shell to expand")
    (procid,) = read_warnings(resolved("python t.py --rank $SLURM_PROCID", kind="mpi", resources={"tasks_per_node": 4}))
    assert procid == ("$SLURM_PROCID: the batch script expands the command once, so every process gets the batch script's "
                      "value, not its own; read it in the program (os.environ['SLURM_PROCID']), or write it inside the "
                      "single quotes of a bash -c '... $SLURM_PROCID ...', which keep it for each process's shell to expand")
    assert read_warnings(resolved("python t.py --rank $SLURM_PROCID")) == []     # one process: the batch step's 0 is its own


def test_a_module_variable_is_an_error_when_its_module_is_not_loaded():
    (message,) = read_errors(resolved("./build.sh $EBROOTNCCL"))
    assert message == ("$EBROOTNCCL: the nccl module sets it, and this job does not load it, so under set -u the job stops "
                       "with 'EBROOTNCCL: unbound variable'; add nccl/VERSION to environment.modules")
    assert read_warnings(resolved("./build.sh $EBROOTNCCL $CUDA_HOME", environment={"modules": ["cuda/12.2", "nccl/2.18.3"]})) == []
    assert read_warnings(resolved("./build.sh $EBROOTGCC")) == []                # StdEnv loads gcc


def test_venv_path_requirements_and_build_cache_are_expanded_too():
    resolution = resolved("python t.py", environment={"venv": {"path": "$ENVS/torch", "requirements": "$REQ"}})
    assert [m.split(":")[0] for m in read_warnings(resolution, "environment.venv.path")] == ["$ENVS"]
    assert [m.split(":")[0] for m in read_warnings(resolution, "environment.venv.requirements")] == ["$REQ"]


def test_the_kinds_table_says_what_each_kind_really_sets():
    """BATCH_SET_BY names the kinds whose batch script sets each name; PER_PROCESS's slurmkit
    names are exported by that kind's per-task wrapper. Checked on each kind's golden spec."""
    fir = profile("fir")
    sets = {kind: batch_variables(Job(**spec_for(fir, kind)).resolve().plan) for kind in KINDS}
    # threaded pins a compiled program's threads; its golden runs python, which it leaves unpinned
    compiled = {**spec_for(fir, "threaded"), "launch": {"command": "./sim"}}
    sets["threaded"] |= batch_variables(Job(**compiled).resolve().plan)
    common = set.intersection(*sets.values())
    for name, kinds in BATCH_SET_BY.items():
        assert {kind for kind in KINDS if name in sets[kind]} == set(kinds), name
    array_parameters = {"lr", "seed"}
    for kind, names in sets.items():
        assert names - common <= set(BATCH_SET_BY) | set(SET_BY_SPEC) | set(fir.launch.env) | array_parameters, kind
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "TF_CONFIG"):
        kind = "tf-multiworker" if name == "TF_CONFIG" else "ddp"
        assert f"kind '{kind}'" in PER_PROCESS[name]
        script = Job(**spec_for(fir, kind)).render(standalone=True)
        exports = re.search(r"^_sk_task_exports\(\) \{.*?^\}\n", script, re.S | re.M).group(0)   # what each task gets
        assert re.search(rf"\b{name}=", exports), name


# ---------------------------------------------------------------------- single quotes


def test_a_name_inside_single_quotes_is_left_for_the_programs_shell_as_in_bash():
    """As in a shell: single quotes keep $i as written (for bash -c's own loop), so nothing is
    said of it, and the script passes it on as $i."""
    resolution = resolved("bash -c 'for i in 1 2; do echo $i; done'")
    assert read_warnings(resolution) == [] and resolution.plan.command == ("bash", "-c", "for i in 1 2; do echo $$i; done")
    assert read_warnings(resolved("bash -c 'echo $HOME'")) == []


def test_a_doubled_dollar_inside_single_quotes_is_refused_with_how_to_write_it():
    from slurmkit.core.errors import SpecError

    with pytest.raises(SpecError) as caught:
        resolved("bash -c 'echo $$i'")
    assert caught.value.detail == ("'echo $$i' holds $$ inside single quotes, where every $ stays as written, as in a shell: "
                                   "the program would get $$; write 'echo $i' for it to get echo $i")


@pytest.mark.parametrize("command", ["bash -c 'echo $i'", "bash -c \"echo $HOME\"", "echo \"it's $HOME\"", "echo \\'$HOME\\'"])
def test_no_single_quote_warning_where_none_is_due(command):
    assert read_warnings(resolved(command)) == []


# ------------------------------------------------------------------ the golden specs


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("profile_name", ["fir", "nibi", "trillium", "local"])
def test_golden_specs_read_nothing_that_nothing_provides(profile_name, kind):
    """The golden scripts are examples to copy: they stage what their commands read."""
    resolution = Job(**spec_for(profile(profile_name), kind)).resolve()
    if resolution.plan is None:
        return   # a kind the cluster cannot run is pinned as its .errors file
    assert [f for f in resolution.warnings if f.field.startswith(("launch", "environment", "stage"))] == []


# ------------------------------------------------------------- files on the submit host


def spec_file(tmp_path, **fields):
    import yaml

    data = {"name": "r", "profile": "nibi", "account": "def-x", "resources": {"time": "3h"}, "launch": "python t.py", **fields}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(data))
    return Job.from_yaml(tmp_path / "job.yaml")


def local_warnings(job):
    return [(f.field, f.message) for f in job.check() if f.level == "warning"]


def local_errors(job):
    return [(f.field, f.message) for f in job.check() if f.level == "error"]


def test_a_staged_input_that_is_not_here_is_warned_and_a_requirements_file_is_an_error(tmp_path):
    job = spec_file(tmp_path, stage={"inputs": ["data.tar", {"from": "cfg", "to": "cfg"}]}, launch="python t.py --cfg $SLURM_TMPDIR/cfg",
                    environment={"venv": {"requirements": "requirements.txt"}})
    assert local_warnings(job) == [
        ("stage.inputs.0", f"data.tar is not on this host ({tmp_path}/data.tar): the job stops when it stages it in, "
                           "unless something puts it there before the job starts"),
        ("stage.inputs.1", f"cfg is not on this host ({tmp_path}/cfg): the job stops when it stages it in, "
                           "unless something puts it there before the job starts"),
    ]
    assert local_errors(job) == [("environment.venv.requirements", f"requirements.txt is not on this host "
                                                                   f"({tmp_path}/requirements.txt): pip install -r stops the job")]
    (tmp_path / "data.tar").write_bytes(b"")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "requirements.txt").write_text("numpy\n")
    assert local_warnings(job) == [] and local_errors(job) == []


def test_a_venv_path_that_is_not_a_virtualenv_is_warned(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    job = spec_file(tmp_path, environment={"venv": {"path": "$HOME/envs/torch"}})
    assert local_warnings(job) == [
        ("environment.venv.path", f"$HOME/envs/torch is not on this host ({tmp_path}/envs/torch): the job makes a new, "
                                  "empty virtualenv there and installs into it; if you meant an existing one, correct the path")]
    (tmp_path / "envs" / "torch").mkdir(parents=True)
    assert local_warnings(job) == [
        ("environment.venv.path", f"$HOME/envs/torch ({tmp_path}/envs/torch) is not a virtualenv (no bin/python): "
                                  "the job makes a new one in it")]
    (tmp_path / "envs" / "torch" / "bin").mkdir()
    (tmp_path / "envs" / "torch" / "bin" / "python").write_text("")
    os.chmod(tmp_path / "envs" / "torch" / "bin" / "python", 0o755)
    assert local_warnings(job) == []


def test_paths_that_only_the_node_knows_are_not_looked_for(tmp_path, monkeypatch):
    monkeypatch.delenv("PROJECT_DIR", raising=False)
    job = spec_file(tmp_path, environment={"venv": {"requirements": "$PROJECT_DIR/req.txt", "path": "$SLURM_TMPDIR/env2"}})
    assert local_warnings(job) == []      # neither path is looked for here
    assert [message.split(":")[0] for _, message in local_errors(job)] == ["$PROJECT_DIR"]   # unset, here too: the job stops


# ------------------------------------------------------------------------ slurmkit check


def test_slurmkit_check_shows_each_read_with_its_line_and_exits_zero(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PEER", "node7")   # exported where it is submitted: what only that shell could set stays a warning
    (tmp_path / "job.yaml").write_text("name: sim\nprofile: nibi\naccount: def-x\nkind: mpi\nresources: {time: 3h, nodes: 2}\n"
                                       "stage:\n  inputs: [{from: mesh.tar, to: mesh}]\n"
                                       "launch: ./solver --peer $PEER --mesh ${SLURM_TMPDIR}/mesh --out $SLURM_TMPDIR/out\n")
    result = CliRunner().invoke(main, ["check", "job.yaml"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "warning: job.yaml:8: launch.command: $SLURM_TMPDIR/out: nothing puts it on the node (no stage input, venv, build or "
        "checkpoint makes it), so a program that reads it finds nothing there; stage it (stage.inputs: [{from: DATA, to: out}]); "
        "if the program writes it, save it with stage.outputs ({from: out, to: DESTINATION}), or it is lost when the job ends",
        "warning: job.yaml:8: launch.command: $PEER: nothing sets it (not SLURM, the spec, the script or a login shell), so "
        "under set -u the job stops with 'PEER: unbound variable' unless it is exported when you submit; set it in "
        "environment.variables, or write '$PEER' (single quotes keep it as written) if a shell inside the command sets it",
        f"warning: job.yaml:7: stage.inputs.0: mesh.tar is not on this host ({tmp_path}/mesh.tar): the job stops when "
        "it stages it in, unless something puts it there before the job starts",
    ]


def test_a_staged_place_named_for_the_programs_own_shell_counts_as_named():
    """`$$SLURM_TMPDIR/data` reaches `bash -c` as `$SLURM_TMPDIR/data`, which that shell expands."""
    resolution = Job(name="n", profile="nibi", account="def-x", resources={"time": "1h"},
                     stage={"inputs": [{"from": "d.tar", "to": "data"}], "outputs": [{"from": "out", "to": "results"}]},
                     launch={"command": ["bash", "-c", "wc -l $$SLURM_TMPDIR/data/x > $$SLURM_TMPDIR/out/n"]}).resolve()
    assert [f for f in resolution.warnings if "never names" in f.message] == []


def test_a_staged_place_the_command_never_names_is_warned_for_inputs_and_outputs():
    resolution = Job(name="n", profile="nibi", account="def-x", resources={"time": "1h"},
                     stage={"inputs": [{"from": "d.tar", "to": "data"}], "outputs": [{"from": "out", "to": "results"}]},
                     launch="./simulate --steps 10").resolve()
    fields = sorted(f.field for f in resolution.warnings if "never names" in f.message)
    assert fields == ["stage.inputs.0", "stage.outputs.0.from"]


@pytest.mark.parametrize("line", ["slurm_hl2hl.py --format STAR-CCM+ > $SLURM_TMPDIR/machinefile",
                                  "scontrol show hostnames >>$SLURM_TMPDIR/machinefile", "cd $SLURM_TMPDIR && srun hostname > machinefile"])
def test_a_file_a_setup_line_writes_by_redirection_is_on_the_node(line):
    resolution = Job(name="n", profile="nibi", account="def-x", resources={"time": "1h"}, environment={"setup": [line]},
                     launch="starccm+ -batch -machinefile $SLURM_TMPDIR/machinefile sim.sim").resolve()
    assert not [f for f in resolution.warnings if "nothing puts it on the node" in f.message], resolution.warnings
    unmade = Job(name="n", profile="nibi", account="def-x", resources={"time": "1h"}, environment={"setup": ["hostname 2>&1"]},
                 launch="starccm+ -batch -machinefile $SLURM_TMPDIR/machinefile sim.sim").resolve()
    assert [f for f in unmade.warnings if "nothing puts it on the node" in f.message]


@pytest.mark.parametrize("prefix, output, warned", [("asm_out", "asm_out.fasta", False), ("run", "run_1.log", False),
                                                    ("out/run", "out/run-final.h5", False), ("asm", "asmbly.fa", True),
                                                    ("out/run", "run.log", True)])
def test_an_output_prefix_the_command_names_is_neither_unstaged_nor_unnamed(prefix, output, warned):
    """``--output $SLURM_TMPDIR/asm_out`` writes asm_out.fasta: the prefix is no input that
    nothing stages, and the saved file is named by it; a name that only starts alike is not."""
    resolution = Job(name="n", profile="nibi", account="def-x", resources={"time": "1h"},
                     stage={"outputs": [{"from": output, "to": "$HOME/scratch/"}]},
                     launch=f"./asm --output $SLURM_TMPDIR/{prefix}").resolve()
    said = [f.field for f in resolution.warnings if "never names" in f.message or "nothing puts it on the node" in f.message]
    assert said == (["launch.command", "stage.outputs.0.from"] if warned else []), resolution.warnings


@pytest.mark.parametrize("word, spelling", [("~/train.py", "write '$HOME/train.py'"), ("~", "write '$HOME'"),
                                            ("--data=~/d", "write '--data=$HOME/d'"), ("--a~b=~", "write '--a~b=$HOME'"),
                                            ("a~/b=~/b", "write 'a~/b=$HOME/b'"), ("~root/x", "write the path in full"),
                                            ("~+/x", "write the path in full"), ("--o=~other", "write the path in full")])
def test_a_tilde_the_program_gets_as_it_is_is_warned_with_home(word, spelling):
    warnings = [w for w in read_warnings(resolved(["python", word, word])) if "the program gets the ~" in w]
    assert warnings == [f"{word!r}: the program gets the ~ as it is (slurmkit quotes every word of the command, "
                        f"so no shell expands it); {spelling}"]     # once, though the word is there twice


@pytest.mark.parametrize("word", ["x~/y", "$HOME/d", "a=b~/c"])
def test_a_tilde_that_no_shell_would_expand_either_is_not_warned(word):
    assert not [w for w in read_warnings(resolved(["python", word])) if "the program gets the ~" in w]


@pytest.mark.parametrize("launch, warned", [
    ("python process.py --workers $(python -c 'import os; print(os.cpu_count())')", "os.cpu_count()"),
    ("Rscript -e 'parallel::mclapply(1:9, sqrt, mc.cores = parallel::detectCores())'", "detectCores()"),
    ("make -j $(nproc --all)", "nproc --all"), ("make -j $(nproc)", None),
    ("python process.py --workers $SLURM_CPUS_PER_TASK", None)])
def test_a_worker_count_read_from_the_node_is_warned(launch, warned):
    """The job's cores are part of a node: a pool sized by the node's count starts a worker a core
    of the node (192 on Fir) on the job's 16; nproc counts the cores the job may use."""
    resolution = Job(name="n", profile="fir", account="def-x", kind="threaded", resources={"time": "1h", "cpus_per_task": 16},
                     launch={"shell": launch}).resolve()
    said = [f.message for f in resolution.warnings if "counts every core of the node" in f.message]
    assert said == ([f"{warned} counts every core of the node, not the job's 16: a pool or a thread count sized by it runs "
                     "that many workers on the job's cores (more on a bigger node); use $SLURM_CPUS_PER_TASK (Python: "
                     "len(os.sched_getaffinity(0)); R: parallelly::availableCores(); nproc without --all)"] if warned else [])


@pytest.mark.parametrize("line", ["printf -v IDX '%03d' \"$SLURM_ARRAY_TASK_ID\"", "read -r IDX < index.txt",
                                  "IFS=, read -r IDX REST <<< \"$LINE\"", "mapfile -t IDX < ids.txt", "read -p 'id? ' -t 5 IDX"])
def test_a_variable_a_builtin_sets_in_setup_is_set(line):
    """``printf -v``, ``read`` and ``mapfile`` set the names they are given, as ``IDX=$(...)``
    does: "nothing sets it" would be false, and its advice (quote it) would break the job."""
    warnings = read_warnings(resolved("./solver in_${IDX}.dat", environment={"setup": [line]}))
    assert not [w for w in warnings if "$IDX: nothing sets it" in w], warnings
    assert [w for w in read_warnings(resolved("./solver in_${IDX}.dat")) if "$IDX: nothing sets it" in w]
