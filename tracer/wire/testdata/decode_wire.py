#!/usr/bin/env python3
"""An independent decoder of rlktop's wire format, written from FORMAT.md
(not from the Go code), used by TestPythonDecoder to check that the
documented byte layout is the one the Go writer produces.

Usage: decode_wire.py FILE   (raw wire stream or gzip recording)
Prints JSON: {"version": [major, minor], "frames": {type: count},
"hello": {...}, "events": N, "by_name": {name: [count, total_dur_ns]},
"sum_start": S, "sum_corr": C, "sum_value": V, "drops": [events, batches]}.
"""
import gzip
import json
import struct
import sys

# CRC-32C (Castagnoli), reflected polynomial 0x82F63B78.
_T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _T.append(c)


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


class Cur:
    def __init__(self, b):
        self.b, self.i = b, 0

    def uv(self):
        v, s = 0, 0
        while True:
            x = self.b[self.i]
            self.i += 1
            v |= (x & 0x7F) << s
            if x < 0x80:
                return v
            s += 7

    def sv(self):
        u = self.uv()
        return (u >> 1) ^ -(u & 1)

    def byte(self):
        x = self.b[self.i]
        self.i += 1
        return x

    def str(self):
        n = self.uv()
        s = self.b[self.i:self.i + n]
        self.i += n
        return s.decode("utf-8", "replace")

    def kvs(self):
        return [(self.str(), self.str()) for _ in range(self.uv())]


def main(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    assert data[:4] == b"RLKW", "magic"
    major, minor = struct.unpack_from("<HH", data, 4)
    off = 8
    out = {"version": [major, minor], "frames": {}, "hello": None, "events": 0,
           "by_name": {}, "sum_start": 0, "sum_corr": 0, "sum_value": 0, "drops": None}
    names = {0: ""}
    types = {1: "hello", 2: "strings", 3: "events", 4: "counters", 5: "control",
             6: "drops", 8: "meta", 9: "bye"}
    while off < len(data):
        typ, flags = data[off], data[off + 1]
        assert data[off + 2:off + 4] == b"RK", "sync at %d" % off
        n, crc = struct.unpack_from("<II", data, off + 4)
        p = data[off + 12:off + 12 + n]
        assert len(p) == n, "truncated"
        assert crc32c(p) == crc, "crc at %d" % off
        off += 12 + n
        t = types.get(typ, str(typ))
        out["frames"][t] = out["frames"].get(t, 0) + 1
        c = Cur(p)
        if typ == 1:
            h = {"source": c.str(), "pid": c.sv(), "rank": c.sv(), "world": c.sv(),
                 "host": c.str(), "device": c.str(), "clock_offset_ns": c.sv(),
                 "start_ns": c.sv(), "flags": flags}
            h["cmdline"] = [c.str() for _ in range(c.uv())]
            devs = []
            for _ in range(c.uv()):
                devs.append({"id": c.sv(), "name": c.str(), "vendor": c.str(),
                             "total_memory": c.sv(), "sms": c.sv(),
                             "compute_cap": c.str(), "props": dict(c.kvs())})
            h["devices"] = devs
            out["hello"] = h
        elif typ == 2:
            for _ in range(c.uv()):
                i = c.uv()
                names[i] = c.str()
        elif typ == 3:
            start, corr = 0, 0
            kind, pid, tid, dev, stream = 0, 0, 0, -1, 0
            for _ in range(c.uv()):
                h = c.byte()
                assert h & 0x80 == 0
                name = c.uv()
                start += c.sv()
                dur = c.uv()
                if h & 1:
                    kind = c.byte()
                if h & 2:
                    pid = c.sv()
                if h & 4:
                    tid = c.sv()
                if h & 8:
                    dev = c.sv()
                if h & 16:
                    stream = c.sv()
                ecorr = 0
                if h & 32:
                    corr = (corr + c.sv()) & 0xFFFFFFFFFFFFFFFF  # u64 wraps
                    ecorr = corr
                value = c.sv() if h & 64 else 0
                out["events"] += 1
                out["sum_start"] += start
                out["sum_corr"] += ecorr
                out["sum_value"] += value
                key = "%s/%d/%d/%d/%d/%d" % (names[name], kind, pid, tid, dev, stream)
                cnt = out["by_name"].setdefault(key, [0, 0])
                cnt[0] += 1
                cnt[1] += dur
        elif typ == 6:
            out["drops"] = [c.uv(), c.uv()]
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
