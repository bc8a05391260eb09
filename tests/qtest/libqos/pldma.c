/*
 * libqos driver for the PLDMA engine (docs/specs/pldma.rst): register
 * access, rings and descriptors, remote keys, queue pairs
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "pldma.h"

void qpldma_init(QPldma *d, QTestState *qts, uint64_t base)
{
    d->qts = qts;
    d->base = base;
}

uint32_t qpldma_rd(QPldma *d, uint32_t off)
{
    return qtest_readl(d->qts, d->base + off);
}

void qpldma_wr(QPldma *d, uint32_t off, uint32_t val)
{
    qtest_writel(d->qts, d->base + off, val);
}

uint32_t qpldma_ch_rd(QPldma *d, int ch, uint32_t off)
{
    return qpldma_rd(d, PLDMA_CH_PAGE_OFFSET(ch) + off);
}

void qpldma_ch_wr(QPldma *d, int ch, uint32_t off, uint32_t val)
{
    qpldma_wr(d, PLDMA_CH_PAGE_OFFSET(ch) + off, val);
}

uint32_t qpldma_ncnt(QPldma *d, int i)
{
    return qpldma_rd(d, PLDMA_NET_CNT(i));
}

void qpldma_ring_init(QPldma *d, QPldmaRing *r, int ch, uint64_t pa,
                      uint32_t size, uint32_t pasid_reg)
{
    r->ch = ch;
    r->pa = pa;
    r->size = size;
    r->tail = 0;
    qpldma_wr(d, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
    qpldma_wr(d, PLDMA_CH_BIND(ch) + PLDMA_CHB_PASID, pasid_reg);
    qpldma_wr(d, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_ENABLE);
    qpldma_ch_wr(d, ch, PLDMA_CH_RING_BASE_LO, (uint32_t)pa);
    qpldma_ch_wr(d, ch, PLDMA_CH_RING_BASE_HI, pa >> 32);
    qpldma_ch_wr(d, ch, PLDMA_CH_RING_SIZE, size);
}

void qpldma_ring_post(QPldma *d, QPldmaRing *r, const uint8_t *desc)
{
    qtest_memwrite(d->qts, r->pa + r->tail * PLDMA_DESC_SIZE, desc,
                   PLDMA_DESC_SIZE);
    r->tail = (r->tail + 1) % r->size;
    qpldma_ch_wr(d, r->ch, PLDMA_CH_RING_TAIL, r->tail);
}

void qpldma_desc_rdma(uint8_t *desc, uint8_t op, uint16_t node, uint32_t len,
                      uint64_t local, uint64_t rva, uint32_t rkey,
                      uint64_t compl)
{
    memset(desc, 0, PLDMA_DESC_SIZE);
    desc[PLDMA_DESC_OPCODE] = op;
    stw_le_p(desc + PLDMA_DESC_NODE, node);
    stl_le_p(desc + PLDMA_DESC_LEN, len);
    stq_le_p(desc + (op == PLDMA_OP_RDMA_WRITE ? PLDMA_DESC_SRC
                                               : PLDMA_DESC_DST), local);
    stq_le_p(desc + PLDMA_DESC_REMOTE_VA, rva);
    stl_le_p(desc + PLDMA_DESC_RKEY, rkey);
    stq_le_p(desc + PLDMA_DESC_COMPL, compl);
}

uint32_t qpldma_wait_compl(QPldma *d, uint64_t compl, void (*step)(void *),
                           void *opaque, int tries, uint64_t *bytes)
{
    uint32_t st = PLDMA_ST_PENDING;
    int i;

    for (i = 0; i < tries; i++) {
        st = qtest_readl(d->qts, compl + PLDMA_COMPL_STATUS);
        if (st != PLDMA_ST_PENDING) {
            break;
        }
        if (step) {
            step(opaque);
        }
    }
    if (bytes) {
        *bytes = qtest_readq(d->qts, compl + PLDMA_COMPL_BYTES);
    }
    return st;
}

uint32_t qpldma_key_register(QPldma *d, uint32_t idx, uint32_t pasid_reg,
                             uint64_t va, uint64_t len, uint32_t access,
                             uint32_t *rkey)
{
    qpldma_wr(d, PLDMA_KEY_SEL, idx);
    qpldma_wr(d, PLDMA_KEY_PASID, pasid_reg);
    qpldma_wr(d, PLDMA_KEY_VA_LO, (uint32_t)va);
    qpldma_wr(d, PLDMA_KEY_VA_HI, va >> 32);
    qpldma_wr(d, PLDMA_KEY_LEN_LO, (uint32_t)len);
    qpldma_wr(d, PLDMA_KEY_LEN_HI, len >> 32);
    qpldma_wr(d, PLDMA_KEY_ACCESS, access);
    qpldma_wr(d, PLDMA_KEY_CMD, PLDMA_KEY_CMD_REGISTER);
    if (rkey) {
        *rkey = qpldma_rd(d, PLDMA_KEY_RKEY);
    }
    return qpldma_rd(d, PLDMA_KEY_STATUS);
}

void qpldma_key_cmd(QPldma *d, uint32_t idx, uint32_t cmd)
{
    qpldma_wr(d, PLDMA_KEY_SEL, idx);
    qpldma_wr(d, PLDMA_KEY_CMD, cmd);
}

uint32_t qpldma_qp_modify(QPldma *d, uint32_t idx, uint32_t mask,
                          const QPldmaQPAttr *a)
{
    qpldma_wr(d, PLDMA_QP_SEL, idx);
    qpldma_wr(d, PLDMA_QP_ATTR_MASK, mask);
    qpldma_wr(d, PLDMA_QP_NEW_STATE, a->state);
    qpldma_wr(d, PLDMA_QP_SQ, a->sq);
    qpldma_wr(d, PLDMA_QP_PD, a->pd);
    qpldma_wr(d, PLDMA_QP_ACCESS, a->access);
    qpldma_wr(d, PLDMA_QP_DEST_QPN, a->dest_qpn);
    qpldma_wr(d, PLDMA_QP_DEST_IP, a->dest_ip);
    qpldma_wr(d, PLDMA_QP_DEST_MAC_LO, ldl_le_p(a->dest_mac));
    qpldma_wr(d, PLDMA_QP_DEST_MAC_HI, lduw_le_p(a->dest_mac + 4));
    qpldma_wr(d, PLDMA_QP_SQ_PSN, a->sq_psn);
    qpldma_wr(d, PLDMA_QP_RQ_PSN, a->rq_psn);
    qpldma_wr(d, PLDMA_QP_PATH_MTU, a->path_mtu);
    qpldma_wr(d, PLDMA_QP_TIMERS, a->timers);
    qpldma_wr(d, PLDMA_QP_CMD, PLDMA_QP_CMD_MODIFY);
    return qpldma_rd(d, PLDMA_QP_STATUS);
}

void qpldma_qp_query(QPldma *d, uint32_t idx, QPldmaQPAttr *a)
{
    qpldma_wr(d, PLDMA_QP_SEL, idx);
    qpldma_wr(d, PLDMA_QP_CMD, PLDMA_QP_CMD_QUERY);
    g_assert_cmpuint(qpldma_rd(d, PLDMA_QP_STATUS), ==, PLDMA_QP_ST_OK);
    a->state = qpldma_rd(d, PLDMA_QP_NEW_STATE);
    a->sq = qpldma_rd(d, PLDMA_QP_SQ);
    a->pd = qpldma_rd(d, PLDMA_QP_PD);
    a->access = qpldma_rd(d, PLDMA_QP_ACCESS);
    a->dest_qpn = qpldma_rd(d, PLDMA_QP_DEST_QPN);
    a->dest_ip = qpldma_rd(d, PLDMA_QP_DEST_IP);
    stl_le_p(a->dest_mac, qpldma_rd(d, PLDMA_QP_DEST_MAC_LO));
    stw_le_p(a->dest_mac + 4, qpldma_rd(d, PLDMA_QP_DEST_MAC_HI));
    a->sq_psn = qpldma_rd(d, PLDMA_QP_SQ_PSN);
    a->rq_psn = qpldma_rd(d, PLDMA_QP_RQ_PSN);
    a->path_mtu = qpldma_rd(d, PLDMA_QP_PATH_MTU);
    a->timers = qpldma_rd(d, PLDMA_QP_TIMERS);
}

uint32_t qpldma_qp_state(QPldma *d, uint32_t idx)
{
    qpldma_wr(d, PLDMA_QP_SEL, idx);
    return qpldma_rd(d, PLDMA_QP_STATE);
}

uint32_t qpldma_qpn(QPldma *d, uint32_t idx)
{
    qpldma_wr(d, PLDMA_QP_SEL, idx);
    return qpldma_rd(d, PLDMA_QP_QPN);
}

void qpldma_mac(QPldma *d, uint8_t *mac)
{
    stl_le_p(mac, qpldma_rd(d, PLDMA_NET_MAC_LO));
    stw_le_p(mac + 4, qpldma_rd(d, PLDMA_NET_MAC_HI));
}
