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
#include <sys/socket.h>
#include <sys/un.h>
#include "qobject/qdict.h"
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

uint32_t qpldma_ch_cnt(QPldma *d, int ch, uint32_t cnt)
{
    return qpldma_ch_rd(d, ch, PLDMA_CH_CNT_OFFSET + cnt);
}

void qpldma_wait_state(QPldma *d, int ch, uint32_t state,
                       void (*step)(void *), void *opaque, int tries)
{
    int i;

    for (i = 0; i < tries && qpldma_ch_rd(d, ch, PLDMA_CH_STATE) != state;
         i++) {
        if (step) {
            step(opaque);
        }
    }
    g_assert_cmpuint(qpldma_ch_rd(d, ch, PLDMA_CH_STATE), ==, state);
}

void qpldma_ring_init_at(QPldma *d, QPldmaRing *r, int ch, uint64_t pa,
                         uint64_t va, uint32_t size, uint32_t pasid_reg)
{
    r->ch = ch;
    r->pa = pa;
    r->va = va;
    r->size = size;
    r->tail = 0;
    qpldma_wr(d, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_RESET);
    qpldma_wr(d, PLDMA_CH_BIND(ch) + PLDMA_CHB_PASID, pasid_reg);
    qpldma_wr(d, PLDMA_CH_BIND(ch) + PLDMA_CHB_CTRL, PLDMA_CHB_CTRL_ENABLE);
    qpldma_ch_wr(d, ch, PLDMA_CH_RING_BASE_LO, (uint32_t)va);
    qpldma_ch_wr(d, ch, PLDMA_CH_RING_BASE_HI, va >> 32);
    qpldma_ch_wr(d, ch, PLDMA_CH_RING_SIZE, size);
}

void qpldma_ring_init(QPldma *d, QPldmaRing *r, int ch, uint64_t pa,
                      uint32_t size, uint32_t pasid_reg)
{
    qpldma_ring_init_at(d, r, ch, pa, pa, size, pasid_reg);
}

void qpldma_ring_post(QPldma *d, QPldmaRing *r, const uint8_t *desc)
{
    qtest_memwrite(d->qts, r->pa + r->tail * PLDMA_DESC_SIZE, desc,
                   PLDMA_DESC_SIZE);
    r->tail = (r->tail + 1) % r->size;
    qpldma_ch_wr(d, r->ch, PLDMA_CH_RING_TAIL, r->tail);
}

void qpldma_desc_copy(uint8_t *desc, uint32_t len, uint64_t src,
                      uint64_t dst, uint64_t compl, uint64_t cookie)
{
    memset(desc, 0, PLDMA_DESC_SIZE);
    desc[PLDMA_DESC_OPCODE] = PLDMA_OP_COPY;
    stl_le_p(desc + PLDMA_DESC_LEN, len);
    stq_le_p(desc + PLDMA_DESC_SRC, src);
    stq_le_p(desc + PLDMA_DESC_DST, dst);
    stq_le_p(desc + PLDMA_DESC_COMPL, compl);
    stq_le_p(desc + PLDMA_DESC_COOKIE, cookie);
}

void qpldma_desc_rdma(uint8_t *desc, uint8_t op, uint32_t len,
                      uint64_t local, uint64_t rva, uint32_t rkey,
                      uint64_t compl)
{
    memset(desc, 0, PLDMA_DESC_SIZE);
    desc[PLDMA_DESC_OPCODE] = op;
    stl_le_p(desc + PLDMA_DESC_LEN, len);
    stq_le_p(desc + (op == PLDMA_OP_RDMA_READ ? PLDMA_DESC_DST
                                              : PLDMA_DESC_SRC), local);
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

void qpldma_fq_pop(QPldma *d, uint64_t fq, uint32_t entries, uint8_t *rec,
                   void (*step)(void *), void *opaque, int tries)
{
    uint32_t head = qpldma_rd(d, PLDMA_FQ_HEAD);
    int i;

    for (i = 0; i < tries && qpldma_rd(d, PLDMA_FQ_TAIL) == head; i++) {
        if (step) {
            step(opaque);
        }
    }
    g_assert_cmpuint(qpldma_rd(d, PLDMA_FQ_TAIL), !=, head);
    qtest_memread(d->qts, fq + head * PLDMA_FR_SIZE, rec, PLDMA_FR_SIZE);
    qpldma_wr(d, PLDMA_FQ_HEAD, (head + 1) % entries);
}

uint32_t qpldma_key_register(QPldma *d, uint32_t idx, uint32_t pasid_reg,
                             uint64_t va, uint64_t len, uint32_t access,
                             uint32_t *rkey)
{
    return qpldma_key_register_pd(d, idx, pasid_reg, 0, va, len, access,
                                  rkey);
}

uint32_t qpldma_key_register_pd(QPldma *d, uint32_t idx, uint32_t pasid_reg,
                                uint32_t pd_tag, uint64_t va, uint64_t len,
                                uint32_t access, uint32_t *rkey)
{
    qpldma_wr(d, PLDMA_KEY_SEL, idx);
    qpldma_wr(d, PLDMA_KEY_PASID, pasid_reg);
    qpldma_wr(d, PLDMA_KEY_PD, pd_tag);
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
    qpldma_wr(d, PLDMA_QP_PD_TAG, a->pd_tag);
    qpldma_wr(d, PLDMA_QP_ACCESS, a->access);
    qpldma_wr(d, PLDMA_QP_DEST_QPN, a->dest_qpn);
    qpldma_wr(d, PLDMA_QP_DEST_IP, a->dest_ip);
    qpldma_wr(d, PLDMA_QP_DEST_MAC_LO, ldl_le_p(a->dest_mac));
    qpldma_wr(d, PLDMA_QP_DEST_MAC_HI, lduw_le_p(a->dest_mac + 4));
    qpldma_wr(d, PLDMA_QP_SQ_PSN, a->sq_psn);
    qpldma_wr(d, PLDMA_QP_RQ_PSN, a->rq_psn);
    qpldma_wr(d, PLDMA_QP_PATH_MTU, a->path_mtu);
    qpldma_wr(d, PLDMA_QP_TIMERS, a->timers);
    if (mask & PLDMA_QPA_RQ) {
        qpldma_wr(d, PLDMA_QP_RQ_BASE_LO, (uint32_t)a->rq_base);
        qpldma_wr(d, PLDMA_QP_RQ_BASE_HI, a->rq_base >> 32);
        qpldma_wr(d, PLDMA_QP_RQ_SIZE, a->rq_size);
    }
    if (mask & PLDMA_QPA_CQ) {
        qpldma_wr(d, PLDMA_QP_SEND_CQ, a->send_cq);
        qpldma_wr(d, PLDMA_QP_RECV_CQ, a->recv_cq);
    }
    if (mask & PLDMA_QPA_SRQ) {
        qpldma_wr(d, PLDMA_QP_SRQ, a->srq);
    }
    if (mask & PLDMA_QPA_TYPE) {
        qpldma_wr(d, PLDMA_QP_TYPE, a->type);
    }
    if (mask & PLDMA_QPA_QKEY) {
        qpldma_wr(d, PLDMA_QP_QKEY, a->qkey);
    }
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
    a->pd_tag = qpldma_rd(d, PLDMA_QP_PD_TAG);
    a->access = qpldma_rd(d, PLDMA_QP_ACCESS);
    a->dest_qpn = qpldma_rd(d, PLDMA_QP_DEST_QPN);
    a->dest_ip = qpldma_rd(d, PLDMA_QP_DEST_IP);
    stl_le_p(a->dest_mac, qpldma_rd(d, PLDMA_QP_DEST_MAC_LO));
    stw_le_p(a->dest_mac + 4, qpldma_rd(d, PLDMA_QP_DEST_MAC_HI));
    a->sq_psn = qpldma_rd(d, PLDMA_QP_SQ_PSN);
    a->rq_psn = qpldma_rd(d, PLDMA_QP_RQ_PSN);
    a->path_mtu = qpldma_rd(d, PLDMA_QP_PATH_MTU);
    a->timers = qpldma_rd(d, PLDMA_QP_TIMERS);
    a->rq_base = qpldma_rd(d, PLDMA_QP_RQ_BASE_LO) |
                 (uint64_t)qpldma_rd(d, PLDMA_QP_RQ_BASE_HI) << 32;
    a->rq_size = qpldma_rd(d, PLDMA_QP_RQ_SIZE);
    a->send_cq = qpldma_rd(d, PLDMA_QP_SEND_CQ);
    a->recv_cq = qpldma_rd(d, PLDMA_QP_RECV_CQ);
    a->srq = qpldma_rd(d, PLDMA_QP_SRQ);
    a->type = qpldma_rd(d, PLDMA_QP_TYPE);
    a->qkey = qpldma_rd(d, PLDMA_QP_QKEY);
}

uint32_t qpldma_cq_create(QPldma *d, uint32_t idx, uint64_t base,
                          uint32_t size, uint32_t pd)
{
    qpldma_wr(d, PLDMA_CQ_SEL, idx);
    qpldma_wr(d, PLDMA_CQ_BASE_LO, (uint32_t)base);
    qpldma_wr(d, PLDMA_CQ_BASE_HI, base >> 32);
    qpldma_wr(d, PLDMA_CQ_SIZE, size);
    qpldma_wr(d, PLDMA_CQ_PD, pd);
    qpldma_wr(d, PLDMA_CQ_CMD, PLDMA_CQ_CMD_CREATE);
    return qpldma_rd(d, PLDMA_CQ_STATUS);
}

uint32_t qpldma_cq_destroy(QPldma *d, uint32_t idx)
{
    qpldma_wr(d, PLDMA_CQ_SEL, idx);
    qpldma_wr(d, PLDMA_CQ_CMD, PLDMA_CQ_CMD_DESTROY);
    return qpldma_rd(d, PLDMA_CQ_STATUS);
}

uint32_t qpldma_cq_reg(QPldma *d, uint32_t idx, uint32_t reg)
{
    qpldma_wr(d, PLDMA_CQ_SEL, idx);
    return qpldma_rd(d, reg);
}

void qpldma_cq_db(QPldma *d, int ch, uint32_t cmd, uint32_t cq, uint32_t ci)
{
    qpldma_ch_wr(d, ch, PLDMA_CH_CQ_DB, PLDMA_CQ_DB_MAKE(cmd, cq, ci));
}

bool qpldma_cq_poll(QPldma *d, QPldmaCQ *cq, uint8_t *cqe)
{
    uint64_t pa = cq->pa + (uint64_t)(cq->ci & (cq->size - 1)) *
                  PLDMA_CQE_SIZE;
    uint8_t owner = !((cq->ci / cq->size) & 1);

    qtest_memread(d->qts, pa, cqe, PLDMA_CQE_SIZE);
    if ((cqe[PLDMA_CQE_OWNER] & 1) != owner) {
        return false;
    }
    cq->ci = (cq->ci + 1) & 0xffffff;
    return true;
}

void qpldma_rwqe(QTestState *qts, uint64_t pa, uint64_t wr_id,
                 uint32_t nsge, const uint64_t *addr, const uint32_t *len)
{
    uint8_t w[PLDMA_RWQE_SIZE] = { 0 };
    uint32_t i;

    stq_le_p(w + PLDMA_RWQE_WR_ID, wr_id);
    stl_le_p(w + PLDMA_RWQE_NUM_SGE, nsge);
    for (i = 0; i < nsge && i < PLDMA_RWQE_MAX_SGE; i++) {
        stq_le_p(w + PLDMA_RWQE_SGE(i) + PLDMA_SGE_ADDR, addr[i]);
        stl_le_p(w + PLDMA_RWQE_SGE(i) + PLDMA_SGE_LEN, len[i]);
    }
    qtest_memwrite(qts, pa, w, sizeof(w));
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

void qpldma_qp_connect_to(const QPldmaQPEnd *e, uint32_t dest_qpn,
                          uint32_t dest_ip, const uint8_t *dest_mac,
                          uint32_t rq_psn, uint32_t path_mtu)
{
    QPldmaQPAttr at = {
        .sq = e->sq, .pd = e->pd,
        .access = PLDMA_KEY_ACC_WRITE | PLDMA_KEY_ACC_READ,
        .dest_qpn = dest_qpn, .dest_ip = dest_ip,
        .sq_psn = e->psn & 0xffffff, .rq_psn = rq_psn & 0xffffff,
        .path_mtu = path_mtu,
        .timers = e->timers ? e->timers : QPLDMA_QP_TIMERS,
    };

    memcpy(at.dest_mac, dest_mac, 6);
    at.state = PLDMA_QPS_INIT;
    g_assert_cmpuint(qpldma_qp_modify(e->d, e->qp, PLDMA_QPA_REQ_INIT, &at),
                     ==, PLDMA_QP_ST_OK);
    at.state = PLDMA_QPS_RTR;
    g_assert_cmpuint(qpldma_qp_modify(e->d, e->qp, PLDMA_QPA_REQ_RTR, &at),
                     ==, PLDMA_QP_ST_OK);
    at.state = PLDMA_QPS_RTS;
    g_assert_cmpuint(qpldma_qp_modify(e->d, e->qp, PLDMA_QPA_REQ_RTS, &at),
                     ==, PLDMA_QP_ST_OK);
    g_assert_cmpuint(qpldma_qp_state(e->d, e->qp), ==, PLDMA_QPS_RTS);
}

void qpldma_qp_connect_pair(const QPldmaQPEnd *a, const QPldmaQPEnd *b,
                            uint32_t path_mtu)
{
    uint8_t mac_a[6], mac_b[6];

    qpldma_mac(a->d, mac_a);
    qpldma_mac(b->d, mac_b);
    qpldma_qp_connect_to(b, qpldma_qpn(a->d, a->qp),
                         qpldma_rd(a->d, PLDMA_NET_IP), mac_a, a->psn,
                         path_mtu);
    qpldma_qp_connect_to(a, qpldma_qpn(b->d, b->qp),
                         qpldma_rd(b->d, PLDMA_NET_IP), mac_b, b->psn,
                         path_mtu);
}

void qpldma_qp_reset(QPldma *d, uint32_t idx)
{
    QPldmaQPAttr at = { .state = PLDMA_QPS_RESET };

    g_assert_cmpuint(qpldma_qp_modify(d, idx, PLDMA_QPA_STATE, &at), ==,
                     PLDMA_QP_ST_OK);
}

void qpldma_link_init(QPldmaLink *l, const char *tmpl)
{
    l->dir = g_dir_make_tmp(tmpl, NULL);
    g_assert(l->dir);
    l->sock = g_strdup_printf("%s/link", l->dir);
}

char *qpldma_link_netdev(QPldmaLink *l, bool server)
{
    return g_strdup_printf("stream,id=n0,server=%s,addr.type=unix,"
                           "addr.path=%s",
                           server ? "on" : "off,reconnect-ms=20", l->sock);
}

int qpldma_link_connect(QPldmaLink *l)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    uint32_t i;

    g_assert_cmpint(fd, >=, 0);
    g_strlcpy(sa.sun_path, l->sock, sizeof(sa.sun_path));
    for (i = 0; connect(fd, (struct sockaddr *)&sa, sizeof(sa)); i++) {
        g_assert_cmpuint(i, <, 5000);
        g_usleep(1000);
    }
    return fd;
}

void qpldma_link_cleanup(QPldmaLink *l)
{
    unlink(l->sock);
    rmdir(l->dir);
    g_free(l->sock);
    g_free(l->dir);
    l->sock = l->dir = NULL;
}

/*
 * The client retries (reconnect-ms) until the server's listening socket
 * is up; HMP "info network" says when both ends are connected.
 */
void qpldma_link_wait(QTestState *qts)
{
    int i;

    for (i = 0; i < 10000; i++) {
        g_autofree char *info = qtest_hmp(qts, "info network");

        if (!strstr(info, "listening") && !strstr(info, "connecting") &&
            !strstr(info, "initializing") && !strstr(info, "error")) {
            return;
        }
        g_usleep(1000);
    }
    g_assert_not_reached();
}

void qpldma_stream_send(int fd, const uint8_t *f, uint32_t len)
{
    uint8_t hdr[4];

    stl_be_p(hdr, len);
    g_assert_cmpint(write(fd, hdr, 4), ==, 4);
    if (len) {
        g_assert_cmpint(write(fd, f, len), ==, len);
    }
}

uint32_t qpldma_stream_recv(int fd, uint8_t *f, uint32_t max)
{
    uint8_t hdr[4];
    uint32_t len, got = 0;
    int i;

    for (i = 0; i < 5000; i++) {
        ssize_t r = recv(fd, hdr + got, 4 - got, MSG_DONTWAIT);

        if (r > 0) {
            got += r;
            if (got == 4) {
                break;
            }
        }
        g_usleep(200);
    }
    if (got < 4) {
        return 0;
    }
    len = ldl_be_p(hdr);
    g_assert_cmpuint(len, <=, max);
    for (got = 0; got < len; ) {
        ssize_t r = read(fd, f + got, len - got);

        g_assert_cmpint(r, >, 0);
        got += r;
    }
    return len;
}

static uint32_t crc32_le(uint32_t crc, const uint8_t *b, size_t n)
{
    size_t i;
    int k;

    crc = ~crc;
    for (i = 0; i < n; i++) {
        crc ^= b[i];
        for (k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xedb88320U & -(crc & 1));
        }
    }
    return ~crc;
}

uint32_t qpldma_roce_frame(uint8_t *f, const QPldmaRoce *r)
{
    uint8_t *ip = f + 14, *udp = ip + 20, *q = udp + 8, m[40];
    uint32_t pad = (4 - (r->plen & 3)) & 3, crc, l4;
    static const uint8_t ones[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
    };

    memcpy(f, r->dst_mac, 6);
    memcpy(f + 6, r->src_mac, 6);
    stw_be_p(f + 12, 0x0800);
    memset(q, 0, 12);
    q[0] = r->op;
    q[1] = pad << 4;
    stw_be_p(q + 2, 0xffff);
    stl_be_p(q + 4, r->qpn);
    stl_be_p(q + 8, 0x80000000U | r->psn);     /* AckReq */
    q += 12;
    if (r->deth) {
        stl_be_p(q, r->qkey);
        stl_be_p(q + 4, r->src_qpn);
        q += 8;
    }
    if (r->reth) {
        stq_be_p(q, r->va);
        stl_be_p(q + 8, r->rkey);
        stl_be_p(q + 12, r->dmalen);
        q += 16;
    }
    if (r->aeth_syn >= 0) {
        stl_be_p(q, ((uint32_t)r->aeth_syn << 24) | r->msn);
        q += 4;
    }
    if (r->plen) {
        memcpy(q, r->pl, r->plen);
    }
    memset(q + r->plen, 0, pad);
    q += r->plen + pad;
    l4 = q + 4 - udp;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    stw_be_p(ip + 2, 20 + l4);
    ip[8] = 64;
    ip[9] = 17;
    stl_be_p(ip + 12, r->src_ip);
    stl_be_p(ip + 16, r->dst_ip);
    stw_be_p(udp, 0xc002);
    stw_be_p(udp + 2, 4791);
    stw_be_p(udp + 4, l4);
    stw_be_p(udp + 6, 0);
    /*
     * ICRC: eight bytes of ones (the LRH's place), then IP, UDP and BTH
     * with their variant fields (TOS, TTL, checksums, resv8a) all ones
     */
    memcpy(m, ip, 40);
    m[1] = m[8] = m[10] = m[11] = 0xff;
    m[26] = m[27] = 0xff;
    m[32] = 0xff;
    crc = crc32_le(0, ones, 8);
    crc = crc32_le(crc, m, 40);
    crc = crc32_le(crc, ip + 40, q - ip - 40);
    stl_le_p(q, crc);
    return q + 4 - f;
}

uint8_t *qpldma_mem_random(QTestState *qts, uint64_t pa, size_t len)
{
    uint8_t *b = g_malloc(len);
    size_t i;

    for (i = 0; i < len; i++) {
        b[i] = g_test_rand_int();
    }
    qtest_memwrite(qts, pa, b, len);
    return b;
}

void qpldma_mem_check(QTestState *qts, uint64_t pa, const uint8_t *want,
                      size_t len)
{
    g_autofree uint8_t *b = g_malloc(len);

    qtest_memread(qts, pa, b, len);
    g_assert_true(memcmp(b, want, len) == 0);
}

bool qpldma_mem_zero(QTestState *qts, uint64_t pa, size_t len)
{
    g_autofree uint8_t *b = g_malloc(len);
    g_autofree uint8_t *z = g_malloc0(len);

    qtest_memread(qts, pa, b, len);
    return memcmp(b, z, len) == 0;
}

bool qpldma_migration_wait(QTestState *qts, unsigned int seconds)
{
    unsigned int i;

    for (i = 0; i < seconds * 100; i++) {
        QDict *rsp = qtest_qmp(qts, "{ 'execute': 'query-migrate' }");
        QDict *ret = qdict_get_qdict(rsp, "return");
        const char *st = ret && qdict_haskey(ret, "status") ?
                         qdict_get_str(ret, "status") : "";
        bool completed = !strcmp(st, "completed");
        bool failed = !strcmp(st, "failed");

        qobject_unref(rsp);
        if (completed || failed) {
            return completed;
        }
        g_usleep(10 * 1000);
    }
    g_assert_not_reached();
}

char *qpldma_migrate_to_file(QTestState *qts, const char *tmpl)
{
    g_autofree char *uri = NULL;
    char *path = NULL;
    int fd;

    fd = g_file_open_tmp(tmpl, &path, NULL);
    g_assert(fd >= 0);
    close(fd);
    uri = g_strdup_printf("exec:cat > %s", path);
    qtest_qmp_assert_success(qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(qpldma_migration_wait(qts, 30));
    return path;
}

bool qpldma_migrate_from_file(QTestState *dst, const char *path)
{
    g_autofree char *uri = g_strdup_printf("exec:cat %s", path);

    /* a refused stream leaves the target running, status "failed" */
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", uri);
    return qpldma_migration_wait(dst, 30);
}
