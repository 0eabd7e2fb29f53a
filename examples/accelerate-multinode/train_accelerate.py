"""A small model on synthetic data under Hugging Face Accelerate, run by kind accelerate: one
`accelerate launch` per node (its rank, the totals and the rendezvous come from the script).
Mixed precision comes from `accelerate launch --mixed_precision` (launch.mixed_precision in the
spec). Every process prints ``rank=R world=W final_loss=L``."""

import argparse

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    accelerator = Accelerator()
    torch.manual_seed(0)
    x = torch.randn(args.samples, 32)
    y = x.sum(1, keepdim=True)
    model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True)
    model, optimizer, data = accelerator.prepare(model, optimizer, data)
    for _ in range(args.epochs):
        for inputs, targets in data:
            optimizer.zero_grad()
            accelerator.backward(torch.nn.functional.mse_loss(model(inputs), targets))
            optimizer.step()
    with torch.no_grad():
        final = torch.nn.functional.mse_loss(accelerator.unwrap_model(model).cpu()(x), y).item()
    print(f"rank={accelerator.process_index} world={accelerator.num_processes} final_loss={final:.6f}", flush=True)


if __name__ == "__main__":
    main()
