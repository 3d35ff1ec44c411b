/* generic.c - the generic kernels' program and each conversion's arguments
 * to them: the map kernels/generic.cl evaluates, as a block of longs */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char rl_kernel_common_cl[], rl_kernel_generic_cl[];

/* the layout of kernels/generic.cl's blocks */
enum { GAXES = 48, GDIMS = 13, GA_AXES = 2 };
enum { GM_SRC = 10, GM_DAXES = 18, GM_DPAD = GM_DAXES + 4 * GAXES };
enum { GM_SAXES = GM_DPAD + 3 * GDIMS, GM_SPAD = GM_SAXES + 4 * GAXES };
_Static_assert(GM_SPAD + GDIMS + 1 <= RL_GENERIC_LONGS, "block fits");
_Static_assert(RELAYOUT_MAX_AXES * 2 <= GAXES && RELAYOUT_MAX_DIMS < GDIMS,
               "generic.cl's arrays hold every plan");

char *rl_generic_source(int bits, int general) {
  char head[96];
  int a = snprintf(head, sizeof head,
                   "#define RL_TRANSFORM(x) (x)\n#define RL_GW %d\n"
                   "#define RL_GMAP %d\n",
                   bits, bits == 4 ? 0 : general);
  size_t b = strlen(rl_kernel_common_cl), c = strlen(rl_kernel_generic_cl);
  char *s = malloc((size_t)a + b + c + 1);
  if (!s) return NULL;
  memcpy(s, head, (size_t)a);
  memcpy(s + a, rl_kernel_common_cl, b);
  memcpy(s + a + b, rl_kernel_generic_cl, c + 1);
  return s;
}

/* The affine block: n, how runs go (kernels/generic.cl: 0 element by
 * element, 1 runs along a destination stride of 1, 2 dense axes), the
 * axes, each dim's bound. */
static int affine_args(int64_t *g, const rl_layout_plan *p,
                       const rl_desc *dst) {
  int n = p->naxes, at = GA_AXES;
  g[0] = n;
  int dense = n > 0 && p->axes[n - 1].dstride == 1;
  g[1] = dense;
  for (int k = 0; dense && k + 1 < n; k++)
    dense =
        p->axes[k].dstride == p->axes[k + 1].dstride * p->axes[k + 1].extent;
  if (dense) g[1] = 2;
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
  return at + 2 * GDIMS;
}

static void groups_args(int64_t *g, const relayout_groups *x) {
  int64_t rec[6] = {x->groups, x->e, x->cin, x->cout, x->n_dim, x->c_dim};
  memcpy(g, rec, sizeof rec);
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
  groups_args(g + 4, &dst->groups);
  g[GM_SRC] = src->naxes;
  g[GM_SRC + 1] = src->ndims;
  groups_args(g + GM_SRC + 2, &src->groups);
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

const char *rl_generic_kernel(const rl_desc *dst, const rl_desc *src) {
  if (relayout_dtype_bits(dst->dtype) == 4) return "rl_generic_nibbles";
  return rl_generic_general(dst, src) ? "rl_generic_map" : "rl_generic_affine";
}

int rl_generic_general(const rl_desc *dst, const rl_desc *src) {
  rl_layout_plan p;
  rl_plan_affine(&p, dst, src);
  return !p.affine;
}

int rl_generic_args(int64_t *out, const rl_desc *dst, const rl_desc *src) {
  rl_layout_plan p;
  rl_plan_affine(&p, dst, src);
  if (relayout_dtype_bits(dst->dtype) != 4)
    return p.affine ? affine_args(out, &p, dst) : general_args(out, dst, src);
  out[0] = p.affine;
  return 1 + (p.affine ? affine_args(out + 1, &p, dst)
                       : general_args(out + 1, dst, src));
}
