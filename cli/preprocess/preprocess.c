/* preprocess.c - relayout preprocess: raw frames through an AIPP
 * configuration (a file, or options) into a model's input layout */
#include "batches.h"
#include "relayout_preprocess.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: relayout preprocess --aipp FILE --to LAYOUT [--dtype T]\n"
    "                           [--quant-scale S] [--quant-zero-point Z]\n"
    "                           [--device D] [--raw] [--batch N]\n"
    "                           FRAMES... OUT.npy\n"
    "       relayout preprocess --input-format F --size WxH [--mean M,M,M]\n"
    "                           [--std S,S,S] [--scale X] --to LAYOUT\n"
    "                           [--dtype T [--quant-scale S]\n"
    "                           [--quant-zero-point Z]] [--device D] [--raw]\n"
    "                           [--batch N] FRAMES... OUT.npy\n"
    "\n"
    "Runs frames through Ascend AIPP's preprocessing (docs/PREPROCESS.md):\n"
    "crop, colour-space conversion, channel swaps, normalization in f32,\n"
    "padding; writes OUT in LAYOUT (logical dims N, C, H, W: NCHW, NHWC,\n"
    "NC1HWC0, nChw16c, NCHW4, ...), one N per frame, as a .npy array of the\n"
    "layout's physical shape. FRAMES: one raw file of frames back to back\n"
    "(or - for standard input, a stream counted at its end: ffmpeg ... -f\n"
    "rawvideo -pix_fmt nv12 - | relayout preprocess ... - out.npy),\n"
    "or JPEG and PNG images, each a path, a directory (its .jpg, .jpeg and\n"
    ".png files in name order) or @LIST (a file of paths, one a line); a\n"
    "JPEG decodes straight to its Y and CbCr planes for YUV420SP_U8. Frames\n"
    "are taken at the size the configuration names, never resized.\n"
    "Each output element is computed once, on the device, where its frame\n"
    "lies (NV12's two planes as they are), the same bits as the reference.\n"
    "  --aipp FILE     CANN's aipp_op { key : value ... } (static AIPP)\n"
    "  --input-format  YUV420SP_U8 (NV12), RGB888_U8, XRGB8888_U8, YUV400_U8\n"
    "  --size WxH      each frame's width and height\n"
    "  --mean, --std, --scale  (x * scale - mean) / std per channel, as\n"
    "                  AIPP's min_chn = mean / scale and var_reci_chn =\n"
    "                  scale / std (--scale: a number or 1/N; default 1)\n"
    "  --dtype         f16 (default), bf16, f32, f64; i8 or u8 quantized as\n"
    "                  docs/CASTS.md says, with --quant-scale S (default 1)\n"
    "                  and --quant-zero-point Z (default 0; C's padding\n"
    "                  holds it)\n"
    "  --raw           OUT holds the output's bytes alone, no .npy header\n"
    "  --batch N       frames a batch (default: about 32 MiB of output): the\n"
    "                  device works on one while the next decodes and only\n"
    "                  a batch's output is held; where LAYOUT does not keep\n"
    "                  each frame's output whole and in order (N blocked or\n"
    "                  inside), all frames are one batch\n"
    "  --device        auto (default: first GPU, else CPU, else the\n"
    "                  reference), gpu, cpu, ref, an index or a name; all,\n"
    "                  or a list (0,2): batches in turn over the devices,\n"
    "                  the output byte for byte a one-device run's\n";

/* "a,b,c" into three floats; 0 or the exit code. */
static int three(float *out, const char *text, const char *what) {
  char *end;
  const char *p = text;
  for (int i = 0; i < 3; i++) {
    out[i] = strtof(p, &end);
    if (end == p || !isfinite(out[i]) || (i < 2 ? *end != ',' : *end != 0))
      return cli_error(EXIT_USAGE, "preprocess",
                       "%s %s: expected three numbers, comma-separated", what,
                       text);
    p = end + 1;
  }
  return 0;
}

/* The configuration from the options, without --aipp. */
static int from_options(relayout_aipp *a, const cli_opt *opts) {
  static const char *const names[] = {"YUV420SP_U8", "RGB888_U8", "XRGB8888_U8",
                                      "YUV400_U8"};
  const char *f = cli_get(opts, "input-format"), *size = cli_get(opts, "size");
  relayout_aipp_defaults(a);
  int i = 0;
  while (f && i < 4 && strcmp(f, names[i])) i++;
  if (!f || i == 4)
    return cli_error(EXIT_USAGE, "preprocess",
                     "--input-format: YUV420SP_U8, RGB888_U8, XRGB8888_U8 or "
                     "YUV400_U8\n%s",
                     usage);
  a->input_format = (relayout_image_format)i;
  int64_t wh[RELAYOUT_MAX_DIMS];
  int n;
  if (!size || cli_parse_shape(wh, &n, size) || n != 2)
    return cli_error(EXIT_USAGE, "preprocess", "--size: WxH, e.g. 224x224");
  a->src_image_size_w = wh[0];
  a->src_image_size_h = wh[1];
  float mean[3] = {0, 0, 0}, std[3] = {1, 1, 1};
  double scale = 1;
  const char *s = cli_get(opts, "scale");
  if (s) {
    char *end;
    int reciprocal = !strncmp(s, "1/", 2);
    scale = strtod(s + 2 * reciprocal, &end);
    if (end == s + 2 * reciprocal || *end || !(scale > 0) || !isfinite(scale))
      return cli_error(EXIT_USAGE, "preprocess",
                       "--scale %s: a positive number, or 1/N", s);
    if (reciprocal) scale = 1 / scale;
  }
  if ((cli_get(opts, "mean") && three(mean, cli_get(opts, "mean"), "--mean")) ||
      (cli_get(opts, "std") && three(std, cli_get(opts, "std"), "--std")))
    return EXIT_USAGE;
  relayout_error err;
  return relayout_aipp_normalize(a, mean, std, scale, &err)
             ? cli_error(EXIT_USAGE, "preprocess", "--mean, --std, --scale: %s",
                         err.message)
             : 0;
}

/* A batch's frames: about this many bytes of output, while the next
 * batch decodes. */
#define BATCH_BYTES ((int64_t)32 << 20)

/* The output of n frames: desc d (layout l, type t, quantized by q where
 * the type is an integer), *bytes, *s its bytes a frame where frames lie
 * one after the other (N outermost and alone), else 0. */
static int output_desc(relayout_desc *d, int64_t *bytes, int64_t *s,
                       const relayout_layout *l, relayout_dtype t,
                       const relayout_quant *q, const int64_t *chw, int64_t n,
                       relayout_error *err) {
  int64_t dims[4] = {n, chw[0], chw[1], chw[2]}, one_bytes;
  relayout_desc one;
  int rank, rank1;
  int64_t shape[RELAYOUT_MAX_AXES], shape1[RELAYOUT_MAX_AXES];
  int integer = t == RELAYOUT_I8 || t == RELAYOUT_U8;
  dims[0] = 1;
  if (relayout_desc_init(&one, l, t, 4, "NCHW", dims, err) ||
      (integer && relayout_desc_retype(&one, l, t, q, err)))
    return -1;
  dims[0] = n;
  if (relayout_desc_init(d, l, t, 4, "NCHW", dims, err) ||
      (integer && relayout_desc_retype(d, l, t, q, err)) ||
      relayout_desc_size_bytes(bytes, d, err) ||
      relayout_desc_size_bytes(&one_bytes, &one, err))
    return -1;
  relayout_desc_physical_shape(&rank, shape, d);
  relayout_desc_physical_shape(&rank1, shape1, &one);
  *s =
      one_bytes * n == *bytes && rank == rank1 && shape[0] == n &&
              shape1[0] == 1 &&
              !memcmp(shape + 1, shape1 + 1, sizeof *shape * (size_t)(rank - 1))
          ? one_bytes
          : 0;
  return 0;
}

/* The command after its arguments: FRAMES pos[0..npos-1), OUT the last. */
static int run(const char **pos, int npos, const cli_opt *opts) {
  const char *cmd = "preprocess";
  int rc;
  const char *file = cli_get(opts, "aipp");
  if (file &&
      (cli_get(opts, "input-format") || cli_get(opts, "size") ||
       cli_get(opts, "mean") || cli_get(opts, "std") || cli_get(opts, "scale")))
    return cli_error(EXIT_USAGE, cmd,
                     "--aipp, or the options that stand for one: not both");
  relayout_aipp a;
  relayout_error err;
  unsigned char *text = NULL;
  relayout_layout *layout = NULL;
  relayout_engine **engines = NULL;
  relayout_preprocess_plan **plans = NULL;
  int nengines = 0;
  relayout_dtype t = RELAYOUT_F16;
  if (file) {
    cli_in in;
    if (cli_in_open(&in, file, &err) ||
        (in.size > (1 << 20) && cli_fail(&err, RELAYOUT_ERR_FILE,
                                         "over 1 MiB: not a configuration")) ||
        cli_in_read(&in, &text, (size_t)in.size, &err)) {
      cli_in_close(&in);
      return cli_error(EXIT_WORK, cmd, "%s: %s", file, err.message);
    }
    cli_in_close(&in);
    rc = relayout_aipp_parse(&a, (const char *)text, in.size, &err)
             ? cli_error(EXIT_USAGE, cmd, "%s: %s", file, err.message)
             : 0;
    free(text);
  } else {
    rc = from_options(&a, opts);
  }
  int64_t c, h, w, frame;
  if (rc) return rc;
  if (relayout_aipp_check(&a, &c, &h, &w, &frame, &err))
    return cli_error(EXIT_USAGE, cmd, "%s", err.message);
  if (cli_get(opts, "dtype") &&
      relayout_dtype_from_name(&t, cli_get(opts, "dtype"), &err))
    return cli_error(EXIT_USAGE, cmd, "--dtype: %s", err.message);
  const char *descr, *qs = cli_get(opts, "quant-scale"),
                     *qz = cli_get(opts, "quant-zero-point");
  int integer = t == RELAYOUT_I8 || t == RELAYOUT_U8;
  relayout_quant q = {1, 0};
  if ((!cli_float_dtype(t) && !integer) || relayout_npy_descr(&descr, t, &err))
    return cli_error(EXIT_USAGE, cmd,
                     "--dtype %s: f16, bf16, f32, f64, or i8 or u8 with "
                     "--quant-scale and --quant-zero-point",
                     relayout_dtype_name(t));
  if ((qs || qz) && !integer)
    return cli_error(EXIT_USAGE, cmd,
                     "--quant-scale and --quant-zero-point quantize an i8 or "
                     "u8 --dtype");
  if ((qs && cli_parse_scale(&q.scale, qs, "--quant-scale", cmd)) ||
      (qz &&
       cli_parse_zero_point(&q.zero_point, qz, "--quant-zero-point", cmd)))
    return EXIT_USAGE;
  cli_out o;
  if (cli_out_check(&o, pos[npos - 1], 1, &err))
    return cli_error(EXIT_WORK, cmd, "%s", err.message);
  int64_t n, batch = 0, chw[3] = {c, h, w};
  if (cli_get(opts, "batch") &&
      cli_parse_int(&batch, cli_get(opts, "batch"), "--batch"))
    return EXIT_USAGE;
  cli_frames *f = NULL;
  relayout_desc d;
  output_plan out = {.descr = descr};
  if ((rc = cli_frames_open(&f, &n, pos, npos - 1, &a, frame, cmd))) return rc;
  const char *clash = cli_frames_reads(f, pos, npos - 1, pos[npos - 1]);
  if (clash || (file && cli_same_file(file, pos[npos - 1]))) {
    rc = cli_error(EXIT_USAGE, cmd, "OUT %s is the input %s: it would be lost",
                   pos[npos - 1], clash ? clash : file);
    goto done;
  }
  /* a stream's frames are counted at its end: the output of two stands for
   * theirs until then */
  if (relayout_layout_parse(&layout, cli_get(opts, "to"), &err) ||
      output_desc(&d, &out.bytes, &out.frame_out, layout, t, &q, chw,
                  n < 0 ? 2 : n, &err)) {
    rc = cli_error(EXIT_USAGE, cmd, "--to %s --dtype %s: %s",
                   cli_get(opts, "to"), relayout_dtype_name(t), err.message);
    goto done;
  }
  if (n < 0 && !out.frame_out) {
    rc = cli_error(EXIT_USAGE, cmd,
                   "frames from a stream need a layout that keeps each "
                   "frame's output whole and in order (N outermost): %s "
                   "does not",
                   cli_get(opts, "to"));
    goto done;
  }
  if (n < 0 && o.stream && !cli_get(opts, "raw")) {
    rc = cli_error(EXIT_USAGE, cmd,
                   "frames from a stream into a stream: an .npy header "
                   "needs their number first; give --raw, or a file");
    goto done;
  }
  /* batches where frames' outputs follow each other, else all at once */
  if (!out.frame_out)
    batch = n;
  else if (!batch)
    batch = (BATCH_BYTES + out.frame_out - 1) / out.frame_out;
  batch = n >= 0 && batch > n ? n : batch;
  if (batch > INT64_MAX / frame ||
      (out.frame_out && batch > INT64_MAX / out.frame_out)) {
    rc = cli_error(EXIT_USAGE, cmd,
                   "--batch %lld: that many frames' input or output does not "
                   "fit in 64 bits",
                   (long long)batch);
    goto done;
  }
  relayout_desc_physical_shape(&out.rank, out.shape, &d);
  out.counted = n >= 0;
  out.shape[0] = n >= 0 ? n : INT64_MAX; /* room for any number of frames */
  out.head_len = sizeof out.head;
  if (cli_get(opts, "raw")) {
    out.head_len = 0;
  } else if (relayout_npy_header(out.head, &out.head_len, descr, out.rank,
                                 out.shape, &err)) {
    rc = cli_error(EXIT_WORK, cmd, "%s", err.message);
    goto done;
  }
  relayout_desc per_batch;
  relayout_engine_options eo;
  cli_engine_options(&eo, cli_get(opts, "device"));
  if (!(rc = cli_engines(&engines, &nengines, &eo, cli_get(opts, "device"),
                         cmd)) &&
      !(rc = cli_frames_start(f, batch, nengines + 1, cmd))) {
    int64_t batch_bytes, batch_frame_out; /* known: bytes and frame_out */
    if (!(plans = calloc((size_t)nengines, sizeof *plans)))
      rc = cli_error(EXIT_WORK, cmd, "out of memory");
    else if (output_desc(&per_batch, &batch_bytes, &batch_frame_out, layout, t,
                         &q, chw, batch, &err))
      rc = cli_error(EXIT_WORK, cmd, "%s", err.message);
    for (int i = 0; i < nengines && !rc; i++)
      if (relayout_preprocess_plan_create(&plans[i], engines[i], &a, &per_batch,
                                          &err))
        rc = cli_error(EXIT_WORK, cmd, "%s", err.message);
    if (!rc)
      rc = pp_run_batches(&o, &out, plans, nengines, f, batch, frame, cmd);
  }
done:
  for (int i = 0; plans && i < nengines; i++)
    relayout_preprocess_plan_free(plans[i]);
  free(plans);
  cli_engines_free(engines, nengines);
  relayout_layout_free(layout);
  cli_frames_close(f);
  return rc;
}

int cmd_preprocess(int argc, char **argv) {
  cli_opt opts[] = {{.name = "aipp"},
                    {.name = "input-format"},
                    {.name = "size"},
                    {.name = "mean"},
                    {.name = "std"},
                    {.name = "scale"},
                    {.name = "to"},
                    {.name = "dtype"},
                    {.name = "device"},
                    {.name = "raw", .is_flag = 1},
                    {.name = "batch"},
                    {.name = "quant-scale"},
                    {.name = "quant-zero-point"},
                    {0}};
  const char *cmd = "preprocess", **pos = malloc(sizeof *pos * (size_t)argc);
  int npos, rc;
  if (!pos) return cli_error(EXIT_WORK, cmd, "out of memory");
  if ((rc = cli_parse(argc, argv, opts, pos, argc, &npos, cmd, usage)) ||
      ((!cli_get(opts, "to") || npos < 2) &&
       (rc = cli_error(EXIT_USAGE, cmd, "needs --to, FRAMES and OUT\n%s",
                       usage)))) {
    free(pos);
    return rc < 0 ? 0 : rc;
  }
  rc = run(pos, npos, opts);
  free(pos);
  return rc;
}
