#!/usr/bin/env bash
# Installs what `npm run build:targets` and the cross-platform runs need on a Debian x86_64
# machine (run by .ci/run; idempotent, skips what is there):
#   - Rust's standard library for the five other targets (rustup);
#   - mingw-w64 (the Windows GNU linker, dlltool) and mingw-w64-tools (gendef), Wine 8 (runs the Windows builds),
#     qemu-user-static (runs the arm64 builds), musl-tools (the musl test binaries' C parts, and
#     musl-gcc for the host that loads the musl addon, scripts/targets/musl-host.mjs);
#   - zig and cargo-zigbuild from their PyPI packages (linux musl and arm64, both macOS targets);
#   - python3-venv: the MCP tests build a venv for the Python clients they drive (__test__/py-venv.ts).
# Needs root and apt-get for the Debian packages; elsewhere install the equivalents yourself.
set -euo pipefail

ZIG_VERSION=0.17.0
ZIGBUILD_VERSION=0.24.0
TARGETS=(x86_64-unknown-linux-musl aarch64-unknown-linux-gnu x86_64-apple-darwin aarch64-apple-darwin
  x86_64-pc-windows-gnu x86_64-pc-windows-msvc)
# libc6/libstdc++6/libgcc-s1 for arm64: the official arm64 Node needs them under qemu (QEMU_LD_PREFIX).
PACKAGES=(mingw-w64 mingw-w64-tools wine wine64 qemu-user-static musl-tools libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross
  python3-venv)

installed=$(rustup target list --installed)
missing_targets=()
for t in "${TARGETS[@]}"; do
  grep -qx "$t" <<<"$installed" || missing_targets+=("$t")
done
if [ "${#missing_targets[@]}" -gt 0 ]; then
  rustup target add "${missing_targets[@]}"
fi

missing_packages=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing_packages+=("$p")
done
if [ "${#missing_packages[@]}" -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-cross: missing ${missing_packages[*]} and this is not a root Debian system; install them yourself" >&2
    exit 1
  fi
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing_packages[@]}"
fi

have_pip_version() {
  python3 -m pip show "$1" 2>/dev/null | grep -qx "Version: $2"
}
if ! have_pip_version ziglang "$ZIG_VERSION" || ! have_pip_version cargo-zigbuild "$ZIGBUILD_VERSION"; then
  python3 -m pip install --quiet "ziglang==$ZIG_VERSION" "cargo-zigbuild==$ZIGBUILD_VERSION"
fi
command -v cargo-zigbuild >/dev/null || { echo "install-cross: cargo-zigbuild is not on PATH after install" >&2; exit 1; }

# The arm64 runs spawn child processes (vitest's workers, the crash tests' children) by the arm64
# Node's own path, so the kernel must hand arm64 executables to qemu itself: binfmt_misc, with the
# F flag (the interpreter is opened now, so it works inside containers too).
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-cross: binfmt_misc has no qemu-aarch64 entry; register it as root (see this script)" >&2
    exit 1
  fi
  [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  printf '%s' ':qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-aarch64-static:F' \
    > /proc/sys/fs/binfmt_misc/register
fi
