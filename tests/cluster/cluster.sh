#!/usr/bin/env bash
# A real SLURM cluster on this one machine, for slurmkit's integration tests.
#
#   cluster.sh install   apt-get the packages it needs (munge, slurm, mariadb, Open MPI, Lmod, GNU Parallel)
#   cluster.sh up        boot it (idempotent; installs first if a package is missing)
#   cluster.sh env       print the exports a client needs:  eval "$(cluster.sh env)"
#   cluster.sh status    which daemons run, and sinfo
#   cluster.sh down      stop what `up` started (by pid file); keeps database and state
#   cluster.sh clean     down, then wipe database, state and logs (next `up` is a cold start)
#
# Everything lives under $SLURMKIT_CLUSTER_DIR (default: tests/cluster/.state). Nothing outside
# it is touched except installing packages: munge, mariadb, slurmdbd, slurmctld and two slurmd
# run on private sockets and non-default ports, so this can run beside a system SLURM. Each
# slurmd runs in its own UTS+mount namespace, where it has its own hostname, its own
# node-local $SLURM_TMPDIR, and /etc/hosts and /etc/slurm bind-mounted from this folder; and,
# like an Alliance CPU node, no CUDA outside `module load cuda` (cpu_node.sh).
#
# Settings (environment):
#   SLURMKIT_CLUSTER_NODES=2          how many slurmd "nodes"
#   SLURMKIT_CLUSTER_CPUS=2           CPUs per node (may exceed the machine: config_overrides)
#   SLURMKIT_CLUSTER_MEM=4000         RealMemory per node, MB
#   SLURMKIT_CLUSTER_GPUS=2           p100 GPUs per node (character-device stand-ins)
#   SLURMKIT_CLUSTER_REQUIRE_ACCOUNT=1  reject jobs without --account, as the Alliance does
#   SLURMKIT_CLUSTER_NAMESPACES=auto  auto | 1 | 0 (own hostname and local scratch per node)
#   SLURMKIT_CLUSTER_PORT_BASE=16800  controller 17, dbd 19, mariadb 16806, node i: +200+i
# The design and its pitfalls are recorded in ../shared/local_cluster_notes.md.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BASE=${SLURMKIT_CLUSTER_DIR:-$HERE/.state}
NODES=${SLURMKIT_CLUSTER_NODES:-2}
CPUS=${SLURMKIT_CLUSTER_CPUS:-2}
MEM=${SLURMKIT_CLUSTER_MEM:-4000}
GPUS=${SLURMKIT_CLUSTER_GPUS:-2}
REQUIRE_ACCOUNT=${SLURMKIT_CLUSTER_REQUIRE_ACCOUNT:-1}
NAMESPACES=${SLURMKIT_CLUSTER_NAMESPACES:-auto}
PORT_BASE=${SLURMKIT_CLUSTER_PORT_BASE:-16800}
CTLD_PORT=$((PORT_BASE + 17))
DBD_PORT=$((PORT_BASE + 19))
DB_PORT=$((PORT_BASE + 6))
CLUSTER=lab
ACCOUNTS=(def-test def-other)
PACKAGES=(munge slurmctld slurmd slurmdbd slurm-client mariadb-server openmpi-bin libopenmpi-dev
          lmod python3-venv python3-virtualenv shellcheck squashfs-tools squashfuse fuse3 parallel
          openssh-server openssh-client rsync   # the tests' own sshd for --remote (tests/integration/sshd.py)
          gcc)  # cc builds the preload library that takes flock away (tests/faults/test_no_flock.py)
CTLD_HOST=$(hostname -s)
export SLURM_CONF=$BASE/etc/slurm.conf

log() { printf 'cluster: %s\n' "$*" >&2; }
die() { printf 'cluster: error: %s\n' "$*" >&2; exit 1; }

node_names() { local i; for ((i = 1; i <= NODES; i++)); do echo "node$i"; done; }
node_range() { if ((NODES == 1)); then echo node1; else echo "node[1-$NODES]"; fi; }

# ---------------------------------------------------------------------------------- install

missing_packages() {
    local p
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
    done
}

cmd_install() {
    local missing
    missing=$(missing_packages)
    [[ -z $missing ]] && return 0
    mkdir -p "$BASE/log"
    log "installing: $(echo "$missing" | tr '\n' ' ')"
    # A policy-rc.d that says 101 keeps apt from starting the system's own munge, slurm
    # and mariadb services; ours run privately. Add one only if the machine has none.
    local policy=/usr/sbin/policy-rc.d added=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; added=1
    fi
    # shellcheck disable=SC2086
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        $missing; } >"$BASE/log/apt.log" 2>&1 \
        || { ((added)) && rm -f "$policy"; tail -20 "$BASE/log/apt.log" >&2; die "apt-get failed"; }
    ((added)) && rm -f "$policy"
    return 0
}

# ---------------------------------------------------------------------------------- helpers

pid_alive() { local f=$BASE/run/$1.pid; [[ -s $f ]] && kill -0 "$(cat "$f")" 2>/dev/null; }

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
    local limit=$1 what=$2 i; shift 2
    for ((i = 0; i < limit * 10; i++)); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    die "$what did not come up within ${limit}s (logs: $BASE/log)"
}

write_if_changed() {  # write_if_changed FILE MODE < content; returns 0 if it changed
    local file=$1 mode=$2 tmp
    tmp=$(mktemp "$file.XXXXXX")
    cat >"$tmp"; chmod "$mode" "$tmp"
    if [[ -f $file ]] && cmp -s "$tmp" "$file"; then rm -f "$tmp"; return 1; fi
    mv -f "$tmp" "$file"; return 0
}

use_namespaces() {
    case $NAMESPACES in
        1) return 0 ;;
        0) return 1 ;;
        *) unshare --uts --mount -- true 2>/dev/null ;;
    esac
}

# ------------------------------------------------------------------------------ configuration

CONFIG_CHANGED=0
put() { if write_if_changed "$@"; then CONFIG_CHANGED=1; fi; }

write_slurm_conf() {
    local name i=0 gres=""
    ((GPUS > 0)) && gres="Gres=gpu:p100:$GPUS"
    {
        cat <<EOF
# Written by tests/cluster/cluster.sh; edits are overwritten by the next \`up\`.
ClusterName=$CLUSTER
SlurmctldHost=$CTLD_HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$BASE/run/munge.sock
CredType=cred/munge
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/nodes/%n/spool
SlurmctldPidFile=$BASE/run/slurmctld.pid
SlurmdPidFile=$BASE/run/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
TmpFS=$BASE/nodes/%n/tmp
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
SchedulerType=sched/backfill
SchedulerParameters=defer_batch=0
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
# Connections to slurmdbd take their munge socket from here, not from AuthInfo.
AccountingStoragePass=$BASE/run/munge.sock
AccountingStorageEnforce=associations,limits,qos
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=5
JobCompType=jobcomp/none
MpiDefault=pmix
PrologFlags=Alloc
Prolog=$BASE/etc/prolog.sh
Epilog=$BASE/etc/epilog.sh
TaskProlog=$BASE/etc/taskprolog.sh
MailProg=/bin/true
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=30
MinJobAge=600
InactiveLimit=0
SlurmctldDebug=info
SlurmdDebug=info
EOF
        ((REQUIRE_ACCOUNT)) && echo "JobSubmitPlugins=lua"
        for name in $(node_names); do
            i=$((i + 1))
            echo "NodeName=$name NodeHostname=$name NodeAddr=127.0.0.1 Port=$((PORT_BASE + 200 + i))" \
                 "CPUs=$CPUS Boards=1 SocketsPerBoard=1 CoresPerSocket=$CPUS ThreadsPerCore=1" \
                 "RealMemory=$MEM $gres State=UNKNOWN"
        done
        echo "PartitionName=compute Nodes=$(node_range) Default=YES MaxTime=7-00:00:00 State=UP"
    } | put "$BASE/etc/slurm.conf" 644
}

write_gres_conf() {
    local i
    {
        echo "AutoDetect=off"
        ((GPUS > 0)) && echo "NodeName=$(node_range) Name=gpu Type=p100 File=$BASE/dev/nvidia[0-$((GPUS - 1))]"
        true
    } | put "$BASE/etc/gres.conf" 644
    # slurmd hands CUDA_VISIBLE_DEVICES only for real device files: character devices
    # with NVIDIA's major number stand in for the GPUs.
    for ((i = 0; i < GPUS; i++)); do
        [[ -c $BASE/dev/nvidia$i ]] || mknod "$BASE/dev/nvidia$i" c 195 "$i" 2>/dev/null \
            || ln -sfn /dev/null "$BASE/dev/nvidia$i"
    done
}

write_slurmdbd_conf() {
    put "$BASE/etc/slurmdbd.conf" 600 <<EOF
AuthType=auth/munge
AuthInfo=socket=$BASE/run/munge.sock
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$BASE/run/slurmdbd.pid
LogFile=$BASE/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
EOF
}

write_job_submit_lua() {
    # The Alliance clusters refuse a job without --account when a user has several
    # allocations; plain AccountingStorageEnforce would fall back to the default account.
    put "$BASE/etc/job_submit.lua" 644 <<'EOF'
function slurm_job_submit(job_desc, part_list, submit_uid)
  if job_desc.account == nil or job_desc.account == '' then
    slurm.log_user("You must specify an account with --account=<account> (e.g. --account=def-test)")
    return slurm.ESLURM_INVALID_ACCOUNT
  end
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end
EOF
}

write_node_scripts() {
    # Expanded inside the node scripts, not here.
    # shellcheck disable=SC2016
    local scratch='$BASE/localscratch'
    # shellcheck disable=SC2016
    use_namespaces || scratch='$BASE/nodes/$SLURMD_NODENAME/localscratch'
    # Prolog (root, every allocated node): the job's node-local scratch, as on Alliance nodes.
    put "$BASE/etc/prolog.sh" 755 <<EOF
#!/bin/bash
BASE='$BASE'
dir="$scratch/\$SLURM_JOB_USER.\$SLURM_JOB_ID.0"
mkdir -p "\$dir" && chown "\$SLURM_JOB_UID:\$SLURM_JOB_GID" "\$dir" && chmod 700 "\$dir"
echo "prolog \$SLURMD_NODENAME \$SLURM_JOB_ID \$dir" >>"\$BASE/log/prolog.log"
EOF
    put "$BASE/etc/epilog.sh" 755 <<EOF
#!/bin/bash
BASE='$BASE'
dir="$scratch/\$SLURM_JOB_USER.\$SLURM_JOB_ID.0"
rm -rf --one-file-system "\$dir"
echo "epilog \$SLURMD_NODENAME \$SLURM_JOB_ID" >>"\$BASE/log/prolog.log"
EOF
    # TaskProlog (job user, every task): its "export" lines reach the batch script and
    # every srun task. BASH_ENV gives plain #!/bin/bash scripts the module command.
    put "$BASE/etc/taskprolog.sh" 755 <<EOF
#!/bin/bash
BASE='$BASE'
echo "export SLURM_TMPDIR=$scratch/\$SLURM_JOB_USER.\$SLURM_JOB_ID.0"
echo "export BASH_ENV=\$BASE/etc/bash_env.sh"
echo "export MODULEPATH=\$BASE/modules"
# Jobs run as root here; Open MPI refuses root unless told this twice.
echo "export OMPI_ALLOW_RUN_AS_ROOT=1"
echo "export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
EOF
    put "$BASE/etc/bash_env.sh" 644 <<EOF
# Sourced by every non-interactive bash in a job (BASH_ENV): Lmod's module command.
export MODULEPATH='$BASE/modules'
if ! declare -F module >/dev/null; then
    . /usr/share/lmod/lmod/init/bash
fi
EOF
    { grep -v -E '\snode[0-9]+$' /etc/hosts || true; for n in $(node_names); do echo "127.0.0.1 $n"; done; } \
        | put "$BASE/etc/hosts" 644
}

# A module tree shaped like the Alliance stack (StdEnv/2023 over CVMFS), pointing at real
# tools where Debian has them (python3.11, Open MPI) and at empty stand-ins otherwise.
write_modules() {
    local m=$BASE/modules sw=$BASE/sw
    mkdir -p "$m"/{StdEnv,gcc,python,cuda,cudnn,openmpi,nccl} "$sw"/python/3.11/bin \
             "$sw"/cuda/12.2/{bin,lib64,include} "$sw"/cudnn/8.9.5.29/lib "$sw"/nccl/2.18.3/lib
    ln -sfn /usr/bin/python3.11 "$sw/python/3.11/bin/python"
    ln -sfn /usr/bin/python3.11 "$sw/python/3.11/bin/python3"
    ln -sfn /usr/bin/virtualenv "$sw/python/3.11/bin/virtualenv"
    put "$m/StdEnv/2023.lua" 644 <<'EOF'
whatis("The Alliance's standard environment of 2023 (local test stand-in)")
setenv("EBVERSIONSTDENV", "2023")
setenv("CC_STDENV", "2023")
if not isloaded("gcc") then load("gcc/12.3") end
if not isloaded("openmpi") then load("openmpi/4.1.5") end
EOF
    put "$m/gcc/12.3.lua" 644 <<'EOF'
whatis("GNU compilers (Debian's gcc)")
family("compiler")
setenv("EBROOTGCC", "/usr")
setenv("EBVERSIONGCC", "12.3")
EOF
    put "$m/openmpi/4.1.5.lua" 644 <<'EOF'
whatis("Open MPI (Debian's Open MPI 4.1)")
family("mpi")
setenv("EBROOTOPENMPI", "/usr")
setenv("EBVERSIONOPENMPI", "4.1.5")
setenv("MPI_HOME", "/usr/lib/x86_64-linux-gnu/openmpi")
EOF
    put "$m/python/3.11.lua" 644 <<EOF
whatis("Python 3.11 (Debian's python3.11)")
prepend_path("PATH", "$sw/python/3.11/bin")
setenv("EBROOTPYTHON", "$sw/python/3.11")
setenv("EBVERSIONPYTHON", "3.11.5")
EOF
    put "$m/cuda/12.2.lua" 644 <<EOF
whatis("CUDA 12.2 (empty stand-in: no GPU here)")
prepend_path("PATH", "$sw/cuda/12.2/bin")
setenv("EBROOTCUDA", "$sw/cuda/12.2")
setenv("EBVERSIONCUDA", "12.2.2")
setenv("CUDA_HOME", "$sw/cuda/12.2")
EOF
    put "$m/cudnn/8.9.5.29.lua" 644 <<EOF
whatis("cuDNN (empty stand-in)")
prereq("cuda")
setenv("EBROOTCUDNN", "$sw/cudnn/8.9.5.29")
setenv("EBVERSIONCUDNN", "8.9.5.29")
EOF
    put "$m/nccl/2.18.3.lua" 644 <<EOF
whatis("NCCL (empty stand-in)")
prereq("cuda")
setenv("EBROOTNCCL", "$sw/nccl/2.18.3")
setenv("EBVERSIONNCCL", "2.18.3")
EOF
}

write_config() {
    mkdir -p "$BASE"/{etc,run,log,state,dev,mysql,localscratch}
    chmod 700 "$BASE/run" "$BASE/etc"
    local n
    for n in $(node_names); do mkdir -p "$BASE/nodes/$n"/{spool,tmp,localscratch}; done
    write_slurm_conf
    write_gres_conf
    write_slurmdbd_conf
    write_job_submit_lua
    write_node_scripts
    write_modules
}

# ---------------------------------------------------------------------------------- daemons

start_munge() {
    # Our own munged on our own socket and key: the machine's munge (if any) is left alone.
    pid_alive munged && return 0
    [[ -s $BASE/etc/munge.key ]] || { mungekey --create --keyfile="$BASE/etc/munge.key" --force 2>/dev/null \
        || dd if=/dev/urandom of="$BASE/etc/munge.key" bs=1024 count=1 status=none; }
    chmod 400 "$BASE/etc/munge.key"
    munged --force --socket="$BASE/run/munge.sock" --key-file="$BASE/etc/munge.key" \
        --pid-file="$BASE/run/munged.pid" --log-file="$BASE/log/munged.log" \
        --seed-file="$BASE/run/munged.seed" 2>>"$BASE/log/munged.log"
    wait_for 10 munged test -S "$BASE/run/munge.sock"
}

# shellcheck disable=SC2120
mariadb_sql() { mariadb --no-defaults --socket="$BASE/run/mysqld.sock" -uroot "$@"; }

start_mariadb() {
    pid_alive mysqld && return 0
    if [[ ! -d $BASE/mysql/data/mysql ]]; then
        mariadb-install-db --no-defaults --datadir="$BASE/mysql/data" --user=root --skip-test-db \
            --auth-root-authentication-method=socket >"$BASE/log/mariadb-install.log" 2>&1 \
            || die "mariadb-install-db failed (see $BASE/log/mariadb-install.log)"
    fi
    mariadbd --no-defaults --datadir="$BASE/mysql/data" --socket="$BASE/run/mysqld.sock" \
        --port="$DB_PORT" --bind-address=127.0.0.1 --user=root --pid-file="$BASE/run/mysqld.pid" \
        --skip-name-resolve --innodb-buffer-pool-size=128M --innodb-lock-wait-timeout=900 \
        --log-error="$BASE/log/mariadb.log" </dev/null >/dev/null 2>&1 &
    disown
    wait_for 30 mariadb mariadb_sql -e 'SELECT 1'
    # shellcheck disable=SC2119
    mariadb_sql <<'EOF'
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmpw';
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmpw';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
EOF
}

start_slurmdbd() {
    pid_alive slurmdbd && return 0
    slurmdbd
    wait_for 20 slurmdbd sacctmgr -n show cluster
}

sacctmgr_quiet() { sacctmgr -i "$@" >/dev/null 2>&1 || true; }

ensure_associations() {
    # sacctmgr "add" refuses what exists, so only what is missing is added.
    [[ -n $(sacctmgr -n -P show cluster "$CLUSTER" format=cluster) ]] || sacctmgr_quiet add cluster "$CLUSTER"
    local account user users=(root)
    [[ -n ${SUDO_USER:-} && $SUDO_USER != root ]] && users+=("$SUDO_USER")
    for user in ${SLURMKIT_CLUSTER_USERS:-}; do users+=("$user"); done
    for account in "${ACCOUNTS[@]}"; do
        [[ -n $(sacctmgr -n -P show account "$account" format=account) ]] \
            || sacctmgr_quiet add account "$account" Cluster="$CLUSTER" Description=slurmkit-tests Organization=slurmkit
    done
    for user in "${users[@]}"; do
        for account in "${ACCOUNTS[@]}"; do
            [[ -n $(sacctmgr -n -P show assoc where user="$user" account="$account" cluster="$CLUSTER" format=user) ]] \
                || sacctmgr_quiet add user "$user" Account="$account" Cluster="$CLUSTER"
        done
        sacctmgr_quiet modify user where name="$user" cluster="$CLUSTER" set DefaultAccount="${ACCOUNTS[0]}"
    done
}

start_slurmctld() {
    if pid_alive slurmctld; then
        ((CONFIG_CHANGED)) && scontrol reconfigure >/dev/null
        return 0
    fi
    slurmctld
    wait_for 20 slurmctld scontrol ping
}

start_slurmd() {  # start_slurmd NODE
    local node=$1
    pid_alive "slurmd-$node" && return 0
    if use_namespaces; then
        # shellcheck disable=SC2016
        unshare --uts --mount --propagation private -- bash -c '
            set -e
            hostname "$1"
            mount --bind "$2/nodes/$1/localscratch" "$2/localscratch"
            mount --bind "$2/etc/hosts" /etc/hosts
            if [ -d /etc/slurm ]; then mount --bind "$2/etc" /etc/slurm; fi
            bash "$3" "$2/nodes/$1/usr-local"
            exec slurmd -N "$1" -f "$2/etc/slurm.conf"' _ "$node" "$BASE" "$HERE/cpu_node.sh"
    else
        slurmd -N "$node" -f "$BASE/etc/slurm.conf"
    fi
}

nodes_idle() {
    local states
    states=$(sinfo -h -N -o '%N %t' 2>/dev/null) || return 1
    [[ $(grep -c -E ' (idle|mix|alloc)$' <<<"$states") -ge $NODES ]]
}

resume_drained_nodes() {
    # A node left "down" by an earlier unclean stop is put back into service.
    local node
    for node in $(sinfo -h -N -t down,drain -o '%N' 2>/dev/null | sort -u); do
        scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true
    done
}

cmd_up() {
    [[ $(id -u) == 0 ]] || die "run as root (it starts slurmd, which needs root)"
    [[ -z $(missing_packages) ]] || cmd_install
    local t0=$SECONDS n
    write_config
    start_munge
    start_mariadb
    start_slurmdbd
    ensure_associations
    start_slurmctld
    for n in $(node_names); do start_slurmd "$n"; done
    sleep 0.5
    resume_drained_nodes
    wait_for 30 "the nodes" nodes_idle
    log "up in $((SECONDS - t0))s: $(sinfo -h -N -o '%N:%t' | sort -u | tr '\n' ' ')"
    echo "export SLURM_CONF=$SLURM_CONF"
}

stop_daemon() {  # stop_daemon NAME: SIGTERM by pid file, wait up to 30 s, then SIGKILL
    local f=$BASE/run/$1.pid pid i
    [[ -s $f ]] || return 0
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && { log "$1 ($pid) ignored SIGTERM; killing"; kill -9 "$pid" 2>/dev/null || true; }
    fi
    rm -f "$f"
}

cmd_down() {
    local n
    for n in $(node_names); do stop_daemon "slurmd-$n" & done
    wait
    stop_daemon slurmctld
    stop_daemon slurmdbd
    stop_daemon mysqld
    stop_daemon munged
    log "down"
}

cmd_clean() {
    cmd_down
    [[ -d $BASE ]] && rm -rf --one-file-system "$BASE"
    log "cleaned $BASE"
}

cmd_status() {
    local d rc=0
    for d in munged mysqld slurmdbd slurmctld $(node_names | sed 's/^/slurmd-/'); do
        if pid_alive "$d"; then printf '%-14s running (pid %s)\n' "$d" "$(cat "$BASE/run/$d.pid")"
        else printf '%-14s stopped\n' "$d"; rc=3; fi
    done
    if ((rc == 0)); then sinfo -N -o '%N %t %c %m %G' || rc=3; fi
    return $rc
}

cmd_env() {
    echo "export SLURM_CONF=$SLURM_CONF"
    echo "export SLURMKIT_CLUSTER_DIR=$BASE"
}

case ${1:-} in
    install) cmd_install ;;
    up) cmd_up ;;
    down) cmd_down ;;
    clean) cmd_clean ;;
    status) cmd_status ;;
    env) cmd_env ;;
    *) echo "usage: $0 install|up|down|clean|status|env" >&2; exit 2 ;;
esac
