/*
 * Fixtures of the PLDMA qtests (pldma-test, pldma-net-test, pldma-qp-test)
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef TESTS_QTEST_PLDMA_FRAMEWORK_H
#define TESTS_QTEST_PLDMA_FRAMEWORK_H

#include "libqos/pldma.h"
#include "libqos/smmuv3.h"

#define PLDMA_BASE      0x0c000000ULL   /* first platform bus device */
#define RAM_BASE        0x40000000ULL
#define ALLOC_BASE      (RAM_BASE + 0x01000000ULL)
#define PAGE            0x1000ULL
#define STEP_NS         (500 * 1000)
#define WAIT_STEPS      40000
#define POLL_MAX        200000
#define IP_A            0x0a000001U
#define IP_B            0x0a000002U
#define IP_OTHER        0x0a000003U
/* a node's SMMU: libqos's window, PASID's tables */
#define SMMU_MEM        (RAM_BASE + 0x00100000ULL)
#define SMMU_MEM_SIZE   (15 * MiB)
#define SID             0x10000
#define CD_LOG2         4
#define ENGINE_CD_LOG2  8       /* the engine tests' processes */
#define NODE_PASIDS     (1 << ENGINE_CD_LOG2)
#define PASID           3
#define VA_BASE         0x4000000000ULL
/* IB timeout code 16: 4.096 us << 16 = 268 ms */
#define TIMERS          PLDMA_QPT_MAKE(7, 7, 1, 16)
#define ATOMIC_ETH      28      /* AtomicETH: VA, rkey, swap, compare */
/* the test's MAC as the peer of a node */
#define PEER_MAC        "\x52\x54\x00\x00\x00\x02"
#define CQ_SIZE         64
#define RQ_SIZE         16
#define IMM_WIRE        0x78563412U     /* bytes 12 34 56 78 on the wire */

/* One QEMU with a pldma on -M virt */
typedef struct Node {
    QTestState *qts;
    QPldma d;               /* the device's registers */
    char *args;             /* command line, for a migration target */
    bool smmu;              /* behind its SMMU */
    bool report;            /* ... in report mode */
    uint64_t next;          /* bump allocator for test buffers */
    QSMMU s;                /* SMMU tables (libqos/smmuv3) */
    uint64_t cd_table;
    uint64_t pt_root;       /* PASID's stage-1 tables */
    uint64_t fq;            /* the fault queue */
    uint64_t pasid_root[NODE_PASIDS];   /* each PASID's tables */
} Node;

/* Two nodes linked by -netdev stream: B (node 2) listens, A connects */
typedef struct Pair {
    Node a, b;
    bool timers;            /* step the virtual clocks while waiting */
    QPldmaLink link;
    char *pcap;             /* A's capture, in the link's directory */
    uint32_t a_timers;      /* the QPs' PLDMA_QPT_MAKE(), 0: the default */
    uint32_t b_timers;
    uint32_t path_mtu;      /* PLDMA_MTU_* of the connection */
} Pair;

/* How pair_start_args() starts a pair */
typedef struct PairArgs {
    const char *tmpl;           /* the link directory's template */
    bool a_smmu, b_smmu;        /* behind an SMMU, PASID's tables */
    const char *a_mode, *b_mode;    /* fault-mode, NULL: not given */
    const char *a_extra, *b_extra;  /* more properties, NULL: none */
    bool capture;               /* A's frames to p->pcap */
    bool fq_stall;              /* B's fault queue in stall mode too */
    bool connect;               /* check the link, connect QP 0 to QP 0 */
} PairArgs;

/* The test as the peer of a node's QP 0, on a socket */
typedef struct Peer {
    Node n;                 /* node 1, the device under test */
    int fd;
    QPldmaLink link;
    QPldma *d;              /* the device's */
    uint8_t mac[6];         /* the device's */
    uint32_t qpn;           /* its QP 0 */
    uint32_t my_qpn;        /* ours */
    uint32_t epsn;          /* what the device's QP expects of us */
    uint32_t sq_psn;        /* what the device's QP sends first */
    uint32_t timers;        /* its QP's, 0: the default */
    char *args;             /* the device's QEMU command line */
} Peer;

/* Parsed frame from the device */
typedef struct Rx {
    uint32_t dst_ip, src_ip, qpn, psn;
    uint8_t op;
    int syn;
    uint32_t msn;
    uint64_t va;
    uint32_t rkey, dmalen;
    uint32_t plen;          /* payload bytes */
    uint8_t data[4096];     /* the payload (its first 4 KiB) */
} Rx;

/* One end's CQs (send CQ 0, receive CQ 1), RQ and send queue */
typedef struct Side {
    QPldmaCQ scq, rcq;
    uint64_t rq;
    uint32_t rq_tail;
    uint32_t pd;
    QPldmaRing r;
} Side;

/* A shared receive queue of a node: its ring and doorbell record at pa */
typedef struct Srq {
    uint32_t idx, size, tail;
    uint64_t pa;
} Srq;

/* A descriptor ring of the engine, at its VA */
typedef struct Ring {
    int ch;
    uint64_t va, pa;
    uint32_t size, tail;
} Ring;

/* nodes */
uint64_t alloc_pa(Node *n, uint64_t size);
void node_start(Node *n, const char *args);
uint32_t ncnt(Node *n, int i);
uint64_t buffer(Node *n, uint64_t size, uint64_t *pa, int hole);
uint32_t node_pd(Node *n);

/* SMMU */
void node_smmu_init(Node *n, uint32_t cd_log2, bool report);
uint64_t node_smmu_pasid(Node *n, uint32_t pasid);
void node_fq_init(Node *n);
void smmu_setup(Node *n, bool stall, bool fq);

/* two nodes linked by -netdev stream */
void node_start_net(Node *n, const char *dev, const char *netdev,
                    bool smmu, const char *mode, const char *extra);
Pair *pair_start_args(const PairArgs *o);
Pair *pair_start_mode(bool b_smmu, bool stall);
Pair *pair_start_smmu(bool b_smmu);
Pair *pair_start(void);
Pair *pair_start_net_a(bool a_smmu, const char *a_mode, bool b_smmu,
                       const char *b_mode, const char *a_extra,
                       const char *b_extra, bool capture);
Pair *pair_start_net(bool b_smmu, const char *b_mode, const char *a_extra,
                     const char *b_extra, bool capture);
void pair_stop(Pair *p);
void step(void *opaque);

/* queue pairs */
uint32_t rand_psn(void);
void attr_to(QPldmaQPAttr *at, const uint8_t *mac, uint32_t ip,
             uint32_t qpn, uint32_t sq_psn, uint32_t rq_psn, int sq);
void qp_connect(Node *n, uint32_t idx, QPldmaQPAttr *at);
void qp_reset(Node *n, uint32_t idx);
void pair_connect_pd(Pair *p, uint32_t *a_psn, uint32_t *b_psn,
                     uint32_t b_pd);
void pair_connect(Pair *p, uint32_t *a_psn, uint32_t *b_psn);
uint64_t post_rsvd(Node *n, QPldmaRing *r, uint8_t op, uint16_t rsvd,
                   uint32_t len, uint64_t local, uint64_t rva,
                   uint32_t rkey);
uint64_t post(Node *n, QPldmaRing *r, uint8_t op, uint32_t len,
              uint64_t local, uint64_t rva, uint32_t rkey);
uint32_t wait_compl(Pair *p, uint64_t compl, uint64_t *bytes);
void ring_init(Node *n, QPldmaRing *r, int ch);
uint32_t key_register(Node *n, uint32_t idx, uint32_t pasid_reg,
                      uint64_t va, uint64_t len, uint32_t access);
void snapshot(Node *n, uint32_t idx, QPldmaQPAttr *at, uint32_t *qpn);
void refused(Node *n, uint32_t idx, uint32_t mask,
             const QPldmaQPAttr *at, uint32_t status);
void pop_remote_fault(Pair *p, uint32_t rkey, uint64_t va,
                      uint32_t off, bool is_write, bool pasid);

/* a hostile peer: the test itself on the other end of the link */
uint32_t roce_frame(uint8_t *f, uint32_t src, uint8_t op, uint32_t qpn,
                    uint32_t psn, bool reth, uint64_t va, uint32_t rkey,
                    uint32_t dmalen, int aeth_syn, uint32_t msn,
                    const uint8_t *pl, uint32_t plen);
void peer_inject(Peer *pe, const uint8_t *f, uint32_t len);
bool peer_rx(Peer *pe, Rx *rx);
int peer_answer(Peer *pe, uint32_t *psn, uint32_t *msn);
void peer_listen(Peer *pe, Node *n, const char *tmpl, const char *dev);
void peer_stop(Peer *pe, Node *n);
void peer_open_props(Peer *pe, uint32_t access, bool smmu,
                     const char *props);
void peer_reconnect(Peer *pe, uint32_t access);
void peer_open_smmu(Peer *pe, uint32_t access, bool smmu);
void peer_open(Peer *pe, uint32_t access);
void peer_step(void *opaque);
void peer_close(Peer *pe);
uint32_t unmapped_key(Peer *pe, uint32_t idx, uint64_t pa, uint64_t *va,
                      uint32_t access);
uint32_t atomic_req(uint8_t *f, Peer *pe, uint8_t op, uint32_t psn,
                    uint64_t va, uint32_t rkey, uint64_t swap_add,
                    uint64_t compare);
uint32_t atomic_ack(uint8_t *f, Peer *pe, uint32_t src, uint32_t psn,
                    uint64_t orig);
void desc_atomic(uint8_t *d, uint8_t op, uint64_t dst, uint64_t rva,
                 uint32_t rkey, uint64_t cmp_add, uint64_t swap,
                 uint64_t compl);
uint32_t write_only(uint8_t *f, Peer *pe, uint32_t src, uint32_t qpn,
                    uint32_t psn, uint64_t va, uint32_t rkey,
                    const uint8_t *pl, uint32_t len);

/* CQs, receive queues */
void cq_make(Node *n, QPldmaCQ *cq, uint32_t idx, uint32_t size,
             uint32_t pd);
void side_init_at(Node *n, Side *sd, uint32_t pd, uint32_t cq,
                  uint32_t scq_size, uint32_t rcq_size, int ch);
void side_init_cqs(Node *n, Side *sd, uint32_t pd, uint32_t scq_size,
                   uint32_t rcq_size);
void side_init(Node *n, Side *sd, uint32_t pd, uint32_t scq_size);
void qp_connect_cq(Node *n, uint32_t idx, QPldmaQPAttr *at, Side *sd);
void pair_connect_cq(Pair *p, Side *sa, Side *sb, uint32_t b_pd,
                     uint32_t a_scq_size);
void pair_reconnect_cq(Pair *p, Side *sa, Side *sb);
void post_recv(Node *n, Side *sd, uint64_t wr_id, uint32_t nsge,
               const uint64_t *addr, const uint32_t *len);
uint64_t post_op(Node *n, Side *sd, uint8_t op, uint8_t flags,
                 uint32_t len, uint64_t src, uint64_t rva,
                 uint32_t rkey, uint32_t imm, uint64_t cookie);
void wait_cqe(Pair *p, Node *n, QPldmaCQ *cq, uint8_t *cqe);
void peer_cqe(Peer *pe, QPldmaCQ *cq, uint8_t *cqe);
int loop_node_start(Node *n, QPldmaLink *link, const char *tmpl);
void qp_connect_uc(Node *n, uint32_t idx, QPldmaQPAttr *at, Side *sd);
/* A UD datagram's address vector (PLDMA_DESC_UD_*) */
typedef struct UdAv {
    uint8_t dmac[6];
    uint32_t dip;
    uint32_t dqpn;
    uint32_t qkey;
} UdAv;
void qp_connect_ud(Node *n, uint32_t idx, uint32_t sq, uint32_t qkey,
                   Side *sd);
uint64_t post_ud(Node *n, Side *sd, uint8_t op, uint32_t len, uint64_t src,
                 const UdAv *av, uint32_t imm, uint64_t cookie);
uint32_t srq_create(Node *n, uint32_t idx, uint64_t base,
                    uint32_t size, uint32_t pd, uint32_t tag);
uint32_t srq_cmd(Node *n, uint32_t idx, uint32_t cmd, uint32_t limit);
uint32_t srq_reg(Node *n, uint32_t idx, uint32_t reg);
uint64_t srq_rec(const Srq *q);
void srq_make(Node *n, Srq *q, uint32_t idx, uint32_t size, uint32_t pd);
void srq_post(Node *n, Srq *q, uint64_t wr_id, uint64_t addr,
              uint32_t len);
uint32_t srq_head(Node *n, const Srq *q);
void qp_connect_srq(Node *n, uint32_t idx, QPldmaQPAttr *at, Side *sd,
                    uint32_t rcq, uint32_t srq);
void check_cqe(const uint8_t *e, uint64_t wr_id, uint8_t opcode,
               uint8_t status, uint32_t bytes, uint32_t qpn,
               uint32_t src_qp, uint8_t flags, uint32_t imm,
               uint32_t vendor);

/* the link: QP 0 to QP 0 from PSN 0, A's capture */
void pair_connect_zero(Pair *p);
void pair_reconnect(Pair *p, QPldmaRing *r);
char *capture_decode(Pair *p);

/* the engine on one node: its own descriptor rings, the SMMU in stall mode */
void smmu_resume(Node *t, uint16_t stag, int resp);
uint16_t smmu_wait_stall(Node *t, uint32_t pasid, uint64_t va);
void map_page(Node *t, uint32_t pasid, uint64_t va, uint64_t pa);
void unmap_page(Node *t, uint32_t pasid, uint64_t va);
uint64_t buf(Node *t, uint32_t pasid, uint64_t va, uint64_t size,
             bool mapped);
void engine_ring_init(Node *t, Ring *r, int ch, uint32_t pasid, uint64_t va,
                      uint32_t size);
void desc_put(Node *t, Ring *r, uint8_t op, uint32_t len, uint64_t src,
              uint64_t dst, uint64_t pattern, uint64_t compl,
              uint64_t cookie);
void ring_kick(Node *t, Ring *r);
uint32_t wait_state(Node *t, int ch, uint32_t want);
uint32_t engine_wait_compl(Node *t, uint64_t pa, uint64_t *bytes,
                           uint64_t *fault_va);
void fill_random(Node *t, uint64_t pa, size_t len, uint8_t **out);
void check_mem(Node *t, uint64_t pa, const uint8_t *expect, size_t len);
Node *engine_start(const char *mode, bool smmu, const char *extra);
void engine_stop(Node *t);
bool engine_migrate(Node *t);

/* the test files, by subject */
void pldma_engine_copy_register(void);
void pldma_engine_stall_register(void);
void pldma_engine_report_register(void);
void pldma_engine_timing_register(void);
void pldma_net_transfer_register(void);
void pldma_net_fault_register(void);
void pldma_net_nodes_register(void);
void pldma_net_peer_register(void);
void pldma_qp_state_register(void);
void pldma_qp_transfer_register(void);
void pldma_qp_peer_register(void);
void pldma_qp_read_register(void);
void pldma_qp_cq_register(void);
void pldma_qp_recv_register(void);
void pldma_qp_loopback_register(void);
void pldma_qp_migration_register(void);

#endif
