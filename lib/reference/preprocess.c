/* preprocess.c - the scalar reference of preprocessing: each output element
 * straight from docs/PREPROCESS.md's definition (its pixel read where it
 * lies, swapped, converted, normalized in f32, rounded once to the output
 * type by cast.c), written at its logical coordinate's offset */
#include "internal.h"
#include "relayout_preprocess.h"

#include <string.h>

/* Pixel (x, y) of frame f: its channels as read, swaps applied. */
static void pixel(const relayout_aipp *a, const uint8_t *f, int64_t x,
                  int64_t y, int32_t *p) {
  int64_t w = a->src_image_size_w, h = a->src_image_size_h;
  const uint8_t *q;
  p[0] = p[1] = p[2] = 0;
  switch (a->input_format) {
  case RELAYOUT_YUV420SP_U8: /* U V pairs, one per 2 x 2 pixels */
    q = f + w * h + y / 2 * w + x / 2 * 2;
    p[0] = f[y * w + x];
    p[1] = q[0];
    p[2] = q[1];
    break;
  case RELAYOUT_RGB888_U8:
  case RELAYOUT_XRGB8888_U8:
    q = a->input_format == RELAYOUT_RGB888_U8
            ? f + (y * w + x) * 3
            : f + (y * w + x) * 4 + !a->ax_swap_switch;
    p[0] = q[0];
    p[1] = q[1];
    p[2] = q[2];
    break;
  case RELAYOUT_YUV400_U8: p[0] = f[y * w + x]; return;
  }
  if (a->rbuv_swap_switch) { /* NV21's V U, or B G R */
    int32_t t = p[a->input_format == RELAYOUT_YUV420SP_U8 ? 1 : 0];
    p[a->input_format == RELAYOUT_YUV420SP_U8 ? 1 : 0] = p[2];
    p[2] = t;
  }
}

/* v >> 8 as AIPP's hardware shifts: towards minus infinity. */
static int32_t shift8(int32_t v) {
  return v >= 0 ? v / 256 : -((255 - v) / 256);
}

/* The matrix: from YUV (input biases first), else to YUV (output biases
 * after); each channel clamped to 0..255. */
static void csc(const relayout_aipp *a, const int32_t *p, int32_t *out) {
  int yuv = a->input_format == RELAYOUT_YUV420SP_U8;
  for (int i = 0; i < 3; i++) {
    int32_t sum = 0;
    for (int j = 0; j < 3; j++)
      sum += a->matrix[i][j] * (yuv ? p[j] - a->input_bias[j] : p[j]);
    int32_t v = shift8(sum) + (yuv ? 0 : a->output_bias[i]);
    out[i] = v < 0 ? 0 : v > 255 ? 255 : v;
  }
}

relayout_status relayout_preprocess_ref(const relayout_aipp *a,
                                        const relayout_desc *dst, void *dst_buf,
                                        size_t dst_size, const void *frames,
                                        size_t frames_size,
                                        relayout_error *err) {
  if (!a || !dst || !dst_buf || !frames)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  const rl_desc *d = rl_cd(dst);
  int at[4];
  int64_t frame, need;
  relayout_status s = rl_preprocess_check(a, d, at, &frame, err);
  if (s) return s;
  if ((s = rl_preprocess_sizes(d, dst_size, frame, frames_size, err))) return s;
  rl_desc_size_bytes(&need, d, NULL);
  int64_t n = d->dims[at[0]], c = d->dims[at[1]], h = d->dims[at[2]],
          w = d->dims[at[3]];
  rl_desc f32 = {.dtype = RELAYOUT_F32, .scale = 1};
  memset(dst_buf, rl_pad_byte(d), (size_t)need);
  int64_t x0 = a->crop ? a->load_start_pos_w : 0,
          y0 = a->crop ? a->load_start_pos_h : 0, top = a->top_padding_size,
          left = a->left_padding_size,
          cw = a->crop ? a->crop_size_w : a->src_image_size_w,
          ch = a->crop ? a->crop_size_h : a->src_image_size_h;
  int64_t coord[RELAYOUT_MAX_DIMS] = {0};
  for (int64_t i = 0; i < n; i++)
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = 0; x < w; x++) {
        int32_t p[3], q[3];
        int inside = y >= top && y < top + ch && x >= left && x < left + cw;
        if (inside) {
          pixel(a, (const uint8_t *)frames + i * frame, x0 + x - left,
                y0 + y - top, p);
          if (a->csc_switch) {
            csc(a, p, q);
            memcpy(p, q, sizeof q);
          }
        }
        for (int64_t k = 0; k < c; k++) {
          float v = a->padding_value;
          if (inside) { /* in f32, in this order: one rounding per step */
            v = (float)p[k] - a->mean_chn[k];
            v = v - a->min_chn[k];
            v = v * a->var_reci_chn[k];
          }
          coord[at[0]] = i;
          coord[at[1]] = k;
          coord[at[2]] = y;
          coord[at[3]] = x;
          rl_cast_element(dst_buf, rl_offset(d, coord), d, (const uint8_t *)&v,
                          0, &f32, coord);
        }
      }
  return RELAYOUT_OK;
}
