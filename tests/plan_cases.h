/* plan_cases.h - the conversions whose plans the tests pin down: the
 * format families of the device matrix, and the cases that each ask for one
 * kind of kernel (a CPU box of a given variant, a GPU stage, moves in wider
 * units). test_plan checks that each plans as it says, with no device;
 * test_device runs each on the device against the reference.
 */
#ifndef RELAYOUT_TEST_PLAN_CASES_H
#define RELAYOUT_TEST_PLAN_CASES_H

#include "check.h"

typedef struct family {
  int nbatch;
  const char *letters; /* logical dims after the batch dims */
  const char *layouts[24];
} family;

static const family families[] = {
    {0,
     "NCHW",
     {"NCHW",
      "NHWC",
      "CHWN",
      "HWCN",
      "ND",
      "NC1HWC0",
      "nChw8c",
      "nChw16c",
      "NCHW4",
      "NCHW32",
      "NCHW64",
      "CHWN4",
      "4N",
      "2N",
      "FRACTAL_Z",
      "FRACTAL_Z(groups=2)",
      "NCHW16c8n",
      "2cNHWC4c", /* a block written before its dim's outer letter */
      "TPU_ALIGNED(npus=4,start=1,lmem=65536)",
      "TPU_COMPACT(npus=4,start=3,lmem=65536)",
      NULL}},
    {0,
     "NCDHW",
     {"NCDHW", "NDHWC", "NDC1HWC0", "FRACTAL_Z_3D", "FRACTAL_Z_3D(groups=2)",
      "NCDHW8c", "ND", NULL}},
    {1,
     "MN",
     {"ND", "FRACTAL_NZ", "FRACTAL_ZZ", "FRACTAL_ZN", "ND_ALIGN",
      "FRACTAL_NZ(c0=8)", "...NM", NULL}},
    {0,
     "IOHW",
     {"IOHW", "OIHW", "2IC", "ND", "((2,3),5,(2,2)):((1,40),2,(10,20))", NULL}},
};

static const relayout_dtype widths[] = {RELAYOUT_I4, RELAYOUT_U8, RELAYOUT_F16,
                                        RELAYOUT_F32, RELAYOUT_F64};

/* Engines on the test's device: its own kernels; the GPU families; the CPU
 * boxes, plain and streamed (stream_bytes 1: every plan that can). */

/* Binds src -> dst at the family's extents. Returns 0 when this pair does
 * not apply at these dims (4-bit TPU, or groups N does not split). */
static int bind_pair(relayout_desc *s, relayout_desc *d, const char *src,
                     const char *dst, relayout_dtype t, const family *f,
                     const int64_t *ext) {
  relayout_layout *ls, *ld;
  relayout_error e;
  if (relayout_layout_parse(&ls, src, &e) ||
      relayout_layout_parse(&ld, dst, &e)) {
    CHECK(0, "parse %s / %s: %s", src, dst, e.message);
    return 0;
  }
  int n = f->nbatch + (int)strlen(f->letters);
  relayout_status st = relayout_bind_extents(s, d, ls, ld, t, n, ext, &e);
  if (st)
    CHECK(st == RELAYOUT_ERR_UNSUPPORTED || st == RELAYOUT_ERR_DIMS,
          "%s -> %s: %s", src, dst, e.message);
  relayout_layout_free(ls);
  relayout_layout_free(ld);
  return st == RELAYOUT_OK;
}

/* One case: planned with the kernels of `kind` ("gpu", "cpu", "streamed":
 * the CPU boxes with every store that can stream, or "generic": a CPU
 * device's generic kernels, plain and streamed), src -> dst at shape,
 * which `want` (NULL: any) says the plan's kernel source must be; run at
 * `skew` bytes past the destination's offset. */
typedef void plan_case_fn(const char *kind, int (*want)(const char *),
                          const char *src, const char *dst, relayout_dtype t,
                          const family *f, const int64_t *shape, size_t skew);

/* Whether a kernel's source is a CPU box's (kernels/lines.cl). */
static int is_lines(const char *source) {
  return strstr(source, "__kernel void rl_lines(") != NULL;
}

/* The value of `#define NAME` in a kernel's source, or -1. */
static long long define_value(const char *source, const char *name) {
  char key[64];
  snprintf(key, sizeof key, "#define %s ", name);
  const char *at = strstr(source, key);
  return at ? strtoll(at + strlen(key), NULL, 10) : -1;
}

/* The bytes of the type a kernel moves (RL_T), or 0. */
static long long element_size(const char *source) {
  static const char *types[] = {"uchar", "ushort", "uint", "ulong"};
  for (int i = 0; i < 4; i++) {
    char t[32];
    snprintf(t, sizeof t, "#define RL_T %s\n", types[i]);
    if (strstr(source, t)) return 1LL << i;
  }
  return 0;
}

/* The CPU kernel's boxes (rl_lines), on ragged shapes at every whole-byte
 * width from the case's first, each case asserting which box it is: */
static int box_steps_k(const char *s) { /* FRACTAL_NZ: N1 blocked, N0's
                                           data shrinking along it */
  return define_value(s, "RL_BLOCK_P") > 1 &&
         define_value(s, "RL_KDATA_DROP_P") > 0;
}
static int box_cuts_k(const char *s) { /* NHWC: K (C) cut into blocks */
  return define_value(s, "RL_BLOCK_K") < define_value(s, "RL_EXTENT_K") &&
         define_value(s, "RL_BLOCK_P") > 1;
}
static int box_counts_k(const char *s) { /* NC1HWC0: C0 partly padding */
  return define_value(s, "RL_BLOCK_P") > 1 &&
         define_value(s, "RL_KDATA_DROP_P") == 0 &&
         define_value(s, "RL_KDATA_DROP_Q") == 0;
}
static int box_has_q(const char *s) { /* FRACTAL_Z: P, Q and K all used,
                                         squares along a P of 6 */
  return define_value(s, "RL_BLOCK_P") > 1 &&
         define_value(s, "RL_BLOCK_Q") > 1 && define_value(s, "RL_VEC") > 1;
}
static int box_ahead(const char *s) { /* FRACTAL_Z from 2x3: Q's short
                                        source runs prefetched ahead, in
                                        blocks longer than the distance;
                                        4-byte squares' rows past the last
                                        square along P as vectors */
  int tail = strstr(s, "#define RL_SQUARE_TAIL ") != NULL;
  return strstr(s, "#define RL_AHEAD ") &&
         define_value(s, "RL_BLOCK_Q") > define_value(s, "RL_AHEAD") &&
         tail == (element_size(s) == 4);
}
static int box_wide(const char *s) { /* 4N, NCHW4 with N or C padded
                                       (not planes): 1-byte squares 16
                                       bytes along P, P ragged; squares
                                       at the wider types */
  int wide = strstr(s, "#define RL_WIDE ") != NULL;
  return define_value(s, "RL_VEC") > 1 &&
         (element_size(s) > 1 ? !wide
                              : wide && define_value(s, "RL_EXTENT_P") % 16);
}
static int box_span(const char *s) { /* NCHW16c8n: 1-byte tiles across K
                                       (8 N) and Q (2 steps of C), P
                                       ragged, C padded; squares where K's
                                       rows are 16 bytes or more */
  long long size = element_size(s), row = size * define_value(s, "RL_BLOCK_K"),
            span = define_value(s, "RL_SPAN");
  if (size > 2 || row >= 16) return span < 0 && define_value(s, "RL_VEC") > 1;
  return span == 16 / row && define_value(s, "RL_EXTENT_P") % 4;
}
static int box_span_q(const char *s) { /* CHWN4: 1- and 2-byte tiles across
                                         K and Q, Q's block not a multiple
                                         of the tile's steps along it */
  return box_span(s) && (element_size(s) > 2 || define_value(s, "RL_BLOCK_Q") %
                                                    define_value(s, "RL_SPAN"));
}
static int box_long_p(const char *s) { /* CHWN4: with N for Q, P runs
                                          512 bytes or more; its last
                                          block ragged */
  return define_value(s, "RL_BLOCK_P") * element_size(s) >= 512 &&
         define_value(s, "RL_EXTENT_P") % define_value(s, "RL_BLOCK_P");
}
static int box_fills_lines(const char *s) { /* CHWN4 with long P runs:
                                              Q (N) in blocks of a line of
                                              each row, the last ragged */
  return define_value(s, "RL_BLOCK_Q") * define_value(s, "RL_BLOCK_K") *
                 element_size(s) ==
             64 &&
         define_value(s, "RL_EXTENT_Q") % define_value(s, "RL_BLOCK_Q") &&
         define_value(s, "RL_BLOCK_P") * element_size(s) >= 512;
}
static int box_whole_q(const char *s) { /* nChw8c -> nChw16c: both halves
                                          of a row in the box, C padded */
  return define_value(s, "RL_SSTRIDE_K") == 1 &&
         define_value(s, "RL_BLOCK_Q") == define_value(s, "RL_EXTENT_Q") &&
         define_value(s, "RL_DSTRIDE_Q") == define_value(s, "RL_BLOCK_K") &&
         define_value(s, "RL_BLOCK_Q") > 1;
}
static int box_whole_p(const char *s) { /* NHWC -> NCHW, 128 channels: P
                                          takes each source row whole where
                                          it is 512 bytes to 1 KiB of 4- or
                                          8-byte elements, else a line */
  long long size = element_size(s);
  int whole = define_value(s, "RL_BLOCK_P") == define_value(s, "RL_EXTENT_P");
  return size >= 4 ? whole
                   : !whole && define_value(s, "RL_BLOCK_P") * size == 64;
}
static int box_q_runs(const char *s) { /* FRACTAL_Z -> NCHW: K's outer
                                         neighbour in the destination is P
                                         (C0), so Q is N, which continues
                                         P's run in the source, 1 KiB of it */
  long long bq = 1024 / (define_value(s, "RL_BLOCK_P") * element_size(s));
  return define_value(s, "RL_SSTRIDE_Q") ==
             define_value(s, "RL_EXTENT_P") * define_value(s, "RL_SSTRIDE_P") &&
         define_value(s, "RL_BLOCK_Q") ==
             (bq < define_value(s, "RL_EXTENT_Q")
                  ? bq
                  : define_value(s, "RL_EXTENT_Q"));
}
static int box_pixel_runs(const char *s) { /* NCHW -> HWCN of 3x3: Q (C)
                                             continues P's 9 pixels in the
                                             source, 8 steps of it, K (N)
                                             cut to 16 rows; f64's runs of
                                             72 bytes too long for it: all
                                             40 rows of K */
  if (element_size(s) > 4)
    return define_value(s, "RL_BLOCK_K") == define_value(s, "RL_EXTENT_K");
  return define_value(s, "RL_SSTRIDE_Q") == define_value(s, "RL_EXTENT_P") &&
         define_value(s, "RL_BLOCK_Q") == 8 &&
         define_value(s, "RL_BLOCK_K") == 16;
}
static int box_flat(const char *s) { /* HWCN -> NCHW: K (the pixels) not
                                       whole squares, whole in each box,
                                       its rows continued by Q (C): squares
                                       across Q, Q's steps making each run
                                       whole lines (or all of Q),
                                       prefetching */
  long long k = define_value(s, "RL_BLOCK_K");
  if (element_size(s) == 8) /* squares of 2: plain squares */
    return define_value(s, "RL_FLAT") < 0 && define_value(s, "RL_VEC") == 2;
  return define_value(s, "RL_FLAT") == 1 && define_value(s, "RL_AHEAD") == 2 &&
         k == define_value(s, "RL_EXTENT_K") && k % define_value(s, "RL_VEC") &&
         define_value(s, "RL_DSTRIDE_Q") == k &&
         (define_value(s, "RL_BLOCK_Q") == define_value(s, "RL_EXTENT_Q") ||
          define_value(s, "RL_BLOCK_Q") * k * element_size(s) % 64 == 0);
}
static int box_flat_narrow(const char *s) { /* into 4N and 2N: K
                                              (4 or 2 images)
                                              under a square's 16 bytes,
                                              its rows continued by Q:
                                              squares of 16 bytes across
                                              Q; K of 16 bytes and more,
                                              and 8-byte elements, keep
                                              their plans */
  long long size = element_size(s);
  if (size > 4 || define_value(s, "RL_BLOCK_K") * size >= 16) return 1;
  return define_value(s, "RL_FLAT") == 1 &&
         define_value(s, "RL_VEC") * size == 16 &&
         define_value(s, "RL_BLOCK_K") < define_value(s, "RL_VEC");
}
static int box_flat_cols(const char *s) { /* from 2N and CHWN4: P (2
                                            images, 4 channels) under a
                                            square, its run continued by
                                            Q in the source: squares of 16
                                            bytes across P and Q; wider
                                            elements keep their plans */
  return element_size(s) > 2 ||
         (define_value(s, "RL_FLAT") == 2 &&
          define_value(s, "RL_VEC") * element_size(s) == 16);
}
static int box_flat_stage(const char *s) { /* into nChw8c and NCHW4:
                                            * more than 16 destination
                                            * rows in one cache set */
  return element_size(s) > 1 || (define_value(s, "RL_FLAT") == 1 &&
                                 define_value(s, "RL_FLAT_STAGE") > 0);
}
static int box_flat_stage_units(const char *s) { /* CHWN4 -> nChw8c int8:
                                                  * units of a pixel's 4
                                                  * channels, 2 to a
                                                  * destination pixel */
  return define_value(s, "RL_BLOCK_K") * element_size(s) != 8 ||
         (define_value(s, "RL_FLAT") == 1 && define_value(s, "RL_VEC") == 4 &&
          define_value(s, "RL_FLAT_STAGE") > 0);
}
static int box_weaves(const char *s) { /* NCHW4 <-> 2N: pixels of 4 x 2
                                        * elements, shuffled both ways */
  return element_size(s) > 2 || define_value(s, "RL_WEAVE") == 1;
}
static int box_weaves_bytes(const char *s) { /* 2N -> nChw8c: 2 x 8 */
  return element_size(s) > 1 || define_value(s, "RL_WEAVE") == 1;
}
static int box_copies_in_narrow(const char *s) { /* K's 32 rows whole,
                                                  * continued in the
                                                  * destination by Q's or
                                                  * P's */
  return element_size(s) > 1 || (define_value(s, "RL_COPY_IN") == 1 &&
                                 define_value(s, "RL_BLOCK_K") == 32 &&
                                 define_value(s, "RL_EXTENT_K") == 32);
}
static int box_copies_in_rows(const char *s) { /* destination rows in one
                                                * cache set: Q takes 512
                                                * bytes of each */
  return element_size(s) > 1 ||
         (define_value(s, "RL_COPY_IN") == 1 &&
          define_value(s, "RL_BLOCK_Q") * define_value(s, "RL_BLOCK_K") == 512);
}
static int box_skips(const char *s) { /* unpacking (C = 40 from blocks of
                                        16, M and N off the fractal grid),
                                        or into smaller blocks (C = 17 from
                                        16 into 8): an affine box that runs
                                        on past the destination's end and
                                        skips what lies there */
  return is_lines(s) && define_value(s, "RL_SKIP") == 1;
}
static int box_squares(const char *s) { /* transposed in registers; P or K
                                           leaves part of a square */
  long long v = define_value(s, "RL_VEC");
  return v > 1 && (define_value(s, "RL_EXTENT_P") % v ||
                   define_value(s, "RL_EXTENT_K") % v);
}
static int box_lead(const char *s) { /* NCHW -> NHWC: rows off the line
                                        grid and 3 lines longer than a
                                        box prefetched 3 lines on; other
                                        rows not */
  long long size = element_size(s), lead = 192 / size;
  int want =
      define_value(s, "RL_SSTRIDE_K") * size % 64 &&
      define_value(s, "RL_EXTENT_P") > define_value(s, "RL_BLOCK_P") + lead;
  return define_value(s, "RL_LEAD") == (want ? lead : -1);
}
static int box_group(const char *s) { /* squares side by side along K:
                                        with rows of 16 bytes 4 (2 where
                                        8 rows tall) while K's extent
                                        holds that many, fewer for a K of
                                        24; with rows of 8 bytes 2 where
                                        they make K's block (nChw16c
                                        int8), not half of it (NC1HWC0
                                        int8, C0 32) */
  long long v = define_value(s, "RL_VEC"), row = v * element_size(s), want = 1;
  if (row == 16)
    want = v > 4 ? 2 : 4;
  else if (row == 8 && define_value(s, "RL_BLOCK_K") == 2 * v)
    want = 2;
  while (want > 1 && define_value(s, "RL_EXTENT_K") % (want * v)) want /= 2;
  /* the first define is the header's; the kernel's default is 1 */
  return v > 1 && define_value(s, "RL_GROUP") == want;
}

static int box_runs_ahead(const char *s) { /* NHWC -> NCHW streamed:
                                            squares along K's rows, K
                                            past four boxes, no prefetch
                                            planned (lines_stores.cl asks
                                            for the rows a box ahead) */
  static const char *const none[] = {"RL_AHEAD",  "RL_LEAD", "RL_P_FIRST",
                                     "RL_STAGED", "RL_FLAT", "RL_COPY_IN"};
  for (int i = 0; i < 6; i++)
    if (define_value(s, none[i]) >= 0) return 0;
  return define_value(s, "RL_VEC") > 1 &&
         define_value(s, "RL_SSTRIDE_P") == 1 &&
         define_value(s, "RL_SSTRIDE_K") > 1 &&
         define_value(s, "RL_EXTENT_K") >= 4 * define_value(s, "RL_BLOCK_K");
}

static int box_planes(const char *s) { /* NHWC, 4N: K's few planes
                                        * interleaved by shuffles */
  return define_value(s, "RL_SPLIT") < 0 &&
         define_value(s, "RL_PLANES") == define_value(s, "RL_EXTENT_K");
}
static int box_splits(const char *s) { /* NHWC, 4N, 2N, NCHW4 -> NCHW: P's
                                        * few planes taken apart by
                                        * shuffles */
  return define_value(s, "RL_SPLIT") == 1 &&
         define_value(s, "RL_PLANES") == define_value(s, "RL_EXTENT_P");
}

/* The GPU kernel's boxes (rl_stage), likewise: */
static int stage_partial(const char *s) { /* a block the extent cuts */
  return strstr(s, "rl_stage_start") && strstr(s, " < m[");
}
static int stage_data(const char *s) { /* padding inside the box */
  return stage_partial(s) && strstr(s, "int data = 1 &&");
}
static int stage_skips(const char *s) { /* C = 40 from blocks of 16 or 32
                                          into NCHW, C = 17 into nChw8c:
                                          past the end, nothing to write */
  return stage_data(s) && define_value(s, "RL_SKIP") == 1;
}
static int stage_small(const char *s) { /* fewer elements than work-items */
  return strstr(s, "rl_stage_start") && strstr(s, "&& lid < ");
}
static int stage_fits(const char *s) { /* 2N: rows of 2 elements between
                                          the bank gaps; the box with its
                                          gaps within 24 KiB */
  return strstr(s, "rl_stage_start") &&
         define_value(s, "RL_LOCAL") * element_size(s) <= 24576;
}

static void boxes(plan_case_fn *run) {
  static const struct {
    const char *families;
    int family;
    const char *src, *dst;
    int (*want)(const char *);
    int64_t shape[4];
    size_t w0; /* the first of widths[] it runs at, through the last */
  } cases[] = {
      {"cpu", 2, "ND", "FRACTAL_NZ", box_steps_k, {3, 33, 70}, 1},
      {"cpu", 2, "ND", "FRACTAL_NZ", box_steps_k, {1, 70, 131}, 1},
      {"cpu", 2, "ND", "FRACTAL_NZ", box_steps_k, {2, 17, 65}, 1},
      {"cpu", 0, "NCHW", "NHWC", box_cuts_k, {2, 300, 5, 7}, 3},  /* C > the cut
                                                                   */
      {"cpu", 0, "NCHW", "NHWC", box_cuts_k, {1, 70, 16, 16}, 3}, /* 1 KiB
                                                                     stride */
      {"cpu", 0, "NCHW", "NC1HWC0", box_counts_k, {2, 17, 5, 7}, 1},
      {"cpu", 0, "NCHW", "FRACTAL_Z", box_has_q, {33, 17, 2, 3}, 1},
      {"cpu", 0, "NCHW", "FRACTAL_Z", box_ahead, {70, 17, 2, 3}, 1},
      {"cpu", 0, "NCHW", "4N", box_wide, {6, 3, 5, 7}, 1},
      {"cpu", 0, "NCHW", "NCHW4", box_wide, {2, 6, 5, 7}, 1},
      {"cpu", 0, "NCHW", "CHWN4", box_span_q, {7, 8, 9, 11}, 1},
      {"cpu", 0, "NCHW", "NCHW16c8n", box_span, {9, 20, 3, 5}, 1},
      {"cpu", 0, "NCHW", "CHWN4", box_long_p, {3, 10, 37, 41}, 1},
      {"cpu", 0, "NCHW", "CHWN4", box_fills_lines, {37, 5, 33, 35}, 1},
      {"cpu", 0, "nChw8c", "nChw16c", box_whole_q, {2, 23, 5, 7}, 1},
      {"cpu", 0, "NCHW", "NHWC", box_squares, {2, 24, 9, 15}, 1}, /* P's edge */
      /* P's and K's edges (9 channels: not planes taken apart) */
      {"cpu", 0, "NHWC", "NCHW", box_squares, {2, 41, 3, 9}, 1},
      {"cpu", 0, "NHWC", "NCHW", box_whole_p, {2, 17, 17, 128}, 1},
      {"cpu", 0, "FRACTAL_Z", "NCHW", box_q_runs, {64, 64, 3, 3}, 1},
      /* N's and C's last blocks short (8 rows of 16, 4 steps of 8) */
      {"cpu", 0, "NCHW", "HWCN", box_pixel_runs, {40, 20, 3, 3}, 1},
      /* H, W, C, N: P's (N), Q's (C) and the rows' last squares short; at
       * 7x7 plan_box leaves Q out at 2 bytes and more */
      {"cpu", 0, "HWCN", "NCHW", box_flat, {3, 3, 70, 150}, 1},
      {"cpu", 0, "HWCN", "NCHW", box_flat, {7, 7, 40, 70}, 1},
      /* C's last squares short, Q's last box (169 pixels, boxes of 128 or
       * 64) and its last rows short of a square */
      {"cpu", 0, "NHWC", "2N", box_flat_narrow, {6, 13, 13, 37}, 1},
      /* N and C padded (boxes with padding go element by element) */
      {"cpu", 0, "FRACTAL_Z", "4N", box_flat_narrow, {37, 40, 9, 11}, 1},
      /* K's (C's) last square short (at f16, a last box of 5, under a
       * square); Q's last box (255 pixels, boxes of 221 or 128) and its
       * last columns short of a square */
      {"cpu", 0, "2N", "NHWC", box_flat_cols, {6, 37, 17, 15}, 1},
      {"cpu", 0, "CHWN4", "NCHW", box_flat_cols, {5, 8, 9, 11}, 1},
      /* N's 40 rows 36 KiB apart through a private buffer: P's last square
       * over the one before; Q's last box (72 pixels, boxes of 32 or 64)
       * short */
      {"cpu", 0, "HWCN", "nChw8c", box_flat_stage, {8, 9, 512, 40}, 1},
      {"cpu", 0, "HWCN", "NCHW4", box_flat_stage, {8, 9, 512, 40}, 1},
      /* N's 22 rows 12 KiB apart: P's last square over the one before,
       * Q's last box (96 pixels, boxes of 64) short */
      {"cpu", 0, "CHWN4", "nChw8c", box_flat_stage_units, {22, 128, 8, 12}, 1},
      /* through private buffers, in the cache: N's rows 256 x 48 bytes
       * apart, 2 channels (Q) a line, P (48 pixels) whole; N's rows 4 KiB
       * apart, P (H, W and C merged) in boxes of 64; the box's 32
       * destination rows 12 KiB apart, Q's (the pixels') last box 8 of
       * 16 */
      {"cpu", 0, "NCHW", "HWCN", box_copies_in_narrow, {32, 256, 6, 8}, 1},
      {"cpu", 0, "NHWC", "HWCN", box_copies_in_narrow, {32, 4, 8, 128}, 1},
      {"cpu", 0, "HWCN", "NC1HWC0", box_copies_in_rows, {4, 6, 512, 32}, 1},
      /* 99 pixels: 6 vectors' worth and 3 one at a time (int8); 1200:
       * boxes of 512 (int8) or 256, the last short */
      {"cpu", 0, "NCHW4", "2N", box_weaves, {6, 8, 9, 11}, 1},
      {"cpu", 0, "2N", "NCHW4", box_weaves, {4, 8, 30, 40}, 1},
      {"cpu", 0, "2N", "nChw8c", box_weaves_bytes, {6, 16, 9, 11}, 1},
      /* CHWN4's pixels 4N apart: each vector from its pixels' pieces */
      {"cpu", 0, "CHWN4", "2N", box_weaves, {8, 8, 9, 11}, 1},
      {"cpu", 0, "NC1HWC0", "NCHW", box_skips, {2, 40, 5, 7}, 1},
      {"cpu", 0, "nChw8c", "NHWC", box_skips, {2, 17, 5, 7}, 1},
      {"cpu", 0, "FRACTAL_Z", "NCHW", box_skips, {70, 17, 3, 3}, 1},
      {"cpu", 2, "FRACTAL_NZ", "ND", box_skips, {2, 37, 70}, 1},
      {"cpu", 0, "nChw16c", "nChw8c", box_skips, {2, 17, 5, 7}, 1},
      {"cpu", 0, "FRACTAL_Z", "NC1HWC0", box_skips, {33, 20, 3, 3}, 1},
      {"cpu", 0, "NCHW", "NHWC", box_lead, {2, 40, 9, 13}, 1},
      {"cpu", 0, "NCHW", "NHWC", box_lead, {2, 40, 16, 33}, 1},
      {"cpu", 0, "NCHW", "NHWC", box_group, {2, 24, 9, 15}, 1},
      {"cpu", 0, "NCHW", "nChw16c", box_group, {2, 32, 5, 7}, 1},
      {"cpu", 0, "NCHW", "NC1HWC0", box_group, {2, 64, 5, 7}, 1},
      {"gpu", 0, "NCHW", "NHWC", stage_partial, {2, 300, 5, 7}, 1},
      {"gpu", 0, "NCHW", "NC1HWC0", stage_data, {2, 17, 5, 7}, 1},
      {"gpu", 2, "ND", "FRACTAL_NZ", stage_data, {1, 70, 131}, 1},
      {"gpu", 0, "NCHW", "FRACTAL_Z", stage_data, {33, 17, 2, 3}, 1},
      {"gpu", 0, "NCHW", "CHWN4", stage_partial, {3, 10, 37, 41}, 1},
      {"gpu", 0, "NHWC", "NCHW", stage_small, {1, 3, 2, 5}, 1},
      {"gpu", 0, "NC1HWC0", "NCHW", stage_skips, {2, 40, 5, 7}, 1},
      {"gpu", 0, "nChw16c", "nChw8c", stage_skips, {2, 17, 5, 7}, 1},
      /* 32 channels contiguous in both, C = 33 off the block: not rows */
      {"gpu", 0, "NCHW32", "NHWC", stage_skips, {2, 33, 33, 1}, 3},
      {"gpu", 0, "NCHW", "2N", stage_fits, {4, 64, 16, 16}, 1},
      {"cpu", 0, "NCHW", "NHWC", box_planes, {2, 3, 9, 7}, 1},
      {"cpu", 0, "NCHW", "4N", box_planes, {8, 3, 5, 7}, 1},
      {"cpu", 0, "NCHW", "NCHW4", box_planes, {2, 8, 5, 7}, 1},
      /* 117 pixels: runs of 4 vectors' worth, single vectors, then one
       * element at a time; planes off the 16-byte grid */
      {"cpu", 0, "NHWC", "NCHW", box_splits, {2, 9, 13, 3}, 1},
      /* two boxes along the pixels, the second partial */
      {"cpu", 0, "NHWC", "NCHW", box_splits, {1, 40, 41, 5}, 1},
      {"cpu", 0, "4N", "NCHW", box_splits, {8, 3, 9, 11}, 1},
      {"cpu", 0, "2N", "NCHW", box_splits, {4, 3, 9, 11}, 1},
      {"cpu", 0, "NCHW4", "NCHW", box_splits, {2, 8, 9, 11}, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t w = cases[i].w0; w < sizeof widths / sizeof widths[0]; w++)
      run(cases[i].families, cases[i].want, cases[i].src, cases[i].dst,
          widths[w], &families[cases[i].family], cases[i].shape, 0);
}

/* CPU devices: boxes written with non-temporal stores, planned for any
 * destination size (RELAYOUT_STREAM_BYTES=1), each also with the
 * destination one element off the stores' alignment, where the kernel must
 * fall back to plain stores:
 * - squares, one row per store: runs contiguous through the box (NHWC,
 *   NC1HWC0) or 288-byte runs apart (NHWC -> NCHW), P ragged at the edge;
 *   squares of 16 x 16 bytes where a group writes each row whole (NC1HWC0
 *   int8, rows of 32 bytes: 2 side by side; nChw16c int8: 1), P ragged;
 * - tiles, squares 4 rows tall with rows of 16 bytes, for 1- and 2-byte
 *   elements (squares at the wider types): box rows one after another in
 *   the destination (NHWC with C = 80), P ragged at the edge; box rows
 *   apart (NHWC -> NCHW, 160 pixels), K cut to 128 rows (int8) or 64
 *   (f16), its last block shorter, 2 tiles side by side along K; int8
 *   tiles whose K rows span over 128 pages (NHWC, 256 channels of 57x57
 *   pixels), K cut to 64 rows, one line of each destination row;
 * - squares whose rows are 2 or 4 KiB apart (NHWC with C = 512 at f32 and
 *   f64), which must not stream (4 KiB aliasing halved their speed), so
 *   plain stores throughout; squares whose rows are off the line grid
 *   (NHWC -> NCHW at 14x14 pixels, rows 784 bytes apart at f32): one at a
 *   time (f32) plain, 2 side by side (f64) streamed; except short runs
 *   along Q whose groups of squares write whole lines (FRACTAL_Z from 3x3
 *   with N = 64 at f32: rows 4 KiB apart, Q's last block ragged, C's last
 *   block partly padding), which stream, the ninth row along P, past
 *   the squares, built into vectors and streamed too;
 * - rows contiguous in the source, 16 bytes per store: FRACTAL_NZ, with
 *   P and Q ragged and N's last rows partly padding (plain stores there);
 *   nChw8c -> nChw16c, C padded;
 * - staged boxes (NCHW -> CHWN4 but f64, whose 4 channels are 32 bytes):
 *   squares across K and Q through a private buffer, with the lead's
 *   prefetch; P's last block ragged, written without the buffer; C
 *   padded; N = 29 and 7, Q's last 1 or 3 steps short of a square (int8;
 *   1 step at f16) in squares of their own, rows past Q's end read again
 *   from the first, and the rows off the store grid, so that the ragged
 *   last block along P writes plain;
 * - rows contiguous in the source whose destination rows start off the
 *   store grid (FRACTAL_NZ -> ND with N odd, NC1HWC0 -> NHWC with C odd):
 *   each box row streamed through a private buffer, its last store
 *   completed from the next box's first piece, which that box then leaves
 *   alone; N = 2101 puts whole pieces and the partial last one in the
 *   last box along N (written element by element), N = 2049 the partial
 *   piece alone, of 1 element;
 * - 7 planes interleaved into pixels by shuffles (NCHW -> NHWC with
 *   C = 7), each load first asking for the line 4 lines on; with 30x11
 *   pixels, whose runs are not whole lines, plain, the last pixels under
 *   a vector's worth element by element; 3 planes taken apart (NHWC ->
 *   NCHW), each plane's stores a line at a time; 2 planes interleaved
 *   into pixels partly padding (NCWH -> NCH%32BW, 13 pixels of 32), a
 *   streamed plan whose boxes, not taken by the shuffles, write rows of
 *   2 elements strided in the source, plain (streamed, they wrote 16
 *   bytes of zeros per row, off the grid: SIGSEGV);
 * - rows partly data, built in registers and streamed whole: from NHWC
 *   into NC1HWC0 as rows contiguous in the source, 3, 9 and 30 channels
 *   (whole vectors loaded as such, the last piece of data shifted down
 *   from the vector that ends with it, the buffer's first rows, where
 *   that vector would start before the buffer, element by element); from
 *   NCHW, 3 channels, as squares whose boxes hold padding, rows at most a
 *   quarter data, element by element, also in rows of 8 bytes (NCHW ->
 *   CHWN4 int8 with N = 6, whose kernel once failed to build); nChw8c ->
 *   nChw16c above streams rows of padding alone;
 * - squares along K's rows, K past four boxes (NHWC -> NCHW, 3136 pixels
 *   in boxes of 128 to 512): each box first asks for the rows of the box
 *   two on along K, the last two asking for nothing past K's end;
 * - 4-bit squares through a private buffer (the destination a byte off
 *   the grid: plain stores): K's last 30 nibbles per row two to a byte
 *   into the buffer, and P's last box, short of a block, unstaged (88
 *   pixels of 31 bytes, not whole 16-byte rows) (NCHW -> NHWC); P's last
 *   box, 26 pixels, staged two to a byte, and the second block of
 *   channels padding (NC1HWC0); rows that are not one run (NHWC -> NCHW,
 *   K's block cut to 512 of 768 pixels: the box's 64 channels 384 bytes
 *   apart, each row's 256 bytes streamed, the last box along K, 256
 *   pixels, unstaged; P's last box 6 channels, two to a byte). The same
 *   shapes run at the other widths too;
 * - boxes whose source rows crowd into one cache set, read whole into a
 *   private buffer and written from another (NCHW -> HWCN, N = 64, its
 *   rows 20 KiB apart in the source, 16 KiB in the destination; int8,
 *   wider elements as planned): P's last box ragged (80 pixels); Q's
 *   steps continuing P's run in the source, 4 to a box, the last box 2
 *   (nChw16c -> HWCN, 6 pixels); N padded to 128
 *   (HWCN%128 with N = 40), so that boxes partly data go element by
 *   element and the second block along N is padding;
 * - 4-bit whole rows copied as words, 16-byte pieces to a store (ND ->
 *   FRACTAL_NZ with N = 71: every other source row starts mid-byte, and
 *   the second block of each row, 7 nibbles of data, goes two to a byte). */
static int box_streams(const char *s) {
  long long v = define_value(s, "RL_VEC"), tile = define_value(s, "RL_TILE");
  return v > 1 ? define_value(s, "RL_STREAM") == (tile > 0 ? tile : v)
               : define_value(s, "RL_STREAM") * element_size(s) == 16 &&
                     define_value(s, "RL_BLOCK_Q") > 1;
}
static int box_squares_plain(const char *s) {
  return define_value(s, "RL_VEC") > 1 && define_value(s, "RL_STREAM") < 0;
}
static int box_streams_grid(const char *s) {
  return element_size(s) == 4 ? box_squares_plain(s) : box_streams(s);
}
static int box_streams_short(const char *s) {
  return element_size(s) == 4
             ? box_streams(s) && define_value(s, "RL_AHEAD") > 0 &&
                   define_value(s, "RL_GROUP") == 4
             : define_value(s, "RL_STREAM") < 0;
}
static int box_streams_bytes16(const char *s) {
  long long group = define_value(s, "RL_BLOCK_K") == 32 ? 2 : 1;
  return element_size(s) > 1
             ? define_value(s, "RL_VEC") > 1
             : box_streams(s) && define_value(s, "RL_VEC") == 16 &&
                   define_value(s, "RL_GROUP") == group;
}
static int box_streams_tiles(const char *s) {
  return box_streams(s) && (element_size(s) > 2 ||
                            define_value(s, "RL_TILE") * element_size(s) == 16);
}
static int box_streams_tiles_cut(const char *s) {
  return box_streams_tiles(s) &&
         (element_size(s) > 2 ||
          (define_value(s, "RL_EXTENT_K") % define_value(s, "RL_BLOCK_K") > 0 &&
           define_value(s, "RL_GROUP") == 2));
}

static int box_streams_tiles_pages(const char *s) {
  long long size = element_size(s);
  return size > 2 ? define_value(s, "RL_VEC") > 1
                  : box_streams_tiles(s) &&
                        define_value(s, "RL_BLOCK_K") == (size == 1 ? 64 : 256);
}
static int box_staged(const char *s) {
  long long size = element_size(s), staged = define_value(s, "RL_STAGED"),
            bp = define_value(s, "RL_BLOCK_P");
  if (size > 4) return staged < 0;
  /* squares of 1- and 2-byte elements span 16 / (4 x size) steps along
   * Q, so that N's last steps short of one take rl_rest_squares */
  return staged == bp * define_value(s, "RL_DSTRIDE_P") * size / 16 &&
         (size > 2 || define_value(s, "RL_SPAN") * 4 * size == 16) &&
         define_value(s, "RL_LEAD") > 0 &&
         define_value(s, "RL_EXTENT_P") % bp % (16 / size) > 0;
}

static int box_streams_planes(const char *s) {
  return ((box_planes(s) && define_value(s, "RL_LEAD") > 0) || box_splits(s)) &&
         define_value(s, "RL_STREAM") * element_size(s) == 16;
}
static int box_planes_plain(const char *s) {
  return box_planes(s) && define_value(s, "RL_STREAM") < 0;
}
static int box_planes_padded(const char *s) {
  return define_value(s, "RL_PLANES") == 2 && define_value(s, "RL_STREAM") > 0;
}
static int box_streams_pads(const char *s) {
  return box_streams(s) && strstr(s, "#define RL_LANES ");
}
static int box_streams_narrow(const char *s) { /* 1-byte rows of 8 */
  return element_size(s) > 1 ||
         (box_streams_pads(s) && define_value(s, "RL_VEC") == 8);
}
static int box_shifts(const char *s) {
  return define_value(s, "RL_SHIFT") == 1 && box_streams(s);
}
static int box_copies_in(const char *s) { /* 1-byte elements */
  return element_size(s) > 1 || (define_value(s, "RL_COPY_IN") == 1 &&
                                 define_value(s, "RL_STREAM") == 16);
}
static int box_weaves_streamed(const char *s) {
  return element_size(s) > 2 ||
         (define_value(s, "RL_WEAVE") == 1 && define_value(s, "RL_STREAM") > 0);
}
static int box_copies_in_rows_streamed(const char *s) {
  return box_copies_in(s) && box_copies_in_rows(s);
}

/* 4-bit: squares through a private buffer, streamed, P's last box ragged
 * (other widths: any plan) */
static int nibble_boxes(const char *s);
static int nibble_staged(const char *s) {
  long long bp = define_value(s, "RL_BLOCK_P");
  return !nibble_boxes(s) || (define_value(s, "RL_VEC") == 8 &&
                              define_value(s, "RL_STREAM") == 16 &&
                              define_value(s, "RL_LEAD") > 0 &&
                              define_value(s, "RL_STAGED") ==
                                  bp * define_value(s, "RL_BLOCK_K") / 32 &&
                              define_value(s, "RL_EXTENT_P") % bp % 64 > 0);
}
static int nibble_staged_rows(const char *s) { /* and K's block cut */
  return nibble_staged(s) &&
         (!nibble_boxes(s) ||
          define_value(s, "RL_EXTENT_K") % define_value(s, "RL_BLOCK_K") > 0);
}
static int nibble_words(const char *s);
static int nibble_streams_words(const char *s) {
  return !nibble_boxes(s) ||
         (nibble_words(s) && define_value(s, "RL_STREAM") == 16);
}

static void streams(plan_case_fn *run) {
  static const struct {
    int family;
    const char *src, *dst;
    int (*want)(const char *);
    int64_t shape[4];
    size_t w0;
  } cases[] = {
      {0, "NCHW", "NHWC", box_streams, {2, 64, 23, 23}, 3},
      {0, "NCHW", "NC1HWC0", box_streams, {2, 32, 9, 9}, 2},
      {0, "NCHW", "NC1HWC0", box_streams_bytes16, {2, 64, 9, 9}, 1},
      {0, "NCHW", "nChw16c", box_streams_bytes16, {2, 32, 9, 9}, 1},
      {0, "NHWC", "NCHW", box_streams, {2, 9, 8, 64}, 3},
      {0, "NCHW", "NHWC", box_streams_tiles, {2, 80, 9, 10}, 1},
      {0, "NHWC", "NCHW", box_streams_tiles_cut, {2, 10, 16, 256}, 1},
      {0, "NCHW", "NHWC", box_streams_tiles_pages, {1, 256, 57, 57}, 1},
      {0, "NCHW", "NHWC", box_squares_plain, {2, 512, 5, 7}, 3},
      {0, "NHWC", "NCHW", box_streams_grid, {2, 14, 14, 256}, 3},
      {0, "NCHW", "FRACTAL_Z", box_streams_short, {64, 17, 3, 3}, 1},
      {2, "ND", "FRACTAL_NZ", box_streams, {2, 37, 70}, 1},
      {0, "nChw8c", "nChw16c", box_streams, {2, 24, 5, 7}, 2},
      {0, "NCHW", "CHWN4", box_staged, {16, 10, 21, 23}, 1},
      {0, "NCHW", "CHWN4", box_staged, {29, 10, 21, 23}, 1},
      {0, "NCHW", "CHWN4", box_staged, {7, 10, 31, 33}, 1},
      {2, "FRACTAL_NZ", "ND", box_shifts, {2, 7, 2101}, 1},
      {2, "FRACTAL_NZ", "ND", box_shifts, {1, 9, 2049}, 1},
      {0, "NC1HWC0", "NHWC", box_shifts, {2, 1001, 3, 2}, 3},
      {0, "NCHW", "NHWC", box_streams_planes, {2, 7, 30, 32}, 1},
      {0, "NCHW", "NHWC", box_planes_plain, {2, 7, 30, 11}, 1},
      {0, "NHWC", "NCHW", box_streams_planes, {2, 16, 20, 3}, 1},
      {0, "NHWC", "NCHW", box_runs_ahead, {1, 56, 56, 64}, 1},
      {0, "NCWH", "NCH%32BW", box_planes_padded, {2, 3, 2, 13}, 1},
      {0, "NHWC", "NC1HWC0", box_streams_pads, {2, 5, 7, 3}, 1},
      {0, "NHWC", "NC1HWC0", box_streams_pads, {2, 5, 7, 9}, 1},
      {0, "NHWC", "NC1HWC0", box_streams_pads, {2, 5, 7, 30}, 1},
      {0, "NCHW", "NC1HWC0", box_streams_pads, {2, 3, 9, 9}, 1},
      {0, "NCHW", "CHWN4", box_streams_narrow, {6, 4, 9, 10}, 1},
      {0, "NCHW", "NHWC", nibble_staged, {2, 62, 24, 25}, 0},
      {0, "NCHW", "NC1HWC0", nibble_staged, {2, 70, 9, 10}, 0},
      {0, "NHWC", "NCHW", nibble_staged_rows, {2, 24, 32, 70}, 0},
      {2, "ND", "FRACTAL_NZ", nibble_streams_words, {2, 17, 71}, 0},
      {0, "NCHW", "HWCN", box_copies_in, {64, 256, 8, 10}, 1},
      {0, "nChw16c", "HWCN", box_copies_in, {64, 2048, 2, 3}, 1},
      {0, "NCHW", "HWCN%128", box_copies_in, {40, 16, 16, 16}, 1},
      /* 512 pixels, each box's runs whole lines */
      {0, "NCHW4", "2N", box_weaves_streamed, {4, 8, 16, 32}, 1},
      /* Q's steps continuing the rows, whole lines: streamed */
      {0, "HWCN", "NC1HWC0", box_copies_in_rows_streamed, {8, 16, 64, 32}, 1},
      /* boxes past the destination's end write up to it only */
      {0, "nChw16c", "nChw8c", box_streams_pads, {2, 17, 5, 7}, 3},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t w = cases[i].w0; w < sizeof widths / sizeof widths[0]; w++)
      for (int skew = 0; skew < 2; skew++)
        run("streamed", cases[i].want, cases[i].src, cases[i].dst, widths[w],
            &families[cases[i].family], cases[i].shape,
            skew ? ((size_t)relayout_dtype_bits(widths[w]) + 7) / 8 : 0);
}

/* 4-bit conversions, each with both kinds' families: where both layouts
 * keep one dim innermost, contiguous and in whole bytes, the kernel moves
 * bytes; otherwise, on CPU devices, boxes of destination rows that start
 * on whole bytes move nibbles two to a byte (rows of even length, every
 * other destination stride even, nothing skipped), and the rest (and every
 * such conversion on GPUs) gathers nibbles. Boxes whose source runs along
 * P move in 8 x 8 squares of nibbles, P's last block over part of the one
 * before (ragged in the NHWC cases), and the rest of a box (K's last rows;
 * boxes holding padding, into FRACTAL_ZN, NC1HWC0 and FRACTAL_Z, whose
 * 2x4 case has squares in boxes along Q too) two to a byte. Into
 * FRACTAL_Z from 3x3, K's source stride 9 (and Q's, 585, at C = 65) starts
 * every other source row mid-byte, and P's last block at pixel 1: those
 * rows' words move down a nibble (squares side by side along K, P's block
 * being 8); so too NCHW -> NHWC at 7x7 (side by side along P). Into
 * FRACTAL_NZ with N odd, whole destination rows copy words the same way
 * (with N = 71, every other). Into NCHW with H x W odd (NHWC at 3x5, 7x7
 * and 5x5, FRACTAL_Z from 3x3), destination rows start mid-byte: each
 * box's run of P's rows goes through a private buffer, the squares' rows
 * put there a word at a time at any nibble, K's last block over part of
 * the one before too (3x5: pixels 7 to 14; 7x7: 17 to 48), and the rest
 * (P's 6 channels at 5x5, short of a square; every pixel at 1x7, K too
 * short for one) nibble by nibble. */
static int moves_bytes(const char *s) {
  return !strstr(s, "#define RL_NIBBLES 1");
}
static int nibble_boxes(const char *s) {
  return is_lines(s) && strstr(s, "#define RL_NIBBLES 1");
}
static int nibble_squares(const char *s) {
  return nibble_boxes(s) && define_value(s, "RL_VEC") == 8;
}
static int nibble_odd(const char *s) {
  return nibble_squares(s) && strstr(s, "#define RL_ODD_ROWS 1");
}
static int nibble_odd_k(const char *s) {
  return nibble_squares(s) && strstr(s, "#define RL_ODD_K 1");
}
static int nibble_pairs(const char *s) {
  return nibble_boxes(s) && define_value(s, "RL_VEC") == 1;
}
static int nibble_words(const char *s) { /* whole rows copied as words */
  return nibble_pairs(s) && define_value(s, "RL_SSTRIDE_K") == 1 &&
         define_value(s, "RL_BLOCK_K") % 8 == 0;
}
static int gathers_nibbles(const char *s) {
  return strstr(s, "__kernel void rl_gather_nibbles(") &&
         strstr(s, "#define RL_NIBBLES 1");
}
static void nibbles(plan_case_fn *run) {
  static const struct {
    int family;
    const char *src, *dst;
    int (*want_cpu)(const char *), (*want_gpu)(const char *);
    int64_t shape[4];
  } cases[] = {
      {2, "ND", "FRACTAL_NZ", moves_bytes, moves_bytes, {3, 33, 128}},
      {2, "ND", "FRACTAL_NZ", moves_bytes, moves_bytes, {2, 17, 70}},
      {2, "FRACTAL_NZ", "ND", moves_bytes, moves_bytes, {2, 37, 70}},
      {2, "NZ", "NZ(c0=8)", moves_bytes, moves_bytes, {1, 20, 30}},
      {0, "NHWC", "NC1HWC0", moves_bytes, moves_bytes, {2, 3, 5, 70}},
      {0, "NC1HWC0", "NHWC", moves_bytes, moves_bytes, {2, 70, 3, 5}},
      {2, "ND", "FRACTAL_NZ", nibble_words, gathers_nibbles, {2, 17, 71}},
      {0, "NC1HWC0", "nChw16c", nibble_pairs, gathers_nibbles, {2, 17, 3, 5}},
      {2, "ND", "FRACTAL_ZN", nibble_squares, gathers_nibbles, {2, 17, 70}},
      {0, "NCHW", "NC1HWC0", nibble_squares, gathers_nibbles, {2, 70, 3, 6}},
      {0, "NCHW", "NHWC", nibble_squares, gathers_nibbles, {2, 62, 9, 10}},
      {0, "NCHW", "NHWC", nibble_odd, gathers_nibbles, {2, 24, 7, 7}},
      {0, "NHWC", "NCHW", nibble_squares, gathers_nibbles, {2, 2, 13, 44}},
      {0, "NCHW", "FRACTAL_Z", nibble_squares, gathers_nibbles, {33, 70, 2, 4}},
      {0, "NCHW", "FRACTAL_Z", nibble_odd, gathers_nibbles, {33, 128, 3, 3}},
      {0, "NCHW", "FRACTAL_Z", nibble_odd, gathers_nibbles, {33, 65, 3, 3}},
      {0, "NHWC", "NCHW", nibble_odd_k, gathers_nibbles, {2, 3, 5, 70}},
      {0, "NHWC", "NCHW", nibble_odd_k, gathers_nibbles, {2, 7, 7, 24}},
      {0, "NHWC", "NCHW", nibble_odd_k, gathers_nibbles, {3, 5, 5, 6}},
      {0, "NHWC", "NCHW", nibble_odd_k, gathers_nibbles, {2, 1, 7, 24}},
      {0, "FRACTAL_Z", "NCHW", nibble_odd_k, gathers_nibbles, {16, 128, 3, 3}},
      {2, "FRACTAL_NZ", "ND", gathers_nibbles, gathers_nibbles, {2, 37, 71}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int gpu = 0; gpu < 2; gpu++)
      run(gpu ? "gpu" : "cpu", gpu ? cases[i].want_gpu : cases[i].want_cpu,
          cases[i].src, cases[i].dst, RELAYOUT_I4, &families[cases[i].family],
          cases[i].shape, 0);
}

/* Conversions whose layouts share an innermost run move it as one unit
 * (lib/plan/widen.c): bytes at 4 bits, and wider units where the shorter run
 * folds into 8 bytes or fewer; a longer run stays in elements, and so does
 * a dim whose extent will not pair. Each runs at its destination offset
 * and one element past it, where a widened plan's units do not fit and its
 * element-by-element twin runs instead. */
static long long want_unit;
static int moves_want_unit(const char *s) {
  return element_size(s) == want_unit;
}
static void widening(plan_case_fn *run) {
  static const struct {
    int family;
    const char *src, *dst;
    relayout_dtype t;
    int64_t shape[4];
    long long unit;
  } cases[] = {
      {0, "NCHW4", "CHWN4", RELAYOUT_I8, {2, 8, 5, 7}, 4},
      {0, "CHWN4", "NCHW4", RELAYOUT_F16, {3, 8, 5, 7}, 8},
      {0, "NCHW4", "CHWN4", RELAYOUT_I8, {2, 6, 5, 7}, 2}, /* C pairs once */
      {0, "NCHW4", "CHWN4", RELAYOUT_I8, {2, 5, 5, 7}, 1},
      {0, "NCHW4", "CHWN4", RELAYOUT_U4, {2, 8, 5, 7}, 2},
      {0, "2N", "4N", RELAYOUT_I8, {8, 3, 5, 7}, 2},
      {0, "NHWC", "NCHW4", RELAYOUT_I8, {2, 5, 7, 12}, 4},
      {0, "nChw8c", "nChw16c", RELAYOUT_I8, {2, 32, 5, 7}, 8},
      {0, "nChw8c", "nChw16c", RELAYOUT_F16, {2, 32, 5, 7}, 2}, /* 16 B */
      {0, "nChw16c", "NCHW64", RELAYOUT_I8, {2, 64, 5, 7}, 1},
      {2, "ND", "FRACTAL_NZ", RELAYOUT_U4, {2, 17, 128}, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int gpu = 0; gpu < 2; gpu++)
      for (int skew = 0; skew < 2; skew++) {
        want_unit = cases[i].unit;
        run(gpu ? "gpu" : "cpu", moves_want_unit, cases[i].src, cases[i].dst,
            cases[i].t, &families[cases[i].family], cases[i].shape,
            skew ? ((size_t)relayout_dtype_bits(cases[i].t) + 7) / 8 : 0);
      }
}

/* The generic kernel of dense plans (rl_generic_tile in kernels/generic.cl,
 * on either kind of device), kind "generic", in each of a CPU device's
 * ways: squares side by side (four, two and one by width; 64-bit ones of
 * side 8), squares of two, four and eight pieces of K (P half, a quarter or
 * an eighth of a square: nChw8c, 4N, 2N; CHWN4 and CHWN2c, K's rows apart),
 * rows of a side, of half a side and of two sides (FRACTAL_NZ's 32 1-byte
 * elements), rows shorter than a side (a 3 x 3 or 2 x 2 conv weight's
 * pixels into FRACTAL_Z, read as overlapping vectors), deep tiles of 1-
 * and 2-byte elements (4, 2 and 1 squares along K, then the rest of K, 1,
 * 9 and 2 elements, as overlapping vectors), padding along P
 * (NC1HWC0's C0, FRACTAL_NZ's N0) and along K (FRACTAL_NZ's M), and tiles cut
 * short at the tensor's edges (shapes in the source's order; NCHW's of 144
 * pixels, so that its rows' squares can stream); and 70000 tiles of 2 x 16
 * bytes, more than a GPU's tiles take work-groups at once (65536), so that each
 * work-group goes on to further tiles. */
static void tiles(plan_case_fn *run) {
  static const struct {
    int family;
    const char *src, *dst;
    relayout_dtype t;
    int64_t shape[5];
  } cases[] = {
      {0, "NHWC", "NCHW", RELAYOUT_U8, {2, 9, 16, 70}},
      {0, "NHWC", "NCHW", RELAYOUT_F16, {2, 9, 15, 40}},
      {0, "NHWC", "NCHW", RELAYOUT_F32, {2, 9, 16, 33}},
      {0, "NHWC", "NCHW", RELAYOUT_F64, {2, 7, 9, 17}},
      {0, "NCHW", "CHWN4", RELAYOUT_U8, {8, 12, 9, 9}},
      {0, "NCHW", "4N", RELAYOUT_U8, {8, 5, 7, 9}},
      {0, "NCHW", "CHWN4", RELAYOUT_F64, {3, 8, 9, 9}},
      {0, "NCHW", "2N", RELAYOUT_F16, {4, 3, 9, 7}},
      {0, "NCHW", "2N", RELAYOUT_F32, {6, 5, 8, 7}},
      {0, "NCHW", "2N", RELAYOUT_F64, {4, 3, 5, 7}},
      {0, "NCHW", "CHWN2c", RELAYOUT_F16, {3, 4, 12, 11}},
      {0, "NCHW", "nChw8c", RELAYOUT_F32, {2, 16, 5, 7}},
      {0, "NCHW", "nChw8c", RELAYOUT_F64, {2, 16, 5, 7}},
      {0, "nChw8c", "nChw16c", RELAYOUT_F32, {2, 32, 5, 7}},
      {0, "NCHW", "NC1HWC0", RELAYOUT_F16, {2, 35, 5, 7}},
      {0, "NCHW", "nChw16c", RELAYOUT_U8, {2, 16, 3, 65}},
      {0, "NCHW", "nChw16c", RELAYOUT_F16, {2, 16, 4, 41}},
      {0, "NCHW", "NC1HWC0", RELAYOUT_U8, {2, 40, 3, 50}},
      {0, "NCHW", "FRACTAL_Z", RELAYOUT_F16, {32, 17, 3, 3}},
      {0, "NCHW", "FRACTAL_Z", RELAYOUT_U8, {40, 64, 2, 2}},
      {1, "NCDHW", "NDHWC", RELAYOUT_F32, {2, 20, 3, 5, 7}},
      {2, "ND", "FRACTAL_NZ", RELAYOUT_F16, {2, 40, 50}},
      {2, "ND", "FRACTAL_NZ", RELAYOUT_U8, {2, 40, 80}},
      {0, "NCHW", "NHWC", RELAYOUT_U8, {70000, 2, 4, 4}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    run("generic", NULL, cases[i].src, cases[i].dst, cases[i].t,
        &families[cases[i].family], cases[i].shape, 0);
}

/* Every case, each run once. */
static void plan_cases(plan_case_fn *run) {
  boxes(run);
  streams(run);
  nibbles(run);
  widening(run);
  tiles(run);
}

#endif /* RELAYOUT_TEST_PLAN_CASES_H */
