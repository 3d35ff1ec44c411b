/* cast.c - the options of a cast: --to-dtype, a destination's --scale and
 * --zero-point, a quantized source's --from-scale and --from-zero-point */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

/* One side's quantization from its two options; *has 0 where neither is
 * given. */
static int quant_of(relayout_quant *q, int *has, const cli_opt *opts,
                    const char *scale, const char *zero, const char *cmd) {
  const char *s = cli_get(opts, scale), *z = cli_get(opts, zero);
  *q = (relayout_quant){1, 0};
  *has = s || z;
  char what[32];
  snprintf(what, sizeof what, "--%s", scale);
  if (s && cli_parse_scale(&q->scale, s, what, cmd)) return EXIT_USAGE;
  snprintf(what, sizeof what, "--%s", zero);
  return z ? cli_parse_zero_point(&q->zero_point, z, what, cmd) : 0;
}

int cli_float_dtype(relayout_dtype t) {
  return t == RELAYOUT_F16 || t == RELAYOUT_BF16 || t == RELAYOUT_F32 ||
         t == RELAYOUT_F64;
}

int cli_cast(relayout_desc *dst, relayout_desc *src, const relayout_layout *to,
             const relayout_layout *from, const cli_opt *opts,
             const char *cmd) {
  relayout_quant sq, dq;
  int has_s, has_d, rc;
  if ((rc =
           quant_of(&sq, &has_s, opts, "from-scale", "from-zero-point", cmd)) ||
      (rc = quant_of(&dq, &has_d, opts, "scale", "zero-point", cmd)))
    return rc;
  const char *name = cli_get(opts, "to-dtype");
  relayout_dtype t = relayout_desc_dtype(src);
  relayout_error err;
  if (name && relayout_dtype_from_name(&t, name, &err))
    return cli_error(EXIT_USAGE, cmd, "--to-dtype: %s", err.message);
  if (has_s &&
      relayout_desc_retype(src, from, relayout_desc_dtype(src), &sq, &err))
    return cli_error(EXIT_USAGE, cmd, "--from-scale/--from-zero-point: %s",
                     err.message);
  if ((name || has_d) &&
      relayout_desc_retype(dst, to, t, has_d ? &dq : NULL, &err))
    return cli_error(EXIT_USAGE, cmd, "%s: %s",
                     has_d ? "--scale/--zero-point" : "--to-dtype",
                     err.message);
  return 0;
}
