/* balance.c - work spread over bins by bytes: the largest first, each to
 * the bin with the fewest bytes so far (the lowest on a tie); the same for
 * the same sizes, wherever it runs */
#include "cli.h"
#include "repack.h"

#include <stdlib.h>

typedef struct sized {
  uint64_t bytes;
  int index;
} sized;

static int larger_first(const void *a, const void *b) {
  const sized *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  return x->index - y->index;
}

relayout_status rp_balance(int *bin, const uint64_t *bytes, int n, int bins,
                           relayout_error *err) {
  sized *s = malloc(sizeof *s * ((size_t)n + 1));
  uint64_t *load = calloc((size_t)bins, sizeof *load);
  if (!s || !load) {
    free(s);
    free(load);
    return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  }
  for (int i = 0; i < n; i++) s[i] = (sized){bytes[i], i};
  qsort(s, (size_t)n, sizeof *s, larger_first);
  for (int k = 0; k < n; k++) {
    int best = 0;
    for (int b = 1; b < bins; b++)
      if (load[b] < load[best]) best = b;
    bin[s[k].index] = best;
    load[best] += s[k].bytes;
  }
  free(s);
  free(load);
  return RELAYOUT_OK;
}
