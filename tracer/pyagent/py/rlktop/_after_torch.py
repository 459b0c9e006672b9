"""A finder on sys.meta_path that calls back right after `import torch`
finished (torch.nn and torch.cuda are bound by then): the launch hooks of
sitecustomize.py, and an attached agent's installation when it attached
before the program imported torch."""

import importlib.abc
import importlib.util
import sys


class AfterTorch(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Insert it first on sys.meta_path; then(torch) runs once, after the
    module executed. remove() takes it off sys.meta_path (it also does so
    itself when torch is imported)."""

    def __init__(self, then):
        self.then = then

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch":
            return None
        self.remove()
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self.remove()
        self._loader.exec_module(module)
        self.then(module)

    def remove(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
