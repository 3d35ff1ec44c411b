/* preprocess.cl - AIPP preprocessing (docs/PREPROCESS.md): each destination
 * element computed from its frame where the frame lies (NV12's two planes
 * as they are), in the definition's integer steps and its f32 order, then
 * cast once (kernels/cast.cl) into the destination's type.
 *
 * The generator (lib/codegen/preprocess.c) writes before it: RL_T, RL_I,
 * RL_COUNT, RL_CHUNK (destination elements per work-item), RL_TRANSFORM
 * and RL_PAD (the f32 bits cast, and the layout padding's value), the
 * configuration as constants (RL_FMT 0 YUV420SP, 1 RGB888, 2 XRGB8888,
 * 3 YUV400; RL_SW, RL_SH, RL_FRAME; the crop RL_X0, RL_Y0, RL_CW, RL_CH;
 * the border RL_TOP, RL_LEFT, RL_PADV; RL_CSC, RL_RBUV, RL_AX; RL_C, the
 * channels; the arrays rl_matrix, rl_in_bias, rl_out_bias, rl_norm), and
 * either RL_PIXELS with RL_UNITS (RL_ROWS: rows, else pixels), RL_OW,
 * RL_OH, RL_CPAD (C padded) and
 * rl_at(n, c, y, x), the offset of a logical coordinate, where the layout
 * pads nothing but C; or RL_AT_N..RL_AT_W (where N, C, H and W are among
 * the logical dims) and rl_logical(o, out). With RL_ROWS, RL_SX (W is one
 * axis: a pixel's stride) has rows run RL_VW pixels at a time in vectors,
 * RL_INTERLEAVED saying a pixel's padded channels lie together, 0..CPAD-1.
 */
#pragma OPENCL FP_CONTRACT OFF

/* Pixel (x, y) of frame f: its channels as read, swaps applied. */
static void rl_pixel(__global const uchar *f, long x, long y, int *p) {
  p[0] = p[1] = p[2] = 0;
#if RL_FMT == 0 /* U V pairs, one per 2 x 2 pixels, after the Y plane */
  __global const uchar *q = f + (long)RL_SW * RL_SH + y / 2 * RL_SW + x / 2 * 2;
  p[0] = f[y * RL_SW + x];
  p[1] = q[0];
  p[2] = q[1];
#elif RL_FMT == 1
  __global const uchar *q = f + (y * RL_SW + x) * 3;
  p[0] = q[0];
  p[1] = q[1];
  p[2] = q[2];
#elif RL_FMT == 2
  __global const uchar *q = f + (y * RL_SW + x) * 4 + (RL_AX ? 0 : 1);
  p[0] = q[0];
  p[1] = q[1];
  p[2] = q[2];
#else
  p[0] = f[y * RL_SW + x];
#endif
#if RL_RBUV && RL_FMT != 3 /* NV21's V U, or B G R */
  int t = p[RL_FMT == 0 ? 1 : 0];
  p[RL_FMT == 0 ? 1 : 0] = p[2];
  p[2] = t;
#endif
}

/* floor(s / 256) for |s| < 2^27, which a sum of three products of the
 * matrix (16 bits) and a channel (9 bits) is: a shift of a non-negative */
#define RL_SHR8(s) ((((s) + (1 << 27)) >> 8) - (1 << 19))
#if RL_FMT == 0 /* from YUV: input biases first */
#define RL_IN(p, j) ((p)[j] - rl_in_bias[j])
#define RL_OUT(i) 0
#else /* to YUV: output biases after */
#define RL_IN(p, j) (p)[j]
#define RL_OUT(i) rl_out_bias[i]
#endif
/* Output channel i of the matrix on channels p (ints, or int vectors):
 * >> 8 towards minus infinity, then 0..255. */
#define RL_CONVERT(p, i)                                                       \
  clamp(RL_SHR8(rl_matrix[3 * (i)] * RL_IN(p, 0) +                             \
                rl_matrix[3 * (i) + 1] * RL_IN(p, 1) +                         \
                rl_matrix[3 * (i) + 2] * RL_IN(p, 2)) +                        \
            RL_OUT(i),                                                         \
        0, 255)
#if RL_CSC
#define RL_CHANNEL(p, c) RL_CONVERT(p, c)
#else
#define RL_CHANNEL(p, c) (p)[c]
#endif
/* Channel c's normalization of x (a float or a float vector), in f32, one
 * rounding per operation. */
#define RL_NORM(x, c)                                                          \
  (((x) - as_float(rl_norm[c]) - as_float(rl_norm[3 + (c)])) *                 \
   as_float(rl_norm[6 + (c)]))

/* The C channels' values of source pixel (sx, sy) of frame f: AIPP's steps
 * from the colour conversion on. */
static void rl_steps(__global const uchar *f, long sx, long sy, float *v) {
  int p[3];
  rl_pixel(f, sx, sy, p);
  for (int c = 0; c < RL_C; c++)
    v[c] = RL_NORM((float)RL_CHANNEL(p, c), c);
}

/* The C channels' values of output pixel (x, y) of frame n, counted from
 * the crop's corner: AIPP's steps, or the padding value outside the crop. */
static void rl_values(__global const uchar *frames, long n, long y, long x,
                      float *v) {
  for (int c = 0; c < RL_C; c++) v[c] = as_float((uint)RL_PADV);
  if (y < 0 || y >= RL_CH || x < 0 || x >= RL_CW) return;
  rl_steps(frames + n * (long)RL_FRAME, RL_X0 + x, RL_Y0 + y, v);
}

#ifdef RL_SX /* kernels/preprocess_rows.cl, after this file */
#define RL_VW 16
static void rl_run(__global const uchar *frames, __global RL_T *dst, RL_I n,
                   RL_I y, RL_I x);
#endif

/* RL_CHUNK units of work per work-item. With RL_PIXELS a unit is a pixel
 * (GPUs: neighbours write neighbours) or, with RL_ROWS, a row of pixels
 * (CPU devices: along a row the offsets step evenly); each pixel's channels
 * are computed once and written where the layout puts them (rl_at), then
 * C's padding: each of the output's elements once, as RL_PIXELS layouts
 * have no other padding. Otherwise a unit is an element, from its logical
 * coordinates: any layout. */
__kernel void rl_preprocess(__global const uchar *restrict frames,
                            long frames_off, __global RL_T *restrict dst,
                            long dst_off) {
  RL_I first = (RL_I)get_global_id(0) * RL_CHUNK;
  frames += frames_off;
  dst += dst_off;
  float v[3];
#ifdef RL_PIXELS
  for (RL_I u = first; u < first + RL_CHUNK && u < RL_UNITS; u++) {
#ifdef RL_ROWS
    RL_I y = u % RL_OH, n = u / RL_OH;
    for (RL_I x = 0; x < RL_OW; x++) {
#ifdef RL_SX /* the crop's part of the row, RL_VW pixels at a time */
      if (y >= RL_TOP && y < RL_TOP + RL_CH && x >= RL_LEFT &&
          x + RL_VW <= RL_LEFT + RL_CW) {
        rl_run(frames, dst, n, y, x);
        x += RL_VW - 1;
        continue;
      }
#endif
#else
    RL_I x = u % RL_OW, y = u / RL_OW % RL_OH, n = u / (RL_OW * RL_OH);
    {
#endif
      rl_values(frames, n, y - RL_TOP, x - RL_LEFT, v);
      for (int c = 0; c < RL_C; c++)
        dst[rl_at(n, c, y, x)] = RL_TRANSFORM(as_uint(v[c]));
      for (int c = RL_C; c < RL_CPAD; c++) dst[rl_at(n, c, y, x)] = RL_PAD;
    }
  }
#else
  for (RL_I o = first; o < first + RL_CHUNK && o < RL_COUNT; o++) {
    RL_I at[4];
    if (!rl_logical(o, at)) {
      dst[o] = RL_PAD;
      continue;
    }
    rl_values(frames, at[RL_AT_N], at[RL_AT_H] - RL_TOP, at[RL_AT_W] - RL_LEFT,
              v);
    dst[o] = RL_TRANSFORM(as_uint(v[at[RL_AT_C]]));
  }
#endif
}
