"""--torch-ranges: NVTX ranges around every nn.Module call and around
scaled_dot_product_attention (was tracer/cupti/launch/pyshim).

`rlktop run --torch-ranges` sets RLKTOP_TORCH_RANGES=1 and puts this
package on PYTHONPATH; sitecustomize calls install(torch) right after the
program's `import torch`. It
  * registers global nn.Module forward pre/post hooks that open an NVTX
    range named by the module's path ("GPT.blocks.0.attn"; the root is its
    class name) around every module call, and
  * wraps torch.nn.functional.scaled_dot_product_attention in an NVTX range
    named "scaled_dot_product_attention",
so that the GEMMs and softmax of SDPA's math fallback are attributed to
attention by the ranges open at their launch. Ranges go through
torch.cuda.nvtx (push/pop on the calling thread) and reach CUPTI because
rlktop sets NVTX_INJECTION64_PATH.

Overhead: each module call pays two Python hook calls and two NVTX calls,
and global hooks turn off nn.Module's no-hook fast path. Measured only
against a stand-in torch on a loaded 2-core VM: about 5 us more per module
call (2.8 -> 8.3 us, best of 3), i.e. ~0.5 ms per step for 100 module
calls. RLKTOP_TORCH_RANGES_DEPTH=N limits ranges to module paths of at most
N dots (default: all); RLKTOP_TORCH_RANGES_MODULES=0 keeps only the
scaled_dot_product_attention range (no module ranges).
"""

import os
import threading

_state = threading.local()
_max_depth = int(os.environ.get("RLKTOP_TORCH_RANGES_DEPTH", "-1") or "-1")
installed = False


def install(torch):
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
