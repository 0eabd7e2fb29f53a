"""The recorder of a traced run (verify.py): each call of a stand-in becomes one JSON line of the
trace, and nothing else happens, except where the script could not go on as it would on the
cluster otherwise:

- the file tools (cp, mv, rm, mkdir, touch, ln, tar, rsync) really act, inside the trace folder
  only, so that what is staged in and saved out can be compared; a source the folder lacks (the
  user's data on the cluster, or what the program wrote) is made first, and the line says so;
- a few printers answer as the job's node would (hostname, nproc, scontrol show hostnames, seq,
  dirname, basename, realpath, cat, head, tail, ls, tee, mktemp);
- srun and mpirun record the program they launch, with its task count, and run none of it;
- GNU Parallel builds each task's command from its input sources, as it would, and runs each
  under a traced shell, one after another: the programs the tasks start are recorded.

It runs once per command of the script: standard library only, imported as needed (not json:
its lines are Python literals, and the job's shape is plain lines). Started by trace.sh as
``python -S tracerecord.py KIND WORD...``.
"""

import os
import sys

ROOT = os.environ.get("_TR_ROOT", "")
#: the file tools that act (inside the trace folder), and the options of theirs that run a program or reach another host
FILE_TOOLS = ("cp", "mv", "rm", "rmdir", "mkdir", "touch", "ln", "tar", "rsync")
REFUSED_OPTIONS = {"tar": ("--to-command", "--use-compress-program", "--rsh-command", "--rmt-command", "--info-script",
                           "--new-volume-script", "--checkpoint-action", "-I", "-F"),
                   "rsync": ("-e", "--rsh", "--rsync-path", "--daemon")}
#: what a folder the trace makes holds (a folder of the user's data, or one the program wrote)
MADE = "made-by-trace"
WRITTEN = "written-by-program"
#: the shell's names for the trace's folders, longest first, as a trace shows paths
FOLDERS = (("abs", ""), ("tmpdir", "$SLURM_TMPDIR"), ("submit", "$SLURM_SUBMIT_DIR"), ("home", "$HOME"),
           ("scratch", "$SCRATCH"), ("project", "$PROJECT"), ("job", "$SLURMKIT_JOB_DIR"), ("tmp", "$TMPDIR"),
           ("spool", "$SLURM_SPOOL"))
MAX_LOG_BYTES = 8 << 20
MAX_LISTED = 300


def shown(text):
    """``text`` with the trace folder's paths as the shell names them ($SLURM_TMPDIR/x, /project/x)."""
    for folder, name in FOLDERS:
        text = text.replace(f"{ROOT}/{folder}/", f"{name}/").replace(f"{ROOT}/{folder}", name or "/")
    return text.replace(ROOT, "<trace>")


def cwd():
    """The working folder (as the shell last knew it, where the script removed it)."""
    try:
        return os.getcwd()
    except OSError:
        return os.environ.get("PWD", ROOT)


def absolute(path):
    return os.path.normpath(os.path.join(cwd(), path))


def log(kind, **fields):
    path = os.path.join(ROOT, ".trace", "log")
    if os.path.exists(path) and os.path.getsize(path) > MAX_LOG_BYTES:
        return
    fields.update(kind=kind, cwd=shown(cwd()), caller=os.environ.get("_TR_CALLER", ""),
                  lines=os.environ.get("_TR_LINES", ""))
    line = (repr(fields) + "\n").encode()
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, line)
    finally:
        os.close(descriptor)


def inside(path):
    """``path`` (from the working folder, links resolved) is in the trace folder."""
    real = os.path.realpath(os.path.join(cwd(), path))
    return real == ROOT or real.startswith(ROOT + os.sep)


def inside_abs(path):
    """``path`` is one the script wrote as an absolute path (moved under the trace folder's abs/)."""
    return os.path.realpath(os.path.join(cwd(), path)).startswith(os.path.join(ROOT, "abs") + os.sep)


# ---------------------------------------------------------------------------------- starts

def shape():
    """The job's SLURM variables, and the outputs the program writes (verify.py's shape file)."""
    job = {"variables": {}, "outputs": [], "watch": []}
    with open(os.path.join(ROOT, ".trace", "shape")) as file:
        for line in file.read().splitlines():
            kind, _, rest = line.partition("\t")
            if kind == "variable":
                name, _, value = rest.partition("\t")
                job["variables"][name] = value
            elif kind == "output":
                job["outputs"].append(rest)
            elif kind == "watch":
                job["watch"].append(rest)
    return job


def identifiers(word):
    """The names a word holds (--seed=SEED_VAR: seed, SEED_VAR), without re (it costs the start-up)."""
    found, token = [], ""
    for char in word + " ":
        if char.isalnum() or char == "_":
            token += char
            continue
        if len(token) > 1 and not token[0].isdigit():
            found.append(token)
        token = ""
    return found


def environment(argv, given, watched=()):
    """The variables that matter to a program: its GPUs and threads, its array task, the SLURM
    variables the script changed from the job's, any variable its words name, and those the
    old script assigns (``watched``) where they reach it."""
    env = os.environ
    names = {n for n in env if n == "CUDA_VISIBLE_DEVICES" or n.endswith("_NUM_THREADS") or n == "SLURM_ARRAY_TASK_ID"}
    names |= {n for n in env if n.startswith("SLURM_") and given.get(n) != env[n] and n not in ("SLURM_PROCID", "SLURM_LOCALID")}
    names -= {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"} - set(given)   # the first process's, set by its launcher
    names |= {w for word in argv[1:] for w in identifiers(word)
              if w in env and not w.startswith("_TR_") and w not in ("PATH", "PWD", "OLDPWD", "SHLVL", "BASH_ENV")}
    names |= {n for n in watched if n in env}
    found = {n: shown(env[n]) for n in sorted(names)}
    found.update({n: None for n in given if n.startswith("SLURM_") and n not in env})
    return {**found, **python_on_path(argv, env)}


def python_on_path(argv, env):
    """For python under a virtualenv, whose python comes first on PATH: a python module loaded
    after the virtualenv comes before it, as Lmod puts it."""
    if os.path.basename(argv[0]).startswith("python") and env.get("VIRTUAL_ENV") and env.get("_TR_PYTHON_FROM"):
        return {PYTHON_ON_PATH: env["_TR_PYTHON_FROM"]}
    return {}


#: what a python start records of the PATH it ran with: the python first on it, a virtualenv's or a module's
PYTHON_ON_PATH = "(python first on PATH)"


def tmpdir_files(outputs):
    """What $SLURM_TMPDIR holds (files, and empty folders with a /), less the program's outputs."""
    top, found = os.path.join(ROOT, "tmpdir"), []
    for folder, folders, files in os.walk(top):
        relative = os.path.relpath(folder, top)
        if any(relative == o or relative.startswith(o + "/") for o in outputs):
            folders[:] = []
            continue
        folders.sort()
        paths = [os.path.normpath(os.path.join(relative, f)) for f in sorted(files)]
        found += [p for p in paths if p not in outputs]
        if not files and not folders and relative != ".":
            found.append(relative + "/")
        if len(found) > MAX_LISTED:
            return found[:MAX_LISTED] + ["..."]
    return found


def write_outputs(outputs):
    """The program writes its outputs: each one the script will save, if not there already."""
    for output in outputs:
        path = os.path.join(ROOT, "tmpdir", output)
        if os.path.isdir(path) and not os.listdir(path):
            open(os.path.join(path, WRITTEN), "w").close()
        elif not os.path.lexists(path) and inside(path):
            make(path, "file" if "." in os.path.basename(output) else "tree", content=WRITTEN)


def start(argv, count=1, via=""):
    job = shape()
    write_outputs(job["outputs"])
    modules = [m for m in os.environ.get("LOADEDMODULES", "").split(":") if m]
    log("start", argv=[shown(w) for w in argv], env=environment(argv, job["variables"], job["watch"]), modules=modules,
        count=count * int(os.environ.get("_TR_COUNT", "1") or 1), via=via or os.environ.get("_TR_VIA", ""),
        tmpdir=tmpdir_files(job["outputs"]), pids=ancestors())
    archive = piped_archive_source(os.path.basename(argv[0]), argv[1:])
    if archive:   # a decompressor writing to its output: it names the archive to the tar it is piped to
        print(ARCHIVE_MARK + archive)
        return 0
    return print_as_node(argv)


def ancestors():
    """The processes this start runs in, from the shell that ran the stand-in up to the traced
    script's: verify.py finds among them the background jobs it is part of (trace.sh's async lines)."""
    top, found, pid = os.environ.get("_TR_SHELL", ""), [], os.getppid()
    while pid > 1 and len(found) < 64:
        found.append(pid)
        try:
            with open(f"/proc/{pid}/stat") as file:
                stat = file.read()
        except OSError:
            break
        if str(pid) == top:
            break
        pid = int(stat.rpartition(")")[2].split()[1])
    return found


def print_as_node(argv):
    """What a few commands print, where the script reads it: as the job's first node would."""
    name, args = os.path.basename(argv[0]), argv[1:]
    env = os.environ
    if name == "hostname":
        print(env.get("SLURMD_NODENAME", "node1"))
    elif name == "nproc":
        print(env.get("SLURM_CPUS_ON_NODE", "1"))
    elif name == "scontrol" and args[:2] == ["show", "hostnames"]:
        print("\n".join(hostnames(args[2] if len(args) > 2 else env.get("SLURM_JOB_NODELIST", "node1"))))
    elif name == "seq" and args and all(a.lstrip("-").isdigit() for a in args):
        numbers = [int(a) for a in args]
        first, step, last = (numbers + [0, 0])[:3] if len(numbers) == 3 else (1 if len(numbers) == 1 else numbers[0], 1, numbers[-1])
        print("\n".join(str(n) for n in range(first, last + (1 if step > 0 else -1), step or 1)[:100000]))
    elif name in ("dirname", "basename", "realpath", "readlink"):
        print_path(name, [a for a in args if not a.startswith("-")], args)
    elif name in ("cat", "ls", "tee", "mktemp", "head", "tail", "awk"):
        return {"cat": cat, "ls": ls, "tee": tee, "mktemp": mktemp, "head": head, "tail": head, "awk": awk}[name](args, name == "tail")
    return 0


def hostnames(text):
    """node[1-3],gpu2 -> node1 node2 node3 gpu2"""
    import re

    names = []
    for prefix, ranges, plain in re.findall(r"([^,\[]+)\[([^\]]+)\]|([^,]+)", text):
        if plain:
            names.append(plain)
            continue
        for part in ranges.split(","):
            low, _, high = part.partition("-")
            names += [f"{prefix}{n:0{len(low)}d}" for n in range(int(low), int(high or low) + 1)]
    return names


def print_path(name, paths, args):
    for path in paths:
        if name == "dirname":
            print(os.path.dirname(path.rstrip("/")) or ("/" if path.startswith("/") else "."))
        elif name == "basename":
            suffix = args[-1] if len(args) == 2 and args[-1] != path else ""
            base = os.path.basename(path.rstrip("/"))
            print(base[:-len(suffix)] if suffix and base.endswith(suffix) else base)
        elif name == "realpath" or "-f" in args or "-e" in args or "-m" in args:
            print(os.path.realpath(path))
        elif os.path.islink(path):
            print(os.readlink(path))


def cat(args, _=False):
    paths = [a for a in args if not a.startswith("-") or a == "-"]
    if not paths:
        sys.stdout.buffer.write(sys.stdin.buffer.read())
    for path in paths:
        if path == "-":
            sys.stdout.buffer.write(sys.stdin.buffer.read())
        elif inside(path) and os.path.isfile(path):
            with open(path, "rb") as file:
                sys.stdout.buffer.write(file.read())
    return 0


def head(args, last=False):
    """head/tail [-n N | -N] [FILE]: of stdin, or of a file inside the trace folder."""
    import re

    count, paths = 10, []
    for index, word in enumerate(args):
        if re.fullmatch(r"-n?\d+", word) or (index and args[index - 1] == "-n"):
            count = int(word.lstrip("-n") or 10)
        elif not word.startswith("-"):
            paths.append(word)
    if paths and not (inside(paths[0]) and os.path.isfile(paths[0])):
        return 0
    lines = (open(paths[0], "rb").read() if paths else sys.stdin.buffer.read()).splitlines(keepends=True)
    sys.stdout.buffer.write(b"".join(lines[-count:] if last else lines[:count]))
    return 0


#: the awk programs the trace answers: those of slurmkit's many-tasks kind, which pick a node's
#: share of its task file (blank lines skipped); any other prints nothing
AWK_NODE_SHARE = "NF && k++ % nodes == node"


def awk(args, _=False):
    """awk [-v NAME=VALUE]... PROGRAM [FILE]: the non-blank lines (NF), or node ``node``'s share of them."""
    variables, words, index = {}, [], 0
    while index < len(args):
        if args[index] == "-v" and index + 1 < len(args):
            name, _, value = args[index + 1].partition("=")
            variables[name] = value
            index += 1
        else:
            words.append(args[index])
        index += 1
    if not words or words[0].strip() not in ("NF", AWK_NODE_SHARE) or (words[1:] and not inside(words[1])):
        return 0
    text = open(words[1], "rb").read() if words[1:] and os.path.isfile(words[1]) else b"" if words[1:] else sys.stdin.buffer.read()
    lines = [line for line in text.splitlines(keepends=True) if line.split()]
    if words[0].strip() == AWK_NODE_SHARE:
        node, nodes = int(variables.get("node", "0") or 0), int(variables.get("nodes", "1") or 1)
        lines = lines[node::max(nodes, 1)]
    sys.stdout.buffer.write(b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines))
    return 0


def ls(args, _=False):
    every = any(a in ("-a", "-A", "--all", "--almost-all") for a in args)
    for path in [a for a in args if not a.startswith("-")] or ["."]:
        if inside(path) and os.path.isdir(path):
            print("\n".join(n for n in sorted(os.listdir(path)) if every or not n.startswith(".")))
        elif inside(path) and os.path.lexists(path):
            print(path)
    return 0


def tee(args, _=False):
    data = sys.stdin.buffer.read()
    sys.stdout.buffer.write(data)
    for path in [a for a in args if not a.startswith("-")]:
        if inside(path):
            with open(path, "ab" if "-a" in args else "wb") as file:
                file.write(data)
    return 0


def mktemp(args, _=False):
    template = next((a for a in args if not a.startswith("-")), "tmp.XXXXXXXXXX")
    folder = os.path.dirname(absolute(template)) if "/" in template else os.environ.get("TMPDIR", os.path.join(ROOT, "tmp"))
    if not inside(folder):
        return 1
    # the same name in every run, so that both traces show the same paths
    prefix, number = os.path.basename(template.rstrip("X")), 1
    while os.path.lexists(os.path.join(folder, f"{prefix}{number}")):
        number += 1
    made = os.path.join(folder, f"{prefix}{number}")
    if "-d" in args:
        os.makedirs(made)
    else:
        open(made, "x").close()
    print(made)
    return 0


# ----------------------------------------------------------------------------------- launchers

def launch(launcher, words):
    """srun/mpirun: the program they launch is recorded, with its task count; a shell it launches
    (bash -c TEXT, bash FILE, bash << EOF) runs once, traced (trace.sh), its starts counted that
    many times; a file tool runs once."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from slurmkit.core import launch_options

    parsed = launch_options.parse([launcher, *words])
    count = task_count(launcher, {option: values[0] for option, values, _ in parsed.options if values})
    program = list(parsed.program)
    if parsed.launcher in launch_options.RUN_WITH_PYTHON and program:
        program = launch_options.python_program(parsed, program)
    if not program:
        return start([launcher, *words])
    program = as_torchrun(program)
    name = os.path.basename(program[0])
    via = shown(" ".join([launcher, *words[:len(words) - len(parsed.program)]]))   # the launcher and its options
    if name in launch_options.LAUNCHERS and name != launcher:   # srun accelerate launch ...: its processes, on each task
        os.environ["_TR_COUNT"] = str(int(os.environ.get("_TR_COUNT", "1") or 1) * count)
        os.environ["_TR_VIA"] = via
        return launch(name, program[1:])
    if name in ("bash", "sh"):   # trace.sh runs its -c text, its file or its here-document, or records it
        print(f"shell {count} {len(words) - len(program) + 1}")
        return 0
    if name in FILE_TOOLS:
        return tool(name, program[1:], via=via, count=count)
    if name == "parallel":   # srun parallel ...: its tasks, on each of srun's
        os.environ["_TR_COUNT"] = str(int(os.environ.get("_TR_COUNT", "1") or 1) * count)
        os.environ["_TR_VIA"] = via
        return parallel(program[1:])
    if "/" in program[0] and (not inside(program[0]) or inside_abs(program[0])) and not recorded_by_name(program[0]):
        log("untraceable", argv=[shown(w) for w in [launcher, *words]], why="a program named by its absolute path")
        return 0
    return start(program, count, via=via)


#: programs that run other text or programs: by an absolute path, they stay untraced
RUN_OTHERS = ("bash", "sh", "dash", "zsh", "ksh", "csh", "tcsh", "env", "xargs", "nohup", "time", "timeout", "exec")


def recorded_by_name(path):
    """A program the script names by an absolute path it wrote out (``/usr/bin/python3``,
    ``/project/def-x/bin/app``) is recorded, never run: the path lies under the trace folder's
    abs/, where no real program is, and a start records its words as a ``./prog`` start does.
    Shells and programs that run other words stay untraced: what they run is not in the trace."""
    return inside_abs(path) and os.path.isabs(path) and os.path.basename(path) not in RUN_OTHERS


def by_name(words):
    """``/bin/rm x`` acts as the ``rm`` stand-in does; any other program is a start."""
    name = os.path.basename(words[0])
    return tool(name, words[1:]) if name in FILE_TOOLS else start(words)


def as_torchrun(words):
    """``python -m torch.distributed.run|launch ARGS`` as ``torchrun ARGS``; other words as they are."""
    if not (words[:1] and os.path.basename(words[0]).startswith("python") and words[1:2] == ["-m"]):
        return words
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if package not in sys.path:
        sys.path.insert(0, package)
    from slurmkit.core import launch_options

    if words[:1] and os.path.basename(words[0]).startswith("python") and words[1:2] == ["-m"] \
            and words[2:3] and words[2] in launch_options.TORCH_MODULES:
        return ["torchrun", *words[3:]]
    return words


def task_count(launcher, given):
    """The processes a launcher starts: its own counts, else the job's (srun and mpirun read
    SLURM_NTASKS); torchrun's per node times its nodes; accelerate's --num_processes."""
    env = os.environ

    def number(*names):
        for name in names:
            value = given.get(name, "") if name.startswith("-") else env.get(name, "")
            first = value.replace(":", "-").split("-")[0]
            if first.isdigit():
                return int(first)
        return None

    if launcher in ("torchrun", "accelerate"):   # on its node (srun starts one on each node of a multi-node job)
        if (given.get("--nproc-per-node") or given.get("--nproc_per_node")) == "gpu":   # one per GPU the node gives the job
            return len([d for d in env.get("CUDA_VISIBLE_DEVICES", "").split(",") if d]) or 1
        machines = number("--num_machines", "--num-machines") or 1
        return number("--nproc-per-node", "--nproc_per_node") or max(1, (number("--num_processes", "--num-processes") or 1) // machines)
    own = number("-n", "--ntasks", "-np", "--np", "--n", "--num-proc")
    nodes = number("-N", "--nodes", "SLURM_NNODES") or 1
    per_node = number("--ntasks-per-node", "-npernode", "--npernode")
    if launcher == "horovodrun":
        return own or 1
    return own or (per_node * nodes if per_node else None) or number("SLURM_NTASKS") or \
        (number("SLURM_NTASKS_PER_NODE") or 1) * nodes


# ------------------------------------------------------------------------------- GNU Parallel

#: GNU Parallel's words that start an input source (+: linked to the one before, not combined)
PARALLEL_SOURCES = (":::", "::::", ":::+", "::::+")
#: its options the trace reads past, with a value and without: how many tasks at a time, their
#: logs and output, where they run; the commands it builds are the same
PARALLEL_VALUED = ("-j", "--jobs", "-P", "--max-procs", "--joblog", "--colsep", "-C", "--delay", "--sshdelay", "--workdir", "--wd",
                   "--env", "--sshloginfile", "--slf", "-S", "--sshlogin", "--results", "--res", "--tmpdir", "--halt",
                   "--halt-on-error", "--timeout", "--memfree", "--load", "--retries", "--tagstring", "--nice", "-a", "--arg-file",
                   "-d", "--delimiter", "--compress-program", "--decompress-program", "--basefile", "--bf", "--return",
                   "--transferfile", "--tf", "--ssh", "--termseq", "--shebang-wrap", "--tmux")
PARALLEL_FLAGS = ("-k", "--keep-order", "-u", "--ungroup", "--line-buffer", "--lb", "--group", "-q", "--quote", "--resume",
                  "--resume-failed", "--retry-failed", "--progress", "--eta", "--bar", "-v", "--verbose", "--will-cite",
                  "--compress", "--no-notice", "--tag", "-t", "--dry-run", "--dryrun", "-0", "--null", "-r", "--no-run-if-empty",
                  "--shuf", "--noswap", "--plain", "--fg", "--transfer", "--cleanup", "--trc", "--controlmaster", "-M",
                  "--keep-order", "--nonall", "--onall", "--ctrl-c", "--no-keep-order", "--silent", "--joblog-append", "-g")
#: its options that only print (its version, help): the line is a start of parallel, as another program's
PARALLEL_PRINTS = ("--version", "-V", "--help", "-h", "--citation", "--bibtex", "--number-of-cpus", "--number-of-cores",
                   "--number-of-sockets", "--number-of-threads", "--max-line-length-allowed", "--minversion")
MAX_PARALLEL_TASKS = 1000


def parallel(words):
    """GNU Parallel: each task's command, built from its input sources as it builds them (the
    words after :::, the lines of the files after :::: or -a, else of its input; {} {1} {.}
    {/} {//} {/.} {#} replaced by the argument, quoted; the arguments appended where the command
    names none; a line each a command where there is no command), run one after another under a
    traced shell (--jobs changes how many at a time, not which), as it runs them. A line with
    options that build the tasks otherwise (-N, -X, --pipe, {= perl =}) is one start of parallel,
    its words compared as they are."""
    read = parallel_words(words)
    if read is None or any(o in PARALLEL_PRINTS for o in read[0]):   # recorded as it is, as another program's start
        return start(["parallel", *words])
    options, command, sources = read
    tasks = parallel_tasks(options, sources)
    quote = "-q" in options or "--quote" in options
    failed = 0
    for number, arguments in enumerate(tasks[:MAX_PARALLEL_TASKS], 1):
        text = parallel_command(command, arguments, number, quote)
        if "--dry-run" in options or "--dryrun" in options:
            print(text)
        elif text.strip():
            failed += run_task(text, number) != 0
    return min(failed, 101)


def parallel_words(words):
    """GNU Parallel's options (name: values), its command, and its input sources (separator,
    words); None where the trace does not build its tasks."""
    options, index = {}, 0
    while index < len(words) and words[index].startswith("-") and words[index] not in PARALLEL_SOURCES:
        word = words[index]
        index += 1
        if word == "--":
            break
        name, equals, value = word.partition("=")
        if not word.startswith("--") and len(word) > 2 and word[:2] in PARALLEL_VALUED:
            name, equals, value = word[:2], "=", word[2:]
        if name in PARALLEL_VALUED and not equals:
            value, index = (words[index] if index < len(words) else ""), index + 1
        elif name not in PARALLEL_VALUED + PARALLEL_FLAGS + PARALLEL_PRINTS:
            return None
        options.setdefault(name, []).append(value)
    command, sources = words[index:], []
    for position, word in enumerate(command):
        if word in PARALLEL_SOURCES:
            command, rest = command[:position], command[position:]
            for word in rest:
                if word in PARALLEL_SOURCES:
                    sources.append((word, []))
                else:
                    sources[-1][1].append(word)
            break
    return None if any("{=" in w for w in command) else (options, command, sources)


def parallel_tasks(options, sources):
    """Each task's arguments: the input sources combined (each value of one with each of the next;
    :::+ and ::::+ pair with the one before), a line split at --colsep into its columns."""
    tasks = [[]]
    for linked in parallel_groups(options, sources):
        rows = [list(row) for row in zip(*linked)]
        tasks = [task + row for task in tasks for row in rows][:MAX_PARALLEL_TASKS]
    colsep = (options.get("--colsep") or options.get("-C") or [None])[-1]
    if colsep:
        import re

        tasks = [[column for value in task for column in re.split(colsep, value)] for task in tasks]
    return tasks


def parallel_groups(options, sources):
    """The input sources, each a list of values, in groups of those linked (:::+): -a's files, then
    the words after each :::, the lines of each file after ::::; else the input's lines."""
    groups = [[source_lines(path, options)] for name in ("-a", "--arg-file") for path in options.get(name, ())]
    for separator, words in sources:
        columns = [words] if separator in (":::", ":::+") else [source_lines(path, options) for path in words]
        for column in columns:
            if separator.endswith("+") and groups:
                groups[-1].append(column)
            else:
                groups.append([column])
    return groups or [[source_lines("-", options)]]


def source_lines(path, options):
    """The lines of an input source file (- for the input): a file of the user's the trace lacks is made, as a file tool makes one."""
    delimiter = "\0" if "-0" in options or "--null" in options else (options.get("-d") or options.get("--delimiter") or ["\n"])[-1]
    delimiter = {"\\n": "\n", "\\t": "\t", "\\0": "\0"}.get(delimiter, delimiter)
    if path == "-":
        text = sys.stdin.buffer.read().decode(errors="replace")
    elif not inside(path):
        return []
    else:
        if not os.path.lexists(path):
            make(absolute(path), "file")
            log("folder", made=[[shown(absolute(path)), "file"]])
        text = open(path, "rb").read().decode(errors="replace") if os.path.isfile(path) else ""
    lines = text.split(delimiter)
    return lines[:-1] if lines and lines[-1] == "" else lines


def parallel_command(command, arguments, number, quote):
    """The command line of one task: its replacement strings replaced by the arguments, quoted,
    or the arguments appended; with no command, the arguments are the command."""
    import re
    import shlex

    if not command:
        return " ".join(arguments)
    pattern = re.compile(r"\{(\d*)(\.|/|//|/\.)?\}|\{#\}|\{%\}")

    def value(match):
        if match.group() == "{#}":
            return str(number)
        if match.group() == "{%}":
            return "1"
        position, modifier = match.group(1), match.group(2) or ""
        text = " ".join(arguments) if not position else (arguments[int(position) - 1] if 0 < int(position) <= len(arguments) else "")
        return shlex.quote(modified(text, modifier))

    def word(text):
        pieces, last = [], 0
        for match in pattern.finditer(text):
            literal = text[last:match.start()]
            pieces += [shlex.quote(literal) if quote and literal else literal, value(match)]
            last = match.end()
        rest = text[last:]
        return "".join(pieces) + (shlex.quote(rest) if quote and rest else rest)

    words = [word(w) for w in command]
    if not any(pattern.search(w) for w in command):
        words += [shlex.quote(a) for a in arguments]
    return " ".join(words)


def modified(text, modifier):
    """A replacement string's modifier: . drops the extension, / keeps the base name, // the folder, /. both."""
    if modifier in ("/", "/."):
        text = os.path.basename(text)
    if modifier == "//":
        return os.path.dirname(text) or "."
    if modifier in (".", "/."):
        base = os.path.basename(text)
        if "." in base.lstrip("."):
            text = text[:len(text) - len(base)] + base[:base.rindex(".")]
    return text


def run_task(text, number):
    """One task's command, under a shell traced as the script is (trace.sh), as GNU Parallel runs
    it: its records name the lines and functions the parallel line ran from."""
    import subprocess

    env = dict(os.environ, PARALLEL_SEQ=str(number), PARALLEL_JOBSLOT="1", _TR_OUTER_CALLER=os.environ.get("_TR_CALLER", ""),
               _TR_OUTER_LINES=os.environ.get("_TR_LINES", ""))
    sys.stdout.flush()
    return subprocess.call([os.environ.get("_TR_BASH", "/bin/bash"), "-c", ": ; " + text], env=env, stdin=subprocess.DEVNULL)


# --------------------------------------------------------------------------------- file tools

def tool(name, words, via="", count=1):
    """A file tool acts on the trace folder only; a source it lacks is made first (the user's
    data, there on the cluster), and a destination written with a trailing / is a folder."""
    words = [mirrored_word(w) for w in words]
    problem = tool_problem(name, words)
    if problem:
        log("untraceable", argv=[shown(w) for w in [name, *words]], why=problem)
        return 0
    if name == "tar" and piped_archive(words):
        return tar_from_pipe(words, via, count)
    sources, folders = reads(name, words)
    made = [(path, kind) for path, kind in sources if not os.path.lexists(path) and not quoted_glob(path)]
    made += [(folder, "folder") for folder in folders if not os.path.lexists(folder)]
    for path, kind in made:
        make(path, kind)
    import shutil
    import subprocess

    if name == "rm" and _removes_scratch_only(words):
        words = ["-f", *words]   # what the programs (stand-ins here) left in $SLURM_TMPDIR: removing it fails only here
    real = shutil.which(name, path="/usr/bin:/bin")
    if real is None:
        log("untraceable", argv=[shown(w) for w in [name, *words]], why=f"{name} is not installed here")
        return 0
    run = tar_uncompressed(words) if name == "tar" else words
    status = subprocess.call([real, *run], env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
    log("file", argv=[shown(w) for w in [name, *words]], sources=[shown(p) for p, _ in sources],
        made=[[shown(p), kind] for p, kind in made], status=status, via=via, count=count)
    return status


def _removes_scratch_only(words):
    """Whether rm's operands are all in $SLURM_TMPDIR, where the job's programs (which do nothing
    in a trace) would have written them."""
    operands = [w for w in words if not w.startswith("-")]
    scratch = os.path.join(ROOT, "tmpdir")
    return bool(operands) and all(absolute(w) == scratch or absolute(w).startswith(scratch + os.sep) for w in operands)


def piped_archive(words):
    """tar -x reads its archive from a pipe (no -f, or -f -): ``cat a.tar.gz.part?? | unpigz | tar -x``."""
    import stat

    mode, archive, _, _ = tar_options(words)
    return "x" in mode and archive in (None, "-") and stat.S_ISFIFO(os.fstat(0).st_mode)


def tar_from_pipe(words, via, count):
    """The pipe's writers were stand-ins (cat, unpigz) and wrote no archive: tar extracts what
    an archive of the user's would hold, one file (from-NAME, where a decompressor's stand-in
    named the archive it read: from-pipe else), into its folder, as it does for an archive it
    reads by name. What the pipe wrote is read to its end, as tar reads it."""
    import sys

    piped = sys.stdin.buffer.read().decode(errors="replace")
    archive = piped[len(ARCHIVE_MARK):].strip() if piped.startswith(ARCHIVE_MARK) and "\n" not in piped.strip() else ""
    folder = tar_options(words)[2]
    made = [] if os.path.isdir(folder) else [[shown(absolute(folder)), "folder"]]
    if archive and inside(archive) and not os.path.lexists(archive):   # the user's, there on the cluster
        make(archive, "archive:x")
        made.append([shown(absolute(archive)), "archive:x"])
    make(os.path.join(absolute(folder), f"from-{os.path.basename(archive) or 'pipe'}"), "file")
    log("file", argv=[shown(w) for w in ["tar", *words]], sources=[shown(absolute(archive))] if archive else [], made=made,
        status=0, via=via, count=count)
    return 0


#: what a decompressor's stand-in writes for tar to read: the archive it stands for
ARCHIVE_MARK = "slurmkit-trace-archive:"
#: programs that write a decompressed file to their output: always, or with -c (--stdout)
DECOMPRESS_TO_OUTPUT = ("zcat", "zstdcat", "xzcat", "bzcat", "lz4cat")
DECOMPRESSORS = ("zstd", "unzstd", "pigz", "unpigz", "gzip", "gunzip", "xz", "unxz", "bzip2", "bunzip2", "pbzip2", "lbzip2", "lz4")


def piped_archive_source(name, args):
    """The one file a decompressor writes, decompressed, to its output (``zstd -dc A``, ``zcat A``,
    ``pigz -dc -p 8 A``); "" where it writes none or several."""
    flags = "".join(a[1:] for a in args if a[:1] == "-" and a[1:2] != "-" and a[1:].isalnum()) + " ".join(a for a in args if a[:2] == "--")
    decompresses = name in DECOMPRESS_TO_OUTPUT or (name in DECOMPRESSORS and ("c" in flags or "--stdout" in flags) and (
        "d" in flags or "--decompress" in flags or name.startswith(("un", "gun", "bun"))))
    operands = [a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] not in ("-p", "-T", "--threads"))]
    return operands[0] if decompresses and len(operands) == 1 else ""


def quoted_glob(path):
    """``path`` is a glob that matches files here, which the tool got as it is (quoted, or in a
    rendered word): it finds no file of that name, as on the cluster, and none is made for it."""
    import glob

    return glob.has_magic(path) and bool(glob.glob(path))


#: the trace's folders of the job's own, where a glob stands for no file of the user's ($SLURM_TMPDIR starts empty)
JOB_FOLDERS = ("tmpdir", "tmp", "job", "spool", ".trace")


def globs(patterns):
    """A file of the user's for each glob a file tool's words name (trace.sh, before bash expands
    them) that matches none in the trace: the cluster has such files, or the script would not
    name them. Bash then expands an unquoted glob to it, and a quoted one stays a pattern that
    the tool does not find, as on the cluster; what is made is part of the user's files."""
    import glob

    made = []
    for pattern in patterns:
        path = absolute(pattern)
        top = os.path.relpath(path, ROOT).split(os.sep)[0]
        if not inside(path) or top in JOB_FOLDERS or top == ".." or glob.glob(path) or os.path.lexists(path):
            continue
        standing = standing_in(path)
        kind = source_kind(standing, False)
        make(standing.rstrip("/"), kind)
        made.append([shown(standing.rstrip("/")), kind])
    if made:
        log("folder", made=made)
    return 0


def standing_in(pattern):
    """A name the glob matches: made-by-trace for its first *, nothing for the others, x for a ?,
    a bracket's first character."""
    import re

    stars = []

    def one(match):
        text = match.group()
        if text == "*":
            stars.append(text)
            return MADE if len(stars) == 1 else ""
        if text == "?" or text[1:2] in ("!", "^"):
            return "x"
        return text[1]

    return re.sub(r"\*|\?|\[[^\]/]+\]", one, pattern)


#: top-level folders a path the script computes may name as they are (/dev/null): never mirrored
NOT_MIRRORED = ("dev", "proc", "sys")


def mirrored_word(word):
    """A path the script computed at run time (``$ws/in.csv``, ``$ws`` set by the user's login
    shell, empty here: ``/in.csv``) moved under the trace folder's abs/, as verify.mirrored moves
    one the script writes out: the tool then acts there and is compared like any other, instead
    of being "not traced". Options, relative paths and /dev, /proc, /sys stay as they are."""
    option, equals, path = word.partition("=") if word.startswith("--") else ("", "", word)
    if not path.startswith("/") or (not equals and word.startswith("-")) or option in RSYNC_PATTERNS or inside(path):
        return word
    if path.strip("/").split("/")[0] in NOT_MIRRORED:
        return word
    return option + equals + os.path.join(ROOT, "abs") + os.path.normpath(path).replace("//", "/", 1)


def tool_problem(name, words):
    """Why the tool must not run here: an option that runs a program or reaches another host, or a path outside."""
    for index, word in enumerate(words):
        option = word.partition("=")[0]
        if runs_a_program(name, words, index):
            return f"{option} runs a program or reaches another host"
        if name == "rsync" and word[:1] not in ("-", "/", ".") and ":" in word.partition("/")[0]:
            return f"{word} is on another host"
        path = word.partition("=")[2] if word.startswith("--") else word
        if (not word.startswith("-") or word.startswith("--")) and path and not inside(path):
            return f"{shown(path)} is outside the trace folder"
        if name == "ln" and not word.startswith("-") and not inside(os.path.join(os.path.dirname(words[-1]), word)):
            return f"a link to {shown(word)}, outside the trace folder"
    return None


def runs_a_program(name, words, index):
    """Whether the tool's word at ``index`` is an option that runs a program or reaches another
    host (rsync -e, tar --to-command); tar's -I naming a compressor only (de)compresses."""
    word = words[index]
    option, equals, value = word.partition("=")
    if name == "tar" and option in ("-I", "--use-compress-program"):
        return not compressor(value if equals else (words[index + 1] if index + 1 < len(words) else ""))
    return option in REFUSED_OPTIONS.get(name, ()) or (name == "rsync" and word[:1] == "-" and word[1:2] != "-" and "e" in word)


#: rsync's options whose value is a pattern or a list of names, not a file it copies
RSYNC_PATTERNS = ("--exclude", "--include", "--filter", "-f", "--exclude-from", "--include-from", "--files-from")


def reads(name, words):
    """What the tool reads, as (absolute path, kind: file, tree or archive:MODE), and the
    destinations written as folders (a trailing /)."""
    if name == "tar":
        return tar_reads(words)
    paths = [w for i, w in enumerate(words) if not w.startswith("-") and (not i or words[i - 1] not in RSYNC_PATTERNS)]
    if name not in ("cp", "mv", "rsync") or len(paths) < 2:
        return [], []
    recursive = any(w in ("-r", "-R", "-a", "--recursive", "--archive") or
                    (w.startswith("-") and not w.startswith("--") and set(w[1:]) & set("rRa")) for w in words)
    target = next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "-t"), None)
    sources = [p for p in paths if p != target] if target else paths[:-1]
    destination = target or paths[-1]
    return ([(absolute(s), source_kind(s, recursive)) for s in sources],
            users_folders(destination if destination.endswith("/") else os.path.dirname(absolute(destination))))


def source_kind(path, recursive):
    """What a file of the user's the trace makes is: a tar archive (named as one), a folder
    holding a file (copied recursively, or named with a trailing /), or a file."""
    if path.endswith((".tar", ".tgz", ".tbz2", ".txz")) or ".tar." in os.path.basename(path):
        return "archive:"
    return "tree" if recursive or path.endswith("/") else "file"


def users_folders(folder):
    """The folder a tool writes into, where it is the user's (outside $SLURM_TMPDIR, which starts empty)."""
    folder = absolute(folder)
    tmpdir = os.path.join(ROOT, "tmpdir")
    return [] if folder == tmpdir or folder.startswith(tmpdir + os.sep) else [folder]


def tar_reads(words):
    """tar -x (or -t) reads its archive; tar -c its members (from -C's folder)."""
    mode, archive, folder, members = tar_options(words)
    if archive and ("x" in mode or "t" in mode):
        return [(absolute(archive), "archive:" + mode)], users_folders(folder)
    if "c" in mode:
        return [(absolute(os.path.join(folder, m)), "tree" if m.endswith("/") else "file") for m in members], []
    return [], []


#: tar's options that name a compression: the archives a trace makes are read without them
TAR_COMPRESSIONS = ("--gzip", "--gunzip", "--ungzip", "--bzip2", "--xz", "--lzma", "--lzip", "--lzop", "--zstd",
                    "--compress", "--uncompress", "--auto-compress")
#: the programs tar's -I (--use-compress-program) may name: they only (de)compress
COMPRESSORS = ("gzip", "pigz", "unpigz", "bzip2", "pbzip2", "lbzip2", "xz", "pixz", "zstd", "unzstd", "pzstd", "lz4",
               "lzop", "lzip", "plzip")


def compressor(value):
    """Whether the program tar's -I names only (de)compresses (``zstd -T0``, ``/usr/bin/pigz``)."""
    words = value.split()
    return bool(words) and os.path.basename(words[0]) in COMPRESSORS


def tar_uncompressed(words):
    """tar's words without a compression: an archive the trace stands in for is written as a plain
    tar where no Python module writes its compression (zstd, lz4), and one of gzip, bzip2 or xz
    is found by its first bytes, as tar finds it when it reads an archive by name."""
    kept, index = [], 0
    while index < len(words):
        word = words[index]
        name = word.partition("=")[0]
        if name in ("-I", "--use-compress-program") and "=" not in word:
            index += 2
            continue
        if name in TAR_COMPRESSIONS or name == "--use-compress-program":
            index += 1
            continue
        if index == 0 and not word.startswith("-"):
            word = "-" + word   # the old style: xzf
        if word.startswith("-") and not word.startswith("--"):
            word = "-" + word[1:].replace("z", "").replace("j", "").replace("J", "").replace("Z", "")
            if word == "-":
                index += 1
                continue
        kept.append(word)
        index += 1
    return kept


def tar_options(words):
    """tar's mode letters, archive, folder (-C) and members, in the old style (tar xzf A) too."""
    mode, archive, folder, members, index = "", None, ".", [], 0
    if words and not words[0].startswith("-"):
        words = ["-" + words[0], *words[1:]]
    long_modes = {"--extract": "x", "--get": "x", "--create": "c", "--list": "t"}
    while index < len(words):
        word, following = words[index], words[index + 1] if index + 1 < len(words) else None
        name, equals, value = word.partition("=")
        if name in ("-I", "--use-compress-program") and (equals or following is not None):
            index += 0 if equals else 1
        elif name in ("-f", "--file", "-C", "--directory") and (equals or following is not None):
            value = value if equals else following
            index += 0 if equals else 1
            archive, folder = (value, folder) if name in ("-f", "--file") else (archive, value)
        elif word.startswith("-") and not word.startswith("--"):
            mode += word[1:]
            if "f" in word and following is not None:
                archive, index = following, index + 1
        elif not word.startswith("-"):
            members.append(word)
        mode += long_modes.get(word, "")
        index += 1
    return mode, archive, folder, members


def make(path, kind, content=MADE):
    """The user's data the trace stands in for: a file, a folder holding one (tree), an empty
    folder, or a tar archive holding one file, from-NAME."""
    if kind in ("tree", "folder"):
        os.makedirs(path, exist_ok=True)
        if kind == "folder":
            return
        path = os.path.join(path, content)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if kind.startswith("archive"):
        make_archive(path, kind.partition(":")[2])
        return
    with open(path, "w") as file:
        file.write(content + "\n")


def make_archive(archive, mode):
    import io
    import tarfile

    compression = next((c for flag, c in (("z", "gz"), ("j", "bz2"), ("J", "xz")) if flag in mode), "")
    compression = compression or next((c for end, c in ((".gz", "gz"), (".tgz", "gz"), (".bz2", "bz2"), (".xz", "xz"))
                                       if archive.endswith(end)), "")
    content = f"{MADE}\n".encode()
    with tarfile.open(archive, f"w:{compression}") as tar:
        member = tarfile.TarInfo(f"from-{os.path.basename(archive)}")
        member.size = len(content)
        tar.addfile(member, io.BytesIO(content))


# ---------------------------------------------------------------------------------------- main

def folder(path):
    """cd PATH: 0 where PATH is inside the trace folder (made, if it is not there: it is on the cluster)."""
    if not inside(path):
        return 1
    if not os.path.isdir(path):
        os.makedirs(path, exist_ok=True)
        log("folder", made=[[shown(absolute(path)), "folder"]])
    return 0


def main(argv):
    kind, words = argv[1], argv[2:]
    if kind == "tool":
        return tool(words[0], words[1:])
    if kind == "start":
        if as_torchrun(words) != words:   # python -m torch.distributed.run: torchrun, under its module's name
            return launch("torchrun", as_torchrun(words)[1:])
        return start(words)
    if kind == "path":   # a program named by its path: the user's, inside the folder; an absolute path is not run
        # (./prog after a cd into a folder the script names absolutely is the user's too: it is relative)
        if inside(words[0]) and (not inside_abs(words[0]) or not os.path.isabs(words[0])):
            return start(words)
        if recorded_by_name(words[0]):
            return by_name(words)
        log("untraceable", argv=[shown(w) for w in words], why="a program named by its absolute path")
        return 0
    if kind == "launch":
        return launch(words[0], words[1:])
    if kind == "parallel":
        return parallel(words)
    if kind == "glob":
        return globs(words)
    if kind == "folder":
        return folder(words[0])
    if kind == "file" and inside(words[0]) and not os.path.lexists(words[0]):   # read with <: the user's
        make(absolute(words[0]), "file")
        log("folder", made=[[shown(absolute(words[0])), "file"]])
        return 0
    log(kind, argv=[shown(w) for w in words])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
