"""A tiny PyTorch Lightning run on CPUs (gloo) for the local cluster: ranks from SLURM (srun),
Lightning's own auto-requeue. argv: ROOT SECONDS_PER_BATCH_ON_THE_FIRST_RUN.

SIGUSR1 is blocked until training starts: a one-minute job may be signalled (SLURM may send it
up to 60 s early, sbatch(1)) while torch is still importing, when the default action would end
the process. A blocked signal waits and reaches Lightning's handler once training runs; a
handler of our own would keep Lightning from installing its own (it skips a signal that has one)."""
import os
import signal
import sys
import time

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})

import torch  # noqa: E402

try:
    import lightning.pytorch as pl  # noqa: E402
    from lightning.pytorch.strategies import DDPStrategy  # noqa: E402
except ImportError:
    import pytorch_lightning as pl  # noqa: E402
    from pytorch_lightning.strategies import DDPStrategy  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

root, pause = sys.argv[1], float(sys.argv[2])
first_run = os.environ.get("SLURM_RESTART_COUNT", "0") == "0"


class Tiny(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch, index):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.02)


class Pace(pl.Callback):
    """The first run is slow enough to meet the time-limit signal; the requeued one runs at full speed."""

    def on_train_start(self, trainer, module):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})

    def on_train_batch_end(self, *args):
        if first_run:
            time.sleep(pause)


torch.manual_seed(0)
x = torch.randn(256, 8)
y = x.sum(1, keepdim=True)
model = Tiny()
trainer = pl.Trainer(accelerator="cpu", devices=2, num_nodes=2, strategy=DDPStrategy(process_group_backend="gloo"),
                     max_epochs=40, default_root_dir=root, enable_progress_bar=False, logger=False,
                     enable_checkpointing=False, enable_model_summary=False, callbacks=[Pace()])
trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=16))
with torch.no_grad():
    final = torch.nn.functional.mse_loss(model.layer(x), y).item()
print(f"lightning rank={trainer.global_rank} world={trainer.world_size} epochs={trainer.current_epoch} "
      f"restart={os.environ.get('SLURM_RESTART_COUNT', '0')} final_loss={final:.6f}", flush=True)
