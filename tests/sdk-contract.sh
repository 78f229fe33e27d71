#!/bin/sh
# sdk-contract.sh: the official openai and anthropic Python SDKs against
# the loopback server program (tests/sdk-contract.py says what is checked).
# It skips (exit 77) where python3, or either SDK, cannot be imported.
srcdir=${KEVO_SRCDIR:-.}
builddir=${KEVO_BUILDDIR:-.}
serve=$builddir/tests/loopback-serve
if ! command -v python3 >/dev/null 2>&1; then
  echo "1..0 # SKIP python3 not found"
  exit 77
fi
if ! python3 -c 'import openai, anthropic' >/dev/null 2>&1; then
  echo "1..0 # SKIP the openai and anthropic Python packages are not installed"
  exit 77
fi
if [ ! -x "$serve" ]; then
  echo "Bail out! $serve not built"
  exit 1
fi
exec python3 "$srcdir/tests/sdk-contract.py" "$serve" \
  "$srcdir/tests/data/llm-variants"
