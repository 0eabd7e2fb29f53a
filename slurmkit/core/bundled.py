"""Where the bundled templates, site profiles and documentation pages live.

In the repository they are the top-level folders ``templates/``, ``site_profiles/`` and ``docs/``;
in an installed wheel they are the packages ``slurmkit/templates``, ``slurmkit/site_profiles`` and
``slurmkit/docs`` (see ``[tool.setuptools.package-dir]`` in pyproject.toml). Both layouts are found
without importing anything heavy.
"""

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent   # slurmkit/, above core/


def bundled_dir(name: str) -> Path:
    """Return the folder of bundled data ``name`` ("templates", "site_profiles" or "docs").

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


def docs_dir() -> Path:
    return bundled_dir("docs")


def doc_page(name: str) -> Path:
    """The documentation page ``name`` (``json``, ``json.md`` or ``docs/json.md``; an ``#anchor``
    is ignored), as help text and messages name them; FileNotFoundError with the pages there are."""
    stem = name.split("#")[0].strip()
    stem = stem[len("docs/"):] if stem.startswith("docs/") else stem
    stem = stem[:-len(".md")] if stem.endswith(".md") else stem
    folder = docs_dir()
    page = folder / f"{stem}.md"
    if "/" in stem or not stem or not page.is_file():
        raise FileNotFoundError(sorted(path.stem for path in folder.glob("*.md")))
    return page
