/* repack.c - relayout repack: a checkpoint's weights into target layouts */
#include "repack.h"
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "usage: relayout repack IN OUT --rule RULE [--rule RULE ...]\n"
    "       relayout repack --restore IN OUT\n"
    "       relayout repack --dry-run IN [--rule RULE ...]\n"
    "       relayout repack --warm IN (--rule RULE ... | --restore)\n"
    "       relayout repack IN OUT (--rule RULE ... | --restore) --part I/N\n"
    "       relayout repack --finish OUT\n"
    "\n"
    "Repacks the tensors of a safetensors file into the layouts a device "
    "wants,\n"
    "and back. IN is a .safetensors file, or a directory holding shards and\n"
    "model.safetensors.index.json (OUT is then a new directory: the shards "
    "and\n"
    "the rewritten index; other files are not copied).\n"
    "\n"
    "  --rule GLOB[:Nd][:FROM]=TO[:DTYPE[:per-channel=X]]\n"
    "        converts the tensors whose name matches GLOB (shell pattern, '*'\n"
    "        matches dots too) and, if given, whose rank is N, from FROM\n"
    "        (default ND: the tensor's own dim order) to TO, a layout as\n"
    "        'relayout convert' takes it, block sizes included:\n"
    "          --rule '*.weight:4d=FRACTAL_Z' --rule '*:2d=FRACTAL_NZ'\n"
    "          --rule 'conv*:4d:HWCN=FRACTAL_Z(c0=8)' --rule '*.w:2d=29'\n"
    "          --rule '*:2d=FRACTAL_NZ:f16'   (cast: f16 bf16 f32 f64)\n"
    "          --rule '*.weight:4d=FRACTAL_Z:i8:per-channel=N'\n"
    "        The first matching rule wins; unmatched tensors are copied\n"
    "        unchanged. A converted tensor is stored in TO's physical shape,\n"
    "        in its dtype or DTYPE (a float tensor cast as docs/CASTS.md\n"
    "        defines); its logical shape, both layouts with\n"
    "        their block sizes and both dtypes are recorded in __metadata__\n"
    "        for --restore. DTYPE i8 quantizes an F32, F16 or BF16 tensor\n"
    "        with symmetric scales (max |x| / 127, zero point 0), one per\n"
    "        tensor or one per position of logical dim X, stored as the F32\n"
    "        tensor NAME.scale beside it and named in its record.\n"
    "  --restore     converts every tensor a repack recorded back: each one\n"
    "                byte-identical to the original, but for casts: a\n"
    "                widened one exact (signalling NaNs come back quiet), a\n"
    "                narrowed one at its stored precision, a quantized one\n"
    "                as its dequantized values (each said on stderr); the\n"
    "                scale tensors are taken back\n"
    "  --dry-run     prints what each tensor would become; writes nothing\n"
    "  --json        prints a summary on stdout: per tensor name, layouts,\n"
    "                bytes, device and seconds\n"
    "  --max-memory SIZE\n"
    "                buffers in flight (default 1G; K, M, G, T suffixes); a\n"
    "                tensor too large for a slot (a ninth of it) runs alone,\n"
    "                so memory then peaks at about its source plus result\n"
    "  --device D    auto (default), gpu, cpu, ref, an index or a name;\n"
    "                all (every OpenCL device) or a list (0,2,3): the\n"
    "                tensors spread over them by bytes, the largest first,\n"
    "                the output the same bytes as on one device\n"
    "  --warm        builds the kernels this repack needs into the cache,\n"
    "                writing nothing; a repack lacking some starts it in\n"
    "                the background (one per cache; not with --part)\n"
    "  --wait-compile\n"
    "                shapes new to the device wait for their own kernels\n"
    "  --part I/N    a sharded IN's part I of N (0 <= I < N), for N\n"
    "                processes or machines sharing a file system: the\n"
    "                shards split by bytes, each written into OUT with a\n"
    "                completion record; a rerun of the same command redoes\n"
    "                only the shards without a valid record, and a part of\n"
    "                another job (rules, N or input) is refused. --part auto\n"
    "                takes I and N from the launcher (mpirun, srun, torchrun,\n"
    "                PMI, GitLab CI's parallel jobs); in a build with MPI\n"
    "                (-DRELAYOUT_MPI=ON) under mpirun, rank 0 writes the\n"
    "                index once every rank succeeded, and every rank fails\n"
    "                when one does\n"
    "  --finish OUT  once every part is done: OUT's index, from the\n"
    "                records alone (a shard without one is named)\n"
    "\n"
    "Progress goes to stderr on a terminal. OUT is written whole or not at "
    "all\n"
    "(also when interrupted); IN is never modified.\n";

static int run(rp_options *o, const char *in, const char *out) {
  relayout_error err;
  struct stat st;
  if (!strcmp(in, "-"))
    return cli_error(EXIT_USAGE, "repack",
                     "IN cannot be - (standard input): a safetensors file is "
                     "mapped, not streamed");
  if (stat(in, &st))
    return cli_error(EXIT_WORK, "repack", "%s: no such file or directory", in);
  int dir = S_ISDIR(st.st_mode);
  if (out && cli_same_file(in, out))
    return cli_error(EXIT_USAGE, "repack", "%s: OUT is the input", out);
  if (out && dir && (!strcmp(out, "-") || (!o->parts && !stat(out, &st))))
    return cli_error(EXIT_USAGE, "repack",
                     "%s%s; a sharded model goes into a new directory", out,
                     strcmp(out, "-") ? " exists" : " is standard output");
  uint64_t bytes;
  cli_out file;
  if ((o->parts || o->mpi) && !dir)
    return cli_error(EXIT_USAGE, "repack",
                     "--part splits a sharded checkpoint (a directory with "
                     "%s); %s is one file",
                     RP_INDEX_NAME, in);
  if (!dir && out && cli_out_check(&file, out, 1, &err))
    return cli_error(EXIT_WORK, "repack", "%s", err.message);
  relayout_status s =
#ifdef RELAYOUT_MPI
      o->mpi ? rp_mpi_run(o, in, out, &err) :
#endif
      o->parts ? rp_part(o, in, out, &err)
      : dir    ? rp_directory(o, in, out, &err)
               : rp_file(o, in, out ? &file : NULL, in, &bytes, NULL, &err);
  char devices[1024] = "";
  for (int d = 0; d < o->nengines; d++) /* "A", or "A + B" for several */
    snprintf(devices + strlen(devices), sizeof devices - strlen(devices),
             "%s%s", d ? " + " : "", relayout_engine_device(o->engines[d]));
  rp_report_finish(&o->report, !s, o, in, out, *devices ? devices : "none");
  if (s) {
    if (o->report.tty) fputc('\n', stderr);
    int code = cli_exit_code(s);
    cli_error(code, "repack", "%s", err.message);
    cli_reraise();
    return code;
  }
  return 0;
}

/* The kernels a run lacked built by a background --warm (warm.c), said on
 * stderr. */
static void warm_later(const rp_options *o, const char *in, const char *device,
                       const char *cache_dir) {
  char why[512];
  int pid = rp_warm_spawn(o, in, device, cache_dir, why, sizeof why);
  const char *s = o->missing == 1 ? "" : "s";
  if (pid > 0)
    fprintf(stderr,
            "relayout repack: the output is complete; %d shape%s ran on the "
            "generic kernels, and their own build into the cache in the "
            "background for the next run (relayout repack --warm, pid %d)\n",
            o->missing, s, pid);
  else
    fprintf(stderr,
            "relayout repack: the output is complete; %d shape%s ran on the "
            "generic kernels, and their own do not build now: %s (relayout "
            "repack --warm builds them)\n",
            o->missing, s, why);
}

int cmd_repack(int argc, char **argv) {
  static rp_options o;
  const char *rules[RP_MAX_RULES];
  cli_opt opts[] = {{.name = "rule", .all = rules, .max = RP_MAX_RULES},
                    {.name = "restore", .is_flag = 1},
                    {.name = "dry-run", .is_flag = 1},
                    {.name = "json", .is_flag = 1},
                    {.name = "max-memory"},
                    {.name = "device"},
                    {.name = "wait-compile", .is_flag = 1},
                    {.name = "warm", .is_flag = 1},
                    {.name = "part"},
                    {.name = "finish", .is_flag = 1},
                    {0}};
  const char *pos[2];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 2, &npos, "repack", usage)))
    return rc < 0 ? 0 : rc;
  o.restore = cli_get(opts, "restore") != NULL;
  o.dry_run = cli_get(opts, "dry-run") != NULL;
  o.json = cli_get(opts, "json") != NULL;
  o.wait_compile = cli_get(opts, "wait-compile") != NULL;
  o.warm = cli_get(opts, "warm") != NULL;
  if (cli_get(opts, "finish")) {
    relayout_error err;
    if (npos != 1 || opts[0].count || o.restore || o.dry_run ||
        cli_get(opts, "part"))
      return cli_error(EXIT_USAGE, "repack",
                       "--finish takes OUT alone: the parts recorded the rest");
    if (rp_finish(pos[0], &err))
      return cli_error(EXIT_WORK, "repack", "%s", err.message);
    return 0;
  }
  if (cli_get(opts, "part") &&
      (o.dry_run ? cli_error(EXIT_USAGE, "repack",
                             "--part writes a share of OUT; --dry-run "
                             "writes nothing")
                 : cli_parse_part(&o.part, &o.parts, cli_get(opts, "part"),
                                  "repack")))
    return EXIT_USAGE;
#ifdef RELAYOUT_MPI
  /* an MPI job's ranks: MPI's rank and size, rank 0 writing the index */
  o.mpi = cli_get(opts, "part") && !strcmp(cli_get(opts, "part"), "auto") &&
          rp_mpi_launched();
#endif
  if (o.warm && (npos != 1 || o.dry_run || o.json || o.wait_compile ||
                 cli_get(opts, "part")))
    return cli_error(EXIT_USAGE, "repack",
                     "--warm takes IN alone, with its rules or --restore "
                     "(and --device): it builds kernels and writes nothing");
  if (npos < 1 + !(o.dry_run || o.warm))
    return cli_error(EXIT_USAGE, "repack", "needs IN and OUT\n%s", usage);
  if (o.restore && opts[0].count)
    return cli_error(
        EXIT_USAGE, "repack",
        "--restore takes no --rule: the file records what to undo");
  if (!o.restore && !opts[0].count)
    return cli_error(EXIT_USAGE, "repack",
                     "needs at least one --rule (or --restore)\n%s", usage);
  int pending = 0;
  int64_t mem = (int64_t)1 << 30;
  const char *m = cli_get(opts, "max-memory");
  if (m && cli_parse_bytes(&mem, m, "--max-memory")) return EXIT_USAGE;
  o.max_memory = (uint64_t)mem;
  for (; o.nrules < opts[0].count; o.nrules++)
    if ((rc = rp_rule_parse(&o.rules[o.nrules], rules[o.nrules]))) goto done;
  /* the next repack of the same shapes finds every kernel built: a single
   * run leaves the missing ones to a process of their own (warm.c); a
   * part of a cluster job, whose processes end with it, builds them */
  relayout_engine_options eo;
  const char *device = cli_get(opts, "device");
  cli_engine_options(&eo, device);
  eo.finish_builds = eo.cache_dir != NULL;
  if (o.warm && !eo.cache_dir) {
    rc = cli_error(EXIT_USAGE, "repack",
                   "--warm builds into relayout's cache, and none is set "
                   "(RELAYOUT_CACHE_DIR=off, no HOME)");
    goto done;
  }
  if (o.warm) /* whatever RELAYOUT_KERNELS says: building is its job */
    eo.kernels = RELAYOUT_KERNELS_AUTO;
  o.deferred = eo.kernels == RELAYOUT_KERNELS_AUTO && eo.cache_dir && !o.warm &&
               !o.dry_run && !o.wait_compile && !o.parts && !o.mpi;
  if (o.deferred) eo.kernels = RELAYOUT_KERNELS_CACHED;
  if (!o.dry_run && (rc = cli_engines(&o.engines, &o.nengines, &eo,
                                      cli_get(opts, "device"), "repack")))
    goto done;
  o.engine = o.engines ? o.engines[0] : NULL;
  cli_defer_signals();
  rp_report_init(&o.report);
  rc = run(&o, pos[0], o.dry_run || o.warm ? NULL : pos[1]);
  rp_report_free(&o.report);
  for (int i = 0; i < o.nengines; i++)
    pending += relayout_engine_pending_builds(o.engines[i]);
  if (rc == 0 && pending && !o.warm)
    fprintf(stderr,
            "relayout repack: the output is complete; building %d kernel%s "
            "into the cache for the next run\n",
            pending, pending == 1 ? "" : "s");
done:
  cli_engines_free(o.engines, o.nengines);
  if (rc == 0 && o.warm && pending)
    fprintf(stderr, "relayout repack: %d kernel%s built into the cache\n",
            pending, pending == 1 ? "" : "s");
  else if (rc == 0 && o.warm)
    fprintf(stderr, "relayout repack: every kernel was in the cache\n");
  if (rc == 0 && o.deferred && o.missing)
    warm_later(&o, pos[0], device, eo.cache_dir);
  free(o.missing_seen);
  for (int i = 0; i < o.nrules; i++) rp_rule_free(&o.rules[i]);
  return rc;
}
