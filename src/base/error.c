/* Status names, error filling and the library version. */
#include <stdarg.h>
#include <stdio.h>

#include "base/internal.h"

const char *sm_version(void) { return SM_VERSION_STRING; }

const char *sm_strerror(int code) {
    switch (code) {
    case SM_OK: return "success";
    case SM_ERR_NOMEM: return "out of memory";
    case SM_ERR_INVALID: return "invalid argument";
    case SM_ERR_PATTERN: return "invalid pattern";
    case SM_ERR_IO: return "input/output error";
    case SM_ERR_FORMAT: return "not a valid seqmatch database";
    case SM_ERR_VERSION: return "unsupported database version or byte order";
    case SM_ERR_LIMIT: return "size limit exceeded";
    case SM_ERR_TERMINATED: return "scan stopped by callback";
    case SM_ERR_DEVICE: return "GPU unavailable or failed";
    default: return "unknown error";
    }
}

int sm_set_error(sm_error *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *sm_pattern_shown(const char *name, const char *seq, size_t len, char buf[SM_SHOWN_SIZE]) {
    enum { SHOWN_MAX = 40 };
    if (name) return name;
    size_t k = 0;
    for (size_t i = 0; seq && i < len && i < SHOWN_MAX; i++) {
        if (seq[i] == '\0') buf[k++] = '\\';
        buf[k++] = seq[i] == '\0' ? '0' : seq[i];
    }
    if (seq && len > SHOWN_MAX) memcpy(buf + k, "...", 3), k += 3;
    buf[k] = '\0';
    return buf;
}
