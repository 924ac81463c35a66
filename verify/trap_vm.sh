#!/usr/bin/env bash
# usage: verify/trap_vm.sh [CPU]
# verify's counter trap (verify/tsc_trap.c) checked on a machine where it
# works. Many guests, this project's own among them, accept PR_SET_TSC and
# never fault RDTSC (their hypervisor ignores CR4.TSD), so checks_test SKIPs
# the trap's own cases there. qemu-system-x86_64's TCG honours CR4.TSD: this
# boots Debian's kernel (linux-image-amd64, downloaded with apt-get download,
# never installed) under TCG, its initramfs holding checks_test and busybox,
# and runs the suite with qemu's CPU model CPU (default max; "max,-rdtscp"
# takes RDTSCP away, which the trap then emulates on SIGILL).
# Exit 0 when the trap's cases ran and passed and every exact and edges check
# passed through the trap; 1 otherwise; 2 for a bad CPU. TCG's clock is not
# the host's and its threads do not race as a CPU's do: the comparison with
# the system and the known-bad variants' catches are shown, never counted.
# Needs qemu-system-x86 and busybox-static: scripts/vdsobench setup --trap-vm.
# A few minutes: the kernel's download (about 70 MB) and two boots' worth of
# emulated checks.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cpu=${1:-max}
case $cpu in
'' | *[!a-zA-Z0-9,+_-]*)
	echo "trap_vm.sh: CPU '$cpu': not a qemu CPU model (max, max,-rdtscp, ...)" >&2
	exit 2
	;;
esac
scripts/vdsobench setup --trap-vm >/dev/null || exit $?
bazel build --color=no --curses=no --noshow_progress --config=kline \
	//verify:checks_test || exit 1
test_bin="$(bazel info --config=kline bazel-bin 2>/dev/null)/verify/checks_test"
work=$(mktemp -d /tmp/vdsobench-trap-vm-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT

# Debian's kernel image, unpacked here: the metapackage names the image
(cd "$work" && apt-get download -q linux-image-amd64 >/dev/null 2>&1) || {
	echo "trap_vm.sh: apt-get download linux-image-amd64 failed" >&2
	exit 1
}
image=$(dpkg-deb -f "$work"/linux-image-amd64_*.deb Depends | sed -n 's/^\(linux-image-[^ ,]*\).*/\1/p')
(cd "$work" && apt-get download -q "$image" >/dev/null 2>&1) || {
	echo "trap_vm.sh: apt-get download $image failed" >&2
	exit 1
}
dpkg-deb -x "$work/$image"_*.deb "$work/kernel" || exit 1
vmlinuz=$(ls "$work"/kernel/boot/vmlinuz-* | head -1)

# the initramfs: busybox, the test and the libraries it links
root="$work/root"
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
cp /bin/busybox "$root/bin/busybox" || exit 1
for tool in sh mount poweroff grep; do ln -s busybox "$root/bin/$tool"; done
cp "$test_bin" "$root/checks_test" || exit 1
for lib in $(ldd "$test_bin" | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib" || exit 1
done
cat >"$root/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
cd /tmp
echo "=== checks_test begins"
/checks_test
echo "=== checks_test exit $?"
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$work/initrd.gz" || exit 1

timeout 1200 qemu-system-x86_64 -machine q35 -accel tcg -cpu "$cpu" -smp 2 -m 2048 \
	-kernel "$vmlinuz" -initrd "$work/initrd.gz" -nographic -no-reboot \
	-append "console=ttyS0 quiet panic=-1" </dev/null >"$work/serial.txt" 2>&1
tap=$(sed -n '/=== checks_test begins/,/=== checks_test exit/p' "$work/serial.txt" | tr -d '\r')
if [ -z "$tap" ]; then
	echo "trap_vm.sh: checks_test did not run in the VM; its console:" >&2
	tail -20 "$work/serial.txt" >&2
	exit 1
fi
trapped=$(grep -E '^(not )?ok .*(RDTSC|trap)' <<<"$tap")
checked=$(grep -E '^(not )?ok .*(exact|edges): ' <<<"$tap")
shown=$(grep -E '^not ok .*(against the system|known bad)' <<<"$tap" | wc -l)
echo "trap_vm.sh: $(grep -c . <<<"$trapped") trap cases, $(grep -c . <<<"$checked") exact and edges checks under -cpu $cpu; $shown system or known-bad lines left to TCG's clock"
bad=$(grep -E '^not ok|# SKIP no trap here' <<<"$trapped$(printf '\n')$checked")
if [ -n "$bad" ]; then
	echo "trap_vm.sh: the trap failed under TCG:" >&2
	echo "$bad" | head -20 >&2
	exit 1
fi
echo "trap_vm.sh: the trap answered every read, RDTSC and RDTSCP alike"
