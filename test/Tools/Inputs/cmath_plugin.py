"""A dialect plugin for graphfuse-opt --load-dialect-plugin: registers the cmath IRDL dialect next to it."""

from pathlib import Path

import graphfuse

graphfuse.register_irdl_dialects(Path(__file__).with_name("cmath.irdl.mlir"))
