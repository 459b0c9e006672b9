"""rlktop wire protocol, the subset the Python agent speaks (standard library only).

Written from tracer/wire/FORMAT.md: an 8-byte preamble ("RLKW", major, minor),
then frames of a 12-byte header (type, flags, "RK", payload length u32 LE,
CRC-32C of the payload u32 LE) and a payload. Integers are LEB128 uvarints;
signed ones zigzag-encoded. Times are ns.
"""

import struct
import sys

MAJOR, MINOR = 1, 2

T_HELLO, T_STRINGS, T_EVENTS, T_COUNTERS, T_CONTROL, T_DROPS = 1, 2, 3, 4, 5, 6
T_META, T_BYE, T_TRACEFILE, T_PYSAMPLES = 8, 9, 10, 12

OP_SET, OP_PAUSE, OP_RESUME, OP_STOP, OP_ACK, OP_DETACH = 1, 2, 3, 4, 5, 6

# tracer.Kind values (tracer/event.go).
K_KERNEL, K_CPUOP, K_RANGE, K_STEP, K_INSTANT = 1, 8, 9, 11, 13

MAX_PAYLOAD = 16 << 20


def _crc32c_table():
    poly = 0x82F63B78  # Castagnoli, reflected
    tab = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        tab.append(c)
    return tab


_TAB = _crc32c_table()
# Slicing by 4 (tables of the register shifted by 8, 16, 24 more bits): four
# bytes a loop turn; 1.5x (3.13) to 2.5x (3.11) the byte-at-a-time loop on
# a 1.2 KB frame. Words are read in native order, so little-endian only.
_TAB1 = [_TAB[c & 0xFF] ^ (c >> 8) for c in _TAB]
_TAB2 = [_TAB[c & 0xFF] ^ (c >> 8) for c in _TAB1]
_TAB3 = [_TAB[c & 0xFF] ^ (c >> 8) for c in _TAB2]
_WORDS = sys.byteorder == "little" and struct.calcsize("I") == 4


def crc32c(data):
    """CRC-32C (Castagnoli) of data (bytes-like), as the frame header's."""
    c = 0xFFFFFFFF
    t0 = _TAB
    n = len(data) & ~3 if _WORDS else 0
    if n:
        t1, t2, t3 = _TAB1, _TAB2, _TAB3
        for w in memoryview(data)[:n].cast("I"):
            c ^= w
            c = t3[c & 0xFF] ^ t2[(c >> 8) & 0xFF] ^ t1[(c >> 16) & 0xFF] ^ t0[c >> 24]
    for b in data[n:]:
        c = t0[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def uvarint(out, v):
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


_M64 = (1 << 64) - 1


def varint(out, v):
    # Wrapped to int64 first, as Go's int64 arithmetic wraps: a delta of
    # two far-apart times stays one 64-bit zigzag value (unwrapped, it was
    # longer than a Go uvarint and the whole frame was refused).
    v = ((v + (1 << 63)) & _M64) - (1 << 63)
    uvarint(out, ((v << 1) ^ (v >> 63)) & _M64)


def string(out, s):
    b = s.encode("utf-8", "replace") if isinstance(s, str) else bytes(s)
    uvarint(out, len(b))
    out += b


def kvs(out, pairs):
    uvarint(out, len(pairs))
    for k, v in pairs:
        string(out, k)
        string(out, v)


def preamble():
    return b"RLKW" + struct.pack("<HH", MAJOR, MINOR)


def frame(ftype, payload):
    payload = bytes(payload)
    return struct.pack("<BB2sII", ftype, 0, b"RK", len(payload), crc32c(payload)) + payload


def hello(pid, rank, world, host, device, clock_offset_ns, start_ns, cmdline):
    out = bytearray()
    string(out, "pyagent")
    varint(out, pid)
    varint(out, rank)
    varint(out, world)
    string(out, host)
    string(out, device)
    varint(out, clock_offset_ns)
    varint(out, start_ns)
    uvarint(out, len(cmdline))
    for a in cmdline:
        string(out, a)
    uvarint(out, 0)  # no devices
    return frame(T_HELLO, out)


def strings(pairs):
    out = bytearray()
    uvarint(out, len(pairs))
    for i, s in pairs:
        uvarint(out, i)
        string(out, s)
    return frame(T_STRINGS, out)


def events(evs):
    """evs: tuples (kind, name_id, start_ns, dur_ns, pid, tid, value)."""
    out = bytearray()
    uvarint(out, len(evs))
    start = kind = pid = tid = stream = 0
    dev = -1
    for k, name, s, d, p, t, value in evs:
        h = 0
        if k != kind:
            h |= 1
        if p != pid:
            h |= 2
        if t != tid:
            h |= 4
        # Device stays -1 (CPU events), stream 0, no correlation ids.
        if value:
            h |= 64
        out.append(h)
        uvarint(out, name)
        varint(out, s - start)
        start = s
        uvarint(out, min(d, (1 << 63) - 1) if d > 0 else 0)
        if h & 1:
            out.append(k)
            kind = k
        if h & 2:
            varint(out, p)
            pid = p
        if h & 4:
            varint(out, t)
            tid = t
        if h & 64:
            varint(out, value)
    return frame(T_EVENTS, out)


def counters(samples):
    """samples: tuples (ts_ns, name_id, value float)."""
    out = bytearray()
    uvarint(out, len(samples))
    ts = 0
    for t, name, v in samples:
        varint(out, t - ts)
        ts = t
        uvarint(out, name)
        varint(out, -1)  # host-wide track
        out += struct.pack("<d", float(v))
    return frame(T_COUNTERS, out)


def control_ack(seq, flags, tracing, step, err):
    out = bytearray()
    out.append(OP_ACK)
    uvarint(out, seq)
    string(out, "")
    string(out, "")
    kvs(out, sorted(flags.items()))
    out.append(1 if tracing else 0)
    varint(out, step)
    string(out, err)
    return frame(T_CONTROL, out)


def drops(nevents, nbatches):
    out = bytearray()
    uvarint(out, nevents)
    uvarint(out, nbatches)
    return frame(T_DROPS, out)


def meta(pairs):
    out = bytearray()
    kvs(out, pairs)
    return frame(T_META, out)


def tracefile(fmt, path, first_step, last_step):
    out = bytearray()
    string(out, fmt)
    string(out, path)
    varint(out, first_step)
    varint(out, last_step)
    return frame(T_TRACEFILE, out)


def pysamples(pid, period_ns, dropped, frames, stacks, samples, sid=None):
    """A PySamples frame (FORMAT.md "pysamples"). frames: (id, func_id,
    file_id, first_line, line); stacks: (id, parent, frame); samples: (ts,
    tid, stack, step, stage, step_stage, state, weight_ns), where stage and
    step_stage are string ids, or, with sid, names ("" none) that sid
    turns into ids."""
    out = bytearray()
    varint(out, pid)
    uvarint(out, period_ns)
    uvarint(out, dropped)
    uvarint(out, len(frames))
    for fr in frames:
        for v in fr:
            uvarint(out, v)
    uvarint(out, len(stacks))
    for i, parent, fr in stacks:
        uvarint(out, i)
        uvarint(out, parent)
        uvarint(out, fr)
    uvarint(out, len(samples))
    # A thread's samples repeat their tid, stack, step, stages and state
    # from tick to tick, and the samples of one tick share ts and weight:
    # each distinct run of bytes is encoded once per frame.
    body = {}
    prev = 0
    pw = None
    wb = b""
    for s in samples:
        ts = s[0]
        if ts != prev:
            varint(out, ts - prev)
            prev = ts
        else:
            out.append(0)
        k = s[1:7]
        b = body.get(k)
        if b is None:
            tid, stack, step, stage, step_stage, state = k
            if sid is not None:
                stage = sid(stage) if stage else 0
                step_stage = sid(step_stage) if step_stage else 0
            b = bytearray()
            varint(b, tid)
            uvarint(b, stack)
            varint(b, step)
            uvarint(b, stage)
            uvarint(b, step_stage)
            b.append(state)
            b = body[k] = bytes(b)
        out += b
        w = s[7]
        if w != pw:
            wb = bytearray()
            uvarint(wb, w)
            pw = w
        out += wb
    return frame(T_PYSAMPLES, out)


def bye(reason, code):
    out = bytearray()
    string(out, reason)
    varint(out, code)
    return frame(T_BYE, out)


# ---- decoding (rlktop -> agent: Control frames) ----


def _get_uvarint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _get_varint(b, i):
    u, i = _get_uvarint(b, i)
    return (u >> 1) ^ -(u & 1), i


def _get_string(b, i):
    n, i = _get_uvarint(b, i)
    if i + n > len(b):
        raise ValueError("truncated string")
    return bytes(b[i : i + n]).decode("utf-8", "replace"), i + n


def parse_control(p):
    """Returns (op, seq, key, value) of a Control payload."""
    op = p[0]
    seq, i = _get_uvarint(p, 1)
    key, i = _get_string(p, i)
    value, i = _get_string(p, i)
    return op, seq, key, value


class Reader:
    """Splits a byte stream into (type, payload) frames; checks the preamble,
    sync bytes, length limit and CRC."""

    def __init__(self):
        self.buf = bytearray()
        self.pre = False

    def feed(self, data):
        self.buf += data
        out = []
        if not self.pre:
            if len(self.buf) < 8:
                return out
            if bytes(self.buf[:4]) != b"RLKW":
                raise ValueError("not an rlktop wire stream")
            major = struct.unpack_from("<H", self.buf, 4)[0]
            if major != MAJOR:
                raise ValueError("wire major version %d, agent speaks %d" % (major, MAJOR))
            del self.buf[:8]
            self.pre = True
        while len(self.buf) >= 12:
            ftype, _flags, sync, n, crc = struct.unpack_from("<BB2sII", self.buf, 0)
            if sync != b"RK" or n > MAX_PAYLOAD:
                raise ValueError("bad frame header")
            if len(self.buf) < 12 + n:
                break
            p = bytes(self.buf[12 : 12 + n])
            del self.buf[: 12 + n]
            if crc32c(p) != crc:
                raise ValueError("frame CRC mismatch")
            out.append((ftype, p))
        return out
