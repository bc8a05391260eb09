#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the qtest commands of the "event queue over MMIO" scenario.

The defect it reproduces: the SMMU recorded a stall event while holding its
mutex (tests/fuzz/findings/defect1-evtq-over-mmio).
The scenario, for '-M virt,iommu=smmuv3 -device pldma,fault-mode=report':

  * STE of the PLDMA (SID 0x10000) allows stalls; PASID 1's CD has S = 1
    (stall), PASID 2's has S = 0 (terminate);
  * channel 1 (PASID 2) copies to an unmapped page: the fault is
    terminated and the channel is FAULTED (report mode);
  * channel 0 (PASID 1) copies to the unmapped VA DST: it stalls;
  * the guest moves SMMU_EVENTQ_BASE so that the next event record lands
    on channel 1's page (words 4 and 5 of the record, the faulting
    address, land on RING_TAIL and CMD);
  * CMD_RESUME(RETRY) for channel 0: PLDMA retries at once from the
    resume, stalls again, and the SMMU writes the event, holding its
    mutex, to channel 1's page: RING_TAIL = DST[31:0], CMD = DST[63:32].

With DST = 0x100000000, CMD is 1 = RESTART: channel 1 does DMA through the
SMMU from inside the event write and QEMU deadlocks.  With the default
DST = 0x200000000 (CMD = 2 = CANCEL, no DMA inline) nothing hangs: that is
the fuzzer's seed, one 32-bit value away from the deadlock.

Usage: defect1.py [--dst VA]   (prints one qtest command per line)
"""
import argparse
import struct

SMMU = 0x09050000
PLDMA = 0x0C000000
SID = 0x10000
RAM = 0x40000000


class Builder:
    def __init__(self):
        self.cmds = []
        self.mem = {}
        self.next = RAM + 0x100000

    def emit(self, s):
        self.cmds.append(s)

    def alloc(self, size, align=0x1000):
        a = (self.next + align - 1) & ~(align - 1)
        self.next = a + size
        return a

    def wq(self, addr, val):
        """A guest memory write of 8 bytes (tables are built with writeq)"""
        self.mem[addr] = val
        self.emit("writeq 0x%x 0x%x" % (addr, val))

    def rq(self, addr):
        return self.mem.get(addr, 0)

    def mmio_l(self, addr, val):
        self.emit("writel 0x%x 0x%x" % (addr, val))

    def mmio_q(self, addr, val):
        self.emit("writeq 0x%x 0x%x" % (addr, val))

    def write(self, addr, data):
        self.emit("write 0x%x 0x%x 0x%s" % (addr, len(data), data.hex()))


def build(dst):
    b = Builder()
    # SMMU: 2-level stream table (SPLIT 8, 17 SID bits), queues of 256
    strtab = b.alloc(512 * 8, 4096)
    cmdq = b.alloc(16 << 8, 16 << 8)
    evtq = b.alloc(32 << 8, 32 << 8)
    prod = [0]

    def cmd(dw0, dw1):
        idx = prod[0] & 0xff
        b.wq(cmdq + idx * 16, dw0)
        b.wq(cmdq + idx * 16 + 8, dw1)
        prod[0] = (prod[0] + 1) & 0x1ff
        b.mmio_l(SMMU + 0x98, prod[0])

    b.mmio_l(SMMU + 0x20, 0)
    b.mmio_q(SMMU + 0x80, strtab)
    b.mmio_l(SMMU + 0x88, (1 << 16) | (8 << 6) | 17)
    b.mmio_q(SMMU + 0x90, cmdq | 8)
    b.mmio_l(SMMU + 0x98, 0)
    b.mmio_l(SMMU + 0x9C, 0)
    b.mmio_q(SMMU + 0xA0, evtq | 8)
    b.mmio_l(SMMU + 0x100A8, 0)
    b.mmio_l(SMMU + 0x100AC, 0)
    b.mmio_l(SMMU + 0x20, 0xC)              # CMDQEN | EVENTQEN
    cmd(0x04, 31)                           # CFGI_ALL
    cmd(0x46, 0)                            # SYNC
    b.mmio_l(SMMU + 0x20, 0xD)              # + SMMUEN

    # CD table: 4 linear CDs; page tables
    cdtab = b.alloc(64 * 4, 256)

    def pgtable():
        return b.alloc(4096)

    def walk(ttb, va):
        table = ttb
        for level in (1, 2):
            pa = table + ((va >> (12 + 9 * (3 - level))) & 0x1FF) * 8
            pte = b.rq(pa)
            if not pte & 1:
                pte = pgtable() | 3
                b.wq(pa, pte)
            table = pte & 0x0000FFFFFFFFF000
        return table + ((va >> 12) & 0x1FF) * 8

    def map_page(ttb, va, pa):
        b.wq(walk(ttb, va), (pa & 0x0000FFFFFFFFF000) | 3 | (1 << 10))

    def cd(ssid, asid, ttb, stall):
        dw0 = (25 | (1 << 30) | (1 << 31) | (5 << 32) | (1 << 41) |
               (stall << 44) | (1 << 45) | (1 << 46) | (asid << 48))
        a = cdtab + ssid * 64
        b.wq(a + 8, ttb)
        b.wq(a + 16, 0)
        b.wq(a + 24, 0)
        b.wq(a, dw0)

    # STE: stage 1, linear CD table of 4 (S1CDMAX 2), S1DSS bypass,
    # S1STALLD = 0: stalls allowed
    l2 = b.alloc(64 << 8, 64 << 8)
    b.wq(strtab + (SID >> 8) * 8, l2 | 9)
    ste = l2 + (SID & 0xFF) * 64
    ste0 = 1 | (5 << 1) | cdtab | (2 << 59)
    for i in range(7, 0, -1):
        b.wq(ste + i * 8, 1 if i == 1 else 0)   # S1DSS = bypass
    b.wq(ste, ste0)
    cmd(0x03 | (SID << 32), 1)              # CFGI_STE
    cmd(0x46, 0)

    ttb = {}
    for pasid, stall in ((1, 1), (2, 0)):
        ttb[pasid] = pgtable()
        cd(pasid, pasid, ttb[pasid], stall)
        cmd(0x05 | (pasid << 12) | (SID << 32), 1)   # CFGI_CD
        cmd(0x46, 0)

    def desc(src, d, length, compl):
        return struct.pack("<BBHIQQQQQI12x", 1, 1, 0, length, src, d, 0,
                           compl, 0, 0)

    # Each channel: ring at VA 0x40000000 (8 entries), source page at
    # 0x10000000, completion page at 0x30000000, all mapped
    for ch, pasid, d in ((1, 2, 0x20000000), (0, 1, dst)):
        t = ttb[pasid]
        ring, src, comp = b.alloc(4096), b.alloc(4096), b.alloc(4096)
        map_page(t, 0x40000000, ring)
        map_page(t, 0x10000000, src)
        map_page(t, 0x30000000, comp)
        b.write(src, bytes(range(64)))
        b.write(ring, desc(0x10000000, d, 64, 0x30000000))
        bind = PLDMA + 0x100 + 0x10 * ch
        page = PLDMA + 0x1000 * (1 + ch)
        b.mmio_l(bind + 4, 2)                        # CTRL.RESET
        b.mmio_l(bind + 0, 0x80000000 | pasid)       # PASID_EN | pasid
        b.mmio_l(bind + 4, 1)                        # CTRL.ENABLE
        b.mmio_l(page + 0x0, 0x40000000)             # RING_BASE
        b.mmio_l(page + 0x4, 0)
        b.mmio_l(page + 0x8, 8)                      # RING_SIZE
        b.mmio_l(page + 0x10, 1)                     # RING_TAIL: kick
        b.emit("clock_step 1000000")
    # Channel 1 is FAULTED (event 0), channel 0 STALLED (event 1, STAG 1).
    # Consume both events, then put the event queue over channel 1's page.
    b.mmio_l(SMMU + 0x100AC, 2)
    b.mmio_q(SMMU + 0xA0, (PLDMA + 0x2000 - 2 * 32) | 8)
    # CMD_RESUME(RETRY) of STAG 1
    cmd(0x44 | (1 << 12) | (SID << 32), 1)
    b.emit("clock_step 1000000")
    return b.cmds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dst", type=lambda x: int(x, 0), default=0x200000000)
    a = ap.parse_args()
    for c in build(a.dst):
        print(c)


if __name__ == "__main__":
    main()
