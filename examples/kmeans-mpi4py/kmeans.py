"""Distributed K-means with mpi4py: each rank owns a shard of the points.

Why: this is the distributed K-means of the MPI-for-ML tutorials (OSU/MVAPICH2). The points
never move; only k x (d + 1) numbers per rank cross the network each iteration:
  1. rank 0 picks the initial centroids (greedy k-means++ on a sample of its shard) and broadcasts them;
  2. every rank assigns its points to the nearest centroid;
  3. every rank sums its points and counts them per centroid;
  4. comm.Allreduce adds the sums and counts of all ranks, so every rank computes the same
     new centroids (sum / count);
  5. repeat 2-4 until no centroid moves more than --tolerance.

Each rank makes its shard from (--seed, rank), or takes every size-th row of --data (a .npy
file of shape (n, d)). Rank 0 prints the iterations, the inertia and the centroids.
"""

import argparse
import time

import numpy as np
from mpi4py import MPI


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points-per-rank", type=int, default=50_000)
    parser.add_argument("--k", type=int, default=8, help="clusters")
    parser.add_argument("--dim", type=int, default=2, help="dimensions of the generated points")
    parser.add_argument("--iterations", type=int, default=100, help="at most this many")
    parser.add_argument("--tolerance", type=float, default=1e-4, help="stop when no centroid moves further")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", help="a .npy file of points (n, d) to read instead of generating them")
    return parser.parse_args()


def blob_centers(k, dim, seed, separation=8.0):
    """k centres at least ``separation`` apart (blobs of unit spread then barely overlap)."""
    rng = np.random.default_rng(seed)
    half = separation * k ** (1.0 / dim)
    centers = []
    for _ in range(1000 * k):
        candidate = rng.uniform(-half, half, dim)
        if all(np.linalg.norm(candidate - c) >= separation for c in centers):
            centers.append(candidate)
            if len(centers) == k:
                break
    return np.array(centers + [rng.uniform(-half, half, dim) for _ in range(k - len(centers))])


def my_shard(args, rank, size):
    """This rank's points: rows rank, rank + size, ... of --data, or a blob mixture seeded by rank."""
    if args.data:
        points = np.load(args.data, mmap_mode="r")
        return np.ascontiguousarray(points[rank::size], dtype=np.float64)
    centers = blob_centers(args.k, args.dim, args.seed)      # the same on every rank
    rng = np.random.default_rng([args.seed, rank])
    labels = rng.integers(0, args.k, args.points_per_rank)
    return centers[labels] + rng.normal(0.0, 1.0, (args.points_per_rank, args.dim))


def kmeans_plus_plus(points, k, rng, sample=10_000):
    """Initial centroids spread over the data (greedy k-means++).

    Each next centroid is drawn with probability ~ squared distance to the nearest one so far;
    of a few such draws, the one that leaves the smallest total squared distance is kept.
    """
    points = points[rng.choice(len(points), min(sample, len(points)), replace=False)]
    centroids = [points[rng.integers(len(points))]]
    _, squared = assign(points, np.array(centroids))
    for _ in range(1, k):
        candidates = points[rng.choice(len(points), 2 + int(np.log(k)), p=squared / squared.sum())]
        options = [np.minimum(squared, assign(points, c[None, :])[1]) for c in candidates]
        best = int(np.argmin([o.sum() for o in options]))
        centroids.append(candidates[best])
        squared = options[best]
    return np.array(centroids)


def assign(points, centroids):
    """Index of the nearest centroid of each point, and its squared distance."""
    distances = (np.einsum("ij,ij->i", points, points)[:, None] - 2.0 * points @ centroids.T
                 + np.einsum("ij,ij->i", centroids, centroids)[None, :])
    nearest = distances.argmin(axis=1)
    return nearest, np.maximum(distances[np.arange(len(points)), nearest], 0.0)


def main():
    args = parse_args()
    if args.iterations < 1 or args.k < 1:
        raise SystemExit("--iterations and --k must be at least 1")
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    points = my_shard(args, rank, size)
    k, dim = args.k, points.shape[1]

    centroids = np.empty((k, dim))
    if rank == 0:
        centroids[:] = kmeans_plus_plus(points, k, np.random.default_rng(args.seed + 1))
    comm.Bcast(centroids, root=0)

    start = time.perf_counter()
    local = np.empty(k * dim + k + 1)      # sums (k x d), counts (k), inertia: one Allreduce a step
    total = np.empty_like(local)
    for iteration in range(1, args.iterations + 1):
        nearest, squared = assign(points, centroids)
        sums = [np.bincount(nearest, weights=points[:, j], minlength=k) for j in range(dim)]
        local[: k * dim] = np.stack(sums, axis=1).ravel()
        local[k * dim: -1] = np.bincount(nearest, minlength=k)
        local[-1] = squared.sum()
        comm.Allreduce(local, total, op=MPI.SUM)
        counts = total[k * dim: -1]
        inertia = total[-1]                 # of this assignment, to the centroids before the update
        new = centroids.copy()
        filled = counts > 0                 # an empty cluster keeps its centroid
        new[filled] = total[: k * dim].reshape(k, dim)[filled] / counts[filled, None]
        shift = np.linalg.norm(new - centroids, axis=1).max()
        centroids = new
        if shift < args.tolerance:
            break

    if rank == 0:
        n = int(counts.sum())
        print(f"ranks={size} points={n} k={k} iterations={iteration} converged={shift < args.tolerance} "
              f"time={time.perf_counter() - start:.2f}s")
        print(f"inertia={inertia:.6g} (mean squared distance {inertia / n:.4f})")
        for index in np.argsort(centroids[:, 0]):
            print(f"centroid {index}: {np.array2string(centroids[index], precision=4)} ({int(counts[index])} points)")


if __name__ == "__main__":
    main()
