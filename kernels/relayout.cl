/* relayout.cl - the conversion kernels
 *
 * The host prepends a header for each conversion (host/codegen.c): RL_T, the
 * type moved; RL_I, the index type (int when both buffers allow it, else
 * long); RL_COUNT, destination elements; RL_VEC, the vector width of rl_rows
 * or the side of rl_lines' squares; RL_STREAM, the elements per
 * non-temporal store rl_lines writes with; RL_P_FIRST, rl_lines' work-items
 * step along P first; RL_TRANSFORM, the per-element hook
 * (applied to vectors too); and rl_map(o, &s), which says whether
 * destination element o holds data and where its source element is. One
 * work-item handles one step: the host launches one per step.
 * RL_TILE, where rl_lines' squares are tiles of RL_VEC rows of RL_TILE
 * elements (16 bytes of 1- or 2-byte elements); RL_SPAN, where a tile's
 * rows span that many steps along Q; RL_WIDE, where they are 4 rows along K
 * by 16 bytes along P (1-byte elements); RL_GROUP, how many squares side
 * by side along K rl_lines moves at once; RL_SQUARE_TAIL, where a box of
 * squares builds its rows past the last square along P into vectors;
 * RL_FLAT, where its squares take the box's rows in destination order
 * across Q (2: its columns in source order across Q); RL_AHEAD, how many
 * Q steps (RL_FLAT: squares) ahead rl_lines' squares prefetch the source;
 * RL_LEAD, how many elements past its box along P a box of squares first
 * prefetches each source row (past each load, for squares of nibbles and
 * for interleaved planes); RL_STAGED, the 16-byte rows of a private
 * buffer that holds a box's destination, one run of whole rows (or, for
 * squares of nibbles, rows that each start on the 16-byte grid), before
 * rl_lines writes it out;
 * RL_SHIFT, rl_lines streams each row of its box through a private buffer
 * (rows off the store grid); RL_COPY_IN, rl_lines moves each box through
 * two private buffers, its source rows read whole into one and its
 * destination rows written whole from the other; RL_PLANES, the vectors
 * rl_lines shuffles at a time, RL_PLANE_W elements each, into as many
 * vectors RL_MIX(x, r) (clang's shuffles: CPU devices only): planes it
 * interleaves (RL_PLANE_B of them), takes apart (RL_SPLIT, RL_PLANE_A), or
 * both (RL_WEAVE); RL_LANES, the lane numbers of a vector
 * rl_lines streams (rows partly padding are built in registers);
 * RL_NIBBLES, rl_lines moves 4-bit elements (RL_T bytes, two to one), with
 * RL_VEC 8 in squares of 8 x 8 nibbles, whose source rows, with
 * RL_ODD_ROWS, may start mid-byte.
 * RL_KERNEL names the one kernel a plan compiles: 1 rl_gather, 2 rl_rows,
 * 3 rl_gather_nibbles, 4 rl_stage, 5 rl_lines. Each writes every destination
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
/* For GPUs, any affine map: each work-group moves one box of the tensor
 * through local memory. The host's header (rl_stage_*) reads the box in
 * source order, so that neighbouring work-items read neighbouring source
 * elements, and writes it in destination order, likewise; each work-item's
 * share is unrolled, with its offsets a base from its id plus a constant per
 * step. */
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void
rl_stage(__global const RL_T *restrict src, long src_off,
         __global RL_T *restrict dst, long dst_off) {
  __local RL_T box[RL_LOCAL];
  RL_I d, s, m[RL_NAXES], x[RL_NDIMS];
  uint lid = (uint)get_local_id(0);
  rl_stage_start((RL_I)get_group_id(0), &d, &s, m, x);
  rl_stage_load(src + src_off + s, box, lid, m, x);
  barrier(CLK_LOCAL_MEM_FENCE);
  rl_stage_store(dst + dst_off + d, box, lid, m, x);
}
#endif

#if RL_KERNEL == 5
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
typedef struct __attribute__((packed)) rl_row_at {
  RL_VT v;
} rl_row_at;
#define RL_AT(ptr) (((__global rl_row_at *)(ptr))->v)
#ifdef RL_TILE
/* a tile's piece of a source row: 4 elements */
typedef struct __attribute__((packed)) rl_piece_at {
  RL_CAT(RL_T, 4) v;
} rl_piece_at;
#define RL_PIECE(ptr) (((__global rl_piece_at *)(ptr))->v)
#endif

/* Writes a vector. With RL_STREAM (the host's plan: a destination larger
 * than the cache, written in long aligned runs) and `stream`, a
 * non-temporal store: the line goes to memory without first being read into
 * the cache. Such stores are weakly ordered, but they are visible before the
 * runtime marks the kernel complete: it signals completion with locked
 * (x86) or release (Arm) operations, which order every earlier store. A
 * fence after each box cost NC1HWC0 f16 and nChw16c f32 up to two fifths
 * of their speed. On x86-64 a 16-byte one is written in assembly (RL_MOVNT):
 * clang drops the non-temporal mark wherever it merges stores, two vectors
 * into one of 32 bytes or one with a plain store of the same vector in
 * another branch, and each plain store left in a streamed line cost up to
 * fifty times the time: ND -> FRACTAL_NZ f16 4096x11008 ran at 0.42 GB/s,
 * NCHW -> FRACTAL_Z f32 2048x1024x1x1 at 0.85, NHWC -> NC1HWC0 int8 with 9
 * channels at 0.49, each as the code around the stores changed. */
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

#if defined(RL_LANES) && !defined(RL_NIBBLES) && RL_BK % RL_STREAM == 0 && \
    RL_BK / RL_STREAM <= 16
/* Rows partly data, the rest padding, streamed whole too, each vector built
 * in registers. Element by element, such rows went out as plain stores,
 * each line read into the cache first, and where the line's other rows
 * streamed (nChw8c -> nChw16c with C = 24, whose last 8 channels are
 * padding) at a tenth of the speed. Where the row runs contiguous in the
 * source (RL_SK 1), its whole vectors are loaded as such and the last
 * piece of data as the vector that ends with it, shifted into place
 * (rl_row_tail); otherwise each data element is selected into its lane
 * (RL_LANES numbers them) one at a time, which pays only in rows at most a
 * quarter data: rows half data ran 0.78-0.92x as fast this way as element
 * by element (NHWC -> NC1HWC0 f16 with C = 24, int8 with 48, before their
 * whole vectors were loaded as such). The buffer's first rows, where the
 * vector ending with the data would start before the buffer, are selected
 * element by element too. Rows built in a private buffer and then read
 * back as vectors ran slower than element by element: each vector read
 * waited on the element stores before it. bench/TUNING.md has the
 * figures. */
#define RL_PAD_ROWS 1
#define RL_PAD_ROW(data) (RL_SK == 1 || (data)*4 <= RL_BK)

#if RL_SK == 1
/* The `rem` elements (fewer than a vector's) that end at `end`, in the
 * vector's first lanes, the rest zero: the vector that ends at `end` as a
 * little-endian 128-bit number (two ulongs), shifted down by the bytes
 * before them. RL_VT is 16 bytes wherever rows stream with RL_SK 1
 * (stream_stores in host/plan_lines.c). OpenCL's shuffle() with a mask computed
 * at run time went lane by lane. */
static inline RL_VT rl_row_tail(__global const RL_T *end, RL_I rem) {
  ulong2 x = as_ulong2(RL_AT(end - RL_STREAM));
  uint bits = 128 - 8 * (uint)(rem * sizeof(RL_T)); /* 8 to 120 */
  ulong2 y = bits < 64 ? (ulong2)(x.s0 >> bits | x.s1 << (64 - bits),
                                  x.s1 >> bits)
                       : (ulong2)(x.s1 >> (bits - 64), 0);
  return RL_CAT(as_, RL_VT)(y);
}
#endif
#else
#define RL_PAD_ROW(data) 0
#endif

#if (RL_VEC == 1 && defined(RL_STREAM) && RL_SK == 1 && \
     RL_BK % RL_STREAM == 0 && !defined(RL_NIBBLES)) ||                      \
    defined(RL_PAD_ROWS)
#define RL_STREAM_ROWS 1
/* A row written with aligned non-temporal stores, its first `data`
 * elements from `in` and the rest padding: whole (data RL_BK, RL_VEC 1,
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
  for (int j = 0; j < RL_BK; j += RL_STREAM) {
    if (RL_SK == 1 && j + RL_STREAM <= data) {
      rl_put_row(out + j, RL_TRANSFORM(RL_AT(in + j)), 1);
      continue;
    }
    RL_VT v = (RL_VT)0;
#ifdef RL_PAD_ROWS
    int tail = 0;
#if RL_SK == 1 && defined(__ENDIAN_LITTLE__) /* rl_row_tail's order */
    tail = j < data && in - begin + data >= RL_STREAM;
    if (tail) v = RL_TRANSFORM(rl_row_tail(in + data, data - j));
#endif
    if (!tail)
      for (RL_I k = j; k < data && k < j + RL_STREAM; k++)
        v = select(v, (RL_VT)RL_TRANSFORM(in[k * RL_SK]),
                   lanes == (RL_VT)(k - j));
#endif
    rl_put_row(out + j, v, 1);
  }
}
#endif

#ifdef RL_SHIFT
/* Rows of a box whose steps along Q, each RL_BK elements contiguous in the
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
                                __global RL_T *restrict out, RL_I mq,
                                int head, int ext) {
  union {
    RL_VT v[RL_BQ * RL_BK / RL_STREAM + 2];
    RL_T e[(RL_BQ * RL_BK / RL_STREAM + 2) * RL_STREAM];
  } buf;
  RL_I i = rl_shift_head(out), off = (RL_STREAM - i) % RL_STREAM,
       n = mq * RL_BK;
  for (RL_I q = 0; q < mq; q++)
#pragma unroll
    for (int j = 0; j < RL_BK; j += RL_STREAM)
      ((rl_row_at *)(buf.e + off + q * RL_BK + j))->v =
          RL_TRANSFORM(RL_AT(in + q * RL_SQ + j));
  if (ext)
    ((rl_row_at *)(buf.e + off + n))->v = RL_TRANSFORM(RL_AT(in + mq * RL_SQ));
  for (RL_I k = 0; head && k < i; k++) out[k] = buf.e[off + k];
  for (; i + RL_STREAM <= n || (ext && i < n); i += RL_STREAM)
    rl_put_row(out + i, buf.v[(off + i) / RL_STREAM], 1);
  for (; i < n; i++) out[i] = buf.e[off + i];
}
#endif

/* Asks for the line at p ahead of its first read: clang's builtin where the
 * kernel is compiled for a CPU (PoCL's prefetch() does nothing). Elsewhere
 * nothing: on NVIDIA's OpenCL every kernel that prefetched failed to build,
 * and a GPU runs these CPU boxes only when a test forces them. */
#if defined(RL_AHEAD) || defined(RL_LEAD)
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || \
    defined(__arm__) || defined(__riscv) || defined(__powerpc64__)
#define RL_PREFETCH(p) __builtin_prefetch(p)
#else
#define RL_PREFETCH(p) ((void)0)
#endif
#endif

#ifdef RL_PLANES
/* A box's m pixels, each RL_PLANE_A elements one after another in each of
 * RL_PLANE_B source rows RL_SK apart, and RL_PLANE_B one after another in
 * each of RL_PLANE_A destination rows RL_DP apart: element c of source row
 * i goes to element i of destination row c. Interleaving planes (K's rows
 * into pixels along P) has RL_PLANE_A 1; taking them apart (RL_SPLIT: P's
 * elements of pixels along K) RL_PLANE_B 1; RL_WEAVE does both, the pixels
 * along Q. RL_PLANE_W pixels at a time as RL_PLANES vectors from one side
 * shuffled into RL_PLANES vectors of the other (RL_MIX), RL_PLANE_RUN such
 * steps at once, each destination row's stores one after another (taking
 * apart, a line of them, so that a row's non-temporal stores fill it
 * before the next row's start), then single steps; the last pixels, under
 * RL_PLANE_W, one element at a time. RL_PLANE_IN(i, c, p) and
 * RL_PLANE_OUT(i, c, p) are where pixel p's element c of source row i lies
 * on each side. With RL_LEAD, each load first asks for the line RL_LEAD
 * elements on along its row. */
#define RL_PLANE_IN(i, c, p) ((i)*RL_SK + (p)*RL_PLANE_A + (c))
#define RL_PLANE_OUT(i, c, p) ((c)*RL_DP + (p)*RL_PLANE_B + (i))
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
      __global const RL_T *at = in + RL_PLANE_IN(i, v * RL_PLANE_W, p);
#ifdef RL_LEAD
      RL_PREFETCH(at + RL_LEAD);
#endif
      x[i * RL_PLANE_A + v] = RL_AT(at);
    }
#pragma unroll
  for (int r = 0; r < RL_PLANES; r++) y[r] = RL_MIX(x, r);
}
static inline void rl_planes(__global const RL_T *restrict in,
                             __global RL_T *restrict out, RL_I m,
                             int stream) {
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
          rl_put_row(out + RL_PLANE_OUT(u * RL_PLANE_W, c,
                                        p + s * RL_PLANE_W),
                     RL_TRANSFORM(y[s][c * RL_PLANE_B + u]), stream);
  }
#if RL_PLANE_RUN > 1
  for (; p + RL_PLANE_W <= m; p += RL_PLANE_W) { /* single steps */
    RL_VT y[RL_PLANES];
    rl_plane_mix(in, p, y);
#pragma unroll
    for (int r = 0; r < RL_PLANES; r++)
      rl_put_row(out + RL_PLANE_OUT(r % RL_PLANE_B * RL_PLANE_W,
                                    r / RL_PLANE_B, p),
                 RL_TRANSFORM(y[r]), stream);
  }
#endif
  for (; p < m; p++)
    for (int i = 0; i < RL_PLANE_B; i++)
      for (int c = 0; c < RL_PLANE_A; c++)
        out[RL_PLANE_OUT(i, c, p)] = RL_TRANSFORM(in[RL_PLANE_IN(i, c, p)]);
}
#endif

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
 * element r % RL_BK at step r / RL_BK). A box moves RL_GROUP squares side
 * by side along K at once. */
#ifndef RL_GROUP
#define RL_GROUP 1
#endif
#ifdef RL_SPAN
#define RL_SIDE_Q RL_SPAN
#else
#define RL_SIDE_Q 1
#endif
#if defined(RL_SPAN) || RL_FLAT == 1
#define RL_ROW(r) ((r) / RL_BK * RL_SQ + (r) % RL_BK * RL_SK)
#else
#define RL_ROW(r) ((r) * RL_SK)
#endif
#ifdef RL_TILE
#define RL_ST uint4
#define RL_SIDE_K (RL_TILE / RL_SIDE_Q)
#define RL_AS_ROW(x) RL_CAT(as_, RL_VT)(x)
#elif defined(RL_WIDE)
#define RL_ST uint4
#define RL_SIDE_K 4
#define RL_AS_ROW(x) RL_BYTE_SQUARE(as_uchar16(x))
#else
#define RL_ST RL_VT
#define RL_SIDE_K (RL_VEC / RL_SIDE_Q)
#define RL_AS_ROW(x) (x)
#endif
/* RL_SIDE_P: a square's side along P; RL_ROW_P: where along P its row j
 * starts, in steps of j */
#ifdef RL_WIDE
#define RL_SIDE_P 16
#define RL_ROW_P 4
#else
#define RL_SIDE_P RL_VEC
#define RL_ROW_P 1
#endif
/* 16 bytes as a 4 x 4 square of bytes, transposed */
#define RL_BYTE_SQUARE(v) (v).s048c159d26ae37bf
/* (a.lo, b.lo) interleaved, from their concatenation */
#if RL_VEC == 2
#define RL_ZIP s01
#define RL_ROUNDS 1
#elif RL_VEC == 4
#define RL_ZIP s0213
#define RL_ROUNDS 2
#elif RL_VEC == 8
#define RL_ZIP s04152637
#define RL_ROUNDS 3
#elif RL_VEC == 16
#define RL_ZIP s08192a3b4c5d6e7f
#define RL_ROUNDS 4
#endif

/* Transposes the square in r: log2(RL_VEC) rounds, each interleaving row i
 * with row i + RL_VEC / 2 into rows 2i and 2i + 1. */
static inline void rl_transpose(RL_ST *r) {
#pragma unroll
  for (int round = 0; round < RL_ROUNDS; round++) {
    RL_ST t[RL_VEC];
#pragma unroll
    for (int i = 0; i < RL_VEC / 2; i++) {
      RL_ST lo = (RL_ST)(r[i].lo, r[i + RL_VEC / 2].lo),
            hi = (RL_ST)(r[i].hi, r[i + RL_VEC / 2].hi);
      t[2 * i] = lo.RL_ZIP;
      t[2 * i + 1] = hi.RL_ZIP;
    }
#pragma unroll
    for (int i = 0; i < RL_VEC; i++) r[i] = t[i];
  }
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
  return as_uint4(RL_AT(in + j * RL_SK));
#elif RL_TILE == 16
  RL_VT v = (RL_VT)(RL_PIECE(in + RL_ROW(4 * j)),
                    RL_PIECE(in + RL_ROW(4 * j + 1)),
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
 * (host/plan_lines.c plan_flat, RL_FLAT 1): along each of P's elements,
 * the box's destination is one run of mq x RL_BK elements, row r of which
 * is K's element r % RL_BK at Q step r / RL_BK (RL_ROW). Squares take
 * RL_VEC consecutive rows of that run by RL_VEC elements along P, wherever
 * along Q and K the rows fall, and each first prefetches the rows RL_AHEAD
 * squares on. The other way (plan_flat_cols, RL_FLAT 2): P whole in each
 * box and under a square, Q continuing its run in the source (2N's or 4N's
 * images, then the pixels); along each of K's elements the box's source is
 * one run of mq x RL_BP elements, column c of which is P's element
 * c % RL_BP at Q step c / RL_BP (RL_COL), and squares take RL_VEC
 * consecutive columns of it by RL_VEC elements along K. Either way a
 * square reads RL_VEC source rows (RL_FLAT_IN(a), a along the first side)
 * along the second side and writes each of its RL_VEC destination rows
 * (RL_FLAT_OUT(b), b along the second) as one row piece. The last square
 * along each side ends where the box does, over part of the one before
 * (each element it writes again gets the same value); a box under a
 * square along either goes element by element. */
#ifdef RL_FLAT
#if RL_FLAT == 1
#define RL_FLAT_IN(a) RL_ROW(a)
#define RL_FLAT_OUT(b) ((b) * RL_DP)
#else
#define RL_COL(c) ((c) % RL_BP * RL_DP + (c) / RL_BP * RL_DQ)
#define RL_FLAT_IN(a) ((a) * RL_SK)
#define RL_FLAT_OUT(b) RL_COL(b)
#endif
#ifdef RL_FLAT_STAGE
/* RL_FLAT 1, more than 16 destination rows in one cache set (host/
 * plan_lines.c plan_flat): the squares' rows go to a private buffer of
 * RL_FLAT_STAGE elements, the box's rows RL_BQ x RL_BK apart, and each row
 * goes out whole after the last square */
typedef struct __attribute__((packed)) rl_private_at {
  RL_VT v;
} rl_private_at;
#define RL_FLAT_PUT(b, a)                                                    \
  (((rl_private_at *)(stage + (b) * (RL_BQ * RL_BK) + (a)))->v)
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

/* A staged box's last RL_EQ % RL_SPAN steps along Q, short of a square's
 * RL_SPAN (CHWN4 with N not a multiple of 4: the box holds all of Q, so
 * they are the same in every box): a square per RL_VEC pixels along P (mp
 * of them, a multiple of RL_VEC), its rows past those steps read again from
 * the first, and of each transposed row the first RL_REST elements, the
 * data, put in the stage at `stage` (the first of those steps, pixel 0).
 * Before, element by element. Alternating runs in one process on the
 * 2-core machine, NCHW -> CHWN4, median GB/s before and after (copy kernel
 * 16-18): int8 6x256x112x112 7.0 and 12.2, 7.2 and 11.5, 7.2 and 12.6, 7.6
 * and 12.3; 7x256x112x112 6.7 and 12.5, 7.6 and 14.2; 5x256x112x112 9.7
 * and 11.1, 8.2 and 11.5, 9.6 and 11.5, 11.5 and 12.7; f16 7x256x112x112
 * 12.2 and 15.3, 11.7 and 14.0, 12.7 and 15.3, 13.7 and 16.3; int8
 * 30x256x56x56 and 62x256x56x56 alike (Q's last 2 steps are 7% and 3% of
 * the data). The loop below as one memcpy measured alike. */
#if defined(RL_STAGED) && defined(RL_SPAN) && RL_EQ % RL_SPAN && \
    !defined(RL_TILE) && !defined(RL_WIDE)
#define RL_REST (RL_EQ % RL_SPAN * RL_BK)
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
        stage[(p + j) * RL_DP + i] = ((RL_T *)&v)[i];
    }
  }
}
#endif

/* An mp x mq x mk box that holds data throughout: whole squares, each read
 * as RL_VEC rows along P, transposed in registers and written as RL_VEC rows
 * along K, RL_GROUP of them along K at a time, each row's pieces one after
 * another; element by element where P, K or Q (RL_SIDE_Q) leaves less than
 * a group, except that with RL_SQUARE_TAIL (plain squares, K's block whole
 * squares: host/plan_lines.c square_tail) a box builds its rows past the last
 * square along P into vectors, streamed where the box streams. With `stage`
 * (RL_STAGED: whole squares along P and K), the rows go there, at their
 * place in the box's destination run, instead, as do Q's last steps short
 * of a square (squares of their own with RL_REST). With RL_AHEAD (K's rows
 * follow one another in the source, so each Q step reads one short run,
 * far from the last), each Q step first prefetches the run of the step
 * that many steps on, line by line: the core's own prefetchers have no run
 * to follow. With RL_LEAD and `lead`, each Q step first asks for the line
 * RL_LEAD elements past the box's last along P of each row it reads. */
static inline void rl_box_squares(__global const RL_T *restrict src,
                                  __global RL_T *restrict dst, RL_I mp,
                                  RL_I mq, RL_I mk, int stream, int lead,
                                  RL_T *stage) {
  RL_I sp = mp - mp % RL_SIDE_P, sk = mk - mk % (RL_SIDE_K * RL_GROUP),
       sq = mq - mq % RL_SIDE_Q;
  for (RL_I q = 0; q < mq; q += RL_SIDE_Q) {
    __global const RL_T *in = src + q * RL_SQ;
    __global RL_T *out = dst + q * RL_DQ;
    RL_I ep = q < sq ? sp : 0; /* squares end, elements follow, here */
#ifdef RL_REST
    if (stage && q == sq && mq - q == RL_EQ % RL_SPAN) {
      rl_rest_squares(in, mp, stage + q * RL_DQ);
      continue;
    }
#endif
#ifdef RL_LEAD
    for (RL_I j = 0; lead && j < RL_SIDE_Q && q + j < mq; j++)
      for (RL_I k = 0; k < mk; k++)
        RL_PREFETCH(in + j * RL_SQ + k * RL_SK + mp - 1 + RL_LEAD);
#endif
#ifdef RL_AHEAD
    if (q + RL_AHEAD < mq) {
      __global const RL_T *next = in + RL_AHEAD * RL_SQ;
      for (RL_I e = 0; e < mk * RL_SK; e += 64 / sizeof(RL_T))
        RL_PREFETCH(next + e);
      RL_PREFETCH(next + mk * RL_SK - 1);
    }
#endif
    for (RL_I p = 0; p < ep; p += RL_SIDE_P)
      for (RL_I k = 0; k < sk; k += RL_SIDE_K * RL_GROUP) {
        RL_ST r[RL_GROUP][RL_VEC];
#pragma unroll
        for (int g = 0; g < RL_GROUP; g++) {
#pragma unroll
          for (int j = 0; j < RL_VEC; j++)
            r[g][j] = rl_square_row(in + (k + g * RL_SIDE_K) * RL_SK + p, j);
          rl_transpose(r[g]);
        }
#pragma unroll
        for (int j = 0; j < RL_VEC; j++)
#pragma unroll
          for (int g = 0; g < RL_GROUP; g++) {
            RL_I o = (p + j * RL_ROW_P) * RL_DP + k + g * RL_SIDE_K;
            RL_VT v = RL_TRANSFORM(RL_AS_ROW(r[g][j]));
            if (stage) /* unaligned where N leaves rows off the grid */
              ((rl_row_at *)(stage + q * RL_DQ + o))->v = v;
            else
              rl_put_row(out + o, v, stream);
          }
      }
#ifdef RL_SQUARE_TAIL
    if (!stage && sk == mk) { /* the rows past the squares, as vectors */
      for (RL_I p = ep; p < mp; p++)
#pragma unroll
        for (RL_I k = 0; k < RL_BK; k += RL_VEC) /* offsets fixed */
          if (k < mk) {
            RL_T e[RL_VEC];
#pragma unroll
            for (int i = 0; i < RL_VEC; i++) e[i] = in[p + (k + i) * RL_SK];
            rl_put_row(out + p * RL_DP + k,
                       RL_TRANSFORM(RL_CAT(vload, RL_VEC)(0, e)), stream);
          }
      continue;
    }
#endif
    for (RL_I j = 0; j < RL_SIDE_Q && q + j < mq; j++)
      for (RL_I p = sk < mk ? 0 : ep; p < mp; p++)
        for (RL_I k = p < ep ? sk : 0; k < mk; k++) {
          RL_T e = RL_TRANSFORM(in[j * RL_SQ + p + k * RL_SK]);
          RL_I o = j * RL_DQ + p * RL_DP + k;
          if (stage)
            stage[q * RL_DQ + o] = e;
          else
            out[o] = e;
        }
  }
}
#ifdef RL_COPY_IN
/* A box of whole squares (RL_VT rows of 16 bytes) whose source rows or
 * destination rows fall into one cache set (host/plan_lines.c
 * plan_copy_in), in three passes over private buffers: K's source rows
 * read whole into one, each row's runs at its mq steps along Q one after
 * another; the squares transposed from there into the other, which holds
 * the box's destination rows; those written out whole, one after another,
 * each P step's Q steps together (where Q continues K's rows, one run). */
static inline void rl_copy_in(__global const RL_T *restrict src,
                              __global RL_T *restrict dst, RL_I mp, RL_I mq,
                              RL_I mk, int stream) {
  const RL_I w = RL_BP / RL_VEC, h = RL_BK / RL_VEC; /* vectors per row */
  RL_VT in[RL_BK * RL_BQ * w], out[RL_BQ * RL_BP * h];
  for (RL_I k = 0; k < mk; k++)
    for (RL_I q = 0; q < mq; q++)
      for (RL_I p = 0; p < mp; p += RL_VEC)
        in[(k * RL_BQ + q) * w + p / RL_VEC] =
            RL_AT(src + k * RL_SK + q * RL_SQ + p);
  for (RL_I q = 0; q < mq; q++)
    for (RL_I p = 0; p < mp; p += RL_VEC)
      for (RL_I k = 0; k < mk; k += RL_VEC) {
        RL_VT r[RL_VEC];
#pragma unroll
        for (int j = 0; j < RL_VEC; j++)
          r[j] = in[((k + j) * RL_BQ + q) * w + p / RL_VEC];
        rl_transpose(r);
#pragma unroll
        for (int j = 0; j < RL_VEC; j++)
          out[(q * RL_BP + p + j) * h + k / RL_VEC] = r[j];
      }
  for (RL_I p = 0; p < mp; p++)
    for (RL_I q = 0; q < mq; q++)
      for (RL_I k = 0; k < mk; k += RL_VEC)
        rl_put_row(dst + q * RL_DQ + p * RL_DP + k,
                   RL_TRANSFORM(out[(q * RL_BP + p) * h + k / RL_VEC]),
                   stream);
}
#endif
#endif

#ifdef RL_NIBBLES
/* 32-bit words of nibbles are read little-endian: element 0 in the low
 * nibble of the first byte (RL_LE swaps bytes on a big-endian device) */
#ifdef __ENDIAN_LITTLE__
#define RL_LE(v) (v)
#else
#define RL_LE(v)                                                             \
  (((v) >> 24) | (((v) >> 8) & 0xFF00u) | (((v)&0xFF00u) << 8) | ((v) << 24))
#endif
typedef struct __attribute__((packed)) rl_word_at {
  uint v;
} rl_word_at;
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
 * i + k * RL_SK. With RL_NIBBLES (4-bit elements, two to a byte, low nibble
 * first), offsets count elements from the source's first byte, and each
 * call writes a byte of the row (which starts on one): elements k and k + 1,
 * the second zero when it is past the row's `data`. */
#ifdef RL_NIBBLES
#define RL_EL 2
#define RL_NIBBLE(src, i) (((src)[(i) >> 1] >> (((i)&1) * 4)) & 0xF)
#define RL_PUT(out, src, i, k, data)                                         \
  ((out)[(k) / 2] =                                                          \
       (RL_T)(RL_NIBBLE(src, (i) + (k)*RL_SK) |                              \
              ((k) + 1 < (data) ? RL_NIBBLE(src, (i) + ((k) + 1) * RL_SK)    \
                                      << 4                                   \
                                : 0)))
#else
#define RL_EL 1
#define RL_PUT(out, src, i, k, data)                                         \
  ((out)[k] = RL_TRANSFORM((src)[(i) + (k)*RL_SK]))
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
#if RL_BP >= 64
#define RL_NV 8
#elif RL_BP >= 32
#define RL_NV 4
#elif RL_BP >= 16
#define RL_NV 2
#else
#define RL_NV 1
#endif
#if RL_BK >= 32
#define RL_NG 4
#elif RL_BK >= 16
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
typedef struct __attribute__((packed)) rl_words_in {
  RL_NVT v;
} rl_words_in;
typedef struct __attribute__((packed)) rl_words_out {
  RL_NGT v;
} rl_words_out;
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
typedef struct __attribute__((packed)) rl_bytes16 {
  uchar16 v;
} rl_bytes16;
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
 * RL_SK nibbles apart; its destination rows at byte `out` of `stage` (if
 * any) or dst, dp nibbles apart (with RL_ODD_K, at nibble `out` of
 * `stage`). With `high` a constant, every row's offset and nibble are
 * too. */
static inline void rl_nibble_block(__global const uchar *restrict row,
                                   int high, __global uchar *restrict dst,
                                   uchar *stage, RL_I out, RL_I dp,
                                   int lead) {
#if RL_NV == 1 /* each transposed vector is a destination row's words */
  RL_NGT r[8];
#pragma unroll
  for (int i = 0; i < 8; i++) {
    rl_row_words u;
#pragma unroll
    for (int g = 0; g < RL_NG; g++) {
      RL_I c = (8 * g + i) * RL_SK + high;
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
      ((__global rl_words_out *)(dst + at))->v = RL_LE(r[j]);
#endif
  }
#else
  RL_NVT r[RL_NG][8];
#pragma unroll
  for (int g = 0; g < RL_NG; g++) {
#pragma unroll
    for (int i = 0; i < 8; i++) {
      RL_I c = (8 * g + i) * RL_SK + high;
      __global const uchar *at_row = row + c / 2;
#ifdef RL_LEAD
      if (lead) RL_PREFETCH(at_row + RL_LEAD / 2);
#endif
      r[g][i] = RL_LE(((__global rl_words_in *)at_row)->v);
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
        ((__global rl_words_out *)(dst + at))->v = RL_LE(o.v);
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
static inline void rl_nibble_squares(__global const uchar *restrict src,
                                     RL_I s, __global uchar *restrict dst,
                                     RL_I mp, RL_I mq, RL_I mk, uchar *stage,
                                     int lead) {
  RL_I sp = mp < 8 * RL_NV ? 0 : mp, dp = stage ? RL_BK : RL_DP;
#ifdef RL_ODD_K /* K's last block too, its words put at any nibble */
  RL_I sk = mk < 8 * RL_NG ? 0 : mk;
#else
  RL_I sk = mk - mk % (8 * RL_NG);
#endif
  for (RL_I q = 0; q < mq; q++) {
    RL_I in = s + q * RL_SQ, at = q * RL_DQ;
    for (RL_I b = 0; b < sp; b += 8 * RL_NV)
      for (RL_I c = 0; c < sk; c += 8 * RL_NG) {
        RL_I p = min(b, sp - 8 * RL_NV), k = min(c, sk - 8 * RL_NG);
#ifdef RL_ODD_K
        RL_I first = in + p + k * RL_SK, out = at + p * dp + k;
#else
        /* the destination's rows start on whole bytes: P's and K's
         * offsets are multiples of 8, the rest even (the host's plan) */
        RL_I first = in + p + k * RL_SK, out = (at + p * dp + k) / 2;
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
                      RL_NIBBLE(src, in + p + k * RL_SK));
#else
      for (RL_I k = p < sp ? sk : 0; k < mk; k += 2)
        if (stage)
          RL_PUT(stage + (at + p * dp) / 2, src, in + p, k, mk);
        else
          RL_PUT(dst + (at + p * RL_DP) / 2, src, in + p, k, mk);
#endif
  }
}
#endif

/* For CPU devices: a box of whole destination rows per work-item, sized to
 * stay in the first-level cache. The box spans RL_BP x RL_BQ rows of RL_BK
 * elements over axes P, Q and K (K innermost in the destination, source
 * stride RL_SK); rl_box gives its offsets and how far data reaches along
 * each axis, the rest is zero (with RL_SKIP, up to the destination's end
 * only: a box may run past it, to the end of a source block). Reads along
 * K are strided when the box is a transpose, but every source line the box
 * touches is read whole from the cache as P advances; with RL_VEC > 1 such
 * a box, when all data, moves as squares transposed in registers. */
__kernel void rl_lines(__global const RL_T *restrict src, long src_off,
                       __global RL_T *restrict dst, long dst_off) {
  RL_I id = (RL_I)get_global_id(0);
  const RL_I nk = (RL_EK + RL_BK - 1) / RL_BK, nq = (RL_EQ + RL_BQ - 1) / RL_BQ,
             np = (RL_EP + RL_BP - 1) / RL_BP;
  RL_I k0 = id % nk * RL_BK, p0, q0;
  id /= nk;
#ifdef RL_P_FIRST
  p0 = id % np * RL_BP;
  id /= np;
#endif
  q0 = id % nq * RL_BQ;
  id /= nq;
#ifndef RL_P_FIRST
  p0 = id % np * RL_BP;
  id /= np;
#endif
  if (id >= RL_NREST) return;
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
  RL_I mp = min((RL_I)RL_BP, (RL_I)(RL_EP - p0));
  RL_I mq = min((RL_I)RL_BQ, (RL_I)(RL_EQ - q0));
  RL_I mk = min((RL_I)RL_BK, (RL_I)(RL_EK - k0));
#ifdef RL_SKIP /* past the destination's end: nothing to write */
  mp = clamp(n[3], (RL_I)0, mp);
  mq = clamp(n[4], (RL_I)0, mq);
#endif
  RL_I dq = clamp(n[1], (RL_I)0, mq);
  int stream = 0;
#ifdef RL_STREAM
  stream = (ulong)dst % sizeof(RL_VT) == 0; /* then every store is aligned */
#endif
#ifdef RL_ODD_K
  /* destination rows that start mid-byte (host/plan_nibbles.c
   * nibble_odd_k): each Q step's run of mp rows, whole bytes, put together
   * in a private buffer, then written out. Words and nibbles go in as
   * read-modify-writes of the bytes they share, so the buffer starts as
   * zeros, never read before it is written. */
  uchar run[RL_BP * RL_BK / 2 + 8] = {0};
  for (RL_I q = 0; q < mq; q++) {
    __global uchar *out = dst + q * RL_DQ / 2;
    RL_I i = 0, bytes = mp * RL_BK / 2;
    rl_nibble_squares(src, s + q * RL_SQ, dst, mp, 1, mk, run, 0);
    for (; i + 16 <= bytes; i += 16)
      ((__global rl_bytes16 *)(out + i))->v = ((rl_bytes16 *)(run + i))->v;
    for (; i < bytes; i++) out[i] = run[i];
  }
  return;
#endif
#if RL_VEC > 1
  /* K's data count is least at the box's last P and Q */
  if (n[0] >= mp && dq == mq &&
      n[2] - (mp - 1) * RL_CP - (mq - 1) * RL_CQ >= mk) {
#ifdef RL_NIBBLES
#ifdef RL_STAGED
    /* the box's destination rows (host/plan_nibbles.c nibble_staged) through a
     * private buffer, RL_BK nibbles apart, then written in order: one
     * run of whole 16-byte pieces (RL_DP == RL_BK), or each row whole
     * (RL_BK and RL_DP multiples of 32: each row starts on the grid) */
    if (RL_DP == RL_BK ? mp * RL_DP % 32 == 0 : mk == RL_BK) {
      RL_VT stage[RL_STAGED];
      const RL_I run = RL_DP == RL_BK ? mp * RL_DP / 32 : RL_BK / 32;
      rl_nibble_squares(src, s, dst, mp, mq, mk, (uchar *)stage,
                        p0 + mp + RL_LEAD <= RL_EP);
      for (RL_I p = 0; p < (RL_DP == RL_BK ? 1 : mp); p++)
        for (RL_I i = 0; i < run; i++)
          rl_put_row(dst + p * (RL_DP / 2) + i * 16, stage[p * run + i],
                     stream);
      return;
    }
#endif
    rl_nibble_squares(src, s, dst, mp, mq, mk, 0, 0);
    return;
#else
#if RL_FLAT == 1
    rl_flat_squares(src, dst, mq * RL_BK, mp);
    return;
#elif RL_FLAT == 2
    rl_flat_squares(src, dst, mk, mq * RL_BP);
    return;
#endif
#ifdef RL_COPY_IN
    /* P's extent whole squares, K's extent whole blocks, so that mk is
     * RL_BK (host/plan_lines.c) */
    if (mp == RL_BP && mq == RL_BQ && stream) /* the common box, fixed */
      rl_copy_in(src, dst, RL_BP, RL_BQ, RL_BK, 1);
    else
      rl_copy_in(src, dst, mp, mq, mk, stream);
    return;
#endif
    int lead = 0;
#ifdef RL_LEAD
    lead = p0 + mp - 1 + RL_LEAD < RL_EP;
#endif
#ifdef RL_STAGED
    /* whole squares along P and K: the box's destination, one run of
     * whole rows, through a private buffer, then written in order */
    if (mp % RL_SIDE_P == 0 && mk % (RL_SIDE_K * RL_GROUP) == 0) {
      RL_VT stage[RL_STAGED];
      rl_box_squares(src, dst, mp, mq, mk, 0, lead, (RL_T *)stage);
      for (RL_I i = 0; i < mp * RL_DP / vec_step(RL_VT); i++)
        rl_put_row(dst + i * vec_step(RL_VT), stage[i], stream);
      return;
    }
    /* a box short of a square along P, where Q's extent leaves its rows
     * off the grid of stores (CHWN4 with N not a multiple of 4): plain */
    if (RL_DP % RL_VEC) stream = 0;
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
  for (RL_I p = 0; p < mp; p++) {
    RL_I data_q = p < n[0] ? dq : 0, head = 0;
#ifdef RL_SHIFT
    RL_I first = n[2] - p * RL_CP; /* data in the row's first step */
    if (mk == RL_BK && data_q > 0 && first >= RL_BK) {
      if (q0 > 0) /* the box before wrote the row's first elements */
        head = rl_shift_head(dst + p * RL_DP);
      if (data_q == mq && first - (mq - 1) * RL_CQ >= RL_BK) {
        rl_shift_row(src + s + p * RL_SP, dst + p * RL_DP, mq, q0 == 0,
                     mq == RL_BQ && q0 + mq < RL_EQ &&
                         first - mq * RL_CQ >= RL_BK);
        continue;
      }
    }
#endif
    for (RL_I q = 0; q < mq; q++) {
      RL_I in = s + p * RL_SP + q * RL_SQ;
      __global RL_T *out = dst + (p * RL_DP + q * RL_DQ) / RL_EL;
      RL_I data = q < data_q ? clamp((RL_I)(n[2] - p * RL_CP - q * RL_CQ),
                                     (RL_I)0, mk)
                             : 0,
           k = q ? 0 : head;
#ifdef RL_SKIP
      RL_I write =
          clamp((RL_I)(n[5] - p * RL_WP - q * RL_WQ), (RL_I)0, mk);
#else
      RL_I write = mk;
#endif
      int whole = data == RL_BK && !k;
#ifdef RL_STREAM_ROWS
      if (stream && (whole ? RL_VEC == 1
                           : !k && write == RL_BK && RL_PAD_ROW(data))) {
        rl_stream_row(begin, src + in, out, data);
        continue;
      }
#endif
#if defined(RL_NIBBLES) && RL_SK == 1 && RL_BK % 8 == 0
      if (whole) { /* a whole row of words, moved down a nibble where its
                    * source starts mid-byte */
        __global const uchar *row = src + in / 2;
        for (int j = 0; j < RL_BK / 8; j += RL_ROW_WORDS) {
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
        for (int j = 0; j < RL_BK; j += RL_EL) RL_PUT(out, src, in, j, RL_BK);
        continue;
      }
      for (; k < data; k += RL_EL) RL_PUT(out, src, in, k, data);
      for (; k < write; k += RL_EL) out[k / RL_EL] = (RL_T)0; /* padding */
    }
  }
}
#endif
