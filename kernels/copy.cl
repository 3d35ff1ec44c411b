/* copy.cl - plain copy kernels: the device's own copy bandwidth for the
 * benchmark to compare against, 16 bytes a step. GPUs coalesce one step per
 * work-item (rl_copy); CPU devices run best with a run of RL_COPY_CHUNK
 * steps per work-item (rl_copy_chunk). */
#define RL_COPY_CHUNK 64

__kernel void rl_copy(__global const uint4 *restrict src,
                      __global uint4 *restrict dst, long n) {
  long i = get_global_id(0);
  if (i < n) dst[i] = src[i];
}

__kernel void rl_copy_chunk(__global const uint4 *restrict src,
                            __global uint4 *restrict dst, long n) {
  long b = get_global_id(0) * RL_COPY_CHUNK;
  for (long i = b; i < b + RL_COPY_CHUNK && i < n; i++) dst[i] = src[i];
}
