/* images.c - JPEG and PNG images held in memory decoded into frames of an
 * AIPP configuration's input format and size: libjpeg(-turbo) straight to
 * the JPEG's own Y and CbCr planes for YUV420SP_U8 (the colour conversion
 * is the configuration's, on the device), to RGB, XRGB or gray otherwise;
 * libpng to RGB, XRGB or gray, alpha dropped. Never resized: a size other
 * than the configuration's is refused by name. Each decoder is built where
 * its library was found (RELAYOUT_HAVE_JPEG, RELAYOUT_HAVE_PNG). */
#include "internal.h"
#include "relayout_preprocess.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef RELAYOUT_HAVE_JPEG
#include <jpeglib.h>
#include <setjmp.h>
#endif
#ifdef RELAYOUT_HAVE_PNG
#include <png.h>
#endif

/* Room for a decoder's message (libjpeg's words fit). */
#define RL_IMAGE_MSG sizeof(((relayout_error *)0)->message)

static const unsigned char jpeg_magic[3] = {0xFF, 0xD8, 0xFF},
                           png_magic[8] = {0x89, 'P',  'N',  'G',
                                           0x0D, 0x0A, 0x1A, 0x0A};

int relayout_image_kind(const void *head, size_t n) {
  if (head && n >= sizeof jpeg_magic &&
      !memcmp(head, jpeg_magic, sizeof jpeg_magic))
    return 1;
  if (head && n >= sizeof png_magic &&
      !memcmp(head, png_magic, sizeof png_magic))
    return 2;
  return 0;
}

#ifdef RELAYOUT_HAVE_JPEG
_Static_assert(RL_IMAGE_MSG >= JMSG_LENGTH_MAX, "room for libjpeg's words");

/* libjpeg's errors: the message, then back to the decoder's caller. */
typedef struct jpeg_fail {
  struct jpeg_error_mgr mgr;
  jmp_buf back;
  char message[JMSG_LENGTH_MAX];
} jpeg_fail;

static void jpeg_exit(j_common_ptr c) {
  jpeg_fail *f = (jpeg_fail *)(void *)c->err;
  c->err->format_message(c, f->message);
  longjmp(f->back, 1);
}

/* A warning (level -1) is damaged data, which libjpeg fills in and passes
 * over: here it fails the file; trace messages (levels 0 up) are dropped. */
static void jpeg_warning(j_common_ptr c, int level) {
  if (level < 0) jpeg_exit(c);
}

/* The Y plane, then U V pairs at half size (NV12), from a 4:2:0 JPEG's
 * planes as it stores them (rows in libjpeg's image pool, freed with the
 * decoder). */
static const char *jpeg_nv12(struct jpeg_decompress_struct *c,
                             unsigned char *out) {
  jpeg_component_info *k = c->comp_info;
  if (c->num_components != 3 || c->jpeg_color_space != JCS_YCbCr ||
      k[0].h_samp_factor != 2 || k[0].v_samp_factor != 2 ||
      k[1].h_samp_factor != 1 || k[1].v_samp_factor != 1 ||
      k[2].h_samp_factor != 1 || k[2].v_samp_factor != 1)
    return "its colour is not YCbCr 4:2:0, which YUV420SP_U8 takes as it "
           "lies (decode it as RGB888_U8 instead)";
  c->raw_data_out = TRUE;
  c->out_color_space = JCS_YCbCr;
  jpeg_start_decompress(c);
  size_t w = c->output_width, h = c->output_height;
  size_t rows = DCTSIZE * 2, pw = (w + rows - 1) / rows * rows; /* MCU */
  unsigned char *buf = (*c->mem->alloc_large)(
      (j_common_ptr)c, JPOOL_IMAGE, pw * rows + 2 * (pw / 2) * (rows / 2));
  JSAMPROW y[DCTSIZE * 2], u[DCTSIZE], v[DCTSIZE];
  for (size_t r = 0; r < rows; r++) y[r] = buf + r * pw;
  for (size_t r = 0; r < rows / 2; r++) {
    u[r] = buf + pw * rows + r * (pw / 2);
    v[r] = buf + pw * rows + (pw / 2) * (rows / 2) + r * (pw / 2);
  }
  JSAMPARRAY planes[3] = {y, u, v};
  unsigned char *uv = out + w * h;
  for (size_t at = 0; at < h; at += rows) {
    jpeg_read_raw_data(c, planes, (JDIMENSION)rows);
    for (size_t r = 0; r < rows && at + r < h; r++)
      memcpy(out + (at + r) * w, y[r], w);
    for (size_t r = 0; r < rows / 2 && (at / 2 + r) < h / 2; r++)
      for (size_t x = 0; x < w / 2; x++) {
        uv[(at / 2 + r) * w + 2 * x] = u[r][x];
        uv[(at / 2 + r) * w + 2 * x + 1] = v[r][x];
      }
  }
  return NULL;
}

/* decode_jpeg's work, between its setjmp and its cleanup. */
static const char *read_jpeg(struct jpeg_decompress_struct *c,
                             unsigned char *out, const unsigned char *file,
                             size_t size, const relayout_aipp *a, char *msg) {
  jpeg_mem_src(c, file, (unsigned long)size);
  jpeg_read_header(c, TRUE);
  if ((int64_t)c->image_width != a->src_image_size_w ||
      (int64_t)c->image_height != a->src_image_size_h) {
    snprintf(msg, RL_IMAGE_MSG,
             "it is %ux%u; the configuration takes %lldx%lld frames "
             "(relayout never resizes)",
             c->image_width, c->image_height, (long long)a->src_image_size_w,
             (long long)a->src_image_size_h);
    return msg;
  }
  if (a->input_format == RELAYOUT_YUV420SP_U8) return jpeg_nv12(c, out);
  c->out_color_space = a->input_format == RELAYOUT_YUV400_U8   ? JCS_GRAYSCALE
                       : a->input_format == RELAYOUT_RGB888_U8 ? JCS_RGB
                       : a->ax_swap_switch                     ? JCS_EXT_RGBX
                                                               : JCS_EXT_XRGB;
  jpeg_start_decompress(c);
  size_t stride = (size_t)c->output_width * (size_t)c->output_components;
  while (c->output_scanline < c->output_height) {
    JSAMPROW row = out + c->output_scanline * stride;
    jpeg_read_scanlines(c, &row, 1);
  }
  return NULL;
}

/* A JPEG into one frame of the configuration: NULL, or why not (*msg
 * holds libjpeg's words where it failed). */
static const char *decode_jpeg(unsigned char *out, const unsigned char *file,
                               size_t size, const relayout_aipp *a, char *msg) {
  struct jpeg_decompress_struct c;
  jpeg_fail fail;
  c.err = jpeg_std_error(&fail.mgr);
  fail.mgr.error_exit = jpeg_exit;
  fail.mgr.emit_message = jpeg_warning;
  jpeg_create_decompress(&c);
  if (setjmp(fail.back)) {
    snprintf(msg, RL_IMAGE_MSG, "%s", fail.message);
    jpeg_destroy_decompress(&c);
    return msg;
  }
  const char *why = read_jpeg(&c, out, file, size, a, msg);
  if (!why) jpeg_finish_decompress(&c);
  jpeg_destroy_decompress(&c);
  return why;
}

#endif

#ifdef RELAYOUT_HAVE_PNG
/* A PNG into one frame of the configuration: NULL, or why not. */
static const char *decode_png(unsigned char *out, const unsigned char *file,
                              size_t size, const relayout_aipp *a, char *msg) {
  png_image im;
  memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&im, file, size)) {
    snprintf(msg, RL_IMAGE_MSG, "%s", im.message);
    return msg;
  }
  const char *why = NULL;
  if (a->input_format == RELAYOUT_YUV420SP_U8)
    why = "a PNG holds RGB or gray, not YUV420SP_U8 (take RGB888_U8, with "
          "csc_switch for YUV)";
  else if (im.format & PNG_FORMAT_FLAG_LINEAR)
    why = "a 16-bit PNG: relayout takes 8-bit images";
  else if ((int64_t)im.width != a->src_image_size_w ||
           (int64_t)im.height != a->src_image_size_h)
    why = "";
  if (why) {
    if (!*why)
      snprintf(msg, RL_IMAGE_MSG,
               "it is %ux%u; the configuration takes %lldx%lld frames "
               "(relayout never resizes)",
               im.width, im.height, (long long)a->src_image_size_w,
               (long long)a->src_image_size_h);
    png_image_free(&im);
    return *why ? why : msg;
  }
  /* read with its alpha, which is then dropped, not composited (as image
   * loaders do for a model's input) */
  int gray = a->input_format == RELAYOUT_YUV400_U8,
      per = a->input_format == RELAYOUT_RGB888_U8 ? 3
            : gray                                ? 1
                                                  : 4;
  im.format = gray ? PNG_FORMAT_GA : PNG_FORMAT_RGBA;
  size_t n = (size_t)im.width * im.height;
  unsigned char *px = malloc(n * (gray ? 2 : 4));
  if (!px || !png_image_finish_read(&im, NULL, px, 0, NULL)) {
    snprintf(msg, RL_IMAGE_MSG, "%s", px ? im.message : "out of memory");
    png_image_free(&im);
    free(px);
    return msg;
  }
  for (size_t i = 0; i < n; i++)
    if (gray)
      out[i] = px[2 * i];
    else /* RGB, RGBX (ax_swap) or XRGB: the alpha byte as the unused one */
      for (int c = 0; c < per; c++)
        out[i * (size_t)per + (size_t)c] =
            px[4 * i + (per == 3 || a->ax_swap_switch ? c : (c + 3) % 4)];
  free(px);
  return NULL;
}

#endif

/* A decoder: NULL, or why not (in msg, or a constant). */
typedef const char *decoder(unsigned char *out, const unsigned char *file,
                            size_t size, const relayout_aipp *a, char *msg);
#ifdef RELAYOUT_HAVE_JPEG
#define JPEG_DECODER decode_jpeg
#else
#define JPEG_DECODER NULL
#endif
#ifdef RELAYOUT_HAVE_PNG
#define PNG_DECODER decode_png
#else
#define PNG_DECODER NULL
#endif

relayout_status relayout_image_decode(void *frame, size_t frame_size,
                                      const void *image, size_t image_size,
                                      const relayout_aipp *a,
                                      relayout_error *err) {
  int64_t c, h, w, bytes;
  if (!frame || !image || !a)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  relayout_status s = relayout_aipp_check(a, &c, &h, &w, &bytes, err);
  if (s) return s;
  if ((uint64_t)bytes > frame_size)
    return rl_fail(err, RELAYOUT_ERR_BUFFER,
                   "the frame buffer holds %zu bytes; a frame is %lld",
                   frame_size, (long long)bytes);
  /* by relayout_image_kind: none, JPEG, PNG; NULL where not built */
  static decoder *const decoders[3] = {NULL, JPEG_DECODER, PNG_DECODER};
  static const char *const what[3][2] = {
      {"", ""}, {"JPEG", "libjpeg"}, {"PNG", "libpng"}};
  char msg[RL_IMAGE_MSG];
  int kind = relayout_image_kind(image, image_size);
  if (!kind) return rl_fail(err, RELAYOUT_ERR_FILE, "not a JPEG or PNG image");
  if (!decoders[kind])
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "a %s image, and relayout was built without %s",
                   what[kind][0], what[kind][1]);
  const char *why = decoders[kind](frame, image, image_size, a, msg);
  return why ? rl_fail(err, RELAYOUT_ERR_FILE, "%s", why) : RELAYOUT_OK;
}
