/* bench.c - relayout bench: one conversion's speed next to the device's copy
 *
 * Median GB/s (bytes read + written) of timed runs after warm-up, with the
 * same device's copy bandwidth measured in the same run two ways
 * (clEnqueueCopyBuffer and a plain copy kernel) and the ratios. On the
 * reference the peers are memcpy's bandwidth.
 */
#include "../cli/cli.h"
#include "relayout_cl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char rl_kernel_copy_cl[]; /* kernels/copy.cl, embedded */

static const char usage[] =
    "usage: relayout bench --from SRC --to DST --shape AxBxC [--dtype T]\n"
    "                      [--device D] [--runs N] [--c0 N] [--json]\n"
    "\n"
    "Times one conversion: the median GB/s (bytes read + written) of N timed\n"
    "runs (default 10) after two warm-up runs, next to the same device's\n"
    "copy bandwidth measured in the same run (clEnqueueCopyBuffer and a\n"
    "plain copy kernel), with the ratios.\n"
    "  --shape  logical extents in SRC's logical order (batch dims first)\n"
    "  --dtype  element type (default f32)\n"
    "  --json   one JSON object on stdout instead of the table\n";

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* What is timed: a closure over the run's buffers. */
typedef struct job {
  int kind; /* 0 conversion, 1 enqueue copy, 2 copy kernel, 3 reference, 4
               memcpy */
  relayout_plan *plan;
  relayout_engine *engine;
  cl_mem src, dst;
  cl_kernel copy;
  size_t copy_bytes, global, local;
  relayout_desc *s, *d;
  void *hs, *hd;
  size_t hs_size, hd_size;
} job;

static int run_once(job *j) {
  cl_command_queue q = relayout_engine_queue(j->engine);
  cl_int rc = CL_SUCCESS;
  relayout_error err;
  switch (j->kind) {
  case 0:
    if (relayout_plan_enqueue(j->plan, j->dst, 0, j->src, 0, 0, NULL, NULL,
                              &err))
      return -1;
    break;
  case 1:
    rc = clEnqueueCopyBuffer(q, j->src, j->dst, 0, 0, j->copy_bytes, 0, NULL,
                             NULL);
    break;
  case 2:
    rc = clEnqueueNDRangeKernel(q, j->copy, 1, NULL, &j->global, &j->local, 0,
                                NULL, NULL);
    break;
  case 3:
    return relayout_convert_ref(j->d, j->hd, j->hd_size, j->s, j->hs,
                                j->hs_size, &err)
               ? -1
               : 0;
  case 4: memcpy(j->hd, j->hs, j->copy_bytes); return 0;
  }
  return rc == CL_SUCCESS && (j->kind > 2 || clFinish(q) == CL_SUCCESS) ? 0
                                                                        : -1;
}

/* Median seconds of `runs` timed runs after two warm-ups; < 0 on failure. */
static double median(job *j, int runs) {
  double t[1000];
  for (int i = 0; i < 2; i++)
    if (run_once(j)) return -1;
  for (int i = 0; i < runs; i++) {
    double t0 = cli_now();
    if (run_once(j)) return -1;
    t[i] = cli_now() - t0;
  }
  qsort(t, (size_t)runs, sizeof t[0], by_value);
  return runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
}

/* The copy kernel that suits the device (kernels/copy.cl); *per_item is
 * the 16-byte steps each work-item takes. */
static cl_kernel copy_kernel(relayout_engine *e, cl_mem src, cl_mem dst,
                             size_t bytes, size_t *per_item) {
  cl_context ctx = relayout_engine_context(e);
  const char *text = rl_kernel_copy_cl;
  cl_int rc;
  cl_program p = clCreateProgramWithSource(ctx, 1, &text, NULL, &rc);
  cl_device_id dev;
  cl_device_type type = 0;
  clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  if (rc != CL_SUCCESS || clBuildProgram(p, 1, &dev, "", NULL, NULL))
    return NULL;
  int gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  *per_item = gpu ? 1 : 64; /* RL_COPY_CHUNK */
  cl_kernel k = clCreateKernel(p, gpu ? "rl_copy" : "rl_copy_chunk", &rc);
  clReleaseProgram(p); /* the kernel keeps it */
  cl_long n = (cl_long)(bytes / 16);
  clSetKernelArg(k, 0, sizeof src, &src);
  clSetKernelArg(k, 1, sizeof dst, &dst);
  clSetKernelArg(k, 2, sizeof n, &n);
  return k;
}

typedef struct result {
  double t_conv, t_enq, t_kernel;
  int64_t bytes, copy_bytes;
} result;

static int measure(result *r, relayout_engine *e, relayout_plan *plan,
                   relayout_desc *s, relayout_desc *d, int runs) {
  int64_t sb, db;
  relayout_desc_size_bytes(&sb, s, NULL);
  relayout_desc_size_bytes(&db, d, NULL);
  r->bytes = sb + db;
  r->copy_bytes = (sb < db ? sb : db) / 16 * 16;
  job j = {.plan = plan,
           .engine = e,
           .s = s,
           .d = d,
           .copy_bytes = (size_t)r->copy_bytes};
  unsigned char *hs = malloc((size_t)sb), *hd = malloc((size_t)db);
  int rc = -1;
  if (!hs || !hd) goto done;
  for (int64_t i = 0; i < sb; i++) hs[i] = (unsigned char)(i * 131 + 7);
  memset(hd, 0, (size_t)db);
  if (!relayout_engine_context(e)) { /* the reference against memcpy */
    j.hs = hs, j.hd = hd, j.hs_size = (size_t)sb, j.hd_size = (size_t)db;
    j.kind = 3;
    r->t_conv = median(&j, runs);
    j.kind = 4;
    r->t_enq = r->t_kernel = median(&j, runs);
    rc = r->t_conv < 0 ? -1 : 0;
    goto done;
  }
  cl_int err;
  size_t per_item;
  cl_context ctx = relayout_engine_context(e);
  j.src = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)sb, NULL, &err);
  j.dst = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)db, NULL, &err);
  if (j.src && j.dst &&
      clEnqueueWriteBuffer(relayout_engine_queue(e), j.src, CL_TRUE, 0,
                           (size_t)sb, hs, 0, NULL, NULL) == CL_SUCCESS &&
      (j.copy =
           copy_kernel(e, j.src, j.dst, (size_t)r->copy_bytes, &per_item))) {
    j.local = 256;
    size_t items = ((size_t)r->copy_bytes / 16 + per_item - 1) / per_item;
    j.global = (items + 255) / 256 * 256;
    j.kind = 0;
    r->t_conv = median(&j, runs);
    j.kind = 1;
    r->t_enq = median(&j, runs);
    j.kind = 2;
    r->t_kernel = median(&j, runs);
    rc = r->t_conv < 0 || r->t_enq < 0 || r->t_kernel < 0 ? -1 : 0;
  }
  if (j.copy) clReleaseKernel(j.copy);
  if (j.src) clReleaseMemObject(j.src);
  if (j.dst) clReleaseMemObject(j.dst);
done:
  free(hs);
  free(hd);
  return rc;
}

static void report(const result *r, const cli_opt *opts, relayout_engine *e,
                   relayout_plan *plan, int runs, int json) {
  double gb = (double)r->bytes / 1e9, cgb = 2.0 * (double)r->copy_bytes / 1e9;
  double conv = gb / r->t_conv, enq = cgb / r->t_enq, ker = cgb / r->t_kernel;
  const char *peer = relayout_engine_context(e) ? "copy" : "memcpy";
  if (json) {
    printf("{\"from\": \"%s\", \"to\": \"%s\", \"shape\": \"%s\", "
           "\"dtype\": \"%s\", \"device\": \"%s\", \"family\": \"%s\", "
           "\"runs\": %d, \"bytes\": %lld, \"gbps\": %.2f, "
           "\"copy_enqueue_gbps\": %.2f, \"copy_kernel_gbps\": %.2f, "
           "\"ratio_copy_kernel\": %.3f, \"ratio_copy_enqueue\": %.3f}\n",
           cli_get(opts, "from"), cli_get(opts, "to"), cli_get(opts, "shape"),
           cli_get(opts, "dtype") ? cli_get(opts, "dtype") : "f32",
           relayout_engine_device(e), relayout_plan_family(plan), runs,
           (long long)r->bytes, conv, enq, ker, conv / ker, conv / enq);
    return;
  }
  printf("%s -> %s, %s %s, on %s (%s kernel)\n", cli_get(opts, "from"),
         cli_get(opts, "to"), cli_get(opts, "shape"),
         cli_get(opts, "dtype") ? cli_get(opts, "dtype") : "f32",
         relayout_engine_device(e), relayout_plan_family(plan));
  printf("  relayout        %9.2f GB/s  (%.1f MB read + written, median of "
         "%d)\n",
         conv, gb * 1e3, runs);
  if (relayout_engine_context(e)) {
    printf("  copy (enqueue)  %9.2f GB/s\n", enq);
    printf("  copy (kernel)   %9.2f GB/s\n", ker);
    printf("  ratio           %9.3f of the copy kernel, %.3f of the enqueued "
           "copy\n",
           conv / ker, conv / enq);
  } else {
    printf("  %-15s %9.2f GB/s\n  ratio           %9.3f\n", peer, enq,
           conv / enq);
  }
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
                    {0}};
  const char *pos[1];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 0, &npos, "bench", usage)))
    return rc < 0 ? 0 : rc;
  const char *from = cli_get(opts, "from"), *to = cli_get(opts, "to");
  const char *shape = cli_get(opts, "shape"), *dt = cli_get(opts, "dtype");
  if (!from || !to || !shape)
    return cli_error(EXIT_USAGE, "bench", "needs --from, --to and --shape\n%s",
                     usage);
  int64_t runs = 10, ext[RELAYOUT_MAX_DIMS];
  int n;
  relayout_dtype dtype = RELAYOUT_F32;
  relayout_error err;
  if (cli_get(opts, "runs") &&
      (cli_parse_int(&runs, cli_get(opts, "runs"), "--runs") || runs > 1000))
    return cli_error(EXIT_USAGE, "bench", "--runs takes 1 to 1000");
  if (dt && relayout_dtype_from_name(&dtype, dt, &err))
    return cli_error(EXIT_USAGE, "bench", "%s", err.message);
  if ((rc = cli_parse_shape(ext, &n, shape))) return rc;
  relayout_layout *a = NULL, *b = NULL;
  relayout_engine *e = NULL;
  relayout_plan *plan = NULL;
  relayout_desc s, d;
  result r;
  if ((rc = cli_layouts(&a, &b, from, to, cli_get(opts, "c0"), "bench")))
    goto done;
  if (relayout_bind_extents(&s, &d, a, b, dtype, n, ext, &err)) {
    rc = cli_error(EXIT_USAGE, "bench", "%s", err.message);
    goto done;
  }
  if ((rc = cli_engine(&e, cli_get(opts, "device"), "bench"))) goto done;
  if (relayout_plan_create(&plan, e, &d, &s, &err)) {
    rc = cli_error(EXIT_WORK, "bench", "%s", err.message);
    goto done;
  }
  if (*relayout_plan_note(plan))
    fprintf(stderr, "relayout bench: %s\n", relayout_plan_note(plan));
  if (measure(&r, e, plan, &s, &d, (int)runs)) {
    rc = cli_error(EXIT_WORK, "bench",
                   "the runs failed on %s (buffers too large for it?)",
                   relayout_engine_device(e));
    goto done;
  }
  report(&r, opts, e, plan, (int)runs, cli_get(opts, "json") != NULL);
done:
  relayout_plan_free(plan);
  relayout_engine_free(e);
  relayout_layout_free(a);
  relayout_layout_free(b);
  return rc;
}
