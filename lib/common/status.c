/* status.c - status names and error messages */
#include "internal.h"

#include <stdio.h>

const char *relayout_status_name(relayout_status status) {
  switch (status) {
  case RELAYOUT_OK: return "RELAYOUT_OK";
  case RELAYOUT_ERR_SYNTAX: return "RELAYOUT_ERR_SYNTAX";
  case RELAYOUT_ERR_UNKNOWN: return "RELAYOUT_ERR_UNKNOWN";
  case RELAYOUT_ERR_DIMS: return "RELAYOUT_ERR_DIMS";
  case RELAYOUT_ERR_OVERFLOW: return "RELAYOUT_ERR_OVERFLOW";
  case RELAYOUT_ERR_BUFFER: return "RELAYOUT_ERR_BUFFER";
  case RELAYOUT_ERR_UNSUPPORTED: return "RELAYOUT_ERR_UNSUPPORTED";
  case RELAYOUT_ERR_NOMEM: return "RELAYOUT_ERR_NOMEM";
  case RELAYOUT_ERR_IO: return "RELAYOUT_ERR_IO";
  case RELAYOUT_ERR_FILE: return "RELAYOUT_ERR_FILE";
  case RELAYOUT_ERR_ARGUMENT: return "RELAYOUT_ERR_ARGUMENT";
  case RELAYOUT_ERR_BUSY: return "RELAYOUT_ERR_BUSY";
  }
  return "RELAYOUT_ERR_(invalid)";
}

#define RL_STR_(x) #x
#define RL_STR(x)  RL_STR_(x)
const char *relayout_version_string(void) {
  return RL_STR(RELAYOUT_VERSION_MAJOR) "." RL_STR(
      RELAYOUT_VERSION_MINOR) "." RL_STR(RELAYOUT_VERSION_PATCH);
}

unsigned relayout_version_number(void) { return RELAYOUT_VERSION_NUMBER; }

relayout_status rl_fail(relayout_error *err, relayout_status status,
                        const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return status;
}
