"""TensorFlow MultiWorkerMirroredStrategy: one worker per GPU, on several nodes.

Why: the SHARCNET course names MultiWorkerMirroredStrategy as TensorFlow's own answer to
Horovod. Each worker learns the cluster and its own index from TF_CONFIG, which the job script
sets for every srun task; nothing here names a host or a port.

slurmkit starts one task per GPU but does not bind GPUs to tasks, so each worker keeps only the
GPU of its LOCAL_RANK visible (before the strategy is made). The batch is given per worker, and
the global batch is that times the number of workers. The data is synthetic, so the test is of
the launch and the all-reduce, not of the file system.
"""

import argparse
import json
import os
import time

import tensorflow as tf


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-per-worker", type=int, default=64, help="samples per worker (per GPU) and step")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps-per-epoch", type=int, default=50)
    parser.add_argument("--features", type=int, default=256)
    return parser.parse_args()


def keep_own_gpu():
    """Leave this worker only the GPU at index LOCAL_RANK (all of them are visible to every task)."""
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        tf.config.set_visible_devices(gpus[local_rank % len(gpus)], "GPU")


def synthetic_dataset(global_batch, features, seed=0):
    """An endless stream of random samples with labels from a fixed linear rule."""
    teacher = tf.random.stateless_normal((features, 10), seed=(seed, 1))
    x = tf.random.stateless_normal((global_batch * 16, features), seed=(seed, 2))
    y = tf.argmax(tf.matmul(x, teacher), axis=1)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(global_batch)
    options = tf.data.Options()
    # The data is made in memory, not read from files: each worker takes every n-th batch element.
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return dataset.with_options(options).prefetch(tf.data.AUTOTUNE)


def main():
    args = parse_args()
    keep_own_gpu()
    strategy = tf.distribute.MultiWorkerMirroredStrategy()    # reads TF_CONFIG
    task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {"index": 0})
    workers = strategy.num_replicas_in_sync
    global_batch = args.batch_per_worker * workers
    chief = task["index"] == 0
    if chief:
        print(f"workers={workers} batch_per_worker={args.batch_per_worker} global_batch={global_batch}")

    with strategy.scope():             # variables made here are mirrored on every worker
        model = tf.keras.Sequential([
            tf.keras.layers.Input((args.features,)),
            tf.keras.layers.Dense(512, activation="relu"),
            tf.keras.layers.Dense(512, activation="relu"),
            tf.keras.layers.Dense(10),
        ])
        optimizer = tf.keras.optimizers.SGD(0.01 * workers, momentum=0.9)
    per_sample = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def replica_step(x, y):
        with tf.GradientTape() as tape:
            # The mean over the *global* batch: summed over the workers, it is the batch's mean.
            loss = tf.nn.compute_average_loss(per_sample(y, model(x, training=True)), global_batch_size=global_batch)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))   # all-reduced across workers
        return loss

    @tf.function
    def train_step(batch):
        losses = strategy.run(replica_step, args=batch)
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    # A custom loop rather than model.fit: Keras 3 (TensorFlow 2.16 and later) cannot fit() under
    # MultiWorkerMirroredStrategy, and this loop runs on Keras 2 and 3 alike.
    batches = iter(strategy.experimental_distribute_dataset(synthetic_dataset(global_batch, args.features)))
    train_step(next(batches))          # warm-up: tracing and the first collective are not timed
    start = time.perf_counter()
    for epoch in range(args.epochs):
        for _ in range(args.steps_per_epoch):
            loss = train_step(next(batches))
        if chief:
            print(f"epoch {epoch + 1}/{args.epochs} loss={float(loss):.4f}", flush=True)
    seconds = time.perf_counter() - start
    samples = args.epochs * args.steps_per_epoch * global_batch
    print(f"worker={task['index']} final_loss={float(loss):.4f}", flush=True)
    if chief:
        print(f"{samples} samples in {seconds:.1f} s: {samples / seconds:.0f} samples/s on {workers} workers")


if __name__ == "__main__":
    main()
