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

/* xlat-ahead: translations a channel keeps in flight ahead of its data */
#define PLDMA_TM_XLAT_AHEAD_MAX     32

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

    /* timing model (hw/misc/pldma/timing.c): where the channel's time is */
    int64_t tm_ready;       /* QEMU_CLOCK_VIRTUAL ns its work so far ends */
    uint64_t tm_rem;        /* remainder of the bytes' cost (ns x MB/s) */
    bool tm_fault;          /* a fault round trip is still to be charged */
    /*
     * Translations ahead of the data (xlat-ahead): they go out from
     * tm_xl_base on, in order, each when the one xlat-ahead before it has
     * been used; tm_xl_used[] holds when the data got to the last ones
     */
    int64_t tm_xl_base;     /* the addresses are known from then on */
    uint32_t tm_xl_n;       /* translations since tm_xl_base */
    int64_t tm_xl_used[PLDMA_TM_XLAT_AHEAD_MAX];

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
    uint32_t xlat_ahead;    /* translations in flight ahead of the data */
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
     * the engine reaches it only through its hook table, link.  Its state
     * is private to hw/misc/pldma/ (net-internal.h), as hw/nvme keeps its
     * own; its properties are among the engine's, from node-id on.
     */
    const struct PLDMALinkOps *link;
    struct PLDMANet *net;
    NICState *nic;
    NICConf *conf;

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
    uint32_t num_srqs;
    uint32_t mtu;
    uint32_t rto_us;        /* retransmit timeout of a QP's timeout 0 */
    bool rnr_resume;        /* receiver-driven "resolved, resend now" */
    uint32_t park_size;     /* bytes of segments held, 0: no parking */
    bool park_send;         /* SEND segments are held too (off: WRITE) */
    uint32_t x_drop_every;  /* test knobs: every Nth frame sent is... */
    uint32_t x_dup_every;   /* ...dropped, sent twice, or held back */
    uint32_t x_reorder_every;
    uint32_t resp_fault_ms; /* resp-fault-timeout: the bound of faults, ms */

    PLDMATiming tm;         /* timing model, properties and state */
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
