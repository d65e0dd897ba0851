#!/bin/sh
# run-pkg-config.sh CMAKE BUILD_DIR WORK_DIR LIBDIR CC CONSUMER_C DRIVER_C
# Installs BUILD_DIR into WORK_DIR/prefix (emptied first) and builds, with nothing but the
# C compiler and pkg-config (PKG_CONFIG_PATH=<prefix>/<libdir>/pkgconfig):
#   consumer         CONSUMER_C with softndk.pc (the shared libraries)
#   consumer_static  CONSUMER_C with softndk-static.pc (the static archives)
#   driver           DRIVER_C, a DriverEntry without main(), with softndk-driver.pc
# and runs them; each must exit 0 and print its verdict.
set -eu
cmake=$1 build=$2 work=$3 libdir=$4 cc=$5 consumer_c=$6 driver_c=$7
rm -rf "$work"
mkdir -p "$work"
"$cmake" --install "$build" --prefix "$work/prefix" >"$work/install.log"
export PKG_CONFIG_PATH="$work/prefix/$libdir/pkgconfig"
libs=$(pkg-config --variable=libdir softndk)

set -x
"$cc" -Wall -o "$work/consumer" "$consumer_c" $(pkg-config --cflags --libs softndk) \
    -Wl,-rpath,"$libs"
"$cc" -Wall -o "$work/consumer_static" "$consumer_c" $(pkg-config --cflags --libs softndk-static)
"$cc" -Wall -std=c11 -o "$work/driver" "$driver_c" $(pkg-config --cflags --libs softndk-driver) \
    -Wl,-rpath,"$libs"
set +x

fail() { echo "run-pkg-config: $*" >&2; exit 1; }
out=$("$work/consumer") || fail "consumer exited $?: $out"
echo "$out" | grep -q '^consumer: ok$' || fail "consumer: no 'consumer: ok' in: $out"
ldd "$work/consumer" | grep -q "libsoftndk.so.0 => $work/prefix/" || fail "consumer: libsoftndk.so.0 not from the prefix"
out=$("$work/consumer_static") || fail "consumer_static exited $?: $out"
echo "$out" | grep -q '^consumer: ok$' || fail "consumer_static: no 'consumer: ok' in: $out"
if ldd "$work/consumer_static" | grep -q libsoftndk; then fail "consumer_static loads a shared libsoftndk"; fi
out=$("$work/driver" --timeout 30) || fail "driver exited $?: $out"
echo "$out" | grep -q 'unload: work 1 thread 1 dpc 1' || fail "driver: no unload line in: $out"
echo "run-pkg-config: consumer, consumer_static and driver built with pkg-config and ran"
