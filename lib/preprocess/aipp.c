/* aipp.c - an AIPP configuration: its defaults, its checks (alone and
 * against an output), and CANN's aipp_op file parsed into it
 * (docs/PREPROCESS.md) */
#include "internal.h"
#include "relayout_preprocess.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void relayout_aipp_defaults(relayout_aipp *a) {
  memset(a, 0, sizeof *a);
  a->input_format = RELAYOUT_RGB888_U8;
  for (int i = 0; i < 3; i++) a->var_reci_chn[i] = 1;
}

relayout_status relayout_aipp_normalize(relayout_aipp *a, const float mean[3],
                                        const float std[3], double scale,
                                        relayout_error *err) {
  if (!a || !mean || !std)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  if (!(scale > 0) || !isfinite(scale))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "the scale must be positive and finite, not %g", scale);
  for (int k = 0; k < 3; k++)
    if (!isfinite(mean[k]) || !isfinite(std[k]) || std[k] == 0)
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "channel %d: the mean must be finite and the std finite "
                     "and not zero (mean %g, std %g)",
                     k, (double)mean[k], (double)std[k]);
  for (int k = 0; k < 3; k++) {
    a->mean_chn[k] = 0;
    a->min_chn[k] = (float)(mean[k] / scale);
    a->var_reci_chn[k] = (float)(scale / std[k]);
  }
  return RELAYOUT_OK;
}

relayout_status relayout_aipp_check(const relayout_aipp *a, int64_t *channels,
                                    int64_t *height, int64_t *width,
                                    int64_t *frame_bytes, relayout_error *err) {
  if (!a) return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  const int64_t max = (int64_t)1 << 24; /* pixels a side, and paddings */
  int64_t w = a->src_image_size_w, h = a->src_image_size_h;
  int yuv = a->input_format == RELAYOUT_YUV420SP_U8;
  if ((unsigned)a->input_format > RELAYOUT_YUV400_U8)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "input_format: unknown (%d)",
                   (int)a->input_format);
  if (w < 1 || h < 1 || w > max || h > max)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "src_image_size_w and src_image_size_h: 1 to %lld "
                   "(given %lld x %lld)",
                   (long long)max, (long long)w, (long long)h);
  if (yuv && (w % 2 || h % 2))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "a YUV420SP_U8 frame has an even width and height (given "
                   "%lld x %lld)",
                   (long long)w, (long long)h);
  if (!a->crop && (a->load_start_pos_w || a->load_start_pos_h ||
                   a->crop_size_w || a->crop_size_h))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "load_start_pos and crop_size are for a crop: set crop: "
                   "true, or leave them out");
  int64_t cw = a->crop ? a->crop_size_w : w, ch = a->crop ? a->crop_size_h : h;
  int64_t x0 = a->crop ? a->load_start_pos_w : 0,
          y0 = a->crop ? a->load_start_pos_h : 0;
  if (a->crop &&
      (cw < 1 || ch < 1 || x0 < 0 || y0 < 0 || x0 > w - cw || y0 > h - ch))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "the crop (%lld x %lld from %lld, %lld) does not fit in "
                   "the %lld x %lld frame",
                   (long long)cw, (long long)ch, (long long)x0, (long long)y0,
                   (long long)w, (long long)h);
  if (yuv && (x0 % 2 || y0 % 2))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "load_start_pos_w and load_start_pos_h are even for "
                   "YUV420SP_U8, as AIPP requires (given %lld, %lld)",
                   (long long)x0, (long long)y0);
  if (a->csc_switch && a->input_format == RELAYOUT_YUV400_U8)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "csc_switch: YUV400_U8 has one channel to convert");
  int64_t pad[4] = {a->left_padding_size, a->right_padding_size,
                    a->top_padding_size, a->bottom_padding_size};
  for (int i = 0; i < 4; i++)
    if (a->padding ? pad[i] < 0 || pad[i] > max : pad[i] != 0)
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "padding sizes: 0 to %lld, and only with padding "
                     "(given %lld)",
                     (long long)max, (long long)pad[i]);
  for (int i = 0; i < 3; i++)
    if (!isfinite(a->mean_chn[i]) || !isfinite(a->min_chn[i]) ||
        !isfinite(a->var_reci_chn[i]) || !isfinite(a->padding_value))
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "mean_chn, min_chn, var_reci_chn and padding_value are "
                     "finite");
  if (channels) *channels = a->input_format == RELAYOUT_YUV400_U8 ? 1 : 3;
  if (height) *height = pad[2] + ch + pad[3];
  if (width) *width = pad[0] + cw + pad[1];
  if (frame_bytes)
    *frame_bytes = w * h *
                   (yuv                                       ? 3
                    : a->input_format == RELAYOUT_RGB888_U8   ? 3
                    : a->input_format == RELAYOUT_XRGB8888_U8 ? 4
                                                              : 1) /
                   (yuv ? 2 : 1);
  return RELAYOUT_OK;
}

/* ---- the file: aipp_op { key : value ... } */

typedef enum { SIZE, INT, BOOL, FLOAT, FORMAT, MODE } kind; /* SIZE: int64_t */

/* Every key relayout implements, where its value goes, and its range. */
#define F(field) offsetof(relayout_aipp, field)
static const struct key {
  const char *name;
  kind k;
  size_t at;
  int64_t lo, hi;
} keys[] = {
    {"aipp_mode", MODE, 0, 0, 0},
    {"input_format", FORMAT, F(input_format), 0, 0},
    {"src_image_size_w", SIZE, F(src_image_size_w), 0, 1 << 24},
    {"src_image_size_h", SIZE, F(src_image_size_h), 0, 1 << 24},
    {"crop", BOOL, F(crop), 0, 1},
    {"load_start_pos_w", SIZE, F(load_start_pos_w), 0, 1 << 24},
    {"load_start_pos_h", SIZE, F(load_start_pos_h), 0, 1 << 24},
    {"crop_size_w", SIZE, F(crop_size_w), 0, 1 << 24},
    {"crop_size_h", SIZE, F(crop_size_h), 0, 1 << 24},
    {"csc_switch", BOOL, F(csc_switch), 0, 1},
    {"rbuv_swap_switch", BOOL, F(rbuv_swap_switch), 0, 1},
    {"ax_swap_switch", BOOL, F(ax_swap_switch), 0, 1},
    {"matrix_r0c0", INT, F(matrix[0][0]), -32768, 32767},
    {"matrix_r0c1", INT, F(matrix[0][1]), -32768, 32767},
    {"matrix_r0c2", INT, F(matrix[0][2]), -32768, 32767},
    {"matrix_r1c0", INT, F(matrix[1][0]), -32768, 32767},
    {"matrix_r1c1", INT, F(matrix[1][1]), -32768, 32767},
    {"matrix_r1c2", INT, F(matrix[1][2]), -32768, 32767},
    {"matrix_r2c0", INT, F(matrix[2][0]), -32768, 32767},
    {"matrix_r2c1", INT, F(matrix[2][1]), -32768, 32767},
    {"matrix_r2c2", INT, F(matrix[2][2]), -32768, 32767},
    {"input_bias_0", INT, F(input_bias[0]), 0, 255},
    {"input_bias_1", INT, F(input_bias[1]), 0, 255},
    {"input_bias_2", INT, F(input_bias[2]), 0, 255},
    {"output_bias_0", INT, F(output_bias[0]), 0, 255},
    {"output_bias_1", INT, F(output_bias[1]), 0, 255},
    {"output_bias_2", INT, F(output_bias[2]), 0, 255},
    {"mean_chn_0", FLOAT, F(mean_chn[0]), 0, 0},
    {"mean_chn_1", FLOAT, F(mean_chn[1]), 0, 0},
    {"mean_chn_2", FLOAT, F(mean_chn[2]), 0, 0},
    {"min_chn_0", FLOAT, F(min_chn[0]), 0, 0},
    {"min_chn_1", FLOAT, F(min_chn[1]), 0, 0},
    {"min_chn_2", FLOAT, F(min_chn[2]), 0, 0},
    {"var_reci_chn_0", FLOAT, F(var_reci_chn[0]), 0, 0},
    {"var_reci_chn_1", FLOAT, F(var_reci_chn[1]), 0, 0},
    {"var_reci_chn_2", FLOAT, F(var_reci_chn[2]), 0, 0},
    {"padding", BOOL, F(padding), 0, 1},
    {"left_padding_size", SIZE, F(left_padding_size), 0, 1 << 24},
    {"right_padding_size", SIZE, F(right_padding_size), 0, 1 << 24},
    {"top_padding_size", SIZE, F(top_padding_size), 0, 1 << 24},
    {"bottom_padding_size", SIZE, F(bottom_padding_size), 0, 1 << 24},
    {"padding_value", FLOAT, F(padding_value), 0, 0},
};
#undef F

static const char *const formats[] = {"YUV420SP_U8", "RGB888_U8", "XRGB8888_U8",
                                      "YUV400_U8"};

/* Whether c may be part of a word: letters, digits, '_', '.', '+', '-'. */
static int word_char(char c) {
  return c == '_' || c == '.' || c == '+' || c == '-' ||
         (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z');
}

/* The next token of text from *at: a word, or any other single byte ({, },
 * :, or one the caller refuses); its length, 0 only at the end. Comments
 * and blanks are skipped, lines counted. */
static size_t token(const char *text, size_t len, size_t *at, int *line) {
  for (;;) {
    while (*at < len && memchr(" \t\r\n", text[*at], 4))
      *line += text[(*at)++] == '\n';
    if (*at < len && text[*at] == '#')
      while (*at < len && text[*at] != '\n') (*at)++;
    else
      break;
  }
  size_t n = 0;
  if (*at >= len) return 0;
  while (*at + n < len && word_char(text[*at + n])) n++;
  return n ? n : 1;
}

/* value (buf, a whole token) into key k of a. */
static relayout_status set_value(relayout_aipp *a, const struct key *k,
                                 const char *buf, int line,
                                 relayout_error *err) {
  char *end;
  unsigned char *field = (unsigned char *)a + k->at;
  switch (k->k) {
  case MODE:
    if (strcmp(buf, "static"))
      return rl_fail(
          err, RELAYOUT_ERR_ARGUMENT,
          "line %d: aipp_mode %.40s: only static AIPP is implemented", line,
          buf);
    return RELAYOUT_OK;
  case FORMAT:
    for (int i = 0; i < 4; i++)
      if (!strcmp(buf, formats[i])) {
        a->input_format = (relayout_image_format)i;
        return RELAYOUT_OK;
      }
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "line %d: input_format %.40s: expected YUV420SP_U8, "
                   "RGB888_U8, XRGB8888_U8 or YUV400_U8",
                   line, buf);
  case BOOL:
    if (strcmp(buf, "true") && strcmp(buf, "false"))
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "line %d: %s: expected true or false, not '%.40s'", line,
                     k->name, buf);
    *(int *)field = !strcmp(buf, "true");
    return RELAYOUT_OK;
  case FLOAT: {
    errno = 0;
    float v = strtof(buf, &end);
    if (end == buf || *end || !isfinite(v))
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "line %d: %s: expected a finite number, not '%.40s'", line,
                     k->name, buf);
    if (errno == ERANGE && v == 0)
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "line %d: %s: '%.40s' is too small for f32 (it would "
                     "read as 0)",
                     line, k->name, buf);
    memcpy(field, &v, sizeof v);
    return RELAYOUT_OK;
  }
  case SIZE:
  case INT: {
    long long v = strtoll(buf, &end, 10);
    if (end == buf || *end || v < k->lo || v > k->hi)
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "line %d: %s: expected a whole number from %lld to %lld, "
                     "not '%.40s'",
                     line, k->name, (long long)k->lo, (long long)k->hi, buf);
    if (k->k == SIZE)
      *(int64_t *)field = v;
    else
      *(int32_t *)field = (int32_t)v;
    return RELAYOUT_OK;
  }
  }
  return RELAYOUT_OK;
}

/* value (n bytes, a token, of any length) into key k of a. */
static relayout_status set(relayout_aipp *a, const struct key *k,
                           const char *value, size_t n, int line,
                           relayout_error *err) {
  char *buf = malloc(n + 1);
  if (!buf) return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  memcpy(buf, value, n);
  buf[n] = 0;
  relayout_status s = set_value(a, k, buf, line, err);
  free(buf);
  return s;
}

relayout_status relayout_aipp_parse(relayout_aipp *out, const char *text,
                                    size_t len, relayout_error *err) {
  if (!out || (!text && len))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  relayout_aipp a;
  relayout_aipp_defaults(&a);
  size_t at = len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0, n; /* BOM */
  int line = 1, seen[sizeof keys / sizeof keys[0]] = {0}, blocks = 0;
  while ((n = token(text, len, &at, &line))) {
    if (n != 7 || memcmp(text + at, "aipp_op", 7))
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "line %d: expected aipp_op { ... }, not '%.*s'", line,
                     (int)(n > 40 ? 40 : n), text + at);
    at += n;
    if (++blocks > 1)
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "line %d: a second aipp_op: one model input at a time",
                     line);
    if (token(text, len, &at, &line) != 1 || text[at++] != '{')
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "line %d: expected '{' after aipp_op", line);
    for (;;) {
      if (!(n = token(text, len, &at, &line)))
        return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                       "line %d: the file ends inside aipp_op: expected '}'",
                       line);
      if (n == 1 && text[at] == '}') {
        at++;
        break;
      }
      const char *name = text + at;
      size_t name_len = n;
      if (!word_char(*name))
        return rl_fail(
            err, RELAYOUT_ERR_ARGUMENT, "line %d: expected a key, not '%c'",
            line, (unsigned char)*name >= ' ' && *name != 127 ? *name : '?');
      int key_line = line;
      at += n;
      size_t k = 0;
      while (k < sizeof keys / sizeof keys[0] &&
             (strlen(keys[k].name) != name_len ||
              memcmp(keys[k].name, name, name_len)))
        k++;
      if (k == sizeof keys / sizeof keys[0])
        return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                       "line %d: '%.*s': not a static AIPP key relayout "
                       "implements (docs/PREPROCESS.md lists them)",
                       key_line, (int)(name_len > 40 ? 40 : name_len), name);
      if (seen[k]++)
        return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "line %d: %s given twice",
                       key_line, keys[k].name);
      if (token(text, len, &at, &line) != 1 || text[at++] != ':')
        return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                       "line %d: expected ':' after %s", key_line,
                       keys[k].name);
      n = token(text, len, &at, &line);
      if (!n || line != key_line || !word_char(text[at]))
        return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "line %d: %s has no value",
                       key_line, keys[k].name);
      relayout_status s = set(&a, &keys[k], text + at, n, key_line, err);
      if (s) return s;
      at += n;
    }
  }
  if (!blocks)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "no aipp_op { ... } in the configuration");
  relayout_status s = relayout_aipp_check(&a, NULL, NULL, NULL, NULL, err);
  if (!s) *out = a;
  return s;
}

relayout_status rl_preprocess_check(const relayout_aipp *a, const rl_desc *d,
                                    int *at, int64_t *frame,
                                    relayout_error *err) {
  int64_t c, h, w;
  relayout_status s = relayout_aipp_check(a, &c, &h, &w, frame, err);
  if (s) return s;
  at[0] = at[1] = at[2] = at[3] = -1; /* where N, C, H, W are in d */
  for (int i = 0; i < d->ndims; i++) {
    const char *k = strchr("NCHW", d->names[i]);
    if (k && d->names[i]) at[k - "NCHW"] = i;
  }
  if (d->ndims != 4 || at[0] < 0 || at[1] < 0 || at[2] < 0 || at[3] < 0)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "the output's logical dims must be N, C, H and W");
  if (d->dims[at[1]] != c || d->dims[at[2]] != h || d->dims[at[3]] != w)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "the output has C, H, W = %lld, %lld, %lld; the "
                   "configuration makes %lld, %lld, %lld",
                   (long long)d->dims[at[1]], (long long)d->dims[at[2]],
                   (long long)d->dims[at[3]], (long long)c, (long long)h,
                   (long long)w);
  if (d->base)
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "the output layout starts %lld elements into its buffer "
                   "(a TPU offset=); preprocessing writes from offset 0",
                   (long long)d->base);
  rl_desc f32 = {.dtype = RELAYOUT_F32, .scale = 1};
  return rl_check_cast(d, &f32, err);
}

int64_t rl_preprocess_frames(const rl_desc *d) {
  for (int i = 0; i < d->ndims; i++)
    if (d->names[i] == 'N') return d->dims[i];
  return 0; /* (rl_preprocess_check refuses such a d) */
}

relayout_status rl_preprocess_sizes(const rl_desc *d, size_t dst_size,
                                    int64_t frame, size_t frames_size,
                                    relayout_error *err) {
  int64_t n = rl_preprocess_frames(d), need;
  if (__builtin_mul_overflow(n, frame, &need) || (uint64_t)need > frames_size)
    return rl_fail(err, RELAYOUT_ERR_BUFFER,
                   "the frames hold %zu bytes; %lld frames of %lld bytes "
                   "need more",
                   frames_size, (long long)n, (long long)frame);
  return rl_check_size(d, dst_size, "destination", err);
}
