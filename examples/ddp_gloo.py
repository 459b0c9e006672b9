"""A small PyTorch DDP job on CPU ranks (gloo backend), one rank slowed on purpose.

Under torchrun (`torchrun --nproc-per-node 2 examples/ddp_gloo.py`) each rank
meets the others through torchrun's store (env://). Run it plainly, and it
starts --world rank processes of itself the way torchrun does (RANK, WORLD_SIZE, LOCAL_RANK in each child's environment), which meet
through a file store (init_method="file://..."; torchrun's default TCP store
needs libuv, which Debian's PyTorch lacks):

    python3 examples/ddp_gloo.py --world 2 --steps 8 --trace-dir /tmp/ddp

With --trace-dir every rank writes its own torch.profiler (Kineto) trace of
steps 2 to --steps - 1, rank<N>.json, which carries distributedInfo (rank,
world size) and one ProfilerStep#N range per step:

    rlktop report --by rank /tmp/ddp/rank*.json

Under `rlktop run -- python3 examples/ddp_gloo.py ...` every rank's Python
agent connects to the one session (RLKTOP_SOCKET is inherited; the rank comes
from RANK in the environment), so the session holds one source per rank.

Rank --slow-rank (default 1) sleeps --slow-ms (default 40) ms in each step
before its backward pass, so it reaches the gradient all-reduce late and the
other ranks wait for it inside gloo's all_reduce. Standard library and torch
only.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--world", type=int, default=2, help="ranks to start")
    p.add_argument("--steps", type=int, default=8, help="training steps per rank")
    p.add_argument("--slow-rank", type=int, default=1, help="the rank slowed on purpose (-1: none)")
    p.add_argument("--slow-ms", type=float, default=40.0, help="sleep of the slow rank per step, ms")
    p.add_argument("--width", type=int, default=512, help="hidden width of the MLP")
    p.add_argument("--batch", type=int, default=64, help="batch size per rank")
    p.add_argument("--trace-dir", default="", help="write one Kineto trace per rank here (rank<N>.json)")
    p.add_argument("--stamps", action="store_true",
                   help="end each step's line with 'at NS': the Unix time (ns) of the step's end, to check a profiler's step boundaries against")
    p.add_argument("--init-file", default="", help="file store path (default: a fresh temporary file)")
    return p.parse_args()


def launch(args):
    """Start args.world children of this script, torchrun style; return the
    first non-zero exit status, else 0."""
    init = args.init_file
    if not init:
        fd, init = tempfile.mkstemp(prefix="ddp_gloo_store_")
        os.close(fd)
        os.unlink(init)  # the file store creates it
    procs = []
    for r in range(args.world):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(args.world),
                   LOCAL_WORLD_SIZE=str(args.world), OMP_NUM_THREADS="1")
        argv = [sys.executable, os.path.abspath(__file__)] + sys.argv[1:] + ["--init-file", init]
        procs.append(subprocess.Popen(argv, env=env))
    code = 0
    for p in procs:
        rc = p.wait()
        if rc and not code:
            code = rc
    try:
        os.unlink(init)
    except OSError:
        pass
    return code


def rank_main(args):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.set_num_threads(1)
    # Started by launch() (a file store), or by torchrun (its TCP store:
    # MASTER_ADDR/MASTER_PORT in the environment, env://).
    init = "file://" + args.init_file if args.init_file else "env://"
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, args.width), torch.nn.ReLU(),
        torch.nn.Linear(args.width, 16))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(args.batch, args.width, generator=g)
    y = torch.randn(args.batch, 16, generator=g)

    prof = None
    if args.trace_dir:
        os.makedirs(args.trace_dir, exist_ok=True)
        # Steps 0 (start-up: the ranks meet) and 1 (warm-up) are left out;
        # the rest are traced, one ProfilerStep#N range each.
        out = os.path.join(args.trace_dir, f"rank{rank}.json")
        prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU],
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=max(args.steps - 2, 1), repeat=1),
            on_trace_ready=lambda p: p.export_chrome_trace(out))
        prof.start()
    last = time.perf_counter()
    for step in range(args.steps):
        with torch.profiler.record_function("forward"):
            loss = torch.nn.functional.mse_loss(ddp(x), y)
        if rank == args.slow_rank:
            with torch.profiler.record_function("straggle"):
                time.sleep(args.slow_ms / 1000)
        with torch.profiler.record_function("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()  # DDP all-reduces the gradients here (gloo)
        with torch.profiler.record_function("optimizer"):
            opt.step()
        if prof is not None:
            prof.step()
        # A step's time is from the previous step's end to this one's, the
        # writing of the previous line included: what a training log's
        # per-iteration time means, and what a profiler's step-to-step time
        # sees (a rank descheduled while it writes loses that time too).
        # One write per line: the ranks share stderr, and print's separate
        # write of its end let lines of two ranks run together.
        lv = loss.item()
        now = time.perf_counter()
        at = f" at {time.time_ns()}" if args.stamps else ""
        sys.stderr.write(f"rank {rank} step {step} loss {lv:.4f} {1000 * (now - last):.1f} ms{at}\n")
        last = now
        sys.stderr.flush()
    if prof is not None:
        prof.stop()
    dist.barrier()
    dist.destroy_process_group()


def main():
    args = parse()
    if "RANK" in os.environ and (args.init_file or "MASTER_ADDR" in os.environ):
        rank_main(args)
        return 0
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
