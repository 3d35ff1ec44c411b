/* desc_init.c - binds a parsed layout to extents and a dtype: builds the axes
 */
#include "checked.h"
#include "internal.h"

#include <string.h>

/* Strides of the axes in the order given: compact row-major. */
static relayout_status compact_strides(rl_desc *d, const char *text,
                                       relayout_error *err) {
  int64_t stride = 1;
  for (int i = d->naxes - 1; i >= 0; i--) {
    d->axes[i].stride = stride;
    if (!rl_mul(&stride, stride, d->axes[i].extent))
      return rl_fail(err, RELAYOUT_ERR_OVERFLOW,
                     "layout '%s' at these dims has more than 2^63 elements",
                     text);
  }
  return RELAYOUT_OK;
}

static relayout_status add_axis(rl_desc *d, int dim, int64_t extent,
                                int64_t weight, int64_t stride,
                                const char *text, relayout_error *err) {
  if (d->naxes == RELAYOUT_MAX_AXES)
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "layout '%s' has more than %d axes at this rank", text,
                   RELAYOUT_MAX_AXES);
  d->axes[d->naxes++] = (relayout_axis){dim, extent, weight, stride};
  return RELAYOUT_OK;
}

static int find_name(const rl_desc *d, char name) {
  for (int i = 0; i < d->ndims; i++)
    if (d->names[i] == name) return i;
  return -1;
}

static int64_t lcm(int64_t a, int64_t b) {
  int64_t x = a, y = b;
  while (y) {
    int64_t t = x % y;
    x = y;
    y = t;
  }
  return a / x * b;
}

/* Grouped FRACTAL_Z (LAYOUTS.md section 3): (n, c) of group gi lands in block
 * gi / e at diagonal slot gi % e. Sets the virtual extents of O, I and G. */
static relayout_status setup_groups(rl_desc *d, const rl_grammar *g,
                                    int64_t groups, const char *text,
                                    relayout_error *err) {
  relayout_groups *gr = &d->groups;
  gr->n_dim = find_name(d, 'N');
  gr->c_dim = find_name(d, 'C');
  int64_t n = d->dims[gr->n_dim], c0 = 0, n0 = 0;
  if (n % groups)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "%s: N=%lld output channels do not split into groups=%lld",
                   text, (long long)n, (long long)groups);
  for (int i = 0; i < g->naxes; i++) {
    if (g->axes[i].letter == 'C' && g->axes[i].block) c0 = g->axes[i].block;
    if (g->axes[i].letter == 'N' && g->axes[i].block) n0 = g->axes[i].block;
  }
  gr->groups = groups;
  gr->cin = d->dims[gr->c_dim];
  gr->cout = n / groups;
  int64_t e = lcm(lcm(gr->cin, c0) / gr->cin, lcm(gr->cout, n0) / gr->cout);
  gr->e = e < groups ? e : groups;
  if (!rl_mul(&d->vdims[gr->n_dim], gr->e, gr->cout) ||
      !rl_mul(&d->vdims[gr->c_dim], gr->e, gr->cin))
    return rl_fail(err, RELAYOUT_ERR_OVERFLOW, "%s: sizes overflow", text);
  d->vdims[d->ndims] = rl_ceil_div(groups, gr->e);
  d->nvdims = d->ndims + 1;
  return RELAYOUT_OK;
}

/* A format that merges two dims (LAYOUTS.md section 3, FRACTAL_Z_C04):
 * the outer one's virtual extent becomes both's product, the inner's 1. */
static relayout_status setup_merge(rl_desc *d, const relayout_layout *l,
                                   relayout_error *err) {
  const char *m = l->format->merge;
  int outer = find_name(d, m[0]), inner = find_name(d, m[1]),
      c = find_name(d, 'C');
  /* CANN's C04 shapes hold one block of 4 channels (K = H * W * 4) */
  if (d->dims[c] > 4)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "%s holds at most 4 channels (C padded to 4 and folded "
                   "with H and W), but C is %lld; use FRACTAL_Z",
                   l->text, (long long)d->dims[c]);
  d->merge.outer = outer;
  d->merge.inner = inner;
  d->merge.extent = d->dims[inner];
  if (!rl_mul(&d->vdims[outer], d->dims[outer], d->dims[inner]))
    return rl_fail(err, RELAYOUT_ERR_OVERFLOW, "%s: %c * %c overflows", l->text,
                   m[0], m[1]);
  d->padded[outer] = d->vdims[outer];
  d->vdims[inner] = d->padded[inner] = 1;
  return RELAYOUT_OK;
}

/* The RNN formats (LAYOUTS.md section 3): N is gates of hidden= units,
 * each gate padded to 16; FRACTAL_ZN_RNN's K, where it is input= +
 * hidden=, has its input rows padded to 16 apart from the hidden ones. */
static relayout_status setup_segments(rl_desc *d, const relayout_layout *l,
                                      relayout_error *err) {
  int64_t hidden = l->param[RL_P_HIDDEN], input = l->param[RL_P_INPUT];
  const char *name = l->format->name;
  int n = find_name(d, 'N'), k = find_name(d, 'K'), at = 0;
  int rnn = l->format->params & (1u << RL_P_INPUT);
  if (hidden == RL_UNSET || (rnn && input == RL_UNSET))
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "%s needs %s (N is gates of hidden units, each gate "
                   "padded to 16), e.g. %s",
                   name, rnn ? "input= and hidden=" : "hidden=",
                   rnn ? "FRACTAL_ZN_RNN(input=64,hidden=32)"
                       : "ND_RNN_BIAS(hidden=32)");
  if (d->dims[n] % hidden)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "%s: N=%lld is not a whole number of gates of hidden=%lld",
                   l->text, (long long)d->dims[n], (long long)hidden);
  if (rnn && d->dims[k] == input + hidden && d->dims[k] != input)
    d->seg[at++] = (rl_segments){k, input, rl_ceil_div(input, 16) * 16, 1};
  else if (rnn && d->dims[k] != input && d->dims[k] != hidden)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "%s: K=%lld is neither input=%lld, hidden=%lld nor their "
                   "sum",
                   l->text, (long long)d->dims[k], (long long)input,
                   (long long)hidden);
  d->seg[at++] = (rl_segments){n, hidden, rl_ceil_div(hidden, 16) * 16,
                               d->dims[n] / hidden};
  for (int i = 0; i < at; i++) {
    rl_segments *s = &d->seg[i];
    int64_t x = d->dims[s->dim] - 1, k1 = x / s->len, gaps, v;
    if (!rl_mul(&gaps, s->padded - s->len, k1 < s->count ? k1 : s->count) ||
        !rl_add(&v, x, gaps) || !rl_add(&v, v, 1))
      return rl_fail(err, RELAYOUT_ERR_OVERFLOW, "%s: padded sizes overflow",
                     l->text);
    d->vdims[s->dim] = d->padded[s->dim] = v;
  }
  return RELAYOUT_OK;
}

static relayout_status build_grammar(rl_desc *d, const relayout_layout *l,
                                     relayout_error *err) {
  rl_grammar g;
  relayout_status s = rl_layout_grammar(&g, l, d->dtype, err);
  if (s) return s;
  int64_t groups = l->param[RL_P_GROUPS] > 1 ? l->param[RL_P_GROUPS] : 0;
  const char *merge = l->format ? l->format->merge : NULL;
  int nletters = (int)strlen(g.order) - (groups ? 1 : 0) + (merge ? 1 : 0);
  int nbatch = d->ndims - nletters;
  if (nbatch < 0 || (nbatch > 0 && !g.has_batch))
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "layout '%s' has %d dims%s, but %d were given", l->text,
                   nletters, g.has_batch ? " after its batch dims" : "",
                   d->ndims);
  int vdim_of[128];
  for (int i = 0; i < 128; i++) vdim_of[i] = -1;
  for (int i = 0; i < d->ndims; i++) {
    char name = d->names[i];
    int ok = name >= '0' && name < '0' + RELAYOUT_MAX_DIMS
                 ? name - '0' < nbatch
                 : (strchr(g.order, name) && !(groups && name == 'G')) ||
                       (merge && name == merge[1]);
    if (!ok) {
      char lab[8];
      return rl_fail(err, RELAYOUT_ERR_DIMS,
                     "layout '%s' has no dim %s (its dims: %s%s)", l->text,
                     relayout_dim_label(lab, name), g.has_batch ? "..." : "",
                     l->format ? l->format->order : g.order);
    }
    vdim_of[(unsigned char)name] = i;
  }
  if (groups) {
    vdim_of['G'] = d->ndims;
    if ((s = setup_groups(d, &g, groups, l->text, err))) return s;
  }
  if (merge && (s = setup_merge(d, l, err))) return s; /* names all bound */
  if (l->format && (l->format->params & (1u << RL_P_HIDDEN)) &&
      (s = setup_segments(d, l, err)))
    return s;
  for (int b = 0; b < nbatch; b++)
    if ((s = add_axis(d, vdim_of['0' + b], d->dims[vdim_of['0' + b]], 1, 0,
                      l->text, err)))
      return s;
  for (int i = 0; i < g.naxes; i++) {
    const rl_gaxis *a = &g.axes[i];
    int v = vdim_of[(unsigned char)a->letter];
    /* the product of the dim's blocks inside this axis: for a block, those
     * to its right (nested blocks, the rightmost innermost: OIhw8i16o2i);
     * for the outer axis, every block of the dim, wherever it is placed
     * (8cNCHW: the outer C is C / 8) */
    int64_t inner = 1;
    for (int j = a->block ? i + 1 : 0; j < g.naxes; j++)
      if (g.axes[j].letter == a->letter && g.axes[j].block &&
          !rl_mul(&inner, inner, g.axes[j].block))
        return rl_fail(err, RELAYOUT_ERR_OVERFLOW, "blocks of '%s' overflow",
                       l->text);
    if (a->block) {
      if ((s = add_axis(d, v, a->block, inner, 0, l->text, err))) return s;
      continue;
    }
    int64_t outer = rl_ceil_div(d->vdims[v], inner);
    int64_t align = a->align;
    int bits = relayout_dtype_bits(d->dtype);
    if (a->align_bytes && bits >= 8) { /* bytes to elements */
      if (align % (bits / 8))
        return rl_fail(err, RELAYOUT_ERR_DIMS,
                       "alignment %lldB in '%s' is not a whole number of %s "
                       "elements",
                       (long long)a->align, l->text,
                       relayout_dtype_name(d->dtype));
      align /= bits / 8;
    } else if (a->align_bytes && !rl_mul(&align, align, 8 / bits)) {
      return rl_fail(err, RELAYOUT_ERR_OVERFLOW,
                     "alignment %lldB in '%s' overflows as %s elements",
                     (long long)a->align, l->text,
                     relayout_dtype_name(d->dtype));
    }
    if ((align && !rl_roundup(&outer, outer, align)) ||
        !rl_mul(&d->padded[v], outer, inner))
      return rl_fail(err, RELAYOUT_ERR_OVERFLOW,
                     "padded extent of %c in '%s' overflows", a->letter,
                     l->text);
    if ((s = add_axis(d, v, outer, inner, 0, l->text, err))) return s;
  }
  return compact_strides(d, l->text, err);
}

static relayout_status build_positional(rl_desc *d, const relayout_layout *l,
                                        relayout_error *err) {
  for (int i = 0; i < d->ndims; i++) {
    relayout_status s = add_axis(d, i, d->dims[i], 1, 0, l->text, err);
    if (s) return s;
  }
  return compact_strides(d, l->text, err);
}

static relayout_status build_cute(rl_desc *d, const relayout_layout *l,
                                  relayout_error *err) {
  const rl_cute *c = &l->cute;
  if (d->ndims != c->nmodes)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "CuTe layout '%s' has %d mode%s, but %d dim%s given",
                   l->text, c->nmodes, c->nmodes == 1 ? "" : "s", d->ndims,
                   d->ndims == 1 ? " was" : "s were");
  for (int m = 0; m < c->nmodes; m++)
    if (d->dims[m] != c->mode_extent[m]) {
      char lab[8];
      return rl_fail(err, RELAYOUT_ERR_DIMS,
                     "CuTe layout '%s' gives mode %d extent %lld, but dim %s "
                     "is %lld",
                     l->text, m, (long long)c->mode_extent[m],
                     relayout_dim_label(lab, d->names[m]),
                     (long long)d->dims[m]);
    }
  int64_t weight[RELAYOUT_MAX_DIMS];
  for (int m = 0; m < c->nmodes; m++) weight[m] = 1;
  for (int i = 0; i < c->naxes; i++) {
    int m = c->mode[i];
    relayout_status s =
        add_axis(d, m, c->extent[i], weight[m], c->stride[i], l->text, err);
    if (s) return s;
    weight[m] *= c->extent[i]; /* bounded by mode_extent, checked at parse */
  }
  return RELAYOUT_OK;
}

relayout_status rl_desc_init(rl_desc *out, const relayout_layout *layout,
                             relayout_dtype dtype, int ndims, const char *names,
                             const int64_t *dims, relayout_error *err) {
  if (!out || !layout || (ndims > 0 && (!names || !dims)))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  if (!relayout_dtype_name(dtype))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "invalid dtype %d", (int)dtype);
  if (ndims < 1 || ndims > RELAYOUT_MAX_DIMS)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "a tensor has 1 to %d dims; %d were given",
                   RELAYOUT_MAX_DIMS, ndims);
  rl_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = dtype;
  d.scale = 1;
  d.ndims = d.nvdims = ndims;
  for (int i = 0; i < ndims; i++) {
    char lab[8];
    if (dims[i] < 1)
      return rl_fail(err, RELAYOUT_ERR_DIMS,
                     "dim %s has extent %lld; extents must be at least 1",
                     relayout_dim_label(lab, names[i]), (long long)dims[i]);
    if (dims[i] > ((int64_t)1 << 62))
      return rl_fail(err, RELAYOUT_ERR_OVERFLOW,
                     "dim %s has extent %lld, beyond 2^62",
                     relayout_dim_label(lab, names[i]), (long long)dims[i]);
    int letter = names[i] >= 'A' && names[i] <= 'Z';
    int digit = names[i] >= '0' && names[i] < '0' + RELAYOUT_MAX_DIMS;
    if (!letter && !digit)
      return rl_fail(err, RELAYOUT_ERR_DIMS,
                     "dim name '%c' is neither a letter A-Z nor a position",
                     names[i] ? names[i] : '?');
    for (int j = 0; j < i; j++)
      if (names[j] == names[i])
        return rl_fail(err, RELAYOUT_ERR_DIMS, "dim %s is given twice",
                       relayout_dim_label(lab, names[i]));
    d.names[i] = names[i];
    d.dims[i] = d.vdims[i] = d.padded[i] = dims[i];
  }
  relayout_status s = RELAYOUT_ERR_ARGUMENT;
  switch (layout->kind) {
  case RL_GRAMMAR: s = build_grammar(&d, layout, err); break;
  case RL_POSITIONAL: s = build_positional(&d, layout, err); break;
  case RL_CUTE: s = build_cute(&d, layout, err); break;
  case RL_TPU: s = rl_build_tpu(&d, layout, err); break;
  }
  if (s || (s = rl_finish_desc(&d, err))) return s;
  d.stored_rank = layout->format ? layout->format->stored_rank : 0;
  d.merged_tail = layout->format ? layout->format->merged_tail : 0;
  int64_t heads = layout->param[RL_P_HEADS];
  for (int i = 0; heads != RL_UNSET && i < d.ndims; i++)
    if (d.names[i] == 'N' && d.dims[i] != heads)
      return rl_fail(err, RELAYOUT_ERR_DIMS,
                     "%s: heads=%lld, but N (the heads) is %lld", layout->text,
                     (long long)heads, (long long)d.dims[i]);
  *out = d;
  return RELAYOUT_OK;
}
