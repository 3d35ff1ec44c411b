/* gather.cl - any map, element by element (or, for 4-bit elements, one
 * destination byte per step, so that no two work-items write one byte) */

#ifndef RL_NIBBLES
/* One destination element per step, grid-stride. */
__kernel void rl_gather(__global const RL_TS *restrict src, long src_off,
                        __global RL_T *restrict dst, long dst_off) {
  RL_I o = (RL_I)get_global_id(0), s;
  if (o >= RL_COUNT) return;
  src += src_off;
  dst += dst_off;
  dst[o] = rl_map(o, &s) ? RL_TRANSFORM(src[s]) : RL_PAD;
}
#else
/* 4-bit elements, two per byte, low nibble first: one destination byte per
 * step, so no two work-items write one byte. */
__kernel void rl_gather_nibbles(__global const uchar *restrict src,
                                long src_off, __global uchar *restrict dst,
                                long dst_off) {
  RL_I o = (RL_I)get_global_id(0);
  if (o >= (RL_COUNT + 1) / 2) return;
  src += src_off;
  dst += dst_off;
  uint byte = 0;
  for (int k = 0; k < 2; k++) {
    RL_I e = 2 * o + k, s;
    if (e < RL_COUNT && rl_map(e, &s))
      byte |= (uint)((src[s >> 1] >> ((s & 1) * 4)) & 0xF) << (4 * k);
  }
  dst[o] = (uchar)byte;
}
#endif
