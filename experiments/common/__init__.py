"""Helpers shared by every experiment: atomic files, provenance, scale parameters, plot style."""
