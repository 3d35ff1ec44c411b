/* cases.c - relayout conform's cases: named, bound, filled, run on a
 * device into a poisoned buffer against the reference (or another device,
 * or a corpus's expected output), tallied, and reported as a table, JUnit
 * and JSON */
#include "conform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const cf_verdicts[3] = {"pass", "fail", "skip"};

uint64_t cf_mix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void cf_fill(unsigned char *p, int64_t n, uint64_t seed, const char *text) {
  uint64_t s = seed;
  for (const char *c = text; *c; c++) s = s * 131 + (unsigned char)*c;
  for (int64_t i = 0; i < n; i++) p[i] = (unsigned char)cf_mix(&s);
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
cf_tally *cf_tally_of(conform *c, const char *group, const char *types) {
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

/* Cases done and failed: on a terminal a line rewritten each case, else a
 * line every ten seconds (a long matrix in CI is not silent). */
static void progress(conform *c) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
  int fails = 0;
  for (int i = 0; i < c->ntallies; i++) fails += c->tallies[i].n[CF_FAIL];
  if (c->tty)
    fprintf(stderr, "\rconform: %d cases, %d failed", c->ncases, fails);
  else if (now - c->last_progress >= 10) {
    if (c->last_progress > 0)
      fprintf(stderr, "conform: %d cases, %d failed\n", c->ncases, fails);
    c->last_progress = now;
  }
}

void cf_record(conform *c, int64_t index, const char *group, const cf_case *k,
               int verdict, const char *details) {
  c->ncases++;
  cf_tally_of(c, group, k->types)->n[verdict]++;
  if (verdict != CF_PASS)
    printf("%s %s: %s\n", verdict == CF_FAIL ? "FAIL" : "SKIP", k->text,
           details);
  json_array_append_new(c->cases,
                        json_pack("{s:I, s:s, s:s, s:s, s:s, s:s}", "index",
                                  (json_int_t)index, "group", group, "types",
                                  k->types, "case", k->text, "verdict",
                                  cf_verdicts[verdict], "details", details));
  progress(c);
}

int cf_run(conform *c, const char *group, const cf_case *k,
           const unsigned char *in, const unsigned char *want) {
  char *details = NULL;
  int verdict = cf_check(c, c->engine, c->against, c->device, c->device_arg, k,
                         in, want, c->plant == c->ncases + 1, &details);
  cf_record(c, c->seen - 1, group, k, verdict,
            details ? details : "out of memory");
  free(details);
  return verdict;
}

int cf_check(const conform *c, relayout_engine *e, relayout_engine *against,
             const char *device, const char *rerun_device, const cf_case *k,
             const unsigned char *in_given, const unsigned char *want_given,
             int planted, char **details_out) {
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
  if (!(got = run_on(e, &d, &s, input, sb, db, &why))) {
    fprintf(f, "%s cannot run it: %s", device, why.message);
    goto done;
  }
  if (!want_given && against) {
    want = run_on(against, &d, &s, input, sb, db, &why);
  } else if (!want_given && (want = malloc((size_t)db + 1)) &&
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
  if (planted) plant(got, &d);
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
              rerun_device, c->against_name, (unsigned long long)c->seed,
              k->text);
  }
  cli_diff_free(&r);
done:
  fclose(f);
  *details_out = details;
  free(in);
  free(want);
  free(got);
  relayout_layout_free(a);
  relayout_layout_free(b);
  return verdict;
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
          "failures=\"%d\" skipped=\"%d\">\n"
          "  <properties><property name=\"complete\" value=\"%s\"/>"
          "</properties>\n",
          c->device, c->ncases, fails, skips,
          c->interrupted ? "false: interrupted" : "true");
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
  } else {
    json_t *r = json_pack("{s:s, s:s, s:s, s:[i,i], s:I, s:b, s:O}", "device",
                          c->device, "against", c->against_name, "matrix",
                          c->matrix, "part", c->part, c->parts, "matrix_cases",
                          (json_int_t)c->seen, "complete", !c->interrupted,
                          "cases", c->cases);
    if (r && (text = json_dumps(r, JSON_INDENT(1)))) len = strlen(text);
    json_decref(r);
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
  int fails = 0, skips = 0;
  printf("%-7s %-22s %6s %6s %6s\n", "family", "types", "pass", "fail", "skip");
  for (int i = 0; i < c->ntallies; i++) {
    const cf_tally *t = &c->tallies[i];
    printf("%-7s %-22s %6d %6d %6d\n", t->group, t->types, t->n[0], t->n[1],
           t->n[2]);
    fails += t->n[1];
    skips += t->n[2];
  }
  if (c->skips_fail) fails += skips;
  printf("%d cases on %s against %s: %s\n", c->ncases, c->device,
         c->against_name,
         !c->ncases ? "FAILED: no case ran, nothing was checked"
         : fails    ? "FAILED"
         : skips    ? "every one passed or skipped"
                    : "every one passed");
  fflush(stdout);
  if (!c->ncases)
    cli_error(EXIT_WORK, "conform", "no case ran: nothing was checked");
  if (c->skips_fail && skips)
    cli_error(EXIT_WORK, "conform",
              "%d case%s of the corpus skipped, counted as failures: a "
              "corpus case that does not run here (--allow-skips accepts "
              "them)",
              skips, skips == 1 ? "" : "s");
  return fails || !c->ncases;
}

int cf_finish(conform *c, cli_out *junit_out, cli_out *json_out, int table) {
  if (c->tty && table) fputc('\n', stderr);
  int rc = table && summary(c) ? EXIT_WORK : 0, wrc = 0;
  if (junit_out) wrc = write_report(junit_out, c, 1);
  if (json_out && !wrc) wrc = write_report(json_out, c, 0);
  return wrc ? wrc : rc;
}
