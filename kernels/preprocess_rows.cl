/* preprocess_rows.cl - a row's pixels inside the crop, RL_VW (16) at a
 * time in vectors, for CPU devices (kernels/preprocess.cl's RL_ROWS): the
 * same steps as a pixel's, on int16 and float16, then stores that follow
 * the layout: a vector a channel where W's stride is 1, the pixels' block
 * filled with padding and then their channels where they are interleaved,
 * else element by element. Generated before it: RL_SX, W's stride, and
 * RL_INTERLEAVED. */

/* rl_pixel for RL_VW pixels from (sx, sy) on, each channel a vector */
static void rl_pixels(__global const uchar *f, long sx, long sy, int16 *p) {
  p[1] = p[2] = 0;
#if RL_FMT == 0 /* sx is even: the U V pairs from sx on serve two pixels */
  uchar16 uv = vload16(0, f + RL_SW * RL_SH + sy / 2 * RL_SW + sx);
  p[0] = convert_int16(vload16(0, f + sy * RL_SW + sx));
  p[1] = convert_int16(uv.s0022446688aaccee);
  p[2] = convert_int16(uv.s1133557799bbddff);
#elif RL_FMT == 1 /* 48 bytes, every third one a channel's */
  __global const uchar *q = f + (sy * RL_SW + sx) * 3;
  uchar16 a = vload16(0, q), b = vload16(1, q), c = vload16(2, q);
  p[0] = convert_int16(
      (uchar16)(a.s0369, a.sc, a.sf, b.s258b, b.se, c.s147a, c.sd));
  p[1] = convert_int16(
      (uchar16)(a.s147a, a.sd, b.s0369, b.sc, b.sf, c.s258b, c.se));
  p[2] = convert_int16(
      (uchar16)(a.s258b, a.se, b.s147a, b.sd, c.s0369, c.sc, c.sf));
#elif RL_FMT == 2 /* 64 bytes, four pixels in each vector */
  __global const uchar *q = f + (sy * RL_SW + sx) * 4;
  uchar16 a = vload16(0, q), b = vload16(1, q), c = vload16(2, q),
          d = vload16(3, q);
#define RL_BYTES(k) convert_int16((uchar16)(a.s##k, b.s##k, c.s##k, d.s##k))
#if RL_AX /* RGBX */
  p[0] = RL_BYTES(048c);
  p[1] = RL_BYTES(159d);
  p[2] = RL_BYTES(26ae);
#else
  p[0] = RL_BYTES(159d);
  p[1] = RL_BYTES(26ae);
  p[2] = RL_BYTES(37bf);
#endif
#else
  p[0] = convert_int16(vload16(0, f + sy * RL_SW + sx));
#endif
#if RL_RBUV && RL_FMT != 3
  int16 t = p[RL_FMT == 0 ? 1 : 0];
  p[RL_FMT == 0 ? 1 : 0] = p[2];
  p[2] = t;
#endif
}

/* The destination's elements of a float16 (RL_TRANSFORM_V), and a float16
 * stored as them (RL_STORE_V), where the type has a vector form (f32, f16,
 * bf16: the bits rl_cast gives); other types go element by element. */
#if !defined(RL_CD_M)
#define RL_TV uint16
#define RL_TRANSFORM_V(v) as_uint16(v)
#elif RL_CD_M == 10 && RL_CD_E == 5
#define RL_TV ushort16
#define RL_TRANSFORM_V(v) rl_f16_of_f32_16(as_uint16(v))
/* f16 stored rounded: cheaper than a round trip through private memory */
#define RL_STORE_V(v, q) vstore_half16_rte(v, 0, (__global half *)(q))
#elif RL_CD_M == 7 && RL_CD_E == 8
#define RL_TV ushort16
#define RL_TRANSFORM_V(v) convert_ushort16(rl_bf16_of_f32_16(as_uint16(v)))
#endif
#ifndef RL_STORE_V
#define RL_STORE_V(v, q) vstore16(RL_TRANSFORM_V(v), 0, q)
#endif

static void rl_run(__global const uchar *frames, __global RL_T *dst, RL_I n,
                   RL_I y, RL_I x) {
  int16 p[3];
  float16 v[RL_C];
  rl_pixels(frames + n * (long)RL_FRAME, RL_X0 + x - RL_LEFT,
            RL_Y0 + y - RL_TOP, p);
#pragma unroll
  for (int c = 0; c < RL_C; c++)
    v[c] = RL_NORM(convert_float16(RL_CHANNEL(p, c)), c);
  RL_I at = rl_at(n, 0, y, x);
#if RL_SX == 1 && defined(RL_TRANSFORM_V) /* planar: a vector a channel */
  for (int c = 0; c < RL_C; c++)
    RL_STORE_V(v[c], dst + at + rl_at(0, c, 0, 0));
  for (int c = RL_C; c < RL_CPAD; c++)
    vstore16((RL_TV)RL_PAD, 0, dst + at + rl_at(0, c, 0, 0));
#elif RL_INTERLEAVED && defined(RL_TRANSFORM_V) /* padding, then channels */
  RL_TV t[RL_C];
#pragma unroll
  for (int c = 0; c < RL_C; c++) t[c] = RL_TRANSFORM_V(v[c]);
  if (RL_CPAD > RL_C)
    for (int k = 0; k < RL_VW * RL_CPAD / 16; k++) /* the whole block */
      vstore16((RL_TV)RL_PAD, k, dst + at);
#pragma unroll
  for (int i = 0; i < RL_VW; i++)
#pragma unroll
    for (int c = 0; c < RL_C; c++) dst[at + i * RL_SX + c] = t[c][i];
#else
  for (int i = 0; i < RL_VW; i++) {
    for (int c = 0; c < RL_C; c++)
      dst[at + i * RL_SX + rl_at(0, c, 0, 0)] = RL_TRANSFORM(as_uint(v[c][i]));
    for (int c = RL_C; c < RL_CPAD; c++)
      dst[at + i * RL_SX + rl_at(0, c, 0, 0)] = RL_PAD;
  }
#endif
}
