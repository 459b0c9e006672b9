"""The agent's built-in flags: what each sets in torch, and its current value.

Each apply() returns "" when applied, else why the flag was refused (the
installed torch lacks it, or the value is not one of its choices). The
table of names and choices, BUILTIN, is rlktop's (tracer/pyagent.Flags):
rlktop writes it as rlktop/_table.py when it extracts the agent.
"""

from ._table import BUILTIN  # name -> choices, in rlktop's order

# enable_*_sdp switches per sdpa value (math, flash, mem_efficient, cudnn).
_SDPA = {
    "default": (True, True, True, True),
    "math": (True, False, False, False),
    "flash": (False, True, False, False),
    "efficient": (False, False, True, False),
    "cudnn": (False, False, False, True),
}


def from_env(s):
    """Parses RLKTOP_FLAGS ("k=v,k=v") into pairs."""
    out = []
    for part in s.split(","):
        k, eq, v = part.partition("=")
        if eq and k.strip():
            out.append((k.strip(), v.strip()))
    return out


# compile is "on" only once the script called torch.compile (watch_compile);
# before that the flag changes nothing and is reported "not used".
_compile_used = False


def watch_compile(torch, on_first_use):
    """Wraps torch.compile so that its first call marks compile as used and
    calls on_first_use() (the agent reports the flag's value then). Returns
    a function that puts torch.compile back (None when nothing was
    wrapped)."""
    orig = getattr(torch, "compile", None)
    if orig is None or getattr(orig, "_rlktop_watch", False):
        return None

    def compile(*args, **kwargs):
        global _compile_used
        first = not _compile_used
        _compile_used = True
        if first:
            try:
                on_first_use()
            except Exception:
                pass
        return orig(*args, **kwargs)

    compile._rlktop_watch = True
    compile.__wrapped__ = orig
    compile.__doc__ = getattr(orig, "__doc__", None)
    torch.compile = compile

    def undo():
        if torch.__dict__.get("compile") is compile:
            torch.compile = orig

    return undo


def _onoff(v):
    return "on" if v else "off"


def current(torch, k):
    if k == "compile":
        return "on" if _compile_used else "not used"
    try:
        b = torch.backends
        if k == "sdpa":
            st = (b.cuda.math_sdp_enabled(), b.cuda.flash_sdp_enabled(), b.cuda.mem_efficient_sdp_enabled(),
                  b.cuda.cudnn_sdp_enabled() if hasattr(b.cuda, "cudnn_sdp_enabled") else True)
            for name, want in _SDPA.items():
                if st == want or (name == "default" and all(st[:3])):
                    return name
            return "custom"
        if k == "tf32":
            return _onoff(b.cuda.matmul.allow_tf32)
        if k == "matmul_precision":
            return torch.get_float32_matmul_precision()
        if k == "cudnn_benchmark":
            return _onoff(b.cudnn.benchmark)
        if k == "deterministic":
            return _onoff(torch.are_deterministic_algorithms_enabled())
    except Exception:
        pass
    return "?"


def apply(torch, k, v):
    choices = BUILTIN.get(k)
    if choices is None:
        return "unknown flag %r" % k
    if v not in choices:
        return "flag %s has no value %r (choices: %s)" % (k, v, ", ".join(choices))
    try:
        b = torch.backends
        if k == "sdpa":
            m, f, e, c = _SDPA[v]
            b.cuda.enable_math_sdp(m)
            b.cuda.enable_flash_sdp(f)
            b.cuda.enable_mem_efficient_sdp(e)
            if hasattr(b.cuda, "enable_cudnn_sdp"):
                b.cuda.enable_cudnn_sdp(c)
            elif c:
                return "this torch (%s) has no cuDNN attention backend" % torch.__version__
        elif k == "compile":
            comp = getattr(torch, "compiler", None)
            if comp is None or not hasattr(comp, "set_stance"):
                return "this torch (%s) has no torch.compiler.set_stance (needs 2.6 or later)" % torch.__version__
            comp.set_stance("default" if v == "on" else "force_eager")
        elif k == "tf32":
            b.cuda.matmul.allow_tf32 = v == "on"
            b.cudnn.allow_tf32 = v == "on"
        elif k == "matmul_precision":
            torch.set_float32_matmul_precision(v)
        elif k == "cudnn_benchmark":
            b.cudnn.benchmark = v == "on"
        elif k == "deterministic":
            torch.use_deterministic_algorithms(v == "on", warn_only=False)
    except Exception as e:
        return "setting %s=%s failed: %r" % (k, v, e)
    return ""


def snapshot(torch):
    """The torch settings the built-in flags change, as they are now (raw
    values, so that a state no flag value names, such as sdpa "custom",
    comes back exactly); restore() puts them back."""
    b = torch.backends
    snap = {}
    for k, get in (
        ("sdp", lambda: (b.cuda.math_sdp_enabled(), b.cuda.flash_sdp_enabled(), b.cuda.mem_efficient_sdp_enabled(),
                         b.cuda.cudnn_sdp_enabled() if hasattr(b.cuda, "cudnn_sdp_enabled") else None)),
        ("tf32", lambda: (b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32)),
        ("matmul_precision", torch.get_float32_matmul_precision),
        ("cudnn_benchmark", lambda: b.cudnn.benchmark),
        ("deterministic", lambda: (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())),
    ):
        try:
            snap[k] = get()
        except Exception:
            pass
    return snap


def restore(torch, snap, keys):
    """Puts back the settings of snap (snapshot()) that the flags in keys
    change; "compile" goes back to the default stance. Returns the errors,
    one string each."""
    b = torch.backends
    errs = []
    for k in keys:
        try:
            if k == "sdpa" and "sdp" in snap:
                m, f, e, c = snap["sdp"]
                b.cuda.enable_math_sdp(m)
                b.cuda.enable_flash_sdp(f)
                b.cuda.enable_mem_efficient_sdp(e)
                if c is not None:
                    b.cuda.enable_cudnn_sdp(c)
            elif k == "tf32" and "tf32" in snap:
                b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32 = snap["tf32"]
            elif k == "matmul_precision" and k in snap:
                torch.set_float32_matmul_precision(snap[k])
            elif k == "cudnn_benchmark" and k in snap:
                b.cudnn.benchmark = snap[k]
            elif k == "deterministic" and k in snap:
                on, warn = snap[k]
                torch.use_deterministic_algorithms(on, warn_only=warn)
            elif k == "compile":
                comp = getattr(torch, "compiler", None)
                if comp is not None and hasattr(comp, "set_stance"):
                    comp.set_stance("default")
        except Exception as e:
            errs.append("%s: %r" % (k, e))
    return errs
