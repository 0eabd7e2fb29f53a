"""A small Lightning model on synthetic data, run by kind lightning: one srun task per GPU.

Lightning's SLURMEnvironment reads each process's place from SLURM; the Trainer is given the
job's shape (devices = GPUs per node from SLURM_NTASKS_PER_NODE, num_nodes from SLURM_NNODES).
Near the time limit Lightning saves ``hpc_ckpt_N.ckpt`` under ``--root`` and requeues the job;
``trainer.fit`` in the next run resumes from it. Every rank prints ``rank=R final_loss=L``."""

import argparse
import os

import torch
from torch.utils.data import DataLoader, TensorDataset

try:
    import lightning.pytorch as pl
except ImportError:
    import pytorch_lightning as pl


class Regression(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))

    def training_step(self, batch, index):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--root", default="checkpoints/lightning")
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.randn(args.samples, 32)
    y = x.sum(1, keepdim=True)
    gpus = torch.cuda.is_available()
    trainer = pl.Trainer(accelerator="gpu" if gpus else "cpu", devices=int(os.environ.get("SLURM_NTASKS_PER_NODE", "1")),
                         num_nodes=int(os.environ.get("SLURM_NNODES", "1")), strategy="ddp", max_epochs=args.epochs,
                         default_root_dir=args.root, enable_progress_bar=False)
    model = Regression()
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=args.batch_size))
    with torch.no_grad():
        final = torch.nn.functional.mse_loss(model.net.cpu()(x), y).item()
    print(f"rank={trainer.global_rank} final_loss={final:.6f}", flush=True)


if __name__ == "__main__":
    main()
