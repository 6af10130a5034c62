#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Install (Debian 12, apt-get only) what the deployment artefacts and their
# slow tests need beyond scripts/deps.sh: mmdebstrap for root file systems
# from Debian's archive, podman and runc for the image, ansible and
# ansible-lint for the role. Idempotent, like deps.sh (it is
# `scripts/deps.sh --deploy`): installs only what is missing and prints
# nothing when everything is there.
set -euo pipefail

case "${1:-}" in
-h|--help)
	cat <<'USAGE'
Usage: scripts/deps-deploy.sh [--help]

Installs the Debian packages that scripts/deps.sh installs, and those
that scripts/image.sh, deploy/ansible and scripts/test-deploy.sh need.
USAGE
	exit 0 ;;
"") ;;
*) echo "deps-deploy.sh: unknown option '$1' (see --help)" >&2; exit 1 ;;
esac
exec bash "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/deps.sh" --deploy
