/* relayout.cl - the conversion kernels
 *
 * The host prepends a header for each conversion (host/codegen.c): RL_T, the
 * type moved; RL_I, the index type (int when both buffers allow it, else
 * long); RL_COUNT, destination elements; RL_VEC, the vector width of rl_rows;
 * RL_TRANSFORM, the per-element hook; and rl_map(o, &s), which says whether
 * destination element o holds data and where its source element is. One
 * work-item handles one step: the host launches one per step.
 * RL_KERNEL names the one kernel a plan compiles: 1 rl_gather, 2 rl_rows,
 * 3 rl_gather_nibbles, 4 rl_tile, 5 rl_lines. Each writes every destination element once, padding
 * as zero.
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
/* One destination row: the data, then zeros. */
static inline void rl_line(__global const RL_T *restrict src,
                           __global RL_T *restrict dst, RL_I o) {
  RL_I s, n = rl_row(o, &s);
  if (n == RL_EK) { /* the common case, as a plain loop */
    for (RL_I k = 0; k < RL_EK; k++)
      dst[o + k] = RL_TRANSFORM(src[s + k * RL_SK]);
    return;
  }
  for (RL_I k = 0; k < RL_EK; k++)
    dst[o + k] = k < n ? RL_TRANSFORM(src[s + k * RL_SK]) : (RL_T)0;
}

/* For CPU devices: whole innermost destination rows per work-item, each a
 * plain loop with source stride RL_SK; rl_row(o, &s) gives once per row the
 * source offset of its first element and how many of its elements hold
 * data. Blocked plans (RL_BLOCKED) take RL_RA x RL_RC rows over two axes,
 * so that short rows contiguous in the source are read in whole runs;
 * others RL_LINES consecutive rows. */
__kernel void rl_lines(__global const RL_T *restrict src, long src_off,
                       __global RL_T *restrict dst, long dst_off) {
  RL_I id = (RL_I)get_global_id(0);
  src += src_off;
  dst += dst_off;
#ifdef RL_BLOCKED
  RL_I nab = (RL_EA + RL_RA - 1) / RL_RA, ncb = (RL_EC + RL_RC - 1) / RL_RC;
  RL_I a0 = id % nab * RL_RA;
  id /= nab;
  RL_I c0 = id % ncb * RL_RC;
  id /= ncb;
  if (id >= RL_NREST) return;
  RL_I base = rl_rest(id);
  for (RL_I a = a0; a < a0 + RL_RA && a < RL_EA; a++)
    for (RL_I c = c0; c < c0 + RL_RC && c < RL_EC; c++)
      rl_line(src, dst, base + a * RL_DA + c * RL_DC);
#else
  for (RL_I q = 0; q < RL_LINES; q++) {
    RL_I o = (id * RL_LINES + q) * RL_EK;
    if (o >= RL_COUNT) return;
    rl_line(src, dst, o);
  }
#endif
}
#endif
