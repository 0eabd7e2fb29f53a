"""Where the bundled templates and site profiles live.

In the repository they are the top-level folders ``templates/`` and ``site_profiles/``; in an
installed wheel they are the packages ``slurmkit/templates`` and ``slurmkit/site_profiles``
(see ``[tool.setuptools.package-dir]`` in pyproject.toml). Both layouts are found without importing anything heavy.
"""

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent   # slurmkit/, above core/


def bundled_dir(name: str) -> Path:
    """Return the folder of bundled data ``name`` ("templates" or "site_profiles").

    The installed layout is tried first, then the source checkout; a missing folder is an
    installation error, so it raises rather than returning a path that does not exist.
    """
    for candidate in (_PACKAGE_DIR / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"slurmkit is installed without its {name}/ folder (looked in {_PACKAGE_DIR})")


def templates_dir() -> Path:
    return bundled_dir("templates")


def profiles_dir() -> Path:
    return bundled_dir("site_profiles")
