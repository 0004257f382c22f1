#!/usr/bin/env bash
# Builds unprotect-cost.c against the system's libsrtp2 and measures every suite, authentic and
# forged (docs/ARCHITECTURE.md, "SRTP on the receive thread").
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
binary="$(mktemp -d /tmp/roomtap-srtp.XXXXXX)/unprotect-cost"
"${CC:-clang}" -O2 -g -rdynamic -o "$binary" "$here/unprotect-cost.c" $(pkg-config --cflags --libs libsrtp2)
for suite in 80 32 128; do
  for forged in 0 1; do "$binary" "$suite" "$forged" "${PACKETS:-200000}"; done
done
