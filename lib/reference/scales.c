/* scales.c - symmetric quantization scales from a tensor's values, each
 * element read at its logical coordinate as the reference reads it, or in
 * runs where the layout is the dims' own order */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Whether d holds the element of row-major index k (the last dim fastest)
 * at offset k: each axis of more than one element a whole dim, the dims in
 * order, nothing padded, merged, segmented, grouped or offset. */
static int row_major(const rl_desc *d) {
  if (d->base || d->merge.extent || d->seg[0].len || d->seg[1].len ||
      d->groups.groups)
    return 0;
  int64_t stride = 1;
  int below = d->ndims; /* the dim of the axis inside */
  for (int i = d->naxes - 1; i >= 0; i--) {
    const relayout_axis *a = &d->axes[i];
    if (a->extent == 1) continue;
    if (a->dim >= below || a->weight != 1 || a->extent != d->dims[a->dim] ||
        a->stride != stride || d->pad_before[a->dim])
      return 0;
    for (int j = a->dim + 1; j < below; j++)
      if (d->dims[j] != 1) return 0;
    stride *= a->extent;
    below = a->dim;
  }
  for (int j = 0; j < below; j++)
    if (d->dims[j] != 1) return 0;
  return 1;
}

/* Element i's magnitude as bits (of `bytes` little-endian bytes from p on,
 * of a float whose exponent field is `field` and magnitude `mag`: finite
 * magnitudes order as their bits do), 0 for infinities and NaNs */
static inline uint32_t mag_bits(const uint8_t *p, int64_t i, int bytes,
                                uint32_t field, uint32_t mag) {
  const uint8_t *q = p + i * bytes;
  uint32_t b = (uint32_t)q[0] | (uint32_t)q[1] << 8;
  if (bytes == 4) b |= (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
  b &= mag;
  return (b & field) == field ? 0 : b;
}

/* The largest magnitude's bits of a channel's run of n elements from p on
 * and t; without a branch, so that the compiler takes it in vectors where
 * `bytes` is a constant (as in top_row) */
static inline uint32_t top_run(const uint8_t *p, int64_t n, int bytes,
                               uint32_t field, uint32_t mag, uint32_t t) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t b = mag_bits(p, i, bytes, field, mag);
    t = b > t ? b : t;
  }
  return t;
}

/* One element of each of n channels side by side from p on, into each
 * channel's largest magnitude's bits, top[0..n) */
static inline void top_row(uint32_t *top, const uint8_t *p, int64_t n,
                           int bytes, uint32_t field, uint32_t mag) {
  for (int64_t c = 0; c < n; c++) {
    uint32_t b = mag_bits(p, c, bytes, field, mag);
    top[c] = b > top[c] ? b : top[c];
  }
}

/* rows of `count` runs of `inner` elements each, each run's channel's
 * largest magnitude into top[channel], floats of m fraction and e exponent
 * bits; a run of one element takes a row's channels side by side */
static inline void tops(uint32_t *top, const uint8_t *p, int64_t rows,
                        int64_t count, int64_t inner, int bytes, int m, int e) {
  uint32_t field = ((1u << e) - 1) << m, mag = field | ((1u << m) - 1);
  for (int64_t o = 0; o < rows; o++)
    if (inner == 1) {
      top_row(top, p, count, bytes, field, mag);
      p += count * bytes;
    } else {
      for (int64_t c = 0; c < count; c++, p += inner * bytes)
        top[c] = top_run(p, inner, bytes, field, mag, top[c]);
    }
}

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
  int64_t total = 1, inner = 1;
  for (int i = 0; i < d->ndims; i++) total *= d->dims[i];
  for (int i = at + 1; i < d->ndims; i++) inner *= d->dims[i];
  if (row_major(d) && total) {
    /* runs of one channel, `inner` long, each channel's largest magnitude
     * kept as its bits until the end */
    int bytes = relayout_dtype_bits(d->dtype) / 8,
        m = rl_float_bits(d->dtype, &e);
    uint32_t *bits = calloc((size_t)count, sizeof *bits);
    if (!bits) return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
    if (bytes == 2)
      tops(bits, buf, total / (count * inner), count, inner, 2, m, e);
    else
      tops(bits, buf, total / (count * inner), count, inner, 4, m, e);
    for (int64_t c = 0; c < count; c++) {
      uint32_t t = bits[c];
      /* back to the element's little-endian bytes, as rl_float_value reads */
      uint8_t b[4] = {(uint8_t)t, (uint8_t)(t >> 8), (uint8_t)(t >> 16),
                      (uint8_t)(t >> 24)};
      scales[c] = (float)rl_float_value(b, 0, d->dtype);
    }
    free(bits);
  } else {
    int64_t coord[RELAYOUT_MAX_DIMS] = {0};
    for (int64_t k = 0; k < total; k++) {
      double a = fabs(rl_float_value(buf, rl_offset(d, coord), d->dtype));
      float *m = &scales[at < 0 ? 0 : coord[at]];
      if (isfinite(a) && a > *m) *m = (float)a; /* exact: a is f32 or below */
      int i = d->ndims - 1;
      while (i >= 0 && ++coord[i] == d->dims[i]) coord[i--] = 0;
    }
  }
  for (int64_t c = 0; c < count; c++) {
    float q = (float)((double)scales[c] / top);
    scales[c] = scales[c] == 0 ? 1 : q > 0 ? q : FLT_TRUE_MIN;
  }
  return RELAYOUT_OK;
}
