/* rows.cl - runs contiguous on both sides, RL_VEC elements per step */

/* Runs contiguous on both sides: RL_VEC elements per step, as one vector
 * move when the whole run holds data. */
__kernel void rl_rows(__global const RL_T *restrict src, long src_off,
                      __global RL_T *restrict dst, long dst_off) {
  RL_I o = (RL_I)get_global_id(0) * RL_VEC, s, s_last;
  if (o >= RL_COUNT) return;
  src += src_off;
  dst += dst_off;
  int first = rl_map(o, &s), last = rl_map(o + RL_VEC - 1, &s_last);
  if (first && last) {
    RL_CAT(vstore, RL_VEC)(RL_TRANSFORM(RL_CAT(vload, RL_VEC)(0, src + s)), 0,
                           dst + o);
  } else {
    for (int k = 0; k < RL_VEC; k++)
      dst[o + k] = rl_map(o + k, &s) ? RL_TRANSFORM(src[s]) : (RL_T)0;
  }
}
