"""Synthetic ResNet-50 training with DistributedDataParallel over NCCL: images/s on N GPUs.

One process per GPU (started by torchrun). Batch 128 per GPU, bf16 autocast, SGD with
momentum, random images made once on the GPU: the data pipeline is out of the measure.
``--ddp defaults`` wraps the model as PyTorch's defaults do; ``--ddp tuned`` lets the
gradients live in DDP's buckets (no copy) and declares the graph static. Rank 0 prints one
line: ``BENCH {json}``.

Started without torchrun (no ``LOCAL_RANK``: kind ``gpu``'s one process) it trains on its first
visible GPU alone, without DDP. ``--model resnet18 --sleep S`` with a small batch makes a GPU
that is mostly idle (S seconds asleep after each step), for bench/gpu_sampler.py. With
``SLURMKIT_BENCH_SMOKE=1`` it touches no GPU and imports no torch: it sleeps a moment and
prints a made-up BENCH line, so that the bench's own plumbing can be tried on a machine
without GPUs (bench/gpu_sampler.py run --smoke).
"""

import argparse
import json
import os
import time


def smoke(args) -> None:
    """No GPU: the BENCH line's shape, from rank 0 only, after as long as a short run takes."""
    time.sleep(1.5 + args.sleep * args.steps / 20)
    if int(os.environ.get("RANK", "0")) == 0:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        print("BENCH " + json.dumps({"label": args.label, "gpus": world, "model": args.model, "batch_per_gpu": args.batch,
                                     "steps": args.steps, "seconds": 1.0, "images_per_s": 1000.0 * world,
                                     "torch": "smoke", "device": "smoke (no GPU)"}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--ddp", choices=("defaults", "tuned"), default="defaults")
    parser.add_argument("--label", default="")
    parser.add_argument("--model", choices=("resnet50", "resnet18"), default="resnet50")
    parser.add_argument("--sleep", type=float, default=0.0, help="seconds asleep after each step (a mostly idle GPU)")
    args = parser.parse_args()
    if os.environ.get("SLURMKIT_BENCH_SMOKE") == "1":
        return smoke(args)

    import torch
    import torch.distributed as dist
    import torchvision

    distributed = "LOCAL_RANK" in os.environ
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    if distributed:
        dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    torch.backends.cudnn.benchmark = True

    model = getattr(torchvision.models, args.model)().cuda()
    extra = dict(gradient_as_bucket_view=True, static_graph=True) if args.ddp == "tuned" else {}
    if distributed:
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
        if args.sleep:
            torch.cuda.synchronize()
            time.sleep(args.sleep)

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    if distributed:
        dist.barrier()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    torch.cuda.synchronize()
    elapsed = torch.tensor([time.perf_counter() - start], device="cuda")
    if distributed:
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)      # the slowest rank sets the pace
    if rank == 0:
        result = {"label": args.label, "gpus": world, "ddp": args.ddp if distributed else "none", "model": args.model,
                  "batch_per_gpu": args.batch, "steps": args.steps,
                  "seconds": round(elapsed.item(), 4), "images_per_s": round(world * args.batch * args.steps / elapsed.item(), 1),
                  "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "affinity": len(os.sched_getaffinity(0)),
                  "torch": torch.__version__, "device": torch.cuda.get_device_name(local)}
        print("BENCH " + json.dumps(result), flush=True)
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
