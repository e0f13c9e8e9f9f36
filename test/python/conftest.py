"""Suite-wide set-up: the on-disk compile cache is off, so that every test compiles what it means to test.

A test (and the tools it runs) that means to use the cache turns it on with its own directory
(``GRAPHFUSE_CACHE=1``, ``GRAPHFUSE_CACHE_DIR``): see test_compile_cache.py.
"""

import os

os.environ["GRAPHFUSE_CACHE"] = "off"
