/* suite.c - relayout bench --suite: real-world conversions next to peers
 *
 * Each row is one conversion over one or more shapes (ResNet-50's conv
 * weights: every distinct shape, weighted by how often the network has it).
 * A row reports relayout's GB/s (bytes read + written), the same device's
 * copy kernel measured in the same run, and each peer's GB/s measured in the
 * same run, with relayout's speed as a multiple of it. relayout's output is
 * compared byte for byte with the scalar reference's (the oracle), and so is
 * every peer's: a result that differs is flagged, not ranked.
 * Peers: oneDNN's reorder on CPU devices, numpy on CPU devices for the
 * Ascend rows, PyTorch on GPU devices (peer.h). The preprocessing rows run
 * a preprocessing plan (an AIPP configuration) over a batch of frames, next
 * to numpy (AIPP's steps) and OpenCV (as its users preprocess) on CPU
 * devices.
 */
#include "suite.h"

#include "cli.h"
#include "measure.h"
#include "peer.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ONEDNN, NUMPY, TORCH, OPENCV, NPEERS };
static const char *const peer_names[NPEERS] = {"oneDNN", "numpy", "PyTorch",
                                               "OpenCV"};

typedef struct row {
  const char *name, *from, *to, *dtype;
  int ascend;           /* numpy runs it */
  const char *shapes;   /* "COUNT:AxBxC ...", extents in `from`'s order */
  const char *to_dtype; /* a cast (NULL: none), with `scale` into integers */
  float scale;
  char per_channel; /* i8: symmetric scales per channel along this dim,
                     * computed from the data (relayout_symmetric_scales) */
  const char *aipp; /* a preprocessing row: its configuration, `from` its
                     * input format, `to` and `to_dtype` its output, shapes
                     * "1:FRAMES" */
} row;

#define ACT      "1:64x256x56x56"
#define ACT_NHWC "1:64x56x56x256"
#define RESNET50                                                               \
  "1:64x3x7x7 1:64x64x1x1 2:64x256x1x1 3:64x64x3x3 4:256x64x1x1 "              \
  "1:128x256x1x1 3:128x512x1x1 4:128x128x3x3 4:512x128x1x1 1:512x256x1x1 "     \
  "1:256x512x1x1 5:256x1024x1x1 6:256x256x3x3 6:1024x256x1x1 "                 \
  "1:1024x512x1x1 1:512x1024x1x1 2:512x2048x1x1 3:512x512x3x3 "                \
  "3:2048x512x1x1 1:2048x1024x1x1"

/* ImageNet's mean and 1 / std, on 0..255 values */
#define AIPP_NORM                                                              \
  " mean_chn_0: 123.675 mean_chn_1: 116.28 mean_chn_2: 103.53"                 \
  " var_reci_chn_0: 0.0171247538 var_reci_chn_1: 0.0175070028"                 \
  " var_reci_chn_2: 0.0174291939 }"
#define AIPP_RGB                                                               \
  "aipp_op { input_format: RGB888_U8 src_image_size_w: 224"                    \
  " src_image_size_h: 224" AIPP_NORM
/* CANN's JPEG YUV -> RGB table */
#define AIPP_NV12                                                              \
  "aipp_op { input_format: YUV420SP_U8 src_image_size_w: 1920"                 \
  " src_image_size_h: 1080 csc_switch: true matrix_r0c0: 256"                  \
  " matrix_r0c1: 0 matrix_r0c2: 359 matrix_r1c0: 256 matrix_r1c1: -88"         \
  " matrix_r1c2: -183 matrix_r2c0: 256 matrix_r2c1: 454 matrix_r2c2: 0"        \
  " input_bias_0: 0 input_bias_1: 128 input_bias_2: 128" AIPP_NORM

/* A row that only moves bits */
#define ROW(name, from, to, dtype, ascend, shapes)                             \
  { name, from, to, dtype, ascend, shapes, NULL, 0, 0, NULL }

static const row rows_all[] = {
    ROW("act NCHW->NHWC f32", "NCHW", "NHWC", "f32", 0, ACT),
    ROW("act NCHW->NHWC f16", "NCHW", "NHWC", "f16", 0, ACT),
    ROW("act NCHW->NHWC i8", "NCHW", "NHWC", "i8", 0, ACT),
    ROW("act NHWC->NCHW f32", "NHWC", "NCHW", "f32", 0, ACT_NHWC),
    ROW("act NHWC->NCHW f16", "NHWC", "NCHW", "f16", 0, ACT_NHWC),
    ROW("act NHWC->NCHW i8", "NHWC", "NCHW", "i8", 0, ACT_NHWC),
    ROW("act NCHW->NC1HWC0 f32", "NCHW", "NC1HWC0", "f32", 1, ACT),
    ROW("act NCHW->NC1HWC0 f16", "NCHW", "NC1HWC0", "f16", 1, ACT),
    ROW("act NCHW->NC1HWC0 i8", "NCHW", "NC1HWC0", "i8", 1, ACT),
    ROW("act NCHW->nChw16c f32", "NCHW", "nChw16c", "f32", 0, ACT),
    ROW("act NCHW->nChw16c f16", "NCHW", "nChw16c", "f16", 0, ACT),
    ROW("act NCHW->nChw16c i8", "NCHW", "nChw16c", "i8", 0, ACT),
    ROW("act nChw8c->nChw16c f32", "nChw8c", "nChw16c", "f32", 0, ACT),
    ROW("act NCHW->CHWN4 i8", "NCHW", "CHWN4", "i8", 0, ACT),
    ROW("act NCHW->4N i8", "NCHW", "4N", "i8", 0, ACT),
    ROW("resnet50 conv OIHW->FRACTAL_Z f32", "NCHW", "FRACTAL_Z", "f32", 1,
        RESNET50),
    ROW("resnet50 conv OIHW->FRACTAL_Z f16", "NCHW", "FRACTAL_Z", "f16", 1,
        RESNET50),
    ROW("linear 4096x11008 ND->FRACTAL_NZ f16", "ND", "FRACTAL_NZ", "f16", 1,
        "1:4096x11008"),
    ROW("linear 4096x11008 ND->FRACTAL_ZN f16", "ND", "FRACTAL_ZN", "f16", 1,
        "1:4096x11008"),
    ROW("odd 8197x8195 ND->FRACTAL_NZ f16", "ND", "FRACTAL_NZ", "f16", 1,
        "1:8197x8195"),
    {"cast NCHW->NC1HWC0 f32->f16", "NCHW", "NC1HWC0", "f32", 1, ACT, "f16", 0,
     0, NULL},
    {"cast NCHW->nChw16c f32->f16", "NCHW", "nChw16c", "f32", 1, ACT, "f16", 0,
     0, NULL},
    {"cast linear 4096x11008 ND->FRACTAL_NZ f32->bf16", "ND", "FRACTAL_NZ",
     "f32", 1, "1:4096x11008", "bf16", 0, 0, NULL},
    {"cast NCHW->NC1HWC0 f32->i8 scale 0.05", "NCHW", "NC1HWC0", "f32", 1, ACT,
     "i8", 0.05f, 0, NULL},
    {"cast resnet50 conv f32->i8 per channel OIHW->FRACTAL_Z", "NCHW",
     "FRACTAL_Z", "f32", 1, RESNET50, "i8", 0, 'N', NULL},
    {"cast image NHWC->NC1HWC0 u8->f16", "NHWC", "NC1HWC0", "u8", 1,
     "1:64x224x224x3", "f16", 0, 0, NULL},
    {"preprocess RGB888 224x224 x64 ->NC1HWC0 f16, mean and var_reci",
     "RGB888_U8", "NC1HWC0", "u8", 1, "1:64", "f16", 0, 0, AIPP_RGB},
    {"preprocess NV12 1920x1080 x8 ->NCHW f16, CSC, mean and var_reci",
     "YUV420SP_U8", "NCHW", "u8", 1, "1:8", "f16", 0, 0, AIPP_NV12},
};

/* A row's figures: seconds to convert all of its bytes, and whether every
 * output equalled the reference's, relayout's and each peer's. */
typedef struct figures {
  double conv, copy_kernel, copy_enqueue;
  double each; /* from host arrays: relayout_plan_run on each tensor */
  int same_as_reference;
  double peer[NPEERS]; /* < 0: the peer did not run */
  int peer_same[NPEERS], peer_runs[NPEERS];
  char peer_note[NPEERS][256];
} figures;

enum { MAX_SHAPES = 24 };

/* How a row's tensors ran: one by one; as one batch on device buffers;
 * from host arrays, in one relayout_plans_run. */
typedef enum way { ONE_BY_ONE, BATCH, HOST } way;

/* One row: its figures shape by shape (each shape's times weighted by its
 * count) and, for a row of many tensors (ResNet-50's weights), as one
 * batch, on device buffers and from host arrays; with --json, each shape's
 * own figures too (a row of many shapes can lose on a few of them). */
typedef struct totals {
  double bytes;
  int nshapes, tensors;
  figures one_by_one, batch, host;
  relayout_desc s[MAX_SHAPES], d[MAX_SHAPES];
  bench_shape kept[MAX_SHAPES];   /* plans, inputs, reference results */
  relayout_aipp aipp[MAX_SHAPES]; /* a preprocessing row's configuration */
  peer_quant q[MAX_SHAPES];       /* a quantizing row's scales (its own) */
  json_t *shapes;                 /* NULL without --json */
} totals;

static void figures_init(figures *f) {
  memset(f, 0, sizeof *f);
  f->same_as_reference = 1;
  for (int k = 0; k < NPEERS; k++) f->peer_same[k] = 1;
}

/* Adds one peer's run, weighted by count. */
static void add_peer(figures *f, int k, const peer_result *p, int64_t count) {
  snprintf(f->peer_note[k], sizeof f->peer_note[k], "%s", p->note);
  if (f->peer[k] < 0) return; /* already out on an earlier shape */
  if (p->seconds < 0) {
    f->peer[k] = -1;
    return;
  }
  f->peer[k] += (double)count * p->seconds;
  f->peer_same[k] &= p->same;
  f->peer_runs[k] = p->runs;
}

/* Whether peer k runs on this device and row. */
static int peer_on(int k, const row *w, int gpu) {
  if (w->aipp) return !gpu && (k == NUMPY || k == OPENCV);
  return k == ONEDNN  ? !gpu
         : k == NUMPY ? !gpu && w->ascend
         : k == TORCH ? gpu
                      : 0;
}

/* A per-channel row's destination quantized with symmetric scales from the
 * data, along its dim; q holds them (malloc'd). 0 with err on failure. */
static int quantize_channels(peer_quant *q, const relayout_desc *s,
                             relayout_desc *d, const unsigned char *in,
                             size_t size, const row *w, relayout_error *err) {
  char names[RELAYOUT_MAX_DIMS];
  int64_t ext[RELAYOUT_MAX_DIMS];
  int n = relayout_desc_dims(s, names, ext), dim = 0;
  while (dim < n && names[dim] != w->per_channel) dim++;
  float *scales = dim < n ? malloc(sizeof *scales * (size_t)ext[dim]) : NULL;
  if (!scales) {
    snprintf(err->message, sizeof err->message, "no scales along %c",
             w->per_channel);
    return 0;
  }
  *q = (peer_quant){scales, ext[dim], dim};
  relayout_quant_channels qc = {w->per_channel, ext[dim], scales, NULL};
  return !relayout_symmetric_scales(scales, ext[dim], s, in, size,
                                    w->per_channel, RELAYOUT_I8, err) &&
         !relayout_desc_quantize_channels(d, &qc, err);
}

/* Adds relayout's and the copy's times, for `bytes` read + written. */
static void add_times(figures *f, const bench_result *r, double bytes,
                      int64_t count) {
  double scale = bytes / (2.0 * (double)r->copy_bytes); /* copy: min bytes */
  f->conv += (double)count * r->t_conv;
  f->copy_kernel += (double)count * r->t_kernel * scale;
  f->copy_enqueue += (double)count * r->t_enq * scale;
}

/* A conversion row's shape: s and d bound (q: a quantizing row's scales),
 * *in filled, the plan made and its own kernel waited for, *ref the
 * reference's result. 0, or -1 with a message printed. */
static int prepare_conversion(relayout_plan **plan, peer_quant *q,
                              relayout_desc *s, relayout_desc *d,
                              unsigned char **in, unsigned char **ref,
                              int64_t *sb, int64_t *db, const row *w,
                              const char *shape, relayout_engine *e) {
  relayout_layout *a = NULL, *b = NULL;
  relayout_dtype dtype;
  relayout_error err;
  int64_t ext[RELAYOUT_MAX_DIMS];
  int n, rc = -1;
  if (cli_parse_shape(ext, &n, shape) ||
      relayout_dtype_from_name(&dtype, w->dtype, &err) ||
      cli_layouts(&a, &b, w->from, w->to, NULL, "bench") ||
      relayout_bind_extents(s, d, a, b, dtype, n, ext, &err) ||
      (w->to_dtype &&
       (relayout_dtype_from_name(&dtype, w->to_dtype, &err) ||
        relayout_desc_retype(
            d, b, dtype, w->scale > 0 ? &(relayout_quant){w->scale, 0} : NULL,
            &err)))) {
    fprintf(stderr, "relayout bench: row '%s' %s: cannot bind it\n", w->name,
            shape);
    goto done;
  }
  relayout_desc_size_bytes(sb, s, NULL);
  relayout_desc_size_bytes(db, d, NULL);
  if (!(*in = malloc((size_t)*sb)) || !(*ref = malloc((size_t)*db))) {
    fprintf(stderr, "relayout bench: out of memory\n");
    goto done;
  }
  bench_fill(*in, *sb);
  if (w->scale > 0) *q = (peer_quant){&w->scale, 1, 0};
  if (w->per_channel &&
      !quantize_channels(q, s, d, *in, (size_t)*sb, w, &err)) {
    fprintf(stderr, "relayout bench: row '%s' %s: %s\n", w->name, shape,
            err.message);
    goto done;
  }
  if (relayout_plan_create(plan, e, d, s, &err) ||
      relayout_plan_wait(*plan, &err)) { /* timed: its own kernel */
    fprintf(stderr, "relayout bench: row '%s' %s: cannot plan it\n", w->name,
            shape);
    goto done;
  }
  memset(*ref, 0xA5, (size_t)*db); /* poisoned: unwritten bytes show */
  if (relayout_convert_ref(d, *ref, (size_t)*db, s, *in, (size_t)*sb, &err)) {
    fprintf(stderr, "relayout bench: row '%s' %s: %s\n", w->name, shape,
            err.message);
    goto done;
  }
  rc = 0;
done:
  relayout_layout_free(a);
  relayout_layout_free(b);
  return rc;
}

/* A preprocessing row's batch: its configuration into d (shape "FRAMES"),
 * *in the frames (bytes of a fixed pattern), the plan made on a device,
 * *ref the reference's result. 0, or -1 with a message printed. */
static int prepare_preprocess(relayout_preprocess_plan **pre,
                              relayout_aipp *aipp, relayout_desc *d,
                              unsigned char **in, unsigned char **ref,
                              int64_t *sb, int64_t *db, const row *w,
                              const char *shape, relayout_engine *e) {
  relayout_layout *l = NULL;
  relayout_dtype t;
  relayout_error err = {""};
  int64_t dims[4], frame;
  int n, rc = -1;
  if (!relayout_engine_context(e)) {
    fprintf(stderr, "relayout bench: row '%s' needs a device\n", w->name);
    return -1;
  }
  if (cli_parse_shape(dims, &n, shape) || n != 1 ||
      relayout_aipp_parse(aipp, w->aipp, strlen(w->aipp), &err) ||
      relayout_aipp_check(aipp, &dims[1], &dims[2], &dims[3], &frame, &err) ||
      relayout_dtype_from_name(&t, w->to_dtype, &err) ||
      relayout_layout_parse(&l, w->to, &err) ||
      relayout_desc_init(d, l, t, 4, "NCHW", dims, &err) ||
      relayout_preprocess_plan_create(pre, e, aipp, d, &err)) {
    fprintf(stderr, "relayout bench: row '%s' %s: %s\n", w->name, shape,
            err.message);
    goto done;
  }
  *sb = dims[0] * frame;
  relayout_desc_size_bytes(db, d, NULL);
  if (!(*in = malloc((size_t)*sb)) || !(*ref = malloc((size_t)*db))) {
    fprintf(stderr, "relayout bench: out of memory\n");
    goto done;
  }
  for (int64_t i = 0; i < *sb; i++)
    (*in)[i] = (unsigned char)((uint64_t)i * 2654435761u >> 13);
  memset(*ref, 0xA5, (size_t)*db); /* poisoned: unwritten bytes show */
  if (relayout_preprocess_ref(aipp, d, *ref, (size_t)*db, *in, (size_t)*sb,
                              &err) ||
      *relayout_preprocess_note(*pre)) {
    fprintf(stderr, "relayout bench: row '%s': %s%s\n", w->name, err.message,
            relayout_preprocess_note(*pre));
    goto done;
  }
  rc = 0;
done:
  relayout_layout_free(l);
  return rc;
}

/* One shape of a row: relayout, the copy, then the peers the device has.
 * The row keeps the shape's plan, input and reference result. */
static int run_shape(totals *t, const row *w, const char *shape, int64_t count,
                     relayout_engine *e, int runs, int gpu) {
  relayout_plan *plan = NULL;
  relayout_preprocess_plan *pre = NULL;
  relayout_desc *s = &t->s[t->nshapes], *d = &t->d[t->nshapes];
  int64_t sb, db;
  unsigned char *in = NULL, *ref = NULL;
  int rc = EXIT_WORK;
  bench_result r;
  json_t *peers = NULL; /* this shape's peers, with --json */
  if (t->nshapes == MAX_SHAPES) {
    fprintf(stderr, "relayout bench: row '%s' has over %d shapes\n", w->name,
            MAX_SHAPES);
    return EXIT_WORK;
  }
  peer_quant *q = &t->q[t->nshapes];
  relayout_aipp *aipp = &t->aipp[t->nshapes];
  if (w->aipp) {
    if (prepare_preprocess(&pre, aipp, d, &in, &ref, &sb, &db, w, shape, e))
      goto done;
  } else if (prepare_conversion(&plan, q, s, d, &in, &ref, &sb, &db, w, shape,
                                e)) {
    goto done;
  }
  bench_shape x = {plan, pre, in, ref, sb, db, (int)count};
  int same;
  if (bench_measure(&r, e, &x, s, d, runs, &same)) {
    fprintf(stderr, "relayout bench: row '%s' %s failed on %s\n", w->name,
            shape, relayout_engine_device(e));
    goto done;
  }
  double bytes = (double)(sb + db);
  t->one_by_one.same_as_reference &= same;
  add_times(&t->one_by_one, &r, bytes, count);
  t->bytes += (double)count * bytes;
  if (t->shapes) {
    json_t *one = json_pack("{s:s, s:I, s:f, s:f, s:f, s:b, s:{}}", "shape",
                            shape, "count", (json_int_t)count, "bytes", bytes,
                            "gbps", bytes / r.t_conv / 1e9, "copy_kernel_gbps",
                            2.0 * (double)r.copy_bytes / r.t_kernel / 1e9,
                            "same_as_reference", same, "peers");
    if (json_array_append_new(t->shapes, one)) { /* frees one */
      fprintf(stderr, "relayout bench: out of memory\n");
      goto done;
    }
    peers = json_object_get(one, "peers");
  }
  peer_result p;
  peer_tensors one = {w->aipp ? NULL : s,   d, in, ref, 1, *q,
                      w->aipp ? aipp : NULL};
  for (int k = 0; k < NPEERS; k++) {
    if (!peer_on(k, w, gpu)) continue;
    memset(&p, 0, sizeof p);
    if (k == ONEDNN)
      peer_onednn(&p, &one, 1, runs);
    else
      peer_python(&p,
                  k == NUMPY    ? "numpy"
                  : k == OPENCV ? "opencv"
                                : "torch",
                  &one, runs);
    add_peer(&t->one_by_one, k, &p, count);
    if (peers && p.seconds > 0 &&
        json_object_set_new(peers, peer_names[k],
                            json_pack("{s:f, s:f, s:b}", "gbps",
                                      bytes / p.seconds / 1e9, "speedup",
                                      p.seconds / r.t_conv, "same_as_reference",
                                      p.same))) {
      fprintf(stderr, "relayout bench: out of memory\n");
      goto done;
    }
  }
  t->kept[t->nshapes++] = x;
  t->tensors += (int)count;
  plan = NULL; /* the row's now */
  pre = NULL;
  in = ref = NULL;
  rc = 0;
done:
  if (rc && q->count > 1) free((void *)q->scales);
  if (rc) *q = (peer_quant){0};
  free(in);
  free(ref);
  relayout_plan_free(plan);
  relayout_preprocess_plan_free(pre);
  return rc;
}

/* A row of many tensors, timed as they are converted (relayout repack, or
 * relayout_plan_enqueue with one wait): each on buffers of its own, all
 * launched and waited on once, oneDNN's the same way. One by one, a small
 * tensor's time is mostly the device's launch and wait. numpy and PyTorch
 * run one shape at a time only. */
static int run_batch(totals *t, const row *w, relayout_engine *e, int runs,
                     int gpu) {
  bench_result r;
  int same;
  figures_init(&t->batch);
  if (bench_measure_batch(&r, e, t->kept, t->nshapes, runs, &same)) {
    fprintf(stderr, "relayout bench: row '%s' failed as a batch on %s\n",
            w->name, relayout_engine_device(e));
    return EXIT_WORK;
  }
  t->batch.same_as_reference = same;
  add_times(&t->batch, &r, t->bytes, 1);
  peer_tensors all[MAX_SHAPES];
  for (int i = 0; i < t->nshapes; i++)
    all[i] = (peer_tensors){
        &t->s[i],         &t->d[i], t->kept[i].in, t->kept[i].ref,
        t->kept[i].count, t->q[i],  NULL};
  for (int k = 0; k < NPEERS; k++) {
    if (!peer_on(k, w, gpu)) continue;
    peer_result p = {.seconds = -1, .note = "one shape at a time only"};
    if (k == ONEDNN) peer_onednn(&p, all, t->nshapes, runs);
    add_peer(&t->batch, k, &p, 1);
  }
  /* From host arrays, next to the same copy kernel and peers (oneDNN works
   * in host memory). */
  t->host = t->batch;
  if (bench_host_batch(t->kept, t->nshapes, runs, &t->host.conv, &t->host.each,
                       &t->host.same_as_reference)) {
    fprintf(stderr, "relayout bench: row '%s' failed from host arrays on %s\n",
            w->name, relayout_engine_device(e));
    return EXIT_WORK;
  }
  return 0;
}

/* One line of the table, or one JSON object. */
static void print_row(const row *w, const totals *t, const figures *f, way how,
                      relayout_engine *e, int json) {
  double gbps = t->bytes / f->conv / 1e9;
  double copy = t->bytes / f->copy_kernel / 1e9;
  if (json) {
    json_t *peers = json_object();
    for (int k = 0; k < NPEERS; k++) {
      if (!*f->peer_note[k]) continue;
      json_t *p = json_pack("{s:s}", "note", f->peer_note[k]);
      if (f->peer[k] > 0)
        json_object_update_new(
            p, json_pack("{s:f, s:f, s:i, s:b}", "gbps",
                         t->bytes / f->peer[k] / 1e9, "speedup",
                         f->peer[k] / f->conv, "runs", f->peer_runs[k],
                         "same_as_reference", f->peer_same[k]));
      json_object_set_new(peers, peer_names[k], p);
    }
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:i, s:b, s:f, s:f, s:f, s:f, s:f, s:b, "
        "s:o}",
        "row", w->name, "from", w->from, "to", w->to, "dtype", w->dtype,
        "device", relayout_engine_device(e), "tensors", t->tensors, "batch",
        how != ONE_BY_ONE, "bytes", t->bytes, "gbps", gbps, "copy_kernel_gbps",
        copy, "copy_enqueue_gbps", t->bytes / f->copy_enqueue / 1e9,
        "ratio_copy_kernel", gbps / copy, "same_as_reference",
        f->same_as_reference, "peers", peers);
    if (o && how == ONE_BY_ONE && json_object_set(o, "shapes", t->shapes)) {
      json_decref(o);
      o = NULL;
    }
    if (o && how == HOST &&
        json_object_update_new(o, json_pack("{s:b, s:f}", "host_arrays", 1,
                                            "each_gbps",
                                            t->bytes / f->each / 1e9))) {
      json_decref(o);
      o = NULL;
    }
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    printf("%s\n", text ? text : "{\"error\": \"out of memory\"}");
    free(text);
    json_decref(o);
    fflush(stdout);
    return;
  }
  printf("| %s", w->name);
  if (how == BATCH) printf(", %d tensors, one wait", t->tensors);
  if (how == HOST)
    printf(", %d tensors from host arrays, one call (one call each: %.2f "
           "GB/s)",
           t->tensors, t->bytes / f->each / 1e9);
  printf(" | %.0f | %.2f | %.2f | %.2f | %s |", t->bytes / 1e6, gbps, copy,
         gbps / copy, f->same_as_reference ? "yes" : "NO");
  for (int k = 0; k < NPEERS; k++) {
    if (!*f->peer_note[k])
      printf(" |");
    else if (f->peer[k] <= 0)
      printf(" - (%s) |", f->peer_note[k]);
    else
      printf(" %.2f GB/s, %.2fx%s%s%s |", t->bytes / f->peer[k] / 1e9,
             f->peer[k] / f->conv,
             f->peer_same[k] ? "" : ", OUTPUT DIFFERS FROM THE REFERENCE (",
             f->peer_same[k] ? "" : f->peer_note[k],
             f->peer_same[k] ? "" : ")");
  }
  printf("\n");
  fflush(stdout);
}

/* Whether name holds one of the comma-separated texts in rows. */
static int wanted(const char *rows, const char *name) {
  for (const char *at = rows;; at++) {
    const char *end = strchr(at, ',');
    size_t n = end ? (size_t)(end - at) : strlen(at);
    for (const char *c = name; n && strlen(c) >= n; c++)
      if (!strncmp(c, at, n)) return 1;
    if (!end) return 0;
    at = end;
  }
}

/* Runs one row: its shapes one by one, then, for many tensors on a
 * device, as one batch; prints a line for each. */
static int run_row(const row *w, relayout_engine *e, int runs, int gpu,
                   int json) {
  totals t = {.shapes = json ? json_array() : NULL};
  int rc = 0;
  if (json && !t.shapes) return cli_error(EXIT_WORK, "bench", "out of memory");
  figures_init(&t.one_by_one);
  char shapes[512];
  snprintf(shapes, sizeof shapes, "%s", w->shapes);
  for (char *save, *tok = strtok_r(shapes, " ", &save); tok && !rc;
       tok = strtok_r(NULL, " ", &save)) {
    char *colon = strchr(tok, ':');
    *colon = 0;
    rc = run_shape(&t, w, colon + 1, atoll(tok), e, runs, gpu);
  }
  if (!rc) print_row(w, &t, &t.one_by_one, ONE_BY_ONE, e, json);
  if (!rc && t.tensors > 1 && relayout_engine_context(e) &&
      !(rc = run_batch(&t, w, e, runs, gpu))) {
    print_row(w, &t, &t.batch, BATCH, e, json);
    print_row(w, &t, &t.host, HOST, e, json);
  }
  json_decref(t.shapes);
  for (int k = 0; k < t.nshapes; k++) {
    relayout_plan_free(t.kept[k].plan);
    relayout_preprocess_plan_free(t.kept[k].pre);
    free((void *)t.kept[k].in);
    free((void *)t.kept[k].ref);
    if (t.q[k].count > 1) free((void *)t.q[k].scales);
  }
  return rc;
}

int bench_suite(const char *device, const char *rows, int runs, int json) {
  relayout_engine *e = NULL;
  int rc = cli_engine(&e, device, "bench");
  if (rc) return rc;
  int gpu = bench_is_gpu(e), ran = 0, failed = 0;
  if (!json) {
    printf("relayout bench --suite on %s, %d runs per row; GB/s count bytes "
           "read + written; Nx: relayout is N times as fast as the peer\n\n",
           relayout_engine_device(e), runs);
    printf("| row | MB | GB/s | copy kernel GB/s | ratio to copy | = reference "
           "|");
    for (int k = 0; k < NPEERS; k++) printf(" %s |", peer_names[k]);
    printf("\n|---|---|---|---|---|---|");
    for (int k = 0; k < NPEERS; k++) printf("---|");
    printf("\n");
  }
  /* a row that fails is said (run_shape) and the rest still run */
  for (size_t i = 0; i < sizeof rows_all / sizeof rows_all[0]; i++) {
    if (rows && !wanted(rows, rows_all[i].name)) continue;
    int row_rc = run_row(&rows_all[i], e, runs, gpu, json);
    ran += !row_rc;
    failed += row_rc != 0;
    if (!rc) rc = row_rc;
  }
  if (failed)
    cli_error(rc, "bench", "%d row%s of the suite failed (said above)", failed,
              failed == 1 ? "" : "s");
  else if (!ran)
    rc = cli_error(EXIT_USAGE, "bench", "no suite row's name holds '%s'", rows);
  relayout_engine_free(e);
  return rc;
}
