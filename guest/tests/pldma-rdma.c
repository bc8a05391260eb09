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
 *   msg listen PORT LNODE SIZE... / msg connect HOST PORT LNODE SIZE...
 *                         SEND/RECV: one process on each guest, a QP with
 *                         send and receive CQs and a receive queue on the
 *                         device of LNODE; for each size a SEND each way
 *                         into three SGEs of untouched memory (responder
 *                         faults on RECV, counted by the device and the
 *                         driver), data and the memory around it verified;
 *                         a SEND before any receive WQE (RNR NAKs, then
 *                         the WQE: it completes), SEND with immediate and
 *                         WRITE with immediate (immediates in the CQE;
 *                         the SEND with immediate solicited, the CQ armed
 *                         for solicited events),
 *                         each way; the receiver arms its CQ and waits for
 *                         the event; no event without arming; then a
 *                         send CQ of 2 overflows (CQ ERROR, QP to ERR,
 *                         the receive WQE flushed), except with
 *                         PLDMA_MSG_PEER=verbs (side B is Linux rxe:
 *                         pldma-verbs-peer msg, tests/rxe/run)
 *   cqhold NODE           CQs, a QP with an RQ and their mapped rings held
 *                         until the device is removed (tests/hotplug/run):
 *                         CQ_WAIT says ENODEV, the mappings are gone
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
#include <setjmp.h>
#include <signal.h>
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
#include "pldma-tap.h"
#include "pldma-util.h"

#define PG		4096UL


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
	ret = pldma_rdma_write(ch, rkey, rva + off, src, len, lstrat,
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
	ret = pldma_rdma_read(ch, rkey, rva, dst, len, lstrat, ltouch,
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
	tap_tag = tagbuf;
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
 * the side channel's requests is ignored there.  The peer may refuse
 * nothing (no NAK but RNR), and every frame it sends has to parse here;
 * timeouts (a slow TCG peer) are counted.
 */
static int verbs(const char *host, int port, unsigned int lnode,
		 const char *lstr, int nsizes, char **sizes)
{
	struct pldma_net_stats n0, n1;
	struct pldma_chan *ch;
	unsigned int ltouch;
	int lstrat, fd, i, lossy;
	static char tagbuf[96];

	snprintf(tagbuf, sizeof(tagbuf), "%s(node %u) -> rxe: ", lstr, lnode);
	tap_tag = tagbuf;
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
	/*
	 * the peer refused nothing we sent (an RNR NAK is not a refusal; on
	 * a link that loses frames, PLDMA_LOSSY_LINK=1 as on
	 * tests/rdma/run-vde's switch, neither is a sequence NAK: it is how
	 * the peer asks again for what was lost)
	 */
	lossy = getenv("PLDMA_LOSSY_LINK") && !strcmp(getenv("PLDMA_LOSSY_LINK"), "1");
	if (lossy)
		note("sequence NAKs on a lossy link: %u", D(PLDMA_NCNT_NAK_RX_SEQ));
	result((lossy || !D(PLDMA_NCNT_NAK_RX_SEQ)) && !D(PLDMA_NCNT_NAK_RX_ACCESS) &&
	       !D(PLDMA_NCNT_NAK_RX_INVALID) && !D(PLDMA_NCNT_NAK_RX_OPERR),
	       "the verbs peer refused no request: NAKs %u sequence, %u access, %u invalid, %u operational",
	       D(PLDMA_NCNT_NAK_RX_SEQ), D(PLDMA_NCNT_NAK_RX_ACCESS),
	       D(PLDMA_NCNT_NAK_RX_INVALID), D(PLDMA_NCNT_NAK_RX_OPERR));
	/*
	 * an ACK timeout is the peer being slow (a TCG guest on a loaded
	 * host), not a frame it refused: counted, not judged
	 */
	note("ACK timeouts: %u", D(PLDMA_NCNT_TIMEOUTS));
	/* dropped before a QP saw it: malformed, bad ICRC, not ours */
	result(D(PLDMA_NCNT_RX_DROPPED) == D(PLDMA_NCNT_QP_DROPPED),
	       "every frame of the verbs peer parsed: %u dropped before a QP",
	       D(PLDMA_NCNT_RX_DROPPED) - D(PLDMA_NCNT_QP_DROPPED));
	/*
	 * dropped by the QP as not about the message in flight: late
	 * responses to READ requests we sent again after a local fault (the
	 * peer serves duplicates whole) or after a timeout; none when
	 * nothing faults and nothing times out
	 */
	if (lstrat == PLDMA_STRAT_PREFAULT && !D(PLDMA_NCNT_TIMEOUTS))
		result(!D(PLDMA_NCNT_QP_DROPPED),
		       "no frame of the verbs peer dropped by the QP: %u",
		       D(PLDMA_NCNT_QP_DROPPED));
	else
		note("frames the QP dropped as not about the message in flight (late responses to READ requests we sent again): %u",
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
	ret = pldma_rdma_write(ch, rkey, rva, src, 4096,
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
	ret = pldma_rdma_write(ch, rkey, rva, src, len,
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
	ret = pldma_rdma_read(ch, rkey, rva, dst, len,
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

/*
 * A remote access NAK is fatal to the requester's QP (IBA; the device
 * moves it to ERR as Linux rxe does): the next operation goes on a new
 * QP pair.  A failure shows in that operation's result.
 */
static void requp(int fd, struct pldma_chan *ch, unsigned int rnode)
{
	if (pp_qp_connect(fd, ch, rnode))
		printf("# a new QP pair after the NAK failed\n");
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
	tap_tag = tagbuf;
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
	ret = pldma_rdma_write(ch, rkey, rva, src, len, PLDMA_STRAT_PREFAULT,
			       0, &res);
	result(!ret && res.status == PLDMA_ST_SUCCESS, "a valid key works (status %u)",
	       res.status);
	ret = pldma_rdma_write(ch, rkey, rva + PG, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "beyond the window: REMOTE_ACCESS (status %u)", res.status);
	requp(fd, ch, rnode);
	ret = pldma_rdma_write(ch, ro, rova, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS &&
	       pp_ok(pp_rpc(fd, "CHECK %u 0 %zu 9", ro, len)),
	       "WRITE to a read-only window: REMOTE_ACCESS (status %u), its memory untouched",
	       res.status);
	requp(fd, ch, rnode);
	result(pp_ok(pp_rpc(fd, "DEREG %u", rkey)), "DEREG_MR");
	ret = pldma_rdma_write(ch, rkey, rva, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "deregistered key: REMOTE_ACCESS (status %u)", res.status);
	requp(fd, ch, rnode);
	ret = pldma_rdma_read(ch, ro, rova, src, len,
			      PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_SUCCESS,
	       "the other key still works (status %u)", res.status);
	/* the owner's file closed (as at exit): every key revoked at once */
	result(pp_ok(pp_rpc(fd, "CLOSE %u", rnode)), "responder closes its file");
	ret = pldma_rdma_read(ch, ro, rova, src, len,
			      PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "key of a released file: REMOTE_ACCESS (status %u)", res.status);
	requp(fd, ch, rnode);
	ret = pldma_rdma_write(ch, 0x12345600 | 0x3f, rva, src, len,
			       PLDMA_STRAT_PREFAULT, 0, &res);
	result(!ret && res.status == PLDMA_ST_REMOTE_ACCESS,
	       "made-up key: REMOTE_ACCESS (status %u)", res.status);
	requp(fd, ch, rnode);
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
static void cq_selftest(struct pldma_chan *ch, unsigned int node);
static int cq_dbg_has(unsigned int node, const char *want);

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
	tap_tag = tagbuf;
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
	BAD(EINVAL, "unknown access bit", r.access = PLDMA_MR_ACCESS_FLUSH << 1);
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
	/* remote atomics alone are a right (CAP.ATOMIC) */
	ret = pldma_reg_mr(ch, buf, PG, PLDMA_MR_ACCESS_ATOMIC, -1, 0, &rk);
	result(!ret == !!(in->cap & PLDMA_CAP_ATOMIC),
	       "REG_MR with the atomic right alone: %s (CAP.ATOMIC %d)",
	       strerror(-ret), !!(in->cap & PLDMA_CAP_ATOMIC));
	if (!ret)
		pldma_dereg_mr(ch, rk);

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
	cq_selftest(ch, node);
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
	c.flags = 0x80;
	other = open_other(node);
	result(other && ioctl(pldma_fd(other), PLDMA_IOC_QP_CREATE, &c) &&
	       errno == EINVAL, "QP_CREATE unknown flag: EINVAL");

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
	BADQP(EINVAL, "unknown access bit", a.access = PLDMA_MR_ACCESS_FLUSH << 1);
	BADQP(EINVAL, "reserved field", a.rsvd[1] = 1);
	BADQP(EINVAL, "a Q_Key on an RC QP", a.attr_mask |= PLDMA_QPA_QKEY);
	BADQP(EINVAL, "reserved after max_rd_atomic", a.rsvd1[2] = 1);
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
	BADQP(EINVAL, "max_rd_atomic beyond PLDMA_QP_MAX_RD_ATOMIC",
	      a.attr_mask |= PLDMA_QPA_MAX_QP_RD_ATOMIC;
	      a.max_rd_atomic = PLDMA_QP_MAX_RD_ATOMIC + 1);
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

/* ------------------------------------------------------------------ */
/* SEND/RECV between two guests: msg listen | msg connect             */
/* ------------------------------------------------------------------ */

#define MSG_MAX		(16UL << 20)
#define MSG_CQE		64
#define MSG_RQE		16
#define MSG_WAIT_MS	60000

struct msg {
	int fd;			/* the side channel */
	FILE *in;
	struct pldma_chan *ch;
	struct pldma_cq *scq, *rcq;
	struct pldma_qp_info local, remote;
	uint32_t peer_rkey;	/* the peer's window for WRITE with immediate */
	uint64_t peer_va;
	uint8_t *win;		/* ours */
	uint32_t rkey;
	int report;		/* report mode: driver-served RECV faults */
};

static int msg_line(struct msg *m, char *buf, size_t len)
{
	if (!fgets(buf, len, m->in))
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int msg_expect(struct msg *m, const char *what)
{
	char buf[128];

	if (msg_line(m, buf, sizeof(buf)) || strncmp(buf, what, strlen(what))) {
		note("side channel: expected %s, got %s\n", what, buf);
		return -1;
	}
	return 0;
}

/* The device's network counter @i (wrapping 32 bits) */
static uint32_t msg_ncnt(struct msg *m, unsigned int i)
{
	struct pldma_net_stats st;

	return pldma_net_stats(m->ch, &st) ? 0 : st.cnt[i];
}

/*
 * Poll @cq for one completion, sleeping on CQ events: each arm is waited
 * for until its event comes, so no event is left over for the next wait
 */
static int msg_poll_one(struct pldma_cq *cq, struct pldma_wc *wc, int *events)
{
	int n, ret;

	for (;;) {
		n = pldma_poll_cq(cq, 1, wc);
		if (n)
			return n;
		pldma_req_notify_cq(cq, 0);
		/* a CQE written before the arm fires the event at once */
		ret = pldma_cq_wait_event(cq, MSG_WAIT_MS);
		if (ret)
			return ret;
		(*events)++;
	}
}

/*
 * Three receive buffers for @len bytes (a quarter, a half, the rest), one
 * untouched page between them, in fresh anonymous memory: every page the
 * message lands on is a responder fault.  The gaps must stay 0.
 */
struct msg_rbuf {
	uint8_t *base;
	size_t map;
	struct pldma_sge sg[3];
	unsigned int n;
};

static int msg_rbuf_alloc(struct msg_rbuf *r, size_t len)
{
	size_t l0 = len / 4, l1 = len / 2, l2 = len - l0 - l1, off = 0;
	size_t lens[3] = { l0, l1, l2 };
	unsigned int i;

	r->map = len + 4 * PG + 3 * PG;
	r->base = mmap(NULL, r->map, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->base == MAP_FAILED)
		return -errno;
	r->n = 0;
	for (i = 0; i < 3; i++) {
		if (!lens[i])
			continue;
		/* odd offsets: SGEs need not be aligned */
		r->sg[r->n].addr = r->base + off + (i * 8 + 8);
		r->sg[r->n].len = lens[i];
		r->n++;
		off += (lens[i] + i * 8 + 8 + PG - 1) / PG * PG + PG;
	}
	return 0;
}

/* The message in the SGEs is pu_byte(seed, .); the rest of the map is 0 */
static long msg_rbuf_check(const struct msg_rbuf *r, size_t len, uint32_t seed)
{
	size_t i, k = 0, j;
	const uint8_t *p;

	for (i = 0; i < r->map; i++) {
		uint8_t want = 0;

		p = r->base + i;
		for (j = 0; j < r->n; j++) {
			const uint8_t *a = r->sg[j].addr;
			size_t pre = 0;

			if (p >= a && p < a + r->sg[j].len) {
				unsigned int q;

				for (q = 0; q < j; q++)
					pre += r->sg[q].len;
				k = pre + (p - a);
				if (k < len)
					want = pu_byte(seed, k);
				break;
			}
		}
		if (*p != want)
			return i;
	}
	return -1;
}

/* Receive one message of @len bytes (@opcode the peer sends) */
static void msg_recv(struct msg *m, const char *what, size_t len, uint32_t seed,
		     int late, uint32_t imm)
{
	/* a SEND with immediate comes solicited: the CQ is armed for those */
	int sol = !!imm;
	uint32_t faults0 = msg_ncnt(m, PLDMA_NCNT_RX_FAULTS);
	uint32_t empty0 = msg_ncnt(m, PLDMA_NCNT_RQ_EMPTY), empty;
	uint32_t ev0;
	struct pldma_stats st0 = { 0 }, st1 = { 0 };
	struct msg_rbuf r;
	struct pldma_wc wc = { 0 };
	int events = 0, n, ret;
	long bad;

	pldma_get_stats(m->ch, &st0);
	if (msg_rbuf_alloc(&r, len)) {
		result(0, "%s %zu bytes: receive buffers", what, len);
		return;
	}
	if (!late) {
		ret = pldma_post_recv(m->ch, 0x5000 + seed, r.sg, r.n);
		result(!ret, "%s %zu bytes: receive WQE of %u SGEs posted (%d)",
		       what, len, r.n, ret);
	}
	pldma_req_notify_cq(m->rcq, sol);
	ev0 = pldma_cq_events(m->rcq);
	dprintf(m->fd, "READY\n");
	if (late) {
		/* the SEND comes first: RNR NAKs until the WQE is there */
		usleep(300000);
		empty = msg_ncnt(m, PLDMA_NCNT_RQ_EMPTY) - empty0;
		n = pldma_poll_cq(m->rcq, 1, &wc);
		result(empty > 0 && !n,
		       "%s %zu bytes before a receive WQE: %u RNR NAKs (rq_empty), no CQE",
		       what, len, empty);
		ret = pldma_post_recv(m->ch, 0x5000 + seed, r.sg, r.n);
		result(!ret, "%s: receive WQE posted now (%d)", what, ret);
	}
	/* the armed CQ's event, then the CQE */
	ret = pldma_cq_wait_event(m->rcq, MSG_WAIT_MS);
	result(!ret && pldma_cq_events(m->rcq) == ev0 + 1,
	       "%s %zu bytes: CQ event%s (ret %d, events %u -> %u)", what, len,
	       sol ? ", armed for solicited ones" : "", ret, ev0,
	       pldma_cq_events(m->rcq));
	n = msg_poll_one(m->rcq, &wc, &events);
	bad = n == 1 && !wc.status ? msg_rbuf_check(&r, len, seed) : -2;
	result(n == 1 && wc.status == PLDMA_WC_ST_SUCCESS &&
	       wc.opcode == PLDMA_WC_RECV && wc.byte_len == len &&
	       wc.wr_id == 0x5000 + seed && wc.qpn == m->local.qpn &&
	       wc.src_qp == m->remote.qpn &&
	       !!(wc.flags & PLDMA_CQE_F_IMM) == !!imm &&
	       !!(wc.flags & PLDMA_CQE_F_SOLICITED) == sol &&
	       (!imm || wc.imm == imm) && bad == -1,
	       "%s %zu bytes received: status %u opcode %u byte_len %u wr_id %#llx qpn %#x/%#x imm %s%#x%s, data verified in %u SGEs (first bad byte %ld)",
	       what, len, wc.status, wc.opcode, wc.byte_len,
	       (unsigned long long)wc.wr_id, wc.qpn, wc.src_qp,
	       wc.flags & PLDMA_CQE_F_IMM ? "" : "none ", wc.imm,
	       wc.flags & PLDMA_CQE_F_SOLICITED ? " solicited" : "", r.n, bad);
	pldma_get_stats(m->ch, &st1);
	result(msg_ncnt(m, PLDMA_NCNT_RX_FAULTS) != faults0 &&
	       (!m->report || st1.remote_faults > st0.remote_faults),
	       "%s %zu bytes: receive buffers faulted (device responder faults +%u, driver RECV faults +%llu)",
	       what, len, msg_ncnt(m, PLDMA_NCNT_RX_FAULTS) - faults0,
	       (unsigned long long)(st1.remote_faults - st0.remote_faults));
	/* consumed, not armed: no event */
	ret = pldma_cq_wait_event(m->rcq, 0);
	result(ret == -ETIMEDOUT, "%s: no CQ event without arming (%d)", what, ret);
	munmap(r.base, r.map);
	dprintf(m->fd, "DONE\n");
}

/* Send one message of @len bytes from a memfd (local faults too) */
static void msg_send(struct msg *m, const char *what, uint8_t opcode,
		     size_t len, uint32_t seed, uint32_t imm)
{
	struct pldma_send_wr wr = {
		.wr_id = 0x7000 + seed,
		.opcode = opcode,
		.flags = PLDMA_DF_SIGNALED |
			 (opcode == PLDMA_OP_SEND_IMM ? PLDMA_DF_SOLICITED : 0),
		.len = len,
		.imm = imm,
	};
	struct pldma_wc wc = { 0 };
	uint64_t t0;
	uint8_t *src;
	int events = 0, n, ret;

	src = pu_src_alloc(len, seed);
	if (!src || msg_expect(m, "READY")) {
		result(0, "%s %zu bytes: setup", what, len);
		pu_free(src, len);
		return;
	}
	wr.addr = src;
	if (opcode == PLDMA_OP_RDMA_WRITE_IMM) {
		wr.rkey = m->peer_rkey;
		wr.remote_va = m->peer_va;
	}
	t0 = pldma_now_ns();
	ret = pldma_post_send(m->ch, &wr);
	n = ret ? 0 : msg_poll_one(m->scq, &wc, &events);
	result(!ret && n == 1 && wc.status == PLDMA_WC_ST_SUCCESS &&
	       wc.opcode == (opcode == PLDMA_OP_RDMA_WRITE_IMM ?
			     PLDMA_WC_RDMA_WRITE : PLDMA_WC_SEND) &&
	       wc.wr_id == wr.wr_id && wc.qpn == m->local.qpn,
	       "%s %zu bytes sent: post %d, CQE status %u (vendor %u) opcode %u wr_id %#llx, %.1f ms, %d CQ events",
	       what, len, ret, wc.status, wc.vendor_err, wc.opcode,
	       (unsigned long long)wc.wr_id, (pldma_now_ns() - t0) / 1e6,
	       events);
	pu_free(src, len);
	msg_expect(m, "DONE");
}

/* WRITE with immediate into our window: a WQE without SGEs takes the IMM */
static void msg_recv_wimm(struct msg *m, size_t len, uint32_t seed,
			  uint32_t imm)
{
	struct pldma_wc wc = { 0 };
	int events = 0, n, ret;
	long bad;

	pu_drop(m->win, MSG_MAX);
	ret = pldma_post_recv(m->ch, 0x6000 + seed, NULL, 0);
	pldma_req_notify_cq(m->rcq, 0);
	dprintf(m->fd, "READY\n");
	n = ret ? 0 : msg_poll_one(m->rcq, &wc, &events);
	bad = n == 1 && !wc.status ? pu_verify(m->win, len, seed) : -2;
	result(!ret && n == 1 && wc.status == PLDMA_WC_ST_SUCCESS &&
	       wc.opcode == PLDMA_WC_RECV_RDMA_WITH_IMM &&
	       wc.flags & PLDMA_CQE_F_IMM && wc.imm == imm &&
	       wc.byte_len == len && wc.wr_id == 0x6000 + seed && bad == -1,
	       "WRITE_IMM %zu bytes: status %u opcode %u imm %#x (want %#x) byte_len %u wr_id %#llx, %d CQ events, window verified (first bad byte %ld)",
	       len, wc.status, wc.opcode, wc.imm, imm, wc.byte_len,
	       (unsigned long long)wc.wr_id, events, bad);
	dprintf(m->fd, "DONE\n");
}

static int msg_setup(struct msg *m, unsigned int lnode, unsigned int scqe)
{
	char buf[160], mac[32];
	struct pldma_qp_caps caps = { .rq_entries = MSG_RQE };
	struct pldma_strategy s = {
		.strategy = PLDMA_STRAT_TOUCH,
		.touch_ahead = 16,
	};
	unsigned int b[6];
	int ret;

	m->ch = open_other(lnode);
	if (!m->ch || !pldma_info(m->ch)->num_cqs) {
		result(0, "a channel with CQs on node %u (num_cqs %u)", lnode,
		       m->ch ? pldma_info(m->ch)->num_cqs : 0);
		return -1;
	}
	m->report = pldma_fault_mode(m->ch) == PLDMA_MODE_REPORT;
	/* RECV faults: touch-ahead windows of 16 pages */
	if (m->report)
		ioctl(pldma_fd(m->ch), PLDMA_IOC_SET_STRATEGY, &s);
	m->scq = pldma_cq_create(m->ch, scqe);
	m->rcq = pldma_cq_create(m->ch, MSG_CQE);
	caps.send_cq = m->scq;
	caps.recv_cq = m->rcq;
	ret = m->scq && m->rcq ? pldma_qp_create_caps(m->ch, &caps, &m->local) :
				 -errno;
	result(!ret, "node %u: send CQ %d (%u CQEs), receive CQ %d, QP %#x with %u receive WQEs (%d)",
	       lnode, m->scq ? (int)pldma_cq_index(m->scq) : -1, scqe,
	       m->rcq ? (int)pldma_cq_index(m->rcq) : -1, m->local.qpn,
	       MSG_RQE, ret);
	if (ret)
		return -1;
	m->win = pu_dst_alloc(MSG_MAX, 0);
	ret = m->win ? pldma_reg_mr(m->ch, m->win, MSG_MAX,
				    PLDMA_MR_ACCESS_WRITE, -1, 0, &m->rkey) :
		       -ENOMEM;
	if (ret) {
		result(0, "window for WRITE with immediate (%d)", ret);
		return -1;
	}
	dprintf(m->fd, "QP %u %u %u %02x:%02x:%02x:%02x:%02x:%02x %u %u %llu\n",
		m->local.qpn, m->local.psn, m->local.ip, m->local.mac[0],
		m->local.mac[1], m->local.mac[2], m->local.mac[3],
		m->local.mac[4], m->local.mac[5], m->local.mtu, m->rkey,
		(unsigned long long)(uintptr_t)m->win);
	if (msg_line(m, buf, sizeof(buf)) ||
	    sscanf(buf, "QP %u %u %u %31s %u %u %llu", &m->remote.qpn,
		   &m->remote.psn, &m->remote.ip, mac, &m->remote.mtu,
		   &m->peer_rkey, (unsigned long long *)&m->peer_va) != 7 ||
	    sscanf(mac, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4],
		   &b[5]) != 6) {
		result(0, "side channel: the peer's QP (%s)", buf);
		return -1;
	}
	for (ret = 0; ret < 6; ret++)
		m->remote.mac[ret] = b[ret];
	ret = pldma_qp_connect(m->ch, &m->local, &m->remote);
	result(!ret, "QP %#x connected to the peer's %#x (%d)", m->local.qpn,
	       m->remote.qpn, ret);
	return ret;
}

/* The device's state of our CQ in debugfs is @state */
static int msg_cq_dbg(struct msg *m, struct pldma_cq *cq, const char *state)
{
	char want[32];

	snprintf(want, sizeof(want), "  cq %u %s", pldma_cq_index(cq), state);
	return cq_dbg_has(pldma_info(m->ch)->node_id, want);
}

/*
 * A send CQ of 2 CQEs and 3 signaled SENDs that nobody polls: the third
 * CQE finds no room, the CQ goes to ERROR (its waiters get EIO) and takes
 * the QP to ERR, which flushes the posted receive WQE (WR_FLUSH_ERR on the
 * receive CQ, whose waiter learns of the QP's error).  Side A overflows,
 * side B receives the three messages.
 */
static void msg_overflow(struct msg *m, int listen_side)
{
	struct pldma_send_wr wr = {
		.opcode = PLDMA_OP_SEND,
		.flags = PLDMA_DF_SIGNALED,
		.len = 256,
	};
	struct pldma_sge sg;
	struct pldma_wc wc[4];
	struct pldma_qp_attr qa;
	int events = 0, i, n, ret, ok;
	char buf[256];

	memset(buf, 0x5a, sizeof(buf));
	sg.addr = buf;
	sg.len = sizeof(buf);
	if (!listen_side) {
		for (i = 0, ret = 0; i < 3 && !ret; i++)
			ret = pldma_post_recv(m->ch, 0x8000 + i, &sg, 1);
		dprintf(m->fd, "READY\n");
		for (i = 0, ok = !ret; i < 3 && ok; i++) {
			memset(buf, 0, sizeof(buf));
			n = msg_poll_one(m->rcq, &wc[0], &events);
			ok = n == 1 && wc[0].status == PLDMA_WC_ST_SUCCESS &&
			     wc[0].wr_id == 0x8000u + i && wc[0].byte_len == 256;
		}
		result(ok, "CQ overflow, the receiver: the 3 SENDs received (%d)",
		       i);
		msg_expect(m, "DONE");
		return;
	}
	ret = pldma_post_recv(m->ch, 0x9000, &sg, 1);
	pldma_req_notify_cq(m->rcq, 0);
	if (ret || msg_expect(m, "READY")) {
		result(0, "CQ overflow: setup (%d)", ret);
		return;
	}
	wr.addr = buf;
	for (i = 0; i < 3 && !ret; i++) {
		wr.wr_id = 0x7100 + i;
		ret = pldma_post_send(m->ch, &wr);
	}
	/* not armed: the wait ends with the CQ's error */
	ret = ret ? ret : pldma_cq_wait_event(m->scq, MSG_WAIT_MS);
	result(ret == -EIO && msg_cq_dbg(m, m->scq, "ERROR"),
	       "3 signaled SENDs on a send CQ of 2, not polled: the CQ in ERROR, its wait says %s",
	       strerror(-ret));
	n = pldma_poll_cq(m->scq, 4, wc);
	result(n == 2 && !wc[0].status && !wc[1].status &&
	       wc[0].wr_id == 0x7100 && wc[1].wr_id == 0x7101,
	       "... its ring holds the first 2 CQEs (%d)", n);
	ret = pldma_cq_wait_event(m->rcq, MSG_WAIT_MS);
	n = ret ? 0 : pldma_poll_cq(m->rcq, 4, wc);
	result(!ret && pldma_cq_qp_errors(m->rcq) >= 1 && n == 1 &&
	       wc[0].status == PLDMA_WC_ST_WR_FLUSH_ERR && wc[0].wr_id == 0x9000,
	       "the QP went to ERR (qp_errors %u): the posted receive WQE flushed (ret %d, %d CQEs, status %u)",
	       pldma_cq_qp_errors(m->rcq), ret, n, n ? wc[0].status : 0);
	ret = pldma_qp_query(m->ch, &qa);
	result(!ret && qa.qp_state == PLDMA_QPS_ERR, "QP_QUERY: state %u (ERR)",
	       qa.qp_state);
	result(pldma_cq_destroy(m->scq) == -EBUSY,
	       "the CQ in ERROR stays while its QP uses it: EBUSY");
	m->scq = NULL;
	dprintf(m->fd, "DONE\n");
}

/*
 * One side of a SEND/RECV conversation (listen: side A, connect: B):
 * for each size a SEND A->B then B->A, received in three SGEs of untouched
 * memory; then a SEND before any receive WQE (RNR, then posted), SEND with
 * immediate and WRITE with immediate, each way.
 */
static int msg(int listen_side, const char *host, int port, unsigned int lnode,
	       int nsizes, char **sizes)
{
	struct msg m = { .fd = -1 };
	uint32_t imm;
	size_t len;
	int i, dir;

	tap_tag = listen_side ? "msg A: " : "msg B: ";
	if (listen_side) {
		struct sockaddr_in a = {
			.sin_family = AF_INET,
			.sin_port = htons(port),
		};
		int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;

		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) ||
		    listen(ls, 1)) {
			result(0, "listen on %d: %s", port, strerror(errno));
			return 1;
		}
		m.fd = accept(ls, NULL, NULL);
		close(ls);
	} else {
		m.fd = pp_connect(host, port);
	}
	if (m.fd < 0) {
		result(0, "side channel");
		return 1;
	}
	m.in = fdopen(dup(m.fd), "r");
	if (!m.in || msg_setup(&m, lnode, MSG_CQE))
		goto out;
	for (i = 0; i < nsizes; i++) {
		len = pu_parse_size(sizes[i]);
		if (!len || len > MSG_MAX) {
			result(0, "size %s", sizes[i]);
			continue;
		}
		for (dir = 0; dir < 2; dir++) {
			if (dir == !listen_side)
				msg_send(&m, "SEND", PLDMA_OP_SEND, len, i + 1, 0);
			else
				msg_recv(&m, "RECV", len, i + 1, 0, 0);
		}
	}
	for (dir = 0; dir < 2; dir++) {
		imm = 0xc0de0000 | dir;
		if (dir == !listen_side) {
			msg_send(&m, "SEND before RECV", PLDMA_OP_SEND, 65536,
				 100 + dir, 0);
			msg_send(&m, "SEND_IMM", PLDMA_OP_SEND_IMM, 4096,
				 110 + dir, imm);
			msg_send(&m, "WRITE_IMM", PLDMA_OP_RDMA_WRITE_IMM,
				 1 << 20, 120 + dir, imm ^ 0xffff);
		} else {
			msg_recv(&m, "SEND before RECV", 65536, 100 + dir, 1, 0);
			msg_recv(&m, "SEND_IMM", 4096, 110 + dir, 0, imm);
			msg_recv_wimm(&m, 1 << 20, 120 + dir, imm ^ 0xffff);
		}
	}
	/*
	 * a new connection whose send CQ overflows: the PLDMA's own CQ, not
	 * asked of a verbs peer (PLDMA_MSG_PEER=verbs: pldma-verbs-peer msg
	 * on Linux rxe, tests/rxe/run)
	 */
	if (getenv("PLDMA_MSG_PEER") && !strcmp(getenv("PLDMA_MSG_PEER"), "verbs"))
		goto bye;
	pldma_close(m.ch);
	pu_free(m.win, MSG_MAX);
	m.win = NULL;
	if (!msg_setup(&m, lnode, listen_side ? 2 : MSG_CQE))
		msg_overflow(&m, listen_side);
bye:
	dprintf(m.fd, "BYE\n");
	msg_expect(&m, "BYE");
out:
	if (m.in)
		fclose(m.in);
	close(m.fd);
	pldma_close(m.ch);
	pu_free(m.win, MSG_MAX);
	return fails;
}

/* Lines of the device's debugfs cqs (of @node) that start with @want */
static int cq_dbg_has(unsigned int node, const char *want)
{
	char path[96], line[256];
	unsigned int n;
	int i, found = 0;
	FILE *f;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/pldma/pldma%d/net", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "node: %u", &n) != 1)
			n = 0;
		fclose(f);
		if (n != node)
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/debug/pldma/pldma%d/cqs", i);
		f = fopen(path, "r");
		if (!f)
			return 0;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, want, strlen(want)))
				found = 1;
		fclose(f);
	}
	return found;
}

static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* CQ ioctls and ring mappings of a hostile user */
static void cq_selftest(struct pldma_chan *ch, unsigned int node)
{
	const struct pldma_info *in = pldma_info(ch);
	struct pldma_cq *cqs[PLDMA_MAX_FILE_CQS] = { 0 };
	struct pldma_cq_destroy d = { 0 };
	struct pldma_qp_create qc;
	struct pldma_cq_create c;
	struct pldma_cq_wait w;
	struct pldma_qp_attr qa;
	struct pldma_chan *other;
	int fd = pldma_fd(ch), ret, i, n;
	char want[32];
	uint8_t *p;

	result(in->num_cqs > 0 && in->cap & PLDMA_CAP_CQ, "INFO: %u CQs, CAP.CQ",
	       in->num_cqs);
	if (!in->num_cqs)
		return;
	if (pldma_qp_num(ch))
		pldma_qp_destroy(ch);
#define BADCQ(err, desc, ...) do {					\
		memset(&c, 0, sizeof(c));				\
		c.entries = 64;						\
		__VA_ARGS__;						\
		ret = ioc(fd, PLDMA_IOC_CQ_CREATE, &c);			\
		result(ret == -(err), "CQ_CREATE %s: %s (got %s)", desc,	\
		       strerror(err), strerror(-ret));			\
		if (!ret) {						\
			d.cq = c.cq;					\
			ioc(fd, PLDMA_IOC_CQ_DESTROY, &d);		\
		}							\
	} while (0)
	BADCQ(EINVAL, "0 entries", c.entries = 0);
	BADCQ(EINVAL, "1 entry", c.entries = 1);
	BADCQ(EINVAL, "3 entries", c.entries = 3);
	BADCQ(EINVAL, "2^17 entries", c.entries = 1 << 17);
	BADCQ(EINVAL, "reserved field", c.rsvd[2] = 1);
	BADCQ(EINVAL, "an index given", c.cq = 1);
#undef BADCQ

	/* a file holds PLDMA_MAX_FILE_CQS, the device num_cqs */
	for (n = 0; n < PLDMA_MAX_FILE_CQS; n++) {
		cqs[n] = pldma_cq_create(ch, 2);
		if (!cqs[n])
			break;
	}
	memset(&c, 0, sizeof(c));
	c.entries = 2;
	ret = ioc(fd, PLDMA_IOC_CQ_CREATE, &c);
	result((n == PLDMA_MAX_FILE_CQS && ret == -EDQUOT) ||
	       (in->num_cqs <= PLDMA_MAX_FILE_CQS && n < PLDMA_MAX_FILE_CQS &&
		ret == -ENOSPC),
	       "%d CQs on one file, then %s", n, strerror(-ret));
	for (i = 0; i < n; i++)
		result(!pldma_cq_destroy(cqs[i]), "destroy CQ %d of %d", i, n);

	memset(&c, 0, sizeof(c));
	c.entries = 128;
	ret = ioc(fd, PLDMA_IOC_CQ_CREATE, &c);
	result(!ret && c.cq < in->num_cqs && c.mmap_size >= 128 * PLDMA_CQE_SIZE &&
	       c.mmap_offset && !(c.mmap_offset & (PG - 1)),
	       "CQ_CREATE 128: cq %u, map %u bytes at %#llx (%d)", c.cq,
	       c.mmap_size, (unsigned long long)c.mmap_offset, ret);
	if (ret)
		return;
	snprintf(want, sizeof(want), "  cq %u ACTIVE", c.cq);
	result(cq_dbg_has(node, want), "debugfs cqs: %s", want + 2);
	p = mmap(NULL, c.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 c.mmap_offset);
	result(p == MAP_FAILED && errno == EACCES, "CQ ring mapped writable: EACCES");
	p = mmap(NULL, c.mmap_size, PROT_READ, MAP_PRIVATE, fd, c.mmap_offset);
	result(p == MAP_FAILED && errno == EINVAL, "CQ ring mapped private: EINVAL");
	p = mmap(NULL, c.mmap_size + PG, PROT_READ, MAP_SHARED, fd, c.mmap_offset);
	result(p == MAP_FAILED && errno == EINVAL, "CQ ring mapped too long: EINVAL");
	p = mmap(NULL, c.mmap_size, PROT_READ, MAP_SHARED, fd, c.mmap_offset + PG);
	result(p == MAP_FAILED && errno == EINVAL, "a CQ ring's offset + 4096: EINVAL");
	p = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 3ULL << 32);
	result(p == MAP_FAILED && errno == EINVAL, "a made-up ring offset: EINVAL");
	p = mmap(NULL, c.mmap_size, PROT_READ, MAP_SHARED, fd, c.mmap_offset);
	result(p != MAP_FAILED, "CQ ring mapped read-only");
	if (p != MAP_FAILED) {
		for (i = 0; i < (int)c.mmap_size && !p[i]; i++)
			;
		result(i == (int)c.mmap_size && mprotect(p, c.mmap_size, PROT_WRITE) &&
		       errno == EACCES,
		       "the new ring is all 0 (no owner bit), mprotect(PROT_WRITE) EACCES");
	}
	d.cq = c.cq;
	result(ioc(fd, PLDMA_IOC_CQ_DESTROY, &d) == -EBUSY,
	       "CQ_DESTROY while mapped: EBUSY");

	memset(&w, 0, sizeof(w));
	w.cq = c.cq;
	w.timeout_ms = 20;
	ret = ioc(fd, PLDMA_IOC_CQ_WAIT, &w);
	result(ret == -ETIMEDOUT, "CQ_WAIT, never armed: %s", strerror(-ret));
	w.timeout_ms = 60001;
	result(ioc(fd, PLDMA_IOC_CQ_WAIT, &w) == -EINVAL, "CQ_WAIT 60001 ms: EINVAL");
	w.timeout_ms = 0;
	w.rsvd[1] = 1;
	result(ioc(fd, PLDMA_IOC_CQ_WAIT, &w) == -EINVAL, "CQ_WAIT reserved: EINVAL");
	w.rsvd[1] = 0;
	w.cq = 999;
	result(ioc(fd, PLDMA_IOC_CQ_WAIT, &w) == -ENOENT, "CQ_WAIT cq 999: ENOENT");

	/* another file: none of it */
	other = open_other(node);
	w.cq = c.cq;
	memset(&qc, 0, sizeof(qc));
	qc.flags = PLDMA_QPC_RECV_CQ;
	qc.recv_cq = c.cq;
	result(other && ioc(pldma_fd(other), PLDMA_IOC_CQ_DESTROY, &d) == -ENOENT &&
	       ioc(pldma_fd(other), PLDMA_IOC_CQ_WAIT, &w) == -ENOENT &&
	       ioc(pldma_fd(other), PLDMA_IOC_QP_CREATE, &qc) == -ENOENT &&
	       mmap(NULL, c.mmap_size, PROT_READ, MAP_SHARED, pldma_fd(other),
		    c.mmap_offset) == MAP_FAILED,
	       "another file cannot destroy, wait for, use or map the CQ");
	pldma_close(other);

#define BADQPC(err, desc, ...) do {					\
		memset(&qc, 0, sizeof(qc));				\
		__VA_ARGS__;						\
		ret = ioc(fd, PLDMA_IOC_QP_CREATE, &qc);		\
		result(ret == -(err), "QP_CREATE %s: %s (got %s)", desc,	\
		       strerror(err), strerror(-ret));			\
		if (!ret) {						\
			struct pldma_qp_destroy qd = { .qpn = qc.qpn };	\
			ioc(fd, PLDMA_IOC_QP_DESTROY, &qd);		\
		}							\
	} while (0)
	BADQPC(EINVAL, "1 receive WQE", qc.rq_entries = 1);
	BADQPC(EINVAL, "3 receive WQEs", qc.rq_entries = 3);
	BADQPC(EINVAL, "8192 receive WQEs", qc.rq_entries = 8192);
	BADQPC(EINVAL, "send CQ without its flag", qc.send_cq = c.cq + 1);
	BADQPC(ENOENT, "send CQ 999", qc.flags = PLDMA_QPC_SEND_CQ;
	       qc.send_cq = 999);
	BADQPC(EINVAL, "an RQ offset given", qc.rq_mmap_offset = 1);
#undef BADQPC

	/* a QP with an RQ and the CQ on both sides, to INIT */
	memset(&qc, 0, sizeof(qc));
	qc.flags = PLDMA_QPC_SEND_CQ | PLDMA_QPC_RECV_CQ;
	qc.send_cq = c.cq;
	qc.recv_cq = c.cq;
	qc.rq_entries = 8;
	ret = ioc(fd, PLDMA_IOC_QP_CREATE, &qc);
	result(!ret && qc.rq_mmap_size >= 8 * PLDMA_RWQE_SIZE &&
	       qc.rq_mmap_offset, "QP_CREATE with 8 receive WQEs and CQ %u: RQ map %u bytes at %#llx (%d)",
	       c.cq, qc.rq_mmap_size, (unsigned long long)qc.rq_mmap_offset, ret);
	if (!ret) {
		struct pldma_qp_destroy qd = { .qpn = qc.qpn };
		uint8_t *rq;

		memset(&qa, 0, sizeof(qa));
		qa.qpn = qc.qpn;
		qa.attr_mask = PLDMA_QPA_STATE | PLDMA_QPA_ACCESS_FLAGS;
		qa.qp_state = PLDMA_QPS_INIT;
		ret = ioc(fd, PLDMA_IOC_QP_MODIFY, &qa);
		result(!ret, "RESET -> INIT with the RQ and the CQs staged (%d)", ret);
		memset(&qa, 0, sizeof(qa));
		qa.qpn = qc.qpn;
		qa.attr_mask = PLDMA_QPA_STATE | PLDMA_QPA_CQ;
		qa.qp_state = PLDMA_QPS_RTR;
		result(ioc(fd, PLDMA_IOC_QP_MODIFY, &qa) == -EINVAL,
		       "CQ in the mask (the driver's): EINVAL");
		qa.attr_mask = PLDMA_QPA_STATE | PLDMA_QPA_RQ;
		result(ioc(fd, PLDMA_IOC_QP_MODIFY, &qa) == -EINVAL,
		       "RQ in the mask (the driver's): EINVAL");
		result(ioc(fd, PLDMA_IOC_CQ_DESTROY, &d) == -EBUSY,
		       "CQ_DESTROY while a QP uses it: EBUSY");
		rq = mmap(NULL, qc.rq_mmap_size, PROT_READ | PROT_WRITE,
			  MAP_SHARED, fd, qc.rq_mmap_offset);
		result(rq != MAP_FAILED, "RQ ring mapped read-write");
		result(ioc(fd, PLDMA_IOC_QP_DESTROY, &qd) == -EBUSY,
		       "QP_DESTROY while the RQ is mapped: EBUSY");
		if (rq != MAP_FAILED)
			munmap(rq, qc.rq_mmap_size);
		result(!ioc(fd, PLDMA_IOC_QP_DESTROY, &qd), "QP_DESTROY once unmapped");
	}
	if (p != MAP_FAILED)
		munmap(p, c.mmap_size);
	result(!ioc(fd, PLDMA_IOC_CQ_DESTROY, &d) &&
	       ioc(fd, PLDMA_IOC_CQ_DESTROY, &d) == -ENOENT &&
	       !cq_dbg_has(node, want),
	       "CQ_DESTROY once unmapped and unused, then ENOENT; gone from debugfs");
}

/*
 * cqhold NODE: hold CQs, a QP with a receive queue (in INIT: RQ and CQs
 * staged) and their mapped rings on the device of NODE, and sleep in
 * CQ_WAIT until the device goes (tests/hotplug/run removes it): the wait
 * must say ENODEV, the rings' mappings must be gone (SIGBUS), and the
 * close must work.
 */
static sigjmp_buf hold_jmp;

static void hold_sigbus(int sig)
{
	siglongjmp(hold_jmp, sig);
}

static int cqhold(unsigned int node)
{
	struct pldma_qp_caps caps = { .rq_entries = 8 };
	struct pldma_qp_attr qa = {
		.attr_mask = PLDMA_QPA_STATE | PLDMA_QPA_ACCESS_FLAGS,
		.qp_state = PLDMA_QPS_INIT,
	};
	struct pldma_cq_create c = { .entries = 64 };
	struct pldma_qp_info l;
	struct pldma_chan *ch;
	struct pldma_cq *scq;
	volatile uint8_t *ring;
	volatile int bus = 0;
	uint32_t events = 0;
	int ret, i;

	tap_tag = "cqhold: ";
	ch = open_other(node);
	if (!ch || !pldma_info(ch)->num_cqs) {
		result(0, "a channel with CQs on node %u", node);
		return 1;
	}
	scq = pldma_cq_create(ch, 64);
	ret = ioc(pldma_fd(ch), PLDMA_IOC_CQ_CREATE, &c);
	ring = ret ? MAP_FAILED : mmap(NULL, c.mmap_size, PROT_READ, MAP_SHARED,
				       pldma_fd(ch), c.mmap_offset);
	caps.send_cq = scq;
	ret = ret ? ret : scq ? pldma_qp_create_caps(ch, &caps, &l) : -errno;
	ret = ret ? ret : pldma_qp_modify(ch, &qa);
	result(!ret && ring != MAP_FAILED,
	       "two CQs, a QP in INIT with an RQ of 8 and a send CQ, the rings mapped (%d)",
	       ret);
	if (ret || ring == MAP_FAILED)
		return 1;
	printf("# holding\n");
	fflush(stdout);
	/* until the device goes: armed waits, 60 s each, at most 5 minutes */
	for (i = 0; i < 5; i++) {
		struct pldma_cq_wait w = {
			.cq = c.cq,
			.timeout_ms = 60000,
			.events = events,
		};

		ret = ioc(pldma_fd(ch), PLDMA_IOC_CQ_WAIT, &w);
		if (ret != -ETIMEDOUT)
			break;
	}
	result(ret == -ENODEV, "the device went: CQ_WAIT says %s", strerror(-ret));
	signal(SIGBUS, hold_sigbus);
	if (!sigsetjmp(hold_jmp, 1))
		(void)ring[0];
	else
		bus = 1;
	signal(SIGBUS, SIG_DFL);
	result(bus, "the CQ ring's mapping is gone (SIGBUS)");
	ret = pldma_cq_wait_event(scq, 10);
	result(ret == -ENODEV, "and the other CQ's wait: %s", strerror(-ret));
	munmap((void *)ring, c.mmap_size);
	pldma_close(ch);
	result(1, "closed after the removal");
	return fails;
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
	if (argc == 3 && !strcmp(argv[1], "cqhold"))
		return cqhold(atoi(argv[2])) || fails;
	if (argc >= 6 && !strcmp(argv[1], "msg") && !strcmp(argv[2], "listen"))
		return msg(1, NULL, atoi(argv[3]), atoi(argv[4]), argc - 5,
			   argv + 5) || fails;
	if (argc >= 7 && !strcmp(argv[1], "msg") &&
	    !strcmp(argv[2], "connect"))
		return msg(0, argv[3], atoi(argv[4]), atoi(argv[5]), argc - 6,
			   argv + 6) || fails;
	fprintf(stderr,
		"usage: pldma-rdma serve PORT [NQUIT] | pair HOST PORT LNODE RNODE LSTRAT RSTRAT SIZE... |\n"
		"       keys HOST PORT LNODE RNODE | verbs HOST PORT LNODE LSTRAT SIZE... |\n"
		"       quit HOST PORT | selftest NODE |\n"
		"       msg listen PORT LNODE SIZE... | msg connect HOST PORT LNODE SIZE... |\n"
		"       cqhold NODE\n");
	return 2;
}
