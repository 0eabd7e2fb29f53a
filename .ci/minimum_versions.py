"""Print pip constraints pinning every dependency in pyproject.toml to its floor (``name==floor``),
one a line: .ci/minimum-versions installs with them, so that the floors CI tests are the ones
the metadata declares, with no second list to keep in step."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: a requirement as pyproject.toml writes them: "name>=floor[,<cap]" (no markers, no extras).
REQUIREMENT = re.compile(r"^([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)\s*(,\s*<\s*[0-9][0-9A-Za-z.]*)?$")


def dependencies(text: str, key: str = "dependencies") -> list:
    """The strings of a list in pyproject.toml: ``[project] dependencies``, or an extra's
    (``test``); read without tomllib, absent before Python 3.11."""
    block = re.search(rf"^{key} = \[(.*?)^\]", text, re.S | re.M)
    if block is None:
        raise SystemExit(f"pyproject.toml: no {key} list")
    return re.findall(r'^\s*"([^"]+)"', block.group(1), re.M)


def floors(text: str) -> list:
    """``name==floor`` for each dependency; one without a ``>=`` floor is an error, since CI could not test it."""
    pins = []
    for requirement in dependencies(text):
        match = REQUIREMENT.match(requirement)
        if match is None:
            raise SystemExit(f"pyproject.toml: dependency {requirement!r} has no floor (write name>=VERSION[,<CAP])")
        pins.append(f"{match.group(1)}=={match.group(2)}")
    return pins


if __name__ == "__main__":
    # --test: the test extra's requirements as they are written (the tools the tests run).
    TEXT = (ROOT / "pyproject.toml").read_text()
    LINES = dependencies(TEXT, "test") if sys.argv[1:] == ["--test"] else floors(TEXT)
    sys.stdout.write("".join(line + "\n" for line in LINES))
