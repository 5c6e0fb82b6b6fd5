/* A run's report as one JSON object (include/seqmatch_output.h, sm_stats_*;
 * the schema in docs/stats-json.md): counters in named groups, named
 * items in lists (patterns, samples), the inputs; written to a file beside
 * its name and renamed over it (sm_outfile), so a reader never sees half
 * of one. The same numbers also go out as MultiQC's custom content
 * (id, section_name, plot_type, data), so a file named *_mqc.json is a
 * MultiQC section as it is. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_output.h"

#define MAX_KEYS 16

typedef struct {
    char *name;
    char *key[MAX_KEYS];
    uint64_t value[MAX_KEYS];
    char *text[MAX_KEYS]; /* a text value instead of a number, or NULL */
    size_t keys;
} entry;

typedef struct {
    char *name;
    entry *items;
    size_t n;
    int is_list; /* a list of named items, or one group of counters (items[0]) */
} section;

struct sm_stats {
    char *command, *command_line;
    char **inputs;
    size_t ninputs;
    section *sections;
    size_t nsections;
    int nomem;
};

sm_stats *sm_stats_new(const char *command, const char *command_line) {
    sm_stats *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->command = strdup(command);
    s->command_line = strdup(command_line ? command_line : "");
    if (!s->command || !s->command_line) {
        sm_stats_free(s);
        return NULL;
    }
    return s;
}

void sm_stats_free(sm_stats *s) {
    if (!s) return;
    for (size_t i = 0; i < s->ninputs; i++) free(s->inputs[i]);
    for (size_t i = 0; i < s->nsections; i++) {
        section *c = &s->sections[i];
        for (size_t j = 0; j < c->n; j++) {
            free(c->items[j].name);
            for (size_t k = 0; k < c->items[j].keys; k++) free(c->items[j].key[k]), free(c->items[j].text[k]);
        }
        free(c->items);
        free(c->name);
    }
    free(s->sections);
    free(s->inputs);
    free(s->command);
    free(s->command_line);
    free(s);
}

void sm_stats_input(sm_stats *s, const char *path) {
    if (!s) return;
    char **grown = realloc(s->inputs, (s->ninputs + 1) * sizeof *grown);
    char *copy = strdup(strcmp(path, "-") == 0 ? "stdin" : path);
    if (grown) s->inputs = grown;
    if (!grown || !copy) {
        free(copy);
        s->nomem = 1;
        return;
    }
    s->inputs[s->ninputs++] = copy;
}

static section *find_section(sm_stats *s, const char *name, int is_list) {
    for (size_t i = 0; i < s->nsections; i++)
        if (strcmp(s->sections[i].name, name) == 0) return &s->sections[i];
    section *grown = realloc(s->sections, (s->nsections + 1) * sizeof *grown);
    if (!grown) return NULL;
    s->sections = grown;
    section *c = &s->sections[s->nsections];
    memset(c, 0, sizeof *c);
    c->is_list = is_list;
    if (!(c->name = strdup(name))) return NULL;
    s->nsections++;
    return c;
}

static entry *find_entry(section *c, const char *name) {
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->items[i].name, name) == 0) return &c->items[i];
    entry *grown = realloc(c->items, (c->n + 1) * sizeof *grown);
    if (!grown) return NULL;
    c->items = grown;
    entry *e = &c->items[c->n];
    memset(e, 0, sizeof *e);
    if (!(e->name = strdup(name))) return NULL;
    c->n++;
    return e;
}

/* The slot of key in e (made when missing), or -1. */
static int find_key(entry *e, const char *key) {
    for (size_t k = 0; k < e->keys; k++)
        if (strcmp(e->key[k], key) == 0) return (int)k;
    if (e->keys == MAX_KEYS || !(e->key[e->keys] = strdup(key))) return -1;
    e->value[e->keys] = 0, e->text[e->keys] = NULL;
    return (int)e->keys++;
}

static void put(sm_stats *s, const char *list, const char *name, const char *key, uint64_t add, const char *text) {
    if (!s) return;
    section *c = find_section(s, list, name != NULL);
    entry *e = c ? find_entry(c, name ? name : "") : NULL;
    int k = e ? find_key(e, key) : -1;
    if (k < 0) {
        s->nomem = 1;
        return;
    }
    if (text) {
        free(e->text[k]);
        if (!(e->text[k] = strdup(text))) s->nomem = 1;
    } else {
        e->value[k] += add;
    }
}

void sm_stats_add(sm_stats *s, const char *group, const char *key, uint64_t value) { put(s, group, NULL, key, value, NULL); }

void sm_stats_item(sm_stats *s, const char *list, const char *name, const char *key, uint64_t value) {
    put(s, list, name, key, value, NULL);
}

void sm_stats_item_text(sm_stats *s, const char *list, const char *name, const char *key, const char *text) {
    put(s, list, name, key, 0, text);
}

/* ------------------------------------------------------------ writing */

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p == '\r') fputs("\\r", f);
        else if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\u%04x", *p);
        else if (*p >= 0x80) {
            /* UTF-8 kept as is when well formed, else each byte as U+00XX */
            size_t n = *p >= 0xF0 && *p < 0xF5 ? 4 : *p >= 0xE0 ? 3 : *p >= 0xC2 && *p < 0xE0 ? 2 : 0;
            size_t ok = n;
            for (size_t i = 1; i < n; i++)
                if ((p[i] & 0xC0) != 0x80) ok = 0;
            if (ok) {
                fwrite(p, 1, n, f);
                p += n - 1;
            } else {
                fprintf(f, "\\u%04x", *p);
            }
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void write_entry_fields(FILE *f, const entry *e, const char *indent) {
    for (size_t k = 0; k < e->keys; k++) {
        fprintf(f, "%s%s", k ? ",\n" : "", indent);
        json_string(f, e->key[k]);
        fputs(": ", f);
        if (e->text[k]) json_string(f, e->text[k]);
        else fprintf(f, "%llu", (unsigned long long)e->value[k]);
    }
}

static const section *get_section(const sm_stats *s, const char *name) {
    for (size_t i = 0; i < s->nsections; i++)
        if (strcmp(s->sections[i].name, name) == 0) return &s->sections[i];
    return NULL;
}

/* MultiQC's custom content: demux's samples, or one row named by the first input. */
static void write_multiqc(FILE *f, const sm_stats *s) {
    const section *samples = get_section(s, "samples");
    fprintf(f, "  \"id\": \"seqmatch_%s\",\n  \"section_name\": \"seqmatch %s\",\n", s->command, s->command);
    fprintf(f, "  \"plot_type\": \"table\",\n  \"data\": {");
    if (samples && samples->n) {
        for (size_t i = 0; i < samples->n; i++) {
            const entry *e = &samples->items[i];
            fputs(i ? ",\n    " : "\n    ", f);
            json_string(f, e->name);
            fputs(": {", f);
            int first = 1;
            for (size_t k = 0; k < e->keys; k++)
                if (!e->text[k]) {
                    fprintf(f, "%s", first ? "" : ", ");
                    json_string(f, e->key[k]);
                    fprintf(f, ": %llu", (unsigned long long)e->value[k]);
                    first = 0;
                }
            fputc('}', f);
        }
    } else {
        const char *name = s->ninputs ? s->inputs[0] : s->command;
        const char *slash = strrchr(name, '/');
        fputs("\n    ", f);
        json_string(f, slash ? slash + 1 : name);
        fputs(": {", f);
        int first = 1;
        for (size_t i = 0; i < s->nsections; i++) {
            const section *c = &s->sections[i];
            if (c->is_list || !c->n) continue;
            for (size_t k = 0; k < c->items[0].keys; k++) {
                if (c->items[0].text[k]) continue;
                char key[160];
                snprintf(key, sizeof key, "%s_%s", c->name, c->items[0].key[k]);
                fprintf(f, "%s", first ? "" : ", ");
                json_string(f, key);
                fprintf(f, ": %llu", (unsigned long long)c->items[0].value[k]);
                first = 0;
            }
        }
        fputc('}', f);
    }
    fputs("\n  }\n", f);
}

static void write_json(FILE *f, const sm_stats *s) {
    fprintf(f, "{\n  \"schema\": \"seqmatch-stats\",\n  \"version\": %d,\n  \"seqmatch_version\": ", SM_STATS_VERSION);
    json_string(f, sm_version());
    fputs(",\n  \"command\": ", f);
    json_string(f, s->command);
    fputs(",\n  \"command_line\": ", f);
    json_string(f, s->command_line);
    fputs(",\n  \"inputs\": [", f);
    for (size_t i = 0; i < s->ninputs; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, s->inputs[i]);
    }
    fputs("],\n", f);
    for (size_t i = 0; i < s->nsections; i++) {
        const section *c = &s->sections[i];
        fputs("  ", f);
        json_string(f, c->name);
        if (!c->is_list) {
            fputs(": {\n", f);
            if (c->n) write_entry_fields(f, &c->items[0], "    ");
            fputs("\n  },\n", f);
            continue;
        }
        fputs(": [", f);
        for (size_t j = 0; j < c->n; j++) {
            fputs(j ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
            json_string(f, c->items[j].name);
            for (size_t k = 0; k < c->items[j].keys; k++) {
                fputs(", ", f);
                json_string(f, c->items[j].key[k]);
                fputs(": ", f);
                if (c->items[j].text[k]) json_string(f, c->items[j].text[k]);
                else fprintf(f, "%llu", (unsigned long long)c->items[j].value[k]);
            }
            fputc('}', f);
        }
        fputs(c->n ? "\n  ],\n" : "],\n", f);
    }
    write_multiqc(f, s);
    fputs("}\n", f);
}

int sm_stats_write(const sm_stats *s, const char *path, sm_error *err) {
    if (err) memset(err, 0, sizeof *err);
    if (s->nomem) {
        if (err) err->code = SM_ERR_NOMEM, snprintf(err->message, sizeof err->message, "%s: out of memory", path);
        return SM_ERR_NOMEM;
    }
    sm_outfile *o = sm_outfile_open(path, err);
    if (!o) return err && err->code ? err->code : SM_ERR_IO;
    FILE *f = sm_outfile_file(o);
    write_json(f, s);
    int bad = ferror(f) || fflush(f) != 0;
    int e = sm_outfile_close(o, !bad);
    if (bad || e) {
        if (err) err->code = SM_ERR_IO, snprintf(err->message, sizeof err->message, "%s: %s", path, strerror(e ? e : EIO));
        return SM_ERR_IO;
    }
    return SM_OK;
}
