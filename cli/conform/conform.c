/* conform.c - relayout conform: the matrix of conversions (format pairs,
 * types, odd shapes), run on a device case by case (cases.c), or exported
 * as a golden corpus, or a corpus run (corpus.c) */
#include "conform.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: relayout conform --device D [--against ref|D2] [--quick|--full]\n"
    "                        [--formats F,F,...] [--dtypes T,T,...]\n"
    "                        [--shapes N] [--seed N] [--case CASE]\n"
    "                        [--part I/N|auto] [--isolate] [--junit FILE]\n"
    "                        [--json FILE]\n"
    "       relayout conform --export DIR [--quick|--full] [--formats ...]\n"
    "                        [--dtypes ...] [--shapes N] [--seed N]\n"
    "       relayout conform --import DIR --device D [--junit F] [--json F]\n"
    "                        [--allow-skips]\n"
    "       relayout conform --merge PART.json... [--junit F] [--json F]\n"
    "\n"
    "Runs every ordered pair of the formats of one family of logical dims\n"
    "(NCHW: NCHW NHWC HWCN CHWN NC1HWC0 FRACTAL_Z NCHW4 NCHW32 CHWN4 4N 2N\n"
    "nChw8c nChw16c, a TPU layout at an offset, FRACTAL_Z_C04; MN: MN NM ND\n"
    "FRACTAL_NZ ND_ALIGN nN; NCDHW: NCDHW NDHWC NDC1HWC0 FRACTAL_Z_3D and\n"
    "grouped; BSND: BSND BNSD SBND BSH SBH; KN: KN ND FRACTAL_ZN\n"
    "FRACTAL_ZN_RNN; bias: ND ...N8n ND_RNN_BIAS) at odd extents (an even N\n"
    "where grouped, C at most 4 for C04, whole gates and K = input + hidden\n"
    "for the RNN formats) on device D, each case on its own\n"
    "kernel, into a poisoned buffer, and compares the output with the\n"
    "reference's (or with D2's) byte for byte, padding included. A case is\n"
    "pass, fail (its first differing elements: logical coordinate or\n"
    "padding, expected and actual bits, and the command that reruns it) or\n"
    "skip (with why). Exit 1 on any failure.\n"
    "  --device    all, or a list (0,2 or names): the matrix's cases spread\n"
    "              over those devices, a thread each taking the next case;\n"
    "              the reports are one run's, in the matrix's order\n"
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
    "  --import DIR  runs a corpus on D against its expected outputs; a\n"
    "              case that skips there fails unless --allow-skips\n"
    "  --part I/N  the matrix's cases whose index is I modulo N (neighbours\n"
    "              are alike, so each part covers every family and type):\n"
    "              a CI shard, or a machine of a fleet; auto: the rank and\n"
    "              size a launcher set (mpirun, srun, GitLab's parallel)\n"
    "  --isolate   each case in a child process: a case that crashes the\n"
    "              driver fails alone (its signal, and the command that\n"
    "              reruns it) and the matrix goes on\n"
    "  --merge     the parts' --json reports as one run: its table, exit\n"
    "              code, --junit and --json; parts of another matrix, a\n"
    "              case missing or in two parts, an interrupted part:\n"
    "              refused\n"
    "Progress goes to stderr: a line per case on a terminal, else a line\n"
    "every ten seconds. SIGINT or SIGTERM ends the matrix after the case\n"
    "under way; the reports then hold the cases done, marked incomplete.\n"
    "A run of no case fails: nothing was checked.\n";

static const char *const family_nchw[] = {
    "NCHW",
    "NHWC",
    "HWCN",
    "CHWN",
    "NC1HWC0",
    "FRACTAL_Z",
    "NCHW4",
    "NCHW32",
    "CHWN4",
    "4N",
    "2N",
    "nChw8c",
    "nChw16c",
    "TPU_ALIGNED(npus=4,start=1,offset=128,lmem=1048576)",
    "FRACTAL_Z_C04",
    NULL};
static const char *const family_mn[] = {"MN",       "NM", "ND", "FRACTAL_NZ",
                                        "ND_ALIGN", "nN", NULL};
static const char *const family_ncdhw[] = {
    "NCDHW", "NDHWC", "NDC1HWC0", "FRACTAL_Z_3D", "FRACTAL_Z_3D(groups=2)",
    NULL};
static const char *const family_bsnd[] = {"BSND", "BNSD", "SBND",
                                          "BSH",  "SBH",  NULL};
static const char *const family_kn[] = {
    "KN", "ND", "FRACTAL_ZN", "FRACTAL_ZN_RNN(input=17,hidden=5)", NULL};
static const char *const family_bias[] = {"ND", "...N8n",
                                          "ND_RNN_BIAS(hidden=5)", NULL};
static const struct {
  const char *name;
  const char *const *formats;
  int rank;
} families[] = {{"NCHW", family_nchw, 4},   {"MN", family_mn, 2},
                {"NCDHW", family_ncdhw, 5}, {"BSND", family_bsnd, 4},
                {"KN", family_kn, 2},       {"bias", family_bias, 2}};
enum { NFAMILIES = 6 };

/* The end of the list item at p: the next comma outside parentheses (a
 * format's parameters), or the list's end. */
static const char *item_end(const char *p) {
  for (int depth = 0; *p && (depth || *p != ','); p++)
    depth += (*p == '(') - (*p == ')');
  return p;
}

/* Whether name is in the comma-separated list (NULL: every name is). */
static int listed(const char *list, const char *name) {
  if (!list) return 1;
  size_t n = strlen(name);
  for (const char *p = list;; p = item_end(p) + 1) {
    if ((size_t)(item_end(p) - p) == n && !strncmp(p, name, n)) return 1;
    if (!*item_end(p)) return 0;
  }
}

/* Every name in --formats is one of the matrix's: 0, or the exit code
 * (a misspelt name would leave its pairs out silently). */
static int check_formats(const char *list) {
  char all[512] = "";
  for (int f = 0; f < NFAMILIES; f++)
    for (int i = 0; families[f].formats[i]; i++)
      snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s",
               *all ? ", " : "", families[f].formats[i]);
  for (const char *p = list; p; p = *item_end(p) ? item_end(p) + 1 : NULL) {
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(item_end(p) - p), p);
    int known = 0;
    for (int f = 0; f < NFAMILIES && !known; f++)
      for (int i = 0; families[f].formats[i] && !known; i++)
        known = !strcmp(name, families[f].formats[i]);
    if (known) continue;
    relayout_layout *l = NULL;
    relayout_error err;
    int bad = relayout_layout_parse(&l, name, &err) != RELAYOUT_OK;
    relayout_layout_free(l);
    return cli_error(EXIT_USAGE, "conform",
                     "--formats: '%s' %s%s; the matrix's formats are %s", name,
                     bad ? "is no layout: " : "is not in the matrix",
                     bad ? err.message : "", all);
  }
  return 0;
}

/* Odd extents for a pair: 1, primes, one under, at and over blocks of 16
 * and 32, a product of at most 2^17 elements. */
static void pick_extents(int64_t *ext, int rank, uint64_t *s) {
  static const int64_t edge[] = {1, 2, 3, 5, 15, 16, 17, 31, 33};
  int64_t total;
  do {
    total = 1;
    for (int i = 0; i < rank; i++) total *= ext[i] = edge[cf_mix(s) % 9];
  } while (total > (1 << 17));
}

/* The extents a pair's formats take: an N that splits into groups=2, at
 * most 4 channels for FRACTAL_Z_C04, whole gates of hidden= units and K =
 * input= + hidden= for the RNN formats (the extents in the source's logical
 * order). */
static void fit_extents(cf_case *k) {
  /* the dims' names: the source's, or the destination's where the source is
   * ND; positions past the batch dims */
  char names[RELAYOUT_MAX_DIMS + 1] = "";
  int batch = 0, positional = 1;
  for (int side = 0; side < 2 && positional; side++) {
    relayout_layout *l = NULL;
    if (!relayout_layout_parse(&l, side ? k->to : k->from, NULL))
      relayout_layout_logical_names(names, &batch, &positional, l, NULL);
    relayout_layout_free(l);
  }
  int64_t *x = k->ext + k->rank - (int)strlen(names);
  const char *n = strchr(names, 'N'), *c = strchr(names, 'C'),
             *kk = strchr(names, 'K');
  char both[2 * sizeof k->from + 2];
  snprintf(both, sizeof both, "%s %s", k->from, k->to);
  const char *in = strstr(both, "input="), *hid = strstr(both, "hidden=");
  long long input = in ? atoll(in + 6) : 0, hidden = hid ? atoll(hid + 7) : 0;
  if (positional) return;
  if (n && strstr(both, "groups=2")) x[n - names] += x[n - names] % 2;
  if (c && strstr(both, "FRACTAL_Z_C04") && x[c - names] > 4) x[c - names] = 4;
  if (n && hidden > 0)
    x[n - names] = (x[n - names] + hidden - 1) / hidden * hidden;
  if (kk && input > 0) x[kk - names] = input + hidden;
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
            fit_extents(&k);
            cf_name(&k);
            visit(visit_ctx, families[f].name, &k);
          }
        }
      cast_no += cast;
    }
  }
}

/* A case of the matrix, where it is this part's and no signal came. */
static void run_case(void *ctx, const char *group, const cf_case *k) {
  conform *c = ctx;
  if (c->seen++ % c->parts == c->part && !c->interrupted &&
      !(c->interrupted = cli_interrupted())) {
    if (c->isolate)
      cf_run_isolated(c, group, k);
    else
      cf_run(c, group, k, NULL, NULL);
  }
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
  c->seen++;
  int v = cf_run(c, "case", &k, NULL, NULL);
  printf("%s %s\n", cf_verdicts[v], k.text);
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

static int conform_main(cli_opt *opts, const char **pos, int npos);

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
                    {.name = "allow-skips", .is_flag = 1},
                    {.name = "part"},
                    {.name = "merge", .is_flag = 1},
                    {.name = "isolate", .is_flag = 1},
                    {0}};
  const char **pos = malloc(sizeof *pos * (size_t)argc);
  int npos, rc;
  if (!pos) return cli_error(EXIT_WORK, "conform", "out of memory");
  rc = cli_parse(argc, argv, opts, pos, argc, &npos, "conform", usage);
  if (!rc) rc = conform_main(opts, pos, npos);
  free(pos);
  return rc < 0 ? 0 : rc;
}

/* conform after its options: the exit code. */
static int conform_main(cli_opt *opts, const char **pos, int npos) {
  int rc;
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
                     "--import runs the corpus as it is: --device, --junit, "
                     "--json and --allow-skips only");
  if (cli_get(opts, "allow-skips") && !import)
    return cli_error(EXIT_USAGE, "conform",
                     "--allow-skips is for --import (a matrix's skips are "
                     "never failures)");
  int merge = cli_get(opts, "merge") != NULL;
  int matrix_only = quick || full || cli_get(opts, "isolate") ||
                    cli_get(opts, "formats") || cli_get(opts, "dtypes") ||
                    cli_get(opts, "shapes") || cli_get(opts, "seed") ||
                    cli_get(opts, "case") || import || export ||
                    cli_get(opts, "against") || cli_get(opts, "device") ||
                    cli_get(opts, "part");
  if (merge ? !npos || matrix_only : npos > 0)
    return cli_error(EXIT_USAGE, "conform",
                     merge ? "--merge takes the parts' JSON reports, and "
                             "--junit and --json only"
                           : "unexpected '%s' (--merge merges reports)",
                     npos ? pos[0] : "");
  conform c = {.device = cli_get(opts, "device"),
               .device_arg = cli_get(opts, "device"),
               .against_name =
                   cli_get(opts, "against") ? cli_get(opts, "against") : "ref",
               .seed = 1,
               .tty = isatty(2),
               .parts = 1};
  if (cli_get(opts, "part") &&
      ((import || export || cli_get(opts, "case"))
           ? (rc = cli_error(EXIT_USAGE, "conform",
                             "--part splits a matrix run on a device"))
           : (rc = cli_parse_part(&c.part, &c.parts, cli_get(opts, "part"),
                                  "conform"))))
    return rc;
  c.isolate = cli_get(opts, "isolate") != NULL;
  int several = cli_several_devices(c.device);
  if (several && (c.isolate || import || cli_get(opts, "case")))
    return cli_error(EXIT_USAGE, "conform",
                     "--device %s spreads a matrix over devices; --isolate, "
                     "--case and --import run on one",
                     c.device);
  if (c.isolate && (import || export || merge || cli_get(opts, "case")))
    return cli_error(EXIT_USAGE, "conform",
                     "--isolate runs a matrix's cases in child processes; "
                     "--case, --import, --export and --merge run none");
  if (!export && !merge && !cli_get(opts, "device"))
    return cli_error(EXIT_USAGE, "conform", "needs --device\n%s", usage);
  if (quick && full)
    return cli_error(EXIT_USAGE, "conform", "--quick or --full, not both");
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
  if (m.formats && (rc = check_formats(m.formats))) return rc;
  if (!m.types) m.types = default_types(typebuf, sizeof typebuf, quick, full);
  for (const char *p = m.types; p;
       p = strchr(p, ',') ? strchr(p, ',') + 1 : 0) {
    char item[64];
    cf_case k;
    snprintf(item, sizeof item, "%.*s", (int)strcspn(p, ","), p);
    if (cf_parse_types(&k, item, "conform --dtypes")) return EXIT_USAGE;
  }
  if (export) return cf_export(export, enumerate, &m, c.seed);
  snprintf(c.matrix, sizeof c.matrix,
           "families %d, shapes %d, every cast %d, seed %llu, formats %s, "
           "dtypes %s",
           m.families, m.shapes, m.every_cast, (unsigned long long)m.seed,
           m.formats ? m.formats : "all", m.types);
  cli_out junit_out, json_out;
  relayout_error err;
  const char *reports[2] = {cli_get(opts, "junit"), cli_get(opts, "json")};
  cli_out *outs[2] = {&junit_out, &json_out};
  if (reports[0] && reports[1] &&
      (!strcmp(reports[0], reports[1]) ||
       cli_same_file(reports[0], reports[1])))
    return cli_error(EXIT_USAGE, "conform",
                     "--junit and --json name the same file, %s: one would "
                     "overwrite the other",
                     reports[1]);
  for (int i = 0; i < 2; i++)
    if (reports[i] && cli_out_check(outs[i], reports[i], 1, &err))
      return cli_error(EXIT_WORK, "conform", "%s", err.message);
  if (merge) {
    c.cases = json_array();
    rc = cf_merge(&c, pos, npos, reports[0] ? &junit_out : NULL,
                  reports[1] ? &json_out : NULL);
    json_decref(c.cases);
    return rc;
  }
  if ((rc = several ? 0 : cli_engine(&c.engine, c.device, "conform")))
    return rc;
  if (!several && strcmp(c.against_name, "ref") &&
      (rc = cli_engine(&c.against, c.against_name, "conform"))) {
    relayout_engine_free(c.engine);
    return rc;
  }
  if (!several) c.device = relayout_engine_device(c.engine);
  c.cases = json_array();
  int table = 1;
  if (cli_get(opts, "case")) {
    rc = rerun(&c, cli_get(opts, "case"));
    table = 0;
  } else if (import) {
    c.against_name = "the corpus";
    c.skips_fail = !cli_get(opts, "allow-skips");
    rc = cf_import(&c, import);
  } else {
    cli_defer_signals(); /* a signal ends the matrix with its reports */
    if (several)
      rc = cf_spread(&c, enumerate, &m);
    else
      enumerate(&m, run_case, &c);
    if (!rc && c.interrupted)
      cli_error(EXIT_WORK, "conform",
                "interrupted by signal %d after %d cases: the reports hold "
                "them, marked incomplete",
                c.interrupted, c.ncases);
  }
  int frc = rc == EXIT_USAGE || (import && rc) || (several && rc)
                ? 0
                : cf_finish(&c, reports[0] ? &junit_out : NULL,
                            reports[1] ? &json_out : NULL, table);
  if (frc) rc = frc;
  json_decref(c.cases);
  relayout_engine_free(c.against);
  relayout_engine_free(c.engine);
  if (c.interrupted) cli_reraise();
  return rc;
}
