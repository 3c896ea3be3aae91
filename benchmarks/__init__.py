"""Speed and accuracy ratios against baselines (benchmarks/README.md).

A package so that each script runs from the repository root as ``python -m
benchmarks.<topic>``: the root is then on ``sys.path``, where ``experiments`` (never
installed) is found.
"""
