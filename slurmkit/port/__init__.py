"""Existing sbatch scripts into job specs (import), and specs onto another cluster (port)."""
