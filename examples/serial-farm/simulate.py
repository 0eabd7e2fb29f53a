"""One task of the farm: a damped, driven oscillator at (alpha, beta); writes its final energy.

Why: a many-tasks job runs one plain program per line of its task file. Each task takes its
point as arguments and leaves one small file named after it, written under a temporary name
and renamed, so that a task cut off by a cancel or the time limit (and run again by the next
job, from the joblog) never leaves half a result, and no two tasks write to the same file.

x'' + alpha x' + x = beta cos(t), from x = 1, x' = 0, integrated with fourth-order Runge-Kutta
to t = 50. Plain Python, a few hundredths of a second, the same number every time.
"""

import argparse
import math
import os

STEPS, T_END = 5000, 50.0


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alpha", type=float, required=True, help="damping")
    parser.add_argument("--beta", type=float, required=True, help="driving amplitude")
    parser.add_argument("--out", default="results", help="folder of result files (relative: to the current folder)")
    return parser.parse_args()


def energy(alpha: float, beta: float) -> float:
    def slope(t, x, v):
        return v, beta * math.cos(t) - alpha * v - x

    x, v, t, h = 1.0, 0.0, 0.0, T_END / STEPS
    for _ in range(STEPS):
        k1 = slope(t, x, v)
        k2 = slope(t + h / 2, x + h / 2 * k1[0], v + h / 2 * k1[1])
        k3 = slope(t + h / 2, x + h / 2 * k2[0], v + h / 2 * k2[1])
        k4 = slope(t + h, x + h * k3[0], v + h * k3[1])
        x += h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        v += h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        t += h
    return 0.5 * (x * x + v * v)


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{args.alpha:g}-{args.beta:g}.txt")
    with open(path + ".partial", "w") as result:
        result.write(f"{args.alpha:g} {args.beta:g} {energy(args.alpha, args.beta):.6g}\n")
    os.replace(path + ".partial", path)


if __name__ == "__main__":
    main()
