# SPDX-License-Identifier: GPL-2.0-or-later
# `make bench MODEL=1 BENCH=remote`: RDMA WRITE and READ as bench-remote.sh
# measures them between two guests, here between two pairs of devices of
# one guest (bench-remote-model.opts), so that the timing model's link
# and the guest's -icount clock time both ends: bench-remote.sh's role
# "both" (window server and requester in this guest).
PLDMA_RBENCH_ROLE=both . /tests/bench-remote.sh
