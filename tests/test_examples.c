/* test_examples.c - the worked examples of LAYOUTS.md section 4, from the seeds
 *
 * Expected values are copied from the seed documents by hand (their printed
 * tensors, tables and strides), never produced by the code under test.
 */
#include "check.h"

static relayout_layout *parse(const char *text) {
  relayout_layout *l = NULL;
  CHECK_OK(relayout_layout_parse(&l, text, &e_));
  return l;
}

static void bind(relayout_desc *s, relayout_desc *d, const char *from,
                 const char *to, relayout_dtype t, int rank,
                 const int64_t *shape) {
  relayout_layout *a = parse(from), *b = parse(to);
  CHECK_OK(relayout_bind(s, d, a, b, t, rank, shape, NULL, 0, &e_));
  relayout_layout_free(a);
  relayout_layout_free(b);
}

static void shape_is(const relayout_desc *d, int rank, const int64_t *want) {
  int r;
  int64_t shape[RELAYOUT_MAX_AXES];
  relayout_desc_physical_shape(&r, shape, d);
  int same = r == rank;
  for (int i = 0; same && i < r; i++) same = shape[i] == want[i];
  CHECK(same, "physical shape differs (rank %d vs %d)", r, rank);
}

/* 000: ND (20, 28) fp16 -> FRACTAL_NZ, the printed tensor of the seed. */
static void nz_20x28(void) {
  const int64_t in_shape[2] = {20, 28};
  relayout_desc s, d;
  bind(&s, &d, "ND", "FRACTAL_NZ", RELAYOUT_F16, 2, in_shape);
  shape_is(&d, 4, (const int64_t[]){2, 2, 16, 16});
  uint16_t in[20 * 28];
  for (int i = 0; i < 20 * 28; i++) in[i] = (uint16_t)i; /* value = index */
  guarded out = guarded_alloc(2 * 2 * 16 * 16 * 2, 0xA5);
  CHECK_OK(
      relayout_convert_ref(&d, out.data, out.size, &s, in, sizeof in, &e_));
  const uint16_t *o = (const uint16_t *)out.data;
  /* [n1][m1][m0][n0] -> the value the seed prints there */
  static const int golden[][5] = {
      {0, 0, 0, 0, 0},    {0, 0, 0, 1, 1},     {0, 0, 0, 15, 15},
      {0, 0, 1, 0, 28},   {0, 0, 2, 2, 58},    {0, 0, 13, 0, 364},
      {0, 0, 15, 0, 420}, {0, 0, 15, 15, 435}, {0, 1, 0, 0, 448},
      {0, 1, 0, 15, 463}, {0, 1, 1, 0, 476},   {0, 1, 2, 0, 504},
      {0, 1, 4, 0, 0},    {0, 1, 15, 15, 0},   {1, 0, 0, 0, 16},
      {1, 0, 0, 2, 18},   {1, 0, 0, 12, 0},    {1, 0, 0, 15, 0},
      {1, 0, 1, 0, 44},   {1, 0, 2, 0, 72},    {1, 0, 13, 0, 380},
      {1, 0, 14, 0, 408}, {1, 0, 15, 0, 436},  {1, 1, 0, 0, 464},
      {1, 1, 1, 0, 492},  {1, 1, 2, 0, 520},   {1, 1, 15, 15, 0}};
  for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
    const int *g = golden[i];
    int at = ((g[0] * 2 + g[1]) * 16 + g[2]) * 16 + g[3];
    CHECK(o[at] == g[4], "NZ[%d][%d][%d][%d] = %u, seed prints %d", g[0], g[1],
          g[2], g[3], o[at], g[4]);
  }
  guarded_free(&out);
}

/* 000: HWCN (2, 2, 32, 32) -> FRACTAL_Z (C1HW, N1, N0, C0) = (8, 2, 16, 16),
 * the shape CANN stores; one array axis per physical axis is held too. */
static void fractal_z_hwcn(void) {
  const int64_t in_shape[4] = {2, 2, 32, 32};
  relayout_desc s, d;
  bind(&s, &d, "HWCN", "FRACTAL_Z", RELAYOUT_F16, 4, in_shape);
  shape_is(&d, 4, (const int64_t[]){8, 2, 16, 16});
  CHECK(relayout_desc_holds_shape(&d, 6, (const int64_t[]){2, 2, 2, 2, 16, 16}),
        "FRACTAL_Z as 6 axes");
  CHECK(!relayout_desc_holds_shape(&d, 4, (const int64_t[]){8, 2, 16, 8}) &&
            !relayout_desc_holds_shape(&d, 2, (const int64_t[]){16, 512}),
        "other shapes of as many bytes are not FRACTAL_Z's");
}

/* 000: NDHWC (48, 3, 3, 2, 32) fp16 -> FRACTAL_Z_3D = (3*2*3*2, 3, 16, 16). */
static void fractal_z_3d(void) {
  const int64_t in_shape[5] = {48, 3, 3, 2, 32};
  relayout_desc s, d;
  bind(&s, &d, "NDHWC", "FRACTAL_Z_3D", RELAYOUT_F16, 5, in_shape);
  shape_is(&d, 4, (const int64_t[]){36, 3, 16, 16});
  CHECK(relayout_desc_holds_shape(&d, 7,
                                  (const int64_t[]){3, 2, 3, 2, 3, 16, 16}),
        "FRACTAL_Z_3D as 7 axes");
}

/* 001: nChw8c offset = n*Cp*H*W + (c/8)*H*W*8 + h*W*8 + w*8 + c%8, C=17
 * padded to 24 (oneDNN's expect_stride_n = C_padded * H * W). */
static void nchw8c(void) {
  const int64_t N = 2, C = 17, H = 3, W = 5, Cp = 24;
  relayout_layout *l = parse("nChw8c");
  relayout_desc d;
  CHECK_OK(relayout_desc_init(&d, l, RELAYOUT_F32, 4, "NCHW",
                              (const int64_t[]){N, C, H, W}, &e_));
  relayout_vdim v[RELAYOUT_MAX_DIMS + 1];
  relayout_desc_vdims(&d, v);
  CHECK(v[1].padded == 24, "padded C = %lld, seed says 24",
        (long long)v[1].padded);
  int bad = 0;
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t w = 0; w < W; w++) {
          int64_t off, want = n * Cp * H * W + (c / 8) * H * W * 8 + h * W * 8 +
                              w * 8 + c % 8;
          relayout_desc_offset(&off, &d, (const int64_t[]){n, c, h, w}, NULL);
          bad += off != want;
        }
  CHECK(bad == 0, "%d nChw8c offsets differ from the seed's formula", bad);
  int pad;
  CHECK_OK(relayout_desc_is_padding(&pad, &d, 0 * H * W * 8 + 2 * W * 8 + 8 - 1,
                                    &e_));
  CHECK(!pad, "c=7 is data");
  CHECK_OK(relayout_desc_is_padding(&pad, &d, 2 * H * W * 8 + 1, &e_));
  CHECK(pad, "c=17 of the last block is padding");
  relayout_layout_free(l);
}

/* 002: int32 (2, 5) row-major: byte strides (20, 4); [1][2] at byte 28. */
static void megengine_strides(void) {
  relayout_layout *l = parse("ND");
  relayout_desc d;
  CHECK_OK(relayout_desc_init(&d, l, RELAYOUT_I32, 2, "01",
                              (const int64_t[]){2, 5}, &e_));
  relayout_axis a[RELAYOUT_MAX_AXES];
  relayout_desc_axes(&d, a);
  CHECK(a[0].stride * 4 == 20 && a[1].stride * 4 == 4,
        "byte strides (%lld, %lld)", (long long)a[0].stride * 4,
        (long long)a[1].stride * 4);
  int64_t off;
  CHECK_OK(relayout_desc_offset(&off, &d, (const int64_t[]){1, 2}, &e_));
  CHECK(off * 4 == 28, "[1][2] at byte %lld", (long long)off * 4);
  relayout_layout_free(l);
}

/* 003: ((4,2),(4,3)):((4,16),(1,32)): (1, 5) -> 37, and rows of the table. */
static void cute_zn(void) {
  relayout_layout *l = parse("((4,2),(4,3)):((4,16),(1,32))");
  relayout_desc d;
  CHECK_OK(relayout_desc_init(&d, l, RELAYOUT_F16, 2, "01",
                              (const int64_t[]){8, 12}, &e_));
  int64_t off;
  CHECK_OK(relayout_desc_offset(&off, &d, (const int64_t[]){1, 5}, &e_));
  CHECK(off == 37, "(1, 5) -> %lld, seed says 37", (long long)off);
  static const int rows[3][13] = {
      {0, 0, 1, 2, 3, 32, 33, 34, 35, 64, 65, 66, 67},
      {4, 16, 17, 18, 19, 48, 49, 50, 51, 80, 81, 82, 83},
      {7, 28, 29, 30, 31, 60, 61, 62, 63, 92, 93, 94, 95}};
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 12; c++) {
      relayout_desc_offset(&off, &d, (const int64_t[]){rows[r][0], c}, NULL);
      CHECK(off == rows[r][c + 1], "(%d, %d) -> %lld, seed says %d", rows[r][0],
            c, (long long)off, rows[r][c + 1]);
    }
  relayout_layout_free(l);
}

static int64_t stride_of(const relayout_desc *d, int dim, int64_t weight) {
  relayout_axis a[RELAYOUT_MAX_AXES];
  int n = relayout_desc_axes(d, a);
  for (int i = 0; i < n; i++)
    if (a[i].dim == dim && a[i].weight == weight && a[i].extent > 0)
      return a[i].stride;
  return -1;
}

/* 004: 128-byte aligned fp32 (N=2, C=3, H=4, W=5) on 4 NPUs: C stride 32,
 * N stride 32 from NPU 0; from NPU 2 two channels share an NPU: N stride 64.
 * Compact: C stride H*W = 20. */
static void tpu_strides(void) {
  static const struct {
    const char *text;
    int64_t cstride, nstride;
  } cases[] = {
      {"TPU_ALIGNED(npus=4,lmem=1024)", 32, 32},
      {"TPU_ALIGNED(npus=4,start=2,lmem=1024)", 32, 64},
      {"TPU_COMPACT(npus=4,lmem=1024)", 20, 20},
      {"TPU_COMPACT(npus=4,start=2,lmem=1024)", 20, 40},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    relayout_layout *l = parse(cases[i].text);
    relayout_desc d;
    CHECK_OK(relayout_desc_init(&d, l, RELAYOUT_F32, 4, "NCHW",
                                (const int64_t[]){2, 3, 4, 5}, &e_));
    CHECK(stride_of(&d, 1, 4) == cases[i].cstride, "%s: C stride %lld",
          cases[i].text, (long long)stride_of(&d, 1, 4));
    CHECK(stride_of(&d, 0, 1) == cases[i].nstride, "%s: N stride %lld",
          cases[i].text, (long long)stride_of(&d, 0, 1));
    /* Channel c of a tensor starting at NPU Q: NPU (Q+c)%4, slot (Q+c)/4;
     * address = NPU * 256 elements (1024 bytes) + offset. */
    int64_t q = strstr(cases[i].text, "start=2") ? 2 : 0, off;
    for (int64_t c = 0; c < 3; c++) {
      relayout_desc_offset(&off, &d, (const int64_t[]){1, c, 2, 3}, NULL);
      int64_t want = (q + c) % 4 * 256 + cases[i].nstride +
                     (q + c) / 4 * cases[i].cstride + 2 * 5 + 3;
      CHECK(off == want, "%s: (1,%lld,2,3) at %lld, want %lld", cases[i].text,
            (long long)c, (long long)off, (long long)want);
    }
    relayout_layout_free(l);
  }
}

/* 004: matrix layout, 2x40 fp32: W=20 puts 20 columns on each of NPU 0 and
 * 1, each row padded to 32; W=15 leaves the last channel 10 columns. */
static void tpu_matrix(void) {
  relayout_layout *l = parse("TPU_MATRIX(npus=4,lmem=1024,w=20)");
  relayout_desc d;
  CHECK_OK(relayout_desc_init(&d, l, RELAYOUT_F32, 2, "NM",
                              (const int64_t[]){2, 40}, &e_));
  int64_t off;
  relayout_desc_offset(&off, &d, (const int64_t[]){1, 25}, NULL);
  CHECK(off == 256 + 32 + 5, "(1, 25) at %lld", (long long)off);
  relayout_layout_free(l);
  l = parse("TPU_MATRIX(npus=4,lmem=1024,w=15)");
  CHECK_OK(relayout_desc_init(&d, l, RELAYOUT_F32, 2, "NM",
                              (const int64_t[]){2, 40}, &e_));
  int pad;
  relayout_desc_is_padding(&pad, &d, 2 * 256 + 9, NULL);
  CHECK(!pad, "column 39 (NPU 2, position 9) is data");
  relayout_desc_is_padding(&pad, &d, 2 * 256 + 10, NULL);
  CHECK(pad, "NPU 2 position 10 is past M=40");
  relayout_layout_free(l);
}

/* 000 and LAYOUTS.md's note: FRACTAL_ZN's fractal is (32 B / element size)
 * x 16 with K innermost, K0 = 32 B, N0 = 16: int8 ND (40, 20) is (K1, N1,
 * N0, K0) = (2, 2, 16, 32), as Ascend C's MakeZNLayout lays it out, and
 * element (k, n) sits at ((k / K0 * N1 + n / 16) * 16 + n % 16) * K0 +
 * k % K0. */
static void fractal_zn(void) {
  static const struct {
    relayout_dtype t;
    int64_t k0, shape[4];
  } cases[] = {{RELAYOUT_I8, 32, {2, 2, 16, 32}},
               {RELAYOUT_F16, 16, {3, 2, 16, 16}},
               {RELAYOUT_F32, 8, {5, 2, 16, 8}},
               {RELAYOUT_I4, 64, {1, 2, 16, 64}}};
  relayout_layout *nd = parse("ND"), *zn = parse("FRACTAL_ZN");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    relayout_desc s, d;
    CHECK_OK(relayout_bind(&s, &d, nd, zn, cases[i].t, 2,
                           (const int64_t[]){40, 20}, NULL, 0, &e_));
    int rank;
    int64_t shape[RELAYOUT_MAX_AXES], off, k0 = cases[i].k0;
    relayout_desc_physical_shape(&rank, shape, &d);
    CHECK(rank == 4 && !memcmp(shape, cases[i].shape, sizeof cases[i].shape),
          "%s ZN of (40, 20): (%lld, %lld, %lld, %lld)",
          relayout_dtype_name(cases[i].t), (long long)shape[0],
          (long long)shape[1], (long long)shape[2], (long long)shape[3]);
    CHECK_OK(relayout_desc_offset(&off, &d, (const int64_t[]){33, 17}, &e_));
    CHECK(off == ((33 / k0 * 2 + 1) * 16 + 1) * k0 + 33 % k0,
          "%s (33, 17) at %lld", relayout_dtype_name(cases[i].t),
          (long long)off);
  }
  relayout_layout_free(nd);
  relayout_layout_free(zn);
}

/* 004: 4N mode, int8 (N=6, C=5, H=4, W=5): (4,c,h,w) and (5,c,h,w) share the
 * int8x4 element (1,c,h,w) with two dummy bytes. */
static void four_n(void) {
  relayout_layout *l = parse("4N");
  relayout_desc d;
  CHECK_OK(relayout_desc_init(&d, l, RELAYOUT_I8, 4, "NCHW",
                              (const int64_t[]){6, 5, 4, 5}, &e_));
  int64_t off;
  relayout_desc_offset(&off, &d, (const int64_t[]){5, 0, 0, 0}, NULL);
  CHECK(off == 1 * 5 * 4 * 5 * 4 + 1, "(5,0,0,0) at %lld", (long long)off);
  int pad;
  relayout_desc_is_padding(&pad, &d, 1 * 5 * 4 * 5 * 4 + 2, NULL);
  CHECK(pad, "the third byte of int8x4 element (1,0,0,0) is a dummy");
  relayout_layout_free(l);
}

/* Every coordinate of an NCHW tensor at (n, c, h, w) in layout text, as
 * want() computes it from the seed's formula, in elements. */
typedef int64_t (*offset_fn)(const int64_t *x);
static void every_offset(const char *text, relayout_dtype t, const int64_t *ext,
                         offset_fn want) {
  relayout_layout *l = parse(text);
  relayout_desc d;
  CHECK_OK(relayout_desc_init(&d, l, t, 4, "NCHW", ext, &e_));
  int64_t x[4], off, bad = 0;
  for (x[0] = 0; x[0] < ext[0]; x[0]++)
    for (x[1] = 0; x[1] < ext[1]; x[1]++)
      for (x[2] = 0; x[2] < ext[2]; x[2]++)
        for (x[3] = 0; x[3] < ext[3]; x[3]++) {
          relayout_desc_offset(&off, &d, x, NULL);
          if (off != want(x) && !bad++)
            CHECK(0, "%s: (%lld,%lld,%lld,%lld) at %lld, the seed says %lld",
                  text, (long long)x[0], (long long)x[1], (long long)x[2],
                  (long long)x[3], (long long)off, (long long)want(x));
        }
  relayout_layout_free(l);
}

/* 004, "Strides in Local Memory", 4 NPUs of 1024 bytes (256 fp32): (2, 5,
 * 3, 4) from NPU 0 with W, H, C, N strides 2, 16, 56, 120; (2, 3, 1, 10)
 * from NPU 1 with W stride 2, N stride 120. */
static int64_t strided_1(const int64_t *x) {
  return x[1] % 4 * 256 + x[0] * 120 + x[1] / 4 * 56 + x[2] * 16 + x[3] * 2;
}
static int64_t strided_2(const int64_t *x) {
  return (1 + x[1]) % 4 * 256 + x[0] * 120 + x[3] * 2;
}
/* 4N on (6, 5, 4, 5) int8, aligned: int8x4 words, C stride ceil(20 / 32) *
 * 32 = 32 words, two channels per NPU so N stride 64 words; the four N of a
 * word side by side. 2N on (3, 5, 4, 5) int16 the same in int16x2 words
 * (bytes / 2 per NPU). 2IC on an fp32 [I, O, H, W] = (3, 5, 2, 2) weight,
 * compact, from NPU 1: fp32x2 words, C stride 4, N stride 8 words. */
static int64_t four_n_aligned(const int64_t *x) {
  return x[1] % 4 * 1024 +
         (x[0] / 4 * 64 + x[1] / 4 * 32 + x[2] * 5 + x[3]) * 4 + x[0] % 4;
}
static int64_t two_n_aligned(const int64_t *x) {
  return x[1] % 4 * 512 +
         (x[0] / 2 * 64 + x[1] / 4 * 32 + x[2] * 5 + x[3]) * 2 + x[0] % 2;
}
static int64_t two_ic_compact(const int64_t *x) {
  return (1 + x[1]) % 4 * 256 +
         (x[0] / 2 * 8 + (1 + x[1]) / 4 * 4 + x[2] * 2 + x[3]) * 2 + x[0] % 2;
}

static void tpu_local(void) {
  /* "Address of Tensor in Local Memory": X = 4, S = 1024; A = Q * S + R
   * for A = 340, 1472, 2300, 3088; a compact fp32 tensor there has its
   * first element at byte A. */
  static const int64_t addr[4] = {340, 1472, 2300, 3088};
  for (int i = 0; i < 4; i++) {
    char text[96];
    snprintf(text, sizeof text,
             "TPU_COMPACT(npus=4,lmem=1024,start=%lld,"
             "offset=%lld)",
             (long long)(addr[i] / 1024), (long long)(addr[i] % 1024));
    relayout_layout *l = parse(text);
    relayout_desc d;
    int64_t off;
    CHECK_OK(relayout_desc_init(&d, l, RELAYOUT_F32, 4, "NCHW",
                                (const int64_t[]){2, 3, 4, 5}, &e_));
    relayout_desc_offset(&off, &d, (const int64_t[]){0, 0, 0, 0}, NULL);
    CHECK(off * 4 == addr[i], "%s: the tensor starts at byte %lld", text,
          (long long)(off * 4));
    int pad;
    relayout_desc_is_padding(&pad, &d, off - 1, NULL);
    CHECK(pad, "%s: the element before the address is not the tensor's", text);
    relayout_layout_free(l);
    /* "The address of the tensor is divisable by 128" (aligned) */
    snprintf(text, sizeof text,
             "TPU_ALIGNED(npus=4,lmem=1024,start=%lld,"
             "offset=%lld)",
             (long long)(addr[i] / 1024), (long long)(addr[i] % 1024));
    l = parse(text);
    CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "not a multiple of 128 bytes",
                relayout_desc_init(&d, l, RELAYOUT_F32, 4, "NCHW",
                                   (const int64_t[]){2, 3, 4, 5}, &e_));
    relayout_layout_free(l);
  }
  every_offset("TPU_STRIDED(npus=4,lmem=1024,wstride=2,hstride=16,"
               "cstride=56,nstride=120)",
               RELAYOUT_F32, (const int64_t[]){2, 5, 3, 4}, strided_1);
  every_offset("TPU_STRIDED(npus=4,lmem=1024,start=1,wstride=2,nstride=120)",
               RELAYOUT_F32, (const int64_t[]){2, 3, 1, 10}, strided_2);
  every_offset("TPU_ALIGNED(npus=4,lmem=1024,n0=4)", RELAYOUT_I8,
               (const int64_t[]){6, 5, 4, 5}, four_n_aligned);
  every_offset("TPU_ALIGNED(npus=4,lmem=1024,n0=2)", RELAYOUT_I16,
               (const int64_t[]){3, 5, 4, 5}, two_n_aligned);
  every_offset("TPU_COMPACT(npus=4,lmem=1024,start=1,n0=2)", RELAYOUT_F32,
               (const int64_t[]){3, 5, 2, 2}, two_ic_compact);
  /* 4N's dummies: N = 6 fills words 0 and 1 with 4 + 2, bytes 2 and 3 of
   * word (1, 0, 0, 0) are padding */
  relayout_layout *l = parse("TPU_ALIGNED(npus=4,lmem=1024,n0=4)");
  relayout_desc d;
  int pad;
  CHECK_OK(relayout_desc_init(&d, l, RELAYOUT_I8, 4, "NCHW",
                              (const int64_t[]){6, 5, 4, 5}, &e_));
  relayout_desc_is_padding(&pad, &d, 64 * 4 + 1, NULL);
  CHECK(!pad, "(5, 0, 0, 0) is data");
  relayout_desc_is_padding(&pad, &d, 64 * 4 + 2, NULL);
  CHECK(pad, "the third byte of word (1, 0, 0, 0) is a dummy");
  /* each storage mode's dtypes */
  CHECK_FAILS(RELAYOUT_ERR_UNSUPPORTED, "n0=4 does not hold i16",
              relayout_desc_init(&d, l, RELAYOUT_I16, 4, "NCHW",
                                 (const int64_t[]){6, 5, 4, 5}, &e_));
  relayout_layout_free(l);
  l = parse("TPU_COMPACT(npus=4,lmem=1024,n0=2)");
  CHECK_FAILS(RELAYOUT_ERR_UNSUPPORTED, "n0=2 does not hold f16",
              relayout_desc_init(&d, l, RELAYOUT_F16, 4, "NCHW",
                                 (const int64_t[]){2, 5, 4, 5}, &e_));
  relayout_layout_free(l);
}

int main(void) {
  nz_20x28();
  fractal_z_hwcn();
  fractal_z_3d();
  nchw8c();
  megengine_strides();
  cute_zn();
  tpu_strides();
  tpu_matrix();
  four_n();
  tpu_local();
  fractal_zn();
  return check_summary();
}
