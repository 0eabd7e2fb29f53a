"""Synthetic ResNet-50 under PyTorch Lightning (precision "bf16-mixed", channels-last, DDP), one
process per GPU started by srun as kind lightning's script does: Lightning reads the ranks from
SLURM's variables (bench/shim/srun sets them where there is no SLURM).

The loader yields only indices, which the model does not read, as plain ints: no tensor is
copied to the GPU each step, as the bare and Accelerate payloads copy none. A tensor would be
copied twice over from pageable memory, which waits for the GPU's stream: by Lightning's batch
transfer (7% on 2 H200, bench/results/kinds-gpu-h200x2-lightning-variants.json) and by DDP's
forward, which moves every CPU tensor among its inputs (2-GPU Lightning 18% below bare torchrun
on 2 H100, at its pace once gone: bench/results/kinds-gpu-2gpu-direct.json). Variants, for
finding where time goes (bench/kinds_gpu.py's labels set them): BENCH_COPY=1 yields the index as
a tensor and lets Lightning copy it; BENCH_PIN=1 pins the loader's memory (with the copy, a copy
that need not wait); BENCH_DDP=1 wraps the model in DDP on one GPU too, as the bare torchrun
payload always does."""

import os
import time

import resnet_synthetic as common
import torch
import torch.distributed as dist

try:
    import lightning.pytorch as pl
except ImportError:
    import pytorch_lightning as pl


class Synthetic(pl.LightningModule):
    """Each step trains on the same images, made once on the device: the loader yields only indices."""

    def __init__(self, args):
        super().__init__()
        self.args = args
        self.net = common.model(args.smoke)
        self.loss_fn = torch.nn.CrossEntropyLoss()

    def on_fit_start(self):
        self.images, self.labels = common.batch(self.args.batch, self.device, self.args.smoke)

    def transfer_batch_to_device(self, batch, device, dataloader_idx):
        if os.environ.get("BENCH_COPY") == "1":
            return super().transfer_batch_to_device(batch, device, dataloader_idx)
        return batch

    def training_step(self, index, step):
        return self.loss_fn(self.net(self.images), self.labels)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)


class Clock(pl.Callback):
    """Times the steps after the warm-up, as the other payloads do; the slowest rank sets the pace."""

    def __init__(self, args):
        self.args, self.start = args, None

    def _sync(self, module):
        if not self.args.smoke:
            torch.cuda.synchronize()

    def on_train_batch_start(self, trainer, module, batch, index):
        if index == self.args.warmup:
            self._sync(module)
            trainer.strategy.barrier()
            self.start = time.perf_counter()

    def on_train_end(self, trainer, module):
        self._sync(module)
        elapsed = torch.tensor([time.perf_counter() - self.start], device=module.device)
        if dist.is_initialized():
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        if trainer.is_global_zero:
            name = "cpu" if self.args.smoke else torch.cuda.get_device_name(module.device)
            common.report(self.args, trainer.world_size, elapsed.item(), name, precision=str(trainer.precision))


def main() -> None:
    args = common.arguments("lightning")
    if not args.smoke:
        torch.backends.cudnn.benchmark = True
    # kind lightning's script: srun's tasks per node; the direct launch (bench label +direct): torchrun's
    per_node = int(os.environ.get("SLURM_NTASKS_PER_NODE") or os.environ.get("LOCAL_WORLD_SIZE", "1"))
    total = args.warmup + args.steps
    trainer = pl.Trainer(accelerator="cpu" if args.smoke else "gpu", devices=per_node, num_nodes=int(os.environ.get("SLURM_NNODES", "1")),
                         strategy="ddp" if per_node > 1 or os.environ.get("BENCH_DDP") == "1" else "auto", precision="bf16-mixed",
                         max_steps=total, max_epochs=1,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         callbacks=[Clock(args)])
    # More indices than steps on every rank (the sampler splits them among the ranks): max_steps ends it.
    # The loader's batch is a plain int, not a tensor: DDP's forward copies every CPU tensor among
    # its inputs to the GPU (from pageable memory) before the step, a copy the bare and Accelerate
    # payloads, whose images are made on the GPU, never make. BENCH_COPY=1 keeps the tensor.
    copy = os.environ.get("BENCH_COPY") == "1"
    loader = torch.utils.data.DataLoader(range(total * 64), batch_size=1, pin_memory=os.environ.get("BENCH_PIN") == "1",
                                         collate_fn=None if copy else first_item)
    trainer.fit(Synthetic(args), loader)


def first_item(items: list) -> int:
    """The loader's batch as a plain int (a module-level function: a lambda would not pickle for workers)."""
    return items[0]


if __name__ == "__main__":
    main()
