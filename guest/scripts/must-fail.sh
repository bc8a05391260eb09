# SPDX-License-Identifier: GPL-2.0-or-later
# Used by tests/host/run: a guest test that fails with status 3, to prove
# that a failure inside the guest fails the host-side command.
echo "failing on purpose"
exit 3
