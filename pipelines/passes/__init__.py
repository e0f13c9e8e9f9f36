"""The graph clean-up passes: graph-canonicalize, graph-cse, graph-dce, graph-verify (one module per pass)."""
