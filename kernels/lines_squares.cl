/* lines_squares.cl - CPU boxes: squares (or tiles) transposed in registers
 * (RL_VEC > 1), taken across K and Q (RL_SPAN, RL_FLAT), through private
 * buffers (RL_STAGED, RL_FLAT_STAGE, RL_COPY_IN) */

#if RL_VEC > 1 && !defined(RL_NIBBLES)
/* Transposed squares of RL_VEC x RL_VEC elements, for boxes whose source runs
 * along P. A tile is a square of 4 x 4 words: RL_VEC rows along P, 4 words
 * each, a word holding 4 bytes' worth of elements along K. A wide square is
 * one too, the other way: 4 rows along K, a word holding 4 elements along
 * P, so each row written is 16 bytes of 4 destination rows that follow one
 * another. RL_ST is what a square is transposed as: its rows, or 16-byte
 * rows of words; RL_SIDE_K is its side along K in elements, RL_SIDE_Q the
 * steps along Q it spans, and RL_ROW(r) where its source row r starts
 * (with RL_SPAN, a tile's rows are K's whole block at each of RL_SPAN steps
 * along Q; with RL_FLAT, rows run on across Q's steps likewise, row r K's
 * element r % RL_BLOCK_K at step r / RL_BLOCK_K). A box moves RL_GROUP squares
 * side by side along K at once. */
#ifndef RL_GROUP
#define RL_GROUP 1
#endif
#ifdef RL_SPAN
#define RL_SIDE_Q RL_SPAN
#else
#define RL_SIDE_Q 1
#endif
#if defined(RL_SPAN) || RL_FLAT == 1
#define RL_ROW(r)                                                              \
  ((r) / RL_BLOCK_K * RL_SSTRIDE_Q + (r) % RL_BLOCK_K * RL_SSTRIDE_K)
#else
#define RL_ROW(r) ((r)*RL_SSTRIDE_K)
#endif
#ifdef RL_TILE
#define RL_ST        uint4
#define RL_SIDE_K    (RL_TILE / RL_SIDE_Q)
#define RL_AS_ROW(x) RL_CAT(as_, RL_VT)(x)
#elif defined(RL_WIDE)
#define RL_ST        uint4
#define RL_SIDE_K    4
#define RL_AS_ROW(x) RL_BYTE_SQUARE(as_uchar16(x))
#else
#define RL_ST        RL_VT
#define RL_SIDE_K    (RL_VEC / RL_SIDE_Q)
#define RL_AS_ROW(x) (x)
#endif
/* RL_SIDE_P: a square's side along P; RL_ROW_P: where along P its row j
 * starts, in steps of j */
#ifdef RL_WIDE
#define RL_SIDE_P 16
#define RL_ROW_P  4
#else
#define RL_SIDE_P RL_VEC
#define RL_ROW_P  1
#endif
/* 16 bytes as a 4 x 4 square of bytes, transposed */
#define RL_BYTE_SQUARE(v) (v).s048c159d26ae37bf
/* (a.lo, b.lo) interleaved, from their concatenation */
#if RL_VEC == 2
#define RL_ZIP    s01
#define RL_ROUNDS 1
#elif RL_VEC == 4
#define RL_ZIP    s0213
#define RL_ROUNDS 2
#elif RL_VEC == 8
#define RL_ZIP    s04152637
#define RL_ROUNDS 3
#elif RL_VEC == 16
#define RL_ZIP    s08192a3b4c5d6e7f
#define RL_ROUNDS 4
#endif

/* Transposes the square in r */
static inline void rl_transpose(RL_ST *r) {
  RL_TRANSPOSE(RL_ST, RL_VEC, RL_ROUNDS, RL_ZIP, r)
}

/* Row j of the square whose first element is at `in`, as read: RL_VEC
 * elements along P of source row j. For a tile, word i of row j holds
 * element i along P of the tile's source rows from j * RL_TILE / 4 on
 * (RL_ROW), RL_TILE / 4 of them (a transpose of the 4-element pieces read
 * from those rows). Wide, 16 bytes along P of source row j: word i holds
 * elements 4i to 4i + 3 along P, so the transposed row i holds those 4
 * elements of each of the 4 rows, and RL_AS_ROW regroups its bytes element
 * by element along P. */
static inline RL_ST rl_square_row(__global const RL_T *in, int j) {
#ifdef RL_WIDE
  return as_uint4(RL_AT(in + j * RL_SSTRIDE_K));
#elif RL_TILE == 16
  RL_VT v =
      (RL_VT)(RL_PIECE(in + RL_ROW(4 * j)), RL_PIECE(in + RL_ROW(4 * j + 1)),
              RL_PIECE(in + RL_ROW(4 * j + 2)),
              RL_PIECE(in + RL_ROW(4 * j + 3)));
  return as_uint4(RL_BYTE_SQUARE(v));
#elif RL_TILE == 8
  RL_VT v =
      (RL_VT)(RL_PIECE(in + RL_ROW(2 * j)), RL_PIECE(in + RL_ROW(2 * j + 1)));
  return as_uint4(v.s04152637);
#else
  return RL_AT(in + RL_ROW(j));
#endif
}

/* A box whose Q continues K's rows in the destination, K whole in it
 * (lib/plan/plan_lines.c plan_flat, RL_FLAT 1): along each of P's elements,
 * the box's destination is one run of mq x RL_BLOCK_K elements, row r of which
 * is K's element r % RL_BLOCK_K at Q step r / RL_BLOCK_K (RL_ROW). Squares take
 * RL_VEC consecutive rows of that run by RL_VEC elements along P, wherever
 * along Q and K the rows fall, and each first prefetches the rows RL_AHEAD
 * squares on. The other way (plan_flat_cols, RL_FLAT 2): P whole in each
 * box and under a square, Q continuing its run in the source (2N's or 4N's
 * images, then the pixels); along each of K's elements the box's source is
 * one run of mq x RL_BLOCK_P elements, column c of which is P's element
 * c % RL_BLOCK_P at Q step c / RL_BLOCK_P (RL_COL), and squares take RL_VEC
 * consecutive columns of it by RL_VEC elements along K. Either way a
 * square reads RL_VEC source rows (RL_FLAT_IN(a), a along the first side)
 * along the second side and writes each of its RL_VEC destination rows
 * (RL_FLAT_OUT(b), b along the second) as one row piece. The last square
 * along each side ends where the box does, over part of the one before
 * (each element it writes again gets the same value); a box under a
 * square along either goes element by element. */
#ifdef RL_FLAT
#if RL_FLAT == 1
#define RL_FLAT_IN(a)  RL_ROW(a)
#define RL_FLAT_OUT(b) ((b)*RL_DSTRIDE_P)
#else
#define RL_COL(c)                                                              \
  ((c) % RL_BLOCK_P * RL_DSTRIDE_P + (c) / RL_BLOCK_P * RL_DSTRIDE_Q)
#define RL_FLAT_IN(a)  ((a)*RL_SSTRIDE_K)
#define RL_FLAT_OUT(b) RL_COL(b)
#endif
#ifdef RL_FLAT_STAGE
/* RL_FLAT 1, more than 16 destination rows in one cache set (lib/plan/
 * plan_lines.c plan_flat): the squares' rows go to a private buffer of
 * RL_FLAT_STAGE elements, the box's rows RL_BLOCK_Q x RL_BLOCK_K apart, and
 * each row goes out whole after the last square */
RL_PACKED(rl_private_at, RL_VT);
#define RL_FLAT_PUT(b, a)                                                      \
  (((rl_private_at *)(stage + (b) * (RL_BLOCK_Q * RL_BLOCK_K) + (a)))->v)
#else
#define RL_FLAT_PUT(b, a) RL_AT(dst + RL_FLAT_OUT(b) + (a))
#endif
static inline void rl_flat_squares(__global const RL_T *restrict src,
                                   __global RL_T *restrict dst, RL_I na,
                                   RL_I nb) {
  if (na < RL_VEC || nb < RL_VEC) {
    for (RL_I a = 0; a < na; a++)
      for (RL_I b = 0; b < nb; b++)
        dst[RL_FLAT_OUT(b) + a] = RL_TRANSFORM(src[RL_FLAT_IN(a) + b]);
    return;
  }
#ifdef RL_FLAT_STAGE
  RL_T stage[RL_FLAT_STAGE];
#endif
  for (RL_I a0 = 0; a0 < na; a0 += RL_VEC) {
    RL_I a = min(a0, na - RL_VEC), at[RL_VEC];
#pragma unroll
    for (int j = 0; j < RL_VEC; j++) {
      at[j] = RL_FLAT_IN(a + j);
#ifdef RL_AHEAD
      RL_I next = a + RL_AHEAD * RL_VEC + j;
      for (RL_I b = 0; next < na && b < nb; b += 64 / sizeof(RL_T))
        RL_PREFETCH(src + RL_FLAT_IN(next) + b);
#endif
    }
    for (RL_I b0 = 0; b0 < nb; b0 += RL_VEC) {
      RL_I b = min(b0, nb - RL_VEC);
      RL_VT v[RL_VEC];
#pragma unroll
      for (int j = 0; j < RL_VEC; j++) v[j] = RL_AT(src + at[j] + b);
      rl_transpose(v);
#pragma unroll
      for (int j = 0; j < RL_VEC; j++)
        RL_FLAT_PUT(b + j, a) = RL_TRANSFORM(v[j]);
    }
  }
#ifdef RL_FLAT_STAGE
  for (RL_I b = 0; b < nb; b++)
    for (RL_I a0 = 0; a0 < na; a0 += RL_VEC) {
      RL_I a = min(a0, na - RL_VEC);
      RL_AT(dst + RL_FLAT_OUT(b) + a) = RL_FLAT_PUT(b, a);
    }
#endif
}
#endif

/* A staged box's last RL_EXTENT_Q % RL_SPAN steps along Q, short of a square's
 * RL_SPAN (CHWN4 with N not a multiple of 4: the box holds all of Q, so
 * they are the same in every box): a square per RL_VEC pixels along P (mp
 * of them, a multiple of RL_VEC), its rows past those steps read again from
 * the first, and of each transposed row the first RL_REST elements, the
 * data, put in the stage at `stage` (the first of those steps, pixel 0).
 * (docs/notes/PLANNER.md, "lines_squares.cl, RL_REST"). */
#if defined(RL_STAGED) && defined(RL_SPAN) && RL_EXTENT_Q % RL_SPAN &&         \
    !defined(RL_TILE) && !defined(RL_WIDE)
#define RL_REST (RL_EXTENT_Q % RL_SPAN * RL_BLOCK_K)
static inline void rl_rest_squares(__global const RL_T *in, RL_I mp,
                                   RL_T *stage) {
  for (RL_I p = 0; p < mp; p += RL_VEC) {
    RL_VT r[RL_VEC];
#pragma unroll
    for (int j = 0; j < RL_VEC; j++)
      r[j] = RL_AT(in + p + RL_ROW(j < RL_REST ? j : 0));
    rl_transpose(r);
#pragma unroll
    for (int j = 0; j < RL_VEC; j++) {
      RL_VT v = RL_TRANSFORM(r[j]);
#pragma unroll
      for (int i = 0; i < RL_REST; i++)
        stage[(p + j) * RL_DSTRIDE_P + i] = ((RL_T *)&v)[i];
    }
  }
}
#endif

/* An mp x mq x mk box that holds data throughout: whole squares, each read
 * as RL_VEC rows along P, transposed in registers and written as RL_VEC rows
 * along K, RL_GROUP of them along K at a time, each row's pieces one after
 * another; element by element where P, K or Q (RL_SIDE_Q) leaves less than
 * a group, except that with RL_SQUARE_TAIL (plain squares, K's block whole
 * squares: lib/plan/plan_lines.c square_tail) a box builds its rows past the
 * last square along P into vectors, streamed where the box streams. With
 * `stage` (RL_STAGED: whole squares along P and K), the rows go there, at their
 * place in the box's destination run, instead, as do Q's last steps short
 * of a square (squares of their own with RL_REST). With RL_AHEAD (K's rows
 * follow one another in the source, so each Q step reads one short run,
 * far from the last), each Q step first prefetches the run of the step
 * that many steps on, line by line: the core's own prefetchers have no run
 * to follow. With RL_LEAD and `lead`, each Q step first asks for the line
 * RL_LEAD elements past the box's last along P of each row it reads. */
static inline void rl_box_squares(__global const RL_T *restrict src,
                                  __global RL_T *restrict dst, RL_I mp, RL_I mq,
                                  RL_I mk, int stream, int lead, RL_T *stage) {
  RL_I sp = mp - mp % RL_SIDE_P, sk = mk - mk % (RL_SIDE_K * RL_GROUP),
       sq = mq - mq % RL_SIDE_Q;
  for (RL_I q = 0; q < mq; q += RL_SIDE_Q) {
    __global const RL_T *in = src + q * RL_SSTRIDE_Q;
    __global RL_T *out = dst + q * RL_DSTRIDE_Q;
    RL_I ep = q < sq ? sp : 0; /* squares end, elements follow, here */
#ifdef RL_REST
    if (stage && q == sq && mq - q == RL_EXTENT_Q % RL_SPAN) {
      rl_rest_squares(in, mp, stage + q * RL_DSTRIDE_Q);
      continue;
    }
#endif
#ifdef RL_LEAD
    for (RL_I j = 0; lead && j < RL_SIDE_Q && q + j < mq; j++)
      for (RL_I k = 0; k < mk; k++)
        RL_PREFETCH(in + j * RL_SSTRIDE_Q + k * RL_SSTRIDE_K + mp - 1 +
                    RL_LEAD);
#endif
#ifdef RL_AHEAD
    RL_PREFETCH_AHEAD(RL_T, in, q, mq, mk)
#endif
    for (RL_I p = 0; p < ep; p += RL_SIDE_P)
      for (RL_I k = 0; k < sk; k += RL_SIDE_K * RL_GROUP) {
        RL_ST r[RL_GROUP][RL_VEC];
#pragma unroll
        for (int g = 0; g < RL_GROUP; g++) {
#pragma unroll
          for (int j = 0; j < RL_VEC; j++)
            r[g][j] =
                rl_square_row(in + (k + g * RL_SIDE_K) * RL_SSTRIDE_K + p, j);
          rl_transpose(r[g]);
        }
#pragma unroll
        for (int j = 0; j < RL_VEC; j++)
#pragma unroll
          for (int g = 0; g < RL_GROUP; g++) {
            RL_I o = (p + j * RL_ROW_P) * RL_DSTRIDE_P + k + g * RL_SIDE_K;
            RL_VT v = RL_TRANSFORM(RL_AS_ROW(r[g][j]));
            if (stage) /* unaligned where N leaves rows off the grid */
              ((rl_row_at *)(stage + q * RL_DSTRIDE_Q + o))->v = v;
            else
              rl_put_row(out + o, v, stream);
          }
      }
#ifdef RL_SQUARE_TAIL
    if (!stage && sk == mk) { /* the rows past the squares, as vectors */
      for (RL_I p = ep; p < mp; p++)
#pragma unroll
        for (RL_I k = 0; k < RL_BLOCK_K; k += RL_VEC) /* offsets fixed */
          if (k < mk) {
            RL_T e[RL_VEC];
#pragma unroll
            for (int i = 0; i < RL_VEC; i++)
              e[i] = in[p + (k + i) * RL_SSTRIDE_K];
            rl_put_row(out + p * RL_DSTRIDE_P + k,
                       RL_TRANSFORM(RL_CAT(vload, RL_VEC)(0, e)), stream);
          }
      continue;
    }
#endif
    for (RL_I j = 0; j < RL_SIDE_Q && q + j < mq; j++)
      for (RL_I p = sk < mk ? 0 : ep; p < mp; p++)
        for (RL_I k = p < ep ? sk : 0; k < mk; k++) {
          RL_T e = RL_TRANSFORM(in[j * RL_SSTRIDE_Q + p + k * RL_SSTRIDE_K]);
          RL_I o = j * RL_DSTRIDE_Q + p * RL_DSTRIDE_P + k;
          if (stage)
            stage[q * RL_DSTRIDE_Q + o] = e;
          else
            out[o] = e;
        }
  }
}
#ifdef RL_COPY_IN
/* A box of whole squares (RL_VT rows of 16 bytes) whose source rows or
 * destination rows fall into one cache set (lib/plan/plan_lines.c
 * plan_copy_in), in three passes over private buffers: K's source rows
 * read whole into one, each row's runs at its mq steps along Q one after
 * another; the squares transposed from there into the other, which holds
 * the box's destination rows; those written out whole, one after another,
 * each P step's Q steps together (where Q continues K's rows, one run). */
static inline void rl_copy_in(__global const RL_T *restrict src,
                              __global RL_T *restrict dst, RL_I mp, RL_I mq,
                              RL_I mk, int stream) {
  const RL_I w = RL_BLOCK_P / RL_VEC,
             h = RL_BLOCK_K / RL_VEC; /* vectors per row */
  RL_VT in[RL_BLOCK_K * RL_BLOCK_Q * w], out[RL_BLOCK_Q * RL_BLOCK_P * h];
  for (RL_I k = 0; k < mk; k++)
    for (RL_I q = 0; q < mq; q++)
      for (RL_I p = 0; p < mp; p += RL_VEC)
        in[(k * RL_BLOCK_Q + q) * w + p / RL_VEC] =
            RL_AT(src + k * RL_SSTRIDE_K + q * RL_SSTRIDE_Q + p);
  for (RL_I q = 0; q < mq; q++)
    for (RL_I p = 0; p < mp; p += RL_VEC)
      for (RL_I k = 0; k < mk; k += RL_VEC) {
        RL_VT r[RL_VEC];
#pragma unroll
        for (int j = 0; j < RL_VEC; j++)
          r[j] = in[((k + j) * RL_BLOCK_Q + q) * w + p / RL_VEC];
        rl_transpose(r);
#pragma unroll
        for (int j = 0; j < RL_VEC; j++)
          out[(q * RL_BLOCK_P + p + j) * h + k / RL_VEC] = r[j];
      }
  for (RL_I p = 0; p < mp; p++)
    for (RL_I q = 0; q < mq; q++)
      for (RL_I k = 0; k < mk; k += RL_VEC)
        rl_put_row(dst + q * RL_DSTRIDE_Q + p * RL_DSTRIDE_P + k,
                   RL_TRANSFORM(out[(q * RL_BLOCK_P + p) * h + k / RL_VEC]),
                   stream);
}
#endif
#endif
