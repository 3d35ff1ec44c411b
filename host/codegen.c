/* codegen.c - kernel source for a plan: baked constants and the element map
 *
 * The generated header defines RL_T (the moved type), RL_COUNT (destination
 * elements), RL_VEC, RL_TRANSFORM (the per-element hook: identity until
 * casts arrive) and rl_map(o, &s): 1 with the source element offset s when
 * destination element o holds data, 0 for padding. The kernels of
 * kernels/relayout.cl follow it.
 */
#include "plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char rl_kernel_relayout_cl[]; /* kernels/relayout.cl, embedded */

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
                           const relayout_desc *dst) {
  for (int d = 0; d < dst->ndims; d++)
    if (checked(p, d)) put(t, "  RL_I x%d = 0;\n", d);
}

/* " && x<d> < extent" for each bounded dim but `except`. */
static void bounds(text *t, const rl_layout_plan *p, const relayout_desc *dst,
                   int except) {
  for (int d = 0; d < dst->ndims; d++)
    if (d != except && checked(p, d))
      put(t, " && x%d < %lld", d, (long long)dst->dims[d]);
}

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

/* rl_row(o, &s): for the row of destination elements starting at o, the
 * source offset of its first element and how many of its elements hold data
 * (along the innermost axis, data comes first). */
static void map_row(text *t, const rl_layout_plan *p,
                    const relayout_desc *dst) {
  const rl_iter_axis *in = &p->axes[p->naxes - 1];
  put(t, "#define RL_EK %lld\n#define RL_SK %lld\n#define RL_LINES %d\n",
      (long long)in->extent, (long long)in->sstride, p->lines);
  put(t, "static inline RL_I rl_row(RL_I o, RL_I *s) {\n");
  put(t, "  RL_I r = o, i, so = 0;\n");
  declare_checks(t, p, dst);
  walk(t, p, p->naxes - 1);
  put(t, "  *s = so;\n  if (!(1");
  bounds(t, p, dst, in->check);
  put(t, ")) return 0;\n");
  if (in->check < 0) {
    put(t, "  return RL_EK;\n}\n");
    return;
  }
  put(t, "  RL_I n = (%lld - x%d + %lld) / %lld;\n",
      (long long)dst->dims[in->check], in->check, (long long)in->weight - 1,
      (long long)in->weight);
  put(t, "  return n < 0 ? 0 : n < RL_EK ? n : RL_EK;\n}\n");
}

/* For a blocked `lines` plan: the block's axes A (just outside the
 * innermost) and C, and rl_rest(g), the destination offset of index g over
 * the other axes (innermost fastest). */
static void map_blocks(text *t, const rl_layout_plan *p) {
  int a = p->naxes - 2, c = p->block_axis;
  int64_t rest = 1;
  put(t, "#define RL_BLOCKED 1\n#define RL_RA 16\n#define RL_RC 16\n");
  put(t, "#define RL_EA %lld\n#define RL_DA %lld\n",
      (long long)p->axes[a].extent, (long long)p->axes[a].dstride);
  put(t, "#define RL_EC %lld\n#define RL_DC %lld\n",
      (long long)p->axes[c].extent, (long long)p->axes[c].dstride);
  put(t, "static inline RL_I rl_rest(RL_I g) {\n  RL_I i, o = 0;\n");
  for (int k = a - 1; k >= 0; k--) {
    if (k == c) continue;
    rest *= p->axes[k].extent;
    put(t, "  i = g %% %lld; g /= %lld; o += i * %lld;\n",
        (long long)p->axes[k].extent, (long long)p->axes[k].extent,
        (long long)p->axes[k].dstride);
  }
  put(t, "  return o;\n}\n#define RL_NREST %lld\n", (long long)rest);
}

/* rl_tile_map(g, j, k, &d, &s): axis indices from the tile launch (g over
 * the axes other than J and K, innermost fastest) to both offsets. */
static void map_tile(text *t, const rl_layout_plan *p,
                     const relayout_desc *dst) {
  int nk = p->naxes - 1, nj = p->tile_axis;
  put(t, "#define RL_TILE 32\n#define RL_ROWS 8\n");
  put(t, "#define RL_EK %lld\n#define RL_EJ %lld\n",
      (long long)p->axes[nk].extent, (long long)p->axes[nj].extent);
  put(t, "static inline int rl_tile_map(RL_I g, RL_I j, RL_I k, RL_I *d, "
         "RL_I *s) {\n");
  put(t, "  RL_I i, dd = k + j * %lld, ss = k * %lld + j;\n",
      (long long)p->axes[nj].dstride, (long long)p->axes[nk].sstride);
  declare_checks(t, p, dst);
  const int tiled[2] = {nk, nj};
  for (int q = 0; q < 2; q++) {
    const rl_iter_axis *x = &p->axes[tiled[q]];
    if (x->check >= 0)
      put(t, "  x%d += %c * %lld;\n", x->check, q ? 'j' : 'k',
          (long long)x->weight);
  }
  for (int a = nk - 1; a >= 0; a--) {
    if (a == nj) continue;
    const rl_iter_axis *x = &p->axes[a];
    put(t, "  i = g %% %lld; g /= %lld;\n", (long long)x->extent,
        (long long)x->extent);
    put(t, "  dd += i * %lld; ss += i * %lld;\n", (long long)x->dstride,
        (long long)x->sstride);
    if (x->check >= 0)
      put(t, "  x%d += i * %lld;\n", x->check, (long long)x->weight);
  }
  put(t, "  *d = dd;\n  *s = ss;\n  return 1");
  bounds(t, p, dst, -1);
  put(t, ";\n}\n");
}

static void map_affine(text *t, const rl_layout_plan *p,
                       const relayout_desc *dst) {
  put(t, "  RL_I r = o, i, so = 0;\n");
  declare_checks(t, p, dst);
  walk(t, p, p->naxes);
  put(t, "  *s = so;\n  return 1");
  bounds(t, p, dst, -1);
  put(t, ";\n");
}

/* Logical coordinates x<d> from the destination's virtual ones v<d>. */
static void logical_from_dst(text *t, const relayout_desc *dst) {
  const relayout_groups *g = &dst->groups;
  for (int d = 0; d < dst->ndims; d++)
    if (!g->groups || (d != g->n_dim && d != g->c_dim))
      put(t, "  RL_I x%d = v%d;\n", d, d);
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
static void src_virtual(text *t, const relayout_desc *src) {
  const relayout_groups *g = &src->groups;
  for (int d = 0; d < src->ndims; d++)
    if (!g->groups || (d != g->n_dim && d != g->c_dim))
      put(t, "  RL_I u%d = x%d;\n", d, d);
  if (!g->groups) return;
  put(t, "  RL_I gi = x%d / %lld, sei = gi %% %lld;\n", g->n_dim,
      (long long)g->cout, (long long)g->e);
  put(t, "  RL_I u%d = sei * %lld + x%d %% %lld;\n", g->n_dim,
      (long long)g->cout, g->n_dim, (long long)g->cout);
  put(t, "  RL_I u%d = sei * %lld + x%d;\n", g->c_dim, (long long)g->cin,
      g->c_dim);
  put(t, "  RL_I u%d = gi / %lld;\n", src->ndims, (long long)g->e);
}

static void map_general(text *t, const relayout_desc *dst,
                        const relayout_desc *src) {
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

/* The kernel of kernels/relayout.cl a plan runs, as RL_KERNEL numbers it. */
static int kernel_number(const rl_layout_plan *p, const relayout_desc *dst) {
  if (relayout_dtype_bits(dst->dtype) == 4) return 3;
  if (p->family == RL_FAMILY_TILE) return 4;
  if (p->family == RL_FAMILY_LINES) return 5;
  return p->family == RL_FAMILY_ROWS ? 2 : 1;
}

const char *rl_kernel_name(const rl_layout_plan *p, const relayout_desc *dst) {
  static const char *const names[] = {
      "", "rl_gather", "rl_rows", "rl_gather_nibbles", "rl_tile", "rl_lines"};
  return names[kernel_number(p, dst)];
}

char *rl_codegen(const rl_layout_plan *p, const relayout_desc *dst,
                 const relayout_desc *src) {
  text t = {0};
  int bits = relayout_dtype_bits(dst->dtype);
  put(&t, "/* generated by relayout for one conversion */\n");
  put(&t, "#define RL_KERNEL %d\n", kernel_number(p, dst));
  put(&t, "#define RL_T %s\n", moved_type(bits));
  /* int arithmetic when every offset and product fits in 31 bits */
  int small = dst->span < ((int64_t)1 << 31) && src->span < ((int64_t)1 << 31);
  put(&t, "#define RL_I %s\n", small ? "int" : "long");
  put(&t, "#define RL_COUNT ((RL_I)%lld)\n", (long long)dst->span);
  put(&t, "#define RL_VEC %d\n", p->vec > 1 ? p->vec : 1);
  put(&t, "#define RL_TRANSFORM(x) (x)\n");
  put(&t, "static inline int rl_map(RL_I o, RL_I *s) {\n");
  if (p->affine)
    map_affine(&t, p, dst);
  else
    map_general(&t, dst, src);
  put(&t, "}\n");
  if (p->family == RL_FAMILY_TILE) map_tile(&t, p, dst);
  if (p->family == RL_FAMILY_LINES) map_row(&t, p, dst);
  if (p->family == RL_FAMILY_LINES && p->block_axis >= 0) map_blocks(&t, p);
  put(&t, "%s", rl_kernel_relayout_cl);
  if (t.failed) {
    free(t.s);
    return NULL;
  }
  return t.s;
}
