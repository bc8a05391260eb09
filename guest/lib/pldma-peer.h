/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The other guest of a remote DMA: a window server and its client, over a
 * small TCP side channel (one text line a request, one a reply).  Used by
 * pldma-rdma (tests), pldma-bench -r (remote benchmark) and pldma-demo -r.
 *
 * Server requests, each answered "OK ..." or "ERR errno":
 *   MR NODE LEN ACCESS SEED STRATEGY  a new window of LEN bytes on the
 *        device of node NODE, ACCESS W, R or WR; R: a memfd holding
 *        pu_byte(SEED, .), else anonymous; never touched, not mapped
 *        (MADV_DONTNEED); responder faults served with STRATEGY (one,
 *        touchN, stall, default).  Reply: OK RKEY VA
 *   CHECK RKEY OFF LEN SEED   the window holds pu_byte(SEED, .) from OFF
 *        (reply OK, or BAD first-bad-offset)
 *   DROP RKEY                 MADV_DONTNEED: the window is untouched again
 *   POP RKEY                  the window made present (prefaulted):
 *                             MADV_POPULATE_WRITE, or _READ for READ-only
 *   DEREG RKEY                revoke the key; the memory stays (a late
 *                             write must fail, not land in freed memory)
 *   FREE RKEY                 revoke the key and free the memory
 *   STATS NODE                OK dev_faults driver_faults pages failed rnr_tx
 *   CLOSE NODE                close the node's file (every key revoked)
 *   QP NODE QPN PSN IP MAC [MTU]  a QP on a new channel of node NODE's
 *        device (this process's PD: the windows above), connected RC-style
 *        to the client's QP (QPN, start PSN, IPv4 as pldma_info.ip, MAC
 *        aa:bb:.., the device's MTU in bytes; the path MTU is the smaller);
 *        reply: OK and the same of the server's QP, whose start PSN is
 *        random too.  The QP lives as long as the connection
 *        (a new QP request for the node replaces it)
 *   RELOAD                    close every file of the server (windows and
 *                             QP gone), rmmod and insmod pldma.ko (the
 *                             devices reset, as at a reboot)
 *   QUIT                      the server ends after NQUIT of these
 */
#ifndef PLDMA_PEER_H
#define PLDMA_PEER_H

#include <stddef.h>
#include <stdint.h>

struct pldma_chan;

/* The channel on the device of node @node (opened once, kept open) */
struct pldma_chan *pp_chan_node(unsigned int node);
void pp_chan_forget(unsigned int node);

/* Window server on @port; returns after @nquit QUIT requests (0 or 1) */
int pp_serve(int port, int nquit);

/* Client: connect (retried for 120 s: the peer may still be booting) */
int pp_connect(const char *host, int port);
/* Send a request and return its reply line (static buffer) or NULL */
char *pp_rpc(int fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int pp_ok(const char *reply);
/* MR on the server: 0 and the key and address, or -1 (reply printed) */
int pp_reg_remote(int fd, unsigned int node, size_t len, const char *access,
		  uint32_t seed, const char *strat, uint32_t *rkey,
		  uint64_t *rva);

/*
 * An RC connection from @ch (a new QP on it, replacing its old one) to a
 * new QP on the server's node @rnode; the channel's RDMA then goes to it.
 * 0 or -errno (printed).
 */
int pp_qp_connect(int fd, struct pldma_chan *ch, unsigned int rnode);
/* The local ACK timeout of the QPs pp_qp_connect() makes (IB code; 0:
 * libpldma's PLDMA_QP_TIMEOUT), e.g. for a slower peer than a PLDMA */
extern unsigned int pp_qp_timeout;

struct pp_stats {
	unsigned long long dev_faults;	/* RX_FAULTS of the responder device */
	unsigned long long faults;	/* served by its driver (this file) */
	unsigned long long pages;	/* pages it made present */
	unsigned long long failed;	/* answered FAILED */
	unsigned long long rnr_tx;	/* RNR NAKs the device sent */
};
int pp_stats(int fd, unsigned int node, struct pp_stats *s);

#endif
