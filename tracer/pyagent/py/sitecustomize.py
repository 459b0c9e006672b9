# rlktop's Python agent bootstrap (tracer/pyagent/py/sitecustomize.py).
#
# `rlktop run/record/compare -- python3 ...` puts this folder on the child's
# PYTHONPATH. When RLKTOP_SOCKET is set, this starts the agent (package
# rlktop next to this file) and, right after the program's own
# `import torch`, installs its torch hooks (optimizer step hook, flags);
# with RLKTOP_TORCH_RANGES=1 (--torch-ranges) also the NVTX module and SDPA
# ranges (rlktop/_ranges.py). Without either it does nothing. An existing sitecustomize later
# on sys.path is still imported (chained). Errors are warnings, never
# exceptions in the user's program.
import importlib.machinery
import importlib.util
import os
import sys


def _chain_next_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        try:
            if os.path.abspath(entry or os.getcwd()) == here:
                continue
        except Exception:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry])
        if spec is not None and spec.loader is not None:
            mod = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(mod)
            except Exception as e:
                sys.stderr.write("rlktop: the original sitecustomize failed: %r\n" % (e,))
            return


def _run(hooks, torch):
    for what, hook in hooks:
        try:
            hook(torch)
        except Exception as e:  # never break the user's program
            sys.stderr.write("rlktop: %s not installed: %r\n" % (what, e))


def _hooks():
    hooks = []
    if os.environ.get("RLKTOP_SOCKET") and os.environ.get("RLKTOP_AGENT", "1") != "0":
        try:
            import rlktop

            rlktop._start()
            if rlktop._agent is not None:
                hooks.append(("agent torch hooks", rlktop._agent.torch_imported))
        except Exception as e:
            sys.stderr.write("rlktop agent: not started: %r\n" % (e,))
    if os.environ.get("RLKTOP_TORCH_RANGES") == "1":

        def ranges(torch):
            from rlktop import _ranges

            _ranges.install(torch)

        hooks.append(("--torch-ranges", ranges))
    return hooks


_h = _hooks()
if _h:
    if "torch" in sys.modules:
        _run(_h, sys.modules["torch"])
    else:
        from rlktop._after_torch import AfterTorch

        sys.meta_path.insert(0, AfterTorch(lambda torch: _run(_h, torch)))

_chain_next_sitecustomize()
