# SPDX-License-Identifier: GPL-2.0-or-later
# One of the two guests of tests/verbs/run: the programs that judge a verbs
# device, unmodified, between this node and its peer.  Shipped in the verbs
# archive (scripts/build-rdma-userland --verbs), which also brings perftest,
# rdmacm-utils, qperf, libfabric, UCX, python3, pyverbs and rdma-core's
# tests/.
#
# Kernel command line:
#   pldma.rdma=1|2        1: the server side of every pair, 2: the client
#   pldma.verbs_dev=rxe|pldma      this node's device (rxe0 on virtio-net,
#                         or the PLDMA's pldma0 with pldmaeth0)
#   pldma.verbs_peer=rxe|pldma     the peer's, for the names of results
#   pldma.verbs_mtu=N     the RoCE link's MTU on an rxe node (default 1500)
#   pldma.verbs_only=a,b  run only these steps (the names below)
#   pldma.verbs_tests=1   this node runs rdma-core's run_tests.py on its
#                         own device
#   pldma.verbs_apps=1    also the programs people run over verbs (librdmacm's
#                         rsocket, rdma_server/rdma_client, ucmatose, udaddy;
#                         qperf, RC and UD; libfabric's fi_pingpong; UCX's ucx_info
#                         and ucx_perftest): tests/verbs/run asks it on
#                         Linux 7.1
#   pldma.verbs_bench=SIZES:ITERS[:ROUNDS]   the benchmark only
#                         (scripts/bench BENCH=verbs): ib_write_bw,
#                         ib_read_bw (-o 1 and -o 16 READs in
#                         flight), ib_send_bw, pinned and --odp MRs
#                         side by side, at each size (bytes, comma-separated) with ITERS
#                         iterations, ROUNDS times (default 1); node 2
#                         prints "# VERBS-BENCH ..." lines, one per run
# RoCE link: 10.0.0.<role> (rxe on the virtio-net with MAC
# 52:54:00:00:0<role>:01, or pldmaeth0); TCP side channel: 10.0.1.<role> on
# the virtio-net with MAC 52:54:00:00:00:0<role>.  Each step: the server
# node starts its program and, once it listens, tells the client node over
# the side channel (vsync.py); the client runs its end; each node prints
# its own TAP lines (unnumbered, "nodeN: ...", tests/verbs/run numbers them).
. /tests/lib.sh
rdma_setup
kind= peer_kind= mtu= only= tests= bench= apps=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	pldma.verbs_dev=*) kind=${arg#*=} ;;
	pldma.verbs_peer=*) peer_kind=${arg#*=} ;;
	pldma.verbs_mtu=*) mtu=${arg#*=} ;;
	pldma.verbs_only=*) only=,${arg#*=}, ;;
	pldma.verbs_tests=1) tests=1 ;;
	pldma.verbs_apps=1) apps=1 ;;
	pldma.verbs_bench=*) bench=${arg#*=} ;;
	esac
done
# the benchmark alone: no other step, no run_tests.py
[ -z "$bench" ] || { only=,bench,; tests=; apps=; }
case "$role" in 1|2) ;; *) not_ok "pldma.rdma=1|2 missing"; exit 1 ;; esac
peer_role=$((3 - role))
me=10.0.0.$role peer=10.0.0.$peer_role
sc_me=10.0.1.$role sc_peer=10.0.1.$peer_role
SYNC=17000
pair="$kind(node$role)-$peer_kind(node$peer_role)"
echo "# verbs node $role: $kind, peer $peer_kind, Linux $(uname -r), /init at $(cut -d' ' -f1 /proc/uptime) s"
echo "# initrd: $(dmesg | grep -E 'Trying to unpack|Freeing initrd memory' | sed 's/^\[ *\([0-9.]*\)\] /\1 s: /' | paste -sd';')"

ifname_of() {
	for d in /sys/class/net/*; do
		[ "$(cat "$d/address")" = "$1" ] && { basename "$d"; return 0; }
	done
	return 1
}
ip link set lo up
sc=$(ifname_of 52:54:00:00:00:0$role); res $? "side channel NIC: $sc"
ip addr add $sc_me/24 dev "$sc" && ip link set "$sc" up; res $? "side channel $sc $sc_me"
if [ "$kind" = pldma ]; then
	insmod /lib/modules/pldma.ko; res $? "insmod pldma.ko"
	DEV=pldma0
	data=
	for d in /sys/class/net/pldmaeth*; do
		[ -e "$d" ] && data=${d##*/} && break
	done
	[ -n "$data" ]; res $? "the PLDMA's net_device: ${data:-none}"
else
	DEV=rxe0
	data=$(ifname_of 52:54:00:00:0$role:01); res $? "the RoCE link's NIC: $data"
fi
# nothing but RoCE and ARP on the link
echo 1 >/proc/sys/net/ipv6/conf/"$data"/disable_ipv6 2>/dev/null
[ -z "$mtu" ] || [ "$kind" != rxe ] || ip link set "$data" mtu "$mtu"
ip addr add $me/24 dev "$data" && ip link set "$data" up; res $? "$data $me"
if [ "$kind" = rxe ]; then
	rdma link add rxe0 type rxe netdev "$data"; res $? "rdma link add rxe0 netdev $data"
fi

# the port's RoCEv2 GID holding our IPv4 address (it comes with the address)
gid_index() {
	local p=/sys/class/infiniband/$DEV/ports/1 n t0
	t0=$(cut -d. -f1 /proc/uptime)
	# (one grep over the table: it can have hundreds of entries)
	while [ $(($(cut -d. -f1 /proc/uptime) - t0)) -lt 15 ]; do
		for n in $(grep -l '^RoCE v2$' $p/gid_attrs/types/* 2>/dev/null); do
			n=${n##*/}
			case "$(cat $p/gids/$n)" in
			0000:0000:0000:0000:0000:ffff:*) echo "$n"; return 0 ;;
			esac
		done
		sleep 0.2
	done
	return 1
}
GIDX=$(gid_index); res $? "$DEV: RoCEv2 GID of $me at index ${GIDX:-none}"
GIDX=${GIDX:-0}
ibv_devinfo -v -d $DEV >/tmp/devinfo 2>&1; res $? "$DEV: ibv_devinfo -v"
grep -E 'fw_ver|state|active_mtu|link_layer|ODP|odp|SUPPORT_' /tmp/devinfo | sed 's/^/# /'
# ODP for RC WRITE advertised: "rc_odp_caps:" lists SUPPORT_WRITE
odp=false
awk '/^[ \t]*rc_odp_caps:/ { f = 1; next } /_caps:/ { f = 0 }
     f && /SUPPORT_WRITE/ { w = 1 } END { exit !w }' /tmp/devinfo && odp=true
echo "# $DEV: ODP for RC WRITE advertised: $odp"

# wait for the peer: its side channel answers ping (at most 180 s)
i=0
until ping -c 1 -W 1 $sc_peer >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 180 ] || break
done
res $([ $i -lt 180 ]; echo $?) "the peer's side channel answers"
# each tells the other whether its device has ODP: an rxe without it (6.12)
# skips the --odp steps on both nodes (a capability it does not advertise);
# a PLDMA without it fails them (the issue asks for ODP)
if [ "$role" = 1 ]; then
	python3 /tests/vsync.py send $sc_peer $SYNC "odp $odp"
	peer_odp=$(python3 /tests/vsync.py recv $SYNC 300)
else
	peer_odp=$(python3 /tests/vsync.py recv $SYNC 300)
	python3 /tests/vsync.py send $sc_peer $SYNC "odp $odp"
fi
peer_odp=${peer_odp#odp }
odp_skip=
[ "$kind" = rxe ] && ! $odp && odp_skip="$DEV on Linux $(uname -r) advertises no ODP for RC WRITE"
[ "$peer_kind" = rxe ] && [ "$peer_odp" != true ] &&
	odp_skip="the peer's rxe0 advertises no ODP for RC WRITE (ibv_devinfo -v)"

# rdma-core's own tests, on this node's device alone (loopback on its
# port), in the background: on rxe while the pair's steps run (the guests
# wait on the network and on timers more than they compute, so both go
# faster together than one after the other); on a PLDMA after them, since
# each verbs context holds one of the device's channels and the tests'
# contexts (those of a failed test until Python collects them) would take
# the ones the steps' programs need
rt_pid=
run_tests_start() {
	# the rdma_cm tests' multiprocessing needs POSIX shared memory
	mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
	t0=$(cut -d' ' -f1 /proc/uptime)
	# (iproute2's ip first: the tests read "ip -j addr")
	(cd /usr/share/rdma-core-tests &&
	 PATH=/usr/bin:$PATH timeout 900 python3 tests/run_tests.py --dev $DEV --gid $GIDX -v \
		>/tmp/run_tests.out 2>&1
	 echo $? >/tmp/run_tests.status) &
	rt_pid=$!
}
rt_want=
[ -n "$tests" ] && { [ -z "$only" ] || case "$only" in *,run_tests,*) true ;; *) false ;; esac; } &&
	rt_want=1
[ -z "$rt_want" ] || [ "$kind" = pldma ] || run_tests_start

want() { [ -z "$only" ] || case "$only" in *,"$1",*) return 0 ;; *) return 1 ;; esac; }

# listening PROTO PORT: a TCP listener on PORT (/proc/net/tcp), or for
# rdma_cm a cm_id in LISTEN (iproute2's rdma)
listening() {
	if [ "$1" = tcp ]; then
		grep -qi "^ *[0-9]*: 00000000:$(printf '%04X' "$2") 00000000:0000 0A" /proc/net/tcp
	else
		rdma resource show cm_id 2>/dev/null | grep LISTEN | grep -qE ":$2( |$)"
	fi
}

# step NAME PROTO SERVER-COMMAND -- CLIENT-COMMAND: one program pair.
# The server end (node 1) runs in the background; when it listens (or has
# died) node 2 hears "NAME up|down" and runs its end, with @PEER@ replaced.
# Each end's output: /tmp/NAME.out; its status: $st.  Port: $port.
n_step=0
# (a benchmark step takes at most about 20 s under TCG: 60 s ends a hung
# one sooner than the suite's 150)
client_timeout=150
[ -z "$bench" ] || client_timeout=60
step() {
	local name=$1 proto=$2 msg w pid
	shift 2
	n_step=$((n_step + 1))
	port=$((18500 + n_step))
	local scmd= ccmd= side=s
	for w in "$@"; do
		if [ "$w" = -- ]; then side=c; continue; fi
		w=$(printf "%s\n" "$w" | sed "s/@PORT@/$port/g; s/@PEER@/$peer/g; s/@ME@/$me/g")
		if [ $side = s ]; then scmd="$scmd $w"; else ccmd="$ccmd $w"; fi
	done
	out=/tmp/$name.out
	if [ "$role" = 1 ]; then
		echo "# node1 $name at $(cut -d' ' -f1 /proc/uptime) s:$scmd"
		timeout 240 $scmd >$out 2>&1 &
		pid=$!
		i=0
		# (TCP: up to 60 s; rdma_cm: up to 8 s, then the server is taken
		# as up while it runs: a wildcard listener, perftest -R's, need
		# not show in iproute2's list)
		lim=300
		[ "$proto" = tcp ] || lim=40
		while ! listening $proto $port && kill -0 $pid 2>/dev/null && [ $i -lt $lim ]; do
			sleep 0.2; i=$((i + 1))
		done
		[ "$proto" = tcp ] || sleep 1
		if kill -0 $pid 2>/dev/null; then msg=up; else msg=down; fi
		python3 /tests/vsync.py send $sc_peer $SYNC "$name $msg" || true
		if [ $msg = up ]; then
			# the client is done (or gave up): the server has 20 s
			# more to end by itself, then it is ended (a server whose
			# client failed would wait for another one)
			python3 /tests/vsync.py recv $SYNC 300 >/dev/null
			i=0
			while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do
				sleep 0.2; i=$((i + 1))
			done
			kill -0 $pid 2>/dev/null &&
				{ kill $pid; echo "(ended: its client was done 20 s before)" >>$out; }
		fi
		wait $pid; st=$?
	else
		msg=$(python3 /tests/vsync.py recv $SYNC 600)
		echo "# node2 $name at $(cut -d' ' -f1 /proc/uptime) s:$ccmd (the server is ${msg#* })"
		if [ "$msg" = "$name up" ]; then
			timeout $client_timeout $ccmd >$out 2>&1; st=$?
			python3 /tests/vsync.py send $sc_peer $SYNC "$name done" || true
		else
			echo "server of $name did not start ($msg)" >$out; st=1
		fi
	fi
	sed 's/^/#   /' $out | head -n 60
}

# bw_check NAME ITERS: perftest's BW line (#bytes #iterations BW-peak
# BW-average MsgRate) with the iterations asked for and a bandwidth
# (a BW of 8-byte atomics rounds to 0.00 MiB/s: then the message rate,
# the fifth column, is the figure)
bw_line() {
	awk -v n="$2" '$1 ~ /^[0-9]+$/ && $2 == n && NF >= 5 && ($4 + 0 > 0 || ($1 == 8 && $5 + 0 > 0)) { print; found=1 } END { exit !found }' "$1"
}
# no_clock FILE ITERS: perftest timed nothing (it says its CPU clock fit
# failed, "Correlation coefficient r^2: ... < 0.9", as a loaded TCG host
# makes it) and printed the BW line of ITERS iterations with 0.00: the run
# itself ended well (its exit status is checked), its figure is no figure
no_clock() {
	grep -q 'Correlation coefficient r^2: .* < 0.9' "$1" &&
		awk -v n="$2" '$1 ~ /^[0-9]+$/ && $2 == n && NF >= 5 && $4 + 0 == 0 { f=1 } END { exit !f }' "$1"
}
lat_line() {
	awk -v n="$2" '$1 ~ /^[0-9]+$/ && $2 == n && NF >= 6 && $6 + 0 > 0 { print; found=1 } END { exit !found }' "$1"
}

# -u 18: a 1 s ACK timeout (perftest's default, 14, is 67 ms: with
# run_tests.py beside it on a loaded TCG host, rxe ran out of its 7 retries
# and completed a SEND with RETRY_EXC_ERR)
P="-d $DEV -x $GIDX -F -u 18"
BW_N=100 BW_S=65536 LAT_N=200

# perftest NAME TOOL ODP-OPTION [more]: a bandwidth or latency test
perftest_step() {
	local name=$1 tool=$2 o=$3 kindof=bw n=$BW_N size=$BW_S
	shift 3
	case "$tool" in *_lat) kindof=lat n=$LAT_N size=8 ;; esac
	# (an atomic is 8 bytes: perftest takes no other size)
	case "$tool" in *atomic*) size=8 ;; esac
	want "$name" || return 0
	if [ -n "$o" ] && [ -n "$odp_skip" ]; then
		ok "$pair $name # SKIP $odp_skip"
		return 0
	fi
	step $name tcp $tool $P $o -p @PORT@ -n $n -s $size "$@" -- \
		$tool $P $o -p @PORT@ -n $n -s $size "$@" $sc_peer
	res $st "$pair $name: $tool exits 0"
	if [ "$role" = 2 ] && [ $st = 0 ]; then
		if [ $kindof = bw ]; then
			if l=$(bw_line $out $n); then
				ok "$pair $name: BW line of $n iterations of $size B: $l"
			elif no_clock $out $n; then
				ok "$pair $name: BW line # SKIP perftest could not time the run (its clock fit: r^2 < 0.9); the $n iterations were reported"
			else
				not_ok "$pair $name: BW line of $n iterations of $size B: none"
			fi
		else
			l=$(lat_line $out $n); res $? "$pair $name: latency line of $n iterations: ${l:-none}"
		fi
	fi
}

# The benchmark (pldma.verbs_bench=SIZES:ITERS): for each size and tool,
# the pinned and the --odp run one after the other, so that their ratio
# sees the same host load; perftest 25.01 has no option to prefault or
# advise an ODP MR (no ibv_advise_mr), so there is no third column
if [ -n "$bench" ]; then
	b_sizes=${bench%%:*} b_iters=${bench#*:} b_rounds=1
	case "$b_iters" in *:*) b_rounds=${b_iters#*:} b_iters=${b_iters%%:*} ;; esac
	for round in $(seq 1 "$b_rounds"); do
	for size in $(echo "$b_sizes" | tr , ' '); do
		# ib_read_bw with one READ outstanding and with 16 (perftest
		# -o: the QP's max_rd_atomic, the responder's READ resources)
		for t in write_bw read_bw-o1 read_bw-o16 send_bw; do
			for mode in pinned odp; do
				o=
				[ $mode = pinned ] || o=--odp
				case $t in *-o*) o="$o -o ${t##*-o}" ;; esac
				name=bench$round-$t-$mode-$size
				if [ $mode = odp ] && [ -n "$odp_skip" ]; then
					ok "$pair $name # SKIP $odp_skip"
					continue
				fi
				step $name tcp ib_${t%-o*} $P $o -p @PORT@ -n $b_iters -s $size -- \
					ib_${t%-o*} $P $o -p @PORT@ -n $b_iters -s $size $sc_peer
				res $st "$pair $name: ib_${t%-o*} exits 0"
				[ "$role" = 2 ] || continue
				if [ $st != 0 ]; then
					echo "# VERBS-BENCH pair=$peer_kind-$kind tool=ib_$t mr=$mode size=$size iters=$b_iters round=$round bw_avg=- status=$st"
					continue
				fi
				l=$(bw_line $out $b_iters)
				res $? "$pair $name: BW line of $b_iters iterations of $size B: ${l:-none}"
				# the unit from perftest's header (MB/sec or MiB/sec)
				unit=$(sed -n 's/.*BW average\[\([^]]*\)\].*/\1/p' $out | head -n 1)
				[ -z "$l" ] || echo "# VERBS-BENCH pair=$peer_kind-$kind tool=ib_$t mr=$mode size=$size iters=$b_iters round=$round bw_avg=$(echo "$l" | awk '{ print $4 }') unit=${unit:-MB/sec}"
			done
		done
	done
	done
fi

if want pingpong; then
	step pingpong tcp ibv_rc_pingpong -d $DEV -g $GIDX -c -n 100 -s 4096 -p @PORT@ -- \
		ibv_rc_pingpong -d $DEV -g $GIDX -c -n 100 -s 4096 -p @PORT@ $sc_peer
	res $st "$pair ibv_rc_pingpong -c (data validated): exits 0"
	grep -q '100 iters in' $out; res $? "$pair ibv_rc_pingpong: 100 iterations reported"
fi
if want pingpong-odp; then
	if [ -n "$odp_skip" ]; then
		ok "$pair ibv_rc_pingpong -o # SKIP $odp_skip"
	else
		step pingpong-odp tcp ibv_rc_pingpong -d $DEV -g $GIDX -o -c -n 100 -s 4096 -p @PORT@ -- \
			ibv_rc_pingpong -d $DEV -g $GIDX -o -c -n 100 -s 4096 -p @PORT@ $sc_peer
		res $st "$pair ibv_rc_pingpong -o -c (ODP MRs, data validated): exits 0"
	fi
fi
# ibv_srq_pingpong: 3 QPs a side receiving through one SRQ (within the 4
# channels a PLDMA has by default, one a QP); -c: the server checks what
# it received
SRQ_PP="-d $DEV -g $GIDX -q 3 -r 64 -c -n 100 -s 4096 -p @PORT@"
if want srq-pingpong; then
	step srq-pingpong tcp ibv_srq_pingpong $SRQ_PP -- ibv_srq_pingpong $SRQ_PP $sc_peer
	res $st "$pair ibv_srq_pingpong -q 3 -c (3 QPs on one SRQ, data validated): exits 0"
	grep -q '100 iters in' $out; res $? "$pair ibv_srq_pingpong: 100 iterations reported"
	! grep -q 'invalid data' $out; res $? "$pair ibv_srq_pingpong: no invalid data (-c)"
fi
if want srq-pingpong-odp; then
	if [ -n "$odp_skip" ]; then
		ok "$pair ibv_srq_pingpong -o # SKIP $odp_skip"
	else
		step srq-pingpong-odp tcp ibv_srq_pingpong $SRQ_PP -o -- \
			ibv_srq_pingpong $SRQ_PP -o $sc_peer
		res $st "$pair ibv_srq_pingpong -q 3 -o -c (ODP MRs, data validated): exits 0"
		! grep -q 'invalid data' $out; res $? "$pair ibv_srq_pingpong -o: no invalid data (-c)"
	fi
fi
# ibv_uc_pingpong: UC QPs (no ACKs; the link loses nothing, so every
# message arrives); -c checks the bytes
if want uc-pingpong; then
	step uc-pingpong tcp ibv_uc_pingpong -d $DEV -g $GIDX -c -n 100 -s 4096 -p @PORT@ -- \
		ibv_uc_pingpong -d $DEV -g $GIDX -c -n 100 -s 4096 -p @PORT@ $sc_peer
	res $st "$pair ibv_uc_pingpong -c (UC QPs, data validated): exits 0"
	grep -q '100 iters in' $out; res $? "$pair ibv_uc_pingpong: 100 iterations reported"
fi
# ibv_ud_pingpong: UD QPs, datagrams of 1024 bytes (within every port's
# MTU here); -c checks the bytes; it has no ODP option.  The link loses
# nothing, so every datagram arrives.
if want ud-pingpong; then
	step ud-pingpong tcp ibv_ud_pingpong -d $DEV -g $GIDX -c -n 100 -s 1024 -p @PORT@ -- \
		ibv_ud_pingpong -d $DEV -g $GIDX -c -n 100 -s 1024 -p @PORT@ $sc_peer
	res $st "$pair ibv_ud_pingpong -c (UD QPs, 1024 B, data validated): exits 0"
	grep -q '100 iters in' $out; res $? "$pair ibv_ud_pingpong: 100 iterations reported"
	! grep -q 'invalid data' $out; res $? "$pair ibv_ud_pingpong: no invalid data (-c)"
fi
for t in write_bw read_bw send_bw write_lat; do
	perftest_step ib_$t ib_$t ""
done
for t in write_bw read_bw send_bw write_lat; do
	perftest_step ib_$t-odp ib_$t --odp
done
# RC atomics: FetchAdd (perftest's default) and CmpSwap, pinned and ODP.
# The latency test sets each QP's max_rd_atomic to the peer's outstanding
# count, rxe's 128 beyond PLDMA's 16 (EINVAL, as on any device with
# fewer): both sides ask 16 (-o).
perftest_step ib_atomic_bw ib_atomic_bw ""
perftest_step ib_atomic_bw-cas ib_atomic_bw "" -A CMP_AND_SWAP
perftest_step ib_atomic_lat ib_atomic_lat "" -o 16
perftest_step ib_atomic_bw-odp ib_atomic_bw --odp
# A hostile peer: 600 UD datagrams to node 1's QP1, each larger than a
# MAD buffer, before the rdma_cm steps: QP1 drops them and keeps its
# receive buffers (a completion in error would have cost the MAD layer
# one each: after 512 rdma_cm had none left), so rping still connects.
# The peer builds each frame itself, IPv4 header and ICRC included (a raw
# socket, IP_HDRINCL), as an attacker would: the PLDMA's transmit ring
# fills in the ICRC of QP1's own frames only, never of a socket's.  Then
# 100 UD datagrams to port 4791 from a UDP socket, with a zero ICRC: the
# driver must send them as they are (no TX_ICRC for a socket's frame,
# where it used to fill in the ICRC of any frame that looked like UD, so
# any user could send valid CM MADs), and node 1's device drops them all.
qp1_flood=
if want rping && [ "$kind" = pldma ] && [ "$peer_kind" = pldma ]; then
	qp1_flood=1
	if [ "$role" = 1 ]; then
		gsi0=$(sed -n 's/^rx_dropped //p' /sys/kernel/debug/pldma/pldma0/gsi)
		drop0=$(sed -n 's/^rx_dropped: //p' /sys/kernel/debug/pldma/pldma0/net)
	fi
	if [ "$role" = 2 ]; then
		python3 -c '
import socket, struct, time, zlib
src, dst = "'"$me"'", "'"$peer"'"
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
bth = bytes([0x64, 0, 0xff, 0xff, 0, 0, 0, 1, 0, 0, 0, 0])
deth = struct.pack(">II", 0x80010000, 1)
pl = bth + deth + bytes(1200)
ulen = 8 + len(pl) + 4
def iph(ident, tos, ttl, csum):
    return struct.pack(">BBHHHBBH4s4s", 0x45, tos, 20 + ulen, ident, 0x4000,
                       ttl, 17, csum, socket.inet_aton(src),
                       socket.inet_aton(dst))
udp = struct.pack(">HHHH", 0xc000, 4791, ulen, 0)
for i in range(600):
    # ICRC (IBA A17.8): TOS, TTL, checksums and BTH resv8a masked
    m = (iph(i + 1, 0xff, 0xff, 0xffff) + udp[:6] + b"\xff\xff" +
         pl[:4] + b"\xff" + pl[5:])
    icrc = zlib.crc32(b"\xff" * 8 + m) & 0xffffffff
    s.sendto(iph(i + 1, 0, 64, 0) + udp + pl + struct.pack("<I", icrc),
             (dst, 0))
    time.sleep(0.002)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind((src, 0))
for i in range(100):
    u.sendto(bth + deth + bytes(256) + bytes(4), (dst, 4791))
    time.sleep(0.002)
'
		res $? "$pair: 600 oversized UD datagrams, built whole, sent to the peer's QP1; 100 through a UDP socket"
	fi
fi
if want rping; then
	step rping cm rping -s -a @ME@ -p @PORT@ -C 20 -S 4096 -V -- \
		rping -c -a @PEER@ -p @PORT@ -C 20 -S 4096 -V
	res $st "$pair rping -V (rdma_cm, data verified): exits 0"
fi
if [ -n "$qp1_flood" ] && [ "$role" = 1 ]; then
	gsi1=$(sed -n 's/^rx_dropped //p' /sys/kernel/debug/pldma/pldma0/gsi)
	res $(test $((gsi1 - ${gsi0:-0})) -ge 520; echo $?) \
		"$pair: QP1 dropped the oversized UD datagrams ($((gsi1 - ${gsi0:-0})) of 600) and kept its buffers"
	drop1=$(sed -n 's/^rx_dropped: //p' /sys/kernel/debug/pldma/pldma0/net)
	res $(test $((drop1 - ${drop0:-0})) -ge 90; echo $?) \
		"$pair: the UDP socket's UD datagrams went out with their zero ICRC: the device dropped $((drop1 - ${drop0:-0})) (of 100)"
fi
if want ib_write_bw-R; then
	step ib_write_bw-R cm ib_write_bw -R -d $DEV -F -u 18 -p @PORT@ -n $BW_N -s $BW_S -- \
		ib_write_bw -R -d $DEV -F -u 18 -p @PORT@ -n $BW_N -s $BW_S @PEER@
	res $st "$pair ib_write_bw -R (rdma_cm): exits 0"
	if [ "$role" = 2 ] && [ $st = 0 ]; then
		l=$(bw_line $out $BW_N); res $? "$pair ib_write_bw -R: BW line: ${l:-none}"
	fi
fi
# The programs people run over verbs, unmodified (pldma.verbs_apps=1):
# librdmacm's own examples and rsocket with their defaults (rsocket asks 64
# bytes of inline data, rdma_server/rdma_client 16: a device without inline
# data fails them), and qperf's RC tests over rdma_cm, whose receiving side
# opens a QP with a send queue of depth 0.
app_want() { [ -n "$apps" ] && want "$1"; }
if app_want rdma_server; then
	step rdma_server cm rdma_server -p @PORT@ -- rdma_client -s @PEER@ -p @PORT@
	res $st "$pair rdma_server/rdma_client (rdma_cm, 16 bytes inline each way): exits 0"
fi
if app_want ucmatose; then
	step ucmatose cm ucmatose -p @PORT@ -c 4 -C 20 -S 4096 -- \
		ucmatose -s @PEER@ -p @PORT@ -c 4 -C 20 -S 4096
	res $st "$pair ucmatose (4 connections, 20 SENDs of 4 KiB each way): exits 0"
	[ $st != 0 ] || grep -q 'test complete' $out
	res $? "$pair ucmatose: 'test complete'"
fi
# rsocket: the stream over RDMA WRITE with immediate, its default inline
# size (64 bytes: messages of 48 bytes go inline), data verified (-T v)
for t in rstream:48:500 riostream:65536:100; do
	prog=${t%%:*} size=${t#*:} cnt=${size#*:} size=${size%%:*}
	app_want $prog || continue
	step $prog cm $prog -p @PORT@ -T v -S $size -C $cnt -- \
		$prog -s @PEER@ -p @PORT@ -T v -S $size -C $cnt
	res $st "$pair $prog -T v (rsocket, default inline, $cnt transfers of $size B verified): exits 0"
	if [ "$role" = 2 ] && [ $st = 0 ]; then
		# "name bytes xfers iters total time Gb/sec usec/xfer"
		l=$(awk -v c="$cnt" '$3 == c && $4 + 0 >= 1 { print; f = 1 } END { exit !f }' $out)
		res $? "$pair $prog: its result line of $cnt transfers: ${l:-none}"
	fi
done
# udaddy: UD QPs over rdma_cm (SIDR through QP1 for the remote QPN and
# Q_Key; the server answers through an AH made from each datagram's GRH,
# ibv_create_ah_from_wc); 10 datagrams each way
if app_want udaddy; then
	# (its port is fixed, 7174: -p is a port space)
	step udaddy cm udaddy -- udaddy -s @PEER@
	res $st "$pair udaddy (UD over rdma_cm): exits 0"
	[ $st != 0 ] || grep -q 'test complete' $out
	res $? "$pair udaddy: 'test complete'"
fi
# libfabric's verbs provider: message endpoints (FI_EP_MSG over rdma_cm),
# and ofi_rxm's RDM endpoints over them, data checked (-c); the server's
# control port is -B, bound to the RoCE address (-s) so that libfabric
# picks this device.  rxm sizes the verbs CQ of its connections for the
# whole job, (rx 384 + tx 384) x FI_UNIVERSE_SIZE entries, 196,608 at
# libfabric's default of 256 processes: more than any verbs CQ here takes
# (PLDMA 65,535, rxe 32,767), so fi_enable() fails with EINVAL on both
# ('Unable to create verbs CQ'); a job of 16 processes asks 12,288.
# (NAME:PROVIDER:ENDPOINT:FI_UNIVERSE_SIZE; 256 is libfabric's default)
for t in fi_pingpong:verbs:msg:256 "fi_pingpong-rxm:verbs;ofi_rxm:rdm:16"; do
	name=${t%%:*} prov=${t#*:} u=${t##*:}
	ep=${prov#*:} prov=${prov%%:*} ep=${ep%:*}
	app_want $name || continue
	step $name tcp env FI_UNIVERSE_SIZE=$u fi_pingpong -p $prov -e $ep -s @ME@ -B @PORT@ -I 200 -S 4096 -c -- \
		env FI_UNIVERSE_SIZE=$u fi_pingpong -p $prov -e $ep -P @PORT@ -I 200 -S 4096 -c @PEER@
	res $st "$pair fi_pingpong -p '$prov' -e $ep (FI_UNIVERSE_SIZE=$u; 200 messages of 4 KiB, data checked): exits 0"
	if [ "$role" = 2 ] && [ $st = 0 ]; then
		# "bytes iters total time MB/sec usec/xfer Mxfers/sec"
		l=$(awk '$2 == 200 && $1 ~ /^4k/ { print; f = 1 } END { exit !f }' $out)
		res $? "$pair $name: its result line of 200 iterations: ${l:-none}"
	fi
done
# qperf over rdma_cm (-cm1: RoCE has no LIDs); its server serves until it
# is ended, so node 1 checks only that it reported no error.  One client
# run per test, and a test whose connection the server's CM rejected is
# run again (at most twice): qperf's server sends the client its rdma_cm
# port before it listens on it (cm_open_server: rdma_bind_addr, the port
# to the client, then rdma_listen), so a fast client's REQ can find no
# listener, on any device.
QPERF_TESTS="rc_lat rc_bw rc_bi_bw rc_rdma_write_bw rc_rdma_write_lat rc_rdma_read_bw rc_rdma_read_lat rc_compare_swap_mr rc_fetch_add_mr"
if app_want qperf; then
	cat >/tmp/qperf-client.sh <<'QPERF'
peer=$1 port=$2 st=0 opts=
shift 2
# (options before the tests: -m SIZE)
while [ "${1#-}" != "$1" ]; do
	opts="$opts $1 $2"
	shift 2
done
for q in "$@"; do
	for try in 1 2 3; do
		timeout 60 qperf -cm1 -t 1 $opts -lp "$port" "$peer" "$q" >/tmp/qperf-one.out 2>&1
		r=$?
		cat /tmp/qperf-one.out
		[ $r != 0 ] && grep -q 'Event rejected' /tmp/qperf-one.out && [ $try -lt 3 ] || break
		echo "(qperf $q: its connection rejected, try $((try + 1)): qperf's CM race)"
		sleep 1
	done
	[ $r = 0 ] || st=$r
done
exit $st
QPERF
fi
# qperf_step NAME TESTS [OPTION...]: one qperf server, the client's runs
qperf_step() {
	local name=$1 tests=$2 q l
	shift 2
	app_want $name || return 0
	step $name tcp qperf -lp @PORT@ -- sh /tmp/qperf-client.sh @PEER@ @PORT@ "$@" $tests
	# what the link saw (retransmissions, NAKs, timeouts)
	[ "$kind" != pldma ] ||
		grep -vE ': 0$' /sys/kernel/debug/pldma/pldma0/net 2>/dev/null | sed 's/^/# pldma0 net: /' | head -n 40
	if [ "$role" = 1 ]; then
		! grep -qiE 'fail|error' $out
		res $? "$pair $name server: no error reported"
	else
		res $st "$pair qperf -cm1 ${*:+$* }$tests: exits 0"
		for q in $tests; do
			# "rc_lat:" then "    latency  =  52.4 us" (bw, msg_rate)
			l=$(awk -v t="$q:" '$1 == t { f = 1; next } f && $2 == "=" && $3 + 0 > 0 { print; n = 1; exit } f { f = 0 } END { exit !n }' $out)
			res $? "$pair qperf $q: ${l:-no figure}"
		done
	fi
}
qperf_step qperf "$QPERF_TESTS"
# qperf's UD tests (ud_lat, ud_bw) cannot run over RoCE, on any device:
# they ignore -cm1 ("warning: -cm1 set but not used in test ud_lat") and
# address the peer by its LID alone, an AH without a GRH, which a RoCE
# port refuses ("failed to create address handle: Invalid argument", rxe's
# end as the PLDMA's, 2026-12-08); Debian's qperf 0.4.11 has no option
# for a GID.  (The client script takes options before its tests, -m 1024
# for them, should a qperf with GIDs come.)
if app_want qperf-ud; then
	ok "$pair qperf ud_lat ud_bw # SKIP qperf addresses a UD peer by its LID alone (no GRH, -cm1 unused): no AH on a RoCE port, rxe's as a PLDMA's"
fi
# UCX (Debian's 1.18, unmodified; pldma.verbs_apps=1): ucx_info -d offers
# rc_verbs on the device's port, then ucx_perftest between the nodes over
# rc_verbs: UCT tests (-x rc_verbs -d DEV:1) and UCP ones (UCX_TLS), with
# UCX's defaults on both kinds of node.  (Until 2026-12-07 a PLDMA node
# needed two settings: UCX asks 5 send SGEs of every RC QP, a descriptor
# had 4; and it picks its GID by making an AH of each entry, which a PLDMA
# refused in user space.  docs/verbs.md.)  The GID UCX picks is printed.
# UCP wires its RC endpoints up through an auxiliary transport (ud_verbs
# on real RoCE, which a PLDMA lacks): tcp on the RoCE link's netdev.
# No shared-memory transport: no /dev/shm and no System V IPC (UCX says
# so on stderr and goes on without them).
UCX_DEV=$DEV:1
UCP_TLS="UCX_TLS=rc_verbs,tcp,self UCX_NET_DEVICES=$UCX_DEV,$data"
if app_want ucx_info; then
	# the GID UCX's defaults pick on this device (a diagnostic only)
	[ "$kind" != pldma ] || UCX_LOG_LEVEL=debug ucx_info -d 2>&1 |
		grep -E 'using gid_index|failed to create RC QP' | sed 's/.*UCX  /# UCX defaults on '$DEV': /' |
		awk '!seen[$0]++'
	ucx_info -d >/tmp/ucx_info.out 2>&1; st=$?
	res $st "$DEV ucx_info -d: exits 0"
	# the rc_verbs section of DEV:1: its capabilities, no "failed to open"
	l=$(awk -v d="$UCX_DEV" '/Transport: / { t = $NF; s = 0 } /Device: / { s = ($NF == d && t == "rc_verbs") }
		s && /failed to open/ { bad = 1 } s && /put_zcopy:/ { print; f = 1 } END { exit !(f && !bad) }' /tmp/ucx_info.out)
	res $? "$DEV ucx_info -d: rc_verbs on $UCX_DEV opens:${l:- no}"
fi
# ucx_perftest is linked with Open MPI and starts an MPI singleton when its
# stdin is no terminal (a background server's is /dev/null), which fails
# on an rxe node (mpi_init:startup:internal-failure): both ends run with
# the console on stdin, so no MPI at all (it reads nothing from it)
cat >/tmp/ucx_perftest.sh <<'UCXPT'
exec ucx_perftest "$@" </dev/console
UCXPT
# ucx_step NAME API TEST SIZE [OPTION... VAR=VALUE...]: ucx_perftest's
# TEST, 100 iterations of SIZE bytes; API uct: rc_verbs on UCX_DEV, put
# from registered memory (-D zcopy), active messages copied (-D bcopy);
# ucp: UCP_TLS.  The server learns the test from the client (over TCP on
# the side channel); the client's "Final:" line is parsed.  (-P 0: no MPI
# job.)
ucx_step() {
	local name=$1 api=$2 t=$3 sz=$4 a= e= w client_timeout=60
	shift 4
	app_want $name || return 0
	for w in "$@"; do
		case "$w" in *=*) e="$e $w" ;; *) a="$a $w" ;; esac
	done
	if [ $api = uct ]; then
		a="$a -d $UCX_DEV -x rc_verbs"
		case $t in put_*) a="$a -D zcopy" ;; am_*) a="$a -D bcopy" ;; esac
	fi
	step $name tcp env $e sh /tmp/ucx_perftest.sh -P 0 -p @PORT@ $a -t $t -n 100 -s $sz -- \
		env $e sh /tmp/ucx_perftest.sh -P 0 -p @PORT@ $a -t $t -n 100 -s $sz $sc_peer
	res $st "$pair ucx_perftest $t $sz B$a$e: exits 0"
	if [ "$role" = 2 ] && [ $st = 0 ]; then
		# "Final: iterations overhead|latency(50%, avg, overall)
		# bandwidth(avg, overall) msg-rate(avg, overall)"
		l=$(awk '$1 == "Final:" && $2 == 100 && $4 + 0 > 0 { print; f = 1 } END { exit !f }' $out)
		res $? "$pair ucx_perftest $t: its final line of 100 iterations: ${l:-none}"
	fi
}
# UCT: RDMA WRITE from and into registered buffers (pinned; -B: ODP MRs,
# IBV_ACCESS_ON_DEMAND), active messages through the SRQ
ucx_step ucx-put_bw uct put_bw 4096
ucx_step ucx-put_bw-odp uct put_bw 4096 -B
ucx_step ucx-am_lat uct am_lat 4096
# UCP: tagged messages; RMA puts into a peer's buffer registered as ODP
# (UCX_REG_NONBLOCK_MEM_TYPES=host)
ucx_step ucx-tag_bw ucp tag_bw 4096 $UCP_TLS
# (between two rxe nodes UCP's put ends in a remote flush, which rc_verbs
# refuses, "flush(remote) is not supported": UCX's and rxe's, seen
# 2026-12-07, not looked into yet)
if [ "$kind" = rxe ] && [ "$peer_kind" = rxe ]; then
	! app_want ucx-ucp_put_bw-odp ||
		ok "$pair ucx_perftest ucp_put_bw # SKIP rc_verbs between two rxe nodes: flush(remote) is not supported (docs/verbs.md)"
else
	ucx_step ucx-ucp_put_bw-odp ucp ucp_put_bw 65536 $UCP_TLS UCX_REG_NONBLOCK_MEM_TYPES=host
fi
# ODP under pressure: the responder's buffer dropped (MADV_DONTNEED) before
# every round, both MRs ODP, the data verified by the responder
for m in "" 1024; do
	name=odp-pressure${m:+-memlock}
	want $name || continue
	if [ -n "$odp_skip" ]; then
		ok "$pair $name # SKIP $odp_skip"
		continue
	fi
	lim=${m:+-m $m}
	step $name tcp verbs-odp-pressure -d $DEV -g $GIDX -o -n 20 -s 4194304 $lim server @PORT@ -- \
		verbs-odp-pressure -d $DEV -g $GIDX -o -n 20 -s 4194304 $lim client $sc_peer @PORT@
	res $st "$pair verbs-odp-pressure${m:+ (memlock ${m} KiB)}: 20 rounds of 4 MiB, DONTNEED each, data verified ($([ $role = 1 ] && echo responder || echo requester))"
	grep -qE '^verbs-odp-pressure: (server|client): ' $out
	res $? "$pair $name: the program's verdict printed"
done
if want memlock && [ "$kind" = rxe ] && ! $odp; then
	ok "$DEV: memlock 1 MiB, pinned MR ENOMEM and ODP MR works # SKIP $odp_skip"
elif want memlock; then
	verbs-odp-pressure -d $DEV -s 4194304 -m 1024 memlock >/tmp/memlock.out 2>&1; st=$?
	sed 's/^/# /' /tmp/memlock.out
	grep -E '^(ok|not ok) - ' /tmp/memlock.out | while read -r l; do
		case "$l" in
		ok*) ok "$DEV ${l#ok - }" ;;
		*) echo "not ok - node$role: $DEV ${l#not ok - }" ;;
		esac
	done
	res $st "$DEV: memlock 1 MiB: pinned 4 MiB MR ENOMEM, ODP MR registered"
fi

# rdma-core's own tests (on rxe started before the pairs' steps, beside
# them; on a PLDMA now)
[ -z "$rt_want" ] || [ "$kind" != pldma ] || run_tests_start
if [ -n "$rt_pid" ]; then
	wait $rt_pid
	st=$(cat /tmp/run_tests.status 2>/dev/null || echo 1)
	echo "# run_tests.py on $DEV: from $t0 s to $(cut -d" " -f1 /proc/uptime) s, status $st"
	# per test: "test_x (tests.test_mod.Class.test_x) ... ok|skipped '...'|FAIL|ERROR"
	grep -E ' \.\.\. ' /tmp/run_tests.out | sed 's/^/# rt: /'
	grep -E '^(FAIL|ERROR):' /tmp/run_tests.out | sed 's/^/# rt: /'
	# why: the exceptions that ended the failed tests, counted
	grep -E '^[A-Za-z_][A-Za-z0-9_.]*(Error|Exception|Failure)[A-Za-z]*: ' /tmp/run_tests.out |
		cut -c1-160 | sort | uniq -c | sort -rn | head -n 30 | sed 's/^/# rt why: /'
	tail -n 5 /tmp/run_tests.out | sed 's/^/# rt: /'
	# unittest's summary: "Ran N tests in Ts", then "OK (skipped=S)" or
	# "FAILED (failures=F, errors=E, skipped=S)"
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\? in .*/\1/p' /tmp/run_tests.out)
	last=$(grep -E '^(OK|FAILED)' /tmp/run_tests.out | tail -n 1)
	num() { echo "$last" | sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }
	skip=$(num skipped) f=$(num failures) e=$(num errors) x=$(num 'expected failures')
	skip=${skip:-0} f=${f:-0} e=${e:-0} x=${x:-0} ran=${ran:-0}
	pass=$((ran - skip - f - e - x))
	fail=$((f + e))
	echo "# run_tests.py on $DEV: ran $ran: $pass passed, $skip skipped, $f failed, $e errors ($last)"
	# The failures known and explained, each on its device: noted, not
	# counted; every other failure counts.  On rxe (README):
	#   test_resize_cq: posts 6 UD SENDs, then shrinks the CQ to 1 and
	#   expects EINVAL for the completions it holds; rxe completes SENDs
	#   from a work item, so on a slow (TCG) guest fewer are there yet, the
	#   shrink succeeds and a completion is lost: "timeout on polling"
	#   On a PLDMA, test_atomic_invalid_lkey: the device checks no lkey
	#   (docs/verbs.md), so an lkey + 1 completes SUCCESS
	known=0
	for t in $(sed -nE 's/^(ERROR|FAIL): ([a-z_0-9]+) .*/\2/p' /tmp/run_tests.out); do
		case "$kind: $t " in
		"rxe: test_resize_cq ") known=$((known + 1)); echo "# run_tests.py: $t failed on rxe: rxe's (known, README)" ;;
		"pldma: test_atomic_invalid_lkey ") known=$((known + 1)); echo "# run_tests.py: $t failed on PLDMA: lkeys not checked (known, docs/verbs.md)" ;;
		esac
	done
	note=
	[ $known = 0 ] || note=" ($known of them known)"
	[ $pass -gt 0 ] && [ $((fail - known)) = 0 ]
	res $? "$DEV: rdma-core run_tests.py: $pass passed, $skip skipped, $fail failed$note"
fi

if [ "$kind" = rxe ]; then
	for c in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
		echo "# rxe0 ${c##*/} $(cat "$c")"
	done
fi
echo "# node$role done at $(cut -d' ' -f1 /proc/uptime) s"
kernel_reports
[ "$fails" = 0 ]
