"""Package discovery for graphfuse's layout (the metadata lives in pyproject.toml).

The top-level folders are the layers of one package: ``dialect/`` is
``graphfuse.dialect``, ``pipelines/`` is ``graphfuse.pipelines`` and so on.
Only that mapping is written down; every sub-package below a layer is found,
so a new folder with an ``__init__.py`` ships without editing this file.  One
C file is built: the OpenMP shim of :mod:`graphfuse.lowering.parallel`.
"""

from setuptools import Extension, find_packages, setup

#: package name -> the folder that holds it
LAYERS = {
    "graphfuse": "graphfuse",
    "graphfuse.dialect": "dialect",
    "graphfuse.pipelines": "pipelines",
    "graphfuse.lowering": "lowering",
    "graphfuse.tools": "tools",
}


def discover() -> list[str]:
    packages = []
    for name, folder in LAYERS.items():
        packages.append(name)
        packages += [f"{name}.{sub}" for sub in find_packages(folder)]
    return packages


#: The OpenMP entry points of JIT code on PyTorch's libgomp (lowering/parallel.py): a plain shared library, loaded
#: by the JIT, never imported.  Optional: without a C compiler the install goes on, and JIT code beside PyTorch
#: uses libiomp5 as everywhere else.
KMPC_ON_GOMP = Extension("graphfuse.lowering._kmpc_gomp", ["lowering/native/kmpc_gomp.c"], libraries=["dl"],
                         extra_compile_args=["-O2"], optional=True)

#: The allocation functions of JIT code, keeping large freed buffers for the next call (lowering/buffer_pool.py): a
#: plain shared library too.  Optional: without it JIT code allocates with malloc.
BUFFER_POOL = Extension("graphfuse.lowering._buffer_pool", ["lowering/native/buffer_pool.c"], libraries=["pthread"],
                        extra_compile_args=["-O2"], optional=True)

#: The native op walk of graphfuse's passes (dialect/op_walk.py): a plain shared library too, resolving MLIR's C
#: API in the bindings' library at load time (it links against nothing).  Optional: without it the passes walk
#: in Python.
OP_WALK = Extension("graphfuse.dialect._op_walk", ["dialect/native/op_walk.c"], extra_compile_args=["-O2"],
                    optional=True)

setup(packages=discover(), package_dir=LAYERS, ext_modules=[KMPC_ON_GOMP, BUFFER_POOL, OP_WALK])
