/* random_layout.h - random grammar layouts of NCHW for the device tests */
#ifndef RELAYOUT_RANDOM_LAYOUT_H
#define RELAYOUT_RANDOM_LAYOUT_H

#include "check.h"

/* A random grammar layout of NCHW: the four outer letters in any order,
 * some aligned, each dim with up to two inner blocks standing anywhere,
 * before its outer letter too. An alignment right before a block is written
 * in bytes, so that the block's digits do not run into it. */
static void random_layout(char *out, size_t room) {
  static const char *const aligns[] = {"%2", "%3", "%16", "%32B"};
  static const int blocks[] = {2, 3, 4, 8, 16};
  char tokens[12][8];
  int n = 0;
  for (int d = 0; d < 4; d++) {
    char dim = "NCHW"[d];
    snprintf(tokens[n++], sizeof tokens[0], "%c%s", dim,
             rng_next() % 4 ? "" : aligns[rng_next() % 4]);
    int nblocks = (int)(rng_next() % 6);
    for (int b = nblocks < 3 ? 0 : nblocks < 5 ? 1 : 2; b > 0; b--)
      snprintf(tokens[n++], sizeof tokens[0], "%d%c", blocks[rng_next() % 5],
               dim - 'A' + 'a');
  }
  for (int i = n - 1; i > 0; i--) { /* shuffled */
    char t[8];
    int j = (int)(rng_next() % (uint64_t)(i + 1));
    memcpy(t, tokens[i], sizeof t);
    memcpy(tokens[i], tokens[j], sizeof t);
    memcpy(tokens[j], t, sizeof t);
  }
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    int bytes = i + 1 < n && strchr(tokens[i], '%') &&
                !strchr(tokens[i], 'B') && tokens[i + 1][0] <= '9';
    at += (size_t)snprintf(out + at, room - at, "%s%s", tokens[i],
                           bytes ? "B" : "");
  }
}

#endif /* RELAYOUT_RANDOM_LAYOUT_H */
