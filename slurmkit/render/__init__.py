"""Plan -> sbatch script text, through sandboxed Jinja templates that only format."""
