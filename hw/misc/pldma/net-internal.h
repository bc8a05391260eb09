/*
 * PLDMA's RDMA link: what its files share (net.c, the port; hdr.c,
 * req.c, comp.c, resp.c, resp-fault.c, rq.c, keys.c, net-vmstate.c), and
 * nothing the engine's core needs (that is in pldma-internal.h)
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_MISC_PLDMA_NET_INTERNAL_H
#define HW_MISC_PLDMA_NET_INTERNAL_H

#include "pldma-internal.h"

/*
 * The requester side of a channel's RDMA WRITE or READ
 * (hw/misc/pldma/req.c, comp.c).
 * ch->done counts the bytes sent (WRITE) or received (READ); Go-back-N
 * moves it back to what the responder has acknowledged.
 */
typedef struct PLDMANetReq {
    uint32_t rkey;
    uint64_t rva;           /* remote VA of the message */
    uint32_t psn;           /* PSN of the message's first segment */
    uint32_t nsegs;         /* segments (PSNs) the message takes */
    uint64_t acked;         /* bytes acknowledged (WRITE) */
    uint64_t sent_hw;       /* bytes ever sent: below that is a resend */
    uint32_t retries;       /* timer expiries without progress */
    uint32_t rnr_retries;   /* RNR NAKs without progress */
    bool wait;              /* nothing to send until an answer or timer */
    bool rnr;               /* RNR NAK: wait for the timer or a resume */
    bool gap;               /* READ: asked again for a missing response */
    bool txq;               /* waits for the link to take frames again */
    uint32_t rnr_us;        /* the RNR timer of the last RNR NAK */
    uint64_t rd_end;        /* READ: end of the window last requested */
    /* the path: the QP whose send queue the channel is */
    uint8_t qp;             /* 1 + its index; 0: no remote operation */
    uint32_t qp_gen;        /* ... and its generation when it started */
    uint32_t mtu;           /* payload bytes per segment */
    uint32_t rto_us;        /* retransmit timeout */
    uint32_t retry_count;
    uint32_t rnr_retry;
    uint32_t end_psn;       /* PSN of the next message once it ends */
    bool ok;                /* the message completed SUCCESS */
    uint32_t imm;           /* _IMM opcodes: DESC_IMM, wire byte order */
    bool se;                /* DF_SOLICITED: the BTH SE bit of the last */
    /* an atomic: its operands, and the value its response returned */
    uint64_t at_cmp_add;    /* DESC_ATOMIC_CMP_ADD */
    uint64_t at_swap;       /* DESC_ATOMIC_SWAP */
    bool at_have;           /* the response came: at_orig to write */
    uint64_t at_orig;
    uint32_t flush;         /* FLUSH: DESC_FLUSH */
    /* a UD SEND: its address vector (PLDMA_DESC_UD_*) */
    uint8_t ud_dmac[6];
    uint32_t ud_dip;
    uint32_t ud_qkey;
    uint32_t ud_dqpn;
} PLDMANetReq;

/* A remote key: a range of a PASID's address space, remote access bits */
typedef struct PLDMAKey {
    uint32_t gen;           /* random 24 bits, new at each register */
    bool valid;
    uint32_t pasid_reg;     /* PLDMA_CHB_PASID format */
    uint32_t pd_tag;        /* its PD within the PASID (KEY_PD) */
    uint64_t va;
    uint64_t len;
    uint32_t access;        /* PLDMA_KEY_ACC_* */
    /*
     * A responder fault of the key's window is out as a fault record and
     * not answered yet (KEY_CMD_RESOLVED/FAILED): until then, or until
     * fault_deadline (QEMU_CLOCK_VIRTUAL, ns), accesses through the key
     * wait for that answer; other keys and connections go on.
     */
    bool fault;
    int64_t fault_deadline;
} PLDMAKey;

/*
 * Responder state of one connection: QP i's is s->net->conns[i], cleared
 * when the QP enters RTR and when it leaves RTR/RTS.
 */
/* READ requests a QP's responder remembers (pldma-regs.h) */
#define PLDMA_NET_RD_ORIG   PLDMA_QP_MAX_RD_ATOMIC

typedef struct PLDMANetConn {
    uint32_t epsn;          /* next PSN expected */
    bool nak_seq;           /* a sequence NAK for epsn is outstanding */
    bool fault;             /* a fault of this connection is being fixed */
    bool stalled;           /* ... as a stall in the SMMU (stag) */
    uint16_t stag;
    uint8_t fault_key;      /* key index of the fault */
    uint32_t fault_psn;     /* PSN of the segment or response that faulted */
    int64_t fault_deadline; /* a reported fault ends in error then (ns) */
    bool rd_hold;           /* the READ response stream waits for the fault */
    /* current WRITE message, from its First/Only segment */
    bool msg_valid;
    uint32_t msg_psn;
    uint32_t msg_nsegs;
    uint64_t msg_va;
    uint32_t msg_len;
    uint32_t msg_rkey;
    /* READ being answered: responses left to send, from the BH */
    bool rd_active;
    uint32_t rd_psn;        /* PSN of the next response */
    uint32_t rd_first_psn;  /* PSN of the request */
    uint64_t rd_va;         /* remote VA of the request's first byte */
    uint32_t rd_len;
    uint32_t rd_off;
    uint32_t rd_rkey;
    uint32_t msn;           /* messages completed (AETH MSN) */
    /*
     * QP: the receive WQE of the SEND message being received, or of the
     * WRITE with immediate at its Last/Only (hw/misc/pldma/recv.c), read
     * at rq_head and consumed when the message ends
     */
    bool rmsg_valid;        /* a SEND message is in progress */
    bool imm_wqe;           /* the WQE is taken by a WRITE with immediate */
    uint32_t rmsg_psn;      /* PSN of the SEND's First */
    uint32_t rmsg_off;      /* bytes of it received */
    uint64_t rwqe_id;
    uint64_t rwqe_total;    /* bytes its scatter entries hold */
    uint32_t rwqe_nsge;
    uint64_t rwqe_addr[PLDMA_RWQE_MAX_SGE];
    uint32_t rwqe_len[PLDMA_RWQE_MAX_SGE];
    /*
     * a QP with an SRQ: the WQE above was taken from the SRQ and is this
     * QP's until it completes (used again by a retried packet, flushed
     * when the QP enters ERR)
     */
    bool rwqe_held;
    bool fault_recv;        /* the fault is on a receive WQE's buffer */
    bool rq_rnr;            /* an RNR NAK for an empty RQ is outstanding */
    /* UC: a message was dropped; so is all up to the next First or Only */
    bool uc_drop;
    /*
     * QP: the last PLDMA_NET_RD_ORIG READ requests taken (IBA's responder
     * READ resources): a duplicate READ is served only inside one of them
     */
    uint32_t rdo_psn[PLDMA_NET_RD_ORIG];
    uint64_t rdo_va[PLDMA_NET_RD_ORIG];
    uint32_t rdo_len[PLDMA_NET_RD_ORIG];    /* 0: an empty entry ... */
    uint16_t rdo_zero;      /* ... unless its bit here: a zero-length READ */
    uint32_t rdo_rkey[PLDMA_NET_RD_ORIG];
    uint8_t rdo_next;       /* the entry the next READ takes */
    /*
     * QP: the last PLDMA_NET_RD_ORIG atomics executed (their PSN and the
     * value they found): a duplicate is answered from here, never
     * executed again (IBA 9.4.5, C9-97)
     */
    uint16_t ato_valid;     /* a bit per entry */
    uint8_t ato_next;
    uint32_t ato_psn[PLDMA_NET_RD_ORIG];
    uint64_t ato_orig[PLDMA_NET_RD_ORIG];
    /*
     * QP: READ requests taken while another's responses are being sent
     * (rd_*), answered in the order they came: at most
     * PLDMA_NET_RD_ORIG - 1 wait, [rdq_head, rdq_head + rdq_n)
     */
    uint8_t rdq_head;
    uint8_t rdq_n;
    uint16_t rdq_fresh;     /* a bit per entry: not a duplicate */
    bool rd_fresh;          /* rd_* is no duplicate: it counts in the MSN */
    uint32_t rdq_psn[PLDMA_NET_RD_ORIG];
    uint64_t rdq_va[PLDMA_NET_RD_ORIG];
    uint32_t rdq_len[PLDMA_NET_RD_ORIG];
    uint32_t rdq_rkey[PLDMA_NET_RD_ORIG];
    /*
     * WRITE segments held behind the fault being resolved, applied when
     * it is (net.c, "parking"); not migrated
     */
    struct PLDMANetPark *park;
} PLDMANetConn;

/*
 * An RC queue pair (hw/misc/pldma/qp.c): attributes as the QP_* staging
 * registers hold them.  Its responder state is s->net->conns[index]; its
 * send queue is channel sq, which it takes at RESET->INIT
 * and holds until it is back in RESET (a QP that went RESET->ERR holds
 * none: PLDMA_QP_NO_SQ).
 */
#define PLDMA_QP_NO_SQ      UINT32_MAX
typedef struct PLDMAQP {
    uint32_t state;         /* PLDMA_QPS_* */
    uint32_t gen;           /* QPN[23:8]: new at every entry into RESET */
    uint32_t sq;            /* taken at RESET->INIT; PLDMA_QP_NO_SQ before */
    uint32_t pd;            /* PASID register (CHB_PASID format) */
    uint32_t pd_tag;        /* ... and the PD within it (QP_PD_TAG) */
    uint32_t access;        /* PLDMA_KEY_ACC_* */
    uint32_t dest_qpn;
    uint32_t dest_ip;
    uint32_t dest_mac_lo;
    uint32_t dest_mac_hi;
    uint32_t sq_psn;        /* PSN of the next message sent */
    uint32_t rq_psn;
    uint32_t path_mtu;      /* PLDMA_MTU_* */
    uint32_t timers;        /* PLDMA_QPT_* */
    /* receive queue and CQs (CAP.CQ, hw/misc/pldma/rq.c, cq.c) */
    uint64_t rq_base;
    uint32_t rq_size;       /* entries, 0: no receive queue */
    uint32_t rq_head;       /* next receive WQE to consume */
    uint32_t rq_tail;       /* one past the last posted (CH_RQ_TAIL) */
    uint32_t send_cq;       /* CQ index or PLDMA_CQ_NONE */
    uint32_t recv_cq;
    /*
     * the SRQ it receives from instead of an RQ (srq.c): its index + 1,
     * 0 for none (QP_SRQ reads it back as the index or PLDMA_SRQ_NONE)
     */
    uint32_t srq;
    uint32_t type;          /* PLDMA_QP_TYPE_* (QP_TYPE) */
    uint32_t qkey;          /* UD: its Q_Key (QP_QKEY) */
} PLDMAQP;

/*
 * A shared receive queue (hw/misc/pldma/srq.c): a ring of PLDMA_RWQE_SIZE
 * entries in DMA memory without PASID, then its doorbell record
 */
typedef struct PLDMASRQ {
    uint32_t state;         /* PLDMA_SRQS_* */
    uint64_t base;
    uint32_t size;          /* entries, a power of two */
    uint32_t pd;            /* PASID register (CHB_PASID format) */
    uint32_t pd_tag;
    uint32_t head;          /* next WQE to take */
    uint32_t tail;          /* the record's TAIL when last read */
    uint32_t limit;         /* armed limit, 0: not armed (staging: LIMIT) */
} PLDMASRQ;

/*
 * A completion queue (hw/misc/pldma/cq.c): a ring of PLDMA_CQE_SIZE
 * entries in DMA memory without PASID; pi and ci count entries mod 2^24
 */
typedef struct PLDMACQ {
    uint32_t state;         /* PLDMA_CQS_* */
    uint64_t base;
    uint32_t size;          /* entries, a power of two */
    uint32_t pd;            /* PASID register (CHB_PASID format) */
    uint32_t pi;            /* CQEs written */
    uint32_t ci;            /* consumer index, as rung */
    uint32_t arm;           /* 0 or PLDMA_CQ_DB_CMD_ARM / _ARM_SOL */
} PLDMACQ;

/*
 * The Ethernet function (hw/misc/pldma/eth.c): two descriptor rings in
 * DMA memory without PASID, on the RDMA link's NIC
 */
typedef struct PLDMAEthRing {
    uint64_t base;
    uint32_t size;          /* entries, 0: not configured */
    uint32_t head;          /* device */
    uint32_t tail;          /* driver */
} PLDMAEthRing;

typedef struct PLDMAEth {
    uint32_t ctrl;          /* ETH_CTRL (RX_EN, TX_EN, PROMISC) */
    uint32_t status;        /* ETH_STATUS error bits (LINK is computed) */
    uint32_t events;
    uint32_t event_mask;
    bool link_up;           /* last link state seen, for ETH_EV_LINK */
    PLDMAEthRing rx;
    PLDMAEthRing tx;
    uint32_t cnt[PLDMA_ETH_CNT_NUM];
    bool tx_blocked;        /* the net layer holds our frame: wait */
    QEMUBH *tx_bh;
    uint8_t *buf;           /* one frame, PLDMA_ETH_FRAME_MAX bytes */
} PLDMAEth;

/*
 * The link's state, private to hw/misc/pldma/ (PLDMACore.net, allocated at
 * realize, with or without a netdev); its properties stay on PLDMACore
 */
typedef struct PLDMANet {
    PLDMACore *s;
    /* requester state of each channel's remote operation (req.c, comp.c) */
    PLDMANetReq req[PLDMA_MAX_CHANNELS];
    QEMUTimer *req_timer[PLDMA_MAX_CHANNELS];   /* retransmit / RNR */
    PLDMAKey keys[PLDMA_NUM_KEYS];
    PLDMAKey key_stage;
    uint32_t key_sel;
    uint32_t key_status;
    /* responders: one per QP (hw/misc/pldma/resp.c) */
    PLDMANetConn *conns;
    uint32_t net_ip;        /* NET_IP */
    PLDMAQP qps[PLDMA_MAX_QPS];
    PLDMAQP qp_stage;       /* QP_* staging registers (state: NEW_STATE) */
    uint32_t qp_mask;       /* QP_ATTR_MASK */
    uint32_t qp_sel;
    uint32_t qp_status;
    uint64_t qp_errors;     /* QP_ERRORS */
    /* completion queues (hw/misc/pldma/cq.c) */
    PLDMACQ cqs[PLDMA_MAX_CQS];
    PLDMACQ cq_stage;       /* CQ_BASE, CQ_SIZE, CQ_PD */
    uint32_t cq_sel;
    uint32_t cq_status;
    uint64_t cq_events;     /* CQ_EVENTS */
    uint64_t cq_errors;     /* CQ_ERRORS */
    /* shared receive queues (hw/misc/pldma/srq.c) */
    PLDMASRQ srqs[PLDMA_MAX_SRQS];
    PLDMASRQ srq_stage;     /* SRQ_BASE, SRQ_SIZE, SRQ_PD, _PD_TAG, LIMIT */
    uint32_t srq_sel;
    uint32_t srq_status;
    uint64_t srq_events;    /* SRQ_EVENTS */
    uint64_t srq_errors;    /* SRQ_ERRORS */
    uint32_t net_cnt[PLDMA_NCNT_NUM];
    uint32_t tx_seq;        /* frames sent */
    uint64_t x_rng;         /* generator of the x- loss knobs */
    uint8_t *held;          /* x-reorder-every: frame held back */
    size_t held_len;
    bool in_rx;
    bool rx_deferred;       /* a frame came during a receive: flush after */
    bool tx_blocked;        /* the net layer holds a frame: send no more */
    /*
     * ACKs and NAKs built while tx_blocked, sent first when the link
     * takes frames again (net.c): a READ stream that fills the link does
     * not make the answers owed to other QPs vanish
     */
    GQueue ans_q;           /* of GBytes, in the order built */
    uint32_t resp_rr;       /* the responder's round-robin start (resp.c) */
    /* frames to the port's own MAC, delivered by loop_bh (net.c) */
    GQueue loop_q;          /* of GBytes, in the order sent */
    size_t loop_bytes;
    QEMUBH *loop_bh;
    /* timing model: frames on the link, by arrival time (net.c) */
    GQueue wire_q[2];       /* of PLDMAWireFrame, per direction */
    size_t wire_bytes;
    QEMUTimer *wire_timer;
    QEMUTimer *fault_timer; /* the bound of reported responder faults */
    uint32_t park_bytes;    /* bytes parked now, all connections */
    PLDMAEth eth;           /* the Ethernet function */
} PLDMANet;

/* The requester state of @ch's remote operation, and its timer */
static inline PLDMANetReq *pldma_ch_req(const PLDMAChannel *ch)
{
    return &ch->s->net->req[ch->idx];
}

static inline QEMUTimer *pldma_ch_timer(const PLDMAChannel *ch)
{
    return ch->s->net->req_timer[ch->idx];
}

/* qp.c: queue pairs (registers, state machine) */
bool pldma_qp_read(PLDMACore *s, hwaddr addr, uint64_t *val);
bool pldma_qp_write(PLDMACore *s, hwaddr addr, uint32_t val);
void pldma_qp_reset(PLDMACore *s);
void pldma_qp_realize(PLDMACore *s);
void pldma_qp_to_err(PLDMACore *s, uint32_t idx);
void pldma_qp_nak_err(PLDMACore *s, uint32_t idx);
PLDMAQP *pldma_qp_of_sq(PLDMACore *s, uint32_t ch);
uint32_t pldma_qp_qpn(PLDMACore *s, uint32_t idx);

/* resp.c, for qp.c */
void pldma_resp_qp_connect(PLDMACore *s, uint32_t idx);
void pldma_resp_qp_clear(PLDMACore *s, uint32_t idx);

/* cq.c: completion queues */
typedef struct PLDMACqe {
    uint64_t wr_id;
    uint32_t byte_len;
    uint32_t imm;           /* wire byte order (loaded LE) */
    uint32_t qpn;
    uint32_t src_qp;
    uint8_t opcode;         /* PLDMA_WC_* */
    uint8_t status;         /* PLDMA_WC_ST_* */
    uint8_t flags;          /* PLDMA_CQE_F_* */
    uint32_t vendor_err;
} PLDMACqe;

bool pldma_cq_realize(PLDMACore *s, Error **errp);
void pldma_cq_reset(PLDMACore *s);
bool pldma_cq_read(PLDMACore *s, hwaddr addr, uint64_t *val);
bool pldma_cq_write(PLDMACore *s, hwaddr addr, uint32_t val);
void pldma_cq_doorbell(PLDMAChannel *ch, uint32_t val);
bool pldma_cq_post(PLDMACore *s, uint32_t cq, const PLDMACqe *e);
void pldma_cq_irq_sync(PLDMACore *s);
void pldma_cq_send_done(PLDMAChannel *ch);
bool pldma_cq_in_use(PLDMACore *s, uint32_t cq);

/* rq.c: receive queues (registers, doorbell, QP commands) */
void pldma_rq_doorbell(PLDMAChannel *ch, uint32_t val);
uint32_t pldma_rq_reg(PLDMAChannel *ch, bool tail);
uint32_t pldma_rq_resolve(PLDMACore *s, uint32_t idx, bool ok);
void pldma_rq_flush(PLDMACore *s, uint32_t idx);

/* srq.c: shared receive queues */
typedef enum PLDMASRQTake {
    PLDMA_SRQ_TAKEN,
    PLDMA_SRQ_EMPTY,
    PLDMA_SRQ_FAILED,       /* the SRQ is in ERROR */
} PLDMASRQTake;

bool pldma_srq_realize(PLDMACore *s, Error **errp);
void pldma_srq_reset(PLDMACore *s);
bool pldma_srq_read(PLDMACore *s, hwaddr addr, uint64_t *val);
bool pldma_srq_write(PLDMACore *s, hwaddr addr, uint32_t val);
void pldma_srq_irq_sync(PLDMACore *s);
bool pldma_srq_usable(PLDMACore *s, uint32_t idx, uint32_t pd,
                      uint32_t pd_tag);
PLDMASRQTake pldma_srq_take(PLDMACore *s, uint32_t idx, uint32_t qp,
                            uint8_t *w);
void pldma_rq_flush_held(PLDMACore *s, uint32_t idx);

/* RoCEv2's UDP destination port (IANA; IBTA vol. 1, annex A17) */
#define ROCE_UDP_PORT       4791

/* The link's entry points, in pldma_net_link (net.c) */
extern const VMStateDescription vmstate_pldma_qps;
extern const VMStateDescription vmstate_pldma_cqs;
extern const VMStateDescription vmstate_pldma_srqs;
extern const VMStateDescription vmstate_pldma_eth;
bool pldma_net_realize(PLDMACore *s, Error **errp);
void pldma_net_unrealize(PLDMACore *s);
void pldma_net_reset(PLDMACore *s);
uint32_t pldma_req_decode(PLDMAChannel *ch, const uint8_t *d);
bool pldma_req_xfer(PLDMAChannel *ch, uint64_t *budget);
void pldma_comp_ch_end(PLDMAChannel *ch);
bool pldma_resp_bh(PLDMACore *s, uint64_t *budget);
bool pldma_resp_resumed(PLDMACore *s, uint16_t stag, SMMUStallResponse resp);
void pldma_net_flush(PLDMACore *s);
const char *pldma_net_ch_check(PLDMACore *s, PLDMAChannel *ch);

/* eth.c: the Ethernet function (registers, rings, link) */
bool pldma_eth_read(PLDMACore *s, hwaddr addr, uint64_t *val);
bool pldma_eth_write(PLDMACore *s, hwaddr addr, uint32_t val);
void pldma_eth_irq_sync(PLDMACore *s);
void pldma_eth_reset(PLDMACore *s);
void pldma_eth_realize(PLDMACore *s);
void pldma_eth_unrealize(PLDMACore *s);
void pldma_eth_vm_running(PLDMACore *s);
bool pldma_eth_rx(PLDMACore *s, const uint8_t *buf, size_t size);
void pldma_eth_deliver(PLDMACore *s, const uint8_t *buf, size_t size);
void pldma_eth_link_changed(NetClientState *nc);

/* RC opcodes (IBA table 38) */
#define OP_SEND_FIRST       0x00
#define OP_SEND_MIDDLE      0x01
#define OP_SEND_LAST        0x02
#define OP_SEND_LAST_IMM    0x03
#define OP_SEND_ONLY        0x04
#define OP_SEND_ONLY_IMM    0x05
#define OP_WRITE_FIRST      0x06
#define OP_WRITE_MIDDLE     0x07
#define OP_WRITE_LAST       0x08
#define OP_WRITE_LAST_IMM   0x09
#define OP_WRITE_ONLY       0x0a
#define OP_WRITE_ONLY_IMM   0x0b
#define OP_READ_REQ         0x0c
#define OP_READ_RESP_FIRST  0x0d
#define OP_READ_RESP_MIDDLE 0x0e
#define OP_READ_RESP_LAST   0x0f
#define OP_READ_RESP_ONLY   0x10
#define OP_ACK              0x11
/* RC atomics: requests with an AtomicETH, a response with AtomicAckETH */
#define OP_ATOMIC_ACK       0x12
#define OP_CMP_SWAP         0x13
#define OP_FETCH_ADD        0x14
/*
 * IBA 1.5: FLUSH (a FETH, then a RETH) and 8 bytes written as one access
 * (RETH); each answered by a READ response of no bytes
 */
#define OP_FLUSH            0x1c
#define OP_ATOMIC_WRITE     0x1d
#define FETH_LEN            4
/*
 * UC opcodes (IBA table 38): the RC SEND and RDMA WRITE opcodes in the
 * UC range (0x20 + the RC opcode)
 */
#define OP_UC               0x20
#define PLDMA_NET_NUM_OPCODES (OP_ATOMIC_WRITE + 1)
#define ATOMIC_ETH_LEN      28
#define ATOMIC_ACK_ETH_LEN  8
/*
 * UD SEND (IBA table 38), with a DETH: the datagrams of UD QPs, and QP1's
 * management datagrams (rdma_cm's CM MADs), which the OS's GSI QP serves
 * through the Ethernet function
 */
#define OP_UD_SEND_ONLY     0x64
#define OP_UD_SEND_ONLY_IMM 0x65
#define DETH_LEN            8
#define PLDMA_GSI_QPN       1

/* What an opcode is and carries (hdr.c's pldma_hdr_opcode[]) */
#define PLDMA_NET_F_RETH    (1U << 0)   /* RDMA extended header */
#define PLDMA_NET_F_IMMDT   (1U << 1)   /* immediate data */
#define PLDMA_NET_F_AETH    (1U << 2)   /* ACK extended header */
#define PLDMA_NET_F_PAYLOAD (1U << 3)   /* may carry a payload */
#define PLDMA_NET_F_REQ     (1U << 4)   /* a request: to the responder */
#define PLDMA_NET_F_RESP    (1U << 5)   /* a READ response */
#define PLDMA_NET_F_ACK     (1U << 6)   /* an Acknowledge */
#define PLDMA_NET_F_SEND    (1U << 7)
#define PLDMA_NET_F_WRITE   (1U << 8)
#define PLDMA_NET_F_READ    (1U << 9)   /* READ request or response */
#define PLDMA_NET_F_FIRST   (1U << 10)  /* first packet of a message */
#define PLDMA_NET_F_MIDDLE  (1U << 11)
#define PLDMA_NET_F_LAST    (1U << 12)  /* last packet of a message */
#define PLDMA_NET_F_ATOMIC  (1U << 13)  /* AtomicETH (request) ... */
#define PLDMA_NET_F_ATOMIC_ACK (1U << 14) /* ... AtomicAckETH (response) */
#define PLDMA_NET_F_UC      (1U << 15)  /* a UC opcode, for UC QPs only */
#define PLDMA_NET_F_DETH    (1U << 16)  /* a UD opcode (DETH), UD QPs only */
#define PLDMA_NET_F_ATOMIC_WRITE (1U << 17) /* RETH and 8 bytes, as one */
#define PLDMA_NET_F_FLUSH   (1U << 18)  /* FETH, then RETH */
#define PLDMA_NET_F_ONLY    (PLDMA_NET_F_FIRST | PLDMA_NET_F_LAST)

typedef struct PLDMANetOpcode {
    const char *name;
    uint32_t flags;         /* PLDMA_NET_F_* */
    uint8_t hdr_len;        /* BTH and extended headers, in bytes */
} PLDMANetOpcode;

extern const PLDMANetOpcode pldma_hdr_opcode[PLDMA_NET_NUM_OPCODES];
extern const PLDMANetOpcode pldma_hdr_ud_opcode[2];

/*
 * The row of BTH opcode @op: RC's, for a UC opcode the RC one it is 0x20
 * above (IBA table 38), UD's own two; a row of no flags for any other
 */
static inline const PLDMANetOpcode *pldma_hdr_op(uint8_t op)
{
    static const PLDMANetOpcode none = { "?", 0, 0 };

    if (op >= OP_UC && op <= (OP_UC | OP_WRITE_ONLY_IMM)) {
        return &pldma_hdr_opcode[op - OP_UC];
    }
    if (op == OP_UD_SEND_ONLY || op == OP_UD_SEND_ONLY_IMM) {
        return &pldma_hdr_ud_opcode[op - OP_UD_SEND_ONLY];
    }
    return op < PLDMA_NET_NUM_OPCODES ? &pldma_hdr_opcode[op] : &none;
}

/* PLDMA_NET_F_* of BTH opcode @op; none for one that is not RC's or UC's */
static inline uint32_t pldma_hdr_op_flags(uint8_t op)
{
    uint32_t fl = pldma_hdr_op(op)->flags;

    return op >= OP_UC && fl && !(fl & PLDMA_NET_F_DETH) ? fl | PLDMA_NET_F_UC
                                                         : fl;
}

static inline const char *pldma_hdr_op_name(uint8_t op)
{
    return pldma_hdr_op(op)->name;
}

/* AETH syndrome */
#define AETH_ACK            0x1f    /* ACK, credit count "invalid" */
#define AETH_RNR(t)         (0x20 | ((t) & 0x1f))
#define AETH_NAK_SEQ        0x60
#define AETH_NAK_INVALID    0x61
#define AETH_NAK_ACCESS     0x62
#define AETH_NAK_OPERR      0x63
#define AETH_KIND(s)        ((s) >> 5)  /* 0 ACK, 1 RNR, 3 NAK */

/*
 * The longest message (IBA: 2^31 bytes).  At the smallest MTU, 256, it
 * takes 2^23 PSNs, half the 24-bit space: every PSN of a message is then
 * ahead of its first in the signed comparison, whatever max-transfer says
 */
#define PLDMA_NET_MAX_MSG   (1ULL << 31)

/* PSNs further ahead than this are not a gap but garbage: dropped */
#define PLDMA_NET_PSN_AHEAD     4096

/* A frame, parsed (rx) or to build (tx) */
typedef struct PLDMAPkt {
    uint8_t opcode;
    bool ackreq;
    bool se;                /* BTH solicited event */
    uint8_t pad;
    uint32_t qpn;
    uint32_t psn;
    bool has_reth;
    uint64_t va;
    uint32_t rkey;
    uint32_t dmalen;
    bool has_imm;
    uint32_t imm;           /* ImmDt, wire byte order (loaded LE) */
    bool has_aeth;
    uint8_t syndrome;
    uint32_t msn;
    const uint8_t *payload;
    uint32_t plen;
    uint8_t qp;             /* 1 + index of our QP (rx: once dispatched) */
    uint32_t src_ip;        /* rx: the IPv4 source */
    bool atomic;            /* an atomic request (AtomicETH: va, rkey) */
    uint64_t swap_add;      /* AtomicETH: Swap (CmpSwap) or Add Data */
    uint64_t compare;       /* AtomicETH: Compare Data (CmpSwap) */
    uint64_t orig;          /* AtomicAckETH: Original Remote Data */
    uint32_t feth;          /* FLUSH: its FETH (PLDMA_FLUSH_* bits) */
    int64_t ready;          /* tx, timing model: its payload read, 0: now */
    /* UD: the DETH, and the datagram's address (tx) or IPv4 header (rx) */
    uint32_t qkey;
    uint32_t src_qpn;
    const uint8_t *ud_dmac; /* tx: 6 bytes; NULL: the QP's DEST_MAC, IP */
    uint32_t ud_dip;
    const uint8_t *ip_hdr;  /* rx: its 20 bytes, for the receiver's GRH */
} PLDMAPkt;

/*
 * Segments in flight (pldma_net_window(): at least this, and this without
 * the timing model), at most, and how often the requester asks for an ACK
 */
#define PLDMA_NET_WINDOW        64
#define PLDMA_NET_WINDOW_MAX    4096
/* A WRITE First's headers: Ethernet, IPv4, UDP, BTH, RETH, ICRC */
#define PLDMA_NET_SEG_HDRS      (14 + 20 + 8 + 12 + 16 + 4)
/*
 * WRITE segments a connection holds behind a fault: Linux rxe's window,
 * or the device's own window at the smallest MTU when that is more
 */
#define PLDMA_NET_PARK_SEGS     128
#define PLDMA_NET_ACKREQ_EVERY  16

/* Responder connections: one per QP */
#define PLDMA_NET_NCONNS(s)     ((s)->num_qps)

static inline int32_t pldma_net_psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

/*
 * Does PSN @psn belong to the WRITE connection @c took last (its First,
 * a Middle or its Last)?  At the expected PSN that means the WRITE is
 * unfinished, and a message other than its own segments there is an
 * opcode sequence error (IBA 9.8.3.1)
 */
static inline bool pldma_resp_in_write(const PLDMANetConn *c, uint32_t psn)
{
    int32_t seg = pldma_net_psn_diff(psn, c->msg_psn);

    return c->msg_valid && seg >= 0 && seg < (int32_t)c->msg_nsegs;
}

/* The QP of responder connection @c (s->net->conns[i] is QP i's) */
static inline uint32_t pldma_resp_qpi(PLDMACore *s, const PLDMANetConn *c)
{
    return c - s->net->conns;
}

static inline void pldma_net_cnt(PLDMACore *s, unsigned i)
{
    s->net->net_cnt[i]++;
}

/* The segments of a message of @len bytes (a message of none has one) */
static inline uint32_t pldma_net_nsegs(uint32_t mtu, uint32_t len)
{
    return len ? DIV_ROUND_UP(len, mtu) : 1;
}

/* hdr.c: headers, ICRC, frames */
extern const uint32_t pldma_hdr_rnr_timer_10us[32];
void pldma_hdr_tx(PLDMACore *s, const PLDMAPkt *p);
bool pldma_hdr_parse(PLDMACore *s, const uint8_t *f, size_t size,
                     PLDMAPkt *p);
int pldma_hdr_ud_check(const uint8_t *f, size_t size);
bool pldma_hdr_icrc_fill(uint8_t *f, size_t size);

/* net.c: the port */
void pldma_net_send_frame(PLDMACore *s, const uint8_t *f, size_t len,
                          int64_t ready);
bool pldma_hdr_frame_is_resp(const uint8_t *f, size_t size);
void pldma_net_qp_drop(PLDMACore *s, const PLDMAPkt *p, const char *why);

/* req.c: the requester */
PLDMAAccess pldma_req_local_rw(PLDMAChannel *ch, uint64_t off, uint8_t *buf,
                               uint32_t n, bool is_write, uint64_t *fva,
                               bool *short_list);
void pldma_req_arm(PLDMAChannel *ch, uint64_t us);
void pldma_req_send_read(PLDMAChannel *ch);
void pldma_req_read_more(PLDMAChannel *ch);
void pldma_req_read_gap(PLDMAChannel *ch);
void pldma_req_timer(void *opaque);

/* comp.c: the requester's completer */
void pldma_comp_finish(PLDMAChannel *ch, uint32_t status);
void pldma_comp_rewind(PLDMAChannel *ch, uint64_t off);
void pldma_comp_rx(PLDMACore *s, const PLDMAPkt *p);

/* resp.c: the responder (its stages), its answers, READ responses */
void pldma_resp_rx(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p);
uint32_t pldma_resp_mtu(PLDMACore *s, const PLDMANetConn *c);
uint32_t pldma_resp_rnr_timer(PLDMACore *s, const PLDMANetConn *c);
void pldma_resp_answer(PLDMACore *s, PLDMANetConn *c, uint32_t psn,
                       uint8_t syndrome);
void pldma_resp_seq_nak(PLDMACore *s, PLDMANetConn *c);
void pldma_resp_nak(PLDMACore *s, PLDMANetConn *c, uint32_t psn,
                    uint8_t syndrome);

uint32_t pldma_net_window(PLDMACore *s, uint32_t mtu);

/* resp-fault.c: the responder's faults, parking, resolution */
PLDMAAccess pldma_resp_dma(PLDMACore *s, PLDMANetConn *c,
                           uint32_t pasid_reg, uint64_t va, void *buf,
                           uint32_t len, bool is_write, uint64_t *fva);
PLDMAAccess pldma_resp_rw(PLDMACore *s, PLDMANetConn *c, uint32_t rkey,
                          uint64_t va, void *buf, uint32_t len,
                          bool is_write, uint32_t msg_off, uint32_t msg_len);
void pldma_resp_fault_arm(PLDMACore *s, PLDMANetConn *c);
void pldma_resp_fault_timer(void *opaque);
void pldma_resp_resolved(PLDMACore *s, PLDMANetConn *c, bool ok);
bool pldma_resp_park_add(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p);
bool pldma_resp_park_run(PLDMACore *s, PLDMANetConn *c, uint64_t *budget);
void pldma_resp_park_drop(PLDMACore *s, PLDMANetConn *c);
bool pldma_resp_parked(const PLDMANetConn *c);
bool pldma_resp_park_running(const PLDMANetConn *c);

/* keys.c: memory keys */
bool pldma_key_read(PLDMACore *s, hwaddr addr, uint64_t *val);
bool pldma_key_write(PLDMACore *s, hwaddr addr, uint32_t val);
void pldma_keys_reset(PLDMACore *s);

/* rq.c: receive queues, for the responder */
bool pldma_rq_take(PLDMACore *s, PLDMANetConn *c, const PLDMAPkt *p,
                   uint32_t idx);
bool pldma_rq_complete(PLDMACore *s, uint32_t idx, uint64_t wr_id,
                       uint8_t opcode, uint8_t status, uint32_t bytes,
                       const PLDMAPkt *p);
PLDMAAccess pldma_rq_scatter(PLDMACore *s, PLDMANetConn *c, uint32_t idx,
                             uint64_t off, const uint8_t *buf, uint32_t len);
bool pldma_rq_failed(PLDMACore *s, PLDMANetConn *c);

#endif /* HW_MISC_PLDMA_NET_INTERNAL_H */
