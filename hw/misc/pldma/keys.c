/*
 * PLDMA: page-fault-tolerant virtual-address DMA engine, memory keys
 *
 * Copyright (c) 2026 The PLDMA authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The memory keys a remote peer names in its requests (R_Key: a 24-bit
 * generation and the key's index): the staging registers, REGISTER,
 * REVOKE and the answers to a key's fault record (RESOLVED, FAILED).
 * The responder checks a key before every access (resp.c).
 */

#include "qemu/osdep.h"
#include "qemu/guest-random.h"
#include "qemu/main-loop.h"
#include "net-internal.h"
#include "trace.h"

/*
 * The generation of a newly registered key: 24 random bits, nonzero and
 * never the one the index had, so an rkey cannot be guessed from the
 * last one nor reused after a revoke.
 */
static uint32_t pldma_net_key_gen(uint32_t old)
{
    uint32_t g;

    qemu_guest_getrandom_nofail(&g, sizeof(g));
    g &= 0xffffff;
    if (g == 0 || g == (old & 0xffffff)) {
        g = ((old & 0xffffff) % 0xffffff) + 1;  /* bounded, no loop */
    }
    return g;
}

/*
 * The fault being resolved for key @idx ends as if the driver had
 * answered FAILED (@ok false) or RESOLVED: the connections waiting for
 * it go on, or NAK their message (remote operational error)
 */
static void pldma_key_fault_end(PLDMACore *s, uint32_t idx, bool ok)
{
    uint32_t i;

    s->net->keys[idx].fault = false;
    for (i = 0; i < PLDMA_NET_NCONNS(s); i++) {
        PLDMANetConn *c = &s->net->conns[i];

        if (c->fault && !c->stalled && !c->fault_recv &&
            c->fault_key == idx) {
            pldma_resp_resolved(s, c, ok);
        }
    }
}

static void pldma_key_cmd(PLDMACore *s, uint32_t cmd)
{
    PLDMAKey *k, *st = &s->net->key_stage;

    if (s->net->key_sel >= PLDMA_NUM_KEYS) {
        s->net->key_status = PLDMA_KEY_ST_BAD_INDEX;
        return;
    }
    k = &s->net->keys[s->net->key_sel];
    s->net->key_status = PLDMA_KEY_ST_OK;
    switch (cmd) {
    case PLDMA_KEY_CMD_REGISTER:
        if (!st->len || st->va + st->len < st->va) {
            s->net->key_status = PLDMA_KEY_ST_BAD_RANGE;
        } else if (!pldma_pasid_reg_valid(s, st->pasid_reg) ||
                   st->pd_tag > PLDMA_PD_TAG_MAX) {
            s->net->key_status = PLDMA_KEY_ST_BAD_PASID;
        } else if (!(st->access & PLDMA_KEY_ACC_MASK) ||
                   (st->access & ~PLDMA_KEY_ACC_MASK)) {
            s->net->key_status = PLDMA_KEY_ST_BAD_ACCESS;
        } else {
            /*
             * A fault of the key's last registration ends FAILED: what
             * waited for it had a time bound through the key only
             */
            if (k->fault) {
                pldma_key_fault_end(s, s->net->key_sel, false);
            }
            k->gen = pldma_net_key_gen(k->gen);
            k->valid = true;
            k->pasid_reg = st->pasid_reg;
            k->pd_tag = st->pd_tag;
            k->va = st->va;
            k->len = st->len;
            k->access = st->access;
            k->fault = false;
        }
        break;
    case PLDMA_KEY_CMD_REVOKE:
        /* (the generation stays: the next REGISTER takes another one) */
        k->valid = false;
        /* a fault being resolved for it ends: nothing more is written */
        pldma_key_fault_end(s, s->net->key_sel, false);
        break;
    case PLDMA_KEY_CMD_RESOLVED:
    case PLDMA_KEY_CMD_FAILED:
        pldma_key_fault_end(s, s->net->key_sel, cmd == PLDMA_KEY_CMD_RESOLVED);
        pldma_schedule(s);
        break;
    default:
        s->net->key_status = PLDMA_KEY_ST_BAD_CMD;
        return;
    }
    trace_pldma_net_key(s->net->key_sel, cmd, s->net->key_status,
                        k->valid ? PLDMA_RKEY(k->gen, s->net->key_sel) : 0,
                        k->pasid_reg, k->pd_tag, k->va, k->len, k->access);
}

bool pldma_key_read(PLDMACore *s, hwaddr addr, uint64_t *val)
{
    PLDMAKey *k;

    switch (addr) {
    case PLDMA_KEY_SEL:
        *val = s->net->key_sel;
        return true;
    case PLDMA_KEY_PASID:
        *val = s->net->key_stage.pasid_reg;
        return true;
    case PLDMA_KEY_PD:
        *val = s->net->key_stage.pd_tag;
        return true;
    case PLDMA_KEY_VA_LO:
        *val = (uint32_t)s->net->key_stage.va;
        return true;
    case PLDMA_KEY_VA_HI:
        *val = s->net->key_stage.va >> 32;
        return true;
    case PLDMA_KEY_LEN_LO:
        *val = (uint32_t)s->net->key_stage.len;
        return true;
    case PLDMA_KEY_LEN_HI:
        *val = s->net->key_stage.len >> 32;
        return true;
    case PLDMA_KEY_ACCESS:
        *val = s->net->key_stage.access;
        return true;
    case PLDMA_KEY_RKEY:
        k = s->net->key_sel < PLDMA_NUM_KEYS ?
            &s->net->keys[s->net->key_sel] : NULL;
        *val = k && k->valid ? PLDMA_RKEY(k->gen, s->net->key_sel) : 0;
        return true;
    case PLDMA_KEY_STATUS:
        *val = s->net->key_status;
        return true;
    default:
        return false;
    }
}

bool pldma_key_write(PLDMACore *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case PLDMA_KEY_SEL:
        s->net->key_sel = val;
        return true;
    case PLDMA_KEY_PASID:
        s->net->key_stage.pasid_reg = val;
        return true;
    case PLDMA_KEY_PD:
        s->net->key_stage.pd_tag = val;
        return true;
    case PLDMA_KEY_VA_LO:
        s->net->key_stage.va = deposit64(s->net->key_stage.va, 0, 32, val);
        return true;
    case PLDMA_KEY_VA_HI:
        s->net->key_stage.va = deposit64(s->net->key_stage.va, 32, 32, val);
        return true;
    case PLDMA_KEY_LEN_LO:
        s->net->key_stage.len = deposit64(s->net->key_stage.len, 0, 32, val);
        return true;
    case PLDMA_KEY_LEN_HI:
        s->net->key_stage.len = deposit64(s->net->key_stage.len, 32, 32, val);
        return true;
    case PLDMA_KEY_ACCESS:
        s->net->key_stage.access = val;
        return true;
    case PLDMA_KEY_CMD:
        if (!s->nic) {
            s->net->key_status = PLDMA_KEY_ST_BAD_CMD;
            return true;
        }
        pldma_key_cmd(s, val);
        return true;
    default:
        return false;
    }
}

/*
 * Keys keep their generation: the next REGISTER of an index takes
 * another one, so an old rkey stays stale after a reset
 */
void pldma_keys_reset(PLDMACore *s)
{
    uint32_t i;

    for (i = 0; i < PLDMA_NUM_KEYS; i++) {
        s->net->keys[i].valid = false;
        s->net->keys[i].fault = false;
    }
    memset(&s->net->key_stage, 0, sizeof(s->net->key_stage));
    s->net->key_sel = 0;
    s->net->key_status = 0;
}
