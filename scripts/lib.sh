# SPDX-License-Identifier: GPL-2.0-or-later
# Common helpers for the PLDMA build scripts.  Sourced, not executed.

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Everything fetched or built lives outside the checkout, keyed by the
# hash of its inputs, so that a fresh clone reuses it and a change rebuilds it.
CACHE=${PLDMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pldma}
JOBS=${JOBS:-$(nproc)}

# Versions (README.md, "The two commands").  The pin is tried first, then the newest
# of the same series offered by the suites in scripts/apt-sources.
QEMU_PIN=${QEMU_PIN:-1:10.2.2+ds-1}
QEMU_SERIES=${QEMU_SERIES:-10.2}
LINUX_PIN=${LINUX_PIN:-6.12.107-1}
LINUX_SERIES=${LINUX_SERIES:-6.12}
# The newest upstream release whose source Debian serves (sid), the second
# kernel of the guest matrix (docs/testing.md, "Picking a kernel").
LINUX71_PIN=${LINUX71_PIN:-7.1.8-2}
LINUX71_SERIES=7.1
BUSYBOX_PKG=busybox-static
MESON_MIN=1.5

log()  { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die()  { printf '[%s] error: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }

mkdir -p "$CACHE"

# hash_inputs FILE|DIR|STRING... -> sha256 of the contents, stable across clones
hash_inputs() {
	local a
	for a in "$@"; do
		if [ -d "$a" ]; then
			(cd "$TOP" && find "${a#"$TOP"/}" -type f ! -name '*~' -print0 | LC_ALL=C sort -z |
			 xargs -0r sha256sum)
		elif [ -f "$a" ]; then
			printf '%s  %s\n' "$(sha256sum <"$a" | cut -d' ' -f1)" "${a#"$TOP"/}"
		else
			printf 'str %s\n' "$a"
		fi
	done | sha256sum | cut -c1-16
}

# run as root, or through sudo when available
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# A private apt state: source entries and arm64 binaries are fetched from the
# machine's own mirror without touching /etc/apt.
APT_DIR=$CACHE/apt
apt_private_setup() {
	local uri new
	mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/archives/partial"
	uri=$(awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null || true)
	[ -n "$uri" ] || uri=$(awk '/^deb / && $2 ~ /debian\/?$/ {print $2; exit}' \
		/etc/apt/sources.list 2>/dev/null || true)
	[ -n "$uri" ] || die "no Debian mirror found in /etc/apt sources"
	# a file of this process's own: make check's prebuild runs beside the
	# suites' scripts
	new=$APT_DIR/pldma.sources.$BASHPID
	{
		# sid: only for the sources of the newest upstream kernel
		printf 'Types: deb-src\nURIs: %s\nSuites: trixie trixie-updates bookworm-backports sid\n' "$uri"
		printf 'Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n'
		printf 'Types: deb\nURIs: %s\nSuites: trixie bookworm-backports\n' "$uri"
		printf 'Components: main\nArchitectures: arm64 amd64\n'
		printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
	} >"$new"
	mkdir -p "$APT_DIR/sources.d"
	# new suites need a new index, whatever the age of the last one
	cmp -s "$new" "$APT_DIR/sources.d/pldma.sources" ||
		rm -f "$APT_DIR/updated"
	mv "$new" "$APT_DIR/sources.d/pldma.sources"
	apt_stale || return 0
	# one update at a time (apt runs with NoLocking); whoever waited finds
	# the index fresh
	local lk
	exec {lk}>"$APT_DIR/.update.lock"
	flock "$lk"
	if apt_stale; then
		log "updating private apt state in $APT_DIR"
		apt_private update >"$APT_DIR/update.log" 2>&1 ||
			{ cat "$APT_DIR/update.log" >&2; die "private apt update failed"; }
		touch "$APT_DIR/updated"
	fi
	exec {lk}>&-
}
apt_stale() {
	[ ! -f "$APT_DIR/updated" ] ||
		[ -n "$(find "$APT_DIR/updated" -mmin +720 2>/dev/null)" ]
}

apt_opts() {
	printf '%s\n' \
		-oAPT::Architecture=amd64 -oAPT::Architectures::=amd64 \
		-oAPT::Architectures::=arm64 \
		-oDir::State::Lists="$APT_DIR/lists" \
		-oDir::Cache::Archives="$APT_DIR/archives" \
		-oDir::Cache::pkgcache= -oDir::Cache::srcpkgcache= \
		-oDir::Etc::SourceList=/dev/null \
		-oDir::Etc::SourceParts="$APT_DIR/sources.d" \
		-oDebug::NoLocking=1 -oAPT::Sandbox::User=root
}
apt_private() {
	local o
	mapfile -t o < <(apt_opts)
	apt-get -q "${o[@]}" "$@"
}
apt_cache_private() {
	local o
	mapfile -t o < <(apt_opts)
	apt-cache "${o[@]}" "$@"
}

# kernel_select: the guest kernel named by PLDMA_KERNEL, one of
#   6.12 (the default), 7.1, debug (= 6.12-debug), 6.12-debug, 7.1-debug
# Sets KSERIES, KPIN (Debian source version tried first), KDEBUG (true when
# config/debug-kernel.config is merged too) and KTAG (the canonical name, used
# in file names: 6.12, 7.1, 6.12-debug, 7.1-debug).
kernel_select() {
	local spec=${PLDMA_KERNEL:-6.12}
	KDEBUG=false
	[ "$spec" = debug ] && spec=6.12-debug
	case "$spec" in *-debug) KDEBUG=true; spec=${spec%-debug} ;; esac
	case "$spec" in
	6.12) KPIN=$LINUX_PIN KSERIES=$LINUX_SERIES ;;
	7.1) KPIN=$LINUX71_PIN KSERIES=$LINUX71_SERIES ;;
	*) die "unknown kernel '${PLDMA_KERNEL:-}' (known: 6.12 7.1 debug 6.12-debug 7.1-debug)" ;;
	esac
	KTAG=$spec
	$KDEBUG && KTAG=$spec-debug
	return 0
}

# arch_select: the guest architecture named by PLDMA_ARCH (run-guest,
# build-kernel and build-initramfs --arch): aarch64 (the default: virt with
# the SMMUv3) or x86_64 (q35 with intel-iommu).  Sets GARCH, KIMAGE (the
# kernel's make target) and KIMAGE_PATH (relative to its build directory).
arch_select() {
	case "${PLDMA_ARCH:-aarch64}" in
	aarch64|arm64) GARCH=aarch64 KIMAGE=Image KIMAGE_PATH=arch/arm64/boot/Image ;;
	x86_64|amd64) GARCH=x86_64 KIMAGE=bzImage KIMAGE_PATH=arch/x86/boot/bzImage ;;
	*) die "unknown guest architecture '${PLDMA_ARCH:-}' (aarch64 or x86_64)" ;;
	esac
	export PLDMA_ARCH=$GARCH
}

# initramfs_path: the initramfs built for the selected kernel (kernel_select)
# and architecture (arch_select; x86_64's carry it in their name)
initramfs_path() {
	local out=${BUILD_DIR:-$TOP/build}
	if [ "${GARCH:-aarch64}" != aarch64 ]; then
		echo "$out/initramfs-$GARCH-$KTAG.cpio.gz"
	elif [ "$KTAG" = 6.12 ]; then
		echo "$out/initramfs.cpio.gz"
	else
		echo "$out/initramfs-$KTAG.cpio.gz"
	fi
}

# pick_version PKG PIN SERIES: print PIN if the private state offers it,
# else the newest SERIES.x source version, else fail naming what was tried.
pick_source_version() {
	local pkg=$1 pin=$2 series=$3 avail best
	avail=$(apt_cache_private showsrc "$pkg" 2>/dev/null |
		awk '/^Package: /{p=$2} /^Version: /{ if (p=="'"$pkg"'") print $2 }' | sort -u)
	if grep -qxF "$pin" <<<"$avail"; then
		echo "$pin"; return 0
	fi
	best=$(printf '%s\n' "$avail" |
		grep -E "^([0-9]+:)?${series//./\\.}\.[0-9]+" |
		while read -r v; do echo "$v"; done |
		sort -V | tail -n1 || true)
	if [ -n "$best" ]; then
		log "pinned $pkg $pin not offered; falling back to $best"
		echo "$best"; return 0
	fi
	die "$pkg: neither pinned version $pin nor any $series.x is offered by the deb-src suites (offered: $(echo $avail | tr '\n' ' '))"
}

# fetch_source PKG PIN SERIES [orig] -> prints the directory holding PKG's .dsc
# and tarballs.  Downloads into a temporary directory and renames it into place,
# so that an interrupted download never looks complete.  With "orig", only the
# upstream tarball is needed (the kernel): the mirror serves some unstable
# versions' orig tarball but not their .dsc and Debian tarball, so a download
# that got the orig tarball, with the size and SHA256 the index lists, is enough.
fetch_source() {
	local pkg=$1 pin=$2 series=$3 want=${4:-all} ver dir tmp
	apt_private_setup
	ver=$(pick_source_version "$pkg" "$pin" "$series")
	dir=$CACHE/src/$pkg-${ver//:/_}
	if [ ! -f "$dir/.complete" ]; then
		tmp=$(mktemp -d "$CACHE/src/.dl-XXXXXX" 2>/dev/null ||
		      { mkdir -p "$CACHE/src"; mktemp -d "$CACHE/src/.dl-XXXXXX"; })
		log "fetching source $pkg=$ver"
		if ! (cd "$tmp" && apt_private source --download-only "$pkg=$ver") \
			>"$tmp/.log" 2>&1 &&
		   ! { [ "$want" = orig ] && orig_verified "$pkg" "$ver" "$tmp"; }; then
			cat "$tmp/.log" >&2; rm -rf "$tmp"
			die "could not download source $pkg=$ver"
		fi
		touch "$tmp/.complete"
		rm -rf "$dir"
		mv "$tmp" "$dir"
	fi
	echo "$dir"
}

# orig_verified PKG VER DIR: DIR holds PKG's orig tarball as the index lists it
orig_verified() {
	local pkg=$1 ver=$2 dir=$3 name size sum
	read -r name size sum < <(apt_private source --print-uris "$pkg=$ver" 2>/dev/null |
		awk '$2 ~ /\.orig\.tar\./ {print $2, $3, $4; exit}')
	[ -n "${name:-}" ] && [ -f "$dir/$name" ] || return 1
	[ "$(stat -c %s "$dir/$name")" = "$size" ] || return 1
	[ "${sum%%:*}" = SHA256 ] && [ "$(sha256sum <"$dir/$name" | cut -d' ' -f1)" = "${sum#SHA256:}" ] ||
		return 1
	log "$pkg=$ver: orig tarball $name verified (SHA256 of the index); the packaging files were not served and are not needed"
}

# fetch_deb SPEC DEST: download one binary package (e.g. busybox-static:arm64)
# through the private apt state and unpack it into DEST with dpkg -x.
fetch_deb() {
	local spec=$1 dest=$2 tmp
	[ -f "$dest/.complete" ] && return 0
	apt_private_setup
	tmp=$(mktemp -d "$CACHE/.deb-XXXXXX")
	log "fetching package $spec"
	(cd "$tmp" && apt_private download "$spec") >"$tmp/.log" 2>&1 || {
		cat "$tmp/.log" >&2; rm -rf "$tmp"
		die "could not download package $spec"
	}
	mkdir -p "$tmp/root"
	dpkg -x "$tmp"/*.deb "$tmp/root" || { rm -rf "$tmp"; die "could not unpack $spec"; }
	touch "$tmp/root/.complete"
	rm -rf "$dest"
	mkdir -p "$(dirname "$dest")"
	mv "$tmp/root" "$dest"
	rm -rf "$tmp"
}

# A meson new enough for QEMU (>= 1.5): bookworm's is 1.0.1, so use the
# bookworm-backports package, unpacked privately; nothing is installed.
meson_for_qemu() {
	local v
	v=$(meson --version 2>/dev/null || echo 0)
	if dpkg --compare-versions "$v" ge "$MESON_MIN"; then
		return 0
	fi
	fetch_deb "meson/bookworm-backports" "$CACHE/tools/meson"
	export PYTHONPATH=$CACHE/tools/meson/usr/lib/python3/dist-packages${PYTHONPATH:+:$PYTHONPATH}
}

# model_inputs RUN-GUEST-ARGS...: the SHA-256 (first 16 hex digits) of the
# QEMU binary, kernel image and initramfs a guest with these arguments
# boots, on one line: modeled times are comparable only between runs
# whose inputs are the same
model_inputs() {
	local cmd q k i
	cmd=$("$TOP/scripts/run-guest" --print-cmd "$@" 2>/dev/null) || { echo "unknown"; return 0; }
	q=$(eval "set -- $cmd"; echo "$1")
	k=$(eval "set -- $cmd"; while [ $# -gt 1 ] && [ "$1" != -kernel ]; do shift; done; echo "${2:-}")
	i=$(eval "set -- $cmd"; while [ $# -gt 1 ] && [ "$1" != -initrd ]; do shift; done; echo "${2:-}")
	printf 'qemu %s kernel %s initramfs %s\n' \
		"$(sha256sum <"$q" | cut -c1-16)" "$(sha256sum <"$k" | cut -c1-16)" \
		"$(sha256sum <"$i" | cut -c1-16)"
}
