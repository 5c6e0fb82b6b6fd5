/* The registry (src/engines/registry.c) is the one list of engines. This
 * test checks that it is consistent (ids, section kinds and names unique;
 * every lookup finds the engine) and fails when a list of engines written
 * elsewhere drifts from it: the public ids (include/seqmatch_common.h), the
 * section kinds (section_kinds.h), the kinds table and section layouts of
 * docs/format.md, the --engine lists of the command's help (src/cli/help.c:
 * printed from the registry, so that a list written there again is caught)
 * and man page (which refers to --help), the Python package's names (taken
 * from the extension, or else checked), and the golden databases of the
 * current format (tests/golden: a section of every engine). It runs in tests/
 * (the working directory ctest gives it) and reads those files from there. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "engines/engine.h"
#include "testutil.h"

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!tu_check(f != NULL, "cannot open %s", path)) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

/* The registry's names in its order, joined by '|' after "auto". */
static void registry_names(char *out, size_t size) {
    snprintf(out, size, "auto");
    for (size_t i = 0; i < sm_engine_count(); i++)
        snprintf(out + strlen(out), size - strlen(out), "|%s", sm_engine_name(sm_engine_at(i)));
}

static void check_registry(void) {
    size_t count = 0;
    const sm_engine_ops *const *all = sm_engine_all(&count);
    tu_check(count == sm_engine_count() && count > 0, "sm_engine_count %zu, sm_engine_all %zu", sm_engine_count(),
             count);
    for (size_t i = 0; i < count; i++) {
        const sm_engine_ops *e = all[i];
        tu_check(sm_engine_at(i) == e->engine, "sm_engine_at(%zu) is not the registry's entry", i);
        tu_check(e->engine != SM_ENGINE_AUTO && e->kind != 0 && e->name && e->name[0], "entry %zu: id, kind or name unset",
                 i);
        tu_check(e->matches != 0 && (e->matches & ~7u) == 0, "%s: matches 0x%x", e->name, e->matches);
        tu_check(e->build && e->validate && e->state_new && e->state_free && e->scan, "%s: an operation is missing",
                 e->name);
        tu_check(sm_engine_for_kind(e->kind) == e, "%s: not found by its kind %u", e->name, e->kind);
        tu_check(sm_engine_for_id(e->engine) == e, "%s: not found by its id %d", e->name, (int)e->engine);
        sm_engine id = SM_ENGINE_AUTO;
        tu_check(sm_engine_from_name(e->name, &id) == SM_OK && id == e->engine, "%s: not found by its name", e->name);
        tu_check(strcmp(sm_engine_name(e->engine), e->name) == 0, "%s: sm_engine_name", e->name);
        tu_check(sm_engine_matches(e->engine) == e->matches && sm_engine_traits(e->engine) == e->traits,
                 "%s: public matches or traits differ", e->name);
        for (const char *c = e->name; *c; c++)
            tu_check(islower((unsigned char)*c) || isdigit((unsigned char)*c), "%s: a name of lower-case letters",
                     e->name);
        for (size_t j = 0; j < i; j++)
            tu_check(all[j]->engine != e->engine && all[j]->kind != e->kind && strcmp(all[j]->name, e->name) != 0,
                     "%s and %s share an id, a kind or a name", all[j]->name, e->name);
    }
    sm_engine id;
    tu_check(sm_engine_from_name("auto", &id) == SM_OK && id == SM_ENGINE_AUTO, "auto");
    tu_check(sm_engine_from_name("Automaton", &id) == SM_ERR_INVALID && sm_engine_from_name(NULL, &id) == SM_ERR_INVALID,
             "unknown names refused");
    tu_check(sm_engine_name((sm_engine)999) == NULL && sm_engine_matches((sm_engine)999) == 0, "unknown id");
    tu_check(sm_engine_at(count) == SM_ENGINE_AUTO, "past the end");
}

/* Every "PREFIX<NAME> = <n>" of an enum in text: NAME lower-cased and n. */
typedef void (*enum_entry)(const char *name, unsigned value, const char *file);

static void scan_enum(const char *text, const char *prefix, enum_entry each, const char *file) {
    for (const char *p = text; (p = strstr(p, prefix)) != NULL;) {
        p += strlen(prefix);
        char name[64];
        size_t n = 0;
        while ((isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_') && n + 1 < sizeof name)
            name[n++] = (char)tolower((unsigned char)*p++);
        name[n] = 0;
        while (*p == ' ') p++;
        if (*p != '=' || p[1] == '=') continue;
        p++;
        each(name, (unsigned)strtoul(p, NULL, 10), file);
    }
}

static unsigned public_ids_seen;

static void public_id(const char *name, unsigned value, const char *file) {
    public_ids_seen++;
    if (strcmp(name, "auto") == 0) {
        tu_check(value == 0, "%s: SM_ENGINE_AUTO = %u", file, value);
        return;
    }
    const sm_engine_ops *e = sm_engine_for_id((sm_engine)value);
    tu_check(e && strcmp(e->name, name) == 0, "%s: SM_ENGINE_%s = %u is not the registry's engine of that id (%s)",
             file, name, value, e ? e->name : "none");
}

static void section_kind(const char *name, unsigned value, const char *file) {
    const sm_engine_ops *e = sm_engine_for_kind(value);
    tu_check(e && strcmp(e->name, name) == 0, "%s: SM_SECTION_%s = %u is not the registry's engine of that kind (%s)",
             file, name, value, e ? e->name : "none");
}

/* "auto|a|b|..." from where a list starts, the words joined by '|' with
   anything between a word and a '|' (line breaks, C string quotes, troff
   fonts) left out. */
static void list_at(const char *p, char *out, size_t size) {
    size_t n = 0;
    for (;;) {
        while ((islower((unsigned char)*p) || isdigit((unsigned char)*p)) && n + 1 < size) out[n++] = *p++;
        /* what may lie between a word and the next '|' */
        const char *q = p;
        for (;;) {
            if (strncmp(q, "\\fR", 3) == 0 || strncmp(q, "\\fB", 3) == 0 || strncmp(q, "\\n", 2) == 0)
                q += q[1] == 'n' ? 2 : 3;
            else if (*q == '"' || *q == ' ' || *q == '\n')
                q++;
            else
                break;
        }
        if (*q != '|' || n + 1 >= size) break;
        out[n++] = '|';
        p = q + 1;
        while (strncmp(p, "\\fB", 3) == 0) p += 3;
    }
    out[n] = 0;
}

/* Every list of engines ("auto|a|b") after `marker` in a file equals the
   registry's; required: the file must have one. */
static void check_lists(const char *file, const char *marker, int required) {
    char *text = read_text(file);
    if (!text) return;
    char want[512], got[512];
    registry_names(want, sizeof want);
    int lists = 0;
    for (const char *p = text; (p = strstr(p, marker)) != NULL; p++) {
        list_at(p + strlen(marker), got, sizeof got);
        if (!strchr(got, '|')) continue; /* not a list: "auto" printed before the registry's names */
        lists++;
        tu_check(strcmp(got, want) == 0, "%s: engine list '%s', the registry's is '%s'", file, got, want);
    }
    tu_check(lists > 0 || !required, "%s: no engine list found after '%s'", file, marker);
    free(text);
}

/* The man page names the choice, not a list: "--engine auto|name", the
   names being those --help prints from the registry. */
static void check_man(const char *file) {
    char *text = read_text(file);
    if (!text) return;
    tu_check(strstr(text, ".BR \\-\\-engine \" \\fBauto\\fR|\\fIname\\fR\"") != NULL,
             "%s: --engine is not given as auto|name (a list there would drift from the registry)", file);
    free(text);
}

/* Python: _ENGINES comes from the extension (_seqmatch._engines(), the
   registry); a dict written out instead must hold exactly the registry. */
static void check_python(const char *file) {
    char *text = read_text(file);
    if (!text) return;
    const char *p = strstr(text, "_ENGINES = {");
    if (!tu_check(p != NULL, "%s: no _ENGINES", file) ||
        strncmp(p, "_ENGINES = {\"auto\": 0, **dict(_seqmatch._engines())}", 52) == 0) {
        free(text);
        return;
    }
    const char *end = strchr(p, '}');
    size_t seen = 0;
    for (p = strchr(p, '{'); p && p < end && (p = strchr(p, '"')) != NULL && p < end;) {
        char name[64];
        size_t n = 0;
        for (p++; *p && *p != '"' && n + 1 < sizeof name;) name[n++] = *p++;
        name[n] = 0;
        p = strchr(p, ':');
        unsigned value = (unsigned)strtoul(p + 1, (char **)&p, 10);
        sm_engine id;
        tu_check(sm_engine_from_name(name, &id) == SM_OK && (unsigned)id == value,
                 "%s: _ENGINES[\"%s\"] = %u is not the registry's", file, name, value);
        seen++;
    }
    tu_check(seen == sm_engine_count() + 1, "%s: _ENGINES has %zu names, the registry %zu and auto", file, seen,
             sm_engine_count());
    free(text);
}

/* docs/format.md: the kinds table lists every engine of the registry, and
   only those, with its kind; each has its own section ("### KIND NAME"). */
static void check_format_doc(const char *file) {
    char *text = read_text(file);
    if (!text) return;
    const char *table = strstr(text, "| kind | engine |");
    if (!tu_check(table != NULL, "%s: no table of section kinds", file)) {
        free(text);
        return;
    }
    size_t rows = 0;
    for (const char *line = strchr(table, '\n') + 1; line && line[0] == '|'; line = strchr(line, '\n') + 1) {
        unsigned kind;
        char name[64];
        if (strncmp(line, "|-", 2) == 0 || strncmp(line, "|:", 2) == 0) continue; /* the header's rule */
        if (!tu_check(sscanf(line, "| %u | %63[a-z0-9] |", &kind, name) == 2,
                      "%s: a row of the kinds table that does not read '| kind | name |'", file))
            continue;
        rows++;
        const sm_engine_ops *e = sm_engine_for_kind(kind);
        tu_check(e && strcmp(e->name, name) == 0, "%s: kind %u is '%s', the registry's is '%s'", file, kind, name,
                 e ? e->name : "none");
        char heading[96];
        snprintf(heading, sizeof heading, "\n### %u %s", kind, name);
        tu_check(strstr(text, heading) != NULL, "%s: no section '### %u %s'", file, kind, name);
    }
    tu_check(rows == sm_engine_count(), "%s: %zu kinds in the table, %zu engines in the registry", file, rows,
             sm_engine_count());
    free(text);
}

/* The .smdb files of a folder (the golden databases) load and hold,
   between them, a section of every engine. */
static void check_every_engine(const char *dir) {
    int seen[64] = {0};
    DIR *d = opendir(dir);
    if (!tu_check(d != NULL, "cannot open %s", dir)) return;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".smdb") != 0) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        sm_db *db = NULL;
        sm_error err;
        if (!tu_check(sm_db_load(path, &db, &err) == SM_OK, "%s: %s", path, err.message)) continue;
        sm_db_info info;
        sm_db_get_info(db, &info);
        for (uint32_t s = 0; s < info.section_count; s++) {
            const sm_engine_ops *e = sm_engine_for_id(sm_db_section_engine(db, s));
            for (size_t k = 0; e && k < sm_engine_count() && k < 64; k++)
                if (sm_engine_at(k) == e->engine) seen[k] = 1;
        }
        sm_db_free(db);
    }
    closedir(d);
    for (size_t k = 0; k < sm_engine_count() && k < 64; k++)
        tu_check(seen[k], "%s: no database there holds a section of the engine %s", dir, sm_engine_name(sm_engine_at(k)));
}

int main(void) {
    check_registry();
    char *header = read_text("../include/seqmatch_common.h");
    if (header) scan_enum(header, "SM_ENGINE_", public_id, "include/seqmatch_common.h");
    tu_check(public_ids_seen > 1, "include/seqmatch_common.h: no SM_ENGINE_* constants found");
    free(header);
    char *kinds = read_text("../src/engines/section_kinds.h");
    if (kinds) scan_enum(kinds, "SM_SECTION_", section_kind, "src/engines/section_kinds.h");
    free(kinds);
    check_lists("../src/cli/help.c", "--engine ", 0);
    check_man("../man/seqmatch.1");
    check_python("../python/seqmatch/__init__.py");
    check_format_doc("../docs/format.md");
    char golden[64];
    snprintf(golden, sizeof golden, "golden/v%u", SM_DB_FORMAT_VERSION);
    check_every_engine(golden);
    return tu_summary("test_registry");
}
