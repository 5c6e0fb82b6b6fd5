/* What a file holds, from its first bytes (include/seqmatch_reader.h,
 * sm_reader_sniff): FASTA or FASTQ when its first byte that is not white
 * space (after a byte-order mark, decompressed) is '>' or '@', else text.
 * Public calls only. */
#include <string.h>
#include <sys/stat.h>

#include "seqmatch_reader.h"

/* The first 4 KiB are looked at. */
#define SNIFF_BYTES 4096

sm_input_format sm_reader_sniff(const char *path) {
    /* a pipe or FIFO cannot be read twice: only regular files are looked at */
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return SM_INPUT_AUTO;
    sm_reader *reader = NULL;
    sm_error err;
    const char *name;
    if (sm_reader_open(path, SM_INPUT_TEXT, &reader, &err) != SM_OK) return SM_INPUT_AUTO;
    int c = 0;
    size_t seen = 0, n;
    const uint8_t *buf;
    if (sm_reader_next_record(reader, &name, &err) == 1)
        while (!c && seen < SNIFF_BYTES && sm_reader_read(reader, &buf, &n, &err) == 1) {
            if (n > SNIFF_BYTES - seen) n = SNIFF_BYTES - seen;
            size_t i = seen == 0 && n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
            for (; i < n; i++)
                if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r') {
                    c = buf[i];
                    break;
                }
            seen += n;
        }
    sm_reader_close(reader);
    return c == '>' ? SM_INPUT_FASTA : c == '@' ? SM_INPUT_FASTQ : c ? SM_INPUT_TEXT : SM_INPUT_AUTO;
}
