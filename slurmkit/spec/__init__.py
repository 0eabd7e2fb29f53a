"""What the user asked for: the job spec, read from job.yaml or built in Python, and its JSON Schema."""
