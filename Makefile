# SPDX-License-Identifier: GPL-2.0-or-later
# Thin driver for the scripts in scripts/.  Every target installs and builds
# whatever is missing (Debian packages via apt-get, as root).

.PHONY: all build-deps demo check check-series bench bench-sweep study fuzz fuzz-long qemu kernel initramfs shell deps clean distclean

all: initramfs

deps:
	scripts/install-deps

# what the builds need, and no tool of the suites (make demo)
build-deps:
	scripts/install-deps --build

qemu: deps
	scripts/build-qemu --print-dir

kernel: deps
	scripts/build-kernel --print-dir

initramfs: deps
	scripts/build-initramfs

# the single-guest demo, then remote DMA between two guests; it builds
# only what it boots: qemu-system-aarch64 (no x86 target, no qtests, which
# make check adds) and the 6.12 kernel side by side, then the initramfs
demo: build-deps
	PLDMA_QEMU_TARGET=aarch64 scripts/run-guest --test demo
	scripts/demo-remote --no-build

check: deps
	scripts/check

# Every patch applies in order and builds on its own (slow).
check-series: deps
	scripts/check-series

# BENCH=local (device and fault strategies), remote (RDMA between two
# guests) or all (the default); verbs (perftest pinned vs ODP between
# guests, opt-in: not in all).  MODEL=1: in modeled time (-icount and the
# device's timing model; local only), docs/performance.md "Modeled time"
BENCH ?= all
MODEL ?= 0
bench: deps
	BENCH=$(BENCH) MODEL=$(MODEL) scripts/bench

# The fault-strategy study: CSVs and plots in build/study, the report in
# docs/study.md.  QUICK=1: the short version (under 10 min on 2 cores).
# MODEL=1: in modeled time, to build/study-model and docs/study-model.md.
QUICK ?= 0
study: deps
	QUICK=$(QUICK) MODEL=$(MODEL) scripts/study --doc \
		$(if $(filter 1,$(MODEL)),docs/study-model.md,docs/study.md)

# How the modeled answers move with the timing model's bandwidth and fault
# round trip (scripts/bench-sweep): CSVs and plots in build/bench-sweep.
bench-sweep: deps
	scripts/bench-sweep

# generic-fuzz of the PLDMA and the SMMUv3 (qemu-fuzz-aarch64, libFuzzer):
# FUZZ_RUNS executions per config; fuzz-long is the 10^6 run of docs/fuzzing.md.
FUZZ_RUNS ?= 20000
fuzz: deps
	scripts/fuzz --runs $(FUZZ_RUNS)

fuzz-long: deps
	scripts/fuzz --runs 1000000

shell: deps
	scripts/run-guest --shell

clean:
	rm -rf build
	$(MAKE) -C guest-driver clean 2>/dev/null || true

# Removes the shared cache of fetched sources and built QEMU/kernel trees.
distclean: clean
	rm -rf "$${PLDMA_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/pldma}"
