/* fuzz_images.c - libFuzzer target: JPEG and PNG files into frames
 *
 * The first byte picks the configuration: its input format (the low two
 * bits), ax_swap (the next) and its frame size (the next two: 8x8, 16x8,
 * 38x22, 64x48); the rest is the file, decoded by relayout_image_decode into a
 * buffer of exactly one frame, which the sanitizers guard. A file it
 * rejects is a clean rejection with a message; one it accepts filled the
 * frame (nothing to check beyond the sanitizers' silence: the values are
 * the libraries').
 */
#include "relayout_preprocess.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const int64_t sizes[4][2] = {{8, 8}, {16, 8}, {38, 22}, {64, 48}};
  if (size < 1) return 0;
  relayout_aipp a;
  relayout_aipp_defaults(&a);
  a.input_format = (relayout_image_format)(data[0] & 3);
  a.ax_swap_switch = data[0] >> 2 & 1;
  a.src_image_size_w = sizes[data[0] >> 3 & 3][0];
  a.src_image_size_h = sizes[data[0] >> 3 & 3][1];
  int64_t frame;
  if (relayout_aipp_check(&a, NULL, NULL, NULL, &frame, NULL)) return 0;
  unsigned char *out = malloc((size_t)frame);
  relayout_error err = {.message = ""};
  if (relayout_image_decode(out, (size_t)frame, data + 1, size - 1, &a, &err) &&
      !*err.message) {
    fprintf(stderr, "rejected without a message\n");
    abort();
  }
  free(out);
  return 0;
}
