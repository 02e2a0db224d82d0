"""Parameter-server training of a digits classifier with tf.distribute.

The training-operator injects TF_CONFIG into every replica. PS and Worker replicas start a
tf.distribute.Server and wait; the Chief is the coordinator: it builds the model under
ParameterServerStrategy, runs Model.fit, evaluates on the held-out set and saves the model.
Without TF_CONFIG (a local run) it trains in-process. After every epoch the chief saves the weights to
MYAPP_CHECKPOINT_DIR (myapp.checkpoint, atomically); a later attempt of the task sets them and goes on from
the epoch after (docs/checkpoints.md; the optimizer's momentum starts afresh).
"""
from __future__ import annotations

import argparse
import json
import os

import numpy as np
import tensorflow as tf
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from myapp.checkpoint import load_latest, save  # the job SDK, in the image beside this file (docs/checkpoints.md)


class Checkpoints(tf.keras.callbacks.Callback):
    """The chief saves the model's weights after every epoch."""

    def on_epoch_end(self, epoch, logs=None):
        weights = self.model.get_weights()
        save(epoch + 1, lambda fh: np.savez(fh, *weights), unit="epoch")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--steps-per-epoch", type=int, default=50)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--output-path", default="/mnt/output/tf-model.keras")
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


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    features, labels = load_digits(return_X_y=True)
    features = (features / 16.0).astype(np.float32)
    x_train, x_test, y_train, y_test = train_test_split(
        features, labels, test_size=0.2, random_state=42, stratify=labels)

    task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {})
    if task.get("type") in ("ps", "worker"):
        resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        server = tf.distribute.Server(resolver.cluster_spec(), job_name=resolver.task_type,
                                      task_index=resolver.task_id, protocol=resolver.rpc_layer or "grpc",
                                      start=True)
        server.join()  # runs until the chief finishes and the operator cleans the pod up
        return

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
    data = tf.keras.utils.experimental.DatasetCreator(dataset_fn) if task else dataset_fn()
    model.fit(data, epochs=args.epochs, initial_epoch=found.step if found is not None else 0,
              steps_per_epoch=args.steps_per_epoch, verbose=2, callbacks=[Checkpoints()])

    evaluator = build_model(args.lr)  # evaluate locally on the chief with the trained weights
    evaluator.set_weights(model.get_weights())
    _, accuracy = evaluator.evaluate(x_test, y_test, verbose=0)
    print(f"test accuracy: {accuracy:.4f}", flush=True)
    os.makedirs(os.path.dirname(args.output_path), exist_ok=True)
    evaluator.save(args.output_path)
    print(f"model saved to {args.output_path}", flush=True)


if __name__ == "__main__":
    main()
