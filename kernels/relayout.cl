/* relayout.cl - the conversion kernels
 *
 * The host prepends a header for each conversion (host/codegen.c): RL_T, the
 * type moved; RL_I, the index type (int when both buffers allow it, else
 * long); RL_COUNT, destination elements; RL_VEC, the vector width of rl_rows;
 * RL_TRANSFORM, the per-element hook; and rl_map(o, &s), which says whether
 * destination element o holds data and where its source element is. One
 * work-item handles one step: the host launches one per step.
 * RL_KERNEL names the one kernel a plan compiles: 1 rl_gather, 2 rl_rows,
 * 3 rl_gather_nibbles, 4 rl_tile, 5 rl_lines. Each writes every destination
 * element once, padding as zero.
 * Offsets src_off and dst_off are in elements (bytes for 4-bit types).
 */

#define RL_CAT_(a, b) a##b
#define RL_CAT(a, b) RL_CAT_(a, b)

#if RL_KERNEL == 1
/* One destination element per step, grid-stride. */
__kernel void rl_gather(__global const RL_T *restrict src, long src_off,
                        __global RL_T *restrict dst, long dst_off) {
  RL_I o = (RL_I)get_global_id(0), s;
  if (o >= RL_COUNT) return;
  src += src_off;
  dst += dst_off;
  dst[o] = rl_map(o, &s) ? RL_TRANSFORM(src[s]) : (RL_T)0;
}
#endif

#if RL_KERNEL == 2
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
#endif

#if RL_KERNEL == 3
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

#if RL_KERNEL == 4
/* The innermost axis changes: a tile of RL_TILE x RL_TILE elements goes
 * through local memory, read along the axis that is contiguous in the source
 * (J) and written along the destination's innermost axis (K). Dimension 2
 * of the launch runs over the other axes. rl_tile_map(g, j, k, &d, &s)
 * gives both offsets and whether the element holds data. The extra column
 * keeps the transposed reads off one memory bank. */
__kernel __attribute__((reqd_work_group_size(RL_TILE, RL_ROWS, 1))) void
rl_tile(__global const RL_T *restrict src, long src_off,
        __global RL_T *restrict dst, long dst_off) {
  __local RL_T tile[RL_TILE][RL_TILE + 1];
  RL_I lx = (RL_I)get_local_id(0), ly = (RL_I)get_local_id(1);
  RL_I k0 = (RL_I)get_group_id(0) * RL_TILE;
  RL_I j0 = (RL_I)get_group_id(1) * RL_TILE;
  RL_I g = (RL_I)get_group_id(2), d, s;
  src += src_off;
  dst += dst_off;
  for (RL_I r = 0; r < RL_TILE; r += RL_ROWS) {
    RL_I j = j0 + lx, k = k0 + ly + r;
    if (j < RL_EJ && k < RL_EK && rl_tile_map(g, j, k, &d, &s))
      tile[ly + r][lx] = src[s];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (RL_I r = 0; r < RL_TILE; r += RL_ROWS) {
    RL_I k = k0 + lx, j = j0 + ly + r;
    if (j < RL_EJ && k < RL_EK) {
      int data = rl_tile_map(g, j, k, &d, &s);
      dst[d] = data ? RL_TRANSFORM(tile[lx][ly + r]) : (RL_T)0;
    }
  }
}
#endif

#if RL_KERNEL == 5
/* For CPU devices: a box of whole destination rows per work-item, sized to
 * stay in the first-level cache. The box spans RL_BP x RL_BQ rows of RL_BK
 * elements over axes P, Q and K (K innermost in the destination, source
 * stride RL_SK); rl_box gives its offsets and how far data reaches along
 * each axis, the rest is zero. Reads along K are strided when the box is a
 * transpose, but every source line the box touches is read whole from the
 * cache as P advances. */
__kernel void rl_lines(__global const RL_T *restrict src, long src_off,
                       __global RL_T *restrict dst, long dst_off) {
  RL_I id = (RL_I)get_global_id(0);
  const RL_I nk = (RL_EK + RL_BK - 1) / RL_BK, nq = (RL_EQ + RL_BQ - 1) / RL_BQ,
             np = (RL_EP + RL_BP - 1) / RL_BP;
  RL_I k0 = id % nk * RL_BK;
  id /= nk;
  RL_I q0 = id % nq * RL_BQ;
  id /= nq;
  RL_I p0 = id % np * RL_BP;
  id /= np;
  if (id >= RL_NREST) return;
  RL_I d, s, n[3];
  if (!rl_box(id, p0, q0, k0, &d, &s, n)) n[0] = 0;
  src += src_off + s;
  dst += dst_off + d;
  RL_I mp = min((RL_I)RL_BP, (RL_I)(RL_EP - p0));
  RL_I mq = min((RL_I)RL_BQ, (RL_I)(RL_EQ - q0));
  RL_I mk = min((RL_I)RL_BK, (RL_I)(RL_EK - k0));
  RL_I dq = clamp(n[1], (RL_I)0, mq);
  for (RL_I p = 0; p < mp; p++) {
    RL_I data_q = p < n[0] ? dq : 0;
    for (RL_I q = 0; q < mq; q++) {
      __global const RL_T *in = src + p * RL_SP + q * RL_SQ;
      __global RL_T *out = dst + p * RL_DP + q * RL_DQ;
      RL_I data = q < data_q ? clamp((RL_I)(n[2] - p * RL_CP - q * RL_CQ),
                                     (RL_I)0, mk)
                             : 0,
           k = 0;
      if (data == RL_BK) { /* a whole row: a fixed count, unrolled */
        for (int j = 0; j < RL_BK; j++) out[j] = RL_TRANSFORM(in[j * RL_SK]);
        continue;
      }
      for (; k < data; k++) out[k] = RL_TRANSFORM(in[k * RL_SK]);
      for (; k < mk; k++) out[k] = (RL_T)0;
    }
  }
}
#endif
