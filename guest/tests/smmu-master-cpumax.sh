# SPDX-License-Identifier: GPL-2.0-or-later
# smmu-master.sh with -cpu max (52-bit PARange, SMMU oas=52).
. /tests/smmu-master.sh
