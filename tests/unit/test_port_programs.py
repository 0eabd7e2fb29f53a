"""Programs of a module the port moves to a new major version (slurmkit/port/programs.py)."""

import pytest

from slurmkit.port.programs import major_moves, program_moves


def test_a_documented_rename_is_made_where_the_major_version_changed():
    moved = major_moves(["StdEnv/2020", "namd-multicore/2.14"], ["StdEnv/2023", "namd-multicore/3.0.2"])
    text, reasons, todos = program_moves("charmrun ++p 8 namd2 in.namd > namd2.log", moved)
    assert text == "charmrun ++p 8 namd3 in.namd > namd2.log"
    assert reasons and "runs namd3 in place of namd2" in reasons[0] and not todos


def test_another_program_of_a_module_moved_to_a_new_major_version_is_a_to_do():
    moved = major_moves(["toolx/1.4"], ["toolx/2.0"])
    text, reasons, todos = program_moves("module load toolx/2.0\ntoolx_run --in data.txt", moved)
    assert text == "module load toolx/2.0\ntoolx_run --in data.txt" and not reasons
    assert todos == ["toolx/1.4 became toolx/2.0, a new major version: check that toolx_run still exists there "
                     "and takes the same words ('module load toolx/2.0; which toolx_run')"]


def test_the_same_major_version_or_a_stack_is_no_move():
    assert major_moves(["toolx/2.1", "StdEnv/2020"], ["toolx/2.4", "StdEnv/2023"]) == {}


def test_only_the_moved_modules_own_programs_are_named():
    """r's programs are R and Rscript; nextflow's subcommand ``run`` starts with r but is no program of r."""
    moved = major_moves(["r/3.4.0"], ["r/4.4.0"])
    assert program_moves("nextflow run x.nf", moved)[2] == []
    todos = program_moves("Rscript fit.R && R CMD BATCH b.R && rm -f run.log", moved)[2]
    assert [t.split("check that ")[1].split(" ")[0] for t in todos] == ["R", "Rscript"]


def test_a_module_name_too_short_for_a_prefix_names_only_the_program_spelled_like_it():
    todos = program_moves("go build && gofmt -l . && goat", major_moves(["go/1.10"], ["go/2.0"]))[2]
    assert [t.split("check that ")[1].split(" ")[0] for t in todos] == ["go"]


MATLAB = {"matlab": ("matlab/2020a", "matlab/2023b.2", 2023)}


@pytest.mark.parametrize("line", [
    "matlab -nodisplay -singleCompThread -r \"run('analysis.m'); exit\"",
    "matlab -nojvm -batch \"-x\"",                     # the word after -batch is its value, not an option
    "srun matlab -nosplash -nodesktop -logfile run.log -r main",
])
def test_matlab_with_the_options_every_release_takes_asks_nothing_on_a_new_release(line):
    """MATLAB's releases are years: 2020a -> 2023b.2 is no new program, and these options are in
    every release's documented startup options."""
    assert program_moves(line, MATLAB) == (line, [], [])


def test_matlab_with_an_option_no_source_documents_is_still_a_to_do():
    _, _, todos = program_moves("matlab -nodisplay -wait -r main", MATLAB)
    assert todos == ["matlab/2020a became matlab/2023b.2, a new major version: check that matlab still exists there "
                     "and takes the same words ('module load matlab/2023b.2; which matlab')"]


@pytest.mark.parametrize("text", ["mkdir gurobipy", "cd gurobipy", "mkdir -p gurobipy && cd gurobipy/", "cd gurobipy; ls"])
def test_a_folder_the_script_makes_or_enters_is_no_program_of_the_module(text):
    """`mkdir gurobipy; cd gurobipy` names a folder that shares the gurobi module's name, not a program."""
    assert program_moves(text, major_moves(["gurobi/9.1.0"], ["gurobi/10.0.3"]))[2] == []


def test_a_program_beside_a_folder_of_the_same_stem_is_still_a_to_do():
    todos = program_moves("mkdir gurobi_out && gurobi_cl model.lp", major_moves(["gurobi/9.1.0"], ["gurobi/10.0.3"]))[2]
    assert [t.split("check that ")[1].split(" ")[0] for t in todos] == ["gurobi_cl"]


def test_a_move_across_a_version_that_removed_something_names_what_went():
    """Nextflow 22.12 removed DSL1: a job that asks for it stops at once on 23.10."""
    moved = major_moves(["nextflow/21.10.3"], ["nextflow/23.10.0"])
    [todo] = program_moves("NXF_DEFAULT_DSL=1 nextflow run main.nf -resume", moved)[2]
    assert todo.startswith("nextflow/21.10.3 became nextflow/23.10.0, which has no DSL1, removed in 22.12.0-edge "
                           "(https://www.nextflow.io/docs/latest/dsl1.html): the job asks for it (NXF_DEFAULT_DSL=1)")
    [todo] = program_moves("nextflow run main.nf", moved)[2]
    assert "a pipeline that still uses it stops at once" in todo
    [generic] = program_moves("nextflow run main.nf", major_moves(["nextflow/23.04.1"], ["nextflow/24.10.0"]))[2]
    assert "check that nextflow still exists there" in generic    # past the removal: nothing more is known


def test_a_program_the_job_builds_itself_gets_no_rebuild_to_do():
    """`make` (or `gcc -o app`) in the job's own lines builds the program on the new stack each run."""
    from slurmkit.port.rebuild import _built_by_the_job

    assert _built_by_the_job([("environment.setup", "make clean && make -j 4")]) == {"*"}
    assert _built_by_the_job([("environment.setup", "gcc -O2 -o sim sim.c")]) == {"sim", "./sim"}
    assert _built_by_the_job([("environment.setup", "cp a b"), ("launch.command", "./sim")]) == set()
    assert _built_by_the_job([("environment.setup", "cmake -DLIB=x ..")]) == set()     # configures, builds nothing
    assert _built_by_the_job([("environment.setup", "cmake --build build -j 4")]) == {"*"}


def test_gromacs_4_tools_become_subcommands_of_gmx_from_5_on():
    """The Alliance GROMACS page: 5 and newer have only gmx, gmx_mpi, gmx_d, gmx_mpi_d; 4.6.7 ran mdrun_mpi."""
    moved = major_moves(["gromacs/4.6.7"], ["gromacs/2016.6"])
    text, reasons, todos = program_moves("mdrun_mpi -s md.tpr -maxh 24 && grompp -f a.mdp", moved)
    assert text == "gmx_mpi mdrun -s md.tpr -maxh 24 && gmx grompp -f a.mdp" and len(reasons) == 2 and not todos
    assert program_moves("gmx_mpi mdrun -deffnm md", major_moves(["gromacs/2018.3"], ["gromacs/2024.4"])) == \
        ("gmx_mpi mdrun -deffnm md", [], [])


def test_a_rename_where_the_job_sources_its_own_build_is_a_to_do():
    """A sourced GMXRC may put the user's patched 4.6.7 first: gmx_mpi would run the module's GROMACS instead."""
    moved = major_moves(["gromacs/4.6.7"], ["gromacs/2016.6"])
    text, reasons, todos = program_moves("mdrun_mpi -s md.tpr", moved, "$HOME/gromacs-4.6.7/bin/GMXRC")
    assert text == "mdrun_mpi -s md.tpr" and not reasons
    assert len(todos) == 1 and "sources $HOME/gromacs-4.6.7/bin/GMXRC" in todos[0] and "gmx_mpi mdrun" in todos[0]


@pytest.mark.parametrize("line", ["mpirun --bind-to none -np 8 ./a.out", "srun --cpu-bind cores -n 8 ./a.out",
                                  "mpirun --map-by node --bind-to none -np 8 -x OMP_NUM_THREADS=8 ./a.out",
                                  "timeout 2h mpiexec -n 8 ./a.out"])
def test_the_program_after_a_launchers_options_with_values_is_found(line):
    """``--bind-to none``: ``none`` is the option's value, not the program, so ./a.out still gets its rebuild to-do."""
    from slurmkit.port.rebuild import started

    assert started(line.split())[0] == "./a.out"


@pytest.mark.parametrize("line, renamed", [
    ("singularity exec img.sif python x.py", "apptainer exec img.sif python x.py"),
    ("srun -n 4 singularity exec img.sif ./a", "srun -n 4 apptainer exec img.sif ./a"),
    ('run="singularity exec -B /data img.sif"', 'run="apptainer exec -B /data img.sif"'),
    ("nextflow run nf-core/rnaseq -profile singularity --input a.csv", "nextflow run nf-core/rnaseq -profile singularity --input a.csv"),
    ("/opt/singularity/bin/tool x", "/opt/singularity/bin/tool x")])
def test_a_renamed_command_is_renamed_where_it_is_a_command_only(line, renamed):
    from slurmkit.port.renamed import renamed_commands
    assert renamed_commands(line, {"singularity": "apptainer"})[0] == renamed


@pytest.mark.parametrize("line", [
    "srun lmp -sf intel -pk intel 0 omp 1 -in in.lj",      # LAMMPS's intel package, selected by name
    "mpirun -np 4 ./solver --compiler intel --out run1",
    "python report.py --backend=intel",
])
def test_a_module_name_that_is_only_an_options_value_runs_no_program_of_it(line):
    """The word after an option is the option's value: intel/2020 -> intel/2023 moves the
    compiler, and a line that names 'intel' only as a value runs no program called intel."""
    moved = major_moves(["intel/2020.1.217"], ["intel/2023.2.1"])
    assert program_moves(line, moved) == (line, [], [])


def test_the_same_name_run_as_a_program_after_a_launcher_is_still_a_to_do():
    moved = major_moves(["toolx/1.4"], ["toolx/2.0"])
    todos = program_moves("srun -n 4 --cpu-bind=cores toolx_run -sf toolx_opt in.dat", moved)[2]
    assert [t.split("check that ")[1].split(" ")[0] for t in todos] == ["toolx_run"]
