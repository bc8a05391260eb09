/*
 * libqos driver for the PLDMA engine (docs/specs/pldma.rst): register
 * access, rings and descriptors, remote keys, queue pairs
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef LIBQOS_PLDMA_H
#define LIBQOS_PLDMA_H

#include "../libqtest.h"
#include "hw/misc/pldma-regs.h"

/* One PLDMA, at @base of @qts's address space */
typedef struct QPldma {
    QTestState *qts;
    uint64_t base;
} QPldma;

void qpldma_init(QPldma *d, QTestState *qts, uint64_t base);
uint32_t qpldma_rd(QPldma *d, uint32_t off);
void qpldma_wr(QPldma *d, uint32_t off, uint32_t val);
uint32_t qpldma_ch_rd(QPldma *d, int ch, uint32_t off);
void qpldma_ch_wr(QPldma *d, int ch, uint32_t off, uint32_t val);
uint32_t qpldma_ncnt(QPldma *d, int i);
/* Channel @ch's counter @cnt (PLDMA_CNT_*) */
uint32_t qpldma_ch_cnt(QPldma *d, int ch, uint32_t cnt);
/*
 * Poll channel @ch's CH_STATE until it is @state, calling @step (may be
 * NULL) between polls, at most @tries times; asserts that it got there
 */
void qpldma_wait_state(QPldma *d, int ch, uint32_t state,
                       void (*step)(void *), void *opaque, int tries);

/*
 * A descriptor ring of channel @ch, at guest physical @pa, which the
 * device reaches at @va (@pa without an IOMMU)
 */
typedef struct QPldmaRing {
    int ch;
    uint64_t pa;
    uint64_t va;
    uint32_t size;
    uint32_t tail;
} QPldmaRing;

/* Reset, bind (@pasid_reg, CHB_PASID format) and enable a ring */
void qpldma_ring_init(QPldma *d, QPldmaRing *r, int ch, uint64_t pa,
                      uint32_t size, uint32_t pasid_reg);
/* Same, for a ring the device reaches at @va (RING_BASE) */
void qpldma_ring_init_at(QPldma *d, QPldmaRing *r, int ch, uint64_t pa,
                         uint64_t va, uint32_t size, uint32_t pasid_reg);
/* Copy one descriptor to the ring and move TAIL */
void qpldma_ring_post(QPldma *d, QPldmaRing *r, const uint8_t *desc);
/* Fill @desc (PLDMA_DESC_SIZE bytes) with a COPY, no flags */
void qpldma_desc_copy(uint8_t *desc, uint32_t len, uint64_t src,
                      uint64_t dst, uint64_t compl, uint64_t cookie);
/* Fill @desc (PLDMA_DESC_SIZE bytes) with an RDMA WRITE or READ */
void qpldma_desc_rdma(uint8_t *desc, uint8_t op, uint32_t len,
                      uint64_t local, uint64_t rva, uint32_t rkey,
                      uint64_t compl);
/*
 * Poll the completion record at @compl until its status is set, calling
 * @step (may be NULL) between polls, at most @tries times; returns the
 * status (PLDMA_ST_PENDING when it never came) and the bytes in @bytes.
 */
uint32_t qpldma_wait_compl(QPldma *d, uint64_t compl, void (*step)(void *),
                           void *opaque, int tries, uint64_t *bytes);
/*
 * Wait (calling @step between polls, at most @tries times) for the next
 * record of the fault queue at guest address @fq of @entries records, copy
 * it to @rec (PLDMA_FR_SIZE bytes) and consume it (FQ_HEAD + 1).
 */
void qpldma_fq_pop(QPldma *d, uint64_t fq, uint32_t entries, uint8_t *rec,
                   void (*step)(void *), void *opaque, int tries);

/*
 * Register key @idx (PD tag 0, or @pd_tag); returns KEY_STATUS, the rkey
 * in @rkey
 */
uint32_t qpldma_key_register(QPldma *d, uint32_t idx, uint32_t pasid_reg,
                             uint64_t va, uint64_t len, uint32_t access,
                             uint32_t *rkey);
uint32_t qpldma_key_register_pd(QPldma *d, uint32_t idx, uint32_t pasid_reg,
                                uint32_t pd_tag, uint64_t va, uint64_t len,
                                uint32_t access, uint32_t *rkey);
void qpldma_key_cmd(QPldma *d, uint32_t idx, uint32_t cmd);

/* Queue pair attributes, as the QP_* staging registers hold them */
typedef struct QPldmaQPAttr {
    uint32_t state;
    uint32_t sq;
    uint32_t pd;
    uint32_t pd_tag;        /* with PLDMA_QPA_PD */
    uint32_t access;
    uint32_t dest_qpn;
    uint32_t dest_ip;
    uint8_t dest_mac[6];
    uint32_t sq_psn;
    uint32_t rq_psn;
    uint32_t path_mtu;
    uint32_t timers;
    uint64_t rq_base;       /* PLDMA_QPA_RQ */
    uint32_t rq_size;
    uint32_t send_cq;       /* PLDMA_QPA_CQ */
    uint32_t recv_cq;
    uint32_t srq;           /* PLDMA_QPA_SRQ: an SRQ index */
    uint32_t type;          /* PLDMA_QPA_TYPE: PLDMA_QP_TYPE_* */
    uint32_t qkey;          /* PLDMA_QPA_QKEY (UD) */
} QPldmaQPAttr;

/* Stage the attributes of @mask and MODIFY QP @idx; returns QP_STATUS */
uint32_t qpldma_qp_modify(QPldma *d, uint32_t idx, uint32_t mask,
                          const QPldmaQPAttr *a);
/* QUERY QP @idx into @a */
void qpldma_qp_query(QPldma *d, uint32_t idx, QPldmaQPAttr *a);
uint32_t qpldma_qp_state(QPldma *d, uint32_t idx);
uint32_t qpldma_qpn(QPldma *d, uint32_t idx);

/*
 * One end of an RC connection: QP @qp of @d, its send queue channel @sq,
 * its PD @pd (CHB_PASID format), the PSN of its first message @psn and
 * its timers (PLDMA_QPT_MAKE(); 0 takes QPLDMA_QP_TIMERS)
 */
typedef struct QPldmaQPEnd {
    QPldma *d;
    uint32_t qp;
    int sq;
    uint32_t pd;
    uint32_t psn;
    uint32_t timers;
} QPldmaQPEnd;

/*
 * Retry 7, RNR retry 7 (for ever), minimum RNR timer 14 (1.28 ms), ACK
 * timeout 0 (the device's retransmit-timeout)
 */
#define QPLDMA_QP_TIMERS    PLDMA_QPT_MAKE(7, 7, 14, 0)

/*
 * Connect @a and @b to each other (the addresses are the devices' NET_IP
 * and MAC), remote WRITE and READ allowed, path MTU @path_mtu
 * (PLDMA_MTU_*): RESET -> INIT -> RTR -> RTS on both, each step checked
 */
void qpldma_qp_connect_pair(const QPldmaQPEnd *a, const QPldmaQPEnd *b,
                            uint32_t path_mtu);
/* Connect @e to a peer that is no device (a test speaking RoCEv2) */
void qpldma_qp_connect_to(const QPldmaQPEnd *e, uint32_t dest_qpn,
                          uint32_t dest_ip, const uint8_t *dest_mac,
                          uint32_t rq_psn, uint32_t path_mtu);
/* QP @idx of @d to RESET (a new QPN), checked */
void qpldma_qp_reset(QPldma *d, uint32_t idx);
/* Create CQ @idx on @base (@size entries, PD @pd); returns CQ_STATUS */
uint32_t qpldma_cq_create(QPldma *d, uint32_t idx, uint64_t base,
                          uint32_t size, uint32_t pd);
uint32_t qpldma_cq_destroy(QPldma *d, uint32_t idx);
/* CQ_STATE, CQ_PI, CQ_CI of CQ @idx */
uint32_t qpldma_cq_reg(QPldma *d, uint32_t idx, uint32_t reg);
/* Ring the CQ doorbell on channel @ch's page */
void qpldma_cq_db(QPldma *d, int ch, uint32_t cmd, uint32_t cq, uint32_t ci);
/*
 * A CQ as its consumer sees it: the ring at @pa, @size entries, the
 * consumer index.  qpldma_cq_poll() copies the next CQE (owner bit of the
 * current pass set) to @cqe (PLDMA_CQE_SIZE bytes) and consumes it.
 */
typedef struct QPldmaCQ {
    uint32_t idx;
    uint64_t pa;
    uint32_t size;
    uint32_t ci;
} QPldmaCQ;
bool qpldma_cq_poll(QPldma *d, QPldmaCQ *cq, uint8_t *cqe);
/* Write a receive WQE at @pa: @wr_id, @nsge entries of @addr/@len */
void qpldma_rwqe(QTestState *qts, uint64_t pa, uint64_t wr_id,
                 uint32_t nsge, const uint64_t *addr, const uint32_t *len);

/* The NIC's MAC (NET_MAC_LO/HI) */
void qpldma_mac(QPldma *d, uint8_t *mac);

/*
 * A link between QEMUs (or a QEMU and the test): -netdev stream, id n0,
 * over a unix socket in a temporary directory of its own
 */
typedef struct QPldmaLink {
    char *dir;
    char *sock;
} QPldmaLink;

/* Make the directory (from template @tmpl, "name-XXXXXX") and socket path */
void qpldma_link_init(QPldmaLink *l, const char *tmpl);
/* The -netdev argument of the listening (@server) or the connecting side */
char *qpldma_link_netdev(QPldmaLink *l, bool server);
/* Connect a socket of the test to the listening side; returns the fd */
int qpldma_link_connect(QPldmaLink *l);
/* Remove the socket and the directory (empty but for the socket) */
void qpldma_link_cleanup(QPldmaLink *l);
/* Wait until @qts's stream netdev is connected (frames before are lost) */
void qpldma_link_wait(QTestState *qts);

/* Send one frame on @fd in -netdev stream's framing (length, frame) */
void qpldma_stream_send(int fd, const uint8_t *f, uint32_t len);
/* Receive one frame of at most @max bytes, or 0 if none comes in ~1 s */
uint32_t qpldma_stream_recv(int fd, uint8_t *f, uint32_t max);

/* A RoCEv2 frame: Ethernet, IPv4, UDP 4791, BTH (AckReq set) ... ICRC */
typedef struct QPldmaRoce {
    const uint8_t *dst_mac, *src_mac;
    uint32_t src_ip, dst_ip;
    uint8_t op;
    uint32_t qpn, psn;
    bool deth;              /* DETH (UD): @qkey, @src_qpn */
    uint32_t qkey, src_qpn;
    bool reth;              /* RETH: @va, @rkey, @dmalen */
    uint64_t va;
    uint32_t rkey, dmalen;
    int aeth_syn;           /* AETH if >= 0: syndrome, @msn */
    uint32_t msn;
    const uint8_t *pl;      /* payload, padded to 4 bytes */
    uint32_t plen;
} QPldmaRoce;

/* Fill guest memory [pa, pa + len) with random bytes; returns a copy */
uint8_t *qpldma_mem_random(QTestState *qts, uint64_t pa, size_t len);
/* Assert that guest memory [pa, pa + len) holds @want */
void qpldma_mem_check(QTestState *qts, uint64_t pa, const uint8_t *want,
                      size_t len);
/* Whether guest memory [pa, pa + len) is all zero */
bool qpldma_mem_zero(QTestState *qts, uint64_t pa, size_t len);

/* Build @r into @f (room for 14 + 20 + 8 + 40 + plen + 8); returns length */
uint32_t qpldma_roce_frame(uint8_t *f, const QPldmaRoce *r);

/*
 * Wait for the migration of @qts (source or destination) to end: true when
 * it completed, false when it failed; still running after @seconds fails
 * the test
 */
bool qpldma_migration_wait(QTestState *qts, unsigned int seconds);
/*
 * Migrate @qts into a new temporary file (named after @tmpl, "name-XXXXXX")
 * and wait for it to complete; returns the file's path (g_free() it)
 */
char *qpldma_migrate_to_file(QTestState *qts, const char *tmpl);
/*
 * Load the migration stream at @path into @dst (started with -incoming
 * defer): true when it completed, false when @dst refused it
 */
bool qpldma_migrate_from_file(QTestState *dst, const char *path);

#endif
