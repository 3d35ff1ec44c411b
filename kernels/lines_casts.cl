/* lines_casts.cl - CPU boxes that cast (RL_CAST_ROWS; docs/CASTS.md), 16
 * elements at a time, each 16 converted as a vector by kernels/cast.cl's
 * functions and written as one: a box that transposes, all data, as squares
 * of 16 x 16 transposed in registers; short rows that another axis
 * continues, as runs (rl_cast_run; runs of 4 or 8 several to a vector,
 * written a run at a time); else each destination row's data
 * gathered into vectors of the source's type (loaded as such where K runs
 * contiguous in the source), the rest of the row, and the pairs without a
 * vector form, element by element through rl_cast. Per channel, a row's
 * scale and zero point are read once, where K does not run along the
 * channel dim (RL_K_CHAN), and a square's once per Q step, where P does
 * not either (RL_P_CHAN); where K does, each lane's, read from the row's
 * first channel on (RL_K_STEP). */
#ifdef RL_CAST_ROWS
#define RL_SV RL_CAT(RL_TS, 16)
#define RL_DV RL_CAT(RL_T, 16)
RL_PACKED(rl_svec_at, RL_SV);
RL_PACKED(rl_dvec_at, RL_DV);
/* A square converts before its transpose by the element types' rule
 * (cast.cl's RL_CONVERT_FIRST_OF) where one quantization serves every
 * lane (per tensor); per channel, after. */
#ifdef RL_QC
#define RL_CONVERT_FIRST 0
#else
#define RL_CONVERT_FIRST RL_CONVERT_FIRST_OF(RL_TS, RL_T)
#endif

/* A row's quantization (each side's scale bits and zero point): the
 * plan's, or per channel that of the channel of destination offset o (the
 * row's first element; where RL_K_CHAN is not defined, every element's). */
typedef struct rl_row_quant {
  long ss, sz, ds, dz;
} rl_row_quant;
static inline rl_row_quant rl_quant_at(RL_I o RL_QC_ARG) {
  rl_row_quant r = {RL_Q_SS, RL_Q_SZ, RL_Q_DS, RL_Q_DZ};
#ifdef RL_QC
  long c = (long)rl_chan(o);
#if RL_QC == 1
  r.ds = RL_QC_S(c);
  r.dz = RL_QC_Z(c);
#else
  r.ss = RL_QC_S(c);
  r.sz = RL_QC_Z(c);
#endif
#else
  (void)o;
#endif
  return r;
}

/* Row o's quantization, z being that of another row of its Q step: z,
 * unless rows along P may lie in different channels (RL_P_CHAN) */
static inline rl_row_quant rl_quant_row(rl_row_quant z, RL_I o RL_QC_ARG) {
#ifdef RL_P_CHAN
  return rl_quant_at(o RL_QC_PASS);
#else
  (void)o;
  return z;
#endif
}

/* 16 converted elements written at `at`: with RL_CAST_STREAM (the host's
 * plan: a destination past the cache, every row whole vectors) a
 * non-temporal store where aligned, as every row then is */
#if defined(RL_CAST_STREAM) && !(defined(RL_QC) && defined(RL_K_CHAN))
#define RL_CAST_PUT(at, v)                                                     \
  if ((ulong)(at) % sizeof(RL_DV) == 0)                                        \
    __builtin_nontemporal_store(v, (__global RL_DV *)(at));                    \
  else                                                                         \
    RL_PACKED_AT(rl_dvec_at, at) = (v)
#else
#define RL_CAST_PUT(at, v) RL_PACKED_AT(rl_dvec_at, at) = (v)
#endif

/* n source vectors IN(i) shuffled by the generator's RL_CAST_MIX into n
 * destination vectors, each converted (CAST) and written at OUT(r), the
 * shuffles in whichever type's lanes shuffle faster (RL_LANES_COST): a
 * conversion lane by lane commutes with them (rl_cast_mix, rl_cast_weave) */
#define RL_CAST_SHUFFLED(n, IN, OUT, CAST)                                     \
  if (RL_LANES_COST(RL_TS) < RL_LANES_COST(RL_T)) {                            \
    RL_SV x_[n];                                                               \
    _Pragma("unroll") for (int i_ = 0; i_ < (n); i_++) x_[i_] = IN(i_);        \
    _Pragma("unroll") for (int r_ = 0; r_ < (n); r_++)                         \
        RL_CAST_PUT(OUT(r_), CAST(RL_CAST_MIX(x_, r_)));                       \
  } else {                                                                     \
    RL_DV x_[n];                                                               \
    _Pragma("unroll") for (int i_ = 0; i_ < (n); i_++) x_[i_] = CAST(IN(i_));  \
    _Pragma("unroll") for (int r_ = 0; r_ < (n); r_++)                         \
        RL_CAST_PUT(OUT(r_), RL_CAST_MIX(x_, r_));                             \
  }

/* Source element j of the 16 from k on */
#define RL_CAST_IN(j) in[(k + (j)) * RL_SSTRIDE_K]

/* 16 elements of a destination row, k on from the row's start, converted
 * as a vector with quantization z, or where K runs along the channel dim
 * with the channel stepping RL_K_STEP an element (the generator says),
 * each lane with its own, from c, RL_ROW_CHAN of the row's offset; K along
 * the channel otherwise: none */
#ifdef RL_VCAST
#if defined(RL_QC) && defined(RL_K_CHAN)
#ifdef RL_K_STEP
#define RL_ROW_CHAN(o) ((long)rl_chan(o))
#define RL_ROW_VCAST(v, z, c, k)                                               \
  rl_vcast_at(v, qc, (c) + (k) * RL_K_STEP, RL_K_STEP, RL_Q_SS, RL_Q_SZ,      \
              RL_Q_DS, RL_Q_DZ)
#endif
#else
#define RL_ROW_CHAN(o) 0L
#define RL_ROW_VCAST(v, z, c, k) rl_vcast(v, (z).ss, (z).sz, (z).ds, (z).dz)
#endif
#endif

/* Destination row `out`: `data` elements converted from `in` on (K's source
 * stride apart) with quantization z, then padding up to `write`; o is the
 * row's destination offset, for each element's channel under RL_K_CHAN. */
static inline void rl_cast_row(__global const RL_TS *restrict in,
                               __global RL_T *restrict out, RL_I data,
                               RL_I write, RL_I o,
                               rl_row_quant z RL_QC_ARG) {
  RL_I k = 0;
  (void)o, (void)z;
#ifdef RL_ROW_VCAST
  long c = data >= 16 ? RL_ROW_CHAN(o) : 0;
  for (; k + 16 <= data; k += 16) {
#if RL_SSTRIDE_K == 1
    RL_SV v = ((__global const rl_svec_at *)(in + k))->v;
#else
    RL_SV v = (RL_SV)(RL_CAST_IN(0), RL_CAST_IN(1), RL_CAST_IN(2),
                      RL_CAST_IN(3), RL_CAST_IN(4), RL_CAST_IN(5),
                      RL_CAST_IN(6), RL_CAST_IN(7), RL_CAST_IN(8),
                      RL_CAST_IN(9), RL_CAST_IN(10), RL_CAST_IN(11),
                      RL_CAST_IN(12), RL_CAST_IN(13), RL_CAST_IN(14),
                      RL_CAST_IN(15));
#endif
    RL_DV y = RL_ROW_VCAST(v, z, c, k);
    RL_CAST_PUT(out + k, y);
  }
#if !defined(RL_QC) || !defined(RL_K_CHAN)
  /* the rest in vectors of 16 while 16 more are to be written: the row's
   * last data (fewer than 16) selected into their lanes and converted as
   * one vector, the other lanes padding (a pixel's 3 channels of 16, NHWC
   * -> NC1HWC0), then padding alone */
  for (; k + 16 <= write; k += 16) {
    RL_DV y = (RL_DV)RL_PAD;
    if (k < data) {
      RL_SV v = rl_vfirst(in + k * RL_SSTRIDE_K, RL_SSTRIDE_K, data - k);
      y = rl_vkeep(RL_ROW_VCAST(v, z, c, k), data - k, y);
    }
    RL_CAST_PUT(out + k, y);
  }
#endif
#endif
#if defined(RL_QC) && defined(RL_K_CHAN) /* a channel per element */
  for (; k < data; k++) out[k] = RL_TRANSFORM_AT(RL_CAST_IN(0), o + k);
#else
  for (; k < data; k++)
    out[k] = (RL_T)rl_cast((ulong)RL_CAST_IN(0), z.ss, z.sz, z.ds, z.dz);
#endif
  for (; k < write; k++) out[k] = RL_PAD;
}

/* The box's rows (n, dq: rl_box's data counts, lines.cl), Q outermost per
 * channel where neither P nor K runs along the channel dim, so that a Q
 * step's quantization is read once, from its first row with data; else P
 * outermost (Q's rows follow one another in the destination) and each
 * row's read. No channel is read for a row of padding. */
#if defined(RL_QC) && !defined(RL_P_CHAN) && !defined(RL_K_CHAN)
#define RL_BY_Q 1
#else
#define RL_BY_Q 0
#endif
#define RL_ROWS_AHEAD 4
#if RL_EXTENT_K == 16 && RL_BLOCK_K == 16 && RL_SSTRIDE_K == 1 &&            \
    RL_DSTRIDE_Q == 16 && RL_SSTRIDE_Q > 0 && RL_SSTRIDE_Q < 16 &&           \
    RL_KDATA_DROP_Q == 0 &&                                                    \
    defined(RL_ROW_VCAST) && !defined(RL_QC)
/* Pixels of D = RL_SSTRIDE_Q elements one after another in the source, each
 * into a row of 16 (a pixel's 3 channels in a C0 of 16, NHWC -> NC1HWC0):
 * 16 pixels' 16 * D elements converted as D vectors, row p's D lanes taken
 * from where they lie among them (two vectors at most), the other lanes
 * padding. Where every one of the 16 rows holds D data. */
#define RL_PIX_D RL_SSTRIDE_Q
#define RL_PIX_I(p, l) ((l) < RL_PIX_D ? RL_PIX_D * (p) % 16 + (l) : -1)
#define RL_PIX_ROW(p)                                                          \
  __builtin_shufflevector(                                                     \
      c[RL_PIX_D * (p) / 16], c[RL_PIX_D * (p) / 16 + 1],                     \
      RL_PIX_I(p, 0), RL_PIX_I(p, 1), RL_PIX_I(p, 2), RL_PIX_I(p, 3),          \
      RL_PIX_I(p, 4), RL_PIX_I(p, 5), RL_PIX_I(p, 6), RL_PIX_I(p, 7),          \
      RL_PIX_I(p, 8), RL_PIX_I(p, 9), RL_PIX_I(p, 10), RL_PIX_I(p, 11),        \
      RL_PIX_I(p, 12), RL_PIX_I(p, 13), RL_PIX_I(p, 14), RL_PIX_I(p, 15))
#define RL_PIX_PUT(p)                                                          \
  {                                                                            \
    RL_DV r = rl_vkeep(RL_PIX_ROW(p), RL_PIX_D, (RL_DV)RL_PAD);                \
    RL_CAST_PUT(out + 16 * (p), r);                                            \
  }
static inline void rl_cast_pixels(__global const RL_TS *restrict in,
                                  __global RL_T *restrict out,
                                  rl_row_quant z) {
  RL_DV c[RL_PIX_D + 1];
  for (int j = 0; j < RL_PIX_D; j++)
    c[j] = RL_ROW_VCAST(((__global const rl_svec_at *)(in + 16 * j))->v, z, 0,
                        0);
  c[RL_PIX_D] = (RL_DV)0;
  RL_PIX_PUT(0) RL_PIX_PUT(1) RL_PIX_PUT(2) RL_PIX_PUT(3)
  RL_PIX_PUT(4) RL_PIX_PUT(5) RL_PIX_PUT(6) RL_PIX_PUT(7)
  RL_PIX_PUT(8) RL_PIX_PUT(9) RL_PIX_PUT(10) RL_PIX_PUT(11)
  RL_PIX_PUT(12) RL_PIX_PUT(13) RL_PIX_PUT(14) RL_PIX_PUT(15)
}
#endif
/* Runs of short rows: K's rows of 2, 4 or 8 elements, whole, that the
 * steps of an axis A continue in the destination (A's destination stride
 * K: Q's, or else P's; into or out of 2N, 4N, NCHW4, CHWN4, nChw8c), so
 * that each step of the other box axis, O, has its rows in one run of A x
 * K elements (RL_RUN_BOX: O's steps continuing it too, the box's),
 * converted and written 16 at a time: where O's steps lie one after
 * another in the source, as squares (RL_SQ, below); runs of 4 or 8 under
 * one quantization, 16 / len of them a vector (RL_RUN_SHORT); else each
 * 16 elements gathered into a vector. The box all data. Per channel,
 * where no axis of the run moves the channel, a run's quantization is
 * read once; else each axis that does steps it by its weight (RL_K_STEP,
 * RL_Q_STEP, RL_P_STEP: the generator's, where the axis moves the channel
 * dim alone; where one moves it with other dims, the rows take the box),
 * so that lane j's channel is the first lane's and RL_RUN_CHAN(j). */
#if defined(RL_VCAST) && RL_EXTENT_K == RL_BLOCK_K && RL_BLOCK_K < 16 &&      \
    16 % RL_BLOCK_K == 0
#if RL_BLOCK_Q > 1 && RL_DSTRIDE_Q == RL_BLOCK_K
#define RL_RUN_A 1 /* A, the axis continuing K's rows, is Q; O is P */
#elif RL_BLOCK_P > 1 && RL_DSTRIDE_P == RL_BLOCK_K && !defined(RL_CAST_PLANES)
#define RL_RUN_A 0 /* A is P, O is Q (4N -> CHWN4; not where P mixes) */
#endif
#endif
#ifdef RL_RUN_A
#if RL_RUN_A
#define RL_A_EXTENT RL_EXTENT_Q
#define RL_A_BLOCK RL_BLOCK_Q
#define RL_A_SSTRIDE RL_SSTRIDE_Q
#define RL_O_SSTRIDE RL_SSTRIDE_P
#define RL_O_DSTRIDE RL_DSTRIDE_P
#ifdef RL_Q_CHAN
#define RL_A_CHAN 1
#endif
#ifdef RL_Q_STEP
#define RL_A_STEP RL_Q_STEP
#endif
#ifdef RL_P_CHAN
#define RL_O_CHAN 1
#endif
#ifdef RL_P_STEP
#define RL_O_STEP RL_P_STEP
#endif
#else
#define RL_A_EXTENT RL_EXTENT_P
#define RL_A_BLOCK RL_BLOCK_P
#define RL_A_SSTRIDE RL_SSTRIDE_P
#define RL_O_SSTRIDE RL_SSTRIDE_Q
#define RL_O_DSTRIDE RL_DSTRIDE_Q
#ifdef RL_P_CHAN
#define RL_A_CHAN 1
#endif
#ifdef RL_P_STEP
#define RL_A_STEP RL_P_STEP
#endif
#ifdef RL_Q_CHAN
#define RL_O_CHAN 1
#endif
#ifdef RL_Q_STEP
#define RL_O_STEP RL_Q_STEP
#endif
#endif
#if RL_A_EXTENT == RL_A_BLOCK && RL_O_DSTRIDE == RL_A_BLOCK * RL_BLOCK_K &&   \
    16 % (RL_A_BLOCK * RL_BLOCK_K) == 0 &&                                     \
    !(RL_A_BLOCK == 4 && RL_BLOCK_K == 4 && RL_O_SSTRIDE == RL_BLOCK_K &&      \
      RL_SSTRIDE_K == 1)
/* (2N -> 4N, NCHW4 -> nChw8c: A's whole extent of K's rows a pixel) the
 * box one run of units of A x K; where those are 4 x 4 and O's rows of K
 * lie one after another (NCHW4 -> NC1HWC0), squares instead (below) */
#define RL_RUN_BOX 1
#define RL_RUN_UNIT (RL_A_BLOCK * RL_BLOCK_K)
#define RL_RUN_STEP RL_O_SSTRIDE
#else
#define RL_RUN_BOX 0
#define RL_RUN_UNIT RL_BLOCK_K
#define RL_RUN_STEP RL_A_SSTRIDE
#endif
/* Where O's steps lie one after another in the source, squares of RL_SQ
 * steps of O by as many pieces of RL_SQ_EL elements of the runs: a vector
 * of the O steps' pieces at each piece of the run, the pieces transposed
 * (RL_SQ_ROUNDS rounds, each interleaving two half vectors' pieces). The
 * piece is an element where O runs along the source and K strided (nChw16c
 * -> 4N), a row of K where O's rows lie one after another (FRACTAL_Z ->
 * NCHW4, HWCN -> 2N), A's elements where O's steps continue them in each of
 * K's strided rows, A x K 16 (4N -> CHWN4: vector j K's row j, each square
 * run then K's rows one after another, put A-major by RL_SQ_SWAP). */
#if !RL_RUN_BOX && RL_O_SSTRIDE == 1 && RL_SSTRIDE_K != 1
#define RL_SQ_EL 1
#elif !RL_RUN_BOX && RL_O_SSTRIDE == RL_BLOCK_K && RL_SSTRIDE_K == 1
#define RL_SQ_EL RL_BLOCK_K
#elif !RL_RUN_BOX && RL_A_SSTRIDE == 1 && RL_O_SSTRIDE == RL_A_BLOCK &&        \
    RL_SSTRIDE_K != 1 && RL_A_BLOCK * RL_BLOCK_K == 16
#define RL_SQ_EL RL_A_BLOCK
#define RL_SQ_IN(j) RL_RUN_IN(j)
#if RL_A_BLOCK == 2
#define RL_SQ_SWAP(v) (v).s02468ace13579bdf
#elif RL_A_BLOCK == 4
#define RL_SQ_SWAP(v) (v).s048c159d26ae37bf
#elif RL_A_BLOCK == 8
#define RL_SQ_SWAP(v) (v).s08192a3b4c5d6e7f
#endif
#endif
#ifndef RL_SQ_IN
#define RL_SQ_IN(j) RL_RUN_IN((j)*RL_SQ_EL)
#endif
#ifndef RL_SQ_SWAP
#define RL_SQ_SWAP(v) (v)
#endif
#ifdef RL_SQ_EL
#define RL_SQ (16 / RL_SQ_EL)
#if RL_SQ_EL == 1
#define RL_SQ_ROUNDS 4
#define RL_SQ_ZIP    s08192a3b4c5d6e7f
#elif RL_SQ_EL == 2
#define RL_SQ_ROUNDS 3
#define RL_SQ_ZIP    s018923ab45cd67ef
#elif RL_SQ_EL == 4
#define RL_SQ_ROUNDS 2
#define RL_SQ_ZIP    s012389ab4567cdef
#else
#define RL_SQ_ROUNDS 1
#define RL_SQ_ZIP    s0123456789abcdef
#endif
#endif
#if !defined(RL_QC) ||                                                        \
    ((defined(RL_K_STEP) || !defined(RL_K_CHAN)) &&                            \
     (defined(RL_A_STEP) || !defined(RL_A_CHAN)) &&                            \
     (!RL_RUN_BOX || defined(RL_O_STEP) || !defined(RL_O_CHAN)))
#define RL_CAST_RUN 1
/* run element j's source, from `in`, the source of the unit it is in */
#define RL_RUN_IN(j)                                                           \
  in[(j) / RL_RUN_UNIT * RL_RUN_STEP +                                         \
     (j) % RL_RUN_UNIT / RL_BLOCK_K * RL_A_SSTRIDE +                           \
     (j) % RL_BLOCK_K * RL_SSTRIDE_K]
#if defined(RL_QC) && (defined(RL_K_CHAN) || defined(RL_A_CHAN) ||            \
                       (RL_RUN_BOX && defined(RL_O_CHAN)))
#define RL_RUN_LANES 1
#ifdef RL_K_STEP
#define RL_RUN_KW RL_K_STEP
#else
#define RL_RUN_KW 0L
#endif
#ifdef RL_A_STEP
#define RL_RUN_AW RL_A_STEP
#else
#define RL_RUN_AW 0L
#endif
#if defined(RL_O_STEP) && RL_RUN_BOX
#define RL_RUN_OW RL_O_STEP
#else
#define RL_RUN_OW 0L
#endif
#define RL_RUN_CHAN(j)                                                         \
  ((j) % RL_BLOCK_K * RL_RUN_KW +                                              \
   (j) % RL_RUN_UNIT / RL_BLOCK_K * RL_RUN_AW +                                \
   (j) / RL_RUN_UNIT * (RL_RUN_BOX ? RL_RUN_OW : RL_RUN_AW))
#if RL_RUN_AW == RL_BLOCK_K * RL_RUN_KW &&                                     \
    (!RL_RUN_BOX || RL_RUN_OW == RL_RUN_UNIT * RL_RUN_KW)
#define RL_RUN_EVEN 1 /* lane j's channel the first lane's and j * K's step */
#endif
/* The lanes' quantization of 16 elements from destination offset o on,
 * each lane's channel's scale bits and zero point (cast.cl rl_lanes_at
 * where they step evenly, a block of 16 where 16 channels in a row) */
static inline rl_lanes rl_run_lanes(RL_I o RL_QC_ARG) {
  long c = (long)rl_chan(o);
#ifdef RL_RUN_EVEN
  return rl_lanes_at(qc, c, RL_RUN_KW);
#else
  rl_lanes q;
#pragma unroll
  for (int l = 0; l < 16; l++) {
    q.s[l] = (uint)RL_QC_S(c + RL_RUN_CHAN(l));
    q.z[l] = (int)RL_QC_Z(c + RL_RUN_CHAN(l));
  }
  return q;
#endif
}
/* A run's quantization (rl_run_q) as RL_RUN_ROW_Q finds it at a run's
 * start o, and RL_RUN_VCAST converting 16 elements at o with it: where
 * the unit's steps leave the channel, the run's first 16 lanes' serve
 * every 16 of it; else each 16 read their own. */
#if (RL_RUN_BOX ? RL_RUN_OW : RL_RUN_AW) == 0
typedef rl_lanes rl_run_q;
#define RL_RUN_ROW_Q(z0, o) rl_run_lanes(o RL_QC_PASS)
#define RL_RUN_VCAST(v, o, q)                                                  \
  rl_vcast_qc(v, (q).s, (q).z, RL_Q_SS, RL_Q_SZ, RL_Q_DS, RL_Q_DZ)
#else
typedef int rl_run_q;
#define RL_RUN_ROW_Q(z0, o) 0
static inline RL_DV rl_run_vcast(RL_SV v, RL_I o RL_QC_ARG) {
  rl_lanes q = rl_run_lanes(o RL_QC_PASS);
  return rl_vcast_qc(v, q.s, q.z, RL_Q_SS, RL_Q_SZ, RL_Q_DS, RL_Q_DZ);
}
#define RL_RUN_VCAST(v, o, q) rl_run_vcast(v, o RL_QC_PASS)
#endif
#else
typedef rl_row_quant rl_run_q;
#define RL_RUN_ROW_Q(z0, o) rl_quant_at(o RL_QC_PASS)
#define RL_RUN_VCAST(v, o, q) rl_vcast(v, (q).ss, (q).sz, (q).ds, (q).dz)
#endif
/* Runs of RL_RUN_SHORT elements, 4 or 8, whole in the box, under one
 * quantization (per tensor, or a channel outside the box's axes) */
#if !RL_RUN_BOX && !defined(RL_RUN_LANES) && !defined(RL_O_CHAN)
#if RL_A_BLOCK * RL_BLOCK_K == 8
#define RL_RUN_SHORT 8
#elif RL_A_BLOCK * RL_BLOCK_K == 4
#define RL_RUN_SHORT 4
#endif
#endif
#ifdef RL_RUN_SHORT
RL_PACKED(rl_run_short_at, RL_CAT(RL_T, RL_RUN_SHORT));
#endif
/* (2N and 4N <-> NCHW4 and nChw8c: O's RL_CAST_WEAVE elements of each
 * pixel one after another in the source, A's pixels continuing them, K's
 * rows strided) 16 of A's steps at a time: K rows of RL_CAST_WEAVE source
 * vectors each, shuffled into O's runs of K vectors (RL_CAST_MIX, the
 * generator's; lib/plan/plan.c cast_weave) and converted, in the type
 * whose lanes shuffle faster, under the box's one quantization */
#if defined(RL_CAST_WEAVE) && RL_RUN_A && !RL_RUN_BOX &&                      \
    !defined(RL_RUN_LANES) && !defined(RL_O_CHAN)
#define RL_WEAVE_N (RL_CAST_WEAVE * RL_BLOCK_K)
#if RL_A_SSTRIDE == RL_CAST_WEAVE
#define RL_WEAVE_IN(x)                                                         \
  ((__global const rl_svec_at *)(in + (x) / RL_CAST_WEAVE * RL_SSTRIDE_K +     \
                                 (x) % RL_CAST_WEAVE * 16))                    \
      ->v
#else
/* (CHWN4 -> 2N: the pixels apart, each K row's P elements of a pixel
 * together) a vector of K row x / P put together from its pixels' pieces */
RL_PACKED(rl_weave_piece_at, RL_CAT(RL_TS, RL_CAST_WEAVE));
static inline RL_SV rl_weave_in(__global const RL_TS *restrict in, int x) {
  union {
    RL_SV v;
    RL_CAT(RL_TS, RL_CAST_WEAVE) p[16 / RL_CAST_WEAVE];
  } u;
#pragma unroll
  for (int g = 0; g < 16 / RL_CAST_WEAVE; g++)
    u.p[g] = RL_PACKED_AT(rl_weave_piece_at,
                          in + x / RL_CAST_WEAVE * RL_SSTRIDE_K +
                              (x % RL_CAST_WEAVE * (16 / RL_CAST_WEAVE) + g) *
                                  RL_A_SSTRIDE);
  return u.v;
}
#define RL_WEAVE_IN(x) rl_weave_in(in, x)
#endif
#define RL_WEAVE_OUT(r)                                                        \
  (dst + (r) / RL_BLOCK_K * RL_O_DSTRIDE + a * RL_BLOCK_K +                    \
   (r) % RL_BLOCK_K * 16)
#define RL_WEAVE_CAST(v) RL_RUN_VCAST(v, 0, qb)
static inline RL_I rl_cast_weave(__global const RL_TS *restrict src,
                                 __global RL_T *restrict dst, RL_I ma,
                                 rl_run_q qb) {
  RL_I a = 0;
  for (; a + 16 <= ma; a += 16) {
    __global const RL_TS *in = src + a * RL_A_SSTRIDE;
    RL_CAST_SHUFFLED(RL_WEAVE_N, RL_WEAVE_IN, RL_WEAVE_OUT, RL_WEAVE_CAST)
  }
  return a * RL_BLOCK_K;
}
#endif
/* a run's quantization at its start o, qb the box's where O's steps leave
 * the channel */
#ifdef RL_O_CHAN
#define RL_RUN_AT_O(qb, z0, o) RL_RUN_ROW_Q(z0, o)
#else
#define RL_RUN_AT_O(qb, z0, o) (qb)
#endif
/* The box's runs: mo steps of O (p counts them), ma of A; left, O's steps
 * from the box's first to O's end */
static inline void rl_cast_run(__global const RL_TS *restrict src,
                               __global RL_T *restrict dst, RL_I mo,
                               RL_I ma, RL_I left, RL_I d RL_QC_ARG) {
  const RL_I len = (RL_RUN_BOX ? mo : 1) * ma * RL_BLOCK_K;
  rl_row_quant z0 = rl_quant_at(d RL_QC_PASS);
  rl_run_q qb = RL_RUN_ROW_Q(z0, d);
  RL_I p0 = 0, from = 0; /* the O steps done, each O step's run elements */
#ifdef RL_WEAVE_N
  if (mo == RL_CAST_WEAVE) from = rl_cast_weave(src, dst, ma, qb);
#endif
#ifdef RL_SQ
  if (len % 16 == 0)
    for (; p0 + RL_SQ <= mo; p0 += RL_SQ) {
      rl_run_q q[RL_SQ];
#pragma unroll
      for (int j = 0; j < RL_SQ; j++)
        q[j] = RL_RUN_AT_O(qb, z0, d + (p0 + j) * RL_O_DSTRIDE);
      for (RL_I i = 0; i < len; i += 16) {
        __global const RL_TS *in =
            src + p0 * RL_O_SSTRIDE + i / RL_RUN_UNIT * RL_RUN_STEP;
        RL_SV r[RL_SQ];
        RL_DV w[RL_SQ];
#pragma unroll
        for (int j = 0; j < RL_SQ; j++) {
          r[j] = ((__global const rl_svec_at *)&RL_SQ_IN(j))->v;
          /* (pieces of rows of K: rows far apart, a box few squares long)
           * the row two squares on along O, the next box's if need be */
          if (RL_SQ_EL > 1 && p0 + 2 * RL_SQ < left)
            RL_PREFETCH(&RL_SQ_IN(j) + 2 * RL_SQ * RL_O_SSTRIDE);
        }
        if (RL_CONVERT_FIRST) {
#pragma unroll
          for (int j = 0; j < RL_SQ; j++) w[j] = RL_RUN_VCAST(r[j], d, qb);
          RL_TRANSPOSE(RL_DV, RL_SQ, RL_SQ_ROUNDS, RL_SQ_ZIP, w)
#pragma unroll
          for (int j = 0; j < RL_SQ; j++) w[j] = RL_SQ_SWAP(w[j]);
        } else {
          RL_TRANSPOSE(RL_SV, RL_SQ, RL_SQ_ROUNDS, RL_SQ_ZIP, r)
#pragma unroll
          for (int j = 0; j < RL_SQ; j++)
            w[j] = RL_RUN_VCAST(RL_SQ_SWAP(r[j]),
                                d + (p0 + j) * RL_O_DSTRIDE + i, q[j]);
        }
#pragma unroll
        for (int j = 0; j < RL_SQ; j++)
          RL_CAST_PUT(dst + (p0 + j) * RL_O_DSTRIDE + i, w[j]);
      }
    }
#endif
#ifdef RL_RUN_SHORT
  /* (2N -> CHWN4, CHWN4 -> nChw8c: runs of 8) 16 / RL_RUN_SHORT runs a vector,
   * under the box's one quantization */
  if (len == RL_RUN_SHORT)
    for (; p0 + 16 / RL_RUN_SHORT <= mo; p0 += 16 / RL_RUN_SHORT) {
      RL_SV v;
#pragma unroll
      for (int j = 0; j < 16; j++) {
        __global const RL_TS *in = src + (p0 + j / RL_RUN_SHORT) * RL_O_SSTRIDE;
        v[j] = RL_RUN_IN(j % RL_RUN_SHORT);
      }
      union {
        RL_DV v;
        RL_CAT(RL_T, RL_RUN_SHORT) r[16 / RL_RUN_SHORT];
      } w = {RL_RUN_VCAST(v, d, qb)};
#pragma unroll
      for (int r = 0; r < 16 / RL_RUN_SHORT; r++)
        RL_PACKED_AT(rl_run_short_at, dst + (p0 + r) * RL_O_DSTRIDE) = w.r[r];
    }
#endif
  for (RL_I p = p0; p < (RL_RUN_BOX ? 1 : mo); p++) {
    __global RL_T *out = dst + p * RL_O_DSTRIDE;
    RL_I o = d + p * RL_O_DSTRIDE, i = from;
    rl_run_q q = RL_RUN_AT_O(qb, z0, o);
    for (; i + 16 <= len; i += 16) {
      __global const RL_TS *in =
          src + p * RL_O_SSTRIDE + i / RL_RUN_UNIT * RL_RUN_STEP;
      RL_SV v = (RL_SV)(RL_RUN_IN(0), RL_RUN_IN(1), RL_RUN_IN(2), RL_RUN_IN(3),
                        RL_RUN_IN(4), RL_RUN_IN(5), RL_RUN_IN(6), RL_RUN_IN(7),
                        RL_RUN_IN(8), RL_RUN_IN(9), RL_RUN_IN(10),
                        RL_RUN_IN(11), RL_RUN_IN(12), RL_RUN_IN(13),
                        RL_RUN_IN(14), RL_RUN_IN(15));
      RL_CAST_PUT(out + i, RL_RUN_VCAST(v, o + i, q));
    }
    __global const RL_TS *in = src + p * RL_O_SSTRIDE;
    for (; i < len; i++)
#ifdef RL_RUN_LANES
      out[i] = RL_TRANSFORM_AT(RL_RUN_IN(i), o + i);
#else
      out[i] = (RL_T)rl_cast((ulong)RL_RUN_IN(i), q.ss, q.sz, q.ds, q.dz);
#endif
  }
}
#endif
#endif
static inline void rl_cast_rows(__global const RL_TS *restrict src,
                                __global RL_T *restrict dst, const RL_I *n,
                                RL_I mp, RL_I mq, RL_I dq, RL_I mk,
                                RL_I d RL_QC_ARG) {
  for (RL_I a = 0; a < (RL_BY_Q ? mq : mp); a++) {
    rl_row_quant z = {RL_Q_SS, RL_Q_SZ, RL_Q_DS, RL_Q_DZ};
    int read = 0;
    for (RL_I b = 0; b < (RL_BY_Q ? mp : mq); b++) {
      RL_I p = RL_BY_Q ? b : a, q = RL_BY_Q ? a : b, write,
           data = rl_row_data(n, p, q, dq, mk, &write),
           o = p * RL_DSTRIDE_P + q * RL_DSTRIDE_Q;
#if RL_EXTENT_P > 1
      /* the row RL_ROWS_AHEAD steps on along P, asked for ahead of its
       * read (the rows' source is one short piece per line, or a few
       * lines a page, which the CPU's own prefetch does not follow), each
       * of its lines where it runs contiguous */
      RL_PREFETCH(src + (p + RL_ROWS_AHEAD) * RL_SSTRIDE_P +
                  q * RL_SSTRIDE_Q);
#if RL_SSTRIDE_K == 1
      for (RL_I e = 64 / sizeof(RL_TS); e < mk; e += 64 / sizeof(RL_TS))
        RL_PREFETCH(src + (p + RL_ROWS_AHEAD) * RL_SSTRIDE_P +
                    q * RL_SSTRIDE_Q + e);
#endif
#endif
      if (data && !read) {
        z = rl_quant_at(d + o RL_QC_PASS);
        read = RL_BY_Q; /* else each row's */
      }
#ifdef RL_PIX_D
      if (q % 16 == 0 && q + 16 <= dq && data == RL_PIX_D && write == 16) {
        rl_cast_pixels(src + p * RL_SSTRIDE_P + q * RL_SSTRIDE_Q, dst + o, z);
        b += 15; /* the next 15 rows too */
        continue;
      }
#endif
      rl_cast_row(src + p * RL_SSTRIDE_P + q * RL_SSTRIDE_Q, dst + o, data,
                  write, d + o, z RL_QC_PASS);
    }
  }
}

/* Squares of 16 x 16 for boxes whose source runs along P (RL_SSTRIDE_P 1)
 * and K strided: 16 source rows along K, 16 elements along P each, read as
 * vectors, transposed in registers (RL_TRANSPOSE, common.cl), then
 * each converted and written as 16 elements of a destination row. The box
 * is all data. P's last rows past a whole square take one more square,
 * ending at P's end and writing only those rows; what lies past the last
 * whole square along K, row by row. With RL_AHEAD, each Q step first
 * prefetches the source run of the step that many on, as the move's
 * squares do. */
#if defined(RL_ROW_VCAST) && RL_SSTRIDE_P == 1 && RL_SSTRIDE_K != 1
#define RL_CAST_SQUARES 1
#if RL_BLOCK_P < 16 && RL_BLOCK_P == RL_EXTENT_P
/* P shorter than a square (a conv weight's 3 x 3 pixels): each source row's
 * 16 elements are read so as to end by the last of the 16 rows' data, that
 * is RL_BACK(j) elements before the row (the rows overlap there), and
 * shifted back in registers, so that no read leaves the box's source and
 * no element is gathered alone */
#define RL_SHORT_P 1
#define RL_BACK(j) max(0, 16 - RL_BLOCK_P - (15 - (j)) * RL_SSTRIDE_K)
#else
#define RL_BACK(j) 0
#endif

/* The squares side by side along K that make a 64-byte line of each
 * destination row (rl_cast_line): 2 of 2-byte elements, 4 of 1-byte */
#define RL_CAST_LINE (sizeof(RL_T) < 4 ? 4 / (int)sizeof(RL_T) : 1)
/* Whether a square asks for its rows two groups of RL_CAST_LINE squares on
 * along K (the next box's past the block's end): where K's block holds a
 * group and K runs on for four */
#define RL_CAST_FAR                                                            \
  (RL_BLOCK_K >= 16 * RL_CAST_LINE && RL_EXTENT_K >= 64 * RL_CAST_LINE)
/* The square of source rows k.. along K and elements p.. along P (q's
 * destination rows start at `at`, z its quantization), its destination
 * rows first..last-1 converted into w */
static inline void rl_cast_square_to(__global const RL_TS *restrict in,
                                     RL_I at, RL_I p, RL_I k, RL_I first,
                                     RL_I last, RL_I d, rl_row_quant z,
                                     RL_DV *w RL_QC_ARG) {
  RL_SV r[16];
#ifndef RL_SHORT_P
  /* each row's line 64 bytes on, which a square along P (the next box's
   * where this is the box's last) reads: a box's 16 or 32 rows are more
   * streams than the hardware's prefetcher follows. Where K runs on
   * (RL_CAST_FAR), the same place two groups on along K instead, into the
   * L2 cache: a whole walk along P ahead, which the L1 cache would not
   * hold, where the next square's line came from memory too late */
#pragma unroll
  for (int j = 0; j < 16; j++)
    if (RL_CAST_FAR)
      RL_PREFETCH_L2(in + p + (k + j + 32 * RL_CAST_LINE) * RL_SSTRIDE_K);
    else
      RL_PREFETCH(in + p + (k + j) * RL_SSTRIDE_K + 64 / (int)sizeof(RL_TS));
#endif
#pragma unroll
  for (int j = 0; j < 16; j++) {
    const int sh = RL_BACK(j); /* p is 0 where it is not */
    r[j] = ((__global const rl_svec_at *)(in + p + (k + j) * RL_SSTRIDE_K -
                                           sh))
               ->v;
    if (sh)
      r[j] = shuffle(r[j], (RL_SV)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                   13, 14, 15) +
                               (RL_TS)sh);
  }
  if (RL_CONVERT_FIRST) {
#pragma unroll
    for (int j = 0; j < 16; j++) w[j] = RL_ROW_VCAST(r[j], z, 0, 0);
    RL_TRANSPOSE(RL_DV, 16, 4, s08192a3b4c5d6e7f, w)
  } else {
    RL_TRANSPOSE(RL_SV, 16, 4, s08192a3b4c5d6e7f, r)
#pragma unroll
    for (int i = 0; i < 16; i++)
      if (i >= first && i < last) {
        RL_I e = at + (p + i) * RL_DSTRIDE_P + k;
        rl_row_quant y = rl_quant_row(z, d + e RL_QC_PASS);
        w[i] = RL_ROW_VCAST(r[i], y, RL_ROW_CHAN(d + e), 0);
      }
  }
}

/* That square written, its rows first..last-1 */
static inline void rl_cast_square(__global const RL_TS *restrict in,
                                  __global RL_T *restrict dst, RL_I at,
                                  RL_I p, RL_I k, RL_I first, RL_I last,
                                  RL_I d, rl_row_quant z RL_QC_ARG) {
  RL_DV w[16];
  rl_cast_square_to(in, at, p, k, first, last, d, z, w RL_QC_PASS);
#pragma unroll
  for (int i = 0; i < 16; i++)
    if (i >= first && i < last) {
      RL_CAST_PUT(dst + at + (p + i) * RL_DSTRIDE_P + k, w[i]);
    }
}

/* Destinations of 1 or 2 bytes: RL_CAST_LINE squares side by side along K
 * (a 64-byte line of each of the 16 rows), converted, then each row's
 * pieces written one after another, so that a line is written whole at
 * once (a line written in halves a square apart, streamed, is flushed in
 * part and read back) */
static inline void rl_cast_line(__global const RL_TS *restrict in,
                                __global RL_T *restrict dst, RL_I at, RL_I p,
                                RL_I k, RL_I d, rl_row_quant z RL_QC_ARG) {
  RL_DV w[RL_CAST_LINE][16];
#pragma unroll
  for (int m = 0; m < RL_CAST_LINE; m++)
    rl_cast_square_to(in, at, p, k + 16 * m, 0, 16, d, z, w[m] RL_QC_PASS);
#pragma unroll
  for (int i = 0; i < 16; i++)
#pragma unroll
    for (int m = 0; m < RL_CAST_LINE; m++)
      RL_CAST_PUT(dst + at + (p + i) * RL_DSTRIDE_P + k + 16 * m, w[m][i]);
}

#if defined(RL_CAST_PLANES) && !defined(RL_P_CHAN) &&                         \
    !(defined(RL_QC) && defined(RL_K_CHAN))
/* A box's few planes (RL_CAST_PLANES, 2 to 15: a 3 x 3 weight's 9 pixels)
 * shuffled by the generator's RL_CAST_MIX and converted, shuffled in the
 * type whose lanes shuffle faster (RL_LANES_COST), under the Q step's one
 * quantization: not where P's rows, or K's elements, lie in channels of
 * their own. */
#define RL_PLANES_CAST(v) RL_ROW_VCAST(v, z, 0, 0)
#ifdef RL_SPLIT
/* (P's few elements of each of K's rows one after another in the source,
 * K's rows too: NCHW -> FRACTAL_Z or NHWC) 16 of K's rows from k on,
 * RL_CAST_PLANES source vectors, taken apart into P's rows' 16 elements
 * each, where a square would read 16 rows of 16 and transpose them for
 * P's few rows */
#define RL_SPLIT_IN(i)                                                         \
  (((__global const rl_svec_at *)(in + k * RL_SSTRIDE_K + 16 * (i)))->v)
#define RL_SPLIT_OUT(r) (out + (r) * RL_DSTRIDE_P + k)
static inline void rl_cast_split(__global const RL_TS *restrict in,
                                 __global RL_T *restrict out, RL_I k,
                                 rl_row_quant z) {
  RL_CAST_SHUFFLED(RL_CAST_PLANES, RL_SPLIT_IN, RL_SPLIT_OUT, RL_PLANES_CAST)
}
#define RL_SPLITS 1
#define RL_MIXED 0
#else
/* (K's few rows, each 16 elements along P from p on) into the one run of K
 * vectors that P's 16 rows make in the destination (lib/plan/plan.c
 * cast_planes) */
#define RL_CAST_ROW_AT(i)                                                      \
  (((__global const rl_svec_at *)(in + p + (i) * RL_SSTRIDE_K))->v)
#define RL_MIX_OUT(r) (out + 16 * (r))
static inline void rl_cast_mix(__global const RL_TS *restrict in,
                               __global RL_T *restrict out, RL_I p,
                               rl_row_quant z) {
  out += p * RL_DSTRIDE_P;
  RL_CAST_SHUFFLED(RL_CAST_PLANES, RL_CAST_ROW_AT, RL_MIX_OUT, RL_PLANES_CAST)
}
#define RL_SPLITS 0
#define RL_MIXED 1 /* the rows the mix wrote are done */
#endif
#else
#define RL_SPLITS 0
#define RL_MIXED 0
#endif

static inline void rl_cast_squares(__global const RL_TS *restrict src,
                                   __global RL_T *restrict dst, RL_I mp,
                                   RL_I mq, RL_I mk, RL_I d RL_QC_ARG) {
  RL_I sp = mp - mp % 16, sk = mk - mk % 16;
#ifdef RL_SHORT_P
  const int tail = mp == RL_BLOCK_P; /* as RL_BACK takes it */
#else
  const int tail = mp >= 16;
#endif
  for (RL_I q = 0; q < mq; q++) {
    __global const RL_TS *in = src + q * RL_SSTRIDE_Q;
    RL_I at = q * RL_DSTRIDE_Q;
    rl_row_quant z = rl_quant_at(d + at RL_QC_PASS);
#ifdef RL_AHEAD
    RL_PREFETCH_AHEAD(RL_TS, in, q, mq, mk)
#endif
#if RL_MIXED
    for (RL_I p = 0; p < sp; p += 16) rl_cast_mix(in, dst + at, p, z);
#endif
    for (RL_I k = 0; k < sk;) {
#if RL_SPLITS
      if (mp == RL_CAST_PLANES) {
        rl_cast_split(in, dst + at, k, z);
        k += 16;
        continue;
      }
#endif
      /* whole lines of the destination's rows where K has them */
      const int line = RL_CAST_LINE > 1 && k + 16 * RL_CAST_LINE <= sk;
      for (RL_I p = 0; p < sp; p += 16)
        if (line)
          rl_cast_line(in, dst, at, p, k, d, z RL_QC_PASS);
        else
          rl_cast_square(in, dst, at, p, k, 0, 16, d, z RL_QC_PASS);
      for (RL_I e = k + (line ? 16 * RL_CAST_LINE : 16); k < e; k += 16)
        if (tail && sp < mp) /* the square ending at P's end, its new rows */
          rl_cast_square(in, dst, at, max(mp - 16, (RL_I)0), k,
                         sp - max(mp - 16, (RL_I)0), min(mp, (RL_I)16), d,
                         z RL_QC_PASS);
    }
    /* each row's elements past the squares along K, the rows past them
     * along P (past the mixed ones) */
    for (RL_I p = RL_MIXED ? sp : 0; p < mp; p++) {
      RL_I k = p < sp || tail ? sk : 0, e = at + p * RL_DSTRIDE_P + k;
      if (k < mk)
        rl_cast_row(in + p + k * RL_SSTRIDE_K, dst + e, mk - k, mk - k, d + e,
                    rl_quant_row(z, d + e RL_QC_PASS) RL_QC_PASS);
    }
  }
}
#endif

#endif
