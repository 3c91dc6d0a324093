#!/usr/bin/env bash
# Installs what iolab's tests use from Debian's packages (fio for the
# compatibility tests; xfsprogs and btrfs-progs for the filesystem lab;
# strace to watch system calls from outside) when
# they are missing and we are root. Safe to run again.
set -euo pipefail

need=()
command -v fio >/dev/null 2>&1 || need+=(fio)
command -v mkfs.xfs >/dev/null 2>&1 || need+=(xfsprogs)
command -v mkfs.btrfs >/dev/null 2>&1 || need+=(btrfs-progs)
command -v strace >/dev/null 2>&1 || need+=(strace)

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
