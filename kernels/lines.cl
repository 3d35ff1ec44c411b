/* lines.cl - CPU boxes: the rl_lines kernel, after the lines_*.cl parts */

/* For CPU devices: a box of whole destination rows per work-item, sized to
 * stay in the first-level cache. The box spans RL_BLOCK_P x RL_BLOCK_Q rows of
 * RL_BLOCK_K elements over axes P, Q and K (K innermost in the destination,
 * source stride RL_SSTRIDE_K); rl_box gives its offsets and how far data
 * reaches along each axis, the rest is zero (with RL_SKIP, up to the
 * destination's end only: a box may run past it, to the end of a source block).
 * Reads along K are strided when the box is a transpose, but every source line
 * the box touches is read whole from the cache as P advances; with RL_VEC > 1
 * such a box, when all data, moves as squares transposed in registers. A
 * cast's box (RL_CAST_ROWS) converts 16 elements at a time, as squares
 * where it transposes and is all data, else row by row (lines_casts.cl). */
__kernel void rl_lines(__global const RL_TS *restrict src, long src_off,
                       __global RL_T *restrict dst, long dst_off RL_QC_ARG) {
  RL_I id = (RL_I)get_global_id(0);
  const RL_I nk = (RL_EXTENT_K + RL_BLOCK_K - 1) / RL_BLOCK_K,
             nq = (RL_EXTENT_Q + RL_BLOCK_Q - 1) / RL_BLOCK_Q,
             np = (RL_EXTENT_P + RL_BLOCK_P - 1) / RL_BLOCK_P;
  RL_I k0 = id % nk * RL_BLOCK_K, p0, q0;
  id /= nk;
#ifdef RL_P_FIRST
  p0 = id % np * RL_BLOCK_P;
  id /= np;
#endif
  q0 = id % nq * RL_BLOCK_Q;
  id /= nq;
#ifndef RL_P_FIRST
  p0 = id % np * RL_BLOCK_P;
  id /= np;
#endif
  if (id >= RL_OUTER_STEPS) return;
  RL_I d, s, n[6];
  if (!rl_box(id, p0, q0, k0, &d, &s, n)) n[0] = 0;
#ifdef RL_STREAM_ROWS
  __global const RL_T *begin = src; /* the buffer's start */
#endif
#ifdef RL_NIBBLES
  src += src_off; /* s counts elements from here */
  dst += dst_off + d / 2;
#else
  src += src_off + s;
  s = 0;
  dst += dst_off + d;
#endif
  RL_I mp = min((RL_I)RL_BLOCK_P, (RL_I)(RL_EXTENT_P - p0));
  RL_I mq = min((RL_I)RL_BLOCK_Q, (RL_I)(RL_EXTENT_Q - q0));
  RL_I mk = min((RL_I)RL_BLOCK_K, (RL_I)(RL_EXTENT_K - k0));
#ifdef RL_SKIP /* past the destination's end: nothing to write */
  mp = clamp(n[3], (RL_I)0, mp);
  mq = clamp(n[4], (RL_I)0, mq);
#endif
  RL_I dq = clamp(n[1], (RL_I)0, mq);
  /* the box all data (K's data count is least at its last P and Q) */
  const int all = n[0] >= mp && dq == mq &&
                  n[2] - (mp - 1) * RL_KDATA_DROP_P -
                          (mq - 1) * RL_KDATA_DROP_Q >= mk;
  (void)all;
#ifdef RL_CAST_RUN
  if (all) {
    rl_cast_run(src + s, dst, RL_RUN_A ? mp : mq, RL_RUN_A ? mq : mp,
                RL_RUN_A ? RL_EXTENT_P - p0 : RL_EXTENT_Q - q0, d RL_QC_PASS);
    return;
  }
#endif
#ifdef RL_CAST_SQUARES
  if (all) {
    rl_cast_squares(src + s, dst, mp, mq, mk, d RL_QC_PASS);
    return;
  }
#endif
  int stream = 0;
#ifdef RL_STREAM
  stream = (ulong)dst % sizeof(RL_VT) == 0; /* then every store is aligned */
#endif
#ifdef RL_ODD_K
  /* destination rows that start mid-byte (lib/plan/plan_nibbles.c
   * nibble_odd_k): each Q step's run of mp rows, whole bytes, put together
   * in a private buffer, then written out. Words and nibbles go in as
   * read-modify-writes of the bytes they share, so the buffer starts as
   * zeros, never read before it is written. */
  uchar run[RL_BLOCK_P * RL_BLOCK_K / 2 + 8] = {0};
  for (RL_I q = 0; q < mq; q++) {
    __global uchar *out = dst + q * RL_DSTRIDE_Q / 2;
    RL_I i = 0, bytes = mp * RL_BLOCK_K / 2;
    rl_nibble_squares(src, s + q * RL_SSTRIDE_Q, dst, mp, 1, mk, run, 0);
    for (; i + 16 <= bytes; i += 16)
      RL_PACKED_AT(rl_bytes16, out + i) = ((rl_bytes16 *)(run + i))->v;
    for (; i < bytes; i++) out[i] = run[i];
  }
  return;
#endif
#if RL_VEC > 1
  if (all) {
#ifdef RL_NIBBLES
#ifdef RL_STAGED
    /* the box's destination rows (lib/plan/plan_nibbles.c nibble_staged)
     * through a private buffer, RL_BLOCK_K nibbles apart, then written in
     * order: one run of whole 16-byte pieces (RL_DSTRIDE_P == RL_BLOCK_K), or
     * each row whole (RL_BLOCK_K and RL_DSTRIDE_P multiples of 32: each row
     * starts on the grid) */
    if (RL_DSTRIDE_P == RL_BLOCK_K ? mp * RL_DSTRIDE_P % 32 == 0
                                   : mk == RL_BLOCK_K) {
      RL_VT stage[RL_STAGED];
      const RL_I run =
          RL_DSTRIDE_P == RL_BLOCK_K ? mp * RL_DSTRIDE_P / 32 : RL_BLOCK_K / 32;
      rl_nibble_squares(src, s, dst, mp, mq, mk, (uchar *)stage,
                        p0 + mp + RL_LEAD <= RL_EXTENT_P);
      for (RL_I p = 0; p < (RL_DSTRIDE_P == RL_BLOCK_K ? 1 : mp); p++)
        for (RL_I i = 0; i < run; i++)
          rl_put_row(dst + p * (RL_DSTRIDE_P / 2) + i * 16, stage[p * run + i],
                     stream);
      return;
    }
#endif
    rl_nibble_squares(src, s, dst, mp, mq, mk, 0, 0);
    return;
#else
#if RL_FLAT == 1
    rl_flat_squares(src, dst, mq * RL_BLOCK_K, mp);
    return;
#elif RL_FLAT == 2
    rl_flat_squares(src, dst, mk, mq * RL_BLOCK_P);
    return;
#endif
#ifdef RL_COPY_IN
    /* P's extent whole squares, K's extent whole blocks, so that mk is
     * RL_BLOCK_K (lib/plan/plan_lines.c) */
    if (mp == RL_BLOCK_P && mq == RL_BLOCK_Q &&
        stream) /* the common box, fixed */
      rl_copy_in(src, dst, RL_BLOCK_P, RL_BLOCK_Q, RL_BLOCK_K, 1);
    else
      rl_copy_in(src, dst, mp, mq, mk, stream);
    return;
#endif
    int lead = 0;
#ifdef RL_LEAD
    lead = p0 + mp - 1 + RL_LEAD < RL_EXTENT_P;
#endif
#ifdef RL_STAGED
    /* whole squares along P and K: the box's destination, one run of
     * whole rows, through a private buffer, then written in order */
    if (mp % RL_SIDE_P == 0 && mk % (RL_SIDE_K * RL_GROUP) == 0) {
      RL_VT stage[RL_STAGED];
      rl_box_squares(src, dst, mp, mq, mk, 0, lead, (RL_T *)stage);
      for (RL_I i = 0; i < mp * RL_DSTRIDE_P / vec_step(RL_VT); i++)
        rl_put_row(dst + i * vec_step(RL_VT), stage[i], stream);
      return;
    }
    /* a box short of a square along P, where Q's extent leaves its rows
     * off the grid of stores (CHWN4 with N not a multiple of 4): plain */
    if (RL_DSTRIDE_P % RL_VEC) stream = 0;
#endif
#ifdef RL_BOX_AHEAD
    /* (K's rows of one line each) those of the box two on, within K */
    const RL_I on = RL_BOX_AHEAD * RL_BLOCK_K;
    if (RL_BLOCK_P * sizeof(RL_T) <= 64)
      for (RL_I k = 0; k < mk && k0 + on + k < RL_EXTENT_K; k++)
        RL_PREFETCH_L2(src + (k + on) * RL_SSTRIDE_K);
#endif
    if (stream) /* two copies, each with its stores fixed */
      rl_box_squares(src, dst, mp, mq, mk, 1, lead, 0);
    else
      rl_box_squares(src, dst, mp, mq, mk, 0, lead, 0);
    return;
#endif
  }
#endif
#ifdef RL_PLANES
  if (n[0] >= mp && n[2] >= mk) { /* the pixels run along K, Q, or P */
#ifdef RL_SPLIT
    rl_planes(src, dst, mk, stream);
#elif defined(RL_WEAVE)
    rl_planes(src, dst, mq, stream);
#else
    rl_planes(src, dst, mp, stream);
#endif
    return;
  }
#endif
#ifdef RL_SHIFT
  stream = 0; /* rows start off the grid: rl_shift_row streams them */
#endif
#ifdef RL_CAST_ROWS
  rl_cast_rows(src + s, dst, n, mp, mq, dq, mk, d RL_QC_PASS);
  return;
#endif
#if defined(RL_STREAM) && !defined(RL_NIBBLES) && !defined(RL_SHIFT) &&        \
    RL_VEC == 1 && RL_SSTRIDE_K == 1 && RL_BLOCK_K == RL_STREAM
  if (all && mk == RL_BLOCK_K) { /* rows of one vector each: no row's
                                   * checks of how much of it is data */
#define RL_ONE_ROW(p, q)                                                       \
  rl_put_row(dst + (p)*RL_DSTRIDE_P + (q)*RL_DSTRIDE_Q,                        \
             RL_TRANSFORM(RL_AT(src + s + (p)*RL_SSTRIDE_P +                   \
                                (q)*RL_SSTRIDE_Q)),                            \
             stream)
    for (RL_I p = 0; p < mp; p++)
      if (mq == RL_BLOCK_Q) /* a fixed count, which the compiler unrolls */
        for (RL_I q = 0; q < RL_BLOCK_Q; q++) RL_ONE_ROW(p, q);
      else
        for (RL_I q = 0; q < mq; q++) RL_ONE_ROW(p, q);
    return;
  }
#endif
  for (RL_I p = 0; p < mp; p++) {
    RL_I head = 0;
#ifdef RL_SHIFT
    RL_I data_q = p < n[0] ? dq : 0;
    RL_I first = n[2] - p * RL_KDATA_DROP_P; /* data in the row's first step */
    if (mk == RL_BLOCK_K && data_q > 0 && first >= RL_BLOCK_K) {
      if (q0 > 0) /* the box before wrote the row's first elements */
        head = rl_shift_head(dst + p * RL_DSTRIDE_P);
      if (data_q == mq && first - (mq - 1) * RL_KDATA_DROP_Q >= RL_BLOCK_K) {
        rl_shift_row(src + s + p * RL_SSTRIDE_P, dst + p * RL_DSTRIDE_P, mq,
                     q0 == 0,
                     mq == RL_BLOCK_Q && q0 + mq < RL_EXTENT_Q &&
                         first - mq * RL_KDATA_DROP_Q >= RL_BLOCK_K);
        continue;
      }
    }
#endif
    for (RL_I q = 0; q < mq; q++) {
      RL_I in = s + p * RL_SSTRIDE_P + q * RL_SSTRIDE_Q;
      __global RL_T *out = dst + (p * RL_DSTRIDE_P + q * RL_DSTRIDE_Q) / RL_EL;
      RL_I write, data = rl_row_data(n, p, q, dq, mk, &write), k = q ? 0 : head;
      int whole = data == RL_BLOCK_K && !k;
#ifdef RL_STREAM_ROWS
      if (stream && (whole ? RL_VEC == 1
                           : !k && write == RL_BLOCK_K && RL_PAD_ROW(data))) {
        rl_stream_row(begin, src + in, out, data);
        continue;
      }
#endif
#if defined(RL_NIBBLES) && RL_SSTRIDE_K == 1 && RL_BLOCK_K % 8 == 0
      if (whole) { /* a whole row of words, moved down a nibble where its
                    * source starts mid-byte */
        __global const uchar *row = src + in / 2;
        for (int j = 0; j < RL_BLOCK_K / 8; j += RL_ROW_WORDS) {
          rl_row_piece x;
#pragma unroll
          for (int l = 0; l < RL_ROW_WORDS; l++)
            x.w[l] = RL_LE(((__global const rl_word_at *)row)[j + l].v);
          rl_odd_words(x.w, RL_ROW_WORDS, row + 4 * j, in & 1);
#pragma unroll
          for (int l = 0; l < RL_ROW_WORDS; l++) x.w[l] = RL_LE(x.w[l]);
#ifdef RL_STREAM
          rl_put_row(out + 4 * j, x.v, stream);
#else
          ((__global rl_word_at *)out)[j].v = x.w[0];
#endif
        }
        continue;
      }
#endif
      if (whole) { /* a whole row: a fixed count, unrolled */
        for (int j = 0; j < RL_BLOCK_K; j += RL_EL)
          RL_PUT(out, src, in, j, RL_BLOCK_K);
        continue;
      }
      for (; k < data; k += RL_EL) RL_PUT(out, src, in, k, data);
      for (; k < write; k += RL_EL) out[k / RL_EL] = (RL_T)0; /* padding */
    }
  }
}
