"""rlktop's in-process agent for Python training commands (standard library only).

`rlktop run/record/compare -- python3 train.py` puts this package on the
child's PYTHONPATH together with a sitecustomize that starts the agent when
RLKTOP_SOCKET is set; nothing needs installing and the script needs no
change. Without RLKTOP_SOCKET every function here is a cheap no-op, so a
script that imports rlktop also runs outside rlktop.

What a script may call (all optional):

    import rlktop
    rlktop.step()                      # a training step ends here
    with rlktop.stage("collect"): ...  # a stage (also an NVTX range on CUDA)
    sampler = rlktop.flag("sampler", "multinomial", ["multinomial", "gumbel"])
    if sampler.value == "gumbel": ...  # read each step; rlktop flips it between steps

Steps: rlktop.step() once called, else every torch.optim.Optimizer.step()
of the first optimizer that steps (global post hook), else every
torch.profiler prof.step() of a script that drives its own profiler. Flags: the built-in
ones (sdpa, compile, tf32, matmul_precision, cudnn_benchmark,
deterministic) and those declared with rlktop.flag() are set by rlktop over
the socket and applied at the next step boundary, acknowledged with that
step's number. The training thread never blocks on rlktop: events go to a
bounded queue drained by a daemon thread; when full they are dropped and
counted. An agent failure is a warning on stderr, never an exception in
user code.
"""

import os
import sys
import threading
import time

from . import _wire

__all__ = ["step", "stage", "flag", "enabled", "Flag", "check", "probe", "audit", "log"]

_agent = None  # the running _Agent, or None outside rlktop
# Stages open per thread (threading.get_ident() -> names, innermost last),
# kept while the agent runs, for the Python sampler's tags (_sampler.py).
_open_stages = {}


def enabled():
    """True when this process reports to rlktop."""
    return _agent is not None and not _agent.dead


def step():
    """Marks the end of a training step (and the start of the next). Once
    called, optimizer steps no longer cut steps."""
    a = _agent
    if a is not None:
        a.explicit = True
        a.boundary()


class _Stage:
    __slots__ = ("name", "t0", "nvtx", "open")

    def __init__(self, name):
        self.name = name
        self.nvtx = None
        self.open = None

    def __enter__(self):
        a = _agent
        if a is not None:
            st = _open_stages.get(threading.get_ident())
            if st is None:
                st = _open_stages[threading.get_ident()] = []
            st.append(self.name)
            self.open = st
            self.nvtx = a.nvtx
            if self.nvtx is not None:
                try:
                    self.nvtx[0](self.name)
                except Exception:
                    self.nvtx = None
        self.t0 = time.time_ns()
        return self

    def __exit__(self, *exc):
        t1 = time.time_ns()
        if self.open:
            self.open.pop()
            self.open = None
        a = _agent
        if a is not None:
            if self.nvtx is not None:
                try:
                    self.nvtx[1]()
                except Exception:
                    pass
            a.emit(_wire.K_RANGE, self.name, self.t0, t1 - self.t0, 0)
        return False


def stage(name):
    """A context manager naming a stage of the step ("collect", "update");
    GPU work launched inside it is attributed to it."""
    return _Stage(str(name))


class Flag:
    """A flag declared by the script. Read .value each step; rlktop changes
    it only between steps."""

    __slots__ = ("name", "value", "choices")

    def __init__(self, name, value, choices):
        self.name, self.value, self.choices = name, value, choices

    def __repr__(self):
        return "rlktop.Flag(%r, %r)" % (self.name, self.value)


_user_flags = {}


def flag(name, default, choices=None):
    """Declares a flag rlktop may flip between steps; returns a Flag whose
    .value is a str (default at first, or the value rlktop started the
    process with). choices, when given, lists the accepted values. The name
    of a built-in flag (sdpa, compile, ...) is refused with a warning: the
    Flag returned keeps its default."""
    name = str(name)
    f = _user_flags.get(name)
    if f is not None:
        return f
    f = Flag(name, str(default), [str(c) for c in choices] if choices else None)
    a = _agent
    if a is not None:
        from . import _core, _flags

        if name in _flags.BUILTIN or name == "arm":
            # Refused: rlktop flips its own flag of that name, never this
            # one; the Flag keeps its default and is never changed.
            _core._warn("rlktop.flag(%r): refused, %r is the name of a built-in flag (built-in: %s); declare it under another name" % (
                name, name, ", ".join(_flags.BUILTIN)))
            return f
    _user_flags[name] = f
    if a is not None:
        a.declared(f)
    return f


def check(name, tensor):
    """Counts the rows (along the first dimension) of tensor holding NaN or
    Inf, and such values, for this step: one reduction where the tensor
    lives and one copy of two numbers. A comparison arm with any is invalid
    and its steps with NaN are listed. Returns nothing; never raises."""
    a = _agent
    if a is not None:
        a.check(str(name), tensor)


def probe(name, fn):
    """Registers fn (no arguments, returns a tensor, e.g. the logits of a
    fixed batch). At every switch between comparison arms the agent calls
    it under the old arm and then the new one, back to back, under
    torch.no_grad(), and reports max |difference|, max ulp distance (fp32,
    bf16, fp16), NaN rows and bitwise equality. A probe that raises is
    reported, never propagated."""
    a = _agent
    if a is not None:
        a.probes[str(name)] = fn


def audit(name, tensor):
    """Sends a hash of tensor's raw bits for this step (and its element
    count), so that two arms replaying the same steps can be checked
    bitwise."""
    a = _agent
    if a is not None:
        a.audit(str(name), tensor)


def log(**metrics):
    """Records per-step metrics (loss=..., entropy=...): numbers or
    one-element tensors (a tensor's value is read here, which waits for the
    device)."""
    a = _agent
    if a is not None:
        a.log(metrics)


def _start():
    """Starts the agent when RLKTOP_SOCKET is set (sitecustomize calls it)."""
    global _agent
    if _agent is not None or not os.environ.get("RLKTOP_SOCKET"):
        return
    try:
        from . import _core

        _agent = _core.Agent(os.environ["RLKTOP_SOCKET"])
        _agent.start(_user_flags)
    except Exception as e:  # never break the user's program
        _agent = None
        sys.stderr.write("rlktop agent: not started: %r\n" % (e,))
