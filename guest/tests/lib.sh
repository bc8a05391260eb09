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
# thp always|madvise|never: transparent huge pages for the next tests
thp() { echo "$1" >/sys/kernel/mm/transparent_hugepage/enabled; }
done_testing() {
	echo "1..$_n"
	[ "$_fail" -eq 0 ]
}
