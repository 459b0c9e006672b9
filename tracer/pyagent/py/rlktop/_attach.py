"""The agent started inside a process that is already running (rlktop attach PID).

rlktop writes this package into a private folder (mode 0700) and has the
running interpreter execute one statement (through sys.remote_exec on
Python 3.14+, or a debugger's PyRun_SimpleString at a point where the
thread holds the GIL) that puts the folder on sys.path, imports this module,
takes the folder off sys.path again and calls start(). Nothing is bound in
the program's namespace.

start() returns at once: a thread of its own connects to rlktop and installs
what the agent installs at launch (optimizer step hook, torch.profiler
step hook and windows, DataLoader wait measure, torch.compile watch; flags
apply at step boundaries). Each of them registers how to undo it
(Agent.on_stop); so do this module's parts: the torch settings the flags
change, put back as they were at attach; the agent's modules and folder.
The agent leaves (Agent.detach) when rlktop says DETACH, when its
connection ends (rlktop quit, was killed or stopped answering), or when the
program exits.
"""

import os
import shutil
import sys
import threading
import time


def start(addr, home, folder, deadline, every, length, cupti="", rocprof="", register=""):
    """Starts attaching: addr is rlktop's socket, home the folder that was
    put on sys.path (holding this package), folder the private folder to
    remove when the agent leaves (home is inside it), deadline the time
    (seconds since the epoch) after which rlktop stopped waiting, so a late
    call does nothing but remove folder; every:length the torch.profiler
    window schedule in steps (0: none); cupti the path of rlktop's CUPTI
    library to load (the process maps CUDA), "" for none; rocprof the path
    of rlktop's rocprofiler-sdk tool library to attach through register,
    the process's librocprofiler-register, "" for none. Never raises."""
    try:
        while home in sys.path:
            sys.path.remove(home)
        if time.time() > deadline:
            _forget(folder)
            return
        # Every module the agent needs, imported now: the folder goes away
        # at detach, and the package's __path__ would look there.
        from . import _after_torch, _core, _flags, _wire  # noqa: F401

        threading.Thread(target=_attach, args=(addr, folder, (every, length) if every > 0 else (0, 0), cupti),
                         kwargs={"rocprof": (rocprof, register)},
                         name="rlktop-attach", daemon=True).start()
    except Exception:
        _forget(folder)


def _attach(addr, folder, kineto, cupti, rocprof=("", "")):
    import rlktop
    from . import _core, _flags

    try:
        a = _core.Agent(addr, kineto=kineto)
        a.attached = True
        a.start(rlktop._user_flags)
    except Exception:
        # rlktop is gone (or never listened): leave without a trace.
        _forget(folder)
        return
    # The modules and files go once the connection is closed (after rlktop
    # took the last torch.profiler window, which is in folder too).
    a.after_close = lambda: _forget(folder)
    a.window_parent = folder
    a.window_cuda = True
    a.window_first = 1  # no warm-up to skip: the first rows come a step sooner
    a.on_stop("rlktop._agent", lambda: setattr(rlktop, "_agent", None))
    a.sock.settimeout(SEND_TIMEOUT)
    rlktop._agent = a
    if cupti:
        _load_cupti(a, addr, cupti)
    elif rocprof[0]:
        _attach_rocprof(a, addr, *rocprof)
    torch = sys.modules.get("torch")
    if torch is None:
        _after_torch(a)
        return
    # Attached while `import torch` runs (in another thread, or in the one
    # the injection ran on, nested in it): installing now would import
    # torch's submodules from this thread against the import in progress
    # (the interpreter raises its import-deadlock error in the program).
    # Wait until torch is whole.
    while _initializing(torch) and not a.detached:
        time.sleep(0.05)
    if not a.detached:
        _install(a, torch)


def _load_cupti(a, addr, lib):
    """Loads rlktop's CUPTI library into the process and starts it: it
    connects to rlktop (a hello of its own, source cupti) and records the
    GPU work launched from now on. RLKTOP_SOCKET is in the environment only
    while the library starts (its Go runtime copies the environment at
    load, its C half reads it at InitializeInjection). The agent's
    torch.profiler windows then record the CPU only: CUPTI takes one
    subscriber. At detach tracing goes off for good; the library stays
    loaded (a Go runtime cannot be unloaded)."""
    import ctypes

    saved = os.environ.get("RLKTOP_SOCKET")
    try:
        os.environ["RLKTOP_SOCKET"] = addr
        h = ctypes.CDLL(lib)
        h.InitializeInjection()
    except Exception as e:
        _say(a, "rlktop's CUPTI library %s not loaded (%r): GPU kernels only from torch.profiler windows" % (lib, e))
        return
    finally:
        if saved is None:
            os.environ.pop("RLKTOP_SOCKET", None)
        else:
            os.environ["RLKTOP_SOCKET"] = saved
    a.window_cuda = False
    a.on_stop("CUPTI tracing", h.rlktop_cupti_detach)


# rocprofiler-register's error codes (rocprofiler_register_error_code_t)
# that say why an attach was refused.
_REGISTER_ERRORS = {
    1: "rocprofiler-sdk found no tool to configure",
    6: "rocprofiler-sdk failed to load or start the tool",
    8: "an invalid argument",
    9: "the attachment library was never loaded: start the job with ROCP_TOOL_ATTACH=1 to attach its GPU tracing later",
}


def _attach_rocprof(a, addr, lib, register):
    """Attaches rlktop's rocprofiler-sdk tool library through the process's
    rocprofiler-register (its attach entry, as rocprofv3 --attach calls it
    through ptrace; here the agent is inside the process already):
    rocprofiler_register_attach(environment, tool) sets the environment's
    pairs (a uint32 count, then each name and value NUL-terminated; here
    RLKTOP_SOCKET, which the tool needs to connect) and has rocprofiler-sdk
    load the tool, which records the GPU work dispatched from now on. The
    register takes a tool after start only where the process had
    ROCP_TOOL_ATTACH=1 from its start (or a register built with default
    attachment); a refusal is a warning and GPU kernels then come from the
    torch.profiler windows. RLKTOP_SOCKET leaves the environment again once
    the tool has it. At detach the register's detach entry stops it."""
    import ctypes
    import struct

    try:
        h = ctypes.CDLL(register)  # mapped already: the same handle
        attach, detach = h.rocprofiler_register_attach, h.rocprofiler_register_detach
        attach.argtypes, attach.restype = [ctypes.c_char_p, ctypes.c_char_p], ctypes.c_int
        detach.argtypes, detach.restype = [], ctypes.c_int
    except Exception as e:
        _say(a, "%s has no attach entry (%r): GPU kernels only from torch.profiler windows" % (register, e))
        return
    pairs = [("RLKTOP_SOCKET", addr)]
    env = struct.pack("=I", len(pairs)) + b"".join(k.encode() + b"\0" + v.encode() + b"\0" for k, v in pairs)
    had = "RLKTOP_SOCKET" in os.environ
    try:
        rc = attach(env, lib.encode())
    except Exception as e:
        rc, why = -1, repr(e)
    else:
        why = _REGISTER_ERRORS.get(rc, "error %d" % rc)
    finally:
        if not had:
            os.unsetenv("RLKTOP_SOCKET")  # set in C's environment by the register
    if rc != 0:
        _say(a, "rocprofiler-register refused rlktop's tool library %s (%s): GPU kernels only from torch.profiler windows" % (lib, why))
        return
    a.window_cuda = False
    a.on_stop("rocprofiler tracing", detach)


def _initializing(module):
    """Whether module is still being executed by an import."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def _install(a, torch):
    from . import _flags

    snap = _flags.snapshot(torch)
    a.torch_imported(torch)

    def put_back():
        # Every flag rlktop set goes back to the settings found at attach.
        # Not "the flags whose value differs from the value at attach": the
        # first switch can arrive while the agent installs, and the value
        # read then is already rlktop's.
        changed = [k for k in _flags.BUILTIN if k in a.touched]
        for e in _flags.restore(torch, snap, changed):
            _say(a, "detach: flag %s" % e)

    a.on_stop("flags", put_back)


def _after_torch(a):
    """torch is not imported yet: install at `import torch` (a finder on
    sys.meta_path, removed at detach)."""
    from ._after_torch import AfterTorch

    f = AfterTorch(lambda torch: a.detached or _install(a, torch))
    sys.meta_path.insert(0, f)
    a.on_stop("import torch watch", f.remove)


def _forget(folder):
    """Removes the agent's modules from sys.modules (those loaded from
    folder) and the folder."""
    for name, m in list(sys.modules.items()):
        if name == "rlktop" or name.startswith("rlktop."):
            f = getattr(m, "__file__", None) or ""
            if f.startswith(folder + os.sep):
                del sys.modules[name]
    shutil.rmtree(folder, ignore_errors=True)


def _say(a, msg):
    """Sends msg to rlktop as the agent's warning: the attached process's
    stderr is the program's, not rlktop's (its output goes where it went
    before attaching), so nothing is written there."""
    try:
        a.warn_rlktop(msg)
    except Exception:
        pass


# Seconds a send to rlktop may block (rlktop stopped, or not reading)
# before the agent leaves: the program never waits on rlktop longer.
SEND_TIMEOUT = 10.0
