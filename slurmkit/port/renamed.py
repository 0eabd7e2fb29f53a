"""Software the Alliance renamed: a module, and the command it puts on PATH, that a script of
an older day loads under its old name.

Singularity was deprecated in favour of Apptainer on all the Alliance's clusters (the
Singularity page: "Please use Apptainer instead"); the Apptainer page loads it with ``module
load apptainer`` and says that Apptainer renamed every executable: "instead of using the
singularity command one uses the apptainer command", and that Apptainer 1 is backwards
compatible with Singularity. A ported script that still loads ``singularity/3.8`` would stop at
``module load``; ``port`` loads ``apptainer`` (the version the site's default) and runs
``apptainer`` where the script ran ``singularity``, each said in a ``changed:`` line.

Niagara's own stack named Intel's Math Kernel Library ``mkl`` ("Modules specific to Niagara":
"Intel's Math Kernel Library, for use with gcc modules"); the Alliance's stacks name the same
library ``imkl`` (the module lists of every architecture: "imkl", Intel oneAPI Math Kernel
Library), so a NiaEnv job's ``mkl/2022u2`` is ``imkl`` on Trillium. Its commands keep their names.
"""

from __future__ import annotations

import re
from typing import Dict, List, Tuple

#: {old module family: (new module, {old command: new}, what the new one does, source)}
RENAMED_MODULES: Dict[str, Tuple[str, Dict[str, str], str, str]] = {
    "singularity": ("apptainer", {"singularity": "apptainer"}, "which runs its containers as it did",
                    "https://docs.alliancecan.ca/wiki/Singularity/en, https://docs.alliancecan.ca/wiki/Apptainer/en"),
    "mkl": ("imkl", {}, "the same Intel Math Kernel Library under the Alliance's name",
            "https://docs.alliancecan.ca/wiki/Modules_specific_to_Niagara, https://docs.alliancecan.ca/wiki/Modules_avx2"),
}


def renamed_modules(modules: List[str]) -> Tuple[List[str], List[str], Dict[str, str]]:
    """The modules with each renamed one in its new name (once), the reasons, and the commands
    to rename in the job's lines."""
    kept: List[str] = []
    reasons: List[str] = []
    commands: Dict[str, str] = {}
    for module in modules:
        family = module.partition("/")[0]
        if family.lower() not in RENAMED_MODULES:
            kept.append(module)
            continue
        new, renames, does, source = RENAMED_MODULES[family.lower()]
        if new not in kept and new not in modules:
            kept.append(new)
        reasons.append(f"{module} is gone: {family} was renamed {new}, {does} ({source})")
        commands.update(renames)
    return kept, reasons, commands


def renamed_commands(text: str, commands: Dict[str, str]) -> Tuple[str, List[str]]:
    """``text`` with each renamed command word replaced where it is a command: first on its line
    or after ``;``, ``&&``, ``|``, ``(``, a backquote, a quote (a command held in a variable), or a launcher (``srun -n 4 singularity
    exec``); not in a path, a file name, a variable, nor as an argument (``nextflow -profile
    singularity`` names a profile of the pipeline, which keeps its name). And why."""
    reasons: List[str] = []
    for old, new in sorted(commands.items()):
        pattern = re.compile(rf"((?:^|[;&|(`\"'])\s*(?:{_STARTERS}\s+(?:-\S+\s+(?:[^-\s]\S*\s+)?)*)?){re.escape(old)}(?![\w./-])", re.M)
        if pattern.search(text):
            text = pattern.sub(lambda m: m.group(1) + new, text)
            reasons.append(f"the {old} command is {new} now (Apptainer renamed every executable)")
    return text, reasons


#: words that start the command after them (their options between)
_STARTERS = r"(?:srun|mpirun|mpiexec|exec|time|command|nohup|xargs|env|nice|timeout\s+\S+)"
