"""How import reads a virtualenv made in $SLURM_TMPDIR, and what port says of a Python 2 one."""

import pytest

from slurmkit.port.porting import import_script
from slurmkit.port.rebuild import python2_venv

HEAD = "#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --time=1:00:00\n"


@pytest.mark.parametrize("made", ["cd $SLURM_TMPDIR\nvirtualenv --no-download env\nsource env/bin/activate\n",
                                  "virtualenv --no-download $SLURM_TMPDIR/env\nsource ${SLURM_TMPDIR}/env/bin/activate\n"])
def test_a_virtualenv_made_in_slurm_tmpdir_is_per_job(made):
    spec = import_script(HEAD + made + "pip install --no-index numpy\npython run.py\n", profile="fir").spec
    assert "path" not in spec["environment"]["venv"]
    assert spec["environment"]["venv"]["packages"] == ["numpy"]


def test_a_relative_virtualenv_outside_slurm_tmpdir_is_a_lasting_one():
    spec = import_script(HEAD + "source env/bin/activate\npython run.py\n", profile="fir").spec
    assert spec["environment"]["venv"]["path"] == "env"


@pytest.mark.parametrize("path, modules, expected", [("$HOME/venv_py2.7", [], True), ("env-python2", [], True),
                                                     ("venv_py3.8", [], False), ("venv_py2.7", ["python/3.8"], False)])
def test_a_python_2_virtualenv_is_told_by_its_name(path, modules, expected):
    assert python2_venv(path, modules) is expected


def test_verification_of_a_submit_wrapper_runs_the_job_it_submits():
    """The old script verification runs is the here-document import read, not the wrapper
    (which would start sbatch where the job starts the program)."""
    from slurmkit.port.verify import verify_import

    wrapper = "#!/bin/bash\nsbatch <<EOT\n#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --time=1:00:00\npython run.py $1\nEOT\n"
    imported = import_script(wrapper, name="wrapped", profile="fir")
    assert imported.spec["launch"] == {"shell": "python run.py $1"}
    verification = verify_import(wrapper, imported, "fir")
    assert not [t for t in verification.todos() if "sbatch" in t], verification.todos()


MADE = "virtualenv --no-download $SLURM_TMPDIR/env\nsource $SLURM_TMPDIR/env/bin/activate\n"


@pytest.mark.parametrize("lines, packages, requirements, setup", [
    # what environment.venv says as the script did it: the requirements file first, then packages
    (["pip install --no-index --upgrade pip", "pip install -r req.txt", "pip install -q numpy --no-index"], ["numpy"], "req.txt", []),
    # options of the user's own are kept, on their line, in order
    (["pip install numpy", "pip install --no-deps tool"], ["numpy"], None, ["pip install --no-deps tool"]),
    (["pip install --upgrade setuptools"], None, None, ["pip install --upgrade setuptools"]),
    (["pip install -e ."], None, None, ["pip install -e ."]),
    # every pip line after one kept stays after it
    (["pip install --no-deps tool", "pip install numpy"], None, None, ["pip install --no-deps tool", "pip install numpy"]),
    # a requirements file after packages, or a second one
    (["pip install numpy", "pip install -r req.txt"], ["numpy"], None, ["pip install -r req.txt"]),
    (["pip install -r a.txt", "pip install -r b.txt"], None, "a.txt", ["pip install -r b.txt"]),
    (["pip install -r a.txt -r b.txt"], None, None, ["pip install -r a.txt -r b.txt"]),
    # a second version of a project: pip installs one after the other, and refuses both in one call
    (["pip install a==1.0", "pip install A_b", "pip install a==1.1"], ["a==1.0", "A_b"], None, ["pip install a==1.1"]),
    (["pip install numpy==1.24 torch", "pip install --no-index numpy==1.26"], ["numpy==1.24", "torch"], None,
     ["pip install --no-index numpy==1.26"]),
    # a bare name joins any other (pip takes both in one call, and ends with what separate lines did)
    (["pip install torch", "pip install torch torchvision", "pip install numpy==1.26", "pip install Numpy"],
     ["torch", "torchvision", "numpy==1.26", "Numpy"], None, []),
    (["pip install ~/w/a-1.0-py3-none-any.whl", "pip install ~/w/a-1.1-py3-none-any.whl"], None, None,
     ["pip install ~/w/a-1.0-py3-none-any.whl", "pip install ~/w/a-1.1-py3-none-any.whl"]),
    # a file or folder is found from where the line ran, and was built for the python of its day
    (["pip install numpy", "pip install wheels/tool-2.0-py3-none-any.whl"], ["numpy"], None,
     ["pip install wheels/tool-2.0-py3-none-any.whl"]),
    (["pip install .", "pip install numpy"], None, None, ["pip install .", "pip install numpy"]),
    (["pip install $HOME/src/promise-2.3"], None, None, ["pip install $HOME/src/promise-2.3"]),
    (["pip install 'pkg @ git+https://github.com/u/pkg'"], ["pkg @ git+https://github.com/u/pkg"], None, []),
])
def test_pip_lines_become_the_virtualenv_recipe_only_where_it_installs_the_same(lines, packages, requirements, setup):
    # on Narval, whose compute nodes are offline: pip without --no-index found the wheelhouse only
    # (where they reach PyPI, such a line stays as written: test_stack_environments.py); under
    # set -e, where a pip line that failed stopped the job as one pip call does
    spec = import_script(HEAD + "set -e\n" + MADE + "\n".join(lines) + "\npython run.py\n", profile="narval").spec
    environment = spec["environment"]
    assert environment["venv"].get("packages") == packages
    assert environment["venv"].get("requirements") == requirements
    assert environment.get("setup", []) == setup


@pytest.mark.parametrize("errexit", [True, False])
def test_pip_lines_of_a_script_without_set_e_stay_lines_that_may_fail_alone(errexit):
    """Without set -e, a pip line that failed (glob: no such package) stopped neither the job nor
    the other lines; one pip call of both would fail as a whole, and stop the job."""
    lines = ["pip install --no-index --upgrade pip", "pip install --no-index numpy", "pip install --no-index glob"]
    spec = import_script(HEAD + ("set -e\n" if errexit else "") + MADE + "\n".join(lines) + "\npython run.py\n",
                         profile="narval").spec
    environment = spec["environment"]
    assert environment["venv"].get("packages") == (["numpy", "glob"] if errexit else None)
    assert environment.get("setup", []) == ([] if errexit else lines[1:])


@pytest.mark.parametrize("pip", ["pip install --no-index --no-deps tool", "pip install numpy\npip install -r req.txt"])
def test_pip_lines_in_a_per_node_here_document_that_the_recipe_would_change_are_kept_whole(pip):
    heredoc = "srun -N $SLURM_NNODES -n $SLURM_NNODES bash << EOF\n" + MADE + pip + "\nEOF\n"
    after = "pip install --no-index scipy\n"   # a pip line after the kept ones stays after them
    spec = import_script(HEAD + "#SBATCH --nodes=2\n" + heredoc + after + "srun python run.py\n", profile="fir").spec
    assert spec["environment"]["setup"][0].endswith(pip + "\nEOF")
    assert spec["environment"]["setup"][1] == after.strip()
    assert "packages" not in spec["environment"].get("venv", {})


def test_a_wrapper_that_assigns_variables_before_sbatch_is_imported_for_its_document():
    """``NAME=$1`` before ``sbatch <<EOT``: the wrapper expanded $NAME in the document, so the
    assignment runs first in the job, which expands the same words; the notes name the wrapper's lines."""
    from slurmkit.port.verify import verify_import

    wrapper = ("#!/bin/bash\n# a wrapper\nRUN=$1\nOUT=results/$RUN\nsbatch <<EOT\n#!/bin/bash\n#SBATCH --account=def-x\n"
               "#SBATCH --time=1:00:00\nmkdir -p $OUT\npython run.py --name \"$RUN\" --out $OUT\nEOT\n")
    imported = import_script(wrapper, name="wrapped", profile="fir")
    assert imported.spec["environment"]["setup"][:2] == ["RUN=$1", "OUT=results/$RUN"]
    assert "python run.py" in str(imported.spec["launch"])
    notes = {n.line: n for n in imported.notes}
    assert notes[3].text == "RUN=$1" and "mkdir -p $OUT" in notes[9].text, notes
    assert any("assignments before sbatch (lines 3, 4)" in n.reason for n in imported.notes)
    verification = verify_import(wrapper, imported, "fir")
    assert not [t for t in verification.todos() if "sbatch" in t or "only in" in t], verification.todos()


def test_a_wrapper_that_shifts_its_arguments_before_sbatch_is_imported_for_its_document():
    """``PASSWORD=$1; shift`` then ``$1`` in the document: the job, given the wrapper's arguments,
    shifts them as it did, so its $1 is the wrapper's second."""
    from slurmkit.port.verify import verify_import

    wrapper = ("#!/bin/bash\nKEY=$1\nshift\nsbatch <<EOT\n#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --time=1:00:00\n"
               "python run.py --key $KEY --input $1\nEOT\n")
    imported = import_script(wrapper, name="wrapped", profile="fir")
    assert imported.spec["environment"]["setup"][:2] == ["KEY=$1", "shift"]
    assert "python run.py" in str(imported.spec["launch"])
    verification = verify_import(wrapper, imported, "fir")
    assert not [t for t in verification.todos() if "sbatch" in t or "only in" in t or "differ" in t], verification.todos()


def test_a_wrapper_that_prints_and_makes_a_folder_before_sbatch_is_imported_for_its_document():
    """``echo`` is the wrapper's own report, left out; ``mkdir -p`` runs first in the job."""
    wrapper = ("#!/bin/bash\nRUN=$1\necho \"submitting $RUN\"\nmkdir -p logs/$RUN\nsbatch <<EOT\n#!/bin/bash\n"
               "#SBATCH --account=def-x\n#SBATCH --time=1:00:00 --gpus-per-node=1\npython train.py --run $RUN\nEOT\n")
    imported = import_script(wrapper, name="wrapped", profile="fir")
    assert imported.spec["kind"] == "gpu" and imported.spec["environment"]["setup"] == ["RUN=$1", "mkdir -p logs/$RUN"]
    assert not any("import the job script it submits" in n.reason for n in imported.notes)


@pytest.mark.parametrize("before, after, setup", [
    ('mkdir -p logs/$RUN || { echo "no logs"; exit 1; }\n', "", ["RUN=$1", 'mkdir -p logs/$RUN || { echo "no logs"; exit 1; }']),
    ("", 'if [ $? -ne 0 ]; then echo "submission failed"; exit 1; fi\n', ["RUN=$1"]),
])
def test_a_wrapper_that_checks_its_mkdir_or_its_sbatch_is_imported_for_its_document(before, after, setup):
    wrapper = (f"#!/bin/bash\nRUN=$1\n{before}sbatch <<EOT\n#!/bin/bash\n#SBATCH --account=def-x\n"
               f"#SBATCH --time=1:00:00 --gpus-per-node=1\npython train.py --run $RUN\nEOT\n{after}")
    imported = import_script(wrapper, name="wrapped", profile="fir")
    assert imported.spec["kind"] == "gpu" and imported.spec["environment"]["setup"] == setup


@pytest.mark.parametrize("before", ["cd run\n", "RUN=$1; shift\n", "RUN=$(date)\nexport RUN\n"])
def test_a_wrapper_that_does_more_before_sbatch_is_a_to_do(before):
    wrapper = f"#!/bin/bash\n{before}sbatch <<EOT\n#!/bin/bash\n#SBATCH --account=def-x\n#SBATCH --time=1:00:00\n./app\nEOT\n"
    imported = import_script(wrapper, name="wrapped", profile="fir")
    assert any("import the job script it submits" in n.reason for n in imported.notes if n.outcome == "to do")


def test_a_virtualenv_the_job_unpacks_into_slurm_tmpdir_is_activated_as_written():
    """cp venv.tar.gz $SLURM_TMPDIR; tar -x there; source $SLURM_TMPDIR/.venv/bin/activate: no
    line makes the venv, so slurmkit must not make an empty one instead, nor unpack the archive
    before the line that copies it there."""
    lines = ["cp ~/projects/def-x/venv.tar.gz $SLURM_TMPDIR", "tar xzf $SLURM_TMPDIR/venv.tar.gz -C $SLURM_TMPDIR",
             "source $SLURM_TMPDIR/.venv/bin/activate"]
    imported = import_script("#!/bin/bash\n#SBATCH -t 1:00:00\nmodule load python/3.10\n" + "\n".join(lines) + "\npython train.py\n",
                             name="v", profile="cedar")
    assert imported.spec["environment"]["setup"] == lines     # the copy stays a cp: a stage input would unpack the archive
    assert "stage" not in imported.spec and "venv" not in imported.spec["environment"]


def test_a_job_venv_activated_again_after_deactivate_keeps_its_own_folder():
    """``deactivate`` then ``source $SLURM_TMPDIR/torch_DPR/bin/activate`` stays as written: were the
    venv made as slurmkit's own ($SLURM_TMPDIR/env), that line would find nothing and the program
    would run without its packages. The venv lines stay the script's, in order."""
    script = HEAD + ("module load python/3.10\nvirtualenv --no-download $SLURM_TMPDIR/torch_DPR\n"
                     "source $SLURM_TMPDIR/torch_DPR/bin/activate\npip install --no-index torch\nmodule load faiss\n"
                     "deactivate\nsource $SLURM_TMPDIR/torch_DPR/bin/activate\npython retrieve.py\n")
    spec = import_script(script, profile="graham").spec
    setup = spec["environment"]["setup"]
    assert "virtualenv --no-download $SLURM_TMPDIR/torch_DPR" in setup and setup.count("source $SLURM_TMPDIR/torch_DPR/bin/activate") == 2
    assert not (spec["environment"].get("venv") or {}).get("packages")
    # without the second activation, the venv is slurmkit's to make
    plain = import_script(script.replace("deactivate\nsource $SLURM_TMPDIR/torch_DPR/bin/activate\n", ""), profile="graham").spec
    assert plain["environment"]["venv"]["packages"] == ["torch"]
