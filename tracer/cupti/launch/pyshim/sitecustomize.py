# rlktop --torch-ranges shim (tracer/cupti/launch/pyshim/sitecustomize.py).
#
# `rlktop run --torch-ranges` puts this folder first on the child's
# PYTHONPATH, so Python imports this file at start-up. It changes nothing
# until the program itself imports torch; right after that it
#   * registers global nn.Module forward pre/post hooks that open an NVTX
#     range named by the module's path ("GPT.blocks.0.attn"; the root is its
#     class name) around every module call, and
#   * wraps torch.nn.functional.scaled_dot_product_attention in an NVTX range
#     named "scaled_dot_product_attention",
# so that the GEMMs and softmax of SDPA's math fallback are attributed to
# attention by the ranges open at their launch. Ranges go through
# torch.cuda.nvtx (push/pop on the calling thread) and reach CUPTI because
# rlktop sets NVTX_INJECTION64_PATH.
#
# Overhead: each module call pays two Python hook calls and two NVTX calls,
# and global hooks turn off nn.Module's no-hook fast path. Measured only
# against a stand-in torch on a loaded 2-core VM: about 5 us more per module
# call (2.8 -> 8.3 us, best of 3), i.e. ~0.5 ms per step for 100 module
# calls. Not yet measured with real torch on a GPU (scripts/gpu-check.sh
# reports it in its shim% column). RLKTOP_TORCH_RANGES_DEPTH=N limits ranges to module paths of at
# most N dots (default: all); RLKTOP_TORCH_RANGES_MODULES=0 keeps only the
# scaled_dot_product_attention range (no module ranges).
#
# An existing sitecustomize later on sys.path is still imported (chained).
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading


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
            except Exception as e:  # never break the user's program
                sys.stderr.write("rlktop: the original sitecustomize failed: %r\n" % (e,))
            return


_state = threading.local()
_max_depth = int(os.environ.get("RLKTOP_TORCH_RANGES_DEPTH", "-1") or "-1")
installed = False


def _install(torch):
    global installed
    if installed:
        return
    installed = True
    import weakref

    nvtx = torch.cuda.nvtx
    push, pop = nvtx.range_push, nvtx.range_pop
    names = weakref.WeakKeyDictionary()
    register_pre = torch.nn.modules.module.register_module_forward_pre_hook
    register_post = torch.nn.modules.module.register_module_forward_hook

    KEY = "_rlktop_range"  # the range name, cached in the module's __dict__

    def name_of(module):
        n = names.get(module)
        if n is None:
            if not getattr(_state, "stack", None):
                # An outermost call: name the whole tree from here.
                root = type(module).__name__
                for path, m in module.named_modules():
                    names.setdefault(m, root + "." + path if path else root)
                n = names.get(module, root)
            else:
                n = type(module).__name__
                names[module] = n
        if _max_depth >= 0 and n.count(".") > _max_depth:
            n = ""  # too deep: no range
        try:
            module.__dict__[KEY] = n
        except Exception:
            pass
        return n

    def pre(module, args):
        n = module.__dict__.get(KEY)
        if n is None:
            n = name_of(module)
        try:
            stack = _state.stack
        except AttributeError:
            stack = _state.stack = []
        if n:
            stack.append(True)
            push(n)
        else:
            stack.append(False)

    def post(module, args, output):
        try:
            if _state.stack.pop():
                pop()
        except (AttributeError, IndexError):
            pass

    if os.environ.get("RLKTOP_TORCH_RANGES_MODULES", "1") != "0":
        register_pre(pre)
        try:
            register_post(post, always_call=True)  # torch >= 2.0: pop even when forward raises
        except TypeError:
            register_post(post)

    F = torch.nn.functional
    sdpa = getattr(F, "scaled_dot_product_attention", None)
    if sdpa is not None and not getattr(sdpa, "_rlktop", False):

        def scaled_dot_product_attention(*args, **kwargs):
            push("scaled_dot_product_attention")
            try:
                return sdpa(*args, **kwargs)
            finally:
                pop()

        scaled_dot_product_attention._rlktop = True
        scaled_dot_product_attention.__doc__ = sdpa.__doc__
        scaled_dot_product_attention.__wrapped__ = sdpa
        F.scaled_dot_product_attention = scaled_dot_product_attention


class _AfterTorch(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Runs _install right after `import torch` has finished (torch.nn and
    torch.cuda are bound by then), before the program's next statement."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch" or installed:
            return None
        sys.meta_path.remove(self)
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
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        self._loader.exec_module(module)
        try:
            _install(module)
        except Exception as e:  # never break the user's program
            sys.stderr.write("rlktop --torch-ranges: not installed: %r\n" % (e,))


if os.environ.get("RLKTOP_TORCH_RANGES", "1") != "0":
    sys.meta_path.insert(0, _AfterTorch())

_chain_next_sitecustomize()
