/* test_errors.c - bad input gets a clear error naming the problem, never a
 * crash */
#include "check.h"
#include "plan.h"

/* Layout text that must not parse: status and a piece of the message. */
static void bad_layout_text(void) {
  static const struct {
    const char *text;
    relayout_status want;
    const char *part;
  } cases[] = {
      {"", RELAYOUT_ERR_SYNTAX, "empty"},
      {"...", RELAYOUT_ERR_SYNTAX, "names no dims"},
      {"NCHW16", RELAYOUT_ERR_SYNTAX, "followed by the letter"},
      {"NCHW16k", RELAYOUT_ERR_SYNTAX, "16k in 'NCHW16k' has no outer K"},
      {"NCHWC", RELAYOUT_ERR_SYNTAX, "dim C appears twice"},
      {"nchwN", RELAYOUT_ERR_SYNTAX, "dim N appears twice"},
      {"NC0HW", RELAYOUT_ERR_SYNTAX, "at least 1"},
      {"NC-HW", RELAYOUT_ERR_SYNTAX, "unexpected '-' at position 3"},
      {"NCHW 16c", RELAYOUT_ERR_SYNTAX, "unexpected ' '"},
      {"MN%", RELAYOUT_ERR_SYNTAX, "expected alignment"},
      {"MN%0B", RELAYOUT_ERR_SYNTAX, "at least 1"},
      {"NCHW99999999999999999999c", RELAYOUT_ERR_OVERFLOW, "too large"},
      {"FRACTAL_QQ", RELAYOUT_ERR_UNKNOWN, "unknown layout 'FRACTAL_QQ'"},
      {"FRACTAL_NZ(c1=8)", RELAYOUT_ERR_UNKNOWN,
       "no parameter 'c1' (it takes: c0 b16)"},
      {"FRACTAL_NZ(c0=0)", RELAYOUT_ERR_ARGUMENT, "out of range"},
      {"FRACTAL_NZ(c0=x)", RELAYOUT_ERR_SYNTAX, "needs a whole number"},
      {"FRACTAL_NZ(c0=8", RELAYOUT_ERR_SYNTAX, "final ')'"},
      {"ND(c0=8)", RELAYOUT_ERR_UNKNOWN, "it takes: none"},
      {"(4,2):(1", RELAYOUT_ERR_SYNTAX, "expected ',' or ')'"},
      {"(4,2)", RELAYOUT_ERR_SYNTAX, "needs ':'"},
      {"(4,2):(1,4,8)", RELAYOUT_ERR_SYNTAX, "differ in form"},
      {"((4,2),3):(1,(4,8))", RELAYOUT_ERR_SYNTAX, "differ in form"},
      {"(4,0):(1,4)", RELAYOUT_ERR_SYNTAX, "CuTe extent"},
      {"(4,2):(1,4)x", RELAYOUT_ERR_SYNTAX, "unexpected 'x'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    relayout_layout *l = (relayout_layout *)&l; /* must come back NULL */
    CHECK_FAILS(cases[i].want, cases[i].part,
                relayout_layout_parse(&l, cases[i].text, &e_));
    CHECK(l == NULL, "'%s': no layout on failure", cases[i].text);
  }
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "NULL",
              relayout_layout_parse(NULL, "NCHW", &e_));
  relayout_layout *l;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "NULL",
              relayout_layout_parse(&l, NULL, &e_));
  relayout_layout_free(NULL);
  char longtext[300];
  memset(longtext, 'N', sizeof longtext - 1);
  longtext[sizeof longtext - 1] = 0;
  CHECK_FAILS(RELAYOUT_ERR_SYNTAX, "too long",
              relayout_layout_parse(&l, longtext, &e_));
}

static relayout_layout *parse(const char *text) {
  relayout_layout *l = NULL;
  CHECK_OK(relayout_layout_parse(&l, text, &e_));
  return l;
}

/* Dims that do not fit a layout, or that overflow. */
static void bad_dims(void) {
  relayout_layout *l = parse("NCHW16c");
  relayout_desc d;
  const int64_t ok[4] = {2, 17, 5, 3};
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "dim C has extent 0",
              relayout_desc_init(&d, l, RELAYOUT_F16, 4, "NCHW",
                                 (const int64_t[]){2, 0, 5, 3}, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "extent -4",
              relayout_desc_init(&d, l, RELAYOUT_F16, 4, "NCHW",
                                 (const int64_t[]){2, 17, -4, 3}, &e_));
  CHECK_FAILS(RELAYOUT_ERR_OVERFLOW, "beyond 2^62",
              relayout_desc_init(&d, l, RELAYOUT_F16, 4, "NCHW",
                                 (const int64_t[]){2, INT64_MAX, 5, 3}, &e_));
  CHECK_FAILS(
      RELAYOUT_ERR_OVERFLOW, "2^63",
      relayout_desc_init(&d, l, RELAYOUT_F16, 4, "NCHW",
                         (const int64_t[]){1 << 30, 1 << 30, 1 << 30, 3}, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "has no dim D",
              relayout_desc_init(&d, l, RELAYOUT_F16, 4, "NCHD", ok, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "has 4 dims, but 3 were given",
              relayout_desc_init(&d, l, RELAYOUT_F16, 3, "NCH", ok, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "dim C is given twice",
              relayout_desc_init(&d, l, RELAYOUT_F16, 4, "NCCW", ok, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "1 to 12 dims",
              relayout_desc_init(&d, l, RELAYOUT_F16, 13, "NCHW", ok, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "neither a letter",
              relayout_desc_init(&d, l, RELAYOUT_F16, 4, "NC?W", ok, &e_));
  CHECK_FAILS(
      RELAYOUT_ERR_ARGUMENT, "invalid dtype",
      relayout_desc_init(&d, l, (relayout_dtype)99, 4, "NCHW", ok, &e_));
  relayout_layout_free(l);

  /* An alignment that is no whole number of elements. */
  l = parse("...MN%6B");
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "not a whole number of f32",
              relayout_desc_init(&d, l, RELAYOUT_F32, 2, "MN",
                                 (const int64_t[]){3, 5}, &e_));
  relayout_layout_free(l);
  /* Alignments in bytes near 2^62, checked as they turn into elements: a
   * 4-bit element count past 2^63 (the product was unchecked before, signed
   * overflow that UBSan stops on, at every dtype). */
  l = parse("...MN%4611686018427387904B");
  CHECK_FAILS(RELAYOUT_ERR_OVERFLOW, "overflows as i4 elements",
              relayout_desc_init(&d, l, RELAYOUT_I4, 2, "MN",
                                 (const int64_t[]){3, 5}, &e_));
  CHECK_FAILS(RELAYOUT_ERR_OVERFLOW, "more than 2^63 bits",
              relayout_desc_init(&d, l, RELAYOUT_F64, 2, "MN",
                                 (const int64_t[]){3, 5}, &e_));
  relayout_layout_free(l);
  /* Blocks whose padding overflows. */
  l = parse("NC4611686018427387904c");
  CHECK_FAILS(RELAYOUT_ERR_OVERFLOW, "",
              relayout_desc_init(&d, l, RELAYOUT_F64, 2, "NC",
                                 (const int64_t[]){4, 3}, &e_));
  relayout_layout_free(l);
  /* Grouped FRACTAL_Z needs N to split into the groups. */
  l = parse("FRACTAL_Z(groups=3)");
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "do not split into groups=3",
              relayout_desc_init(&d, l, RELAYOUT_F16, 4, "NCHW",
                                 (const int64_t[]){16, 4, 1, 1}, &e_));
  relayout_layout_free(l);
  l = parse("FRACTAL_Z_3D(groups=4)");
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "do not split into groups=4",
              relayout_desc_init(&d, l, RELAYOUT_F16, 5, "NDHWC",
                                 (const int64_t[]){6, 1, 1, 1, 4}, &e_));
  relayout_layout_free(l);
  /* FRACTAL_Z_C04 holds one block of 4 channels, and has no grammar text
   * (H and W are one dim in it); an H * W that overflows is refused. */
  l = parse("FRACTAL_Z_C04");
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "at most 4 channels",
              relayout_desc_init(&d, l, RELAYOUT_F16, 4, "NCHW",
                                 (const int64_t[]){16, 5, 3, 3}, &e_));
  CHECK_FAILS(RELAYOUT_ERR_OVERFLOW, "H * W overflows",
              relayout_desc_init(
                  &d, l, RELAYOUT_I8, 4, "NCHW",
                  (const int64_t[]){1, 4, (int64_t)1 << 40, (int64_t)1 << 40},
                  &e_));
  char text[64];
  CHECK_FAILS(
      RELAYOUT_ERR_UNSUPPORTED, "no grammar text",
      relayout_layout_grammar_text(text, sizeof text, l, RELAYOUT_F16, &e_));
  relayout_layout_free(l);
}

/* A TPU layout refused for an f32 NCHW (2, 3, 4, 5) tensor, with `part`
 * in the message. */
static void tpu_refused(const char *text, relayout_status want,
                        const char *part) {
  relayout_layout *l = parse(text);
  relayout_desc d;
  CHECK_FAILS(want, part,
              relayout_desc_init(&d, l, RELAYOUT_F32, 4, "NCHW",
                                 (const int64_t[]){2, 3, 4, 5}, &e_));
  relayout_layout_free(l);
}

/* CuTe layouts that alias or interleave, and TPU parameters. */
static void bad_strides(void) {
  relayout_layout *l = parse("(4,4):(1,2)");
  relayout_desc d;
  CHECK_FAILS(RELAYOUT_ERR_UNSUPPORTED, "two coordinates to one element",
              relayout_desc_init(&d, l, RELAYOUT_U8, 2, "01",
                                 (const int64_t[]){4, 4}, &e_));
  relayout_layout_free(l);
  l = parse("(4,3):(0,1)");
  CHECK_FAILS(RELAYOUT_ERR_UNSUPPORTED, "one-to-one",
              relayout_desc_init(&d, l, RELAYOUT_U8, 2, "01",
                                 (const int64_t[]){4, 3}, &e_));
  relayout_layout_free(l);
  l = parse("(12):(1)");
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "has 1 mode, but 2 dims were given",
              relayout_desc_init(&d, l, RELAYOUT_U8, 2, "01",
                                 (const int64_t[]){4, 3}, &e_));
  relayout_layout_free(l);
  l = parse("(4,3):(3,1)");
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "has 2 modes, but 1 dim was given",
              relayout_desc_init(&d, l, RELAYOUT_U8, 1, "0",
                                 (const int64_t[]){12}, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "mode 1 extent 3, but dim d1 is 5",
              relayout_desc_init(&d, l, RELAYOUT_U8, 2, "01",
                                 (const int64_t[]){4, 5}, &e_));
  relayout_layout_free(l);
  const int64_t nchw[4] = {2, 3, 4, 5};
  tpu_refused("TPU_ALIGNED(npus=4)", RELAYOUT_ERR_ARGUMENT,
              "needs npus= and lmem=");
  l = parse("TPU_ALIGNED(npus=4,lmem=100)");
  /* 2 images x 1 channel slot x H*W = 20 padded to 32 (128 bytes) */
  CHECK_FAILS(RELAYOUT_ERR_DIMS,
              "needs 64 f32 elements on each NPU, more than lmem=100 bytes",
              relayout_desc_init(&d, l, RELAYOUT_F32, 4, "NCHW", nchw, &e_));
  CHECK_FAILS(RELAYOUT_ERR_UNSUPPORTED, "4-bit",
              relayout_desc_init(&d, l, RELAYOUT_I4, 4, "NCHW", nchw, &e_));
  relayout_layout_free(l);
  tpu_refused("TPU_COMPACT(npus=4,start=4,lmem=1024)", RELAYOUT_ERR_ARGUMENT,
              "start=4 must be below npus=4");
  /* 2^31 channels over 3 NPUs, 715827883 slots of 3 x 2^31 elements: as
   * bytes past 2^63, so the message counts elements */
  l = parse("TPU_COMPACT(npus=3,lmem=8)");
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "needs 4611686020574871552 f16 elements",
              relayout_desc_init(&d, l, RELAYOUT_F16, 4, "NCHW",
                                 (const int64_t[]){1, 1LL << 31, 3, 1LL << 31},
                                 &e_));
  relayout_layout_free(l);
  /* a TPU tensor's offset: inside the NPU, on a word, with room after it;
   * free strides that overlap */
  tpu_refused("TPU_COMPACT(npus=4,lmem=1024,offset=1024)",
              RELAYOUT_ERR_ARGUMENT, "offset=1024 must be below lmem=1024");
  tpu_refused("TPU_STRIDED(npus=4,lmem=1024,offset=2)", RELAYOUT_ERR_ARGUMENT,
              "offset=2 is not a whole number of 4-byte");
  tpu_refused("TPU_COMPACT(npus=4,lmem=1024,offset=960)", RELAYOUT_ERR_DIMS,
              "needs 40 f32 elements on each NPU, more "
              "than lmem=1024 bytes hold past the offset");
  tpu_refused("TPU_STRIDED(npus=4,lmem=1024,hstride=2)",
              RELAYOUT_ERR_UNSUPPORTED, "two coordinates to one element");
  l = parse("TPU_MATRIX(npus=4,lmem=1024,w=8)");
  CHECK_FAILS(RELAYOUT_ERR_UNKNOWN, "has no parameter 'n0'",
              relayout_layout_set_param(l, "n0", 4, &e_));
  relayout_layout_free(l);
  /* H*W past 2^63, checked before it is multiplied (UBSan's pass) */
  l = parse("TPU_COMPACT(npus=4,lmem=1024)");
  CHECK_FAILS(RELAYOUT_ERR_OVERFLOW, "H*W overflows",
              relayout_desc_init(&d, l, RELAYOUT_F32, 4, "NCHW",
                                 (const int64_t[]){1, 1, 1LL << 32, 1LL << 32},
                                 &e_));
  relayout_layout_free(l);
}

/* Conversions whose sides do not match, or whose extents are hidden. */
static void bad_binding(void) {
  relayout_desc s, d;
  relayout_layout *nchw = parse("NCHW"), *nhwd = parse("NHWD");
  relayout_layout *nz = parse("FRACTAL_NZ"), *nd = parse("ND");
  relayout_layout *nc1 = parse("NC1HWC0"), *cute = parse("(4,6):(6,1)");
  const int64_t shape4[4] = {2, 17, 5, 3};
  CHECK_FAILS(
      RELAYOUT_ERR_DIMS, "dim C of 'NCHW' has no place in 'NHWD'",
      relayout_bind(&s, &d, nchw, nhwd, RELAYOUT_F32, 4, shape4, NULL, 0, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "has no '...'",
              relayout_bind(&s, &d, nd, nchw, RELAYOUT_F32, 5,
                            (const int64_t[]){2, 2, 17, 5, 3}, NULL, 0, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "fewer than the 2",
              relayout_bind(&s, &d, nd, nz, RELAYOUT_F16, 1,
                            (const int64_t[]){7}, NULL, 0, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "padding of 'NC1HWC0' hides it",
              relayout_bind(&s, &d, nc1, nchw, RELAYOUT_F16, 5,
                            (const int64_t[]){2, 2, 5, 3, 16}, NULL, 0, &e_));
  relayout_dim_value c17 = {'C', 17}, c40 = {'C', 40}, h9 = {'H', 9};
  CHECK_OK(relayout_bind(&s, &d, nc1, nchw, RELAYOUT_F16, 5,
                         (const int64_t[]){2, 2, 5, 3, 16}, &c17, 1, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS,
              "has shape (2, 2, 5, 3, 16), but 'NC1HWC0' at "
              "these dims has shape (2, 3, 5, 3, 16)",
              relayout_bind(&s, &d, nc1, nchw, RELAYOUT_F16, 5,
                            (const int64_t[]){2, 2, 5, 3, 16}, &c40, 1, &e_));
  CHECK_FAILS(
      RELAYOUT_ERR_DIMS, "dim H is 9 as given but 5 in the source array",
      relayout_bind(&s, &d, nchw, nc1, RELAYOUT_F16, 4, shape4, &h9, 1, &e_));
  relayout_dim_value q = {'Q', 3};
  CHECK_FAILS(
      RELAYOUT_ERR_DIMS, "dim Q is not a dim of this conversion",
      relayout_bind(&s, &d, nchw, nc1, RELAYOUT_F16, 4, shape4, &q, 1, &e_));
  relayout_dim_value twice[2] = {{'C', 17}, {'c', 17}};
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "given twice",
              relayout_bind(&s, &d, nc1, nchw, RELAYOUT_F16, 5,
                            (const int64_t[]){2, 2, 5, 3, 16}, twice, 2, &e_));
  CHECK_FAILS(
      RELAYOUT_ERR_DIMS, "the source array has 3 axes, but 'NCHW' has 4",
      relayout_bind(&s, &d, nchw, nc1, RELAYOUT_F16, 3, shape4, NULL, 0, &e_));
  CHECK_FAILS(
      RELAYOUT_ERR_DIMS, "an ND source takes its rank",
      relayout_bind(&s, &d, nd, nchw, RELAYOUT_F16, 0, NULL, NULL, 0, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS,
              "dim d0 is 4 in '(4,6):(6,1)' but 5 in the source array",
              relayout_bind(&s, &d, nd, cute, RELAYOUT_F16, 2,
                            (const int64_t[]){5, 6}, NULL, 0, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS,
              "has 2 dims, fewer than the 4 that 'NCHW' names",
              relayout_bind(&s, &d, cute, nchw, RELAYOUT_F16, 1,
                            (const int64_t[]){24}, NULL, 0, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "bad argument",
              relayout_bind(NULL, &d, nchw, nc1, RELAYOUT_F16, 4, shape4, NULL,
                            0, &e_));
  relayout_layout *all[] = {nchw, nhwd, nz, nd, nc1, cute};
  for (size_t i = 0; i < 6; i++) relayout_layout_free(all[i]);
}

/* Short buffers are refused before anything is written. */
static void short_buffers(void) {
  relayout_layout *a = parse("NCHW"), *b = parse("NC1HWC0");
  relayout_desc s, d;
  const int64_t shape[4] = {1, 17, 2, 2};
  CHECK_OK(relayout_bind(&s, &d, a, b, RELAYOUT_F16, 4, shape, NULL, 0, &e_));
  guarded src = guarded_alloc(17 * 4 * 2, 1),
          dst = guarded_alloc(32 * 4 * 2, 0xA5);
  CHECK_FAILS(RELAYOUT_ERR_BUFFER,
              "source buffer holds 135 bytes; its layout needs 136",
              relayout_convert_ref(&d, dst.data, dst.size, &s, src.data,
                                   src.size - 1, &e_));
  CHECK_FAILS(RELAYOUT_ERR_BUFFER, "destination buffer holds 255 bytes",
              relayout_convert_ref(&d, dst.data, dst.size - 1, &s, src.data,
                                   src.size, &e_));
  int untouched = 1;
  for (size_t i = 0; i < dst.size; i++) untouched &= dst.data[i] == 0xA5;
  CHECK(untouched, "a refused conversion writes nothing");
  relayout_desc other;
  CHECK_OK(relayout_desc_init(&other, b, RELAYOUT_F16, 4, "NCHW",
                              (const int64_t[]){1, 16, 2, 2}, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "differ at logical dim 1 (C)",
              relayout_convert_ref(&other, dst.data, dst.size, &s, src.data,
                                   src.size, &e_));
  int pad;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "outside the buffer",
              relayout_desc_is_padding(&pad, &d, relayout_desc_span(&d), &e_));
  int64_t off;
  CHECK_FAILS(
      RELAYOUT_ERR_ARGUMENT, "coordinate 17 of dim C is outside [0, 17)",
      relayout_desc_offset(&off, &d, (const int64_t[]){0, 17, 0, 0}, &e_));
  guarded_free(&src);
  guarded_free(&dst);
  relayout_layout_free(a);
  relayout_layout_free(b);
}

static void dtype_names(void) {
  relayout_dtype t;
  CHECK_OK(relayout_dtype_from_name(&t, "BF16", &e_));
  CHECK(t == RELAYOUT_BF16, "BF16 is bf16");
  CHECK_FAILS(RELAYOUT_ERR_UNKNOWN, "unknown dtype 'f8e4m3'",
              relayout_dtype_from_name(&t, "f8e4m3", &e_));
  CHECK(relayout_dtype_name((relayout_dtype)-1) == NULL,
        "invalid dtype has no name");
  CHECK(!strcmp(relayout_status_name(RELAYOUT_ERR_DIMS), "RELAYOUT_ERR_DIMS"),
        "status names");
  char version[32];
  snprintf(
      version, sizeof version, "%u.%u.%u", relayout_version_number() / 10000,
      relayout_version_number() / 100 % 100, relayout_version_number() % 100);
  CHECK(relayout_version_number() == RELAYOUT_VERSION_NUMBER &&
            !strcmp(version, relayout_version_string()),
        "the library's version %s (%u) is the header's", version,
        relayout_version_number());
}

/* CANN's aclFormat numbers and the resolved text a repack records; the
 * numbers are CANN's aclFormat enum (acl_base.h), the blocks LAYOUTS.md
 * section 3's. */
static void names_and_blocks(void) {
  static const struct {
    const char *text, *name;
  } acl[] = {{"0", "NCHW"},
             {"1", "NHWC"},
             {"2", "ND"},
             {"3", "NC1HWC0"},
             {"4", "FRACTAL_Z"},
             {"12", "NC1HWC0(c0=4)"},
             {"16", "HWCN"},
             {"27", "NDHWC"},
             {"29", "FRACTAL_NZ"},
             {"30", "NCDHW"},
             {"32", "NDC1HWC0"},
             {"33", "FRACTAL_Z_3D"},
             {"35", "NC"},
             {"47", "NCL"},
             {"50", "FRACTAL_NZ(c0=16)"},
             {"51", "FRACTAL_NZ(c0=32)"},
             {"52", "FRACTAL_NZ(c0=2)"},
             {"53", "FRACTAL_NZ(c0=4)"},
             {"54", "FRACTAL_NZ(c0=8)"}};
  for (size_t i = 0; i < sizeof acl / sizeof acl[0]; i++) {
    relayout_layout *l = NULL;
    CHECK_OK(relayout_layout_parse(&l, acl[i].text, &e_));
    CHECK(l && !strcmp(relayout_layout_text(l), acl[i].name),
          "acl_format %s is %s", acl[i].text, acl[i].name);
    relayout_layout_free(l);
  }
  relayout_layout *l = NULL;
  CHECK_FAILS(RELAYOUT_ERR_UNKNOWN, "unknown acl_format number 5",
              relayout_layout_parse(&l, "5", &e_));
  CHECK_FAILS(RELAYOUT_ERR_UNKNOWN, "ACL_FORMAT_UNDEFINED",
              relayout_layout_parse(&l, "-1", &e_));
  /* NC1HWC0_C04 blocks C by 4 at every dtype: C = 5 of f16 is (N, 2, H, W,
   * 4), where NC1HWC0 itself is (N, 1, H, W, 16). */
  relayout_layout *nchw = NULL, *c04 = NULL;
  relayout_desc s, d;
  CHECK_OK(relayout_layout_parse(&nchw, "NCHW", &e_));
  CHECK_OK(relayout_layout_parse(&c04, "12", &e_));
  CHECK_OK(relayout_bind(&s, &d, nchw, c04, RELAYOUT_F16, 4,
                         (const int64_t[]){1, 5, 2, 3}, NULL, 0, &e_));
  int rank;
  int64_t shape[RELAYOUT_MAX_AXES];
  relayout_desc_physical_shape(&rank, shape, &d);
  CHECK(rank == 5 && shape[1] == 2 && shape[4] == 4,
        "acl_format 12 is NC1HWC0 with C0 = 4");
  relayout_layout_free(nchw);
  relayout_layout_free(c04);
  CHECK_FAILS(RELAYOUT_ERR_UNKNOWN, "unknown acl_format number 99999999",
              relayout_layout_parse(&l, "99999999", &e_));

  static const struct {
    const char *text;
    relayout_dtype dtype;
    const char *want;
  } blocks[] = {
      {"FRACTAL_NZ", RELAYOUT_F16, "FRACTAL_NZ(c0=16,b16=16)"},
      {"FRACTAL_NZ", RELAYOUT_F32, "FRACTAL_NZ(c0=8,b16=16)"},
      {"NZ", RELAYOUT_I8, "FRACTAL_NZ(c0=32,b16=16)"},
      {"NC1HWC0", RELAYOUT_F32, "NC1HWC0(c0=16)"},
      {"FRACTAL_Z(groups=2)", RELAYOUT_F16, "FRACTAL_Z(c0=16,b16=16,groups=2)"},
      {"FRACTAL_Z(c0=8)", RELAYOUT_F16, "FRACTAL_Z(c0=8,b16=16)"},
      {"ND_ALIGN", RELAYOUT_U8, "ND_ALIGN(align=32)"},
      {"NCHW16c", RELAYOUT_F16, "NCHW16c"},
      {"4", RELAYOUT_I8, "FRACTAL_Z(c0=32,b16=16)"},
  };
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
    char text[128] = "";
    l = NULL;
    CHECK_OK(relayout_layout_parse(&l, blocks[i].text, &e_));
    CHECK_OK(relayout_layout_resolved_text(text, sizeof text, l,
                                           blocks[i].dtype, &e_));
    CHECK(!strcmp(text, blocks[i].want), "%s at %s resolves to %s, got %s",
          blocks[i].text, relayout_dtype_name(blocks[i].dtype), blocks[i].want,
          text);
    relayout_layout *back = NULL;
    CHECK_OK(relayout_layout_parse(&back, text, &e_));
    relayout_layout_free(back);
    relayout_layout_free(l);
  }
  char small[8];
  l = NULL;
  CHECK_OK(relayout_layout_parse(&l, "FRACTAL_NZ", &e_));
  CHECK_FAILS(
      RELAYOUT_ERR_ARGUMENT, "no room",
      relayout_layout_resolved_text(small, sizeof small, l, RELAYOUT_F16, &e_));
  relayout_layout_free(l);
}

/* Every format pair at extents up to 2^62, where products overflow: binding
 * fails with a message, or gives both sides buffers that hold every element
 * (or an overflow error for one past 2^63 bits), and what binds is planned,
 * with the CPU's and the GPU's rules, without error. The sanitizer build
 * stops at any size computed unchecked (UBSan's signed overflow), as it did
 * at the TPU lmem message before it counted elements. */
static int holds_all(const relayout_desc *d, const int64_t *ext, int n) {
  int64_t bytes;
  relayout_error err;
  if (relayout_desc_size_bytes(&bytes, d, &err))
    return strstr(err.message, "2^63") != NULL;
  long double need = relayout_dtype_bits(relayout_desc_dtype(d));
  for (int i = 0; i < n; i++) need *= (long double)ext[i];
  return (long double)bytes * 8 >= need * (1 - 1e-9L);
}

static void huge_extents(void) {
  static const char *const four[] = {
      "NCHW",
      "NHWC",
      "HWCN",
      "NC1HWC0",
      "FRACTAL_Z",
      "FRACTAL_Z(groups=2)",
      "NCHW4",
      "NCHW64",
      "CHWN4",
      "4N",
      "2N",
      "2IC",
      "nChw16c",
      "OIHW16i16o",
      "8cNCHW",
      "NCH%32BW",
      "NC%7HW",
      "TPU_ALIGNED(npus=7,start=3,lmem=1099511627776)",
      "TPU_COMPACT(npus=64,lmem=1099511627776)"};
  static const char *const two[] = {
      "ND",
      "FRACTAL_NZ",
      "FRACTAL_ZN",
      "FRACTAL_ZZ",
      "ND_ALIGN",
      "...MN%64B",
      "TPU_MATRIX(npus=5,lmem=1099511627776,w=3)"};
  const int64_t g = 1LL << 31, t = 1LL << 40, e = 1LL << 62;
  const int64_t shapes4[][4] = {{3, 5, 7, 2},
                                {g, 3, g, 1},
                                {3, 2 * g, 5, g},
                                {3037000500, 3037000500, 1, 1},
                                {1, 17, t, t},
                                {e, 1, 1, 1},
                                {2, e, 1, 1},
                                {1, 1, 3, e},
                                {17, 65537, 65537, 65537}};
  const int64_t shapes2[][2] = {
      {7, 3},     {g, g + 1}, {3037000500, 3037000500}, {e, 1}, {1, e},
      {3, e / 2}, {t + 1, 17}};
  const relayout_dtype dtypes[] = {RELAYOUT_I4, RELAYOUT_U8, RELAYOUT_F16,
                                   RELAYOUT_F32, RELAYOUT_F64};
  for (int rank = 2; rank <= 4; rank += 2) {
    const char *const *names = rank == 4 ? four : two;
    int nnames = rank == 4 ? (int)(sizeof four / sizeof *four)
                           : (int)(sizeof two / sizeof *two);
    int nshapes = rank == 4 ? (int)(sizeof shapes4 / sizeof *shapes4)
                            : (int)(sizeof shapes2 / sizeof *shapes2);
    for (int a = 0; a < nnames; a++)
      for (int b = 0; b < nnames; b++) {
        relayout_layout *la = parse(names[a]), *lb = parse(names[b]);
        for (int i = 0; i < nshapes; i++)
          for (int k = 0; k < 5; k++) {
            const int64_t *ext = rank == 4 ? shapes4[i] : shapes2[i];
            relayout_desc src, dst;
            relayout_error err;
            err.message[0] = 0;
            if (relayout_bind_extents(&src, &dst, la, lb, dtypes[k], rank, ext,
                                      &err)) {
              CHECK(err.message[0], "%s -> %s: a failure with no message",
                    names[a], names[b]);
              continue;
            }
            CHECK(holds_all(&src, ext, rank) && holds_all(&dst, ext, rank),
                  "%s -> %s, shape %d of rank %d, %s: a buffer short of the "
                  "elements",
                  names[a], names[b], i, rank, relayout_dtype_name(dtypes[k]));
            /* planned (widened first, as a plan is) for a GPU, and for a
             * CPU plain and streamed, and generated */
            rl_desc dw, sw;
            if (!rl_widen(&dw, &sw, rl_cd(&dst), rl_cd(&src)))
              dw = *rl_cd(&dst), sw = *rl_cd(&src);
            for (int rules = 0; rules < 3; rules++) {
              rl_layout_plan p;
              rl_plan_layouts(&p, &dw, &sw, rules > 0, rules == 2);
              char *source = rl_codegen(&p, &dw, &sw);
              CHECK(source != NULL, "%s -> %s: no kernel source", names[a],
                    names[b]);
              free(source);
            }
          }
        relayout_layout_free(la);
        relayout_layout_free(lb);
      }
  }
}

int main(void) {
  names_and_blocks();
  bad_layout_text();
  bad_dims();
  bad_strides();
  bad_binding();
  short_buffers();
  dtype_names();
  huge_extents();
  return check_summary();
}
