/* nibbles.c - 4-bit conversions that move whole bytes
 *
 * Where both layouts keep the same dim innermost, contiguous and in pairs
 * (ND -> FRACTAL_NZ of int4 weights: 64 elements of a row, 32 bytes, in
 * each fractal row), every destination byte's two elements are one source
 * byte's, low nibble first in both, or both padding. Such a conversion is
 * a conversion of bytes: the same layouts with that dim's extents, weights
 * and every stride halved, which the 1-byte kernels move at their speed
 * instead of one nibble at a time. For moves only: a per-element transform
 * (a cast) needs each element on its own.
 */
#include "plan.h"

/* The dim whose weight-1 axis is d's one axis of stride 1, with an even
 * extent (so the dim's other axes have even weights, multiples of it),
 * every other axis lying on whole bytes, and the dim's valid extent even
 * and starting at 0; -1 when there is none. */
static int pair_dim(const relayout_desc *d) {
  int dim = -1;
  for (int i = 0; i < d->naxes; i++) {
    const relayout_axis *a = &d->axes[i];
    if (a->stride == 1 && a->extent > 1) {
      if (dim >= 0 || a->weight != 1 || a->extent % 2) return -1;
      dim = a->dim;
    } else if (a->extent > 1 && a->stride % 2) {
      return -1;
    }
  }
  return dim >= 0 && d->vdims[dim] % 2 == 0 && !d->pad_before[dim] ? dim : -1;
}

/* d with dim `dim` counted in pairs and its strides in bytes. */
static void halve(relayout_desc *d, int dim) {
  d->dtype = RELAYOUT_U8;
  if (dim < d->ndims) d->dims[dim] /= 2;
  d->vdims[dim] /= 2;
  d->padded[dim] /= 2;
  for (int i = 0; i < d->naxes; i++) {
    relayout_axis *a = &d->axes[i];
    if (a->stride == 1 && a->extent > 1)
      a->extent /= 2; /* the pairs */
    else if (a->dim == dim)
      a->weight /= 2;
    a->stride = a->stride == 1 ? 1 : a->stride / 2;
  }
  d->span /= 2;
}

int rl_nibble_bytes(relayout_desc *dst8, relayout_desc *src8,
                    const relayout_desc *dst, const relayout_desc *src) {
  if (relayout_dtype_bits(dst->dtype) != 4 || dst->groups.groups ||
      src->groups.groups)
    return 0;
  int dim = pair_dim(dst);
  if (dim < 0 || pair_dim(src) != dim) return 0;
  *dst8 = *dst;
  *src8 = *src;
  halve(dst8, dim);
  halve(src8, dim);
  return 1;
}
