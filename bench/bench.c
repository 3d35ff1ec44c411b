/* bench.c - relayout bench: one conversion's speed next to the device's copy
 *
 * Median GB/s (bytes read + written) of timed runs after warm-up, with the
 * same device's copy bandwidth measured in the same run two ways
 * (clEnqueueCopyBuffer and a plain copy kernel) and the ratios. On the
 * reference the peers are memcpy's bandwidth. --suite runs the real-world
 * rows of suite.c with their peers instead.
 */
#include "cli.h"
#include "measure.h"
#include "suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: relayout bench --from SRC --to DST --shape AxBxC [--dtype T]\n"
    "                      [--to-dtype T [--scale S] [--zero-point Z]]\n"
    "                      [--device D] [--runs N] [--c0 N] [--json]\n"
    "       relayout bench --suite [--rows TEXT,...] [--device D]\n"
    "                      [--runs N] [--json]\n"
    "\n"
    "Times one conversion: the median GB/s (bytes read + written) of N timed\n"
    "runs (default 10) after two warm-up runs, next to the same device's\n"
    "copy bandwidth measured in the same run (clEnqueueCopyBuffer and a\n"
    "plain copy kernel), with the ratios. PoCL's CPU threads run pinned\n"
    "one to a CPU where 'relayout devices' says so.\n"
    "  --shape  logical extents in SRC's logical order (batch dims first)\n"
    "  --dtype  element type (default f32)\n"
    "  --to-dtype, --scale, --zero-point, --from-scale, --from-zero-point,\n"
    "  --axis   a cast, as relayout convert takes them\n"
    "  --device all, or a list (0,2): each device in turn, its own rows\n"
    "           (or JSON object) and ratios to its own copy\n"
    "  --json   one JSON object on stdout instead of the table\n"
    "  --suite  the real-world rows (bench/README.md), each next to the\n"
    "           device's copy and to the peers found at build time\n"
    "           (oneDNN, numpy, PyTorch, OpenCV); --rows keeps the rows\n"
    "           whose name holds TEXT (or any of TEXT,TEXT,...); a row\n"
    "           that fails is named, the rest run, and the exit is 1\n";

/* A new plan's start: its first run (from its creation to that run's end,
 * and which kernel ran), when its own kernel was ready (from its creation),
 * and the generic kernel's median seconds (< 0: not measured; why not, in
 * no_generic where it has none). */
typedef struct cold {
  double first, ready, t_generic;
  const char *first_kernel;
  char no_generic[RELAYOUT_ERROR_LEN];
} cold;

/* same: whether the device's and the host path's results equal the
 * reference's (-1: on the reference, nothing to compare). */
static void report(const bench_result *r, double t_host, int same,
                   const cold *c, const cli_opt *opts, relayout_engine *e,
                   relayout_plan *plan, int runs, int json) {
  char dtype[32];
  const char *from = cli_get(opts, "dtype"), *to = cli_get(opts, "to-dtype");
  snprintf(dtype, sizeof dtype, "%s%s%s", from ? from : "f32", to ? "->" : "",
           to ? to : "");
  double gb = (double)(r->src_bytes + r->dst_bytes) / 1e9,
         cgb = 2.0 * (double)r->copy_bytes / 1e9;
  double conv = gb / r->t_conv, enq = cgb / r->t_enq, ker = cgb / r->t_kernel,
         host = gb / t_host;
  const char *peer = relayout_engine_context(e) ? "copy" : "memcpy";
  /* what the timed runs ran: the generic kernel, or the plan's family's */
  const char *kernel = relayout_plan_kernel(plan);
  int own = strcmp(kernel, "generic") != 0;
  const char *ran = own ? relayout_plan_family(plan) : "generic";
  char ready[32] = "null";
  if (own) snprintf(ready, sizeof ready, "%.1f", c->ready * 1e3);
  if (json) {
    printf("{\"from\": \"%s\", \"to\": \"%s\", \"shape\": \"%s\", "
           "\"dtype\": \"%s\", \"device\": \"%s\", \"family\": \"%s\", "
           "\"kernel\": \"%s\", "
           "\"runs\": %d, \"bytes\": %lld, \"gbps\": %.2f, "
           "\"copy_enqueue_gbps\": %.2f, \"copy_kernel_gbps\": %.2f, "
           "\"ratio_copy_kernel\": %.3f, \"ratio_copy_enqueue\": %.3f, "
           "\"host_gbps\": %.2f, \"first_run_ms\": %.1f, "
           "\"first_run_kernel\": \"%s\", \"specialised_ready_ms\": %s, "
           "\"generic_gbps\": %.2f, \"generic_ratio\": %.3f%s}\n",
           cli_get(opts, "from"), cli_get(opts, "to"), cli_get(opts, "shape"),
           dtype, relayout_engine_device(e), relayout_plan_family(plan), kernel,
           runs, (long long)(r->src_bytes + r->dst_bytes), conv, enq, ker,
           conv / ker, conv / enq, host, c->first * 1e3, c->first_kernel, ready,
           c->t_generic > 0 ? gb / c->t_generic : 0,
           c->t_generic > 0 ? r->t_conv / c->t_generic : 0,
           same < 0   ? ""
           : same > 0 ? ", \"same_as_reference\": true"
                      : ", \"same_as_reference\": false");
    return;
  }
  printf("%s -> %s, %s %s, on %s (%s kernel)\n", cli_get(opts, "from"),
         cli_get(opts, "to"), cli_get(opts, "shape"), dtype,
         relayout_engine_device(e), ran);
  printf("  relayout        %9.2f GB/s  (%.1f MB read + written, median of "
         "%d)\n",
         conv, gb * 1e3, runs);
  if (relayout_engine_context(e)) {
    printf("  copy (enqueue)  %9.2f GB/s\n", enq);
    printf("  copy (kernel)   %9.2f GB/s\n", ker);
    printf("  ratio           %9.3f of the copy kernel, %.3f of the enqueued "
           "copy\n",
           conv / ker, conv / enq);
    printf("  host arrays     %9.2f GB/s  (relayout_plan_run: %s)\n", host,
           relayout_engine_host_memory(e) ? "in place"
                                          : "upload, run, download");
    printf("  = reference     %s\n",
           same ? "yes, every result, byte for byte"
                : "NO: an output differs from the reference's");
    printf("  first run       %9.1f ms after the plan's creation (%s kernel)\n",
           c->first * 1e3, c->first_kernel);
    if (own)
      printf("  own kernel      ready %s ms after the plan's creation\n",
             ready);
    else
      printf("  own kernel      not built: every run above is the generic "
             "kernel's\n");
    if (c->t_generic > 0)
      printf("  generic kernel  %9.2f GB/s  (%.3f of its own kernel's)\n",
             gb / c->t_generic, r->t_conv / c->t_generic);
    else if (*c->no_generic)
      printf("  generic kernel  none: %s\n", c->no_generic);
  } else {
    printf("  %-15s %9.2f GB/s\n  ratio           %9.3f\n", peer, enq,
           conv / enq);
  }
}

/* The same conversion on the generic kernel of an engine like e's: median
 * seconds (< 0: it failed), *same whether it equals the reference; where
 * the plan has no generic kernel, why not in c->no_generic. */
static double time_generic(relayout_engine *e, const relayout_desc *s,
                           const relayout_desc *d, const bench_shape *x,
                           int runs, int *same, cold *c) {
  relayout_engine_options o;
  cli_engine_options(&o, relayout_engine_device(e));
  o.kernels = RELAYOUT_KERNELS_GENERIC;
  relayout_engine *g = NULL;
  relayout_plan *p = NULL;
  relayout_error err = {0};
  bench_result r = {.t_conv = -1};
  bench_shape gx = *x;
  if (relayout_engine_create(&g, &o, &err) ||
      relayout_plan_create(&p, g, d, s, &err))
    snprintf(c->no_generic, sizeof c->no_generic, "%s", err.message);
  else if (strcmp(relayout_plan_kernel(p), "generic"))
    snprintf(c->no_generic, sizeof c->no_generic, "%s", relayout_plan_note(p));
  else {
    gx.plan = p;
    if (bench_measure(&r, g, &gx, s, d, runs, same)) r.t_conv = -1;
  }
  relayout_plan_free(p);
  relayout_engine_free(g);
  return r.t_conv;
}

/* The conversion s -> d timed on e, next to e's copy, and reported: 0, or
 * the exit code. */
static int bench_on(relayout_engine *e, const relayout_desc *sp,
                    const relayout_desc *dp, const cli_opt *opts, int runs) {
  relayout_desc s = *sp, d = *dp;
  relayout_error err;
  relayout_plan *plan = NULL;
  bench_result r;
  unsigned char *in = NULL, *ref = NULL, *out = NULL;
  int rc = 0;
  int64_t sb, db;
  relayout_desc_size_bytes(&sb, &s, NULL);
  relayout_desc_size_bytes(&db, &d, NULL);
  if (!(in = cli_alloc_aligned((size_t)sb)) || !(ref = malloc((size_t)db)) ||
      !(out = cli_alloc_aligned((size_t)db))) {
    rc = cli_error(EXIT_WORK, "bench", "out of memory");
    goto done;
  }
  bench_fill(in, sb);
  /* a new plan's first run, then its own kernel, waited for */
  cold c = {0, 0, -1, "", ""};
  double t0 = cli_now();
  if (relayout_plan_create(&plan, e, &d, &s, &err) ||
      relayout_plan_run(plan, out, (size_t)db, in, (size_t)sb, &err)) {
    rc = cli_error(EXIT_WORK, "bench", "%s", err.message);
    goto done;
  }
  c.first = cli_now() - t0;
  c.first_kernel = relayout_plan_kernel(plan);
  relayout_plan_wait(plan, NULL);
  c.ready = cli_now() - t0;
  if (*relayout_plan_note(plan))
    fprintf(stderr, "relayout bench: %s\n", relayout_plan_note(plan));
  memset(ref, 0xA5, (size_t)db); /* poisoned: unwritten bytes show */
  if (relayout_convert_ref(&d, ref, (size_t)db, &s, in, (size_t)sb, &err)) {
    rc = cli_error(EXIT_WORK, "bench", "%s", err.message);
    goto done;
  }
  bench_shape x = {plan, NULL, in, ref, sb, db, 1};
  if (relayout_engine_context(e) &&
      !strcmp(relayout_plan_kernel(plan), "reference")) {
    rc = cli_error(EXIT_WORK, "bench",
                   "nothing to time on %s: the plan runs on the scalar "
                   "reference (said above)",
                   relayout_engine_device(e));
    goto done;
  }
  double t_host = -1;
  int same, host_same = 1;
  if (bench_measure(&r, e, &x, &s, &d, runs, &same) ||
      (relayout_engine_context(e)
           ? bench_host_batch(&x, 1, runs, &t_host, NULL, &host_same)
           : (t_host = r.t_conv) < 0)) {
    rc = cli_error(EXIT_WORK, "bench",
                   "the runs failed on %s (buffers too large for it?)",
                   relayout_engine_device(e));
    goto done;
  }
  if (relayout_engine_context(e) &&
      strcmp(relayout_plan_kernel(plan), "generic")) {
    int generic_same = 1;
    c.t_generic = time_generic(e, &s, &d, &x, runs, &generic_same, &c);
    host_same &= generic_same;
  }
  /* on the reference engine the runs are the reference: nothing to say */
  same = relayout_engine_context(e) ? same && host_same : -1;
  report(&r, t_host, same, &c, opts, e, plan, runs,
         cli_get(opts, "json") != NULL);
  if (!same)
    rc = cli_error(EXIT_WORK, "bench",
                   "the output differs from the scalar reference's");
done:
  free(in);
  free(ref);
  free(out);
  relayout_plan_free(plan);
  return rc;
}

int cmd_bench(int argc, char **argv) {
  cli_opt opts[] = {{.name = "from"},
                    {.name = "to"},
                    {.name = "shape"},
                    {.name = "dtype"},
                    {.name = "device"},
                    {.name = "runs"},
                    {.name = "c0"},
                    {.name = "json", .is_flag = 1},
                    {.name = "suite", .is_flag = 1},
                    {.name = "rows"},
                    CLI_CAST_OPTIONS,
                    {0}};
  const char *pos[1];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 0, &npos, "bench", usage)))
    return rc < 0 ? 0 : rc;
  const char *from = cli_get(opts, "from"), *to = cli_get(opts, "to");
  const char *shape = cli_get(opts, "shape"), *dt = cli_get(opts, "dtype");
  int suite = cli_get(opts, "suite") != NULL;
  if (suite && (from || to || shape || dt || cli_get(opts, "c0")))
    return cli_error(EXIT_USAGE, "bench",
                     "--suite takes no --from, --to, --shape, --dtype or --c0");
  if (!suite && cli_get(opts, "rows"))
    return cli_error(EXIT_USAGE, "bench", "--rows goes with --suite");
  if (!suite && (!from || !to || !shape))
    return cli_error(EXIT_USAGE, "bench", "needs --from, --to and --shape\n%s",
                     usage);
  int64_t runs = 10, ext[RELAYOUT_MAX_DIMS];
  int n;
  relayout_dtype dtype = RELAYOUT_F32;
  relayout_error err;
  if (cli_get(opts, "runs") &&
      (cli_parse_int(&runs, cli_get(opts, "runs"), "--runs") || runs < 1 ||
       runs > 1000))
    return cli_error(EXIT_USAGE, "bench", "--runs takes 1 to 1000");
  const char *device = cli_get(opts, "device");
  if (suite && !cli_several_devices(device))
    return bench_suite(device, cli_get(opts, "rows"), (int)runs,
                       cli_get(opts, "json") != NULL);
  if (suite) { /* each device in turn */
    char **items;
    int ni;
    if ((rc = cli_device_items(&items, &ni, device, "bench"))) return rc;
    for (int i = 0; i < ni; i++) {
      int one = bench_suite(items[i], cli_get(opts, "rows"), (int)runs,
                            cli_get(opts, "json") != NULL);
      if (one && !rc) rc = one;
    }
    cli_device_items_free(items, ni);
    return rc;
  }
  if (dt && relayout_dtype_from_name(&dtype, dt, &err))
    return cli_error(EXIT_USAGE, "bench", "%s", err.message);
  if ((rc = cli_parse_shape(ext, &n, shape))) return rc;
  relayout_layout *a = NULL, *b = NULL;
  relayout_engine **e = NULL;
  relayout_engine_options o;
  relayout_desc s, d;
  int ne = 0;
  void *keep = NULL; /* per-channel arrays */
  if ((rc = cli_layouts(&a, &b, from, to, cli_get(opts, "c0"), "bench")))
    goto done;
  if (relayout_bind_extents(&s, &d, a, b, dtype, n, ext, &err)) {
    rc = cli_error(EXIT_USAGE, "bench", "%s", err.message);
    goto done;
  }
  if ((rc = cli_cast(&d, &s, b, a, &keep, opts, "bench"))) goto done;
  cli_engine_options(&o, cli_get(opts, "device"));
  if ((rc = cli_engines(&e, &ne, &o, cli_get(opts, "device"), "bench")))
    goto done;
  /* several devices: each in turn, a row (or object) each */
  for (int i = 0; i < ne; i++) {
    int one = bench_on(e[i], &s, &d, opts, (int)runs);
    if (one && !rc) rc = one;
  }
done:
  free(keep);
  cli_engines_free(e, ne);
  relayout_layout_free(a);
  relayout_layout_free(b);
  return rc;
}
