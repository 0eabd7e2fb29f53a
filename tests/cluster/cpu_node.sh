#!/usr/bin/env bash
# cpu_node.sh KEEP_DIR: inside a node's private mount namespace (cluster.sh start_slurmd), make
# the node look like an Alliance CPU node, which has no CUDA until `module load cuda`.
#
# A development machine may have a partial CUDA: /usr/local/cuda (-> cuda-13.0, no runtime) and
# small wrappers in /usr/local/bin (nvcc, ptxas, ...) that exec it. PyTorch then finds a
# CUDA_HOME, and Horovod's build takes its CUDA path and stops at CMake ("Could NOT find
# CUDAToolkit"). Here /usr/local is replaced by a tmpfs holding everything it held but that:
# folders bind-mounted back, other files linked from KEEP_DIR, where the original stays
# mounted. Nothing outside the namespace changes; the mounts go with the node's slurmd.
set -euo pipefail
keep=$1

is_cuda_wrapper() {  # a small script that runs something under /usr/local/cuda
    [[ -f $1 && $(stat -c %s "$1") -lt 4096 ]] && grep -q '/usr/local/cuda' "$1" 2>/dev/null
}

[[ -e /usr/local/cuda || -e /usr/local/bin/nvcc ]] || exit 0
mkdir -p "$keep"
mount --bind /usr/local "$keep"
mount -t tmpfs -o mode=0755 tmpfs /usr/local
for entry in "$keep"/* "$keep"/.[!.]*; do
    [[ -e $entry || -L $entry ]] || continue
    name=${entry##*/}
    case $name in cuda | cuda-*) continue ;; esac
    if [[ -L $entry || ! -d $entry ]]; then
        cp -P "$entry" "/usr/local/$name"
    elif [[ $name == bin ]]; then
        mkdir /usr/local/bin
        for tool in "$entry"/*; do
            is_cuda_wrapper "$tool" || ln -s "$tool" "/usr/local/bin/${tool##*/}"
        done
    else
        mkdir "/usr/local/$name"
        mount --bind "$entry" "/usr/local/$name"
    fi
done
