"""Synthetic ResNet-50 under plain DistributedDataParallel (bf16 autocast, channels-last), as
`torchrun --standalone` starts it: the baseline bench/kinds_gpu.py sets the kinds beside."""

import os
import time

import resnet_synthetic as common
import torch
import torch.distributed as dist


def main() -> None:
    args = common.arguments("bare")
    local = int(os.environ["LOCAL_RANK"])
    device = torch.device("cpu") if args.smoke else torch.device("cuda", local)
    if args.smoke:
        dist.init_process_group("gloo")
    else:
        torch.cuda.set_device(local)
        dist.init_process_group("nccl", device_id=device)
        torch.backends.cudnn.benchmark = True
    model = torch.nn.parallel.DistributedDataParallel(common.model(args.smoke).to(device), device_ids=None if args.smoke else [local])
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    images, labels = common.batch(args.batch, device, args.smoke)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step() -> None:
        optimiser.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.bfloat16):
            loss = loss_fn(model(images), labels)
        loss.backward()
        optimiser.step()

    for _ in range(args.warmup):
        step()
    if not args.smoke:
        torch.cuda.synchronize()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    if not args.smoke:
        torch.cuda.synchronize()
    elapsed = torch.tensor([time.perf_counter() - start], device=device)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)      # the slowest rank sets the pace
    if dist.get_rank() == 0:
        common.report(args, dist.get_world_size(), elapsed.item(), "cpu" if args.smoke else torch.cuda.get_device_name(local))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
