/*
 * PLDMA engine internals shared by hw/misc/pldma/core.c,
 * hw/misc/pldma/fault.c, the two front-ends (sysbus.c, pci.c) and the
 * RDMA link (net.c and its roles, which add net-internal.h)
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_MISC_PLDMA_INTERNAL_H
#define HW_MISC_PLDMA_INTERNAL_H

#include "hw/misc/pldma.h"
#include "qemu/log.h"

/*
 * A guest error: its trace event (pldma_err_*, with the message's
 * arguments) and the message as LOG_GUEST_ERROR, as hw/nvme's
 * NVME_GUEST_ERR; the file includes its trace.h
 */
#define PLDMA_GUEST_ERR(trace, fmt, ...)                                \
    do {                                                                \
        (trace_##trace)(__VA_ARGS__);                                   \
        qemu_log_mask(LOG_GUEST_ERROR, "pldma: " fmt "\n",             \
                      ## __VA_ARGS__);                                  \
    } while (0)

/*
 * The properties of the engine, the same on both front-ends (sysbus.c,
 * pci.c); _state is the front-end's type, _core its PLDMACore field.
 * From node-id on, they configure the RDMA link (net.c).  Their
 * descriptions are set by pldma_core_class_init().
 */
#define DEFINE_PLDMA_COMMON_PROPERTIES(_state, _core) \
    DEFINE_PROP_UINT32("num-channels", _state, _core.num_channels, 4), \
    DEFINE_PROP_STRING("fault-mode", _state, _core.fault_mode_str), \
    DEFINE_PROP_UINT8("pasid-bits", _state, _core.pasid_bits, \
                      SMMU_STALL_MAX_SSID_BITS), \
    DEFINE_PROP_UINT32("max-transfer", _state, _core.max_transfer, \
                       PLDMA_DEFAULT_MAX_TRANSFER), \
    DEFINE_PROP_UINT32("chunk-size", _state, _core.chunk_size, \
                       PLDMA_DEFAULT_CHUNK_SIZE), \
    DEFINE_PROP_UINT32("max-outstanding", _state, _core.max_outstanding, 1), \
    DEFINE_PROP_UINT32("node-id", _state, _core.node_id, 0), \
    DEFINE_PROP_UINT32("num-qps", _state, _core.num_qps, \
                       PLDMA_DEFAULT_QPS), \
    DEFINE_PROP_UINT32("num-cqs", _state, _core.num_cqs, \
                       PLDMA_DEFAULT_CQS), \
    DEFINE_PROP_UINT32("num-srqs", _state, _core.num_srqs, PLDMA_MAX_SRQS), \
    DEFINE_PROP_UINT32("mtu", _state, _core.mtu, PLDMA_DEFAULT_MTU), \
    DEFINE_PROP_UINT32("retransmit-timeout", _state, _core.rto_us, \
                       PLDMA_DEFAULT_RTO_US), \
    DEFINE_PROP_BOOL("rnr-resume", _state, _core.rnr_resume, true), \
    DEFINE_PROP_UINT32("park-size", _state, _core.park_size, \
                       PLDMA_NET_PARK_SIZE), \
    DEFINE_PROP_BOOL("park-send", _state, _core.park_send, false), \
    DEFINE_PROP_UINT32("resp-fault-timeout", _state, _core.resp_fault_ms, \
                       PLDMA_RESP_FAULT_TIMEOUT_MS), \
    DEFINE_PROP_UINT32("x-drop-every", _state, _core.x_drop_every, 0), \
    DEFINE_PROP_UINT32("x-dup-every", _state, _core.x_dup_every, 0), \
    DEFINE_PROP_UINT32("x-reorder-every", _state, _core.x_reorder_every, 0), \
    DEFINE_PROP_BOOL("timing", _state, _core.tm.on, false), \
    DEFINE_PROP_UINT32("dma-bandwidth", _state, _core.tm.dma_mbs, \
                       PLDMA_TM_DMA_MBS), \
    DEFINE_PROP_UINT32("desc-latency-ns", _state, _core.tm.desc_ns, \
                       PLDMA_TM_DESC_NS), \
    DEFINE_PROP_UINT32("xlat-latency-ns", _state, _core.tm.xlat_ns, \
                       PLDMA_TM_XLAT_NS), \
    DEFINE_PROP_UINT32("walk-latency-ns", _state, _core.tm.walk_ns, \
                       PLDMA_TM_WALK_NS), \
    DEFINE_PROP_UINT32("atc-entries", _state, _core.tm.atc_entries, \
                       PLDMA_TM_ATC_ENTRIES), \
    DEFINE_PROP_UINT32("xlat-ahead", _state, _core.tm.xlat_ahead, \
                       PLDMA_TM_XLAT_AHEAD), \
    DEFINE_PROP_UINT32("fault-latency-ns", _state, _core.tm.fault_ns, \
                       PLDMA_TM_FAULT_NS), \
    DEFINE_PROP_UINT32("link-bandwidth", _state, _core.tm.link_mbits, \
                       PLDMA_TM_LINK_MBITS), \
    DEFINE_PROP_UINT32("link-latency-ns", _state, _core.tm.link_ns, \
                       PLDMA_TM_LINK_NS)

/*
 * Defaults of the timing model (timing.c, docs/specs/pldma.rst "Timing
 * model"): a DMA engine behind a PCIe Gen4 x16 link, a 100 Gb/s RoCE link
 */
#define PLDMA_TM_DMA_MBS        25000   /* MB/s: PCIe Gen4 x16, see timing.c */
#define PLDMA_TM_DESC_NS        1000    /* a PCIe read round trip and more */
#define PLDMA_TM_XLAT_NS        10      /* a device ATC lookup */
#define PLDMA_TM_WALK_NS        500     /* ATS request and SMMU walk */
#define PLDMA_TM_ATC_ENTRIES    64
#define PLDMA_TM_XLAT_AHEAD     8       /* translations in flight */
#define PLDMA_TM_FAULT_NS       1000    /* event, MSI, CMD_RESUME, retry */
#define PLDMA_TM_LINK_MBITS     100000  /* 100 Gb/s */
#define PLDMA_TM_LINK_NS        1000    /* NIC to NIC through one switch */
/*
 * What a frame takes on an Ethernet wire beyond the bytes QEMU carries
 * (IEEE 802.3 clause 3 and 4): padding to 60 bytes before the FCS, then
 * the 4-byte FCS, the 8-byte preamble and SFD and the 12-byte gap
 */
#define PLDMA_TM_WIRE_MIN_FRAME 60
#define PLDMA_TM_WIRE_OVERHEAD  24

/* Outcome of one DMA access of a channel */
typedef enum PLDMAAccess {
    PLDMA_ACC_OK,
    PLDMA_ACC_STALLED,      /* the SMMU parked the access */
    PLDMA_ACC_FAULT,        /* translation failed, not stalled */
    PLDMA_ACC_BUSERR,       /* target is not RAM */
} PLDMAAccess;

/*
 * One DMA access of the engine: a channel's (descriptors, buffers,
 * completion records), the responder's (through a key's PASID or a QP's
 * PD) or the device's own queues' (no PASID, never stalled).  While it is
 * translated it is s->xlat, where the IOMMU's stall paths (the SMMU's stall
 * master interface, pldma-pci's page requests) find whose access it is and
 * leave what they did with it.
 */
typedef struct PLDMADma {
    PLDMAChannel *ch;       /* a channel's access (probes, timing), or NULL */
    uint32_t idx;           /* its channel, or PLDMA_FR_CH_REMOTE */
    uint32_t pasid_reg;     /* PLDMA_CHB_PASID format; 0: no PASID */
    bool can_stall;         /* someone resumes it: a channel, the responder */
    bool probing;           /* translation only: an access ahead of a stall */
    bool stalled;           /* out: the IOMMU stalled it, with ... */
    uint16_t stag;          /* ... this STAG (or PRGI) */
    uint64_t stall_va;      /* ... at this address */
} PLDMADma;

/* A record for the fault queue (docs/specs/pldma.rst, "Fault queue") */
typedef struct PLDMAFaultRec {
    uint32_t channel;       /* a channel, or PLDMA_FR_CH_REMOTE */
    uint32_t flags;         /* PLDMA_FR_F_* */
    uint32_t pasid_reg;     /* PLDMA_CHB_PASID format */
    uint64_t va;
    uint32_t done;
    uint32_t desc;
    uint32_t len;
} PLDMAFaultRec;

/* core.c */
const char *pldma_state_name(uint32_t st);
void pldma_set_state(PLDMAChannel *ch, uint32_t st);
void pldma_ch_error(PLDMAChannel *ch, uint32_t err);
void pldma_ch_end_desc(PLDMAChannel *ch, uint32_t status, uint32_t flags,
                       uint64_t va);
void pldma_run_now(PLDMAChannel *ch);
bool pldma_pasid_valid(const PLDMACore *s, uint32_t pasid);
bool pldma_pasid_reg_valid(const PLDMACore *s, uint32_t reg);

/* dma.c: the DMA layer and the interrupt line */
void pldma_raise(PLDMACore *s, uint32_t bits);
void pldma_update_irq(PLDMACore *s);
PLDMADma pldma_ch_dma(PLDMAChannel *ch);
IOMMUTLBEntry pldma_iotlb_entry(PLDMACore *s, hwaddr va, bool is_write,
                                MemTxAttrs attrs);
IOMMUTLBEntry pldma_dma_translate(PLDMACore *s, PLDMADma *d, hwaddr va,
                                  bool is_write);
PLDMAAccess pldma_dma_rw(PLDMACore *s, PLDMADma *d, uint64_t va, void *buf,
                         hwaddr len, bool is_write, uint64_t *fault_va);
PLDMAAccess pldma_rw(PLDMACore *s, PLDMAChannel *ch, uint64_t va,
                     void *buf, hwaddr len, bool is_write, uint64_t *fault_va);

/* A mapping of guest memory for direct access (a channel's transfer) */
typedef struct PLDMAMap {
    AddressSpace *as;       /* where it was mapped (after translation) */
    void *host;
    hwaddr len;
    bool is_write;
} PLDMAMap;

PLDMAAccess pldma_ch_map(PLDMAChannel *ch, uint64_t va, hwaddr len,
                         bool is_write, PLDMAMap *m);
void pldma_unmap(PLDMAMap *m, hwaddr access_len);

/* fault.c */
bool pldma_post_fault(PLDMACore *s, const PLDMAFaultRec *r);
bool pldma_probe_adopt(PLDMAChannel *ch, uint64_t va);
void pldma_probes_clear(PLDMAChannel *ch);
void pldma_stalls_forget(PLDMAChannel *ch);
void pldma_access_failed(PLDMAChannel *ch, PLDMAAccess r, uint64_t va,
                         bool is_write);

void pldma_bh(void *opaque);
void pldma_run_timed(PLDMACore *s);

/* timing.c: the timing model (off unless timing=on) */
extern const VMStateDescription vmstate_pldma_channel_timing;
extern const VMStateDescription vmstate_pldma_timing;
void pldma_timing_class_init(ObjectClass *klass);
bool pldma_timing_realize(PLDMACore *s, Error **errp);
void pldma_timing_unrealize(PLDMACore *s);
void pldma_timing_reset(PLDMACore *s);
void pldma_timing_start(PLDMAChannel *ch);
bool pldma_timing_gate(PLDMAChannel *ch);
bool pldma_timing_resume(PLDMAChannel *ch);
bool pldma_timing_waiting(PLDMAChannel *ch);
void pldma_timing_desc(PLDMAChannel *ch);
void pldma_timing_bytes(PLDMAChannel *ch, uint64_t n);
void pldma_timing_fault(PLDMAChannel *ch);
void pldma_timing_rebase(PLDMAChannel *ch);
int64_t pldma_timing_wire(PLDMACore *s, unsigned int dir, int64_t ready,
                          size_t len);
void pldma_schedule(PLDMACore *s);
void pldma_timing_xlat(PLDMACore *s, PLDMAChannel *ch, uint64_t va,
                       uint64_t addr_mask, uint32_t pid);

/*
 * The link, as the engine sees it: the one hook through which the core
 * (core.c, fault.c) reaches the network side: RoCEv2 port, queue pairs,
 * keys, completion queues and Ethernet function (net.c and the files of
 * its roles; their internals are in net-internal.h).  net.c fills it in
 * (pldma_net_link); every member works with or without a netdev.
 */
typedef struct PLDMALinkOps {
    /* life cycle: after the engine's own; reset also at realize */
    bool (*realize)(PLDMACore *s, Error **errp);
    void (*unrealize)(PLDMACore *s);
    void (*reset)(PLDMACore *s);
    void (*vm_running)(PLDMACore *s);
    /* registers outside the engine's: true when the link owns @addr */
    bool (*read)(PLDMACore *s, hwaddr addr, uint64_t *val);
    bool (*write)(PLDMACore *s, hwaddr addr, uint32_t val);
    /* IRQ_STATUS written: the link's bits follow its own state */
    void (*irq_sync)(PLDMACore *s);
    /* a channel page's registers that are the link's (doorbells) */
    bool (*ch_read)(PLDMAChannel *ch, hwaddr off, uint64_t *val);
    bool (*ch_write)(PLDMAChannel *ch, hwaddr off, uint32_t val);
    /* a remote descriptor: decode (a PLDMA_ST_*), move it on */
    uint32_t (*decode)(PLDMAChannel *ch, const uint8_t *d);
    bool (*xfer)(PLDMAChannel *ch, uint64_t *budget);
    /* it waits for the wire (an ACK, a timer): no work for the bh */
    bool (*waiting)(PLDMAChannel *ch);
    /* a descriptor completed (ch->cstatus): its send CQE, if a QP's */
    void (*desc_done)(PLDMAChannel *ch);
    /* the channel's message is over (done, failed, cancelled, reset) */
    void (*ch_end)(PLDMAChannel *ch);
    /* the channel is reset (after ch_end): it forgets its link state */
    void (*ch_reset)(PLDMAChannel *ch);
    /* migration: why the channel's link state is not loadable, or NULL */
    const char *(*ch_check)(PLDMACore *s, PLDMAChannel *ch);
    /* the responder's work from the bh (READ responses, held WRITEs) */
    bool (*bh)(PLDMACore *s, uint64_t *budget);
    /* frames may be taken again (end of a run) */
    void (*flush)(PLDMACore *s);
    /* an SMMU stall the responder raised was answered: true if its own */
    bool (*resumed)(PLDMACore *s, uint16_t stag, SMMUStallResponse resp);
} PLDMALinkOps;

/*
 * The link the front-ends' engines use (net.c), and its migration, which
 * the engine's vmstate carries as its last subsection (net-vmstate.c):
 * all that the engine names of the link beside the table above; the
 * link's state is its own (PLDMACore.net, net-internal.h)
 */
extern const PLDMALinkOps pldma_net_link;
extern const VMStateDescription vmstate_pldma_link;

/* A row of the descriptor-opcode table (pldma-regs.h's PLDMA_OP_TABLE) */
typedef struct PLDMAOpInfo {
    const char *name;
    unsigned int flags;     /* PLDMA_OPF_* */
    unsigned int wc;        /* PLDMA_WC_* of its send CQE */
} PLDMAOpInfo;

extern const PLDMAOpInfo pldma_op_info[PLDMA_OP_TABLE_SIZE];

/* The PLDMA_OPF_* of opcode @op (0: not an opcode) */
static inline unsigned int pldma_op_flags(uint8_t op)
{
    return op < PLDMA_OP_TABLE_SIZE ? pldma_op_info[op].flags : 0;
}

/* An op to a QP's peer: on a QP's send queue only (req.c) */
static inline bool pldma_op_remote(uint8_t op)
{
    return pldma_op_flags(op) & PLDMA_OPF_REMOTE;
}

/* One that needs the peer's receive queue (SEND, WRITE with immediate) */
static inline bool pldma_op_qp_only(uint8_t op)
{
    return pldma_op_flags(op) & PLDMA_OPF_RECV;
}

/* A remote op whose requester sends the payload (WRITE, SEND) */
static inline bool pldma_op_sends(uint8_t op)
{
    return pldma_op_flags(op) & PLDMA_OPF_PAYLOAD;
}

static inline bool pldma_op_has_imm(uint8_t op)
{
    return pldma_op_flags(op) & PLDMA_OPF_IMM;
}

static inline bool pldma_op_atomic(uint8_t op)
{
    return pldma_op_flags(op) & PLDMA_OPF_ATOMIC;
}

#endif /* HW_MISC_PLDMA_INTERNAL_H */
