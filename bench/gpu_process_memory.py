"""Host memory (not GPU memory) that one PyTorch training process on a GPU holds: the figure
behind slurmkit/resolve/sizing.py's floor of memory per GPU process.

SLURM's memory cgroup charges every page a job's processes touch, the pages of the CUDA, cuDNN
and NCCL libraries they map included. So the measure is the proportional set size (PSS: shared
pages split between the processes that share them) of the training process and of its
DataLoader workers, read from /proc/PID/smaps_rollup, at each stage:

1. ``import torch`` (and torchvision);
2. CUDA initialised and one tensor on the GPU (the CUDA context and its libraries);
3. torch.distributed up with NCCL (world of one), as in every DDP rank;
4. ResNet-50 wrapped in DistributedDataParallel, 20 steps of batch 128 in bf16 (cuDNN, cuBLAS);
5. the same with a DataLoader of 4 workers making 3x224x224 images in CPU memory, pinned.

Run on a GPU machine: ``python bench/gpu_process_memory.py``; it prints ``BENCH {json}`` (MiB).
"""

import json
import os
import resource
import sys
import time


def pss_mib(pid: int) -> float:
    """The PSS of one process in MiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except FileNotFoundError:
        pass
    return 0.0


def children(pid: int):
    """The PIDs of ``pid``'s child processes (the DataLoader workers)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(c) for c in handle.read().split()]
    except FileNotFoundError:
        return []


def total_mib() -> float:
    me = os.getpid()
    return round(pss_mib(me) + sum(pss_mib(c) for c in children(me)), 1)


class Images:
    """A map-style data set of random images, made on the CPU as a decoder would."""

    def __init__(self, size: int):
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int):
        import torch

        return torch.randn(3, 224, 224), index % 1000


def main() -> None:
    stages = {}
    import torch
    import torchvision
    stages["import torch"] = total_mib()
    torch.cuda.init()
    torch.ones(1, device="cuda")
    stages["cuda initialised"] = total_mib()
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29533", RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    import torch.distributed as dist
    dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
    stages["nccl process group"] = total_mib()
    model = torch.nn.parallel.DistributedDataParallel(torchvision.models.resnet50().cuda(), device_ids=[0])
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    torch.backends.cudnn.benchmark = True

    def step(images, labels) -> None:
        optimiser.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(images), labels)
        loss.backward()
        optimiser.step()

    images = torch.randn(128, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 1000, (128,), device="cuda")
    for _ in range(20):
        step(images, labels)
    torch.cuda.synchronize()
    stages["resnet50 ddp, 20 steps"] = total_mib()
    loader = torch.utils.data.DataLoader(Images(128 * 40), batch_size=128, num_workers=4, pin_memory=True,
                                         persistent_workers=True, prefetch_factor=2)
    peak = 0.0
    started = time.time()
    for index, (batch, target) in enumerate(loader):
        step(batch.cuda(non_blocking=True), target.cuda(non_blocking=True))
        if index % 5 == 4:
            peak = max(peak, total_mib())
    torch.cuda.synchronize()
    stages["with 4 dataloader workers (peak)"] = round(max(peak, total_mib()), 1)
    stages["max rss of main process"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    dist.destroy_process_group()
    print("BENCH " + json.dumps({"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
                                 "python": sys.version.split()[0], "seconds": round(time.time() - started, 1),
                                 "mib": stages}))


if __name__ == "__main__":
    main()
