"""The command line (layer L6): ``lance-semantic`` and its thin commands."""

from .main import format_inspect, main

__all__ = [
    "main",
    "format_inspect",
]
