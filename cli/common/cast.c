/* cast.c - the options of a cast: --to-dtype, a destination's --scale and
 * --zero-point, a quantized source's --from-scale and --from-zero-point */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_scale(float *out, const char *text, const char *what,
                    const char *cmd) {
  char *end;
  errno = 0;
  float v = strtof(text, &end);
  if (!*text || *end || errno || !isfinite(v) || v <= 0)
    return cli_error(EXIT_USAGE, cmd,
                     "%s: '%s' is not a positive finite number", what, text);
  *out = v;
  return 0;
}

int cli_parse_zero_point(int32_t *out, const char *text, const char *what,
                         const char *cmd) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (!*text || *end || errno || v < -1000000 || v > 1000000)
    return cli_error(EXIT_USAGE, cmd, "%s: '%s' is not a whole number", what,
                     text);
  *out = (int32_t)v;
  return 0;
}

/* An integer dtype's width in bytes, *lo -1 where it is signed; 0 for
 * other dtypes. */
static int integer_bytes(relayout_dtype t, int64_t *lo) {
  *lo = t == RELAYOUT_I8 || t == RELAYOUT_I16 || t == RELAYOUT_I32 ||
                t == RELAYOUT_I64
            ? -1
            : 0;
  return *lo || t == RELAYOUT_U8 || t == RELAYOUT_U16 || t == RELAYOUT_U32 ||
         t == RELAYOUT_U64;
}

int cli_is_npy_name(const char *text) {
  size_t n = strlen(text);
  return n > 4 && !strcmp(text + n - 4, ".npy");
}

/* A per-channel array from a 1-D .npy file of n values: scales (f32, or
 * f64 values that are f32 values) or zero points (any integer dtype). */
static int read_channels(float *scales, int32_t *zps, int64_t n,
                         const char *path, const char *what, const char *cmd) {
  relayout_error err;
  relayout_npy_info info;
  relayout_dtype t;
  unsigned char *file = NULL;
  size_t size;
  if (cli_read_npy(path, &file, &size, &err) ||
      relayout_npy_parse(&info, file, size, &err) ||
      relayout_npy_dtype(&t, info.descr, &err)) {
    free(file);
    return cli_error(EXIT_USAGE, cmd, "%s %s: %s", what, path, err.message);
  }
  int64_t lo = 0;
  int ok =
      info.rank == 1 && info.shape[0] == n && !info.fortran_order &&
      (scales ? t == RELAYOUT_F32 || t == RELAYOUT_F64 : integer_bytes(t, &lo));
  if (!ok) {
    free(file);
    return cli_error(EXIT_USAGE, cmd,
                     "%s %s: needs a 1-D array of %lld %s (one per channel "
                     "along --axis); it holds %s, %d dims, %lld along the "
                     "first",
                     what, path, (long long)n,
                     scales ? "f32 values" : "integers", info.descr, info.rank,
                     (long long)(info.rank ? info.shape[0] : 0));
  }
  const unsigned char *d = file + info.data_offset;
  int bytes = info.elem_size, bad = -1;
  for (int64_t c = 0; c < n && bad < 0; c++) {
    if (scales && t == RELAYOUT_F32) {
      memcpy(&scales[c], d + c * 4, 4);
    } else if (scales) {
      double v;
      memcpy(&v, d + c * 8, 8);
      scales[c] = (float)v;
      if (!((double)scales[c] == v)) bad = (int)c;
    } else {
      int64_t v = 0;
      memcpy(&v, d + c * bytes, (size_t)bytes); /* little-endian */
      if (lo < 0 && bytes < 8 && v >> (bytes * 8 - 1))
        v -= (int64_t)1 << (bytes * 8); /* sign-extended */
      if (v < -1000000 || v > 1000000 || (lo == 0 && bytes == 8 && v < 0))
        bad = (int)c;
      zps[c] = (int32_t)v;
    }
  }
  free(file);
  if (bad >= 0)
    return cli_error(EXIT_USAGE, cmd, "%s %s: value %d is %s", what, path, bad,
                     scales ? "not an f32 value (save the scales as float32)"
                            : "not a zero point of any integer dtype");
  return 0;
}

/* One side's quantization from its two options, each a number or a .npy
 * file of one value per channel along --axis; *has 0 where neither is
 * given, 2 where it is per channel (*keep then holds its arrays). */
static int quant_of(relayout_quant *q, relayout_quant_channels *qc, int *has,
                    void **keep, const relayout_desc *d, const cli_opt *opts,
                    const char *scale, const char *zero, const char *cmd) {
  const char *s = cli_get(opts, scale), *z = cli_get(opts, zero),
             *axis = cli_get(opts, "axis");
  *q = (relayout_quant){1, 0};
  *has = s || z;
  char ws[32], wz[32];
  snprintf(ws, sizeof ws, "--%s", scale);
  snprintf(wz, sizeof wz, "--%s", zero);
  int fs = s && cli_is_npy_name(s), fz = z && cli_is_npy_name(z);
  if (s && !fs && cli_parse_scale(&q->scale, s, ws, cmd)) return EXIT_USAGE;
  if (z && !fz && cli_parse_zero_point(&q->zero_point, z, wz, cmd))
    return EXIT_USAGE;
  if (!fs && !fz) return 0;
  char names[RELAYOUT_MAX_DIMS];
  int64_t ext[RELAYOUT_MAX_DIMS];
  int n = relayout_desc_dims(d, names, ext), at = 0;
  char want = 0; /* no dim is named 0 */
  if (axis && cli_parse_dim_name(&want, axis)) want = 0;
  while (at < n && names[at] != want) at++;
  if (at == n)
    return cli_error(EXIT_USAGE, cmd,
                     "%s/%s per channel need --axis, a logical dim of the "
                     "layout (a letter, or an ND dim's index)%s%s",
                     ws, wz, axis ? "; not " : "", axis ? axis : "");
  float *scales = malloc((size_t)ext[at] * (sizeof *scales + sizeof(int32_t)));
  if (!scales) return cli_error(EXIT_WORK, cmd, "out of memory");
  int32_t *zps = (int32_t *)(void *)(scales + ext[at]);
  *keep = scales;
  for (int64_t c = 0; c < ext[at]; c++)
    scales[c] = q->scale, zps[c] = q->zero_point;
  if ((fs && read_channels(scales, NULL, ext[at], s, ws, cmd)) ||
      (fz && read_channels(NULL, zps, ext[at], z, wz, cmd)))
    return EXIT_USAGE;
  *qc = (relayout_quant_channels){names[at], ext[at], scales, zps};
  *has = 2;
  return 0;
}

int cli_float_dtype(relayout_dtype t) {
  return t == RELAYOUT_F16 || t == RELAYOUT_BF16 || t == RELAYOUT_F32 ||
         t == RELAYOUT_F64;
}

int cli_cast(relayout_desc *dst, relayout_desc *src, const relayout_layout *to,
             const relayout_layout *from, void **keep, const cli_opt *opts,
             const char *cmd) {
  relayout_quant sq, dq;
  relayout_quant_channels sc, dc;
  int has_s, has_d, rc;
  const char *names[] = {"from-scale", "from-zero-point", "scale",
                         "zero-point"};
  int files[4];
  for (int i = 0; i < 4; i++)
    files[i] =
        cli_get(opts, names[i]) && cli_is_npy_name(cli_get(opts, names[i]));
  if ((files[0] || files[1]) && (files[2] || files[3]))
    return cli_error(EXIT_USAGE, cmd,
                     "per-channel quantizations on both sides: integer casts "
                     "take per-tensor quantizations only");
  if (!files[0] && !files[1] && !files[2] && !files[3] && cli_get(opts, "axis"))
    return cli_error(EXIT_USAGE, cmd,
                     "--axis names the dim of per-channel scales or zero "
                     "points (.npy files); none is given");
  if ((rc = quant_of(&sq, &sc, &has_s, keep, src, opts, names[0], names[1],
                     cmd)) ||
      (rc = quant_of(&dq, &dc, &has_d, keep, dst, opts, names[2], names[3],
                     cmd)))
    return rc;
  const char *name = cli_get(opts, "to-dtype");
  relayout_dtype t = relayout_desc_dtype(src);
  relayout_error err;
  if (name && relayout_dtype_from_name(&t, name, &err))
    return cli_error(EXIT_USAGE, cmd, "--to-dtype: %s", err.message);
  if (has_s &&
      (relayout_desc_retype(src, from, relayout_desc_dtype(src), &sq, &err) ||
       (has_s == 2 && relayout_desc_quantize_channels(src, &sc, &err))))
    return cli_error(EXIT_USAGE, cmd, "--from-scale/--from-zero-point: %s",
                     err.message);
  if ((name || has_d) &&
      (relayout_desc_retype(dst, to, t, has_d ? &dq : NULL, &err) ||
       (has_d == 2 && relayout_desc_quantize_channels(dst, &dc, &err))))
    return cli_error(EXIT_USAGE, cmd, "%s: %s",
                     has_d ? "--scale/--zero-point" : "--to-dtype",
                     err.message);
  return 0;
}
