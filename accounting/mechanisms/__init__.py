"""Mechanisms and their exact privacy guarantees."""
