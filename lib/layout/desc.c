/* desc.c - descriptor queries: offsets, padding, sizes, physical shape */
#include "checked.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

const char *relayout_dim_label(char *buf, char name) {
  if (name >= '0' && name < '0' + RELAYOUT_MAX_DIMS)
    snprintf(buf, 8, "d%d", name - '0');
  else
    snprintf(buf, 8, "%c", name);
  return buf;
}

/* Sorts the axes outermost first and checks that the layout is one-to-one
 * with nested strides: each axis steps over everything inside it. That makes
 * an offset decompose uniquely (relayout_desc_is_padding). */
relayout_status rl_finish_desc(rl_desc *d, relayout_error *err) {
  for (int i = 1; i < d->naxes; i++) {
    relayout_axis a = d->axes[i];
    int j = i;
    for (; j > 0 && d->axes[j - 1].stride < a.stride; j--)
      d->axes[j] = d->axes[j - 1];
    d->axes[j] = a;
  }
  int64_t span = 1, elems = 1;
  for (int i = d->naxes - 1; i >= 0; i--) {
    const relayout_axis *a = &d->axes[i];
    if (!rl_mul(&elems, elems, a->extent))
      return rl_fail(err, RELAYOUT_ERR_OVERFLOW,
                     "the layout has more than 2^63 elements");
    if (a->extent == 1) continue;
    if (a->stride < span)
      return rl_fail(
          err, RELAYOUT_ERR_UNSUPPORTED,
          "the layout maps two coordinates to one element or "
          "interleaves its axes (stride %lld inside a span of %lld); "
          "only one-to-one layouts with nested strides convert",
          (long long)a->stride, (long long)span);
    int64_t reach;
    if (!rl_mul(&reach, a->stride, a->extent - 1) ||
        !rl_add(&span, span, reach))
      return rl_fail(err, RELAYOUT_ERR_OVERFLOW,
                     "the layout spans more than 2^63 elements");
  }
  int64_t bits;
  if (!rl_add(&span, span, d->base) ||
      !rl_mul(&bits, span, relayout_dtype_bits(d->dtype)))
    return rl_fail(err, RELAYOUT_ERR_OVERFLOW,
                   "the buffer would hold more than 2^63 bits");
  d->span = span;
  d->compact = !d->base && span == elems;
  return RELAYOUT_OK;
}

void rl_desc_unbase(rl_desc *d) {
  int64_t elems = 1;
  for (int i = 0; i < d->naxes; i++) elems *= d->axes[i].extent;
  d->span -= d->base;
  d->base = 0;
  d->compact = d->span == elems;
}

void rl_virtual_coords(int64_t *v, const rl_desc *d, const int64_t *coord) {
  for (int i = 0; i < d->ndims; i++) v[i] = coord[i];
  if (d->merge.extent) {
    v[d->merge.outer] =
        coord[d->merge.outer] * d->merge.extent + coord[d->merge.inner];
    v[d->merge.inner] = 0;
  }
  for (int i = 0; i < 2 && d->seg[i].len; i++)
    v[d->seg[i].dim] = rl_seg_virtual(&d->seg[i], coord[d->seg[i].dim]);
  const relayout_groups *g = &d->groups;
  if (!g->groups) return;
  int64_t n = coord[g->n_dim], gi = n / g->cout, ei = gi % g->e;
  v[g->n_dim] = ei * g->cout + n % g->cout;
  v[g->c_dim] = ei * g->cin + coord[g->c_dim];
  v[d->ndims] = gi / g->e;
}

int64_t rl_offset(const rl_desc *d, const int64_t *coord) {
  int64_t v[RELAYOUT_MAX_DIMS + 1], off = d->base;
  rl_virtual_coords(v, d, coord);
  for (int i = 0; i < d->naxes; i++) {
    const relayout_axis *a = &d->axes[i];
    off +=
        (v[a->dim] + d->pad_before[a->dim]) / a->weight % a->extent * a->stride;
  }
  return off;
}

relayout_status rl_desc_offset(int64_t *out, const rl_desc *d,
                               const int64_t *coord, relayout_error *err) {
  if (!out || !d || !coord)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  for (int i = 0; i < d->ndims; i++)
    if (coord[i] < 0 || coord[i] >= d->dims[i]) {
      char lab[8];
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "coordinate %lld of dim %s is outside [0, %lld)",
                     (long long)coord[i], relayout_dim_label(lab, d->names[i]),
                     (long long)d->dims[i]);
    }
  *out = rl_offset(d, coord);
  return RELAYOUT_OK;
}

relayout_status rl_desc_is_padding(int *out, const rl_desc *d, int64_t offset,
                                   relayout_error *err) {
  if (!out || !d) return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  if (offset < 0 || offset >= d->span)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "offset %lld is outside the buffer's %lld elements",
                   (long long)offset, (long long)d->span);
  int64_t v[RELAYOUT_MAX_DIMS + 1] = {0}, rest = offset - d->base;
  *out = 1;
  if (rest < 0) return RELAYOUT_OK; /* before the axes' origin */
  for (int i = 0; i < d->naxes; i++) {
    const relayout_axis *a = &d->axes[i];
    if (a->extent == 1) continue;
    int64_t idx = rest / a->stride;
    if (idx >= a->extent) return RELAYOUT_OK; /* a gap past this axis */
    rest -= idx * a->stride;
    v[a->dim] += idx * a->weight;
  }
  if (rest) return RELAYOUT_OK; /* a gap between strides */
  for (int i = 0; i < d->nvdims; i++) {
    v[i] -= d->pad_before[i];
    if (v[i] < 0 || v[i] >= d->vdims[i]) return RELAYOUT_OK;
  }
  int ok = 1; /* not a segment's padding */
  for (int i = 0; i < 2 && d->seg[i].len; i++)
    rl_seg_logical(&d->seg[i], v[d->seg[i].dim], &ok);
  if (!ok) return RELAYOUT_OK;
  const relayout_groups *g = &d->groups;
  if (g->groups) {
    int64_t ei = v[g->n_dim] / g->cout;
    if (v[g->c_dim] / g->cin != ei || v[d->ndims] * g->e + ei >= g->groups)
      return RELAYOUT_OK; /* off the block diagonal, or a missing group */
  }
  *out = 0;
  return RELAYOUT_OK;
}

relayout_status rl_desc_size_bytes(int64_t *out, const rl_desc *d,
                                   relayout_error *err) {
  if (!out || !d) return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  /* rl_finish_desc checked that span * bits fits. */
  *out = rl_ceil_div(d->span * relayout_dtype_bits(d->dtype), 8);
  return RELAYOUT_OK;
}

/* The shape with one axis per physical axis (a strided layout: one). */
static void axes_shape(int *rank, int64_t *shape, const rl_desc *d) {
  if (!d->compact) {
    *rank = 1;
    shape[0] = d->span;
    return;
  }
  *rank = d->naxes;
  for (int i = 0; i < d->naxes; i++) shape[i] = d->axes[i].extent;
}

void rl_desc_physical_shape(int *rank, int64_t *shape, const rl_desc *d) {
  axes_shape(rank, shape, d);
  if (d->compact && d->merged_tail > 1 && *rank >= d->merged_tail) {
    for (int i = 1; i < d->merged_tail; i++) /* within the span */
      shape[*rank - d->merged_tail] *= shape[*rank - d->merged_tail + i];
    *rank -= d->merged_tail - 1;
    return;
  }
  int merge = d->compact && d->stored_rank > 0 && d->naxes > d->stored_rank
                  ? d->naxes - d->stored_rank + 1
                  : 0;
  if (!merge) return;
  for (int i = 1; i < merge; i++) shape[0] *= shape[i]; /* within the span */
  memmove(shape + 1, shape + merge, sizeof *shape * (size_t)(*rank - merge));
  *rank = d->stored_rank;
}

static int same_shape(int ra, const int64_t *a, int rb, const int64_t *b) {
  return ra == rb && !memcmp(a, b, sizeof *a * (size_t)ra);
}

int rl_desc_holds_shape(const rl_desc *d, int rank, const int64_t *shape) {
  int r;
  int64_t want[RELAYOUT_MAX_AXES];
  if (!d || (rank > 0 && !shape)) return 0;
  rl_desc_physical_shape(&r, want, d);
  if (same_shape(r, want, rank, shape)) return 1;
  axes_shape(&r, want, d);
  return same_shape(r, want, rank, shape);
}
