#!/usr/bin/env bash
# setup-cupti-headers.sh — make the CUPTI headers available for building the
# CUPTI injection library (tracer/cupti, build tag `cupti`).
#
# Prints the include directory to use on its last line of stdout.
#
# Order (DESIGN.md "Build facts"):
#   1. $CUDA_HOME with extras/CUPTI/include/cupti_activity.h (a real toolkit);
#   2. /usr/include/cupti_activity.h already installed (Debian libcupti-dev);
#   3. install Debian non-free libcupti-dev (CUDA 11.8 CUPTI headers on
#      bookworm): adds /etc/apt/sources.list.d/nonfree.sources when missing,
#      then apt-get update && apt-get install -y libcupti-dev. Needs root.
# Never installs nvidia-cuda-dev (0.8 GB, pulls a driver): tracer/cupti
# carries its own minimal cuda.h for the system-header case.
#
# Exit status: 0 with the include dir printed; 1 when no headers could be had
# (the rest of rlktop still builds; `rlktop run` then says the build has no
# CUPTI tracer).
set -euo pipefail

if [[ -n "${CUDA_HOME:-}" && -f "$CUDA_HOME/extras/CUPTI/include/cupti_activity.h" ]]; then
	echo "$CUDA_HOME/extras/CUPTI/include"
	exit 0
fi
if [[ -n "${CUDA_HOME:-}" && -f "$CUDA_HOME/include/cupti_activity.h" ]]; then
	echo "$CUDA_HOME/include"
	exit 0
fi
if [[ -f /usr/include/cupti_activity.h ]]; then
	echo /usr/include
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "setup-cupti-headers: no CUPTI headers and no apt-get; set CUDA_HOME to a CUDA toolkit" >&2
	exit 1
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
	if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
		echo "setup-cupti-headers: need root to install libcupti-dev (or set CUDA_HOME)" >&2
		exit 1
	fi
fi

codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-bookworm}")
src=/etc/apt/sources.list.d/nonfree.sources
if ! grep -rqs 'non-free' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
	echo "setup-cupti-headers: enabling Debian contrib/non-free in $src" >&2
	$SUDO tee "$src" >/dev/null <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: ${codename}
Components: contrib non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
echo "setup-cupti-headers: apt-get install libcupti-dev" >&2
$SUDO apt-get update -qq >&2 || true
if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends libcupti-dev >&2; then
	echo "setup-cupti-headers: apt-get install libcupti-dev failed; set CUDA_HOME to a CUDA toolkit instead" >&2
	exit 1
fi
if [[ -f /usr/include/cupti_activity.h ]]; then
	echo /usr/include
	exit 0
fi
echo "setup-cupti-headers: libcupti-dev installed but /usr/include/cupti_activity.h is missing" >&2
exit 1
