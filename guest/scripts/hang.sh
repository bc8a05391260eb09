# SPDX-License-Identifier: GPL-2.0-or-later
# Used by tests/host/run: a guest test that never finishes, to prove that
# run-guest's timeout stops it with a message.
sleep 100000
