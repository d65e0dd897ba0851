#!/usr/bin/env bash
# Installs the Debian packages SoftNDK builds with, and nothing that is already
# there. Safe to run any number of times. Needs root or sudo only when something
# is missing.
#   scripts/install-deps.sh        what the default build and its tests need (g++ only)
#   scripts/install-deps.sh fuzz   that, plus clang for the libFuzzer build
#                                  (cmake --preset fuzz; docs/fuzzing.md)
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libboost1.81-dev   # Boost.Asio 1.26; Boost 1.74's Asio does not build as C++20 with g++ 12
  libspdlog-dev libfmt-dev libcli11-dev
  catch2             # v2, run through CTest
  libdeflate-dev     # libdeflate_crc32() for the RoCEv2 ICRC (emulator/wire)
  libinih-dev        # INI parser of profiles and SOFTNDK_CONFIG (emulator/device/ini.cpp)
  tshark             # tests: captures (SOFTNDK_PCAP, softndk trace) decode with 0 malformed frames
  chromium           # tests: `softndk trace --html` renders in headless Chromium
  python3            # tests: the viewer's and the fabric's test drivers, the doc blocks (tests/docs)
  nftables           # tests: bench/netns.sh's loss and reordering on kernels without tc netem
)
if [ "${1:-}" = fuzz ]; then
  packages+=(clang-14 libclang-rt-14-dev)  # libFuzzer and ASan for clang (tests/fuzz)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
