/* test_plan.c - the planner, with no device: each case of plan_cases.h
 * plans (and generates) the kernel it asks for, as a plan on an engine of
 * its kind would, and every variant field the planner sets shows in the
 * generated source as the macro variant.h gives it; the generic cases take
 * the tile kernel on a CPU device and on a GPU, and per-channel casts the
 * kernel the same cast per tensor takes, their channel dim on axes of its
 * own and boxes of more rows where Q alone moves it */
#include "plan.h"
#include "plan_cases.h"

static int planned;

static void plan_case(const char *kind, int (*want)(const char *),
                      const char *src, const char *dst, relayout_dtype t,
                      const family *f, const int64_t *shape, size_t skew) {
  relayout_desc s, d;
  rl_desc sw, dw;
  (void)skew;
  if (!bind_pair(&s, &d, src, dst, t, f, shape)) return;
  /* as relayout_plan_create plans: widened where it can, then for the
   * kind's device; the cases are below any streaming threshold */
  if (!rl_widen(&dw, &sw, rl_cd(&d), rl_cd(&s)))
    dw = *rl_cd(&d), sw = *rl_cd(&s);
  if (!strcmp(kind, "generic")) { /* tiles on either kind of device */
    int64_t cpu_units, gpu_units;
    CHECK(!strcmp(rl_generic_kernel(&dw, &sw, 1, &cpu_units),
                  "rl_generic_tile") &&
              !strcmp(rl_generic_kernel(&dw, &sw, 0, &gpu_units),
                      "rl_generic_tile") &&
              cpu_units > 0 && gpu_units > 0,
          "%s -> %s %s: not the generic tiles", src, dst,
          relayout_dtype_name(t));
    planned++;
    return;
  }
  rl_layout_plan p;
  rl_plan_layouts(&p, &dw, &sw, strcmp(kind, "gpu") != 0,
                  !strcmp(kind, "streamed"));
  char *source = rl_codegen(&p, &dw, &sw);
  CHECK(source != NULL, "%s -> %s: no source", src, dst);
  if (!source) return;
  CHECK(!want || want(source), "%s -> %s %s (%s): not the plan the case is for",
        src, dst, relayout_dtype_name(t), kind);
  char *kernels = strstr(source, "/* common.cl");
  if (kernels) *kernels = 0; /* the generated header alone */
  if (p.family == RL_FAMILY_LINES) {
#define RL_SHOWN(field, macro, how, meaning)                                   \
  if (how != RL_AS_PLANES)                                                     \
    CHECK((p.field > (how == RL_AS_MANY)) ==                                   \
              (define_value(source, #macro) >= 0),                             \
          "%s -> %s %s: " #field " %d, " #macro " %lld", src, dst,             \
          relayout_dtype_name(t), p.field, define_value(source, #macro));
    RL_LINES_VARIANT(RL_SHOWN)
#undef RL_SHOWN
  }
  free(source);
  planned++;
}

/* A per-channel cast's generic kernel is the same cast per tensor's (its
 * channel dim kept as a coordinate of its own), not the general map's
 * element-by-element decoding: along each dim of a conv weight into
 * FRACTAL_Z (the tiles) and of a matrix into FRACTAL_NZ (i8's rows of 32
 * elements: the tiles on a GPU, runs on a CPU device), both ways. */
static void per_channel_tiles(void) {
  static const struct {
    const char *src, *dst, *dims;
    int64_t ext[4];
  } cases[] = {{"NCHW", "FRACTAL_Z", "NCHW", {64, 64, 3, 3}},
               {"ND", "FRACTAL_NZ", "MN", {256, 512}}};
  static float scales[512];
  for (int i = 0; i < 512; i++) scales[i] = 0.5f + (float)(i % 7);
  for (int c = 0; c < 2; c++)
    for (int dim = 0; cases[c].dims[dim]; dim++)
      for (int back = 0; back < 2; back++) {
        relayout_layout *ls, *ld;
        relayout_desc s, d;
        const char *from = back ? cases[c].dst : cases[c].src,
                   *to = back ? cases[c].src : cases[c].dst;
        int ndims = (int)strlen(cases[c].dims);
        CHECK_OK(relayout_layout_parse(&ls, from, &e_));
        CHECK_OK(relayout_layout_parse(&ld, to, &e_));
        CHECK_OK(relayout_bind_extents(&s, &d, ls, ld, RELAYOUT_F32, ndims,
                                       cases[c].ext, &e_));
        relayout_desc *q = back ? &s : &d;
        relayout_quant one = {1, 0};
        relayout_quant_channels qc = {cases[c].dims[dim], cases[c].ext[dim],
                                      scales, NULL};
        CHECK_OK(
            relayout_desc_retype(q, back ? ls : ld, RELAYOUT_I8, &one, &e_));
        const char *tensor[2], *k;
        int64_t units;
        for (int cpu = 0; cpu < 2; cpu++)
          tensor[cpu] = rl_generic_kernel(rl_cd(&d), rl_cd(&s), cpu, &units);
        CHECK_OK(relayout_desc_quantize_channels(q, &qc, &e_));
        for (int cpu = 0; cpu < 2; cpu++) {
          k = rl_generic_kernel(rl_cd(&d), rl_cd(&s), cpu, &units);
          CHECK(!strcmp(k, tensor[cpu]) &&
                    (c || !strcmp(k, "rl_generic_tile")) &&
                    (cpu || !strcmp(k, "rl_generic_tile")),
                "%s -> %s per channel along %c (%s): %s, per tensor %s", from,
                to, cases[c].dims[dim], cpu ? "CPU" : "GPU", k, tensor[cpu]);
        }
        relayout_layout_free(ls);
        relayout_layout_free(ld);
      }
}

/* A per-channel cast whose channel dim would merge with its neighbours
 * into one axis (NCHW -> NCHW along N or C, NHWC -> NHWC along C, a
 * matrix along its rows) is planned with that dim's axes apart, so that a
 * box's row keeps to one channel or steps through them by its stride: no
 * axis moves the channel dim with another, on a CPU device or a GPU. The
 * same cast per tensor merges them into one axis. */
static void channel_apart(void) {
  static const struct {
    const char *layout;
    char dim;
    int at, ndims; /* the dim's place among the extents */
    int64_t ext[4];
  } cases[] = {{"NCHW", 'N', 0, 4, {8, 16, 3, 3}},
               {"NCHW", 'C', 1, 4, {2, 24, 5, 7}},
               {"NHWC", 'C', 3, 4, {2, 5, 5, 32}},
               {"ND", '0', 0, 2, {64, 96}}};
  static float scales[64];
  for (int i = 0; i < 64; i++) scales[i] = 0.25f + (float)(i % 5);
  for (int c = 0; c < 4; c++)
    for (int cpu = 0; cpu < 2; cpu++) {
      relayout_layout *l;
      relayout_desc s, d;
      int ndims = cases[c].ndims;
      CHECK_OK(relayout_layout_parse(&l, cases[c].layout, &e_));
      CHECK_OK(relayout_bind_extents(&s, &d, l, l, RELAYOUT_F32, ndims,
                                     cases[c].ext, &e_));
      relayout_quant one = {1, 0};
      CHECK_OK(relayout_desc_retype(&d, l, RELAYOUT_I8, &one, &e_));
      rl_layout_plan whole, apart;
      rl_plan_layouts(&whole, rl_cd(&d), rl_cd(&s), cpu, 0);
      int64_t count = 1;
      for (int i = 0; i < ndims; i++) count *= cases[c].ext[i];
      const char dims[] = {cases[c].dim, 0};
      relayout_quant_channels qc = {cases[c].dim, cases[c].ext[cases[c].at],
                                    scales, NULL};
      CHECK_OK(relayout_desc_quantize_channels(&d, &qc, &e_));
      rl_plan_layouts(&apart, rl_cd(&d), rl_cd(&s), cpu, 0);
      int chan = rl_cd(&d)->per_channel - 1, mixed = 0, alone = 0;
      for (int i = 0; i < apart.naxes; i++) {
        unsigned m = apart.axes[i].dims;
        mixed |= (m >> chan & 1) && m != 1u << chan;
        alone |= m == 1u << chan;
      }
      CHECK(whole.affine && whole.naxes == 1 && whole.axes[0].extent == count &&
                apart.affine && !mixed && alone && apart.naxes > 1,
            "%s -> %s per channel along %s (%s): %d axes, the channel dim's "
            "mixed %d, alone %d; per tensor %d axes",
            cases[c].layout, cases[c].layout, dims, cpu ? "CPU" : "GPU",
            apart.naxes, mixed, alone, whole.naxes);
      relayout_layout_free(l);
    }
}

/* A per-channel cast whose box has Q alone move the channel (a 1 x 1 conv
 * weight's N into FRACTAL_Z) takes four times the P steps the same cast
 * per tensor takes, up to P's extent, so that a Q step's quantization
 * serves more rows; along C (K and P moving it) the box is the per-tensor
 * one. */
static void channel_rows_box(void) {
  static const struct {
    char dim;
    int64_t count;
    int more; /* P four times as long */
  } cases[] = {{'N', 256, 1}, {'C', 512, 0}};
  static float scales[512];
  for (int i = 0; i < 512; i++) scales[i] = 0.5f + (float)(i % 3);
  for (int c = 0; c < 2; c++) {
    relayout_layout *ls, *ld;
    relayout_desc s, d;
    CHECK_OK(relayout_layout_parse(&ls, "NCHW", &e_));
    CHECK_OK(relayout_layout_parse(&ld, "FRACTAL_Z", &e_));
    CHECK_OK(relayout_bind_extents(&s, &d, ls, ld, RELAYOUT_F32, 4,
                                   (const int64_t[]){256, 512, 1, 1}, &e_));
    relayout_quant one = {1, 0};
    CHECK_OK(relayout_desc_retype(&d, ld, RELAYOUT_I8, &one, &e_));
    rl_layout_plan tensor, channel;
    rl_plan_layouts(&tensor, rl_cd(&d), rl_cd(&s), 1, 0);
    relayout_quant_channels qc = {cases[c].dim, cases[c].count, scales, NULL};
    CHECK_OK(relayout_desc_quantize_channels(&d, &qc, &e_));
    rl_plan_layouts(&channel, rl_cd(&d), rl_cd(&s), 1, 0);
    int64_t want = tensor.box[0].block, extent = 0;
    if (tensor.box[0].axis >= 0)
      extent = tensor.axes[tensor.box[0].axis].extent;
    if (cases[c].more) want = want * 4 < extent ? want * 4 : extent;
    CHECK(tensor.family == RL_FAMILY_LINES && tensor.box[0].axis >= 0 &&
              channel.box[0].axis == tensor.box[0].axis &&
              channel.box[0].block == want && want > 1,
          "NCHW -> FRACTAL_Z 256x512x1x1 f32 -> i8 per channel along %c: P's "
          "block %lld, want %lld (per tensor %lld)",
          cases[c].dim, (long long)channel.box[0].block, (long long)want,
          (long long)tensor.box[0].block);
    relayout_layout_free(ls);
    relayout_layout_free(ld);
  }
}

/* A cast's CPU box streams its stores where its destination is past the
 * threshold and every row is whole vectors of 16 (K's extent a multiple of
 * 16, no skip), and the source says so; never below the threshold. */
static void cast_streams(void) {
  static const struct {
    const char *src, *dst;
    relayout_dtype s, d;
    int64_t ext[4];
    int whole; /* every row whole vectors of 16 */
  } cases[] = {
      {"NCHW", "NC1HWC0", RELAYOUT_F32, RELAYOUT_F16, {2, 40, 7, 7}, 1},
      {"NHWC", "NC1HWC0", RELAYOUT_U8, RELAYOUT_F16, {2, 5, 9, 3}, 1},
      {"NCHW", "NHWC", RELAYOUT_F32, RELAYOUT_F16, {2, 17, 5, 5}, 0},
  };
  for (int c = 0; c < 3; c++)
    for (int64_t from = 0; from < 2; from++) {
      relayout_layout *ls, *ld;
      relayout_desc s, d;
      CHECK_OK(relayout_layout_parse(&ls, cases[c].src, &e_));
      CHECK_OK(relayout_layout_parse(&ld, cases[c].dst, &e_));
      CHECK_OK(relayout_bind_extents(&s, &d, ls, ld, cases[c].s, 4,
                                     cases[c].ext, &e_));
      CHECK_OK(relayout_desc_retype(&d, ld, cases[c].d, NULL, &e_));
      rl_layout_plan p;
      rl_plan_layouts(&p, rl_cd(&d), rl_cd(&s), 1, from);
      char *source = rl_codegen(&p, rl_cd(&d), rl_cd(&s));
      int want = cases[c].whole && from > 0;
      CHECK(p.family == RL_FAMILY_LINES && p.cast_stream == want && source &&
                (strstr(source, "#define RL_CAST_STREAM 1") != NULL) == want,
            "%s -> %s cast, streaming from %lld bytes: streams %d",
            cases[c].src, cases[c].dst, (long long)from, p.cast_stream);
      free(source);
      relayout_layout_free(ls);
      relayout_layout_free(ld);
    }
}

/* An f32 -> f16 cast between two named formats at 4-d extents (its
 * descriptors in s and d), planned for a CPU device or a GPU, below any
 * streaming threshold. */
static void plan_f16_cast(rl_layout_plan *p, relayout_desc *s, relayout_desc *d,
                          const char *src, const char *dst, const int64_t *ext,
                          int cpu) {
  relayout_layout *ls, *ld;
  CHECK_OK(relayout_layout_parse(&ls, src, &e_));
  CHECK_OK(relayout_layout_parse(&ld, dst, &e_));
  CHECK_OK(relayout_bind_extents(s, d, ls, ld, RELAYOUT_F32, 4, ext, &e_));
  CHECK_OK(relayout_desc_retype(d, ld, RELAYOUT_F16, NULL, &e_));
  rl_plan_layouts(p, rl_cd(d), rl_cd(s), cpu, 0);
  relayout_layout_free(ls);
  relayout_layout_free(ld);
}

/* A cast's CPU box that transposes K's few rows (2 to 15) into P's rows
 * one after another in the destination mixes K vectors into K (planes K's
 * extent, RL_CAST_MIX generated): conv weights out of FRACTAL_Z (N padded
 * too) and NHWC -> NCHW with few pixels; not where K is 16 or more, nor
 * where P's rows lie apart (NCHW -> CHWN4: K the 4 images of a pixel).
 * Where P's few elements of a pixel lie one after another in the source
 * and K's few rows are strided there (2N -> NCHW4; CHWN4 -> 2N, the
 * pixels apart), it weaves both ways
 * (planes P's extent, weave K's, RL_CAST_WEAVE; 4N <-> nChw8c, P x K of
 * 32, too); not where P x K passes 32 (nChw16c -> 4N), a block is padded
 * (NCHW4's C of 6) or the pixels are under 16. The other way, P's few
 * elements of each of K's rows one after another in the source, K's rows
 * too (NCHW -> FRACTAL_Z or NHWC with 2 to 15 pixels), it splits them
 * (planes P's extent, split; RL_CAST_MIX taking pixels apart); not with 16
 * pixels or more. */
static void cast_planes(void) {
  static const struct {
    const char *src, *dst;
    int64_t ext[4];
    int planes, weave, split;
  } cases[] = {
      {"FRACTAL_Z", "NCHW", {64, 64, 3, 3}, 9, 0, 0},
      {"FRACTAL_Z", "NCHW", {17, 32, 3, 3}, 9, 0, 0},
      {"FRACTAL_Z", "NCHW", {32, 16, 1, 2}, 2, 0, 0},
      {"NHWC", "NCHW", {2, 3, 5, 40}, 15, 0, 0},
      {"FRACTAL_Z", "NCHW", {32, 32, 4, 4}, 0, 0, 0},
      {"NHWC", "NCHW", {2, 3, 7, 40}, 0, 0, 0},
      {"NCHW", "CHWN4", {5, 33, 33, 1}, 0, 0, 0},
      {"2N", "NCHW4", {4, 8, 5, 7}, 2, 4, 0},
      {"NCHW4", "4N", {8, 8, 5, 7}, 4, 4, 0},
      {"4N", "NCHW4", {8, 8, 5, 7}, 4, 4, 0},
      {"CHWN4", "2N", {8, 8, 5, 7}, 4, 2, 0},
      {"4N", "nChw8c", {8, 16, 5, 7}, 4, 8, 0},
      {"nChw8c", "4N", {8, 16, 5, 7}, 8, 4, 0},
      {"nChw16c", "4N", {8, 32, 5, 7}, 0, 0, 0},
      {"2N", "NCHW4", {4, 6, 5, 7}, 0, 0, 0},
      {"2N", "NCHW4", {4, 8, 3, 5}, 0, 0, 0},
      {"NCHW", "FRACTAL_Z", {64, 64, 3, 3}, 9, 0, 1},
      {"NCHW", "FRACTAL_Z", {17, 48, 1, 2}, 2, 0, 1},
      {"NCHW", "NHWC", {2, 40, 3, 5}, 15, 0, 1},
      {"NCHW", "FRACTAL_Z", {64, 64, 4, 4}, 0, 0, 0},
  };
  for (int c = 0; c < 20; c++) {
    relayout_desc s, d;
    rl_layout_plan p;
    plan_f16_cast(&p, &s, &d, cases[c].src, cases[c].dst, cases[c].ext, 1);
    char *source = rl_codegen(&p, rl_cd(&d), rl_cd(&s));
    int want = cases[c].planes, weave = cases[c].weave;
    CHECK(p.family == RL_FAMILY_LINES && p.planes == want && p.weave == weave &&
              p.split == cases[c].split && source &&
              define_value(source, "RL_CAST_PLANES") ==
                  (want && !weave ? want : -1) &&
              define_value(source, "RL_CAST_WEAVE") == (weave ? want : -1) &&
              (strstr(source, "#define RL_CAST_MIX(x, r)") != NULL) == !!want,
          "%s -> %s %lldx%lldx%lldx%lld cast: planes %d, weave %d, split %d, "
          "want %d, %d, %d",
          cases[c].src, cases[c].dst, (long long)cases[c].ext[0],
          (long long)cases[c].ext[1], (long long)cases[c].ext[2],
          (long long)cases[c].ext[3], p.planes, p.weave, p.split, want, weave,
          cases[c].split);
    free(source);
  }
}

/* A cast along runs (the rows contiguous on both sides for 128 bytes or
 * more) takes a CPU box on a CPU device, boxes of 4096 elements where a run
 * is longer, and the gather family on a GPU. */
static void cast_runs(void) {
  static const struct {
    const char *src, *dst;
    int64_t ext[4], block;
  } cases[] = {{"NCHW", "NCHW", {5, 7, 13, 17}, 4096},
               {"NHWC", "NCHW64", {2, 3, 5, 128}, 64}};
  for (int c = 0; c < 2; c++)
    for (int cpu = 0; cpu < 2; cpu++) {
      relayout_desc s, d;
      rl_layout_plan p;
      plan_f16_cast(&p, &s, &d, cases[c].src, cases[c].dst, cases[c].ext, cpu);
      CHECK(cpu ? p.family == RL_FAMILY_LINES &&
                      p.box[2].block == cases[c].block
                : p.family == RL_FAMILY_GATHER,
            "%s -> %s f32 -> f16 on a %s: family %d, K's block %lld",
            cases[c].src, cases[c].dst, cpu ? "CPU" : "GPU", (int)p.family,
            (long long)p.box[2].block);
    }
}

/* A cast's box of short rows that Q continues in the destination, P's rows
 * one after another in the source (HWCN -> 2N: N's pairs), holds a whole
 * square of them, 16 / K steps of P, with Q giving back what P takes; the
 * box as rl_plan_box made it where P is shorter (8 images, 4 pairs) and
 * where P already holds more than a square (8 pixels: P's 16 pairs). */
static void cast_square_rows(void) {
  static const struct {
    const char *src, *dst;
    int64_t ext[4], p, q;
  } cases[] = {{"HWCN", "2N", {28, 28, 256, 32}, 8, 32},
               {"HWCN", "2N", {28, 28, 256, 8}, 4, 64},
               {"HWCN", "2N", {2, 4, 16, 32}, 16, 8}};
  for (int c = 0; c < 3; c++) {
    relayout_desc s, d;
    rl_layout_plan p;
    plan_f16_cast(&p, &s, &d, cases[c].src, cases[c].dst, cases[c].ext, 1);
    CHECK(p.family == RL_FAMILY_LINES && p.box[0].block == cases[c].p &&
              p.box[1].block == cases[c].q,
          "%s -> %s f32 -> f16: P x Q %lld x %lld, want %lld x %lld",
          cases[c].src, cases[c].dst, (long long)p.box[0].block,
          (long long)p.box[1].block, (long long)cases[c].p,
          (long long)cases[c].q);
  }
}

/* A cast's generic tiles on a CPU device, where P is shorter than a side
 * and strided in the source (2N's and 4N's images, NCHW4's C4), take 16
 * rows along an axis of 16 or more (the 16 pixels here), not the
 * source's closest axis (2N's 2 images), whose tiles of 4 x 2 go element by
 * element: each tile P's extent by 16. */
static void cast_tile_rows(void) {
  static const struct {
    const char *src, *dst;
    int64_t ext[4], along_p;
  } cases[] = {{"2N", "NCHW4", {4, 8, 4, 4}, 4},
               {"NCHW4", "2N", {4, 8, 4, 4}, 2},
               {"4N", "NCHW4", {8, 8, 2, 8}, 4}};
  for (int c = 0; c < 3; c++) {
    relayout_desc s, d;
    rl_layout_plan p;
    plan_f16_cast(&p, &s, &d, cases[c].src, cases[c].dst, cases[c].ext, 1);
    int64_t units, count = cases[c].ext[0] * cases[c].ext[1] * cases[c].ext[2] *
                           cases[c].ext[3];
    const char *k = rl_generic_kernel(rl_cd(&d), rl_cd(&s), 1, &units);
    CHECK(!strcmp(k, "rl_generic_tile") &&
              units * cases[c].along_p * 16 == count,
          "%s -> %s f32 -> f16 generic: %s in %lld tiles, want %lld",
          cases[c].src, cases[c].dst, k, (long long)units,
          (long long)(count / (cases[c].along_p * 16)));
  }
}

/* A 1- or 2-byte move whose P (C0) is strided in the source and whose K
 * (the pixels) is contiguous there takes deep generic tiles on a CPU
 * device: squares along K too, 4 in all, so each tile covers P's tile by
 * 64 pixels (NC1HWC0's u8 C0 of 32: 2 squares each way); 4-byte moves and
 * casts keep one square along K. Counted as tiles: N by C's tiles by the
 * pixels' (a shallow plan counts 16 pixels a tile). */
static void deep_tiles(void) {
  static const struct {
    const char *dst;
    relayout_dtype t, cast;
    int64_t along_p, along_k;
  } cases[] = {{"nChw16c", RELAYOUT_U8, RELAYOUT_U8, 16, 64},
               {"nChw16c", RELAYOUT_F16, RELAYOUT_F16, 16, 64},
               {"NC1HWC0", RELAYOUT_I8, RELAYOUT_I8, 32, 32},
               {"nChw16c", RELAYOUT_F32, RELAYOUT_F32, 16, 16},
               {"nChw16c", RELAYOUT_F32, RELAYOUT_F16, 16, 16}};
  const int64_t ext[4] = {3, 64, 5, 13}, pixels = 5 * 13;
  for (int c = 0; c < 5; c++) {
    relayout_layout *ls, *ld;
    relayout_desc s, d;
    CHECK_OK(relayout_layout_parse(&ls, "NCHW", &e_));
    CHECK_OK(relayout_layout_parse(&ld, cases[c].dst, &e_));
    CHECK_OK(relayout_bind_extents(&s, &d, ls, ld, cases[c].t, 4, ext, &e_));
    if (cases[c].cast != cases[c].t)
      CHECK_OK(relayout_desc_retype(&d, ld, cases[c].cast, NULL, &e_));
    int64_t units, want = ext[0] * (ext[1] / cases[c].along_p) *
                          ((pixels + cases[c].along_k - 1) / cases[c].along_k);
    const char *k = rl_generic_kernel(rl_cd(&d), rl_cd(&s), 1, &units);
    CHECK(!strcmp(k, "rl_generic_tile") && units == want,
          "NCHW -> %s %s -> %s generic: %s in %lld tiles, want %lld",
          cases[c].dst, relayout_dtype_name(cases[c].t),
          relayout_dtype_name(cases[c].cast), k, (long long)units,
          (long long)want);
    relayout_layout_free(ls);
    relayout_layout_free(ld);
  }
}

int main(void) {
  plan_cases(plan_case);
  per_channel_tiles();
  channel_apart();
  channel_rows_box();
  cast_streams();
  cast_planes();
  cast_runs();
  cast_square_rows();
  cast_tile_rows();
  deep_tiles();
  printf("%d plans\n", planned);
  CHECK(planned > 300, "the cases planned (%d)", planned);
  return check_summary();
}
