"""Keras MNIST on every GPU of one node with tf.distribute.MirroredStrategy.

Why: the SHARCNET course shows that this small model gets *slower* on more GPUs at a small
batch (each GPU has too little to do and waits on the all-reduce), and faster once the batch
grows. So the batch is given per replica, and the global batch is that times the number of
replicas: adding GPUs adds work instead of cutting each GPU's share.

The data is read from the copy slurmkit staged on the node's local disk ($SLURM_TMPDIR), not
from Lustre. Without a data file, --synthetic makes random data of MNIST's shape.
"""

import argparse
import os
import time

import numpy as np
import tensorflow as tf


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="mnist.npz (x_train, y_train, x_test, y_test), e.g. $SLURM_TMPDIR/mnist.npz")
    parser.add_argument("--synthetic", action="store_true", help="random MNIST-shaped data instead of --data")
    parser.add_argument("--batch-per-replica", type=int, default=128, help="samples per GPU and step")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=60000, help="training samples made by --synthetic")
    return parser.parse_args()


def load(args):
    """(x_train, y_train, x_test, y_test) scaled to [0, 1], from the staged file or made up."""
    if args.data and os.path.exists(args.data) and not args.synthetic:
        with np.load(args.data) as data:
            x_train, y_train, x_test, y_test = (data[k] for k in ("x_train", "y_train", "x_test", "y_test"))
        print(f"data: {args.data} ({len(x_train)} training images)")
    else:
        if not args.synthetic:
            raise SystemExit(f"{args.data!r} not found: stage data/mnist.npz, or pass --synthetic")
        rng = np.random.default_rng(0)
        x_train = rng.integers(0, 256, (args.samples, 28, 28), dtype=np.uint8)
        y_train = rng.integers(0, 10, args.samples, dtype=np.uint8)
        x_test, y_test = x_train[: args.samples // 6], y_train[: args.samples // 6]
        print(f"data: synthetic ({args.samples} training images)")
    return scale(x_train), y_train.astype("int64"), scale(x_test), y_test.astype("int64")


def scale(images):
    """uint8 images (n, 28, 28) to float32 in [0, 1] with a channel axis (n, 28, 28, 1)."""
    return (images.astype("float32") / 255.0)[..., None]


def build_model():
    return tf.keras.Sequential([
        tf.keras.layers.Input((28, 28, 1)),
        tf.keras.layers.Conv2D(32, 3, activation="relu"),
        tf.keras.layers.Conv2D(64, 3, activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(10),
    ])


def main():
    args = parse_args()
    strategy = tf.distribute.MirroredStrategy()
    replicas = strategy.num_replicas_in_sync
    global_batch = args.batch_per_replica * replicas
    print(f"replicas={replicas} batch_per_replica={args.batch_per_replica} global_batch={global_batch}")

    x_train, y_train, x_test, y_test = load(args)
    train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(10000).batch(global_batch).prefetch(tf.data.AUTOTUNE)
    test = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(global_batch)

    with strategy.scope():            # variables made here are mirrored on every GPU
        model = build_model()
        model.compile(optimizer=tf.keras.optimizers.Adam(1e-3 * replicas ** 0.5),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])

    start = time.perf_counter()
    model.fit(train, epochs=args.epochs, verbose=2, shuffle=False)  # the dataset shuffles itself
    seconds = time.perf_counter() - start
    loss, accuracy = model.evaluate(test, verbose=0)
    print(f"trained {args.epochs} epochs in {seconds:.1f} s ({args.epochs * len(x_train) / seconds:.0f} images/s); "
          f"test loss {loss:.4f}, accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
