/* scales.c - symmetric quantization scales from a tensor's values, each
 * element read at its logical coordinate as the reference reads it */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

relayout_status relayout_symmetric_scales(float *scales, int64_t count,
                                          const relayout_desc *src,
                                          const void *buf, size_t size,
                                          char dim, relayout_dtype to,
                                          relayout_error *err) {
  if (!scales || !src || !buf)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  const rl_desc *d = rl_cd(src);
  int e;
  if (!rl_float_bits(d->dtype, &e) || d->dtype == RELAYOUT_F64)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "scales come from an f32, f16 or bf16 tensor, not %s (no "
                   "quantization from f64: cast to f32 first)",
                   relayout_dtype_name(d->dtype));
  if (to != RELAYOUT_I8 && to != RELAYOUT_I4)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "symmetric scales are for i8 and i4, not %s",
                   relayout_dtype_name(to) ? relayout_dtype_name(to) : "?");
  int at = -1;
  for (int i = 0; dim && i < d->ndims; i++)
    if (d->names[i] == dim) at = i;
  char lab[8];
  if (dim && at < 0)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "scales along %s: the layout has no such logical dim",
                   relayout_dim_label(lab, dim));
  int64_t want = at < 0 ? 1 : d->dims[at];
  if (count != want)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "room for %lld scales; %s needs %lld", (long long)count,
                   at < 0 ? "a whole tensor" : "its extent", (long long)want);
  int64_t need;
  relayout_status s = rl_desc_size_bytes(&need, d, err);
  if (s) return s;
  if ((uint64_t)need > size)
    return rl_fail(err, RELAYOUT_ERR_BUFFER,
                   "the buffer holds %zu bytes; its layout needs %lld", size,
                   (long long)need);
  double top = to == RELAYOUT_I8 ? 127 : 7;
  for (int64_t c = 0; c < count; c++) scales[c] = 0;
  int64_t coord[RELAYOUT_MAX_DIMS] = {0};
  int64_t total = 1;
  for (int i = 0; i < d->ndims; i++) total *= d->dims[i];
  for (int64_t k = 0; k < total; k++) {
    double a = fabs(rl_float_value(buf, rl_offset(d, coord), d->dtype));
    float *m = &scales[at < 0 ? 0 : coord[at]];
    if (isfinite(a) && a > *m) *m = (float)a; /* exact: a is f32 or below */
    int i = d->ndims - 1;
    while (i >= 0 && ++coord[i] == d->dims[i]) coord[i--] = 0;
  }
  for (int64_t c = 0; c < count; c++) {
    float q = (float)((double)scales[c] / top);
    scales[c] = scales[c] == 0 ? 1 : q > 0 ? q : FLT_TRUE_MIN;
  }
  return RELAYOUT_OK;
}
