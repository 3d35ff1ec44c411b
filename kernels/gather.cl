/* gather.cl - any map, element by element (or, for 4-bit elements, one
 * destination byte per step, so that no two work-items write one byte);
 * RL_SRC reads a source element, a nibble where the source is 4-bit */

#ifndef RL_NIBBLES
/* One destination element per step, grid-stride. */
__kernel void rl_gather(__global const RL_TS *restrict src, long src_off,
                        __global RL_T *restrict dst,
                        long dst_off RL_QC_ARG) {
  RL_I o = (RL_I)get_global_id(0), s;
  if (o >= RL_COUNT) return;
  src += src_off;
  dst += dst_off;
  dst[o] = rl_map(o, &s) ? RL_TRANSFORM_AT(RL_SRC(src, s), o) : RL_PAD;
}
#else
/* 4-bit elements, two per byte, low nibble first: one destination byte per
 * step, so no two work-items write one byte; padding, and the half byte
 * past the last element, hold RL_PAD's nibble. */
__kernel void rl_gather_nibbles(__global const RL_TS *restrict src,
                                long src_off, __global uchar *restrict dst,
                                long dst_off RL_QC_ARG) {
  RL_I o = (RL_I)get_global_id(0);
  if (o >= (RL_COUNT + 1) / 2) return;
  src += src_off;
  dst += dst_off;
  uint byte = 0;
  for (int k = 0; k < 2; k++) {
    RL_I e = 2 * o + k, s;
    uint v = e < RL_COUNT && rl_map(e, &s)
                 ? (uint)RL_TRANSFORM_AT(RL_SRC(src, s), e)
                 : (uint)RL_PAD;
    byte |= (v & 0xF) << (4 * k);
  }
  dst[o] = (uchar)byte;
}
#endif
