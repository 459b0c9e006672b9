"""The Python agent's sender, measured: what emit() costs the training
thread per event, and how many events a second the sender thread turns
into wire frames and writes to a real socket (one core), with the sender
thread's CPU time per event.

The agent (tracer/pyagent/py) is imported as the traced program imports
it; the socket's other end is a child process that reads and discards,
so the receiving side costs the measured process nothing. Events are
ranges (kind 9) over 64 names, as rlktop.stage() sends them.

  go run ./scripts/pyagentfiles /tmp/agent
  /usr/bin/python3 scripts/pyagent_sendbench.py /tmp/agent [EVENTS]

Prints one JSON line: emit_ns_per_event (training thread CPU),
send_events_per_s and send_cpu_ns_per_event (sender thread), bytes per
event on the wire.
"""

import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, sys.argv[1])
from rlktop import _core  # noqa: E402


def drain(sock):
    n = 0
    while True:
        b = sock.recv(1 << 20)
        if not b:
            break
        n += len(b)
    os.write(1, b"%d\n" % n)


def main():
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 60000
    n = min(n, _core.QUEUE_CAP)
    a, b = socket.socketpair()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        a.close()
        os.dup2(w, 1)
        drain(b)
        os._exit(0)
    b.close()
    os.close(w)
    ag = _core.Agent("bench")
    ag.sock = a
    names = ["stage_%d" % i for i in range(64)]
    # emit(): the training thread's cost per event, the queue taking all.
    t0 = time.thread_time_ns()
    t = time.monotonic_ns()
    for i in range(n):
        ag.emit(9, names[i & 63], t + i * 1000, 500, 0)
    emit_ns = (time.thread_time_ns() - t0) / n
    assert ag.dropped == 0 and len(ag.queue) == n
    # The sender drains the full queue: its thread's CPU and wall time.
    cpu = {}

    def run():
        c0 = time.thread_time_ns()
        w0 = time.monotonic_ns()
        ag.dead = True  # one pass over the queue, then return
        ag._sender()
        cpu["cpu"] = time.thread_time_ns() - c0
        cpu["wall"] = time.monotonic_ns() - w0

    th = threading.Thread(target=run)
    th.start()
    th.join()
    a.close()
    sent = int(os.read(r, 64).decode().strip() or 0)
    os.waitpid(pid, 0)
    print(json.dumps({
        "python": sys.version.split()[0],
        "events": n,
        "emit_ns_per_event": round(emit_ns),
        "send_events_per_s": round(n / (cpu["wall"] / 1e9)),
        "send_cpu_ns_per_event": round(cpu["cpu"] / n),
        "bytes_per_event": round(sent / n, 2),
    }))


if __name__ == "__main__":
    main()
