"""Package discovery for graphfuse's layout (the metadata lives in pyproject.toml).

The top-level folders are the layers of one package: ``dialect/`` is
``graphfuse.dialect``, ``pipelines/`` is ``graphfuse.pipelines`` and so on.
Only that mapping is written down; every sub-package below a layer is found,
so a new folder with an ``__init__.py`` ships without editing this file.
"""

from setuptools import find_packages, setup

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


setup(packages=discover(), package_dir=LAYERS)
