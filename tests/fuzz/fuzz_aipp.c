/* fuzz_aipp.c - libFuzzer target: AIPP configuration files
 *
 * The input is the file's text. A configuration the parser refuses is a
 * clean rejection (the sanitizers see to that). One it accepts must pass
 * relayout_aipp_check with an output of 1 or 3 channels and positive
 * sizes, and, where the output is small, the reference must preprocess a
 * frame of it into NCHW f32 (any float values: AIPP's arithmetic may
 * overflow as IEEE says).
 */
#include "relayout_preprocess.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what) {
  fprintf(stderr, "accepted configuration: %s\n", what);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  relayout_aipp a;
  relayout_error err;
  if (relayout_aipp_parse(&a, (const char *)data, size, &err)) return 0;
  int64_t c, h, w, frame;
  if (relayout_aipp_check(&a, &c, &h, &w, &frame, &err))
    fail("its own check refuses it");
  if ((c != 1 && c != 3) || h < 1 || w < 1 || frame < 1)
    fail("an empty output or frame");
  if (h * w > 4096 || frame > (1 << 16)) return 0;
  relayout_layout *l = NULL;
  relayout_desc d;
  int64_t dims[4] = {1, c, h, w};
  if (relayout_layout_parse(&l, "NCHW", &err) ||
      relayout_desc_init(&d, l, RELAYOUT_F32, 4, "NCHW", dims, &err))
    fail("NCHW does not bind");
  float *out = malloc((size_t)(c * h * w) * sizeof *out);
  uint8_t *in = malloc((size_t)frame);
  for (int64_t i = 0; i < frame; i++) in[i] = (uint8_t)(i * 37);
  if (relayout_preprocess_ref(&a, &d, out, (size_t)(c * h * w) * sizeof *out,
                              in, (size_t)frame, &err))
    fail(err.message);
  free(out);
  free(in);
  relayout_layout_free(l);
  return 0;
}
