/* diff.c - where an output differs from the reference's: the elements,
 * each by logical coordinate or as padding (verify, conform) */
#include "conform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An element's bits (4-bit elements: a nibble). */
static uint64_t element(const unsigned char *p, int64_t at, int bits) {
  if (bits == 4) return p[at >> 1] >> ((at & 1) * 4) & 0xF;
  uint64_t v = 0;
  memcpy(&v, p + at * (bits / 8), (size_t)bits / 8);
  return v;
}

/* The logical coordinates of the k offsets in `at` (data elements), in
 * text: one pass over every logical coordinate. */
static void coordinates(char (*text)[96], const int64_t *at, int k,
                        const relayout_desc *d) {
  char names[RELAYOUT_MAX_DIMS];
  int64_t ext[RELAYOUT_MAX_DIMS], c[RELAYOUT_MAX_DIMS] = {0}, off;
  int n = relayout_desc_dims(d, names, ext);
  for (;;) {
    relayout_desc_offset(&off, d, c, NULL);
    for (int j = 0; j < k; j++) {
      if (at[j] != off) continue;
      size_t len = 0;
      for (int i = 0; i < n; i++) {
        char lab[8];
        len += (size_t)snprintf(
            text[j] + len, sizeof text[j] - len, "%s%s=%lld", i ? "," : "",
            relayout_dim_label(lab, names[i]), (long long)c[i]);
      }
    }
    int i = n - 1;
    while (i >= 0 && ++c[i] == ext[i]) c[i--] = 0;
    if (i < 0) return;
  }
}

int cli_diff_find(cli_diff *r, const unsigned char *want,
                  const unsigned char *got, const relayout_desc *d,
                  int report) {
  memset(r, 0, sizeof *r);
  int bits = relayout_dtype_bits(relayout_desc_dtype(d));
  r->span = relayout_desc_span(d);
  r->at = calloc((size_t)report, sizeof *r->at);
  r->pad = calloc((size_t)report, sizeof *r->pad);
  r->text = calloc((size_t)report, sizeof *r->text);
  if (!r->at || !r->pad || !r->text) {
    cli_diff_free(r);
    return -1;
  }
  for (int64_t e = 0; e < r->span; e++) {
    int is_pad = 0;
    relayout_desc_is_padding(&is_pad, d, e, NULL);
    r->padding += is_pad;
    if (element(want, e, bits) == element(got, e, bits)) continue;
    r->count++;
    r->in_padding += is_pad;
    if (r->k < report) r->at[r->k] = e, r->pad[r->k++] = is_pad;
  }
  if (r->count) coordinates(r->text, r->at, r->k, d);
  return 0;
}

void cli_diff_print(FILE *f, const cli_diff *r, const unsigned char *want,
                    const unsigned char *got, const relayout_desc *d) {
  int bits = relayout_dtype_bits(relayout_desc_dtype(d));
  int digits = bits < 8 ? 1 : bits / 4;
  for (int j = 0; j < r->k; j++)
    fprintf(f, "  %-8s %-28s element %-10lld expected %0*llx, got %0*llx\n",
            r->pad[j] ? "padding" : "data", r->pad[j] ? "" : r->text[j],
            (long long)r->at[j], digits,
            (unsigned long long)element(want, r->at[j], bits), digits,
            (unsigned long long)element(got, r->at[j], bits));
}

void cli_diff_free(cli_diff *r) {
  free(r->at);
  free(r->pad);
  free(r->text);
  r->at = NULL;
  r->pad = NULL;
  r->text = NULL;
}
