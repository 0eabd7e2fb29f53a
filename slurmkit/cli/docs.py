"""``slurmkit docs``: the documentation pages that come with slurmkit, which help text names.

The pages are in the wheel (package data, see setup.cfg), so ``slurmkit docs json`` works
wherever slurmkit is installed, not only in a checkout of its repository."""

import click

from slurmkit.cli.main import fail as _fail
from slurmkit.core.errors import SlurmkitError, closest
from slurmkit.core.output import message_line, verbatim


@click.command("docs")
@click.argument("name", required=False)
@click.option("--path", "show_path", is_flag=True, help="Print the page's file name instead of its text.")
def docs_command(name, show_path):
    """Print a page of slurmkit's documentation (json, laptop, moving, troubleshooting, ...).

    Without NAME, list the pages and the folder they are in."""
    from slurmkit.core.bundled import doc_page, docs_dir

    if not name:
        folder = docs_dir()
        message_line(f"pages in {folder} (slurmkit docs NAME prints one):", err=False)
        for page in sorted(folder.glob("*.md")):
            message_line(f"  {page.stem}", err=False)
        return
    try:
        page = doc_page(name)
    except FileNotFoundError as missing:
        pages = missing.args[0]
        close = closest(name.split("#")[0].rsplit("/", 1)[-1].removesuffix(".md"), pages)
        hint = f"did you mean '{close}'? " if close else ""
        _fail(SlurmkitError(f"no documentation page {name!r}; {hint}pages: {', '.join(pages)}"))
    if show_path:
        message_line(str(page), err=False)
    else:
        verbatim(page.read_text(encoding="utf-8"))
