/* fuzz_args.c - libFuzzer target: the command line's values
 *
 * The first byte picks the parser (modulo 8: --shape, --dims, a byte count
 * such as --max-memory's, a repack --rule, --scale, --zero-point, --part,
 * --device's list); the rest, up to a NUL, is the text. A rejection prints its
 * message, as on the command line, and is clean when the sanitizers say so.
 * What a parser accepts must hold:
 * - --shape: 1 to 12 extents in [1, 2^62], which written back as AxBxC
 *   parse to the same;
 * - --dims: 1 to 12 upper-case letters with extents in [1, 2^62], which
 *   written back as N=2,C=3 parse to the same;
 * - a byte count: in [1, 2^62];
 * - a rule: both layouts parsed, the glob a non-empty prefix of the text,
 *   the rank 0 to 12, a per-channel dim (an upper-case letter or '0' plus
 *   an ND index) only on a rule quantizing to i8;
 * - a scale: positive and finite; a zero point: within a million of 0,
 *   written back the same;
 * - --part: 0 <= I < N <= 100000, written back as I/N the same (auto, from
 *   the environment, only where a launcher's variables are set);
 * - --device's list: items that joined with commas give the text back,
 *   none empty in a list.
 */
#include "cli.h"
#include "repack.h"

#include <math.h>
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

/* --dims (named) or --shape into letters and extents; -1 when rejected. */
static int parse_extents(int named, const char *text, char *names,
                         int64_t *ext) {
  relayout_dim_value d[RELAYOUT_MAX_DIMS];
  int n;
  if (named ? cli_parse_dims(d, &n, text) : cli_parse_shape(ext, &n, text))
    return -1;
  for (int i = 0; named && i < n; i++) {
    names[i] = d[i].name;
    ext[i] = d[i].extent;
  }
  return n;
}

static void extents(int named, const char *text) {
  char na[RELAYOUT_MAX_DIMS] = {0}, nb[RELAYOUT_MAX_DIMS] = {0};
  int64_t a[RELAYOUT_MAX_DIMS], b[RELAYOUT_MAX_DIMS];
  int n = parse_extents(named, text, na, a);
  if (n < 0) return;
  if (n < 1 || n > RELAYOUT_MAX_DIMS) fail("count out of range", text);
  char again[512];
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    if (!in_range(a[i]) || (named && (na[i] < 'A' || na[i] > 'Z')))
      fail("dim out of range", text);
    if (named)
      at += (size_t)snprintf(again + at, sizeof again - at, "%s%c=%lld",
                             i ? "," : "", na[i], (long long)a[i]);
    else
      at += (size_t)snprintf(again + at, sizeof again - at, "%s%lld",
                             i ? "x" : "", (long long)a[i]);
  }
  if (parse_extents(named, again, nb, b) != n ||
      memcmp(a, b, (size_t)n * sizeof a[0]) || memcmp(na, nb, sizeof na))
    fail("written back, parses differently", text);
}

static void shape(const char *text) { extents(0, text); }
static void dims(const char *text) { extents(1, text); }

static void bytes(const char *text) {
  int64_t v;
  if (!cli_parse_bytes(&v, text, "--max-memory") && !in_range(v))
    fail("byte count out of range", text);
}

static void rule(const char *text) {
  rp_rule r;
  if (rp_rule_parse(&r, text)) return;
  if (!r.from || !r.to || !*r.glob || strncmp(text, r.glob, strlen(r.glob)) ||
      r.rank < 0 || r.rank > RELAYOUT_MAX_DIMS ||
      (r.axis && !(r.cast && r.dtype == RELAYOUT_I8 &&
                   ((r.axis >= 'A' && r.axis <= 'Z') ||
                    (r.axis >= '0' && r.axis < '0' + RELAYOUT_MAX_DIMS)))))
    fail("rule parsed into something else", text);
  rp_rule_free(&r);
}

static void scale(const char *text) {
  float v;
  if (!cli_parse_scale(&v, text, "--scale", "convert") &&
      !(v > 0 && isfinite(v)))
    fail("scale not positive and finite", text);
}

static void zero_point(const char *text) {
  int32_t v;
  char again[16];
  if (cli_parse_zero_point(&v, text, "--zero-point", "convert")) return;
  snprintf(again, sizeof again, "%d", (int)v);
  int32_t w = 0;
  if (v < -1000000 || v > 1000000 ||
      cli_parse_zero_point(&w, again, "--zero-point", "convert") || w != v)
    fail("zero point out of range, or parsed differently", text);
}

static void part(const char *text) {
  int i, n, j = -1, m = -1;
  char again[32];
  if (cli_parse_part(&i, &n, text, "repack")) return;
  snprintf(again, sizeof again, "%d/%d", i, n);
  if (i < 0 || i >= n || n > 100000 ||
      cli_parse_part(&j, &m, again, "repack") || j != i || m != n)
    fail("part out of range, or parsed differently", text);
}

static void devices(const char *text) {
  char **items, joined[1100] = "";
  int n;
  if (cli_parse_device_list(&items, &n, text, "bench")) return;
  for (int i = 0; i < n; i++) {
    if (!*items[i] && n > 1) fail("an empty item in a list", text);
    snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s",
             i ? "," : "", items[i]);
  }
  if (n < 1 || strcmp(joined, text)) fail("items are not the list", text);
  cli_device_items_free(items, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char text[1024];
  if (size < 1 || size > sizeof text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = 0;
  void (*const parsers[8])(const char *) = {shape, dims,       bytes, rule,
                                            scale, zero_point, part,  devices};
  parsers[data[0] % 8](text);
  return 0;
}
