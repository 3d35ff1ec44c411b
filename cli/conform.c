/* conform.c - relayout conform: a matrix of conversions on a device, each
 * output compared byte for byte with the reference's (or another
 * device's), with a verdict per case, a table, JUnit and JSON; the matrix
 * exported as a golden corpus, or a corpus run (corpus.c) */
#include "conform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: relayout conform --device D [--against ref|D2] [--quick|--full]\n"
    "                        [--formats F,F,...] [--dtypes T,T,...]\n"
    "                        [--shapes N] [--seed N] [--case CASE]\n"
    "                        [--junit FILE] [--json FILE]\n"
    "       relayout conform --export DIR [--quick|--full] [--formats ...]\n"
    "                        [--dtypes ...] [--shapes N] [--seed N]\n"
    "       relayout conform --import DIR --device D [--junit F] [--json F]\n"
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
    "  --quick     the NCHW family in f16 and i8, and casts f32->f16 and\n"
    "              f32->i8:0.05:-3 in turn on every fourth pair; one shape\n"
    "  (default)   every family in u8 f16 f32 f64 u4, and seven casts in\n"
    "              turn on every second pair; two shapes\n"
    "  --full      every dtype, every cast on every pair, three shapes\n"
    "  --formats   only pairs of these formats; --dtypes only these types:\n"
    "              a dtype, or a cast FROM->TO, a quantized side followed\n"
    "              by :SCALE:ZERO_POINT (u8:0.25:128->f32)\n"
    "  --shapes N  shapes per pair and type; --seed N picks other ones\n"
    "  --case 'SRC->DST TYPES AxBxC'  one case, as a failure prints it\n"
    "  --junit FILE, --json FILE  every case, for CI (JUnit XML) or tools\n"
    "  --export DIR  writes the matrix and the seeds' worked examples as a\n"
    "              golden corpus into DIR (new): inputs and the reference's\n"
    "              outputs as .npy files, manifest.json, README\n"
    "  --import DIR  runs a corpus on D against its expected outputs\n";

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

static const char *const verdicts[] = {"pass", "fail", "skip"};

static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void cf_fill(unsigned char *p, int64_t n, uint64_t seed, const char *text) {
  uint64_t s = seed;
  for (const char *c = text; *c; c++) s = s * 131 + (unsigned char)*c;
  for (int64_t i = 0; i < n; i++) p[i] = (unsigned char)mix(&s);
}

/* One side of TYPES: NAME, or NAME:SCALE:ZERO_POINT. */
static int parse_side(cf_side *x, const char *text, size_t len,
                      const char *cmd) {
  char buf[64], *colon;
  relayout_error err;
  if (len >= sizeof buf)
    return cli_error(EXIT_USAGE, cmd, "'%.*s': too long", (int)len, text);
  memcpy(buf, text, len);
  buf[len] = 0;
  *x = (cf_side){0};
  if ((colon = strchr(buf, ':'))) {
    char *zp = strchr(colon + 1, ':');
    *colon = 0;
    if (!zp)
      return cli_error(EXIT_USAGE, cmd,
                       "'%.*s': expected NAME:SCALE:ZERO_POINT", (int)len,
                       text);
    *zp++ = 0;
    x->quantized = 1;
    if (cli_parse_scale(&x->q.scale, colon + 1, "a scale", cmd) ||
        cli_parse_zero_point(&x->q.zero_point, zp, "a zero point", cmd))
      return EXIT_USAGE;
  }
  if (relayout_dtype_from_name(&x->t, buf, &err))
    return cli_error(EXIT_USAGE, cmd, "'%s': %s", buf, err.message);
  return 0;
}

int cf_parse_types(cf_case *k, const char *types, const char *cmd) {
  const char *arrow = strstr(types, "->");
  size_t n = strlen(types);
  if (n >= sizeof k->types)
    return cli_error(EXIT_USAGE, cmd, "'%s': too long", types);
  memcpy(k->types, types, n + 1);
  if (!arrow) {
    if (parse_side(&k->s, types, n, cmd)) return EXIT_USAGE;
    k->d = k->s;
    return 0;
  }
  return parse_side(&k->s, types, (size_t)(arrow - types), cmd) ||
                 parse_side(&k->d, arrow + 2, strlen(arrow + 2), cmd)
             ? EXIT_USAGE
             : 0;
}

void cf_name(cf_case *k) {
  char shape[160] = "";
  size_t at = 0;
  for (int i = 0; i < k->rank && at < sizeof shape; i++)
    at += (size_t)snprintf(shape + at, sizeof shape - at, "%s%lld",
                           i ? "x" : "", (long long)k->ext[i]);
  snprintf(k->text, sizeof k->text, "%s->%s %s %s", k->from, k->to, k->types,
           shape);
}

int cf_bind(const cf_case *k, relayout_layout **a, relayout_layout **b,
            relayout_desc *s, relayout_desc *d, relayout_error *why) {
  *a = *b = NULL;
  return relayout_layout_parse(a, k->from, why) ||
         relayout_layout_parse(b, k->to, why) ||
         relayout_bind_extents(s, d, *a, *b, k->s.t, k->rank, k->ext, why) ||
         (k->s.quantized &&
          relayout_desc_retype(s, *a, k->s.t, &k->s.q, why)) ||
         ((k->d.t != k->s.t || k->d.quantized) &&
          relayout_desc_retype(d, *b, k->d.t, k->d.quantized ? &k->d.q : NULL,
                               why));
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

/* The tally of group and types, added where new (the last one when full). */
static cf_tally *tally(conform *c, const char *group, const char *types) {
  for (int i = 0; i < c->ntallies; i++)
    if (!strcmp(c->tallies[i].group, group) &&
        !strcmp(c->tallies[i].types, types))
      return &c->tallies[i];
  int max = (int)(sizeof c->tallies / sizeof c->tallies[0]);
  cf_tally *t = &c->tallies[c->ntallies < max ? c->ntallies++ : max - 1];
  snprintf(t->group, sizeof t->group, "%s", group);
  snprintf(t->types, sizeof t->types, "%s", types);
  return t;
}

int cf_run(conform *c, const char *group, const cf_case *k,
           const unsigned char *in_given, const unsigned char *want_given) {
  relayout_layout *a = NULL, *b = NULL;
  relayout_desc s, d;
  relayout_error why = {""};
  unsigned char *in = NULL, *want = NULL, *got = NULL;
  int64_t sb = 0, db = 0;
  int verdict = CF_SKIP;
  char *details = NULL;
  size_t details_len = 0;
  FILE *f = open_memstream(&details, &details_len);
  if (cf_bind(k, &a, &b, &s, &d, &why)) {
    fprintf(f, "does not bind: %s", why.message);
    goto done;
  }
  relayout_desc_size_bytes(&sb, &s, NULL);
  relayout_desc_size_bytes(&db, &d, NULL);
  if (!in_given) {
    if (!(in = malloc((size_t)sb + 1))) {
      fprintf(f, "out of memory");
      goto done;
    }
    cf_fill(in, sb, c->seed, k->text);
  }
  const unsigned char *input = in_given ? in_given : in;
  why.message[0] = 0;
  if (!(got = run_on(c->engine, &d, &s, input, sb, db, &why))) {
    fprintf(f, "%s cannot run it: %s", c->device, why.message);
    goto done;
  }
  if (want_given) {
  } else if (c->against) {
    want = run_on(c->against, &d, &s, input, sb, db, &why);
  } else if ((want = malloc((size_t)db + 1)) &&
             relayout_convert_ref(&d, want, (size_t)db, &s, input, (size_t)sb,
                                  &why)) {
    free(want);
    want = NULL;
  }
  const unsigned char *expected = want_given ? want_given : want;
  if (!expected) {
    fprintf(f, "%s cannot run it: %s", c->against_name, why.message);
    goto done;
  }
  if (c->plant == c->ncases + 1) plant(got, &d);
  cli_diff r;
  if (cli_diff_find(&r, expected, got, &d, 5)) {
    fprintf(f, "out of memory");
    goto done;
  }
  verdict = r.count ? CF_FAIL : CF_PASS;
  if (r.count) {
    fprintf(f,
            "differs from %s in %lld of %lld elements (%lld data, %lld "
            "padding):\n",
            c->against_name, (long long)r.count, (long long)r.span,
            (long long)(r.count - r.in_padding), (long long)r.in_padding);
    cli_diff_print(f, &r, expected, got, &d);
    if (!want_given)
      fprintf(f,
              "  rerun: relayout conform --device %s --against %s --seed "
              "%llu --case '%s'",
              c->device_arg, c->against_name, (unsigned long long)c->seed,
              k->text);
  }
  cli_diff_free(&r);
done:
  fclose(f);
  c->ncases++;
  tally(c, group, k->types)->n[verdict]++;
  if (verdict != CF_PASS)
    printf("%s %s: %s\n", verdict == CF_FAIL ? "FAIL" : "SKIP", k->text,
           details);
  json_array_append_new(c->cases,
                        json_pack("{s:s, s:s, s:s}", "case", k->text, "verdict",
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

/* The matrix's settings: which families, formats and types, how many
 * shapes, whether every cast goes on every pair, else one cast on every
 * `spread`-th pair, the casts in turn (a cast's kernel takes PoCL twice a
 * move's to compile). */
typedef struct matrix {
  const char *formats, *types;
  int families, shapes, every_cast, spread;
  uint64_t seed;
} matrix;

/* Each case of the matrix, to visit. */
static void enumerate(void *ctx, cf_visit *visit, void *visit_ctx) {
  const matrix *m = ctx;
  char item[64];
  int ncasts = 0;
  for (const char *p = m->types; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : 0)
    ncasts += strcspn(p, ",") > 0 && strstr(p, "->") &&
              strstr(p, "->") < p + strcspn(p, ",");
  for (int f = 0; f < m->families; f++) {
    int item_no = 0, cast_no = 0;
    for (const char *p = m->types; p;
         p = strchr(p, ',') ? strchr(p, ',') + 1 : 0, item_no++) {
      cf_case k = {.rank = families[f].rank};
      snprintf(item, sizeof item, "%.*s", (int)strcspn(p, ","), p);
      if (!*item || cf_parse_types(&k, item, "conform")) continue;
      int cast = strstr(item, "->") != NULL;
      uint64_t s = m->seed * 1000 + (uint64_t)(f * 100 + item_no);
      const char *const *list = families[f].formats;
      int pair = 0;
      for (int i = 0; list[i]; i++)
        for (int j = 0; list[j]; j++) {
          if (i == j || !listed(m->formats, list[i]) ||
              !listed(m->formats, list[j]))
            continue;
          int mine = !cast || m->every_cast ||
                     pair % (ncasts * m->spread) == cast_no * m->spread;
          pair++;
          if (!mine) continue;
          snprintf(k.from, sizeof k.from, "%s", list[i]);
          snprintf(k.to, sizeof k.to, "%s", list[j]);
          for (int n = 0; n < m->shapes; n++) {
            pick_extents(k.ext, k.rank, &s);
            cf_name(&k);
            visit(visit_ctx, families[f].name, &k);
          }
        }
      cast_no += cast;
    }
  }
}

static void run_case(void *ctx, const char *group, const cf_case *k) {
  cf_run(ctx, group, k, NULL, NULL);
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

/* The table: per group and types, cases passed, failed, skipped. */
static int summary(const conform *c) {
  int fails = 0;
  printf("%-7s %-22s %6s %6s %6s\n", "family", "types", "pass", "fail", "skip");
  for (int i = 0; i < c->ntallies; i++) {
    const cf_tally *t = &c->tallies[i];
    printf("%-7s %-22s %6d %6d %6d\n", t->group, t->types, t->n[0], t->n[1],
           t->n[2]);
    fails += t->n[1];
  }
  printf("%d cases on %s against %s: %s\n", c->ncases, c->device,
         c->against_name, fails ? "FAILED" : "every one passed or skipped");
  return fails;
}

int cf_finish(conform *c, cli_out *junit_out, cli_out *json_out, int table) {
  if (c->tty && table) fputc('\n', stderr);
  int rc = table && summary(c) ? EXIT_WORK : 0, wrc = 0;
  if (junit_out) wrc = write_report(junit_out, c, 1);
  if (json_out && !wrc) wrc = write_report(json_out, c, 0);
  return wrc ? wrc : rc;
}

/* --case 'SRC->DST TYPES AxBxC': the one case. */
static int rerun(conform *c, const char *text) {
  char dst[256], types[64], shape[160];
  const char *arrow = strstr(text, "->");
  cf_case k = {0};
  if (!arrow || (size_t)(arrow - text) >= sizeof k.from ||
      sscanf(arrow + 2, "%255s %63s %159s", dst, types, shape) != 3 ||
      cli_parse_shape(k.ext, &k.rank, shape))
    return cli_error(EXIT_USAGE, "conform",
                     "--case '%s': expected 'SRC->DST TYPES AxBxC'", text);
  if (cf_parse_types(&k, types, "conform")) return EXIT_USAGE;
  memcpy(k.from, text, (size_t)(arrow - text));
  snprintf(k.to, sizeof k.to, "%s", dst);
  cf_name(&k);
  int v = cf_run(c, "case", &k, NULL, NULL);
  printf("%s %s\n", verdicts[v], k.text);
  return v == CF_FAIL;
}

/* The types the mode runs where --dtypes does not say, into buf: the
 * mode's dtypes (--full: every one), then its casts. */
static const char *default_types(char *buf, size_t room, int quick, int full) {
  static const char casts[] =
      "f32->f16,f16->f32,f32->bf16,bf16->f16,f32->i8:0.05:-3,"
      "u8:0.25:128->f32,i8:0.5:0->u8:0.5:128";
  if (quick) return "f16,i8,f32->f16,f32->i8:0.05:-3";
  if (!full) {
    snprintf(buf, room, "u8,f16,f32,f64,u4,%s", casts);
    return buf;
  }
  size_t at = 0;
  for (int t = 0; t < RELAYOUT_DTYPE_COUNT && at < room; t++)
    at += (size_t)snprintf(buf + at, room - at, "%s,",
                           relayout_dtype_name((relayout_dtype)t));
  if (at < room) snprintf(buf + at, room - at, "%s", casts);
  return buf;
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
                    {.name = "export"},
                    {.name = "import"},
                    {0}};
  const char *pos[1];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 0, &npos, "conform", usage)))
    return rc < 0 ? 0 : rc;
  int quick = cli_get(opts, "quick") != NULL, full = !!cli_get(opts, "full");
  const char *export = cli_get(opts, "export"),
             *import = cli_get(opts, "import");
  if (export && (cli_get(opts, "device") || cli_get(opts, "against") ||
                 import || cli_get(opts, "case") || cli_get(opts, "junit") ||
                 cli_get(opts, "json")))
    return cli_error(EXIT_USAGE, "conform",
                     "--export takes the matrix's options only (the "
                     "reference computes the corpus)");
  if (import &&
      (quick || full || cli_get(opts, "formats") || cli_get(opts, "dtypes") ||
       cli_get(opts, "shapes") || cli_get(opts, "seed") ||
       cli_get(opts, "case") || cli_get(opts, "against")))
    return cli_error(EXIT_USAGE, "conform",
                     "--import runs the corpus as it is: --device, --junit "
                     "and --json only");
  if (!export && !cli_get(opts, "device"))
    return cli_error(EXIT_USAGE, "conform", "needs --device\n%s", usage);
  if (quick && full)
    return cli_error(EXIT_USAGE, "conform", "--quick or --full, not both");
  conform c = {.device = cli_get(opts, "device"),
               .device_arg = cli_get(opts, "device"),
               .against_name =
                   cli_get(opts, "against") ? cli_get(opts, "against") : "ref",
               .seed = 1,
               .tty = isatty(2)};
  char typebuf[512];
  matrix m = {.formats = cli_get(opts, "formats"),
              .types = cli_get(opts, "dtypes"),
              .families = quick ? 1 : NFAMILIES,
              .shapes = quick  ? 1
                        : full ? 3
                               : 2,
              .every_cast = full,
              .spread = quick ? 4 : 2};
  int64_t v;
  if (cli_get(opts, "shapes")) {
    if (cli_parse_int(&v, cli_get(opts, "shapes"), "--shapes") || v < 1 ||
        v > 100)
      return cli_error(EXIT_USAGE, "conform", "--shapes takes 1 to 100");
    m.shapes = (int)v;
  }
  if (cli_get(opts, "seed")) {
    if (cli_parse_int(&v, cli_get(opts, "seed"), "--seed")) return EXIT_USAGE;
    c.seed = (uint64_t)v;
  }
  m.seed = c.seed;
  const char *plant_at = getenv("RELAYOUT_CONFORM_PLANT");
  c.plant = plant_at ? atoi(plant_at) : 0;
  if (!m.types) m.types = default_types(typebuf, sizeof typebuf, quick, full);
  for (const char *p = m.types; p;
       p = strchr(p, ',') ? strchr(p, ',') + 1 : 0) {
    char item[64];
    cf_case k;
    snprintf(item, sizeof item, "%.*s", (int)strcspn(p, ","), p);
    if (cf_parse_types(&k, item, "conform --dtypes")) return EXIT_USAGE;
  }
  if (export) return cf_export(export, enumerate, &m, c.seed);
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
  int table = 1;
  if (cli_get(opts, "case")) {
    rc = rerun(&c, cli_get(opts, "case"));
    table = 0;
  } else if (import) {
    c.against_name = "the corpus";
    rc = cf_import(&c, import);
  } else {
    enumerate(&m, run_case, &c);
  }
  int frc = rc == EXIT_USAGE || (import && rc)
                ? 0
                : cf_finish(&c, reports[0] ? &junit_out : NULL,
                            reports[1] ? &json_out : NULL, table);
  if (frc) rc = frc;
  json_decref(c.cases);
  relayout_engine_free(c.against);
  relayout_engine_free(c.engine);
  return rc;
}
