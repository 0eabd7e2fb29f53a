"""How well a finished job used what it asked for, and writing that advice back into the spec."""
