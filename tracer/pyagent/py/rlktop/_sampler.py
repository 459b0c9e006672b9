"""Python stack sampler: every thread's stack at a fixed rate, from its own thread.

Sampler(agent, hz).start() runs a daemon thread that, every 1/hz s, reads
sys._current_frames() and records for each thread (the agent's own
excepted) its stack, the step the process is in, the stage open on that
thread and on the step thread, and what the innermost frame is doing
(STATE_*). Stacks go into a table (frame and stack ids, each defined once
on the wire); samples wait in a bounded list (RLKTOP_PY_SAMPLE_QUEUE,
default 65536; when full, new samples are dropped and counted) until the
agent's sender thread calls flush(). stop() ends the thread and waits for
it (the agent's close and a detach call it).

What the innermost frame is doing is read from the frame, never guessed
from timing: when its current instruction is a call (or a C slot: a binary
operator, `with`'s __enter__) whose callee pushed no Python frame, the
thread is inside native code; the callee is named by the bytecode before
the call (a global, a local or a module attribute chain) and looked up
without running any code (module and type dictionaries only). A thread
whose stack holds a DataLoader iterator's __next__, a queue's get, or a
threading wait (Condition.wait, Event.wait, Thread.join, ...) while its
innermost frame is in native code is waiting there. Two caveats of sampling
from inside the process. The sampler needs the interpreter lock: while a
thread runs Python bytecode it waits for it to give the lock up (at most
sys.getswitchinterval(), 5 ms by default), so samples fall where Python
code yields, and a thread's last few ms of Python before a call that
releases the lock (a torch operator, a sleep, I/O) are seen inside that
call (each sample counts the periods since the previous wake-up, so the
Python is not under-counted as well: see sample()); and a thread that gives the lock up right after a call into C
returned still shows that call as its instruction (counted as native).
"""

import dis
import os
import random
import sys
import threading
import time
import types

from . import _open_stages, _wire

# Sample states (tracer.PyState; values are part of the wire protocol).
STATE_PYTHON, STATE_NATIVE, STATE_TORCH, STATE_SLEEP, STATE_LOCK, STATE_QUEUE, STATE_LOADER = range(7)

QUEUE_CAP = int(os.environ.get("RLKTOP_PY_SAMPLE_QUEUE", "65536") or "65536")
# How often (s) the sender sends what was sampled.
FLUSH_EVERY = 0.25

_PY311 = sys.version_info < (3, 12)
# Before 3.13 reading a frame's f_locals copies every local into a dict.
_PY312 = sys.version_info < (3, 13)
# PRECALL (3.11): its specialised forms call builtins themselves, so a
# thread inside such a call shows the PRECALL.
_CALLS = {"CALL", "CALL_KW", "CALL_FUNCTION_EX", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_METHOD", "PRECALL"}
# Instructions that run a C slot with no Python frame of their own when the
# operands are C types.
_SLOTS = {"BINARY_OP", "BINARY_SUBSCR", "STORE_SUBSCR", "COMPARE_OP", "CONTAINS_OP", "BEFORE_WITH", "GET_ITER", "FOR_ITER"}
_LOADS = {"LOAD_GLOBAL": "g", "LOAD_NAME": "g", "LOAD_FAST": "f", "LOAD_FAST_CHECK": "f", "LOAD_FAST_BORROW": "f", "LOAD_DEREF": "d"}
_NOOPS = {"PUSH_NULL", "KW_NAMES", "EXTENDED_ARG", "NOP", "CACHE"}

_random = random.Random().random

_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))


def _hz():
    """RLKTOP_PY_SAMPLE_HZ: samples per second (default 100; 0 off)."""
    v = os.environ.get("RLKTOP_PY_SAMPLE_HZ", "100")
    try:
        hz = float(v or "100")
    except ValueError:
        sys.stderr.write("rlktop agent: RLKTOP_PY_SAMPLE_HZ=%r is not a number; sampling at 100 Hz\n" % v)
        return 100.0
    return min(max(hz, 0.0), 10000.0)


class Sampler:
    def __init__(self, agent, hz):
        self.agent = agent
        self.period_ns = int(1e9 / hz)
        self.stop_ev = threading.Event()
        self.thread = None
        self.lock = threading.Lock()
        self.gate = None  # held while the thread runs; stop() releases it
        # The tables below are keyed by id(code), not the code object: a
        # code object's hash is computed anew at each lookup (about 0.9 µs
        # on 3.13, 0.1 µs for an int). Each value holds its code object, so
        # that the id cannot be reused while the entry is there, and a hit
        # checks it is the same object.
        self.loc = {}  # (id(code), lasti) -> (frame id, code)
        # id(frame) -> (code, lasti, id(f_back), f_back's code, stack id,
        # wait state) as of the last sample that walked it
        self.seen = {}
        # (parent stack id, id(code), lasti) -> (stack id, wait state,
        # code): one lookup per frame that moved instead of a frame and a
        # stack lookup
        self.trans = {}
        # thread ident -> [native id, id(leaf frame), leaf code, lasti,
        # id(leaf's f_back), stack id, state, local check, wait state] as
        # of the previous tick (a thread whose innermost frame has not
        # moved is not walked again), or None for the agent's own threads
        self.threads = {}
        self.frames = {}  # (func, file, first, line) -> frame id
        self.stacks = {}  # (parent, frame id) -> stack id
        self.new_frames = []  # (id, func, file, first_line, line), not sent yet
        self.new_stacks = []  # (id, parent, frame)
        self.samples = []  # (ts, tid, stack, step, stage, step_stage, state, weight)
        self.dropped = 0
        self.calls = {}  # (id(code), lasti) -> (state or callee description, code)
        self.waits = {}  # id(code) -> (state, code), frames a thread waits in
        self.waits_for = None  # sys.modules size the wait codes were found at
        self.torch_dir = None
        self.last_flush = 0.0
        self.last_ts = 0  # time.monotonic_ns() of the previous sample
        self.ticks = 0  # grid ticks sampled
        self.wakes = 0  # times the thread sampled (a wake-up stands for one tick or more)
        self.cpu_ns = 0  # the sampling thread's CPU time in sample() (the overhead benchmark's figure)

    # ---- control ----
    def start(self):
        """Starts (or, after stop, restarts) the sampling thread; the
        tables carry over."""
        self.stop_ev.clear()
        # The thread waits between ticks on a lock held until stop(): one
        # C call that gives the interpreter lock up while it waits (an
        # Event's wait is a Condition's, a dozen Python lines a tick run
        # holding it).
        gate = threading.Lock()
        gate.acquire()
        self.gate = gate
        self.thread = threading.Thread(target=self._run, args=(gate,), name="rlktop-agent-sample", daemon=True)
        self.thread.start()
        return self

    def stop(self, timeout=1.0):
        """Ends the sampling thread; returns True once it has ended."""
        self.stop_ev.set()
        g = self.gate
        if g is not None:
            try:
                g.release()
            except RuntimeError:
                pass  # stopped already
        t = self.thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
            return not t.is_alive()
        return True

    def _run(self, gate):
        period = self.period_ns / 1e9
        clock = time.perf_counter
        nxt = clock() + period
        self.last_ts = time.monotonic_ns()
        wait = gate.acquire
        errors = 0
        while True:
            d = nxt - clock()
            if wait(True, d if d > 0 else 0):
                return
            # Behind (the interpreter lock came late): on to the next tick
            # of the grid, no burst to catch up (sample() counts the time).
            late = clock() - nxt
            nxt += (int(late / period) + 1 if late > 0 else 1) * period
            a = self.agent
            if a.dead:
                return
            if not a.tracing:
                self.last_ts = time.monotonic_ns()
                continue
            try:
                self.sample()
                errors = 0
            except Exception as e:
                # A module half imported, a frame gone: this tick is lost,
                # the next one tries again; ten in a row end the sampler.
                errors += 1
                if errors == 1 or errors >= 10:
                    try:
                        sys.stderr.write("rlktop agent: Python sampler: %r%s\n" % (e, "; stopped" if errors >= 10 else ""))
                    except Exception:
                        pass
                if errors >= 10:
                    return

    # ---- one tick ----
    def sample(self):
        """Samples every thread; each thread's sample goes in as many
        times as periods have passed since the previous wake-up (at most
        10), rounded at random (x periods: floor(x) or floor(x) + 1 times,
        x on average), each weighing one period.

        A sample is what a thread was doing when the sampler got the
        interpreter lock, and the interval before it is counted there.
        Counting one sample a wake-up instead under-counts Python: a
        thread running bytecode gives the lock up only every switch
        interval (5 ms), one in a C call or a sleep at once, so the
        wake-ups that find it in Python are fewer and further apart (a
        20 ms spin beside a 20 ms sleep, 50% of the time by the script's
        perf_counter, read 37% at 100 Hz and 28% at 500 Hz; 50% and 46%
        counted by the interval). A wake-up closer than a period to the
        previous one may count none."""
        t0 = time.thread_time_ns()
        mono = time.monotonic_ns()
        p = self.period_ns
        ticks = int(min(mono - self.last_ts, 10 * p) / p + _random())
        self.last_ts = mono
        self.wakes += 1
        if ticks <= 0:
            self.cpu_ns += time.thread_time_ns() - t0
            return
        now = time.time_ns()
        weight = min(p, 0x7FFFFFFF)
        frames = sys._current_frames()
        a = self.agent
        step = a.step_n
        open_stages = _open_stages
        step_ident = getattr(a, "step_ident", None)
        sst = open_stages.get(step_ident)
        step_stage = sst[-1] if sst else ""
        if self.waits_for != len(sys.modules):
            self._find_waits()
        out = []
        threads = self.threads
        for ident, f in frames.items():
            th = threads.get(ident, 0)
            if th == 0:
                th = self._thread(ident)
            if th is None:
                continue
            code = f.f_code
            lasti = f.f_lasti
            back = f.f_back
            if th[1] == id(f) and th[2] is code and th[3] == lasti and th[4] == id(back):
                # The innermost frame has not moved since the previous
                # tick: same stack, and the same state unless the callee
                # is named by a local that now holds another object.
                stack, state, chk = th[5], th[6], th[7]
                if chk is not None:
                    r = f.f_locals.get(chk[0][1][1], _MISSING)
                    if id(r) != chk[1] or type(r) is not chk[2]:
                        state, th[7] = self._leaf(f, code, lasti, th[8])
                        th[6] = state
            else:
                stack, wait = self._stack(f, code, lasti, back)
                state, chk = self._leaf(f, code, lasti, wait)
                th[1:] = id(f), code, lasti, id(back), stack, state, chk, wait
            st = open_stages.get(ident)
            if ident == step_ident:
                state |= 0x80  # the step thread's sample (FORMAT.md)
            out.append((now, th[0], stack, step, st[-1] if st else "", step_stage, state, weight))
        del frames, f, back
        if ticks > 1:
            out *= ticks
        with self.lock:
            room = QUEUE_CAP - len(self.samples)
            if room < len(out):
                self.dropped += len(out) - max(room, 0)
                out = out[: max(room, 0)]
            self.samples.extend(out)
        self.ticks += ticks
        self.cpu_ns += time.thread_time_ns() - t0

    def _thread(self, ident):
        """The per-thread record of thread ident (see self.threads), or
        None for the agent's own."""
        th = threading._active.get(ident) if hasattr(threading, "_active") else None
        if th is None:
            for t in threading.enumerate():
                if t.ident == ident:
                    th = t
                    break
        if len(self.threads) > 4096:
            self.threads.clear()
        if th is not None and th.name.startswith("rlktop-agent-"):
            self.threads[ident] = None
            return None
        nid = getattr(th, "native_id", None) or ident & 0x7FFFFFFF
        r = self.threads[ident] = [nid, 0, None, -1, 0, 0, 0, None, 0]
        return r

    def _stack(self, f, code, lasti, back):
        """The stack id of frame f (its code, f_lasti and f_back given) and
        the wait state of its frames. The walk from the innermost frame
        stops at the first frame seen at the previous sample still there
        (same object, instruction and parent): its stack id and wait state
        are kept."""
        seen = self.seen
        chain = []  # (frame, id(frame), code, lasti, id(f_back)), innermost first
        sid = 0
        wait = 0
        idf = id(f)
        outer = None  # the code of the frame the walk stopped at
        while True:
            e = seen.get(idf)
            bid = id(back)
            if e is not None and e[0] is code and e[1] == lasti and e[2] == bid and (back is None or e[3] is back.f_code):
                sid, wait, outer = e[4], e[5], code
                break
            chain.append((f, idf, code, lasti, bid))
            if back is None:
                break
            f = back
            idf = bid
            code = f.f_code
            lasti = f.f_lasti
            back = f.f_back
        if len(seen) > 1 << 15:
            seen.clear()
        trans = self.trans
        for f, idf, code, lasti, bid in reversed(chain):
            v = trans.get((sid, id(code), lasti))
            if v is None or v[2] is not code:
                v = self._push(sid, wait, code, lasti, f)
            sid, wait = v[0], v[1]
            seen[idf] = (code, lasti, bid, outer, sid, wait)
            outer = code
        return sid, wait

    def _push(self, parent, wait, code, lasti, f):
        """The stack id and wait state of the stack parent with frame f
        (at code, lasti) called from it; new ids are queued to send."""
        k = (id(code), lasti)
        fid = self.loc.get(k)
        if fid is None or fid[1] is not code:
            fid = self._frame(k, code, f.f_lineno)
        else:
            fid = fid[0]
        stacks = self.stacks
        n = stacks.get((parent, fid))
        if n is None:
            n = len(stacks) + 1
            stacks[(parent, fid)] = n
            self.new_stacks.append((n, parent, fid))
        w = self.waits.get(id(code))
        if w is not None and w[1] is code and w[0] > wait:
            wait = w[0]  # STATE_LOADER > STATE_QUEUE > STATE_LOCK
        if len(self.trans) > 1 << 17:
            self.trans.clear()
        v = self.trans[(parent, id(code), lasti)] = (n, wait, code)
        return v

    def _leaf(self, f, code, lasti, wait):
        """The state of a thread whose innermost frame is f (at code,
        lasti) below frames whose wait state is wait, and what a later
        tick checks to keep it: None, or (the callee description, id and
        type of the local it is named by) when it was looked up in f's
        locals."""
        state, c = self._state(f, code, lasti)
        chk = None
        if c is not None:
            r = f.f_locals.get(c[1][1], _MISSING)
            chk = (c, id(r), type(r))
        if state != STATE_PYTHON and wait:
            if wait == STATE_LOADER or state in (STATE_NATIVE, STATE_LOCK, STATE_SLEEP):
                state = wait
        return state, chk

    def _frame(self, k, code, line):
        name = getattr(code, "co_qualname", code.co_name)
        key = (name, code.co_filename, code.co_firstlineno, line or 0)
        fid = self.frames.get(key)
        if fid is None:
            fid = len(self.frames) + 1
            self.frames[key] = fid
            self.new_frames.append((fid,) + key)
        if len(self.loc) > 1 << 17:
            self.loc.clear()
        self.loc[k] = (fid, code)
        return fid

    # ---- what the innermost frame is doing ----
    def _state(self, f, code, lasti):
        """The state of frame f's instruction, and the callee description
        when it was looked up in f's locals (None when it is kept)."""
        k = (id(code), lasti)
        c = self.calls.get(k)
        if c is not None and c[1] is code:
            c = c[0]
        else:
            c = _callee(code, lasti)
            if c is not None:
                kind, expr = c
                # A callee named from globals (a module attribute chain)
                # is the same object every time: its state is kept. One
                # named from a local is looked up at each sample where
                # reading one local is cheap (3.13's f_locals proxy).
                if not expr or expr[0] != "f" or _PY312:
                    c = self._classify(f, kind, expr)
            if c is None:
                c = STATE_PYTHON
            if len(self.calls) > 1 << 16:
                self.calls.clear()
            self.calls[k] = (c, code)
        if c.__class__ is int:
            return c, None
        return self._classify(f, c[0], c[1]), c

    def _classify(self, f, kind, expr):
        obj, owner = _resolve(f, expr) if expr and not (expr[0] == "f" and _PY312) else (None, None)
        if kind == "call" and isinstance(obj, (types.FunctionType, types.MethodType)):
            return STATE_PYTHON  # a Python callee returned (its frame is gone)
        if obj is time.sleep:
            return STATE_SLEEP
        if isinstance(obj, _LOCK_TYPES) or (owner is not None and issubclass(owner, _LOCK_TYPES)):
            return STATE_LOCK
        if getattr(obj, "__self__", None).__class__ in _LOCK_TYPES:
            return STATE_LOCK
        if _is_torch(obj, owner):
            return STATE_TORCH
        td = self.torch_dir
        if td is None:
            m = sys.modules.get("torch")
            mf = getattr(m, "__file__", None) if m is not None else None
            if m is None:
                return STATE_NATIVE  # torch not imported (yet): ask again later
            td = self.torch_dir = os.path.dirname(mf) + os.sep if mf else ""
        if td and f.f_code.co_filename.startswith(td):
            return STATE_TORCH
        return STATE_NATIVE

    def _find_waits(self):
        """The code objects of the frames a thread waits in (by state).
        Runs when sys.modules changed; a module still being imported is
        looked at again next time."""
        self.waits_for = len(sys.modules)
        w = {}

        def add(fn, state):
            fn = getattr(fn, "__func__", fn)
            while fn is not None:
                c = getattr(fn, "__code__", None)
                if c is not None:
                    w[id(c)] = (state, c)
                fn = getattr(fn, "__wrapped__", None)

        def attr(mod, *names):
            o = sys.modules.get(mod)
            for n in names:
                o = getattr(o, n, None) if o is not None else None
            return o

        for cls, names in ((threading.Condition, ("wait", "wait_for")), (threading.Event, ("wait",)),
                           (threading.Thread, ("join", "_wait_for_tstate_lock")), (threading.Semaphore, ("acquire",)),
                           (threading.Barrier, ("wait",))):
            for n in names:
                add(cls.__dict__.get(n), STATE_LOCK)
        add(attr("queue", "Queue", "get"), STATE_QUEUE)
        for n in ("Queue", "SimpleQueue", "JoinableQueue"):
            add(attr("multiprocessing.queues", n, "get"), STATE_QUEUE)
        it = attr("torch.utils.data.dataloader", "_BaseDataLoaderIter")
        if it is not None:
            add(it.__dict__.get("__next__"), STATE_LOADER)
        elif "torch.utils.data.dataloader" in sys.modules:
            self.waits_for = None  # being imported: look again
        self.waits = w
        # Wait states are cached with the stacks and threads.
        self.trans.clear()
        self.seen.clear()
        for th in self.threads.values():
            if th is not None:
                th[1] = 0

    # ---- sending (the agent's sender thread) ----
    def flush(self, ids, pid, force=False):
        """Returns the frames to send (a Strings frame for new names and
        PySamples frames), or b"" when nothing is due. ids is the sender's
        string table (name -> id), extended here."""
        now = time.monotonic()
        if not force and now - self.last_flush < FLUSH_EVERY:
            return b""
        with self.lock:
            if not self.samples and not self.new_stacks:
                return b""
            self.last_flush = now
            samples, self.samples = self.samples, []
            frames, self.new_frames = self.new_frames, []
            stacks, self.new_stacks = self.new_stacks, []
            dropped = self.dropped
        new = []

        def sid(s):
            i = ids.get(s)
            if i is None:
                i = ids[s] = len(ids) + 1
                new.append((i, s))
            return i

        fr = [(i, sid(fn), sid(fl), first, line) for i, fn, fl, first, line in frames]
        out = bytearray()
        step = 8192
        for j in range(0, max(len(samples), 1), step):
            out += _wire.pysamples(pid, self.period_ns, dropped, fr if j == 0 else [], stacks if j == 0 else [], samples[j : j + step], sid)
        # The names the frames use go first.
        return (_wire.strings(new) if new else b"") + bytes(out)


def _is_torch(obj, owner):
    if obj is None:
        return False
    for x in (owner, getattr(obj, "__objclass__", None), getattr(obj, "__self__", None)):
        if x is not None:
            m = x.__name__ if isinstance(x, types.ModuleType) else getattr(type(x) if not isinstance(x, type) else x, "__module__", None)
            if isinstance(m, str) and (m == "torch" or m.startswith("torch.")):
                return True
    m = getattr(obj, "__module__", None)
    return isinstance(m, str) and (m == "torch" or m.startswith("torch."))


def _callee(code, lasti):
    """What the instruction at lasti calls: None when it is no call, else
    (kind, expr) where kind is "call" or "slot" and expr names the
    callable: (root kind "g"/"f"/"d", root name, attribute names…) or ()
    when the bytecode does not show it simply."""
    c = _INS.get(code)
    if c is None:
        try:
            ins = list(dis.get_instructions(code))
        except Exception:
            return None
        if len(_INS) > 4096:
            _INS.clear()
        c = _INS[code] = (ins, {x.offset: i for i, x in enumerate(ins)})
    ins, at = c
    k = at.get(lasti)
    if k is None:
        return None
    op = ins[k].opname
    if op in _SLOTS:
        if op == "BEFORE_WITH":
            return ("slot", _expr(ins, k, 1, 0))
        return ("slot", ())
    if op not in _CALLS:
        return None
    try:
        if _PY311:
            j = k - 1
            while j >= 0 and ins[j].opname in ("PRECALL", "KW_NAMES"):
                j -= 1
            consumed = (ins[k].arg or 0) + 2  # PRECALL and CALL take the same count
            return ("call", _expr(ins, j + 1, consumed, consumed - 2))
        consumed = 1 - dis.stack_effect(ins[k].opcode, ins[k].arg, jump=False)
        return ("call", _expr(ins, k, consumed, consumed - 2))
    except Exception:
        return ("call", ())


def _expr(ins, end, consumed, nargs):
    """The callable expression of the straight-line code before ins[end]
    that pushes consumed items, the last nargs of them arguments: (kind,
    name, attr…) or () when it is not a plain name or attribute chain."""
    total = 0
    j = end - 1
    boundary = None  # index where the arguments start
    while j >= 0:
        x = ins[j]
        if x.opname.startswith(("JUMP", "POP_JUMP", "FOR_ITER", "SEND", "RETURN")) :
            return ()  # not straight-line code: the stack is not known
        try:
            total += dis.stack_effect(x.opcode, x.arg if x.opcode >= dis.HAVE_ARGUMENT else None, jump=False)
        except Exception:
            return ()
        if boundary is None and total >= nargs:
            boundary = j
        if total >= consumed:
            break
        j -= 1
    if j < 0 or total != consumed or any(x.is_jump_target for x in ins[j + 1 : end]):
        return ()  # a jump lands inside: the stack is not known
    if nargs == 0:
        boundary = end
    region = [x for x in ins[j:boundary] if x.opname not in _NOOPS]
    if not region:
        return ()
    root = _LOADS.get(region[0].opname)
    if root is None or not isinstance(region[0].argval, str):
        return ()
    out = [root, region[0].argval]
    for x in region[1:]:
        if x.opname in ("LOAD_ATTR", "LOAD_METHOD") and isinstance(x.argval, str):
            out.append(x.argval)
        else:
            return ()
    return tuple(out)


def _resolve(f, expr):
    """Looks expr up in frame f without running code: (object, owner type
    when the last attribute is a descriptor found on a type), or (None,
    None)."""
    try:
        kind, name = expr[0], expr[1]
        if kind == "g":
            obj = f.f_globals.get(name, _MISSING)
            if obj is _MISSING:
                b = f.f_builtins
                obj = b.get(name, _MISSING) if isinstance(b, dict) else getattr(b, name, _MISSING)
        elif kind == "f":
            obj = f.f_locals.get(name, _MISSING)
        else:
            return None, None
        if obj is _MISSING:
            return None, None
        owner = None
        for attr in expr[2:]:
            owner = None
            if isinstance(obj, types.ModuleType):
                obj = obj.__dict__.get(attr, _MISSING)
            else:
                d = None
                try:
                    d = object.__getattribute__(obj, "__dict__")
                except Exception:
                    pass
                v = d.get(attr, _MISSING) if isinstance(d, dict) else _MISSING
                if v is _MISSING:
                    t = obj if isinstance(obj, type) else type(obj)
                    for c in t.__mro__:
                        v = c.__dict__.get(attr, _MISSING)
                        if v is not _MISSING:
                            owner = t
                            break
                obj = v
            if obj is _MISSING:
                return None, None
        return obj, owner
    except Exception:
        return None, None


_MISSING = object()
_INS = {}  # code -> (instructions, offset -> index)


def watch_ranges(torch):
    """Makes torch's record_function ranges (torch.profiler.record_function,
    the usual way to name a stage) stages of the samples too: their names
    go on the thread's stage stack while they are open (ProfilerStep#N
    excepted: that is the step)."""
    cls = torch.autograd.profiler.record_function
    enter, exit_ = cls.__enter__, cls.__exit__
    if getattr(enter, "_rlktop_stage", False):
        return

    def __enter__(rf):
        r = enter(rf)
        name = rf.name
        if isinstance(name, str) and not name.startswith("ProfilerStep#"):
            st = _open_stages.get(threading.get_ident())
            if st is None:
                st = _open_stages[threading.get_ident()] = []
            st.append(name)
            rf._rlktop_open = st
        return r

    def __exit__(rf, *exc):
        st = getattr(rf, "_rlktop_open", None)
        if st:
            if st[-1] == rf.name:
                st.pop()
            elif rf.name in st:
                del st[len(st) - 1 - st[::-1].index(rf.name)]
            rf._rlktop_open = None
        return exit_(rf, *exc)

    __enter__._rlktop_stage = True
    __enter__.__wrapped__ = enter
    __exit__.__wrapped__ = exit_
    cls.__enter__, cls.__exit__ = __enter__, __exit__


def unwatch_ranges(torch):
    """Undoes watch_ranges (a detach leaves record_function as it was)."""
    cls = torch.autograd.profiler.record_function
    enter = cls.__dict__.get("__enter__")
    if getattr(enter, "_rlktop_stage", False):
        cls.__enter__ = enter.__wrapped__
        cls.__exit__ = cls.__dict__["__exit__"].__wrapped__


def start(agent):
    """Starts a sampler for agent at RLKTOP_PY_SAMPLE_HZ (None when 0)."""
    hz = _hz()
    if hz <= 0:
        return None
    return Sampler(agent, hz).start()
