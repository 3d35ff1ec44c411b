/* fuzz_layout.c - libFuzzer target: layout text, binding and the reference
 *
 * An input is four lines: a source layout, a destination layout, a dtype
 * and the logical extents in the source's order, separated by commas, e.g.
 * "nChw8c\nFRACTAL_Z\nf16\n2,17,3,3". A parse or bind error is a rejection,
 * and a clean one (the sanitizers see to that). What is accepted must hold:
 * - a layout's resolved text parses, and resolves to the same text again;
 * - where both buffers fit in 256 KiB: each side has as many data elements
 *   (relayout_desc_is_padding) as the extents' product; the reference
 *   converts there and back, every data element comes back bit for bit and
 *   every padding element comes back zero, on both sides.
 */
#include "relayout.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *line[4]; /* the input's lines, for messages */

static void fail(const char *what, long long at) {
  fprintf(stderr, "%s (%lld): %s -> %s %s %s\n", what, at, line[0], line[1],
          line[2], line[3]);
  abort();
}

static void check_resolved(const relayout_layout *l, relayout_dtype t) {
  char once[512], twice[512];
  relayout_error err;
  if (relayout_layout_resolved_text(once, sizeof once, l, t, &err)) return;
  relayout_layout *again;
  if (relayout_layout_parse(&again, once, &err))
    fail("resolved text does not parse", 0);
  if (relayout_layout_resolved_text(twice, sizeof twice, again, t, &err) ||
      strcmp(once, twice))
    fail("resolved text resolves differently", 0);
  relayout_layout_free(again);
}

/* Element i of a buffer in d, as bits. */
static uint64_t element(const unsigned char *buf, const relayout_desc *d,
                        int64_t i) {
  int bits = relayout_dtype_bits(relayout_desc_dtype(d));
  if (bits == 4) return buf[i >> 1] >> ((i & 1) * 4) & 0xFu;
  uint64_t v = 0;
  memcpy(&v, buf + i * (bits / 8), (size_t)bits / 8);
  return v;
}

/* Data elements where `sent` holds them (when given), padding zero. */
static void check_buffer(const unsigned char *got, const unsigned char *sent,
                         const relayout_desc *d) {
  int64_t count = 1, seen = 0;
  int64_t dims[RELAYOUT_MAX_DIMS];
  int ndims = relayout_desc_dims(d, NULL, dims);
  for (int i = 0; i < ndims; i++) count *= dims[i];
  for (int64_t i = 0; i < relayout_desc_span(d); i++) {
    int pad;
    if (relayout_desc_is_padding(&pad, d, i, NULL))
      fail("is_padding fails inside the span", i);
    seen += !pad;
    if (pad && element(got, d, i)) fail("padding is not zero", i);
    if (!pad && sent && element(got, d, i) != element(sent, d, i))
      fail("element differs after the round trip", i);
  }
  if (seen != count)
    fail("data elements other than the extents' product", seen);
}

static void round_trip(const relayout_desc *s, const relayout_desc *d) {
  int64_t sb, db;
  if (relayout_desc_size_bytes(&sb, s, NULL) ||
      relayout_desc_size_bytes(&db, d, NULL) || sb > 1 << 18 || db > 1 << 18)
    return;
  unsigned char *in = malloc((size_t)sb + 1), *mid = malloc((size_t)db + 1),
                *back = malloc((size_t)sb + 1);
  if (!in || !mid || !back) fail("out of memory for the round trip", sb);
  for (int64_t i = 0; i < sb; i++) in[i] = (unsigned char)(i * 131 + 7);
  memset(mid, 0xA5, (size_t)db);
  memset(back, 0x5A, (size_t)sb);
  relayout_error err;
  if (relayout_convert_ref(d, mid, (size_t)db, s, in, (size_t)sb, &err) ||
      relayout_convert_ref(s, back, (size_t)sb, d, mid, (size_t)db, &err))
    fail(err.message, 0);
  check_buffer(mid, NULL, d);
  check_buffer(back, in, s);
  free(in);
  free(mid);
  free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char text[513];
  if (size >= sizeof text || memchr(data, 0, size)) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  char *at = text;
  for (int i = 0; i < 4; i++) {
    line[i] = at;
    at = strchr(at, '\n');
    if (!at && i < 3) return 0;
    if (at) *at++ = 0;
  }
  int64_t ext[RELAYOUT_MAX_DIMS];
  int n = 0;
  for (const char *p = line[3]; *p && n < RELAYOUT_MAX_DIMS; n++) {
    char *end;
    ext[n] = strtoll(p, &end, 10);
    if (end == p) return 0;
    p = *end ? end + 1 : end;
  }
  relayout_error err;
  relayout_dtype t;
  relayout_layout *a = NULL, *b = NULL;
  if (!relayout_dtype_from_name(&t, line[2], &err) &&
      !relayout_layout_parse(&a, line[0], &err) &&
      !relayout_layout_parse(&b, line[1], &err)) {
    check_resolved(a, t);
    check_resolved(b, t);
    relayout_desc s, d;
    if (!relayout_bind_extents(&s, &d, a, b, t, n, ext, &err))
      round_trip(&s, &d);
  }
  relayout_layout_free(a);
  relayout_layout_free(b);
  return 0;
}
