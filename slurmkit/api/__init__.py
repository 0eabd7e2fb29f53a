"""The Python face: Job, submit_function, and the scaffold that slurmkit new writes."""
