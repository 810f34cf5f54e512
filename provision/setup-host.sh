#!/usr/bin/env bash
# PufferTank host setup for Debian 12 (bookworm) GPU workstations.
#
#   sudo provision/setup-host.sh                 # the whole plan
#   sudo provision/setup-host.sh --dry-run       # print every action, change nothing
#   sudo provision/setup-host.sh --only docker   # one step (or --skip STEP); see --help
#
# Takes a bare Debian 12 box with an NVIDIA GPU to a working `docker run --gpus all puffertank/lib:cuda`.
# Every step looks before it acts, so the script is safe to re-run: a second run reports "Nothing changed".
# provision/README.md explains the choices (driver source, Secure Boot, the image's CUDA vs the driver).

set -Eeuo pipefail

readonly STEPS=(base-tools nvidia-driver docker nvidia-toolkit tailscale registry docker-group image verify)
readonly KEYRING_DIR=/etc/apt/keyrings
readonly SOURCES_DIR=/etc/apt/sources.list.d
readonly NONFREE_LIST=$SOURCES_DIR/puffertank-debian-nonfree.list
readonly DOCKER_LIST=$SOURCES_DIR/docker.list
readonly TOOLKIT_LIST=$SOURCES_DIR/nvidia-container-toolkit.list
readonly CUDA_LIST=$SOURCES_DIR/puffertank-cuda.list
readonly TAILSCALE_LIST=$SOURCES_DIR/tailscale.list
readonly CUDA_REPO=https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64
# A cuda-keyring package installed earlier (NVIDIA's way to add the repository) brings its own key and source.
readonly CUDA_KEYRING_PKG_KEY=/usr/share/keyrings/cuda-archive-keyring.gpg
# The repository signing keys, pinned: a fetched key (or one already on disk) must be exactly this key, or
# the run stops naming both fingerprints. Sources: Docker's install docs (docs.docker.com/engine/install/
# debian); NVIDIA's cuda-repo-management SIGNATURES.md (the CUDA repository's 3bf863cc key); NVIDIA's
# libnvidia-container key as apt and install guides report it; Tailscale's package key as apt reports it.
# A vendor's key rotation is a deliberate edit here, after checking the new fingerprint with the vendor.
readonly DOCKER_KEY_FPR=9DC858229FC7DD38854AE2D88D81803C0EBFCD88
readonly CUDA_REPO_KEY_FPR=EB693B3035CD5710E231E123A4B469963BF863CC
readonly TOOLKIT_KEY_FPR=C95B321B61E88C1809C4F759DDCAE044F796ECB0
readonly TAILSCALE_KEY_FPR=2596A99EAAB33821893C0A79458CA832957F5868
readonly DEBIAN_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
readonly VENV_DIR=/opt/puffertank/venv
# The fleet's registry (--registry): Debian's docker-registry with a config and a systemd drop-in of ours (the
# package's own config listens on every interface); where a box finds it lives in pufferlib/tank/settings.py's
# file (path, format, port and checks in that one module, which this script runs by path).
readonly REGISTRY_CONFIG=/etc/puffertank/registry.yml
readonly REGISTRY_DROPIN=/etc/systemd/system/docker-registry.service.d/puffertank.conf
readonly REGISTRY_STORAGE=/var/lib/docker-registry
readonly DAEMON_JSON=/etc/docker/daemon.json
# The CUDA facts (the image's CUDA per torch version, the driver each CUDA needs, the driver branches) live
# in docker/cuda.toml, which the host tooling reads too; the torch version in the base layer's constraints.
CHECKOUT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly CHECKOUT_DIR
readonly CUDA_FACTS_FILE=$CHECKOUT_DIR/docker/cuda.toml
readonly BASE_CONSTRAINTS=$CHECKOUT_DIR/docker/constraints/base.txt

# ---- options (see usage) ---------------------------------------------------------------------------------
DRY_RUN=0
VERBOSE=0
ONLY=()
SKIP=()
DRIVER_SOURCE=cuda        # cuda | debian | none
DRIVER_BRANCH=""          # cuda source: a branch, an exact version or "latest" (default: cuda.toml's)
DRIVER_FLAVOR=open        # cuda source: open | proprietary kernel modules
DOCKER_SOURCE=docker      # docker (Docker's repository) | debian (docker.io)
DOCKER_VERSION=""
TOOLKIT_VERSION=""
TAILSCALE_VERSION=""
TAILSCALE_AUTHKEY_FILE=""
TAILSCALE_TAGS=""
TAILSCALE_HOSTNAME=""
TARGET_USER="${SUDO_USER:-}"
VARIANT=auto              # cuda when an NVIDIA GPU is on the PCI bus, else cpu
TORCH_INDEX=""
IMAGE_LOAD=""
REPO_DIR=""
SERVE_REGISTRY=0          # --registry: serve the fleet's registry from this box, on its Tailscale address
REGISTRY_URL=""           # --registry-url HOST:PORT: the fleet's registry (default with --registry: this box's)
LOG_FILE=/var/log/puffertank-setup.log

# ---- run state -------------------------------------------------------------------------------------------
LOG_SECRET="" # masked in what a command prints before it reaches the log (the Tailscale auth key)
CURRENT_STEP=""
STEP_ACTIONS=0
TOTAL_ACTIONS=0
APT_UPDATED=0
APT_HEALED=0
REBOOT_REQUIRED=0
VERIFY_FAILED=0
TMP_FILES=()
WARNINGS=()
declare -A STEP_RESULT=()

usage() {
	cat <<EOF
Usage: sudo $0 [options]

Sets up a Debian 12 (bookworm, amd64) GPU host for PufferTank, one step at a time:
  base-tools      git vim tmux htop curl build-essential, kernel headers for DKMS
  nvidia-driver   NVIDIA driver (NVIDIA's CUDA repository, or Debian's non-free nvidia-driver)
  docker          Docker Engine (Docker's repository, or Debian's docker.io)
  nvidia-toolkit  NVIDIA Container Toolkit + nvidia-ctk runtime configure --runtime=docker
  tailscale       Tailscale (tailscale up --ssh with an auth key from a file or TS_AUTHKEY)
  registry        the fleet's image registry: serve it here (--registry) and/or use it (--registry-url)
  docker-group    add the user to the docker group
  image           build (or load, or pull from the fleet's registry) the PufferTank image
  verify          puffertank doctor (host tooling installed first), a torch CUDA check, a report

General:
  --dry-run                 print every action, change nothing (root not required)
  --only STEP[,STEP]        run only these steps (repeatable)
  --skip STEP[,STEP]        skip these steps (repeatable)
  --verbose                 stream command output (it always goes to $LOG_FILE)
  --list-steps              print the step names and exit
  -h, --help                this help

NVIDIA driver:
  --driver cuda|debian|none NVIDIA's CUDA repository (default), Debian's non-free nvidia-driver (branch
                            $DEBIAN_BRANCH, CUDA <= $(cuda_supported_by_branch "$DEBIAN_BRANCH"): needs --torch-index for an older-CUDA torch),
                            or leave it alone
  --driver-branch B         cuda source: branch ($NVIDIA_DEFAULT_BRANCH, default), an exact version
                            (BRANCH.MINOR.PATCH) or "latest"
  --driver-flavor F         cuda source: open (default; Turing and newer) or proprietary (older GPUs)
Docker:
  --docker docker|debian    Docker's apt repository (default) or Debian's docker.io
  --docker-version V        pin the engine version (apt version string, e.g. 5:28.5.2-1~debian.12~bookworm)
  --toolkit-version V       pin the NVIDIA Container Toolkit (e.g. 1.18.0-1)
Tailscale:
  --tailscale-authkey-file F  read the auth key from F (or set TS_AUTHKEY); the key is never printed
  --tailscale-tags T        comma-separated ACL tags, e.g. tag:gpu,tag:puffertank
  --tailscale-hostname H    machine name in the tailnet
  --tailscale-version V     pin the tailscale package
Fleet registry (docs/fleet.md):
  --registry                serve Debian's docker-registry from this box, bound to its Tailscale address
                            (port $(settings_py registry-port 2>/dev/null || echo "of pufferlib/tank/settings.py")); storage $REGISTRY_STORAGE; the image step pushes what it builds
  --registry-url HOST:PORT  the fleet's registry (default with --registry: this box's MagicDNS name): written
                            to puffertank's settings file, allowed plain HTTP in Docker's daemon.json
                            (insecure-registries, that name only: WireGuard encrypts the tailnet), and the
                            image step pulls from it instead of building
User and image:
  --user NAME               user to add to the docker group (default: \$SUDO_USER)
  --variant auto|cuda|cpu   image variant to build (default: cuda when an NVIDIA GPU is present, else cpu)
  --torch-index URL         torch index for the image build (e.g. $CU12_TORCH_INDEX)
  --image-load FILE         load the image from a 'docker save' tarball instead of building it
  --repo DIR                PufferTank checkout to build from (default: the one holding this script)
EOF
}

# ---- output ----------------------------------------------------------------------------------------------
say() { printf '%s\n' "$*"; }
info() { printf '    %s\n' "$*"; }
warn() {
	printf '    WARNING: %s\n' "$*"
	WARNINGS+=("${CURRENT_STEP:-setup}: $*")
}
die() {
	printf 'setup-host.sh: error: %s\n' "$*" >&2
	exit 1
}
# A command line as the user would type it (quoted where needed).
show_cmd() {
	local out="" arg q="'"
	for arg in "$@"; do
		if [[ $arg =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then
			out+=" $arg"
		else
			out+=" '${arg//$q/$q\\$q$q}'"
		fi
	done
	printf '%s' "${out# }"
}

log() {
	((DRY_RUN)) && return 0
	printf '%s %s\n' "$(date '+%F %T')" "$*" >>"$LOG_FILE"
}

# The log captures every command's output: root's alone (0600) from before its first line, also when an
# earlier run left it readable by others.
open_log() {
	install -d -m 0755 "$(dirname "$LOG_FILE")"
	(umask 077 && : >>"$LOG_FILE")
	chmod 600 "$LOG_FILE"
}

# stdin to stdout with $LOG_SECRET masked. Bash builtins only: the secret is never in a child's argv or
# environment.
scrub() {
	local line
	while IFS= read -r line || [[ -n $line ]]; do
		[[ -z $LOG_SECRET ]] || line=${line//"$LOG_SECRET"/[auth key]}
		printf '%s\n' "$line"
	done
}

on_error() {
	local rc=$1 line=$2 cmd=$3
	printf '\nsetup-host.sh: FAILED in step %s (line %s, exit %s): %s\n' \
		"${CURRENT_STEP:-setup}" "$line" "$rc" "$cmd" >&2
	if ((!DRY_RUN)) && [[ -f $LOG_FILE ]]; then
		printf 'Last lines of %s:\n' "$LOG_FILE" >&2
		tail -n 20 "$LOG_FILE" | sed 's/^/    /' >&2
	fi
	exit "$rc"
}

cleanup() {
	local f
	for f in "${TMP_FILES[@]}"; do rm -rf -- "$f"; done
}

# Temporary files (one may hold the Tailscale auth key) go on every way out: an error, the end, Ctrl-C, a
# kill, a dropped SSH session.
install_traps() {
	trap 'on_error $? $LINENO "$BASH_COMMAND"' ERR
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
}

# ---- actions: everything that changes the host goes through these -----------------------------------------
note_action() {
	STEP_ACTIONS=$((STEP_ACTIONS + 1))
	TOTAL_ACTIONS=$((TOTAL_ACTIONS + 1))
}

# Run a command that changes the host (printed, not run, under --dry-run); output goes to the log.
act() {
	note_action
	if ((DRY_RUN)); then
		info "would run: $(show_cmd "$@")"
		return 0
	fi
	info "+ $(show_cmd "$@")"
	log "+ $(show_cmd "$@")"
	local rc=0
	if ((VERBOSE)); then
		"$@" 2>&1 | scrub | tee -a "$LOG_FILE" || rc=$?
	elif [[ -n $LOG_SECRET ]]; then
		"$@" 2>&1 | scrub >>"$LOG_FILE" || rc=$?
	else
		"$@" >>"$LOG_FILE" 2>&1 || rc=$?
	fi
	if ((rc != 0)); then
		printf '\nsetup-host.sh: FAILED in step %s: %s (exit %s)\nLast lines of %s:\n' \
			"$CURRENT_STEP" "$(show_cmd "$@")" "$rc" "$LOG_FILE" >&2
		tail -n 25 "$LOG_FILE" | sed 's/^/    /' >&2
		exit "$rc"
	fi
}

# Run a read-only or cache-only command (apt-get update, downloads): logged, never counted as a change.
quiet() {
	if ((DRY_RUN)); then
		info "would run: $(show_cmd "$@")"
		return 0
	fi
	log "+ $(show_cmd "$@")"
	if ((VERBOSE)); then
		"$@" 2>&1 | tee -a "$LOG_FILE"
		return "${PIPESTATUS[0]}"
	fi
	"$@" >>"$LOG_FILE" 2>&1
}

# Make PATH hold exactly CONTENT (a trailing newline is added); no-op when it already does.
ensure_file() {
	local path=$1 mode=$2 content=$3
	if [[ -f $path ]] && [[ "$(cat "$path")" == "$content" ]]; then
		return 0
	fi
	note_action
	if ((DRY_RUN)); then
		info "would write $path:"
		printf '%s\n' "$content" | sed 's/^/        /'
		return 0
	fi
	info "+ write $path"
	log "write $path"
	local tmp
	tmp=$(mktemp)
	TMP_FILES+=("$tmp")
	printf '%s\n' "$content" >"$tmp"
	install -D -m "$mode" "$tmp" "$path"
}

ensure_absent() {
	local path=$1
	[[ -e $path ]] || return 0
	act rm -f -- "$path"
}

# The fingerprints of the primary keys in an OpenPGP key file (armored or binary), sorted, space-separated.
key_fingerprints() {
	local home
	home=$(mktemp -d) # gpg gets a throwaway home: nothing is imported anywhere
	GNUPGHOME=$home gpg --batch --quiet --with-colons --show-keys "$1" 2>/dev/null |
		awk -F: '$1 == "pub" { want = 1; next } $1 == "fpr" && want { print $10; want = 0 }' | sort -u | paste -sd' ' -
	rm -rf -- "$home"
}

ensure_gpg() {
	command -v gpg >/dev/null 2>&1 && return 0
	apt_install --no-recommends gnupg
}

# Stop unless FILE holds exactly the key with fingerprint EXPECTED. WHAT names the key's origin; FIX says
# what to do about a mismatch.
verify_key() {
	local file=$1 expected=$2 what=$3 fix=$4 found
	found=$(key_fingerprints "$file")
	[[ $found == "$expected" ]] && return 0
	die "signing key mismatch for $what: expected fingerprint $expected, found ${found:-no OpenPGP key}. $fix"
}

# Put the repository signing key from URL at DEST (apt reads armored keys named *.asc and binary *.gpg as
# they are), checked against its pinned fingerprint FPR before it is installed. A key already at DEST is
# checked too (a hand-placed key, or one an older run trusted on HTTPS alone): delete it to fetch again.
ensure_keyring() {
	local url=$1 dest=$2 fpr=$3
	if [[ -s $dest ]]; then
		if ((DRY_RUN)) && ! command -v gpg >/dev/null 2>&1; then
			info "would check $dest against fingerprint $fpr (gpg is not installed yet)"
			return 0
		fi
		ensure_gpg
		verify_key "$dest" "$fpr" "$dest" \
			"Fix: if the vendor rotated its key, check the new fingerprint with the vendor; else delete $dest and run this step again to fetch the vendor's key."
		return 0
	fi
	note_action
	if ((DRY_RUN)); then
		info "would fetch $url -> $dest (checked against fingerprint $fpr)"
		return 0
	fi
	info "+ fetch $url -> $dest"
	log "fetch $url -> $dest"
	local tmp
	tmp=$(mktemp)
	TMP_FILES+=("$tmp")
	curl -fsSL --retry 3 --max-time 120 "$url" -o "$tmp" ||
		die "could not download $url (network or proxy problem?); retry, or put the key at $dest yourself"
	ensure_gpg
	verify_key "$tmp" "$fpr" "$url" \
		"Nothing was installed. A proxy or mirror may serve another key, or the vendor rotated it: check the fingerprint the vendor publishes before changing the pin in $0."
	install -D -m 0644 "$tmp" "$dest"
}

# ---- apt ---------------------------------------------------------------------------------------------------
export DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=a
readonly APT_OPTS=(-y -q -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

# Queries that must not even refresh apt's binary caches (a dry run changes nothing).
APT_READONLY=(-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)

apt_update() {
	((APT_UPDATED)) && return 0
	APT_UPDATED=1
	quiet apt-get -q -o DPkg::Lock::Timeout=300 update
}

# After a sources change, the next install must see the new lists.
apt_sources_changed() { APT_UPDATED=0; }

# An apt run stopped midway (Ctrl-C, a dropped SSH session, a reboot) leaves packages unpacked but not
# configured, and every later apt-get install fails with "dpkg was interrupted". Finish that first, once
# per run; the packages it configures then count as installed.
apt_heal() {
	((APT_HEALED)) && return 0
	APT_HEALED=1
	# dpkg's journal of unfinished updates, or packages dpkg --audit finds half-installed.
	if ! compgen -G '/var/lib/dpkg/updates/[0-9]*' >/dev/null && [[ -z $(dpkg --audit 2>/dev/null) ]]; then
		return 0
	fi
	info "dpkg was interrupted earlier (half-installed packages): finishing that first"
	act dpkg --configure -a
}

# PKG or PKG=VERSION is installed (at that version).
pkg_installed() {
	local name=${1%%=*} want=${1#*=} got
	got=$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$name" 2>/dev/null) || return 1
	[[ $got == installed\ * ]] || return 1
	[[ $1 != *=* ]] && return 0
	[[ ${got#installed } == "$want" ]]
}

pkg_has_candidate() {
	local cand
	cand=$(apt-cache "${APT_READONLY[@]}" policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
	[[ -n $cand && $cand != "(none)" ]]
}

missing_pkgs() {
	local p
	for p in "$@"; do pkg_installed "$p" || printf '%s\n' "$p"; done
}

# Install what is missing of PKGS; --no-recommends keeps small steps small. --driver marks kernel-driver
# packages: a host must reboot after them, and in a container (where a kernel module cannot be loaded) they
# are downloaded, not installed, which still proves they resolve.
apt_install() {
	local extra=() driver=0
	while [[ ${1:-} == --* ]]; do
		case $1 in
		--no-recommends) extra=(--no-install-recommends) ;;
		--driver) driver=1 ;;
		*) die "apt_install: unknown option $1" ;;
		esac
		shift
	done
	apt_heal
	local missing
	mapfile -t missing < <(missing_pkgs "$@")
	((${#missing[@]})) || return 0
	apt_update
	if ((driver)) && in_container; then
		warn "running in a container: NVIDIA driver packages are downloaded (resolved), not installed"
		quiet apt-get install "${APT_OPTS[@]}" "${extra[@]}" --download-only "${missing[@]}"
		if ((!DRY_RUN)); then info "resolved and downloaded: ${missing[*]}"; fi
		return 0
	fi
	act apt-get install "${APT_OPTS[@]}" "${extra[@]}" "${missing[@]}"
	if ((driver)); then REBOOT_REQUIRED=1; fi
}

# `pkg=version` when a version is pinned, else `pkg`.
pin() {
	local version=$1
	shift
	local p
	for p in "$@"; do
		if [[ -n $version ]]; then printf '%s=%s\n' "$p" "$version"; else printf '%s\n' "$p"; fi
	done
}

# ---- CUDA facts: docker/cuda.toml -------------------------------------------------------------------------
declare -A CUDA_FACT=() # "table.key" -> value
IMAGE_DEFAULT_CUDA=""   # the CUDA of the cuda image's default torch (PyPI's build of the pinned version)
NVIDIA_DEFAULT_BRANCH=""
DEBIAN_BRANCH=""
CU12_TORCH_INDEX=""

# Read docker/cuda.toml into CUDA_FACT. The file keeps to `"key" = "value"` lines under [table] headers so
# that awk reads it here while the host tooling reads it with tomllib (tests/provision/test_cuda_facts.py
# checks that both see the same values).
load_cuda_facts() {
	[[ -r $CUDA_FACTS_FILE ]] || die "cannot read $CUDA_FACTS_FILE, the CUDA facts this script needs. Fix: run setup-host.sh from a complete PufferTank checkout (git clone, then sudo provision/setup-host.sh)"
	local table key value
	while IFS=$'\t' read -r table key value; do
		[[ $table == '!' ]] && die "$CUDA_FACTS_FILE line $key is not '\"key\" = \"value\"' under a [table]: $value"
		CUDA_FACT[$table.$key]=$value
	done < <(awk '
		/^[[:space:]]*(#.*)?$/ { next }
		/^[[:space:]]*\[[A-Za-z0-9_]+\][[:space:]]*$/ { t = $0; gsub(/[^A-Za-z0-9_]/, "", t); next }
		t != "" && /^[[:space:]]*"[^"]+"[[:space:]]*=[[:space:]]*"[^"]*"[[:space:]]*(#.*)?$/ {
			split($0, q, "\""); print t "\t" q[2] "\t" q[4]; next
		}
		{ print "!\t" NR "\t" $0 }
	' "$CUDA_FACTS_FILE")
	local torch
	torch=$(sed -n 's/^torch==\([0-9][^[:space:];#]*\).*/\1/p' "$BASE_CONSTRAINTS" 2>/dev/null | head -n1)
	[[ -n $torch ]] || die "$BASE_CONSTRAINTS pins no torch version (a line torch==X.Y.Z); the image's CUDA follows from it"
	IMAGE_DEFAULT_CUDA=$(cuda_fact pypi_torch_cuda "$torch")
	NVIDIA_DEFAULT_BRANCH=$(cuda_fact driver_branch nvidia_default)
	DEBIAN_BRANCH=$(cuda_fact driver_branch debian)
	CU12_TORCH_INDEX=$(cuda_fact torch_index cuda12)
}

# One value of docker/cuda.toml; a missing one stops the run naming the table and the key.
cuda_fact() {
	local table=$1 key=$2
	local hint=VALUE
	[[ $table == pypi_torch_cuda ]] && hint="the CUDA version PyPI's torch $key is built for"
	[[ -n ${CUDA_FACT[$table.$key]:-} ]] ||
		die "$CUDA_FACTS_FILE has no \"$key\" in [$table]. Fix: add the line \"$key\" = \"$hint\" under [$table]"
	printf '%s\n' "${CUDA_FACT[$table.$key]}"
}

# The newest CUDA release that driver branch BRANCH supports fully (cuda.toml's [min_driver]), or "none".
cuda_supported_by_branch() {
	local branch=$1 key best=""
	for key in "${!CUDA_FACT[@]}"; do
		[[ $key == min_driver.* ]] || continue
		local driver=${CUDA_FACT[$key]} cuda=${key#min_driver.}
		((${driver%%.*} <= branch)) || continue
		if [[ -z $best || $(printf '%s\n%s\n' "$best" "$cuda" | sort -V | tail -n1) == "$cuda" ]]; then best=$cuda; fi
	done
	printf '%s' "${best:-none}"
}

# ---- host facts --------------------------------------------------------------------------------------------
in_container() {
	[[ -f /.dockerenv || -f /run/.containerenv ]] && return 0
	grep -qsa 'container=' /proc/1/environ
}

have_systemd() { [[ -d /run/systemd/system ]]; }

# One fact about this host from pufferlib/tank/hostfacts.py, the module doctor reads them with: gpus (PCI
# addresses), driver (the loaded module's version), secure-boot (enabled, disabled, unknown, off (legacy
# BIOS boot)) or mok-advice. It needs only the standard library, so it runs from this checkout before the
# host venv exists. Fails where python3 is missing: a minimal Debian before the base-tools step.
host_fact() {
	command -v python3 >/dev/null 2>&1 || return 1
	python3 "$CHECKOUT_DIR/pufferlib/tank/hostfacts.py" "$@"
}

# pufferlib/tank/settings.py, run from this checkout like host_fact: the settings file puffertank reads (the
# fleet's registry), the checks of its values, the registry's port, daemon.json's insecure-registries.
settings_py() {
	command -v python3 >/dev/null 2>&1 || return 1
	python3 "$CHECKOUT_DIR/pufferlib/tank/settings.py" "$@"
}

# What --variant auto means: the host tooling's one rule (pufferlib/tank/variant.py, `puffertank variant`:
# cuda when an NVIDIA GPU is on the PCI bus, else cpu), run from this checkout like host_fact. Where python3
# itself is missing (a minimal Debian before base-tools installs it) there is nothing to ask, and the plan
# must still name its image: only there the rule's PCI test (vendor 0x10de, class 0x03xxxx) is done here.
auto_variant() {
	if command -v python3 >/dev/null 2>&1; then
		python3 "$CHECKOUT_DIR/pufferlib/tank/variant.py"
		return
	fi
	local dev
	for dev in /sys/bus/pci/devices/*; do
		[[ -r $dev/vendor && $(<"$dev/vendor") == 0x10de && $(<"$dev/class") == 0x03* ]] && echo cuda && return
	done
	echo cpu
}

# The CUDA version (MAJOR.MINOR) the image's torch is built for: from --torch-index (…/cuXYZ -> XY.Z),
# else PyPI's default.
image_cuda_version() {
	if [[ $VARIANT == cpu ]]; then
		echo none
	elif [[ $TORCH_INDEX =~ cu([0-9]+)([0-9])/?$ ]]; then
		echo "${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
	elif [[ -n $TORCH_INDEX ]]; then
		echo unknown
	else
		echo "$IMAGE_DEFAULT_CUDA"
	fi
}

# Oldest driver branch that runs CUDA MAJOR.MINOR at all ("floor": minor-version compatibility) and the
# branch that supports it fully, from cuda.toml. Prints "FLOOR FULL"; 0 where the file does not say.
driver_needed_for_cuda() {
	local cuda=$1 floor full
	floor=${CUDA_FACT[compat_floor.${cuda%%.*}]:-0}
	full=${CUDA_FACT[min_driver.$cuda]:-0}
	echo "${floor%%.*} ${full%%.*}"
}

# The driver branch this run will leave on the host (for the CUDA check), or empty when unknown.
planned_driver_branch() {
	if ! step_enabled nvidia-driver || [[ $DRIVER_SOURCE == none ]]; then
		{ host_fact driver 2>/dev/null || true; } | cut -d. -f1
		return 0
	fi
	case $DRIVER_SOURCE in
	debian) echo "$DEBIAN_BRANCH" ;;
	cuda) [[ $DRIVER_BRANCH =~ ^([0-9]+) ]] && echo "${BASH_REMATCH[1]}" ;;
	esac
	return 0
}

step_enabled() {
	local step=$1 s
	if ((${#ONLY[@]})); then
		local hit=0
		for s in "${ONLY[@]}"; do [[ $s == "$step" ]] && hit=1; done
		((hit)) || return 1
	fi
	for s in "${SKIP[@]}"; do [[ $s == "$step" ]] && return 1; done
	return 0
}

# ---- preflight ---------------------------------------------------------------------------------------------
# One field of /etc/os-release (read, not sourced: the file is data).
os_field() { sed -n "s/^$1=//p" /etc/os-release | tr -d '"' | head -n1; }

check_os() {
	[[ -r /etc/os-release ]] || die "cannot read /etc/os-release: this script supports Debian 12 (bookworm) only"
	local id version pretty
	id=$(os_field ID)
	version=$(os_field VERSION_ID)
	pretty=$(os_field PRETTY_NAME)
	if [[ $id != debian || $version != 12 ]]; then
		die "this host runs ${pretty} (ID=${id:-?} VERSION_ID=${version:-?}); setup-host.sh supports Debian 12 (bookworm) only. Install Debian 12, or follow provision/README.md by hand."
	fi
	local arch
	arch=$(dpkg --print-architecture)
	[[ $arch == amd64 ]] || die "this host is $arch; setup-host.sh supports amd64 (x86_64) only (NVIDIA's Debian 12 repository is x86_64)"
}

check_root() {
	((EUID == 0)) && return 0
	((DRY_RUN)) && {
		say "note: not root; a dry run only reads the host (a real run needs sudo)"
		return 0
	}
	die "run as root: sudo $0 $*"
}

validate_options() {
	local s k known tags=()
	for s in "${ONLY[@]}" "${SKIP[@]}"; do
		known=0
		for k in "${STEPS[@]}"; do [[ $s == "$k" ]] && known=1; done
		((known)) || die "unknown step '$s'; steps are: ${STEPS[*]}"
	done
	[[ $DRIVER_SOURCE =~ ^(cuda|debian|none)$ ]] || die "--driver must be cuda, debian or none (got '$DRIVER_SOURCE')"
	[[ $DRIVER_FLAVOR =~ ^(open|proprietary)$ ]] || die "--driver-flavor must be open or proprietary (got '$DRIVER_FLAVOR')"
	[[ $DRIVER_BRANCH =~ ^(latest|[0-9]{3}(\.[0-9]+){0,2})$ ]] ||
		die "--driver-branch must be a branch like $NVIDIA_DEFAULT_BRANCH, an exact version like $NVIDIA_DEFAULT_BRANCH.MINOR.PATCH, or 'latest' (got '$DRIVER_BRANCH')"
	[[ $DOCKER_SOURCE =~ ^(docker|debian)$ ]] || die "--docker must be docker or debian (got '$DOCKER_SOURCE')"
	[[ $VARIANT =~ ^(auto|cuda|cpu)$ ]] || die "--variant must be auto, cuda or cpu (got '$VARIANT')"
	[[ $VARIANT == auto ]] && VARIANT=$(auto_variant)
	if [[ -n $TAILSCALE_TAGS ]]; then
		local tag
		IFS=, read -ra tags <<<"$TAILSCALE_TAGS"
		for tag in "${tags[@]}"; do
			[[ $tag =~ ^tag:[A-Za-z0-9][A-Za-z0-9-]*$ ]] ||
				die "--tailscale-tags: '$tag' is not an ACL tag; write them like tag:gpu,tag:puffertank"
		done
	fi
	if [[ -n $TAILSCALE_AUTHKEY_FILE && ! -r $TAILSCALE_AUTHKEY_FILE ]]; then
		die "--tailscale-authkey-file: cannot read $TAILSCALE_AUTHKEY_FILE"
	fi
	if [[ -n $IMAGE_LOAD && ! -r $IMAGE_LOAD ]]; then
		die "--image-load: cannot read $IMAGE_LOAD (make it with: docker save puffertank/lib:$VARIANT -o FILE)"
	fi
	if [[ -n $REGISTRY_URL ]]; then
		local checked rc=0
		checked=$(settings_py check registry "$REGISTRY_URL" 2>&1) || rc=$?
		if ((rc == 2)); then
			printf 'setup-host.sh: --registry-url: %s\n' "${checked#settings.py: error: }" >&2
			exit 2
		fi
		((rc == 0)) || say "note: --registry-url is checked once python3 is installed (the base-tools step)"
	fi
	if [[ -n $IMAGE_LOAD && ( -n $REGISTRY_URL || $SERVE_REGISTRY == 1 ) ]]; then
		die "--image-load and the fleet registry (--registry, --registry-url) do not go together: pass one"
	fi
	if [[ -n $TARGET_USER ]] && ! id "$TARGET_USER" >/dev/null 2>&1; then
		die "--user: no such user '$TARGET_USER'"
	fi
	check_driver_matches_image
}

# The image's torch and the host driver must agree (cuda.toml: the driver each CUDA release needs).
check_driver_matches_image() {
	step_enabled image || return 0
	[[ $VARIANT == cuda && -z $IMAGE_LOAD ]] || return 0
	local cuda branch floor full
	cuda=$(image_cuda_version)
	branch=$(planned_driver_branch)
	[[ -n $branch && $cuda != unknown ]] || return 0
	read -r floor full < <(driver_needed_for_cuda "$cuda")
	if ((floor == 0)); then
		say "note: $CUDA_FACTS_FILE does not know CUDA $cuda; cannot tell whether driver $branch runs the image."
		return 0
	fi
	if ((branch < floor)); then
		die "driver/CUDA mismatch: the image's torch is built for CUDA $cuda, which needs NVIDIA driver >= $floor, but this plan leaves driver $branch on the host$([[ $DRIVER_SOURCE == debian ]] && echo " (Debian 12's non-free nvidia-driver is $DEBIAN_BRANCH: CUDA <= $(cuda_supported_by_branch "$DEBIAN_BRANCH"))"). Fix: use --driver cuda (NVIDIA's repository, branch >= $floor), or build an older-CUDA torch with --torch-index $CU12_TORCH_INDEX, or --skip image."
	fi
	if ((full == 0)); then
		say "note: driver $branch runs the image's CUDA $cuda build through CUDA minor-version compatibility ($CUDA_FACTS_FILE names no driver with full support); PTX JIT of newer kernels may fail."
	elif ((branch < full)); then
		say "note: driver $branch runs the image's CUDA $cuda build through CUDA minor-version compatibility (full support from $full); PTX JIT of newer kernels may fail."
	fi
}

# ---- steps -------------------------------------------------------------------------------------------------
step_base_tools() {
	local headers
	headers=linux-headers-$(uname -r)
	if ! pkg_installed "$headers"; then
		apt_update
		if ! pkg_has_candidate "$headers"; then
			warn "no $headers package for the running kernel ($(uname -r) is not a current Debian kernel); installing linux-headers-amd64 instead: DKMS builds the NVIDIA module for Debian's kernel, so boot it (apt-get install linux-image-amd64; reboot)"
			headers=linux-headers-amd64
		fi
	fi
	apt_install --no-recommends git vim tmux htop curl ca-certificates gnupg build-essential "$headers" \
		pciutils mokutil python3 python3-venv
}

# Debian's contrib/non-free/non-free-firmware components for every bookworm suite already configured
# with main. Our own list file is left out when looking, so the result is the same on every run.
nonfree_sources() {
	# shellcheck disable=SC2016  # $(FIELD) is apt's format syntax, not a shell expansion
	apt-get "${APT_READONLY[@]}" indextargets --no-release-info --format '$(RELEASE) $(COMPONENT) $(REPO_URI) $(SOURCESENTRY)' \
		'Identifier: Packages' 2>/dev/null | sort -u | awk -v ours="$NONFREE_LIST" -v key="$DEBIAN_KEYRING" '
		index($4, ours ":") == 1 { next }
		$1 ~ /^bookworm(-updates|-security)?$/ { have[$1 " " $2] = 1; if ($2 == "main") uri[$1] = $3 }
		END {
			n = split("bookworm bookworm-updates bookworm-security", suites, " ")
			for (i = 1; i <= n; i++) {
				s = suites[i]; if (!(s in uri)) continue
				comps = ""
				split("contrib non-free non-free-firmware", want, " ")
				for (j = 1; j <= 3; j++) if (!((s " " want[j]) in have)) comps = comps " " want[j]
				if (comps != "") printf "deb [signed-by=%s] %s %s%s\n", key, uri[s], s, comps
			}
		}'
}

driver_debian() {
	local lines
	lines=$(nonfree_sources)
	if [[ -n $lines ]]; then
		ensure_file "$NONFREE_LIST" 0644 "# Written by PufferTank setup-host.sh: Debian's non-free components, for nvidia-driver.
$lines"
		((STEP_ACTIONS)) && apt_sources_changed
	fi
	local floor full
	read -r floor full < <(driver_needed_for_cuda "$IMAGE_DEFAULT_CUDA")
	warn "Debian 12's nvidia-driver is the $DEBIAN_BRANCH branch (CUDA <= $(cuda_supported_by_branch "$DEBIAN_BRANCH")): it cannot run the default cuda image (PyPI torch for CUDA $IMAGE_DEFAULT_CUDA needs driver >= $floor). Build the image with --torch-index $CU12_TORCH_INDEX, or use --driver cuda."
	# A compute box: no recommends (nvidia-settings and the desktop pieces), but what CUDA and the container
	# toolkit need. Desktops add: apt-get install nvidia-settings.
	apt_install --driver --no-recommends nvidia-driver firmware-misc-nonfree nvidia-smi libcuda1 nvidia-persistenced
}

# NVIDIA's CUDA repository: its signing key (checked against the pinned fingerprint) and a signed-by source.
# Not NVIDIA's cuda-keyring .deb: that is a package run as root before anything has checked it, and its
# sha256 is not published where this script could pin it. A host that already has cuda-keyring keeps its
# key and source (two sources for one repository would conflict), with the key checked all the same.
cuda_repo_source() {
	if pkg_installed cuda-keyring; then
		if ((DRY_RUN)) && ! command -v gpg >/dev/null 2>&1; then
			info "would check $CUDA_KEYRING_PKG_KEY (from cuda-keyring) against fingerprint $CUDA_REPO_KEY_FPR"
			return 0
		fi
		ensure_gpg
		verify_key "$CUDA_KEYRING_PKG_KEY" "$CUDA_REPO_KEY_FPR" "$CUDA_KEYRING_PKG_KEY (installed by cuda-keyring)" \
			"Fix: sudo apt-get purge cuda-keyring, then run this step again: it adds NVIDIA's repository with the pinned key."
		return 0
	fi
	local before=$STEP_ACTIONS
	ensure_keyring "$CUDA_REPO/3bf863cc.pub" "$KEYRING_DIR/cuda-archive-keyring.asc" "$CUDA_REPO_KEY_FPR"
	ensure_file "$CUDA_LIST" 0644 "deb [signed-by=$KEYRING_DIR/cuda-archive-keyring.asc] $CUDA_REPO/ /"
	((STEP_ACTIONS == before)) || apt_sources_changed
}

driver_cuda() {
	cuda_repo_source
	local pkgs=()
	if [[ $DRIVER_BRANCH != latest ]]; then
		# NVIDIA's pinning package holds the driver to a branch or an exact version (BRANCH.MINOR.PATCH).
		pkgs+=("nvidia-driver-pinning-$DRIVER_BRANCH")
	fi
	if [[ $DRIVER_FLAVOR == open ]]; then pkgs+=(nvidia-open); else pkgs+=(cuda-drivers); fi
	if ((!DRY_RUN)) && [[ $DRIVER_BRANCH != latest ]] && ! pkg_installed "${pkgs[0]}"; then
		apt_update
		pkg_has_candidate "${pkgs[0]}" ||
			die "NVIDIA's repository has no ${pkgs[0]}. Fix: pick a branch it has (apt-cache search --names-only nvidia-driver-pinning), or --driver-branch latest"
	fi
	apt_install --driver "${pkgs[@]}"
}

step_nvidia_driver() {
	local gpus
	if ! gpus=$(host_fact gpus | tr '\n' ' '); then
		info "cannot list the GPUs yet: python3 is missing (the base-tools step installs it)"
	elif [[ -z $gpus ]]; then
		warn "no NVIDIA GPU found on the PCI bus; installing the driver anyway"
	else
		info "NVIDIA GPU(s) at: $gpus"
	fi
	case $DRIVER_SOURCE in
	none)
		info "--driver none: leaving the driver alone"
		return 0
		;;
	esac
	if command -v nvidia-smi >/dev/null 2>&1 && ! dpkg -S "$(readlink -f "$(command -v nvidia-smi)")" >/dev/null 2>&1; then
		warn "an NVIDIA driver not installed by apt (a .run installer?) is present; leaving it alone (use --driver none to silence this)"
		return 0
	fi
	local sb
	sb=$(host_fact secure-boot) || sb="unknown (python3 is missing)"
	if [[ $sb == enabled ]]; then
		warn "$(host_fact mok-advice)"
	else
		info "Secure Boot: $sb"
	fi
	if [[ $DRIVER_SOURCE == debian ]]; then driver_debian; else driver_cuda; fi
}

step_docker() {
	local other=""
	if [[ $DOCKER_SOURCE == debian ]]; then
		pkg_installed docker-ce && other="docker-ce (Docker's repository)"
	else
		pkg_installed docker.io && other="docker.io (Debian's package)"
	fi
	if [[ -n $other ]]; then
		warn "Docker is already installed as $other; keeping it. To switch, remove it (apt-get purge) and run this step again."
	else
		if [[ $DOCKER_SOURCE == docker ]]; then
			ensure_keyring https://download.docker.com/linux/debian/gpg "$KEYRING_DIR/docker.asc" "$DOCKER_KEY_FPR"
			ensure_file "$DOCKER_LIST" 0644 \
				"deb [arch=amd64 signed-by=$KEYRING_DIR/docker.asc] https://download.docker.com/linux/debian bookworm stable"
			((STEP_ACTIONS)) && apt_sources_changed
			local pinned=()
			mapfile -t pinned < <(pin "$DOCKER_VERSION" docker-ce docker-ce-cli)
			apt_install "${pinned[@]}" containerd.io docker-buildx-plugin docker-compose-plugin
		else
			local pinned=()
			mapfile -t pinned < <(pin "$DOCKER_VERSION" docker.io)
			apt_install "${pinned[@]}"
		fi
	fi
	ensure_service docker
}

ensure_service() {
	local unit=$1
	if ! have_systemd; then
		if ((DRY_RUN)) || in_container; then
			warn "systemd is not running here (a container?): start $unit yourself"
			return 0
		fi
		die "systemd is not running: cannot enable $unit"
	fi
	if systemctl is-enabled --quiet "$unit" 2>/dev/null && systemctl is-active --quiet "$unit"; then
		return 0
	fi
	act systemctl enable --now "$unit"
}

restart_service() {
	if have_systemd; then act systemctl restart "$1"; else warn "systemd is not running: restart $1 yourself"; fi
}

step_nvidia_toolkit() {
	ensure_keyring https://nvidia.github.io/libnvidia-container/gpgkey "$KEYRING_DIR/nvidia-container-toolkit.asc" \
		"$TOOLKIT_KEY_FPR"
	# Stable channel only; apt expands $(ARCH).
	# shellcheck disable=SC2016
	ensure_file "$TOOLKIT_LIST" 0644 \
		"deb [signed-by=$KEYRING_DIR/nvidia-container-toolkit.asc] https://nvidia.github.io/libnvidia-container/stable/deb/\$(ARCH) /"
	((STEP_ACTIONS)) && apt_sources_changed
	local pkgs=()
	mapfile -t pkgs < <(pin "$TOOLKIT_VERSION" nvidia-container-toolkit nvidia-container-toolkit-base \
		libnvidia-container-tools libnvidia-container1)
	apt_install "${pkgs[@]}"
	toolkit_configure_docker
}

# The runtimes the running engine reports (JSON), empty when it does not answer.
docker_runtimes() { docker info --format '{{json .Runtimes}}' 2>/dev/null || true; }

# Give Docker the nvidia runtime. Decided from the runtimes the running engine reports, not from
# daemon.json: a run stopped between `nvidia-ctk runtime configure` and the restart leaves daemon.json
# naming the runtime and the engine without it, and a daemon.json test would skip this on every re-run.
toolkit_configure_docker() {
	[[ $(docker_runtimes) == *'"nvidia"'* ]] && return 0
	if [[ -f /etc/docker/daemon.json ]] && grep -q '"nvidia"' /etc/docker/daemon.json; then
		info "daemon.json names the nvidia runtime but the running engine does not have it (an earlier run stopped before restarting Docker?): restarting Docker"
	else
		act nvidia-ctk runtime configure --runtime=docker
	fi
	restart_service docker
}

step_tailscale() {
	ensure_keyring https://pkgs.tailscale.com/stable/debian/bookworm.noarmor.gpg "$KEYRING_DIR/tailscale.gpg" \
		"$TAILSCALE_KEY_FPR"
	ensure_file "$TAILSCALE_LIST" 0644 \
		"deb [signed-by=$KEYRING_DIR/tailscale.gpg] https://pkgs.tailscale.com/stable/debian bookworm main"
	((STEP_ACTIONS)) && apt_sources_changed
	local pkgs=()
	mapfile -t pkgs < <(pin "$TAILSCALE_VERSION" tailscale)
	apt_install "${pkgs[@]}"
	ensure_service tailscaled
	tailscale_login
}

# `tailscale up --ssh` with the auth key from --tailscale-authkey-file or $TS_AUTHKEY. The key never reaches
# argv, output or the log: tailscale reads it from a file (`--auth-key=file:PATH`), and an error message of
# tailscale's that quotes it is masked (LOG_SECRET) before it is logged or shown. For $TS_AUTHKEY that file is a
# mode-600 temporary one, made here in the main shell (not in a $(...) subshell, whose clean-up registration
# would be lost) and deleted right after `tailscale up`; the EXIT trap deletes it on every other way out.
tailscale_login() {
	if ((!DRY_RUN)) && tailscale status >/dev/null 2>&1; then
		info "tailscale is up: $(tailscale ip -4 2>/dev/null | head -n1)"
		return 0
	fi
	local args=(--ssh)
	[[ -n $TAILSCALE_TAGS ]] && args+=("--advertise-tags=$TAILSCALE_TAGS")
	[[ -n $TAILSCALE_HOSTNAME ]] && args+=("--hostname=$TAILSCALE_HOSTNAME")
	[[ -n $TARGET_USER ]] && args+=("--operator=$TARGET_USER")
	local keyfile=$TAILSCALE_AUTHKEY_FILE made=""
	if [[ -z $keyfile && -n ${TS_AUTHKEY:-} ]]; then
		info "the auth key from \$TS_AUTHKEY goes through a mode-600 temporary file, deleted after use"
		if ((DRY_RUN)); then
			keyfile=/tmp/tmp.XXXXXXXXXX # what mktemp would make
		else
			made=$(mktemp) # mode 600 from the start: the key is never readable by others
			TMP_FILES+=("$made")
			printf '%s' "$TS_AUTHKEY" >"$made"
			keyfile=$made
		fi
	fi
	if [[ -z $keyfile ]]; then
		warn "no auth key (--tailscale-authkey-file FILE or TS_AUTHKEY): log in yourself with: sudo tailscale up $(show_cmd "${args[@]}")"
		return 0
	fi
	if ((!DRY_RUN)); then
		LOG_SECRET=$(<"$keyfile")
		LOG_SECRET=${LOG_SECRET//[[:space:]]/} # tailscale trims the file's whitespace too
	fi
	act tailscale up "--auth-key=file:$keyfile" "${args[@]}" --timeout=120s
	LOG_SECRET=""
	[[ -z $made ]] || rm -f -- "$made"
}

# The fleet's registry. --registry: Debian's docker-registry, bound to this box's Tailscale address (never
# 0.0.0.0), run by systemd with our config once tailscaled is up. Then, with --registry-url (or this box's
# own name under --registry): puffertank's settings file names it and Docker may talk plain HTTP to that
# one name (insecure-registries), which the tailnet's WireGuard encrypts (docs/fleet.md).
step_registry() {
	if ((!SERVE_REGISTRY)) && [[ -z $REGISTRY_URL ]]; then
		return 0
	fi
	if ((!DRY_RUN)) && ! command -v python3 >/dev/null 2>&1; then
		die "the registry step needs python3: run the base-tools step first (--only base-tools)"
	fi
	local port
	port=$(settings_py registry-port) || port="PORT"
	if ((SERVE_REGISTRY)); then
		serve_registry "$port"
	fi
	[[ -n $REGISTRY_URL ]] || return 0
	use_registry "$REGISTRY_URL"
}

# This box's Tailscale IPv4 address and MagicDNS name (placeholders in a dry run where tailscale is not up).
tailscale_address() {
	local ip=""
	ip=$(tailscale ip -4 2>/dev/null | head -n1) || ip=""
	if [[ -z $ip ]]; then
		((DRY_RUN)) || die "the registry is served on the Tailscale address, and tailscale has none here: run the tailscale step first (tailscale up)"
		ip=TAILSCALE-IP
	fi
	printf '%s' "$ip"
}

tailscale_name() {
	local name=""
	name=$(tailscale status --json 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["Self"]["DNSName"].rstrip("."))' 2>/dev/null) || name=""
	if [[ -z $name ]]; then
		((DRY_RUN)) || die "no MagicDNS name for this box (tailscale status --json): pass --registry-url HOST:PORT"
		name=THIS-BOX.TAILNET.ts.net
	fi
	printf '%s' "$name"
}

# --registry without --registry-url: the fleet finds this box's registry by its MagicDNS name.
ensure_registry_url() {
	((SERVE_REGISTRY)) && [[ -z $REGISTRY_URL ]] || return 0
	local port
	port=$(settings_py registry-port) || port="PORT"
	REGISTRY_URL="$(tailscale_name):$port"
}

serve_registry() {
	local port=$1 ip running=0
	ip=$(tailscale_address)
	ensure_registry_url
	if have_systemd && systemctl is-active --quiet docker-registry 2>/dev/null; then running=1; fi
	ensure_file "$REGISTRY_CONFIG" 0644 "# the fleet's registry, written by provision/setup-host.sh --registry (docs/fleet.md)
version: 0.1
log:
  fields:
    service: registry
storage:
  filesystem:
    rootdirectory: $REGISTRY_STORAGE
  delete:
    enabled: true
http:
  addr: $ip:$port
  headers:
    X-Content-Type-Options: [nosniff]"
	local config_changed=$STEP_ACTIONS
	# Written before the package is installed, so its first start already uses our config.
	ensure_file "$REGISTRY_DROPIN" 0644 "[Unit]
After=tailscaled.service network-online.target
Wants=tailscaled.service network-online.target

[Service]
ExecStart=
ExecStart=/usr/bin/docker-registry serve $REGISTRY_CONFIG
Restart=on-failure
RestartSec=5"
	if ((STEP_ACTIONS)) && have_systemd; then act systemctl daemon-reload; fi
	apt_install --no-recommends docker-registry
	ensure_service docker-registry
	if ((config_changed && running)); then restart_service docker-registry; fi
	info "registry served at http://$ip:$port (reachable on the tailnet only) as $REGISTRY_URL"
}

use_registry() {
	local url=$1 current=""
	current=$(settings_py get registry 2>/dev/null) || current=""
	if [[ $current != "$url" ]]; then
		act python3 "$CHECKOUT_DIR/pufferlib/tank/settings.py" set registry "$url"
	fi
	local wanted before=$STEP_ACTIONS
	if wanted=$(settings_py daemon-json "$DAEMON_JSON" "$url"); then
		ensure_file "$DAEMON_JSON" 0644 "$wanted"
	elif ((DRY_RUN)); then
		note_action
		info "would add $url to insecure-registries in $DAEMON_JSON (python3 is installed by the base-tools step)"
	else
		die "cannot add $url to $DAEMON_JSON: $(settings_py daemon-json "$DAEMON_JSON" "$url" 2>&1 | head -n1)"
	fi
	if ((STEP_ACTIONS > before)); then restart_service docker; fi
}

step_docker_group() {
	if [[ -z $TARGET_USER || $TARGET_USER == root ]]; then
		warn "no user to add to the docker group (pass --user NAME, or run through sudo)"
		return 0
	fi
	if id -nG "$TARGET_USER" | tr ' ' '\n' | grep -qx docker; then
		return 0
	fi
	if ((!DRY_RUN)) && ! getent group docker >/dev/null; then
		die "group 'docker' does not exist: run the docker step first (--only docker)"
	fi
	act usermod -aG docker "$TARGET_USER"
	info "$TARGET_USER must log out and back in for the group to take effect"
}

# The image ID a `docker save` tarball holds (sha256:...).
tarball_image_id() {
	local config
	config=$(tar -xOf "$1" manifest.json 2>/dev/null | grep -oE '"Config":"[^"]+"' | head -n1 | cut -d'"' -f4)
	config=${config##*/}
	config=${config%.json}
	[[ -n $config ]] && printf 'sha256:%s' "$config"
}

# pip install pufferlib[tank] (the `puffertank` command) into VENV from a copy of REPO: building in the
# checkout itself would leave root-owned build files in the user's tree.
install_host_tools() {
	local repo=$1 venv=$2 copy
	copy=$(mktemp -d)
	TMP_FILES+=("$copy")
	cp -r "$repo/pyproject.toml" "$repo/pufferlib" "$copy/"
	if [[ -f $repo/README.md ]]; then cp "$repo/README.md" "$copy/"; else echo "PufferTank" >"$copy/README.md"; fi
	"$venv/bin/pip" install --quiet "${copy}[tank]"
}

# The host tooling (`puffertank`, its doctor) in $VENV_DIR, linked from /usr/local/bin, from checkout REPO.
ensure_host_tooling() {
	local repo=$1
	[[ -x $VENV_DIR/bin/python ]] || act python3 -m venv "$VENV_DIR"
	[[ -x $VENV_DIR/bin/puffertank ]] || act install_host_tools "$repo" "$VENV_DIR"
	if [[ $(readlink /usr/local/bin/puffertank 2>/dev/null) != "$VENV_DIR/bin/puffertank" ]]; then
		act ln -sfn "$VENV_DIR/bin/puffertank" /usr/local/bin/puffertank
	fi
}

step_image() {
	local tag=puffertank/lib:$VARIANT
	if ! command -v docker >/dev/null 2>&1 && ((!DRY_RUN)); then
		die "docker is not installed: run the docker step first (--only docker)"
	fi
	local have=""
	have=$(docker image inspect -f '{{.Id}}' "$tag" 2>/dev/null) || have=""
	if [[ -n $IMAGE_LOAD ]]; then
		local want
		want=$(tarball_image_id "$IMAGE_LOAD") || die "--image-load: $IMAGE_LOAD is not a 'docker save' tarball (no manifest.json)"
		if [[ -n $have && $have == "$want" ]]; then
			info "$tag already loaded (${have:7:12})"
			return 0
		fi
		act docker load -i "$IMAGE_LOAD"
		return 0
	fi
	if [[ -n $have ]]; then
		info "$tag present (${have:7:12}); rebuild after changes with: puffertank build --variant $VARIANT"
		if [[ -n $REGISTRY_URL ]] || ((SERVE_REGISTRY)); then
			info "share it with the fleet: puffertank push; on the other boxes: puffertank pull"
		fi
		return 0
	fi
	local repo=${REPO_DIR:-$CHECKOUT_DIR}
	[[ -f $repo/pyproject.toml && -f $repo/Dockerfile.base ]] ||
		die "no PufferTank checkout at $repo (pass --repo DIR, or --image-load FILE)"
	ensure_host_tooling "$repo"
	ensure_registry_url
	if [[ -n $REGISTRY_URL ]] && ((!SERVE_REGISTRY)); then
		# box 2..N: the image box 1 built and pushed, only the layers it lacks (docs/fleet.md)
		act "$VENV_DIR/bin/puffertank" pull --registry "$REGISTRY_URL" --variant "$VARIANT"
		return 0
	fi
	# The image's user gets the researcher's UID/GID: files in mounted folders stay theirs, and the dev
	# container has nothing to renumber (so its venv stays writable).
	local build=("$VENV_DIR/bin/puffertank" build --variant "$VARIANT" --source "$repo")
	if [[ -n $TARGET_USER && $TARGET_USER != root ]]; then
		build+=(--uid "$(id -u "$TARGET_USER")" --gid "$(id -g "$TARGET_USER")")
	fi
	[[ -n $TORCH_INDEX ]] && build+=(--torch-index "$TORCH_INDEX")
	act "${build[@]}"
	if ((SERVE_REGISTRY)); then
		act "$VENV_DIR/bin/puffertank" push --registry "$REGISTRY_URL" --variant "$VARIANT"
	fi
}

# ---- verify: doctor's checks and setup's own, in a readable report ------------------------------------------
VERIFY_LINES=()
report() {
	local status=$1 name=$2 detail=$3 fix=${4:-}
	VERIFY_LINES+=("$(printf '%-5s %-22s %s' "$status" "$name" "$detail")")
	[[ -n $fix ]] && VERIFY_LINES+=("$(printf '%-28s fix: %s' '' "$fix")")
	[[ $status == FAIL ]] && VERIFY_FAILED=1
	return 0
}

# The host checks are `puffertank doctor`'s, from the host tooling in $VENV_DIR (installed first where it
# is missing, as the image step installs it): one set of checks for setup and for later. Setup adds what
# doctor cannot know: the OS, the image's torch seeing the GPU, and the user it set up.
step_verify() {
	local doctor=$VENV_DIR/bin/puffertank
	if ((DRY_RUN)); then
		[[ -x $doctor ]] || info "would install the host tooling into $VENV_DIR (as the image step does)"
		info "would run: $(show_cmd "$doctor" doctor --json) and report its checks"
		[[ $VARIANT == cuda ]] && info "    its gpu-in-container check: docker run --rm --gpus all puffertank/lib:cuda nvidia-smi -L"
		verify_torch_cuda
		return 0
	fi
	report PASS os "$(os_field PRETTY_NAME), kernel $(uname -r)"
	if verify_tooling_ready; then verify_with_doctor "$doctor"; fi
	verify_torch_cuda
	verify_docker_group
	say ""
	local line
	for line in "${VERIFY_LINES[@]}"; do info "$line"; done
	[[ -x $doctor ]] && info "Again later: puffertank doctor"
	return 0
}

# Install the host tooling where it is missing; where it cannot be (no python3 with venv yet, no checkout
# to install from) a FAIL line says what to run, and false.
verify_tooling_ready() {
	[[ -x $VENV_DIR/bin/puffertank ]] && return 0
	local repo=${REPO_DIR:-$CHECKOUT_DIR}
	if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
		report FAIL host-tooling "python3 (with venv) is missing, so puffertank doctor cannot be installed to check this host" \
			"sudo $0 --only base-tools,verify"
	elif [[ ! -f $repo/pyproject.toml ]]; then
		report FAIL host-tooling "no PufferTank checkout at $repo to install puffertank doctor from" "pass --repo DIR"
	else
		ensure_host_tooling "$repo"
		return 0
	fi
	return 1
}

# doctor's JSON ({"checks": [{"name", "status", "detail", "fix"}, ...]}) as tab-separated lines.
# shellcheck disable=SC2016  # Python source
readonly DOCTOR_JSON_TO_LINES='
import json, sys
checks = json.load(sys.stdin)["checks"]
for c in checks:
    fields = (c["status"].upper(), c["name"], c["detail"], c.get("fix") or "")
    print("\t".join(" ".join(str(f).split()) for f in fields))
'

# Report doctor's checks; one FAIL line when it gives no readable report (a broken install).
verify_with_doctor() {
	local doctor=$1 json rc=0 lines
	log "+ $doctor doctor --json"
	json=$(timeout 900 "$doctor" doctor --json 2>>"$LOG_FILE") || rc=$?
	if ((rc > 1)) || ! lines=$(printf '%s' "$json" | "$VENV_DIR/bin/python" -c "$DOCTOR_JSON_TO_LINES" 2>>"$LOG_FILE") ||
		[[ -z $lines ]]; then
		report FAIL doctor "puffertank doctor --json gave no report (exit $rc; see $LOG_FILE)" \
			"reinstall the host tooling: sudo rm -rf $VENV_DIR && sudo $0 --only verify"
		return 0
	fi
	local status name detail fix
	while IFS=$'\t' read -r status name detail fix; do
		# Before the reboot a new driver needs, the GPU checks cannot pass yet: that is expected.
		if ((REBOOT_REQUIRED)) && [[ $status == FAIL && $name =~ ^(nvidia|gpu|driver) ]]; then
			status=WARN
			fix="reboot (the new driver loads then), then: sudo $0 --only verify"
		fi
		report "$status" "$name" "$detail" "$fix"
	done <<<"$lines"
	return 0
}

# Setup's own end-to-end check: the image it built sees the GPU from torch (doctor checks the host).
verify_torch_cuda() {
	[[ $VARIANT == cuda ]] || return 0
	local image=puffertank/lib:cuda out
	local probe=(docker run --rm --label puffertank.verify=1 --gpus all "$image" python -c
		'import torch; assert torch.cuda.is_available(), "no CUDA"; print("torch", torch.__version__, "CUDA", torch.version.cuda, torch.cuda.get_device_name(0))')
	if ((DRY_RUN)); then
		info "would run: $(show_cmd "${probe[@]}")"
		return 0
	fi
	if [[ $(docker_runtimes) != *'"nvidia"'* ]] || ! docker image inspect "$image" >/dev/null 2>&1; then
		report WARN torch-cuda "skipped (no NVIDIA runtime in Docker, or no $image)"
	elif out=$(timeout 300 "${probe[@]}" 2>&1); then
		report PASS torch-cuda "$(tail -n1 <<<"$out")"
	else
		report FAIL torch-cuda "$(tail -n1 <<<"$out")" "driver too old for the image's CUDA? see driver-vs-cuda"
	fi
}

verify_docker_group() {
	[[ -n $TARGET_USER && $TARGET_USER != root ]] || return 0
	if id -nG "$TARGET_USER" | tr ' ' '\n' | grep -qx docker; then
		report PASS docker-group "$TARGET_USER is in group docker"
	else
		report WARN docker-group "$TARGET_USER is not in group docker" "sudo $0 --only docker-group --user $TARGET_USER"
	fi
}

# ---- main --------------------------------------------------------------------------------------------------
run_step() {
	local step=$1 fn=step_${1//-/_}
	CURRENT_STEP=$step
	if ! step_enabled "$step"; then
		STEP_RESULT[$step]=skipped
		return 0
	fi
	say ""
	say "==> $step"
	STEP_ACTIONS=0
	log "== step $step"
	"$fn"
	local n="$STEP_ACTIONS actions"
	((STEP_ACTIONS == 1)) && n="1 action"
	if [[ $step == verify ]]; then
		STEP_RESULT[$step]=$( ((VERIFY_FAILED)) && echo "failed (see the report above)" || echo checked)
	elif ((STEP_ACTIONS == 0)); then
		info "ok: nothing to do"
		STEP_RESULT[$step]=unchanged
	elif ((DRY_RUN)); then
		STEP_RESULT[$step]="would change ($n)"
	else
		STEP_RESULT[$step]="changed ($n)"
	fi
	CURRENT_STEP=""
}

summary() {
	say ""
	say "==> Summary"
	local step
	for step in "${STEPS[@]}"; do info "$(printf '%-15s %s' "$step" "${STEP_RESULT[$step]:-skipped}")"; done
	local w
	for w in "${WARNINGS[@]}"; do info "warning: $w"; done
	say ""
	if ((DRY_RUN)); then
		say "Dry run: $TOTAL_ACTIONS actions planned; nothing was changed."
	elif ((TOTAL_ACTIONS == 0 && VERIFY_FAILED)); then
		say "Nothing changed, but verify found problems: see its report above for the fixes."
	elif ((TOTAL_ACTIONS == 0)); then
		say "Nothing changed: this host already matches the plan."
	else
		say "Done: $TOTAL_ACTIONS actions. Log: $LOG_FILE"
	fi
	((REBOOT_REQUIRED)) && say "Reboot required to load the new NVIDIA driver; then run: sudo $0 --only verify"
	return 0
}

parse_args() {
	local v
	while (($#)); do
		case $1 in
		--dry-run) DRY_RUN=1 ;;
		--registry) SERVE_REGISTRY=1 ;;
		--verbose) VERBOSE=1 ;;
		--only | --skip)
			[[ $# -ge 2 ]] || die "$1 needs a step name; steps are: ${STEPS[*]}"
			IFS=, read -ra v <<<"$2"
			if [[ $1 == --only ]]; then ONLY+=("${v[@]}"); else SKIP+=("${v[@]}"); fi
			shift
			;;
		--list-steps)
			printf '%s\n' "${STEPS[@]}"
			exit 0
			;;
		-h | --help)
			usage
			exit 0
			;;
		--driver | --driver-branch | --driver-flavor | --docker | --docker-version | --toolkit-version | \
			--tailscale-authkey-file | --tailscale-tags | --tailscale-hostname | --tailscale-version | --user | \
			--variant | --torch-index | --image-load | --repo | --registry-url)
			[[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"
			case $1 in
			--driver) DRIVER_SOURCE=$2 ;;
			--driver-branch) DRIVER_BRANCH=$2 ;;
			--driver-flavor) DRIVER_FLAVOR=$2 ;;
			--docker) DOCKER_SOURCE=$2 ;;
			--docker-version) DOCKER_VERSION=$2 ;;
			--toolkit-version) TOOLKIT_VERSION=$2 ;;
			--tailscale-authkey-file) TAILSCALE_AUTHKEY_FILE=$2 ;;
			--tailscale-tags) TAILSCALE_TAGS=$2 ;;
			--tailscale-hostname) TAILSCALE_HOSTNAME=$2 ;;
			--tailscale-version) TAILSCALE_VERSION=$2 ;;
			--user) TARGET_USER=$2 ;;
			--variant) VARIANT=$2 ;;
			--torch-index) TORCH_INDEX=$2 ;;
			--image-load) IMAGE_LOAD=$2 ;;
			--repo) REPO_DIR=$2 ;;
			--registry-url) REGISTRY_URL=$2 ;;
			esac
			shift
			;;
		*) die "unknown option '$1' (see --help)" ;;
		esac
		shift
	done
}

main() {
	load_cuda_facts
	parse_args "$@"
	DRIVER_BRANCH=${DRIVER_BRANCH:-$NVIDIA_DEFAULT_BRANCH}
	# Tailscale's conventional variable; accept the long spelling too. Children never see it.
	TS_AUTHKEY=${TS_AUTHKEY:-${TAILSCALE_AUTHKEY:-}}
	export -n TS_AUTHKEY TAILSCALE_AUTHKEY 2>/dev/null || true
	check_os
	check_root "$@"
	validate_options
	install_traps
	if ((!DRY_RUN)); then
		open_log
		log "setup-host.sh $(show_cmd "$@")"
	fi
	say "PufferTank host setup on $(os_field PRETTY_NAME)$( ((DRY_RUN)) && echo ' (dry run: nothing will change)')"
	say "driver: $DRIVER_SOURCE$([[ $DRIVER_SOURCE == cuda ]] && echo " ($DRIVER_FLAVOR, branch $DRIVER_BRANCH)"), docker: $DOCKER_SOURCE, image: puffertank/lib:$VARIANT"
	local step
	for step in "${STEPS[@]}"; do run_step "$step"; done
	summary
	((VERIFY_FAILED)) && exit 1
	return 0
}

# Run when executed; when sourced (tests/provision call single steps' functions) only define them.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	main "$@"
fi
