"""Horovod + PyTorch ResNet-50 synthetic benchmark: images/s per GPU and in total.

Why: this is the benchmark the SHARCNET and BNL courses run to see how data parallelism
scales (images/s on 1, 2, 4, ... GPUs). Synthetic images take the file system out of the
measurement, so what is left is compute and Horovod's ring all-reduce.

The Horovod recipe, in the order the courses teach it:
1. hvd.init(); 2. pin each rank to one GPU by its local rank; 3. wrap the optimizer in
hvd.DistributedOptimizer (it averages gradients across ranks); 4. broadcast the initial
parameters and optimizer state from rank 0, so that every rank starts from the same model.
Without CUDA it runs on CPUs (slowly), which is enough to test the launch.
"""

import argparse
import time

import horovod.torch as hvd
import torch
import torch.nn.functional as F
import torchvision


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=32, help="images per GPU and step")
    parser.add_argument("--warmup-steps", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20, help="timed steps")
    parser.add_argument("--image-size", type=int, default=224)
    return parser.parse_args()


def main():
    args = parse_args()
    hvd.init()
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(hvd.local_rank())       # one GPU per rank
        device = torch.device("cuda", hvd.local_rank())
    else:
        device = torch.device("cpu")                   # threads: OMP_NUM_THREADS, set by the job

    model = torchvision.models.resnet50(weights=None).to(device)
    # Learning rate scaled by the number of ranks: the global batch is size x batch-size.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01 * hvd.size(), momentum=0.9)
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)

    images = torch.randn(args.batch_size, 3, args.image_size, args.image_size, device=device)
    labels = torch.randint(0, 1000, (args.batch_size,), device=device)

    def step():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()

    if hvd.rank() == 0:
        print(f"ranks={hvd.size()} device={'cuda' if cuda else 'cpu'} batch_per_rank={args.batch_size}")
    for _ in range(args.warmup_steps):
        step()
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    if cuda:
        torch.cuda.synchronize()
    per_rank = args.batch_size * args.steps / (time.perf_counter() - start)
    # The mean over ranks, so that one slow rank shows in the figure.
    per_rank = hvd.allreduce(torch.tensor(per_rank), name="images_per_sec", op=hvd.Average).item()
    if hvd.rank() == 0:
        print(f"images/sec per {'GPU' if cuda else 'rank'}: {per_rank:.1f}")
        print(f"images/sec total on {hvd.size()} ranks: {per_rank * hvd.size():.1f}")


if __name__ == "__main__":
    main()
