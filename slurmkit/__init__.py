"""slurmkit: correct, efficient sbatch scripts for the Alliance clusters.

Importing this package is cheap on purpose: the CLI imports it on every call, so heavy
modules (submitit, rich, jinja2) are imported only by the stages that need them.
"""

__version__ = "0.1.0"
