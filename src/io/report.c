/* What the commands put in their --stats-json report (seqmatch_output.h,
 * sm_stats_record_out, sm_stats_search, sm_stats_trim): counts kept by the
 * library's loops, in the report's words (docs/stats-json.md). */
#include <string.h>

#include "seqmatch_output.h"

void sm_stats_record_out(sm_stats *stats, const sm_read_record *record) {
    if (!stats) return;
    sm_stats_add(stats, "reads", "output", 1);
    for (unsigned m = 0; m < record->mates; m++)
        sm_stats_add(stats, "bases", "output", sm_record_seq_length(record->raw[m], record->raw_len[m]));
}

void sm_stats_search(sm_stats *stats, const sm_db *db, const sm_runner *runner, const sm_progress *progress) {
    if (!stats) return;
    sm_stats_add(stats, "records", "input", sm_runner_records(runner));
    sm_stats_add(stats, "bases", "input", sm_progress_bytes(progress));
    sm_stats_add(stats, "hits", "total", sm_runner_total(runner));
    const uint64_t *counts = sm_runner_counts(runner);
    sm_db_info info;
    sm_db_get_info(db, &info);
    for (uint32_t p = 0; p < info.pattern_count; p++) {
        const char *name = sm_db_pattern_name(db, p);
        sm_stats_item(stats, "patterns", name ? name : "", "hits", counts ? counts[p] : 0);
    }
}

void sm_stats_trim(sm_stats *stats, const sm_trim_stats *t) {
    if (!stats) return;
    sm_stats_add(stats, "reads", "input", t->records);
    sm_stats_add(stats, "reads", "output", t->kept);
    sm_stats_add(stats, "reads", "mates_input", t->reads);
    sm_stats_add(stats, "reads", "mates_trimmed", t->trimmed);
    sm_stats_add(stats, "bases", "input", t->bases_in);
    sm_stats_add(stats, "bases", "output", t->bases_kept);
}
