"""TensorFlow on a whole CPU node, with the thread settings the SURF/Intel course recommends.

Why: on CPUs, TensorFlow's defaults can oversubscribe the cores (one pool per op, OpenMP
threads spinning after each op). The course's advice, set by the job as variables:
  TF_NUM_INTRAOP_THREADS = physical cores (threads inside one op, e.g. a matrix product),
  TF_NUM_INTEROP_THREADS = sockets (independent ops run at once),
  KMP_BLOCKTIME = 0 (OpenMP threads sleep at once after a parallel region),
  KMP_AFFINITY = granularity=fine,compact,1,0 (one OpenMP thread per core, packed, no
  two on the hyper-threads of one core).
This script reads the two TF_* variables, applies them with tf.config.threading (before any
op runs, which is the only time they may be set), prints all four, and trains a small dense
network on synthetic data, reporting samples/s, so that settings can be compared run by run.
"""

import argparse
import os
import time

import numpy as np
import tensorflow as tf

VARIABLES = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "KMP_BLOCKTIME", "KMP_AFFINITY", "OMP_NUM_THREADS")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--features", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=2)
    return parser.parse_args()


def apply_threading():
    """tf.config.threading from the variables (0 = TensorFlow chooses), then print what is in force."""
    intra = int(os.environ.get("TF_NUM_INTRAOP_THREADS", "0"))
    inter = int(os.environ.get("TF_NUM_INTEROP_THREADS", "0"))
    tf.config.threading.set_intra_op_parallelism_threads(intra)
    tf.config.threading.set_inter_op_parallelism_threads(inter)
    for name in VARIABLES:
        print(f"{name}={os.environ.get(name, '(unset)')}")
    print(f"tf intra_op={tf.config.threading.get_intra_op_parallelism_threads()} "
          f"inter_op={tf.config.threading.get_inter_op_parallelism_threads()} cpus_available={len(os.sched_getaffinity(0))}")


def main():
    args = parse_args()
    apply_threading()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.samples, args.features), dtype=np.float32)
    y = (x @ rng.standard_normal((args.features, 10), dtype=np.float32)).argmax(axis=1)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(args.batch_size).prefetch(tf.data.AUTOTUNE)

    model = tf.keras.Sequential([
        tf.keras.layers.Input((args.features,)),
        tf.keras.layers.Dense(1024, activation="relu"),
        tf.keras.layers.Dense(1024, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(dataset.take(2), epochs=1, verbose=0, shuffle=False)   # warm-up: graph tracing is not timed
    start = time.perf_counter()
    history = model.fit(dataset, epochs=args.epochs, verbose=2, shuffle=False)
    seconds = time.perf_counter() - start
    print(f"{args.epochs * args.samples / seconds:.0f} samples/s ({args.epochs} epochs in {seconds:.1f} s), "
          f"final loss {history.history['loss'][-1]:.4f}")


if __name__ == "__main__":
    main()
