"""The agent proper: connection, sender thread, steps, flags, Kineto windows.

Threads: the training thread(s) call emit()/boundary(); a daemon sender
thread drains the bounded queue into wire frames; a daemon receiver thread
reads Control frames. Flag changes wait in `pending` until the training
thread reaches a step boundary.
"""

import atexit
import collections
import os
import socket
import sys
import tempfile
import threading
import time

from . import _wire, _flags, _sampler

QUEUE_CAP = int(os.environ.get("RLKTOP_AGENT_QUEUE", "65536") or "65536")
# Raw values rlktop.audit sends per step besides the hash (RLKTOP_AUDIT_SAMPLE).
AUDIT_SAMPLE = int(os.environ.get("RLKTOP_AUDIT_SAMPLE", "16") or "16")


_live = None  # the started Agent: warnings also go to rlktop
WARN_MAX = 100  # warnings sent to rlktop per process (all go to stderr)


def _warn(msg):
    try:
        sys.stderr.write("rlktop agent: %s\n" % msg)
    except Exception:
        pass
    a = _live
    if a is not None:
        a.warn_rlktop(msg)


def _connect(addr):
    if addr.startswith("unix:"):
        addr = addr[5:]
    if addr.startswith("tcp:"):
        rest = addr[4:]
        hostport, _, token = rest.partition("#")
        host, _, port = hostport.rpartition(":")
        s = socket.create_connection((host.strip("[]"), int(port)), timeout=5)
        tok = token.encode()
        s.sendall(b"RLKA" + len(tok).to_bytes(2, "little") + tok)
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(addr)
    s.settimeout(None)
    return s


def _rank_world():
    env = os.environ
    for r, w in (("RANK", "WORLD_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("SLURM_PROCID", "SLURM_NTASKS")):
        if env.get(r, "").isdigit():
            return int(env[r]), int(env.get(w, "0") or 0) if env.get(w, "").isdigit() else 0
    return -1, 0


class Agent:
    def __init__(self, addr, kineto=None):
        self.addr = addr
        self.pid = os.getpid()
        self.dead = False
        self.explicit = False  # rlktop.step() seen: optimizer steps no longer count
        self.nvtx = None  # (push, pop) once torch with CUDA is imported
        self.torch = None
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        # Flag changes and their undo at detach are serialised: a switch
        # that arrived with the detach, or one the training thread was
        # applying while detach() ran on the receiver thread, must not
        # land after the settings were put back (frozen: none applies).
        self.flags_lock = threading.Lock()
        self.flags_frozen = False
        self.touched = set()  # built-in flags rlktop set in this process
        self.queue = []  # (kind, name, start, dur, value, tid)
        self.out = collections.deque()  # whole frames from the training thread (acks, files)
        self.dropped = 0
        self.dropped_batches = 0
        self.sent_drops = 0
        # The step running now; -1 before the first boundary. Boundaries come
        # at the end of a step (rlktop.step(), optimizer.step(), prof.step()),
        # so the first one ends step 0, whose start the agent never saw: the
        # first measured step is step 1, the number the script's own loop
        # counter (from 0) and torch.profiler's ProfilerStep#N give it.
        self.step_n = -1
        self.step_t0 = 0
        self.opt_id = None
        self.pending = []  # (seq, key, value) to apply at the next boundary
        self.values = {}  # every flag in force, as str
        self.tracing = True
        self.window = None  # the running torch.profiler window
        self.kineto_every, self.kineto_len = kineto or _kineto_schedule()
        self.probes = {}  # name -> fn, evaluated around every flag switch
        self.windows_out = []  # exported window files rlktop has not taken yet
        self.stop_requested = False  # rlktop asked the program to end
        self.closed = False
        self.windows_skipped = 0
        self.tmpdir = None
        self.compile_frames = None  # dynamo frames compiled so far (_compiles)
        self.input_wait = 0  # ns in DataLoader next() since the last boundary
        self.input_seen = False  # a DataLoader iterator was used
        self.window_thread = None  # the thread whose boundaries run windows
        self.state_dirty = False  # the flags in force changed: the sender acks once
        self.warned = 0
        self.sampler = None  # the Python stack sampler (_sampler.py), or None
        self.step_ident = threading.main_thread().ident  # the thread that ends steps
        # Attached to a running process (rlktop attach, _attach.py): rlktop
        # going away, or its DETACH, makes the agent leave (detach()).
        self.attached = False
        # (what, fn): each thing the agent installed or started registers
        # how to undo it (on_stop); detach() calls them newest first.
        self.stops = []
        self.detaching = None  # why the agent was asked to leave
        self.detached = False
        self.closing = False  # the sender sends what is queued, then closes
        self.sender_gone = False  # the sender thread ended (its connection failed)
        self.in_flight = False  # the sender holds a batch taken from the queue, not yet sent
        self.conn_closed = False
        self.window_parent = None  # where window folders go (None: the temp dir)
        self.window_cuda = False  # windows record CUDA activity where CUDA is initialised
        self.window_first = 2  # the step the first torch.profiler window starts at
        self.after_close = None  # called once the connection is closed

    # ---- start ----
    def start(self, user_flags):
        self.sock = _connect(self.addr)
        rank, world = _rank_world()
        now = time.time_ns()
        host = socket.gethostname()
        dev = "cpu: %d cores (python %s)" % (os.cpu_count() or 0, sys.version.split()[0])
        self.sock.sendall(_wire.preamble() + _wire.hello(self.pid, rank, world, host, dev, 0, now, list(sys.argv)))
        for k, v in _flags.from_env(os.environ.get("RLKTOP_FLAGS", "")):
            self.pending.append((0, k, v))
        for f in user_flags.values():
            self.declared(f)
        self._send_ack(0, -1, "")
        global _live
        _live = self
        threading.Thread(target=self._sender, name="rlktop-agent-send", daemon=True).start()
        threading.Thread(target=self._receiver, name="rlktop-agent-recv", daemon=True).start()
        try:
            self.sampler = _sampler.start(self)
        except Exception as e:
            _warn("no Python sampler (%r)" % (e,))
        atexit.register(self.close)
        self.on_stop("atexit", lambda: atexit.unregister(self.close))
        if self.attached:
            return  # a fork hook cannot be removed; boundary() checks the pid instead
        try:
            os.register_at_fork(after_in_child=self._forked)
        except Exception:
            pass

    def _forked(self):
        # A forked child (DataLoader worker) has no sender thread: stay silent.
        self.dead = True

    # ---- training thread ----
    def emit(self, kind, name, start, dur, value):
        if self.dead:
            return
        ev = (kind, name, start, dur, value, threading.get_native_id())
        with self.lock:
            # A step boundary is never dropped (one per step): without it
            # every event of the step loses its step.
            if len(self.queue) >= QUEUE_CAP and kind != _wire.K_STEP:
                self.dropped += 1
                self.dropped_batches += 1
                return
            self.queue.append(ev)

    def counter(self, name, value, ts=None):
        """Queues a counter sample (a host-wide track) at ts (now)."""
        if self.dead:
            return
        ev = (-1, name, ts or time.time_ns(), 0, float(value), 0)
        with self.lock:
            if len(self.queue) >= QUEUE_CAP:
                self.dropped += 1
                return
            self.queue.append(ev)

    def check(self, name, t):
        try:
            torch = self.torch
            if torch is None or not isinstance(t, torch.Tensor):
                return
            with torch.no_grad():
                bad = ~torch.isfinite(t.detach())
                if bad.dim() == 0:
                    rows = bad.reshape(1)
                else:
                    rows = bad.reshape(bad.shape[0], -1).any(1)
                r, n = torch.stack([rows.sum(), bad.sum()]).tolist()
            now = time.time_ns()
            self.counter("check.%s.rows" % name, r, now)
            self.counter("check.%s.values" % name, n, now)
        except Exception as e:
            _warn("check(%r): %r" % (name, e))

    def log(self, metrics):
        now = time.time_ns()
        for k, v in metrics.items():
            try:
                self.counter("metric.%s" % k, float(v), now)
            except Exception as e:
                _warn("log(%s=...): %r" % (k, e))

    def audit(self, name, t):
        try:
            import hashlib

            torch = self.torch
            x = t.detach().contiguous().cpu()
            try:
                raw = x.view(torch.uint8).numpy().tobytes()
            except Exception:
                raw = bytes(x.view(-1).view(torch.uint8).tolist())
            h = int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little")
            now = time.time_ns()
            self.counter("audit.%s.hash_hi" % name, h >> 32, now)
            self.counter("audit.%s.hash_lo" % name, h & 0xFFFFFFFF, now)
            self.counter("audit.%s.n" % name, x.numel(), now)
            # A bounded sample of raw values (exact in float64 for fp32/16),
            # so that a differing step can name its first differing element.
            if AUDIT_SAMPLE > 0 and x.is_floating_point():
                for i, v in enumerate(x.reshape(-1)[:AUDIT_SAMPLE].double().tolist()):
                    self.counter("audit.%s.s%d" % (name, i), v, now)
        except Exception as e:
            _warn("audit(%r): %r" % (name, e))

    def _run_probes(self):
        """Evaluates every probe; returns name -> tensor (or an exception)."""
        out = {}
        torch = self.torch
        for name, fn in self.probes.items():
            try:
                with torch.no_grad():
                    out[name] = fn().detach().clone()
            except Exception as e:
                out[name] = e
        return out

    def _probe_report(self, before, after):
        now = time.time_ns()
        for name, a in before.items():
            b = after.get(name)
            for x in (a, b):
                if isinstance(x, Exception):
                    self.counter("probe.%s.error" % name, 1, now)
                    _warn("probe %r raised %r" % (name, x))
                    break
            else:
                try:
                    r = _compare(self.torch, a, b)
                except Exception as e:
                    self.counter("probe.%s.error" % name, 1, now)
                    _warn("probe %r: comparing outputs failed: %r" % (name, e))
                    continue
                for k, v in r.items():
                    self.counter("probe.%s.%s" % (name, k), v, now)

    def torch_imported(self, torch):
        """Runs right after `import torch` finished."""
        self.torch = torch
        try:
            if torch.cuda.is_available():
                self.nvtx = (torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop)
        except Exception:
            pass
        for k in _flags.BUILTIN:
            self.values.setdefault(k, _flags.current(torch, k))
        undo = _flags.watch_compile(torch, self._compile_used)
        if undo is not None:
            self.on_stop("torch.compile watch", undo)
        self._watch_loader()
        if self.sampler is not None:
            try:
                _sampler.watch_ranges(torch)
            except Exception as e:
                _warn("record_function ranges are no stages of the Python samples (%r)" % (e,))
        try:
            from torch.optim.optimizer import register_optimizer_step_post_hook

            handle = register_optimizer_step_post_hook(self._opt_stepped)
            self.on_stop("optimizer step hook", lambda: _quiet_hook(handle))
        except Exception as e:
            _warn("no optimizer step hook (%r): steps come only from rlktop.step()" % (e,))
        # ProfilerStep#N: a script that drives its own torch.profiler with
        # prof.step() and has no optimizer step (inference, evaluation) gets
        # its steps from there (rlktop.step and optimizer steps come first).
        try:
            import torch.profiler as tprof

            orig_step = tprof.profile.step
            agent = self

            def step(prof, *a, **k):
                try:
                    agent._profiler_stepped()
                except Exception:
                    pass
                return orig_step(prof, *a, **k)

            step.__wrapped__ = orig_step
            tprof.profile.step = step
            self.on_stop("torch.profiler step hook", lambda: _unpatch(tprof.profile, "step", step, orig_step))
        except Exception as e:
            _warn("no torch.profiler step hook (%r)" % (e,))
        # Start flags take effect at once (before the first step).
        self._apply_pending(-1)
        self._send_ack(0, -1, "")

    def declared(self, f):
        self.values[f.name] = f.value
        for i, (seq, k, v) in enumerate(self.pending):
            if k == f.name and seq == 0:
                if f.choices and v not in f.choices:
                    self._send_ack(0, -1, "flag %s has no value %r (choices: %s)" % (k, v, ", ".join(f.choices)))
                else:
                    f.value = v
                    self.values[k] = v
                del self.pending[i]
                break
        self._state_changed()

    def _profiler_stepped(self):
        if not self.explicit and self.opt_id is None:
            self.profiler_steps = True
            self.boundary()

    def _opt_stepped(self, opt, args, kwargs):
        if self.explicit or getattr(self, "profiler_steps", False):
            return
        if self.opt_id is None:
            self.opt_id = id(opt)
        elif id(opt) != self.opt_id:
            return
        self.boundary()

    def boundary(self):
        """A step ends now (the first call only starts the clock)."""
        if self.detaching is not None and not self.detached:
            self.detach()  # at a step boundary: the profiler stops on its own thread
            return
        if self.attached and os.getpid() != self.pid:
            self.dead = True  # a forked child (no fork hook when attached)
        if self.dead:
            if self.window is not None:
                # rlktop went away during a torch.profiler window: stop the
                # profiler, or it would record every later op (memory grows
                # without bound; seen: 10 GB after 1,200 steps).
                prof, self.window = self.window[0], None
                try:
                    prof.__exit__(None, None, None)
                except Exception:
                    pass
            return
        t = time.time_ns()
        self.step_ident = threading.get_ident()
        try:
            if self.step_n >= 0:
                self.emit(_wire.K_STEP, "step", self.step_t0, t - self.step_t0, self.step_n)
            self._compiles(t)
            self._memory(t)
            if self.input_seen:
                if self.step_n >= 0:
                    self.counter("input.wait_ns", self.input_wait, t - 1)
                self.input_wait = 0
            self.step_n = self.step_n + 1 if self.step_n >= 0 else 1
            if self.pending:
                self._apply_pending(self.step_n)
            if self.kineto_every > 0 and self.torch is not None:
                # torch.profiler windows start and stop on one thread only
                # (the first to reach a boundary): a window started on
                # another thread records none of the training thread's ops.
                me = threading.get_ident()
                if self.window_thread is None:
                    self.window_thread = me
                if me == self.window_thread:
                    self._window(self.step_n)
        except Exception as e:
            _warn("step boundary: %r" % (e,))
        # Window start/stop and flag changes happen between steps.
        self.step_t0 = time.time_ns()
        if self.stop_requested and threading.current_thread() is threading.main_thread():
            self.close()
            raise SystemExit(0)

    def _watch_loader(self):
        """Wraps torch.utils.data's DataLoader iterator __next__ (the base
        class of the single- and multi-process iterators) to add the wall
        time (ns) each call takes to input_wait: the training thread waiting
        for its next batch. Sent per step as input.wait_ns."""
        try:
            from torch.utils.data import dataloader as dl

            cls = dl._BaseDataLoaderIter
            orig = cls.__next__
            if getattr(orig, "_rlktop_watch", False):
                return
            agent = self

            def __next__(it):
                t0 = time.perf_counter_ns()
                try:
                    return orig(it)
                finally:
                    agent.input_wait += time.perf_counter_ns() - t0
                    agent.input_seen = True

            __next__._rlktop_watch = True
            __next__.__wrapped__ = orig
            cls.__next__ = __next__
            self.on_stop("DataLoader wait measure", lambda: _unpatch(cls, "__next__", __next__, orig))
        except Exception as e:
            _warn("no DataLoader wait measure (%r)" % (e,))

    def _compiles(self, t):
        """Sends compile.frames, the frames torch.compile (dynamo) compiled
        during the step that ends at t (ns): the rise of
        torch._dynamo.utils.counters["frames"]["total"], which counts every
        compile, first or recompile (a guard failed), including the attempt
        that hits cache_size_limit. Nothing until dynamo compiled a frame
        (optimizers import it without compiling); the sample is stamped
        t - 1 so that it lies inside the step."""
        mod = sys.modules.get("torch._dynamo.utils")
        if mod is None:
            return
        try:
            total = int(mod.counters["frames"]["total"])
        except Exception:
            return
        last = self.compile_frames
        self.compile_frames = total
        if self.step_n >= 0 and total > 0:  # nothing until dynamo compiled
            self.counter("compile.frames", total - (last or 0), t - 1)

    def _memory(self, t):
        """Sends, per CUDA/ROCm device, the allocator's counters for the
        step that ends at t (ns): memory.gpuN.peak_allocated_bytes
        (max_memory_allocated, then its peak reset for the next step),
        .allocated_bytes and .reserved_bytes at the step's end. Reading
        them is a lookup in the caching allocator's stats (no
        synchronisation); nothing when CUDA was never initialised (the
        agent never initialises it), nor before the first step."""
        torch = self.torch
        if torch is None or not _memory_counters():
            return
        try:
            cuda = torch.cuda
            if not cuda.is_initialized():
                return
            for d in range(cuda.device_count()):
                if self.step_n >= 0:
                    p = "memory.gpu%d." % d
                    self.counter(p + "peak_allocated_bytes", cuda.max_memory_allocated(d), t - 1)
                    self.counter(p + "allocated_bytes", cuda.memory_allocated(d), t - 1)
                    self.counter(p + "reserved_bytes", cuda.memory_reserved(d), t - 1)
                cuda.reset_peak_memory_stats(d)
        except Exception as e:
            _warn("no memory counters (%r)" % (e,))
            _MEMORY_COUNTERS[0] = False

    def _apply_pending(self, step):
        with self.flags_lock:
            with self.lock:
                todo, self.pending = self.pending, []
            if self.flags_frozen:
                return  # detached: the settings are back as found
            self._apply_pending_locked(todo, step)

    def _apply_pending_locked(self, todo, step):
        switch = self.probes and self.torch is not None and any(seq != 0 for seq, _, _ in todo)
        if switch:
            before = self._run_probes()
        self._apply(todo, step)
        if switch:
            self._probe_report(before, self._run_probes())

    def _apply(self, todo, step):
        for seq, k, v in todo:
            err = ""
            from . import _user_flags

            if k in _user_flags:
                f = _user_flags[k]
                if f.choices and v not in f.choices:
                    err = "flag %s has no value %r (choices: %s)" % (k, v, ", ".join(f.choices))
                else:
                    f.value = v
            elif k in _flags.BUILTIN:
                if self.torch is None:
                    if seq == 0:  # a start flag: wait for `import torch`
                        with self.lock:
                            self.pending.append((seq, k, v))
                        continue
                    err = "torch is not imported yet"
                else:
                    err = _flags.apply(self.torch, k, v)
                    # Put back at detach whatever the value: a switch can
                    # land before the attach-time values are read.
                    self.touched.add(k)
            elif k == "arm":
                pass  # rlktop's arm label: acknowledged, changes nothing
            elif seq == 0:
                # A start flag for a flag the script has not declared yet:
                # rlktop.flag() takes it from pending when it does.
                with self.lock:
                    self.pending.append((seq, k, v))
                continue
            else:
                err = "unknown flag %r (built-in: %s; declared: %s)" % (k, ", ".join(_flags.BUILTIN), ", ".join(sorted(_user_flags)) or "none")
            if not err:
                self.values[k] = v
            self._send_ack(seq, step, err)

    def _compile_used(self):
        # The script called torch.compile: compile is in force from now on
        # (unless a flip already set it), so say so.
        if self.values.get("compile") == "not used":
            self.values["compile"] = "on"
        self._send_ack(0, -1, "")

    def _send_ack(self, seq, step, err):
        if seq == 0 and step == -1 and not err:
            self._state_changed()
            return
        fr = _wire.control_ack(seq, dict(self.values), self.tracing, step, err)
        with self.lock:
            self.out.append(fr)
            self.cond.notify()

    def _state_changed(self):
        """The flags in force changed without a request to answer: the
        sender thread sends one acknowledgement with the state then in
        force, however many changes came (2,000 declared flags cost one
        ack of 2,000 values, not 2,000 of them: O(N) not O(N^2) on the
        training thread)."""
        with self.lock:
            self.state_dirty = True
            self.cond.notify()

    def warn_rlktop(self, msg):
        """Sends msg to rlktop as a warning (Meta "agent.warning"), at most
        WARN_MAX of them."""
        if self.dead or self.warned >= WARN_MAX:
            return
        self.warned += 1
        if self.warned == WARN_MAX:
            msg += " (further agent warnings only on stderr)"
        with self.lock:
            self.out.append(_wire.meta([("agent.warning", msg)]))
            self.cond.notify()

    # ---- Kineto windows ----
    def _window(self, n):
        torch = self.torch
        if self.window is not None:
            prof, first = self.window
            if n - first < self.kineto_len:
                return
            self.window = None
            prof.__exit__(None, None, None)
            path = None
            try:
                if self.tmpdir is None:
                    # Inside the attach folder, or rlktop's own folder when it gives
                    # one, which it removes however this process ends (os._exit too).
                    self.tmpdir = tempfile.mkdtemp(prefix="rlktop-kineto-", dir=self.window_parent or os.environ.get("RLKTOP_KINETO_DIR") or None)
                path = os.path.join(self.tmpdir, "window-%d.json" % first)
                prof.export_chrome_trace(path)
            except Exception as e:
                _warn("torch.profiler window of steps %d-%d not written (%r): those steps have no operators" % (first, n - 1, e))
                if path:
                    try:
                        os.remove(path)
                    except OSError:
                        pass
                return
            self.windows_out.append(path)
            with self.lock:
                self.out.append(_wire.tracefile("kineto", path, first, n - 1))
                self.cond.notify()
            return
        # Windows start at step 2, 12, 22…: step 1, the first measured, carries
        # one-time costs (first allocations, warm-up). Attached to a process
        # in its stride (window_first 1), at step 1, 11, 21…
        if not self.tracing or n % self.kineto_every != self.window_first % self.kineto_every:
            return
        self.windows_out = [p for p in self.windows_out if os.path.exists(p)]
        if len(self.windows_out) >= _WINDOWS_PENDING:
            # rlktop has not taken the previous windows yet (stopped, or
            # behind): no new one, so windows never pile up on disk. A few
            # may wait: a window with shapes and memory events of a
            # 50 ms step is ~10 MB and takes rlktop ~0.1 s to import, so
            # with one window every other step a single pending window
            # would skip every second one on a loaded machine.
            self.windows_skipped += 1
            return
        from torch.profiler import ProfilerActivity, profile

        acts = [ProfilerActivity.CPU]
        if self.window_cuda:
            # Attached, with no GPU tracer of rlktop's in the process: where
            # CUDA is initialised the window brings CUPTI's kernels (Kineto).
            try:
                if torch.cuda.is_initialized():
                    acts.append(ProfilerActivity.CUDA)
            except Exception:
                pass
        # Shapes give rlktop the FLOPs and bytes of each operator;
        # RLKTOP_KINETO_SHAPES=0 turns them off (they cost each operator
        # call a few µs of bookkeeping inside the window). profile_memory:
        # the allocations and frees of the window ([memory] events) for
        # rlktop's memory model; RLKTOP_PROFILE_MEMORY=0 off.
        shapes = os.environ.get("RLKTOP_KINETO_SHAPES", "1") != "0"
        prof = profile(activities=acts, record_shapes=shapes, with_stack=False, profile_memory=_profile_memory())
        prof.__enter__()
        self.window = (prof, n)

    # ---- sender / receiver threads ----
    def _sender(self):
        ids = {}
        try:
            while True:
                with self.lock:
                    if not self.queue and not self.out and not self.state_dirty:
                        self.cond.wait(0.05)
                    q, self.queue = self.queue, []
                    frames = list(self.out)
                    self.out.clear()
                    self.in_flight = True
                    if self.state_dirty:
                        self.state_dirty = False
                        frames.append(_wire.control_ack(0, dict(self.values), self.tracing, -1, ""))
                    dropped, batches = self.dropped, self.dropped_batches
                    closing = self.closing
                buf = bytearray()
                if q:
                    new = []
                    evs = []
                    cs = []
                    for kind, name, s, d, v, tid in q:
                        i = ids.get(name)
                        if i is None:
                            i = ids[name] = len(ids) + 1
                            new.append((i, name))
                        if kind < 0:
                            cs.append((s, i, v))
                        else:
                            evs.append((kind, i, s, d, self.pid, tid, v))
                    if new:
                        buf += _wire.strings(new)
                    for j in range(0, len(evs), 4096):
                        buf += _wire.events(evs[j : j + 4096])
                    for j in range(0, len(cs), 4096):
                        buf += _wire.counters(cs[j : j + 4096])
                sm = self.sampler
                if sm is not None:
                    buf += sm.flush(ids, self.pid, self.closed)
                for fr in frames:
                    buf += fr
                if dropped != self.sent_drops:
                    buf += _wire.drops(dropped, batches)
                    self.sent_drops = dropped
                if buf:
                    self.sock.sendall(buf)
                self.in_flight = False
                if closing:
                    self._close_conn(True)
                    return
                if self.dead:
                    return
        except Exception as e:
            if self.attached:
                if isinstance(e, socket.timeout):
                    why = "rlktop took no data for %g s (stopped, or too loaded to read)" % (self.sock.gettimeout() or 0,)
                else:
                    why = "connection to rlktop lost: %r" % (e,)
                self.request_detach(why)
            elif not self.dead:
                _warn("connection to rlktop lost (%r); the program goes on untraced" % (e,))
            self.dead = True
        finally:
            # Whichever of the sender and detach() comes last closes.
            with self.lock:
                self.sender_gone = True
                closing = self.closing
            if closing:
                self._close_conn(False)

    def _receiver(self):
        r = _wire.Reader()
        try:
            while True:
                try:
                    data = self.sock.recv(65536)
                except socket.timeout:  # attached: the socket has a send timeout
                    if self.detaching is not None:
                        break
                    continue
                if not data:
                    break
                sets = []
                for ftype, p in r.feed(data):
                    if ftype != _wire.T_CONTROL:
                        continue
                    op, seq, key, value = _wire.parse_control(p)
                    if op == _wire.OP_SET:
                        sets.append((seq, key, value))
                    elif op in (_wire.OP_PAUSE, _wire.OP_RESUME):
                        self.tracing = op == _wire.OP_RESUME
                        self._send_ack(seq, self.step_n, "")
                    elif op == _wire.OP_STOP:
                        # Ends the program at its next step boundary
                        # (SystemExit: finally blocks and atexit run, no
                        # traceback); rlktop signals it if none comes.
                        self.stop_requested = True
                        self._send_ack(seq, self.step_n, "")
                    elif op == _wire.OP_DETACH:
                        self._send_ack(seq, self.step_n, "")
                        self.request_detach("rlktop detached")
                if sets:
                    # Keys written together (one switch) join pending together.
                    with self.lock:
                        self.pending.extend(sets)
                if self.detaching is not None:
                    break
        except Exception:
            pass
        if self.attached:
            # rlktop detached, or went away (killed, its connection closed):
            # leave at the next step boundary, or from here if none comes.
            self.request_detach("rlktop went away")
            deadline = time.time() + DETACH_WAIT
            while not self.detached and time.time() < deadline:
                time.sleep(0.02)
            self.detach()

    # ---- detach (an attached agent leaves the process as it found it) ----
    def on_stop(self, what, fn):
        """Registers fn (no arguments), which undoes one thing the agent
        installed or started: a hook, a patched function, a thread, a file.
        detach() calls them newest first; registered after detach(), fn runs
        at once."""
        with self.lock:
            if not self.detached:
                self.stops.append((what, fn))
                return
        _undo(what, fn)

    def request_detach(self, why):
        """Asks the agent to leave (any thread): the training thread does it
        at its next step boundary, else the receiver thread after
        DETACH_WAIT seconds."""
        if self.detaching is None:
            self.detaching = why
        with self.lock:
            self.cond.notify()

    def detach(self):
        """Leaves: the torch.profiler window stopped, every registered stop
        run (newest first), then the sender sends what is queued and a bye
        and closes the connection, which ends both threads. Runs once."""
        with self.lock:
            if self.detached:
                return
            self.detached = True
            stops, self.stops = self.stops, []
        # The program's settings first: stopping a torch.profiler window
        # can take seconds (it processes the window), and the program may
        # be stepping meanwhile when this runs off its training thread.
        with self.flags_lock:
            self.flags_frozen = True
            for what, fn in [st for st in stops if st[0] == "flags"]:
                _undo(what, fn)
        stops = [st for st in stops if st[0] != "flags"]
        if self.window is not None:
            prof, self.window = self.window[0], None
            try:
                prof.__exit__(None, None, None)
            except Exception as e:
                _warn("stopping torch.profiler: %r" % (e,))
        for what, fn in reversed(stops):
            _undo(what, fn)
        why = self.detaching
        if why is not None and why not in ("rlktop detached", "exit"):
            # Left by itself: rlktop may not hear why, the job's log does.
            try:
                sys.stderr.write("rlktop agent: detached: %s; the program goes on untraced\n" % why)
            except Exception:
                pass
        # The Python sampler (_sampler.py, where this agent has one) and its
        # record_function hook, by name: both stops are idempotent, so this
        # holds whether or not the sampler registered them with on_stop.
        sm = getattr(self, "sampler", None)
        if sm is not None:
            _undo("python sampler", sm.stop)
            mod = sys.modules.get(__package__ + "._sampler")
            if mod is not None and self.torch is not None and hasattr(mod, "unwatch_ranges"):
                _undo("record_function ranges", lambda: mod.unwatch_ranges(self.torch))
        with self.lock:
            # "left: why" when it left by itself, which rlktop reports.
            # "exit" when the program ends: rlktop then waits for its pid
            # to go instead of reporting an agent that left by itself.
            if why in (None, "rlktop detached"):
                why = "detached"
            elif why != "exit":
                why = "left: " + why
            self.out.append(_wire.bye(why, -1))
            self.closing = True
            self.cond.notify()
            gone = self.sender_gone
        self.dead = True
        if gone:
            self._close_conn(False)

    def _close_conn(self, wait):
        """The last act once detached (the sender's, or detach()'s when the
        sender ended on a failed connection): with wait, waits (at most 2 s)
        for rlktop to take the last torch.profiler window; removes the window
        folder; closes the connection (the receiver's recv returns). Once."""
        with self.lock:
            if self.conn_closed:
                return
            self.conn_closed = True
        deadline = time.time() + 2.0
        while wait and any(os.path.exists(p) for p in self.windows_out) and time.time() < deadline:
            time.sleep(0.02)
        if self.tmpdir:
            import shutil

            shutil.rmtree(self.tmpdir, ignore_errors=True)
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        if self.after_close is not None:
            _undo("files", self.after_close)

    def close(self):
        if os.getpid() != self.pid or self.closed:
            return
        self.closed = True
        if self.sampler is not None and self.dead:
            self.sampler.stop()
        if self.attached:
            # The program ends while attached: leave (files removed), and
            # give the sender a moment to say so.
            with self.lock:
                if self.detaching is None:
                    self.detaching = "exit"
            self.detach()
            deadline = time.time() + 1.0
            while self.sock.fileno() >= 0 and time.time() < deadline:
                time.sleep(0.01)
            return
        if self.dead:
            # rlktop is gone: nobody will import (and remove) a window left.
            if self.tmpdir:
                import shutil

                shutil.rmtree(self.tmpdir, ignore_errors=True)
            return
        try:
            if self.sampler is not None:
                self.sampler.stop()
            if self.window is not None:
                prof, _ = self.window
                self.window = None
                prof.__exit__(None, None, None)
            with self.lock:
                self.out.append(_wire.bye("exit", -1))
                self.cond.notify()
            # Until the sender has sent what it took, not only emptied the
            # queue: the interpreter ends the sender thread where it is,
            # and a batch being encoded (up to a full queue) was lost with
            # the steps and the Bye in it.
            deadline = time.time() + 1.0
            while time.time() < deadline:
                with self.lock:
                    if not self.queue and not self.out and not self.state_dirty and not self.in_flight:
                        break
                time.sleep(0.01)
            time.sleep(0.02)
            if self.tmpdir:
                try:
                    os.rmdir(self.tmpdir)  # empty once rlktop took every window
                except OSError:
                    pass
        except Exception:
            pass
        self.dead = True


# Seconds an attached agent asked to leave waits for a step boundary before
# it leaves from its receiver thread.
DETACH_WAIT = 2.0


def _undo(what, fn):
    try:
        fn()
    except Exception as e:
        _warn("detach: undoing %s failed: %r" % (what, e))


def _quiet_hook(handle):
    """Undoes a torch hook (a RemovableHandle's entry) without changing the
    size of its table, which torch may be iterating: Optimizer.step calls
    the global post hooks in a loop over that table, and detach() usually
    runs inside the loop (a step boundary is the agent's post hook), where
    removing an entry raises RuntimeError in the program once a hook comes
    after it. The entry becomes a function that does nothing and removes
    itself when called as the last entry of an OrderedDict (whose iterator
    then ends without a check; torch's tables are OrderedDicts) — at the
    next step when no hook was registered after the agent's."""
    hooks = handle.hooks_dict_ref()
    key = handle.id
    if hooks is None or key not in hooks:
        return

    def gone(*args, **kwargs):
        d = handle.hooks_dict_ref()
        if isinstance(d, collections.OrderedDict) and d.get(key) is gone and next(reversed(d), None) == key:
            del d[key]

    hooks[key] = gone


def _unpatch(owner, name, ours, orig):
    """Puts orig back as owner.name if ours is still there (a later patch by
    someone else is left alone)."""
    if owner.__dict__.get(name) is ours:
        setattr(owner, name, orig)


_INT_VIEW = {"torch.float32": "int32", "torch.float16": "int16", "torch.bfloat16": "int16", "torch.float64": "int64"}


def _ordered(torch, t):
    """Maps float bits to integers ordered like the floats (sign-magnitude
    to two's complement), so that a difference is a distance in ulps."""
    it = getattr(torch, _INT_VIEW[str(t.dtype)])
    i = t.contiguous().view(it).to(torch.int64)
    bits = {"int16": 16, "int32": 32, "int64": 64}[_INT_VIEW[str(t.dtype)]]
    sign_min = -(1 << (bits - 1))
    return torch.where(i < 0, sign_min - i, i)


def _compare(torch, a, b):
    """max |a-b| over pairs where neither is NaN, max ulp distance, NaN rows
    of b, element count, bitwise equality (1/0)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ValueError("probe output changed shape or dtype: %s %s -> %s %s" % (tuple(a.shape), a.dtype, tuple(b.shape), b.dtype))
    a, b = a.detach(), b.detach()
    out = {"len": a.numel()}
    if a.is_floating_point():
        ok = ~(torch.isnan(a) | torch.isnan(b))
        d = (a.double() - b.double()).abs()
        out["max_abs"] = float(d[ok].max()) if bool(ok.any()) else 0.0
        if str(a.dtype) in _INT_VIEW:
            u = (_ordered(torch, a) - _ordered(torch, b)).abs()
            out["max_ulp"] = float(u[ok].max()) if bool(ok.any()) else 0.0
        nan = torch.isnan(b) | torch.isinf(b)
        out["nan_rows"] = float(nan.reshape(nan.shape[0], -1).any(1).sum()) if nan.dim() > 0 else float(nan.sum())
        ia = a.contiguous().view(getattr(torch, _INT_VIEW.get(str(a.dtype), "int32"))) if str(a.dtype) in _INT_VIEW else a
        ib = b.contiguous().view(getattr(torch, _INT_VIEW.get(str(b.dtype), "int32"))) if str(b.dtype) in _INT_VIEW else b
        out["bitwise"] = 1.0 if torch.equal(ia, ib) else 0.0
    else:
        out["max_abs"] = float((a.double() - b.double()).abs().max()) if a.numel() else 0.0
        out["nan_rows"] = 0.0
        out["bitwise"] = 1.0 if torch.equal(a, b) else 0.0
    return out


_MEMORY_COUNTERS = [None]


def _memory_counters():
    """RLKTOP_MEMORY_COUNTERS: "0" turns the per-step allocator counters
    off (default on)."""
    if _MEMORY_COUNTERS[0] is None:
        _MEMORY_COUNTERS[0] = os.environ.get("RLKTOP_MEMORY_COUNTERS", "1") != "0"
    return _MEMORY_COUNTERS[0]


def _profile_memory():
    """RLKTOP_PROFILE_MEMORY: "0" turns torch.profiler's profile_memory off
    in the windows (default on)."""
    return os.environ.get("RLKTOP_PROFILE_MEMORY", "1") != "0"


def _profile_memory():
    """RLKTOP_PROFILE_MEMORY: "0" turns torch.profiler's profile_memory off
    in the windows (default on)."""
    return os.environ.get("RLKTOP_PROFILE_MEMORY", "1") != "0"


# At most this many exported torch.profiler windows wait for rlktop.
_WINDOWS_PENDING = 3


def _kineto_schedule():
    """RLKTOP_KINETO="EVERY:LEN" (default 10:2 when set to "1"; "0"/unset: off)."""
    v = os.environ.get("RLKTOP_KINETO", "")
    if not v or v == "0":
        return 0, 0
    if v == "1":
        return 10, 2
    try:
        every, _, ln = v.partition(":")
        every, ln = int(every), int(ln or 2)
        if every > 0 and 0 < ln < every:
            return every, ln
    except ValueError:
        pass
    _warn("RLKTOP_KINETO=%r: want EVERY:LEN with 0 < LEN < EVERY; windows off" % v)
    return 0, 0
