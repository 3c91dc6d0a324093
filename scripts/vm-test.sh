#!/usr/bin/env bash
# Runs a command inside a virtual machine whose kernel has the filesystems
# and block layers this host's kernel may lack (f2fs, nilfs2, jfs,
# reiserfs, bcache): Debian's own kernel, booted by QEMU (KVM when it
# works, TCG otherwise) with an initramfs holding busybox, iolab, the mkfs
# tools and the programs the lab runs, each with the libraries it links.
#
#   scripts/vm-test.sh IOLAB_BINARY OUT_DIR SCRIPT
#
# SCRIPT (a shell script, run by busybox sh as root inside the machine)
# finds a scratch disk at /dev/vda (1 GiB, unformatted) and two small
# disks at /dev/vdb and /dev/vdc (256 MiB each, for stacked targets such
# as a bcache cache and its backing device), and OUT_DIR mounted at /out
# (9p); what it writes there is what comes out. Its exit status is this
# script's; the machine's console goes to OUT_DIR/console.log.
#
# Exit 77 (and a line saying why) when the machine cannot be made here:
# no QEMU, no kernel package to fetch, no busybox. Everything it fetches
# or builds is kept in $IOLAB_VM_CACHE (default /var/cache/iolab-vm).
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 IOLAB_BINARY OUT_DIR SCRIPT" >&2
  exit 2
fi
iolab=$(readlink -f "$1")
out=$(readlink -f "$2")
script=$(readlink -f "$3")
cache=${IOLAB_VM_CACHE:-/var/cache/iolab-vm}
skip() { echo "skipped: $*" >&2; exit 77; }

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (scripts/setup.sh installs qemu-system-x86)"
busybox=$(command -v busybox || true)
if [ -z "$busybox" ] || ! { ldd "$busybox" 2>&1 || true; } | grep -q "not a dynamic"; then
  skip "no static busybox (Debian package busybox-static)"
fi
mkdir -p "$cache" "$out"

# The kernel: linux-image-amd64's dependency, unpacked, with its module
# index built for modprobe's --show-depends.
kdir=$cache/kernel
if ! ls "$kdir"/boot/vmlinuz-* >/dev/null 2>&1; then
  kpkg() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}'; }
  pkg=$(kpkg)
  if [ -z "$pkg" ] && [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq >/dev/null 2>&1 || true
    pkg=$(kpkg)
  fi
  [ -n "$pkg" ] || skip "apt-cache knows no linux-image-amd64 package (run apt-get update)"
  (cd "$cache" && apt-get download "$pkg" >/dev/null 2>&1) || skip "could not download $pkg"
  rm -rf "$kdir.tmp" && dpkg -x "$cache"/"$pkg"_*.deb "$kdir.tmp" && mv "$kdir.tmp" "$kdir"
fi
kver=$(ls "$kdir/lib/modules" | head -1)
[ -f "$kdir/lib/modules/$kver/modules.dep" ] || depmod -b "$kdir" "$kver"
vmlinuz=$(ls "$kdir"/boot/vmlinuz-* | head -1)

# The initramfs, built fresh each time (iolab changes; the rest is quick).
root=$(mktemp -d "${TMPDIR:-/tmp}/iolab-vm-root.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,etc,proc,sys,dev,tmp,out,scratch,lib/modules,usr/sbin}
# /sbin as on Debian: mount finds its helpers (mount.nilfs2) there.
ln -s usr/sbin "$root/sbin"
cp "$busybox" "$root/bin/busybox"
# A program and every library it links, at the same paths as here.
add() {
  local p
  p=$(command -v "$1" 2>/dev/null || true)
  [ -n "$p" ] || { echo "vm-test: $1 is not installed; targets that need it will say so" >&2; return 0; }
  mkdir -p "$root$(dirname "$p")"
  cp -L "$p" "$root$p"
  ldd "$p" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    [ -e "$root$lib" ] || cp -L "$lib" "$root$lib"
  done
}
mkdir -p "$root/usr/local/bin"
cp "$iolab" "$root/usr/local/bin/iolab"
ldd "$iolab" | grep -o '/[^ ]*' | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  [ -e "$root$lib" ] || cp -L "$lib" "$root$lib"
done
for p in mount umount losetup blkid wipefs sync strace \
         mkfs.ext4 mkfs.ext2 mkfs.ext3 mke2fs mkfs.xfs mkfs.btrfs mkfs.f2fs mkfs.nilfs2 \
         mkfs.jfs mkfs.reiserfs mkreiserfs make-bcache bcache-super-show \
         mount.nilfs2 umount.nilfs2 nilfs_cleanerd; do
  add "$p"
done
# What glibc loads at run time rather than at start (thread cancellation
# needs libgcc_s: nilfs_cleanerd ends its threads so).
for lib in /lib/x86_64-linux-gnu/libgcc_s.so.1; do
  [ -e "$lib" ] && mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"
done
# nilfs_cleanerd reads its configuration from /etc.
[ -f /etc/nilfs_cleanerd.conf ] && cp /etc/nilfs_cleanerd.conf "$root/etc/"
# Modules, each with what it depends on, loaded in that order at boot.
mods="virtio_pci virtio_blk 9pnet_virtio 9p loop ext4 xfs btrfs lz4_compress lz4hc_compress zstd_compress f2fs nilfs2 jfs reiserfs crc64 bcache"
: >"$root/etc/modules.order"
for m in $mods; do
  modprobe -d "$kdir" -S "$kver" --show-depends "$m" 2>/dev/null | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
  rel=${ko#"$kdir"}
  mkdir -p "$root$(dirname "$rel")"
  cp "$ko" "$root$rel"
  echo "$rel" >>"$root/etc/modules.order"
done
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
cp "$script" "$root/etc/job.sh"
cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
# As on a running system: /run (mount helpers keep their state there,
# mount.nilfs2 the pid of the cleaner it starts), /dev/shm (the cleaner's
# semaphore) and /etc/mtab.
mkdir -p /run /dev/shm && mount -t tmpfs run /run && mount -t tmpfs shm /dev/shm
ln -s /proc/self/mounts /etc/mtab
while read -r ko; do insmod "$ko" 2>/dev/null; done </etc/modules.order
mount -t 9p -o trans=virtio,version=9p2000.L out /out
sh /etc/job.sh >/out/job.log 2>&1
echo $? >/out/status
sync
poweroff -f
EOF
chmod +x "$root/init"
initrd=$cache/initrd.$$.cpio.gz
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd"
trap 'rm -rf "$root" "$initrd" "$cache"/disk.$$.*' EXIT

# The disks: scratch and two small ones, sparse files in the cache.
for d in a b c; do
  size=256M
  [ $d = a ] && size=1G
  truncate -s "$size" "$cache/disk.$$.$d"
done
rm -f "$out/status"
accel=tcg
if [ -n "${IOLAB_VM_KVM:-}" ] && [ -w /dev/kvm ]; then accel=kvm; fi
timeout "${IOLAB_VM_TIMEOUT:-1200}" qemu-system-x86_64 \
  -accel "$accel" -m "${IOLAB_VM_MEM:-3072}" -smp 2 -nographic -no-reboot \
  -kernel "$vmlinuz" -initrd "$initrd" \
  -append "console=ttyS0 panic=-1 quiet" \
  -drive "file=$cache/disk.$$.a,if=virtio,format=raw" \
  -drive "file=$cache/disk.$$.b,if=virtio,format=raw" \
  -drive "file=$cache/disk.$$.c,if=virtio,format=raw" \
  -virtfs "local,path=$out,mount_tag=out,security_model=none,id=out" \
  >"$out/console.log" 2>&1 </dev/null || true
if [ ! -f "$out/status" ]; then
  echo "vm-test: the machine stopped without a status; last console lines:" >&2
  tail -20 "$out/console.log" >&2
  exit 1
fi
exit "$(cat "$out/status")"
