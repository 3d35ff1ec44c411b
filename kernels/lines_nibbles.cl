/* lines_nibbles.cl - CPU boxes of 4-bit elements (RL_NIBBLES): squares of
 * 8 x 8 nibbles, rows that start mid-byte (RL_ODD_ROWS, RL_ODD_K), whole
 * rows as words */

#ifdef RL_NIBBLES
/* 32-bit words of nibbles are read little-endian: element 0 in the low
 * nibble of the first byte (RL_LE swaps bytes on a big-endian device) */
#ifdef __ENDIAN_LITTLE__
#define RL_LE(v) (v)
#else
#define RL_LE(v)                                                               \
  (((v) >> 24) | (((v) >> 8) & 0xFF00u) | (((v)&0xFF00u) << 8) | ((v) << 24))
#endif
RL_PACKED(rl_word_at, uint);
/* n words w of a source row of nibbles, loaded from the byte that holds
 * its first nibble: where that is the byte's high nibble (`odd`), moved
 * down a nibble, the last one from the byte after (which holds it, so the
 * read stays in the row). Branch-free: a row that starts on a whole byte
 * reads its own last byte again. */
static inline void rl_odd_words(uint *w, int n, __global const uchar *row,
                                int odd) {
  uint next = row[4 * n - 1 + odd];
  for (int l = 0; l < n; l++) {
    uint x = (w[l] >> 4) | ((l + 1 < n ? w[l + 1] : next) << 28);
    w[l] = odd ? x : w[l];
  }
}
#endif

#if defined(RL_NIBBLES) && RL_VEC == 1
/* A piece of a whole row of nibbles that rl_lines copies as words: with
 * RL_STREAM (rows of whole 16-byte pieces, each on the grid: the host's
 * plan), one non-temporal store's worth */
#ifdef RL_STREAM
#define RL_ROW_WORDS 4
typedef union rl_row_piece {
  uint w[4];
  RL_VT v;
} rl_row_piece;
#else
#define RL_ROW_WORDS 1
typedef struct rl_row_piece {
  uint w[1];
} rl_row_piece;
#endif
#endif

/* Row elements moved one at a time: RL_PUT(out, src, i, k, data) writes the
 * destination row `out`'s element k from the source element at offset
 * i + k * RL_SSTRIDE_K. With RL_NIBBLES (4-bit elements, two to a byte, low
 * nibble first), offsets count elements from the source's first byte, and each
 * call writes a byte of the row (which starts on one): elements k and k + 1,
 * the second zero when it is past the row's `data`. */
#ifdef RL_NIBBLES
#define RL_EL             2
#define RL_NIBBLE(src, i) (((src)[(i) >> 1] >> (((i)&1) * 4)) & 0xF)
#define RL_PUT(out, src, i, k, data)                                           \
  ((out)[(k) / 2] =                                                            \
       (RL_T)(RL_NIBBLE(src, (i) + (k)*RL_SSTRIDE_K) |                         \
              ((k) + 1 < (data)                                                \
                   ? RL_NIBBLE(src, (i) + ((k) + 1) * RL_SSTRIDE_K) << 4       \
                   : 0)))
#else
#define RL_EL 1
#define RL_PUT(out, src, i, k, data)                                           \
  ((out)[k] = RL_TRANSFORM((src)[(i) + (k)*RL_SSTRIDE_K]))
#endif

#if defined(RL_NIBBLES) && RL_VEC == 8
/* 4-bit squares of 8 x 8 nibbles, for boxes whose source runs along P:
 * each of 8 source rows along K gives a 32-bit word of 8 nibbles along P,
 * and each of 8 destination rows along P takes one of 8 nibbles along K.
 * The host plans them where boxes start at multiples of 8 along P; with
 * RL_ODD_ROWS (a source stride other than P's, or P's extent, odd) a row
 * may start on a byte's high nibble, and its words are moved down a
 * nibble. A box moves blocks of RL_NV squares along P by RL_NG along K:
 * each source row's RL_NV words are one load, the squares of a block are
 * transposed side by side, lane by lane, and each destination row's RL_NG
 * words are one store (where RL_NV is 1, the RL_NG squares are the lanes,
 * and each transposed vector is that store). */
#if RL_BLOCK_P >= 64
#define RL_NV 8
#elif RL_BLOCK_P >= 32
#define RL_NV 4
#elif RL_BLOCK_P >= 16
#define RL_NV 2
#else
#define RL_NV 1
#endif
#if RL_BLOCK_K >= 32
#define RL_NG 4
#elif RL_BLOCK_K >= 16
#define RL_NG 2
#else
#define RL_NG 1
#endif
#if RL_NV > 1
#define RL_NVT RL_CAT(uint, RL_NV)
#else
#define RL_NVT uint
#endif
#if RL_NG > 1
#define RL_NGT RL_CAT(uint, RL_NG)
#else
#define RL_NGT uint
#endif
RL_PACKED(rl_words_in, RL_NVT);
RL_PACKED(rl_words_out, RL_NGT);
typedef union rl_words {
  RL_NVT v;
  uint w[RL_NV];
} rl_words;
typedef union rl_row_words {
  RL_NGT v;
  uint w[RL_NG];
} rl_row_words;
/* squares side by side in the lanes of a vector: RL_NV along P, or where
 * that is one, RL_NG along K */
#if RL_NV > 1
#define RL_SQT RL_NVT
#else
#define RL_SQT RL_NGT
#endif

/* Squares side by side, row i of each in lane i of r: transposed, so that
 * lane i of r[j] is row j of each. Three rounds swap the off-diagonal
 * blocks of 4, 2, then 1 nibbles between rows 4, 2, then 1 apart. */
static inline void rl_nibble_transpose(RL_SQT *r) {
  const uint low[3] = {0x0000FFFFu, 0x00FF00FFu, 0x0F0F0F0Fu};
#pragma unroll
  for (int round = 0, h = 4; round < 3; round++, h /= 2)
#pragma unroll
    for (int i = 0; i < 8; i++)
      if (!(i & h)) {
        RL_SQT a = r[i], b = r[i + h];
        r[i] = (a & low[round]) | ((b << (4 * h)) & ~low[round]);
        r[i + h] = ((a >> (4 * h)) & low[round]) | (b & ~low[round]);
      }
}

#ifdef RL_ODD_K
/* Into a private buffer whose rows start at any nibble: the n words w
 * from nibble x on (from a byte's high nibble, each moved up a nibble, the
 * byte's low one kept, and the last nibble into the byte after, its high
 * one kept), and the nibble v at x. */
RL_PACKED(rl_bytes16, uchar16);
static inline void rl_put_words(uchar *b, RL_I x, const uint *w, int n) {
  uchar *at = b + x / 2;
  uint carry = at[0] & 0xF;
  for (int l = 0; l < n; l++) {
    ((rl_word_at *)at)[l].v = RL_LE(x & 1 ? w[l] << 4 | carry : w[l]);
    carry = w[l] >> 28;
  }
  if (x & 1) at[4 * n] = (uchar)((at[4 * n] & 0xF0) | carry);
}
static inline void rl_put_nibble(uchar *b, RL_I x, uint v) {
  int shift = (x & 1) * 4;
  b[x / 2] = (uchar)((b[x / 2] & ~(0xFu << shift)) | v << shift);
}
#endif

/* One block of squares, RL_NV along P by RL_NG along K: its first source
 * row at byte `row` (from that byte's high nibble where `high`), the rest
 * RL_SSTRIDE_K nibbles apart; its destination rows at byte `out` of `stage` (if
 * any) or dst, dp nibbles apart (with RL_ODD_K, at nibble `out` of
 * `stage`). With `high` a constant, every row's offset and nibble are
 * too. */
static inline void rl_nibble_block(__global const uchar *restrict row, int high,
                                   __global uchar *restrict dst, uchar *stage,
                                   RL_I out, RL_I dp, int lead) {
#if RL_NV == 1 /* each transposed vector is a destination row's words */
  RL_NGT r[8];
#pragma unroll
  for (int i = 0; i < 8; i++) {
    rl_row_words u;
#pragma unroll
    for (int g = 0; g < RL_NG; g++) {
      RL_I c = (8 * g + i) * RL_SSTRIDE_K + high;
      u.w[g] = RL_LE(((__global const rl_word_at *)(row + c / 2))->v);
#ifdef RL_ODD_ROWS
      rl_odd_words(u.w + g, 1, row + c / 2, c & 1);
#endif
    }
    r[i] = u.v;
  }
  rl_nibble_transpose(r);
#pragma unroll
  for (int j = 0; j < 8; j++) {
#ifdef RL_ODD_K
    rl_row_words o = {r[j]};
    rl_put_words(stage, out + j * dp, o.w, RL_NG);
#else
    RL_I at = out + j * (dp / 2);
    if (stage)
      ((rl_words_out *)(stage + at))->v = RL_LE(r[j]);
    else
      RL_PACKED_AT(rl_words_out, dst + at) = RL_LE(r[j]);
#endif
  }
#else
  RL_NVT r[RL_NG][8];
#pragma unroll
  for (int g = 0; g < RL_NG; g++) {
#pragma unroll
    for (int i = 0; i < 8; i++) {
      RL_I c = (8 * g + i) * RL_SSTRIDE_K + high;
      __global const uchar *at_row = row + c / 2;
#ifdef RL_LEAD
      if (lead) RL_PREFETCH(at_row + RL_LEAD / 2);
#endif
      r[g][i] = RL_LE(RL_PACKED_AT(rl_words_in, at_row));
#ifdef RL_ODD_ROWS
      rl_words u = {r[g][i]};
      rl_odd_words(u.w, RL_NV, at_row, c & 1);
      r[g][i] = u.v;
#endif
    }
    rl_nibble_transpose(r[g]);
  }
#pragma unroll
  for (int j = 0; j < 8; j++)
#pragma unroll
    for (int w = 0; w < RL_NV; w++) {
      rl_row_words o;
#pragma unroll
      for (int g = 0; g < RL_NG; g++) {
        rl_words x = {r[g][j]};
        o.w[g] = x.w[w];
      }
#ifdef RL_ODD_K
      rl_put_words(stage, out + (8 * w + j) * dp, o.w, RL_NG);
#else
      RL_I at = out + (8 * w + j) * (dp / 2);
      if (stage)
        ((rl_words_out *)(stage + at))->v = RL_LE(o.v);
      else
        RL_PACKED_AT(rl_words_out, dst + at) = RL_LE(o.v);
#endif
    }
#endif
}

/* An mp x mq x mk box that holds data throughout, its source at nibble s
 * of src: whole blocks, P's last one over part of the one before (with
 * RL_ODD_K, K's too), then the rest two nibbles to a byte (with RL_ODD_K,
 * one at a time). With `stage` (RL_STAGED), into that private
 * buffer instead of dst, at the same offsets; with `lead` (RL_LEAD), each
 * source row's load first asks for the line RL_LEAD nibbles on. */
static inline void rl_nibble_squares(__global const uchar *restrict src, RL_I s,
                                     __global uchar *restrict dst, RL_I mp,
                                     RL_I mq, RL_I mk, uchar *stage, int lead) {
  RL_I sp = mp < 8 * RL_NV ? 0 : mp, dp = stage ? RL_BLOCK_K : RL_DSTRIDE_P;
#ifdef RL_ODD_K /* K's last block too, its words put at any nibble */
  RL_I sk = mk < 8 * RL_NG ? 0 : mk;
#else
  RL_I sk = mk - mk % (8 * RL_NG);
#endif
  for (RL_I q = 0; q < mq; q++) {
    RL_I in = s + q * RL_SSTRIDE_Q, at = q * RL_DSTRIDE_Q;
    for (RL_I b = 0; b < sp; b += 8 * RL_NV)
      for (RL_I c = 0; c < sk; c += 8 * RL_NG) {
        RL_I p = min(b, sp - 8 * RL_NV), k = min(c, sk - 8 * RL_NG);
#ifdef RL_ODD_K
        RL_I first = in + p + k * RL_SSTRIDE_K, out = at + p * dp + k;
#else
        /* the destination's rows start on whole bytes: P's and K's
         * offsets are multiples of 8, the rest even (the host's plan) */
        RL_I first = in + p + k * RL_SSTRIDE_K, out = (at + p * dp + k) / 2;
#endif
#ifdef RL_ODD_ROWS
        if (first & 1)
          rl_nibble_block(src + first / 2, 1, dst, stage, out, dp, lead);
        else
#endif
          rl_nibble_block(src + first / 2, 0, dst, stage, out, dp, lead);
      }
    for (RL_I p = 0; p < mp; p++)
#ifdef RL_ODD_K
      for (RL_I k = p < sp ? sk : 0; k < mk; k++)
        rl_put_nibble(stage, at + p * dp + k,
                      RL_NIBBLE(src, in + p + k * RL_SSTRIDE_K));
#else
      for (RL_I k = p < sp ? sk : 0; k < mk; k += 2)
        if (stage)
          RL_PUT(stage + (at + p * dp) / 2, src, in + p, k, mk);
        else
          RL_PUT(dst + (at + p * RL_DSTRIDE_P) / 2, src, in + p, k, mk);
#endif
  }
}
#endif
