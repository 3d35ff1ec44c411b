/* widen.c - conversions that move elements in wider units
 *
 * Where both layouts keep the same dim innermost, contiguous and in pairs
 * (ND -> FRACTAL_NZ of int4 weights: 64 elements of a row, 32 bytes, in
 * each fractal row; NCHW4 -> CHWN4: each pixel's 4 channels), every pair
 * of destination elements is a pair of source elements, in the same order
 * on both sides, or both padding. Such a conversion is a conversion of
 * units twice as wide: the same layouts with that dim's extents, weights
 * and every stride halved. 4-bit elements move as bytes wherever they
 * pair. Wider than a byte, pairing goes on only where the shorter of the
 * two runs (the innermost axes) then folds into one unit of at most 8
 * bytes: the run, moved element by element (4 channels of NCHW4 ->
 * CHWN4), becomes one element of a transpose of units. Runs longer than
 * that are moved as rows already, and as rows of wider units they ran
 * slower. For moves only: a per-element transform (a cast) needs each
 * element on its own.
 */
#include "plan.h"

/* The dim whose weight-1 axis is d's one axis of stride 1, with an even
 * extent (so the dim's other axes have even weights, multiples of it),
 * every other axis lying on whole units, and the dim's valid extent even
 * and starting at 0; -1 when there is none. *run: that axis' extent. */
static int pair_dim(const rl_desc *d, int64_t *run) {
  int dim = -1;
  for (int i = 0; i < d->naxes; i++) {
    const relayout_axis *a = &d->axes[i];
    if (a->stride == 1 && a->extent > 1) {
      if (dim >= 0 || a->weight != 1 || a->extent % 2) return -1;
      dim = a->dim;
      *run = a->extent;
    } else if (a->extent > 1 && a->stride % 2) {
      return -1;
    }
  }
  return dim >= 0 && d->vdims[dim] % 2 == 0 && !d->pad_before[dim] ? dim : -1;
}

/* d with dim `dim` counted in pairs and its strides in units of two
 * elements, of type `wide`. */
static void halve(rl_desc *d, int dim, relayout_dtype wide) {
  d->dtype = wide;
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

/* The unsigned type of `bits` bits (8 to 64). */
static relayout_dtype unsigned_type(int bits) {
  return bits == 8    ? RELAYOUT_U8
         : bits == 16 ? RELAYOUT_U16
         : bits == 32 ? RELAYOUT_U32
                      : RELAYOUT_U64;
}

int rl_widen(rl_desc *dst_w, rl_desc *src_w, const rl_desc *dst,
             const rl_desc *src) {
  *dst_w = *dst;
  *src_w = *src;
  int widened = 0;
  for (int bits = relayout_dtype_bits(dst->dtype) * 2;
       bits <= 64 && !rl_remapped(dst) && !rl_remapped(src); bits *= 2) {
    int64_t run_d = 0, run_s = 0;
    int dim = pair_dim(dst_w, &run_d);
    if (dim < 0 || pair_dim(src_w, &run_s) != dim) break;
    /* past bytes, only runs that fold into one unit (see above) */
    int64_t run = run_d < run_s ? run_d : run_s;
    if (bits > 8 && run * bits / 2 > 64) break;
    halve(dst_w, dim, unsigned_type(bits));
    halve(src_w, dim, unsigned_type(bits));
    widened = 1;
  }
  return widened;
}
