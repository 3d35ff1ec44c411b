/* fuzz_args.c - libFuzzer target: the command line's values
 *
 * The first byte picks the parser (modulo 4: --shape, --dims, a byte count
 * such as --max-memory's, a repack --rule); the rest, up to a NUL, is the
 * text. A rejection prints its message, as on the command line, and is
 * clean when the sanitizers say so. What a parser accepts must hold:
 * - --shape: 1 to 12 extents in [1, 2^62], which written back as AxBxC
 *   parse to the same;
 * - --dims: 1 to 12 upper-case letters with extents in [1, 2^62], which
 *   written back as N=2,C=3 parse to the same;
 * - a byte count: in [1, 2^62];
 * - a rule: both layouts parsed, the glob a non-empty prefix of the text,
 *   the rank 0 to 12.
 */
#include "cli.h"
#include "repack.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *text) {
  fprintf(stderr, "accepted '%s': %s\n", text, what);
  abort();
}

static int in_range(int64_t v) { return v >= 1 && v <= (int64_t)1 << 62; }

static void shape(const char *text) {
  int64_t a[RELAYOUT_MAX_DIMS], b[RELAYOUT_MAX_DIMS];
  int ra, rb;
  if (cli_parse_shape(a, &ra, text)) return;
  if (ra < 1 || ra > RELAYOUT_MAX_DIMS) fail("rank out of range", text);
  char again[512];
  size_t at = 0;
  for (int i = 0; i < ra; i++) {
    if (!in_range(a[i])) fail("extent out of range", text);
    at += (size_t)snprintf(again + at, sizeof again - at, "%s%lld",
                           i ? "x" : "", (long long)a[i]);
  }
  if (cli_parse_shape(b, &rb, again) || ra != rb ||
      memcmp(a, b, (size_t)ra * sizeof a[0]))
    fail("written back, parses differently", text);
}

static void dims(const char *text) {
  relayout_dim_value a[RELAYOUT_MAX_DIMS], b[RELAYOUT_MAX_DIMS];
  int na, nb;
  if (cli_parse_dims(a, &na, text)) return;
  if (na < 1 || na > RELAYOUT_MAX_DIMS) fail("count out of range", text);
  char again[512];
  size_t at = 0;
  for (int i = 0; i < na; i++) {
    if (a[i].name < 'A' || a[i].name > 'Z' || !in_range(a[i].extent))
      fail("dim out of range", text);
    at += (size_t)snprintf(again + at, sizeof again - at, "%s%c=%lld",
                           i ? "," : "", a[i].name, (long long)a[i].extent);
  }
  if (cli_parse_dims(b, &nb, again) || na != nb)
    fail("written back, parses differently", text);
  for (int i = 0; i < na; i++)
    if (a[i].name != b[i].name || a[i].extent != b[i].extent)
      fail("written back, parses differently", text);
}

static void bytes(const char *text) {
  int64_t v;
  if (!cli_parse_bytes(&v, text, "--max-memory") && !in_range(v))
    fail("byte count out of range", text);
}

static void rule(const char *text) {
  rp_rule r;
  if (rp_rule_parse(&r, text)) return;
  if (!r.from || !r.to || !*r.glob || strncmp(text, r.glob, strlen(r.glob)) ||
      r.rank < 0 || r.rank > RELAYOUT_MAX_DIMS)
    fail("rule parsed into something else", text);
  rp_rule_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char text[1024];
  if (size < 1 || size > sizeof text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = 0;
  void (*const parsers[4])(const char *) = {shape, dims, bytes, rule};
  parsers[data[0] % 4](text);
  return 0;
}
