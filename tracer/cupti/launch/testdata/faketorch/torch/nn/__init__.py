from .modules.module import Module  # noqa: F401
from . import functional  # noqa: F401
