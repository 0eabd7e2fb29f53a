"""What bench/kinds_gpu.py's three payloads share: synthetic ResNet-50 (channels-last, batch 128
per GPU, random images made once on the device: the data pipeline is out of the measure), the
timed loop's shape and the one line rank 0 prints: ``BENCH {json}``. ``--smoke``: a tiny conv
net on CPU with gloo, so the bench can be tried end to end on a machine without GPUs."""

import argparse
import json
import os

import torch


def arguments(label: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=128)
    # kinds_gpu.py --steps sets BENCH_STEPS for every launcher alike (a longer window amortises
    # what a framework does once at the start and the end of its loop)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--steps", type=int, default=int(os.environ.get("BENCH_STEPS", "60")))
    parser.add_argument("--smoke", action="store_true", help="CPU, a tiny model, 3 steps: checks the plumbing only")
    parser.add_argument("--label", default=label)
    args = parser.parse_args()
    if args.smoke:
        args.batch, args.warmup, args.steps = 4, 1, 3
    return args


def model(smoke: bool) -> torch.nn.Module:
    if smoke:
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 1000))
    else:
        import torchvision
        net = torchvision.models.resnet50()
    return net.to(memory_format=torch.channels_last)


def batch(size: int, device, smoke: bool):
    side = 32 if smoke else 224
    images = torch.randn(size, 3, side, side, device=device).contiguous(memory_format=torch.channels_last)
    return images, torch.randint(0, 1000, (size,), device=device)


def report(args, world: int, seconds: float, device_name: str, **extra) -> None:
    result = {"label": args.label, "gpus": world, "batch_per_gpu": args.batch, "steps": args.steps, "seconds": round(seconds, 4),
              "images_per_s": round(world * args.batch * args.steps / seconds, 1), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
              "affinity": len(os.sched_getaffinity(0)), "torch": torch.__version__, "device": device_name, **extra}
    print("BENCH " + json.dumps(result), flush=True)
