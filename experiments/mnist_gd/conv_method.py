"""The routes for per-example convolution gradients (experiments/mnist_gd/per_example.py), named
apart from it so that the config schema, and the Snakefile that reads the job lists, can name
them without importing torch."""

from __future__ import annotations

from typing import Literal

ConvMethod = Literal["kernel", "patches", "grouped", "unfold"]
CONV_METHODS: tuple[ConvMethod, ...] = ("kernel", "patches", "grouped", "unfold")
