"""Experiment scripts, one folder each, and their shared helpers (common/, data/)."""
