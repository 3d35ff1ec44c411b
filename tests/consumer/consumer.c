/* consumer.c - a program built against an installed relayout (by
 * test_install.sh, once with pkg-config and once with find_package): it
 * converts NCHW 1x3x2x2 f32 to NHWC on the reference and checks every
 * element against the formula. Prints the version it linked. */
#include <relayout.h>
#include <stdio.h>

int main(void) {
  relayout_error err;
  relayout_layout *nchw = NULL, *nhwc = NULL;
  relayout_desc src, dst;
  float in[12], out[12];
  for (int i = 0; i < 12; i++) in[i] = (float)i;
  if (relayout_layout_parse(&nchw, "NCHW", &err) ||
      relayout_layout_parse(&nhwc, "NHWC", &err) ||
      relayout_bind_extents(&src, &dst, nchw, nhwc, RELAYOUT_F32, 4,
                            (const int64_t[]){1, 3, 2, 2}, &err) ||
      relayout_convert_ref(&dst, out, sizeof out, &src, in, sizeof in, &err)) {
    fprintf(stderr, "relayout: %s\n", err.message);
    return 1;
  }
  int wrong = 0;
  for (int c = 0; c < 3; c++)
    for (int hw = 0; hw < 4; hw++) wrong += out[hw * 3 + c] != in[c * 4 + hw];
  relayout_layout_free(nchw);
  relayout_layout_free(nhwc);
  printf("relayout %s: %s\n", relayout_version_string(),
         wrong ? "WRONG" : "NCHW -> NHWC ok");
  return wrong != 0;
}
