"""What the job's own lines export reaches its programs as in the script they came from.

slurmkit runs environment.setup under set -a by default, so that a hand-written spec's
``DATA=/scratch/x`` reaches the program. An imported script's lines are the script's: a name it
assigned without export (``LD_PRELOAD=...``) reached none of its programs, and must not start to
(environment.allexport: false). Verification watches every name the old script assigns, so that
an export the import got wrong is a difference, not something declared."""

import subprocess

from slurmkit.port import verify
from slurmkit.port.porting import Imported, import_script
from slurmkit.render.render import render
from slurmkit.resolve.resolve import resolve
from slurmkit.sites.profiles import load_profile
from slurmkit.spec.spec import spec_from_mapping

HEAD = "#!/bin/bash\n#SBATCH --account=def-x --time=1:00:00\n"
UNEXPORTED = "LD_PRELOAD=/usr/lib64/libstdc++.so.6\nexport DATA=/project/def-x/data\nOUT=$DATA/out; mkdir -p $OUT\n"


def rendered(spec, profile="narval"):
    resolution = resolve(spec_from_mapping(spec), load_profile(profile))
    assert resolution.plan is not None, resolution.errors
    return render(resolution.plan)


def differences(script, mapping):
    """(what, subject) of each difference verification found and nothing declared."""
    verification = verify.verify_import(HEAD + script, Imported(mapping, (), ()), "narval")
    assert not verification.not_run, verification.not_run
    return {(d.what, d.subject) for d in verification.findings}


def test_an_import_keeps_what_the_script_did_not_export_from_its_programs():
    script = UNEXPORTED + "./app --out $OUT\n"
    result = import_script(HEAD + script, name="job", profile="narval")
    environment = result.spec["environment"]
    assert environment["allexport"] is False
    new = rendered(result.spec)
    assert "set -a" not in new and "set +a" not in new
    assert "export OUT" not in new   # the launch line is expanded by the script's own shell
    subprocess.run(["bash", "-n"], input=new, text=True, check=True)
    assert differences(script, result.spec) == set()


def test_lines_between_the_scripts_own_set_a_and_set_plus_a_count_as_exported():
    result = import_script(HEAD + "set -a\nX=1\nset +a\n./app $X\n", name="job", profile="narval")
    assert "allexport" not in result.spec.get("environment", {})
    result = import_script(HEAD + "set -a\nX=1\nset +a\nY=2\n./app $X $Y\n", name="job", profile="narval")
    assert result.spec["environment"]["allexport"] is False


def test_verification_sees_a_name_the_old_script_did_not_export_reach_the_program():
    """The mapping without allexport: false (the import's rule removed): the program's
    environment differs, and nothing declares it."""
    mapping = {"name": "job", "account": "def-x", "kind": "serial", "resources": {"time": "1h"},
               "environment": {"variables": {"DATA": "/project/def-x/data"},
                               "setup": ["LD_PRELOAD=/usr/lib64/libstdc++.so.6", "OUT=$DATA/out; mkdir -p $OUT"]},
               "launch": {"command": "./app --out $OUT"}}
    found = differences(UNEXPORTED + "./app --out $OUT\n", mapping)
    assert found == {("env", "LD_PRELOAD"), ("env", "OUT")}
    mapping["environment"]["allexport"] = False
    assert differences(UNEXPORTED + "./app --out $OUT\n", mapping) == set()


def test_a_shell_launch_line_still_reads_the_names_the_setup_lines_assign():
    """launch.shell runs in a bash of its own: under allexport: false the names it reads are
    exported after the setup lines, and only those."""
    spec = {"name": "job", "account": "def-x", "kind": "serial", "resources": {"time": "1h"},
            "environment": {"setup": ["OUT=/scratch/out", "SEED=3"], "allexport": False},
            "launch": {"shell": "./app --seed 1 > $OUT/log"}}
    script = rendered(spec)
    assert "\nexport OUT  # launch.shell reads them in a bash of its own\n" in script
    assert "SEED" not in script.split("eval SEED=3", 1)[1]
    spec["environment"].pop("allexport")
    assert "\nset -a +u\n" in rendered(spec)


def test_an_export_import_moved_before_the_jobs_lines_is_declared_for_the_programs_before_it():
    """``export FOO=/bar`` becomes environment.variables, exported before every line: sed, run
    before the export in the old script, now has FOO. slurmkit made that move: declared."""
    script = "X=$(sed -n 1p list.txt)\nexport FOO=/bar\n./prog $X\n"
    result = import_script(HEAD + script, name="job", profile="narval")
    assert result.spec["environment"]["variables"] == {"FOO": "/bar"}
    verification = verify.verify_import(HEAD + script, result, "narval")
    assert not verification.not_run and verification.findings == (), verification.findings
    assert ("env", "FOO") in {(d.what, d.subject) for d in verification.declared}
