/*
 * libqos helpers for the SMMUv3 (see smmuv3.h)
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "../libqtest.h"
#include "smmuv3.h"

/* Registers */
#define R_CR0               0x20
#define R_CR0ACK            0x24
#define R_CR1               0x28
#define R_GERROR            0x60
#define R_GERRORN           0x64
#define R_STRTAB_BASE       0x80
#define R_STRTAB_BASE_CFG   0x88
#define R_CMDQ_BASE         0x90
#define R_CMDQ_PROD         0x98
#define R_CMDQ_CONS         0x9c
#define R_EVENTQ_BASE       0xa0
#define R_EVENTQ_PROD       0x100a8 /* page 1 */
#define R_EVENTQ_CONS       0x100ac

#define EVENTQ_CONS_OVACKFLG (1u << 31)

#define CR0_SMMUEN          (1u << 0)
#define CR0_EVENTQEN        (1u << 2)
#define CR0_CMDQEN          (1u << 3)

#define SID_BITS            17
#define STRTAB_SPLIT        8

/* Commands */
#define CMD_CFGI_STE        0x03
#define CMD_CFGI_ALL        0x04
#define CMD_CFGI_CD         0x05
#define CMD_TLBI_NH_ASID    0x11
#define CMD_TLBI_NH_VA      0x12
#define CMD_RESUME          0x44
#define CMD_STALL_TERM      0x45
#define CMD_SYNC            0x46

/* Descriptors */
#define PTE_VALID           (1ULL << 0)
#define PTE_TABLE           (1ULL << 1)
#define PTE_PAGE            (1ULL << 1)
#define PTE_AP_RDONLY       (1ULL << 7)
#define PTE_AF              (1ULL << 10)
#define PTE_ADDR_MASK       0x0000fffffffff000ULL

void qsmmu_init(QSMMU *s, QTestState *qts, uint64_t base,
                uint64_t mem, uint64_t size)
{
    memset(s, 0, sizeof(*s));
    s->qts = qts;
    s->base = base;
    s->mem_next = mem;
    s->mem_end = mem + size;
    s->cmdq_log2 = 8;
    s->evtq_log2 = 8;
}

uint64_t qsmmu_alloc(QSMMU *s, uint64_t size, uint64_t align)
{
    uint64_t addr = QEMU_ALIGN_UP(s->mem_next, align);

    g_assert_cmphex(addr + size, <=, s->mem_end);
    s->mem_next = addr + size;
    qtest_memset(s->qts, addr, 0, size);
    return addr;
}

uint32_t qsmmu_readl(QSMMU *s, uint64_t off)
{
    return qtest_readl(s->qts, s->base + off);
}

void qsmmu_writel(QSMMU *s, uint64_t off, uint32_t val)
{
    qtest_writel(s->qts, s->base + off, val);
}

static void qsmmu_writeq(QSMMU *s, uint64_t off, uint64_t val)
{
    qtest_writeq(s->qts, s->base + off, val);
}

void qsmmu_enable(QSMMU *s)
{
    uint64_t l1_entries = 1ULL << (SID_BITS - STRTAB_SPLIT);

    s->strtab_l1 = qsmmu_alloc(s, l1_entries * 8, l1_entries * 8);
    s->cmdq = qsmmu_alloc(s, 16ULL << s->cmdq_log2, 16ULL << s->cmdq_log2);
    s->evtq = qsmmu_alloc(s, 32ULL << s->evtq_log2, 32ULL << s->evtq_log2);

    qsmmu_writel(s, R_CR0, 0);
    qsmmu_writeq(s, R_STRTAB_BASE, s->strtab_l1);
    qsmmu_writel(s, R_STRTAB_BASE_CFG,
                 (1u << 16) | (STRTAB_SPLIT << 6) | SID_BITS);
    qsmmu_writeq(s, R_CMDQ_BASE, s->cmdq | s->cmdq_log2);
    qsmmu_writel(s, R_CMDQ_PROD, 0);
    qsmmu_writel(s, R_CMDQ_CONS, 0);
    qsmmu_writeq(s, R_EVENTQ_BASE, s->evtq | s->evtq_log2);
    qsmmu_writel(s, R_EVENTQ_PROD, 0);
    qsmmu_writel(s, R_EVENTQ_CONS, 0);
    s->cmdq_prod = 0;
    s->evtq_cons = 0;
    qsmmu_writel(s, R_CR0, CR0_CMDQEN | CR0_EVENTQEN);
    qsmmu_cfgi_all(s);
    qsmmu_writel(s, R_CR0, CR0_CMDQEN | CR0_EVENTQEN | CR0_SMMUEN);
    g_assert_cmphex(qsmmu_readl(s, R_CR0ACK) & 0xd, ==,
                    CR0_CMDQEN | CR0_EVENTQEN | CR0_SMMUEN);
}

/* Address of the STE of @sid, allocating its level-2 table if needed */
static uint64_t qsmmu_ste_addr(QSMMU *s, uint32_t sid)
{
    uint64_t l1 = s->strtab_l1 + (uint64_t)(sid >> STRTAB_SPLIT) * 8;
    uint64_t desc = qtest_readq(s->qts, l1);
    uint64_t l2;

    if (!(desc & 0x1f)) {
        uint64_t size = 64ULL << STRTAB_SPLIT;

        l2 = qsmmu_alloc(s, size, size);
        /* Span = SPLIT + 1: 2^SPLIT STEs */
        qtest_writeq(s->qts, l1, l2 | (STRTAB_SPLIT + 1));
    } else {
        l2 = desc & 0x000fffffffffffc0ULL;
    }
    return l2 + (uint64_t)(sid & ((1u << STRTAB_SPLIT) - 1)) * 64;
}

static void qsmmu_write_ste(QSMMU *s, uint32_t sid, const uint64_t ste[8])
{
    uint64_t addr = qsmmu_ste_addr(s, sid);
    int i;

    /* Write the valid dword last */
    for (i = 7; i >= 0; i--) {
        qtest_writeq(s->qts, addr + i * 8, ste[i]);
    }
    qsmmu_cfgi_ste(s, sid);
}

void qsmmu_set_ste_s1(QSMMU *s, uint32_t sid, uint64_t cdtab, int s1cdmax,
                      int s1dss, bool s1stalld)
{
    qsmmu_set_ste_s1_fmt(s, sid, cdtab, QSMMU_S1FMT_LINEAR, s1cdmax, s1dss,
                         s1stalld);
}

void qsmmu_set_ste_s1_fmt(QSMMU *s, uint32_t sid, uint64_t cdtab, int s1fmt,
                          int s1cdmax, int s1dss, bool s1stalld)
{
    uint64_t ste[8] = { 0 };

    ste[0] = 1 |                            /* V */
             (5ULL << 1) |                  /* Config: S1 translate */
             ((uint64_t)s1fmt << 4) |
             (cdtab & 0x000fffffffffffc0ULL) |
             ((uint64_t)s1cdmax << 59);
    ste[1] = (uint64_t)s1dss |
             ((uint64_t)s1stalld << 27);
    qsmmu_write_ste(s, sid, ste);
}

void qsmmu_set_ste_bypass(QSMMU *s, uint32_t sid)
{
    uint64_t ste[8] = { 0 };

    ste[0] = 1 | (4ULL << 1);
    qsmmu_write_ste(s, sid, ste);
}

uint64_t qsmmu_cd_table(QSMMU *s, int s1cdmax)
{
    uint64_t size = 64ULL << s1cdmax;

    return qsmmu_alloc(s, size, MAX(size, 64));
}

static void qsmmu_write_cd_at(QSMMU *s, uint64_t addr, uint16_t asid,
                              uint64_t ttb, bool stall)
{
    uint64_t dw0;

    dw0 = (64 - QSMMU_VA_BITS) |            /* T0SZ */
          (0ULL << 6) |                     /* TG0: 4KB */
          (1ULL << 30) |                    /* EPD1 */
          (1ULL << 31) |                    /* V */
          (5ULL << 32) |                    /* IPS: 48 bits */
          (1ULL << 41) |                    /* AA64 */
          ((uint64_t)stall << 44) |         /* S */
          (1ULL << 45) |                    /* R */
          (1ULL << 46) |                    /* A */
          ((uint64_t)asid << 48);
    qtest_writeq(s->qts, addr + 8, ttb & 0x000ffffffffffff0ULL);
    qtest_writeq(s->qts, addr + 16, 0);
    qtest_writeq(s->qts, addr + 24, 0);
    qtest_writeq(s->qts, addr, dw0);
}

void qsmmu_write_cd(QSMMU *s, uint64_t cdtab, uint32_t ssid, uint16_t asid,
                    uint64_t ttb, bool stall)
{
    qsmmu_write_cd_at(s, cdtab + (uint64_t)ssid * 64, asid, ttb, stall);
}

#define CD_LEAF_SPLIT       6   /* 4KB leaves: 64 CDs */

uint64_t qsmmu_cd_table_2l(QSMMU *s, int s1cdmax)
{
    uint64_t entries = 1ULL << MAX(s1cdmax - CD_LEAF_SPLIT, 0);

    return qsmmu_alloc(s, entries * 8, MAX(entries * 8, 64));
}

void qsmmu_write_cd_2l(QSMMU *s, uint64_t l1tab, uint32_t ssid,
                       uint16_t asid, uint64_t ttb, bool stall)
{
    uint64_t l1 = l1tab + (uint64_t)(ssid >> CD_LEAF_SPLIT) * 8;
    uint64_t desc = qtest_readq(s->qts, l1);
    uint64_t leaf;

    if (!(desc & 1)) {
        leaf = qsmmu_alloc(s, 64ULL << CD_LEAF_SPLIT, QSMMU_PAGE_SIZE);
        qtest_writeq(s->qts, l1, leaf | 1);
    } else {
        leaf = desc & 0x00fffffffffff000ULL;
    }
    qsmmu_write_cd_at(s, leaf +
                      (uint64_t)(ssid & ((1u << CD_LEAF_SPLIT) - 1)) * 64,
                      asid, ttb, stall);
}

uint64_t qsmmu_pgtable_new(QSMMU *s)
{
    return qsmmu_alloc(s, QSMMU_PAGE_SIZE, QSMMU_PAGE_SIZE);
}

static int qsmmu_idx(uint64_t va, int level)
{
    return (va >> (12 + 9 * (3 - level))) & 0x1ff;
}

/* Address of the level-3 descriptor of @va, or 0 if absent and !@alloc */
static uint64_t qsmmu_walk(QSMMU *s, uint64_t ttb, uint64_t va, bool alloc)
{
    uint64_t table = ttb;
    int level;

    g_assert_cmphex(va >> QSMMU_VA_BITS, ==, 0);
    for (level = 1; level < 3; level++) {
        uint64_t pte_addr = table + qsmmu_idx(va, level) * 8;
        uint64_t pte = qtest_readq(s->qts, pte_addr);

        if (!(pte & PTE_VALID)) {
            if (!alloc) {
                return 0;
            }
            pte = qsmmu_pgtable_new(s) | PTE_VALID | PTE_TABLE;
            qtest_writeq(s->qts, pte_addr, pte);
        }
        table = pte & PTE_ADDR_MASK;
    }
    return table + qsmmu_idx(va, 3) * 8;
}

void qsmmu_map(QSMMU *s, uint64_t ttb, uint64_t va, uint64_t pa,
               bool writable)
{
    uint64_t pte_addr = qsmmu_walk(s, ttb, va, true);

    qtest_writeq(s->qts, pte_addr,
                 (pa & PTE_ADDR_MASK) | PTE_VALID | PTE_PAGE | PTE_AF |
                 (writable ? 0 : PTE_AP_RDONLY));
}

uint64_t qsmmu_map_new(QSMMU *s, uint64_t ttb, uint64_t va, uint64_t len,
                       bool writable)
{
    uint64_t pages = DIV_ROUND_UP(len, QSMMU_PAGE_SIZE);
    uint64_t pa = qsmmu_alloc(s, pages * QSMMU_PAGE_SIZE, QSMMU_PAGE_SIZE);
    uint64_t i;

    for (i = 0; i < pages; i++) {
        qsmmu_map(s, ttb, va + i * QSMMU_PAGE_SIZE,
                  pa + i * QSMMU_PAGE_SIZE, writable);
    }
    return pa;
}

void qsmmu_unmap(QSMMU *s, uint64_t ttb, uint64_t va)
{
    uint64_t pte_addr = qsmmu_walk(s, ttb, va, false);

    if (pte_addr) {
        qtest_writeq(s->qts, pte_addr, 0);
    }
}

uint64_t qsmmu_va_to_pa(QSMMU *s, uint64_t ttb, uint64_t va)
{
    uint64_t pte_addr = qsmmu_walk(s, ttb, va, false);
    uint64_t pte;

    if (!pte_addr) {
        return 0;
    }
    pte = qtest_readq(s->qts, pte_addr);
    if (!(pte & PTE_VALID)) {
        return 0;
    }
    return (pte & PTE_ADDR_MASK) | (va & (QSMMU_PAGE_SIZE - 1));
}

void qsmmu_cmd(QSMMU *s, uint64_t dw0, uint64_t dw1)
{
    uint32_t idx = s->cmdq_prod & ((1u << s->cmdq_log2) - 1);
    uint64_t addr = s->cmdq + idx * 16;

    qtest_writeq(s->qts, addr, dw0);
    qtest_writeq(s->qts, addr + 8, dw1);
    s->cmdq_prod = (s->cmdq_prod + 1) & ((2u << s->cmdq_log2) - 1);
    qsmmu_writel(s, R_CMDQ_PROD, s->cmdq_prod);
}

void qsmmu_cmd_sync(QSMMU *s)
{
    qsmmu_cmd(s, CMD_SYNC, 0);
}

void qsmmu_cfgi_ste(QSMMU *s, uint32_t sid)
{
    qsmmu_cmd(s, CMD_CFGI_STE | ((uint64_t)sid << 32), 1);
    qsmmu_cmd_sync(s);
}

void qsmmu_cfgi_cd(QSMMU *s, uint32_t sid, uint32_t ssid)
{
    qsmmu_cmd(s, CMD_CFGI_CD | ((uint64_t)ssid << 12) | ((uint64_t)sid << 32),
              1);
    qsmmu_cmd_sync(s);
}

void qsmmu_cfgi_all(QSMMU *s)
{
    qsmmu_cmd(s, CMD_CFGI_ALL, 31);
    qsmmu_cmd_sync(s);
}

void qsmmu_tlbi_asid(QSMMU *s, uint16_t asid)
{
    qsmmu_cmd(s, CMD_TLBI_NH_ASID | ((uint64_t)asid << 48), 0);
    qsmmu_cmd_sync(s);
}

void qsmmu_tlbi_va(QSMMU *s, uint16_t asid, uint64_t va)
{
    qsmmu_cmd(s, CMD_TLBI_NH_VA | ((uint64_t)asid << 48),
              va & ~(QSMMU_PAGE_SIZE - 1));
    qsmmu_cmd_sync(s);
}

void qsmmu_resume(QSMMU *s, uint32_t sid, uint16_t stag, int action)
{
    /* As Linux 6.12: SID and STAG only, no CMD_SYNC */
    qsmmu_cmd(s, CMD_RESUME | ((uint64_t)action << 12) |
              ((uint64_t)sid << 32), stag);
}

void qsmmu_resume_batch(QSMMU *s, uint32_t sid, const uint16_t *stags,
                        int n, int action)
{
    int i;

    g_assert(n < (1 << s->cmdq_log2));
    for (i = 0; i < n; i++) {
        uint32_t idx = s->cmdq_prod & ((1u << s->cmdq_log2) - 1);
        uint64_t addr = s->cmdq + idx * 16;

        qtest_writeq(s->qts, addr, CMD_RESUME | ((uint64_t)action << 12) |
                     ((uint64_t)sid << 32));
        qtest_writeq(s->qts, addr + 8, stags[i]);
        s->cmdq_prod = (s->cmdq_prod + 1) & ((2u << s->cmdq_log2) - 1);
    }
    qsmmu_writel(s, R_CMDQ_PROD, s->cmdq_prod);
}

void qsmmu_set_evtq(QSMMU *s, uint64_t base, int log2)
{
    qsmmu_writel(s, R_CR0, CR0_CMDQEN | CR0_SMMUEN);
    qsmmu_writeq(s, R_EVENTQ_BASE, base | log2);
    qsmmu_writel(s, R_EVENTQ_PROD, 0);
    qsmmu_writel(s, R_EVENTQ_CONS, 0);
    s->evtq = base;
    s->evtq_log2 = log2;
    s->evtq_cons = 0;
    qsmmu_writel(s, R_CR0, CR0_CMDQEN | CR0_EVENTQEN | CR0_SMMUEN);
}

void qsmmu_stall_term(QSMMU *s, uint32_t sid)
{
    qsmmu_cmd(s, CMD_STALL_TERM | ((uint64_t)sid << 32), 0);
    qsmmu_cmd_sync(s);
}

uint32_t qsmmu_gerror(QSMMU *s)
{
    return qsmmu_readl(s, R_GERROR) ^ qsmmu_readl(s, R_GERRORN);
}

bool qsmmu_cmdq_error(QSMMU *s)
{
    return (qsmmu_gerror(s) & QSMMU_GERROR_CMDQ_ERR) ||
           ((qsmmu_readl(s, R_CMDQ_CONS) >> 24) & 0x7f);
}

bool qsmmu_pop_event(QSMMU *s, uint64_t evt[4])
{
    uint32_t prod = qsmmu_readl(s, R_EVENTQ_PROD);
    uint32_t mask = (2u << s->evtq_log2) - 1;
    uint32_t idx;
    int i;

    if ((prod & mask) == (s->evtq_cons & mask)) {
        return false;
    }
    idx = s->evtq_cons & ((1u << s->evtq_log2) - 1);
    for (i = 0; i < 4; i++) {
        evt[i] = qtest_readq(s->qts, s->evtq + idx * 32 + i * 8);
    }
    s->evtq_cons = (s->evtq_cons + 1) & mask;
    /* Keep OVACKFLG: overflows are acknowledged by the caller */
    qsmmu_writel(s, R_EVENTQ_CONS, s->evtq_cons |
                 (qsmmu_readl(s, R_EVENTQ_CONS) & EVENTQ_CONS_OVACKFLG));
    return true;
}
