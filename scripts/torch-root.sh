#!/usr/bin/env bash
# Builds (once) and prints the path of a Debian trixie root holding a real
# PyTorch for the CPU (python3-torch 2.6, Inductor's compiler, OpenBLAS), in
# which the real-PyTorch tests run a CGO_ENABLED=0 rlktop.
#
# Why a root: these machines run bookworm, whose python3-torch (1.13) has no
# public scaled_dot_product_attention and no torch.compiler.set_stance.
#
#   scripts/torch-root.sh          build if missing, print the root's path
#   scripts/torch-root.sh --check  print the path if it is ready, else exit 1
#
# The root is cached at RLKTOP_TORCH_ROOT (default /var/cache/rlktop/torch-root-trixie;
# about 2.1 GB, a few minutes to build); a second run reuses it. Needs root
# (debootstrap, chroot, mounting /proc) and Debian's package mirror.
set -euo pipefail

root=${RLKTOP_TORCH_ROOT:-/var/cache/rlktop/torch-root-trixie}
stamp=$root/.rlktop-ready
# Bump when the package list changes so that cached roots are rebuilt.
want="v2 python3-torch libtorch-dev python3-setuptools python3-dev g++ libopenblas0-pthread gdb"

log() { printf 'torch-root: %s\n' "$*" >&2; }

ready() { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; }

if [ "${1:-}" = "--check" ]; then
  ready && { echo "$root"; exit 0; }
  exit 1
fi

if ready; then echo "$root"; exit 0; fi

[ "$(id -u)" = 0 ] || { log "building the PyTorch root needs root (debootstrap, chroot); run as root or set RLKTOP_TORCH_ROOT to a ready root"; exit 1; }

mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9
if ready; then echo "$root"; exit 0; fi

if ! command -v debootstrap >/dev/null; then
  log "installing debootstrap"
  apt-get update -qq >&2 && apt-get install -y -qq debootstrap >&2
fi

start=$(date +%s)
umount "$root/proc" 2>/dev/null || true
rm -rf "$root"
log "debootstrap trixie into $root (minbase)"
debootstrap --variant=minbase trixie "$root" http://deb.debian.org/debian >&2
mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
log "apt-get install ${want#v? } inside the root"
chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${want#v? } >&2
chroot "$root" apt-get clean >&2
chroot "$root" python3 -c 'import torch; print("torch", torch.__version__)' >&2
echo "$want" > "$stamp"
log "ready in $(( $(date +%s) - start )) s"
echo "$root"
