"""bench/import_corpus.py's counting, on a folder of three short scripts written for this test:
what it reports must be what happened (a crash is counted and fails the run; a refusal has its
class; the cluster a script was written for is told right)."""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("import_corpus", ROOT / "bench" / "import_corpus.py")
bench = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench)

HEAD = "#!/bin/bash\n#SBATCH --account=def-prof --time=1:00:00\n"
SCRIPTS = {
    "plain.sh": HEAD + "python run.py\n",
    "p100.sh": HEAD + "#SBATCH --gres=gpu:p100:1\n# written for Graham\npython train.py\n",
    "boom.sh": HEAD + "python boom.py\n",
    "computed.sh": HEAD + "module load python/3.11\neval \"$(cat cmd.txt)\"\npython run.py\n",
}


def one_sided(monkeypatch):
    """computed.sh's eval runs in both scripts alike, which verification notes and does not count as
    found; as if only one script had it, it is a finding, which the counts below are about."""
    from slurmkit.port import verify

    monkeypatch.setattr(verify, "_not_traced", lambda old, new: [
        verify.Difference("untraceable", t, f"not traced: {t}") for t in dict.fromkeys(old.untraceable + new.untraceable)])


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    folder = tmp_path / "scripts"
    folder.mkdir()
    for name, text in SCRIPTS.items():
        (folder / name).write_text(text)
    (folder / "COMMIT").write_text("0123abcd\n")
    monkeypatch.chdir(tmp_path)
    return folder


def test_the_bench_counts_each_outcome_and_a_crash_fails_the_run(corpus, monkeypatch, capsys):
    from slurmkit.port import porting

    real = porting.import_script

    def crashing(text, name=None, profile=None):
        if "boom" in text:
            raise ValueError("a bug")
        return real(text, name=name, profile=profile)

    monkeypatch.setattr(porting, "import_script", crashing)
    one_sided(monkeypatch)
    assert bench.main([str(corpus), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    counts = result["counts"]
    assert (counts["scripts"], counts["imported"], counts["import crashed"], counts["crashed (any step)"]) == (4, 3, 1, 1)
    # Graham is retired (and its p100s): check refuses to submit the imported specs for that alone,
    # which is counted apart from the specs' own faults (none here)
    assert (counts["imported passes check"], counts["imported refused by check"]) == (3, 0)
    assert counts["imported for a retired cluster (check refuses to submit it)"] == 3
    assert (counts["ported"], counts["ported passes check"]) == (3, 3)
    assert result["classes"]["crash"] == {"import: ValueError in test_bench_import_corpus.py:crashing": 1}
    assert not result["classes"].get("check refused (first error)")
    assert result["targets"] == {"fir": 3}
    assert result["corpus"]["commit"] == "0123abcd"
    # plain.sh verifies equal; computed.sh evals text it computes, which is never run: a to-do (one_sided)
    assert counts["verified equal (import and port)"] >= 1
    assert (counts["  found in the import"], counts["silently different after verification"]) == (1, 0)
    assert "not traced: …: eval of text the script computed, not run" in result["classes"]["import: found by verification"]


def test_a_finding_that_did_not_become_a_to_do_is_counted_silently_different(corpus, monkeypatch, capsys):
    from slurmkit.port import verify

    def forgetting(script, imported, profile=None):
        return imported, verify.verify_import(script, imported, profile)   # the findings, but no to-do written

    one_sided(monkeypatch)
    monkeypatch.setattr(verify, "verified_import", forgetting)
    monkeypatch.setattr(verify, "verified_port", lambda original, ported, source: (ported, verify.Verification()))
    bench.main([str(corpus), "--json"])
    counts = json.loads(capsys.readouterr().out)["counts"]
    assert counts["silently different after verification"] == 1   # computed.sh


def test_no_verify_leaves_the_verification_counts_out(corpus, capsys):
    bench.main([str(corpus), "--json", "--no-verify"])
    result = json.loads(capsys.readouterr().out)
    assert result["verification"] == "skipped (--no-verify)" and "verified equal (import and port)" not in result["counts"]


@pytest.mark.parametrize("text, cluster", [
    ("#SBATCH --gres=gpu:v100l:1\n", ("cedar", "gpu type")),
    ("#SBATCH --gpus-per-node=a100:4\n", ("narval", "gpu type")),
    ("#SBATCH --gres=gpu:t4:1\n# cores: 6 on Cedar, 16 on Graham\n", ("graham", "named")),
    ("# Graham or Cedar\n#SBATCH --gres=gpu:1\n", ("graham", "named")),
    ("module load NiaEnv/2019b\n", ("niagara", "hinted")),
    ("python x.py\n", ("cedar", "default")),
])
def test_the_cluster_a_script_was_written_for_is_the_named_one_that_had_its_gpus(text, cluster):
    assert bench.written_for(text) == cluster


def test_a_reason_class_keeps_no_names_numbers_or_variables_of_the_script():
    assert bench.reason_class("error: job.yaml:8: stage.outputs.0.to: '$HOME/x' is ${out_dir} of 3 GiB") == \
        "stage.outputs.N.to: '…' is $… of N GiB"
