/* generic.c - the generic kernels' program and each conversion's arguments
 * to them: the map kernels/generic.cl evaluates, as a block of longs */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char rl_kernel_common_cl[], rl_kernel_generic_cl[],
    rl_kernel_cast_cl[];

/* the layout of kernels/generic.cl's blocks */
enum { GAXES = 48, GDIMS = 13, GA_AXES = 2, GMAXES = RELAYOUT_MAX_AXES };
enum { GM_SRC = 21, GM_DAXES = 40, GM_DPAD = GM_DAXES + 4 * GMAXES };
enum { GM_SAXES = GM_DPAD + 3 * GDIMS, GM_SPAD = GM_SAXES + 4 * GMAXES };
/* kernels/cast.cl's RL_GC: a cast's quantization, then a per-channel
 * one's dim */
enum { GC = 455 };
_Static_assert(GM_SPAD + GDIMS + 1 <= GC &&
                   GA_AXES + 6 * GAXES + 2 * GDIMS + 5 <= GC &&
                   GC + 6 == RL_GENERIC_LONGS,
               "blocks fit");
_Static_assert(RELAYOUT_MAX_AXES * 2 <= GAXES && RELAYOUT_MAX_DIMS < GDIMS,
               "generic.cl's arrays hold every plan");

/* A cast's side: a float's fraction and exponent bits, or an integer's
 * width, signedness and range (kernels/cast.cl). */
static int cast_side(char *out, size_t room, char side, relayout_dtype t) {
  int e, m = rl_float_bits(t, &e);
  int64_t lo, hi;
  rl_int_range(t, &lo, &hi);
  return snprintf(out, room,
                  "#define RL_C%c_M %d\n#define RL_C%c_E %d\n"
                  "#define RL_C%c_BITS %d\n#define RL_C%c_SIGNED %d\n"
                  "#define RL_C%c_LO %lld\n#define RL_C%c_HI %lld\n",
                  side, m, side, e, side, relayout_dtype_bits(t), side, lo < 0,
                  side, (long long)lo, side, (long long)hi);
}

/* A cast's quantization: each side's scale (f32 bits) and zero point, and
 * the bits padding is written as. */
static void quant(int64_t *g, const rl_desc *dst, const rl_desc *src) {
  uint32_t ss, ds;
  memcpy(&ss, &src->scale, sizeof ss);
  memcpy(&ds, &dst->scale, sizeof ds);
  int64_t rec[5] = {ss, src->zero_point, ds, dst->zero_point, dst->zero_point};
  memcpy(g, rec, sizeof rec);
}

int rl_cast_defines(char *out, size_t room, const rl_desc *dst,
                    const rl_desc *src, int constants) {
  int a = cast_side(out, room, 'S', src->dtype);
  a += cast_side(out + a, room - (size_t)a, 'D', dst->dtype);
  if (!constants) return a;
  int64_t q[5];
  quant(q, dst, src);
  if (dst->per_channel || src->per_channel)
    a += snprintf(out + a, room - (size_t)a, "#define RL_QC %d\n",
                  dst->per_channel ? 1 : 2);
  return a + snprintf(out + a, room - (size_t)a,
                      "#define RL_Q_SS %lldL\n#define RL_Q_SZ %lldL\n"
                      "#define RL_Q_DS %lldL\n#define RL_Q_DZ %lldL\n"
                      "#define RL_Q_PAD %lldL\n",
                      (long long)q[0], (long long)q[1], (long long)q[2],
                      (long long)q[3], (long long)q[4]);
}

static const char *storage(relayout_dtype t) {
  switch (relayout_dtype_bits(t)) {
  case 8: return "uchar";
  case 16: return "ushort";
  case 32: return "uint";
  default: return "ulong";
  }
}

char *rl_generic_source(const rl_desc *dst, const rl_desc *src, int for_cpu) {
  char head[768];
  int bits = relayout_dtype_bits(dst->dtype), cast = rl_is_cast(dst, src);
  int general = bits == 4 ? 0 : rl_generic_general(dst, src);
  int64_t units;
  int tiles =
      !strcmp(rl_generic_kernel(dst, src, for_cpu, &units), "rl_generic_tile");
  int a = snprintf(head, sizeof head,
                   "#define RL_GMAP %d\n#define RL_GW %d\n#define RL_GTILES "
                   "%d\n%s",
                   general, bits, tiles, for_cpu ? "" : "#define RL_GGPU 1\n");
  if (cast) {
    a += snprintf(head + a, sizeof head - (size_t)a,
                  "#define RL_GS %s\n#define RL_GD %s\n%s", storage(src->dtype),
                  storage(dst->dtype), for_cpu ? "#define RL_CPU 1\n" : "");
    a += rl_cast_defines(head + a, sizeof head - (size_t)a, dst, src, 0);
    if (rl_generic_channels(dst, src))
      a += snprintf(head + a, sizeof head - (size_t)a, "#define RL_GQC %d\n",
                    rl_generic_channels(dst, src));
  }
  const char *parts[] = {head, cast ? rl_kernel_cast_cl : "",
                         rl_kernel_common_cl, rl_kernel_generic_cl};
  size_t len[4], total = 1;
  for (int i = 0; i < 4; i++) total += len[i] = strlen(parts[i]);
  char *s = malloc(total), *at = s;
  if (!s) return NULL;
  for (int i = 0; i < 4; i++) memcpy(at, parts[i], len[i]), at += len[i];
  *at = 0;
  return s;
}

/* How an affine plan's runs go (kernels/generic.cl): 0 element by element,
 * 1 along a destination stride of 1, 2 dense axes. */
static int runs(const rl_layout_plan *p) {
  int n = p->naxes;
  if (!n || p->axes[n - 1].dstride != 1) return 0;
  for (int k = 0; k + 1 < n; k++)
    if (p->axes[k].dstride != p->axes[k + 1].dstride * p->axes[k + 1].extent)
      return 1;
  return 2;
}

static int64_t magnitude(int64_t v) { return v < 0 ? -v : v; }

/* How rl_generic_tile (kernels/generic.cl) takes a plan: along its axis K,
 * `along_k` rows of `along_p` elements along the innermost axis P; `tiles`
 * of them. On a CPU device those are `spans` and `squares` times a side
 * (`side`, RL_GSIDE, for the elements' width). */
typedef struct tiling {
  int k, side, squares, spans;
  int64_t along_p, along_k, tiles;
  int64_t order[GAXES]; /* the axes as the tiles go, fastest first */
} tiling;

/* A GPU work-group's tile: at most GPU_SIDE elements along P and
 * GPU_TILE in all (kernels/generic.cl's RL_GLOCAL holds it, padded). */
enum { GPU_SIDE = 32, GPU_TILE = 1024 };

/* The axis other than P, of `least` elements or more, that the source
 * (by_src) or the destination steps along most closely, closer than
 * `below`; -1 if none. */
static int closest(const rl_layout_plan *p, int64_t least, int by_src,
                   int64_t below) {
  int k = -1;
  int64_t best = below;
  for (int a = 0; a + 1 < p->naxes; a++) {
    const rl_iter_axis *x = &p->axes[a];
    int64_t s = magnitude(by_src ? x->sstride : x->dstride);
    if (x->extent >= least && s < best) k = a, best = s;
  }
  return k;
}

/* The tiles' order and count: along P, then (P contiguous) along the axis
 * that continues P's rows in the source, so that each source line is read
 * whole, then the rest inside out. */
static void tiles_in_order(const rl_layout_plan *p, tiling *t, int64_t sp,
                           int64_t ep) {
  int in = p->naxes - 1, q = -1, at = 0;
  for (int a = 0; sp == 1 && a < in; a++)
    if (a != t->k && magnitude(p->axes[a].sstride) == ep) q = a;
  t->order[at++] = in;
  if (q >= 0) t->order[at++] = q;
  for (int a = in - 1; a >= 0; a--)
    if (a != q) t->order[at++] = a;
  t->tiles = 1;
  for (int a = 0; a <= in; a++) {
    int64_t e = p->axes[a].extent;
    t->tiles *= a == in     ? (e + t->along_p - 1) / t->along_p
                : a == t->k ? (e + t->along_k - 1) / t->along_k
                            : e;
  }
}

/* Whether the tile kernel takes the plan: dense (not a skip plan, whose
 * axes run past the destination's end), P of destination stride 1, and on
 * a GPU an axis K of 16 or more, else 2 or more: the one the source steps
 * along most closely, where it is closer than P, else the one the
 * destination does (rows along P). On a CPU device, either P strided in the
 * source and another axis closer (K: the closest, or for a cast whose P is
 * under a side the closest of 16 or more, so that its rows are gathered 16
 * elements at a time, not 2N's 2 images one by one; squares side by side to
 * fill 64 bytes of each destination row, or where P is half, a quarter or
 * an eighth of a square, that many pieces of K in one) or P contiguous
 * there and at most 64 bytes, whole sides or half one (K: the axis of 16
 * or more, else 2 or more, that the destination steps along most
 * closely). */
static int tile_plan(const rl_layout_plan *p, int bits, int for_cpu, int cast,
                     tiling *t) {
  int in = p->naxes - 1;
  t->k = -1;
  t->side = bits == 64 ? 8 : 16;
  t->squares = t->spans = 1;
  if (!p->affine || p->skip || in < 1 || runs(p) != 2) return 0;
  int64_t sp = magnitude(p->axes[in].sstride), ep = p->axes[in].extent;
  if (!for_cpu) {
    for (int64_t least = 16; least >= 2 && t->k < 0; least -= 14)
      if ((t->k = closest(p, least, 1, sp)) < 0)
        t->k = closest(p, least, 0, INT64_MAX);
    if (t->k < 0) return 0;
    t->along_p = ep < GPU_SIDE ? ep : GPU_SIDE;
    t->along_k = GPU_TILE / t->along_p;
    if (p->axes[t->k].extent < t->along_k) t->along_k = p->axes[t->k].extent;
    tiles_in_order(p, t, sp, ep);
    return 1;
  }
  /* P contiguous in the source: rows of up to 64 bytes (FRACTAL_NZ's 32
   * 1-byte elements: 2 sides) */
  if (sp == 1 && ep > t->side) {
    if (ep % t->side || ep / t->side > 4 || ep * bits > 512) return 0;
    t->squares = (int)(ep / t->side);
  }
  int64_t least[2] = {sp == 1 || (cast && ep < t->side) ? t->side : 2, 2};
  for (int pass = 0; pass < 2 && t->k < 0; pass++)
    t->k = closest(p, least[pass], sp != 1, sp == 1 ? INT64_MAX : sp);
  if (t->k < 0) return 0;
  while (sp != 1 && t->squares < 4 && t->squares * t->side * bits < 512 &&
         2 * t->squares * t->side <= ep)
    t->squares *= 2;
  /* P half, a quarter or an eighth of a square: a square holds that many
   * pieces of K */
  if (sp != 1 && ep > 1 && t->side % ep == 0 &&
      p->axes[t->k].extent >= t->side * (t->side / ep))
    t->spans = t->side / (int)ep;
  /* a 1- or 2-byte move's whole squares along P, strided in the source, K
   * contiguous there: squares along K too (deep), 4 in all, so that a
   * tile's overhead is spread over 1 or 2 KB (8 squares of 1 byte were
   * slower; so were P's pieces of a square, 4N's and CHWN4's, deep) */
  const rl_iter_axis *k = &p->axes[t->k];
  int deep = 1;
  if (!cast && bits < 32 && p->axes[in].sstride > 1 && k->sstride == 1 &&
      t->spans == 1 && ep % (t->squares * t->side) == 0)
    while (2 * deep * t->squares <= 4 && k->extent > deep * t->side) deep *= 2;
  t->along_p = t->squares * t->side;
  t->along_k = t->spans * deep * t->side;
  tiles_in_order(p, t, sp, ep);
  return 1;
}

/* The affine block: n, how runs go, the axes, each dim's bound, then
 * rl_generic_tile's axis K, tiles, elements along P and K, the bytes from
 * which it streams a destination and the tiles' order. */
static int affine_args(int64_t *g, const rl_layout_plan *p, const rl_desc *dst,
                       int for_cpu, int cast, int64_t stream_from) {
  int n = p->naxes, at = GA_AXES;
  g[0] = n;
  g[1] = runs(p);
  for (int k = 0; k < n; k++) {
    const rl_iter_axis *a = &p->axes[k];
    int64_t rec[5] = {a->extent, a->dstride, a->sstride, a->weight, a->check};
    memcpy(g + at, rec, sizeof rec);
    at += 5;
  }
  int64_t *bound = g + at, *checks = bound + GDIMS, nchecks = 0;
  for (int d = 0; d < GDIMS - 1; d++) {
    int checked = 0;
    for (int k = 0; k < n; k++) checked |= p->axes[k].check == d;
    bound[d] = checked ? dst->dims[d] : INT64_MAX;
    if (checked) checks[nchecks++] = d;
  }
  bound[GDIMS - 1] = nchecks;
  int bits = relayout_dtype_bits(dst->dtype);
  tiling t;
  int64_t *tile = bound + 2 * GDIMS;
  tile[0] = tile_plan(p, bits, for_cpu, cast, &t) ? t.k : -1;
  tile[1] = t.k < 0 ? 0 : t.tiles;
  tile[2] = t.along_p;
  tile[3] = t.along_k;
  tile[4] = stream_from > 0 ? stream_from : INT64_MAX;
  memcpy(tile + 5, t.order, sizeof *t.order * (size_t)n);
  return at + 2 * GDIMS + 5 + n;
}

/* A side's remapping: its groups, its merge (outer, inner, extent), its
 * segmented dims (dim, len, padded, count; len 0: none). */
static void remap_args(int64_t *g, const rl_desc *d) {
  const relayout_groups *x = &d->groups;
  int64_t rec[9] = {x->groups,      x->e,           x->cin,
                    x->cout,        x->n_dim,       x->c_dim,
                    d->merge.outer, d->merge.inner, d->merge.extent};
  memcpy(g, rec, sizeof rec);
  for (int i = 0; i < 2; i++) {
    const rl_segments *s = &d->seg[i];
    int64_t seg[4] = {s->dim, s->len, s->padded, s->count};
    memcpy(g + 9 + 4 * i, seg, sizeof seg);
  }
}

static void axes_args(int64_t *g, const rl_desc *d) {
  for (int k = 0; k < d->naxes; k++) {
    const relayout_axis *a = &d->axes[k];
    int64_t rec[4] = {a->extent, a->stride, a->weight, a->dim};
    memcpy(g + 4 * k, rec, sizeof rec);
  }
}

/* The general block: both descriptors. */
static int general_args(int64_t *g, const rl_desc *dst, const rl_desc *src) {
  memset(g, 0, sizeof *g * (GM_SPAD + GDIMS));
  int64_t head[4] = {dst->naxes, dst->compact, dst->nvdims, dst->ndims};
  memcpy(g, head, sizeof head);
  remap_args(g + 4, dst);
  g[GM_SRC] = src->naxes;
  g[GM_SRC + 1] = src->ndims;
  remap_args(g + GM_SRC + 2, src);
  axes_args(g + GM_DAXES, dst);
  for (int d = 0; d < dst->nvdims; d++) {
    g[GM_DPAD + d] = dst->pad_before[d];
    g[GM_DPAD + GDIMS + d] = dst->padded[d];
    g[GM_DPAD + 2 * GDIMS + d] = dst->vdims[d];
  }
  axes_args(g + GM_SAXES, src);
  for (int d = 0; d < src->nvdims; d++) g[GM_SPAD + d] = src->pad_before[d];
  return GM_SPAD + GDIMS;
}

/* The map the generic kernels run: a per-channel cast's channel dim kept
 * as a coordinate of its own (rl_plan_affine), which they read it from. */
static void generic_plan(rl_layout_plan *p, const rl_desc *dst,
                         const rl_desc *src) {
  int channels = rl_generic_channels(dst, src);
  rl_plan_affine(p, dst, src,
                 channels ? (channels == 1 ? dst : src)->per_channel - 1 : -1);
}

const char *rl_generic_kernel(const rl_desc *dst, const rl_desc *src,
                              int for_cpu, int64_t *units) {
  int bits = relayout_dtype_bits(dst->dtype);
  *units = bits == 4 ? (dst->span + 1) / 2 : dst->span;
  if (bits == 4) return "rl_generic_nibbles";
  rl_layout_plan p;
  generic_plan(&p, dst, src);
  if (!p.affine) return "rl_generic_map";
  tiling t;
  if (!tile_plan(&p, bits, for_cpu, rl_is_cast(dst, src), &t))
    return "rl_generic_affine";
  *units = t.tiles;
  return "rl_generic_tile";
}

int rl_generic_general(const rl_desc *dst, const rl_desc *src) {
  rl_layout_plan p;
  generic_plan(&p, dst, src);
  return !p.affine;
}

int rl_generic_channels(const rl_desc *dst, const rl_desc *src) {
  return !rl_is_cast(dst, src) ? 0
         : dst->per_channel    ? 1
         : src->per_channel    ? 2
                               : 0;
}

int rl_generic_args(int64_t *out, const rl_desc *dst, const rl_desc *src,
                    int for_cpu, int64_t stream_from) {
  rl_layout_plan p;
  generic_plan(&p, dst, src);
  if (rl_is_cast(dst, src)) {
    int channels = rl_generic_channels(dst, src);
    memset(out, 0, sizeof *out * RL_GENERIC_LONGS);
    if (p.affine)
      affine_args(out, &p, dst, for_cpu, 1, stream_from);
    else
      general_args(out, dst, src);
    quant(out + GC, dst, src);
    if (channels)
      out[GC + 5] = (channels == 1 ? dst->per_channel : src->per_channel) - 1;
    return RL_GENERIC_LONGS;
  }
  if (relayout_dtype_bits(dst->dtype) != 4)
    return p.affine ? affine_args(out, &p, dst, for_cpu, 0, stream_from)
                    : general_args(out, dst, src);
  out[0] = p.affine;
  return 1 + (p.affine ? affine_args(out + 1, &p, dst, for_cpu, 0, stream_from)
                       : general_args(out + 1, dst, src));
}
