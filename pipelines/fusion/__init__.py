"""Fusion passes under the seeds' names, and the graph-fusion / ub-fusion passes that run them by switch.

Each pass is named in the table of built-in passes (``graphfuse.builtin_passes``) and loaded on first use.
"""
