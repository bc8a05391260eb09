# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for guest test scripts: TAP output and a failure count.
_n=0
_fail=0
ok() {
	_n=$((_n + 1))
	echo "ok $_n - $*"
}
not_ok() {
	_n=$((_n + 1)); _fail=$((_fail + 1))
	echo "not ok $_n - $*"
}
# check DESCRIPTION COMMAND...: one TAP line from a command's status
check() {
	_d=$1; shift
	if "$@"; then ok "$_d"; else not_ok "$_d"; fi
}
# t DESC CMD...: like check, but exit status 77 means "skipped"
t() {
	_d=$1; shift
	"$@"; _rc=$?
	if [ $_rc = 0 ]; then ok "$_d"
	elif [ $_rc = 77 ]; then ok "$_d # SKIP no suitable device"
	else not_ok "$_d"; fi
}
# iopf_strategy: the name of the strategy the IOMMU's IOPF serves on the
# loaded devices: "stall" (the platform pldma behind the SMMUv3), "pri"
# (pldma-pci's PCIe page requests), nothing when every device is in report
# mode (pldma.ko loaded: it reads debugfs)
iopf_strategy() {
	cat /sys/kernel/debug/pldma/pldma*/stats 2>/dev/null |
		awk '$1 == "mode:" && ($2 == "stall" || $2 == "pri") { print $2; exit }'
}
# thp always|madvise|never: transparent huge pages for the next tests
thp() { echo "$1" >/sys/kernel/mm/transparent_hugepage/enabled; }
# kernel_reports: one TAP line for the kernel's own reports since boot, in
# dmesg -- lockdep, KASAN, BUG, WARN, debugobjects, list and refcount
# corruption, hung tasks, RCU stalls -- and, when kmemleak is built in (the
# debug kernel), the leaks a scan finds now.  A failure names the first
# report and prints it.
_KREPORT='^(WARNING|BUG|INFO|ODEBUG|UBSAN|kernel BUG|Unable to handle kernel|Internal error)|refcount_t:|list_[a-z_]* corruption|Oops|kmemleak: .*suspected memory leak'
kernel_reports() {
	_kl=/sys/kernel/debug/kmemleak
	if [ -e $_kl ]; then
		# kmemleak reports objects older than 5 s that no scan found
		# referenced; a second scan drops pointers that were only in flight
		sleep 5
		if echo scan >$_kl && echo scan >$_kl; then
			_leaks=$(grep -c '^unreferenced object' $_kl)
			if [ "$_leaks" -gt 0 ]; then
				not_ok "kernel report: kmemleak: $_leaks unreferenced objects"
				head -n 60 $_kl | sed 's/^/# /'
				return
			fi
		else
			not_ok "kernel report: kmemleak scan failed (kmemleak disabled?)"
			dmesg | grep -i kmemleak | tail -n 5 | sed 's/^/# /'
			return
		fi
	fi
	_first=$(dmesg | sed 's/^\[ *[0-9.]*\] //' | grep -n -m1 -E "$_KREPORT")
	if [ -z "$_first" ]; then
		ok "no kernel report (lockdep, KASAN, kmemleak, BUG, WARN) in dmesg"
		return
	fi
	not_ok "kernel report: ${_first#*:}"
	dmesg | sed 's/^\[ *[0-9.]*\] //' | tail -n +"${_first%%:*}" | head -n 60 | sed 's/^/# /'
}
done_testing() {
	kernel_reports
	echo "1..$_n"
	[ "$_fail" -eq 0 ]
}

# Scripts of a multi-guest test (tests/rdma/run, run-vde): $role from
# pldma.rdma=N on the kernel command line, $fails, and unnumbered TAP lines
# named after the node (the host script numbers the lines of all guests).
rdma_setup() {
	local arg
	role=
	for arg in $(cat /proc/cmdline); do
		case "$arg" in
		pldma.rdma=*) role=${arg#pldma.rdma=} ;;
		esac
	done
	fails=0
	ok() { echo "ok - node$role: $*"; }
	not_ok() { echo "not ok - node$role: $*"; fails=$((fails + 1)); }
	res() {
		if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi
	}
}
