"""A port that moves Python rewrites the words that name the old version (pythonwords.py)."""

import pytest

from slurmkit.port.pythonwords import moved_python_words, python_version


@pytest.mark.parametrize("text, moved", [
    ("python3.9 main.py", "python3.12 main.py"),
    ("srun python3.9 -u main.py", "srun python3.12 -u main.py"),
    ("cp fix.py $SLURM_TMPDIR/venv/lib/python3.9/site-packages/x/", "cp fix.py $SLURM_TMPDIR/venv/lib/python3.12/site-packages/x/"),
    ("python3.12 main.py", "python3.12 main.py"),          # already the job's
    ("python main.py", "python main.py"),
    ("python3 main.py", "python3 main.py"),                # any python 3: the module's
    ("cpython3.9 x", "cpython3.9 x"),                     # another program
    ("$python3.9 x", "$python3.9 x"),
    ("module load python/3.9.6", "module load python/3.9.6"),   # a module: the module port moves it
    ("python3.10 a.py", "python3.12 a.py"),               # 3.10, not 3.1 followed by 0
])
def test_each_word_of_another_python_is_written_for_the_jobs(text, moved):
    assert moved_python_words(text, "3.12")[0] == moved


def test_the_reason_names_the_word_and_the_version_once():
    _, reasons = moved_python_words("python3.9 a.py && python3.9 b.py", "3.12")
    assert reasons == ["python3.9 (a command) is python3.12: the job loads Python 3.12 now"]


def test_the_version_is_the_python_modules_major_and_minor():
    assert python_version(["StdEnv/2023", "python/3.12.4"]) == "3.12"
    assert python_version(["gcc/12.3"]) is None


def test_port_moves_python_words_in_setup_variables_and_launch(tmp_path, monkeypatch):
    import yaml
    from click.testing import CliRunner

    from slurmkit.cli.main import main

    spec = {"name": "fit", "profile": "cedar", "account": "def-prof", "resources": {"time": "1h"},
            "environment": {"modules": ["python/3.9.6"], "setup": ["cp fix.py $SLURM_TMPDIR/venv/lib/python3.9/site-packages/"],
                            "variables": {"PYTHONPATH": "$HOME/lib/python3.9/site-packages", "OMP_PROC_BIND": "close"}},
            "launch": {"command": "python3.9 fit.py"}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(spec))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["port", "job.yaml", "--to", "fir", "-o", "fir.yaml"])
    assert result.exit_code == 0, result.output
    ported = yaml.safe_load((tmp_path / "fir.yaml").read_text())
    assert ported["environment"]["setup"] == ["cp fix.py $SLURM_TMPDIR/venv/lib/python3.12/site-packages/"]
    assert ported["environment"]["variables"] == {"PYTHONPATH": "$HOME/lib/python3.12/site-packages", "OMP_PROC_BIND": "close"}
    assert ported["launch"]["command"] == "python3.12 fit.py"
    assert result.output.count("is python3.12: the job loads Python 3.12 now") == 3
