#!/bin/sh
# prm_abi_test.sh SOURCE_DIR
# docs/prm.md states the ABI version ("ABI version N") in its status line; it must be
# include/softndk/hw_interface.hpp's kAbiVersion. Fails naming both when they differ.
set -eu
src=$1
code=$(sed -n 's/^inline constexpr uint32_t kAbiVersion = \([0-9][0-9]*\);.*/\1/p' \
  "$src/include/softndk/hw_interface.hpp")
doc=$(sed -n 's/.*ABI version \([0-9][0-9]*\).*/\1/p' "$src/docs/prm.md" | head -n 1)
if [ -z "$code" ] || [ -z "$doc" ]; then
  echo "prm_abi_test: no kAbiVersion ('$code') or no 'ABI version N' in docs/prm.md ('$doc')" >&2
  exit 1
fi
if [ "$code" != "$doc" ]; then
  echo "prm_abi_test: docs/prm.md says ABI version $doc, hw_interface.hpp has kAbiVersion = $code" >&2
  exit 1
fi
echo "prm_abi_test: docs/prm.md and hw_interface.hpp agree: ABI version $code"
