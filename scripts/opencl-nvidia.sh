#!/usr/bin/env bash
# opencl-nvidia.sh - registers NVIDIA's OpenCL driver with the ICD loader where
# the driver library is installed but no vendor file names it (the lent GPU
# machine ships it so). Source it before building or running there:
#   . scripts/opencl-nvidia.sh
# Harmless without an NVIDIA driver. It also points the compiler at the CUDA
# toolkit's OpenCL headers when the Debian ones are absent.
vendors=/etc/OpenCL/vendors
nv=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1 /{print $NF; exit}')
if [ -n "$nv" ] && ! grep -qs nvidia-opencl "$vendors"/*.icd; then
  mkdir -p "$vendors" && echo "$nv" >"$vendors/nvidia.icd"
fi
if [ ! -e /usr/include/CL/cl.h ] && [ -e /usr/local/cuda/include/CL/cl.h ]; then
  export CPATH=/usr/local/cuda/include${CPATH:+:$CPATH}
fi
echo "OpenCL vendor files: $(ls "$vendors" 2>/dev/null | tr '\n' ' ')"
