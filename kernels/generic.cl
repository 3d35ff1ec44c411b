/* generic.cl - every conversion with its map read from arguments instead of
 * compiled in: one program per width, device and driver serves every plan,
 * while the plan's specialised kernel builds (docs/KERNELS.md). The map is
 * the one the code generator writes, evaluated from a block of longs that
 * lib/codegen/generic.c fills (the RL_G* offsets below are its layout):
 * - affine plans (rl_generic_affine): the plan's merged axes, each
 *   {extent, dstride, sstride, weight, check}, then each logical dim's
 *   bound (LONG_MAX: unchecked), how many are checked, and which;
 * - any other (rl_generic_map): both descriptors' axes and padding, and
 *   their group packing.
 * Each work-item takes `chunk` destination elements (bytes, for 4-bit
 * types) from id * chunk; padding is written as zero. */

#define RL_GAXES 48 /* most merged axes of a plan */
#define RL_GDIMS 13 /* most virtual dims of a descriptor */
#define RL_GA_AXES 2 /* affine: n, innermost dense flag, then the axes */

/* Affine: destination offset o's source offset in *s and its checked
 * coordinates in x; idx receives each axis' index. */
static void rl_g_affine(__global const long *g, long o, long *s, long *x,
                        long *idx) {
  int n = (int)g[0];
  __global const long *a = g + RL_GA_AXES;
  long r = o, so = 0;
  for (int d = 0; d < RL_GDIMS; d++) x[d] = 0;
  for (int k = 0; k < n; k++, a += 5) {
    long i = a[1] == 1 ? r : r / a[1];
    r -= i * a[1];
    idx[k] = i;
    so += i * a[2];
    if (a[4] >= 0) x[a[4]] += i * a[3];
  }
  *s = so;
}

/* Offsets of the general block: each side's header, then its arrays. */
#define RL_GMAXES 24 /* most axes of a descriptor */
/* each side's remapping: groups[6], merge[3], segments[2][4] */
#define RL_GM_DST 0  /* naxes, compact, nvdims, ndims, remapping */
#define RL_GM_SRC 21 /* naxes, ndims, remapping */
#define RL_GM_DAXES 40
#define RL_GM_DPAD (RL_GM_DAXES + 4 * RL_GMAXES) /* before, padded, valid */
#define RL_GM_SAXES (RL_GM_DPAD + 3 * RL_GDIMS)
#define RL_GM_SPAD (RL_GM_SAXES + 4 * RL_GMAXES) /* the source's before */

/* Any map: destination offset o's source offset in *s and its logical
 * coordinates in x, both descriptors' formulas as lib/codegen/codegen.c's
 * map_general writes them; 0 where o is padding. */
static int rl_g_general(__global const long *g, long o, long *s, long *x) {
  long v[RL_GDIMS], u[RL_GDIMS];
  for (int d = 0; d < RL_GDIMS; d++) v[d] = 0;
  int dn = (int)g[0], compact = (int)g[1], nv = (int)g[2], nd = (int)g[3];
  long groups = g[4], e = g[5], cin = g[6], cout = g[7];
  int ndim = (int)g[8], cdim = (int)g[9];
  int ok = 1;
  long r = o;
  __global const long *a = g + RL_GM_DAXES;
  for (int k = 0; k < dn; k++, a += 4) {
    if (a[0] == 1) continue;
    long i = r / a[1];
    r -= i * a[1];
    if (!compact) ok &= i < a[0];
    v[a[3]] += i * a[2];
  }
  if (!compact) ok &= r == 0;
  __global const long *pad = g + RL_GM_DPAD;
  for (int d = 0; d < nv; d++) {
    v[d] -= pad[d];
    ok &= v[d] >= 0;
    if (pad[RL_GDIMS + d] - pad[d] > pad[2 * RL_GDIMS + d])
      ok &= v[d] < pad[2 * RL_GDIMS + d];
  }
  for (int d = 0; d < nd; d++) x[d] = v[d];
  long mo = g[10], mi = g[11], me = g[12]; /* a merge: x[mo] * me + x[mi] */
  if (me) {
    x[mo] = v[mo] / me;
    x[mi] = v[mo] % me;
  }
  for (__global const long *q = g + 13; q < g + 21 && q[1]; q += 4) {
    long d = q[0], k = v[d] / q[2]; /* segments: len q[1], padded q[2] */
    ok &= k >= q[3] || v[d] % q[2] < q[1];
    x[d] = k < q[3] ? k * q[1] + v[d] % q[2] : v[d] - (q[2] - q[1]) * q[3];
  }
  if (groups) {
    long ei = v[ndim] / cout;
    ok &= v[cdim] / cin == ei && v[nd] * e + ei < groups;
    x[ndim] = (v[nd] * e + ei) * cout + v[ndim] % cout;
    x[cdim] = v[cdim] - ei * cin;
  }
  int sn = (int)g[RL_GM_SRC], snd = (int)g[RL_GM_SRC + 1];
  groups = g[RL_GM_SRC + 2], e = g[RL_GM_SRC + 3];
  cin = g[RL_GM_SRC + 4], cout = g[RL_GM_SRC + 5];
  ndim = (int)g[RL_GM_SRC + 6], cdim = (int)g[RL_GM_SRC + 7];
  for (int d = 0; d < snd; d++) u[d] = x[d];
  mo = g[RL_GM_SRC + 8], mi = g[RL_GM_SRC + 9], me = g[RL_GM_SRC + 10];
  if (me) {
    u[mo] = x[mo] * me + x[mi];
    u[mi] = 0;
  }
  for (__global const long *q = g + RL_GM_SRC + 11;
       q < g + RL_GM_SRC + 19 && q[1]; q += 4) {
    long d = q[0], k = x[d] / q[1];
    u[d] = x[d] + (q[2] - q[1]) * (k < q[3] ? k : q[3]);
  }
  if (groups && ok) {
    long gi = x[ndim] / cout, sei = gi % e;
    u[ndim] = sei * cout + x[ndim] % cout;
    u[cdim] = sei * cin + x[cdim];
    u[snd] = gi / e;
  }
  long so = 0;
  a = g + RL_GM_SAXES;
  __global const long *spad = g + RL_GM_SPAD;
  for (int k = 0; k < sn; k++, a += 4)
    if (a[0] > 1) so += (u[a[3]] + spad[a[3]]) / a[2] % a[0] * a[1];
  *s = so;
  return ok;
}

/* Steps an affine plan's indices on by one position of axis k and carries
 * into the axes outside it: s and x follow. */
static void rl_g_step(__global const long *g, int k, long *s, long *x,
                      long *idx) {
  for (__global const long *a = g + RL_GA_AXES + 5 * k; k >= 0; k--, a -= 5) {
    idx[k]++;
    *s += a[2];
    if (a[4] >= 0) x[a[4]] += a[3];
    if (idx[k] < a[0]) return;
    idx[k] = 0;
    *s -= a[0] * a[2];
    if (a[4] >= 0) x[a[4]] -= a[0] * a[3];
  }
}

/* Every generic kernel's arguments: the buffers with their element offsets,
 * the map's block, the elements (4-bit: nibbles) and each work-item's
 * share; per channel, the channels' table (cast.cl). */
#define RL_GENERIC_PARAMS(S, D)                                                \
  __global const S *restrict src, long src_off, __global D *restrict dst,      \
      long dst_off, __global const long *g, long count,                        \
      long chunk RL_QC_ARG

/* A program per kind of map (RL_GMAP 0: affine, 1: any other), kernel
 * (an affine map's: RL_GTILES 1, rl_generic_tile, else rl_generic_affine)
 * and width moved (RL_GW bits), so that a cold start compiles only the
 * kernel it needs; a cast's program (cast.cl) has its own source and
 * destination types, RL_GS and RL_GD (RL_GW the destination's width, which
 * sets a tile's side). The generator defines them. */
#ifndef RL_GD
#if RL_GW == 8
#define RL_GS uchar
#elif RL_GW == 16
#define RL_GS ushort
#elif RL_GW == 32
#define RL_GS uint
#elif RL_GW == 64
#define RL_GS ulong
#endif
#ifdef RL_GS /* (4-bit programs have rl_generic_nibbles alone) */
#define RL_GD RL_GS
#define RL_TRANSFORM(x) (x)
#define RL_PAD ((RL_GD)0)
#define RL_GVEC /* a tile's elements may go as vectors */
#endif
#endif
/* A per-channel cast (cast.cl): the channel's dim, kept apart in an affine
 * map's axes (the checked coordinate x[RL_GCH]), element x of channel c,
 * and 16 elements v of channels c, c + w, ... (a CPU's vector cast, with
 * the plan's quantization ss, sz, ds, dz at hand); else -1, and c and w
 * unused. */
#ifdef RL_GQC
#define RL_GCH ((int)g[RL_GC + 5])
#define RL_GVCAST(v, c, w) rl_vcast_at(v, qc, c, w, ss, sz, ds, dz)
#else
#define RL_GCH (-1)
#define RL_TRANSFORM_C(x, c) RL_TRANSFORM(x)
#define RL_GVCAST(v, c, w) rl_vcast(v, ss, sz, ds, dz)
#endif
#ifdef RL_VCAST /* (a cast on a CPU device) 16 elements of each side, or 8 */
RL_PACKED(rl_g_from, RL_CSV);
RL_PACKED(rl_g_to, RL_CDV);
RL_PACKED(rl_g_hfrom, RL_CAT(RL_GS, 8));
RL_PACKED(rl_g_hto, RL_CAT(RL_GD, 8));
RL_PACKED(rl_g_qto, RL_CAT(RL_GD, 4));
#define RL_GLINE (64 / (int)sizeof(RL_CDV)) /* squares a line of rows holds */
#endif
/* A tile's side (rl_generic_tile), its half and quarter, and how its square
 * is transposed */
#if RL_GW == 64
#define RL_GSIDE   8
#define RL_GHALF   4
#define RL_GQUARTER 2
#define RL_GROUNDS 3
#define RL_GZIP    s04152637
#else
#define RL_GSIDE   16
#define RL_GHALF   8
#define RL_GQUARTER 4
#define RL_GROUNDS 4
#define RL_GZIP    s08192a3b4c5d6e7f
#endif
#if defined(RL_GD) && !RL_GMAP && !RL_GTILES
/* An affine plan's elements, in runs along the innermost axis, each with
 * one source stride and its other dims' checks made once. g[1]: 0, the
 * innermost destination stride is not 1 (element by element); 1, it is
 * (each run's start decomposed afresh); 2, the axes are dense, each stride
 * the extent times the next: whole rows of the innermost axis go as a
 * block along the next axis out, and the next start is stepped to. */
__kernel void rl_generic_affine(RL_GENERIC_PARAMS(RL_GS, RL_GD)) {
  long o = (long)get_global_id(0) * chunk;
  long end = min(o + chunk, count);
  int n = (int)g[0], in = n - 1, mode = (int)g[1];
  __global const long *k = g + RL_GA_AXES + 5 * in, *q = k - 5;
  __global const long *bound = g + RL_GA_AXES + 5 * n;
  long ext = !mode ? 1 : n > 1 ? q[1] : count;
  int c = (int)k[4], c2 = n > 1 ? (int)q[4] : -1;
  int nchecks = (int)bound[RL_GDIMS - 1], ch = RL_GCH;
  __global const long *checks = bound + RL_GDIMS;
  long s, x[RL_GDIMS], idx[RL_GAXES], sr = k[2], w = k[3];
  long wc = ch >= 0 && c == ch ? w : 0; /* the channel's step along a run */
#ifdef RL_VCAST
  long ss = g[RL_GC], sz = g[RL_GC + 1], ds = g[RL_GC + 2], dz = g[RL_GC + 3];
#endif
  src += src_off;
  dst += dst_off;
  if (o < end) rl_g_affine(g, o, &s, x, idx);
  while (o < end) {
    long run = min(end - o, ext - idx[in]), rows = 1;
    /* not dense: no run crosses an outer axis' step (a skip plan's axis
     * runs past the destination's rows: the next row starts sooner) */
    for (int a = 0; mode == 1 && a < in; a++)
      run = min(run, g[RL_GA_AXES + 5 * a + 1] -
                         o % g[RL_GA_AXES + 5 * a + 1]);
    int block = mode == 2 && n > 1 && run == ext;
    if (block) rows = min((end - o) / ext, q[0] - idx[in - 1]);
    int ok = 1; /* the dims neither axis moves */
    for (int i = 0; i < nchecks; i++) {
      int d = (int)checks[i];
      ok &= d == c || (block && d == c2) || x[d] < bound[d];
    }
    for (long r = 0; r < rows; r++) {
      long data = ok ? run : 0, xc = c >= 0 ? x[c] : 0;
      if (block && c2 >= 0) {
        long x2 = x[c2] + r * q[3];
        if (c2 == c)
          xc = x2;
        else if (x2 >= bound[c2])
          data = 0;
      }
      if (c >= 0 && data) /* along the run: while xc + j * w < bound */
        data = clamp((bound[c] - xc + w - 1) / w, 0L, run);
      __global RL_GD *out = dst + o + r * run;
      __global const RL_GS *from = src + s + r * q[2];
      long j = 0, xq = ch < 0 ? 0 : x[ch] + (block && c2 == ch) * r * q[3];
#ifdef RL_VCAST /* (a cast's runs on a CPU device) 16 at a time */
      for (; sr == 1 && j + 16 <= data; j += 16)
        RL_PACKED_AT(rl_g_to, out + j) =
            RL_GVCAST(RL_PACKED_AT(rl_g_from, from + j), xq + j * wc, wc);
#endif
      if (sr == 1)
        for (; j < data; j++) out[j] = RL_TRANSFORM_C(from[j], xq + j * wc);
      else
        for (; j < data; j++)
          out[j] = RL_TRANSFORM_C(from[j * sr], xq + j * wc);
      for (; j < run; j++) out[j] = RL_PAD;
    }
    o += rows * run;
    if (o >= end) break;
    if (block) { /* the last row: the next axis out steps on */
      idx[in - 1] += rows - 1;
      s += (rows - 1) * q[2];
      if (c2 >= 0) x[c2] += (rows - 1) * q[3];
      rl_g_step(g, in - 1, &s, x, idx);
    } else if (mode == 2 && in > 0) { /* the run ended its row */
      s += (run - 1) * sr;
      if (c >= 0) x[c] += (run - 1) * w;
      idx[in] += run - 1;
      rl_g_step(g, in, &s, x, idx);
    } else {
      rl_g_affine(g, o, &s, x, idx);
    }
  }
}

#elif defined(RL_GD) && !RL_GMAP
/* A dense affine plan whose innermost axis P has destination stride 1, in
 * tiles of `rows` along another axis K by `side` elements along P (the
 * block's RL_GT record: K, the tiles, the elements a tile spans along P and
 * along K, the destinations it streams, then the axes in the order the
 * tiles go, P's first; lib/codegen/generic.c picks them). On a CPU device
 * `chunk` tiles per work-item, each of RL_GSIDE squares. A tile all data
 * goes as vectors where its source runs along P (RL_GSIDE rows of RL_GSIDE
 * elements or half that) or along K: squares transposed in registers, side
 * by side along P so that each destination row is written whole, or where
 * P is half, a quarter or an eighth of a square, one square holding 2, 4 or
 * 8 of its pieces along K, interleaved in fewer of the transpose's rounds.
 * Any other element by element, each row's data a prefix. A cast's tile (on a
 * CPU device) goes as vectors where its rows are whole squares, each 16
 * elements through cast.cl's rl_vcast. Destinations of
 * g[RL_GT + 4] bytes or more are written with non-temporal stores where the
 * vectors are aligned. */
#define RL_GT (RL_GA_AXES + 5 * (int)g[0] + 2 * RL_GDIMS)
/* Axis a's tiles (P: in, K: kk) or its extent */
static long rl_g_grid(__global const long *ax, int a, int in, int kk,
                      int side, int rows) {
  long e = ax[5 * a], b = a == in ? side : a == kk ? rows : 1;
  return (e + b - 1) / b;
}

/* Tile t's grid indices, in ti, the axes taken in the tiles' order. */
static void rl_g_tile_index(__global const long *g, long t, int side,
                            int rows, long *ti) {
  int n = (int)g[0], kk = (int)g[RL_GT];
  __global const long *order = g + RL_GT + 5;
  for (int r = 0; r < n; r++) {
    int a = (int)order[r];
    long e = rl_g_grid(g + RL_GA_AXES, a, n - 1, kk, side, rows);
    ti[a] = t % e;
    t /= e;
  }
}

/* The tile at grid indices ti: its destination and source offsets, its
 * checked coordinates x and its extents along P and K; whether the dims
 * neither P nor K moves are within their bounds. */
static int rl_g_tile_at(__global const long *g, const long *ti, int side,
                        int rows, long *d, long *s, long *x, long *np,
                        long *nk) {
  int n = (int)g[0], in = n - 1, kk = (int)g[RL_GT];
  __global const long *ax = g + RL_GA_AXES, *bound = ax + 5 * n;
  *d = *s = 0;
  for (int i = 0; i < RL_GDIMS; i++) x[i] = 0;
  for (int a = 0; a < n; a++) {
    __global const long *q = ax + 5 * a;
    long i = ti[a];
    if (a == in) {
      i *= side;
      *np = min((long)side, q[0] - i);
    } else if (a == kk) {
      i *= rows;
      *nk = min((long)rows, q[0] - i);
    }
    *d += i * q[1];
    *s += i * q[2];
    if (q[4] >= 0) x[q[4]] += i * q[3];
  }
  int ok = 1, cp = (int)ax[5 * in + 4], ck = (int)ax[5 * kk + 4];
  for (int i = 0; i < (int)bound[RL_GDIMS - 1]; i++) {
    int c = (int)bound[RL_GDIMS + i];
    ok &= c == cp || c == ck || x[c] < bound[c];
  }
  return ok;
}

#ifdef RL_GGPU
/* A GPU's tile: one work-group's, read whole into local memory along
 * whichever of P and K the source steps along more closely, then written
 * out along P, so that neighbouring work-items read and write neighbours.
 * Each work-group takes tile after tile, the grid's size apart. */
#define RL_GLOCAL 1056 /* a tile of 1024 elements, its rows padded odd */
__kernel void rl_generic_tile(RL_GENERIC_PARAMS(RL_GS, RL_GD)) {
  __local RL_GD tile[RL_GLOCAL];
  int n = (int)g[0], in = n - 1, kk = (int)g[RL_GT];
  int side = (int)g[RL_GT + 2], rows = (int)g[RL_GT + 3], ld = rows | 1;
  __global const long *ax = g + RL_GA_AXES, *bound = ax + 5 * n;
  __global const long *pa = ax + 5 * in, *ka = ax + 5 * kk;
  int cp = (int)pa[4], ck = (int)ka[4], ch = RL_GCH;
  long sp = pa[2], sk = ka[2], dk = ka[1], wp = pa[3], wk = ka[3];
  long cwp = ch >= 0 && cp == ch ? wp : 0, cwk = ch >= 0 && ck == ch ? wk : 0;
  int along_k = (sk < 0 ? -sk : sk) < (sp < 0 ? -sp : sp);
  int lid = (int)get_local_id(0), lsize = (int)get_local_size(0);
  src += src_off;
  dst += dst_off;
  for (long t = get_group_id(0); t < g[RL_GT + 1]; t += get_num_groups(0)) {
    long d, s, x[RL_GDIMS], ti[RL_GAXES], lp = 0, lk = 0;
    rl_g_tile_index(g, t, side, rows, ti);
    int ok = rl_g_tile_at(g, ti, side, rows, &d, &s, x, &lp, &lk);
    int np = (int)lp, nk = (int)lk;
    for (int e = lid; e < np * nk; e += lsize) {
      int p = along_k ? e / nk : e % np, k = along_k ? e % nk : e / np;
      int data = ok && (ck < 0 || ck == cp || x[ck] + k * wk < bound[ck]) &&
                 (cp < 0 || x[cp] + p * wp + (ck == cp) * k * wk < bound[cp]);
      long xq = ch < 0 ? 0 : x[ch] + p * cwp + k * cwk;
      tile[p * ld + k] =
          data ? RL_TRANSFORM_C(src[s + p * sp + k * sk], xq) : RL_PAD;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = lid; e < np * nk; e += lsize)
      dst[d + e / np * dk + e % np] = tile[e % np * ld + e / np];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
#else
/* Compiled for a CPU: a line asked for ahead of its first read, into the
 * L2 cache (as the lines family's boxes that read a walk ahead: into L1
 * the lines were pushed out before their turn), and a vector stored past
 * the cache (as lines_stores.cl does). Elsewhere the kernel is not run: a
 * plain store and nothing. */
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) ||        \
    defined(__arm__) || defined(__riscv) || defined(__powerpc64__)
#define RL_GPREFETCH(p) __builtin_prefetch(p, 0, 2)
#define RL_GSTREAMW(T, v, p)                                                   \
  __builtin_nontemporal_store(v, (__global T##_v *)(p))
#else
#define RL_GPREFETCH(p)      ((void)0)
#define RL_GSTREAMW(T, v, p) (RL_PACKED_AT(T, p) = (v))
#endif
#define RL_GV RL_CAT(RL_GS, RL_GSIDE)
#ifdef RL_GVEC
RL_PACKED(rl_g_side, RL_GV);
RL_PACKED(rl_g_half, RL_CAT(RL_GS, RL_GHALF));
RL_PACKED(rl_g_quarter, RL_CAT(RL_GS, RL_GQUARTER));
#endif
/* RL_GSIDE rows of n packed vectors T each from `from` (row i at i * sk) to
 * `out`, streamed where the destination is (`big`) and the rows fill whole
 * cache lines: back to back from a line's start, or each one whole lines
 * (a line written in part would be read back); piece m of row offset i */
#define RL_GPIECE(T, p, i, m)                                                  \
  ((p) + (i) + (m) * (int)(sizeof(T) / sizeof(RL_GS)))
#define RL_GROWS(T, n)                                                         \
  if (big && (ulong)out % 64 == 0 &&                                           \
      (dk * sizeof(RL_GS) == (n) * sizeof(T) ||                                \
       ((n) * sizeof(T) % 64 == 0 && dk * sizeof(RL_GS) % 64 == 0)))           \
    for (int i = 0; i < RL_GSIDE; i++)                                         \
      for (int m = 0; m < (n); m++)                                            \
        RL_GSTREAMW(T, RL_PACKED_AT(T, RL_GPIECE(T, from, i * sk, m)),         \
                    RL_GPIECE(T, out, i * dk, m));                             \
  else                                                                         \
    for (int i = 0; i < RL_GSIDE; i++)                                         \
      for (int m = 0; m < (n); m++)                                            \
        RL_PACKED_AT(T, RL_GPIECE(T, out, i * dk, m)) =                        \
            RL_PACKED_AT(T, RL_GPIECE(T, from, i * sk, m))
/* A tile's rows of np elements, fewer than a side, one run in the
 * destination and along the source's runs (a 3 x 3 conv weight's 9 pixels
 * out of FRACTAL_Z, C0 the rows), all data: the np source vectors (SV,
 * packed FROM) along K transposed as a square (the rest zeros), each row
 * (DV, packed TO, through CAST) put at its place in a private buffer (its
 * lanes past np overwritten by the next row's), then written as np
 * vectors */
#define RL_GRUN_OF_ROWS(SV, FROM, DV, TO, CAST)                                \
  if (full && sk == 1 && nk == RL_GSIDE && np > 1 && np < RL_GSIDE &&          \
      dk == np && cwp == 0 && cwk == 0) {                                      \
    union {                                                                    \
      DV v[RL_GSIDE + 1];                                                      \
      RL_GD e[(RL_GSIDE + 1) * RL_GSIDE];                                      \
    } buf;                                                                     \
    SV v[RL_GSIDE];                                                            \
    for (int j = 0; j < RL_GSIDE; j++)                                         \
      v[j] = j < np ? RL_PACKED_AT(FROM, from + j * sp) : (SV)0;               \
    RL_TRANSPOSE(SV, RL_GSIDE, RL_GROUNDS, RL_GZIP, v)                         \
    for (int i = 0; i < RL_GSIDE; i++)                                         \
      ((__private TO *)(buf.e + i * np))->v = CAST(v[i]);                      \
    for (int j = 0; j < np; j++)                                               \
      RL_PACKED_AT(TO, out + j * RL_GSIDE) = buf.v[j];                         \
    continue;                                                                  \
  }
/* P half, a quarter or an eighth of a square, strided in the source, K's
 * rows contiguous there, all data: P's element p, K's elements m * RL_GSIDE
 * on, in v[p * spans + m] (SV, packed FROM); log2(np) of the transpose's
 * rounds interleave them into K's rows, spans of them in each vector, the
 * destination's order; each vector through CAST (DV, packed TO, its halves
 * HALF, its quarters QUARTER) before the rounds where `first`, else after;
 * then written whole where K's rows follow one another (non-temporal where
 * `streamed`), else in pieces of np */
#define RL_GSPANS(SV, FROM, DV, TO, HALF, QUARTER, CAST, first, streamed)      \
  if (full && sk == 1 && np * spans == RL_GSIDE && spans > 1) {                \
    SV v[RL_GSIDE];                                                            \
    DV y[RL_GSIDE];                                                            \
    for (int p = 0; p < np; p++)                                               \
      for (int m = 0; m < spans; m++)                                          \
        v[p * spans + m] = RL_PACKED_AT(FROM, from + p * sp + m * RL_GSIDE);   \
    if (first) {                                                               \
      for (int r = 0; r < RL_GSIDE; r++) y[r] = CAST(v[r]);                    \
      RL_GINTERLEAVE(DV, y)                                                    \
    } else {                                                                   \
      RL_GINTERLEAVE(SV, v)                                                    \
      for (int r = 0; r < RL_GSIDE; r++) y[r] = CAST(v[r]);                    \
    }                                                                          \
    if (dk == np && (streamed))                                                \
      for (int r = 0; r < RL_GSIDE; r++)                                       \
        RL_GSTREAMW(TO, y[r], out + r * RL_GSIDE);                             \
    else if (dk == np)                                                         \
      for (int r = 0; r < RL_GSIDE; r++)                                       \
        RL_PACKED_AT(TO, out + r * RL_GSIDE) = y[r];                           \
    else if (np == RL_GHALF)                                                   \
      for (int r = 0; r < RL_GSIDE; r++) {                                     \
        RL_PACKED_AT(HALF, out + 2 * r * dk) = y[r].lo;                        \
        RL_PACKED_AT(HALF, out + (2 * r + 1) * dk) = y[r].hi;                  \
      }                                                                        \
    else if (np == RL_GQUARTER)                                                \
      for (int r = 0; r < RL_GSIDE; r++) {                                     \
        __global RL_GD *o = out + 4 * r * dk;                                  \
        RL_PACKED_AT(QUARTER, o) = y[r].lo.lo;                                 \
        RL_PACKED_AT(QUARTER, o + dk) = y[r].lo.hi;                            \
        RL_PACKED_AT(QUARTER, o + 2 * dk) = y[r].hi.lo;                        \
        RL_PACKED_AT(QUARTER, o + 3 * dk) = y[r].hi.hi;                        \
      }                                                                        \
    else                                                                       \
      for (int i = 0; i < RL_GSIDE * RL_GSIDE; i++)                            \
        out[i / np * dk + i % np] = y[i / RL_GSIDE][i % RL_GSIDE];             \
    continue;                                                                  \
  }
#define RL_GINTERLEAVE(T, v)                                                   \
  if (np == RL_GHALF) {                                                        \
    RL_TRANSPOSE(T, RL_GSIDE, RL_GROUNDS - 1, RL_GZIP, v)                      \
  } else if (np == RL_GQUARTER) {                                              \
    RL_TRANSPOSE(T, RL_GSIDE, RL_GROUNDS - 2, RL_GZIP, v)                      \
  } else {                                                                     \
    RL_TRANSPOSE(T, RL_GSIDE, RL_GROUNDS - 3, RL_GZIP, v)                      \
  }
/* (a cast's tile) square m of its rows, read along P, or along K and
 * transposed, converted into y: along K before the transpose where the
 * destination's lanes shuffle for less (RL_CONVERT_FIRST_OF), else after */
#define RL_GCAST_SQUARE(y, m)                                                  \
  {                                                                            \
    RL_CSV v[RL_GSIDE];                                                        \
    for (int j = 0; j < RL_GSIDE; j++)                                         \
      v[j] = RL_PACKED_AT(rl_g_from, sp == 1 ? from + j * sk + (m)*RL_GSIDE    \
                                       : from + ((m)*RL_GSIDE + j) * sp);      \
    if (sp != 1 && RL_CONVERT_FIRST_OF(RL_GS, RL_GD)) {                        \
      for (int j = 0; j < RL_GSIDE; j++)                                       \
        (y)[j] = RL_GVCAST(v[j], ch < 0 ? 0 : x[ch] + ((m)*RL_GSIDE + j) * cwp, \
                           cwk);                                               \
      RL_TRANSPOSE(RL_CDV, RL_GSIDE, RL_GROUNDS, RL_GZIP, (y))                 \
    } else {                                                                   \
      if (sp != 1) {                                                           \
        RL_TRANSPOSE(RL_CSV, RL_GSIDE, RL_GROUNDS, RL_GZIP, v)                 \
      }                                                                        \
      for (int i = 0; i < RL_GSIDE; i++)                                       \
        (y)[i] = RL_GVCAST(                                                    \
            v[i], ch < 0 ? 0 : x[ch] + i * cwk + (m)*RL_GSIDE * cwp, cwp);     \
    }                                                                          \
  }
/* A tile's squares along P (SQUARE(v, m): square m's rows into v, of
 * type T), written (packed TO) where `streamed` as each row's whole lines
 * at once, non-temporal, all n squares first made (streaming part of a
 * line costs a line); else a square at a time, its stores leaving while
 * the next one loads (AVX2 stalled on stores forwarded to the loads of all
 * squares) */
#define RL_GSQUARES(T, TO, SQUARE, n, streamed)                                \
  if (streamed) {                                                              \
    T sq_[4][RL_GSIDE];                                                        \
    for (int m = 0; m < (n); m++) {                                            \
      SQUARE(sq_[m], m)                                                        \
    }                                                                          \
    for (int i = 0; i < RL_GSIDE; i++)                                         \
      for (int m = 0; m < (n); m++)                                            \
        RL_GSTREAMW(TO, sq_[m][i], out + i * dk + m * RL_GSIDE);               \
  } else                                                                       \
    for (int m = 0; m < squares; m++) {                                        \
      T sq_[RL_GSIDE];                                                         \
      SQUARE(sq_, m)                                                           \
      for (int i = 0; i < RL_GSIDE; i++)                                       \
        RL_PACKED_AT(TO, out + i * dk + m * RL_GSIDE) = sq_[i];                \
    }
/* the rows' elements as they are (a move's), or converted (a cast's) */
#define RL_GAS_IS(x) (x)
#define RL_GAS_CAST(v) RL_GVCAST(v, ch < 0 ? 0 : x[ch], 0)
/* square m of a tile whose rows run along K, loaded along P, transposed */
#define RL_GSQUARE(v, m)                                                       \
  for (int j = 0; j < RL_GSIDE; j++)                                           \
    (v)[j] = RL_PACKED_AT(rl_g_side, from + ((m) * RL_GSIDE + j) * sp);        \
  RL_TRANSPOSE(RL_GV, RL_GSIDE, RL_GROUNDS, RL_GZIP, (v))
__kernel void rl_generic_tile(RL_GENERIC_PARAMS(RL_GS, RL_GD)) {
  int n = (int)g[0], in = n - 1, kk = (int)g[RL_GT];
  int side = (int)g[RL_GT + 2], squares = side / RL_GSIDE;
  int rows = (int)g[RL_GT + 3], spans = rows / RL_GSIDE;
  __global const long *ax = g + RL_GA_AXES, *bound = ax + 5 * n;
  __global const long *pa = ax + 5 * in, *ka = ax + 5 * kk;
  int cp = (int)pa[4], ck = (int)ka[4], ch = RL_GCH;
  long sp = pa[2], sk = ka[2], dk = ka[1], wp = pa[3], wk = ka[3];
  long cwp = ch >= 0 && cp == ch ? wp : 0, cwk = ch >= 0 && ck == ch ? wk : 0;
  __global const long *order = g + RL_GT + 5;
  long t = (long)get_global_id(0) * chunk, ti[RL_GAXES];
  long end = min(t + chunk, g[RL_GT + 1]);
  int big = count * (long)sizeof(RL_GD) >= g[RL_GT + 4],
      stream = big && dk % RL_GSIDE == 0;
  src += src_off;
  dst += dst_off;
  rl_g_tile_index(g, t, side, rows, ti);
  long last = -1; /* the previous tile's source offset */
  for (; t < end; t++) {
    long d, s, x[RL_GDIMS], np = 0, nk = 0;
    int ok = rl_g_tile_at(g, ti, side, rows, &d, &s, x, &np, &nk);
    for (int r = 0; r < n; r++) { /* the next tile */
      int a = (int)order[r];
      if (++ti[a] < rl_g_grid(ax, a, in, kk, side, rows)) break;
      ti[a] = 0;
    }
    __global RL_GD *out = dst + d;
    __global const RL_GS *from = src + s;
#if defined(RL_GVEC) || defined(RL_VCAST)
    /* the source rows two tiles on, if the tiles keep their step */
    long ahead = last < 0 ? 0 : 2 * (s - last);
    last = s;
    for (int r = 0; ahead && r < (sp == 1 ? RL_GSIDE : np); r++)
      RL_GPREFETCH(from + ahead + r * (sp == 1 ? sk : sp));
    /* all data (all), and K's rows whole (full) */
    int all = ok &&
              (cp < 0 || x[cp] + (np - 1) * wp + (ck == cp) * (nk - 1) * wk <
                             bound[cp]) &&
              (ck < 0 || ck == cp || x[ck] + (nk - 1) * wk < bound[ck]);
    int full = all && nk == rows;
#endif
#ifdef RL_GVEC
    if (full && sp == 1 && np == side) { /* rows of 1, 2 or 4 sides */
      RL_GROWS(rl_g_side, squares);
      continue;
    }
    if (full && sp == 1 && np == RL_GHALF) {
      RL_GROWS(rl_g_half, 1);
      continue;
    }
    RL_GSPANS(RL_GV, rl_g_side, RL_GV, rl_g_side, rl_g_half, rl_g_quarter,
              RL_GAS_IS, 0, big && (ulong)out % sizeof(RL_GV) == 0)
    RL_GRUN_OF_ROWS(RL_GV, rl_g_side, RL_GV, rl_g_side, RL_GAS_IS)
    /* whether K's rows shorter than a side go as overlapping vectors */
    int overlaps = sizeof(RL_GS) < 4 && all && sk == 1 && sp > 0 && np == side;
    /* K's whole squares: all of K's rows where they are a side, or a deep
     * tile's (lib/codegen/generic.c) first, its rest overlapping below */
    if (all && sk == 1 && np == side && nk >= RL_GSIDE &&
        (nk % RL_GSIDE == 0 || overlaps)) {
      int streamed = stream && (ulong)out % sizeof(RL_GV) == 0;
      for (; nk >= RL_GSIDE; nk -= RL_GSIDE, from += RL_GSIDE,
                            out += RL_GSIDE * dk) {
        RL_GSQUARES(RL_GV, rl_g_side, RL_GSQUARE, squares, streamed)
      }
      if (!nk) continue;
    }
    if (overlaps && nk < RL_GSIDE) {
      /* rows of nk elements along K, fewer than a side, each one run in the
       * source (a 3 x 3 conv weight's 9 pixels into FRACTAL_Z, C0 the side):
       * each square's rows along P read as overlapping vectors along K
       * (those that would read past the tile's last element, through a
       * private buffer), transposed, its first nk rows written. Elements of
       * 4 bytes or more went faster one by one (16 of them fill two AVX2
       * registers). */
      long end = (np - 1) * sp + nk;
      for (int m = 0; m < squares; m++) {
        RL_GV v[RL_GSIDE];
        for (int j = 0; j < RL_GSIDE; j++) {
          long at = (m * RL_GSIDE + j) * sp;
          if (at + RL_GSIDE <= end) {
            v[j] = RL_PACKED_AT(rl_g_side, from + at);
          } else {
            union {
              RL_GV v;
              RL_GS e[RL_GSIDE];
            } t = {(RL_GV)0};
            for (int l = 0; l < nk; l++) t.e[l] = from[at + l];
            v[j] = t.v;
          }
        }
        RL_TRANSPOSE(RL_GV, RL_GSIDE, RL_GROUNDS, RL_GZIP, v)
        for (int i = 0; i < nk; i++)
          RL_PACKED_AT(rl_g_side, out + i * dk + m * RL_GSIDE) = v[i];
      }
      continue;
    }
#elif defined(RL_VCAST)
    /* a cast's tile all data, rows of whole squares read along P, or along
     * K and transposed: each 16 elements converted as a vector (cast.cl) */
    long ss = g[RL_GC], sz = g[RL_GC + 1], ds = g[RL_GC + 2], dz = g[RL_GC + 3];
    if (full && np == side && spans == 1 && (sp == 1 || sk == 1)) {
      /* streamed past the threshold where the squares side by side make
       * whole lines of each row (their count then a constant, so that
       * they stay in registers) */
      RL_GSQUARES(RL_CDV, rl_g_to, RL_GCAST_SQUARE, RL_GLINE,
                  big && squares == RL_GLINE && (ulong)out % 64 == 0 &&
                      dk * sizeof(RL_GD) % 64 == 0)
      continue;
    }
    /* rows of half a side along P, all data, no channel moving within the
     * tile (f16 -> f32 into FRACTAL_NZ's rows of 8): two of K's rows to a
     * vector, converted as one, written as its halves */
    if (full && sp == 1 && np == 8 && nk % 2 == 0 && cwp == 0 &&
        cwk == 0) {
      long c = ch < 0 ? 0 : x[ch];
      for (long i = 0; i < nk; i += 2) {
        RL_CDV y = RL_GVCAST((RL_CSV)(RL_PACKED_AT(rl_g_hfrom, from + i * sk),
                                      RL_PACKED_AT(rl_g_hfrom,
                                                   from + (i + 1) * sk)),
                             c, 0);
        RL_PACKED_AT(rl_g_hto, out + i * dk) = y.lo;
        RL_PACKED_AT(rl_g_hto, out + (i + 1) * dk) = y.hi;
      }
      continue;
    }
    if (cwp == 0 && cwk == 0) {
      RL_GSPANS(RL_CSV, rl_g_from, RL_CDV, rl_g_to, rl_g_hto, rl_g_qto,
                RL_GAS_CAST, RL_CONVERT_FIRST_OF(RL_GS, RL_GD), 0)
    }
    RL_GRUN_OF_ROWS(RL_CSV, rl_g_from, RL_CDV, rl_g_to, RL_GAS_CAST)
    /* rows of np elements, fewer than a side, whole vectors of them, all
     * data: 16 elements at a time gathered into a vector (row i, element
     * j counted along), each lane's channel its row's and element's where
     * the channel moves, and written as one where the rows are one run in
     * the destination (dk == np: 4N -> 2N's images), else lane by lane
     * (NCHW4 -> NC1HWC0: rows of 4 along C0) */
    if (full && np < RL_GSIDE && nk * np % RL_GSIDE == 0) {
      /* f and o: element (i, j)'s source and destination offsets, stepped */
      long i = 0, j = 0, f = 0, o = 0, c = ch < 0 ? 0 : x[ch];
      for (long e = 0; e < nk * np; e += RL_GSIDE) {
        long j0 = j;
        RL_CSV v;
#ifdef RL_GQC
        uint16 s;
        int16 z;
#endif
        for (int l = 0; l < RL_GSIDE; l++) {
          v[l] = from[f];
#ifdef RL_GQC
          s[l] = (uint)RL_QC_S(c + i * cwk + j * cwp);
          z[l] = (int)RL_QC_Z(c + i * cwk + j * cwp);
#endif
          f += ++j == np ? sk - (np - 1) * sp : sp;
          if (j == np) j = 0, i++;
        }
#ifdef RL_GQC
        RL_CDV y = rl_vcast_qc(v, s, z, ss, sz, ds, dz);
#else
        RL_CDV y = RL_GVCAST(v, c, 0);
#endif
        if (dk == np) {
          RL_PACKED_AT(rl_g_to, out + e) = y;
          continue;
        }
        for (int l = 0; l < RL_GSIDE; l++) {
          out[o] = y[l];
          o += ++j0 == np ? dk - np + 1 : 1;
          if (j0 == np) j0 = 0;
        }
      }
      continue;
    }
    /* rows of a whole side, each a pixel of sk elements, fewer than a side,
     * all data, one after another in the source (an image's 3 channels in
     * a C0 of 16): the tile's 16 pixels converted as sk vectors into a
     * private buffer, each row read from it at its pixel's offset, the
     * lanes past sk padding */
    if (ok && sp == 1 && np == RL_GSIDE && nk == RL_GSIDE &&
        cwp == 0 && cwk == 0 && cp >= 0 && ck != cp && wp == 1 && sk > 0 &&
        sk < RL_GSIDE && bound[cp] - x[cp] == sk &&
        (ck < 0 || x[ck] + (nk - 1) * wk < bound[ck])) {
      union {
        RL_CDV v[RL_GSIDE + 1];
        RL_GD e[(RL_GSIDE + 1) * RL_GSIDE];
      } buf;
      long c = ch < 0 ? 0 : x[ch];
      for (int j = 0; j < sk; j++)
        buf.v[j] = RL_GVCAST(
            RL_PACKED_AT(rl_g_from, from + j * RL_GSIDE), c, 0);
      buf.v[sk] = (RL_CDV)0; /* read past the last pixel, then padded */
      for (int i = 0; i < RL_GSIDE; i++)
        RL_PACKED_AT(rl_g_to, out + i * dk) = rl_vkeep(
            ((__private rl_g_to *)(buf.e + i * sk))->v, sk, (RL_CDV)RL_PAD);
      continue;
    }
#endif
    for (long i = 0; i < nk; i++, out += dk, from += sk) {
      long data = 0;
      if (ok && (ck < 0 || ck == cp || x[ck] + i * wk < bound[ck])) {
        long xc = cp >= 0 ? x[cp] + (ck == cp) * i * wk : 0;
        /* (no division where P steps its dim by 1) */
        data = cp < 0   ? np
               : wp == 1 ? clamp(bound[cp] - xc, 0L, np)
                         : clamp((bound[cp] - xc + wp - 1) / wp, 0L, np);
      }
      long j = 0, xq = ch < 0 ? 0 : x[ch] + i * cwk;
#ifdef RL_VCAST
      /* (a cast) a row's data in whole vectors, gathered: K too short for
       * squares (a 3 x 3 conv weight's 9 pixels), or cut by an edge: lane
       * by lane with AVX-512's gathers, else through a private buffer
       * (inserting lane by lane took 4x longer on AVX2, the buffer twice
       * as long on AVX-512) */
      for (; j + RL_GSIDE <= data; j += RL_GSIDE) {
        union {
          RL_CSV v;
          RL_GS e[RL_GSIDE];
        } t;
        for (int l = 0; l < RL_GSIDE; l++)
#ifdef __AVX512F__
          t.v[l] = from[(j + l) * sp];
#else
          t.e[l] = from[(j + l) * sp];
#endif
        RL_PACKED_AT(rl_g_to, out + j) = RL_GVCAST(t.v, xq + j * cwp, cwp);
      }
      /* then, lanes not stepping through channels, the rest in vectors
       * while 16 more are to be written: the last data selected into their
       * lanes and converted as one (an image's 3 channels in a C0 of 16),
       * the other lanes padding */
      for (; cwp == 0 && j + RL_GSIDE <= np; j += RL_GSIDE) {
        RL_CDV y = (RL_CDV)RL_PAD;
        if (j < data)
          y = rl_vkeep(RL_GVCAST(rl_vfirst(from + j * sp, sp, data - j), xq, 0),
                       data - j, y);
        RL_PACKED_AT(rl_g_to, out + j) = y;
      }
#endif
      for (; j < data; j++) out[j] = RL_TRANSFORM_C(from[j * sp], xq + j * cwp);
      for (; j < np; j++) out[j] = RL_PAD;
    }
  }
}
#endif
#elif defined(RL_GD)
/* Any other map, element by element. */
__kernel void rl_generic_map(RL_GENERIC_PARAMS(RL_GS, RL_GD)) {
  long o = (long)get_global_id(0) * chunk;
  long end = min(o + chunk, count);
  src += src_off;
  dst += dst_off;
  for (long s, x[RL_GDIMS]; o < end; o++)
    dst[o] = rl_g_general(g, o, &s, x)
                 ? RL_TRANSFORM_C(src[s], x[RL_GCH])
                 : RL_PAD;
}
#else
/* 4-bit elements, two to a byte, low nibble first: `chunk` destination
 * bytes per work-item, each element through the affine map (g[0] 1, the
 * affine block from g[1]) or the general one (g[0] 0). */
__kernel void rl_generic_nibbles(RL_GENERIC_PARAMS(uchar, uchar)) {
  long b = (long)get_global_id(0) * chunk;
  long end = min(b + chunk, (count + 1) / 2);
  int affine = (int)g[0];
  __global const long *m = g + 1;
  int n = affine ? (int)m[0] : 0;
  __global const long *bound = m + RL_GA_AXES + 5 * n;
  src += src_off;
  dst += dst_off;
  for (; b < end; b++) {
    uint byte = 0;
    for (int h = 0; h < 2; h++) {
      long e = 2 * b + h, s, x[RL_GDIMS], idx[RL_GAXES];
      int ok = e < count;
      if (ok && affine) {
        rl_g_affine(m, e, &s, x, idx);
        for (int d = 0; d < RL_GDIMS - 1; d++) ok &= x[d] < bound[d];
      } else if (ok) {
        ok = rl_g_general(m, e, &s, x);
      }
      if (ok) byte |= (uint)((src[s >> 1] >> ((s & 1) * 4)) & 0xF) << (4 * h);
    }
    dst[b] = (uchar)byte;
  }
}
#endif
