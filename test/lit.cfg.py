# ruff: noqa: F821  (lit injects config and lit_config)
"""lit configuration: FileCheck tests of every stage, run through graphfuse-opt and upstream mlir-opt.

The tools and substitutions come from ``graphfuse.lit.configure``, which downstream suites use too."""

import os

import lit.formats

from graphfuse.lit import configure

config.name = "graphfuse"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py", ".cfg", ".json", ".test"]
config.excludes = ["lit.cfg.py", "python", "Inputs", "Output", "__pycache__"]
config.test_source_root = os.path.dirname(__file__)
configure(config, lit_config)
