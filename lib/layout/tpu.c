/* tpu.c - Sophgo TPU local-memory layouts: channels scattered over NPUs (seed
 * 004)
 *
 * Channel c of a tensor that starts at NPU Q lives on NPU (Q + c) mod X at
 * slot (Q + c) div X; address = NPU * S + offset. In the model: a pad-before
 * of Q on C, a split of C by X, the lane axis outermost with stride S.
 */
#include "checked.h"
#include "internal.h"

#include <string.h>

static int find(const rl_desc *d, char name) {
  for (int i = 0; i < d->ndims; i++)
    if (d->names[i] == name) return i;
  return -1;
}

relayout_status rl_build_tpu(rl_desc *d, const relayout_layout *l,
                             relayout_error *err) {
  const char *name = l->format->name;
  int matrix = !strcmp(name, "TPU_MATRIX");
  const char *order = l->format->order;
  int idx[4];
  for (int i = 0; order[i]; i++)
    if ((idx[i] = find(d, order[i])) < 0 || d->ndims != (int)strlen(order))
      return rl_fail(err, RELAYOUT_ERR_DIMS, "%s needs exactly the dims %s",
                     l->text, order);
  int64_t npus = l->param[RL_P_NPUS], lmem = l->param[RL_P_LMEM];
  int64_t start = l->param[RL_P_START] == RL_UNSET ? 0 : l->param[RL_P_START];
  int64_t w = l->param[RL_P_W];
  if (npus == RL_UNSET || lmem == RL_UNSET || (matrix && w == RL_UNSET))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s needs npus= and lmem= (bytes per NPU)%s", l->text,
                   matrix ? " and w= (columns per channel)" : "");
  if (start >= npus)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s: start=%lld must be below npus=%lld", l->text,
                   (long long)start, (long long)npus);
  int bits = relayout_dtype_bits(d->dtype);
  if (bits < 8)
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "%s holds whole-byte elements; %s is 4-bit", l->text,
                   relayout_dtype_name(d->dtype));
  int64_t es = bits / 8;
  if (lmem % es)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s: lmem=%lld bytes is not a whole number of %s elements",
                   l->text, (long long)lmem, relayout_dtype_name(d->dtype));
  /* The channel dim (C, or M split into channels of w columns). */
  int n = idx[0], c = idx[1];
  int64_t ch_width = matrix ? w : 1;
  int64_t channels = matrix ? rl_ceil_div(d->dims[c], w) : d->dims[c];
  int64_t per_npu = rl_ceil_div(start + channels, npus);
  int64_t inner = w; /* a channel: TPU_MATRIX's w columns, else H*W (below) */
  if (matrix && w > d->dims[c])
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s: w=%lld is wider than M=%lld", l->text, (long long)w,
                   (long long)d->dims[c]);
  if (!matrix && !rl_mul(&inner, d->dims[idx[2]], d->dims[idx[3]]))
    return rl_fail(err, RELAYOUT_ERR_OVERFLOW, "%s: H*W overflows", l->text);
  int64_t cstride = inner;
  if (strcmp(name, "TPU_COMPACT") && !rl_roundup(&cstride, inner, 128 / es))
    return rl_fail(err, RELAYOUT_ERR_OVERFLOW, "%s: sizes overflow", l->text);
  int64_t nstride, used, slots;
  if (!rl_mul(&nstride, cstride, per_npu) ||
      !rl_mul(&used, nstride, d->dims[n]) || !rl_mul(&slots, per_npu, npus) ||
      !rl_mul(&d->padded[c], slots, ch_width) ||
      !rl_mul(&d->pad_before[c], start, ch_width))
    return rl_fail(err, RELAYOUT_ERR_OVERFLOW, "%s: sizes overflow", l->text);
  if (used > lmem / es)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "%s: the tensor needs %lld %s elements on each NPU, more "
                   "than lmem=%lld bytes hold",
                   l->text, (long long)used, relayout_dtype_name(d->dtype),
                   (long long)lmem);
  relayout_axis *a = d->axes;
  a[0] = (relayout_axis){c, npus, ch_width, lmem / es};         /* lane */
  a[1] = (relayout_axis){n, d->dims[n], 1, nstride};            /* N */
  a[2] = (relayout_axis){c, per_npu, ch_width * npus, cstride}; /* slot */
  if (matrix) {
    a[3] = (relayout_axis){c, w, 1, 1}; /* column */
    d->naxes = 4;
  } else {
    a[3] = (relayout_axis){idx[2], d->dims[idx[2]], 1, d->dims[idx[3]]};
    a[4] = (relayout_axis){idx[3], d->dims[idx[3]], 1, 1};
    d->naxes = 5;
  }
  return RELAYOUT_OK;
}
