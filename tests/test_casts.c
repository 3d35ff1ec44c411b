/* test_casts.c - casts on an OpenCL device, byte for byte
 *
 * Every dtype pair a cast allows (floats to floats, quantizing, dequantizing,
 * integers to integers with zero points) at random scales and zero points,
 * between named formats and random grammar layouts at odd extents, on
 * sources sprinkled with the values casts get wrong (NaNs, infinities,
 * signed zeros, subnormals, the largest finite values): the device's output,
 * written over a poisoned buffer, equals the reference's. The cases take
 * turns on two engines: the generic kernels and the specialised ones (CPU
 * boxes on a CPU device, stage boxes on a GPU, and gathers; casts to and
 * from 4-bit types are gathers only, and the generic engine leaves them to
 * the reference, saying so). The tests of the CPU
 * boxes' ways run on a third engine, the CPU families' on any device, which
 * streams its stores wherever a box can.
 * Then a batch mixing casts and moves, a cast between OpenCL buffers at
 * offsets, a quantized destination's padding (its zero point), values
 * half-way between two integers quantized, casts per channel (quantizing and
 * dequantizing, in slabs too), and the refusals. The device is
 * RELAYOUT_TEST_DEVICE, else "cpu". The values themselves are checked against
 * numpy by test_casts.py.
 */
#include "check.h"
#include "random_layout.h"
#include "relayout_cl.h"

#include <float.h>
#include <math.h>

enum { GENERIC, SPECIALISED, BOXES, ENGINES };
static relayout_engine *engines[ENGINES];
static int boxes[2]; /* casts run through a stage box, a CPU box */

typedef struct cast_pair {
  relayout_dtype s, d;
} cast_pair;

#define F16  RELAYOUT_F16
#define BF16 RELAYOUT_BF16
#define F32  RELAYOUT_F32
#define F64  RELAYOUT_F64
#define I8   RELAYOUT_I8
#define U8   RELAYOUT_U8
#define I4   RELAYOUT_I4
#define U4   RELAYOUT_U4
static const cast_pair pairs[] = {
    {F16, BF16}, {F16, F32},  {F16, F64}, {BF16, F16}, {BF16, F32}, {BF16, F64},
    {F32, F16},  {F32, BF16}, {F32, F64}, {F64, F16},  {F64, BF16}, {F64, F32},
    {F32, I8},   {F32, U8},   {F32, I4},  {F32, U4},   {F16, I8},   {F16, U8},
    {BF16, I8},  {BF16, U4},  {I8, F32},  {I8, F16},   {I8, BF16},  {I8, F64},
    {U8, F32},   {U8, F16},   {U8, BF16}, {U4, F32},   {I4, F16},   {U8, I8},
    {I8, U8},    {I8, I8},    {U8, U4},   {I4, U8},
};
enum { NPAIRS = sizeof pairs / sizeof pairs[0] };

static int is_int(relayout_dtype t) {
  return t == I8 || t == U8 || t == I4 || t == U4;
}

static int is_nibble(relayout_dtype t) { return t == I4 || t == U4; }

static int unit_quant; /* random_quant gives scale 1 and zero point 0 */

/* A random quantization for an integer dtype. */
static relayout_quant random_quant(relayout_dtype t) {
  static const float scales[] = {0.5f, 0.0371f, 3.0f, 1e-3f, 1.0f};
  if (unit_quant) return (relayout_quant){1.0f, 0};
  int64_t lo = t == I8   ? -128
               : t == I4 ? -8
                         : 0,
          hi = t == I8   ? 127
               : t == U8 ? 255
               : t == I4 ? 7
                         : 15;
  return (relayout_quant){scales[rng_next() % 5], (int32_t)rng_range(lo, hi)};
}

/* Random bytes, every fifth element of a float source a special value. */
static void fill(unsigned char *p, int64_t bytes, relayout_dtype t) {
  static const uint16_t f16[] = {0x7C00, 0xFC00, 0x7E01, 0xFD00, 0x8000,
                                 0x0001, 0x03FF, 0x7BFF, 0x3C00};
  static const uint16_t bf16[] = {0x7F80, 0xFF80, 0x7FC1, 0xFF81, 0x8000,
                                  0x0001, 0x007F, 0x7F7F, 0x3F80};
  static const uint32_t f32[] = {0x7F800000, 0xFF800000, 0x7FC00123,
                                 0xFF800001, 0x80000000, 0x00000001,
                                 0x477FF000, 0x477FEFFF, 0x38800000};
  static const uint64_t f64[] = {
      0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000123,
      0xFFF0000000000001, 0x8000000000000000, 0x0000000000000001,
      0x40EFFE0000000000, 0x47EFFFFFE0000000, 0x3F10000000000000};
  for (int64_t i = 0; i < bytes; i++) p[i] = (unsigned char)rng_next();
  int size = relayout_dtype_bits(t) / 8;
  if (is_int(t)) return;
  for (int64_t i = 0; (i + 1) * size <= bytes; i += 5) {
    int k = (int)(rng_next() % 9);
    const void *v = t == F16    ? (const void *)&f16[k]
                    : t == BF16 ? (const void *)&bf16[k]
                    : t == F32  ? (const void *)&f32[k]
                                : (const void *)&f64[k];
    memcpy(p + i * size, v, (size_t)size);
  }
}

/* Element i of a float buffer of dtype t (f32, f16 or bf16), as a double. */
static double float_at(const unsigned char *p, int64_t i, relayout_dtype t) {
  uint32_t u = 0;
  if (t == F32) {
    memcpy(&u, p + 4 * i, 4);
  } else {
    uint16_t h;
    memcpy(&h, p + 2 * i, 2);
    if (t == BF16) {
      u = (uint32_t)h << 16;
    } else { /* f16: sign, 5 exponent bits, 10 fraction bits */
      int field = h >> 10 & 31;
      double frac = h & 1023, v = field == 31 ? (frac ? NAN : INFINITY)
                                  : field     ? ldexp(1024 + frac, field - 25)
                                              : ldexp(frac, -24);
      return h >> 15 ? -v : v;
    }
  }
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Random per-channel quantization arrays of n channels for dtype t. */
static void random_channels(float *scales, int32_t *zps, int64_t n,
                            relayout_dtype t) {
  for (int64_t c = 0; c < n; c++) {
    relayout_quant q = random_quant(t);
    scales[c] = q.scale * (float)(1 + c % 3);
    zps[c] = q.zero_point;
  }
}

enum { PER_TENSOR = -2, ANY_DIM = -1 };

/* from -> to with the pair's dtypes and random quantizations, on engine
 * `on` (generic: the generic kernels') and on the reference, over poisoned
 * buffers. With `channel` a dim (ANY_DIM: a random one), the integer side
 * is quantized per channel along it (the generic kernels take each
 * element's channel from its logical coordinates). 0 when the pair does not
 * bind or is over 1 MiB. */
static int one_cast(const char *from, const char *to, cast_pair c,
                    const int64_t *ext, relayout_engine *on, int generic,
                    int channel) {
  relayout_layout *a = NULL, *b = NULL;
  relayout_desc s, d;
  relayout_error err;
  int ok = !relayout_layout_parse(&a, from, &err) &&
           !relayout_layout_parse(&b, to, &err) &&
           !relayout_bind_extents(&s, &d, a, b, c.s, 4, ext, &err);
  relayout_quant sq = random_quant(c.s), dq = random_quant(c.d);
  if (is_int(c.s) && is_int(c.d)) dq.scale = sq.scale;
  if (ok && is_int(c.s)) CHECK_OK(relayout_desc_retype(&s, a, c.s, &sq, &e_));
  /* (a layout's alignment may not hold whole elements of the other dtype) */
  ok = ok && !relayout_desc_retype(&d, b, c.d, is_int(c.d) ? &dq : NULL, &err);
  char names[RELAYOUT_MAX_DIMS];
  int64_t extents[RELAYOUT_MAX_DIMS];
  float scales[64] = {0};
  int32_t zps[64];
  if (ok && channel != PER_TENSOR) {
    if (channel == ANY_DIM) channel = (int)(rng_next() % 4);
    relayout_desc_dims(&s, names, extents);
    CHECK(extents[channel] <= 64, "at most 64 channels: %lld",
          (long long)extents[channel]);
    ok = extents[channel] <= 64;
    if (ok)
      random_channels(scales, zps, extents[channel], is_int(c.d) ? c.d : c.s);
    relayout_quant_channels qc = {names[channel], extents[channel], scales,
                                  rng_next() % 3 ? zps : NULL};
    ok = ok &&
         !relayout_desc_quantize_channels(is_int(c.d) ? &d : &s, &qc, &err);
  }
  int64_t sb = 0, db = 0;
  relayout_desc_size_bytes(&sb, &s, NULL);
  relayout_desc_size_bytes(&db, &d, NULL);
  if (!ok || sb > 1 << 20 || db > 1 << 20) {
    relayout_layout_free(a);
    relayout_layout_free(b);
    return 0;
  }
  unsigned char *in = malloc((size_t)sb);
  fill(in, sb, c.s);
  guarded want = guarded_alloc((size_t)db, 0xA5),
          got = guarded_alloc((size_t)db, 0x5A);
  CHECK_OK(
      relayout_convert_ref(&d, want.data, want.size, &s, in, (size_t)sb, &e_));
  relayout_plan *p = NULL;
  CHECK_OK(relayout_plan_create(&p, on, &d, &s, &e_));
  float kept = scales[0];
  if (channel != PER_TENSOR) scales[0] = -1; /* the plan keeps its own copy */
  const char *kernel = relayout_plan_kernel(p),
             *family = relayout_plan_family(p), *note = relayout_plan_note(p);
  int nibbles = is_nibble(c.s) || is_nibble(c.d);
  CHECK(generic
            ? (nibbles ? !strcmp(kernel, "reference") && strstr(note, "4-bit")
                       : !strcmp(kernel, "generic"))
        : nibbles ? !strcmp(kernel, "specialised") && !strcmp(family, "gather")
                  : !strcmp(kernel, "specialised") &&
                        (!strcmp(family, "gather") ||
                         !strcmp(family, "stage") || !strcmp(family, "lines")),
        "%s %s -> %s %s%s on the %s kernels: runs on %s %s (%s)", from,
        relayout_dtype_name(c.s), to, relayout_dtype_name(c.d),
        channel != PER_TENSOR ? " per channel" : "",
        generic ? "generic" : "specialised", kernel, family, note);
  boxes[0] += !strcmp(family, "stage");
  boxes[1] += !strcmp(family, "lines");
  CHECK_OK(relayout_plan_run(p, got.data, got.size, in, (size_t)sb, &e_));
  scales[0] = kept;
  CHECK(!memcmp(got.data, want.data, (size_t)db),
        "%s %s -> %s %s (%lldx%lldx%lldx%lld)%s: equals the reference", from,
        relayout_dtype_name(c.s), to, relayout_dtype_name(c.d),
        (long long)ext[0], (long long)ext[1], (long long)ext[2],
        (long long)ext[3], channel != PER_TENSOR ? " per channel" : "");
  relayout_plan_free(p);
  guarded_free(&want);
  guarded_free(&got);
  free(in);
  relayout_layout_free(a);
  relayout_layout_free(b);
  return 1;
}

/* Odd extents, from 1 to one over a block, at most 20,000 elements. */
static void pick_extents(int64_t *ext) {
  static const int64_t edge[] = {1, 2, 3, 5, 16, 17, 33};
  do
    for (int k = 0; k < 4; k++) ext[k] = edge[rng_next() % 7];
  while (ext[0] * ext[1] * ext[2] * ext[3] > 20000);
}

/* Every pair between a named format pair and between random layouts. */
static void every_pair(void) {
  static const char *const named[][2] = {
      {"NCHW", "NC1HWC0"}, {"NHWC", "NCHW"},    {"NCHW", "FRACTAL_Z"},
      {"NCHW", "nChw16c"}, {"NC1HWC0", "NHWC"}, {"NCHW", "NCHW4"},
      {"NCHW", "NCHW"},    {"NCHW", "CHWN4"},
  };
  int run = 0;
  for (int i = 0; i < NPAIRS; i++) {
    int64_t ext[4];
    pick_extents(ext);
    /* the pair's named formats, or the next that holds both dtypes
     * (FRACTAL_Z has no 64-bit form) */
    int f = 0;
    while (f < 8 && !one_cast(named[(i + f) % 8][0], named[(i + f) % 8][1],
                              pairs[i], ext, engines[i % ENGINES],
                              i % ENGINES == GENERIC, PER_TENSOR))
      f++;
    run += f < 8;
    if (f == 8)
      printf("no named formats for %s -> %s\n", relayout_dtype_name(pairs[i].s),
             relayout_dtype_name(pairs[i].d));
    for (int tries = 0; tries < 200; tries++) {
      char a[96], b[96];
      random_layout(a, sizeof a);
      random_layout(b, sizeof b);
      pick_extents(ext);
      int on = (i + 1) % ENGINES;
      if (one_cast(a, b, pairs[i], ext, engines[on], on == GENERIC,
                   PER_TENSOR)) {
        run++;
        break;
      }
      if (tries == 199)
        printf("no random layouts for %s -> %s\n",
               relayout_dtype_name(pairs[i].s),
               relayout_dtype_name(pairs[i].d));
    }
  }
  CHECK(run == 2 * NPAIRS, "ran %d of %d casts", run, 2 * NPAIRS);
  CHECK(boxes[0] + boxes[1] > 0, "no cast ran through a box");
  printf("%d casts, %d through stage boxes, %d through CPU boxes\n", run,
         boxes[0], boxes[1]);
}

/* A batch of casts and moves, one wait: each equals the reference. */
static void batch(void) {
  static const struct {
    const char *from, *to;
    relayout_dtype s, d;
  } jobs_of[] = {{"NCHW", "NC1HWC0", F32, F16},
                 {"NHWC", "NCHW", F32, F32},
                 {"NCHW", "FRACTAL_Z", BF16, F16},
                 {"NCHW", "NCHW4", F32, I8}};
  enum { N = 4 };
  relayout_job jobs[N];
  guarded want[N], got[N];
  unsigned char *in[N];
  const int64_t ext[4] = {3, 17, 5, 7};
  for (int i = 0; i < N; i++) {
    relayout_layout *a = NULL, *b = NULL;
    relayout_desc s, d;
    CHECK_OK(relayout_layout_parse(&a, jobs_of[i].from, &e_));
    CHECK_OK(relayout_layout_parse(&b, jobs_of[i].to, &e_));
    CHECK_OK(relayout_bind_extents(&s, &d, a, b, jobs_of[i].s, 4, ext, &e_));
    relayout_quant q = {0.05f, -3};
    CHECK_OK(relayout_desc_retype(&d, b, jobs_of[i].d,
                                  is_int(jobs_of[i].d) ? &q : NULL, &e_));
    int64_t sb, db;
    relayout_desc_size_bytes(&sb, &s, NULL);
    relayout_desc_size_bytes(&db, &d, NULL);
    in[i] = malloc((size_t)sb);
    fill(in[i], sb, jobs_of[i].s);
    want[i] = guarded_alloc((size_t)db, 0xA5);
    got[i] = guarded_alloc((size_t)db, 0x5A);
    CHECK_OK(relayout_convert_ref(&d, want[i].data, want[i].size, &s, in[i],
                                  (size_t)sb, &e_));
    jobs[i] = (relayout_job){NULL, got[i].data, got[i].size, in[i], (size_t)sb};
    CHECK_OK(
        relayout_plan_create(&jobs[i].plan, engines[SPECIALISED], &d, &s, &e_));
    relayout_layout_free(a);
    relayout_layout_free(b);
  }
  CHECK_OK(relayout_plans_run(jobs, N, &e_));
  for (int i = 0; i < N; i++) {
    CHECK(!memcmp(got[i].data, want[i].data, got[i].size),
          "batch job %d (%s -> %s): equals the reference", i, jobs_of[i].from,
          jobs_of[i].to);
    relayout_plan_free(jobs[i].plan);
    guarded_free(&want[i]);
    guarded_free(&got[i]);
    free(in[i]);
  }
}

/* NCHW f32 -> NC1HWC0 i8 with zero point -5: C = 17 pads to 32, and every
 * padding byte holds the zero point; every other byte holds the quantized
 * source. */
static void padding(void) {
  relayout_layout *a = NULL, *b = NULL;
  relayout_desc s, d;
  const int64_t ext[4] = {2, 17, 3, 3};
  CHECK_OK(relayout_layout_parse(&a, "NCHW", &e_));
  CHECK_OK(relayout_layout_parse(&b, "NC1HWC0", &e_));
  CHECK_OK(relayout_bind_extents(&s, &d, a, b, F32, 4, ext, &e_));
  relayout_quant q = {0.25f, -5};
  CHECK_OK(relayout_desc_retype(&d, b, I8, &q, &e_));
  int64_t sb, db;
  relayout_desc_size_bytes(&sb, &s, NULL);
  relayout_desc_size_bytes(&db, &d, NULL);
  CHECK(db == 2 * 32 * 3 * 3, "C0 is 32 for i8 (%lld bytes)", (long long)db);
  float *in = malloc((size_t)sb);
  for (int64_t i = 0; i < sb / 4; i++) in[i] = (float)(i % 40) * 0.25f;
  guarded got = guarded_alloc((size_t)db, 0x5A);
  relayout_plan *p = NULL;
  CHECK_OK(relayout_plan_create(&p, engines[BOXES], &d, &s, &e_));
  CHECK(!strcmp(relayout_plan_family(p), "lines"), "NC1HWC0 i8 through a %s",
        relayout_plan_family(p));
  CHECK_OK(relayout_plan_run(p, got.data, got.size, in, (size_t)sb, &e_));
  int wrong = 0;
  for (int64_t n = 0; n < 2; n++)
    for (int64_t c = 0; c < 32; c++)
      for (int64_t hw = 0; hw < 9; hw++) {
        int64_t at = ((n * 9 + hw) * 32) + c;
        int pad = 0;
        relayout_desc_is_padding(&pad, &d, at, NULL);
        int want = c < 17 ? (int)(in[(n * 17 + c) * 9 + hw] / 0.25f) - 5 : -5;
        wrong += pad != (c >= 17) || (signed char)got.data[at] != want;
      }
  CHECK(!wrong, "NC1HWC0 i8: %d bytes wrong (padding: the zero point)", wrong);
  relayout_plan_free(p);
  guarded_free(&got);
  free(in);
  relayout_layout_free(a);
  relayout_layout_free(b);
}

/* s -> d of `in` on engine `on` and on the reference, over poisoned
 * buffers: whether the two agree; the plan's kernel and family in ran. */
static int same_as_reference(relayout_engine *on, const relayout_desc *d,
                             const relayout_desc *s, const void *in,
                             char ran[64]) {
  int64_t sb = 0, db = 0;
  relayout_desc_size_bytes(&sb, s, NULL);
  relayout_desc_size_bytes(&db, d, NULL);
  guarded want = guarded_alloc((size_t)db, 0xA5),
          got = guarded_alloc((size_t)db, 0x5A);
  CHECK_OK(
      relayout_convert_ref(d, want.data, want.size, s, in, (size_t)sb, &e_));
  relayout_plan *p = NULL;
  CHECK_OK(relayout_plan_create(&p, on, d, s, &e_));
  CHECK_OK(relayout_plan_run(p, got.data, got.size, in, (size_t)sb, &e_));
  snprintf(ran, 64, "%s %s", relayout_plan_kernel(p), relayout_plan_family(p));
  int same = !memcmp(got.data, want.data, (size_t)db);
  relayout_plan_free(p);
  guarded_free(&want);
  guarded_free(&got);
  return same;
}

/* Quantizing values at and beside every half-way point (n + 0.5) * scale of
 * scales that are not powers of two, where a quotient rounded before it is
 * rounded to an integer goes the wrong way: NCHW f32 -> NC1HWC0 i8 and u8
 * on the specialised kernels, equal to the reference on a poisoned buffer;
 * on a CPU device 4 x 4 pixels make whole squares of a box, 3 x 5 rows. */
static void ties(void) {
  static const float scales[] = {0.0371f, 3.0f, 1e-3f, 0.7f};
  static const relayout_dtype to[] = {I8, U8};
  float in[1024] = {0};
  relayout_layout *a = NULL, *b = NULL;
  CHECK_OK(relayout_layout_parse(&a, "NCHW", &e_));
  CHECK_OK(relayout_layout_parse(&b, "NC1HWC0", &e_));
  for (int i = 0; i < 16; i++) {
    const int64_t ext[4] = {1, 64, i < 8 ? 4 : 3, i < 8 ? 4 : 5};
    float scale = scales[i % 4];
    relayout_quant q = {scale, to[i / 4 % 2] == U8 ? 128 : 3};
    int at = 0;
    for (int n = -130; n <= 130; n++) {
      float half = (float)(((double)n + 0.5) * (double)scale);
      in[at++] = nextafterf(half, -INFINITY);
      in[at++] = half;
      in[at++] = nextafterf(half, INFINITY);
    }
    relayout_desc s, d;
    CHECK_OK(relayout_bind_extents(&s, &d, a, b, F32, 4, ext, &e_));
    CHECK_OK(relayout_desc_retype(&d, b, to[i / 4 % 2], &q, &e_));
    char ran[64];
    CHECK(same_as_reference(engines[SPECIALISED], &d, &s, in, ran),
          "half-way values at scale %g to %s on %s: not the reference's",
          (double)scale, relayout_dtype_name(to[i / 4 % 2]), ran);
  }
  relayout_layout_free(a);
  relayout_layout_free(b);
}

/* The quantizer's edges: values at and beside every half-way point
 * (k + 0.5) * scale, k from -130 to 130, and the special values, at scales
 * beside 2^-100 (under which a CPU device's quantizer scales value and
 * scale up by 2^100 first), far under it, subnormal, beside 2^100, the
 * largest, and usual ones. Per channel along a matrix's columns into
 * FRACTAL_NZ (16 channels a vector, one a lane, from a block of the
 * table's first), along C into NCHW24c (the same, rows of 24 channels
 * starting inside a block) and along N into FRACTAL_Z (a channel a row),
 * to i8 and u8, on every engine; per tensor on the
 * generic kernels, whose scale is an argument, and at a few of the scales
 * on the specialised ones, whose scale is compiled in.
 * Each equal to the reference on a poisoned buffer. */
enum { EDGE_ROWS = 261 * 3 + 8, EDGE_COLS = 48 };
static const float edge_scales[] = {
    0.0371f, 3.0f,  0x1p-100f, 0x1.fffffep-101f, 0x1.000002p100f, 0x1p100f,
    1e-35f,  1e35f, 1e-40f,    FLT_TRUE_MIN,     FLT_MAX,         0.7f};
enum { EDGE_SCALES = sizeof edge_scales / sizeof edge_scales[0] };

/* Value i of the column quantized at `scale` */
static float edge_value(int i, float scale) {
  static const float special[8] = {0.0f, -0.0f,   INFINITY, -INFINITY,
                                   NAN,  FLT_MAX, -FLT_MAX, FLT_TRUE_MIN};
  if (i >= 261 * 3) return special[i - 261 * 3];
  float half = (float)(((double)(i / 3 - 130) + 0.5) * (double)scale);
  return i % 3 == 1 ? half : nextafterf(half, i % 3 ? INFINITY : -INFINITY);
}

/* from (its extents ext) -> to of dtype dt, quantized per channel along
 * dim `channel` (scales and zps) or per tensor at scales[0], on `on` */
static void edge_cast(const char *from, const char *to, const int64_t *ext,
                      const float *in, relayout_dtype dt, int channel,
                      const float *scales, const int32_t *zps,
                      relayout_engine *on) {
  relayout_layout *a = NULL, *b = NULL;
  relayout_desc s, d;
  CHECK_OK(relayout_layout_parse(&a, from, &e_));
  CHECK_OK(relayout_layout_parse(&b, to, &e_));
  CHECK_OK(relayout_bind_extents(&s, &d, a, b, F32, 4, ext, &e_));
  relayout_quant q = {scales[0], zps[0]};
  CHECK_OK(relayout_desc_retype(&d, b, dt, &q, &e_));
  if (channel >= 0) {
    char names[RELAYOUT_MAX_DIMS];
    int64_t extents[RELAYOUT_MAX_DIMS];
    relayout_desc_dims(&s, names, extents);
    relayout_quant_channels qc = {names[channel], extents[channel], scales,
                                  zps};
    CHECK_OK(relayout_desc_quantize_channels(&d, &qc, &e_));
  }
  char ran[64];
  CHECK(same_as_reference(on, &d, &s, in, ran),
        "%s -> %s %s %s%g on %s: not the reference's", from, to,
        relayout_dtype_name(dt), channel >= 0 ? "per channel, " : "scale ",
        (double)scales[0], ran);
  relayout_layout_free(a);
  relayout_layout_free(b);
}

static void quantizer_edges(void) {
  float *rows = malloc(sizeof *rows * EDGE_ROWS * EDGE_COLS),
        *cols = malloc(sizeof *cols * EDGE_ROWS * EDGE_COLS);
  float scales[EDGE_COLS];
  int32_t zps[EDGE_COLS];
  for (int c = 0; c < EDGE_COLS; c++) {
    scales[c] = edge_scales[(c * 5) % EDGE_SCALES];
    for (int i = 0; i < EDGE_ROWS; i++) /* column c: channel c */
      rows[i * EDGE_COLS + c] = cols[c * EDGE_ROWS + i] =
          edge_value(i, scales[c]);
  }
  const int64_t nd[4] = {1, 1, EDGE_ROWS, EDGE_COLS},
                conv[4] = {EDGE_COLS, EDGE_ROWS, 1, 1},
                chw[4] = {1, EDGE_COLS, EDGE_ROWS, 1};
  for (int t = 0; t < 2; t++) {
    relayout_dtype dt = t ? U8 : I8;
    for (int c = 0; c < EDGE_COLS; c++)
      zps[c] = (int32_t)(t ? rng_range(0, 255) : rng_range(-128, 127));
    for (int e = 0; e < ENGINES; e++) {
      edge_cast("ND", "FRACTAL_NZ", nd, rows, dt, 3, scales, zps, engines[e]);
      edge_cast("NCHW", "FRACTAL_Z", conv, cols, dt, 0, scales, zps,
                engines[e]);
      edge_cast("NCHW", "NCHW24c", chw, cols, dt, 1, scales, zps, engines[e]);
    }
    for (int k = 0; k < EDGE_SCALES; k++) { /* one column's values each */
      float col[EDGE_ROWS];
      for (int i = 0; i < EDGE_ROWS; i++)
        col[i] = edge_value(i, edge_scales[k]);
      edge_cast("ND", "FRACTAL_NZ", (const int64_t[]){1, 1, EDGE_ROWS / 3, 3},
                col, dt, -1, &edge_scales[k], zps, engines[GENERIC]);
      if (k == 3 || k == 4 || k == 8 || k == 9) /* by 2^+-100, subnormal */
        edge_cast("ND", "FRACTAL_NZ", (const int64_t[]){1, 1, EDGE_ROWS / 3, 3},
                  col, dt, -1, &edge_scales[k], zps, engines[SPECIALISED]);
    }
  }
  free(rows);
  free(cols);
}

/* The cl_mem path: NCHW f32 -> NC1HWC0 f16 between buffers at offsets of
 * each side's element (4 and 2 bytes), equal to the reference; an offset
 * off the source's element is refused. */
static void buffers(void) {
  relayout_layout *a = NULL, *b = NULL;
  relayout_desc s, d;
  CHECK_OK(relayout_layout_parse(&a, "NCHW", &e_));
  CHECK_OK(relayout_layout_parse(&b, "NC1HWC0", &e_));
  CHECK_OK(relayout_bind_extents(&s, &d, a, b, F32, 4,
                                 (const int64_t[]){2, 19, 3, 5}, &e_));
  CHECK_OK(relayout_desc_retype(&d, b, F16, NULL, &e_));
  int64_t sb, db;
  relayout_desc_size_bytes(&sb, &s, NULL);
  relayout_desc_size_bytes(&db, &d, NULL);
  unsigned char *in = malloc((size_t)sb), *want = malloc((size_t)db),
                *got = malloc((size_t)db + 2);
  fill(in, sb, F32);
  CHECK_OK(relayout_convert_ref(&d, want, (size_t)db, &s, in, (size_t)sb, &e_));
  relayout_plan *p = NULL;
  relayout_engine *engine = engines[SPECIALISED];
  CHECK_OK(relayout_plan_create(&p, engine, &d, &s, &e_));
  cl_context ctx = relayout_engine_context(engine);
  cl_command_queue q = relayout_engine_queue(engine);
  cl_int rc;
  cl_mem bs = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)sb + 4, NULL, &rc),
         bd = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)db + 2, NULL, &rc);
  clEnqueueWriteBuffer(q, bs, CL_TRUE, 4, (size_t)sb, in, 0, NULL, NULL);
  memset(got, 0x5A, (size_t)db + 2);
  clEnqueueWriteBuffer(q, bd, CL_TRUE, 0, (size_t)db + 2, got, 0, NULL, NULL);
  CHECK_OK(relayout_plan_enqueue(p, bd, 2, bs, 4, 0, NULL, NULL, &e_));
  clEnqueueReadBuffer(q, bd, CL_TRUE, 0, (size_t)db + 2, got, 0, NULL, NULL);
  CHECK(got[0] == 0x5A && got[1] == 0x5A && !memcmp(got + 2, want, (size_t)db),
        "a cast between buffers at offsets: the reference's bytes, nothing "
        "before them");
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT,
              "the destination's 2-byte and the source's 4-byte elements",
              relayout_plan_enqueue(p, bd, 2, bs, 2, 0, NULL, NULL, &e_));
  clReleaseMemObject(bs);
  clReleaseMemObject(bd);
  relayout_plan_free(p);
  free(in);
  free(want);
  free(got);
  relayout_layout_free(a);
  relayout_layout_free(b);
}

/* Per-channel quantizing and dequantizing pairs between named formats and
 * random layouts, on the specialised kernels, the generic engine and an
 * engine that runs large tensors in slabs. */
static void per_channel(void) {
  static const cast_pair qpairs[] = {
      {F32, I8}, {F16, U8},  {BF16, I8}, {F32, U8}, {I8, F32},
      {U8, F16}, {I8, BF16}, {U8, F64},  {F32, I4}, {U4, F16}};
  static const char *const named[][2] = {
      {"NCHW", "FRACTAL_Z"}, {"NCHW", "NC1HWC0"},   {"NHWC", "NCHW"},
      {"NCHW", "NCHW4"},     {"FRACTAL_Z", "NCHW"}, {"NC1HWC0", "NHWC"}};
  relayout_engine_options o = {.size = sizeof o,
                               .device = getenv("RELAYOUT_TEST_DEVICE")
                                             ? getenv("RELAYOUT_TEST_DEVICE")
                                             : "cpu",
                               .kernels = RELAYOUT_KERNELS_SPECIALISED,
                               .max_alloc = 8192,
                               .families = RELAYOUT_FAMILIES_GPU};
  /* slabs: small allocations, and the GPU families (stage boxes, beside
   * the CPU device's own boxes on the other engines) */
  relayout_engine *slabs = NULL;
  CHECK_OK(relayout_engine_create(&slabs, &o, &e_));
  int run = 0, tries = 0, before[2] = {boxes[0], boxes[1]};
  for (int i = 0; i < (int)(sizeof qpairs / sizeof qpairs[0]); i++)
    for (int k = 0; k < 6; k++, tries++) {
      int64_t ext[4];
      char a[96], b[96];
      pick_extents(ext);
      int which = (i + k) % 3;
      relayout_engine *on = which == 0   ? engines[SPECIALISED]
                            : which == 1 ? engines[GENERIC]
                                         : slabs;
      if (k % 2) {
        random_layout(a, sizeof a);
        random_layout(b, sizeof b);
      } else {
        snprintf(a, sizeof a, "%s", named[(i + k) % 6][0]);
        snprintf(b, sizeof b, "%s", named[(i + k) % 6][1]);
      }
      run += one_cast(a, b, qpairs[i], ext, on, which == 1, ANY_DIM);
    }
  /* slabs along N, per channel along N: each slab its own channels */
  run += one_cast("NCHW", "NHWC", qpairs[0], (const int64_t[]){33, 17, 5, 7},
                  slabs, 0, 0);
  /* a CPU device's box of whole squares (4 x 4 pixels), quantizing and
   * dequantizing, per channel along N and W (a row's channel, read once a
   * row: along W, each row of a square its own) and along C (each
   * element's) */
  for (int i = 0; i < 6; i++)
    run += one_cast("NCHW", "NC1HWC0", qpairs[i / 3 ? 4 : 0],
                    (const int64_t[]){2, 64, 4, 4}, engines[BOXES], 0,
                    (const int[]){0, 3, 1}[i % 3]);
  CHECK(run >= tries / 2, "ran %d of %d per-channel casts", run, tries + 1);
  CHECK(boxes[0] > before[0] && boxes[1] > before[1],
        "per-channel casts: %d through stage boxes, %d through CPU boxes",
        boxes[0] - before[0], boxes[1] - before[1]);
  printf("%d per-channel casts, %d through stage boxes, %d through CPU "
         "boxes\n",
         run, boxes[0] - before[0], boxes[1] - before[1]);
  relayout_engine_free(slabs);
}

/* That a group's `want` casts all ran, each through a CPU box (boxes[1]
 * was `before` when the group began). */
static void all_in_boxes(const char *group, int run, int want, int before) {
  CHECK(run == want && boxes[1] - before == want,
        "%s: %d of %d casts ran, %d through CPU boxes", group, run, want,
        boxes[1] - before);
}

/* A conversion a group casts, and the dim its quantizing casts take per
 * channel (PER_TENSOR: none). */
typedef struct cast_case {
  const char *from, *to;
  int64_t ext[4];
  int channel;
} cast_case;

/* Each of a group's n cases cast every way of kinds: through CPU boxes
 * (the streaming engine and the specialised one by turns), then on the
 * generic kernels. */
static void boxes_then_tiles(const char *group, const cast_case *cases, int n,
                             const cast_pair *kinds, int nkinds) {
  for (int generic = 0; generic < 2; generic++) {
    int before = boxes[1], run = 0;
    for (int i = 0; i < n; i++)
      for (int k = 0; k < nkinds; k++) {
        int quant = is_int(kinds[k].s) || is_int(kinds[k].d);
        relayout_engine *on = generic       ? engines[GENERIC]
                              : (i + k) % 2 ? engines[SPECIALISED]
                                            : engines[BOXES];
        run += one_cast(cases[i].from, cases[i].to, kinds[k], cases[i].ext, on,
                        generic, quant ? cases[i].channel : PER_TENSOR);
      }
    if (generic)
      CHECK(run == n * nkinds, "%s on the generic kernels: %d of %d ran", group,
            run, n * nkinds);
    else
      all_in_boxes(group, run, n * nkinds, before);
  }
}

/* A CPU device's cast boxes where P, the pixels of a conv weight going
 * into FRACTAL_Z (or NHWC), is shorter than a square (2 x 2, 1 x 5, 3 x 3,
 * 3 x 5: 16 of K's rows, P's source vectors, shuffled into P's rows; per
 * channel along C, each square read to end by the last row's data and
 * shifted back in registers) or leaves rows past its last square (4 x 5,
 * 7 x 7: one more square ending at P's end), boxes all data and not (C =
 * 48 pads to 64 for int8; C = 40 leaves rows past the last 16), per tensor
 * and per channel along N and C; then the same on the generic kernels. */
static void short_squares(void) {
  static const cast_case cases[] = {
      {"NCHW", "FRACTAL_Z", {17, 32, 2, 2}, PER_TENSOR},
      {"NCHW", "FRACTAL_Z", {9, 64, 1, 5}, 0},
      {"NCHW", "FRACTAL_Z", {33, 64, 3, 3}, 1},
      {"NCHW", "FRACTAL_Z", {5, 48, 3, 3}, 0},
      {"NCHW", "FRACTAL_Z", {3, 32, 4, 5}, PER_TENSOR},
      {"NCHW", "FRACTAL_Z", {2, 32, 7, 7}, 0},
      {"NCHW", "NHWC", {2, 40, 3, 5}, 1},
      {"NCHW", "NHWC", {3, 40, 3, 5}, 0}};
  static const cast_pair kinds[] = {{F32, I8}, {F32, F16}, {F16, BF16}};
  boxes_then_tiles("short squares", cases, 8, kinds, 3);
}

/* A CPU device's cast squares where K is short: conv weights out of
 * FRACTAL_Z (K the 1 x 2 to 3 x 5 pixels, 2 to 15 elements) and NHWC ->
 * NCHW with 3 x 5 pixels. Each 16 rows along P (C0, C) are one run of K
 * vectors in the destination, shuffled from K's converted source vectors;
 * C = 24 leaves a box of 8 rows and C = 40 rows past the last 16, which go
 * row by row. Every kind of vector cast, per tensor and per channel along
 * N (a Q step's scale), along C (each row's: rows alone) and along H
 * (K's); then the same on the generic tiles, whose 16 rows of K go
 * through a private buffer. */
static void short_rows(void) {
  static const cast_case cases[] = {
      {"FRACTAL_Z", "NCHW", {17, 32, 3, 3}, PER_TENSOR},
      {"FRACTAL_Z", "NCHW", {20, 16, 1, 2}, 0},
      {"FRACTAL_Z", "NCHW", {3, 48, 3, 5}, 1},
      {"FRACTAL_Z", "NCHW", {5, 24, 2, 7}, 2},
      {"NHWC", "NCHW", {2, 3, 5, 40}, 3}};
  static const cast_pair kinds[] = {{I8, F16}, {F32, F16}, {F16, F32},
                                    {F32, I8}, {U8, BF16}, {F32, BF16}};
  boxes_then_tiles("short rows", cases, 5, kinds, 6);
}

/* A CPU device's cast boxes along runs, the rows contiguous on both sides:
 * a tensor of one run (NCHW -> NCHW, 7735 elements: boxes of 4096, the
 * last partly a vector), C's 64 a row (NHWC -> NCHW64, NCHW64 -> NHWC; C =
 * 47, rows of 15 past whole vectors, then padding) and 16 (nChw16c ->
 * NC1HWC0), rows of 5001 into and out of 32-byte aligned rows (ND_ALIGN:
 * a box of 4096, then one of the rest and the padding), streamed and not, every
 * kind of vector cast and f64, per tensor and per channel along C (NCHW ->
 * NCHW: the channel dim planned apart, a row's H x W one channel; a lane's
 * along a row of C) or along W; then the same on the generic kernels, whose
 * runs cast 16 elements at a time too. */
static void run_rows(void) {
  static const cast_case cases[] = {{"NCHW", "NCHW", {5, 7, 13, 17}, 1},
                                    {"NHWC", "NCHW64", {2, 3, 5, 64}, 3},
                                    {"NCHW64", "NHWC", {2, 128, 3, 5}, 3},
                                    {"nChw16c", "NC1HWC0", {3, 32, 5, 7}, 1},
                                    {"NHWC", "NCHW64", {2, 3, 5, 47}, 3},
                                    {"ND", "ND_ALIGN", {1, 1, 3, 5001}, 2},
                                    {"ND_ALIGN", "ND", {1, 1, 3, 5001}, 2}};
  static const cast_pair kinds[] = {{F32, F16}, {F16, F32}, {F32, BF16},
                                    {F32, I8},  {U8, F16},  {F64, F32}};
  boxes_then_tiles("run rows", cases, 7, kinds, 6);
}

/* A CPU device's cast boxes of short rows that Q (or else P) continues in
 * the destination, each step of the other axis one run: K's rows of 2 or 4
 * elements (2N's and 4N's images, CHWN4's channels) contiguous in the
 * source (4N -> 2N, CHWN4 -> NHWC, NCHW32 -> CHWN4: each 16 gathered) or
 * strided, P running along the source (nChw16c -> 4N: squares of 16 of
 * P's runs; NHWC -> 2N with C = 40: two squares, then 8 runs gathered;
 * NCHW4 -> 2N, P of 4: gathered; FRACTAL_Z and NCHW32 -> NCHW4, HWCN ->
 * 2N, nChw16c -> nChw8c, P's rows one after another in the source:
 * squares of units, 4 x 4, 8 x 8, 2 x 2; NCHW4 -> NC1HWC0 and nChw16c,
 * a pixel's 16 elements from 4 planes: squares of 4 x 4 units; 4N ->
 * CHWN4, A's 4 elements each K row's and O's steps continuing them:
 * squares of 4 x 4 units, each vector's lanes then put A-major (per
 * tensor of 35 pixels: 8 squares and 3 pixels gathered); HWCN -> 2N of 81
 * pixels, its box taking P's 8 steps of a square and Q's last box 17 pixels,
 * which go step by step); the box one run (2N -> 4N, NCHW4 -> nChw8c); P
 * continuing the rows (4N and 2N -> CHWN4); runs of
 * 8, two a vector (2N -> CHWN4, CHWN4 -> nChw8c, per tensor or along H, a
 * channel outside the box); runs of 28 (a Q step of 7 past whole vectors)
 * and N = 6 (4N's last rows padding, which go row by row); per tensor, and
 * per channel along N (K's and Q's, or P's), C (P's, or K's and Q's) and H
 * (Q's, merged with W); 2N and 4N <-> NCHW4, nChw8c -> 2N, 4N <-> nChw8c
 * (P x K of 32) and CHWN4 -> 2N and 4N of 35 pixels, each pixel's few elements
 * together in the source (CHWN4's pixels apart, so put together by pieces): two
 * steps of 16 pixels woven both ways, then 3 gathered (per tensor, or 4N ->
 * NCHW4 along N, which the woven steps leave to the gather); then on the
 * generic kernels. */
static void short_runs(void) {
  static const cast_case cases[] = {
      {"4N", "2N", {8, 6, 5, 7}, 0},
      {"CHWN4", "NHWC", {8, 32, 3, 5}, 1},
      {"CHWN4", "NHWC", {8, 32, 3, 5}, 0},
      {"NCHW32", "CHWN4", {8, 64, 3, 3}, 0},
      {"nChw16c", "4N", {8, 32, 3, 5}, 0},
      {"nChw16c", "4N", {6, 16, 3, 5}, 1},
      {"NHWC", "2N", {4, 3, 5, 40}, 1},
      {"NCHW4", "2N", {6, 8, 3, 5}, 1},
      {"2N", "4N", {8, 6, 5, 7}, 2},
      {"2N", "4N", {4, 3, 2, 9}, 0},
      {"NCHW4", "nChw8c", {2, 16, 3, 5}, 1},
      {"4N", "CHWN4", {8, 8, 3, 5}, 0},
      {"4N", "CHWN4", {8, 8, 3, 5}, 1},
      {"4N", "CHWN4", {8, 8, 3, 5}, 2},
      {"2N", "CHWN4", {4, 8, 3, 5}, PER_TENSOR},
      {"FRACTAL_Z", "NCHW4", {8, 64, 2, 4}, 0},
      {"FRACTAL_Z", "NCHW4", {8, 64, 2, 4}, PER_TENSOR},
      {"NCHW32", "NCHW4", {8, 64, 2, 4}, 1},
      {"HWCN", "2N", {2, 4, 16, 32}, PER_TENSOR},
      {"HWCN", "2N", {9, 9, 3, 32}, PER_TENSOR},
      {"HWCN", "2N", {9, 9, 3, 32}, 3},
      {"nChw16c", "nChw8c", {8, 64, 2, 4}, 1},
      {"CHWN4", "nChw8c", {8, 16, 3, 5}, PER_TENSOR},
      {"CHWN4", "nChw8c", {8, 16, 3, 5}, 2},
      {"2N", "NCHW4", {6, 8, 5, 7}, PER_TENSOR},
      {"NCHW4", "4N", {8, 8, 5, 7}, PER_TENSOR},
      {"nChw8c", "2N", {4, 16, 5, 7}, PER_TENSOR},
      {"4N", "NCHW4", {8, 8, 5, 7}, 0},
      {"CHWN4", "2N", {8, 8, 5, 7}, PER_TENSOR},
      {"CHWN4", "4N", {8, 8, 5, 7}, PER_TENSOR},
      {"4N", "CHWN4", {8, 8, 5, 7}, PER_TENSOR},
      {"NCHW4", "NC1HWC0", {2, 32, 5, 7}, PER_TENSOR},
      {"NCHW4", "nChw16c", {2, 32, 5, 7}, 1},
      {"4N", "nChw8c", {8, 16, 5, 7}, PER_TENSOR},
      {"nChw8c", "4N", {8, 16, 5, 7}, PER_TENSOR}};
  static const cast_pair kinds[] = {{F32, F16}, {F16, F32},  {F32, I8},
                                    {U8, F16},  {F32, BF16}, {I8, F32}};
  boxes_then_tiles("short runs", cases, 35, kinds, 6);
}

/* A CPU device's cast boxes that transpose into destination rows of 1 or
 * 2 bytes (NHWC -> NCHW, K the pixels): whole 64-byte lines of each row
 * at once, 2 or 4 squares side by side along K, then the squares and rows
 * K leaves (289 pixels in boxes of 256: 33 left; 117, 90); the rows two
 * groups of squares on asked for where K runs on; per tensor, and per
 * channel along C (P), W (K, H apart) and N; then on the generic
 * kernels. */
static void line_squares(void) {
  static const cast_case cases[] = {
      {"NHWC", "NCHW", {2, 17, 17, 128}, PER_TENSOR},
      {"NHWC", "NCHW", {2, 9, 13, 40}, 3},
      {"NHWC", "NCHW", {1, 3, 64, 24}, 2},
      {"NHWC", "NCHW", {2, 5, 18, 33}, 0}};
  static const cast_pair kinds[] = {
      {F32, F16}, {F32, BF16}, {F32, I8}, {U8, F16}, {F16, F32}};
  boxes_then_tiles("line squares", cases, 4, kinds, 5);
}

/* A CPU device's cast boxes of short rows: rows of 2, 4 and 8 elements
 * (2N's images, NCHW4's and CHWN4's channels, nChw8c's), from NCHW (K's
 * rows mixed into whole vectors where P's follow one another) and from
 * blocked layouts (row by row); C = 6 leaves rows partly padding; per
 * tensor, and per channel along C; then on the generic kernels. */
static void group_rows(void) {
  static const cast_case cases[] = {
      {"NCHW", "2N", {6, 16, 5, 7}, 1},
      {"NCHW4", "2N", {4, 8, 3, 5}, PER_TENSOR},
      {"nChw16c", "4N", {8, 32, 3, 3}, PER_TENSOR},
      {"NCHW", "NCHW4", {2, 6, 5, 7}, 1},
      {"NC1HWC0", "CHWN4", {8, 16, 3, 5}, PER_TENSOR},
      {"NCHW", "nChw8c", {3, 24, 5, 5}, PER_TENSOR}};
  static const cast_pair kinds[] = {
      {F32, F16}, {F32, I8}, {U8, F16}, {F16, F32}, {F32, BF16}};
  boxes_then_tiles("group rows", cases, 6, kinds, 5);
}

/* A CPU device's cast boxes of rows, per channel, quantizing and
 * dequantizing: conv weights into FRACTAL_Z and back, the channel read
 * once a Q step along N (N padded, so that rows of padding have no
 * channel), each row's along W (P, its 1 x 2 pixels) and along H (P, its
 * 3 x 3 pixels merged), each element's along C (K); NHWC -> NC1HWC0 with
 * 3 channels, along N and W (Q, merged with H). */
static void channel_rows(void) {
  static const cast_case cases[] = {{"NCHW", "FRACTAL_Z", {20, 48, 1, 1}, 0},
                                    {"NCHW", "FRACTAL_Z", {20, 48, 1, 1}, 1},
                                    {"FRACTAL_Z", "NCHW", {20, 48, 1, 1}, 0},
                                    {"NCHW", "FRACTAL_Z", {36, 16, 1, 2}, 0},
                                    {"NCHW", "FRACTAL_Z", {36, 16, 1, 2}, 3},
                                    {"NCHW", "FRACTAL_Z", {20, 32, 3, 3}, 2},
                                    {"NHWC", "NC1HWC0", {2, 5, 9, 3}, 2},
                                    {"NHWC", "NC1HWC0", {2, 5, 9, 3}, 0}};
  int before = boxes[1], run = 0;
  for (int i = 0; i < 8; i++)
    for (int k = 0; k < 2; k++)
      run += one_cast(cases[i].from, cases[i].to,
                      k ? (cast_pair){I8, F32} : (cast_pair){F32, I8},
                      cases[i].ext, engines[BOXES], 0, cases[i].channel);
  all_in_boxes("per-channel rows", run, 16, before);
}

/* A CPU device's cast boxes of pixels, each of a few elements into a row
 * of 16 (NHWC -> NC1HWC0 with 1 to 15 channels): 16 pixels converted as
 * vectors and spread into their rows, the pixels past the last 16 row by
 * row, their data selected into a vector; streamed and not, for each kind
 * of vector cast (float to float, integers to floats, f32 to i8 into a C0
 * of 32, which takes the rows alone); then the same on the generic
 * kernels. */
static void pixel_rows(void) {
  static const int64_t shapes[][4] = {
      {2, 7, 9, 3}, {1, 4, 8, 5}, {3, 5, 5, 1}, {2, 3, 7, 15}};
  static const cast_pair kinds[] = {{U8, F16}, {F32, F16}, {F32, BF16},
                                    {I8, F32}, {F16, F32}, {F32, I8}};
  const char *dev = getenv("RELAYOUT_TEST_DEVICE");
  relayout_engine_options o = {.size = sizeof o,
                               .device = dev ? dev : "cpu",
                               .kernels = RELAYOUT_KERNELS_SPECIALISED,
                               .families = RELAYOUT_FAMILIES_CPU,
                               .stream_bytes = -1};
  relayout_engine *plain = NULL; /* CPU boxes, no stream */
  CHECK_OK(relayout_engine_create(&plain, &o, &e_));
  int before = boxes[1], run = 0;
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 6; k++)
      run += one_cast("NHWC", "NC1HWC0", kinds[k], shapes[i],
                      (i + k) % 2 ? engines[BOXES] : plain, 0, PER_TENSOR);
  all_in_boxes("pixel rows", run, 24, before);
  relayout_engine_free(plain);
  /* and on the generic tiles, whose pixels go through a private buffer */
  run = 0;
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 6; k++)
      for (int again = 0; again < 2; again++) /* (integers at more scales) */
        run += one_cast("NHWC", "NC1HWC0", kinds[k], shapes[i],
                        engines[GENERIC], 1, PER_TENSOR);
  CHECK(run == 48, "pixel rows on the generic kernels: %d of 48 ran", run);
}

/* Dequantizing u8 to f16 at a scale that is not a power of two, where the
 * product rounded to f32 first then to f16 goes the wrong way (43 *
 * 0.026969021... is 1.15918 to f16, 1.16016 through f32): each kernel
 * takes its vector form only at a power of two. Every u8 value, as pixels
 * of 3 (NHWC -> NC1HWC0: pixels, rows), and as rows of a transpose (NCHW ->
 * NC1HWC0: squares), on every engine; then at 0.5, where the vectors run. */
static void double_rounding(void) {
  static const char *const from[] = {"NHWC", "NCHW"};
  static const int64_t ext[2][4] = {{2, 16, 8, 3}, {2, 3, 16, 16}};
  unsigned char in[2 * 3 * 16 * 16];
  for (size_t i = 0; i < sizeof in; i++) in[i] = (unsigned char)(i * 43);
  const uint32_t bits = 1021111843u; /* 0.026969021 */
  float odd;
  memcpy(&odd, &bits, sizeof odd);
  for (int f = 0; f < 2; f++)
    for (int k = 0; k < 2; k++) {
      relayout_layout *a = NULL, *b = NULL;
      relayout_desc s, d;
      CHECK_OK(relayout_layout_parse(&a, from[f], &e_));
      CHECK_OK(relayout_layout_parse(&b, "NC1HWC0", &e_));
      CHECK_OK(relayout_bind_extents(&s, &d, a, b, U8, 4, ext[f], &e_));
      relayout_quant q = {k ? 0.5f : odd, 0};
      CHECK_OK(relayout_desc_retype(&s, a, U8, &q, &e_));
      CHECK_OK(relayout_desc_retype(&d, b, F16, NULL, &e_));
      for (int e = 0; e < ENGINES; e++) {
        char ran[64];
        CHECK(same_as_reference(engines[e], &d, &s, in, ran),
              "%s u8 -> NC1HWC0 f16 at scale %g on %s: not the reference's",
              from[f], (double)q.scale, ran);
      }
      relayout_layout_free(a);
      relayout_layout_free(b);
    }
}

/* An engine of generic kernels on the test's device (the CPU unless
 * RELAYOUT_TEST_DEVICE names one), its families' and streaming options
 * these (stream_bytes 0: the device's default) */
static relayout_engine *generic_engine(relayout_families families,
                                       int64_t stream_bytes) {
  const char *dev = getenv("RELAYOUT_TEST_DEVICE");
  relayout_engine_options o = {.size = sizeof o,
                               .device = dev ? dev : "cpu",
                               .kernels = RELAYOUT_KERNELS_GENERIC,
                               .families = families,
                               .stream_bytes = stream_bytes};
  relayout_engine *e = NULL;
  CHECK_OK(relayout_engine_create(&e, &o, &e_));
  return e;
}

/* The generic kernels' tiles on a CPU device, casting 16 elements at a
 * time where a tile is all data: squares transposed (NHWC -> NCHW,
 * NCHW -> NC1HWC0, K along C), rows read along P (ND -> FRACTAL_NZ; into
 * its rows of 8 f32, two rows to a vector), or
 * where K is short, rows gathered (a 3 x 3 conv weight into FRACTAL_Z, and
 * the tiles cut by edges) or P is (2N -> NCHW4: 4 x 16, 16 pixels of C4),
 * or P is strided and a fraction of a square, K's pieces interleaved into
 * whole rows (NCHW -> nChw8c, 4N, 2N; CHWN4, whose rows are apart), for
 * every kind of vector cast (float to float, quantizing, dequantizing to f32,
 * integer to integer) and one without (f16 -> f64); then per channel along each
 * dim, there and on the GPU's tiles. */
static void generic_tiles(void) {
  static const struct {
    const char *from, *to;
    int64_t ext[4];
  } shapes[] = {
      {"NHWC", "NCHW", {2, 5, 18, 33}},
      {"NCHW", "NC1HWC0", {2, 48, 5, 7}},
      {"ND", "FRACTAL_NZ", {1, 1, 40, 50}},
      {"NHWC", "NCHW", {2, 32, 3, 20}},
      {"NCHW", "FRACTAL_Z", {32, 40, 3, 3}},
      {"2N", "NCHW4", {6, 8, 3, 7}},
      {"NCHW", "nChw8c", {2, 16, 3, 40}},
      {"NCHW", "4N", {8, 8, 2, 70}},
      {"NCHW", "CHWN4", {8, 8, 2, 70}},
      {"NCHW", "2N", {4, 4, 2, 130}},
      {"NHWC", "NCHW", {2, 2, 64, 48}},
      {"NC1HWC0", "NCHW", {2, 32, 2, 64}},
  };
  static const cast_pair kinds[] = {{F32, F16}, {F32, BF16}, {F16, F32},
                                    {F32, I8},  {I8, F32},   {U8, I8},
                                    {F16, F64}};
  /* and on an engine that streams every destination: squares side by side
   * whose rows fill lines are all converted, then written a line a row */
  relayout_engine *streams = generic_engine(RELAYOUT_FAMILIES_AUTO, 1);
  int run = 0;
  for (int i = 0; i < 12; i++)
    for (int k = 0; k < 7; k++)
      for (int on = 0; on < 2 && streams; on++)
        run += one_cast(shapes[i].from, shapes[i].to, kinds[k], shapes[i].ext,
                        on ? streams : engines[GENERIC], 1, PER_TENSOR);
  CHECK(run == 168, "generic tiles: %d of 168 casts ran", run);
  relayout_engine_free(streams);
  /* per channel along each dim: a tile's channel constant, one per row
   * (along K: whole squares cast as vectors, per row), or per element
   * (along P), on a CPU device's tiles and on the GPU's */
  static const cast_pair quantized[] = {{F32, I8}, {I8, F32}, {F16, U8}};
  relayout_engine *gpu_tiles = generic_engine(RELAYOUT_FAMILIES_GPU, 0);
  run = 0;
  int want = 0; /* along each dim of at most 64 channels (one_cast's table) */
  for (int i = 0; i < 12; i++)
    for (int dim = 0; dim < 4; dim++)
      for (int k = 0; k < 3 && shapes[i].ext[dim] <= 64; k++)
        for (int on = 0; on < 2 && gpu_tiles; on++, want++)
          run += one_cast(shapes[i].from, shapes[i].to, quantized[k],
                          shapes[i].ext, on ? gpu_tiles : engines[GENERIC], 1,
                          dim);
  CHECK(run == want && want == 270, "generic tiles per channel: %d of %d ran",
        run, want);
  relayout_engine_free(gpu_tiles);
}

/* Casts without a meaning, and quantizations out of range, refused with a
 * message naming them. */
static void refusals(void) {
  relayout_layout *l = NULL;
  relayout_desc s, d, x;
  CHECK_OK(relayout_layout_parse(&l, "NCHW", &e_));
  CHECK_OK(relayout_bind_extents(&s, &d, l, l, F32, 4,
                                 (const int64_t[]){1, 2, 3, 4}, &e_));
  relayout_quant q = {0, 0};
  x = d;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "positive and finite",
              relayout_desc_retype(&x, l, I8, &q, &e_));
  q.scale = (float)NAN;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "positive and finite",
              relayout_desc_retype(&x, l, I8, &q, &e_));
  q.scale = -1;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "positive and finite",
              relayout_desc_retype(&x, l, U8, &q, &e_));
  q = (relayout_quant){1, 16};
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "outside u4's range 0..15",
              relayout_desc_retype(&x, l, U4, &q, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "f16 takes no quantization",
              relayout_desc_retype(&x, l, F16, &q, &e_));
  CHECK(!memcmp(&x, &d, sizeof x), "a refused retype leaves d as it was");
  relayout_plan *p = NULL;
  relayout_engine *engine = engines[GENERIC];
  CHECK_OK(relayout_desc_retype(&x, l, RELAYOUT_I32, NULL, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "no cast from f32 to i32",
              relayout_plan_create(&p, engine, &x, &s, &e_));
  relayout_desc f64 = s;
  CHECK_OK(relayout_desc_retype(&f64, l, F64, NULL, &e_));
  CHECK_OK(relayout_desc_retype(&x, l, I8, NULL, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "no quantization from f64",
              relayout_plan_create(&p, engine, &x, &f64, &e_));
  relayout_desc u8 = s;
  q = (relayout_quant){0.5f, 3};
  CHECK_OK(relayout_desc_retype(&u8, l, U8, &q, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "keep the scale",
              relayout_convert_ref(&x, &q, 0, &u8, &q, 0, &e_));
  CHECK(p == NULL, "no plan made");
  float scales[3] = {0.5f, 1, 2};
  int32_t zps[3] = {0, 300, 0};
  relayout_quant_channels qc = {'C', 3, scales, NULL};
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "3 scales for an extent of 2",
              relayout_desc_quantize_channels(&x, &qc, &e_));
  qc = (relayout_quant_channels){'Z', 2, scales, zps};
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "along Z: the layout has no such",
              relayout_desc_quantize_channels(&x, &qc, &e_));
  qc = (relayout_quant_channels){'H', 3, scales, zps};
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "zero point 1 is 300, outside i8's",
              relayout_desc_quantize_channels(&x, &qc, &e_));
  scales[2] = (float)INFINITY;
  qc.zero_points = NULL;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "scale 2 is inf",
              relayout_desc_quantize_channels(&x, &qc, &e_));
  scales[2] = 2;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "f32 takes no quantization",
              relayout_desc_quantize_channels(&s, &qc, &e_));
  CHECK_OK(relayout_desc_quantize_channels(&x, &qc, &e_));
  CHECK_OK(relayout_desc_retype(&u8, l, U8, NULL, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "integer casts take per-tensor",
              relayout_plan_create(&p, engine, &u8, &x, &e_));
  CHECK(p == NULL, "no plan made");
  relayout_layout_free(l);
}

/* relayout_symmetric_scales of an NCHW tensor (read in runs of one
 * channel) and of the same values in NHWC (each element at its
 * coordinate), per tensor and along each dim, for f32, f16 and bf16 with
 * NaNs, infinities and subnormals among them: both are max finite |x| /
 * 127 per channel, rounded once to f32, written out here. */
static void symmetric_scales(void) {
  static const relayout_dtype types[] = {F32, F16, BF16};
  static const int64_t ext[4] = {3, 5, 4, 7};
  relayout_layout *a = NULL, *b = NULL;
  CHECK_OK(relayout_layout_parse(&a, "NCHW", &e_));
  CHECK_OK(relayout_layout_parse(&b, "NHWC", &e_));
  for (int t = 0; t < 3; t++) {
    relayout_desc s, d;
    int64_t sb, db, n = 3 * 5 * 4 * 7;
    CHECK_OK(relayout_bind_extents(&s, &d, a, b, types[t], 4, ext, &e_));
    relayout_desc_size_bytes(&sb, &s, NULL);
    relayout_desc_size_bytes(&db, &d, NULL);
    unsigned char *in = malloc((size_t)sb), *nhwc = malloc((size_t)db);
    fill(in, sb, types[t]);
    CHECK_OK(
        relayout_convert_ref(&d, nhwc, (size_t)db, &s, in, (size_t)sb, &e_));
    for (int dim = -1; dim < 4; dim++) {
      int64_t count = dim < 0 ? 1 : ext[dim], inner = 1;
      for (int k = dim + 1; dim >= 0 && k < 4; k++) inner *= ext[k];
      double top[7] = {0};
      for (int64_t i = 0; i < n; i++) {
        double v = fabs(float_at(in, i, types[t]));
        int64_t c = dim < 0 ? 0 : i / inner % count;
        if (isfinite(v) && v > top[c]) top[c] = v;
      }
      float want[7], runs[7], each[7];
      for (int64_t c = 0; c < count; c++) {
        float q = (float)(top[c] / 127);
        want[c] = top[c] == 0 ? 1 : q > 0 ? q : FLT_TRUE_MIN;
      }
      char name = dim < 0 ? 0 : "NCHW"[dim];
      CHECK_OK(relayout_symmetric_scales(runs, count, &s, in, (size_t)sb, name,
                                         I8, &e_));
      CHECK_OK(relayout_symmetric_scales(each, count, &d, nhwc, (size_t)db,
                                         name, I8, &e_));
      size_t bytes = sizeof(float) * (size_t)count;
      CHECK(!memcmp(runs, want, bytes) && !memcmp(each, want, bytes),
            "%s scales along %c: NCHW's and NHWC's the definition's",
            relayout_dtype_name(types[t]), name ? name : '-');
    }
    free(in);
    free(nhwc);
  }
  relayout_layout_free(a);
  relayout_layout_free(b);
}

/* Integers to f16 and bf16 at scale 1 and zero point 0, which the vector
 * casts take in f32 where the scale comes at run time (the generic
 * kernels): squares, rows read along P, rows gathered, short rows
 * written lane by lane (NCHW4 -> NC1HWC0), on the generic kernels and
 * the boxes. */
static void unit_scales(void) {
  static const cast_case cases[] = {
      {"NHWC", "NCHW", {2, 5, 18, 33}, PER_TENSOR},
      {"ND", "FRACTAL_NZ", {1, 1, 40, 50}, PER_TENSOR},
      {"NCHW", "FRACTAL_Z", {32, 40, 3, 3}, PER_TENSOR},
      {"NCHW4", "NC1HWC0", {2, 32, 5, 7}, PER_TENSOR}};
  static const cast_pair kinds[] = {
      {U8, BF16}, {I8, F16}, {U8, F16}, {I8, BF16}};
  unit_quant = 1;
  boxes_then_tiles("unit scales", cases, 4, kinds, 4);
  unit_quant = 0;
}

int main(void) {
  const char *dev = getenv("RELAYOUT_TEST_DEVICE");
  relayout_engine_options o = {.size = sizeof o,
                               .device = dev ? dev : "cpu",
                               .kernels = RELAYOUT_KERNELS_GENERIC};
  for (int i = 0; i < ENGINES; i++) {
    if (i) o.kernels = RELAYOUT_KERNELS_SPECIALISED;
    /* the CPU boxes streaming their stores wherever they can */
    if (i == BOXES) o.families = RELAYOUT_FAMILIES_CPU, o.stream_bytes = 1;
    CHECK_OK(relayout_engine_create(&engines[i], &o, &e_));
    if (!engines[i]) return check_summary();
  }
  every_pair();
  batch();
  buffers();
  padding();
  ties();
  quantizer_edges();
  per_channel();
  short_squares();
  short_rows();
  run_rows();
  group_rows();
  line_squares();
  short_runs();
  channel_rows();
  pixel_rows();
  double_rounding();
  generic_tiles();
  unit_scales();
  refusals();
  symmetric_scales();
  for (int i = 0; i < ENGINES; i++) relayout_engine_free(engines[i]);
  return check_summary();
}
