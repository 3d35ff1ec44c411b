/* codegen.c - kernel source for a plan: its constants and element map
 * (the header kernels/common.cl describes), a CPU box's variant (variant.h),
 * its box (map_box) or a GPU stage (map_stage); then the kernel's sources.
 */
#include "plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the sources in kernels/, embedded at build time */
extern const char rl_kernel_common_cl[], rl_kernel_cast_cl[],
    rl_kernel_gather_cl[], rl_kernel_rows_cl[], rl_kernel_stage_cl[],
    rl_kernel_lines_stores_cl[], rl_kernel_lines_planes_cl[],
    rl_kernel_lines_squares_cl[], rl_kernel_lines_nibbles_cl[],
    rl_kernel_lines_casts_cl[], rl_kernel_lines_cl[];

typedef struct text {
  char *s;
  size_t len, cap;
  int failed;
} text;

__attribute__((format(printf, 2, 3))) static void put(text *t, const char *fmt,
                                                      ...) {
  if (t->failed) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (t->len + (size_t)n + 1 > t->cap) {
    size_t cap = (t->cap + (size_t)n + 1) * 2;
    char *s = realloc(t->s, cap);
    if (!s) {
      t->failed = 1;
      return;
    }
    t->s = s;
    t->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  t->len += (size_t)n;
}

/* Whether some axis of an affine plan bounds dim d. */
static int checked(const rl_layout_plan *p, int d) {
  for (int k = 0; k < p->naxes; k++)
    if (p->axes[k].check == d) return 1;
  return 0;
}

/* Declares x<d>, the coordinate of each dim an axis bounds. */
static void declare_checks(text *t, const rl_layout_plan *p,
                           const rl_desc *dst) {
  for (int d = 0; d < dst->ndims; d++)
    if (checked(p, d)) put(t, "  RL_I x%d = 0;\n", d);
}

/* " && x<d> < extent" for each bounded dim but those in except[3]. */
static void bounds(text *t, const rl_layout_plan *p, const rl_desc *dst,
                   const int *except) {
  for (int d = 0; d < dst->ndims; d++)
    if (d != except[0] && d != except[1] && d != except[2] && checked(p, d))
      put(t, " && x%d < %lld", d, (long long)dst->dims[d]);
}

static const int no_except[3] = {-1, -1, -1};

/* Axes [0, n) from the destination offset in r: index, source offset so,
 * bounded coordinates. */
static void walk(text *t, const rl_layout_plan *p, int n) {
  for (int k = 0; k < n; k++) {
    const rl_iter_axis *a = &p->axes[k];
    if (a->dstride == 1)
      put(t, "  i = r;\n");
    else
      put(t, "  i = r / %lld; r -= i * %lld;\n", (long long)a->dstride,
          (long long)a->dstride);
    put(t, "  so += i * %lld;\n", (long long)a->sstride);
    if (a->check >= 0)
      put(t, "  x%d += i * %lld;\n", a->check, (long long)a->weight);
  }
}

/* Axis a's index i from g (the launch index over a box's blocks and the
 * axes outside it, innermost fastest), in blocks of `block`: both offsets
 * dd and ss, and its bounded dim's coordinate (x<dim>, or x[dim] when
 * `array`). */
static void step_from_g(text *t, const rl_iter_axis *a, int64_t block,
                        int array) {
  int64_t n = (a->extent + block - 1) / block;
  if (n == 1)
    put(t, "  i = 0;\n");
  else if (block == 1)
    put(t, "  i = g %% %lld; g /= %lld;\n", (long long)n, (long long)n);
  else
    put(t, "  i = g %% %lld * %lld; g /= %lld;\n", (long long)n,
        (long long)block, (long long)n);
  put(t, "  dd += i * %lld; ss += i * %lld;\n", (long long)a->dstride,
      (long long)a->sstride);
  if (a->check >= 0)
    put(t, array ? "  x[%d] += i * %lld;\n" : "  x%d += i * %lld;\n", a->check,
        (long long)a->weight);
}

/* Whether axis a (or NULL) bounds one of the plan's skipped dims. */
static int skipped(const rl_layout_plan *p, const rl_iter_axis *a) {
  return a && a->check >= 0 && p->skip >> a->check & 1;
}

/* n[i] = how many indices of box axis x (a, its axis; NULL when
 * unbounded or not in the box) from its start lie below limit[] along the
 * dim a bounds: all of its block where a shares that bound with K (K's
 * count then drops along it). */
static void count(text *t, const rl_iter_axis *a, const rl_box_axis *x, int i,
                  char name, const int64_t *limit) {
  if (!a || a->check < 0 || x->step)
    put(t, "  n[%d] = RL_BLOCK_%c;\n", i, name);
  else
    put(t, "  n[%d] = (%lld - x%d + %lld) / %lld;\n", i,
        (long long)limit[a->check], a->check, (long long)a->weight - 1,
        (long long)a->weight);
}

/* Whether axis k of a LINES plan is one of its box's axes. */
static int in_box(const rl_layout_plan *p, int k) {
  for (int b = 0; b < 3; b++)
    if (p->box[b].axis == k) return 1;
  return 0;
}

/* For a LINES plan: the box's extents, blocks and strides RL_E<x>, RL_B<x>,
 * RL_D<x>, RL_S<x> for x = P, Q, K, and rl_box(g, p0, q0, k0, &d, &s, n):
 * both offsets of the box element (p0, q0, k0), g running over the other
 * axes (innermost fastest), and in n[] how many indices from p0, q0, k0 on
 * hold data along each box axis (data comes first along every axis); K's
 * count drops by RL_KDATA_DROP_P and RL_KDATA_DROP_Q per step along P and Q. It
 * returns 0 when the other axes put the whole box in padding. With RL_SKIP,
 * n[3..5] count the indices before the destination's end instead (K's count
 * dropping by RL_KWRITE_DROP_P and RL_KWRITE_DROP_Q), n[3] 0 where the other
 * axes put the box past it. */
static void map_box(text *t, const rl_layout_plan *p, const rl_desc *dst) {
  static const char names[3] = {'P', 'Q', 'K'};
  static const char starts[3] = {'p', 'q', 'k'}; /* p0, q0, k0 */
  int64_t rest = 1;
  for (int b = 0; b < 3; b++) {
    const rl_box_axis *x = &p->box[b];
    const rl_iter_axis *a = x->axis >= 0 ? &p->axes[x->axis] : NULL;
    put(t, "#define RL_EXTENT_%c %lld\n#define RL_BLOCK_%c %lld\n", names[b],
        (long long)(a ? a->extent : 1), names[b], (long long)x->block);
    put(t, "#define RL_DSTRIDE_%c %lld\n#define RL_SSTRIDE_%c %lld\n", names[b],
        (long long)(a ? a->dstride : 0), names[b],
        (long long)(a ? a->sstride : 0));
    put(t, "#define RL_KDATA_DROP_%c %lld\n", names[b], (long long)x->step);
  }
  put(t, "static inline int rl_box(RL_I g, RL_I p0, RL_I q0, RL_I k0, "
         "RL_I *d, RL_I *s, RL_I *n) {\n");
  put(t, "  RL_I i, dd = p0 * RL_DSTRIDE_P + q0 * RL_DSTRIDE_Q + k0 * "
         "RL_DSTRIDE_K, "
         "ss = p0 * RL_SSTRIDE_P + q0 * RL_SSTRIDE_Q + k0 * RL_SSTRIDE_K;\n");
  declare_checks(t, p, dst);
  for (int k = p->naxes - 1; k >= 0; k--) {
    const rl_iter_axis *a = &p->axes[k];
    if (in_box(p, k)) continue;
    rest *= a->extent;
    step_from_g(t, a, 1, 0);
  }
  put(t, "  *d = dd;\n  *s = ss;\n");
  int except[3] = {-1, -1, -1};
  for (int b = 0; b < 3; b++) {
    const rl_box_axis *x = &p->box[b];
    const rl_iter_axis *a = x->axis >= 0 ? &p->axes[x->axis] : NULL;
    if (a && a->check >= 0) {
      except[b] = a->check;
      put(t, "  x%d += %c0 * %lld;\n", a->check, starts[b],
          (long long)a->weight);
    }
    count(t, a, x, b, names[b], dst->dims);
    if (p->skip)
      count(t, skipped(p, a) ? a : NULL, x, b + 3, names[b], dst->padded);
  }
  for (int d = 0; d < RELAYOUT_MAX_DIMS; d++) /* the box past the end */
    if (p->skip >> d & 1 && checked(p, d) && d != except[0] && d != except[1] &&
        d != except[2])
      put(t, "  if (x%d >= %lld) n[3] = 0;\n", d, (long long)dst->padded[d]);
  put(t, "  return 1");
  bounds(t, p, dst, except);
  put(t, ";\n}\n#define RL_OUTER_STEPS %lld\n", (long long)rest);
  if (p->skip) { /* K's write count drops along P and Q as its data count */
    int k = skipped(p, p->box[2].axis >= 0 ? &p->axes[p->box[2].axis] : NULL);
    put(t, "#define RL_KWRITE_DROP_P %lld\n#define RL_KWRITE_DROP_Q %lld\n",
        (long long)(k ? p->box[0].step : 0),
        (long long)(k ? p->box[1].step : 0));
  }
}

/* " && y<d> + y < limit[d]" for each bounded dim d in `dims` (a bit per
 * dim), y being the coordinate the box step c adds to it. */
static void step_bounds(text *t, const rl_layout_plan *p, const int *order,
                        int n, const int64_t *c, unsigned dims,
                        const int64_t *limit) {
  for (int d = 0; d < RELAYOUT_MAX_DIMS; d++)
    if (dims >> d & 1 && checked(p, d)) {
      int64_t y = 0;
      for (int i = 0; i < n; i++)
        if (p->axes[order[i]].check == d)
          y += c[order[i]] * p->axes[order[i]].weight;
      put(t, " && y%d + %lld < %lld", d, (long long)y, (long long)limit[d]);
    }
}

/* One phase of a STAGE plan (order: the box's axes, innermost first, in
 * source order for the load or destination order for the store): the
 * work-item's indices along the box axes from its id, its offsets (global
 * `go` by the strides `gs`, local `lo` by `ls`) and the coordinate of each
 * bounded dim; then one statement per step with the step's constant
 * offsets, for the elements that lie inside the tensor. The load moves
 * only those that hold data; the store writes zero for the others, and
 * nothing past the destination's end along the plan's skipped dims. */
static void stage_phase(text *t, const rl_layout_plan *p, const rl_desc *dst,
                        const int *order, int n, const int64_t *gs,
                        const int64_t *ls, int store, int per_channel) {
  int shift[RELAYOUT_MAX_AXES * 2], total = 0;
  for (int i = 0; i < n; i++) {
    shift[i] = total;
    total += p->stage_bits[order[i]];
  }
  put(t, "  RL_I go = 0, lo = 0;\n");
  for (int i = 0; i < n; i++) {
    int k = order[i];
    if (shift[i] >= 8)
      put(t, "  RL_I i%d = 0;\n", k);
    else
      put(t, "  RL_I i%d = (RL_I)(lid >> %d) & %d;\n", k, shift[i],
          (1 << p->stage_bits[k]) - 1);
    put(t, "  go += i%d * %lld; lo += i%d * %lld;\n", k, (long long)gs[k], k,
        (long long)ls[k]);
  }
  for (int d = 0; d < dst->ndims; d++)
    if (checked(p, d)) {
      put(t, "  RL_I y%d = x[%d]", d, d);
      for (int i = 0; i < n; i++)
        if (p->axes[order[i]].check == d)
          put(t, " + i%d * %lld", order[i],
              (long long)p->axes[order[i]].weight);
      put(t, ";\n");
    }
  int steps = total > 8 ? 1 << (total - 8) : 1;
  for (int r = 0; r < steps; r++) {
    int64_t c[RELAYOUT_MAX_AXES * 2], g0 = 0, l0 = 0;
    for (int i = 0; i < n; i++) {
      int k = order[i];
      c[k] = (((int64_t)r << 8) >> shift[i]) & ((1 << p->stage_bits[k]) - 1);
      g0 += c[k] * gs[k];
      l0 += c[k] * ls[k];
    }
    put(t, "  if (1");
    if (total < 8) put(t, " && lid < %d", 1 << total);
    for (int i = 0; i < n; i++) {
      int k = order[i];
      if (p->axes[k].extent % ((int64_t)1 << p->stage_bits[k]))
        put(t, " && i%d + %lld < m[%d]", k, (long long)c[k], k);
    }
    if (store) {
      put(t, ") {\n    int data = 1");
      step_bounds(t, p, order, n, c, ~0u, dst->dims);
      put(t, ";\n");
      if (p->skip) { /* past the destination's end: no element to write */
        put(t, "    if (1");
        step_bounds(t, p, order, n, c, p->skip, dst->padded);
        put(t, ")\n  ");
      }
      if (per_channel) /* each element's channel from its offset, d + ... */
        put(t,
            "    g[go + %lld] = data ? RL_TRANSFORM_AT(box[lo + %lld], d + go "
            "+ %lld) : RL_PAD;\n  }\n",
            (long long)g0, (long long)l0, (long long)g0);
      else
        put(t,
            "    g[go + %lld] = data ? RL_TRANSFORM(box[lo + %lld]) : RL_PAD;\n"
            "  }\n",
            (long long)g0, (long long)l0);
    } else { /* only data: past it the source may end */
      step_bounds(t, p, order, n, c, ~0u, dst->dims);
      put(t, ")\n    box[lo + %lld] = g[go + %lld];\n", (long long)l0,
          (long long)g0);
    }
  }
}

/* For a STAGE plan: RL_LOCAL, the box's size in local memory, and
 * rl_stage_start(g, &d, &s, m, x): the offsets of work-group g's box, how
 * many indices of its block lie inside the tensor along each box axis
 * (m[axis]), and each bounded dim's coordinate at the box's corner (x[dim]);
 * then rl_stage_load and rl_stage_store, the box's two phases. The box is
 * kept in destination order. The load writes it along the source's
 * innermost box axis, one row (of the axes inside it) apart: rows of 8
 * bytes or more get a gap of one word after each, so that those stores
 * fall in distinct memory banks; shorter rows share words or fill them. */
static void map_stage(text *t, const rl_layout_plan *p, const rl_desc *dst,
                      const rl_desc *src) {
  int n = p->naxes, dorder[RELAYOUT_MAX_AXES * 2],
      sorder[RELAYOUT_MAX_AXES * 2];
  int nd = 0, ns = 0, size = relayout_dtype_bits(src->dtype) / 8; /* box's */
  int64_t ds[RELAYOUT_MAX_AXES * 2], ss[RELAYOUT_MAX_AXES * 2],
      ls[RELAYOUT_MAX_AXES * 2], l = 1;
  for (int k = n - 1; k >= 0; k--) {
    ds[k] = p->axes[k].dstride;
    ss[k] = p->axes[k].sstride;
    if (!p->stage_bits[k]) continue;
    dorder[nd++] = k;
    ls[k] = l;
    l <<= p->stage_bits[k];
  }
  for (int i = 0; i < n; i++)
    if (p->stage_bits[p->stage_sorder[i]]) sorder[ns++] = p->stage_sorder[i];
  int64_t row = ns ? ls[sorder[0]] : 1, gap = size < 4 ? 4 / size : 1, top = 0;
  for (int i = 0; i < nd; i++) {
    int k = dorder[i];
    if (row > 1 && row * size >= 8 && ls[k] >= row) ls[k] += ls[k] / row * gap;
    top += (((int64_t)1 << p->stage_bits[k]) - 1) * ls[k];
  }
  put(t, "#define RL_LOCAL %lld\n#define RL_NAXES %d\n#define RL_NDIMS %d\n",
      (long long)top + 1, n, dst->ndims);
  put(t, "static inline void rl_stage_start(RL_I g, RL_I *d, RL_I *s, RL_I *m, "
         "RL_I *x) {\n  RL_I i, dd = 0, ss = 0;\n");
  for (int d = 0; d < dst->ndims; d++) put(t, "  x[%d] = 0;\n", d);
  for (int k = n - 1; k >= 0; k--) {
    const rl_iter_axis *a = &p->axes[k];
    int64_t b = (int64_t)1 << p->stage_bits[k];
    step_from_g(t, a, b, 1);
    if (p->stage_bits[k])
      put(t, "  m[%d] = min((RL_I)%lld, (RL_I)(%lld - i));\n", k, (long long)b,
          (long long)a->extent);
  }
  put(t, "  *d = dd;\n  *s = ss;\n}\n");
  put(t, "static inline void rl_stage_load(__global const RL_TS *restrict g, "
         "__local RL_TS *box, uint lid, const RL_I *m, const RL_I *x) {\n");
  stage_phase(t, p, dst, sorder, ns, ss, ls, 0, 0);
  int per_channel = dst->per_channel || src->per_channel;
  put(t,
      "}\nstatic inline void rl_stage_store(__global RL_T *restrict g, "
      "__local const RL_TS *box, uint lid, const RL_I *m, const RL_I *x, "
      "RL_I d%s) {\n",
      per_channel ? " RL_QC_ARG" : "");
  stage_phase(t, p, dst, dorder, nd, ds, ls, 1, per_channel);
  put(t, "}\n");
}

static void map_affine(text *t, const rl_layout_plan *p, const rl_desc *dst) {
  put(t, "  RL_I r = o, i, so = 0;\n");
  declare_checks(t, p, dst);
  walk(t, p, p->naxes);
  put(t, "  *s = so;\n  return 1");
  bounds(t, p, dst, no_except);
  put(t, ";\n");
}

/* Whether dim d of x is segmented: the segments, or NULL. */
static const rl_segments *segments(const rl_desc *x, int d) {
  for (int i = 0; i < 2 && x->seg[i].len; i++)
    if (x->seg[i].dim == d) return &x->seg[i];
  return NULL;
}

/* Logical coordinates x<d> from the destination's virtual ones v<d>. */
static void logical_from_dst(text *t, const rl_desc *dst) {
  const relayout_groups *g = &dst->groups;
  int mo = dst->merge.extent ? dst->merge.outer : -1, mi = dst->merge.inner;
  for (int d = 0; d < dst->ndims; d++) {
    const rl_segments *s = segments(dst, d);
    long long len = s ? s->len : 0, pad = s ? s->padded : 0,
              n = s ? s->count : 0;
    if (s)
      put(t,
          "  RL_I x%d = v%d / %lld < %lld ? v%d / %lld * %lld + v%d %% %lld "
          ": v%d - %lld;\n  ok &= v%d / %lld >= %lld || v%d %% %lld < %lld;\n",
          d, d, pad, n, d, pad, len, d, pad, d, (pad - len) * n, d, pad, n, d,
          pad, len);
    else if ((!g->groups || (d != g->n_dim && d != g->c_dim)) && d != mo &&
             (mo < 0 || d != mi))
      put(t, "  RL_I x%d = v%d;\n", d, d);
  }
  if (mo >= 0)
    put(t, "  RL_I x%d = v%d / %lld, x%d = v%d %% %lld;\n", mo, mo,
        (long long)dst->merge.extent, mi, mo, (long long)dst->merge.extent);
  if (!g->groups) return;
  int G = dst->ndims;
  put(t, "  RL_I ei = v%d / %lld;\n", g->n_dim, (long long)g->cout);
  put(t, "  ok &= v%d / %lld == ei && v%d * %lld + ei < %lld;\n", g->c_dim,
      (long long)g->cin, G, (long long)g->e, (long long)g->groups);
  put(t, "  RL_I x%d = (v%d * %lld + ei) * %lld + v%d %% %lld;\n", g->n_dim, G,
      (long long)g->e, (long long)g->cout, g->n_dim, (long long)g->cout);
  put(t, "  RL_I x%d = v%d - ei * %lld;\n", g->c_dim, g->c_dim,
      (long long)g->cin);
}

/* The source's virtual coordinates u<d> from the logical ones. */
static void src_virtual(text *t, const rl_desc *src) {
  const relayout_groups *g = &src->groups;
  int mo = src->merge.extent ? src->merge.outer : -1, mi = src->merge.inner;
  for (int d = 0; d < src->ndims; d++) {
    const rl_segments *s = segments(src, d);
    if (s)
      put(t,
          "  RL_I u%d = x%d + %lld * (x%d / %lld < %lld ? x%d / %lld : "
          "%lld);\n",
          d, d, (long long)(s->padded - s->len), d, (long long)s->len,
          (long long)s->count, d, (long long)s->len, (long long)s->count);
    else if ((!g->groups || (d != g->n_dim && d != g->c_dim)) && d != mo &&
             (mo < 0 || d != mi))
      put(t, "  RL_I u%d = x%d;\n", d, d);
  }
  if (mo >= 0)
    put(t, "  RL_I u%d = x%d * %lld + x%d, u%d = 0;\n", mo, mo,
        (long long)src->merge.extent, mi, mi);
  if (!g->groups) return;
  put(t, "  RL_I gi = x%d / %lld, sei = gi %% %lld;\n", g->n_dim,
      (long long)g->cout, (long long)g->e);
  put(t, "  RL_I u%d = sei * %lld + x%d %% %lld;\n", g->n_dim,
      (long long)g->cout, g->n_dim, (long long)g->cout);
  put(t, "  RL_I u%d = sei * %lld + x%d;\n", g->c_dim, (long long)g->cin,
      g->c_dim);
  put(t, "  RL_I u%d = gi / %lld;\n", src->ndims, (long long)g->e);
}

/* Destination offset o's logical coordinates x<d>; ok 0 where o is
 * padding. */
static void dst_logical(text *t, const rl_desc *dst) {
  put(t, "  RL_I r = o, i;\n  int ok = 1;\n");
  for (int d = 0; d < dst->nvdims; d++) put(t, "  RL_I v%d = 0;\n", d);
  for (int k = 0; k < dst->naxes; k++) {
    const relayout_axis *a = &dst->axes[k];
    if (a->extent == 1) continue;
    put(t, "  i = r / %lld; r -= i * %lld;\n", (long long)a->stride,
        (long long)a->stride);
    if (!dst->compact) put(t, "  ok &= i < %lld;\n", (long long)a->extent);
    put(t, "  v%d += i * %lld;\n", a->dim, (long long)a->weight);
  }
  if (!dst->compact) put(t, "  ok &= r == 0;\n");
  for (int d = 0; d < dst->nvdims; d++) {
    if (dst->pad_before[d])
      put(t, "  v%d -= %lld;\n  ok &= v%d >= 0;\n", d,
          (long long)dst->pad_before[d], d);
    if (dst->padded[d] - dst->pad_before[d] > dst->vdims[d])
      put(t, "  ok &= v%d < %lld;\n", d, (long long)dst->vdims[d]);
  }
  logical_from_dst(t, dst);
}

/* Whether logical dim x of dst moves along an axis spanning virtual dims
 * `dims` (a bit each), as logical_from_dst finds it. */
static int moves_dim(const rl_desc *dst, unsigned dims, int x) {
  const relayout_groups *g = &dst->groups;
  for (int v = 0; v < dst->nvdims; v++)
    if (dims >> v & 1 && (v == x ||
                          (dst->merge.extent && v == dst->merge.outer &&
                           x == dst->merge.inner) ||
                          (g->groups && ((v == dst->ndims && x == g->n_dim) ||
                                         (v == g->n_dim && x == g->c_dim)))))
      return 1;
  return 0;
}

char *rl_codegen_logical(const rl_desc *dst) {
  text t = {0};
  put(&t, "static inline int rl_logical(RL_I o, RL_I *out) {\n");
  dst_logical(&t, dst);
  for (int d = 0; d < dst->ndims; d++) put(&t, "  out[%d] = x%d;\n", d, d);
  put(&t, "  return ok;\n}\n");
  if (t.failed) {
    free(t.s);
    return NULL;
  }
  return t.s;
}

static void map_general(text *t, const rl_desc *dst, const rl_desc *src) {
  dst_logical(t, dst);
  src_virtual(t, src);
  put(t, "  *s = 0");
  for (int b = 0; b < src->naxes; b++) {
    const relayout_axis *a = &src->axes[b];
    if (a->extent == 1) continue;
    put(t, "\n     + (u%d", a->dim);
    if (src->pad_before[a->dim])
      put(t, " + %lld", (long long)src->pad_before[a->dim]);
    put(t, ") / %lld %% %lld * %lld", (long long)a->weight,
        (long long)a->extent, (long long)a->stride);
  }
  put(t, ";\n  return ok;\n");
}

static const char *moved_type(int bits) {
  switch (bits) {
  case 16: return "ushort";
  case 32: return "uint";
  case 64: return "ulong";
  default: return "uchar";
  }
}

/* The kernels, each with the sources it compiles after kernels/common.cl:
 * 4-bit elements go byte by byte (rl_gather_nibbles) but in CPU boxes. */
typedef enum rl_kernel {
  RL_GATHER,
  RL_GATHER_NIBBLES,
  RL_ROWS,
  RL_STAGE,
  RL_LINES
} rl_kernel;
static const struct {
  const char *name;
  const char *sources[7];
} kernels[] = {
    [RL_GATHER] = {"rl_gather", {rl_kernel_gather_cl}},
    [RL_GATHER_NIBBLES] = {"rl_gather_nibbles", {rl_kernel_gather_cl}},
    [RL_ROWS] = {"rl_rows", {rl_kernel_rows_cl}},
    [RL_STAGE] = {"rl_stage", {rl_kernel_stage_cl}},
    [RL_LINES] = {"rl_lines",
                  {rl_kernel_lines_stores_cl, rl_kernel_lines_planes_cl,
                   rl_kernel_lines_squares_cl, rl_kernel_lines_nibbles_cl,
                   rl_kernel_lines_casts_cl, rl_kernel_lines_cl}},
};

static rl_kernel kernel_of(const rl_layout_plan *p, const rl_desc *dst) {
  if (p->family == RL_FAMILY_LINES) return RL_LINES;
  if (relayout_dtype_bits(dst->dtype) == 4) return RL_GATHER_NIBBLES;
  if (p->family == RL_FAMILY_STAGE) return RL_STAGE;
  return p->family == RL_FAMILY_ROWS ? RL_ROWS : RL_GATHER;
}

const char *rl_kernel_name(const rl_layout_plan *p, const rl_desc *dst) {
  return kernels[kernel_of(p, dst)].name;
}

/* name(x, r): output vector r of a step of w pixels whose elements lie
 * a to a pixel in the source (its b rows, a vectors each: x[i * a + v] is
 * row i's vector v) and b to a pixel in the destination (its a rows, b
 * vectors each: r = c * b + u is row c's vector u). Pixel g's element c of
 * source row i goes to element i of destination row c. Interleaving `b`
 * planes has a = 1; taking `a` apart (split), b = 1. Each is a chain of
 * shuffles over the vectors that hold its elements, taking in one more
 * each, with undefined lanes (-1) where the element comes from a vector not
 * yet taken in. */
static void mix_planes(text *t, const char *name, int a, int b, int w) {
  if (a * b > 32 || w > 64) { /* past the arrays below: no plan makes it */
    t->failed = 1;
    return;
  }
  put(t, "#define %s(x, r) (", name);
  for (int r = 0; r < a * b; r++) {
    int c = r / b, u = r % b, from[64], at[64], in[16] = {0}, n = 0;
    for (int j = 0; j < w; j++) { /* element j: pixel g, source row i */
      int g = (u * w + j) / b, i = (u * w + j) % b, e = g * a + c;
      from[j] = i * a + e / w;
      at[j] = e % w;
      int seen = 0;
      for (int k = 0; k < n; k++) seen |= in[k] == from[j];
      if (!seen && n == 16) {
        t->failed = 1;
        return;
      }
      if (!seen) in[n++] = from[j];
    }
    for (int k = 1; k < n; k++) /* the inputs in order */
      for (int l = k; l > 0 && in[l - 1] > in[l]; l--) {
        int x = in[l];
        in[l] = in[l - 1];
        in[l - 1] = x;
      }
    put(t, "%s", r ? " : " : "");
    if (r < a * b - 1) put(t, "(r) == %d ? ", r);
    for (int k = 1; k < n; k++) put(t, "__builtin_shufflevector(");
    put(t, "x[%d]", in[0]);
    for (int k = 1; k < n; k++) { /* n >= 2: a and b are not both 1 */
      put(t, ", x[%d]", in[k]);
      for (int j = 0; j < w; j++) {
        int pos = 0; /* where from[j] is among the inputs */
        while (in[pos] != from[j]) pos++;
        put(t, ", %d",
            pos < k    ? (k == 1 ? at[j] : j)
            : pos == k ? w + at[j]
                       : -1);
      }
      put(t, ")");
    }
  }
  put(t, ")\n");
}

char *rl_codegen(const rl_layout_plan *p, const rl_desc *dst,
                 const rl_desc *src) {
  text t = {0};
  int bits = relayout_dtype_bits(dst->dtype);
  put(&t, "/* generated by relayout for one conversion */\n");
  put(&t, "#define RL_T %s\n", moved_type(bits));
  put(&t, "#define RL_TS %s\n", moved_type(relayout_dtype_bits(src->dtype)));
  /* int arithmetic when every offset and product fits in 31 bits, those of
   * a stage box's steps past the tensor's edge too: each index stays under
   * twice its extent, so such an offset stays under three times the span */
  int small = dst->span < ((int64_t)1 << 29) && src->span < ((int64_t)1 << 29);
  put(&t, "#define RL_I %s\n", small ? "int" : "long");
  put(&t, "#define RL_COUNT ((RL_I)%lld)\n", (long long)dst->span);
  put(&t, "#define RL_VEC %d\n", p->vec > 1 ? p->vec : 1);
  if (rl_is_cast(dst, src)) {
    char defines[640];
    rl_cast_defines(defines, sizeof defines, dst, src, 1);
    /* a CPU device's plans quantize in f32 vectors (kernels/cast.cl) */
    put(&t, "%s%s%s%s", p->cpu ? "#define RL_CPU 1\n" : "",
        p->family == RL_FAMILY_LINES ? "#define RL_CAST_ROWS 1\n" : "", defines,
        rl_kernel_cast_cl);
  } else {
    put(&t, "#define RL_TRANSFORM(x) (x)\n#define RL_PAD ((RL_T)0)\n");
  }
  /* the box's variant, as variant.h defines each field's macro */
#define RL_DEFINE(field, macro, how, meaning)                                  \
  if (how != RL_AS_PLANES && p->field > (how == RL_AS_MANY))                   \
    put(&t, "#define " #macro " %d\n", how == RL_AS_FLAG ? 1 : p->field);
  RL_LINES_VARIANT(RL_DEFINE)
#undef RL_DEFINE
  if (p->stream > 1) { /* each lane's number, in a vector of a store */
    put(&t, "#define RL_LANES ((RL_VT)(0");
    for (int j = 1; j < p->stream; j++) put(&t, ", %d", j);
    put(&t, "))\n");
  }
  if (p->planes && p->weave && rl_is_cast(dst, src)) {
    /* a cast's steps of 16 pixels, P's elements each (RL_CAST_MIX) */
    put(&t, "#define RL_CAST_WEAVE %d\n", p->planes);
    mix_planes(&t, "RL_CAST_MIX", p->planes, p->weave, 16);
  } else if (p->planes && rl_is_cast(dst, src)) {
    /* a cast's squares of K's few rows, 16 elements of each, or with split
     * 16 of K's rows of P's few elements (RL_CAST_MIX) */
    put(&t, "#define RL_CAST_PLANES %d\n", p->planes);
    mix_planes(&t, "RL_CAST_MIX", p->split ? p->planes : 1,
               p->split ? 1 : p->planes, 16);
  } else if (p->planes) {
    int a = p->split || p->weave ? p->planes : 1;
    int b = p->split ? 1 : p->weave ? p->weave : p->planes;
    put(&t, "#define RL_PLANE_A %d\n#define RL_PLANE_B %d\n", a, b);
    put(&t, "#define RL_PLANES %d\n#define RL_PLANE_W %d\n", a * b, 128 / bits);
    mix_planes(&t, "RL_MIX", a, b, 128 / bits);
  }
  if (p->skip) put(&t, "#define RL_SKIP 1\n");
  if (bits == 4) put(&t, "#define RL_NIBBLES 1\n");
  if (relayout_dtype_bits(src->dtype) == 4)
    put(&t, "#define RL_SRC_NIBBLES 1\n");
  put(&t, "static inline int rl_map(RL_I o, RL_I *s) {\n");
  if (p->affine)
    map_affine(&t, p, dst);
  else
    map_general(&t, dst, src);
  put(&t, "}\n");
  if (dst->per_channel || src->per_channel) { /* the channel of o */
    put(&t, "static inline RL_I rl_chan(RL_I o) {\n");
    dst_logical(&t, dst);
    int chan = (dst->per_channel ? dst->per_channel : src->per_channel) - 1;
    put(&t, "  (void)ok;\n  return x%d;\n}\n", chan);
    /* a box's rows whose elements may lie in different channels, and a box
     * whose rows along P, or along Q, may */
    int lines = p->family == RL_FAMILY_LINES;
    const rl_iter_axis *k = lines ? &p->axes[p->box[2].axis] : NULL;
    if (!lines || moves_dim(dst, k->dims, chan))
      put(&t, "#define RL_K_CHAN 1\n");
    /* K (P, Q) the channel dim's alone: the channel steps by its weight
     * along it (an affine plan's dims are the logical ones) */
    if (lines && k->dims == 1u << chan)
      put(&t, "#define RL_K_STEP %lldL\n", (long long)k->weight);
    for (int b = 0; lines && b < 2; b++) { /* P's and Q's, the same way */
      const rl_iter_axis *a =
          p->box[b].axis >= 0 ? &p->axes[p->box[b].axis] : NULL;
      const char name = "PQ"[b];
      if (a && moves_dim(dst, a->dims, chan))
        put(&t, "#define RL_%c_CHAN 1\n", name);
      if (a && a->dims == 1u << chan)
        put(&t, "#define RL_%c_STEP %lldL\n", name, (long long)a->weight);
    }
  }
  if (p->family == RL_FAMILY_STAGE) map_stage(&t, p, dst, src);
  if (p->family == RL_FAMILY_LINES) map_box(&t, p, dst);
  put(&t, "%s", rl_kernel_common_cl);
  for (const char *const *s = kernels[kernel_of(p, dst)].sources; *s; s++)
    put(&t, "%s", *s);
  if (t.failed) {
    free(t.s);
    return NULL;
  }
  return t.s;
}
