from . import cuda, nn  # noqa: F401
