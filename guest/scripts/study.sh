# SPDX-License-Identifier: GPL-2.0-or-later
# `make study` (scripts/study): one guest boot's share of the study.  The
# host picks the devices (one boot per max-outstanding value, a small
# guest for eviction) and passes the rest on the kernel command line:
#
#   study.phases=strat,window,memlock,outstanding,evict   (comma-separated)
#   study.iters=N        runs per case (best-of and median are taken on host)
#   study.sizes=4K,...   strategy sweep sizes
#   study.strats=pin,... strategy sweep strategies ("batch16" is added when
#                        this libpldma knows it)
#   study.thp=never,always   THP settings of the strategy sweep
#   study.wsize=4M study.windows=1,2,...,512   Touch-Ahead window sweep
#   study.osize=4M       outstanding-stall size (the host knows the value)
#   study.mlsize=4M study.mlkb=1024   memlock scenario: size, ulimit -l (KiB)
#   study.esize=16M study.esets=4[,6...] study.erounds=3 study.estrats=...
#                        (one eviction section per esets value)
#   study.zram=512M      eviction scenario: zram swap size
#
# Output: CSV sections between "=== STUDY-CSV-BEGIN <phase> <param>" and
# "=== STUDY-CSV-END" markers (pldma-bench's rows and "# " lines), which
# scripts/study extracts.  Failed transfers are data here ("# FAIL"), not
# a failed test: the script fails only when pldma-bench cannot run at all.
insmod /lib/modules/pldma.ko || exit 1

get() {
	for a in $(cat /proc/cmdline); do
		case "$a" in study.$1=*) echo "${a#study.$1=}"; return ;; esac
	done
	echo "$2"
}

PHASES=$(get phases strat)
ITERS=$(get iters 3)
SIZES=$(get sizes 4K,64K,1M,4M)
STRATS=$(get strats pin,prefault,stall,one,touch16,user)
THPS=$(get thp never,always)
THP_SYS=/sys/kernel/mm/transparent_hugepage/enabled
rc=0

# "batch16" (PLDMA_STRAT_BATCH, 16-page window) joins the sweep when this libpldma has it
# (every phase's strategy list)
BATCH=
if pldma-bench -i 1 -s 4K -t batch16 >/dev/null 2>&1; then
	BATCH=,batch16
	case ",$STRATS," in *,batch16,*) ;; *) STRATS=$STRATS,batch16 ;; esac
fi

begin() { echo "=== STUDY-CSV-BEGIN $*"; }
end() { echo "=== STUDY-CSV-END"; }
bench() { # pldma-bench ARGS; a non-zero status is recorded, not fatal
	pldma-bench "$@"
	r=$?
	[ $r = 0 ] || echo "# FAIL pldma-bench $*: exit status $r"
	[ $r -lt 2 ] || rc=1
}

for phase in $(echo "$PHASES" | tr , ' '); do
	case "$phase" in
	strat)
		for t in $(echo "$THPS" | tr , ' '); do
			h=0
			[ "$t" = never ] || h=1
			echo "$t" >"$THP_SYS" || echo "# cannot set THP to $t"
			begin strat "thp=$t"
			echo "# THP: $(cat $THP_SYS)"
			bench -k -H $h -i "$ITERS" -s "$SIZES" -t "$STRATS"
			end
		done
		echo madvise >"$THP_SYS"
		;;
	window)
		echo never >"$THP_SYS"
		w=
		for n in $(get windows 1,2,4,8,16,32,64,128,256,512 | tr , ' '); do
			w=$w${w:+,}touch$n
		done
		begin window "size=$(get wsize 4M)"
		bench -k -H 0 -i "$ITERS" -s "$(get wsize 4M)" -t "one,$w"
		end
		echo madvise >"$THP_SYS"
		;;
	outstanding)
		begin outstanding "mo=$(get mo 1)"
		bench -k -H 0 -i "$ITERS" -s "$(get osize 4M)" -t stall
		end
		;;
	memlock)
		# buffers larger than RLIMIT_MEMLOCK; -L drops CAP_IPC_LOCK so
		# that the limit applies to root too
		kb=$(get mlkb 1024)
		begin memlock "memlock_kb=$kb"
		(
			ulimit -l "$kb" || echo "# FAIL ulimit -l $kb"
			echo "# ulimit -l: $(ulimit -l) KiB"
			bench -L -k -H 0 -i "$ITERS" -s "$(get mlsize 4M)" \
				-t "$(get mlstrats pin,prefault,stall,one,touch16,user)$BATCH"
			exit $rc
		) || rc=1
		end
		;;
	evict)
		# guest memory smaller than the working sets, swap on zram
		zs=$(get zram 512M)
		z=/sys/block/zram0
		[ -e $z ] || { echo "# no zram0 (CONFIG_ZRAM)"; rc=1; continue; }
		echo "$zs" >$z/disksize && mkswap /dev/zram0 >/dev/null &&
			swapon /dev/zram0 || { echo "# cannot set up zram swap"; rc=1; continue; }
		echo never >"$THP_SYS"
		# the driver's cancels, with their reason, for the report
		T=/sys/kernel/tracing
		[ -d $T/events ] || mount -t tracefs tracefs $T 2>/dev/null
		echo 1 >$T/events/pldma/pldma_cancel/enable 2>/dev/null
		echo 1 >$T/events/pldma/pldma_fault/enable 2>/dev/null
		echo 1 >$T/events/pldma/pldma_fault_in/enable 2>/dev/null
		echo 4096 >$T/buffer_size_kb 2>/dev/null
		es=$(get esize 16M) er=$(get erounds 3)
		# one section per pressure level (number of working sets)
		for en in $(get esets 4 | tr , ' '); do
		echo >$T/trace 2>/dev/null
		begin evict "sets=$en"
		echo "# zram: $(cat $z/comp_algorithm) disksize $(cat $z/disksize)"
		grep -E '^(MemTotal|MemFree|MemAvailable|SwapTotal|SwapFree):' /proc/meminfo | sed 's/^/# /'
		echo "# working sets: $en x (source + destination of $es)"
		for s in $(echo "$(get estrats pin,prefault,stall,one,touch16,user)$BATCH" | tr , ' '); do
			grep -E '^(pswpin|pswpout) ' /proc/vmstat | tr '\n' ' ' | sed "s/^/# before $s: /"; echo
			bench -k -E "$en" -i "$er" -s "$es" -t "$s"
		done
		# pinning as a memory registration does it: every working set
		# locked for the whole run (mlock, as ib_umem_get pins);
		# the child volunteers for the OOM killer
		echo "# register: mlock of all $en working sets, then the same rounds"
		ooms=$(dmesg | grep -c -i 'killed process')
		(
			echo 1000 >/proc/self/oom_score_adj
			exec pldma-bench -E "$en" -R -i "$er" -s "$es" -t pin
		) >/tmp/register.out
		r=$?
		sed 's/^evict,pin,/evict,register,/' /tmp/register.out
		if [ $r -ge 128 ]; then
			echo "# FAIL register pin $es: killed by signal $((r - 128))$([ "$(dmesg | grep -c -i 'killed process')" -gt "$ooms" ] && echo ' (OOM killer)')"
		elif [ $r != 0 ]; then
			echo "# FAIL register pin $es: exit status $r"
		fi
		grep -E '^(MemFree|SwapFree):' /proc/meminfo | sed 's/^/# after: /'
		# each cancel with the fault service before it (timestamps in s)
		grep -B3 'pldma_cancel:' $T/trace 2>/dev/null | head -24 |
			sed -n 's/.* \([0-9]*\.[0-9]*\): \(pldma_[a-z_]*:.*\)/# trace: \1 \2/p'
		echo "# cancels traced: $(grep -c 'pldma_cancel:' $T/trace 2>/dev/null)"
		echo "# slowest fault-ins (us): $(grep -o 'in [0-9]* us' $T/trace 2>/dev/null | awk '{print $2}' | sort -n | tail -5 | tr '\n' ' ')"
		grep -E '^(pswpin|pswpout) ' /proc/vmstat | tr '\n' ' ' | sed 's/^/# end: /'; echo
		end
		done
		for e in pldma_cancel pldma_fault pldma_fault_in; do
			echo 0 >$T/events/pldma/$e/enable 2>/dev/null
		done
		swapoff /dev/zram0 2>/dev/null
		;;
	*)
		echo "# unknown phase $phase"
		rc=1
		;;
	esac
done
rmmod pldma
exit $rc
