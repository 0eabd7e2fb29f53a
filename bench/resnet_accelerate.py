"""Synthetic ResNet-50 under Hugging Face Accelerate (its mixed precision from `accelerate launch
--mixed_precision`, bf16 in bench/kinds_gpu.py; channels-last), started by kind accelerate's script."""

import time

import resnet_synthetic as common
import torch
import torch.distributed as dist
from accelerate import Accelerator


def main() -> None:
    args = common.arguments("accelerate")
    accelerator = Accelerator()
    if not args.smoke:
        torch.backends.cudnn.benchmark = True
    model = common.model(args.smoke)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model, optimiser = accelerator.prepare(model, optimiser)
    images, labels = common.batch(args.batch, accelerator.device, args.smoke)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step() -> None:
        optimiser.zero_grad(set_to_none=True)
        with accelerator.autocast():
            loss = loss_fn(model(images), labels)
        accelerator.backward(loss)
        optimiser.step()

    for _ in range(args.warmup):
        step()
    accelerator.wait_for_everyone()
    if not args.smoke:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    if not args.smoke:
        torch.cuda.synchronize()
    elapsed = torch.tensor([time.perf_counter() - start], device=accelerator.device)
    if accelerator.num_processes > 1:
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    if accelerator.is_main_process:
        name = "cpu" if args.smoke else torch.cuda.get_device_name(accelerator.device)
        common.report(args, accelerator.num_processes, elapsed.item(), name, mixed_precision=accelerator.mixed_precision)


if __name__ == "__main__":
    main()
