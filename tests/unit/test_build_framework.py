"""``slurmkit build --spec JOB --framework F``: the option wins over the job's framework."""

from slurmkit.api.job import Job
from slurmkit.build.builds import build_spec

from .test_builds import DDP_SPEC
from .test_cli_jobs import controlled_environment, write_spec  # noqa: F401 (fixture)


def test_a_framework_given_with_a_spec_overrides_the_jobs_framework():
    job = Job.from_yaml(write_spec(DDP_SPEC))
    spec = build_spec([], job.spec, framework="tensorflow")
    assert spec.launch.framework == "tensorflow"
    assert spec.environment.venv.packages == ("torch==2.3.0",)   # the job's venv: what decides the cache key


def test_without_the_option_the_build_job_keeps_the_jobs_framework():
    job = Job.from_yaml(write_spec(DDP_SPEC))
    assert build_spec([], job.spec).launch.framework == "pytorch"
