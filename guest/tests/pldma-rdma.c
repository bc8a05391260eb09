// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pldma-rdma: RDMA WRITE and READ between two guests (tests/rdma/run).
 * Keys, addresses and the QPs' connection data (QPN, random start PSN, IP,
 * MAC) are exchanged over a small TCP side channel on the guests' virtio-net
 * link; the data goes over the PLDMA link, on an RC QP pair made for each
 * run (pair, keys) between the requester's channel and a QP of the server.
 *
 *   serve PORT [NQUIT]    responder: registers windows on request, checks
 *                         what was written, reports its counters; ends
 *                         after NQUIT (1) QUIT requests (pldma-peer.c).  Windows are never touched by the
 *                         responder before the transfer (fresh memory, and
 *                         MADV_DONTNEED as rdma-core's ODP tests do), so
 *                         every page of a transfer is a responder fault.
 *   pair HOST PORT LNODE RNODE LSTRAT RSTRAT SIZE...
 *                         requester: WRITE and READ of each size from the
 *                         local device (node LNODE, local faults with
 *                         LSTRAT) to the responder's device (node RNODE,
 *                         responder faults with RSTRAT), data verified,
 *                         then the counters of both sides
 *   keys HOST PORT LNODE RNODE
 *                         revoked, read-only, out-of-range and closed-file
 *                         keys: the requester gets REMOTE_ACCESS and the
 *                         responder's memory is untouched; then the
 *                         responder reloads pldma.ko: the old connection
 *                         fails, a new QP pair carries a 1 MiB WRITE whole
 *   verbs HOST PORT LNODE LSTRAT SIZE...
 *                         requester to a verbs peer that is not a PLDMA
 *                         (pldma-verbs-peer serve on Linux rxe,
 *                         tests/rxe/run): WRITE and READ of each size, data
 *                         verified there and here, local faults with
 *                         LSTRAT; the peer's memory is its own (registered
 *                         with ibv_reg_mr: no responder faults)
 *   quit HOST PORT        end the server
 *   selftest NODE         REG_MR/DEREG_MR and QP_* argument checking
 *                         (hostile user space), quotas, INFO and
 *                         NET_STATS, QPs of other files and processes
 *                         refused, destroy and close put the QP in RESET
 *
 * Results are TAP lines without numbers ("ok - ..."); tests/rdma/run
 * numbers the lines of both guests.  Strategies: stall, one, touchN,
 * prefault, user, batchN; for the responder stall, one, touchN, user (the
 * owner's fault thread) or "default" (the file's).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pldma.h"
#include "pldma-peer.h"
#include "pldma-util.h"

#define PG		4096UL

static int fails;
static const char *tag = "";

static void result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - %s", ok ? "ok" : "not ok", tag);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		fails++;
}

static void note(const char *fmt, ...)
{
	va_list ap;

	printf("# %s", tag);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* A transfer that did not complete: what the channel and the link say */
static void dump_chan(struct pldma_chan *ch)
{
	struct pldma_net_stats ns;
	unsigned int i;

	note("channel: state %u error %u head %u tail %u completed %u last status %u fault va %#x%08x info %#x desc %u done %u",
	     pldma_reg(ch, PLDMA_CH_STATE), pldma_reg(ch, PLDMA_CH_ERROR),
	     pldma_reg(ch, PLDMA_CH_RING_HEAD), pldma_reg(ch, PLDMA_CH_RING_TAIL),
	     pldma_reg(ch, PLDMA_CH_COMPLETED),
	     pldma_reg(ch, PLDMA_CH_LAST_STATUS),
	     pldma_reg(ch, PLDMA_CH_FAULT_VA_HI),
	     pldma_reg(ch, PLDMA_CH_FAULT_VA_LO),
	     pldma_reg(ch, PLDMA_CH_FAULT_INFO),
	     pldma_reg(ch, PLDMA_CH_FAULT_DESC),
	     pldma_reg(ch, PLDMA_CH_FAULT_DONE));
	if (pldma_net_stats(ch, &ns))
		return;
	for (i = 0; i < ns.num; i++)
		if (ns.cnt[i])
			note("  %s: %u", pldma_net_counter_name(i), ns.cnt[i]);
}

static int parse_strat(const char *s, int *strategy, unsigned int *touch)
{
	if (!strcmp(s, "default")) {
		*strategy = -1;
		*touch = 0;
		return 0;
	}
	return pldma_strategy_parse(s, strategy, touch);
}

/* ------------------------------------------------------------------ */
/* Requester                                                          */
/* ------------------------------------------------------------------ */

/*
 * A failed message (a timeout, a flushed SQ) leaves the QP in ERR, where
 * it fails every later request, as an RC QP does: connect a new pair, as
 * a verbs application would, so that one failure is reported once.
 */
static void requeue(int fd, struct pldma_chan *ch, unsigned int rnode)
{
	struct pldma_qp_attr qa;

	if (pldma_qp_query(ch, &qa) || qa.qp_state == PLDMA_QPS_RTS)
		return;
	note("QP %#x in state %u: a new QP pair (%s)", qa.qpn, qa.qp_state,
	     pp_qp_connect(fd, ch, rnode) ? "failed" : "connected");
}

/*
 * One WRITE and one READ of @len bytes, at offset @off of fresh windows.
 * The requester's own buffers are untouched too (memfd source, anonymous
 * destination): local faults on the requester, responder faults on the
 * responder.
 */
static int xfer_pair(int fd, struct pldma_chan *ch, unsigned int rnode,
		      int lstrat, unsigned int ltouch, const char *rstrat,
		      size_t len, size_t off, uint32_t seed)
{
	struct pldma_result res;
	uint32_t rkey;
	uint64_t rva;
	uint8_t *src, *dst;
	long bad;
	int ret;

	/* WRITE: local memfd source -> remote anonymous window */
	src = pu_src_alloc(len, seed);
	if (!src || pp_reg_remote(fd, rnode, off + len, "W", 0, rstrat, &rkey,
			       &rva)) {
		result(0, "WRITE %zu bytes: setup", len);
		pu_free(src, len);
		return -EIO;
	}
	ret = pldma_rdma_write(ch, rnode, rkey, rva + off, src, len, lstrat,
			       ltouch, &res);
	result(!ret && res.status == PLDMA_ST_SUCCESS && res.bytes == len &&
	       pp_ok(pp_rpc(fd, "CHECK %u %zu %zu %u", rkey, off, len, seed)),
	       "WRITE %zu bytes at +%zu: ret %d status %u bytes %llu, %.1f ms, local faults %llu, responder data verified",
	       len, off, ret, res.status, (unsigned long long)res.bytes,
	       res.time_ns / 1e6, (unsigned long long)res.faults);
	if (ret || res.status != PLDMA_ST_SUCCESS) {
		dump_chan(ch);
		requeue(fd, ch, rnode);
	}
	/* revoke the key and free the window: the server keeps 64 */
	pp_rpc(fd, "FREE %u", rkey);
	pu_free(src, len);
	if (ret == -ETIMEDOUT)
		return ret;

	/* READ: remote memfd window holding seed + 1 -> local anonymous */
	dst = pu_dst_alloc(len, 0);
	if (!dst || pp_reg_remote(fd, rnode, off + len, "R", seed + 1, rstrat,
			       &rkey, &rva)) {
		result(0, "READ %zu bytes: setup", len);
		pu_free(dst, len);
		return -EIO;
	}
	ret = pldma_rdma_read(ch, rnode, rkey, rva, dst, len, lstrat, ltouch,
			      &res);
	bad = ret ? 0 : pu_verify(dst, len, seed + 1);
	result(!ret && res.status == PLDMA_ST_SUCCESS && res.bytes == len &&
	       bad < 0,
	       "READ %zu bytes: ret %d status %u bytes %llu, %.1f ms, local faults %llu, data verified (first bad byte %ld)",
	       len, ret, res.status, (unsigned long long)res.bytes,
	       res.time_ns / 1e6, (unsigned long long)res.faults, bad);
	if (ret || res.status != PLDMA_ST_SUCCESS) {
		dump_chan(ch);
		requeue(fd, ch, rnode);
	}
	pp_rpc(fd, "FREE %u", rkey);
	pu_free(dst, len);
	return ret;
}

static int pair(const char *host, int port, unsigned int lnode,
		unsigned int rnode, const char *lstr, const char *rstr,
		int nsizes, char **sizes)
{
	struct pldma_net_stats n0, n1;
	struct pp_stats r0, r1;
	struct pldma_chan *ch;
	unsigned int ltouch, rtouch;
	int lstrat, rstrat, fd, i;
	static char tagbuf[96];

	snprintf(tagbuf, sizeof(tagbuf), "%s(node %u) -> %s(node %u): ", lstr,
		 lnode, rstr, rnode);
	tag = tagbuf;
	ch = pp_chan_node(lnode);
	if (!ch || pldma_strategy_parse(lstr, &lstrat, &ltouch) ||
	    parse_strat(rstr, &rstrat, &rtouch)) {
		result(0, "local device and strategies");
		return 1;
	}
	/*
	 * user strategy: this process's fault library serves the requester's
	 * faults (the thread stays for later pairs on the channel: it only
	 * sees faults forwarded to user space)
	 */
	if (lstrat == PLDMA_STRAT_USER) {
		i = pldma_fault_thread_start(ch, NULL, NULL);
		if (i && i != -EBUSY) {
			result(0, "fault thread: %d", i);
			return 1;
		}
	}
	fd = pp_connect(host, port);
	if (fd < 0) {
		result(0, "side channel to %s:%d", host, port);
		return 1;
	}
	/* an RC connection: the channel's RDMA goes to the peer's QP */
	if (pp_qp_connect(fd, ch, rnode)) {
		result(0, "QP connected to node %u", rnode);
		close(fd);
		return 1;
	}
	if (pldma_net_stats(ch, &n0) || pp_stats(fd, rnode, &r0)) {
		result(0, "counters");
		return 1;
	}
	for (i = 0; i < nsizes; i++) {
		size_t len = strtoul(sizes[i], NULL, 0);

		/* an odd length lands at an odd remote offset */
		if (xfer_pair(fd, ch, rnode, lstrat, ltouch, rstr, len,
			      len & 1 ? 123 : 0, 0x5a00 + i) == -ETIMEDOUT) {
			/* the ring is stuck behind it: give up this pair */
			result(0, "no transfer hangs (the rest of this pair skipped)");
			pp_chan_forget(lnode);
			close(fd);
			return 1;
		}
	}
	if (pldma_net_stats(ch, &n1) || pp_stats(fd, rnode, &r1)) {
		result(0, "counters");
		close(fd);
		return 1;
	}
#define D(f) ((unsigned int)(n1.cnt[f] - n0.cnt[f]))
	note("requester: %u RNR NAKs, %u resumes, %u segments (%u bytes) resent, %u timeouts, %u out-of-order",
	     D(PLDMA_NCNT_NAK_RX_RNR), D(PLDMA_NCNT_RESUME_RX),
	     D(PLDMA_NCNT_RETX_SEGS), D(PLDMA_NCNT_RETX_BYTES),
	     D(PLDMA_NCNT_TIMEOUTS), D(PLDMA_NCNT_OOO));
	note("responder: %llu faults (device), %llu served by the driver, %llu pages made present, %llu failed",
	     r1.dev_faults - r0.dev_faults, r1.faults - r0.faults,
	     r1.pages - r0.pages, r1.failed - r0.failed);
	result(r1.dev_faults > r0.dev_faults,
	       "responder faults: %llu", r1.dev_faults - r0.dev_faults);
	result(D(PLDMA_NCNT_NAK_RX_RNR) > 0 && D(PLDMA_NCNT_RETX_SEGS) > 0,
	       "requester: RNR NAKs (%u) and resends from the faulting segment (%u)",
	       D(PLDMA_NCNT_NAK_RX_RNR), D(PLDMA_NCNT_RETX_SEGS));
	if (rstrat == PLDMA_STRAT_ONE || rstrat == PLDMA_STRAT_TOUCH ||
	    rstrat == PLDMA_STRAT_USER) {
		unsigned long long f = r1.faults - r0.faults;
		unsigned long long p = r1.pages - r0.pages;

		result(f > 0 && r1.failed == r0.failed &&
		       (rstrat == PLDMA_STRAT_TOUCH ? p > f : p == f),
		       "responder driver: %llu faults served %s, %llu pages present",
		       f, rstrat == PLDMA_STRAT_ONE ? "one page each" :
		       rstrat == PLDMA_STRAT_USER ?
		       "by the owner's fault thread, one page each" :
		       "with touch-ahead (more pages than faults)", p);
	}
#undef D
	close(fd);
	return 0;
}

/*
 * A requester to a verbs peer (Linux rxe): the same transfers as pair(),
 * against memory the peer registered with ibv_reg_mr.  The node named in
 * the side channel's requests is ignored there.  Nothing may time out or be
 * resent for lack of an answer: every frame of both ends has to be one the
 * other accepts.
 */
static int verbs(const char *host, int port, unsigned int lnode,
		 const char *lstr, int nsizes, char **sizes)
{
	struct pldma_net_stats n0, n1;
	struct pldma_chan *ch;
	unsigned int ltouch;
	int lstrat, fd, i;
	static char tagbuf[96];

	snprintf(tagbuf, sizeof(tagbuf), "%s(node %u) -> rxe: ", lstr, lnode);
	tag = tagbuf;
	ch = pp_chan_node(lnode);
	if (!ch || pldma_strategy_parse(lstr, &lstrat, &ltouch)) {
		result(0, "local device and strategy");
		return 1;
	}
	if (lstrat == PLDMA_STRAT_USER) {
		i = pldma_fault_thread_start(ch, NULL, NULL);
		if (i && i != -EBUSY) {
			result(0, "fault thread: %d", i);
			return 1;
		}
	}
	fd = pp_connect(host, port);
	if (fd < 0) {
		result(0, "side channel to %s:%d", host, port);
		return 1;
	}
	/*
	 * rxe serves a READ request whole before the next one, duplicates
	 * included: a timeout shorter than one window of its responses
	 * takes a TCG guest (about 100 ms for 64 KiB) makes each retry a
	 * window more to wait for, until the READ times out
	 */
	pp_qp_timeout = 16;		/* 4.096 us << 16: 268 ms */
	i = pp_qp_connect(fd, ch, 0);
	result(!i, "QP %#x connected to the verbs peer (%d)", pldma_qp_num(ch), i);
	if (i || pldma_net_stats(ch, &n0)) {
		close(fd);
		return 1;
	}
	for (i = 0; i < nsizes; i++) {
		size_t len = strtoul(sizes[i], NULL, 0);

		if (xfer_pair(fd, ch, 0, lstrat, ltouch, "default", len,
			      len & 1 ? 123 : 0, 0x6a00 + i) == -ETIMEDOUT) {
			result(0, "no transfer hangs (the rest skipped)");
			pp_chan_forget(lnode);
			close(fd);
			return 1;
		}
	}
	if (pldma_net_stats(ch, &n1)) {
		result(0, "counters");
		close(fd);
		return 1;
	}
#define D(f) ((unsigned int)(n1.cnt[f] - n0.cnt[f]))
	note("requester: %u RNR NAKs, %u segments (%u bytes) resent, %u timeouts, %u out-of-order, %u ACKs",
	     D(PLDMA_NCNT_NAK_RX_RNR), D(PLDMA_NCNT_RETX_SEGS),
	     D(PLDMA_NCNT_RETX_BYTES), D(PLDMA_NCNT_TIMEOUTS),
	     D(PLDMA_NCNT_OOO), D(PLDMA_NCNT_ACK_RX));
	result(!D(PLDMA_NCNT_TIMEOUTS) && !D(PLDMA_NCNT_NAK_RX_SEQ) &&
	       !D(PLDMA_NCNT_NAK_RX_ACCESS) && !D(PLDMA_NCNT_NAK_RX_INVALID) &&
	       !D(PLDMA_NCNT_NAK_RX_OPERR),
	       "the verbs peer answered every request: %u ACK timeouts, NAKs: %u sequence, %u access, %u invalid, %u operational",
	       D(PLDMA_NCNT_TIMEOUTS), D(PLDMA_NCNT_NAK_RX_SEQ),
	       D(PLDMA_NCNT_NAK_RX_ACCESS), D(PLDMA_NCNT_NAK_RX_INVALID),
	       D(PLDMA_NCNT_NAK_RX_OPERR));
	/* dropped before a QP saw it: malformed, bad ICRC, not ours */
	result(D(PLDMA_NCNT_RX_DROPPED) == D(PLDMA_NCNT_QP_DROPPED),
	       "every frame of the verbs peer parsed: %u dropped before a QP",
	       D(PLDMA_NCNT_RX_DROPPED) - D(PLDMA_NCNT_QP_DROPPED));
	/*
	 * dropped by the QP as not about the message in flight: late
	 * responses to READ requests we sent again after a local fault (the
	 * peer serves duplicates whole); none when nothing faults
	 */
	if (lstrat == PLDMA_STRAT_PREFAULT)
		result(!D(PLDMA_NCNT_QP_DROPPED),
		       "no frame of the verbs peer dropped by the QP: %u",
		       D(PLDMA_NCNT_QP_DROPPED));
	else
		note("frames the QP dropped as not about the message in flight (late responses to our READ re-requests): %u",
		     D(PLDMA_NCNT_QP_DROPPED));
#undef D
	close(fd);
	return 0;
}

/*
 * The responder's driver reloaded (its device reset, as at a reboot): the
 * old connection is gone, a WRITE on it does not succeed; a new QP pair
 * with new random PSNs carries the next WRITE whole, into an untouched
 * window, and a READ.  (Before QPs, such a WRITE completed SUCCESS with
 * nothing written: the peer dropped it all as duplicates.)
 */
static void reload(int fd, struct pldma_chan *ch, unsigned int rnode)
{
	const size_t len = 1 << 20;
	struct pldma_qp_attr qa;
	struct pldma_result res;
	uint32_t rkey, old = pldma_qp_num(ch);
	uint8_t *src, *dst;
	uint64_t rva;
	long bad;
	char *r;
	int ret;

	r = pp_rpc(fd, "RELOAD");
	result(pp_ok(r), "the responder reloads pldma.ko (%s)", r ? r : "no reply");
	if (!pp_ok(r))
		return;
	src = pu_src_alloc(len, 0x77);
	dst = pu_dst_alloc(len, 0);
	if (!src || !dst ||
	    pp_reg_remote(fd, rnode, len, "W", 0, "default", &rkey, &rva)) {
		result(0, "reload: setup");
		goto out;
	}
	/* the old QP's peer is gone: never SUCCESS */
	ret = pldma_rdma_write(ch, rnode, rkey, rva, src, 4096,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(ret || res.status != PLDMA_ST_SUCCESS,
	       "WRITE on the connection of before the reload fails (ret %d status %u)",
	       ret, res.status);
	ret = pldma_qp_query(ch, &qa);
	note("the old QP %#x is now %s (ret %d)", old,
	     !ret && qa.qp_state == PLDMA_QPS_ERR ? "ERR" :
	     !ret && qa.qp_state == PLDMA_QPS_RTS ? "RTS" : "other", ret);
	ret = pp_qp_connect(fd, ch, rnode);
	result(!ret && pldma_qp_num(ch) != old,
	       "a new QP pair after the reload (qpn %#x, was %#x)",
	       pldma_qp_num(ch), old);
	ret = pldma_rdma_write(ch, rnode, rkey, rva, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_SUCCESS && res.bytes == len &&
	       pp_ok(pp_rpc(fd, "CHECK %u 0 %zu %u", rkey, len, 0x77)),
	       "WRITE of %zu bytes after the peer's reload lands whole (ret %d status %u bytes %llu)",
	       len, ret, res.status, (unsigned long long)res.bytes);
	if (ret || res.status != PLDMA_ST_SUCCESS)
		dump_chan(ch);
	pp_rpc(fd, "FREE %u", rkey);
	if (pp_reg_remote(fd, rnode, len, "R", 0x78, "default", &rkey, &rva)) {
		result(0, "reload: READ window");
		goto out;
	}
	ret = pldma_rdma_read(ch, rnode, rkey, rva, dst, len,
			      PLDMA_STRAT_PREFAULT, 0, &res);
	bad = ret ? 0 : pu_verify(dst, len, 0x78);
	result(!ret && res.status == PLDMA_ST_SUCCESS && bad < 0,
	       "READ of %zu bytes after the reload (ret %d status %u, first bad byte %ld)",
	       len, ret, res.status, bad);
	pp_rpc(fd, "FREE %u", rkey);
out:
	pu_free(src, len);
	pu_free(dst, len);
}

/* Refused keys: REMOTE_ACCESS, and nothing written on the responder */
static int keys(const char *host, int port, unsigned int lnode,
		unsigned int rnode)
{
	const size_t len = 3 * PG;
	struct pldma_result res;
	struct pldma_chan *ch;
	static char tagbuf[64];
	uint32_t rkey, ro;
	uint64_t rva, rova;
	uint8_t *src;
	int fd, ret;

	snprintf(tagbuf, sizeof(tagbuf), "keys (node %u -> node %u): ",
		 lnode, rnode);
	tag = tagbuf;
	ch = pp_chan_node(lnode);
	fd = pp_connect(host, port);
	src = pu_src_alloc(len, 7);
	if (!ch || fd < 0 || !src || pp_qp_connect(fd, ch, rnode)) {
		result(0, "setup");
		return 1;
	}
	if (pp_reg_remote(fd, rnode, len, "WR", 0, "default", &rkey, &rva) ||
	    pp_reg_remote(fd, rnode, len, "R", 9, "default", &ro, &rova)) {
		result(0, "register windows");
		return 1;
	}
	ret = pldma_rdma_write(ch, rnode, rkey, rva, src, len, PLDMA_STRAT_PREFAULT,
			       0, &res);
	result(!ret && res.status == PLDMA_ST_SUCCESS, "a valid key works (status %u)",
	       res.status);
	ret = pldma_rdma_write(ch, rnode, rkey, rva + PG, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "beyond the window: REMOTE_ACCESS (status %u)", res.status);
	ret = pldma_rdma_write(ch, rnode, ro, rova, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS &&
	       pp_ok(pp_rpc(fd, "CHECK %u 0 %zu 9", ro, len)),
	       "WRITE to a read-only window: REMOTE_ACCESS (status %u), its memory untouched",
	       res.status);
	result(pp_ok(pp_rpc(fd, "DEREG %u", rkey)), "DEREG_MR");
	ret = pldma_rdma_write(ch, rnode, rkey, rva, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "deregistered key: REMOTE_ACCESS (status %u)", res.status);
	ret = pldma_rdma_read(ch, rnode, ro, rova, src, len,
			      PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_SUCCESS,
	       "the other key still works (status %u)", res.status);
	/* the owner's file closed (as at exit): every key revoked at once */
	result(pp_ok(pp_rpc(fd, "CLOSE %u", rnode)), "responder closes its file");
	ret = pldma_rdma_read(ch, rnode, ro, rova, src, len,
			      PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "key of a released file: REMOTE_ACCESS (status %u)", res.status);
	ret = pldma_rdma_write(ch, rnode, 0x12345600 | 0x3f, rva, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "made-up key: REMOTE_ACCESS (status %u)", res.status);
	pu_free(src, len);
	reload(fd, ch, rnode);
	close(fd);
	return 0;
}

static int quit(const char *host, int port)
{
	int fd = pp_connect(host, port);

	return fd >= 0 && pp_ok(pp_rpc(fd, "QUIT")) ? 0 : 1;
}

/* ------------------------------------------------------------------ */
/* Argument checking of the ioctls                                    */
/* ------------------------------------------------------------------ */

static int reg_raw(struct pldma_chan *ch, struct pldma_reg_mr *r)
{
	return ioctl(pldma_fd(ch), PLDMA_IOC_REG_MR, r) ? -errno : 0;
}

static void qp_selftest(struct pldma_chan *ch, unsigned int node);

static int selftest(unsigned int node)
{
	struct pldma_chan *ch = pp_chan_node(node), *other;
	const struct pldma_info *in;
	struct pldma_net_stats ns;
	uint32_t rkeys[PLDMA_NUM_KEYS], rk;
	uint8_t *buf;
	int i, n, ret, stall;

	static char tagbuf[32];

	snprintf(tagbuf, sizeof(tagbuf), "selftest node %u: ", node);
	tag = tagbuf;
	if (!ch) {
		result(0, "device with node-id %u", node);
		return 1;
	}
	in = pldma_info(ch);
	stall = in->fault_mode == PLDMA_MODE_STALL;
	result(in->node_id == node && in->mtu >= 256 && in->max_mrs > 0 &&
	       (in->cap & PLDMA_CAP_REMOTE),
	       "INFO: node %u, MTU %u, %u windows a file, CAP.REMOTE", in->node_id,
	       in->mtu, in->max_mrs);
	result(!pldma_net_stats(ch, &ns) && ns.node_id == node &&
	       ns.num == PLDMA_NCNT_NUM, "NET_STATS");
	buf = pu_dst_alloc(16 * PG, 0);

#define BAD(err, desc, ...) do {					\
		struct pldma_reg_mr r = { .va = (uintptr_t)buf,		\
			.len = PG, .access = PLDMA_MR_ACCESS_WRITE };	\
		__VA_ARGS__;						\
		ret = reg_raw(ch, &r);					\
		result(ret == -(err), "REG_MR %s: %s (got %s)", desc,	\
		       strerror(err), strerror(-ret));			\
	} while (0)
	BAD(EINVAL, "access 0", r.access = 0);
	BAD(EINVAL, "unknown access bit", r.access = 4);
	BAD(EINVAL, "length 0", r.len = 0);
	BAD(EINVAL, "wrapping range", r.va = ~0ULL - 100; r.len = 4096);
	BAD(EFAULT, "kernel address", r.va = 0xffff800000000000ULL);
	BAD(EFAULT, "beyond user space", r.len = 1ULL << 60);
	BAD(EINVAL, "unknown flag", r.flags = 0x80);
	BAD(EINVAL, "reserved field", r.rsvd[1] = 1);
	BAD(EINVAL, "strategy without PLDMA_MR_STRATEGY", r.strategy = 3);
	BAD(EINVAL, "pin strategy", r.flags = PLDMA_MR_STRATEGY;
	    r.strategy = PLDMA_STRAT_PIN);
	/* user: forwarded to the owner, a report-mode device only */
	if (stall)
		BAD(EOPNOTSUPP, "user strategy on a stall-mode device",
		    r.flags = PLDMA_MR_STRATEGY; r.strategy = PLDMA_STRAT_USER);
	BAD(stall ? EOPNOTSUPP : EINVAL, "batch strategy",
	    r.flags = PLDMA_MR_STRATEGY; r.strategy = PLDMA_STRAT_BATCH;
	    r.touch_ahead = 16);
	BAD(EINVAL, "touch-ahead 0",
	    r.flags = PLDMA_MR_STRATEGY; r.strategy = PLDMA_STRAT_TOUCH);
	BAD(EINVAL, "touch-ahead too large",
	    r.flags = PLDMA_MR_STRATEGY; r.strategy = PLDMA_STRAT_TOUCH;
	    r.touch_ahead = PLDMA_TOUCH_MAX + 1);
	BAD(EINVAL, "unknown strategy", r.flags = PLDMA_MR_STRATEGY;
	    r.strategy = 99);
#undef BAD

	/* the per-file quota, then everything given back */
	for (n = 0; n < PLDMA_NUM_KEYS; n++)
		if (pldma_reg_mr(ch, buf + (n % 16) * PG, PG,
				 PLDMA_MR_ACCESS_READ, -1, 0, &rkeys[n]))
			break;
	ret = pldma_reg_mr(ch, buf, PG, PLDMA_MR_ACCESS_READ, -1, 0, &rk);
	result(n == (int)in->max_mrs && ret == -EDQUOT,
	       "quota: %d windows, then %s", n, strerror(-ret));
	for (i = 0, ret = 0; i < n; i++)
		ret |= pldma_dereg_mr(ch, rkeys[i]);
	result(!ret, "DEREG_MR of all %d", n);
	result(pldma_dereg_mr(ch, rkeys[0]) == -ENOENT, "DEREG_MR twice: ENOENT");
	result(pldma_dereg_mr(ch, 0xdead00ff) == -ENOENT,
	       "DEREG_MR of a made-up key: ENOENT");
	{
		struct pldma_dereg_mr d = { .rkey = rkeys[0], .rsvd = 1 };

		result(ioctl(pldma_fd(ch), PLDMA_IOC_DEREG_MR, &d) && errno == EINVAL,
		       "DEREG_MR reserved field: EINVAL");
	}
	/* another file cannot revoke this file's key */
	ret = pldma_reg_mr(ch, buf, 16 * PG, PLDMA_MR_ACCESS_WRITE, -1, 0, &rk);
	other = NULL;
	for (i = 0; i < 16 && !ret; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/dev/pldma%d", i);
		if (access(path, F_OK))
			continue;
		other = pldma_open(path);
		if (other && pldma_info(other)->node_id == node)
			break;
		pldma_close(other);
		other = NULL;
	}
	result(!ret && other && pldma_dereg_mr(other, rk) == -ENOENT &&
	       !pldma_dereg_mr(ch, rk),
	       "a key is revoked only by the file that registered it");
	pldma_close(other);
	pu_free(buf, 16 * PG);
	qp_selftest(ch, node);
	return 0;
}

/* Another channel on the device of @node (a new file) */
static struct pldma_chan *open_other(unsigned int node)
{
	struct pldma_chan *other;
	char path[32];
	int i;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/dev/pldma%d", i);
		if (access(path, F_OK))
			continue;
		other = pldma_open(path);
		if (other && pldma_info(other)->node_id == node)
			return other;
		pldma_close(other);
	}
	return NULL;
}

/* The device's state of QP index @idx in debugfs: "RESET" when not listed */
static const char *qp_dbg_state(unsigned int node, unsigned int idx,
				char *buf, size_t len)
{
	char path[96], line[256], want[32];
	const char *st = "no-debugfs";
	unsigned int n;
	FILE *f;
	int i;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/pldma/pldma%d/net", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = 0;
		if (fscanf(f, "node: %u", &n) != 1)
			n = 0;
		fclose(f);
		if (n != node)
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/debug/pldma/pldma%d/qps", i);
		f = fopen(path, "r");
		if (!f)
			break;
		st = "RESET";
		snprintf(want, sizeof(want), "  qp %u ", idx);
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, want, strlen(want)))
				continue;
			/* "  qp I qpn Q STATE ..." */
			if (sscanf(line, "  qp %*u qpn %*x %31s", buf) == 1 &&
			    len >= 32)
				st = buf;
		}
		fclose(f);
		break;
	}
	return st;
}

static int qp_modify_raw(struct pldma_chan *ch, struct pldma_qp_attr *a)
{
	return ioctl(pldma_fd(ch), PLDMA_IOC_QP_MODIFY, a) ? -errno : 0;
}

/* QP ioctls of a hostile user: every bad attribute refused, nothing moves */
static void qp_selftest(struct pldma_chan *ch, unsigned int node)
{
	const struct pldma_info *in = pldma_info(ch);
	struct pldma_qp_info l;
	struct pldma_qp_attr qa;
	struct pldma_qp_create c = { 0 };
	struct pldma_qp_destroy d = { 0 };
	struct pldma_chan *other;
	char sbuf[32];
	int ret, p1[2], p2[2], st;
	uint32_t qpn, cqpn = 0;
	pid_t pid;

	result(in->num_qps > 0 && in->ip && (in->mac[0] | in->mac[5]) &&
	       !(in->mac[0] & 1) && (in->cap & PLDMA_CAP_QP),
	       "INFO: %u QPs, IP %u.%u.%u.%u, MAC %02x:%02x:%02x:%02x:%02x:%02x, CAP.QP",
	       in->num_qps, in->ip >> 24, (in->ip >> 16) & 0xff,
	       (in->ip >> 8) & 0xff, in->ip & 0xff, in->mac[0], in->mac[1],
	       in->mac[2], in->mac[3], in->mac[4], in->mac[5]);
	if (!in->num_qps)
		return;
	if (pldma_qp_num(ch))
		pldma_qp_destroy(ch);
	ret = pldma_qp_create(ch, &l);
	qpn = l.qpn;
	result(!ret && qpn > 1 && qpn <= 0xffffff && l.psn <= 0xffffff,
	       "QP_CREATE: qpn %#x (ret %d)", qpn, ret);
	if (ret)
		return;
	result(ioctl(pldma_fd(ch), PLDMA_IOC_QP_CREATE, &c) && errno == EBUSY,
	       "a second QP on the same channel: EBUSY");
	c.rsvd[1] = 1;
	other = open_other(node);
	result(other && ioctl(pldma_fd(other), PLDMA_IOC_QP_CREATE, &c) &&
	       errno == EINVAL, "QP_CREATE reserved field: EINVAL");

#define BADQP(err, desc, ...) do {					\
		struct pldma_qp_attr a = { .qpn = qpn,			\
			.attr_mask = PLDMA_QPA_STATE | PLDMA_QPA_ACCESS_FLAGS, \
			.qp_state = PLDMA_QPS_INIT,			\
			.access = PLDMA_MR_ACCESS_WRITE };		\
		__VA_ARGS__;						\
		ret = qp_modify_raw(ch, &a);				\
		result(ret == -(err), "QP_MODIFY %s: %s (got %s)", desc,	\
		       strerror(err), strerror(-ret));			\
	} while (0)
	BADQP(EINVAL, "mask 0", a.attr_mask = 0);
	BADQP(EINVAL, "PD in the mask (the driver's)",
	      a.attr_mask |= PLDMA_QPA_PD);
	BADQP(EINVAL, "SQ in the mask (the driver's)",
	      a.attr_mask |= PLDMA_QPA_SQ);
	BADQP(EINVAL, "unknown mask bit", a.attr_mask |= 1U << 1);
	BADQP(EINVAL, "state 4 (SQD)", a.qp_state = 4);
	BADQP(EINVAL, "state 99", a.qp_state = 99);
	BADQP(EINVAL, "access bit 4", a.access = 4);
	BADQP(EINVAL, "reserved field", a.rsvd[3] = 1);
	BADQP(EINVAL, "reserved after the MAC", a.rsvd0 = 1);
	BADQP(EINVAL, "dest QPN 0", a.attr_mask |= PLDMA_QPA_DEST_QPN;
	      a.dest_qpn = 0);
	BADQP(EINVAL, "dest QPN 1", a.attr_mask |= PLDMA_QPA_DEST_QPN;
	      a.dest_qpn = 1);
	BADQP(EINVAL, "dest QPN beyond 24 bits",
	      a.attr_mask |= PLDMA_QPA_DEST_QPN; a.dest_qpn = 1 << 24);
	BADQP(EINVAL, "dest IP 0", a.attr_mask |= PLDMA_QPA_AV;
	      a.dest_mac[0] = 2);
	BADQP(EINVAL, "multicast dest IP", a.attr_mask |= PLDMA_QPA_AV;
	      a.dest_ip = 0xe0000001; a.dest_mac[0] = 2);
	BADQP(EINVAL, "broadcast dest IP", a.attr_mask |= PLDMA_QPA_AV;
	      a.dest_ip = 0xffffffff; a.dest_mac[0] = 2);
	BADQP(EINVAL, "multicast dest MAC", a.attr_mask |= PLDMA_QPA_AV;
	      a.dest_ip = 0x0a000002; a.dest_mac[0] = 1);
	BADQP(EINVAL, "dest MAC 0", a.attr_mask |= PLDMA_QPA_AV;
	      a.dest_ip = 0x0a000002);
	BADQP(EINVAL, "SQ PSN beyond 24 bits", a.attr_mask |= PLDMA_QPA_SQ_PSN;
	      a.sq_psn = 1 << 24);
	BADQP(EINVAL, "RQ PSN beyond 24 bits", a.attr_mask |= PLDMA_QPA_RQ_PSN;
	      a.rq_psn = ~0U);
	BADQP(EINVAL, "path MTU 0", a.attr_mask |= PLDMA_QPA_PATH_MTU);
	BADQP(EINVAL, "path MTU 6", a.attr_mask |= PLDMA_QPA_PATH_MTU;
	      a.path_mtu = 6);
	BADQP(EINVAL, "timeout 32", a.attr_mask |= PLDMA_QPA_TIMEOUT;
	      a.timeout = 32);
	BADQP(EINVAL, "retry count 8", a.attr_mask |= PLDMA_QPA_RETRY_CNT;
	      a.retry_cnt = 8);
	BADQP(EINVAL, "RNR retry 8", a.attr_mask |= PLDMA_QPA_RNR_RETRY;
	      a.rnr_retry = 8);
	BADQP(EINVAL, "min RNR timer 32",
	      a.attr_mask |= PLDMA_QPA_MIN_RNR_TIMER; a.min_rnr_timer = 32);
	/* well-formed, but not a transition IBA allows (the device says so) */
	BADQP(EINVAL, "RESET -> RTS", a.qp_state = PLDMA_QPS_RTS;
	      a.attr_mask = PLDMA_QPA_REQ_RTS & ~(PLDMA_QPA_PD | PLDMA_QPA_SQ);
	      a.sq_psn = 5; a.timeout = 14; a.retry_cnt = 7; a.rnr_retry = 7);
	BADQP(EINVAL, "RESET -> INIT without access flags",
	      a.attr_mask = PLDMA_QPA_STATE);
	BADQP(ENOENT, "made-up QPN", a.qpn = qpn ^ 0x100);
#undef BADQP
	ret = pldma_qp_query(ch, &qa);
	result(!ret && qa.qp_state == PLDMA_QPS_RESET && qa.qpn == qpn,
	       "after all that the QP is still %#x in RESET (ret %d state %u)",
	       qa.qpn, ret, qa.qp_state);
	memset(&qa, 0, sizeof(qa));
	qa.attr_mask = PLDMA_QPA_STATE | PLDMA_QPA_ACCESS_FLAGS;
	qa.qp_state = PLDMA_QPS_INIT;
	qa.access = PLDMA_MR_ACCESS_WRITE | PLDMA_MR_ACCESS_READ;
	ret = pldma_qp_modify(ch, &qa);
	result(!ret && !pldma_qp_query(ch, &qa) &&
	       qa.qp_state == PLDMA_QPS_INIT &&
	       qa.access == (PLDMA_MR_ACCESS_WRITE | PLDMA_MR_ACCESS_READ),
	       "RESET -> INIT (ret %d), query says INIT, access WR", ret);
	result(!strcmp(qp_dbg_state(node, qpn & 0xff, sbuf, sizeof(sbuf)), "INIT"),
	       "debugfs qps: qp %u INIT", qpn & 0xff);

	/* another file, of this process and of another one: no access */
	d.qpn = qpn;
	memset(&qa, 0, sizeof(qa));
	qa.qpn = qpn;
	qa.attr_mask = PLDMA_QPA_STATE;
	qa.qp_state = PLDMA_QPS_ERR;
	result(other && qp_modify_raw(other, &qa) == -ENOENT &&
	       ioctl(pldma_fd(other), PLDMA_IOC_QP_QUERY, &qa) && errno == ENOENT &&
	       ioctl(pldma_fd(other), PLDMA_IOC_QP_DESTROY, &d) && errno == ENOENT,
	       "another file cannot modify, query or destroy the QP: ENOENT");
	/*
	 * one channel less while the child holds one: the peer's server
	 * (windows, QP) shares the device's four
	 */
	pldma_close(other);
	other = NULL;
	if (pipe(p1) || pipe(p2)) {
		result(0, "pipes");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (!pid) {
		/* the other process: its own QP in INIT, reported to the parent */
		struct pldma_chan *cc = open_other(node);
		struct pldma_qp_info cl;
		struct pldma_qp_attr ca = {
			.attr_mask = PLDMA_QPA_STATE | PLDMA_QPA_ACCESS_FLAGS,
			.qp_state = PLDMA_QPS_INIT,
			.access = PLDMA_MR_ACCESS_WRITE,
		};
		uint32_t q = 0;
		char b;

		if (cc && !pldma_qp_create(cc, &cl) && !pldma_qp_modify(cc, &ca))
			q = pldma_qp_num(cc);
		if (write(p1[1], &q, sizeof(q)) != sizeof(q) ||
		    read(p2[0], &b, 1) != 1)
			_exit(2);
		/* untouched by the parent's attempts */
		_exit(q && !pldma_qp_query(cc, &ca) && ca.qp_state == PLDMA_QPS_INIT &&
		      ca.qpn == q ? 0 : 1);
	}
	if (pid < 0 || read(p1[0], &cqpn, sizeof(cqpn)) != sizeof(cqpn))
		cqpn = 0;
	memset(&qa, 0, sizeof(qa));
	qa.qpn = cqpn;
	qa.attr_mask = PLDMA_QPA_STATE;
	qa.qp_state = PLDMA_QPS_RESET;
	d.qpn = cqpn;
	ret = qp_modify_raw(ch, &qa);
	result(cqpn && ret == -ENOENT &&
	       ioctl(pldma_fd(ch), PLDMA_IOC_QP_DESTROY, &d) && errno == ENOENT,
	       "the QP %#x of another process: MODIFY %s, DESTROY refused",
	       cqpn, strerror(-ret));
	st = -1;
	if (pid > 0) {
		(void)!write(p2[1], "x", 1);
		waitpid(pid, &st, 0);
	}
	result(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "... and that process's QP is still INIT (exit %d)",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);

	/* destroy, and close with a QP: the device's QP to RESET */
	ret = pldma_qp_destroy(ch);
	result(!ret && !strcmp(qp_dbg_state(node, qpn & 0xff, sbuf, sizeof(sbuf)),
			       "RESET"),
	       "QP_DESTROY: the device's QP %u in %s", qpn & 0xff,
	       qp_dbg_state(node, qpn & 0xff, sbuf, sizeof(sbuf)));
	memset(&qa, 0, sizeof(qa));
	qa.attr_mask = PLDMA_QPA_STATE;
	qa.qp_state = PLDMA_QPS_RESET;
	qa.qpn = qpn;
	result(qp_modify_raw(ch, &qa) == -ENOENT,
	       "the destroyed QPN: ENOENT");
	qpn = 0;
	other = open_other(node);
	if (other && !pldma_qp_create(other, &l)) {
		memset(&qa, 0, sizeof(qa));
		qa.attr_mask = PLDMA_QPA_STATE | PLDMA_QPA_ACCESS_FLAGS;
		qa.qp_state = PLDMA_QPS_INIT;
		if (!pldma_qp_modify(other, &qa))
			qpn = pldma_qp_num(other);
	}
	pldma_close(other);
	result(qpn && !strcmp(qp_dbg_state(node, qpn & 0xff, sbuf, sizeof(sbuf)),
			      "RESET"),
	       "close of a file with a QP in INIT: the device's QP %u in %s",
	       qpn & 0xff, qpn ? qp_dbg_state(node, qpn & 0xff, sbuf, sizeof(sbuf)) : "-");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "serve"))
		return pp_serve(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 1);
	if (argc >= 9 && !strcmp(argv[1], "pair"))
		return pair(argv[2], atoi(argv[3]), atoi(argv[4]),
			    atoi(argv[5]), argv[6], argv[7], argc - 8,
			    argv + 8) || fails;
	if (argc == 6 && !strcmp(argv[1], "keys"))
		return keys(argv[2], atoi(argv[3]), atoi(argv[4]),
			    atoi(argv[5])) || fails;
	if (argc >= 7 && !strcmp(argv[1], "verbs"))
		return verbs(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5],
			     argc - 6, argv + 6) || fails;
	if (argc == 4 && !strcmp(argv[1], "quit"))
		return quit(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "selftest"))
		return selftest(atoi(argv[2])) || fails;
	fprintf(stderr,
		"usage: pldma-rdma serve PORT [NQUIT] | pair HOST PORT LNODE RNODE LSTRAT RSTRAT SIZE... |\n"
		"       keys HOST PORT LNODE RNODE | verbs HOST PORT LNODE LSTRAT SIZE... |\n"
		"       quit HOST PORT | selftest NODE\n");
	return 2;
}
