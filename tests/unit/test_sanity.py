

def test_an_abbreviated_long_option_is_read_as_sbatch_reads_it():
    """getopt_long takes a unique prefix (``--out`` is --output); an ambiguous one (``--mem-per``:
    --mem-per-cpu or --mem-per-gpu) sbatch refuses, and it stays as written."""
    from slurmkit.core.sbatch_options import full_long_name

    assert [full_long_name(n) for n in ("out", "arr", "accou", "output", "mem", "mem-per", "tim", "nosuch")] == [
        "output", "array", "account", "output", "mem", "mem-per", "tim", "nosuch"]
