"""Copy the Alliance job scripts of a jobspec-database mirror into a folder, for import_corpus.py.

The public repository hariharan-devarajan/jobspec-database gathers ~41,000 job scripts from
GitHub under data/<owner>/<repo>/..., with each repository's other files under jobspec-cfg/.
A script is taken when it has an ``#SBATCH`` line and it names the Alliance:

- an allocation (``def-``, ``rrg-``, ``ctb-``, ``rpp-`` followed by a name), or
- the Alliance software stack (``StdEnv/``, ``NiaEnv``, ``CC_CLUSTER``, ``scipy-stack``,
  ``computecanada``, ``alliancecan``), or
- a legacy cluster by name, as a whole word (graham, cedar, beluga/béluga, narval, niagara).

The test is textual, so a few scripts from elsewhere come with them (a group folder named
CEDAR at another university); the bench counts them like the rest. Identical files (the same
blob under two forks) are copied once. The scripts are other people's code: they go to OUT,
outside the repository, and are never committed; OUT/MANIFEST.tsv lists blob and path, and
OUT/COMMIT the mirror's commit, so that a run can be repeated exactly.

Usage: python bench/alliance_corpus.py GITDIR OUT
"""

import subprocess
import sys
from pathlib import Path

SBATCH = r"^\s*#SBATCH"
MARKS = (r"\b(def|rrg|ctb|rpp)-[A-Za-z0-9_]",
         r"StdEnv/|NiaEnv|CC_CLUSTER|scipy-stack|computecanada|alliancecan",
         r"\b(graham|cedar|b[eé]luga|narval|niagara)\b")


def _git(gitdir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, text=True, check=False).stdout


def _matching(gitdir: str, pattern: str) -> set:
    """Paths under data/ (not a repository's jobspec-cfg/ files) whose text matches ``pattern``."""
    out = _git(gitdir, "grep", "-z", "-l", "-I", "-i", "-P", pattern, "HEAD", "--", "data")
    return {name.split(":", 1)[1] for name in out.split("\0") if name and "/jobspec-cfg/" not in name}


def selected(gitdir: str) -> list:
    with_sbatch = _matching(gitdir, SBATCH)
    marked = set().union(*(_matching(gitdir, mark) for mark in MARKS))
    return sorted(with_sbatch & marked)


def main(gitdir: str, out: str) -> None:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    paths = selected(gitdir)
    listing = _git(gitdir, "ls-tree", "-z", "-r", "HEAD", "--", *paths) if paths else ""
    blobs: dict = {}
    for line in filter(None, listing.split("\0")):
        meta, path = line.split("\t", 1)
        blobs.setdefault(meta.split()[2], path)     # the first path of each distinct blob
    manifest = []
    for blob, path in sorted(blobs.items(), key=lambda item: item[1]):
        data = subprocess.run(["git", "--git-dir", gitdir, "cat-file", "blob", blob], capture_output=True, check=True).stdout
        name = path[len("data/"):].replace("/", "__")
        (folder / name).write_bytes(data)
        manifest.append(f"{blob}\t{path}")
    (folder / "MANIFEST.tsv").write_text("\n".join(manifest) + "\n")
    (folder / "COMMIT").write_text(_git(gitdir, "rev-parse", "HEAD"))
    print(f"{len(manifest)} scripts ({len(paths)} paths) from {gitdir} into {folder}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.rsplit("Usage: ", 1)[1])
    main(sys.argv[1], sys.argv[2])
