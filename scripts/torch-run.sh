#!/usr/bin/env bash
# Runs a command inside the PyTorch root (scripts/torch-root.sh: Debian
# trixie with PyTorch 2.6 for the CPU) with this checkout's rlktop and
# examples, so that the README's Python commands work on a machine without
# PyTorch:
#
#   scripts/torch-run.sh bin/rlktop run -- python3 examples/selfplay_connect4.py
#   scripts/torch-run.sh python3 examples/ddp_gloo.py --world 2 --trace-dir /tmp/ddp
#   scripts/torch-run.sh sh -c 'bin/rlktop report --by rank /tmp/ddp/rank*.json'
#
# What it does: builds the root once (scripts/torch-root.sh; needs root),
# builds a CGO_ENABLED=0 rlktop into ROOT/opt/rlktop/bin (no GPU tracer:
# the root has no GPU driver; the Python agent and torch.profiler are
# what traces there), copies examples/ to ROOT/opt/rlktop/examples, mounts
# /proc in the root when it is not, and runs the command in ROOT/opt/rlktop
# with the terminal it was given (the TUI works). Paths are the root's:
# /tmp/ddp above is ROOT/tmp/ddp on this machine, and a glob meant for the
# root's files goes inside `sh -c '…'` (this shell would expand it here).
#
# Debian's PyTorch is built without libuv, which torchrun's TCP store asks
# for by default; when the command mentions torchrun, the script puts
# cmd/rlktop/testdata/nolibuv on PYTHONPATH (its sitecustomize.py makes
# the store's default use_libuv=False; PyTorch from pip needs none):
#
#   scripts/torch-run.sh bin/rlktop run -- torchrun --nproc-per-node 2 examples/ddp_gloo.py
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: scripts/torch-run.sh CMD [ARG…]  (e.g. bin/rlktop run -- python3 examples/selfplay_connect4.py)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "torch-run: chroot needs root; run as root" >&2; exit 1; }

repo=$(cd "$(dirname "$0")/.." && pwd)
root=$("$repo/scripts/torch-root.sh")
dst=$root/opt/rlktop

mkdir -p "$dst/bin"
(cd "$repo" && CGO_ENABLED=0 go build -o "$dst/bin/rlktop.new" ./cmd/rlktop)
mv "$dst/bin/rlktop.new" "$dst/bin/rlktop"
rm -rf "$dst/examples" "$dst/nolibuv"
cp -r "$repo/examples" "$dst/examples"
cp -r "$repo/cmd/rlktop/testdata/nolibuv" "$dst/nolibuv"
env=(HOME=/root TERM="${TERM:-xterm}" LANG=C.UTF-8 PATH=/opt/rlktop/bin:/usr/local/bin:/usr/bin:/bin)
case " $* " in
  *torchrun*) env+=(PYTHONPATH=/opt/rlktop/nolibuv) ;;
esac

if ! mountpoint -q "$root/proc"; then
  mount -t proc proc "$root/proc"
fi

exec chroot "$root" /usr/bin/env -C /opt/rlktop "${env[@]}" "$@"
