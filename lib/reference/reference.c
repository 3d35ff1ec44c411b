/* reference.c - the scalar reference conversion, the oracle of every test
 *
 * Each destination element is computed straight from the two descriptors:
 * for every logical coordinate, its offset in each layout, and its value
 * moved bit for bit or cast (cast.c). No axes are
 * merged or reordered; nothing is shared with a planner.
 */
#include "internal.h"

#include <string.h>

static void move(uint8_t *dst, int64_t doff, const uint8_t *src, int64_t soff,
                 int bits) {
  if (bits == 4) {
    unsigned v = src[soff >> 1] >> ((soff & 1) * 4) & 0xFu;
    uint8_t *d = &dst[doff >> 1];
    int shift = (int)(doff & 1) * 4;
    *d = (uint8_t)((*d & ~(0xFu << shift)) | v << shift);
    return;
  }
  size_t bytes = (size_t)bits / 8;
  memcpy(dst + doff * (int64_t)bytes, src + soff * (int64_t)bytes, bytes);
}

relayout_status rl_check_pair(const rl_desc *dst, const rl_desc *src,
                              relayout_error *err) {
  if (src->ndims != dst->ndims)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "source and destination differ in rank");
  relayout_status s = rl_check_cast(dst, src, err);
  if (s) return s;
  for (int i = 0; i < src->ndims; i++)
    if (src->names[i] != dst->names[i] || src->dims[i] != dst->dims[i]) {
      char lab[8];
      return rl_fail(err, RELAYOUT_ERR_DIMS,
                     "source and destination differ at logical dim %d (%s)", i,
                     relayout_dim_label(lab, src->names[i]));
    }
  return RELAYOUT_OK;
}

relayout_status rl_check_size(const rl_desc *d, size_t size, const char *which,
                              relayout_error *err) {
  int64_t need;
  rl_desc_size_bytes(&need, d, NULL);
  return (uint64_t)need > size
             ? rl_fail(err, RELAYOUT_ERR_BUFFER,
                       "the %s buffer holds %zu bytes; its layout needs %lld",
                       which, size, (long long)need)
             : RELAYOUT_OK;
}

relayout_status rl_check_sizes(const rl_desc *dst, size_t dst_size,
                               const rl_desc *src, size_t src_size,
                               relayout_error *err) {
  relayout_status s = rl_check_size(src, src_size, "source", err);
  return s ? s : rl_check_size(dst, dst_size, "destination", err);
}

relayout_status rl_convert_ref(const rl_desc *dst, void *dst_buf,
                               size_t dst_size, const rl_desc *src,
                               const void *src_buf, size_t src_size,
                               relayout_error *err) {
  if (!dst || !src || !dst_buf || !src_buf)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  relayout_status s = rl_check_pair(dst, src, err);
  if (s) return s;
  int64_t need_dst;
  if ((s = rl_check_sizes(dst, dst_size, src, src_size, err))) return s;
  rl_desc_size_bytes(&need_dst, dst, NULL);
  int bits = relayout_dtype_bits(src->dtype), cast = rl_is_cast(dst, src);
  memset(dst_buf, rl_pad_byte(dst), (size_t)need_dst);
  int n = src->ndims;
  int64_t coord[RELAYOUT_MAX_DIMS] = {0};
  for (;;) {
    if (cast)
      rl_cast_element(dst_buf, rl_offset(dst, coord), dst, src_buf,
                      rl_offset(src, coord), src, coord);
    else
      move(dst_buf, rl_offset(dst, coord), src_buf, rl_offset(src, coord),
           bits);
    int i = n - 1;
    while (i >= 0 && ++coord[i] == src->dims[i]) coord[i--] = 0;
    if (i < 0) break;
  }
  return RELAYOUT_OK;
}
