#!/usr/bin/env bash
# Dev container initializeCommand (runs on the host, in the workspace folder): make sure the image named in
# devcontainer.json exists. Picks the variant for this host, builds it with `puffertank build` when it is
# missing (unchanged stages are reused), and tags it puffertank/devcontainer.
#   PUFFERTANK_VARIANT=cpu|cuda          force a variant (default: cuda when an NVIDIA GPU is present)
#   PUFFERTANK_DEVCONTAINER_IMAGE=IMG    use IMG as it is (devcontainer.json reads the same variable)
set -euo pipefail

say() { printf 'ensure-image: %s\n' "$*" >&2; }
die() {
	say "error: $*"
	exit 1
}

command -v docker >/dev/null 2>&1 || die "no docker command on this host. Fix: sudo provision/setup-host.sh --only docker"
docker info >/dev/null 2>&1 || die "the Docker engine is not reachable. Fix: start it (sudo systemctl start docker) or join the docker group (sudo usermod -aG docker \$USER, then log in again)"

if [[ -n ${PUFFERTANK_DEVCONTAINER_IMAGE:-} ]]; then
	docker image inspect "$PUFFERTANK_DEVCONTAINER_IMAGE" >/dev/null 2>&1 ||
		die "PUFFERTANK_DEVCONTAINER_IMAGE=$PUFFERTANK_DEVCONTAINER_IMAGE is not a local image. Fix: build it, or unset the variable"
	say "using $PUFFERTANK_DEVCONTAINER_IMAGE"
	exit 0
fi

variant=${PUFFERTANK_VARIANT:-auto}
if [[ $variant == auto ]]; then
	# The host tooling's one rule (cuda when an NVIDIA GPU is on the PCI bus); standard library only.
	variant=$(python3 pufferlib/tank/variant.py)
fi
[[ $variant == cpu || $variant == cuda ]] || die "PUFFERTANK_VARIANT must be cpu or cuda (got '$variant')"
image=puffertank/lib:$variant

if ! docker image inspect "$image" >/dev/null 2>&1; then
	if command -v puffertank >/dev/null 2>&1; then
		say "$image is missing: building it (puffertank build --variant $variant)"
		puffertank build --variant "$variant"
	else
		die "$image is missing and puffertank is not installed here. Fix: pip install -e '.[tank]' && puffertank build --variant $variant (or sudo provision/setup-host.sh --only image)"
	fi
fi
docker tag "$image" puffertank/devcontainer
say "puffertank/devcontainer -> $image ($(docker image inspect -f '{{.Id}}' "$image" | cut -c8-19))"
