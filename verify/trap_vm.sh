#!/usr/bin/env bash
# usage: verify/trap_vm.sh [--arch x86_64|i386] [--console FILE | --save-console FILE] [CPU]
# verify's counter trap (verify/tsc_trap.c) checked on a machine where it
# works. Many guests, this project's own among them, accept PR_SET_TSC and
# never fault RDTSC (their hypervisor ignores CR4.TSD), so checks_test SKIPs
# the trap's own cases there. qemu-system-x86_64's TCG honours CR4.TSD: this
# boots Debian's kernel (linux-image-amd64, downloaded with apt-get download,
# never installed) under TCG, its initramfs holding checks_test and busybox,
# and runs the suite with qemu's CPU model CPU (default max; "max,-rdtscp"
# takes RDTSCP away, which the trap then emulates on SIGILL).
# --arch i386 puts the static i386 checks_test (--config=i386) there
# instead: Debian's kernel has IA32 emulation and the initramfs no emulator,
# so it runs natively, a 32-bit process whose RDTSC faults as x86-64's does.
# Exit 0 when the trap's cases ran and passed and every exact and edges check
# passed through the trap (for i386 also: the program that ran was the
# 32-bit ELF and said so); 1 otherwise; 2 for a bad --arch, CPU or FILE. TCG's
# clock is not the host's and its threads do not race as a CPU's do: the
# comparison with the system and the known-bad variants' catches are shown,
# never counted.
# --console FILE boots nothing: it judges FILE, a console saved from a boot
# (the VM's serial output), as if the boot had just written it;
# --save-console FILE boots and keeps the console in FILE.
# Needs qemu-system-x86 and busybox-static: scripts/vdsobench setup --trap-vm.
# A few minutes: the kernel's download (about 70 MB) and two boots' worth of
# emulated checks.
set -uo pipefail
usage="usage: verify/trap_vm.sh [--arch x86_64|i386] [--console FILE | --save-console FILE] [CPU]"
bad_usage() {
	echo "trap_vm.sh: $*" >&2
	exit 2
}
# a value as one line: hostile input is shown, never obeyed
shown() {
	local v=${1:0:60}
	printf '%s' "${v//[![:print:]]/?}"
}
# the console's verdict: 0 when it shows the native, trapped run described
# above, else 1 and why
judge() {
	local tap ran abi want_abi trapped checked through emulated shown bad

	tap=$(sed -n '/=== checks_test begins/,/=== checks_test exit/p' "$1" | tr -d '\r')
	if [ -z "$tap" ]; then
		echo "trap_vm.sh: checks_test did not run in the VM; its console:" >&2
		tail -20 "$1" >&2
		return 1
	fi
	# what ran: the kernel's machine, the ELF's class, the build's own word
	ran=$(sed -n 's/.*=== kernel \(.*\)/\1/p' "$1" | tr -d '\r')
	abi=$(grep -E '^# checks_test built for ' <<<"$tap")
	echo "trap_vm.sh: kernel ${ran:-?}; ${abi#\# }"
	case $arch in
	x86_64) want_abi="built for x86-64, 64-bit pointers" ;;
	i386) want_abi="built for i386, 32-bit pointers" ;;
	esac
	if [ "$ran" != "x86_64, checks_test ELF class $elf_class" ] || [[ $abi != *"$want_abi" ]]; then
		echo "trap_vm.sh: the VM did not run the $arch checks_test natively (want" \
			"ELF class $elf_class and \"$want_abi\")" >&2
		return 1
	fi
	trapped=$(grep -E '^(not )?ok .*(RDTSC|trap)' <<<"$tap")
	checked=$(grep -E '^(not )?ok .*(exact|edges): ' <<<"$tap")
	through=$(grep -c 'reads trapped' <<<"$checked")
	emulated=$(grep -c 'RDTSCPs emulated' <<<"$checked")
	shown=$(grep -E '^not ok .*(against the system|known bad)' <<<"$tap" | wc -l)
	echo "trap_vm.sh: $arch: $(grep -c . <<<"$trapped") trap cases, $(grep -c . <<<"$checked") exact and edges checks ($through through the trap, $emulated with RDTSCP emulated) under -cpu $cpu; $shown system or known-bad lines left to TCG's clock"
	# a real counter bracketed, or its edges skipped, did not go through the trap
	bad=$(grep -E '^not ok|# SKIP no trap here|\(no trap: |or the counter trap \(' \
		<<<"$trapped$(printf '\n')$checked")
	if [ -n "$bad" ] || [ "$through" -eq 0 ]; then
		echo "trap_vm.sh: the trap failed under TCG:" >&2
		echo "${bad:-no check read its counter through the trap}" | head -20 >&2
		return 1
	fi
	echo "trap_vm.sh: the trap answered every read, RDTSC and RDTSCP alike ($arch)"
}
arch=x86_64 cpu='' cpus=0 console='' save=''
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	--arch)
		[ $# -ge 2 ] || bad_usage "--arch needs a value: x86_64 or i386"
		arch=$2
		shift 2
		;;
	--arch=*)
		arch=${1#--arch=}
		shift
		;;
	--console)
		[ $# -ge 2 ] || bad_usage "--console needs a file: a console saved from a boot"
		console=$2
		shift 2
		;;
	--save-console)
		[ $# -ge 2 ] || bad_usage "--save-console needs a file to write the console to"
		save=$2
		shift 2
		;;
	-*) bad_usage "unknown option '$(shown "$1")' ($usage)" ;;
	*)
		[ $cpus -eq 0 ] || bad_usage "one CPU model, not '$(shown "$cpu")' and '$(shown "$1")' ($usage)"
		cpu=$1 cpus=1
		shift
		;;
	esac
done
case $arch in
x86_64 | x86-64 | amd64) arch=x86_64 config=kline elf_class=02 ;;
i386 | i686 | x86_32) arch=i386 config=i386 elf_class=01 ;;
*) bad_usage "--arch '$(shown "$arch")': not a trap VM's architecture (x86_64, i386)" ;;
esac
[ $cpus -eq 1 ] || cpu=max
case $cpu in
'' | *[!a-zA-Z0-9,+_-]*)
	bad_usage "CPU '$(shown "$cpu")': not a qemu CPU model (max, max,-rdtscp, ...)"
	;;
esac
if [ -n "$console" ] && [ -n "$save" ]; then
	bad_usage "--console judges a saved console, --save-console boots: not both"
fi
if [ -n "$save" ]; then
	# the boot runs from the project's root: a relative FILE is from here
	[[ $save == /* ]] || save=$PWD/$save
	if [ -d "$save" ] || ! [ -w "${save%/*}/" ]; then
		bad_usage "--save-console '$(shown "$save")': not a file that can be written"
	fi
	# never written over, nor through a link: a new file, or nothing
	if [ -e "$save" ] || [ -L "$save" ]; then
		bad_usage "--save-console '$(shown "$save")': it exists (the console goes to a new file)"
	fi
fi
if [ -n "$console" ]; then
	if ! [ -f "$console" ] || ! [ -r "$console" ]; then
		bad_usage "--console '$(shown "$console")': not a readable file"
	fi
	judge "$console"
	exit
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
scripts/vdsobench setup --trap-vm >/dev/null || exit $?
bazel build --color=no --curses=no --noshow_progress --config=$config \
	//verify:checks_test || exit 1
test_bin="$(bazel info --config=$config bazel-bin 2>/dev/null)/verify/checks_test"
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
for tool in sh mount poweroff grep od uname; do ln -s busybox "$root/bin/$tool"; done
cp "$test_bin" "$root/checks_test" || exit 1
# i386's is static (ldd: not a dynamic executable): no libraries
for lib in $(ldd "$test_bin" 2>/dev/null | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib" || exit 1
done
cat >"$root/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
cd /tmp
echo "=== kernel $(uname -m), checks_test ELF class$(od -An -tx1 -j4 -N1 /checks_test)"
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
# whole or not at all, and only where nothing is: a link (unlike a copy)
# refuses a name that was taken since the check
if [ -n "$save" ]; then
	kept=$(mktemp "${save%/*}/.trap-vm-console.XXXXXX") &&
		cp "$work/serial.txt" "$kept" && ln "$kept" "$save" ||
		echo "trap_vm.sh: could not keep the console in $(shown "$save")" >&2
	[ -n "${kept:-}" ] && rm -f "$kept"
fi
judge "$work/serial.txt"
