"""The vocabulary every stage shares: records, units, errors, kinds, launchers, GPU names,
sbatch options, the plan, and the file and YAML primitives. Imports nothing else of slurmkit."""
