"""Pass registry, pipeline parsing and execution, and the graphfuse passes."""
