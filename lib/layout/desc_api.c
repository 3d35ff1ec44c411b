/* desc_api.c - relayout.h's descriptor functions: the caller's opaque
 * relayout_desc read and written as the rl_desc it holds */
#include "internal.h"

#include <math.h>
#include <string.h>

relayout_status relayout_desc_init(relayout_desc *out,
                                   const relayout_layout *layout,
                                   relayout_dtype dtype, int ndims,
                                   const char *names, const int64_t *dims,
                                   relayout_error *err) {
  rl_desc d;
  relayout_status s =
      out ? rl_desc_init(&d, layout, dtype, ndims, names, dims, err)
          : rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  if (!s) {
    memset(out, 0, sizeof *out); /* descriptors of one tensor compare equal */
    memcpy(out, &d, sizeof d);
  }
  return s;
}

/* A bound pair handed to the caller's descriptors, where binding succeeded. */
static relayout_status hand_over(relayout_desc *src, relayout_desc *dst,
                                 const rl_desc *s, const rl_desc *d,
                                 relayout_status st) {
  if (!st) { /* the whole of each, so that equal descriptors compare equal */
    memset(src, 0, sizeof *src);
    memset(dst, 0, sizeof *dst);
    memcpy(src, s, sizeof *s);
    memcpy(dst, d, sizeof *d);
  }
  return st;
}

relayout_status relayout_bind(relayout_desc *src, relayout_desc *dst,
                              const relayout_layout *src_layout,
                              const relayout_layout *dst_layout,
                              relayout_dtype dtype, int src_rank,
                              const int64_t *src_shape,
                              const relayout_dim_value *given, int ngiven,
                              relayout_error *err) {
  rl_desc s, d;
  if (!src || !dst)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "bad argument to relayout_bind");
  return hand_over(src, dst, &s, &d,
                   rl_bind(&s, &d, src_layout, dst_layout, dtype, src_rank,
                           src_shape, given, ngiven, err));
}

relayout_status relayout_bind_extents(relayout_desc *src, relayout_desc *dst,
                                      const relayout_layout *src_layout,
                                      const relayout_layout *dst_layout,
                                      relayout_dtype dtype, int n,
                                      const int64_t *extents,
                                      relayout_error *err) {
  rl_desc s, d;
  if (!src || !dst)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "bad argument to relayout_bind_extents");
  return hand_over(
      src, dst, &s, &d,
      rl_bind_extents(&s, &d, src_layout, dst_layout, dtype, n, extents, err));
}

relayout_status relayout_desc_size_bytes(int64_t *out, const relayout_desc *d,
                                         relayout_error *err) {
  return d ? rl_desc_size_bytes(out, rl_cd(d), err)
           : rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
}

relayout_status relayout_desc_offset(int64_t *out, const relayout_desc *d,
                                     const int64_t *coord,
                                     relayout_error *err) {
  return d ? rl_desc_offset(out, rl_cd(d), coord, err)
           : rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
}

relayout_status relayout_desc_is_padding(int *out, const relayout_desc *d,
                                         int64_t offset, relayout_error *err) {
  return d ? rl_desc_is_padding(out, rl_cd(d), offset, err)
           : rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
}

void relayout_desc_physical_shape(int *rank, int64_t *shape,
                                  const relayout_desc *d) {
  rl_desc_physical_shape(rank, shape, rl_cd(d));
}

int relayout_desc_holds_shape(const relayout_desc *d, int rank,
                              const int64_t *shape) {
  return d && rl_desc_holds_shape(rl_cd(d), rank, shape);
}

relayout_status relayout_convert_ref(const relayout_desc *dst, void *dst_buf,
                                     size_t dst_size, const relayout_desc *src,
                                     const void *src_buf, size_t src_size,
                                     relayout_error *err) {
  return dst && src ? rl_convert_ref(rl_cd(dst), dst_buf, dst_size, rl_cd(src),
                                     src_buf, src_size, err)
                    : rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
}

relayout_dtype relayout_desc_dtype(const relayout_desc *d) {
  return rl_cd(d)->dtype;
}

int relayout_desc_dims(const relayout_desc *d, char *names, int64_t *extents) {
  const rl_desc *r = rl_cd(d);
  if (names) memcpy(names, r->names, (size_t)r->ndims);
  if (extents) memcpy(extents, r->dims, sizeof *extents * (size_t)r->ndims);
  return r->ndims;
}

int relayout_desc_axes(const relayout_desc *d, relayout_axis *axes) {
  const rl_desc *r = rl_cd(d);
  if (axes) memcpy(axes, r->axes, sizeof *axes * (size_t)r->naxes);
  return r->naxes;
}

int relayout_desc_vdims(const relayout_desc *d, relayout_vdim *vdims) {
  const rl_desc *r = rl_cd(d);
  for (int v = 0; vdims && v < r->nvdims; v++)
    vdims[v] = (relayout_vdim){v < r->ndims ? r->names[v] : 'G', r->vdims[v],
                               r->padded[v], r->pad_before[v]};
  return r->nvdims;
}

int relayout_desc_groups(const relayout_desc *d, relayout_groups *out) {
  const rl_desc *r = rl_cd(d);
  if (out) *out = r->groups;
  return r->groups.groups != 0;
}

int64_t relayout_desc_span(const relayout_desc *d) { return rl_cd(d)->span; }

int64_t relayout_desc_base(const relayout_desc *d) { return rl_cd(d)->base; }

int relayout_desc_is_compact(const relayout_desc *d) {
  return rl_cd(d)->compact;
}

relayout_status relayout_desc_column_major(relayout_desc *d,
                                           relayout_error *err) {
  rl_desc *r = d ? rl_md(d) : NULL;
  if (!r || !r->compact)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "only a compact layout re-strides column-major");
  int64_t stride = 1;
  for (int i = 0; i < r->naxes; i++) {
    r->axes[i].stride = stride;
    stride *= r->axes[i].extent;
  }
  return RELAYOUT_OK;
}

relayout_status relayout_desc_retype(relayout_desc *d,
                                     const relayout_layout *layout,
                                     relayout_dtype dtype,
                                     const relayout_quant *quant,
                                     relayout_error *err) {
  if (!d || !layout)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  const rl_desc *old = rl_cd(d);
  int64_t lo, hi;
  int integer = rl_int_range(dtype, &lo, &hi);
  const char *name = relayout_dtype_name(dtype);
  if (quant && !integer)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s takes no quantization: only i8, u8, i4 and u4 do",
                   name ? name : "this dtype");
  if (quant && !(isfinite(quant->scale) && quant->scale > 0))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "scale %g: a scale must be positive and finite",
                   (double)quant->scale);
  if (quant && (quant->zero_point < lo || quant->zero_point > hi))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "zero point %d is outside %s's range %lld..%lld",
                   (int)quant->zero_point, name, (long long)lo, (long long)hi);
  rl_desc r;
  relayout_status s =
      rl_desc_init(&r, layout, dtype, old->ndims, old->names, old->dims, err);
  if (s) return s;
  if (quant) r.scale = quant->scale, r.zero_point = quant->zero_point;
  memcpy(d, &r, sizeof r);
  return RELAYOUT_OK;
}

relayout_status relayout_desc_quantize_channels(
    relayout_desc *d, const relayout_quant_channels *q, relayout_error *err) {
  if (!d || !q || !q->scales)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  rl_desc *r = rl_md(d);
  int64_t lo, hi;
  const char *name = relayout_dtype_name(r->dtype);
  if (!rl_int_range(r->dtype, &lo, &hi))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s takes no quantization: only i8, u8, i4 and u4 do",
                   name ? name : "this dtype");
  int dim = 0;
  while (dim < r->ndims && r->names[dim] != q->dim) dim++;
  char lab[8];
  if (dim == r->ndims)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "per-channel quantization along %s: the layout has no such "
                   "logical dim",
                   relayout_dim_label(lab, q->dim));
  if (q->count != r->dims[dim])
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "per-channel quantization along %s: %lld scales for an "
                   "extent of %lld",
                   relayout_dim_label(lab, q->dim), (long long)q->count,
                   (long long)r->dims[dim]);
  for (int64_t c = 0; c < q->count; c++) {
    if (!(isfinite(q->scales[c]) && q->scales[c] > 0))
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "scale %lld is %g: a scale must be positive and finite",
                     (long long)c, (double)q->scales[c]);
    if (q->zero_points && (q->zero_points[c] < lo || q->zero_points[c] > hi))
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "zero point %lld is %d, outside %s's range %lld..%lld",
                     (long long)c, (int)q->zero_points[c], name, (long long)lo,
                     (long long)hi);
  }
  r->scale = 1;
  r->zero_point = 0;
  r->per_channel = 1 + dim;
  r->qscales = q->scales;
  r->qzps = q->zero_points;
  return RELAYOUT_OK;
}
