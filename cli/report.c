/* report.c - repack's progress line on a terminal and its --json summary */
#include "cli.h"
#include "repack.h"

#include <stdio.h>
#include <unistd.h>

void rp_report_init(rp_report *r) {
  *r = (rp_report){0};
  r->start = cli_now();
  r->tty = isatty(2);
  r->tensors = json_array();
}

void rp_report_add_work(rp_report *r, uint64_t bytes, int tensors) {
  r->total_bytes += bytes;
  r->total_tensors += tensors;
}

static void print_line(rp_report *r, double t) {
  double done = (double)r->done_bytes, total = (double)r->total_bytes;
  double secs = t - r->start, rate = secs > 0 ? done / secs : 0;
  double left = rate > 0 ? (total - done) / rate : 0;
  fprintf(stderr,
          "\rrepack: %.2f/%.2f GB  %d/%d tensors  %.0f MB/s  ETA %.0f s   ",
          done / 1e9, total / 1e9, r->done_tensors, r->total_tensors,
          rate / 1e6, left);
  r->last_print = t;
}

void rp_report_progress(void *ctx, uint64_t read, uint64_t written,
                        int tensors) {
  rp_report *r = ctx;
  r->read_bytes += read;
  r->written_bytes += written;
  r->done_bytes += read + written;
  r->done_tensors += tensors;
  double t = cli_now();
  if (r->tty && t - r->last_print > 0.1) print_line(r, t);
}

void rp_report_finish(rp_report *r, int json, const char *in, const char *out,
                      const char *device, int restore, int dry_run) {
  double secs = cli_now() - r->start;
  if (r->tty && !dry_run) {
    print_line(r, cli_now());
    fputc('\n', stderr);
  }
  if (!json) return;
  json_t *summary = json_pack(
      "{s:s, s:s?, s:s, s:b, s:b, s:f, s:I, s:I, s:f, s:O}", "input", in,
      "output", out, "device", device, "restore", restore, "dry_run", dry_run,
      "seconds", secs, "bytes_read", (json_int_t)r->read_bytes, "bytes_written",
      (json_int_t)r->written_bytes, "gb_per_s",
      secs > 0 ? (double)(r->read_bytes + r->written_bytes) / secs / 1e9 : 0.0,
      "tensors", r->tensors);
  json_dumpf(summary, stdout, JSON_INDENT(1));
  fputc('\n', stdout);
  json_decref(summary);
}

void rp_report_free(rp_report *r) {
  json_decref(r->tensors);
  r->tensors = NULL;
}
