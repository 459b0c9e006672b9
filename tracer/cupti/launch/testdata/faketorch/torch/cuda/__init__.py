from . import nvtx  # noqa: F401
