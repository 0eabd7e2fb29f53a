"""``slurmkit pack DIR -o OUT``: archive a dataset once for fast staging into $SLURM_TMPDIR."""

import os

import click

from slurmkit.cli.main import fail
from slurmkit.core.errors import SlurmkitError
from slurmkit.core.output import message_line


@click.command("pack")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--output", "-o", required=True, type=click.Path(),
              help="data.tar, data.tar.zst, a data.pack folder (shards for parallel extraction), "
                   "or a data.sqfs squashfs image (mounted, not extracted).")
@click.option("--shards", type=click.IntRange(1, 256), default=4, show_default=True, help="Shards of a .pack folder.")
@click.option("--compression", type=click.Choice(["auto", "zstd", "none"]), default="auto", show_default=True,
              help="auto: zstd when it is installed and a sample of the data compresses.")
@click.option("--force", is_flag=True, help="Replace OUTPUT (and its manifest) if it exists.")
def pack_command(folder, output, shards, compression, force):
    """Pack FOLDER once; stage the result (stage: inputs: [OUTPUT]) in every job."""
    from slurmkit.core.archives import IMAGE_SUFFIXES
    from slurmkit.resolve.staging import pack

    manifest_beside = f"{output}.manifest.json"
    # what pack writes, there already: replaced only with --force (a link, pipe, device, or a folder
    # where a file goes, is pack's own refusal)
    existing = [path for path in (output, manifest_beside) if not os.path.islink(path)
                and (os.path.isfile(path) or (os.path.isdir(path) and path == output and output.endswith(".pack")))]
    if existing and not force:
        fail(SlurmkitError(f"{existing[0]} already exists; use --force to overwrite"))
    from slurmkit.core.progress import meter

    try:
        with meter(f"packing {os.path.basename(os.path.normpath(folder))}") as bar:   # a bar on a terminal only
            manifest = pack(folder, output, shards=shards, compression=compression, tell=message_line, meter=bar)
    except SlurmkitError as error:
        fail(error)
    count = len(manifest.shards)
    form = "a squashfs image" if output.lower().endswith(IMAGE_SUFFIXES) else f"{count} shard{'s' if count > 1 else ''}"
    message_line(f"packed {manifest.files} files, {manifest.bytes / (1 << 20):.1f} MiB, into {output} "
               f"({form}, compression {manifest.compression})", err=False)
    # The pack holds FOLDER's contents: `to` names the folder the job finds them in.
    name = os.path.basename(os.path.normpath(folder))
    message_line(f"stage it in a job with: stage: {{inputs: [{{from: {output}, to: {name}}}]}} "
               f"(the job finds the files in $SLURM_TMPDIR/{name})", err=False)
