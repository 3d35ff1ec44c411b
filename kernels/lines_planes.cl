/* lines_planes.cl - CPU boxes: planes interleaved into pixels, or pixels
 * taken apart into planes, by clang's shuffles (RL_PLANES, RL_MIX, RL_SPLIT,
 * RL_WEAVE) */

#ifdef RL_PLANES
/* A box's m pixels, each RL_PLANE_A elements one after another in each of
 * RL_PLANE_B source rows RL_SSTRIDE_K apart, and RL_PLANE_B one after another
 * in each of RL_PLANE_A destination rows RL_DSTRIDE_P apart: element c of
 * source row i goes to element i of destination row c. Interleaving planes (K's
 * rows into pixels along P) has RL_PLANE_A 1; taking them apart (RL_SPLIT: P's
 * elements of pixels along K) RL_PLANE_B 1; RL_WEAVE does both, the pixels
 * along Q. RL_PLANE_W pixels at a time as RL_PLANES vectors from one side
 * shuffled into RL_PLANES vectors of the other (RL_MIX), RL_PLANE_RUN such
 * steps at once, each destination row's stores one after another (taking
 * apart, a line of them, so that a row's non-temporal stores fill it
 * before the next row's start), then single steps; the last pixels, under
 * RL_PLANE_W, one element at a time. RL_PLANE_IN(i, c, p) and
 * RL_PLANE_OUT(i, c, p) are where pixel p's element c of source row i lies
 * on each side. With RL_LEAD, each load first asks for the line RL_LEAD
 * elements on along its row. Woven pixels may lie apart in the source
 * (CHWN4 -> 2N: RL_PLANE_PS, Q's stride), a vector then put together from
 * its pixels' pieces. */
#if defined(RL_WEAVE) && RL_SSTRIDE_Q != RL_PLANE_A
#define RL_PLANE_PS RL_SSTRIDE_Q
RL_PACKED(rl_plane_piece_at, RL_CAT(RL_T, RL_PLANE_A));
static inline RL_VT rl_plane_pieces(__global const RL_T *restrict at) {
  union {
    RL_VT v;
    RL_CAT(RL_T, RL_PLANE_A) p[RL_PLANE_W / RL_PLANE_A];
  } u;
#pragma unroll
  for (int g = 0; g < RL_PLANE_W / RL_PLANE_A; g++)
    u.p[g] = RL_PACKED_AT(rl_plane_piece_at, at + g * RL_PLANE_PS);
  return u.v;
}
#define RL_PLANE_LOAD(i, v, p)                                                 \
  rl_plane_pieces(in + RL_PLANE_IN(i, 0, (p) + (v) * RL_PLANE_W / RL_PLANE_A))
#else
#define RL_PLANE_PS RL_PLANE_A
#define RL_PLANE_LOAD(i, v, p) RL_AT(in + RL_PLANE_IN(i, (v) * RL_PLANE_W, p))
#endif
#define RL_PLANE_IN(i, c, p)  ((i)*RL_SSTRIDE_K + (p)*RL_PLANE_PS + (c))
#define RL_PLANE_OUT(i, c, p) ((c)*RL_DSTRIDE_P + (p)*RL_PLANE_B + (i))
#ifdef RL_SPLIT
#define RL_PLANE_RUN 4
#else
#define RL_PLANE_RUN 1
#endif
/* one step's loads, shuffled into the vectors of the other side */
static inline void rl_plane_mix(__global const RL_T *restrict in, RL_I p,
                                RL_VT *y) {
  RL_VT x[RL_PLANES];
#pragma unroll
  for (int i = 0; i < RL_PLANE_B; i++)
#pragma unroll
    for (int v = 0; v < RL_PLANE_A; v++) {
#ifdef RL_LEAD
      RL_PREFETCH(in + RL_PLANE_IN(i, v * RL_PLANE_W, p) + RL_LEAD);
#endif
      x[i * RL_PLANE_A + v] = RL_PLANE_LOAD(i, v, p);
    }
#pragma unroll
  for (int r = 0; r < RL_PLANES; r++) y[r] = RL_MIX(x, r);
}
static inline void rl_planes(__global const RL_T *restrict in,
                             __global RL_T *restrict out, RL_I m, int stream) {
  RL_I p = 0;
  for (; p + RL_PLANE_RUN * RL_PLANE_W <= m; p += RL_PLANE_RUN * RL_PLANE_W) {
    RL_VT y[RL_PLANE_RUN][RL_PLANES];
#pragma unroll
    for (int s = 0; s < RL_PLANE_RUN; s++)
      rl_plane_mix(in, p + s * RL_PLANE_W, y[s]);
#pragma unroll
    for (int c = 0; c < RL_PLANE_A; c++)
#pragma unroll
      for (int s = 0; s < RL_PLANE_RUN; s++)
#pragma unroll
        for (int u = 0; u < RL_PLANE_B; u++)
          rl_put_row(out + RL_PLANE_OUT(u * RL_PLANE_W, c, p + s * RL_PLANE_W),
                     RL_TRANSFORM(y[s][c * RL_PLANE_B + u]), stream);
  }
#if RL_PLANE_RUN > 1
  for (; p + RL_PLANE_W <= m; p += RL_PLANE_W) { /* single steps */
    RL_VT y[RL_PLANES];
    rl_plane_mix(in, p, y);
#pragma unroll
    for (int r = 0; r < RL_PLANES; r++)
      rl_put_row(
          out + RL_PLANE_OUT(r % RL_PLANE_B * RL_PLANE_W, r / RL_PLANE_B, p),
          RL_TRANSFORM(y[r]), stream);
  }
#endif
  for (; p < m; p++)
    for (int i = 0; i < RL_PLANE_B; i++)
      for (int c = 0; c < RL_PLANE_A; c++)
        out[RL_PLANE_OUT(i, c, p)] = RL_TRANSFORM(in[RL_PLANE_IN(i, c, p)]);
}
#endif
