"""The command line: version, help, and the promise that start-up imports nothing heavy."""

import subprocess
import sys

from click.testing import CliRunner

import slurmkit
from slurmkit.cli.main import main


def test_version_prints_the_package_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"slurmkit, version {slurmkit.__version__}\n"


def test_help_lists_usage_and_exits_zero():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    assert "Usage: " in result.output and "--version" in result.output


def test_unknown_command_is_bad_input():
    result = CliRunner().invoke(main, ["frobnicate"])
    assert result.exit_code == 2
    assert "No such command 'frobnicate'" in result.output


def test_help_imports_no_heavy_module():
    heavy = ["submitit", "rich", "jinja2", "yaml", "tree_sitter"]
    code = (
        "import sys\n"
        "from slurmkit.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {heavy!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
