#!/usr/bin/env python3
"""A tiny training job for the demo: logistic regression on synthetic data.

Accepts the arguments of seed 004's scripts (dataset, model, batch size,
epochs, learning rate, optimizer, output dir), needs no download and no GPU
library, prints one loss line per epoch, the GPUs it was given, and writes
metrics.json into --output-dir.
"""
import argparse
import json
import math
import os
import random


def make_data(n, dim, seed):
    rnd = random.Random(seed)
    w_true = [rnd.uniform(-1, 1) for _ in range(dim)]
    data = []
    for _ in range(n):
        x = [rnd.gauss(0, 1) for _ in range(dim)]
        y = 1 if sum(a * b for a, b in zip(w_true, x)) > 0 else 0
        data.append((x, y))
    return data


def train(data, epochs, batch, lr, momentum):
    dim = len(data[0][0])
    w, v = [0.0] * dim, [0.0] * dim
    for epoch in range(1, epochs + 1):
        loss = 0.0
        for i in range(0, len(data), batch):
            grad = [0.0] * dim
            for x, y in data[i:i + batch]:
                p = 1 / (1 + math.exp(-sum(a * b for a, b in zip(w, x))))
                loss -= y * math.log(p + 1e-12) + (1 - y) * math.log(1 - p + 1e-12)
                for j in range(dim):
                    grad[j] += (p - y) * x[j]
            for j in range(dim):
                v[j] = momentum * v[j] - lr * grad[j] / batch
                w[j] += v[j]
        print(f"epoch {epoch}/{epochs} loss {loss / len(data):.4f}", flush=True)
    correct = sum((sum(a * b for a, b in zip(w, x)) > 0) == (y == 1) for x, y in data)
    return loss / len(data), correct / len(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="synthetic")
    ap.add_argument("--model", default="logreg")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--output-dir", default=None)
    a = ap.parse_args()
    print(f"model {a.model} on {a.dataset}; GPUs: {os.environ.get('CUDA_VISIBLE_DEVICES', 'none')}")
    momentum = 0.9 if a.optimizer in ("adam", "adamw", "rmsprop") else 0.0
    loss, acc = train(make_data(512, 8, 42), a.epochs, a.batch_size, a.learning_rate, momentum)
    print(f"final loss {loss:.4f} accuracy {acc:.3f}")
    if a.output_dir:
        os.makedirs(a.output_dir, exist_ok=True)
        with open(os.path.join(a.output_dir, "metrics.json"), "w") as f:
            json.dump({"loss": loss, "accuracy": acc, "epochs": a.epochs}, f)


if __name__ == "__main__":
    main()
