"""What a job reads that nothing provides: paths on the node-local disk, shell variables, and
files that are not on the submit host.

The command, and every other word of the spec the script expands (``venv.path``,
``venv.requirements``, ``build_cache``), is expanded once, by the batch script, under
``set -u`` (render.shell_word: ``$NAME`` and ``${NAME}`` expand, ``$$`` is a ``$``; the spec
reader has made a command line's single-quoted ``$`` a ``$$``, as a shell keeps it).
So each ``$NAME`` there must be set in the batch script's shell: by SLURM, by the login
environment that sbatch passes on, by the spec's ``environment.variables``, or by the script
slurmkit writes for this kind; a variable that each process gets for itself (``RANK``) is not
set there yet. And a path under ``$SLURM_TMPDIR`` (each node's own disk, empty when the job
starts) must be put there by a stage input, the virtualenv, a build or the checkpoint's
restore; the outputs are the program's own to write (the script makes their folders).

``unprovided_reads`` is pure (the resolver calls it with the plan); ``missing_local_paths``
looks at the disk of the submit host (``slurmkit check`` and ``submit`` call it). Both give
``(field, message)`` pairs; a message that says the job will fail is an error
(findings.level_of), the others warnings.
"""

import os
import posixpath
import re
import shlex
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from slurmkit.core.kinds import BATCH_SET_BY as _BATCH_SET_BY
from slurmkit.core.kinds import first_kind
from slurmkit.core.shellwords import REFERENCE, assigned_names

Found = Tuple[str, str]          # (spec field, message)

TMPDIR = "SLURM_TMPDIR"
#: After a $SLURM_TMPDIR reference: a closing quote ("$SLURM_TMPDIR"/data), then the path, up to
#: what ends one in a command line (space, quote, separator, glob, another $).
_TMPDIR_PATH = re.compile(r"""["']?(/[^\s"'`$;,:|&<>(){}\[\]*?=]*)?""")

#: Set in every job: by the login environment that sbatch passes on (the Alliance's $SCRATCH,
#: $PROJECT, $ARCHIVE, $BBUFFER and $CC_CLUSTER: alliance_facts.md §2.1, §5.4), by bash itself,
#: and TMPDIR, which slurmstepd sets to /tmp where the environment has none (measured on the
#: local cluster, Slurm 22.05).
LOGIN_VARIABLES = frozenset((
    "HOME", "USER", "LOGNAME", "PATH", "SHELL", "PWD", "LANG", "TERM", "TMPDIR",
    "SCRATCH", "PROJECT", "ARCHIVE", "BBUFFER", "CC_CLUSTER",
    "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "BASH", "BASH_VERSION", "BASHPID", "PPID", "UID", "EUID",
    "RANDOM", "SECONDS", "LINENO", "SHLVL", "IFS", "OPTIND",
))
#: Set by the batch script of some kinds only: name -> those kinds (kinds.py keeps it with the kinds).
BATCH_SET_BY: Dict[str, Tuple[str, ...]] = _BATCH_SET_BY
#: Set in the batch script by what the spec asks for, in any kind: name -> the spec's key.
SET_BY_SPEC: Dict[str, str] = {
    "VIRTUAL_ENV": "environment.venv (its bin/activate sets it)",
    "CUDA_VISIBLE_DEVICES": "resources.gpus (SLURM sets it for the job's GPUs)",
    "GPU_DEVICE_ORDINAL": "resources.gpus (SLURM sets it for the job's GPUs)",
}
#: Given to each process as it starts, never to the batch script: name -> who gives it.
PER_PROCESS: Dict[str, str] = {
    **dict.fromkeys(("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"),
                    f"kind {first_kind(ranks_from_slurm=True, spreads_over_nodes=True).name!r} or torchrun"),
    "TF_CONFIG": f"kind {first_kind(tf_config=True).name!r}",
    **dict.fromkeys(("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
                     "OMPI_COMM_WORLD_NODE_RANK"), "Open MPI's mpirun"),
    **dict.fromkeys(("PMI_RANK", "PMI_SIZE", "PMIX_RANK"), "the MPI launcher"),
}
#: Set in the batch step too, to the batch step's own value (0): under a launcher that starts
#: several processes, each would get that one, not its own.
SLURM_PER_TASK = ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID")
#: A variable that a module sets: EasyBuild's EBROOT<NAME> (and EBVERSION, EBDEVEL) of module
#: <name>, and the cuda module's CUDA_HOME (alliance_facts.md §3).
_MODULE_VARIABLE = re.compile(r"EB(?:ROOT|VERSION|DEVEL)([A-Z0-9]+)|(CUDA)_(?:HOME|PATH)")
#: Modules that the standard environment does not load ("StdEnv/2023 does not load CUDA",
#: site_profiles/alliance.yaml): their variables are unset unless the spec loads them. Those
#: of other modules (EBROOTGCC, EBROOTOPENMPI) may come from the standard environment itself.
NOT_IN_STDENV = ("cuda", "cudnn", "nccl")


# ------------------------------------------------------------------------ reading words


def references(word: str) -> List[str]:
    """The names that ``$NAME`` and ``${NAME}`` in ``word`` expand (not ``$$NAME``)."""
    return [match.group().strip("${}") for match in REFERENCE.finditer(word) if match.group() != "$$"]


def tmpdir_paths(word: str) -> List[str]:
    """The paths under $SLURM_TMPDIR that ``word`` names, relative to it ("" for the folder itself)."""
    paths = []
    for match in REFERENCE.finditer(word):
        if match.group().strip("${}") == TMPDIR and match.group() != "$$":
            after = _TMPDIR_PATH.match(word, match.end())   # it always matches, if only the empty string
            rest = (after.group(1) if after else None) or ""
            paths.append(posixpath.normpath("/" + rest).lstrip("/"))
    return paths


# ------------------------------------------------------------------------- what the job has


def batch_variables(plan) -> Set[str]:
    """The names the batch script of ``plan`` sets before its payload, beyond SLURM's and the login shell's."""
    names = {name for name, _ in plan.environment}
    if plan.array:
        names.update(name for name, _ in plan.array.parameters)
    rendezvous = plan.distributed and plan.distributed.rendezvous
    if rendezvous:
        names.add("MASTER_PORT")
        if plan.distributed.ranks_from_slurm or plan.distributed.master_env:
            names.add("MASTER_ADDR")
    if plan.venv:
        names.add("VIRTUAL_ENV")   # bin/activate sets it
    if any(flag in ("--gpus-per-node", "--gres", "--gpus") for flag, _ in plan.directives):
        names.update(("CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"))   # SLURM, for the batch node's GPUs
    return names


def _made_on_node(spec, plan) -> Optional[List[str]]:
    """What the script puts under $SLURM_TMPDIR before the payload, relative to it; None when an
    archive or pack is spread over $SLURM_TMPDIR itself, whose contents are unknown here."""
    made = [".slurmkit"]
    stage = spec.stage
    if stage:
        for item, step in zip(stage.inputs, plan.stage.inputs):
            if step.action in ("extract", "extract-shards") and not item.to:
                return None
            made.append(posixpath.basename(item.source.rstrip("/")) if step.action == "copy" else item.to)
        made += [out.source for out in stage.outputs]      # the program writes them (their folders are made)
        if stage.checkpoint:
            made.append(stage.checkpoint.source)
    for word in ([plan.venv.path] if plan.venv else []) + [build.cache for build in plan.builds]:
        made += [path for path in tmpdir_paths(word) if path]
    by_setup = setup_made(spec.environment.setup)
    if by_setup is None:
        return None
    return [posixpath.normpath(path) for path in made + by_setup]


#: a path under $SLURM_TMPDIR that a variable names (``$SLURM_TMPDIR/$1``, ``${SLURM_TMPDIR}/data_$i``)
_NAMED_BY_VARIABLE = re.compile(r"\$\{?SLURM_TMPDIR\}?/[^\s]*\$")
#: Setup commands that make the path they name last (mv, cp: the destination), or every one they name (mkdir).
_MAKES_LAST = ("mv", "cp", "rsync", "ln")
_MAKES_EACH = ("mkdir",)


def setup_made(lines: Sequence[str]) -> Optional[List[str]]:
    """The paths under $SLURM_TMPDIR that ``environment.setup`` makes (mkdir, mv, cp, an archive
    extracted there, a file a redirection writes), relative to it, following ``cd``; None when an
    archive is spread over $SLURM_TMPDIR itself, whose contents are unknown here. A setup that
    makes the folder the program reads is as good as a stage input: saying "nothing puts it
    there" would be false."""
    made: List[str] = []
    cwd: Optional[str] = None               # the folder under $SLURM_TMPDIR that setup is in, if any
    for words in _setup_commands(lines):
        made += [p for p in (_under_tmpdir(target, cwd) for target in _written_by_redirection(words)) if p]
        words = _without_launcher(words)
        if words and posixpath.basename(words[0]) == "cd":
            args = [w for w in words[1:] if not w.startswith("-")]
            cwd = _under_tmpdir(args[0] if args else "~", cwd)
            continue
        places = _made_by(words, cwd) if words else []
        if places is None or (places and any(_NAMED_BY_VARIABLE.search(w) for w in words[1:])):
            return None   # (a folder named by a variable, $SLURM_TMPDIR/$1 in a function: what it makes is unknown here)
        made += places
    return made


def _made_by(words: List[str], cwd: Optional[str]) -> Optional[List[str]]:
    """What one setup command makes under $SLURM_TMPDIR (setup_made); None for an archive
    spread over $SLURM_TMPDIR itself."""
    name, args = posixpath.basename(words[0]), [w for w in words[1:] if not w.startswith("-")]
    if name in _MAKES_EACH:
        return [p for p in (_under_tmpdir(a, cwd) for a in args) if p is not None]
    if name in _MAKES_LAST and len(args) >= 2:
        place = _under_tmpdir(args[-1], cwd)
        if place in ("", "."):          # into $SLURM_TMPDIR itself: each source keeps its name
            return [posixpath.basename(a.rstrip("/")) for a in args[:-1]]
        return [place] if place is not None else []
    if name in ("tar", "unzip"):
        place = _unpacked_into(words, cwd)
        if place in ("", "."):
            return None
        return [place] if place is not None else []
    return []


def _written_by_redirection(words: List[str]) -> List[str]:
    """The files a command's output is redirected into (``> FILE``, ``>> FILE``, ``2>FILE``,
    ``&> FILE``): ``scontrol show hostnames > $SLURM_TMPDIR/hosts`` makes the host list."""
    targets = []
    for index, word in enumerate(words):
        operator = re.match(r"^(?:\d|&)?>>?\|?", word)
        if operator is None:
            continue
        rest = word[operator.end():]
        target = rest or (words[index + 1] if index + 1 < len(words) else "")
        if target and not target.startswith("&"):
            targets.append(target)
    return targets


def _without_launcher(words: List[str]) -> List[str]:
    """The command a launcher runs (``srun --ntasks=1 unzip ...`` -> ``unzip ...``): it makes the
    same paths, on the node(s) srun runs it on."""
    if posixpath.basename(words[0]) not in ("srun", "mpirun", "mpiexec"):
        return words
    from slurmkit.core import launch_options

    return list(launch_options.parse(words).program)


#: bash's words that come before a command in a compound one (``do mkdir``, ``then cp``, ``{ cd``)
_KEYWORDS = frozenset(("do", "then", "else", "elif", "{", "}", "(", ")", "!", "done", "fi", "esac", "time"))


def _setup_commands(lines: Sequence[str]) -> Iterator[List[str]]:
    """The simple commands of the setup lines, as words (``;``, ``&&``, ``||``, ``|`` and line ends
    split them; a keyword before a command, ``do mkdir``, is passed over)."""
    for line in lines:
        lexer = shlex.shlex(line.replace("\n", " ;\n"), posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:                  # an unclosed quote: not read
            continue
        words: List[str] = []
        for token in tokens + [";"]:
            if token and set(token) <= set(";&|"):
                if words:
                    yield words
                words = []
            elif words or token not in _KEYWORDS:
                words.append(token)


def _under_tmpdir(word: str, cwd: Optional[str]) -> Optional[str]:
    """The path under $SLURM_TMPDIR that ``word`` names, read in ``cwd``; None when it is elsewhere."""
    paths = tmpdir_paths(word)
    if paths:
        return paths[0]
    if cwd is None or word.startswith(("/", "~", "$")):
        return None
    path = posixpath.normpath(posixpath.join(cwd, word))
    return None if path == ".." or path.startswith("../") else path


def _unpacked_into(words: List[str], cwd: Optional[str]) -> Optional[str]:
    """Where ``tar -x``/``unzip`` puts its files (``-C``/``--directory``/``-d``, else the folder setup is in)."""
    for flag, value in zip(words, words[1:]):
        if flag in ("-C", "--directory", "-d"):
            return _under_tmpdir(value, cwd)
    for word in words[1:]:
        if word.startswith("--directory="):
            return _under_tmpdir(word.split("=", 1)[1], cwd)
    extracting = words[0].endswith("unzip") or any("x" in w.lstrip("-") for w in words[1:2]) or "--extract" in words
    return cwd if extracting else None


def _covers(made: str, path: str) -> bool:
    """A folder covers what is under it, and a path under it makes the folder."""
    return made == path or path.startswith(made + "/") or made.startswith(path + "/")


def _prefix_of(prefix: str, path: str) -> bool:
    """``asm_out`` names ``asm_out.fasta`` (and ``run`` names ``run_1.log``): a program given an
    output prefix writes files whose names start with it, in the same folder."""
    folder, name = posixpath.split(prefix)
    other_folder, other = posixpath.split(path)
    return bool(name) and folder == other_folder and other[len(name):len(name) + 1] in (".", "_", "-") and other.startswith(name)


# ---------------------------------------------------------------------------- the findings


def unprovided_reads(spec, plan) -> List[Found]:
    """Paths under $SLURM_TMPDIR that nothing puts there, and variables that nothing sets, in
    every word of ``spec`` that names a path or that the script expands."""
    found = list(_unstaged_paths(spec, plan))
    found += _unnamed_stage_paths(spec, plan)
    found += _unset_variables(spec, plan)
    found += _literal_tildes(spec)
    return found


def _literal_tildes(spec) -> List[Found]:
    """A ``~`` at the start of a command word (or after its first ``=``) that a shell would
    expand (``~``, ``~/x``, ``~user``, ``~+``): slurmkit quotes every word of the command, so the
    program gets the ``~`` itself (and ``open("~/data")`` fails). The path fields (stage, venv)
    do expand ``~``; the command keeps every word as written, so this is a warning, once per
    word, with the spelling that works."""
    found, said = [], set()
    for word in spec.launch.command:
        head, equals, value = word.partition("=")
        tilde, before = (word, "") if word.startswith("~") else (value, head + "=") if equals and value.startswith("~") else ("", "")
        if not tilde or word in said:
            continue
        said.add(word)
        name = tilde[1:].split("/", 1)[0]
        advice = f"write {before + '$HOME' + tilde[1:]!r}" if not name else "write the path in full"
        found.append(("launch.command", f"{word!r}: the program gets the ~ as it is (slurmkit quotes every word "
                      f"of the command, so no shell expands it); {advice}"))
    return found


def _path_words(spec) -> Iterator[Tuple[str, str]]:
    """(field, word) for every place a spec can name a path the job reads."""
    for word in spec.launch.command:
        yield "launch.command", word
    for name, value in spec.environment.variables:
        yield f"environment.variables.{name}", value
    venv = spec.environment.venv
    if venv and venv.requirements:
        yield "environment.venv.requirements", venv.requirements


def _unstaged_paths(spec, plan) -> Iterator[Found]:
    made = _made_on_node(spec, plan)
    if made is None:
        return
    said, outputs = set(), [place for _, place, direction in _staged_places(spec, plan) if direction == "output"]
    for field, word in _path_words(spec):
        for path in tmpdir_paths(word):
            if path and (field, path) not in said and not any(_covers(m, path) for m in made) \
                    and not any(_prefix_of(path, out) for out in outputs):
                said.add((field, path))
                yield field, (f"$SLURM_TMPDIR/{path}: nothing puts it on the node (no stage input, venv, build or "
                              "checkpoint makes it), so a program that reads it finds nothing there; stage it "
                              f"(stage.inputs: [{{from: DATA, to: {path}}}]); if the program writes it, save it with "
                              f"stage.outputs ({{from: {path}, to: DESTINATION}}), or it is lost when the job ends")


def _staged_places(spec, plan) -> Iterator[Tuple[str, str, str]]:
    """(field, path under $SLURM_TMPDIR, "input" | "output") for what staging puts on the node or takes from it."""
    stage = spec.stage
    if not stage:
        return
    for i, (item, step) in enumerate(zip(stage.inputs, plan.stage.inputs)):
        place = posixpath.basename(item.source.rstrip("/")) if step.action == "copy" else item.to
        if place:                       # an archive spread over $SLURM_TMPDIR itself names no one place
            yield f"stage.inputs.{i}", posixpath.normpath(place), "input"
    for i, out in enumerate(stage.outputs):
        yield f"stage.outputs.{i}.from", posixpath.normpath(out.source), "output"
    if stage.checkpoint:
        yield "stage.checkpoint.from", posixpath.normpath(stage.checkpoint.source), "output"


def _unnamed_stage_paths(spec, plan) -> Iterator[Found]:
    """Staged places that nothing in the command names: an input the program does not read
    there was copied for nothing (it reads the shared filesystem's copy, if any), and an output
    it does not write there is "not saved", which turns a finished job into exit 74. Where the
    command names $SLURM_TMPDIR itself (``cd $SLURM_TMPDIR``, ``--root $SLURM_TMPDIR``), or
    its tasks are lines of a file, the program may find its places alone: nothing is said."""
    if spec.tasks is not None and spec.tasks.lines == "commands":
        return
    # `$$SLURM_TMPDIR` (a `$` the program's own shell expands, as in `bash -c '...'`) names it too.
    named = [path for _, word in _path_words(spec) for path in tmpdir_paths(word.replace("$$", "$"))]
    named += [path for line in spec.environment.setup for path in tmpdir_paths(line)]   # cd $SLURM_TMPDIR, mkdir -p ...
    if "" in named or "." in named:
        return
    for field, place, direction in _staged_places(spec, plan):
        if any(_covers(path, place) or (direction == "output" and _prefix_of(path, place)) for path in named):
            continue
        if direction == "input":
            yield field, (f"the command never names $SLURM_TMPDIR/{place}: unless the program looks there by itself, "
                          f"it does not read the staged copy; pass the path (e.g. --data $SLURM_TMPDIR/{place})")
        else:
            yield field, (f"the command never names $SLURM_TMPDIR/{place}: unless the program writes there by itself, "
                          f"nothing is saved and a finished job ends with exit 74; pass the path "
                          f"(e.g. --out $SLURM_TMPDIR/{place})")


def _expanded_words(spec) -> Iterator[Tuple[str, str]]:
    """(field, word) for every word the batch script expands."""
    for word in spec.launch.command:
        yield "launch.command", word
    env = spec.environment
    if env.venv and env.venv.path:
        yield "environment.venv.path", env.venv.path
    if env.venv and env.venv.requirements:
        yield "environment.venv.requirements", env.venv.requirements
    if env.build_cache:
        yield "environment.build_cache", env.build_cache


def _unset_variables(spec, plan) -> List[Found]:
    batch = batch_variables(plan) | assigned_names(spec.environment.setup)   # the job's own lines set these
    found, said = [], set()
    for field, word in _expanded_words(spec):
        for name in references(word):
            if (field, name) in said:
                continue
            said.add((field, name))
            problem = _why_unset(name, spec, plan, batch)
            if problem:
                found.append((field, problem))
    return found


def _why_unset(name: str, spec, plan, batch: Set[str]) -> str:
    """Why ``$name`` fails or misleads where the batch script expands it; "" when it is set there."""
    unbound = (f"so under set -u the job stops with '{name}: unbound variable'" if plan.nounset
               else "so it reads as empty there (environment.nounset: false)")
    if name in batch or name.startswith("_sk_"):
        return ""
    if name.startswith("SLURM_ARRAY_") and not plan.array:
        return f"${name}: SLURM sets it only in array jobs (kind {first_kind(sweeps=True).name!r}), {unbound}"
    if name in SLURM_PER_TASK and _processes(plan) > 1:
        return (f"${name}: the batch script expands the command once, so every process gets the batch script's value, "
                f"not its own; {_in_each_process(name)}")
    if name.startswith("SLURM_") or name in LOGIN_VARIABLES:
        return ""
    if name in PER_PROCESS:
        return (f"${name}: each process gets it in its environment (from {PER_PROCESS[name]}), but the batch script expands "
                f"the command once, before any process starts, and it is unset there, {unbound}; {_in_each_process(name)}")
    module = _MODULE_VARIABLE.fullmatch(name)
    if module:
        family = (module.group(1) or module.group(2)).lower().replace("cudacore", "cuda")
        loaded = any(m.split("/")[0].lower() == family for m in plan.modules)
        if loaded or (plan.modules and family not in NOT_IN_STDENV):
            return ""
        return (f"${name}: the {family} module sets it, and this job does not load it, {unbound}; "
                f"add {family}/VERSION to environment.modules")
    if name in SET_BY_SPEC:
        return f"${name}: this job does not set it, {unbound}; it is set with {SET_BY_SPEC[name]}"
    if name in BATCH_SET_BY:
        kinds = " or ".join(f"'{kind}'" for kind in BATCH_SET_BY[name])
        return (f"${name}: nothing sets it in a kind '{spec.kind}' job (kind {kinds} does), {unbound}; "
                f"use kind {kinds}, or set it in environment.variables")
    return (f"${name}: nothing sets it (not SLURM, the spec, the script or a login shell), {unbound} {EXPORTED_HEDGE}; "
            f"set it in environment.variables, or write '${name}' (single quotes keep it as written) if a "
            "shell inside the command sets it")


#: how _why_unset says that the submitting shell may still set a variable: sbatch passes its
#: environment on (--export=ALL, SLURM's default), so only submit, on this host, can tell.
EXPORTED_HEDGE = "unless it is exported when you submit"


def _unexported_variables(spec, plan, environ: Mapping[str, str]) -> List[Found]:
    """The variables nothing but the submitting shell could set, that this shell does not set:
    submitted from here, the job stops at its first use of each (an error, where _why_unset
    could only warn)."""
    found = []
    for field, message in _unset_variables(spec, plan):
        name = message[1:].split(":", 1)[0]
        if EXPORTED_HEDGE in message and name not in environ:
            found.append((field, f"${name}: nothing sets it (not SLURM, the spec, the script or a login shell), and this "
                                 f"shell does not either (sbatch passes its environment on): submitted from here, the job "
                                 f"stops at once with '{name}: unbound variable'; set it in environment.variables, export "
                                 f"it before you submit, or write '${name}' (single quotes keep it as written) if a shell "
                                 "inside the command sets it"))
    return found


def said_for_this_shell(findings, missing: Sequence[Found]):
    """``findings`` less each warning that a variable may be exported when you submit, where
    ``missing`` says this shell does not export it (the same variable, said once, as an error)."""
    told = {(field, message.split(":", 1)[0]) for field, message in missing}
    return tuple(f for f in findings if not (EXPORTED_HEDGE in f.message and (f.field, f.message.split(":", 1)[0]) in told))


def _in_each_process(name: str) -> str:
    return (f"read it in the program (os.environ['{name}']), or write it inside the single quotes of a bash -c '... ${name} ...', "
            "which keep it for each process's shell to expand")


def _processes(plan) -> int:
    """How many processes the launch starts (1 without a launcher: the batch script runs the command)."""
    if not plan.launcher:
        return 1
    directives = dict(plan.directives)
    if "--ntasks" in directives:   # ranks by count (resolve._ranks_by_count)
        return int(directives["--ntasks"])
    return int(directives.get("--nodes", 1)) * int(directives.get("--ntasks-per-node", 1))



# ------------------------------------------------------------------ files on the submit host


def missing_local_paths(spec, plan, base_dir: Path, environ: Optional[Mapping[str, str]] = None) -> List[Found]:
    """Staged inputs, the requirements file and a lasting virtualenv that are not on this host,
    each where the job will look for it: its word as the script has it, expanded with this
    host's environment (sbatch passes it on) in the spec's folder, where the job starts. A word
    that names $SLURM_TMPDIR or a variable unset here is left alone: only the node knows it."""
    variables = {**(os.environ if environ is None else environ), "SLURM_SUBMIT_DIR": str(base_dir)}
    variables.pop(TMPDIR, None)

    def here(word: str) -> Optional[Path]:
        return _on_this_host(word, variables, base_dir)

    unexported = _unexported_variables(spec, plan, variables) if plan.nounset else []
    return _missing_stage_inputs(spec, plan, here) + _missing_venv_files(plan, here) + _missing_nccl(spec, plan, here) + unexported


def _missing_stage_inputs(spec, plan, here: Callable[[str], Optional[Path]]) -> List[Found]:
    """Stage inputs not on this host (a symbolic link counts as there, even a dangling one)."""
    found = []
    for index, step in enumerate(plan.stage.inputs if plan.stage else ()):
        path = here(step.source)
        if path is not None and not os.path.lexists(path):
            found.append((f"stage.inputs.{index}", f"{spec.stage.inputs[index].source} is not on this host ({path}): the job "
                                                   "stops when it stages it in, unless something puts it there before the job starts"))
    return found


def _missing_venv_files(plan, here: Callable[[str], Optional[Path]]) -> List[Found]:
    """The requirements file and a lasting virtualenv; not one built on the login node (siterules checks it)."""
    venv = plan.venv if plan.venv and not plan.venv.prebuilt_key else None
    found = []
    if venv and venv.requirements:
        path = here(venv.requirements)
        if path is not None and not path.is_file():
            found.append(("environment.venv.requirements",
                          f"{venv.requirements} is not on this host ({path}): pip install -r stops the job"))
    if venv and venv.reuse_existing:
        path = here(venv.path)
        if path is not None and not path.exists():
            found.append(("environment.venv.path", f"{venv.path} is not on this host ({path}): the job makes a new, empty virtualenv "
                                                   "there and installs into it; if you meant an existing one, correct the path"))
        elif path is not None and not os.access(path / "bin" / "python", os.X_OK):
            found.append(("environment.venv.path",
                          f"{venv.path} ({path}) is not a virtualenv (no bin/python): the job makes a new one in it"))
    return found


def _missing_nccl(spec, plan, here: Callable[[str], Optional[Path]]) -> List[Found]:
    """NVIDIA's NCCL tarball, which must be the file itself (a folder is a common mistake)."""
    path = here(plan.nccl.tarball) if plan.nccl else None
    if path is not None and path.is_dir():
        return [("environment.builds", f"{spec.environment.nccl.path} ({path}) is a folder: give NVIDIA's NCCL tarball "
                                       "(nccl_VERSION_ARCH.txz) itself")]
    if path is not None and not path.is_file():
        return [("environment.builds", f"{spec.environment.nccl.path} is not on this host ({path}): the job stops "
                                       "when it unpacks NCCL, unless the build cache has NCCL " + plan.nccl.version + " already")]
    return []


def _on_this_host(word: str, variables: Mapping[str, str], base_dir: Path) -> Optional[Path]:
    """``word`` (a shell word of the plan) as a path on this host, or None if only the node knows it."""
    parts, position = [], 0
    for match in REFERENCE.finditer(word):
        parts.append(word[position:match.start()])
        token = match.group()
        name = token.strip("${}")
        if token != "$$" and name not in variables:
            return None
        parts.append("$" if token == "$$" else variables[name])
        position = match.end()
    parts.append(word[position:])
    path = Path("".join(parts))
    from slurmkit.core.userpaths import examinable

    return examinable(path if path.is_absolute() else base_dir / path)
