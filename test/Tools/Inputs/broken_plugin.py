"""A dialect plugin that fails: graphfuse-opt reports it in one line."""

raise RuntimeError("this plugin is broken")
