/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * See docs/specs/pldma.rst; the register map is in hw/misc/pldma-regs.h.
 *
 * One engine (PLDMACore, hw/misc/pldma/core.c, its fault paths in
 * hw/misc/pldma/fault.c) behind two bus front-ends that embed it: the
 * platform device "pldma" (hw/misc/pldma/sysbus.c) and the PCIe endpoint
 * "pldma-pci" (hw/misc/pldma/pci.c), as e1000e_core.c sits behind e1000e.c.
 */

#ifndef HW_MISC_PLDMA_H
#define HW_MISC_PLDMA_H

#include "qemu/units.h"
#include "hw/sysbus.h"
#include "hw/pci/pci_device.h"
#include "hw/arm/smmu-stall.h"
#include "net/net.h"
#include "hw/misc/pldma-regs.h"
#include "qom/object.h"

#define TYPE_PLDMA "pldma"
OBJECT_DECLARE_SIMPLE_TYPE(PLDMAState, PLDMA)
#define TYPE_PLDMA_PCI "pldma-pci"
OBJECT_DECLARE_SIMPLE_TYPE(PLDMAPCIState, PLDMA_PCI)

typedef struct PLDMACore PLDMACore;

/* Stalled accesses a channel may have at once (max-outstanding) */
#define PLDMA_MAX_OUTSTANDING       64

/* Where in a descriptor's life a channel is */
typedef enum PLDMAPhase {
    PLDMA_PHASE_FETCH = 0,  /* read the descriptor at HEAD */
    PLDMA_PHASE_XFER = 1,   /* move data, "done" bytes already moved */
    PLDMA_PHASE_COMPL = 2,  /* write the completion record, advance HEAD */
} PLDMAPhase;

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
} PLDMANetReq;

typedef struct PLDMAChannel {
    PLDMACore *s;
    uint32_t idx;

    /* privileged binding */
    uint32_t pasid_reg;
    uint32_t ctrl;
    uint32_t owner;

    /* user page */
    uint64_t ring_base;
    uint32_t ring_size;
    uint32_t head;
    uint32_t tail;
    uint32_t state;
    uint32_t error;
    uint32_t completed;
    uint32_t last_status;
    uint64_t fault_va;
    uint32_t fault_info;
    uint32_t fault_desc;
    uint32_t fault_done;

    /* descriptor in flight */
    uint32_t phase;
    uint8_t op;
    uint8_t dflags;
    uint32_t len;
    uint64_t src;
    uint64_t dst;
    uint64_t pattern;
    uint64_t compl_va;
    uint64_t cookie;
    uint64_t done;
    uint32_t cstatus;       /* status to write in the completion record */
    uint32_t cflags;
    uint64_t cfault_va;
    uint8_t ahead;          /* batch window (descriptor AHEAD), pages */
    uint8_t nsge;           /* RDMA: SGEs listed at src/dst, 0: a buffer */

    /* the last batched fault: missing pages by buffer (AHEAD_* registers) */
    uint64_t ahead_src;
    uint64_t ahead_src_map;
    uint64_t ahead_dst;
    uint64_t ahead_dst_map;

    /* stall bookkeeping */
    bool stall_pending;     /* parked, waiting for resumed() */
    uint16_t stag;
    uint64_t stall_va;

    /*
     * Outstanding stalls (max-outstanding): accesses ahead of the parked
     * one, in the same descriptor, each stalled in the SMMU with its own
     * STAG until resumed (hw/misc/pldma/fault.c)
     */
    bool stall_adopted;     /* the parked access joined one of them */
    bool probe_aborted;     /* one was aborted: the descriptor fails */
    uint8_t nprobes;
    uint16_t probe_stag[PLDMA_MAX_OUTSTANDING - 1];
    uint64_t probe_va[PLDMA_MAX_OUTSTANDING - 1];   /* page addresses */

    /* remote operation in flight (its timer is kept past a reset, below) */
    PLDMANetReq net;

    /* timing model (hw/misc/pldma/timing.c): where the channel's time is */
    int64_t tm_ready;       /* QEMU_CLOCK_VIRTUAL ns its work so far ends */
    uint64_t tm_rem;        /* remainder of the bytes' cost (ns x MB/s) */
    bool tm_fault;          /* a fault round trip is still to be charged */

    /* counters */
    uint64_t cnt_bytes;
    uint32_t cnt_descs;
    uint32_t cnt_stalls;
    uint32_t cnt_faults;
    uint32_t cnt_restarts;
    uint32_t cnt_aborts;
    uint32_t cnt_cancels;
    uint32_t cnt_errors;
    uint32_t cnt_ahead;

    /*
     * Orphaned stalls: transactions the channel stopped waiting for (CANCEL,
     * reset, error) that the SMMU still holds until the OS answers them.
     * While one is pending the channel's new faults are not stalled, so a
     * channel never holds more SMMU stall slots than one descriptor's
     * (max-outstanding).  Kept across a channel reset (after cnt_*).
     */
    uint8_t norphans;
    uint16_t orphan_stag[PLDMA_MAX_OUTSTANDING];

    /* the remote operation's retransmit / RNR timer (net.c's, from realize) */
    QEMUTimer *net_timer;
} PLDMAChannel;

/* What the engine asks of its bus front-end */
typedef struct PLDMACoreOps {
    /* IRQ_STATUS & IRQ_MASK changed (a level, or edges for MSI-X) */
    void (*update_irq)(PLDMACore *s, uint32_t pending);
    /* optional: may PASID-tagged DMA be issued now (PCIe PASID Enable) */
    bool (*pasid_enabled)(PLDMACore *s);
    /* optional: does the IOMMU hold the stall (STAG) of a migrated channel */
    bool (*stall_is_pending)(PLDMACore *s, uint16_t stag);
    /*
     * optional: translate @va for an access with @attrs in a way of the
     * bus's own (PCIe: an ATS translation request for the PASID), filling
     * *@e; false leaves it to the IOMMU of s->dma_as, as for untranslated
     * DMA (address_space_get_iotlb_entry)
     */
    bool (*translate)(PLDMACore *s, hwaddr va, bool is_write,
                      MemTxAttrs attrs, IOMMUTLBEntry *e);
    /* fault-mode=pri is possible: the front-end issues PCIe page requests */
    bool pri;
} PLDMACoreOps;

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
 * Responder state of one connection: QP i's is s->conns[i], cleared when
 * the QP enters RTR and when it leaves RTR/RTS.
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
    bool fault_recv;        /* the fault is on a receive WQE's buffer */
    bool rq_rnr;            /* an RNR NAK for an empty RQ is outstanding */
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
 * registers hold them.  Its responder state is s->conns[index]; its send
 * queue is channel sq, which it takes at RESET->INIT
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
} PLDMAQP;

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
 * The engine's timing model (hw/misc/pldma/timing.c, docs/specs/pldma.rst
 * "Timing model"): its properties, one virtual-clock timer per channel,
 * and the device's translation cache (ATC) that decides hits and misses.
 */
#define PLDMA_ATC_MAX_ENTRIES       256

typedef struct PLDMATiming {
    bool on;
    uint32_t dma_mbs;       /* DMA bandwidth, MB/s (bytes per microsecond) */
    uint32_t desc_ns;       /* per descriptor */
    uint32_t xlat_ns;       /* per translation */
    uint32_t walk_ns;       /* more on an ATC miss */
    uint32_t atc_entries;
    uint32_t fault_ns;      /* stall/fault round trip inside the SMMU */
    uint32_t link_mbits;    /* remote DMA: link bandwidth, Mbit/s */
    uint32_t link_ns;       /* remote DMA: one-way latency */

    QEMUTimer *timer[PLDMA_MAX_CHANNELS];
    QEMUTimer *kick;        /* the engine's work at this instant */
    int64_t wire_free[2];   /* when each direction's transmitter is free */
    uint64_t wire_rem[2];   /* its remainder of bits * 1000 / link_mbits */
    uint64_t atc_tag[PLDMA_ATC_MAX_ENTRIES];    /* page | PASID valid */
    uint32_t atc_pasid[PLDMA_ATC_MAX_ENTRIES];  /* MemTxAttrs.pid */
    uint64_t atc_used[PLDMA_ATC_MAX_ENTRIES];   /* LRU stamp, 0: empty */
    uint64_t atc_clock;
} PLDMATiming;

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

struct PLDMACore {
    DeviceState *dev;       /* the front-end device (re-entrancy guard) */
    const PLDMACoreOps *ops;
    MemoryRegion iomem;     /* global page + one page per channel */
    QEMUBH *bh;
    VMChangeStateEntry *vmsh;
    bool vm_running;        /* channels only run while the VM runs */
    AddressSpace *dma_as;
    bool translated;        /* DMA goes through an IOMMU (PASIDs work) */
    struct PLDMADma *xlat;  /* the access being translated (pldma_map) */
    bool busy;              /* a channel run (BH or inline) is in progress */
    uint32_t rr;            /* round-robin start */
    /* inline work left until the next bottom half (pldma_run_now) */
    uint64_t inline_bytes;
    uint32_t inline_descs;
    uint32_t inline_runs;

    /* global registers */
    uint32_t irq_status;
    uint32_t irq_mask;
    uint64_t fq_base;
    uint32_t fq_size;
    uint32_t fq_head;
    uint32_t fq_tail;
    uint32_t fq_ctrl;
    uint32_t fq_status;
    uint32_t fq_overflows;
    uint32_t fault_seq;

    PLDMAChannel ch[PLDMA_MAX_CHANNELS];

    /*
     * remote DMA (hw/misc/pldma/net.c), when the front-end has a netdev;
     * the engine reaches it only through its hook table, link
     */
    const struct PLDMALinkOps *link;
    NICState *nic;
    NICConf *conf;
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
    uint32_t resp_fault_ms; /* resp-fault-timeout: that bound, ms */

    /* properties */
    uint32_t num_channels;
    char *fault_mode_str;
    bool report_mode;
    bool pri_mode;          /* fault-mode=pri (pldma-pci): page requests */
    uint8_t pasid_bits;
    uint32_t stream_id;     /* StreamID the stall paths expect */
    uint32_t max_transfer;
    uint32_t chunk_size;
    uint32_t max_outstanding;
    uint32_t node_id;       /* 1..63 with a netdev */
    uint32_t num_qps;
    uint32_t num_cqs;
    uint32_t mtu;
    uint32_t rto_us;        /* retransmit timeout of a QP's timeout 0 */
    bool rnr_resume;        /* receiver-driven "resolved, resend now" */
    uint32_t park_size;     /* bytes of segments held, 0: no parking */
    bool park_send;         /* SEND segments are held too (off: WRITE) */
    uint32_t park_bytes;    /* ... held now, all connections */
    uint32_t x_drop_every;  /* test knobs: every Nth frame sent is... */
    uint32_t x_dup_every;   /* ...dropped, sent twice, or held back */
    uint32_t x_reorder_every;

    PLDMATiming tm;         /* timing model, properties and state */
    PLDMAEth eth;           /* the Ethernet function */
};

/* The platform device */
struct PLDMAState {
    SysBusDevice parent_obj;

    PLDMACore core;
    NICConf conf;
    qemu_irq irq;
    Object *iommu;          /* link to the SMMU, set by the board */
};

/*
 * fault-mode=pri: the page requests of pldma-pci (pci.c).  One entry per
 * requested page; the pages of one page request group share its PRGI.
 */
#define PLDMA_PRI_CAPACITY      32      /* Outstanding Page Request Capacity */
#define PLDMA_PRI_ENTRIES       128     /* requests queued, sent or answered */
#define PLDMA_PRI_PASIDS        PLDMA_MAX_CHANNELS  /* notifiers, by PASID */

enum {
    PLDMA_PRI_FREE,
    PLDMA_PRI_QUEUED,       /* waiting for allocation (credits) to be sent */
    PLDMA_PRI_SENT,         /* sent, its group not answered yet */
    PLDMA_PRI_ANSWERED,     /* answered, the channel not resumed yet */
    PLDMA_PRI_NSTATES
};

typedef struct PLDMAPRIReq {
    uint64_t addr;          /* the page */
    uint32_t pasid;
    uint32_t seq;           /* group order: groups are sent in order */
    uint16_t prgi;
    uint8_t state;          /* PLDMA_PRI_* */
    bool is_write;
    bool last;              /* LPIG: the last page of its group */
    uint8_t resp;           /* IOMMUPRIResponseCode, once answered */
} PLDMAPRIReq;

typedef struct PLDMAPRINotifier {
    IOMMUPRINotifier n;
    struct PLDMAPCIState *s;
    uint32_t pasid;
    bool registered;
} PLDMAPRINotifier;

/*
 * pldma-pci's ATS translation cache: translations of whole pages by
 * PASID, kept until the IOMMU invalidates them (an IOTLB notifier per
 * PASID for its device-TLB invalidations)
 */
#define PLDMA_ATS_CACHE_ENTRIES       64
#define PLDMA_ATS_CACHE_PASIDS        8

typedef struct PLDMAATSCacheEntry {
    IOMMUTLBEntry e;        /* iova: the page; translated_addr, mask, perm */
    uint32_t pasid;
    bool valid;
} PLDMAATSCacheEntry;

typedef struct PLDMAATSCacheNotifier {
    IOMMUNotifier n;
    struct PLDMAPCIState *s;
    uint32_t pasid;
    bool registered;
} PLDMAATSCacheNotifier;

/* The PCIe endpoint: BAR 0 registers, BAR 2 MSI-X, PASID, ATS, PRI */
struct PLDMAPCIState {
    PCIDevice parent_obj;

    PLDMACore core;
    NICConf conf;
    MemoryRegion bar0;      /* power-of-two container of core.iomem */
    uint32_t msix_pending;  /* interrupt sources already signalled */

    /* fault-mode=pri */
    PLDMAPRIReq pri_req[PLDMA_PRI_ENTRIES];
    PLDMAPRINotifier pri_n[PLDMA_PRI_PASIDS];
    QEMUBH *pri_bh;         /* sends groups, resumes answered ones */
    uint32_t pri_seq;       /* next group's sequence number */
    uint16_t pri_next;      /* next PRGI to try */
    int32_t pri_open;       /* PRGI of the group being built, or -1 */
    int32_t pri_open_ch;    /* its channel */

    /*
     * ATS translation cache (hw/misc/pldma/pci-ats.c; not migrated: empty
     * after a load), not the timing model's modeled ATC (PLDMATiming)
     */
    PLDMAATSCacheEntry atsc[PLDMA_ATS_CACHE_ENTRIES];
    PLDMAATSCacheNotifier atsc_n[PLDMA_ATS_CACHE_PASIDS];
    uint32_t atsc_next;     /* the next entry to replace */
    bool ats_cache;         /* property: keep ATS translations */
};

#define PLDMA_DEFAULT_MAX_TRANSFER  (1 * GiB)
#define PLDMA_DEFAULT_CHUNK_SIZE    (256 * KiB)

/*
 * Both front-ends have the properties num-channels, fault-mode, pasid-bits,
 * max-transfer, chunk-size and max-outstanding, on their PLDMACore
 * (docs/specs/pldma.rst).
 */

/* hw/misc/pldma/core.c */
extern const VMStateDescription vmstate_pldma_core;
bool pldma_core_realize(PLDMACore *s, DeviceState *dev,
                        const PLDMACoreOps *ops, const char *default_mode,
                        Error **errp);
void pldma_core_unrealize(PLDMACore *s);
void pldma_core_reset(PLDMACore *s);
void pldma_core_class_init(ObjectClass *klass, ptrdiff_t core_offset);

/*
 * Properties of the RDMA link, on both front-ends: netdev and mac (NIC),
 * node-id (the default IPv4 address 10.0.0.<node-id> and MAC), mtu,
 * retransmit-timeout (us), rnr-resume, and the test knobs x-drop-every,
 * x-dup-every, x-reorder-every.
 */
#define PLDMA_DEFAULT_MTU           1024
#define PLDMA_NET_MAX_MTU           4096
/* park-size: WRITE and SEND bytes a device holds behind responder faults */
#define PLDMA_NET_PARK_SIZE         (1024 * 1024)
#define PLDMA_DEFAULT_RTO_US        20000
#define PLDMA_DEFAULT_QPS           16
#define PLDMA_DEFAULT_CQS           32

/* hw/misc/pldma/fault.c: the stall master side, for the front-ends */
bool pldma_core_can_stall(PLDMACore *s, uint32_t sid);
void pldma_core_stalled(PLDMACore *s, const SMMUStallInfo *info);
void pldma_core_resumed(PLDMACore *s, uint32_t sid, uint16_t stag,
                        SMMUStallResponse resp);

#endif /* HW_MISC_PLDMA_H */
