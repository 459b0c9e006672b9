# Test shim for Debian's PyTorch 2.6, built without libuv: torchrun's
# rendezvous creates TCPStore(...) without use_libuv, and the default
# (libuv) raises "use_libuv was requested but PyTorch was build without
# libuv support". This makes the default use_libuv=False before torchrun's
# modules import TCPStore. PyTorch from pip has libuv and needs none of
# this. Used by TestDDPLiveRanksTorchrun only (on PYTHONPATH after
# rlktop's agent, whose sitecustomize chains to this one).
import torch.distributed as _dist

_Store = _dist.TCPStore


class TCPStore(_Store):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("use_libuv", False)
        super().__init__(*args, **kwargs)


# Modules that bound the name at import (torch.distributed.rendezvous)
# get it too; those imported later take it from torch.distributed.
import sys as _sys

for _m in list(_sys.modules.values()):
    if getattr(_m, "__name__", "").startswith("torch.distributed") and getattr(_m, "TCPStore", None) is _Store:
        _m.TCPStore = TCPStore
