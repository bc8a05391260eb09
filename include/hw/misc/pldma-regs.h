/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, register map
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * This is the single source of truth for the programming interface of the
 * PLDMA device, shared by the QEMU model (hw/misc/pldma/), the Linux driver
 * (pldma.ko) and user space (libpldma).  It contains macros only: no QEMU,
 * Linux or libc types, so it can be included from any of those worlds.
 * Multi-byte fields in memory (descriptors, completion records, fault
 * records) are little-endian.  All registers are 32 bits wide and must be
 * accessed with 32-bit (or, for a _LO/_HI pair, 64-bit) accesses.
 *
 * See docs/specs/pldma.rst for the behaviour behind every name.
 */

#ifndef HW_MISC_PLDMA_REGS_H
#define HW_MISC_PLDMA_REGS_H

/* Helpers usable in both worlds */
#define PLDMA_BIT(n)                (1U << (n))
/* Extract/insert field [hi:lo] of a 32-bit value */
#define PLDMA_FMASK(hi, lo)         ((0xffffffffU >> (31 - (hi))) & \
                                     (0xffffffffU << (lo)))
#define PLDMA_FGET(v, hi, lo)       (((v) & PLDMA_FMASK(hi, lo)) >> (lo))
#define PLDMA_FSET(v, hi, lo)       (((v) << (lo)) & PLDMA_FMASK(hi, lo))

/* ------------------------------------------------------------------ */
/* Identification                                                      */
/* ------------------------------------------------------------------ */
#define PLDMA_ID_VALUE              0x504c444dU /* "PLDM" */
#define PLDMA_VERSION_MAJOR         1
#define PLDMA_VERSION_MINOR         0
#define PLDMA_VERSION_VALUE         ((PLDMA_VERSION_MAJOR << 16) | \
                                     PLDMA_VERSION_MINOR)
#define PLDMA_DT_COMPATIBLE         "exanest,pldma"

/* PCI front-end ("pldma-pci"): IDs, BARs, MSI-X vectors */
#define PLDMA_PCI_VENDOR_ID         0x1234  /* QEMU's (as edu) */
#define PLDMA_PCI_DEVICE_ID         0x11f0
#define PLDMA_PCI_BAR_REGS          0       /* the register pages */
#define PLDMA_PCI_BAR_MSIX          2       /* MSI-X table and PBA */
#define PLDMA_PCI_VEC_CH(n)         (n)     /* IRQ_CH_DONE(n) */
#define PLDMA_PCI_VEC_FAULT(nch)    (nch)   /* FAULT, FQ_OVERFLOW, CH_FAULTED */
#define PLDMA_PCI_VEC_ERROR(nch)    ((nch) + 1) /* CH/CQ/QP_ERROR, SRQ */
#define PLDMA_PCI_VEC_CQ(nch)       ((nch) + 2) /* IRQ_CQ */
#define PLDMA_PCI_VEC_ETH(nch)      ((nch) + 3) /* IRQ_ETH */
#define PLDMA_PCI_NUM_VECS(nch)     ((nch) + 4)

/* ------------------------------------------------------------------ */
/* MMIO layout                                                          */
/* ------------------------------------------------------------------ */
#define PLDMA_PAGE_SIZE             0x1000U
#define PLDMA_MAX_CHANNELS          16
/* Offset of the global (privileged) page and of channel n's user page */
#define PLDMA_GLOBAL_OFFSET         0x0U
#define PLDMA_CH_PAGE_OFFSET(n)     (PLDMA_PAGE_SIZE * (1U + (n)))
/* Size of the MMIO region for n channels */
#define PLDMA_MMIO_SIZE(n)          (PLDMA_PAGE_SIZE * (1U + (n)))

/* ------------------------------------------------------------------ */
/* Global page (privileged: never map it to user space)                */
/* ------------------------------------------------------------------ */
#define PLDMA_ID                    0x000   /* RO  PLDMA_ID_VALUE */
#define PLDMA_VERSION               0x004   /* RO  major[31:16] minor[15:0] */
#define PLDMA_CAP                   0x008   /* RO  capabilities */
#define   PLDMA_CAP_NUM_CH(v)         PLDMA_FGET(v, 7, 0)
#define   PLDMA_CAP_FAULT_STALL       PLDMA_BIT(8)  /* fault-mode=stall */
#define   PLDMA_CAP_FAULT_REPORT      PLDMA_BIT(9)  /* fault-mode=report */
#define   PLDMA_CAP_PASID             PLDMA_BIT(10) /* DMA goes via an IOMMU */
#define   PLDMA_CAP_REMOTE            PLDMA_BIT(11) /* RDMA: a network link */
#define   PLDMA_CAP_QP                PLDMA_BIT(12) /* RC queue pairs */
#define   PLDMA_CAP_CQ                PLDMA_BIT(13) /* CQs, RQs, SEND/RECV */
#define   PLDMA_CAP_ETH               PLDMA_BIT(14) /* the Ethernet function */
/*
 * fault-mode=pri (pldma-pci only): a translation without the needed
 * permission becomes a PCIe page request (PRI); the channel waits in
 * STALLED until the page group response, as in stall mode.  To the
 * driver, pri is what stall is on the platform device: the IOMMU's IOPF
 * resolves the fault and nothing is posted to the fault queue.
 */
#define   PLDMA_CAP_FAULT_PRI         PLDMA_BIT(15) /* fault-mode=pri */
#define   PLDMA_CAP_PASID_BITS(v)     PLDMA_FGET(v, 20, 16)
/*
 * RC atomics (PLDMA_OP_ATOMIC_*, as verbs' IBV_ATOMIC_HCA): atomic with
 * respect to the device's own atomics, not to the CPUs' accesses
 */
#define   PLDMA_CAP_ATOMIC            PLDMA_BIT(21)
/* shared receive queues (PLDMA_SRQ_*), which a QP takes instead of an RQ */
#define   PLDMA_CAP_SRQ               PLDMA_BIT(22)
/* unreliable connected QPs (PLDMA_QP_TYPE_UC) */
#define   PLDMA_CAP_UC                PLDMA_BIT(23)
/* unreliable datagram QPs (PLDMA_QP_TYPE_UD) */
#define   PLDMA_CAP_UD                PLDMA_BIT(24)
#define PLDMA_MAX_XFER              0x00c   /* RO  max descriptor length */
#define PLDMA_CTRL                  0x010   /* RW */
#define   PLDMA_CTRL_RESET            PLDMA_BIT(0)  /* W1: reset the engine */
#define PLDMA_STREAM_ID             0x014   /* RO  StreamID of the device */
#define PLDMA_CHUNK_SIZE            0x018   /* RO  bytes per scheduling turn */

/* Interrupts: one level-triggered line; STATUS is W1C, MASK 1 = enabled */
#define PLDMA_IRQ_STATUS            0x020
#define PLDMA_IRQ_MASK              0x024
#define   PLDMA_IRQ_CH_DONE(n)        PLDMA_BIT(n)  /* n < 16 */
#define   PLDMA_IRQ_CH_DONE_ALL       0x0000ffffU
#define   PLDMA_IRQ_FAULT             PLDMA_BIT(16) /* fault record(s) posted */
#define   PLDMA_IRQ_FQ_OVERFLOW       PLDMA_BIT(17) /* record not posted */
#define   PLDMA_IRQ_CH_ERROR          PLDMA_BIT(18) /* channel in ERROR */
#define   PLDMA_IRQ_CH_FAULTED        PLDMA_BIT(19) /* channel in FAULTED */
#define   PLDMA_IRQ_CQ                PLDMA_BIT(20) /* CQ_EVENTS has a bit */
#define   PLDMA_IRQ_CQ_ERROR          PLDMA_BIT(21) /* CQ_ERRORS has a bit */
#define   PLDMA_IRQ_QP_ERROR          PLDMA_BIT(22) /* QP_ERRORS has a bit */
#define   PLDMA_IRQ_ETH               PLDMA_BIT(23) /* ETH_EVENTS & _MASK */
#define   PLDMA_IRQ_SRQ               PLDMA_BIT(24) /* SRQ_EVENTS|_ERRORS */
/* RO bitmaps: bit n = channel n is in FAULTED / ERROR / STALLED state */
#define PLDMA_FAULTED_CHANNELS      0x028
#define PLDMA_ERROR_CHANNELS        0x02c
#define PLDMA_STALLED_CHANNELS      0x030

/* Fault queue (report mode).  Addresses are IOVAs without PASID. */
#define PLDMA_FQ_BASE_LO            0x040   /* RW, 32-byte aligned */
#define PLDMA_FQ_BASE_HI            0x044
#define PLDMA_FQ_SIZE               0x048   /* RW  entries, 2^k, 2..4096 */
#define PLDMA_FQ_HEAD               0x04c   /* RW  consumer (driver) index */
#define PLDMA_FQ_TAIL               0x050   /* RO  producer (device) index */
#define PLDMA_FQ_CTRL               0x054   /* RW */
#define   PLDMA_FQ_CTRL_ENABLE        PLDMA_BIT(0)
#define PLDMA_FQ_STATUS             0x058
#define   PLDMA_FQ_STATUS_OVERFLOW    PLDMA_BIT(0)  /* W1C */
#define   PLDMA_FQ_STATUS_WRITE_ERR   PLDMA_BIT(1)  /* W1C: write failed */
#define PLDMA_FQ_OVERFLOWS          0x05c   /* RO  records not posted */
#define PLDMA_FQ_MAX_ENTRIES        4096
#define PLDMA_FQ_MIN_ENTRIES        2

/*
 * The bound of a reported responder fault, ms (the device's default
 * resp-fault-timeout): longer than the driver's longest own wait for a
 * fault-in (guest-driver/pldma_drv.h: PLDMA_NO_PROGRESS_MS, 1 s, extended
 * up to PLDMA_SLOW_PERIODS, 30, for a fault-in that is busy), so that a
 * fault the driver is still resolving never ends early
 */
#define PLDMA_RESP_FAULT_TIMEOUT_MS 32000

/* Per-channel privileged binding: 16 bytes per channel */
#define PLDMA_CH_BIND_STRIDE        0x10
#define PLDMA_CH_BIND(n)            (0x100 + PLDMA_CH_BIND_STRIDE * (n))
#define PLDMA_CHB_PASID             0x0     /* RW while ENABLE = 0 */
#define   PLDMA_CHB_PASID_VALUE(v)    PLDMA_FGET(v, 19, 0)
#define   PLDMA_CHB_PASID_EN          PLDMA_BIT(31) /* 0 = DMA without PASID */
#define PLDMA_CHB_CTRL              0x4
#define   PLDMA_CHB_CTRL_ENABLE       PLDMA_BIT(0)
#define   PLDMA_CHB_CTRL_RESET        PLDMA_BIT(1)  /* W1, self-clearing */
#define   PLDMA_CHB_CTRL_CLR_CNT      PLDMA_BIT(2)  /* W1: clear counters */
#define PLDMA_CHB_OWNER             0x8     /* RW  opaque tag for the driver */
#define PLDMA_CHB_STATE             0xc     /* RO  PLDMA_STATE_* */

/*
 * Remote DMA (CAP.REMOTE, hw/misc/pldma/net.c, keys.c): the node, the key
 * table that exposes ranges of a PASID's address space to remote writers and
 * readers, and the network counters.  A key is staged in
 * KEY_PASID..KEY_ACCESS and committed to entry KEY_SEL by KEY_CMD; KEY_RKEY
 * then reads the remote key, KEY_STATUS the result.  Nothing is pinned:
 * every incoming request is checked against its key and translated through
 * the key's PASID.
 */
#define PLDMA_NET_NODE              0x200   /* RO  node-id, 0 = no link */
#define PLDMA_NET_MTU               0x204   /* RO  payload bytes a segment */
#define PLDMA_NET_MAX_NODES         64      /* node-ids 1..63 */
#define PLDMA_KEY_SEL               0x210   /* RW  key index */
#define PLDMA_KEY_PASID             0x214   /* RW  staged, CHB_PASID format */
#define PLDMA_KEY_VA_LO             0x218   /* RW  staged start VA */
#define PLDMA_KEY_VA_HI             0x21c
#define PLDMA_KEY_LEN_LO            0x220   /* RW  staged length, > 0 */
#define PLDMA_KEY_LEN_HI            0x224
#define PLDMA_KEY_ACCESS            0x228   /* RW  staged PLDMA_KEY_ACC_* */
#define   PLDMA_KEY_ACC_WRITE         PLDMA_BIT(0)  /* remote RDMA WRITE */
#define   PLDMA_KEY_ACC_READ          PLDMA_BIT(1)  /* remote RDMA READ */
#define   PLDMA_KEY_ACC_ATOMIC        PLDMA_BIT(2)  /* remote atomics */
#define   PLDMA_KEY_ACC_FLUSH         PLDMA_BIT(3)  /* remote FLUSH, global
                                                       visibility */
/*
 * Only a QP of the key's PD (its PASID and PD tag, KEY_PD) reaches the
 * key, as verbs define an rkey; a QP's ACCESS takes the same bits
 */
#define   PLDMA_KEY_ACC_RW            (PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ)
#define   PLDMA_KEY_ACC_MASK          0xf
#define PLDMA_KEY_CMD               0x22c   /* WO  on entry KEY_SEL */
#define   PLDMA_KEY_CMD_REGISTER      1     /* commit the staged key */
#define   PLDMA_KEY_CMD_REVOKE        2     /* invalidate it at once */
#define   PLDMA_KEY_CMD_RESOLVED      3     /* its responder fault is fixed */
#define   PLDMA_KEY_CMD_FAILED        4     /* ... cannot be: end the message */
#define PLDMA_KEY_RKEY              0x230   /* RO  rkey of KEY_SEL, 0 = none */
#define PLDMA_KEY_STATUS            0x234   /* RO  PLDMA_KEY_ST_* */
/*
 * A protection domain is a PASID (KEY_PASID, QP_PD) and a tag that tells
 * apart the PDs of one address space (verbs PDs of one context): the
 * driver gives each its own, 0 for those that are one per PASID
 */
#define PLDMA_KEY_PD                0x238   /* RW  staged PD tag */
#define   PLDMA_PD_TAG_MAX            0xffff
#define   PLDMA_KEY_ST_OK             0
#define   PLDMA_KEY_ST_BAD_INDEX      1
#define   PLDMA_KEY_ST_BAD_RANGE      2     /* length 0, or it wraps */
#define   PLDMA_KEY_ST_BAD_PASID      3     /* or PD tag */
#define   PLDMA_KEY_ST_BAD_ACCESS     4
#define   PLDMA_KEY_ST_BAD_CMD        5
#define PLDMA_NUM_KEYS              64
/* rkey: a generation above the index, so a revoked key never matches */
#define PLDMA_RKEY_INDEX(k)         ((k) & 0xffU)
#define PLDMA_RKEY_GEN(k)           ((k) >> 8)
#define PLDMA_RKEY(gen, idx)        ((((gen) & 0xffffffU) << 8) | (idx))

/* Network counters: 32 bits each, wrapping */
#define PLDMA_NET_CNT(i)            (0x280 + 4 * (i))
#define PLDMA_NCNT_TX_FRAMES        0
#define PLDMA_NCNT_RX_FRAMES        1
#define PLDMA_NCNT_RX_DROPPED       2   /* malformed, bad ICRC, not ours */
#define PLDMA_NCNT_NAK_TX_SEQ       3   /* NAKs sent, by reason */
#define PLDMA_NCNT_NAK_TX_RNR       4
#define PLDMA_NCNT_NAK_TX_ACCESS    5
#define PLDMA_NCNT_NAK_TX_INVALID   6
#define PLDMA_NCNT_NAK_TX_OPERR     7
#define PLDMA_NCNT_NAK_RX_SEQ       8   /* NAKs received, by reason */
#define PLDMA_NCNT_NAK_RX_RNR       9
#define PLDMA_NCNT_NAK_RX_ACCESS    10
#define PLDMA_NCNT_NAK_RX_INVALID   11
#define PLDMA_NCNT_NAK_RX_OPERR     12
#define PLDMA_NCNT_RETX_SEGS        13  /* segments sent again */
#define PLDMA_NCNT_RETX_BYTES       14
#define PLDMA_NCNT_RX_FAULTS        15  /* responder-side faults */
#define PLDMA_NCNT_RNR_WAITS        16  /* RNR waits of the requester */
#define PLDMA_NCNT_DUPS             17  /* duplicate segments received */
#define PLDMA_NCNT_OOO              18  /* out-of-order segments received */
#define PLDMA_NCNT_TIMEOUTS         19  /* retransmit timer expiries */
#define PLDMA_NCNT_RESUME_TX        20  /* "resolved, resend now" sent */
#define PLDMA_NCNT_RESUME_RX        21
#define PLDMA_NCNT_ACK_TX           22
#define PLDMA_NCNT_ACK_RX           23
#define PLDMA_NCNT_QP_DROPPED       24  /* frames for no QP, or not its peer */
#define PLDMA_NCNT_RQ_EMPTY         25  /* RNR NAKs: no receive WQE posted */
#define PLDMA_NCNT_PARKED           26  /* segments held behind a fault */
#define PLDMA_NCNT_LOOPED           27  /* frames to the port's own MAC */
/* ACKs and NAKs naming a PSN the requester never sent: dropped */
#define PLDMA_NCNT_ACK_UNSENT       28
/* frames to another MAC than the port's: dropped */
#define PLDMA_NCNT_NOT_OURS         29
/* UC messages dropped: a PSN gap, a refused packet, a fault */
#define PLDMA_NCNT_UC_DROPPED       30
/* UD datagrams dropped: a bad Q_Key, no WQE, too long, a fault */
#define PLDMA_NCNT_UD_DROPPED       31
#define PLDMA_NCNT_NUM              32  /* at most 32: 0x280..0x2ff */
/*
 * The counters' names, in index order, for debugfs and libpldma:
 * PLDMA_NCNT_NAMES(X) expands X(index, "name") for every counter.
 */
#define PLDMA_NCNT_NAMES(X) \
    X(PLDMA_NCNT_TX_FRAMES, "tx_frames") \
    X(PLDMA_NCNT_RX_FRAMES, "rx_frames") \
    X(PLDMA_NCNT_RX_DROPPED, "rx_dropped") \
    X(PLDMA_NCNT_NAK_TX_SEQ, "nak_tx_seq") \
    X(PLDMA_NCNT_NAK_TX_RNR, "nak_tx_rnr") \
    X(PLDMA_NCNT_NAK_TX_ACCESS, "nak_tx_access") \
    X(PLDMA_NCNT_NAK_TX_INVALID, "nak_tx_invalid") \
    X(PLDMA_NCNT_NAK_TX_OPERR, "nak_tx_operr") \
    X(PLDMA_NCNT_NAK_RX_SEQ, "nak_rx_seq") \
    X(PLDMA_NCNT_NAK_RX_RNR, "nak_rx_rnr") \
    X(PLDMA_NCNT_NAK_RX_ACCESS, "nak_rx_access") \
    X(PLDMA_NCNT_NAK_RX_INVALID, "nak_rx_invalid") \
    X(PLDMA_NCNT_NAK_RX_OPERR, "nak_rx_operr") \
    X(PLDMA_NCNT_RETX_SEGS, "retx_segments") \
    X(PLDMA_NCNT_RETX_BYTES, "retx_bytes") \
    X(PLDMA_NCNT_RX_FAULTS, "responder_faults") \
    X(PLDMA_NCNT_RNR_WAITS, "rnr_waits") \
    X(PLDMA_NCNT_DUPS, "duplicates") \
    X(PLDMA_NCNT_OOO, "out_of_order") \
    X(PLDMA_NCNT_TIMEOUTS, "timeouts") \
    X(PLDMA_NCNT_RESUME_TX, "resume_tx") \
    X(PLDMA_NCNT_RESUME_RX, "resume_rx") \
    X(PLDMA_NCNT_ACK_TX, "ack_tx") \
    X(PLDMA_NCNT_ACK_RX, "ack_rx") \
    X(PLDMA_NCNT_QP_DROPPED, "qp_dropped") \
    X(PLDMA_NCNT_RQ_EMPTY, "rq_empty") \
    X(PLDMA_NCNT_PARKED, "parked") \
    X(PLDMA_NCNT_LOOPED, "looped") \
    X(PLDMA_NCNT_ACK_UNSENT, "ack_unsent") \
    X(PLDMA_NCNT_NOT_OURS, "not_ours") \
    X(PLDMA_NCNT_UC_DROPPED, "uc_dropped") \
    X(PLDMA_NCNT_UD_DROPPED, "ud_dropped")

/*
 * Queue pairs (CAP.QP, hw/misc/pldma/qp.c; on the wire net.c and its roles):
 * RoCEv2 Reliable Connection endpoints, as verbs model them.  A QP is staged
 * and modified like a key: select it with QP_SEL, stage the attributes
 * QP_ATTR_MASK names, write QP_CMD_MODIFY; QP_STATUS says whether the
 * transition was taken (nothing changes when it was not).  QP_CMD_QUERY
 * loads the staging registers from the QP.  The attribute mask uses the bit
 * values of verbs' enum ibv_qp_attr_mask, so a driver passes a verbs mask
 * through unchanged; PLDMA_QPA_PD and PLDMA_QPA_SQ are this device's own
 * (set at RESET->INIT).
 *
 * The send queue of a QP is a channel's ring (QP_SQ): its RDMA WRITE and
 * READ descriptors go to the QP's peer.  Its PD is a
 * PASID (CHB_PASID format): incoming requests may only use keys of that
 * PASID.  A frame is accepted only for a QP in RTR or RTS, from the QP's
 * destination IP, inside the QP's PSN window; anything else is dropped and
 * counted (PLDMA_NCNT_QP_DROPPED).  CTRL_RESET puts every QP in RESET; a QP
 * that enters RESET gets a new QPN (the generation in QPN[23:8] changes,
 * QPN[7:0] is the index), so frames of its old connection never match.
 */
#define PLDMA_NET_IP                0x300   /* RW  IPv4 source address (GID
                                               ::ffff:a.b.c.d), default
                                               10.0.0.<node-id> */
#define PLDMA_NET_MAC_LO            0x304   /* RO  MAC bytes 0..3, byte 0 in
                                               bits 7:0 */
#define PLDMA_NET_MAC_HI            0x308   /* RO  MAC bytes 4..5 */
#define PLDMA_QP_NUM                0x30c   /* RO  number of QPs (num-qps) */
#define PLDMA_QP_SEL                0x310   /* RW  QP index */
#define PLDMA_QP_QPN                0x314   /* RO  QPN of QP_SEL */
#define PLDMA_QP_STATE              0x318   /* RO  PLDMA_QPS_* of QP_SEL */
#define PLDMA_QP_ATTR_MASK          0x31c   /* RW  staged PLDMA_QPA_* */
#define PLDMA_QP_NEW_STATE          0x320   /* RW  staged PLDMA_QPS_* */
#define PLDMA_QP_SQ                 0x324   /* RW  staged channel index */
#define PLDMA_QP_PD                 0x328   /* RW  staged PASID (CHB_PASID) */
#define PLDMA_QP_ACCESS             0x32c   /* RW  staged PLDMA_KEY_ACC_* */
#define PLDMA_QP_DEST_QPN           0x330   /* RW  staged */
#define PLDMA_QP_DEST_IP            0x334   /* RW  staged IPv4 */
#define PLDMA_QP_DEST_MAC_LO        0x338   /* RW  staged, as NET_MAC_LO */
#define PLDMA_QP_DEST_MAC_HI        0x33c
#define PLDMA_QP_SQ_PSN             0x340   /* RW  staged, 24 bits */
#define PLDMA_QP_RQ_PSN             0x344   /* RW  staged, 24 bits */
#define PLDMA_QP_PATH_MTU           0x348   /* RW  staged PLDMA_MTU_* */
#define PLDMA_QP_TIMERS             0x34c   /* RW  staged, fields below */
#define   PLDMA_QPT_RETRY_CNT(v)      PLDMA_FGET(v, 2, 0)
#define   PLDMA_QPT_RNR_RETRY(v)      PLDMA_FGET(v, 6, 4)   /* 7 = infinite */
#define   PLDMA_QPT_MIN_RNR_TIMER(v)  PLDMA_FGET(v, 12, 8)  /* IB code */
#define   PLDMA_QPT_TIMEOUT(v)        PLDMA_FGET(v, 20, 16) /* 4.096us<<v */
/*
 * max_rd_atomic (IBA's initiator depth): the READ requests the requester
 * keeps outstanding, at most PLDMA_QP_MAX_RD_ATOMIC; 0 counts as 1
 */
#define   PLDMA_QPT_MAX_RD_ATOMIC(v)  PLDMA_FGET(v, 28, 24)
#define   PLDMA_QPT_RD_ATOMIC(n)      PLDMA_FSET(n, 28, 24)
#define   PLDMA_QPT_MAKE(retry, rnr_retry, min_rnr, timeout) \
    (PLDMA_FSET(retry, 2, 0) | PLDMA_FSET(rnr_retry, 6, 4) | \
     PLDMA_FSET(min_rnr, 12, 8) | PLDMA_FSET(timeout, 20, 16))
/* the bits a QP_TIMERS value may have */
#define   PLDMA_QPT_VALID \
    (PLDMA_QPT_MAKE(7, 7, 31, 31) | PLDMA_QPT_RD_ATOMIC(31))
#define PLDMA_QP_CMD                0x350   /* WO  on QP_SEL */
#define   PLDMA_QP_CMD_MODIFY         1
#define   PLDMA_QP_CMD_QUERY          2
#define   PLDMA_QP_CMD_RESOLVED       3     /* its RECV buffer fault is fixed */
#define   PLDMA_QP_CMD_FAILED         4     /* ... cannot be: end the message */
#define PLDMA_QP_STATUS             0x354   /* RO  PLDMA_QP_ST_* */
#define   PLDMA_QP_ST_OK              0
#define   PLDMA_QP_ST_BAD_INDEX       1
#define   PLDMA_QP_ST_BAD_STATE       2     /* transition not allowed */
#define   PLDMA_QP_ST_BAD_ATTR        3     /* missing or invalid attribute */
#define   PLDMA_QP_ST_BUSY            4     /* SQ channel used by another QP */
#define   PLDMA_QP_ST_BAD_CMD         5
#define PLDMA_MAX_QPS               64
/*
 * The receive queue and the CQs of a QP (CAP.CQ), staged with PLDMA_QPA_RQ
 * and PLDMA_QPA_CQ at RESET->INIT (both optional: a QP without an RQ
 * answers SEND and WRITE with immediate with an RNR NAK, a QP without a
 * send CQ writes no CQEs).  The RQ is a ring of PLDMA_RWQE_SIZE entries in
 * memory the driver allocates for DMA without PASID (as the fault queue);
 * its doorbell is the SQ channel's page (PLDMA_CH_RQ_TAIL).  Both CQs must
 * be ACTIVE and have the QP's PD.
 */
#define PLDMA_QP_RQ_BASE_LO         0x358   /* RW  staged IOVA, 64-byte aligned */
#define PLDMA_QP_RQ_BASE_HI         0x35c
#define PLDMA_QP_RQ_SIZE            0x360   /* RW  staged entries, 2^k, 2..4096 */
#define PLDMA_QP_SEND_CQ            0x364   /* RW  staged CQ index or CQ_NONE */
#define PLDMA_QP_RECV_CQ            0x368   /* RW  staged CQ index or CQ_NONE */
#define PLDMA_QP_RQ_HEAD            0x36c   /* RO  next receive WQE of QP_SEL */
#define PLDMA_RQ_MIN_ENTRIES        2
#define PLDMA_RQ_MAX_ENTRIES        4096
/*
 * READ requests a QP's responder remembers to check duplicates against
 * (IBA's responder READ resources): the most max_dest_rd_atomic a QP can
 * take
 */
#define PLDMA_QP_MAX_RD_ATOMIC      16
/*
 * QPs that entered ERR by themselves (a transport error: retries exhausted,
 * a CQ in error; not a NAK, whose work completion reports it), bit n = QP
 * index n: verbs' IB_EVENT_QP_FATAL.
 * W1C; IRQ_QP_ERROR while any bit is set.
 */
#define PLDMA_QP_ERRORS_LO          0x370
#define PLDMA_QP_ERRORS_HI          0x374
#define PLDMA_QP_PD_TAG             0x378   /* RW  staged PD tag (QPA_PD) */
#define PLDMA_QP_SRQ                0x37c   /* RW  staged SRQ index (QPA_SRQ) */

/*
 * Shared receive queues (CAP.SRQ).  An SRQ is a ring of PLDMA_RWQE_SIZE
 * receive WQEs, as a QP's RQ, in memory the driver allocates for DMA
 * without PASID and may map to its user, followed by a doorbell record of
 * PLDMA_SRQ_DBREC_SIZE bytes at BASE + SIZE * PLDMA_RWQE_SIZE: its TAIL
 * (one past the last WQE posted; software writes it) and its HEAD (the
 * next WQE the device takes; the device writes it after each take).
 * There is no MMIO doorbell: the device reads TAIL when the WQEs it knew
 * of are taken.  An SRQ is staged (SRQ_BASE, SRQ_SIZE, SRQ_PD,
 * SRQ_PD_TAG) and created on entry SRQ_SEL by SRQ_CMD_CREATE; TAIL and
 * HEAD start at 0.
 *
 * A QP staged with PLDMA_QPA_SRQ (QP_SRQ) at RESET->INIT receives from
 * the SRQ instead of an RQ; the SRQ must be ACTIVE and have the QP's PD
 * and tag, and the QP may not have an RQ as well.  A message that needs
 * a receive WQE (a SEND's First/Only, a WRITE with immediate's Last/Only)
 * takes the one at HEAD; from then it is the QP's: a retried packet uses
 * it again, and it completes to the QP's receive CQ, or WR_FLUSH_ERR if
 * the QP enters ERR before.  WQEs still in the SRQ are not flushed.  No
 * WQE posted: an RNR NAK, as for an RQ.
 *
 * SRQ_CMD_ARM with SRQ_LIMIT staged arms the SRQ limit (0 disarms): when
 * a take leaves fewer than LIMIT WQEs posted, the SRQ's bit in SRQ_EVENTS
 * is set and the limit disarmed (verbs' IB_EVENT_SRQ_LIMIT_REACHED).  A
 * TAIL out of range, or a WQE or record that cannot be accessed, puts
 * the SRQ in ERROR (its bit in SRQ_ERRORS: IB_EVENT_SRQ_ERR); a QP that
 * needs a WQE from it NAKs the message (remote operational error) and
 * enters ERR.  IRQ_SRQ is set while either bitmap is not 0.
 */
#define PLDMA_SRQ_NUM               0x500   /* RO  number of SRQs (num-srqs) */
#define PLDMA_SRQ_SEL               0x504   /* RW  SRQ index */
#define PLDMA_SRQ_BASE_LO           0x508   /* RW  staged IOVA, 64-byte aligned */
#define PLDMA_SRQ_BASE_HI           0x50c
#define PLDMA_SRQ_SIZE              0x510   /* RW  staged entries, 2^k */
#define PLDMA_SRQ_PD                0x514   /* RW  staged PASID (CHB_PASID) */
#define PLDMA_SRQ_PD_TAG            0x518   /* RW  staged PD tag */
#define PLDMA_SRQ_LIMIT             0x51c   /* RW  staged limit (SRQ_CMD_ARM) */
#define PLDMA_SRQ_CMD               0x520   /* WO  on SRQ_SEL */
#define   PLDMA_SRQ_CMD_CREATE        1     /* staged -> ACTIVE, HEAD 0 */
#define   PLDMA_SRQ_CMD_DESTROY       2     /* -> NONE; no QP may use it */
#define   PLDMA_SRQ_CMD_ARM           3     /* SRQ_LIMIT -> the SRQ's limit */
#define PLDMA_SRQ_STATUS            0x524   /* RO  PLDMA_SRQ_ST_* */
#define   PLDMA_SRQ_ST_OK             0
#define   PLDMA_SRQ_ST_BAD_INDEX      1
#define   PLDMA_SRQ_ST_BAD_CONFIG     2     /* base, size, PD or limit */
#define   PLDMA_SRQ_ST_BUSY           3     /* create: exists; destroy: a
                                               QP out of RESET uses it */
#define   PLDMA_SRQ_ST_BAD_CMD        4
#define PLDMA_SRQ_STATE             0x528   /* RO  PLDMA_SRQS_* of SRQ_SEL */
#define PLDMA_SRQ_HEAD              0x52c   /* RO  next WQE of SRQ_SEL */
#define PLDMA_SRQ_ARMED             0x530   /* RO  armed limit of SRQ_SEL, 0:
                                               not armed */
#define PLDMA_SRQ_EVENTS_LO         0x538   /* W1C bit n: SRQ n's limit */
#define PLDMA_SRQ_EVENTS_HI         0x53c
#define PLDMA_SRQ_ERRORS_LO         0x540   /* W1C bit n: SRQ n to ERROR */
#define PLDMA_SRQ_ERRORS_HI         0x544
#define PLDMA_MAX_SRQS              64
#define PLDMA_SRQ_NONE              0xffffffffU
#define PLDMA_SRQ_MIN_ENTRIES       2
#define PLDMA_SRQ_MAX_ENTRIES       16384
/* the doorbell record after the ring (u32 each, little-endian) */
#define PLDMA_SRQ_DBREC_TAIL        0x0     /* software: one past the last */
#define PLDMA_SRQ_DBREC_HEAD        0x4     /* device: next to take */
#define PLDMA_SRQ_DBREC_SIZE        64

/* SRQ states */
#define PLDMA_SRQS_NONE             0
#define PLDMA_SRQS_ACTIVE           1
#define PLDMA_SRQS_ERROR            2   /* bad TAIL, WQE or record access */

/*
 * The transport of a QP (CAP.UC), staged with PLDMA_QPA_TYPE at
 * RESET->INIT (RC without it).  A UC QP sends and takes the UC opcodes
 * (IBA table 38: SEND and RDMA WRITE, with or without immediate; no READ,
 * no atomics): no ACK is asked or sent, nothing is resent, a send
 * completes when its last packet is on the link.  Its responder takes a
 * message whole or not at all: a PSN gap, a refused packet or a fault
 * drops the message (counted, PLDMA_NCNT_UC_DROPPED) and the packets up to
 * the next First or Only; a receive WQE a dropped SEND had started is
 * used again by the next message.  A fault on a UC responder's memory is
 * reported or stalled as an RC one, so the OS makes the page present for
 * the next message, but nothing waits for it.
 */
#define PLDMA_QP_TYPE               0x3c0   /* RW  staged PLDMA_QP_TYPE_* */
#define   PLDMA_QP_TYPE_RC            0
#define   PLDMA_QP_TYPE_UC            1
#define   PLDMA_QP_TYPE_UD            2     /* CAP.UD */
/*
 * Unreliable datagram QPs (CAP.UD): QP_TYPE_UD at RESET->INIT, which
 * also needs PLDMA_QPA_QKEY (and STATE, PD, SQ; not ACCESS_FLAGS); RTR
 * needs STATE only (QKEY may change), RTS STATE and SQ_PSN.  The path
 * attributes (AV, DEST_QPN, PATH_MTU, RQ_PSN, the timers, MAX_QP_RD_ATOMIC)
 * are no UD QP's: BAD_ATTR.  A UD QP sends SEND and SEND with immediate
 * only, of at most the link's MTU (CAP's mtu, the port's active MTU), each
 * one packet (BTH opcode 0x64/0x65 with a DETH) to the address vector in
 * its descriptor (PLDMA_DESC_UD_*); it completes when it is on the link.
 * A datagram to a UD QP in RTR or RTS from any source, with the QP's
 * Q_Key, takes its next receive WQE (RQ or SRQ): the WQE gets
 * PLDMA_UD_GRH_LEN bytes of GRH (for RoCEv2 over IPv4: 20 zero bytes,
 * then the datagram's IPv4 header, as verbs' ibv_init_ah_from_wc() reads
 * it), then the payload; its CQE has SRC_QP (the DETH's source QP) and
 * PLDMA_CQE_F_GRH.  Datagrams with another Q_Key, for a QP with no WQE,
 * longer than the WQE or whose buffer faults are dropped and counted
 * (PLDMA_NCNT_UD_DROPPED); the WQE stays for the next one.  A fault is
 * reported or stalled as a UC one, so that the OS makes the page present,
 * and nothing waits for it.  Datagrams to QPN 1 are the Ethernet
 * function's (QP1, the OS's).
 */
#define PLDMA_QP_QKEY               0x3c4   /* RW  staged Q_Key (QPA_QKEY) */
#define PLDMA_UD_GRH_LEN            40

/*
 * Completion queues (CAP.CQ): rings of PLDMA_CQE_SIZE entries in memory the
 * driver allocates for DMA without PASID and may map to its user.  A CQ is
 * staged (CQ_BASE, CQ_SIZE, CQ_PD) and created on entry CQ_SEL by CQ_CMD.
 * The device writes a CQE and then its owner byte; the owner bit of the
 * first pass over the ring is 1, and flips at every wrap, so a consumer
 * knows a new entry without reading a register.  Consumers report what
 * they consumed, and arm the CQ, through the doorbell of a channel whose
 * PASID is the CQ's PD (PLDMA_CH_CQ_DB): a doorbell from any other channel
 * is ignored.  A CQ that has no room for a CQE, or whose CQE write fails,
 * goes to ERROR (CQ_ERRORS, IRQ_CQ_ERROR) and its QPs to ERR.
 */
#define PLDMA_CQ_NUM                0x380   /* RO  number of CQs (num-cqs) */
#define PLDMA_CQ_SEL                0x384   /* RW  CQ index */
#define PLDMA_CQ_BASE_LO            0x388   /* RW  staged IOVA, 32-byte aligned */
#define PLDMA_CQ_BASE_HI            0x38c
#define PLDMA_CQ_SIZE               0x390   /* RW  staged entries, 2^k */
#define PLDMA_CQ_PD                 0x394   /* RW  staged PASID (CHB_PASID) */
#define PLDMA_CQ_CMD                0x398   /* WO  on CQ_SEL */
#define   PLDMA_CQ_CMD_CREATE         1     /* staged -> ACTIVE, indices 0 */
#define   PLDMA_CQ_CMD_DESTROY        2     /* -> NONE; no QP may use it */
#define PLDMA_CQ_STATUS             0x39c   /* RO  PLDMA_CQ_ST_* */
#define   PLDMA_CQ_ST_OK              0
#define   PLDMA_CQ_ST_BAD_INDEX       1
#define   PLDMA_CQ_ST_BAD_CONFIG      2     /* base, size or PD */
#define   PLDMA_CQ_ST_BUSY            3     /* in use (create: exists;
                                               destroy: a QP uses it) */
#define   PLDMA_CQ_ST_BAD_CMD         4
#define PLDMA_CQ_STATE              0x3a0   /* RO  PLDMA_CQS_* of CQ_SEL */
#define PLDMA_CQ_PI                 0x3a4   /* RO  CQEs written (mod 2^24) */
#define PLDMA_CQ_CI                 0x3a8   /* RO  consumer index, as rung */
#define PLDMA_CQ_EVENTS_LO          0x3b0   /* W1C bit n: armed CQ n fired */
#define PLDMA_CQ_EVENTS_HI          0x3b4
#define PLDMA_CQ_ERRORS_LO          0x3b8   /* W1C bit n: CQ n went to ERROR */
#define PLDMA_CQ_ERRORS_HI          0x3bc
#define PLDMA_MAX_CQS               64
#define PLDMA_CQ_NONE               0xffffffffU
#define PLDMA_CQ_MIN_ENTRIES        2
#define PLDMA_CQ_MAX_ENTRIES        65536

/* CQ states */
#define PLDMA_CQS_NONE              0
#define PLDMA_CQS_ACTIVE            1
#define PLDMA_CQS_ERROR             2   /* overflow or CQE write failure */

/* Completion queue entry: 32 bytes, owner byte written last */
#define PLDMA_CQE_SIZE              32
#define PLDMA_CQE_WR_ID             0x00    /* u64 SQ: descriptor COOKIE;
                                               RQ: receive WQE's WR_ID */
#define PLDMA_CQE_BYTE_LEN          0x08    /* u32 bytes sent/read/received */
#define PLDMA_CQE_IMM               0x0c    /* u32 immediate, as on the wire
                                               (big-endian, verbs' __be32) */
#define PLDMA_CQE_QPN               0x10    /* u32 local QPN */
#define PLDMA_CQE_SRC_QP            0x14    /* u32 remote QPN */
#define PLDMA_CQE_OPCODE            0x18    /* u8  PLDMA_WC_* */
#define PLDMA_CQE_STATUS            0x19    /* u8  PLDMA_WC_ST_* */
#define PLDMA_CQE_FLAGS             0x1a    /* u8  PLDMA_CQE_F_* */
#define PLDMA_CQE_OWNER             0x1b    /* u8  bit 0: owner (phase) */
#define PLDMA_CQE_VENDOR_ERR        0x1c    /* u32 PLDMA_ST_* of an error */
#define   PLDMA_CQE_F_IMM             PLDMA_BIT(0)
#define   PLDMA_CQE_F_SOLICITED       PLDMA_BIT(1)
#define   PLDMA_CQE_F_GRH             PLDMA_BIT(2)  /* UD: a GRH leads */

/* CQE opcodes (as enum ibv_wc_opcode) */
#define PLDMA_WC_SEND               0
#define PLDMA_WC_RDMA_WRITE         1
#define PLDMA_WC_RDMA_READ          2
#define PLDMA_WC_COMP_SWAP          3
#define PLDMA_WC_FETCH_ADD          4
#define PLDMA_WC_FLUSH              8   /* verbs' IBV_WC_FLUSH */
#define PLDMA_WC_ATOMIC_WRITE       9   /* verbs' IBV_WC_ATOMIC_WRITE */
#define PLDMA_WC_RECV               128
#define PLDMA_WC_RECV_RDMA_WITH_IMM 129

/* CQE status (as enum ibv_wc_status) */
#define PLDMA_WC_ST_SUCCESS         0
#define PLDMA_WC_ST_LOC_LEN_ERR     1   /* RECV: message longer than WQE */
#define PLDMA_WC_ST_LOC_QP_OP_ERR   2   /* bad descriptor or receive WQE */
#define PLDMA_WC_ST_LOC_PROT_ERR    4   /* local fault not resolved, DMA */
#define PLDMA_WC_ST_WR_FLUSH_ERR    5   /* flushed: the QP is in ERR */
#define PLDMA_WC_ST_REM_INV_REQ_ERR 9
#define PLDMA_WC_ST_REM_ACCESS_ERR  10
#define PLDMA_WC_ST_REM_OP_ERR      11
#define PLDMA_WC_ST_RETRY_EXC_ERR   12
#define PLDMA_WC_ST_RNR_RETRY_EXC_ERR 13
#define PLDMA_WC_ST_GENERAL_ERR     21

/*
 * Receive WQE: 64 bytes in the QP's RQ ring.  Each scatter entry is a VA
 * in the QP's PD (PASID); the PD's address space is the protection, the
 * LKEY field is not checked.  Faults on it are responder faults (RNR NAK),
 * posted as fault records with PLDMA_FR_F_RECV and answered per QP
 * (QP_CMD_RESOLVED or QP_CMD_FAILED).
 */
#define PLDMA_RWQE_SIZE             64
#define PLDMA_RWQE_WR_ID            0x00    /* u64 copied to the CQE */
#define PLDMA_RWQE_NUM_SGE          0x08    /* u32 0..PLDMA_RWQE_MAX_SGE */
#define PLDMA_RWQE_RSVD             0x0c    /* u32 must be 0 */
#define PLDMA_RWQE_SGE(i)           (0x10 + 16 * (i))
#define PLDMA_RWQE_MAX_SGE          3
#define PLDMA_SGE_ADDR              0x0     /* u64 VA */
#define PLDMA_SGE_LEN               0x8     /* u32 bytes */
#define PLDMA_SGE_LKEY              0xc     /* u32 not checked */

/* QP states (as enum ibv_qp_state) */
#define PLDMA_QPS_RESET             0
#define PLDMA_QPS_INIT              1
#define PLDMA_QPS_RTR               2
#define PLDMA_QPS_RTS               3
#define PLDMA_QPS_ERR               6
/*
 * The QP states' names, for the device's traces and the driver:
 * PLDMA_QPS_NAMES(X) expands X(state, "name") for every state.
 */
#define PLDMA_QPS_NAMES(X) \
    X(PLDMA_QPS_RESET, "RESET") \
    X(PLDMA_QPS_INIT, "INIT") \
    X(PLDMA_QPS_RTR, "RTR") \
    X(PLDMA_QPS_RTS, "RTS") \
    X(PLDMA_QPS_ERR, "ERR")

/* PSNs, QPNs and MSNs are 24 bits wide (IBTA BTH and AETH) */
#define PLDMA_PSN_MASK              0xffffffU

/* Attribute mask (bit values of enum ibv_qp_attr_mask) */
#define PLDMA_QPA_STATE             PLDMA_BIT(0)
#define PLDMA_QPA_ACCESS_FLAGS      PLDMA_BIT(3)
#define PLDMA_QPA_QKEY              PLDMA_BIT(6)  /* QP_QKEY (UD) */
#define PLDMA_QPA_AV                PLDMA_BIT(7)  /* DEST_IP, DEST_MAC */
#define PLDMA_QPA_PATH_MTU          PLDMA_BIT(8)
#define PLDMA_QPA_TIMEOUT           PLDMA_BIT(9)
#define PLDMA_QPA_RETRY_CNT         PLDMA_BIT(10)
#define PLDMA_QPA_RNR_RETRY         PLDMA_BIT(11)
#define PLDMA_QPA_RQ_PSN            PLDMA_BIT(12)
#define PLDMA_QPA_MAX_QP_RD_ATOMIC  PLDMA_BIT(13) /* QPT_MAX_RD_ATOMIC */
#define PLDMA_QPA_MIN_RNR_TIMER     PLDMA_BIT(15)
#define PLDMA_QPA_SQ_PSN            PLDMA_BIT(16)
#define PLDMA_QPA_DEST_QPN          PLDMA_BIT(20)
#define PLDMA_QPA_TYPE              PLDMA_BIT(26) /* QP_TYPE */
#define PLDMA_QPA_SRQ               PLDMA_BIT(27) /* QP_SRQ */
#define PLDMA_QPA_PD                PLDMA_BIT(28) /* QP_PD */
#define PLDMA_QPA_SQ                PLDMA_BIT(29) /* QP_SQ */
#define PLDMA_QPA_RQ                PLDMA_BIT(30) /* QP_RQ_BASE, QP_RQ_SIZE */
#define PLDMA_QPA_CQ                PLDMA_BIT(31) /* QP_SEND_CQ, QP_RECV_CQ */
/* What each transition needs, as IBA table 91 (plus PD and SQ) */
#define PLDMA_QPA_REQ_INIT          (PLDMA_QPA_STATE | PLDMA_QPA_ACCESS_FLAGS | \
                                     PLDMA_QPA_PD | PLDMA_QPA_SQ)
#define PLDMA_QPA_REQ_RTR           (PLDMA_QPA_STATE | PLDMA_QPA_AV | \
                                     PLDMA_QPA_PATH_MTU | \
                                     PLDMA_QPA_DEST_QPN | PLDMA_QPA_RQ_PSN | \
                                     PLDMA_QPA_MIN_RNR_TIMER)
#define PLDMA_QPA_REQ_RTS           (PLDMA_QPA_STATE | PLDMA_QPA_SQ_PSN | \
                                     PLDMA_QPA_TIMEOUT | PLDMA_QPA_RETRY_CNT | \
                                     PLDMA_QPA_RNR_RETRY)

/* Path MTU codes (as enum ibv_mtu) */
#define PLDMA_MTU_256               1
#define PLDMA_MTU_512               2
#define PLDMA_MTU_1024              3
#define PLDMA_MTU_2048              4
#define PLDMA_MTU_4096              5
#define PLDMA_MTU_BYTES(code)       (128U << (code))

/*
 * The Ethernet function (CAP.ETH, hw/misc/pldma/eth.c): a plain Ethernet
 * NIC on the same link as RoCEv2, as on any RoCE NIC.  Every frame the
 * link delivers that is not RoCEv2 for this node (not IPv4/UDP to port
 * 4791 and NET_IP) goes to the receive ring while ETH_CTRL.RX_EN is set;
 * with it clear, such frames are dropped and counted as before
 * (PLDMA_NCNT_RX_DROPPED).  So do RoCEv2 UD datagrams for this node (BTH
 * opcode 0x64 or 0x65: QP1's management datagrams, which the OS serves),
 * once their ICRC is checked; a bad one is dropped and counted there.
 * The transmit ring's frames go out on the link as they are (the driver
 * builds the whole frame, source MAC included); a descriptor whose LEN
 * has PLDMA_ETH_TX_ICRC gets its RoCEv2 ICRC (the frame's last four
 * bytes of IPv4 payload) computed by the device on the way out.
 *
 * Both rings are arrays of PLDMA_ETH_DESC_SIZE descriptors in memory the
 * driver allocates for DMA without PASID (as the fault queue), and so are
 * the buffers they point to.  HEAD (device) and TAIL (driver) are ring
 * indices, 0..SIZE-1; the ring is empty when HEAD == TAIL, so at most
 * SIZE-1 descriptors are posted.  The driver posts a descriptor with
 * STATUS 0 and writes TAIL; the device writes LEN (receive: the frame's
 * length) and then STATUS, and moves HEAD.  A frame that finds the
 * receive ring empty is dropped and counted (ETH_CNT_RX_NO_BUF): the link
 * never waits for the driver.  A ring whose descriptor cannot be read or
 * written back stops: its ENABLE bit clears, ETH_STATUS says why, an
 * ETH_EV_ERROR event is posted.  Ring registers are writable while their
 * ring is disabled only.
 */
#define PLDMA_ETH_CTRL              0x400   /* RW */
#define   PLDMA_ETH_CTRL_RX_EN        PLDMA_BIT(0)  /* receive ring runs */
#define   PLDMA_ETH_CTRL_TX_EN        PLDMA_BIT(1)  /* transmit ring runs */
#define   PLDMA_ETH_CTRL_PROMISC      PLDMA_BIT(2)  /* every unicast too */
#define   PLDMA_ETH_CTRL_RESET        PLDMA_BIT(31) /* W1: rings, counters,
                                                       events to 0 */
#define PLDMA_ETH_STATUS            0x404   /* RO */
#define   PLDMA_ETH_STATUS_LINK       PLDMA_BIT(0)  /* link up */
#define   PLDMA_ETH_STATUS_RX_ERR     PLDMA_BIT(1)  /* RX ring stopped */
#define   PLDMA_ETH_STATUS_TX_ERR     PLDMA_BIT(2)  /* TX ring stopped */
/* Events: W1C; IRQ_ETH is set while ETH_EVENTS & ETH_EVENT_MASK != 0 */
#define PLDMA_ETH_EVENTS            0x408
#define PLDMA_ETH_EVENT_MASK        0x40c   /* RW  1 = raises IRQ_ETH */
#define   PLDMA_ETH_EV_RX             PLDMA_BIT(0)  /* RX descriptor done */
#define   PLDMA_ETH_EV_TX             PLDMA_BIT(1)  /* TX descriptor done */
#define   PLDMA_ETH_EV_LINK           PLDMA_BIT(2)  /* ETH_STATUS_LINK moved */
#define   PLDMA_ETH_EV_ERROR          PLDMA_BIT(3)  /* a ring stopped */
#define   PLDMA_ETH_EV_ALL            0xf
#define PLDMA_ETH_RX_BASE_LO        0x410   /* RW  IOVA, 16-byte aligned */
#define PLDMA_ETH_RX_BASE_HI        0x414
#define PLDMA_ETH_RX_SIZE           0x418   /* RW  entries, 2^k, 2..4096;
                                               sets HEAD = TAIL = 0 */
#define PLDMA_ETH_RX_HEAD           0x41c   /* RO  next descriptor to fill */
#define PLDMA_ETH_RX_TAIL           0x420   /* RW  one past the last posted */
#define PLDMA_ETH_TX_BASE_LO        0x430   /* RW  IOVA, 16-byte aligned */
#define PLDMA_ETH_TX_BASE_HI        0x434
#define PLDMA_ETH_TX_SIZE           0x438   /* RW  as RX_SIZE */
#define PLDMA_ETH_TX_HEAD           0x43c   /* RO  next descriptor to send */
#define PLDMA_ETH_TX_TAIL           0x440   /* RW  doorbell */
#define PLDMA_ETH_MAX_FRAME         0x444   /* RO  largest frame, bytes (no
                                               FCS) */
#define PLDMA_ETH_RING_MIN          2
#define PLDMA_ETH_RING_MAX          4096
#define PLDMA_ETH_FRAME_MAX         9018    /* ETH_MAX_FRAME: 9000 + header
                                               + VLAN tag */
#define PLDMA_ETH_FRAME_MIN         14      /* an Ethernet header */

/* Ethernet counters: 32 bits each, wrapping; W1 ETH_CTRL_RESET clears */
#define PLDMA_ETH_CNT(i)            (0x460 + 4 * (i))
#define PLDMA_ETH_CNT_TX_FRAMES     0   /* sent on the link */
#define PLDMA_ETH_CNT_TX_BYTES      1
#define PLDMA_ETH_CNT_TX_ERRORS     2   /* TX descriptors completed in error */
#define PLDMA_ETH_CNT_RX_FRAMES     3   /* written to the receive ring */
#define PLDMA_ETH_CNT_RX_BYTES      4
#define PLDMA_ETH_CNT_RX_NO_BUF     5   /* dropped: receive ring empty */
#define PLDMA_ETH_CNT_RX_ERRORS     6   /* RX descriptors completed in error */
#define PLDMA_ETH_CNT_RX_RUNT       7   /* dropped: shorter than a header */
#define PLDMA_ETH_CNT_RX_FILTERED   8   /* dropped: unicast to another MAC */
#define PLDMA_ETH_CNT_NUM           9   /* at most 40: 0x460..0x4ff */
#define PLDMA_ETH_CNT_NAMES(X) \
    X(PLDMA_ETH_CNT_TX_FRAMES, "tx_frames") \
    X(PLDMA_ETH_CNT_TX_BYTES, "tx_bytes") \
    X(PLDMA_ETH_CNT_TX_ERRORS, "tx_errors") \
    X(PLDMA_ETH_CNT_RX_FRAMES, "rx_frames") \
    X(PLDMA_ETH_CNT_RX_BYTES, "rx_bytes") \
    X(PLDMA_ETH_CNT_RX_NO_BUF, "rx_no_buffer") \
    X(PLDMA_ETH_CNT_RX_ERRORS, "rx_errors") \
    X(PLDMA_ETH_CNT_RX_RUNT, "rx_runt") \
    X(PLDMA_ETH_CNT_RX_FILTERED, "rx_filtered")

/* Ethernet descriptor: 16 bytes, 16-byte aligned, little-endian */
#define PLDMA_ETH_DESC_SIZE         16
#define PLDMA_ETH_DESC_ADDR         0x0     /* u64 buffer IOVA */
#define PLDMA_ETH_DESC_LEN          0x8     /* u32 RX: buffer size, written
                                               back: frame length; TX:
                                               frame length, and: */
#define   PLDMA_ETH_TX_ICRC           PLDMA_BIT(31) /* fill the RoCEv2 ICRC
                                               (written back without it) */
#define PLDMA_ETH_DESC_STATUS       0xc     /* u32 PLDMA_ETH_ST_*, written
                                               last by the device */
#define PLDMA_ETH_ST_PENDING        0
#define PLDMA_ETH_ST_OK             1
#define PLDMA_ETH_ST_BAD_LEN        2       /* TX: LEN out of FRAME_MIN..
                                               FRAME_MAX; RX: the frame
                                               did not fit (dropped) */
#define PLDMA_ETH_ST_DMA_ERROR      3       /* buffer not readable/writable */
#define PLDMA_ETH_ST_NOT_ROCE       4       /* TX_ICRC on a frame that is not
                                               IPv4 (no options) / UDP 4791
                                               / BTH / ICRC: not sent */

/* Per-channel counters: 64 bytes per channel (mirrored in the user page) */
#define PLDMA_CH_CNT_STRIDE         0x40
#define PLDMA_CH_CNT(n)             (0x800 + PLDMA_CH_CNT_STRIDE * (n))

/* ------------------------------------------------------------------ */
/* Channel page (one 4 KiB page per channel, may be mapped to user)    */
/* ------------------------------------------------------------------ */
#define PLDMA_CH_RING_BASE_LO       0x000   /* RW  user VA, 64-byte aligned */
#define PLDMA_CH_RING_BASE_HI       0x004
#define PLDMA_CH_RING_SIZE          0x008   /* RW  entries, 2^k, 2..4096 */
#define PLDMA_CH_RING_HEAD          0x00c   /* RO  next descriptor to run */
#define PLDMA_CH_RING_TAIL          0x010   /* RW  doorbell: one past last */
#define PLDMA_CH_CMD                0x014   /* WO */
#define   PLDMA_CMD_RESTART           1
#define   PLDMA_CMD_CANCEL            2   /* FAULTED, STALLED or ERROR */
#define PLDMA_CH_STATE              0x018   /* RO  PLDMA_STATE_* */
#define PLDMA_CH_ERROR              0x01c   /* RO  PLDMA_ERR_* */
#define PLDMA_CH_COMPLETED          0x020   /* RO  descriptors done (wraps) */
#define PLDMA_CH_LAST_STATUS        0x024   /* RO  PLDMA_ST_* of the last one */
#define PLDMA_CH_FAULT_VA_LO        0x028   /* RO  current fault */
#define PLDMA_CH_FAULT_VA_HI        0x02c
#define PLDMA_CH_FAULT_INFO         0x030   /* RO  PLDMA_FR_F_* flags */
#define PLDMA_CH_FAULT_DESC         0x034   /* RO  ring index of the fault */
#define PLDMA_CH_FAULT_DONE         0x038   /* RO  bytes done in that desc */
#define PLDMA_CH_PASID              0x03c   /* RO  PLDMA_CHB_PASID copy */
/*
 * Batched faults (report mode, descriptor AHEAD > 0): with the fault, the
 * pages of the descriptor the engine found missing, as one bitmap per
 * buffer.  Bit i of AHEAD_SRC_MAP: the page at AHEAD_SRC + i * 4 KiB,
 * where AHEAD_SRC is the source's current page (SRC + bytes done, rounded
 * down to 4 KiB); likewise for the destination.  Valid while the fault's
 * FAULT_INFO has PLDMA_FR_F_AHEAD, else 0.
 */
#define PLDMA_CH_AHEAD_SRC_LO       0x040   /* RO  page VA */
#define PLDMA_CH_AHEAD_SRC_HI       0x044
#define PLDMA_CH_AHEAD_SRC_MAP_LO   0x048   /* RO  missing pages, bit i */
#define PLDMA_CH_AHEAD_SRC_MAP_HI   0x04c
#define PLDMA_CH_AHEAD_DST_LO       0x050
#define PLDMA_CH_AHEAD_DST_HI       0x054
#define PLDMA_CH_AHEAD_DST_MAP_LO   0x058
#define PLDMA_CH_AHEAD_DST_MAP_HI   0x05c
/*
 * CQ doorbell (CAP.CQ): one write reports the consumer index of a CQ whose
 * PD is this channel's PASID and, with an ARM command, asks for one event:
 * it fires at once when the CQ holds CQEs past the consumer index, else at
 * the next CQE written (ARM_SOL: the next one of a solicited SEND or with
 * an error status).
 */
#define PLDMA_CH_CQ_DB              0x060   /* WO */
#define   PLDMA_CQ_DB_CI(v)           PLDMA_FGET(v, 23, 0)
#define   PLDMA_CQ_DB_CQ(v)           PLDMA_FGET(v, 29, 24)
#define   PLDMA_CQ_DB_CMD(v)          PLDMA_FGET(v, 31, 30)
#define   PLDMA_CQ_DB_MAKE(cmd, cq, ci) \
    (PLDMA_FSET(cmd, 31, 30) | PLDMA_FSET(cq, 29, 24) | \
     PLDMA_FSET((ci) & 0xffffffU, 23, 0))
#define   PLDMA_CQ_DB_CMD_CI          0     /* consumer index only */
#define   PLDMA_CQ_DB_CMD_ARM         1     /* ... and arm: next CQE */
#define   PLDMA_CQ_DB_CMD_ARM_SOL     2     /* ... and arm: solicited/error */
/* RQ doorbell of the QP whose SQ is this channel (CAP.CQ) */
#define PLDMA_CH_RQ_TAIL            0x064   /* RW  one past the last WQE */
#define PLDMA_CH_RQ_HEAD            0x068   /* RO  next WQE to consume */
#define PLDMA_AHEAD_PAGE            4096
#define PLDMA_AHEAD_MAX             64      /* pages per buffer */
#define PLDMA_CH_CNT_OFFSET         0x100   /* RO  counters, layout below */

#define PLDMA_RING_MIN_ENTRIES      2
#define PLDMA_RING_MAX_ENTRIES      4096

/* Counter block layout (global PLDMA_CH_CNT(n) and user page 0x100) */
#define PLDMA_CNT_BYTES_LO          0x00    /* bytes transferred */
#define PLDMA_CNT_BYTES_HI          0x04
#define PLDMA_CNT_DESCS             0x08    /* descriptors completed */
#define PLDMA_CNT_STALLS            0x0c    /* stall faults (stall mode) */
#define PLDMA_CNT_FAULTS            0x10    /* reported faults (report mode) */
#define PLDMA_CNT_RESTARTS          0x14    /* RETRY resumes + RESTARTs */
#define PLDMA_CNT_ABORTS            0x18    /* stall ABORT/TERMINATED */
#define PLDMA_CNT_CANCELS           0x1c    /* CANCEL commands */
#define PLDMA_CNT_ERRORS            0x20    /* completions with error status */
#define PLDMA_CNT_AHEAD             0x24    /* pages listed by batched faults */
#define PLDMA_CNT_NUM               10

/* Channel states */
#define PLDMA_STATE_DISABLED        0   /* CHB_CTRL.ENABLE = 0 */
#define PLDMA_STATE_IDLE            1   /* enabled, HEAD == TAIL */
#define PLDMA_STATE_RUNNING         2   /* working through the ring */
#define PLDMA_STATE_STALLED         3   /* stall mode: waiting for SMMU */
#define PLDMA_STATE_FAULTED         4   /* report mode: RESTART or CANCEL */
#define PLDMA_STATE_ERROR           5   /* ring error, see CH_ERROR */

/* Channel error codes (PLDMA_CH_ERROR) */
#define PLDMA_ERR_NONE              0
#define PLDMA_ERR_RING_INDEX        1   /* TAIL written >= RING_SIZE */
#define PLDMA_ERR_RING_CONFIG       2   /* bad RING_BASE/RING_SIZE at kick */
#define PLDMA_ERR_DESC_FETCH        3   /* descriptor could not be read */
#define PLDMA_ERR_COMPL_WRITE       4   /* completion record write failed */
#define PLDMA_ERR_DISABLED          5   /* doorbell while channel disabled */
#define PLDMA_ERR_BAD_CMD           6   /* RESTART/CANCEL out of place */

/* ------------------------------------------------------------------ */
/* Descriptor: 64 bytes, 64-byte aligned, in the owner's VA space       */
/* ------------------------------------------------------------------ */
#define PLDMA_DESC_SIZE             64
#define PLDMA_DESC_OPCODE           0x00    /* u8 */
#define PLDMA_DESC_FLAGS            0x01    /* u8 */
#define PLDMA_DESC_RSVD2            0x02    /* u16 must be 0 */
#define PLDMA_DESC_LEN              0x04    /* u32 bytes */
#define PLDMA_DESC_SRC              0x08    /* u64 source VA (COPY) */
#define PLDMA_DESC_DST              0x10    /* u64 destination VA */
#define PLDMA_DESC_PATTERN          0x18    /* u64 fill pattern (FILL) */
#define PLDMA_DESC_REMOTE_VA        0x18    /* u64 remote VA (RDMA ops) */
#define PLDMA_DESC_COMPL            0x20    /* u64 completion VA, 0 = none */
#define PLDMA_DESC_COOKIE           0x28    /* u64 copied to the record */
#define PLDMA_DESC_RKEY             0x30    /* u32 remote key (RDMA ops) */
#define PLDMA_DESC_AHEAD            0x34    /* u8 batched faults: pages */
#define PLDMA_DESC_NUM_SGE          0x35    /* u8 RDMA ops: 0, or a list */
#define PLDMA_DESC_RSVD0            0x36    /* 2 bytes, must be 0 */
#define PLDMA_DESC_IMM              0x38    /* u32 immediate (the _IMM
                                               opcodes; else must be 0),
                                               as on the wire (big-endian) */
#define PLDMA_DESC_RSVD1            0x3c    /* u32 must be 0 */
/*
 * Gather/scatter list of an RDMA operation: with NUM_SGE 1..MAX_SGE the
 * descriptor's local buffer field (SRC for WRITE and SEND, DST for READ)
 * is the VA, 16-byte aligned, of NUM_SGE entries of PLDMA_SGE_SIZE
 * (PLDMA_SGE_ADDR, _LEN; LKEY not checked: the PASID is the protection)
 * in the channel's address space.  The message's LEN bytes come from
 * (READ: go to) the entries in order; entries past LEN are not read, and
 * a list that ends before LEN ends the descriptor with
 * PLDMA_ST_BAD_LENGTH when the device gets there.  The entries are read
 * again at each segment (a fault on them is a fault of that access);
 * NUM_SGE on any other operation, above MAX_SGE or with a misaligned list
 * is PLDMA_ST_BAD_DESC.
 */
/* (16: UCX asks 5 per QP by default, rxe gives 32, mlx5 30) */
#define PLDMA_DESC_MAX_SGE          16
#define PLDMA_SGE_SIZE              16

/* Opcodes */
#define PLDMA_OP_NOP                0x00
#define PLDMA_OP_COPY               0x01
#define PLDMA_OP_FILL               0x02
/* SQ of a QP only: to the QP's peer */
#define PLDMA_OP_RDMA_WRITE         0x10    /* SRC -> REMOTE_VA */
#define PLDMA_OP_RDMA_READ          0x11    /* REMOTE_VA -> DST */
/* ... and with CAP.CQ: a message to the peer's next receive WQE */
#define PLDMA_OP_SEND               0x12    /* SRC, LEN */
#define PLDMA_OP_SEND_IMM           0x13    /* SRC, LEN, IMM */
#define PLDMA_OP_RDMA_WRITE_IMM     0x14    /* as WRITE; IMM consumes a
                                               receive WQE of the peer */
/*
 * ... and with CAP.ATOMIC: an RC atomic on the 8 bytes at REMOTE_VA
 * (8-byte aligned, the peer's native byte order); LEN must be 8.  The
 * value found there is written to DST (or the SGE list there).  SRC holds
 * the compare operand (CMP_SWAP) or the addend (FETCH_ADD), SWAP the
 * value stored when it compares equal (FETCH_ADD: must be 0).
 */
#define PLDMA_OP_ATOMIC_CMP_SWAP    0x15
#define PLDMA_OP_ATOMIC_FETCH_ADD   0x16
/*
 * ... and ATOMIC_WRITE (IBA 1.5, verbs' IBV_WR_ATOMIC_WRITE): the 8 bytes
 * at SRC's place (DESC_ATOMIC_CMP_ADD, in the order they are to be
 * stored) are written to REMOTE_VA as one access, with the peer key's
 * remote WRITE access; nothing comes back but the answer (a READ response
 * of no bytes), and a duplicate is answered, never written twice.  SWAP
 * must be 0.
 */
#define PLDMA_OP_ATOMIC_WRITE       0x17
/*
 * ... and FLUSH (IBA 1.5, verbs' IBV_WR_FLUSH): what the device wrote to
 * the peer's memory before it, at [REMOTE_VA, + LEN) of the key's window
 * (selectivity RANGE) or the whole window (MR), made globally visible;
 * the key needs KEY_ACC_FLUSH.  DESC_FLUSH holds the FETH's bits:
 * placement type [3:0] (GLOBAL 1; PERSISTENT 2, which no window of this
 * device has: NAK remote access), selectivity [5:4] (RANGE 0, MR 1); the
 * rest 0.  Nothing comes back but the answer (a READ response of no
 * bytes).
 */
#define PLDMA_OP_FLUSH              0x18
#define PLDMA_DESC_FLUSH            PLDMA_DESC_IMM  /* u32 FETH bits */
#define   PLDMA_FLUSH_GLOBAL          PLDMA_BIT(0)
#define   PLDMA_FLUSH_PERSISTENT      PLDMA_BIT(1)
#define   PLDMA_FLUSH_MR              PLDMA_BIT(4)  /* selectivity MR */
#define   PLDMA_FLUSH_VALID           0x13
#define PLDMA_DESC_ATOMIC_CMP_ADD   PLDMA_DESC_SRC  /* u64 operand */
#define PLDMA_DESC_ATOMIC_SWAP      PLDMA_DESC_IMM  /* u64, IMM and RSVD1 */
#define PLDMA_ATOMIC_LEN            8
/*
 * A SEND or SEND with immediate on a UD QP's send queue: its address
 * vector, in the fields a SEND does not use.  UD_DMAC holds the
 * destination MAC's six bytes in wire order, then two zero bytes;
 * UD_DEST_IP an IPv4 address as QP_DEST_IP holds it; UD_QKEY the Q_Key
 * (with bit 31 set, the QP's own Q_Key is sent instead, IBA 10.2.5);
 * UD_DEST_QPN the destination QP (24 bits, the rest 0).
 */
#define PLDMA_DESC_UD_DMAC          PLDMA_DESC_DST          /* 8 bytes */
#define PLDMA_DESC_UD_DEST_IP       PLDMA_DESC_REMOTE_VA    /* u32 */
#define PLDMA_DESC_UD_QKEY          (PLDMA_DESC_REMOTE_VA + 4)  /* u32 */
#define PLDMA_DESC_UD_DEST_QPN      PLDMA_DESC_RKEY         /* u32 */
#define PLDMA_UD_QKEY_PRIVILEGED    PLDMA_BIT(31)

/*
 * The opcodes as one table, indexed by opcode (an index not listed is not
 * an opcode: its row is all zero): { name, PLDMA_OPF_* flags, the CQE
 * opcode of its send completion (PLDMA_WC_*) }.  An includer declares the
 * array's element as  struct { const char *name; unsigned int flags, wc; }
 * (this header has no types).
 */
#define PLDMA_OPF_VALID             PLDMA_BIT(0) /* an opcode of the device */
#define PLDMA_OPF_REMOTE            PLDMA_BIT(1) /* to the QP's peer (QP SQ) */
#define PLDMA_OPF_PAYLOAD           PLDMA_BIT(2) /* requester sends from SRC */
#define PLDMA_OPF_RKEY              PLDMA_BIT(3) /* REMOTE_VA and RKEY used */
#define PLDMA_OPF_RECV              PLDMA_BIT(4) /* takes a peer's recv WQE */
#define PLDMA_OPF_IMM               PLDMA_BIT(5) /* carries IMM */
#define PLDMA_OPF_WIRE_SEND         PLDMA_BIT(6) /* SEND on the wire */
#define PLDMA_OPF_ATOMIC            PLDMA_BIT(7) /* an RC atomic (8 bytes) */
#define PLDMA_OPF_NO_RESULT         PLDMA_BIT(8) /* one request, an answer of
                                                    no bytes (Atomic Write,
                                                    FLUSH) */
#define PLDMA_OPF_FLUSH             PLDMA_BIT(9) /* DESC_FLUSH used */
#define PLDMA_OP_TABLE_SIZE         0x19
#define PLDMA_OP_TABLE {                                                     \
    [PLDMA_OP_NOP] = { "nop", PLDMA_OPF_VALID, 0 },                          \
    [PLDMA_OP_COPY] = { "copy", PLDMA_OPF_VALID, 0 },                        \
    [PLDMA_OP_FILL] = { "fill", PLDMA_OPF_VALID, 0 },                        \
    [PLDMA_OP_RDMA_WRITE] = { "rdma-write", PLDMA_OPF_VALID |                \
        PLDMA_OPF_REMOTE | PLDMA_OPF_PAYLOAD | PLDMA_OPF_RKEY,               \
        PLDMA_WC_RDMA_WRITE },                                               \
    [PLDMA_OP_RDMA_READ] = { "rdma-read", PLDMA_OPF_VALID |                  \
        PLDMA_OPF_REMOTE | PLDMA_OPF_RKEY, PLDMA_WC_RDMA_READ },             \
    [PLDMA_OP_SEND] = { "send", PLDMA_OPF_VALID | PLDMA_OPF_REMOTE |         \
        PLDMA_OPF_PAYLOAD | PLDMA_OPF_RECV | PLDMA_OPF_WIRE_SEND,            \
        PLDMA_WC_SEND },                                                     \
    [PLDMA_OP_SEND_IMM] = { "send-imm", PLDMA_OPF_VALID | PLDMA_OPF_REMOTE | \
        PLDMA_OPF_PAYLOAD | PLDMA_OPF_RECV | PLDMA_OPF_IMM |                 \
        PLDMA_OPF_WIRE_SEND, PLDMA_WC_SEND },                                \
    [PLDMA_OP_RDMA_WRITE_IMM] = { "rdma-write-imm", PLDMA_OPF_VALID |        \
        PLDMA_OPF_REMOTE | PLDMA_OPF_PAYLOAD | PLDMA_OPF_RKEY |              \
        PLDMA_OPF_RECV | PLDMA_OPF_IMM, PLDMA_WC_RDMA_WRITE },               \
    [PLDMA_OP_ATOMIC_CMP_SWAP] = { "atomic-cmp-swap", PLDMA_OPF_VALID |      \
        PLDMA_OPF_REMOTE | PLDMA_OPF_RKEY | PLDMA_OPF_ATOMIC,                \
        PLDMA_WC_COMP_SWAP },                                                \
    [PLDMA_OP_ATOMIC_FETCH_ADD] = { "atomic-fetch-add", PLDMA_OPF_VALID |    \
        PLDMA_OPF_REMOTE | PLDMA_OPF_RKEY | PLDMA_OPF_ATOMIC,                \
        PLDMA_WC_FETCH_ADD },                                                \
    [PLDMA_OP_ATOMIC_WRITE] = { "atomic-write", PLDMA_OPF_VALID |            \
        PLDMA_OPF_REMOTE | PLDMA_OPF_RKEY | PLDMA_OPF_ATOMIC |               \
        PLDMA_OPF_NO_RESULT, PLDMA_WC_ATOMIC_WRITE },                        \
    [PLDMA_OP_FLUSH] = { "flush", PLDMA_OPF_VALID | PLDMA_OPF_REMOTE |       \
        PLDMA_OPF_RKEY | PLDMA_OPF_NO_RESULT | PLDMA_OPF_FLUSH,              \
        PLDMA_WC_FLUSH },                                                    \
}

/* Descriptor flags */
#define PLDMA_DF_INTR               PLDMA_BIT(0) /* IRQ_CH_DONE on completion */
#define PLDMA_DF_SIGNALED           PLDMA_BIT(1) /* CQE to the QP's send CQ
                                                    (errors always write one) */
#define PLDMA_DF_SOLICITED          PLDMA_BIT(2) /* SEND: BTH SE bit */
#define PLDMA_DF_VALID_MASK         0x07

/* ------------------------------------------------------------------ */
/* Completion record: 32 bytes, 8-byte aligned, written status last    */
/* ------------------------------------------------------------------ */
#define PLDMA_COMPL_SIZE            32
#define PLDMA_COMPL_STATUS          0x00    /* u32 PLDMA_ST_*, written last */
#define PLDMA_COMPL_FLAGS           0x04    /* u32 PLDMA_FR_F_* of a fault */
#define PLDMA_COMPL_BYTES           0x08    /* u64 bytes completed */
#define PLDMA_COMPL_FAULT_VA        0x10    /* u64 faulting VA, or 0 */
#define PLDMA_COMPL_COOKIE          0x18    /* u64 descriptor cookie */

/* Completion status codes (0 means "not yet written") */
#define PLDMA_ST_PENDING            0
#define PLDMA_ST_SUCCESS            1
#define PLDMA_ST_ABORTED            2   /* stall answered ABORT/TERMINATED */
#define PLDMA_ST_CANCELLED          3   /* report mode CANCEL */
#define PLDMA_ST_BAD_OPCODE         4
#define PLDMA_ST_BAD_LENGTH         5   /* 0 (COPY/FILL) or > MAX_XFER */
#define PLDMA_ST_BAD_QP             6   /* the send queue's QP is not in RTS */
#define PLDMA_ST_BAD_DESC           7   /* bad flags / reserved != 0 */
#define PLDMA_ST_OVERLAP            8   /* COPY src/dst ranges overlap */
#define PLDMA_ST_DMA_ERROR          9   /* target not RAM (MMIO, ROM) */
#define PLDMA_ST_FAULT              10  /* unrecoverable translation fault */
#define PLDMA_ST_REMOTE_ACCESS      11  /* NAK: bad key, range or access */
#define PLDMA_ST_REMOTE_TIMEOUT     12  /* no answer: the QP's retry count */
#define PLDMA_ST_REMOTE_RNR         13  /* not ready: the QP's RNR retry */
#define PLDMA_ST_REMOTE_ERROR       14  /* NAK: responder could not do it */
#define PLDMA_ST_REMOTE_INVALID     15  /* NAK: invalid request */
#define PLDMA_ST_FLUSHED            16  /* the QP went to ERR before it ran */

/* ------------------------------------------------------------------ */
/* Fault record (report mode): 32 bytes in the fault queue             */
/* ------------------------------------------------------------------ */
#define PLDMA_FR_SIZE               32
#define PLDMA_FR_CHANNEL            0x00    /* u16 */
#define PLDMA_FR_FLAGS              0x02    /* u16 PLDMA_FR_F_* */
#define PLDMA_FR_PASID              0x04    /* u32 PLDMA_CHB_PASID copy */
#define PLDMA_FR_VA                 0x08    /* u64 faulting VA */
#define PLDMA_FR_DONE               0x10    /* u32 bytes done in the desc */
#define PLDMA_FR_DESC               0x14    /* u32 ring index */
#define PLDMA_FR_SEQ                0x18    /* u32 device-wide fault number */
#define PLDMA_FR_LEN                0x1c    /* u32 descriptor length */

#define PLDMA_FR_F_WRITE            PLDMA_BIT(0)  /* faulting access wrote */
#define PLDMA_FR_F_DESC             PLDMA_BIT(1)  /* on descriptor fetch */
#define PLDMA_FR_F_COMPL            PLDMA_BIT(2)  /* on completion write */
#define PLDMA_FR_F_STALL            PLDMA_BIT(3)  /* (channel regs) stalled */
/*
 * A responder-side fault: an incoming RDMA WRITE or READ missed a page of
 * a key's range.  CHANNEL is PLDMA_FR_CH_REMOTE, PASID the key's, DESC the
 * rkey, DONE the offset in the message, LEN its length.  Answer with
 * KEY_CMD_RESOLVED on that key once the page is present.
 */
#define PLDMA_FR_F_REMOTE           PLDMA_BIT(4)
#define PLDMA_FR_CH_REMOTE          0xffff
/* A batched fault: the channel's AHEAD_* registers list the missing pages */
#define PLDMA_FR_F_AHEAD            PLDMA_BIT(5)
/*
 * With PLDMA_FR_F_REMOTE: the fault is on a receive WQE's buffer (a SEND or
 * the WQE of a WRITE with immediate).  PASID is the QP's PD, DESC the QP
 * index, DONE the offset in the message.  Answer with QP_CMD_RESOLVED (or
 * QP_CMD_FAILED) on that QP.
 */
#define PLDMA_FR_F_RECV             PLDMA_BIT(6)

#endif /* HW_MISC_PLDMA_REGS_H */
