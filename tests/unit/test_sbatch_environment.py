"""sbatch's input environment variables replace what the script says (man sbatch, INPUT
ENVIRONMENT VARIABLES, Slurm 22.05): each one set is a warning naming what it changes."""

from slurmkit.api.job import Job
from slurmkit.spec.sbatch_environment import INPUT_VARIABLES, findings

SPEC = dict(name="env", profile="nibi", account="def-x", kind="serial",
            resources={"time": "3h", "mem": "4G"}, launch="python run.py")


def _warnings(job):
    return [f for f in job.check() if f.level == "warning" and "sbatch reads its environment" in f.message]


def test_a_variable_for_an_option_the_script_sets_names_the_line_it_replaces(monkeypatch):
    monkeypatch.setenv("SBATCH_TIMELIMIT", "1:00:00")
    (warning,) = _warnings(Job(**SPEC))
    assert warning.field == "resources.time"
    assert warning.message == ("$SBATCH_TIMELIMIT=1:00:00 replaces the script's #SBATCH --time=0-03:00:00 (sbatch reads "
                               "its environment after the #SBATCH lines); unset SBATCH_TIMELIMIT to run the job as rendered")


def test_a_variable_for_an_option_the_script_does_not_set_says_what_it_adds(monkeypatch):
    monkeypatch.setenv("SBATCH_EXCLUSIVE", "")
    monkeypatch.setenv("SBATCH_PARTITION", "debug")
    messages = [w.message for w in _warnings(Job(**SPEC))]
    assert messages == [
        "$SBATCH_EXCLUSIVE (set, empty) adds --exclusive to the job, which the script does not ask for (sbatch reads its "
        "environment after the #SBATCH lines); unset SBATCH_EXCLUSIVE to run the job as rendered",
        "$SBATCH_PARTITION=debug adds --partition=debug to the job, which the script does not ask for (sbatch reads its "
        "environment after the #SBATCH lines); unset SBATCH_PARTITION to run the job as rendered"]


def test_sbatch_wait_says_it_changes_sbatch_itself(monkeypatch):
    monkeypatch.setenv("SBATCH_WAIT", "1")
    (warning,) = _warnings(Job(**SPEC))
    assert "sbatch waits for the job to end before it returns" in warning.message


def test_none_set_none_reported_and_the_script_is_the_same_bytes(monkeypatch):
    plain = Job(**SPEC).render()
    assert _warnings(Job(**SPEC)) == []
    monkeypatch.setenv("SBATCH_TIMELIMIT", "1:00:00")
    assert Job(**SPEC).render() == plain


def test_options_of_slurmkits_own_command_line_are_not_reported():
    assert findings((), {"SBATCH_OUTPUT": "x", "SBATCH_ERROR": "y", "SBATCH_DEBUG": "1"}) == []


def test_every_variable_sbatch_documents_here_is_known():
    """Against the installed manual page (Debian's slurm-client, Slurm 22.05): a variable
    added there and not here fails this test. SBATCH_ACCOUNT is accounts.py's; DEBUG, ERROR
    and OUTPUT are no job options that slurmkit's own call leaves to the environment."""
    import gzip
    import re
    from pathlib import Path

    page = Path("/usr/share/man/man1/sbatch.1.gz")
    assert page.exists(), "slurm-client's sbatch.1.gz is missing: run tests/cluster/cluster.sh install"
    text = gzip.decompress(page.read_bytes()).decode("utf-8", "replace")
    section = text.split('.SH "INPUT ENVIRONMENT VARIABLES"')[1].split('.SH "OUTPUT ENVIRONMENT VARIABLES"')[0]
    documented = set(re.findall(r"^\\fB(SBATCH_[A-Z0-9_]+)", section, re.M))
    assert len(documented) > 40
    assert documented - set(INPUT_VARIABLES) == {"SBATCH_ACCOUNT", "SBATCH_DEBUG", "SBATCH_ERROR", "SBATCH_OUTPUT"}
    assert set(INPUT_VARIABLES) - documented == {"SLURM_CLUSTERS", "SLURM_HINT"}  # "SBATCH_X or SLURM_X" lines
