"""Synthetic ResNet-50 training with DistributedDataParallel over NCCL: images/s on N GPUs.

One process per GPU (started by torchrun). Batch 128 per GPU, bf16 autocast, SGD with
momentum, random images made once on the GPU: the data pipeline is out of the measure.
``--ddp defaults`` wraps the model as PyTorch's defaults do; ``--ddp tuned`` lets the
gradients live in DDP's buckets (no copy) and declares the graph static. Rank 0 prints one
line: ``BENCH {json}``.
"""

import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torchvision


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--ddp", choices=("defaults", "tuned"), default="defaults")
    parser.add_argument("--label", default="")
    args = parser.parse_args()

    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.backends.cudnn.benchmark = True

    model = torchvision.models.resnet50().cuda()
    extra = dict(gradient_as_bucket_view=True, static_graph=True) if args.ddp == "tuned" else {}
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local], **extra)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    images = torch.randn(args.batch, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 1000, (args.batch,), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()

    def step() -> None:
        optimiser.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(images), labels)
        loss.backward()
        optimiser.step()

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    torch.cuda.synchronize()
    elapsed = torch.tensor([time.perf_counter() - start], device="cuda")
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)      # the slowest rank sets the pace
    if rank == 0:
        result = {"label": args.label, "gpus": world, "ddp": args.ddp, "batch_per_gpu": args.batch, "steps": args.steps,
                  "seconds": round(elapsed.item(), 4), "images_per_s": round(world * args.batch * args.steps / elapsed.item(), 1),
                  "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "affinity": len(os.sched_getaffinity(0)),
                  "torch": torch.__version__, "device": torch.cuda.get_device_name(local)}
        print("BENCH " + json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
