/* cast.c - the reference's casts and quantization, element by element from
 * their definitions (docs/CASTS.md): values through C doubles, rounded with
 * rint and ldexp, never through the kernels' bit manipulation */
#include "internal.h"

#include <math.h>
#include <string.h>

int rl_float_bits(relayout_dtype t, int *exponent_bits) {
  switch (t) {
  case RELAYOUT_F16: *exponent_bits = 5; return 10;
  case RELAYOUT_BF16: *exponent_bits = 8; return 7;
  case RELAYOUT_F32: *exponent_bits = 8; return 23;
  case RELAYOUT_F64: *exponent_bits = 11; return 52;
  default: *exponent_bits = 0; return 0;
  }
}

int rl_int_range(relayout_dtype t, int64_t *lo, int64_t *hi) {
  switch (t) {
  case RELAYOUT_I8: *lo = -128, *hi = 127; return 1;
  case RELAYOUT_U8: *lo = 0, *hi = 255; return 1;
  case RELAYOUT_I4: *lo = -8, *hi = 7; return 1;
  case RELAYOUT_U4: *lo = 0, *hi = 15; return 1;
  default: *lo = *hi = 0; return 0;
  }
}

static int is_float(relayout_dtype t) {
  int e;
  return rl_float_bits(t, &e) > 0;
}

static int is_quant(relayout_dtype t) {
  int64_t lo, hi;
  return rl_int_range(t, &lo, &hi);
}

/* Whether both sides have the same per-channel quantization (or none). */
static int same_channels(const rl_desc *dst, const rl_desc *src) {
  return dst->per_channel == src->per_channel &&
         (!dst->per_channel ||
          (dst->qscales == src->qscales && dst->qzps == src->qzps));
}

int rl_is_cast(const rl_desc *dst, const rl_desc *src) {
  return dst->dtype != src->dtype || dst->scale != src->scale ||
         dst->zero_point != src->zero_point || dst->zero_point ||
         !same_channels(dst, src);
}

relayout_quant rl_quant_at(const rl_desc *d, const int64_t *coord) {
  if (!d->per_channel) return (relayout_quant){d->scale, d->zero_point};
  int64_t c = coord[d->per_channel - 1];
  return (relayout_quant){d->qscales[c], d->qzps ? d->qzps[c] : 0};
}

relayout_status rl_check_cast(const rl_desc *dst, const rl_desc *src,
                              relayout_error *err) {
  const char *s = relayout_dtype_name(src->dtype),
             *d = relayout_dtype_name(dst->dtype);
  int sf = is_float(src->dtype), df = is_float(dst->dtype);
  int sq = is_quant(src->dtype), dq = is_quant(dst->dtype);
  if (src->dtype == dst->dtype && !sq) return RELAYOUT_OK;
  if (!(sf || sq) || !(df || dq))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "no cast from %s to %s: casts go between f64, f32, f16 and "
                   "bf16, from those to i8, u8, i4 and u4 and back, and "
                   "between i8, u8, i4 and u4",
                   s, d);
  if (src->dtype == RELAYOUT_F64 && dq)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "no quantization from f64 (to %s): cast to f32 first", d);
  if (sq && dq && (src->per_channel || dst->per_channel) &&
      !(src->dtype == dst->dtype && same_channels(dst, src)))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s to %s with per-channel quantization: integer casts "
                   "take per-tensor quantizations only (dequantize first)",
                   s, d);
  if (sq && dq && src->scale != dst->scale)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s with scale %g to %s with scale %g: integer casts keep "
                   "the scale (only zero points may differ)",
                   s, (double)src->scale, d, (double)dst->scale);
  return RELAYOUT_OK;
}

static uint64_t load(const uint8_t *p, int64_t off, int bits) {
  if (bits == 4) return p[off >> 1] >> ((off & 1) * 4) & 0xFu;
  uint64_t v = 0;
  memcpy(&v, p + off * (bits / 8), (size_t)bits / 8); /* little-endian */
  return v;
}

static void store(uint8_t *p, int64_t off, int bits, uint64_t v) {
  if (bits == 4) {
    uint8_t *d = &p[off >> 1];
    int shift = (int)(off & 1) * 4;
    *d = (uint8_t)((*d & ~(0xFu << shift)) | (v & 0xFu) << shift);
    return;
  }
  memcpy(p + off * (bits / 8), &v, (size_t)bits / 8);
}

/* A float's value from its bits (exact in a double for every type). */
static double decode(uint64_t b, int m, int e) {
  int bias = (1 << (e - 1)) - 1, field = (int)(b >> m & ((1u << e) - 1));
  double frac = (double)(b & (((uint64_t)1 << m) - 1)), v;
  if (field == (1 << e) - 1)
    v = frac ? NAN : INFINITY;
  else if (field)
    v = ldexp(frac + ldexp(1, m), field - bias - m);
  else
    v = ldexp(frac, 1 - bias - m);
  return b >> (m + e) & 1 ? -v : v;
}

double rl_float_value(const uint8_t *buf, int64_t off, relayout_dtype t) {
  int e, m = rl_float_bits(t, &e);
  return decode(load(buf, off, relayout_dtype_bits(t)), m, e);
}

/* A value (not NaN) rounded to nearest, ties to even, in a float type of m
 * fraction and e exponent bits: its bits. */
static uint64_t encode(double v, int m, int e) {
  uint64_t sign = (uint64_t)(signbit(v) != 0) << (m + e);
  int bias = (1 << (e - 1)) - 1, emin = 1 - bias;
  uint64_t inf = sign | (((uint64_t)1 << e) - 1) << m;
  double a = fabs(v);
  if (isinf(a)) return inf;
  if (a == 0) return sign;
  int x = ilogb(a);
  if (x < emin) x = emin;
  double q = rint(ldexp(a, m - x)); /* the significand, rounded */
  if (q >= ldexp(1, m + 1)) q /= 2, x++;
  if (x > bias) return inf;
  if (q < ldexp(1, m)) return sign | (uint64_t)q; /* subnormal */
  return sign | (uint64_t)(x + bias) << m | ((uint64_t)q - ((uint64_t)1 << m));
}

/* NaN to NaN: sign kept, quiet, the payload's leading bits kept. */
static uint64_t nan_to(uint64_t b, int sm, int se, int dm, int de) {
  uint64_t sign = b >> (sm + se) & 1;
  uint64_t payload = b & (((uint64_t)1 << sm) - 1);
  payload = dm >= sm ? payload << (dm - sm) : payload >> (sm - dm);
  return sign << (dm + de) | (((uint64_t)1 << de) - 1) << dm |
         (uint64_t)1 << (dm - 1) | payload;
}

static int64_t saturate(double v, relayout_dtype t) {
  int64_t lo, hi;
  rl_int_range(t, &lo, &hi);
  return v < (double)lo ? lo : v > (double)hi ? hi : (int64_t)v;
}

void rl_cast_element(uint8_t *dst, int64_t doff, const rl_desc *d,
                     const uint8_t *src, int64_t soff, const rl_desc *s,
                     const int64_t *coord) {
  relayout_quant dq = rl_quant_at(d, coord), sq = rl_quant_at(s, coord);
  int sbits = relayout_dtype_bits(s->dtype),
      dbits = relayout_dtype_bits(d->dtype);
  int se, de, sm = rl_float_bits(s->dtype, &se),
              dm = rl_float_bits(d->dtype, &de);
  uint64_t b = load(src, soff, sbits), out;
  if (sm) { /* from a float */
    double x = decode(b, sm, se);
    if (isnan(x))
      out = dm ? nan_to(b, sm, se, dm, de) : (uint64_t)dq.zero_point;
    else if (dm)
      out = encode(x, dm, de);
    else /* x / scale is exact to the rounding for f32 values and below */
      out = (uint64_t)saturate(rint(x / (double)dq.scale) + dq.zero_point,
                               d->dtype);
  } else { /* from an integer: sign-extended */
    int64_t lo, hi, q = (int64_t)b;
    rl_int_range(s->dtype, &lo, &hi);
    if (lo < 0 && q > hi) q -= (int64_t)1 << sbits;
    if (dm) /* (q - zero point) * scale is exact in a double */
      out = encode((double)(q - sq.zero_point) * (double)sq.scale, dm, de);
    else
      out = (uint64_t)saturate((double)(q - sq.zero_point + dq.zero_point),
                               d->dtype);
  }
  store(dst, doff, dbits, out);
}

uint8_t rl_pad_byte(const rl_desc *dst) {
  int64_t lo, hi;
  if (!rl_int_range(dst->dtype, &lo, &hi) || dst->per_channel) return 0;
  unsigned z = (unsigned)dst->zero_point & 0xFFu;
  return (uint8_t)(relayout_dtype_bits(dst->dtype) == 4 ? (z & 0xF) * 0x11 : z);
}
