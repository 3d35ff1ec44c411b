/*
 * relayout_preprocess.h - decoded images and video frames to a model's
 * input, with Ascend AIPP's semantics: crop, colour-space conversion,
 * channel swaps, normalization and padding, into any layout whose logical
 * dims are N, C, H and W. docs/PREPROCESS.md defines each step.
 */
#ifndef RELAYOUT_PREPROCESS_H
#define RELAYOUT_PREPROCESS_H

#include "relayout.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The pixel formats AIPP takes (its input_format). */
typedef enum relayout_image_format {
  /** NV12: a plane of Y, then one of U, V pairs at half width and height
   * (NV21, V first, with rbuv_swap). Even width and height. */
  RELAYOUT_YUV420SP_U8,
  /** Three bytes a pixel. */
  RELAYOUT_RGB888_U8,
  /** Four bytes a pixel, the unused one first (last with ax_swap). */
  RELAYOUT_XRGB8888_U8,
  /** One byte a pixel: one channel out. */
  RELAYOUT_YUV400_U8
} relayout_image_format;

/**
 * A static AIPP configuration, as the keys of CANN's aipp_op file name
 * them. relayout_aipp_defaults fills what a file leaves out.
 */
typedef struct relayout_aipp {
  relayout_image_format input_format;
  int64_t src_image_size_w, src_image_size_h; /**< each frame's pixels */
  int crop; /**< with load_start_pos_w/h and crop_size_w/h; else whole */
  int64_t load_start_pos_w, load_start_pos_h, crop_size_w, crop_size_h;
  int csc_switch;         /**< colour-space conversion by matrix */
  int32_t matrix[3][3];   /**< matrix_r<row>c<column> */
  int32_t input_bias[3];  /**< YUV to RGB: subtracted before the matrix */
  int32_t output_bias[3]; /**< RGB to YUV: added after it */
  int rbuv_swap_switch;   /**< U and V, or R and B, exchanged first */
  int ax_swap_switch;     /**< XRGB8888's unused byte last (RGBX) */
  float mean_chn[3], min_chn[3], var_reci_chn[3]; /**< normalization */
  int padding; /**< with the four sizes and padding_value */
  int64_t left_padding_size, right_padding_size, top_padding_size,
      bottom_padding_size;
  float padding_value;
} relayout_aipp;

/** No crop, no conversion, no padding, mean 0, min 0, var_reci 1. */
RELAYOUT_API void relayout_aipp_defaults(relayout_aipp *aipp);

/**
 * The common normalization without AIPP, (x * scale - mean) / std per
 * channel (torchvision's Normalize after ToTensor: scale 1/255), as AIPP's
 * arithmetic: mean_chn 0, min_chn = mean / scale, var_reci_chn = scale /
 * std, each divided in f64 and rounded to f32 (so within an f32 rounding or
 * two of the formula). Refuses a scale that is not positive and finite, a
 * zero or non-finite std, a non-finite mean.
 */
RELAYOUT_API relayout_status relayout_aipp_normalize(relayout_aipp *aipp,
                                                     const float mean[3],
                                                     const float std[3],
                                                     double scale,
                                                     relayout_error *err);

/**
 * Parses an AIPP configuration file's text (aipp_op { key : value ... },
 * '#' comments) over relayout_aipp_defaults. Keys of dynamic AIPP, keys
 * relayout does not implement and values out of range are refused, the
 * error naming the key and its line; then relayout_aipp_check.
 */
RELAYOUT_API relayout_status relayout_aipp_parse(relayout_aipp *out,
                                                 const char *text, size_t len,
                                                 relayout_error *err);

/**
 * Checks a configuration: sizes positive, the crop inside the frame, a
 * YUV420SP frame of even size cropped from even positions (as AIPP
 * requires), no conversion of YUV400, finite normalization. Gives the
 * output's channels, height and width and each frame's bytes (any may be
 * NULL).
 */
RELAYOUT_API relayout_status relayout_aipp_check(
    const relayout_aipp *aipp, int64_t *channels, int64_t *height,
    int64_t *width, int64_t *frame_bytes, relayout_error *err);

/** 1 when the bytes at head begin a JPEG file, 2 a PNG file, else 0. */
RELAYOUT_API int relayout_image_kind(const void *head, size_t n);

/**
 * Decodes a JPEG or PNG image held in memory into one frame of the
 * configuration's input format and size (a frame of relayout_aipp_check's
 * bytes): YUV420SP_U8 from a 4:2:0 JPEG's own planes, RGB888, XRGB8888
 * (RGBX with ax_swap) or YUV400 (gray) from either, a PNG's alpha dropped.
 * Never resized: an image of another size fails, as does damaged data
 * (RELAYOUT_ERR_FILE, with the decoder's words). RELAYOUT_ERR_UNSUPPORTED
 * where the library was built without libjpeg or libpng. Safe from any
 * thread.
 */
RELAYOUT_API relayout_status relayout_image_decode(
    void *frame, size_t frame_size, const void *image, size_t image_size,
    const relayout_aipp *a, relayout_error *err);

/**
 * The scalar reference: dst's N frames, back to back in `frames`, through
 * the configuration, written in dst's layout (its logical dims N, C, H and
 * W as relayout_aipp_check gives them; its dtype f16, bf16, f32, f64, or
 * an integer type with its quantization), padding of the layout as zero
 * (or the zero point). Nothing is written unless everything checks.
 */
RELAYOUT_API relayout_status
relayout_preprocess_ref(const relayout_aipp *aipp, const relayout_desc *dst,
                        void *dst_buf, size_t dst_size, const void *frames,
                        size_t frames_size, relayout_error *err);

/** A preprocessing plan: a configuration into an output on an engine, its
 *  kernel built once, run on batch after batch of frames. */
typedef struct relayout_preprocess_plan relayout_preprocess_plan;

/**
 * Makes a plan for the configuration (checked) into dst, as
 * relayout_preprocess_ref takes them (dst's N: the frames of a run). Its
 * kernel is built now, or taken from the engine's caches: every output
 * element computed where its frame lies (NV12's two planes as they are)
 * and written once, the same bits as the reference. Where the device
 * cannot run it (a 4-bit or per-channel output, the reference engine, a
 * build that failed) the plan runs on the reference and its note says why.
 */
RELAYOUT_API relayout_status relayout_preprocess_plan_create(
    relayout_preprocess_plan **out, relayout_engine *engine,
    const relayout_aipp *aipp, const relayout_desc *dst, relayout_error *err);
RELAYOUT_API void relayout_preprocess_plan_free(relayout_preprocess_plan *p);
/** Runs a plan on host arrays: dst's N frames, back to back in `frames`,
 *  into dst_buf (nothing written unless the sizes check). */
RELAYOUT_API relayout_status relayout_preprocess_run(
    relayout_preprocess_plan *p, void *dst_buf, size_t dst_size,
    const void *frames, size_t frames_size, relayout_error *err);
/** Why the plan runs on the reference, or why its last run fell back to
 *  it; "" when neither. */
RELAYOUT_API const char *
relayout_preprocess_note(const relayout_preprocess_plan *p);

#ifdef __cplusplus
}
#endif
#endif /* RELAYOUT_PREPROCESS_H */
