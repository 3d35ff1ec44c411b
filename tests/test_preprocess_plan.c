/* test_preprocess_plan.c - preprocessing plans on an OpenCL device
 *
 * Configurations of every input format (NV12 with the colour conversion,
 * crop and border; RGB; XRGB with ax_swap; gray) into layouts of every
 * family and output types f16, bf16, f32, f64 and i8 with a zero point:
 * the plan's output, written over a poisoned buffer, equals the
 * reference's byte for byte, and its kernel ran (no note), both the
 * device's kind's kernel and the other kind's (RELAYOUT_FAMILIES_*: a
 * pixel per step, or rows of pixels), the latter with the arrays copied
 * through chunks of 257 bytes as on a discrete GPU. Then the same
 * on the caller's OpenCL buffers at offsets, nothing outside the output
 * touched; the outputs the device has no kernel for (per-channel, 4-bit),
 * which run on the reference and say so; and the refusals. The device is
 * RELAYOUT_TEST_DEVICE, else "cpu". test_preprocess.py checks the values
 * themselves against AIPP's steps written in numpy.
 */
#include "check.h"
#include "engine.h" /* the other engine's chunks */
#include "relayout_cl.h"

#include <math.h>

/* The device's own kernels, and the other kind's (a GPU's pixel by pixel
 * on a CPU device, rows of pixels on a GPU; the arrays copied through small
 * pinned chunks): both must be exact. */
static relayout_engine *engine, *other;

/* A configuration of format f, w x h frames, with its steps switched on. */
static relayout_aipp config(relayout_image_format f, int64_t w, int64_t h) {
  relayout_aipp a;
  relayout_aipp_defaults(&a);
  a.input_format = f;
  a.src_image_size_w = w;
  a.src_image_size_h = h;
  for (int k = 0; k < 3; k++) {
    a.mean_chn[k] = 100.5f + (float)k;
    a.min_chn[k] = 0.25f * (float)k;
    a.var_reci_chn[k] = 0.0171f + 0.001f * (float)k;
  }
  return a;
}

/* The output desc of `layout` and dtype t (a quantization q, or NULL) for
 * n frames through a. */
static int output(relayout_desc *d, const char *layout, relayout_dtype t,
                  const relayout_aipp *a, int64_t n, const relayout_quant *q) {
  relayout_layout *l = NULL;
  int64_t c, h, w, frame;
  CHECK_OK(relayout_aipp_check(a, &c, &h, &w, &frame, &e_));
  int64_t dims[4] = {n, c, h, w};
  CHECK_OK(relayout_layout_parse(&l, layout, &e_));
  relayout_error err;
  relayout_status s = relayout_desc_init(d, l, t, 4, "NCHW", dims, &err);
  if (!s && q) s = relayout_desc_retype(d, l, t, q, &err);
  CHECK(!s, "%s %s: %s", layout, relayout_dtype_name(t), err.message);
  relayout_layout_free(l);
  return !s;
}

/* n random frames through a into (layout, t): the plan's bytes equal the
 * reference's over a poisoned buffer; its kernel ran. */
static void one(const char *what, const relayout_aipp *a, const char *layout,
                relayout_dtype t, const relayout_quant *q) {
  relayout_desc d;
  int64_t c, h, w, frame, n = 3, bytes;
  CHECK_OK(relayout_aipp_check(a, &c, &h, &w, &frame, &e_));
  if (!output(&d, layout, t, a, n, q)) return;
  relayout_desc_size_bytes(&bytes, &d, NULL);
  unsigned char *frames = malloc((size_t)(n * frame));
  for (int64_t i = 0; i < n * frame; i++) frames[i] = (unsigned char)rng_next();
  guarded want = guarded_alloc((size_t)bytes, 0xA5),
          got = guarded_alloc((size_t)bytes, 0x5A);
  CHECK_OK(relayout_preprocess_ref(a, &d, want.data, want.size, frames,
                                   (size_t)(n * frame), &e_));
  relayout_engine *on[2] = {engine, other};
  for (int k = 0; k < 2; k++) {
    relayout_preprocess_plan *p = NULL;
    memset(got.data, 0x5A, got.size);
    CHECK_OK(relayout_preprocess_plan_create(&p, on[k], a, &d, &e_));
    CHECK_OK(relayout_preprocess_run(p, got.data, got.size, frames,
                                     (size_t)(n * frame), &e_));
    CHECK(!*relayout_preprocess_note(p), "%s into %s %s: its kernel ran (%s)",
          what, layout, relayout_dtype_name(t), relayout_preprocess_note(p));
    CHECK(!memcmp(got.data, want.data, (size_t)bytes),
          "%s into %s %s, the %s kind's kernel: equals the reference", what,
          layout, relayout_dtype_name(t), k ? "other" : "device's");
    relayout_preprocess_plan_free(p);
  }
  guarded_free(&want);
  guarded_free(&got);
  free(frames);
}

static void every_format(void) {
  relayout_aipp nv12 = config(RELAYOUT_YUV420SP_U8, 38, 22);
  static const int32_t jpeg[3][3] = {
      {256, 0, 359}, {256, -88, -183}, {256, 454, 0}};
  memcpy(nv12.matrix, jpeg, sizeof jpeg);
  nv12.csc_switch = 1;
  nv12.input_bias[1] = nv12.input_bias[2] = 128;
  nv12.crop = 1;
  nv12.load_start_pos_w = 4;
  nv12.load_start_pos_h = 2;
  nv12.crop_size_w = 29;
  nv12.crop_size_h = 17;
  nv12.padding = 1;
  nv12.left_padding_size = 3;
  nv12.top_padding_size = 1;
  nv12.right_padding_size = 2;
  nv12.bottom_padding_size = 5;
  nv12.padding_value = -1.5f;
  relayout_aipp nv21 = nv12;
  nv21.rbuv_swap_switch = 1;
  relayout_aipp rgb = config(RELAYOUT_RGB888_U8, 17, 9);
  static const int32_t bt601[3][3] = {
      {66, 129, 25}, {-38, -74, 112}, {112, -94, -18}};
  relayout_aipp yuv = rgb;
  memcpy(yuv.matrix, bt601, sizeof bt601);
  yuv.csc_switch = 1;
  yuv.output_bias[0] = 16;
  yuv.output_bias[1] = yuv.output_bias[2] = 128;
  relayout_aipp rgbx = config(RELAYOUT_XRGB8888_U8, 21, 5);
  rgbx.ax_swap_switch = 1;
  rgbx.rbuv_swap_switch = 1;
  relayout_aipp gray = config(RELAYOUT_YUV400_U8, 31, 3);
  relayout_aipp extremes = rgb; /* f16's subnormals, and past its range */
  extremes.var_reci_chn[0] = 1e-6f;
  extremes.var_reci_chn[1] = 1000.0f;
  extremes.var_reci_chn[2] = 3e-7f;
  relayout_quant q = {0.125f, -3};
  one("NV12, CSC, crop, border", &nv12, "NC1HWC0", RELAYOUT_F16, NULL);
  one("NV12, CSC, crop, border", &nv12, "NCHW", RELAYOUT_F32, NULL);
  one("NV21, CSC, crop, border", &nv21, "nChw16c", RELAYOUT_BF16, NULL);
  one("NV21, CSC, crop, border", &nv21, "NCHW4", RELAYOUT_I8, &q);
  one("RGB", &rgb, "NHWC", RELAYOUT_F32, NULL);
  one("RGB", &rgb, "NCHW", RELAYOUT_F64, NULL);
  one("RGB", &rgb, "NCHW", RELAYOUT_F16, NULL);
  one("RGB, tiny and huge values", &extremes, "NC1HWC0", RELAYOUT_F16, NULL);
  one("RGB, tiny and huge values", &extremes, "NCHW", RELAYOUT_BF16, NULL);
  one("RGB to YUV", &yuv, "NC1HWC0", RELAYOUT_F16, NULL);
  one("XRGB, ax and rbuv swaps", &rgbx, "NHWC", RELAYOUT_F16, NULL);
  relayout_quant u = {0.5f, 128};
  one("XRGB, ax and rbuv swaps", &rgbx, "CHWN4", RELAYOUT_U8, &u);
  one("gray", &gray, "NC1HWC0", RELAYOUT_F16, NULL);
}

/* On the caller's buffers at offsets: the reference's bytes, nothing
 * before or after them written; offsets and sizes checked. */
static void buffers(void) {
  relayout_aipp a = config(RELAYOUT_RGB888_U8, 7, 5);
  relayout_desc d;
  int64_t c, h, w, frame, bytes, n = 2;
  CHECK_OK(relayout_aipp_check(&a, &c, &h, &w, &frame, &e_));
  output(&d, "NC1HWC0", RELAYOUT_F16, &a, n, NULL);
  relayout_desc_size_bytes(&bytes, &d, NULL);
  unsigned char *frames = malloc((size_t)(n * frame)),
                *want = malloc((size_t)bytes), *got = malloc((size_t)bytes + 6);
  for (int64_t i = 0; i < n * frame; i++) frames[i] = (unsigned char)rng_next();
  CHECK_OK(relayout_preprocess_ref(&a, &d, want, (size_t)bytes, frames,
                                   (size_t)(n * frame), &e_));
  relayout_preprocess_plan *p = NULL;
  CHECK_OK(relayout_preprocess_plan_create(&p, engine, &a, &d, &e_));
  cl_context ctx = relayout_engine_context(engine);
  cl_command_queue q = relayout_engine_queue(engine);
  cl_int rc;
  cl_mem bf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)(n * frame) + 3,
                             NULL, &rc),
         bd = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)bytes + 6, NULL,
                             &rc);
  clEnqueueWriteBuffer(q, bf, CL_TRUE, 3, (size_t)(n * frame), frames, 0, NULL,
                       NULL);
  memset(got, 0x5A, (size_t)bytes + 6);
  clEnqueueWriteBuffer(q, bd, CL_TRUE, 0, (size_t)bytes + 6, got, 0, NULL,
                       NULL);
  CHECK_OK(relayout_preprocess_enqueue(p, bd, 2, bf, 3, 0, NULL, NULL, &e_));
  clEnqueueReadBuffer(q, bd, CL_TRUE, 0, (size_t)bytes + 6, got, 0, NULL, NULL);
  CHECK(got[0] == 0x5A && got[1] == 0x5A &&
            !memcmp(got + 2, want, (size_t)bytes) && got[bytes + 2] == 0x5A &&
            got[bytes + 5] == 0x5A,
        "on buffers at offsets: the reference's bytes, nothing around them");
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "multiple of its 2-byte element",
              relayout_preprocess_enqueue(p, bd, 1, bf, 3, 0, NULL, NULL, &e_));
  CHECK_FAILS(RELAYOUT_ERR_BUFFER, "the frames hold",
              relayout_preprocess_enqueue(p, bd, 2, bf, 4, 0, NULL, NULL, &e_));
  CHECK_FAILS(RELAYOUT_ERR_BUFFER, "the destination buffer holds",
              relayout_preprocess_enqueue(p, bd, 8, bf, 3, 0, NULL, NULL, &e_));
  clReleaseMemObject(bf);
  clReleaseMemObject(bd);
  relayout_preprocess_plan_free(p);
  free(frames);
  free(want);
  free(got);
}

/* Outputs without a kernel run on the reference, saying why, and equal it;
 * they cannot enqueue. Bad outputs and buffers are refused. */
static void fallbacks_and_refusals(void) {
  relayout_aipp a = config(RELAYOUT_RGB888_U8, 6, 4);
  relayout_desc d, i4;
  int64_t c, h, w, frame;
  CHECK_OK(relayout_aipp_check(&a, &c, &h, &w, &frame, &e_));
  output(&d, "NCHW", RELAYOUT_I8, &a, 2, NULL);
  float scales[3] = {0.5f, 0.25f, 2};
  relayout_quant_channels qc = {'C', 3, scales, NULL};
  CHECK_OK(relayout_desc_quantize_channels(&d, &qc, &e_));
  output(&i4, "NHWC", RELAYOUT_I4, &a, 2, NULL);
  const relayout_desc *no_kernel[] = {&d, &i4};
  const char *why[] = {"per channel", "4-bit"};
  unsigned char frames[2 * 6 * 4 * 3];
  for (size_t i = 0; i < sizeof frames; i++) frames[i] = (unsigned char)i;
  for (int k = 0; k < 2; k++) {
    int64_t bytes;
    relayout_desc_size_bytes(&bytes, no_kernel[k], NULL);
    guarded want = guarded_alloc((size_t)bytes, 0xA5),
            got = guarded_alloc((size_t)bytes, 0x5A);
    relayout_preprocess_plan *p = NULL;
    CHECK_OK(
        relayout_preprocess_plan_create(&p, engine, &a, no_kernel[k], &e_));
    CHECK(strstr(relayout_preprocess_note(p), why[k]) != NULL,
          "an output %s runs on the reference: '%s'", why[k],
          relayout_preprocess_note(p));
    CHECK_OK(relayout_preprocess_ref(&a, no_kernel[k], want.data, want.size,
                                     frames, sizeof frames, &e_));
    CHECK_OK(relayout_preprocess_run(p, got.data, got.size, frames,
                                     sizeof frames, &e_));
    CHECK(!memcmp(want.data, got.data, (size_t)bytes),
          "an output %s: the reference's bytes", why[k]);
    cl_int rc;
    cl_mem m = clCreateBuffer(relayout_engine_context(engine),
                              CL_MEM_READ_WRITE, 4096, NULL, &rc);
    CHECK_FAILS(RELAYOUT_ERR_UNSUPPORTED, "cannot enqueue",
                relayout_preprocess_enqueue(p, m, 0, m, 0, 0, NULL, NULL, &e_));
    clReleaseMemObject(m);
    relayout_preprocess_plan_free(p);
    guarded_free(&want);
    guarded_free(&got);
  }
  relayout_preprocess_plan *p = NULL;
  relayout_desc wrong;
  relayout_layout *l = NULL;
  CHECK_OK(relayout_layout_parse(&l, "NCHW", &e_));
  CHECK_OK(relayout_desc_init(&wrong, l, RELAYOUT_F16, 4, "NCHW",
                              (const int64_t[]){2, 3, 4, 7}, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS,
              "C, H, W = 3, 4, 7; the configuration makes "
              "3, 4, 6",
              relayout_preprocess_plan_create(&p, engine, &a, &wrong, &e_));
  CHECK(!p, "no plan made");
  relayout_layout_free(l);
  CHECK_OK(relayout_layout_parse(&l, "CHW", &e_));
  CHECK_OK(relayout_desc_init(&wrong, l, RELAYOUT_F16, 3, "CHW",
                              (const int64_t[]){3, 4, 6}, &e_));
  CHECK_FAILS(RELAYOUT_ERR_DIMS, "must be N, C, H and W",
              relayout_preprocess_plan_create(&p, engine, &a, &wrong, &e_));
  relayout_layout_free(l);
  output(&d, "NCHW", RELAYOUT_F16, &a, 2, NULL);
  CHECK_OK(relayout_preprocess_plan_create(&p, engine, &a, &d, &e_));
  unsigned char out[2 * 3 * 4 * 6 * 2];
  CHECK_FAILS(RELAYOUT_ERR_BUFFER, "the frames hold 143 bytes; 2 frames of 72",
              relayout_preprocess_run(p, out, sizeof out, frames,
                                      sizeof frames - 1, &e_));
  CHECK_FAILS(RELAYOUT_ERR_BUFFER, "the destination buffer holds 287 bytes",
              relayout_preprocess_run(p, out, sizeof out - 1, frames,
                                      sizeof frames, &e_));
  relayout_preprocess_plan_free(p);
  a.src_image_size_w = 0;
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "",
              relayout_preprocess_plan_create(&p, engine, &a, &d, &e_));
  const float mean[3] = {1, 2, 3}, std[3] = {1, 0, 1}, nan[3] = {0, NAN, 0};
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "channel 1: the mean must be finite",
              relayout_aipp_normalize(&a, mean, std, 1, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "channel 1: the mean must be finite",
              relayout_aipp_normalize(&a, nan, mean, 1, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "the scale must be positive",
              relayout_aipp_normalize(&a, mean, mean, -1, &e_));
  CHECK_FAILS(RELAYOUT_ERR_ARGUMENT, "NULL argument",
              relayout_aipp_normalize(&a, NULL, mean, 1, &e_));
}

int main(void) {
  const char *dev = getenv("RELAYOUT_TEST_DEVICE");
  relayout_engine_options o = {.size = sizeof o, .device = dev ? dev : "cpu"};
  CHECK_OK(relayout_engine_create(&engine, &o, &e_));
  if (!engine) return check_summary();
  cl_device_id d;
  cl_device_type type = 0;
  clGetContextInfo(relayout_engine_context(engine), CL_CONTEXT_DEVICES,
                   sizeof d, &d, NULL);
  clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  o.families =
      type & CL_DEVICE_TYPE_GPU ? RELAYOUT_FAMILIES_CPU : RELAYOUT_FAMILIES_GPU;
  o.copies = 1;
  o.staging_bytes = 257;
  CHECK_OK(relayout_engine_create(&other, &o, &e_));
  every_format();
  /* the driver's copies would give the same bytes: checked inside */
  CHECK(other->staging && !other->staging_refused,
        "the other engine's runs went through its chunks");
  buffers();
  fallbacks_and_refusals();
  relayout_engine_free(engine);
  relayout_engine_free(other);
  return check_summary();
}
