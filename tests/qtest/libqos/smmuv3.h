/*
 * libqos helpers for the SMMUv3: stream tables, context descriptors,
 * stage-1 page tables, command and event queues in guest memory
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Everything is built with qtest accesses in a window of guest RAM that
 * the caller reserves for the SMMU's structures (and for test buffers,
 * see qsmmu_alloc()).  The SMMU executes commands synchronously when
 * CMDQ_PROD is written, so no helper ever waits.
 */

#ifndef QTEST_LIBQOS_SMMUV3_H
#define QTEST_LIBQOS_SMMUV3_H

#include "../libqtest.h"

/* virt board */
#define QSMMU_VIRT_BASE         0x09050000ULL

/* Event record types */
#define QSMMU_EVT_C_BAD_SUBSTREAMID 0x08
#define QSMMU_EVT_C_BAD_CD          0x0a
#define QSMMU_EVT_F_TRANSLATION     0x10
#define QSMMU_EVT_F_PERMISSION      0x13

/* Event record fields */
#define QSMMU_EVT_TYPE(e)   ((e)[0] & 0xff)
#define QSMMU_EVT_SSV(e)    (((e)[0] >> 11) & 1)
#define QSMMU_EVT_SSID(e)   (((e)[0] >> 12) & 0xfffff)
#define QSMMU_EVT_SID(e)    ((uint32_t)((e)[0] >> 32))
#define QSMMU_EVT_STAG(e)   ((e)[1] & 0xffff)
#define QSMMU_EVT_STALL(e)  (((e)[1] >> 31) & 1)
#define QSMMU_EVT_RNW(e)    (((e)[1] >> 35) & 1)
#define QSMMU_EVT_ADDR(e)   ((e)[2])

/* GERROR bits */
#define QSMMU_GERROR_CMDQ_ERR       (1u << 0)
#define QSMMU_GERROR_EVENTQ_ABT     (1u << 2)

/* STE.S1DSS */
#define QSMMU_S1DSS_TERMINATE   0
#define QSMMU_S1DSS_BYPASS      1
#define QSMMU_S1DSS_SSID0       2

/* STE.S1FMT */
#define QSMMU_S1FMT_LINEAR      0
#define QSMMU_S1FMT_64_4K       1

/* CMD_RESUME actions */
#define QSMMU_RESUME_TERM       0
#define QSMMU_RESUME_RETRY      1
#define QSMMU_RESUME_ABORT      2

/* Stage-1 page table: 4KB granule, 39-bit VA (T0SZ = 25), levels 1..3 */
#define QSMMU_PAGE_SIZE         0x1000ULL
#define QSMMU_VA_BITS           39

typedef struct QSMMU {
    QTestState *qts;
    uint64_t base;              /* MMIO base of the SMMU */
    uint64_t mem_next, mem_end; /* bump allocator in guest RAM */
    uint64_t strtab_l1;         /* 2-level stream table, SPLIT = 8 */
    uint64_t cmdq, evtq;
    uint32_t cmdq_prod;
    uint32_t evtq_cons;
    int cmdq_log2, evtq_log2;
} QSMMU;

/* Structures are allocated in guest RAM [@mem, @mem + @size) */
void qsmmu_init(QSMMU *s, QTestState *qts, uint64_t base,
                uint64_t mem, uint64_t size);
/* Zeroed guest memory, @align a power of two */
uint64_t qsmmu_alloc(QSMMU *s, uint64_t size, uint64_t align);

uint32_t qsmmu_readl(QSMMU *s, uint64_t off);
void qsmmu_writel(QSMMU *s, uint64_t off, uint32_t val);

/* Program the stream table and the queues and enable the SMMU */
void qsmmu_enable(QSMMU *s);

/*
 * Install a stage-1 STE for @sid pointing at the linear CD table @cdtab of
 * 2^@s1cdmax entries (0: a single CD), and issue CFGI_STE.
 */
void qsmmu_set_ste_s1(QSMMU *s, uint32_t sid, uint64_t cdtab, int s1cdmax,
                      int s1dss, bool s1stalld);
/* Same, with the CD table format @s1fmt (QSMMU_S1FMT_*) */
void qsmmu_set_ste_s1_fmt(QSMMU *s, uint32_t sid, uint64_t cdtab, int s1fmt,
                          int s1cdmax, int s1dss, bool s1stalld);
/* Install a bypass STE for @sid */
void qsmmu_set_ste_bypass(QSMMU *s, uint32_t sid);
/* A linear CD table of 2^@s1cdmax entries */
uint64_t qsmmu_cd_table(QSMMU *s, int s1cdmax);
/* Write CD @ssid of @cdtab (no invalidation command) */
void qsmmu_write_cd(QSMMU *s, uint64_t cdtab, uint32_t ssid, uint16_t asid,
                    uint64_t ttb, bool stall);
/*
 * A 2-level CD table with 4KB leaves (STE.S1FMT = QSMMU_S1FMT_64_4K, 64 CDs
 * per leaf) for 2^@s1cdmax CDs: returns the level-1 table, all invalid.
 */
uint64_t qsmmu_cd_table_2l(QSMMU *s, int s1cdmax);
/* Write CD @ssid of a 2-level table, allocating its leaf if needed */
void qsmmu_write_cd_2l(QSMMU *s, uint64_t l1tab, uint32_t ssid,
                       uint16_t asid, uint64_t ttb, bool stall);

/* A new, empty stage-1 page table; returns its TTB */
uint64_t qsmmu_pgtable_new(QSMMU *s);
/* Map the 4KB page at @va to @pa */
void qsmmu_map(QSMMU *s, uint64_t ttb, uint64_t va, uint64_t pa,
               bool writable);
/* Map [va, va + len) to freshly allocated RAM; returns its PA */
uint64_t qsmmu_map_new(QSMMU *s, uint64_t ttb, uint64_t va, uint64_t len,
                       bool writable);
void qsmmu_unmap(QSMMU *s, uint64_t ttb, uint64_t va);
/* Translate @va with the table (software walk), 0 if unmapped */
uint64_t qsmmu_va_to_pa(QSMMU *s, uint64_t ttb, uint64_t va);

/* Commands; each is executed when this returns */
void qsmmu_cmd(QSMMU *s, uint64_t dw0, uint64_t dw1);
void qsmmu_cmd_sync(QSMMU *s);
void qsmmu_cfgi_ste(QSMMU *s, uint32_t sid);
void qsmmu_cfgi_cd(QSMMU *s, uint32_t sid, uint32_t ssid);
void qsmmu_cfgi_all(QSMMU *s);
void qsmmu_tlbi_asid(QSMMU *s, uint16_t asid);
void qsmmu_tlbi_va(QSMMU *s, uint16_t asid, uint64_t va);
void qsmmu_resume(QSMMU *s, uint32_t sid, uint16_t stag, int action);
/* @n CMD_RESUMEs of (@sid, @stags[i]), published by one CMDQ_PROD write */
void qsmmu_resume_batch(QSMMU *s, uint32_t sid, const uint16_t *stags,
                        int n, int action);
/* Move the event queue to @base (2^@log2 entries), e.g. onto MMIO */
void qsmmu_set_evtq(QSMMU *s, uint64_t base, int log2);
void qsmmu_stall_term(QSMMU *s, uint32_t sid);
/* CMDQ_CONS.ERR and GERROR.CMDQ_ERR state */
bool qsmmu_cmdq_error(QSMMU *s);
/* The global errors active (GERROR ^ GERRORN), QSMMU_GERROR_* bits */
uint32_t qsmmu_gerror(QSMMU *s);

/* Pop the next event record into @evt (4 dwords); false if none */
bool qsmmu_pop_event(QSMMU *s, uint64_t evt[4]);

#endif /* QTEST_LIBQOS_SMMUV3_H */
