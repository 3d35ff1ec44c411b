/* lines_stores.cl - CPU boxes (rl_lines), first part: the vectors a box
 * moves (RL_VT), how it writes them (plain or non-temporal stores,
 * RL_STREAM), rows partly padding built in registers (RL_LANES), rows
 * streamed through a private buffer (RL_SHIFT), the prefetch (RL_AHEAD,
 * RL_LEAD) and how much of a box's row holds data (rl_row_data, which the
 * casts' rows share). The variant macros are lib/plan/variant.h's. */

/* RL_VT is a vector rl_lines moves: a row of a square or tile, or a streamed
 * row's 16-byte piece. RL_AT(ptr) is the vector at any element address,
 * moved as one unaligned vector through a packed struct (vloadn and vstoren
 * go element by element for narrow types on PoCL). */
#ifdef RL_TILE
#define RL_VT RL_CAT(RL_T, RL_TILE)
#elif defined(RL_WIDE)
#define RL_VT uchar16
#elif RL_VEC > 1 && !defined(RL_NIBBLES)
#define RL_VT RL_CAT(RL_T, RL_VEC)
#elif defined(RL_STREAM)
#define RL_VT RL_CAT(RL_T, RL_STREAM)
#elif defined(RL_PLANES)
#define RL_VT RL_CAT(RL_T, RL_PLANE_W)
#endif
#ifdef RL_VT
RL_PACKED(rl_row_at, RL_VT);
#define RL_AT(ptr) RL_PACKED_AT(rl_row_at, ptr)
#ifdef RL_TILE
/* a tile's piece of a source row: 4 elements */
RL_PACKED(rl_piece_at, RL_CAT(RL_T, 4));
#define RL_PIECE(ptr) RL_PACKED_AT(rl_piece_at, ptr)
#endif

/* Writes a vector. With RL_STREAM (the host's plan: a destination larger
 * than the cache, written in long aligned runs) and `stream`, a
 * non-temporal store: the line goes to memory without first being read into
 * the cache. Such stores are weakly ordered, but they are visible before the
 * runtime marks the kernel complete: it signals completion with locked
 * (x86) or release (Arm) operations, which order every earlier store, so no
 * fence follows a box. On x86-64 a 16-byte one is written in assembly
 * (RL_MOVNT): clang drops the non-temporal mark wherever it merges stores,
 * two vectors into one of 32 bytes or one with a plain store of the same
 * vector in another branch, and a plain store left in a streamed line is
 * many times slower (docs/notes/PLANNER.md, "lines_stores.cl, rl_put_row"). */
#if defined(RL_STREAM) && defined(__x86_64__)
#ifdef __AVX__
#define RL_MOVNT "vmovntdq %1, %0"
#else
#define RL_MOVNT "movntdq %1, %0"
#endif
#endif
static inline void rl_put_row(__global RL_T *at, RL_VT v, int stream) {
#ifdef RL_STREAM
  if (stream) {
#ifdef RL_MOVNT
    if (sizeof(RL_VT) == 16) {
      union {
        RL_VT v;
        uint4 u;
      } x = {v};
      __asm__ volatile(RL_MOVNT : "=m"(*(__global uint4 *)at) : "x"(x.u));
      return;
    }
#endif
    __builtin_nontemporal_store(v, (__global RL_VT *)at);
    return;
  }
#endif
  RL_AT(at) = v;
}
#endif

#if defined(RL_LANES) && !defined(RL_NIBBLES) &&                               \
    RL_BLOCK_K % RL_STREAM == 0 && RL_BLOCK_K / RL_STREAM <= 16
/* Rows partly data, the rest padding, streamed whole too, each vector built
 * in registers (as plain stores, each line is read into the cache first).
 * Where the row runs contiguous in the source (RL_SSTRIDE_K 1), its whole
 * vectors are loaded as such and the last piece of data as the vector that
 * ends with it, shifted into place (rl_row_tail); otherwise each data
 * element is selected into its lane (RL_LANES numbers them) one at a time,
 * which pays only in rows at most a quarter data. The buffer's first rows,
 * where the vector ending with the data would start before the buffer, are
 * selected element by element too (docs/notes/PLANNER.md, "lines_stores.cl,
 * RL_PAD_ROWS"). */
#define RL_PAD_ROWS      1
#define RL_PAD_ROW(data) (RL_SSTRIDE_K == 1 || (data)*4 <= RL_BLOCK_K)

#if RL_SSTRIDE_K == 1
/* The `rem` elements (fewer than a vector's) that end at `end`, in the
 * vector's first lanes, the rest zero: the vector that ends at `end` as a
 * little-endian 128-bit number (two ulongs), shifted down by the bytes
 * before them. RL_VT is 16 bytes wherever rows stream with RL_SSTRIDE_K 1
 * (stream_stores in lib/plan/plan_lines.c). OpenCL's shuffle() with a mask
 * computed at run time went lane by lane. */
static inline RL_VT rl_row_tail(__global const RL_T *end, RL_I rem) {
  ulong2 x = as_ulong2(RL_AT(end - RL_STREAM));
  uint bits = 128 - 8 * (uint)(rem * sizeof(RL_T)); /* 8 to 120 */
  ulong2 y = bits < 64
                 ? (ulong2)(x.s0 >> bits | x.s1 << (64 - bits), x.s1 >> bits)
                 : (ulong2)(x.s1 >> (bits - 64), 0);
  return RL_CAT(as_, RL_VT)(y);
}
#endif
#else
#define RL_PAD_ROW(data) 0
#endif

#if (RL_VEC == 1 && defined(RL_STREAM) && RL_SSTRIDE_K == 1 &&                 \
     RL_BLOCK_K % RL_STREAM == 0 && !defined(RL_NIBBLES)) ||                   \
    defined(RL_PAD_ROWS)
#define RL_STREAM_ROWS 1
/* A row written with aligned non-temporal stores, its first `data`
 * elements from `in` and the rest padding: whole (data RL_BLOCK_K, RL_VEC 1,
 * rows contiguous in the source and whole stores long) or partly data
 * (RL_PAD_ROWS). Other rows go plain: those of the boxes rl_planes does
 * not take (pixels partly padding, NCWH -> NCH%32BW: rows of 2 elements
 * strided in the source, which streamed 16 bytes of zeros each, off the
 * grid). `begin` is the source buffer's start, before which no vector is
 * read. */
static inline void rl_stream_row(__global const RL_T *begin,
                                 __global const RL_T *restrict in,
                                 __global RL_T *restrict out, RL_I data) {
#ifdef RL_PAD_ROWS
  RL_VT lanes = RL_LANES;
#endif
#pragma unroll
  for (int j = 0; j < RL_BLOCK_K; j += RL_STREAM) {
    if (RL_SSTRIDE_K == 1 && j + RL_STREAM <= data) {
      rl_put_row(out + j, RL_TRANSFORM(RL_AT(in + j)), 1);
      continue;
    }
    RL_VT v = (RL_VT)0;
#ifdef RL_PAD_ROWS
    int tail = 0;
#if RL_SSTRIDE_K == 1 && defined(__ENDIAN_LITTLE__) /* rl_row_tail's order */
    tail = j < data && in - begin + data >= RL_STREAM;
    if (tail) v = RL_TRANSFORM(rl_row_tail(in + data, data - j));
#endif
    if (!tail)
      for (RL_I k = j; k < data && k < j + RL_STREAM; k++)
        v = select(v, (RL_VT)RL_TRANSFORM(in[k * RL_SSTRIDE_K]),
                   lanes == (RL_VT)(k - j));
#endif
    rl_put_row(out + j, v, 1);
  }
}
#endif

#ifdef RL_SHIFT
/* Rows of a box whose steps along Q, each RL_BLOCK_K elements contiguous in the
 * source, follow one another in the destination and start off the store
 * grid. Each store on the grid belongs to the box where it starts: a row
 * that is data throughout writes its stores non-temporal, the last one
 * completed from the row's next piece where that is data too (`ext`); the
 * next box then leaves its row's first elements, up to the grid, alone
 * (rl_shift_head). The ends that no store covers are plain. */
static inline RL_I rl_shift_head(__global RL_T *out) {
  return (RL_I)((RL_STREAM - (ulong)out / sizeof(RL_T) % RL_STREAM) %
                RL_STREAM);
}

/* Such a row of mq steps from `in` to `out`, gathered into a private buffer
 * at out's offset from the grid; `head`: whether its first elements up to
 * the grid are this box's to write (the box is the row's first). */
static inline void rl_shift_row(__global const RL_T *restrict in,
                                __global RL_T *restrict out, RL_I mq, int head,
                                int ext) {
  union {
    RL_VT v[RL_BLOCK_Q * RL_BLOCK_K / RL_STREAM + 2];
    RL_T e[(RL_BLOCK_Q * RL_BLOCK_K / RL_STREAM + 2) * RL_STREAM];
  } buf;
  RL_I i = rl_shift_head(out), off = (RL_STREAM - i) % RL_STREAM,
       n = mq * RL_BLOCK_K;
  for (RL_I q = 0; q < mq; q++)
#pragma unroll
    for (int j = 0; j < RL_BLOCK_K; j += RL_STREAM)
      ((rl_row_at *)(buf.e + off + q * RL_BLOCK_K + j))->v =
          RL_TRANSFORM(RL_AT(in + q * RL_SSTRIDE_Q + j));
  if (ext)
    ((rl_row_at *)(buf.e + off + n))->v =
        RL_TRANSFORM(RL_AT(in + mq * RL_SSTRIDE_Q));
  for (RL_I k = 0; head && k < i; k++) out[k] = buf.e[off + k];
  for (; i + RL_STREAM <= n || (ext && i < n); i += RL_STREAM)
    rl_put_row(out + i, buf.v[(off + i) / RL_STREAM], 1);
  for (; i < n; i++) out[i] = buf.e[off + i];
}
#endif

/* A box of squares whose source rows are K's (P running along them) and
 * whose K runs on for boxes after it, the next box the next along K: it
 * asks for the rows of the box RL_BOX_AHEAD on along K into the L2 cache,
 * so that they come from memory a box ahead of their reads (1- and 2-byte
 * NHWC -> NCHW; rows of one line, where the box has no prefetch of its
 * own) */
#if RL_VEC > 1 && !defined(RL_NIBBLES) && RL_SSTRIDE_P == 1 &&                \
    RL_SSTRIDE_K != 1 && RL_EXTENT_K >= 4 * RL_BLOCK_K &&                      \
    !defined(RL_P_FIRST) && !defined(RL_AHEAD) && !defined(RL_LEAD)
#define RL_BOX_AHEAD 2
#endif

/* Asks for the line at p ahead of its first read: clang's builtin where the
 * kernel is compiled for a CPU (PoCL's prefetch() does nothing). Elsewhere
 * nothing: on NVIDIA's OpenCL every kernel that prefetched failed to build,
 * and a GPU runs these CPU boxes only when a test forces them. */
#if defined(RL_AHEAD) || defined(RL_LEAD) || defined(RL_CAST_ROWS) ||          \
    defined(RL_BOX_AHEAD)
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) ||        \
    defined(__arm__) || defined(__riscv) || defined(__powerpc64__)
#define RL_PREFETCH(p) __builtin_prefetch(p)
#define RL_PREFETCH_L2(p) __builtin_prefetch(p, 0, 2)
#else
#define RL_PREFETCH(p) ((void)0)
#define RL_PREFETCH_L2(p) ((void)0)
#endif
#endif
/* How many elements of the box's row at P's p and Q's q hold data (n from
 * rl_box; dq, Q's data count within the box) and, in *write, how many to
 * write (with RL_SKIP, those before the destination's end; else mk) */
static inline RL_I rl_row_data(const RL_I *n, RL_I p, RL_I q, RL_I dq, RL_I mk,
                               RL_I *write) {
#ifdef RL_SKIP
  *write = clamp((RL_I)(n[5] - p * RL_KWRITE_DROP_P - q * RL_KWRITE_DROP_Q),
                 (RL_I)0, mk);
#else
  *write = mk;
#endif
  return p < n[0] && q < dq
             ? clamp((RL_I)(n[2] - p * RL_KDATA_DROP_P - q * RL_KDATA_DROP_Q),
                     (RL_I)0, mk)
             : 0;
}

#ifdef RL_AHEAD
/* Q step q's box rows (K's mk rows from `in`, of elements of type T): the
 * run of the step RL_AHEAD on, line by line, where there is one */
#define RL_PREFETCH_AHEAD(T, in, q, mq, mk)                                    \
  if ((q) + RL_AHEAD < (mq)) {                                                 \
    __global const T *next = (in) + RL_AHEAD * RL_SSTRIDE_Q;                   \
    for (RL_I e = 0; e < (mk) * RL_SSTRIDE_K; e += 64 / sizeof(T))             \
      RL_PREFETCH(next + e);                                                   \
    RL_PREFETCH(next + (mk) * RL_SSTRIDE_K - 1);                               \
  }
#endif
