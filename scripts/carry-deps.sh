#!/usr/bin/env bash
# carry-deps.sh - the Debian packages relayout builds with that the lent GPU
# machine lacks (jansson; the OpenCL loader's development files and headers;
# oneDNN 2, the bench's CPU peer), for a machine with no package registry.
#   bash scripts/carry-deps.sh fetch   # here (after apt-get update): into .carry/
#   . scripts/carry-deps.sh            # there, from the repository root: unpacks
#                                      # them into /tmp/carry, points the build
#                                      # and the loader at them
# .carry is ignored by git: send it along with the tree.
carry_packages="libjansson4 libjansson-dev ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers libdnnl2 libdnnl-dev"
if [ "${1:-}" = fetch ]; then
  mkdir -p .carry && (cd .carry && apt-get download $carry_packages)
else
  carry_root=/tmp/carry
  mkdir -p "$carry_root" && for f in .carry/*.deb; do dpkg -x "$f" "$carry_root"; done
  export CMAKE_PREFIX_PATH=$carry_root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  export LD_LIBRARY_PATH=$carry_root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export CPATH=$carry_root/usr/include${CPATH:+:$CPATH}
fi
