/* tpu.c - Sophgo TPU local-memory layouts: channels scattered over NPUs (seed
 * 004)
 *
 * A tensor at address A = Q * S + R starts at NPU Q, offset R. Channel c
 * lives on NPU (Q + c) mod X at slot (Q + c) div X; address = NPU * S + R +
 * the N, slot, H and W strides. In the model: a pad-before of Q on C, a split
 * of C by X, the lane axis outermost with stride S, R the descriptor's base.
 * A storage mode (4N, 2N, 2IC) packs n0 consecutive N into one word, and the
 * strides count words.
 */
#include "checked.h"
#include "internal.h"

#include <string.h>

static int find(const rl_desc *d, char name) {
  for (int i = 0; i < d->ndims; i++)
    if (d->names[i] == name) return i;
  return -1;
}

static int64_t param(const relayout_layout *l, int p, int64_t unset) {
  return l->param[p] == RL_UNSET ? unset : l->param[p];
}

/* The storage mode's dtype rule: 4N holds int8 or uint8, 2N int16 or
 * uint16, 2IC fp32. */
static relayout_status check_mode(int64_t n0, const rl_desc *d,
                                  const relayout_layout *l,
                                  relayout_error *err) {
  relayout_dtype t = d->dtype;
  int ok = n0 == 1 || (n0 == 4 && (t == RELAYOUT_I8 || t == RELAYOUT_U8)) ||
           (n0 == 2 &&
            (t == RELAYOUT_I16 || t == RELAYOUT_U16 || t == RELAYOUT_F32));
  return ok ? RELAYOUT_OK
            : rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                      "%s: n0=%lld does not hold %s; the storage modes are 4N "
                      "(n0=4: int8, uint8), 2N (n0=2: int16, uint16) and 2IC "
                      "(n0=2: fp32)",
                      l->text, (long long)n0, relayout_dtype_name(t));
}

/* The address rule: aligned tensors (and matrices) at a multiple of 128
 * bytes, compact ones of 4, strided ones of their word. */
static relayout_status check_address(int64_t start, int64_t offset,
                                     int64_t word, const relayout_layout *l,
                                     relayout_error *err) {
  const char *name = l->format->name;
  int64_t lmem = l->param[RL_P_LMEM], addr, align = word;
  if (!strcmp(name, "TPU_ALIGNED") || !strcmp(name, "TPU_MATRIX")) align = 128;
  if (!strcmp(name, "TPU_COMPACT")) align = 4;
  if (offset >= lmem)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s: offset=%lld must be below lmem=%lld", l->text,
                   (long long)offset, (long long)lmem);
  if (offset % word)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s: offset=%lld is not a whole number of %lld-byte words",
                   l->text, (long long)offset, (long long)word);
  if (!rl_mul(&addr, start, lmem) || !rl_add(&addr, addr, offset))
    return rl_fail(err, RELAYOUT_ERR_OVERFLOW, "%s: the address overflows",
                   l->text);
  if (addr % align)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s: address %lld (start * lmem + offset) is not a "
                   "multiple of %lld bytes, as %s requires",
                   l->text, (long long)addr, (long long)align, name);
  return RELAYOUT_OK;
}

/* Word strides from W outwards (w, h, c, n): compact, aligned to 128 bytes,
 * or the caller's (each unset one compact over the one inside it). */
static int strides(int64_t *st, const relayout_layout *l, int64_t per_npu,
                   int64_t hh, int64_t ww, int64_t word) {
  const char *name = l->format->name;
  st[0] = param(l, RL_P_WSTRIDE, 1);
  if (!rl_mul(&st[1], st[0], ww)) return 0;
  st[1] = param(l, RL_P_HSTRIDE, st[1]);
  if (!rl_mul(&st[2], st[1], hh)) return 0;
  if (strcmp(name, "TPU_COMPACT") && strcmp(name, "TPU_STRIDED") &&
      !rl_roundup(&st[2], st[2], 128 / word > 0 ? 128 / word : 1))
    return 0;
  st[2] = param(l, RL_P_CSTRIDE, st[2]);
  if (!rl_mul(&st[3], st[2], per_npu)) return 0;
  st[3] = param(l, RL_P_NSTRIDE, st[3]);
  return 1;
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
  int64_t start = param(l, RL_P_START, 0), offset = param(l, RL_P_OFFSET, 0);
  int64_t w = l->param[RL_P_W], n0 = param(l, RL_P_N0, 1);
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
  int64_t es = bits / 8, word = es * n0;
  relayout_status s = check_mode(n0, d, l, err);
  if (s || (s = check_address(start, offset, word, l, err))) return s;
  if (lmem % es)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s: lmem=%lld bytes is not a whole number of %s elements",
                   l->text, (long long)lmem, relayout_dtype_name(d->dtype));
  /* The channel dim (C, or M split into channels of w columns). */
  int n = idx[0], c = idx[1];
  int64_t ch_width = matrix ? w : 1;
  int64_t channels = matrix ? rl_ceil_div(d->dims[c], w) : d->dims[c];
  int64_t per_npu = rl_ceil_div(start + channels, npus);
  int64_t batches = rl_ceil_div(d->dims[n], n0);
  int64_t hh = matrix ? 1 : d->dims[idx[2]], ww = matrix ? w : d->dims[idx[3]];
  if (matrix && w > d->dims[c])
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s: w=%lld is wider than M=%lld", l->text, (long long)w,
                   (long long)d->dims[c]);
  int64_t hw;
  if (!rl_mul(&hw, hh, ww))
    return rl_fail(err, RELAYOUT_ERR_OVERFLOW, "%s: H*W overflows", l->text);
  int64_t st[4], used = 0, reach, slots;
  int ok = strides(st, l, per_npu, hh, ww, word);
  /* words an NPU holds from the offset: whole N strides, or for free
   * strides the last element's reach */
  if (!strcmp(name, "TPU_STRIDED")) {
    int64_t ext[4] = {ww, hh, per_npu, batches};
    for (int i = 0; ok && i < 4; i++)
      ok = rl_mul(&reach, ext[i] - 1, st[i]) && rl_add(&used, used, reach);
    ok = ok && rl_add(&used, used, 1);
  } else
    ok = ok && rl_mul(&used, st[3], batches);
  for (int i = 0; ok && i < 4; i++) ok = rl_mul(&st[i], st[i], n0);
  if (!ok || !rl_mul(&used, used, n0) || !rl_mul(&slots, per_npu, npus) ||
      !rl_mul(&d->padded[c], slots, ch_width) ||
      !rl_mul(&d->pad_before[c], start, ch_width) ||
      !rl_mul(&d->padded[n], batches, n0))
    return rl_fail(err, RELAYOUT_ERR_OVERFLOW, "%s: sizes overflow", l->text);
  if (used > (lmem - offset) / es)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "%s: the tensor needs %lld %s elements on each NPU, more "
                   "than lmem=%lld bytes hold%s",
                   l->text, (long long)used, relayout_dtype_name(d->dtype),
                   (long long)lmem, offset ? " past the offset" : "");
  d->base = offset / es;
  relayout_axis *a = d->axes;
  int k = 0;
  a[k++] = (relayout_axis){c, npus, ch_width, lmem / es};       /* lane */
  a[k++] = (relayout_axis){n, batches, n0, st[3]};              /* N (words) */
  a[k++] = (relayout_axis){c, per_npu, ch_width * npus, st[2]}; /* slot */
  if (matrix)
    a[k++] = (relayout_axis){c, w, 1, st[0]}; /* column */
  else {
    a[k++] = (relayout_axis){idx[2], hh, 1, st[1]};
    a[k++] = (relayout_axis){idx[3], ww, 1, st[0]};
  }
  if (n0 > 1) a[k++] = (relayout_axis){n, n0, 1, 1}; /* the word's N */
  d->naxes = k;
  return RELAYOUT_OK;
}
