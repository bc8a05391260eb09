/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, RoCEv2 headers
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The wire format of the RDMA link (IBTA vol. 1 and annex A17, RoCEv2):
 * Ethernet / IPv4 / UDP 4791 / BTH [+ DETH] [+ RETH] [+ ImmDt] [+ AETH] /
 * payload / pad / ICRC.  A frame is built from a PLDMAPkt
 * (pldma_hdr_tx()) and parsed into one (pldma_hdr_parse()), which checks
 * every length against the frame before a byte of it is used.
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "net/checksum.h"
#include "net-internal.h"
#include "trace.h"
#include <zlib.h>

/* Wire format (IBTA vol. 1, annex A17 RoCEv2) */
#define ETH_HDR             14
#define IP_HDR              20
#define UDP_HDR             8
#define BTH_LEN             12
#define RETH_LEN            16
#define IMM_LEN             4
#define AETH_LEN            4
#define ICRC_LEN            4
/* (more than any opcode has: RETH, ImmDt, AETH and an AtomicETH) */
#define HDRS_MAX            (ETH_HDR + IP_HDR + UDP_HDR + BTH_LEN + RETH_LEN + \
                             IMM_LEN + AETH_LEN + ATOMIC_ETH_LEN)
#define FRAME_MAX(mtu)      (HDRS_MAX + (mtu) + ICRC_LEN)

/* IB RNR timer codes, in units of 10 us (code 0 is the longest) */
const uint32_t pldma_hdr_rnr_timer_10us[32] = {
    65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
    256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
    16384, 24576, 32768, 49152,
};

#define HDR(e)              (BTH_LEN + (e))

/*
 * The RC opcodes (IBA table 38): per BTH opcode its name, what it is,
 * which headers follow the BTH, whether it carries a payload, and its
 * header length (BTH and the extended headers).  The UC opcodes are the
 * RC SEND and WRITE ones plus 0x20 (pldma_hdr_op()).  Opcodes beyond
 * these are not RC SEND, WRITE, READ, atomic, Atomic Write, FLUSH or
 * Acknowledge, nor UC SEND or WRITE, nor UD SEND: the link drops them.
 */
const PLDMANetOpcode pldma_hdr_opcode[PLDMA_NET_NUM_OPCODES] = {
    [OP_SEND_FIRST] = {
        "SEND First", PLDMA_NET_F_REQ | PLDMA_NET_F_SEND |
        PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_FIRST, HDR(0),
    },
    [OP_SEND_MIDDLE] = {
        "SEND Middle", PLDMA_NET_F_REQ | PLDMA_NET_F_SEND |
        PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_MIDDLE, HDR(0),
    },
    [OP_SEND_LAST] = {
        "SEND Last", PLDMA_NET_F_REQ | PLDMA_NET_F_SEND |
        PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_LAST, HDR(0),
    },
    [OP_SEND_LAST_IMM] = {
        "SEND Last with Immediate", PLDMA_NET_F_REQ | PLDMA_NET_F_SEND |
        PLDMA_NET_F_IMMDT | PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_LAST,
        HDR(IMM_LEN),
    },
    [OP_SEND_ONLY] = {
        "SEND Only", PLDMA_NET_F_REQ | PLDMA_NET_F_SEND |
        PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_ONLY, HDR(0),
    },
    [OP_SEND_ONLY_IMM] = {
        "SEND Only with Immediate", PLDMA_NET_F_REQ | PLDMA_NET_F_SEND |
        PLDMA_NET_F_IMMDT | PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_ONLY,
        HDR(IMM_LEN),
    },
    [OP_WRITE_FIRST] = {
        "RDMA WRITE First", PLDMA_NET_F_REQ | PLDMA_NET_F_WRITE |
        PLDMA_NET_F_RETH | PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_FIRST,
        HDR(RETH_LEN),
    },
    [OP_WRITE_MIDDLE] = {
        "RDMA WRITE Middle", PLDMA_NET_F_REQ | PLDMA_NET_F_WRITE |
        PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_MIDDLE, HDR(0),
    },
    [OP_WRITE_LAST] = {
        "RDMA WRITE Last", PLDMA_NET_F_REQ | PLDMA_NET_F_WRITE |
        PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_LAST, HDR(0),
    },
    [OP_WRITE_LAST_IMM] = {
        "RDMA WRITE Last with Immediate", PLDMA_NET_F_REQ |
        PLDMA_NET_F_WRITE | PLDMA_NET_F_IMMDT | PLDMA_NET_F_PAYLOAD |
        PLDMA_NET_F_LAST, HDR(IMM_LEN),
    },
    [OP_WRITE_ONLY] = {
        "RDMA WRITE Only", PLDMA_NET_F_REQ | PLDMA_NET_F_WRITE |
        PLDMA_NET_F_RETH | PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_ONLY,
        HDR(RETH_LEN),
    },
    [OP_WRITE_ONLY_IMM] = {
        "RDMA WRITE Only with Immediate", PLDMA_NET_F_REQ |
        PLDMA_NET_F_WRITE | PLDMA_NET_F_RETH | PLDMA_NET_F_IMMDT |
        PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_ONLY, HDR(RETH_LEN + IMM_LEN),
    },
    [OP_READ_REQ] = {
        "RDMA READ Request", PLDMA_NET_F_REQ | PLDMA_NET_F_READ |
        PLDMA_NET_F_RETH | PLDMA_NET_F_ONLY, HDR(RETH_LEN),
    },
    [OP_READ_RESP_FIRST] = {
        "RDMA READ Response First", PLDMA_NET_F_RESP | PLDMA_NET_F_READ |
        PLDMA_NET_F_AETH | PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_FIRST,
        HDR(AETH_LEN),
    },
    [OP_READ_RESP_MIDDLE] = {
        "RDMA READ Response Middle", PLDMA_NET_F_RESP | PLDMA_NET_F_READ |
        PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_MIDDLE, HDR(0),
    },
    [OP_READ_RESP_LAST] = {
        "RDMA READ Response Last", PLDMA_NET_F_RESP | PLDMA_NET_F_READ |
        PLDMA_NET_F_AETH | PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_LAST,
        HDR(AETH_LEN),
    },
    [OP_READ_RESP_ONLY] = {
        "RDMA READ Response Only", PLDMA_NET_F_RESP | PLDMA_NET_F_READ |
        PLDMA_NET_F_AETH | PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_ONLY,
        HDR(AETH_LEN),
    },
    [OP_ACK] = {
        "Acknowledge", PLDMA_NET_F_ACK | PLDMA_NET_F_AETH |
        PLDMA_NET_F_ONLY, HDR(AETH_LEN),
    },
    [OP_ATOMIC_ACK] = {
        "Atomic Acknowledge", PLDMA_NET_F_RESP | PLDMA_NET_F_AETH |
        PLDMA_NET_F_ATOMIC_ACK | PLDMA_NET_F_ONLY,
        HDR(AETH_LEN + ATOMIC_ACK_ETH_LEN),
    },
    [OP_CMP_SWAP] = {
        "CmpSwap", PLDMA_NET_F_REQ | PLDMA_NET_F_ATOMIC | PLDMA_NET_F_ONLY,
        HDR(ATOMIC_ETH_LEN),
    },
    [OP_FETCH_ADD] = {
        "FetchAdd", PLDMA_NET_F_REQ | PLDMA_NET_F_ATOMIC | PLDMA_NET_F_ONLY,
        HDR(ATOMIC_ETH_LEN),
    },
    [OP_FLUSH] = {
        "FLUSH", PLDMA_NET_F_REQ | PLDMA_NET_F_FLUSH | PLDMA_NET_F_RETH |
        PLDMA_NET_F_ONLY, HDR(FETH_LEN + RETH_LEN),
    },
    [OP_ATOMIC_WRITE] = {
        "Atomic Write", PLDMA_NET_F_REQ | PLDMA_NET_F_ATOMIC_WRITE |
        PLDMA_NET_F_RETH | PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_ONLY,
        HDR(RETH_LEN),
    },
};

/*
 * The UD opcodes (IBA table 38): SEND Only and SEND Only with Immediate,
 * a DETH after the BTH; for UD QPs (and QP1, the Ethernet function's)
 */
const PLDMANetOpcode pldma_hdr_ud_opcode[2] = {
    [OP_UD_SEND_ONLY - OP_UD_SEND_ONLY] = {
        "UD SEND Only", PLDMA_NET_F_REQ | PLDMA_NET_F_SEND |
        PLDMA_NET_F_DETH | PLDMA_NET_F_PAYLOAD | PLDMA_NET_F_ONLY,
        HDR(DETH_LEN),
    },
    [OP_UD_SEND_ONLY_IMM - OP_UD_SEND_ONLY] = {
        "UD SEND Only with Immediate", PLDMA_NET_F_REQ | PLDMA_NET_F_SEND |
        PLDMA_NET_F_DETH | PLDMA_NET_F_IMMDT | PLDMA_NET_F_PAYLOAD |
        PLDMA_NET_F_ONLY, HDR(DETH_LEN + IMM_LEN),
    },
};

/* ICRC: CRC-32 over the packet with the variant fields masked to ones */
static uint32_t pldma_icrc(const uint8_t *ip, size_t len)
{
    static const uint8_t ones[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
    };
    uint8_t h[IP_HDR + UDP_HDR + BTH_LEN];
    uint32_t crc;

    memcpy(h, ip, sizeof(h));
    h[1] = 0xff;                            /* TOS */
    h[8] = 0xff;                            /* TTL */
    h[10] = h[11] = 0xff;                   /* header checksum */
    h[IP_HDR + 6] = h[IP_HDR + 7] = 0xff;   /* UDP checksum */
    h[IP_HDR + UDP_HDR + 4] = 0xff;         /* BTH resv8a */
    crc = crc32(0, ones, sizeof(ones));
    crc = crc32(crc, h, sizeof(h));
    return crc32(crc, ip + sizeof(h), len - sizeof(h));
}

/*
 * The extended headers of opcode flags @fl after the BTH, at @q, in IBA's
 * order (RETH or AtomicETH, ImmDt, AETH, AtomicAckETH); returns their end
 */
static uint8_t *hdr_put_ext(uint8_t *q, uint32_t fl, const PLDMAPkt *p)
{
    if (fl & PLDMA_NET_F_DETH) {
        stl_be_p(q, p->qkey);
        stl_be_p(q + 4, p->src_qpn & PLDMA_PSN_MASK);   /* resv8, SrcQP */
        q += DETH_LEN;
    }
    if (fl & PLDMA_NET_F_FLUSH) {
        stl_be_p(q, p->feth);
        q += FETH_LEN;
    }
    if (fl & PLDMA_NET_F_RETH) {
        stq_be_p(q, p->va);
        stl_be_p(q + 8, p->rkey);
        stl_be_p(q + 12, p->dmalen);
        q += RETH_LEN;
    }
    if (fl & PLDMA_NET_F_ATOMIC) {
        stq_be_p(q, p->va);
        stl_be_p(q + 8, p->rkey);
        stq_be_p(q + 12, p->swap_add);
        stq_be_p(q + 20, p->compare);
        q += ATOMIC_ETH_LEN;
    }
    if (fl & PLDMA_NET_F_IMMDT) {
        stl_le_p(q, p->imm);                /* as the descriptor holds it */
        q += IMM_LEN;
    }
    if (fl & PLDMA_NET_F_AETH) {
        stl_be_p(q, ((uint32_t)p->syndrome << 24) | (p->msn & PLDMA_PSN_MASK));
        q += AETH_LEN;
    }
    if (fl & PLDMA_NET_F_ATOMIC_ACK) {
        stq_be_p(q, p->orig);
        q += ATOMIC_ACK_ETH_LEN;
    }
    return q;
}

void pldma_hdr_tx(PLDMACore *s, const PLDMAPkt *p)
{
    uint8_t f[FRAME_MAX(PLDMA_NET_MAX_MTU)];
    uint8_t *ip = f + ETH_HDR, *udp = ip + IP_HDR, *q = udp + UDP_HDR;
    uint32_t pad = (4 - (p->plen & 3)) & 3;
    uint32_t fl = pldma_hdr_op_flags(p->opcode);
    const PLDMAQP *qp;
    size_t l4;

    /* (every frame sent is a QP's: its callers say which) */
    assert(p->plen <= s->mtu && p->qp && p->qp <= s->num_qps);
    qp = &s->net->qps[p->qp - 1];
    /* Ethernet: to the QP's destination MAC, or a datagram's */
    if (p->ud_dmac) {
        memcpy(f, p->ud_dmac, 6);
    } else {
        stl_le_p(f, qp->dest_mac_lo);
        stw_le_p(f + 4, qp->dest_mac_hi);
    }
    memcpy(f + 6, s->conf->macaddr.a, 6);
    stw_be_p(f + 12, 0x0800);

    /* BTH */
    q[0] = p->opcode;
    q[1] = (p->se ? 0x80 : 0) | pad << 4;   /* SE, M 0, PadCnt, TVer 0 */
    stw_be_p(q + 2, 0xffff);                /* default P_Key */
    q[4] = 0;
    stl_be_p(q + 4, p->qpn & PLDMA_PSN_MASK);     /* resv8a 0, DestQP */
    stl_be_p(q + 8, (p->ackreq ? 0x80000000U : 0) | (p->psn & PLDMA_PSN_MASK));
    q = hdr_put_ext(q + BTH_LEN, fl, p);
    if (p->plen) {
        memcpy(q, p->payload, p->plen);
        q += p->plen;
    }
    memset(q, 0, pad);
    q += pad;
    l4 = q + ICRC_LEN - udp;

    /* IPv4: the QP's addresses (a datagram's destination) */
    ip[0] = 0x45;
    ip[1] = 0;
    stw_be_p(ip + 2, IP_HDR + l4);
    stw_be_p(ip + 4, 0);
    stw_be_p(ip + 6, 0x4000);               /* DF */
    ip[8] = 64;
    ip[9] = 17;
    stw_be_p(ip + 10, 0);
    stl_be_p(ip + 12, s->net->net_ip);
    stl_be_p(ip + 16, p->ud_dmac ? p->ud_dip : qp->dest_ip);
    stw_be_p(ip + 10, net_checksum_finish(net_checksum_add(IP_HDR, ip)));
    /* UDP, source port fixed per node (no ECMP entropy needed here) */
    stw_be_p(udp, 0xc000 | s->node_id);
    stw_be_p(udp + 2, ROCE_UDP_PORT);
    stw_be_p(udp + 4, l4);
    stw_be_p(udp + 6, 0);
    stl_le_p(q, pldma_icrc(ip, q - ip));

    trace_pldma_net_tx(p->qp - 1, p->opcode, pldma_hdr_op_name(p->opcode),
                       p->qpn, p->psn, p->ackreq, p->syndrome, p->plen);
    pldma_net_send_frame(s, f, q + ICRC_LEN - f, p->ready);
}

/*
 * The IPv4 datagram of a RoCEv2 frame (Ethernet, IPv4 without options,
 * UDP to 4791, room for a BTH and the ICRC): its length, else 0
 */
static size_t pldma_net_roce_len(const uint8_t *f, size_t size)
{
    const uint8_t *ip = f + ETH_HDR, *udp = ip + IP_HDR;
    size_t iplen;

    if (size < ETH_HDR + IP_HDR + UDP_HDR + BTH_LEN + ICRC_LEN ||
        lduw_be_p(f + 12) != 0x0800 || ip[0] != 0x45 || ip[9] != 17) {
        return 0;
    }
    iplen = lduw_be_p(ip + 2);
    if (iplen > size - ETH_HDR ||
        iplen < IP_HDR + UDP_HDR + BTH_LEN + ICRC_LEN ||
        (lduw_be_p(ip + 6) & 0x3fff) || lduw_be_p(udp + 2) != ROCE_UDP_PORT ||
        lduw_be_p(udp + 4) != iplen - IP_HDR) {
        return 0;                           /* truncated, or a fragment */
    }
    return iplen;
}

/* Does RoCEv2 frame @f answer a request (ACK, NAK, READ or atomic response)? */
bool pldma_hdr_frame_is_resp(const uint8_t *f, size_t size)
{
    return pldma_net_roce_len(f, size) &&
           (pldma_hdr_op_flags(f[ETH_HDR + IP_HDR + UDP_HDR]) &
            (PLDMA_NET_F_RESP | PLDMA_NET_F_ACK));
}

/*
 * A RoCEv2 frame for this node that is a UD datagram to QP1 (BTH opcode
 * 0x64 or 0x65: the management datagrams, the OS's): 1 if its ICRC is
 * good, -1 if it is not or it is malformed; 0 if it is not one (the
 * transport's to parse: the datagrams of UD QPs are)
 */
int pldma_hdr_ud_check(const uint8_t *f, size_t size)
{
    const uint8_t *ip = f + ETH_HDR, *bth = ip + IP_HDR + UDP_HDR;
    size_t iplen;

    if (size < ETH_HDR + IP_HDR + UDP_HDR + BTH_LEN ||
        (bth[0] != OP_UD_SEND_ONLY && bth[0] != OP_UD_SEND_ONLY_IMM) ||
        (ldl_be_p(bth + 4) & PLDMA_PSN_MASK) != PLDMA_GSI_QPN) {
        return 0;
    }
    iplen = pldma_net_roce_len(f, size);
    if (!iplen ||
        ldl_le_p(ip + iplen - ICRC_LEN) != pldma_icrc(ip, iplen - ICRC_LEN)) {
        return -1;
    }
    return 1;
}

/*
 * Write the ICRC of a RoCEv2 frame the driver built (the Ethernet
 * function's PLDMA_ETH_TX_ICRC); false if it is not one
 */
bool pldma_hdr_icrc_fill(uint8_t *f, size_t size)
{
    uint8_t *ip = f + ETH_HDR;
    size_t iplen = pldma_net_roce_len(f, size);

    if (!iplen) {
        return false;
    }
    stl_le_p(ip + iplen - ICRC_LEN, pldma_icrc(ip, iplen - ICRC_LEN));
    return true;
}

/* The extended headers after the BTH at @q, as hdr_put_ext() puts them */
static const uint8_t *hdr_get_ext(const uint8_t *q, uint32_t fl, PLDMAPkt *p)
{
    uint32_t w;

    if (fl & PLDMA_NET_F_DETH) {
        p->qkey = ldl_be_p(q);
        p->src_qpn = ldl_be_p(q + 4) & PLDMA_PSN_MASK;
        q += DETH_LEN;
    }
    if (fl & PLDMA_NET_F_FLUSH) {
        p->feth = ldl_be_p(q);
        q += FETH_LEN;
    }
    if (fl & PLDMA_NET_F_RETH) {
        p->va = ldq_be_p(q);
        p->rkey = ldl_be_p(q + 8);
        p->dmalen = ldl_be_p(q + 12);
        q += RETH_LEN;
    }
    if (fl & PLDMA_NET_F_ATOMIC) {
        p->va = ldq_be_p(q);
        p->rkey = ldl_be_p(q + 8);
        p->swap_add = ldq_be_p(q + 12);
        p->compare = ldq_be_p(q + 20);
        q += ATOMIC_ETH_LEN;
    }
    if (fl & PLDMA_NET_F_IMMDT) {
        p->imm = ldl_le_p(q);
        q += IMM_LEN;
    }
    if (fl & PLDMA_NET_F_AETH) {
        w = ldl_be_p(q);
        p->syndrome = w >> 24;
        p->msn = w & PLDMA_PSN_MASK;
        q += AETH_LEN;
    }
    if (fl & PLDMA_NET_F_ATOMIC_ACK) {
        p->orig = ldq_be_p(q);
        q += ATOMIC_ACK_ETH_LEN;
    }
    return q;
}

/* Parse and check a frame; false (counted by the caller) if not for us */
bool pldma_hdr_parse(PLDMACore *s, const uint8_t *f, size_t size,
                     PLDMAPkt *p)
{
    const uint8_t *ip = f + ETH_HDR, *udp = ip + IP_HDR, *q = udp + UDP_HDR;
    size_t iplen, l4, hdrs;
    uint32_t src, dst, w, fl;

    if (size < ETH_HDR + IP_HDR + UDP_HDR + BTH_LEN + ICRC_LEN ||
        lduw_be_p(f + 12) != 0x0800 || ip[0] != 0x45 || ip[9] != 17) {
        return false;
    }
    iplen = lduw_be_p(ip + 2);
    if (iplen > size - ETH_HDR || iplen < IP_HDR + UDP_HDR + BTH_LEN +
        ICRC_LEN || (lduw_be_p(ip + 6) & 0x3fff)) {
        return false;                       /* truncated, or a fragment */
    }
    src = ldl_be_p(ip + 12);
    dst = ldl_be_p(ip + 16);
    if (dst != s->net->net_ip) {
        return false;
    }
    p->src_ip = src;         /* checked against the QP's on dispatch */
    p->ip_hdr = ip;
    l4 = lduw_be_p(udp + 4);
    if (lduw_be_p(udp + 2) != ROCE_UDP_PORT || l4 != iplen - IP_HDR) {
        return false;
    }
    if (ldl_le_p(ip + iplen - ICRC_LEN) != pldma_icrc(ip, iplen - ICRC_LEN)) {
        return false;
    }
    p->opcode = q[0];
    if (!pldma_hdr_op_flags(p->opcode) || lduw_be_p(q + 2) != 0xffff ||
        (q[1] & 0x0f)) {
        return false;               /* not RC SEND/WRITE/READ/atomic/ACK */
    }
    p->se = q[1] >> 7;
    p->pad = (q[1] >> 4) & 3;
    p->qpn = ldl_be_p(q + 4) & PLDMA_PSN_MASK;
    w = ldl_be_p(q + 8);
    p->ackreq = w >> 31;
    p->psn = w & PLDMA_PSN_MASK;
    fl = pldma_hdr_op_flags(p->opcode);
    hdrs = pldma_hdr_op(p->opcode)->hdr_len;
    p->atomic = fl & PLDMA_NET_F_ATOMIC;
    p->has_reth = fl & PLDMA_NET_F_RETH;
    p->has_aeth = fl & PLDMA_NET_F_AETH;
    p->has_imm = fl & PLDMA_NET_F_IMMDT;
    if (UDP_HDR + hdrs + ICRC_LEN > l4) {
        return false;
    }
    q = hdr_get_ext(q + BTH_LEN, fl, p);
    if (UDP_HDR + hdrs + p->pad + ICRC_LEN > l4) {
        return false;
    }
    p->payload = q;
    p->plen = l4 - UDP_HDR - hdrs - p->pad - ICRC_LEN;
    if ((p->plen && !(fl & PLDMA_NET_F_PAYLOAD)) || p->plen > s->mtu) {
        return false;
    }
    return true;
}
