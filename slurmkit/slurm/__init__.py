"""Talking to SLURM: sbatch with a submission token, the registry, handles, monitoring, and the SSH transport."""
