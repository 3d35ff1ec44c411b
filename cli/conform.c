/* conform.c - relayout conform: a matrix of conversions on a device, each
 * output compared byte for byte with the reference's (or another
 * device's), with a verdict per case, a table, JUnit and JSON */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: relayout conform --device D [--against ref|D2] [--quick|--full]\n"
    "                        [--formats F,F,...] [--dtypes T,T,...]\n"
    "                        [--shapes N] [--seed N] [--case CASE]\n"
    "                        [--junit FILE] [--json FILE]\n"
    "\n"
    "Runs every ordered pair of the formats of one family of logical dims\n"
    "(NCHW: NCHW NHWC HWCN CHWN NC1HWC0 FRACTAL_Z NCHW4 NCHW32 CHWN4 4N 2N\n"
    "nChw8c nChw16c; MN: MN NM ND FRACTAL_NZ ND_ALIGN; NCDHW: NCDHW NDHWC\n"
    "NDC1HWC0 FRACTAL_Z_3D) at odd extents on device D, each case on its own\n"
    "kernel, into a poisoned buffer, and compares the output with the\n"
    "reference's (or with D2's) byte for byte, padding included. A case is\n"
    "pass, fail (its first differing elements: logical coordinate or\n"
    "padding, expected and actual bits, and the command that reruns it) or\n"
    "skip (with why). Exit 1 on any failure.\n"
    "  --quick     the NCHW family in f16 and i8, one shape per pair\n"
    "  (default)   every family in u8 f16 f32 f64 u4, two shapes\n"
    "  --full      every dtype, three shapes\n"
    "  --formats   only pairs of these formats; --dtypes only these dtypes\n"
    "  --shapes N  shapes per pair and dtype; --seed N picks other ones\n"
    "  --case 'SRC->DST DTYPE AxBxC'  one case, as a failure prints it\n"
    "  --junit FILE, --json FILE  every case, for CI (JUnit XML) or tools\n";

static const char *const family_nchw[] = {
    "NCHW",   "NHWC",  "HWCN", "CHWN", "NC1HWC0", "FRACTAL_Z", "NCHW4",
    "NCHW32", "CHWN4", "4N",   "2N",   "nChw8c",  "nChw16c",   NULL};
static const char *const family_mn[] = {"MN",         "NM",       "ND",
                                        "FRACTAL_NZ", "ND_ALIGN", NULL};
static const char *const family_ncdhw[] = {"NCDHW", "NDHWC", "NDC1HWC0",
                                           "FRACTAL_Z_3D", NULL};
static const struct {
  const char *name;
  const char *const *formats;
  int rank;
} families[] = {
    {"NCHW", family_nchw, 4}, {"MN", family_mn, 2}, {"NCDHW", family_ncdhw, 5}};
enum { NFAMILIES = 3 };

/* One run's settings, and its tallies per family and dtype. */
typedef struct conform {
  relayout_engine *engine, *against; /* against NULL: the reference */
  const char *device, *device_arg, *against_name; /* device: its name */
  uint64_t seed;
  int shapes, plant, ncases;
  int tally[NFAMILIES][RELAYOUT_DTYPE_COUNT][3]; /* pass, fail, skip */
  json_t *cases;
  int tty;
} conform;

enum { PASS, FAIL, SKIP };
static const char *const verdicts[] = {"pass", "fail", "skip"};

static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* A case's input bytes: from the seed and the case's text alone, so that
 * --case reruns it exactly. */
static void fill(unsigned char *p, int64_t n, uint64_t seed, const char *text) {
  uint64_t s = seed;
  for (const char *c = text; *c; c++) s = s * 131 + (unsigned char)*c;
  for (int64_t i = 0; i < n; i++) p[i] = (unsigned char)mix(&s);
}

/* The output of a plan of e on src into a buffer poisoned with 0xA5; the
 * plan's own kernel waited for. NULL (why filled) when it cannot run. */
static unsigned char *run_on(relayout_engine *e, const relayout_desc *d,
                             const relayout_desc *s, const unsigned char *in,
                             int64_t sb, int64_t db, relayout_error *why) {
  unsigned char *out = cli_alloc_aligned((size_t)db + 1);
  relayout_plan *p = NULL;
  if (!out) {
    snprintf(why->message, sizeof why->message, "out of memory");
    return NULL;
  }
  memset(out, 0xA5, (size_t)db);
  if (relayout_plan_create(&p, e, d, s, why) || relayout_plan_wait(p, why) ||
      relayout_plan_run(p, out, (size_t)db, in, (size_t)sb, why)) {
    relayout_plan_free(p);
    free(out);
    return NULL;
  }
  if (*relayout_plan_note(p)) /* fell back: not the device's output */
    snprintf(why->message, sizeof why->message, "%s", relayout_plan_note(p));
  relayout_plan_free(p);
  if (*why->message) {
    free(out);
    return NULL;
  }
  return out;
}

/* Test-only: the device's output of case number `plant` gets one padding
 * element changed, as a kernel that wrote padding wrong would leave it
 * (RELAYOUT_CONFORM_PLANT; how the tests see conform catch a bug). */
static void plant(unsigned char *out, const relayout_desc *d) {
  int bits = relayout_dtype_bits(relayout_desc_dtype(d));
  for (int64_t e = 0; e < relayout_desc_span(d); e++) {
    int pad = 0;
    relayout_desc_is_padding(&pad, d, e, NULL);
    if (pad) {
      out[bits == 4 ? e >> 1 : e * (bits / 8)] ^= 0x5A;
      return;
    }
  }
}

/* One case, SRC->DST DTYPE SHAPE: its verdict, recorded. */
static int one_case(conform *c, int family, const char *src, const char *dst,
                    relayout_dtype t, const int64_t *ext, int rank) {
  char text[160], shape[64] = "";
  size_t at = 0;
  for (int i = 0; i < rank; i++)
    at += (size_t)snprintf(shape + at, sizeof shape - at, "%s%lld",
                           i ? "x" : "", (long long)ext[i]);
  snprintf(text, sizeof text, "%s->%s %s %s", src, dst, relayout_dtype_name(t),
           shape);
  relayout_layout *a = NULL, *b = NULL;
  relayout_desc s, d;
  relayout_error why = {""};
  unsigned char *in = NULL, *want = NULL, *got = NULL;
  int64_t sb = 0, db = 0;
  int verdict = SKIP;
  char *details = NULL;
  size_t details_len = 0;
  FILE *f = open_memstream(&details, &details_len);
  if (relayout_layout_parse(&a, src, &why) ||
      relayout_layout_parse(&b, dst, &why) ||
      relayout_bind_extents(&s, &d, a, b, t, rank, ext, &why)) {
    fprintf(f, "does not bind: %s", why.message);
    goto done;
  }
  relayout_desc_size_bytes(&sb, &s, NULL);
  relayout_desc_size_bytes(&db, &d, NULL);
  if (!(in = malloc((size_t)sb + 1))) {
    fprintf(f, "out of memory");
    goto done;
  }
  fill(in, sb, c->seed, text);
  why.message[0] = 0;
  if (!(got = run_on(c->engine, &d, &s, in, sb, db, &why))) {
    fprintf(f, "%s cannot run it: %s", c->device, why.message);
    goto done;
  }
  if (c->against) {
    want = run_on(c->against, &d, &s, in, sb, db, &why);
  } else if ((want = malloc((size_t)db + 1)) &&
             relayout_convert_ref(&d, want, (size_t)db, &s, in, (size_t)sb,
                                  &why)) {
    free(want);
    want = NULL;
  }
  if (!want) {
    fprintf(f, "%s cannot run it: %s", c->against_name, why.message);
    goto done;
  }
  if (c->plant == c->ncases + 1) plant(got, &d);
  cli_diff r;
  if (cli_diff_find(&r, want, got, &d, 5)) {
    fprintf(f, "out of memory");
    goto done;
  }
  verdict = r.count ? FAIL : PASS;
  if (r.count) {
    fprintf(f,
            "differs from %s in %lld of %lld elements (%lld data, %lld "
            "padding):\n",
            c->against_name, (long long)r.count, (long long)r.span,
            (long long)(r.count - r.in_padding), (long long)r.in_padding);
    cli_diff_print(f, &r, want, got, &d);
    fprintf(f,
            "  rerun: relayout conform --device %s --against %s --seed "
            "%llu --case '%s'",
            c->device_arg, c->against_name, (unsigned long long)c->seed, text);
  }
  cli_diff_free(&r);
done:
  fclose(f);
  c->ncases++;
  c->tally[family][t][verdict]++;
  if (verdict != PASS)
    printf("%s %s: %s\n", verdict == FAIL ? "FAIL" : "SKIP", text, details);
  json_array_append_new(c->cases,
                        json_pack("{s:s, s:s, s:s}", "case", text, "verdict",
                                  verdicts[verdict], "details", details));
  if (c->tty) fprintf(stderr, "\rconform: %d cases", c->ncases);
  free(details);
  free(in);
  free(want);
  free(got);
  relayout_layout_free(a);
  relayout_layout_free(b);
  return verdict;
}

/* Whether name is in the comma-separated list (NULL: every name is). */
static int listed(const char *list, const char *name) {
  if (!list) return 1;
  size_t n = strlen(name);
  for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : 0)
    if (!strncmp(p, name, n) && (p[n] == ',' || !p[n])) return 1;
  return 0;
}

/* Odd extents for a pair: 1, primes, one under, at and over blocks of 16
 * and 32, a product of at most 2^17 elements. */
static void pick_extents(int64_t *ext, int rank, uint64_t *s) {
  static const int64_t edge[] = {1, 2, 3, 5, 15, 16, 17, 31, 33};
  int64_t total;
  do {
    total = 1;
    for (int i = 0; i < rank; i++) total *= ext[i] = edge[mix(s) % 9];
  } while (total > (1 << 17));
}

/* The cases as JUnit XML, into f. */
static void junit(const conform *c, FILE *f) {
  int fails = 0, skips = 0;
  size_t i;
  json_t *v;
  json_array_foreach(c->cases, i, v) {
    const char *verdict = json_string_value(json_object_get(v, "verdict"));
    fails += !strcmp(verdict, "fail");
    skips += !strcmp(verdict, "skip");
  }
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<testsuite name=\"relayout conform %s\" tests=\"%d\" "
          "failures=\"%d\" skipped=\"%d\">\n",
          c->device, c->ncases, fails, skips);
  json_array_foreach(c->cases, i, v) {
    const char *name = json_string_value(json_object_get(v, "case"));
    const char *verdict = json_string_value(json_object_get(v, "verdict"));
    const char *details = json_string_value(json_object_get(v, "details"));
    fprintf(f, "  <testcase classname=\"conform\" name=\"");
    for (const char *p = name; *p; p++)
      fputs(*p == '>'   ? "&gt;"
            : *p == '<' ? "&lt;"
            : *p == '&' ? "&amp;"
                        : (char[]){*p, 0},
            f);
    fputs("\"", f);
    if (!strcmp(verdict, "pass")) {
      fputs("/>\n", f);
      continue;
    }
    fprintf(f, ">\n    <%s message=\"",
            !strcmp(verdict, "fail") ? "failure" : "skipped");
    for (const char *p = details; *p; p++)
      fputs(*p == '"'    ? "&quot;"
            : *p == '<'  ? "&lt;"
            : *p == '>'  ? "&gt;"
            : *p == '&'  ? "&amp;"
            : *p == '\n' ? "&#10;"
                         : (char[]){*p, 0},
            f);
    fprintf(f, "\"/>\n  </testcase>\n");
  }
  fputs("</testsuite>\n", f);
}

/* A report written whole or not at all (as every output of the command:
 * cli_out), its path checked before the matrix ran: the exit code. */
static int write_report(cli_out *o, const conform *c, int xml) {
  char *text = NULL;
  size_t len = 0;
  if (xml) {
    FILE *f = open_memstream(&text, &len);
    if (f) {
      junit(c, f);
      fclose(f);
    }
  } else if ((text = json_dumps(c->cases, JSON_INDENT(1)))) {
    len = strlen(text);
  }
  relayout_error err;
  int rc = !text ? cli_error(EXIT_WORK, "conform", "out of memory")
           : cli_out_whole(o, NULL, 0, text, len, &err)
               ? cli_error(EXIT_WORK, "conform", "%s", err.message)
               : 0;
  free(text);
  return rc;
}

/* The table: per family and dtype, cases passed, failed, skipped. */
static int summary(const conform *c) {
  int fails = 0;
  printf("%-7s %-5s %6s %6s %6s\n", "family", "dtype", "pass", "fail", "skip");
  for (int f = 0; f < NFAMILIES; f++)
    for (int t = 0; t < RELAYOUT_DTYPE_COUNT; t++) {
      const int *n = c->tally[f][t];
      if (n[0] + n[1] + n[2])
        printf("%-7s %-5s %6d %6d %6d\n", families[f].name,
               relayout_dtype_name((relayout_dtype)t), n[0], n[1], n[2]);
      fails += n[1];
    }
  printf("%d cases on %s against %s: %s\n", c->ncases, c->device,
         c->against_name, fails ? "FAILED" : "every one passed or skipped");
  return fails;
}

/* --case 'SRC->DST DTYPE AxBxC': the one case. */
static int rerun(conform *c, const char *text) {
  char src[64], dst[64], dt[16], shape[64];
  const char *arrow = strstr(text, "->");
  relayout_dtype t;
  int64_t ext[RELAYOUT_MAX_DIMS];
  int rank;
  if (!arrow || (size_t)(arrow - text) >= sizeof src ||
      sscanf(arrow + 2, "%63s %15s %63s", dst, dt, shape) != 3 ||
      relayout_dtype_from_name(&t, dt, NULL) ||
      cli_parse_shape(ext, &rank, shape))
    return cli_error(EXIT_USAGE, "conform",
                     "--case '%s': expected 'SRC->DST DTYPE AxBxC'", text);
  memcpy(src, text, (size_t)(arrow - text));
  src[arrow - text] = 0;
  int v = one_case(c, 0, src, dst, t, ext, rank);
  printf("%s %s\n", verdicts[v], text);
  return v == FAIL;
}

int cmd_conform(int argc, char **argv) {
  cli_opt opts[] = {{.name = "device"},
                    {.name = "against"},
                    {.name = "quick", .is_flag = 1},
                    {.name = "full", .is_flag = 1},
                    {.name = "formats"},
                    {.name = "dtypes"},
                    {.name = "shapes"},
                    {.name = "seed"},
                    {.name = "case"},
                    {.name = "junit"},
                    {.name = "json"},
                    {0}};
  const char *pos[1];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 0, &npos, "conform", usage)))
    return rc < 0 ? 0 : rc;
  int quick = cli_get(opts, "quick") != NULL, full = !!cli_get(opts, "full");
  if (!cli_get(opts, "device"))
    return cli_error(EXIT_USAGE, "conform", "needs --device\n%s", usage);
  if (quick && full)
    return cli_error(EXIT_USAGE, "conform", "--quick or --full, not both");
  conform c = {.device = cli_get(opts, "device"),
               .device_arg = cli_get(opts, "device"),
               .against_name =
                   cli_get(opts, "against") ? cli_get(opts, "against") : "ref",
               .seed = 1,
               .shapes = quick  ? 1
                         : full ? 3
                                : 2,
               .tty = isatty(2)};
  int64_t v;
  if (cli_get(opts, "shapes")) {
    if (cli_parse_int(&v, cli_get(opts, "shapes"), "--shapes") || v > 100)
      return cli_error(EXIT_USAGE, "conform", "--shapes takes 1 to 100");
    c.shapes = (int)v;
  }
  if (cli_get(opts, "seed")) {
    if (cli_parse_int(&v, cli_get(opts, "seed"), "--seed")) return EXIT_USAGE;
    c.seed = (uint64_t)v;
  }
  const char *plant_at = getenv("RELAYOUT_CONFORM_PLANT");
  c.plant = plant_at ? atoi(plant_at) : 0;
  const char *dtypes = cli_get(opts, "dtypes");
  if (!dtypes) dtypes = quick ? "f16,i8" : full ? NULL : "u8,f16,f32,f64,u4";
  for (const char *p = dtypes; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : 0) {
    char name[16];
    relayout_dtype t;
    relayout_error err;
    snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
    if (relayout_dtype_from_name(&t, name, &err))
      return cli_error(EXIT_USAGE, "conform", "--dtypes: %s", err.message);
  }
  cli_out junit_out, json_out;
  relayout_error err;
  const char *reports[2] = {cli_get(opts, "junit"), cli_get(opts, "json")};
  cli_out *outs[2] = {&junit_out, &json_out};
  for (int i = 0; i < 2; i++)
    if (reports[i] && cli_out_check(outs[i], reports[i], 1, &err))
      return cli_error(EXIT_WORK, "conform", "%s", err.message);
  if ((rc = cli_engine(&c.engine, c.device, "conform"))) return rc;
  if (strcmp(c.against_name, "ref") &&
      (rc = cli_engine(&c.against, c.against_name, "conform"))) {
    relayout_engine_free(c.engine);
    return rc;
  }
  c.device = relayout_engine_device(c.engine);
  c.cases = json_array();
  const char *formats = cli_get(opts, "formats");
  if (cli_get(opts, "case")) {
    rc = rerun(&c, cli_get(opts, "case"));
  } else {
    for (int f = 0; f < (quick ? 1 : NFAMILIES); f++)
      for (int t = 0; t < RELAYOUT_DTYPE_COUNT; t++) {
        if (!listed(dtypes, relayout_dtype_name((relayout_dtype)t))) continue;
        uint64_t s = c.seed * 1000 + (uint64_t)(f * 100 + t);
        const char *const *list = families[f].formats;
        for (int i = 0; list[i]; i++)
          for (int j = 0; list[j]; j++) {
            if (i == j || !listed(formats, list[i]) ||
                !listed(formats, list[j]))
              continue;
            for (int k = 0; k < c.shapes; k++) {
              int64_t ext[5];
              pick_extents(ext, families[f].rank, &s);
              one_case(&c, f, list[i], list[j], (relayout_dtype)t, ext,
                       families[f].rank);
            }
          }
      }
    if (c.tty) fputc('\n', stderr);
    rc = summary(&c) ? EXIT_WORK : 0;
  }
  int wrc = 0;
  if (cli_get(opts, "junit")) wrc = write_report(&junit_out, &c, 1);
  if (cli_get(opts, "json") && !wrc) wrc = write_report(&json_out, &c, 0);
  if (wrc) rc = wrc;
  json_decref(c.cases);
  relayout_engine_free(c.against);
  relayout_engine_free(c.engine);
  return rc;
}
