"""PyTorch DistributedDataParallel across nodes, placed by the environment alone.

Why: the job script (srun, one task per GPU) exports RANK, LOCAL_RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT, so init_process_group("env://") needs no arguments and the same
file runs under srun, torchrun or a CPU test cluster. Each rank takes its GPU from LOCAL_RANK
(NCCL); without CUDA it runs on CPUs with the gloo backend.

It trains a small network on synthetic data (the same on every rank, made from one seed);
DistributedSampler gives each rank a disjoint share of it every epoch. Every rank prints
``rank=R world=W final_loss=L`` (the last epoch's loss averaged over all ranks), and rank 0
saves the checkpoint.
"""

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--samples", type=int, default=2048, help="synthetic samples in all (shared by the ranks)")
    parser.add_argument("--batch-size", type=int, default=64, help="samples per rank and step")
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--checkpoint", default="checkpoints/ddp.pt", help="written by rank 0 at the end")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def synthetic_data(samples, features, seed):
    """A learnable task: labels from a fixed random linear 'teacher', the same on every rank."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(samples, features, generator=generator)
    teacher = torch.randn(features, 4, generator=generator)
    y = (x @ teacher).argmax(dim=1)
    return TensorDataset(x, y)


def main():
    args = parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device, backend = torch.device("cuda", local_rank), "nccl"
    else:
        device, backend = torch.device("cpu"), "gloo"
    dist.init_process_group(backend=backend, init_method="env://")
    if rank == 0:
        print(f"world={world} backend={backend} master={os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}", flush=True)

    torch.manual_seed(args.seed)       # the same initial weights everywhere (DDP also broadcasts them)
    model = nn.Sequential(nn.Linear(args.features, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    dataset = synthetic_data(args.samples, args.features, args.seed)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    start, epoch_loss = time.perf_counter(), float("nan")
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)       # a different shuffle each epoch, still disjoint across ranks
        total = torch.zeros(2, device=device)      # loss sum, samples
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()            # DDP averages the gradients across ranks here
            optimizer.step()
            total += torch.stack([loss.detach() * len(y), torch.tensor(float(len(y)), device=device)])
        dist.all_reduce(total)         # the epoch's loss over every rank's samples
        epoch_loss = (total[0] / total[1]).item()
        if rank == 0:
            print(f"epoch {epoch + 1}/{args.epochs} loss={epoch_loss:.4f}", flush=True)

    print(f"rank={rank} world={world} final_loss={epoch_loss:.6f}", flush=True)
    if rank == 0:
        os.makedirs(os.path.dirname(args.checkpoint) or ".", exist_ok=True)
        torch.save({"model": model.module.state_dict(), "epochs": args.epochs, "final_loss": epoch_loss}, args.checkpoint)
        print(f"saved {args.checkpoint} after {time.perf_counter() - start:.1f} s", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # Everything is saved and the process group is gone; end here rather than in interpreter
    # shutdown, where a gloo thread still finishing can abort a rank whose work is done
    # ("terminate called without an active exception", seen once in many runs on a loaded
    # machine) and turn a finished job into a FAILED one.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
