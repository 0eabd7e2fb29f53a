"""One point of the sweep: train a toy model at (lr, wd, seed), write its validation loss.

Why: an array task should be a plain program that takes its point as arguments and leaves one
small result file named after the point; a separate step (collect.py) reads them all. Tasks
then never write to a shared file at once, and a rerun of a failed task just replaces its file.

The "model" is a linear regression trained by mini-batch SGD with weight decay on a fixed
synthetic data set (the same for every task), from initial weights and a batch order drawn
from --seed; the result is the mean squared error on held-out data. Plain Python, well
under a second, and the same numbers every time for the same arguments.
"""

import argparse
import math
import os
import random

FEATURES, TRAIN, VALID, STEPS, BATCH = 8, 200, 100, 300, 20


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lr", required=True, help="learning rate")
    parser.add_argument("--wd", required=True, help="weight decay")
    parser.add_argument("--seed", required=True, help="initial weights and batch order")
    parser.add_argument("--out", default="results", help="folder of result files (relative: to the current folder)")
    return parser.parse_args()


def dataset():
    """Noisy linear data from a fixed seed: the same for every point of the sweep."""
    rng = random.Random(12345)
    truth = [rng.gauss(0, 1) for _ in range(FEATURES)]
    rows = []
    for _ in range(TRAIN + VALID):
        x = [rng.gauss(0, 1) for _ in range(FEATURES)]
        rows.append((x, sum(w * v for w, v in zip(truth, x)) + rng.gauss(0, 0.5)))
    return rows[:TRAIN], rows[TRAIN:]


def mse(weights, rows):
    return sum((sum(w * v for w, v in zip(weights, x)) - y) ** 2 for x, y in rows) / len(rows)


def train(lr, wd, seed):
    train_rows, valid_rows = dataset()
    rng = random.Random(seed)
    weights = [rng.gauss(0, 1) for _ in range(FEATURES)]
    for _ in range(STEPS):
        batch = rng.sample(train_rows, BATCH)
        grad = [wd * w for w in weights]
        for x, y in batch:
            error = sum(w * v for w, v in zip(weights, x)) - y
            for i, v in enumerate(x):
                grad[i] += 2 * error * v / BATCH
        weights = [w - lr * g for w, g in zip(weights, grad)]
        if not all(math.isfinite(w) for w in weights):
            return math.inf                       # diverged
    return mse(weights, valid_rows)


def main():
    args = parse_args()
    loss = train(float(args.lr), float(args.wd), int(args.seed))
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)               # 1000 tasks may race here: exist_ok
    path = os.path.join(out, f"{args.lr}-{args.wd}-{args.seed}.txt")
    line = f"lr={args.lr} wd={args.wd} seed={args.seed} val_loss={loss:.6g} task={os.environ.get('SLURM_ARRAY_TASK_ID', '-')}\n"
    with open(path + ".tmp", "w") as handle:      # write, then rename: no half-written result
        handle.write(line)
    os.replace(path + ".tmp", path)
    print(line, end="")


if __name__ == "__main__":
    main()
