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
done_testing() {
	echo "1..$_n"
	[ "$_fail" -eq 0 ]
}
