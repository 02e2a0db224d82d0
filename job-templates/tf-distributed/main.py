"""Parameter-server training of a digits classifier with tf.distribute.

The training-operator injects TF_CONFIG into every replica. PS and Worker replicas start a
tf.distribute.Server and wait; the Chief is the coordinator: it builds the model under
ParameterServerStrategy, runs Model.fit, evaluates on the held-out set and saves the model.
Without TF_CONFIG (a local run) it trains in-process. After every epoch the chief saves the weights to
MYAPP_CHECKPOINT_DIR (myapp.checkpoint, atomically); a later attempt of the task sets them and goes on from
the epoch after (docs/checkpoints.md; the optimizer's momentum starts afresh). A stop (SIGTERM, then SIGKILL
after the grace period) is read by the chief, which alone drives the training: after each batch, a stop ends
the epoch there (its batches so far are dropped, the last checkpoint stands); after an epoch's last batch it
saves that epoch at once; then it exits with 143 (myapp.checkpoint.STOPPED). Parameter servers and workers,
stopped with it, go on serving until the chief is gone (what it saves is read from them), then exit 143 too.
--epoch-seconds slows each epoch down to at least that long (tests stop it mid-training).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import socket
import sys
import time

import numpy as np
import tensorflow as tf
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from myapp.checkpoint import STOPPED, Stop, load_latest, save  # the job SDK, beside this file (docs/checkpoints.md)


class Checkpoints(tf.keras.callbacks.Callback):
    """The chief saves the model's weights after every epoch, and reads a stop after every batch: mid-epoch it
    ends the training there (that epoch is not saved), after the epoch's last batch it saves it first."""

    def __init__(self, stop: Stop, epochs: int, epoch_seconds: float):
        super().__init__()
        self.stop, self.epochs, self.epoch_seconds = stop, epochs, epoch_seconds
        self._supports_tf_logs = True  # the logs are not read: ParameterServerStrategy allows batch hooks then
        self.stopped, self.cut_short, self.began = False, False, time.monotonic()

    def on_epoch_begin(self, epoch, logs=None):
        self.began = time.monotonic()

    def on_train_batch_end(self, batch, logs=None):
        if batch + 1 < self.params["steps"] and self.stop.agreed():  # the chief alone drives the steps
            self.stopped = self.cut_short = True
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        if self.cut_short:  # Keras ends an epoch it stopped with this call too: not a whole one
            return
        self.stop.wait(self.epoch_seconds - (time.monotonic() - self.began))  # its steps are done: a stop saves it
        weights = io.BytesIO()  # np.savez writes a zip, which numpy 1.x only writes to a readable file
        np.savez(weights, *self.model.get_weights())
        save(epoch + 1, weights.getvalue(), unit="epoch")
        if epoch + 1 < self.epochs and self.stop.agreed():  # after the last epoch, finishing beats stopping
            self.stopped = True
            self.model.stop_training = True


def serve_until_the_chief_is_gone(stop: Stop, chief: str) -> None:
    """A stopped parameter server or worker: the chief may still be saving the variables it holds, so it
    serves on (its server's threads) until the chief's address refuses connections."""
    host, port = chief.rsplit(":", 1)
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=1.0):
                pass
        except OSError:
            return
        stop.wait(0.5)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--steps-per-epoch", type=int, default=50)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--output-path", default="/mnt/output/tf-model.keras")
    parser.add_argument("--epoch-seconds", type=float, default=0.0,
                        help="make each epoch last at least this long (0: as fast as it trains)")
    return parser.parse_args(argv)


def build_model(lr: float) -> tf.keras.Model:
    model = tf.keras.Sequential([
        tf.keras.layers.Input(shape=(64,)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=lr, momentum=0.9),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def main(argv: list[str] | None = None) -> float | None:
    """Train (the chief): the test accuracy, or None when stopped (SIGTERM) before the last epoch. Serve (a PS or
    worker): None, once stopped (the chief finished, or the job is stopped) and the chief is gone."""
    args = parse_args(argv)
    stop = Stop()  # before anything slow: a SIGTERM from here on ends a batch, not the process
    features, labels = load_digits(return_X_y=True)
    features = (features / 16.0).astype(np.float32)
    x_train, x_test, y_train, y_test = train_test_split(
        features, labels, test_size=0.2, random_state=42, stratify=labels)

    config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    task = config.get("task", {})
    if task.get("type") in ("ps", "worker"):
        resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type, task_index=resolver.task_id,
                             protocol=resolver.rpc_layer or "grpc", start=True)
        while not stop.wait(3600):  # serves (its own threads) until the chief finishes and the pod is removed
            pass
        serve_until_the_chief_is_gone(stop, config["cluster"]["chief"][0])
        return None

    if task:  # chief: coordinate the cluster
        strategy = tf.distribute.ParameterServerStrategy(tf.distribute.cluster_resolver.TFConfigClusterResolver())
    else:
        strategy = tf.distribute.get_strategy()

    def dataset_fn(_input_context=None):
        data = tf.data.Dataset.from_tensor_slices((x_train, y_train))
        return data.shuffle(len(x_train), seed=42).repeat().batch(64).prefetch(2)

    with strategy.scope():
        model = build_model(args.lr)
    found = load_latest()
    if found is not None:
        with np.load(found.path) as saved:
            model.set_weights([saved[f"arr_{i}"] for i in range(len(saved.files))])
    start = found.step if found is not None else 0
    if start:
        print(f"resuming from epoch {start} (its checkpoint)", flush=True)
    data = tf.keras.utils.experimental.DatasetCreator(dataset_fn) if task else dataset_fn()
    kept = Checkpoints(stop, args.epochs, args.epoch_seconds)
    history = model.fit(data, epochs=args.epochs, initial_epoch=start, steps_per_epoch=args.steps_per_epoch,
                        verbose=2, callbacks=[kept])
    if kept.stopped:
        done = start + len(history.epoch) - kept.cut_short  # the epochs trained and saved
        print(f"stopped (SIGTERM) after epoch {done} of {args.epochs}", flush=True)
        return None

    evaluator = build_model(args.lr)  # evaluate locally on the chief with the trained weights
    evaluator.set_weights(model.get_weights())
    _, accuracy = evaluator.evaluate(x_test, y_test, verbose=0)
    print(f"test accuracy: {accuracy:.4f}", flush=True)
    os.makedirs(os.path.dirname(args.output_path), exist_ok=True)
    evaluator.save(args.output_path)
    print(f"model saved to {args.output_path}", flush=True)
    return accuracy


if __name__ == "__main__":
    sys.exit(0 if main() is not None else STOPPED)
