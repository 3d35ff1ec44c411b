/* test_formats.c - every named format against its own formula, on odd shapes
 *
 * Each format's destination offset is written here from the seed formulas
 * (pad, reshape, transpose), independently of the library; so are two
 * grammar layouts with blocks written before their dim's outer letter. For
 * random shapes with extents of 1, primes and non-multiples of every block,
 * and for every element width (4, 8, 16, 32, 64 bits): the reference
 * output equals the formula's, padding is zero, is_padding agrees, and
 * converting back gives the original bytes. Buffers are guarded and
 * poisoned.
 */
#include "check.h"

typedef struct ctx {
  int64_t val[128], ext[128]; /* coordinate and extent per dim letter */
  int64_t c0;                 /* the format's variable block at this dtype */
} ctx;

#define V(l) (c->val[(unsigned char)(l)])
#define E(l) (c->ext[(unsigned char)(l)])

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Seed 000: (..., M, N) -> (..., N1, M1, M0=16, N0) */
static int64_t nz(const ctx *c) {
  int64_t M1 = cdiv(E('M'), 16), N1 = cdiv(E('N'), c->c0);
  return ((V('0') * N1 + V('N') / c->c0) * M1 + V('M') / 16) * 16 * c->c0 +
         V('M') % 16 * c->c0 + V('N') % c->c0;
}
static int64_t nz_size(const ctx *c) {
  return E('0') * cdiv(E('M'), 16) * 16 * cdiv(E('N'), c->c0) * c->c0;
}
/* (..., M, K) -> (..., M1, K1, M0=16, K0) */
static int64_t zz(const ctx *c) {
  int64_t M1 = cdiv(E('M'), 16), K1 = cdiv(E('K'), c->c0);
  return ((V('0') * M1 + V('M') / 16) * K1 + V('K') / c->c0) * 16 * c->c0 +
         V('M') % 16 * c->c0 + V('K') % c->c0;
}
static int64_t zz_size(const ctx *c) {
  return E('0') * cdiv(E('M'), 16) * 16 * cdiv(E('K'), c->c0) * c->c0;
}
/* (..., K, N) -> (..., K1, N1, N0=16, K0): the 512-byte fractal, K innermost */
static int64_t zn(const ctx *c) {
  int64_t K1 = cdiv(E('K'), c->c0), N1 = cdiv(E('N'), 16);
  return ((V('0') * K1 + V('K') / c->c0) * N1 + V('N') / 16) * 16 * c->c0 +
         V('N') % 16 * c->c0 + V('K') % c->c0;
}
static int64_t zn_size(const ctx *c) {
  return E('0') * cdiv(E('K'), c->c0) * c->c0 * cdiv(E('N'), 16) * 16;
}
/* ND_ALIGN: (..., M, N) with N padded to 32 bytes (c0 = 32 bytes in elements)
 */
/* CATLASS's nN (seed 003; LAYOUTS.md): (..., M, N) -> (..., N1, M1,
 * N0=16, M0), column-major inside a fractal and between fractals. */
static int64_t nn(const ctx *c) {
  int64_t M1 = cdiv(E('M'), c->c0), N1 = cdiv(E('N'), 16);
  return ((V('0') * N1 + V('N') / 16) * M1 + V('M') / c->c0) * 16 * c->c0 +
         V('N') % 16 * c->c0 + V('M') % c->c0;
}
static int64_t nn_size(const ctx *c) {
  return E('0') * cdiv(E('N'), 16) * 16 * cdiv(E('M'), c->c0) * c->c0;
}
static int64_t nd_align(const ctx *c) {
  return (V('0') * E('M') + V('M')) * cdiv(E('N'), c->c0) * c->c0 + V('N');
}
static int64_t nd_align_size(const ctx *c) {
  return E('0') * E('M') * cdiv(E('N'), c->c0) * c->c0;
}
/* NC1HWC0 and every NCHWxc: (N, C1, H, W, C0) */
static int64_t nc1hwc0(const ctx *c) {
  int64_t C1 = cdiv(E('C'), c->c0);
  return ((V('N') * C1 + V('C') / c->c0) * E('H') + V('H')) * E('W') * c->c0 +
         V('W') * c->c0 + V('C') % c->c0;
}
static int64_t nc1hwc0_size(const ctx *c) {
  return E('N') * cdiv(E('C'), c->c0) * c->c0 * E('H') * E('W');
}
/* NDC1HWC0: (N, D, C1, H, W, C0) */
static int64_t ndc1hwc0(const ctx *c) {
  int64_t C1 = cdiv(E('C'), c->c0);
  return (((V('N') * E('D') + V('D')) * C1 + V('C') / c->c0) * E('H') +
          V('H')) *
             E('W') * c->c0 +
         V('W') * c->c0 + V('C') % c->c0;
}
static int64_t ndc1hwc0_size(const ctx *c) {
  return E('N') * E('D') * cdiv(E('C'), c->c0) * c->c0 * E('H') * E('W');
}
/* FRACTAL_Z: pad, reshape (N1, N0, C1, C0, H, W), transpose to
 * (C1, H, W, N1, N0, C0) */
static int64_t fz(const ctx *c) {
  int64_t N1 = cdiv(E('N'), 16);
  return (((V('C') / c->c0 * E('H') + V('H')) * E('W') + V('W')) * N1 +
          V('N') / 16) *
             16 * c->c0 +
         V('N') % 16 * c->c0 + V('C') % c->c0;
}
static int64_t fz_size(const ctx *c) {
  return cdiv(E('C'), c->c0) * c->c0 * E('H') * E('W') * cdiv(E('N'), 16) * 16;
}
/* FRACTAL_Z_3D: (N1, N0, D, H, W, C1, C0) -> (D, C1, H, W, N1, N0, C0) */
static int64_t fz3d(const ctx *c) {
  int64_t N1 = cdiv(E('N'), 16), C1 = cdiv(E('C'), c->c0);
  return ((((V('D') * C1 + V('C') / c->c0) * E('H') + V('H')) * E('W') +
           V('W')) *
              N1 +
          V('N') / 16) *
             16 * c->c0 +
         V('N') % 16 * c->c0 + V('C') % c->c0;
}
static int64_t fz3d_size(const ctx *c) { return fz_size(c) * E('D'); }
/* CHWN4: (C1, H, W, N, C0=4) */
static int64_t chwn4(const ctx *c) {
  return ((V('C') / 4 * E('H') + V('H')) * E('W') + V('W')) * E('N') * 4 +
         V('N') * 4 + V('C') % 4;
}
static int64_t chwn4_size(const ctx *c) {
  return cdiv(E('C'), 4) * 4 * E('H') * E('W') * E('N');
}
/* 4N / 2N: (N1, C, H, W, N0); c0 is N0 */
static int64_t xn(const ctx *c) {
  return ((V('N') / c->c0 * E('C') + V('C')) * E('H') + V('H')) * E('W') *
             c->c0 +
         V('W') * c->c0 + V('N') % c->c0;
}
static int64_t xn_size(const ctx *c) {
  return cdiv(E('N'), c->c0) * c->c0 * E('C') * E('H') * E('W');
}
/* 2IC: (I1, O, H, W, I0=2) */
static int64_t ic2(const ctx *c) {
  return ((V('I') / 2 * E('O') + V('O')) * E('H') + V('H')) * E('W') * 2 +
         V('W') * 2 + V('I') % 2;
}
static int64_t ic2_size(const ctx *c) {
  return cdiv(E('I'), 2) * 2 * E('O') * E('H') * E('W');
}
/* Grammar text with a block written before its dim's outer axis: the
 * block is still C's innermost part, the outer C what is left (LAYOUTS.md
 * section 2). 8cNCHW: (C0=8, N, C1, H, W) */
static int64_t c0_first(const ctx *c) {
  int64_t C1 = cdiv(E('C'), 8);
  return (((V('C') % 8 * E('N') + V('N')) * C1 + V('C') / 8) * E('H') +
          V('H')) *
             E('W') +
         V('W');
}
/* 2cNCHW4c: (C / 4 % 2, N, C / 8, H, W, C % 4) */
static int64_t c0_around(const ctx *c) {
  int64_t C1 = cdiv(E('C'), 8);
  return ((((V('C') / 4 % 2 * E('N') + V('N')) * C1 + V('C') / 8) * E('H') +
           V('H')) *
              E('W') +
          V('W')) *
             4 +
         V('C') % 4;
}
static int64_t c8_size(const ctx *c) {
  return cdiv(E('C'), 8) * 8 * E('N') * E('H') * E('W');
}

/* How a case's c0 follows the dtype: LAYOUTS.md section 3. */
enum { CUBE = -1, B32 = -2 };

typedef struct fcase {
  const char *src;   /* plain source layout */
  const char *order; /* the source's dims, outermost first ('0': batch) */
  const char *dst;
  int c0_rule; /* CUBE, B32 or a fixed block */
  int64_t (*off)(const ctx *);
  int64_t (*size)(const ctx *);
} fcase;

static const fcase cases[] = {
    {"ND", "0MN", "FRACTAL_NZ", B32, nz, nz_size},
    {"ND", "MN", "NZ", B32, nz, nz_size},
    {"ND", "0MK", "FRACTAL_ZZ", B32, zz, zz_size},
    {"ND", "0KN", "FRACTAL_ZN", B32, zn, zn_size},
    {"ND", "KN", "ZN", B32, zn, zn_size},
    {"ND", "MN", "zN", B32, nz, nz_size},
    {"ND", "0MK", "zZ", B32, zz, zz_size},
    {"ND", "0KN", "nZ", B32, zn, zn_size},
    {"ND", "0MN", "nN", B32, nn, nn_size},
    {"ND", "0MN", "ND_ALIGN", B32, nd_align, nd_align_size},
    {"NCHW", "NCHW", "NC1HWC0", CUBE, nc1hwc0, nc1hwc0_size},
    {"NHWC", "NHWC", "NC1HWC0", CUBE, nc1hwc0, nc1hwc0_size},
    {"NDHWC", "NDHWC", "NDC1HWC0", CUBE, ndc1hwc0, ndc1hwc0_size},
    {"NCHW", "NCHW", "FRACTAL_Z", CUBE, fz, fz_size},
    {"HWCN", "HWCN", "FRACTAL_Z", CUBE, fz, fz_size},
    {"NDHWC", "NDHWC", "FRACTAL_Z_3D", CUBE, fz3d, fz3d_size},
    {"NCHW", "NCHW", "nChw16c", 16, nc1hwc0, nc1hwc0_size},
    {"NCHW", "NCHW", "nChw8c", 8, nc1hwc0, nc1hwc0_size},
    {"NCHW", "NCHW", "NCHW4", 4, nc1hwc0, nc1hwc0_size},
    {"NHWC", "NHWC", "NCHW32", 32, nc1hwc0, nc1hwc0_size},
    {"NCHW", "NCHW", "NCHW64", 64, nc1hwc0, nc1hwc0_size},
    {"NCHW", "NCHW", "CHWN4", 4, chwn4, chwn4_size},
    {"NCHW", "NCHW", "4N", 4, xn, xn_size},
    {"CHWN", "CHWN", "2N", 2, xn, xn_size},
    {"IOHW", "IOHW", "2IC", 2, ic2, ic2_size},
    {"NCHW", "NCHW", "8cNCHW", 8, c0_first, c8_size},
    {"NCHW", "NCHW", "2cNCHW4c", 8, c0_around, c8_size},
};

static const relayout_dtype widths[] = {RELAYOUT_I4, RELAYOUT_U8, RELAYOUT_F16,
                                        RELAYOUT_F32, RELAYOUT_F64};

static int64_t c0_for(int rule, relayout_dtype t) {
  int bits = relayout_dtype_bits(t);
  if (rule == CUBE) return bits == 4 ? 64 : bits == 8 ? 32 : 16;
  if (rule == B32) return 256 / bits;
  return rule;
}

/* Element i of a buffer: get and put, nibbles for 4-bit. */
static uint64_t get(const unsigned char *b, int64_t i, int bits) {
  if (bits == 4) return b[i / 2] >> (i % 2 * 4) & 0xF;
  uint64_t v = 0;
  memcpy(&v, b + i * (bits / 8), (size_t)bits / 8);
  return v;
}
static void put(unsigned char *b, int64_t i, int bits, uint64_t v) {
  if (bits == 4) {
    int sh = (int)(i % 2) * 4;
    b[i / 2] = (unsigned char)((b[i / 2] & ~(0xF << sh)) | (v & 0xF) << sh);
    return;
  }
  memcpy(b + i * (bits / 8), &v, (size_t)bits / 8);
}
/* A never-zero value for element i, so an unwritten element shows. */
static uint64_t pattern(int64_t i, int bits) {
  if (bits == 4) return (uint64_t)(i * 7 + 3) % 15 + 1;
  uint64_t v = ((uint64_t)i + 1) * 0x9E3779B97F4A7C15ULL;
  uint64_t mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
  return (v & mask) ? v & mask : 1;
}

static int64_t pick_extent(void) {
  static const int64_t edge[] = {1, 2, 3, 5, 7, 13, 16, 17, 31, 33, 64, 65};
  return rng_next() % 3 ? edge[rng_next() % 12] : rng_range(1, 40);
}

/* Binds a -> b for logical dims names/ext as a caller holding an array in
 * layout a would: letters by --dims, the array's shape for the rest. */
static void bind_as_array(relayout_desc *s, relayout_desc *d, const char *a,
                          const char *b, relayout_dtype t, const char *names,
                          const int64_t *ext, int n) {
  relayout_layout *la, *lb;
  relayout_desc shape_of;
  relayout_dim_value given[RELAYOUT_MAX_DIMS];
  int ng = 0, rank;
  int64_t shape[RELAYOUT_MAX_AXES];
  for (int i = 0; i < n; i++)
    if (names[i] != '0') given[ng++] = (relayout_dim_value){names[i], ext[i]};
  CHECK_OK(relayout_layout_parse(&la, a, &e_));
  CHECK_OK(relayout_layout_parse(&lb, b, &e_));
  CHECK_OK(relayout_desc_init(&shape_of, la, t, n, names, ext, &e_));
  relayout_desc_physical_shape(&rank, shape, &shape_of);
  CHECK_OK(relayout_bind(s, d, la, lb, t, rank, shape, given, ng, &e_));
  relayout_layout_free(la);
  relayout_layout_free(lb);
}

/* Converts bytes `in` (layout a) to layout b; out is guarded and poisoned. */
static void convert(guarded *out, const char *a, const char *b,
                    relayout_dtype t, const char *names, const int64_t *ext,
                    int n, const unsigned char *in, size_t in_size) {
  relayout_desc s, d;
  int64_t bytes = 0;
  bind_as_array(&s, &d, a, b, t, names, ext, n);
  relayout_desc_size_bytes(&bytes, &d, NULL);
  *out = guarded_alloc((size_t)bytes, 0xA5);
  CHECK_OK(
      relayout_convert_ref(&d, out->data, out->size, &s, in, in_size, &e_));
}

/* Builds the expected destination of case fc from the formula. */
static unsigned char *expected(const fcase *fc, ctx *c,
                               const unsigned char *src, int bits,
                               int64_t *size_out, unsigned char **hit) {
  int n = (int)strlen(fc->order);
  int64_t size = fc->size(c), bytes = (size * bits + 7) / 8;
  unsigned char *exp = calloc((size_t)bytes, 1);
  *hit = calloc((size_t)size, 1);
  int64_t x[RELAYOUT_MAX_DIMS] = {0}, i = 0;
  for (;; i++) {
    for (int k = 0; k < n; k++) V(fc->order[k]) = x[k];
    int64_t at = fc->off(c);
    put(exp, at, bits, get(src, i, bits));
    (*hit)[at] = 1;
    int k = n - 1;
    while (k >= 0 && ++x[k] == E(fc->order[k])) x[k--] = 0;
    if (k < 0) break;
  }
  *size_out = bytes;
  return exp;
}

/* Draws a shape of at most 40000 elements for the dims of `order`; fills c's
 * extents by letter and returns the element count. */
static int64_t draw_shape(int64_t *ext, ctx *c, const char *order) {
  int n = (int)strlen(order);
  int64_t count;
  do {
    count = 1;
    for (int k = 0; k < n; k++) count *= ext[k] = pick_extent();
  } while (count > 40000);
  for (int k = 0; k < 128; k++) c->ext[k] = 1;
  for (int k = 0; k < n; k++) c->ext[(unsigned char)order[k]] = ext[k];
  return count;
}

/* A guarded source of `count` never-zero elements. */
static guarded fill_source(int64_t count, int bits) {
  guarded src = guarded_alloc((size_t)((count * bits + 7) / 8), 0);
  for (int64_t i = 0; i < count; i++) put(src.data, i, bits, pattern(i, bits));
  return src;
}

static void one_case(const fcase *fc, relayout_dtype t) {
  int bits = relayout_dtype_bits(t), n = (int)strlen(fc->order);
  ctx c = {{0}, {0}, c0_for(fc->c0_rule, t)};
  int64_t ext[RELAYOUT_MAX_DIMS];
  guarded src = fill_source(draw_shape(ext, &c, fc->order), bits);

  int64_t exp_bytes;
  unsigned char *hit;
  unsigned char *exp = expected(fc, &c, src.data, bits, &exp_bytes, &hit);
  guarded out;
  convert(&out, fc->src, fc->dst, t, fc->order, ext, n, src.data, src.size);
  CHECK((int64_t)out.size == exp_bytes && !memcmp(out.data, exp, out.size),
        "%s -> %s %s: output differs from the formula (%zu vs %lld bytes)",
        fc->src, fc->dst, relayout_dtype_name(t), out.size,
        (long long)exp_bytes);

  /* is_padding agrees with the elements the formula never reaches. */
  relayout_desc ds, d;
  bind_as_array(&ds, &d, fc->src, fc->dst, t, fc->order, ext, n);
  int wrong = 0;
  for (int64_t i = 0; i < relayout_desc_span(&d); i++) {
    int pad;
    relayout_desc_is_padding(&pad, &d, i, NULL);
    wrong += pad == hit[i];
  }
  CHECK(wrong == 0, "%s %s: is_padding wrong at %d elements", fc->dst,
        relayout_dtype_name(t), wrong);

  /* And back: the round trip gives the original bytes. */
  guarded back;
  convert(&back, fc->dst, fc->src, t, fc->order, ext, n, out.data, out.size);
  CHECK(back.size == src.size && !memcmp(back.data, src.data, src.size),
        "%s -> %s -> %s %s: round trip differs", fc->src, fc->dst, fc->src,
        relayout_dtype_name(t));
  guarded_free(&back);
  guarded_free(&out);
  guarded_free(&src);
  free(exp);
  free(hit);
}

/* Blocked to blocked directly: the result equals the target's formula. */
static void direct_pair(const fcase *x, const fcase *y, relayout_dtype t) {
  int bits = relayout_dtype_bits(t), n = (int)strlen(x->order);
  ctx cx = {{0}, {0}, c0_for(x->c0_rule, t)}, cy;
  int64_t ext[RELAYOUT_MAX_DIMS];
  guarded src = fill_source(draw_shape(ext, &cx, x->order), bits);
  cy = cx;
  cy.c0 = c0_for(y->c0_rule, t);
  /* y's letters may differ (NZ's M, N is ZN's K, N): map by position */
  for (int k = 0; k < n; k++) cy.ext[(unsigned char)y->order[k]] = ext[k];
  int64_t xb, yb;
  unsigned char *hx, *hy;
  unsigned char *ex = expected(x, &cx, src.data, bits, &xb, &hx);
  unsigned char *ey = expected(y, &cy, src.data, bits, &yb, &hy);
  guarded out;
  convert(&out, x->dst, y->dst, t, x->order, ext, n, ex, (size_t)xb);
  CHECK((int64_t)out.size == yb && !memcmp(out.data, ey, out.size),
        "%s -> %s %s directly: output differs from the formula", x->dst, y->dst,
        relayout_dtype_name(t));
  guarded_free(&out);
  guarded_free(&src);
  free(ex);
  free(ey);
  free(hx);
  free(hy);
}

static int64_t lcm(int64_t a, int64_t b) {
  int64_t x = a, y = b;
  while (y) {
    int64_t r = x % y;
    x = y;
    y = r;
  }
  return a / x * b;
}

/* src (from, `src_bytes`) to `to` gives exactly `want` (`want_bytes`, the
 * test's formula), and back gives src; names and ext are the dims. */
static void both_ways(const char *from, const char *to, relayout_dtype t,
                      const char *names, const int64_t *ext, int n,
                      const void *src, int64_t src_bytes, const void *want,
                      int64_t want_bytes) {
  guarded out, back;
  convert(&out, from, to, t, names, ext, n, src, (size_t)src_bytes);
  CHECK((int64_t)out.size == want_bytes && !memcmp(out.data, want, out.size),
        "%s -> %s %s differs from the formula", from, to,
        relayout_dtype_name(t));
  convert(&back, to, from, t, names, ext, n, out.data, out.size);
  CHECK((int64_t)back.size == src_bytes && !memcmp(back.data, src, back.size),
        "%s -> %s %s round trip differs", from, to, relayout_dtype_name(t));
  guarded_free(&out);
  guarded_free(&back);
}

/* Grouped FRACTAL_Z (LAYOUTS.md section 3), from its own formula; D > 0:
 * FRACTAL_Z_3D from NCDHW, the group block outside D (GDC1HWN1N0C0, as
 * MindSpore's AICPU format transfer places it). */
static void grouped_fractal_z(int64_t groups, int64_t cout, int64_t cin,
                              int64_t D, int64_t H, int64_t W) {
  int three = D > 0;
  if (!three) D = 1;
  const int64_t C0 = 16, N = groups * cout;
  /* e = min(lcm(lcm(cin, C0)/cin, lcm(cout, 16)/cout), groups) */
  int64_t e = lcm(lcm(cin, C0) / cin, lcm(cout, 16) / cout);
  if (e > groups) e = groups;
  int64_t cin_opt = cdiv(e * cin, C0) * C0, cout_opt = cdiv(e * cout, 16) * 16;
  int64_t g = cdiv(groups, e);
  int64_t size = g * D * (cin_opt / C0) * H * W * (cout_opt / 16) * 16 * C0;
  int64_t count = N * cin * D * H * W;
  uint16_t *src = malloc((size_t)count * 2), *exp = calloc((size_t)size, 2);
  for (int64_t i = 0; i < count; i++) src[i] = (uint16_t)(pattern(i, 16));
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < cin; c++)
      for (int64_t d = 0; d < D; d++)
        for (int64_t h = 0; h < H; h++)
          for (int64_t w = 0; w < W; w++) {
            int64_t gi = n / cout, ei = gi % e, gb = gi / e;
            int64_t ci = ei * cin + c, co = ei * cout + n % cout;
            int64_t at =
                (((((gb * D + d) * (cin_opt / C0) + ci / C0) * H + h) * W + w) *
                     cout_opt +
                 co) *
                    C0 +
                ci % C0;
            exp[at] = src[(((n * cin + c) * D + d) * H + h) * W + w];
          }
  char text[64];
  snprintf(text, sizeof text, "%s(groups=%lld)",
           three ? "FRACTAL_Z_3D" : "FRACTAL_Z", (long long)groups);
  const char *plain = three ? "NCDHW" : "NCHW";
  int64_t ext5[5] = {N, cin, D, H, W}, ext4[4] = {N, cin, H, W};
  const int64_t *ext = three ? ext5 : ext4;
  int rank = three ? 5 : 4;
  both_ways(plain, text, RELAYOUT_F16, plain, ext, rank, src, count * 2, exp,
            size * 2);
  free(src);
  free(exp);
}

/* FRACTAL_Z_C04 as MindSpore's host-to-device transfer fills it: for each
 * destination element (K1, N1, N0, K0) in order, k = 16 * K1 + K0 is
 * (h * W + w) * 4 + c, n = 16 * N1 + N0; zero where n, c or h * W + w is
 * past its extent. Array shape (ceil(H * W * 4 / 16), ceil(N / 16), 16,
 * 16). */
static void fractal_z_c04(int64_t N, int64_t C, int64_t H, int64_t W,
                          relayout_dtype t) {
  int bits = relayout_dtype_bits(t);
  int64_t k1 = cdiv(H * W * 4, 16), n1 = cdiv(N, 16), count = N * C * H * W;
  int64_t size = k1 * n1 * 256;
  unsigned char *src = calloc((size_t)cdiv(count * bits, 8), 1),
                *exp = calloc((size_t)cdiv(size * bits, 8), 1);
  for (int64_t i = 0; i < count; i++) put(src, i, bits, pattern(i, bits));
  int64_t at = 0;
  for (int64_t vi = 0; vi < k1; vi++)
    for (int64_t ni = 0; ni < n1; ni++)
      for (int64_t col = 0; col < 16; col++)
        for (int64_t row = 0; row < 16; row++, at++) {
          int64_t n = 16 * ni + col, k = 16 * vi + row;
          int64_t c = k % 4, hw = k / 4;
          if (n < N && c < C && hw < H * W)
            put(exp, at, bits,
                get(src, ((n * C + c) * H + hw / W) * W + hw % W, bits));
        }
  int64_t ext[4] = {N, C, H, W};
  both_ways("NCHW", "FRACTAL_Z_C04", t, "NCHW", ext, 4, src,
            cdiv(count * bits, 8), exp, cdiv(size * bits, 8));
  relayout_desc d;
  relayout_layout *l = NULL;
  int rank;
  int64_t shape[RELAYOUT_MAX_AXES];
  CHECK_OK(relayout_layout_parse(&l, "FRACTAL_Z_C04", &e_));
  CHECK_OK(relayout_desc_init(&d, l, t, 4, "NCHW", ext, &e_));
  relayout_desc_physical_shape(&rank, shape, &d);
  CHECK(rank == 4 && shape[0] == k1 && shape[1] == n1 && shape[2] == 16 &&
            shape[3] == 16,
        "FRACTAL_Z_C04's array is (K1, N1, 16, 16)");
  relayout_layout_free(l);
  free(src);
  free(exp);
}

/* FRACTAL_ZN_RNN(input=I,hidden=Hd) as CANN's TransDataRNN writes it from
 * ND (K, N): N is gates of Hd units, each padded to 16; where K = I + Hd,
 * rows [0, I) and [I, K) are converted apart, each to (K1, N1, 16, 16)
 * with K innermost, the second after the first. K = Hd: one part. */
static void fractal_zn_rnn(int64_t I, int64_t Hd, int64_t K, int64_t G,
                           relayout_dtype t) {
  int bits = relayout_dtype_bits(t);
  int64_t N = G * Hd, hp = cdiv(Hd, 16) * 16, n1 = G * hp / 16;
  int two = K == I + Hd;
  int64_t k1 = two ? cdiv(I, 16) + cdiv(Hd, 16) : cdiv(K, 16);
  int64_t size = k1 * n1 * 256, count = K * N;
  unsigned char *src = calloc((size_t)cdiv(count * bits, 8), 1),
                *exp = calloc((size_t)cdiv(size * bits, 8), 1);
  for (int64_t i = 0; i < count; i++) put(src, i, bits, pattern(i, bits));
  int64_t first = two ? I : K;
  for (int64_t part = 0; part < (two ? 2 : 1); part++) {
    int64_t rows = part ? Hd : first, row0 = part ? I : 0;
    int64_t base = part ? cdiv(I, 16) * n1 * 256 : 0;
    for (int64_t r = 0; r < rows; r++)
      for (int64_t n = 0; n < N; n++) {
        int64_t nv = n / Hd * hp + n % Hd;
        put(exp, base + ((r / 16 * n1 * 16) + nv) * 16 + r % 16, bits,
            get(src, (row0 + r) * N + n, bits));
      }
  }
  char text[64];
  snprintf(text, sizeof text, "FRACTAL_ZN_RNN(input=%lld,hidden=%lld)",
           (long long)I, (long long)Hd);
  int64_t ext[2] = {K, N};
  both_ways("ND", text, t, "KN", ext, 2, src, cdiv(count * bits, 8), exp,
            cdiv(size * bits, 8));
  free(src);
  free(exp);
}

/* ND_RNN_BIAS(hidden=Hd): each of the G gates' Hd units padded to 16, the
 * bias (B, G * Hd) as (B, G * ceil(Hd / 16) * 16). */
static void nd_rnn_bias(int64_t B, int64_t G, int64_t Hd, relayout_dtype t) {
  int bits = relayout_dtype_bits(t);
  int64_t N = G * Hd, hp = cdiv(Hd, 16) * 16, count = B * N;
  unsigned char *src = calloc((size_t)cdiv(count * bits, 8), 1),
                *exp = calloc((size_t)cdiv(B * G * hp * bits, 8), 1);
  for (int64_t i = 0; i < count; i++) put(src, i, bits, pattern(i, bits));
  for (int64_t b = 0; b < B; b++)
    for (int64_t n = 0; n < N; n++)
      put(exp, b * G * hp + n / Hd * hp + n % Hd, bits,
          get(src, b * N + n, bits));
  char text[48];
  snprintf(text, sizeof text, "ND_RNN_BIAS(hidden=%lld)", (long long)Hd);
  int64_t ext[2] = {B, N};
  both_ways("ND", text, t, "0N", ext, 2, src, cdiv(count * bits, 8), exp,
            cdiv(B * G * hp * bits, 8));
  free(src);
  free(exp);
}

static const fcase *find(const char *src, const char *dst) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (!strcmp(cases[i].src, src) && !strcmp(cases[i].dst, dst))
      return &cases[i];
  return NULL;
}

/* Every named format's grammar as `relayout formats` prints it converts
 * byte for byte as the name does, from ND and from its plain layout (the
 * logical dims in order), at every width. */
static void printed_grammar(void) {
  relayout_format_info f;
  for (int i = 0; !relayout_format_at(&f, i); i++)
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
      relayout_dtype t = widths[w];
      relayout_layout *l = NULL;
      char text[160], names[RELAYOUT_MAX_DIMS + 2],
          plain[RELAYOUT_MAX_DIMS + 4];
      int batch, positional;
      CHECK_OK(relayout_layout_parse(&l, f.name, &e_));
      CHECK_OK(relayout_layout_logical_names(names + 1, &batch, &positional, l,
                                             &e_));
      int has = !relayout_layout_grammar_text(text, sizeof text, l, t, NULL);
      relayout_layout_free(l);
      if (!has) continue; /* ND and the NPU-scattered layouts */
      names[0] = '0';
      const char *order = batch ? names : names + 1;
      snprintf(plain, sizeof plain, "%s%s", batch ? "..." : "", names + 1);
      int n = (int)strlen(order), bits = relayout_dtype_bits(t);
      ctx c;
      int64_t ext[RELAYOUT_MAX_DIMS];
      guarded src = fill_source(draw_shape(ext, &c, order), bits);
      const char *from[] = {"ND", plain};
      for (int k = 0; k < 2; k++) {
        guarded a, b;
        convert(&a, from[k], f.name, t, order, ext, n, src.data, src.size);
        convert(&b, from[k], text, t, order, ext, n, src.data, src.size);
        CHECK(a.size == b.size && !memcmp(a.data, b.data, a.size),
              "%s from %s at %s: its printed grammar %s converts otherwise",
              f.name, from[k], relayout_dtype_name(t), text);
        guarded_free(&a);
        guarded_free(&b);
      }
      guarded_free(&src);
    }
}

int main(void) {
  printed_grammar();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int rep = 0; rep < 3; rep++)
      for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
        one_case(&cases[i], widths[w]);
  static const char *const pairs[][4] = {
      {"NCHW", "nChw8c", "NCHW", "nChw16c"},
      {"NCHW", "NC1HWC0", "NCHW", "FRACTAL_Z"},
      {"NCHW", "FRACTAL_Z", "NCHW", "CHWN4"},
      {"NCHW", "4N", "NCHW", "NC1HWC0"},
      {"ND", "FRACTAL_NZ", "ND", "FRACTAL_ZN"},
      {"ND", "FRACTAL_ZZ", "ND", "FRACTAL_NZ"},
  };
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
    for (int rep = 0; rep < 3; rep++)
      for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        const fcase *x = find(pairs[p][0], pairs[p][1]);
        const fcase *y = find(pairs[p][2], pairs[p][3]);
        direct_pair(x, y, widths[w]);
      }
  grouped_fractal_z(2, 8, 3, 0, 3, 3);   /* e = 2: both groups in one block */
  grouped_fractal_z(4, 16, 16, 0, 1, 1); /* e = 1: one group per block */
  grouped_fractal_z(5, 3, 5, 0, 2, 3);   /* e = min(16, 16, 5) = 5 */
  grouped_fractal_z(3, 7, 17, 0, 1, 2);  /* uneven: cin 17 spans two C0 */
  grouped_fractal_z(2, 8, 3, 2, 3, 3);   /* FRACTAL_Z_3D: D outside C1 */
  grouped_fractal_z(5, 3, 5, 3, 2, 1);   /* ... with e = 5, g = 1 */
  grouped_fractal_z(4, 16, 16, 2, 1, 2); /* ... e = 1: four blocks */
  fractal_z_c04(18, 3, 3, 5, RELAYOUT_F16); /* H * W = 15: K padded */
  fractal_z_c04(16, 4, 2, 2, RELAYOUT_F16); /* nothing padded */
  fractal_z_c04(5, 1, 7, 7, RELAYOUT_F32);
  fractal_z_c04(40, 2, 1, 3, RELAYOUT_I8);
  fractal_z_c04(3, 3, 11, 1, RELAYOUT_I4);
  fractal_zn_rnn(20, 5, 25, 4, RELAYOUT_F16); /* LSTM: input and hidden apart */
  fractal_zn_rnn(33, 16, 49, 3, RELAYOUT_F16); /* GRU, hidden on the grid */
  fractal_zn_rnn(7, 18, 18, 4, RELAYOUT_F32);  /* K = hidden: one part */
  fractal_zn_rnn(17, 3, 20, 4, RELAYOUT_I8);
  nd_rnn_bias(1, 4, 5, RELAYOUT_F16);
  nd_rnn_bias(3, 3, 17, RELAYOUT_F32);
  return check_summary();
}
