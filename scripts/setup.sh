#!/usr/bin/env bash
# Installs what iolab's tests use from Debian's packages (fio for the
# compatibility tests; xfsprogs and btrfs-progs for the filesystem lab;
# strace to watch system calls from outside; QEMU's user-mode emulator
# to follow the cache lines iolab's threads share; QEMU, busybox and the mkfs
# tools of f2fs, nilfs2, jfs, reiserfs and bcache for the virtual machine
# of scripts/vm-test.sh, which fetches Debian's kernel package itself;
# OpenMPI and libclang to build and test the `mpi` feature; Chromium to
# open the HTML reports) when they are missing and we are root, and
# fio-plot from PyPI. Safe to run again.
set -euo pipefail

# The toolchain rust-toolchain.toml pins: when rustup does not know it by
# that name but the installed stable is that release, the stable toolchain
# is given the name too (a link), so that nothing is downloaded.
pin=$(sed -n 's/^channel = "\(.*\)"/\1/p' rust-toolchain.toml 2>/dev/null || true)
if [ -n "$pin" ] && command -v rustup >/dev/null 2>&1; then
  home=${RUSTUP_HOME:-$HOME/.rustup}
  host=$(rustc +stable -vV 2>/dev/null | sed -n 's/^host: //p' || true)
  if [ -n "$host" ] && [ ! -e "$home/toolchains/$pin-$host" ] &&
     rustc +stable --version 2>/dev/null | grep -q "^rustc $pin " &&
     [ -d "$home/toolchains/stable-$host" ]; then
    echo "setup: the installed stable is $pin; naming it so for rust-toolchain.toml"
    ln -s "stable-$host" "$home/toolchains/$pin-$host"
  fi
fi

need=()
command -v fio >/dev/null 2>&1 || need+=(fio)
command -v mkfs.xfs >/dev/null 2>&1 || need+=(xfsprogs)
command -v mkfs.btrfs >/dev/null 2>&1 || need+=(btrfs-progs)
command -v strace >/dev/null 2>&1 || need+=(strace)
# The virtual machine of scripts/vm-test.sh: QEMU, a static busybox, and
# the mkfs tools of the filesystems and block layers it studies.
command -v qemu-system-x86_64 >/dev/null 2>&1 || need+=(qemu-system-x86)
# QEMU's user-mode emulator runs iolab under bench/c2c_plugin.c, which
# follows the cache lines its threads share (crates/cli/tests/run_threads.rs).
command -v qemu-x86_64 >/dev/null 2>&1 || need+=(qemu-user)
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || need+=(busybox-static)
command -v mkfs.f2fs >/dev/null 2>&1 || need+=(f2fs-tools)
command -v mkfs.nilfs2 >/dev/null 2>&1 || need+=(nilfs-tools)
command -v mkfs.jfs >/dev/null 2>&1 || need+=(jfsutils)
command -v mkfs.reiserfs >/dev/null 2>&1 || need+=(reiserfsprogs)
command -v make-bcache >/dev/null 2>&1 || need+=(bcache-tools)
# Headless Chromium opens the HTML reports (crates/cli/tests/report_browser.rs).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# The `mpi` feature: mpirun for its tests, MPI's headers and mpicc for
# mpi-sys, and libclang for the bindings it generates.
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
command -v mpicc >/dev/null 2>&1 || need+=(libopenmpi-dev)
dpkg-query -W -f='${Status}' libclang-dev 2>/dev/null | grep -q 'ok installed' || need+=(libclang-dev)

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup: missing ${need[*]}; install them (Debian: apt-get install ${need[*]}) or the tests that need them say why they skip"
  fi
fi

# fio-plot 1.1.21 (bench-fio and fio-plot, from PyPI) for the test that
# drives iolab through tools built on fio: in a virtual environment of its
# own, its two programs linked into /usr/local/bin.
if [ "$(id -u)" -eq 0 ] && ! command -v bench-fio >/dev/null 2>&1 &&
   command -v python3 >/dev/null 2>&1; then
  venv=/opt/iolab-fio-plot
  echo "setup: installing fio-plot 1.1.21 in $venv"
  if { [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"; } &&
     "$venv/bin/pip" install -q fio-plot==1.1.21; then
    ln -sf "$venv/bin/bench-fio" /usr/local/bin/bench-fio
    ln -sf "$venv/bin/fio-plot" /usr/local/bin/fio-plot
  else
    echo "setup: fio-plot could not be installed; its test says why it skips"
  fi
fi
